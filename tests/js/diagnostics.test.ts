// Diagnostics across real workers: deadlock detection refuses the wait that
// closes a cycle (2, 3 and 6 workers, a worker through the main thread's
// async waiter, the main thread's own async acquisition) and the others
// finish; the snapshot shows waiters, holds and names with detection off;
// a terminated worker leaves the graph; a stress run in one global order
// reports nothing; lock-order checking reports an inversion with both stacks.
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeadlockError, OwnerDiedError, Runtime, spawnWorker, type DiagnosticsSnapshot, type Lock } from '../../js/dist/index.js';
import { sleep, withTimeout } from './helpers.js';

const SCRIPT = new URL('./diagnostics-worker.mjs', import.meta.url);

let rt: Runtime;
beforeAll(async () => {
  rt = await Runtime.create({ name: 'test main' });
});
afterAll(() => rt.close());
afterEach(() => {
  rt.setDeadlockDetection(false);
  rt.setLockOrderChecking(false);
  rt.setHoldTracking(false);
});

interface Refusal {
  message: string;
  address: number;
  threads: { id: number; name: string | undefined }[];
  locks: { address: number; kind: string }[];
}

interface Started {
  worker: Worker;
  /** The next message of `type` from the worker. */
  next(type: string): Promise<unknown>;
  /** Its 'done' value; rejects if it failed or exited without one. */
  done: Promise<unknown>;
}

/** Starts diagnostics-worker.mjs on `task`, named `name`, with `data` (revived there). */
async function start(name: string, task: string, data: Record<string, unknown>): Promise<Started> {
  const worker = (await spawnWorker(rt, SCRIPT, { task, ...data }, { name })) as Worker;
  const inbox: { type: string; value: unknown }[] = [];
  const waiting: { type: string; resolve(v: unknown): void }[] = [];
  const done = new Promise<unknown>((resolve, reject) => {
    worker.on('message', (m: { type: string; value: unknown }) => {
      if (m.type === 'done') resolve(m.value);
      const i = waiting.findIndex((w) => w.type === m.type);
      if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m.value);
      else inbox.push(m);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`worker ${name} exited (${code}) before it was done`)));
  });
  done.catch(() => {});
  const next = (type: string): Promise<unknown> => {
    const i = inbox.findIndex((m) => m.type === type);
    if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0]!.value);
    return withTimeout(new Promise((resolve) => waiting.push({ type, resolve })), 30_000, `${name} sent no '${type}'`);
  };
  const bounded = withTimeout(done, 45_000, `worker ${name} done`);
  bounded.catch(() => {}); // a terminated worker's is never awaited
  return { worker, next, done: bounded };
}

