// Threads that may not block (a page's main thread; here this test's thread,
// forced with mayBlock: false): blocking calls throw a TypeError that names
// the async form, the rest works, and async waiters share the lock's queue
// with blocking workers without starving.
import { beforeAll, describe, expect, it } from 'vitest';
import { Runtime, type Lock } from '../../js/dist/index.js';
import { openGate, outcome, rt, sleep, spawn, useRuntime, withTimeout } from './helpers.js';

useRuntime({ mayBlock: false });
let lock: Lock;
beforeAll(() => {
  lock = rt.lock();
});

describe('mayBlock: false', () => {
  it('is reported, and detected as true in Node', async () => {
    expect(rt.mayBlock).toBe(false);
    const detected = await Runtime.attach(rt.handle());
    expect(detected.mayBlock).toBe(true);
    detected.close();
  });

  it('blocking calls throw a TypeError naming the async alternative; nothing changes', () => {
    const cond = rt.condition();
    const word = rt.int32(rt.alloc(4, 4));
    expect(outcome(() => lock.lock())).toBe(
      "TypeError: parklot: Lock.lock() would block this thread, which may not block (a page's main thread, or a runtime made with mayBlock: false); use await lock.lockAsync()",
    );
    expect(outcome(() => lock.lockFor(5))).toMatch(/^TypeError: .*Lock\.lockFor\(\) would block.*lock\.lockAsync\(timeout\)/);
    expect(outcome(() => lock.lockFor(NaN))).toMatch(/^TypeError: .*Lock\.lockFor\(\) would block/); // forever
    expect(lock.lockFor(0)).toBe(true); // a timeout of 0 is a try: it never waits
    lock.unlock();
    expect(outcome(() => lock.withLock(() => 1))).toMatch(/^TypeError: .*Lock\.withLock\(\) would block.*use await lock\.withLockAsync\(fn\)$/);
    expect(lock.isLocked()).toBe(false);
    expect(lock.tryLock()).toBe(true);
    expect(outcome(() => cond.wait(lock))).toMatch(/^TypeError: .*Condition\.wait\(\) would block.*await condition\.waitAsync\(lock\)/);
    expect(outcome(() => cond.wait(lock, 0))).toMatch(/^TypeError/);
    expect(lock.isLocked()).toBe(true); // wait did not release it
    lock.unlock();
    expect(outcome(() => rt.atomics.wait(word, 0, 0, 0))).toMatch(/^TypeError: .*rt\.atomics\.wait\(\) would block.*rt\.atomics\.waitAsync\(\)/);
    expect(outcome(() => rt.atomics.wait(word, 0, 1))).toMatch(/^TypeError/); // even when not equal, like Atomics.wait
    // What never blocks still works.
    expect(cond.notifyOne()).toBe(false);
    expect(cond.notifyAll()).toBe(0);
    expect(rt.atomics.notify(word, 0)).toBe(0);
    expect(rt.atomics.waitAsync(word, 0, 0, 0)).toEqual({ async: false, value: 'timed-out' });
  });

  it('a worker forced to mayBlock: false gets the same errors and can lockAsync', async () => {
    const w = spawn(rt, 'cannotBlock', { lock: lock.address, mayBlock: false });
    const { errors, got } = (await w.done) as { errors: string[]; got: boolean };
    expect(errors).toHaveLength(2);
    for (const e of errors) expect(e).toMatch(/^TypeError: parklot: Lock\.lock(For)?\(\) would block/);
    expect(got).toBe(true);
  });

  it('lockAsync waits for a worker that holds the lock, and times out when asked to', async () => {
    const holder = spawn(rt, 'hold', { lock: lock.address, ms: 300 });
    await holder.next('held');
    expect(lock.tryLock()).toBe(false);
    const t0 = performance.now();
    expect(await lock.lockAsync(30)).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(await lock.lockAsync(-1)).toBe(false); // negative: try once
    expect(await withTimeout(lock.lockAsync(), 10_000, 'lockAsync')).toBe(true);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(200);
    lock.unlock();
    await holder.done;
  });

  it('a timed-out lockAsync leaves no queue entry: the next unlock wakes the live waiter', async () => {
    const holder = spawn(rt, 'hold', { lock: lock.address, ms: 200 });
    await holder.next('held');
    expect(await lock.lockAsync(5)).toBe(false);
    expect(await lock.lockAsync(5)).toBe(false);
    expect(await withTimeout(lock.lockAsync(), 10_000, 'lockAsync after timed-out ones')).toBe(true);
    lock.unlock();
    await holder.done;
  });

  it('several lockAsync calls in flight on one thread each get the lock once, in turn', async () => {
    lock.tryLock();
    const got: number[] = [];
    const ps = [0, 1, 2].map((k) =>
      lock.lockAsync().then(async () => {
        got.push(k);
        await sleep(5);
        lock.unlock();
      }),
    );
    await sleep(10);
    expect(got).toEqual([]);
    lock.unlock();
    await withTimeout(Promise.all(ps), 10_000, 'three lockAsync calls');
    expect(got.sort()).toEqual([0, 1, 2]);
    expect(rt.waiterRecords).toBeLessThanOrEqual(3);
  });

  it('records are reused: a thousand contended lockAsync calls, one after another, make one record', async () => {
    const start = rt.waiterRecords;
    const holderLock = rt.lock();
    for (let i = 0; i < 1000; i++) {
      holderLock.tryLock();
      const p = holderLock.lockAsync();
      queueMicrotask(() => holderLock.unlock());
      expect(await p).toBe(true);
      holderLock.unlock();
    }
    expect(rt.waiterRecords).toBeLessThanOrEqual(Math.max(start, 1));
  });

  it('async waiters on this thread and 2 blocking workers share one lock: counter exact, nobody starves', async () => {
    const counter = rt.alloc(8, 8);
    const stop = rt.alloc(4, 4);
    const gate = rt.alloc(4, 4);
    const workers = [0, 1].map(() => spawn(rt, 'incrementUntilStop', { lock: lock.address, counter, stop, gate }));
    await Promise.all(workers.map((w) => w.next('ready')));
    const c = rt.float64(counter);
    openGate(rt, gate);
    // Start once the workers are busy: 20,000 of their increments done.
    for (;;) {
      await lock.lockAsync();
      const done = c[0]!;
      lock.unlock();
      if (done >= 20_000) break;
      await sleep(1);
    }
    const before = c[0]!;
    const t0 = performance.now();
    let mine = 0;
    await withTimeout(
      (async () => {
        while (performance.now() - t0 < 300) {
          await lock.lockAsync();
          c[0] = c[0]! + 1;
          lock.unlock();
          mine++;
        }
      })(),
      60_000,
      'async acquisitions against 2 busy workers',
    );
    const workersMeanwhile = c[0]! - before - mine;
    Atomics.store(rt.int32(stop), 0, 1);
    const counts = (await withTimeout(Promise.all(workers.map((w) => w.done)), 30_000, 'workers to stop')) as number[];
    console.log(`in 300 ms: async side ${mine} acquisitions, the 2 workers ${workersMeanwhile}; workers in all: ${counts.join(', ')}`);
    expect(c[0]).toBe(mine + counts[0]! + counts[1]!);
    expect(mine).toBeGreaterThan(0);
    expect(workersMeanwhile).toBeGreaterThan(0);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
  });

  it('close() rejects pending async waits, releases a lock handed over meanwhile, and leaves others working', async () => {
    const page = await Runtime.attach(rt.handle(), { mayBlock: false });
    const l = page.lockAt(lock.address);
    const cond = page.condition();
    const word = page.int32(page.alloc(4, 4));
    expect(lock.tryLock()).toBe(true); // held by the other runtime instance
    const pendingLock = l.lockAsync();
    const pendingAtomics = page.atomics.waitAsync(word, 0, 0);
    expect(pendingAtomics.async).toBe(true);
    const l2 = page.lock();
    await l2.lockAsync();
    const pendingCond = cond.waitAsync(l2);
    page.close();
    await expect(pendingLock).rejects.toThrow(/runtime is closed/);
    await expect((pendingAtomics as { value: Promise<string> }).value).rejects.toThrow(/runtime is closed/);
    await expect(pendingCond).rejects.toThrow(/runtime is closed/);
    // The closed instance's waiters left the queues: unlock and notify find nobody.
    lock.unlock();
    expect(lock.tryLock()).toBe(true);
    lock.unlock();
    expect(rt.atomics.notify(rt.int32(word.byteOffset), 0)).toBe(0);
    expect(rt.conditionAt(cond.address).notifyAll()).toBe(0);
  });
});

describe('an async wait keeps a Node process alive', () => {
  it('a script that only awaits waitAsync with a timeout runs to the end', async () => {
    const { spawnSync } = await import('node:child_process');
    const dist = new URL('../../js/dist/index.js', import.meta.url).href;
    const script = `
      import { Runtime } from ${JSON.stringify(dist)};
      const rt = await Runtime.create();
      const word = rt.int32(rt.alloc(4, 4));
      const r = rt.atomics.waitAsync(word, 0, 0, 200);
      console.log(await r.value);
      const lock = rt.lock();
      lock.lock();
      console.log(await lock.lockAsync(100));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('timed-out\nfalse\n');
    expect(r.status).toBe(0);
  });
});
