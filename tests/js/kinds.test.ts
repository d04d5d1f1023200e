// Issue 29, items 4 to 7: the runtime knows what it made where.
//  4. `*At(address)`, `revive()`, `rt.free()`, views and `rt.atomics` check
//     the kind at the address (made on any thread): a wrong kind, a freed
//     object, the runtime's own memory or an address inside something else
//     is a TypeError that says what is there.
//  5. On a thread that may not block, every blocking call throws, free or
//     contended; tries and timeouts of 0 are allowed.
//  6. Every primitive has free() and [Symbol.dispose](); a million
//     `rt.lock().free()` do not grow the memory.
//  7. `rt.rwLock('prefer-readers')` is the policy; bad options are parklot's errors.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { outcome, rt, sleep, useRuntime, withTimeout } from './helpers.js';
import { oneOfEach } from './one-of-each.mjs';

useRuntime();

/** A kinds-worker.mjs worker attached to `rt`, and a way to run its operations. */
async function helper(): Promise<{ run(op: string, args?: unknown): Promise<unknown>; close(): Promise<void> }> {
  const worker = rt.watch(new Worker(new URL('./kinds-worker.mjs', import.meta.url), { workerData: { handle: rt.handle() } }));
  const replies = new Map<number, (m: { value?: unknown; error?: string }) => void>();
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  worker.on('message', (m: { id?: number; ready?: boolean; value?: unknown; error?: string }) => {
    if (m.ready) ready();
    else replies.get(m.id!)?.(m);
  });
  await withTimeout(started, 30_000, 'the kinds worker to attach');
  let next = 0;
  const run = (op: string, args?: unknown): Promise<unknown> => {
    const id = next++;
    const reply = new Promise<unknown>((resolve, reject) => {
      replies.set(id, (m) => (m.error === undefined ? resolve(m.value) : reject(new Error(m.error))));
    });
    worker.postMessage({ id, op, args });
    return withTimeout(reply, 30_000, `the kinds worker's ${op}`);
  };
  const close = async (): Promise<void> => {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    await run('close');
    await withTimeout(exited, 30_000, 'the kinds worker to exit');
  };
  return { run, close };
}

type KindName = keyof ReturnType<typeof oneOfEach>;
const CLASS: Record<KindName, string> = { lock: 'Lock', rwLock: 'RwLock', semaphore: 'Semaphore', barrier: 'Barrier', once: 'Once', condition: 'Condition' };
const at = (kind: KindName, address: number): unknown => (rt as unknown as Record<string, (a: number) => unknown>)[`${kind}At`]!.call(rt, address);