/** Polls `rt.diagnostics()` until `test` holds (10 s at most). */
async function until(what: string, test: (s: DiagnosticsSnapshot) => boolean): Promise<DiagnosticsSnapshot> {
  const end = performance.now() + 10_000;
  for (;;) {
    const s = rt.diagnostics();
    if (test(s)) return s;
    if (performance.now() > end) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(s)}`);
    await sleep(2);
  }
}

/** Waiters queued on `lock` in the snapshot. */
function waitersOn(s: DiagnosticsSnapshot, lock: Lock): number {
  return s.waiters.filter((w) => w.address === lock.address).length;
}

/** N workers in a ring: worker i holds lock i and takes lock i+1; exactly one is refused, the others finish. */
async function ring(n: number): Promise<void> {
  rt.setDeadlockDetection(true);
  const locks = Array.from({ length: n }, () => rt.lock());
  const barrier = rt.barrier(n);
  const names = locks.map((_, i) => `philosopher ${i}`);
  const workers = await Promise.all(names.map((name, i) => start(name, 'ring', { mine: locks[i], next: locks[(i + 1) % n], barrier })));
  const results = (await Promise.all(workers.map((w) => w.done))) as { refused?: Refusal }[];
  const refused = results.filter((r) => r.refused !== undefined).map((r) => r.refused!);
  expect(refused).toHaveLength(1);
  const error = refused[0]!;
  console.log(`${n} workers: ${error.message}`);
  expect(error.message).toMatch(/^parklot: Lock\.lock\(\): deadlock: thread \d+ \(philosopher \d\) waits for Lock \d+ held by/);
  expect(error.threads.map((t) => t.name).sort()).toEqual([...names].sort());
  expect(error.locks.map((l) => l.address).sort((a, b) => a - b)).toEqual(locks.map((l) => l.address).sort((a, b) => a - b));
  expect(error.locks.every((l) => l.kind === 'Lock')).toBe(true);
  for (const l of locks) expect(l.isLocked()).toBe(false);
  expect(rt.checkDeadlock()).toEqual([]);
}

describe('deadlock detection across workers', () => {
  it('refuses the wait that closes a 2-worker cycle; the other worker finishes', () => ring(2));
  it('refuses the wait that closes a 3-worker cycle', () => ring(3));
  it('refuses the wait that closes a 6-worker cycle (more workers than cores)', () => ring(6));

  it("refuses a blocking worker whose wait closes a cycle through the main thread's lockAsync waiter", async () => {
    rt.setDeadlockDetection(true);
    const [a, b] = [rt.lock(), rt.lock()];
    const go = rt.alloc(4, 4);
    expect(a.tryLock()).toBe(true); // main holds a
    const w = await start('closer', 'holdThenTake', { mine: b, other: a, go });
    await w.next('holding'); // the worker holds b
    const pending = b.lockAsync(); // main waits for b, asynchronously
    const queued = await until('main waits for b', (s) => waitersOn(s, b) === 1);
    const mine = queued.waiters.find((x) => x.address === b.address)!;
    expect(mine).toMatchObject({ mode: 'async', threadName: 'test main', kind: 'Lock', primitive: 'Lock', timeoutMs: Infinity });
    expect(queued.threads.find((t) => t.id === mine.thread)?.current).toBe(true);
    Atomics.store(rt.int32(go), 0, 1);
    rt.atomics.notify(rt.int32(go), 0);
    const { refused } = (await w.done) as { refused?: Refusal };
    expect(refused?.threads.map((t) => t.name)).toEqual(['closer', 'test main']);
    expect(refused?.locks.map((l) => l.address)).toEqual([a.address, b.address]);
    expect(await withTimeout(pending, 10_000, 'main takes b once the worker let go')).toBe(true); // untouched: it got b
    b.unlock();
    a.unlock();
  });

  it("rejects the main thread's async acquisition that closes a cycle, without queueing it", async () => {
    rt.setDeadlockDetection(true);
    const [a, b] = [rt.lock(), rt.lock()];
    const go = rt.alloc(4, 4);
    Atomics.store(rt.int32(go), 0, 1);
    expect(a.tryLock()).toBe(true); // main holds a
    const w = await start('blocked', 'holdThenTake', { mine: b, other: a, go });
    await w.next('holding');
    await until('the worker waits for a', (s) => waitersOn(s, a) === 1);
    const error = await b.lockAsync().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadlockError);
    const e = error as DeadlockError;
    console.log(`main thread's lockAsync: ${e.message}`);
    expect(e.address).toBe(b.address);
    expect(e.cycle.threads.map((t) => t.name)).toEqual(['test main', 'blocked']);
    expect(e.cycle.steps[0]).toMatchObject({ lock: { address: b.address, kind: 'Lock' }, holder: { name: 'blocked' } });
    expect(waitersOn(rt.diagnostics(), b)).toBe(0); // not queued
    a.unlock(); // the worker goes on
    expect(((await w.done) as { refused?: Refusal }).refused).toBeUndefined();
  });

  it("rejects a Condition.waitAsync whose taking back of its lock would close a cycle, the lock not held", async () => {
    rt.setDeadlockDetection(true);
    const [a, l2, cond] = [rt.lock(), rt.lock(), rt.condition()];
    const go = rt.alloc(4, 4);
    Atomics.store(rt.int32(go), 0, 1);
    expect(l2.tryLock()).toBe(true); // main holds l2 throughout
    expect(a.tryLock()).toBe(true);
    const waiting = cond.waitAsync(a).then(
      () => undefined,
      (e: unknown) => e,
    ); // releases a
    const w = await start('taker', 'holdThenTake', { mine: a, other: l2, go });
    await w.next('holding'); // the worker holds a
    await until('the worker waits for l2', (s) => waitersOn(s, l2) === 1);
    expect(cond.notifyOne()).toBe(true); // main's wait ends; taking a back would wait for the worker, which waits for main
    const error = await waiting;
    expect(error).toBeInstanceOf(DeadlockError);
    expect((error as DeadlockError).message).toMatch(/^parklot: Condition\.waitAsync\(\): deadlock: thread \d+ \(test main\) waits for Lock/);
    expect((error as DeadlockError).cycle.threads.map((t) => t.name)).toEqual(['test main', 'taker']);
    l2.unlock(); // the worker goes on
    expect(((await w.done) as { refused?: Refusal }).refused).toBeUndefined();
    expect([a.isLocked(), l2.isLocked()]).toEqual([false, false]);
  });

  it("throws from a blocking Condition.wait whose taking back of its lock would close a cycle, the lock not held", async () => {
    rt.setDeadlockDetection(true);
    const [a, l2, cond] = [rt.lock(), rt.lock(), rt.condition()];
    const go = rt.alloc(4, 4);
    Atomics.store(rt.int32(go), 0, 1);
    // The waiter holds l2 and waits on cond with a; the taker then holds a and waits for l2.
    const waiter = await start('cond waiter', 'condWaitHolding', { hold: l2, lock: a, cond });
    await waiter.next('waiting');
    await until('the waiter waits on the condition', (s) => s.waiters.some((w) => w.address === cond.address));
    const taker = await start('taker', 'holdThenTake', { mine: a, other: l2, go });
    await taker.next('holding');
    await until('the taker waits for l2', (s) => waitersOn(s, l2) === 1);
    expect(cond.notifyOne()).toBe(true); // taking a back would wait for the taker, which waits for the waiter
    const { refused, stillHeld } = (await waiter.done) as { refused?: Refusal; stillHeld: boolean };
    expect(refused?.message).toMatch(/^parklot: Condition\.wait\(\): deadlock: thread \d+ \(cond waiter\) waits for Lock/);
    expect(refused?.threads.map((t) => t.name)).toEqual(['cond waiter', 'taker']);
    expect(stillHeld).toBe(true); // held by the taker, not the waiter, when the error came
    expect(((await taker.done) as { refused?: Refusal }).refused).toBeUndefined();
    expect([a.isLocked(), l2.isLocked()]).toEqual([false, false]);
  });

  it('withLock and withLockAsync throw and reject DeadlockError, holding nothing new', async () => {
    rt.setDeadlockDetection(true);
    const [a, b] = [rt.lock(), rt.lock()];
    const go = rt.alloc(4, 4);
    Atomics.store(rt.int32(go), 0, 1);
    a.lock();
    const w = await start('other', 'holdThenTake', { mine: b, other: a, go });
    await w.next('holding');
    await until('the worker waits for a', (s) => waitersOn(s, a) === 1);
    let ran = false;
    expect(() => b.withLock(() => (ran = true))).toThrow(DeadlockError);
    await expect(b.withLockAsync(() => (ran = true))).rejects.toBeInstanceOf(DeadlockError);
    expect(() => b.lockFor(60_000)).toThrow(DeadlockError);
    expect(ran).toBe(false);
    a.unlock();
    await w.done;
    expect(b.isLocked()).toBe(false);
  });
});