describe('4. kinds are checked', () => {
  it('*At refuses an object of another kind, naming what is there, and changes nothing', () => {
    const made = oneOfEach(rt);
    for (const [name, object] of Object.entries(made) as [KindName, { address: number }][]) {
      for (const kind of Object.keys(made) as KindName[]) {
        const result = outcome(() => (at(kind, object.address) as { address: number }).address);
        if (kind === name) expect(result, `${kind}At on a ${CLASS[name]}`).toBe(`returned ${object.address}`);
        else {
          expect(result, `${kind}At on a ${CLASS[name]}`).toMatch(
            new RegExp(`^TypeError: parklot: Runtime\\.${kind}At\\(\\): address ${object.address} holds a ${CLASS[name]}, not a ${CLASS[kind]}`),
          );
        }
      }
    }
    // The reported attacks: each one refused, the objects untouched.
    const rw = made.rwLock;
    expect(outcome(() => rt.lockAt(rw.address).lockFor(0))).toMatch(/^TypeError: .*holds a RwLock, not a Lock/);
    expect(rw.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
    expect(outcome(() => rt.rwLockAt(made.lock.address).write())).toMatch(/^TypeError: .*holds a Lock, not a RwLock/);
    expect(made.lock.isLocked()).toBe(false);
  });

  it("the runtime's header and its bookkeeping are refused; Runtime.attach still works", async () => {
    const header = rt.handle().header;
    expect(outcome(() => rt.semaphoreAt(header).release(1))).toMatch(/^TypeError: parklot: Runtime\.semaphoreAt\(\): address \d+ is parklot's own memory/);
    for (const kind of Object.keys(CLASS) as KindName[]) expect(outcome(() => at(kind, header))).toMatch(/^TypeError: .*parklot's own memory/);
    const other = await Runtime.attach(rt.handle());
    expect(other.lock().tryLock()).toBe(true);
    other.close();
  });

  it('an address inside a block from rt.alloc or inside another object is refused; the allocator is intact', () => {
    const block = rt.alloc(64, 8);
    expect(outcome(() => rt.semaphoreAt(block + 8))).toMatch(
      new RegExp(`^TypeError: parklot: Runtime\\.semaphoreAt\\(\\): address ${block + 8} is inside a 64-byte block from rt\\.alloc\\(\\) at ${block}`),
    );
    expect(outcome(() => rt.lockAt(block))).toMatch(/^TypeError: .*is inside a 64-byte block from rt\.alloc\(\).*rt\.place\('lock', address\)/);
    // An off-by-4 in a hand-made layout: allocator metadata, or whatever lies before the block.
    expect(outcome(() => rt.semaphoreAt(block - 4).release(1000))).toMatch(/^TypeError: parklot: Runtime\.semaphoreAt\(\): address \d+ /);
    const barrier = rt.barrier(2);
    expect(outcome(() => rt.lockAt(barrier.address + 4))).toMatch(new RegExp(`^TypeError: .*address ${barrier.address + 4} is inside a Barrier at ${barrier.address}`));
    rt.free(block, 64, 8);
    const lock = rt.lock();
    expect(lock.tryLock()).toBe(true);
    lock.unlock();
  });

  it('an object made on another thread is known here, and one made here is known there', async () => {
    const w = await helper();
    try {
      const theirs = (await w.run('make')) as Record<KindName | 'placed' | 'block', number>;
      expect(outcome(() => rt.lockAt(theirs.rwLock))).toMatch(/^TypeError: .*holds a RwLock, not a Lock/);
      expect(rt.rwLockAt(theirs.rwLock).tryWrite()).toBe(true);
      rt.rwLockAt(theirs.rwLock).unlockWrite();
      expect(outcome(() => rt.onceAt(theirs.semaphore))).toMatch(/^TypeError: .*holds a Semaphore, not a Once/);
      expect(rt.lockAt(theirs.placed).tryLock()).toBe(true); // a Lock placed in the worker's block
      rt.lockAt(theirs.placed).unlock();
      expect(outcome(() => rt.rwLockAt(theirs.placed))).toMatch(/^TypeError: .*holds a Lock, not a RwLock/);

      const mine = rt.lock();
      expect(await w.run('at', { kind: 'lock', address: mine.address })).toBe(`returned ${mine.address}`);
      expect(await w.run('at', { kind: 'condition', address: mine.address })).toMatch(/^TypeError: .*holds a Lock, not a Condition/);

      // Frees on one thread are seen on the other.
      expect(await w.run('free', { name: 'lock' })).toBe('returned undefined');
      expect(outcome(() => rt.lockAt(theirs.lock))).toMatch(new RegExp(`^TypeError: parklot: Runtime\\.lockAt\\(\\): address ${theirs.lock} was freed`));
      rt.semaphoreAt(theirs.semaphore).free();
      expect(await w.run('free', { name: 'semaphore' })).toMatch(/^TypeError: parklot: Semaphore\.free\(\): address \d+ was freed/);
      expect(await w.run('freeBlock', { block: theirs.block })).toBe('returned undefined');
      expect(outcome(() => rt.lockAt(theirs.placed))).toMatch(/was freed/);
    } finally {
      await w.close();
    }
  });

  it('revive() refuses a plain form whose address holds another kind', () => {
    const rw = rt.rwLock();
    const forged = { kind: 'parklot.lock', address: rw.address, runtimeId: rt.handle().id };
    expect(outcome(() => rt.revive({ lock: forged }))).toMatch(/^TypeError: parklot: .*address \d+ holds a RwLock, not a Lock/);
    const sent = JSON.parse(JSON.stringify({ rw })) as { rw: typeof rw };
    expect(rt.revive(sent).rw.tryWrite()).toBe(true);
    rw.unlockWrite();
  });

  it('rt.free frees only blocks from rt.alloc, with their size and alignment, once', () => {
    const lock = rt.lock();
    expect(outcome(() => rt.free(lock.address, 1, 1))).toMatch(/^TypeError: parklot: Runtime\.free\(\): address \d+ holds a Lock.*lock\.free\(\)/);
    const block = rt.alloc(64, 8);
    expect(outcome(() => rt.free(block, 32, 8))).toMatch(/^TypeError: parklot: Runtime\.free\(\): .*64 bytes aligned to 8.*not 32 bytes aligned to 8/);
    expect(outcome(() => rt.free(block, 64, 16))).toMatch(/^TypeError: .*not 64 bytes aligned to 16/);
    expect(outcome(() => rt.free(block + 8, 8, 8))).toMatch(/^TypeError: .*is inside a 64-byte block from rt\.alloc\(\) at/);
    expect(outcome(() => rt.free(rt.handle().header, 8, 8))).toMatch(/^TypeError: .*parklot's own memory/);
    rt.free(block, 64, 8);
    expect(outcome(() => rt.free(block, 64, 8))).toMatch(new RegExp(`^TypeError: parklot: Runtime\\.free\\(\\): address ${block} was freed`));
    expect(lock.tryLock()).toBe(true);
    lock.unlock();
  });

  it('views lie inside a block from rt.alloc, off any primitive placed in it', () => {
    const rw = rt.rwLock();
    expect(outcome(() => rt.int32(rw.address))).toMatch(/^TypeError: parklot: Runtime\.int32\(\): .*a view must lie inside a block from rt\.alloc\(\).*holds a RwLock/);
    expect(outcome(() => rt.int32(rt.handle().header))).toMatch(/^TypeError: .*parklot's own memory/);
    const size = rt.memory.buffer.byteLength;
    expect(outcome(() => rt.uint8(size - 1))).toMatch(/^TypeError: parklot: Runtime\.uint8\(\)/);
    const block = rt.alloc(64, 8);
    expect(rt.int32(block, 16).length).toBe(16);
    expect(outcome(() => rt.int32(block, 17))).toMatch(/^TypeError: .*68 bytes at \d+ run past the end of the 64-byte block from rt\.alloc\(\) at/);
    expect(outcome(() => rt.float64(block + 8, 8))).toMatch(/^TypeError: .*run past the end/);
    const placed = rt.place('lock', block + 20);
    expect(outcome(() => rt.int32(block + 16, 2))).toMatch(new RegExp(`^TypeError: .*overlap the Lock placed at ${placed.address}`));
    expect(rt.int32(block + 24, 2).length).toBe(2);
    expect(rt.uint8(block, 20).length).toBe(20);
    rt.free(block, 64, 8);
    expect(outcome(() => rt.int32(block))).toMatch(/was freed/);
  });

  it('rt.atomics refuses views that reach a primitive or parklot memory, and views of a freed block', async () => {
    const rw = rt.rwLock();
    const onLock = new Int32Array(rt.memory.buffer, rw.address, 1);
    expect(outcome(() => rt.atomics.notify(onLock, 0))).toMatch(/^TypeError: parklot: rt\.atomics\.notify\(\): .*holds a RwLock/);
    expect(outcome(() => rt.atomics.wait(onLock, 0, 0, 0))).toMatch(/^TypeError: parklot: rt\.atomics\.wait\(\): .*holds a RwLock/);
    expect(outcome(() => rt.atomics.waitAsync(onLock, 0, 0, 10))).toMatch(/^TypeError: parklot: rt\.atomics\.waitAsync\(\): .*holds a RwLock/);
    const header = new Int32Array(rt.memory.buffer, rt.handle().header, 2);
    expect(outcome(() => rt.atomics.notify(header, 0))).toMatch(/^TypeError: .*parklot's own memory/);
    // A view of the whole memory: each element is checked.
    const all = new Int32Array(rt.memory.buffer);
    const word = rt.alloc(4, 4);
    expect(rt.atomics.notify(all, word / 4)).toBe(0);
    expect(rt.atomics.wait(all, word / 4, 1, 0)).toBe('not-equal');
    expect(outcome(() => rt.atomics.notify(all, rw.address / 4))).toMatch(/^TypeError: .*holds a RwLock/);
    // A view checked once, then its block freed: refused from then on.
    const block = rt.alloc(16, 4);
    const view = rt.int32(block, 4);
    expect(rt.atomics.notify(view, 0)).toBe(0);
    rt.free(block, 16, 4);
    expect(outcome(() => rt.atomics.notify(view, 0))).toMatch(/^TypeError: parklot: rt\.atomics\.notify\(\): .*was freed/);
    expect(outcome(() => rt.atomics.wait(view, 0, 0, 0))).toMatch(/was freed/);
    // The rwlock was never touched.
    expect(rw.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
    await sleep(0);
  });

  it('memory freed as one kind and size and allocated again as another: the table follows the allocator', () => {
    const blocks = Array.from({ length: 50 }, () => rt.alloc(64, 8));
    for (const b of blocks) rt.free(b, 64, 8);
    const locks = Array.from({ length: 500 }, () => rt.lock());
    for (const l of locks) expect(rt.lockAt(l.address).address).toBe(l.address);
    for (const l of locks) l.free();
    const again = Array.from({ length: 50 }, () => rt.alloc(48, 8));
    for (const b of again) {
      expect(rt.int32(b, 12).length).toBe(12);
      expect(outcome(() => rt.lockAt(b))).toMatch(/is inside a 48-byte block/);
    }
    for (const b of again) rt.free(b, 48, 8);
    const sems = Array.from({ length: 200 }, () => rt.semaphore(1));
    for (const x of sems) expect(rt.semaphoreAt(x.address).available()).toBe(1);
    for (const x of sems) x.free();
  });

  it('rt.place declares a primitive inside a block from rt.alloc; the block frees it', () => {
    const block = rt.alloc(64, 8);
    const lock = rt.place('lock', block + 8);
    expect(lock.address).toBe(block + 8);
    expect(rt.lockAt(block + 8).tryLock()).toBe(true);
    expect(lock.isLocked()).toBe(true);
    expect(outcome(() => rt.place('condition', block + 8))).toMatch(/^TypeError: parklot: Runtime\.place\(\): .*holds a Lock/);
    expect(outcome(() => rt.place('lock', rt.lock().address))).toMatch(/^TypeError: parklot: Runtime\.place\(\): .*not inside a block from rt\.alloc\(\).*holds a Lock/);
    expect(outcome(() => rt.place('rwLock', block + 2))).toMatch(/^RangeError: .*not aligned to 4 bytes/);
    expect(outcome(() => rt.place('barrier', block + 60, 2))).toMatch(/^TypeError: .*run past the end of the 64-byte block/);
    expect(outcome(() => rt.place('semaphore', block + 16, -1))).toMatch(/^RangeError: .*permits/);
    expect(outcome(() => rt.place('nothing' as 'lock', block + 16))).toMatch(/^TypeError: parklot: Runtime\.place\(\): kind must be one of 'lock', 'condition', 'rwLock', 'semaphore', 'barrier', 'once'/);
    const sem = rt.place('semaphore', block + 16, 3);
    expect(sem.available()).toBe(3);
    const rw = rt.place('rwLock', block + 20, 'prefer-readers');
    expect(rw.tryRead()).toBe(true);
    rw.unlockRead();
    const barrier = rt.place('barrier', block + 24, 1);
    expect(barrier.wait()).toBe(true);
    const once = rt.place('once', block + 32);
    expect(once.state()).toBe('new');
    const cond = rt.place('condition', block + 33);
    expect(cond.notifyAll()).toBe(0);
    // A held Lock in it keeps the block from being freed.
    expect(outcome(() => rt.free(block, 64, 8))).toMatch(/^TypeError: parklot: Runtime\.free\(\): .*Lock at \d+ .*is locked/);
    lock.unlock();
    // A placed primitive freed alone leaves the block's bytes to the block.
    cond.free();
    expect(outcome(() => rt.conditionAt(block + 33))).toMatch(/was freed/);
    expect(rt.place('condition', block + 33).notifyOne()).toBe(false);
    rt.free(block, 64, 8);
    expect(outcome(() => rt.lockAt(block + 8))).toMatch(/was freed/);
    // (`lock` itself is not told: objects for a freed block's primitives must not be used.)
  });
});

describe('5. a thread that may not block: every blocking call throws, free or not', () => {
  it('blocking calls throw naming the async form, on free objects too, and change nothing; tries are allowed', async () => {
    const page = await Runtime.attach(rt.handle(), { mayBlock: false });
    try {
      const lock = page.lock();
      const rw = page.rwLock();
      const sem = page.semaphore(5);
      const once = page.once();
      const cond = page.condition();
      const blocking: [string, () => unknown, RegExp][] = [
        ['Lock.lock', () => lock.lock(), /use await lock\.lockAsync\(\)/],
        ['Lock.lockFor(10)', () => lock.lockFor(10), /use await lock\.lockAsync\(timeout\)/],
        ['Lock.withLock', () => lock.withLock(() => 1), /withLockAsync/],
        ['RwLock.read', () => rw.read(), /use await lock\.readAsync\(\)/],
        ['RwLock.readFor(10)', () => rw.readFor(10), /readAsync\(timeout\)/],
        ['RwLock.write', () => rw.write(), /writeAsync\(\)/],
        ['RwLock.writeFor(10)', () => rw.writeFor(10), /writeAsync\(timeout\)/],
        ['RwLock.upgradableRead', () => rw.upgradableRead(), /upgradableReadAsync\(\)/],
        ['RwLock.upgradableReadFor(10)', () => rw.upgradableReadFor(10), /upgradableReadAsync\(timeout\)/],
        ['RwLock.withRead', () => rw.withRead(() => 1), /withReadAsync|readAsync/],
        ['RwLock.withWrite', () => rw.withWrite(() => 1), /withWriteAsync|writeAsync/],
        ['Semaphore.acquire', () => sem.acquire(), /acquireAsync/],
        ['Semaphore.acquireFor(1, 10)', () => sem.acquireFor(1, 10), /acquireAsync\(n, timeout\)/],
        ['Once.callOnce', () => once.callOnce(() => {}), /callOnceAsync/],
        ['Once.callOnceForce', () => once.callOnceForce(() => {}), /callOnceAsync/],
      ];
      for (const [name, call, alternative] of blocking) {
        const result = outcome(call);
        expect(result, name).toMatch(/^TypeError: parklot: .* would block this thread, which may not block/);
        expect(result, name).toMatch(alternative);
      }
      // Nothing changed.
      expect(lock.isLocked()).toBe(false);
      expect(rw.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
      expect(sem.available()).toBe(5);
      expect(once.state()).toBe('new');
      // Condition.wait blocks even with a timeout of 0 (it takes the lock back).
      expect(await lock.lockAsync()).toBe(true);
      expect(outcome(() => cond.wait(lock, 0))).toMatch(/would block.*waitAsync/);
      lock.unlock();
      // Upgrades block too.
      expect(rw.tryUpgradableRead()).toBe(true);
      expect(outcome(() => rw.upgrade())).toMatch(/would block.*upgradeAsync\(\)/);
      expect(outcome(() => rw.upgradeFor(10))).toMatch(/would block.*upgradeAsync\(timeout\)/);
      expect(rw.upgradeFor(0)).toBe(true); // a try
      rw.unlockWrite();
      // What never waits stays allowed: tries, and timeouts of 0 or less.
      expect(lock.tryLock()).toBe(true);
      lock.unlock();
      expect(lock.lockFor(0)).toBe(true);
      lock.unlock();
      expect(lock.lockFor(-5)).toBe(true);
      lock.unlock();
      expect(rw.tryRead()).toBe(true);
      rw.unlockRead();
      expect(rw.readFor(0)).toBe(true);
      rw.unlockRead();
      expect(rw.writeFor(0)).toBe(true);
      rw.unlockWrite();
      expect(sem.tryAcquire(2)).toBe(true);
      expect(sem.acquireFor(2, 0)).toBe(true);
      sem.release(4);
      expect(await once.callOnceAsync(() => {})).toBe(true);
    } finally {
      page.close();
    }
  });
});

describe('6. every primitive can be freed', () => {
  it('free() and [Symbol.dispose]() on every kind; the address is then refused everywhere', () => {
    for (const dispose of [false, true]) {
      for (const [name, object] of Object.entries(oneOfEach(rt)) as [KindName, { address: number; free(): void; [Symbol.dispose](): void }][]) {
        if (dispose) object[Symbol.dispose]();
        else object.free();
        expect(outcome(() => at(name, object.address)), name).toMatch(new RegExp(`^TypeError: parklot: Runtime\\.${name}At\\(\\): address ${object.address} was freed`));
        expect(outcome(() => object.free()), name).toMatch(new RegExp(`^TypeError: parklot: ${CLASS[name]}\\.free\\(\\): this ${CLASS[name]} was freed already`));
      }
    }
  });

  it('`using` frees at the end of the block', () => {
    let address = 0;
    {
      using lock = rt.lock();
      address = lock.address;
      expect(lock.tryLock()).toBe(true);
      lock.unlock();
    }
    expect(outcome(() => rt.lockAt(address))).toMatch(/was freed/);
  });

  it('a second free, through this object or another, and a use through this object after free, are refused', async () => {
    const lock = rt.lock();
    const other = rt.lockAt(lock.address);
    lock.free();
    expect(outcome(() => other.free())).toMatch(/^TypeError: parklot: Lock\.free\(\): address \d+ was freed/);
    const freed: [string, () => unknown][] = [
      ['lock', () => lock.lock()],
      ['tryLock', () => lock.tryLock()],
      ['lockFor', () => lock.lockFor(0)],
      ['lockFor(5)', () => lock.lockFor(5)],
      ['unlock', () => lock.unlock()],
      ['unlockFair', () => lock.unlockFair()],
      ['isLocked', () => lock.isLocked()],
      ['withLock', () => lock.withLock(() => 1)],
    ];
    for (const [name, call] of freed) expect(outcome(call), name).toMatch(/^TypeError: parklot: Lock\.\w+\(\): this Lock was freed/);
    await expect(lock.lockAsync()).rejects.toThrow(/this Lock was freed/);
    const cond = rt.condition();
    expect(outcome(() => cond.wait(lock, 0))).toMatch(/this Lock was freed/);
    const { rwLock, semaphore, once, barrier, condition } = oneOfEach(rt);
    for (const o of [rwLock, semaphore, once, barrier, condition]) o.free();
    expect(outcome(() => rwLock.read())).toMatch(/^TypeError: parklot: RwLock\.read\(\): this RwLock was freed/);
    expect(outcome(() => rwLock.tryWrite())).toMatch(/this RwLock was freed/);
    expect(outcome(() => rwLock.unlockRead())).toMatch(/this RwLock was freed/);
    expect(outcome(() => rwLock.state())).toMatch(/this RwLock was freed/);
    await expect(rwLock.readAsync()).rejects.toThrow(/this RwLock was freed/);
    expect(outcome(() => semaphore.release())).toMatch(/^TypeError: parklot: Semaphore\.release\(\): this Semaphore was freed/);
    expect(outcome(() => semaphore.tryAcquire())).toMatch(/this Semaphore was freed/);
    expect(outcome(() => semaphore.available())).toMatch(/this Semaphore was freed/);
    await expect(semaphore.acquireAsync()).rejects.toThrow(/this Semaphore was freed/);
    expect(outcome(() => once.callOnce(() => {}))).toMatch(/this Once was freed/);
    expect(outcome(() => once.state())).toMatch(/this Once was freed/);
    await expect(once.callOnceAsync(() => {})).rejects.toThrow(/this Once was freed/);
    expect(outcome(() => condition.notifyAll())).toMatch(/this Condition was freed/);
    expect(outcome(() => condition.notifyOne())).toMatch(/this Condition was freed/);
  });

  it('freeing what is held or waited on is refused, and it goes on working', async () => {
    const lock = rt.lock();
    lock.lock();
    expect(outcome(() => lock.free())).toMatch(/^TypeError: parklot: Lock\.free\(\): the Lock at \d+ is locked or has waiters/);
    lock.unlock();
    const rw = rt.rwLock();
    rw.read();
    expect(outcome(() => rw.free())).toMatch(/^TypeError: parklot: RwLock\.free\(\): the RwLock at \d+ is held or has waiters/);
    rw.unlockRead();
    const sem = rt.semaphore(0);
    const acquiring = sem.acquireAsync(1);
    expect(outcome(() => sem.free())).toMatch(/^TypeError: parklot: Semaphore\.free\(\): the Semaphore at \d+ has waiters/);
    sem.release(1);
    expect(await acquiring).toBe(true);
    const cond = rt.condition();
    lock.lock();
    const waiting = cond.waitAsync(lock);
    expect(outcome(() => cond.free())).toMatch(/^TypeError: parklot: Condition\.free\(\): the Condition at \d+ has waiters/);
    cond.notifyAll();
    expect(await waiting).toBe(true);
    lock.unlock();
    const once = rt.once();
    let inside = '';
    await once.callOnceAsync(() => {
      inside = outcome(() => once.free());
    });
    expect(inside).toMatch(/^TypeError: parklot: Once\.free\(\): the Once at \d+ is running/);
    const barrier = rt.barrier(2);
    const arriving = barrier.waitAsync();
    expect(outcome(() => barrier.free())).toMatch(/^TypeError: parklot: Barrier\.free\(\): the Barrier at \d+ has waiters/);
    expect(await barrier.waitAsync()).toBe(true);
    expect(await arriving).toBe(false);
    for (const o of [lock, rw, sem, cond, once, barrier]) o.free();
  });

  it('a million rt.lock().free() do not grow the memory; nor do 100,000 of each other kind', () => {
    for (let i = 0; i < 10_000; i++) rt.lock().free();
    const before = rt.memory.buffer.byteLength;
    for (let i = 0; i < 1_000_000; i++) rt.lock().free();
    expect(rt.memory.buffer.byteLength).toBe(before);
    for (let i = 0; i < 100_000; i++) {
      rt.rwLock().free();
      rt.semaphore(1).free();
      rt.barrier(2).free();
      rt.once().free();
      rt.condition().free();
    }
    expect(rt.memory.buffer.byteLength).toBe(before);
  });
});

describe('7. argument slips', () => {
  it("rt.rwLock('prefer-readers') makes a reader-preferring lock", async () => {
    for (const [made, prefersReaders] of [
      [rt.rwLock('prefer-readers'), true],
      [rt.rwLock({ policy: 'prefer-readers' }), true],
      [rt.rwLock('prefer-writers'), false],
      [rt.rwLock(), false],
      [rt.rwLock(null as unknown as undefined), false],
    ] as const) {
      made.read();
      const writing = made.writeAsync(5000);
      await sleep(5);
      // A writer waits: a new reader gets in only under 'prefer-readers'.
      const readerIn = made.tryRead();
      expect(readerIn).toBe(prefersReaders);
      if (readerIn) made.unlockRead();
      made.unlockRead();
      expect(await writing).toBe(true);
      made.unlockWrite();
    }
  });

  it('bad options are parklot TypeErrors that show the right call', async () => {
    expect(outcome(() => rt.rwLock('fifo' as 'prefer-readers'))).toMatch(
      /^TypeError: parklot: Runtime\.rwLock\(\): .*'prefer-writers' or 'prefer-readers'.*rt\.rwLock\('prefer-readers'\)/,
    );
    expect(outcome(() => rt.rwLock(5 as unknown as undefined))).toMatch(/^TypeError: parklot: Runtime\.rwLock\(\): options must be an object/);
    expect(outcome(() => rt.rwLock({ policy: 7 as unknown as 'prefer-readers' }))).toMatch(/^TypeError: parklot: Runtime\.rwLock\(\): policy must be/);
    await expect(Runtime.attach(rt.handle(), 5 as unknown as undefined)).rejects.toThrow(/^parklot: Runtime\.attach\(\): options must be an object/);
    await expect(Runtime.attach(rt.handle(), 'yes' as unknown as undefined)).rejects.toThrow(/^parklot: Runtime\.attach\(\): options must be an object/);
    const other = await Runtime.attach(rt.handle(), null as unknown as undefined);
    other.close();
  });

  it('null and wrong types reach no engine error in any Runtime call', () => {
    const wrong = [null, undefined, '8', {}, 1n, Symbol('x'), true];
    const calls: [string, (v: unknown) => unknown][] = [
      ['alloc', (v) => rt.alloc(v as number)],
      ['alloc align', (v) => rt.alloc(8, v as number)],
      ['free', (v) => rt.free(v as number, 8)],
      ['free bytes', (v) => rt.free(rt.alloc(8), v as number)],
      ['semaphore', (v) => rt.semaphore(v as number)],
      ['barrier', (v) => rt.barrier(v as number)],
      ['rwLock', (v) => rt.rwLock(v as undefined)],
      ['lockAt', (v) => rt.lockAt(v as number)],
      ['rwLockAt', (v) => rt.rwLockAt(v as number)],
      ['int32', (v) => rt.int32(v as number)],
      ['int32 length', (v) => rt.int32(rt.alloc(8), v as number)],
      ['place kind', (v) => rt.place(v as 'lock', rt.alloc(8))],
      ['place address', (v) => rt.place('lock', v as number)],
      ['place rwLock options', (v) => rt.place('rwLock', rt.alloc(8), v as undefined)],
    ];
    for (const [name, call] of calls) {
      for (const v of wrong) {
        const result = outcome(() => call(v));
        if (result.startsWith('returned')) continue; // a default (undefined, or null as no options)
        expect(result, `${name}(${typeof v === 'symbol' ? 'symbol' : String(v)})`).toMatch(/^(TypeError|RangeError): parklot: /);
      }
    }
  });
});