describe('the snapshot with detection off', () => {
  it('shows blocking and async waiters, their kinds, threads and timeouts, and waiterCount counts them', async () => {
    const lock = rt.lock();
    const word = rt.alloc(4, 4);
    const view = rt.int32(word);
    rt.setHoldTracking(true);
    expect(lock.tryLock()).toBe(true);
    const timed = await start('timed', 'lockFor', { lock, ms: 20_000 });
    const sleepers = await Promise.all(['sleeper 1', 'sleeper 2'].map((name) => start(name, 'futexWait', { word, ms: 20_000 })));
    const own = rt.atomics.waitAsync(view, 0, 0, 30_000);
    expect(own.async).toBe(true);
    const s = await until('everyone waits', (x) => waitersOn(x, lock) === 1 && x.waiters.filter((w) => w.address === word).length === 3);
    expect(s.deadlockDetection).toBe(false);
    expect(s.holdTracking).toBe(true);
    expect(rt.atomics.waiterCount(view, 0)).toBe(3);
    const onLock = s.queues.find((q) => q.address === lock.address)!;
    expect(onLock).toMatchObject({ kind: 'Lock', primitive: 'Lock', holder: s.thread });
    expect(onLock.waiters[0]).toMatchObject({ threadName: 'timed', mode: 'blocking' });
    expect(onLock.waiters[0]!.timeoutMs).toBeGreaterThan(10_000);
    expect(onLock.waiters[0]!.timeoutMs).toBeLessThanOrEqual(20_000);
    expect(onLock.waiters[0]!.deadline).toBeGreaterThan(s.takenAt);
    const onWord = s.queues.find((q) => q.address === word)!;
    expect(onWord.primitive).toBe('bytes');
    expect(onWord.waiters.map((w) => [w.kind, w.mode, w.threadName])).toEqual(
      expect.arrayContaining([
        ['futex', 'blocking', 'sleeper 1'],
        ['futex', 'blocking', 'sleeper 2'],
        ['futex', 'async', 'test main'],
      ]),
    );
    expect(onWord.waiters.every((w) => w.sinceMs >= 0 && w.sinceMs < 10_000)).toBe(true);
    expect(s.holds).toContainEqual(expect.objectContaining({ address: lock.address, kind: 'Lock', primitive: 'Lock', threadName: 'test main' }));
    const names = s.threads.filter((t) => t.state === 'alive').map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['test main', 'timed', 'sleeper 1', 'sleeper 2']));
    expect(s.threads.filter((t) => t.current).map((t) => t.name)).toEqual(['test main']);
    // The test breaks the waits: a notify and an unlock.
    Atomics.store(view, 0, 1);
    expect(rt.atomics.notify(view, 0)).toBe(3);
    expect(await own.value).toBe('ok');
    lock.unlock();
    expect(await timed.done).toBe(true);
    expect(await Promise.all(sleepers.map((w) => w.done))).toEqual(['ok', 'ok']);
    expect(rt.atomics.waiterCount(view, 0)).toBe(0);
    expect(rt.diagnostics().waiters.filter((w) => w.address === word || w.address === lock.address)).toEqual([]);
  });

  it('checkDeadlock() finds the cycle of a frozen pair without disturbing it; terminating them ends it', async () => {
    rt.setHoldTracking(true);
    const [a, b] = [rt.lock(), rt.lock()];
    const go = rt.alloc(4, 4);
    const x = await start('x', 'holdThenTake', { mine: a, other: b, go });
    const y = await start('y', 'holdThenTake', { mine: b, other: a, go });
    await Promise.all([x.next('holding'), y.next('holding')]);
    Atomics.store(rt.int32(go), 0, 1);
    rt.atomics.notify(rt.int32(go), 0);
    await until('both wait', (s) => waitersOn(s, a) === 1 && waitersOn(s, b) === 1);
    const cycles = rt.checkDeadlock();
    expect(cycles).toHaveLength(1);
    console.log(`frozen, detection off: ${cycles[0]!.description}`);
    expect(cycles[0]!.threads.map((t) => t.name).sort()).toEqual(['x', 'y']);
    expect(cycles[0]!.locks.map((l) => l.address).sort((p, q) => p - q)).toEqual([a.address, b.address].sort((p, q) => p - q));
    await sleep(50);
    const still = rt.diagnostics(); // undisturbed: both still wait
    expect([waitersOn(still, a), waitersOn(still, b)]).toEqual([1, 1]);
    await Promise.all([x.worker.terminate(), y.worker.terminate()]);
    await until('both are reaped', (s) => s.threads.filter((t) => t.name === 'x' || t.name === 'y').every((t) => t.state === 'reaped'));
    expect(rt.checkDeadlock()).toEqual([]);
    expect([a.isLocked(), b.isLocked()]).toEqual([false, false]);
  });

  it('refuses bad arguments with clear errors', async () => {
    expect(() => rt.setDeadlockDetection('yes' as unknown as boolean)).toThrow(/^parklot: Runtime\.setDeadlockDetection\(\): pass true or false, got string$/);
    expect(() => rt.atomics.waiterCount(new Int32Array(new SharedArrayBuffer(8)), 0)).toThrow(/not this runtime's memory/);
    expect(() => rt.atomics.waiterCount(new Float64Array(1) as unknown as Int32Array, 0)).toThrow(TypeError);
    expect(() => rt.atomics.waiterCount(rt.int32(rt.alloc(4, 4)), 1)).toThrow(RangeError);
    await expect(Runtime.create({ name: 7 as unknown as string })).rejects.toThrow(/^parklot: Runtime\.create\(\): options\.name must be a string, got number$/);
    await expect(spawnWorker(rt, SCRIPT, {}, { name: '' })).rejects.toThrow(RangeError);
  });
});

describe('the graph and gone threads', () => {
  it('a worker terminated while holding a lock leaves the graph: shown reaped, no hold, no false cycle', async () => {
    rt.setDeadlockDetection(true);
    const [a, b] = [rt.lock(), rt.lock()];
    expect(b.tryLock()).toBe(true); // main holds b
    const w = await start('doomed', 'holdAndHang', { mine: a, other: b });
    await w.next('holding');
    const before = await until('doomed waits for b', (s) => waitersOn(s, b) === 1);
    const doomed = before.threads.find((t) => t.name === 'doomed')!;
    expect(before.holds).toContainEqual(expect.objectContaining({ address: a.address, thread: doomed.id }));
    await w.worker.terminate();
    const after = await until('doomed is reaped', (s) => s.threads.find((t) => t.id === doomed.id)?.state === 'reaped');
    expect(after.holds.filter((h) => h.thread === doomed.id)).toEqual([]);
    expect(waitersOn(after, b)).toBe(0);
    // Main (holding b) waits for a, whose holder waited for b: no cycle now that it is gone.
    await expect(a.lockAsync()).rejects.toBeInstanceOf(OwnerDiedError);
    expect(rt.checkDeadlock()).toEqual([]);
    a.unlock();
    b.unlock();
  });

  it('a stress run in one global order with detection on reports no cycle', async () => {
    rt.setDeadlockDetection(true);
    const locks = Array.from({ length: 4 }, () => rt.lock());
    const ms = 1000;
    const workers = await Promise.all([1, 2, 3, 4].map((i) => start(`stress ${i}`, 'ordered', { locks, ms, seed: i })));
    // The main thread joins in, asynchronously, in the same order.
    let mainRounds = 0;
    const end = performance.now() + ms;
    while (performance.now() < end) {
      await locks[1]!.lockAsync();
      await locks[3]!.lockAsync();
      mainRounds++;
      locks[3]!.unlock();
      locks[1]!.unlock();
    }
    const results = (await Promise.all(workers.map((w) => w.done))) as { rounds: number; refusals: number }[];
    console.log(`stress, detection on: ${results.map((r) => r.rounds).join(', ')} rounds in workers, ${mainRounds} on the main thread`);
    expect(results.every((r) => r.refusals === 0 && r.rounds > 0)).toBe(true);
    expect(rt.checkDeadlock()).toEqual([]);
    expect(rt.diagnostics().holds.filter((h) => locks.some((l) => l.address === h.address))).toEqual([]);
  });
});

describe('lock-order checking', () => {
  it('reports A then B here, B then A there, with both workers and both stacks, before any deadlock', async () => {
    rt.setLockOrderChecking(true);
    expect(rt.lockOrderViolations()).toEqual([]);
    const [l1, l2] = [rt.lock(), rt.lock()];
    const first = await start('worker A', 'inOrder', { first: l1, second: l2 });
    await first.done;
    expect(rt.lockOrderViolations()).toEqual([]);
    const second = await start('worker B', 'inOrder', { first: l2, second: l1 });
    await second.done;
    const violations = rt.lockOrderViolations();
    expect(violations).toHaveLength(1);
    const v = violations[0]!;
    console.log(`lock order: ${v.description}\n  worker B's stack:\n${v.stack}\n  worker A's stack:\n${v.otherStack}`);
    expect(v).toMatchObject({ first: l2.address, second: l1.address, thread: { name: 'worker B' }, otherThread: { name: 'worker A' } });
    for (const stack of [v.stack, v.otherStack]) {
      expect(stack).toMatch(/takeInOrder .*diagnostics-worker\.mjs/);
      expect(stack).not.toMatch(/wasm-function/);
    }
    // Off: no more stacks, and nothing new is reported.
    rt.setLockOrderChecking(false);
    expect(rt.diagnostics().lockOrderChecking).toBe(false);
  });
});
