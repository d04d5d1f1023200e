// Cancellation: every async acquisition and wait takes `{ signal }` after its
// timeout. An abort rejects the promise with the signal's reason and takes the
// wait out of its queue in the core (the next release goes to a real waiter);
// an already-aborted signal rejects at once, queuing nothing; a grant that won
// the race with the abort is kept (the promise resolves as usual), so nothing
// is lost; the abort listener goes when the wait settles.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { openGate, rt, sleep, spawn, useRuntime, withTimeout } from './helpers.js';

const DEADLINE_MS = 10_000;

useRuntime();

/** An abort reason of our own, to check the rejection is exactly it. */
function reason(what: string): Error {
  return new Error(`test abort: ${what}`);
}

/** The abort listeners `signal` has (Node's view of an EventTarget). */
function listeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

/** Lets a queued async wait reach its sleep. */
const settleIn = () => sleep(30);

/**
 * Starts a wait with `start(signal)` and lets it queue; runs `behind()` (which
 * may queue a real waiter behind it); aborts it. Checks that it rejects with
 * exactly the abort's reason and that its abort listener came and went.
 */
async function abortQueued(what: string, start: (signal: AbortSignal) => Promise<unknown>, behind?: () => void): Promise<void> {
  const c = new AbortController();
  const why = reason(what);
  const aborted = start(c.signal);
  behind?.();
  await settleIn();
  expect(listeners(c.signal), `${what}: a listener while it waits`).toBe(1);
  c.abort(why);
  await expect(withTimeout(aborted, DEADLINE_MS, what)).rejects.toBe(why);
  expect(listeners(c.signal), `${what}: no listener once settled`).toBe(0);
}

describe('AbortSignal: abort while queued', () => {
  it('Lock.lockAsync behind a worker: rejects with the reason; the next unlock goes to the next real waiter', async () => {
    const lock = rt.lock();
    const stop = rt.alloc(4, 4);
    const holder = spawn(rt, 'holdUntilStop', { lock: lock.address, stop });
    await holder.next('held');
    let real!: Promise<boolean>;
    await abortQueued('Lock.lockAsync', (signal) => lock.lockAsync(undefined, { signal }), () => (real = lock.lockAsync()));
    openGate(rt, stop); // the holder unlocks: the lock must reach `real`, not the aborted record ahead of it
    expect(await withTimeout(real, DEADLINE_MS, 'the real waiter after the abort')).toBe(true);
    lock.unlock();
    await holder.done;
    lock.free(); // refused while anyone waits: nobody does
  });

  it('RwLock readAsync, writeAsync, upgradableReadAsync behind a worker writer: each rejects; a real reader gets in', async () => {
    const rw = rt.rwLock();
    const stop = rt.alloc(4, 4);
    const holder = spawn(rt, 'rwHoldUntilStop', { rw: rw.address, mode: 'write', stop });
    await holder.next('held');
    let real!: Promise<boolean>;
    await abortQueued('RwLock.readAsync', (signal) => rw.readAsync(undefined, { signal }), () => (real = rw.readAsync()));
    await abortQueued('RwLock.writeAsync', (signal) => rw.writeAsync(undefined, { signal }));
    await abortQueued('RwLock.upgradableReadAsync', (signal) => rw.upgradableReadAsync(5_000, { signal }));
    openGate(rt, stop);
    expect(await withTimeout(real, DEADLINE_MS, 'the real reader')).toBe(true);
    expect(rw.state()).toEqual({ held: 'read', readers: 1, upgradable: false });
    rw.unlockRead();
    await holder.done;
    rw.free();
  });

  it('RwLock.upgradeAsync waiting for a worker reader: rejects, and the upgradable read is still held', async () => {
    const rw = rt.rwLock();
    const stop = rt.alloc(4, 4);
    const reader = spawn(rt, 'rwHoldUntilStop', { rw: rw.address, mode: 'read', stop });
    await reader.next('held');
    expect(await rw.upgradableReadAsync()).toBe(true);
    await abortQueued('RwLock.upgradeAsync', (signal) => rw.upgradeAsync(undefined, { signal }));
    expect(rw.state()).toEqual({ held: 'read', readers: 2, upgradable: true });
    const real = rw.upgradeAsync();
    openGate(rt, stop);
    expect(await withTimeout(real, DEADLINE_MS, 'the real upgrade')).toBe(true);
    rw.unlockWrite();
    await reader.done;
    rw.free();
  });

  it('Semaphore.acquireAsync: rejects; the released permit goes to the real waiter', async () => {
    const sem = rt.semaphore(1);
    expect(sem.tryAcquire()).toBe(true);
    let real!: Promise<boolean>;
    await abortQueued('Semaphore.acquireAsync', (signal) => sem.acquireAsync(1, undefined, { signal }), () => (real = sem.acquireAsync(1)));
    sem.release();
    expect(await withTimeout(real, DEADLINE_MS, 'the real acquireAsync')).toBe(true);
    expect(sem.available()).toBe(0);
    sem.release();
    sem.free();
  });

  it('Condition.waitAsync: rejects holding the lock again (as every return does); nobody is left to notify', async () => {
    const lock = rt.lock();
    const cond = rt.condition();
    expect(await lock.lockAsync()).toBe(true);
    await abortQueued('Condition.waitAsync', (signal) => cond.waitAsync(lock, undefined, { signal }), () => {
      expect(lock.isLocked()).toBe(false); // released while it waits
    });
    expect(lock.isLocked()).toBe(true);
    lock.unlock(); // this thread holds it
    expect(cond.notifyOne()).toBe(false);
    cond.free();
  });

  it('Condition.waitAsync with a worker holding the lock when the abort comes: rejects once it has the lock back', async () => {
    const lock = rt.lock();
    const cond = rt.condition();
    const stop = rt.alloc(4, 4);
    const c = new AbortController();
    const why = reason('condition, lock busy');
    expect(await lock.lockAsync()).toBe(true);
    const waiting = cond.waitAsync(lock, undefined, { signal: c.signal });
    let settled = false;
    void waiting.catch(() => {}).finally(() => (settled = true));
    const holder = spawn(rt, 'holdUntilStop', { lock: lock.address, stop });
    await holder.next('held');
    c.abort(why);
    await sleep(30);
    expect(settled).toBe(false); // still waiting for the lock back
    openGate(rt, stop);
    await expect(withTimeout(waiting, DEADLINE_MS, 'the aborted waitAsync')).rejects.toBe(why);
    lock.unlock();
    await holder.done;
  });

  it('Barrier.waitAsync: rejects, and this party leaving breaks the barrier (as a timeout does)', async () => {
    const barrier = rt.barrier(2);
    await abortQueued('Barrier.waitAsync', (signal) => barrier.waitAsync(undefined, { signal }));
    expect(barrier.broken).toBe(true);
    barrier.reset();
    barrier.free(); // refused while anyone waits
  });

  it("Once.callOnceAsync waiting for a worker's run: rejects without running its function", async () => {
    const once = rt.once();
    const w = spawn(rt, 'onceRunForever', { once: once.address });
    await w.next('running');
    let ran = false;
    await abortQueued('Once.callOnceAsync', (signal) => once.callOnceAsync(() => (ran = true), { signal }));
    expect(ran).toBe(false);
    expect(once.state()).toBe('running');
    await w.worker.terminate();
  });

  it('rt.atomics.waitAsync: the promise rejects; notify finds nobody', async () => {
    const word = rt.int32(rt.alloc(4, 4));
    await abortQueued('rt.atomics.waitAsync', (signal) => {
      const r = rt.atomics.waitAsync(word, 0, 0, undefined, { signal });
      expect(r.async).toBe(true);
      return r.value as Promise<string>;
    });
    expect(rt.atomics.notify(word, 0)).toBe(0);
  });

  it('AbortSignal.timeout(): rejects with its TimeoutError', async () => {
    const lock = rt.lock();
    const stop = rt.alloc(4, 4);
    const holder = spawn(rt, 'holdUntilStop', { lock: lock.address, stop });
    await holder.next('held');
    const t0 = performance.now();
    const e = await withTimeout(lock.lockAsync(undefined, { signal: AbortSignal.timeout(40) }), DEADLINE_MS, 'lockAsync with AbortSignal.timeout').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DOMException);
    expect((e as DOMException).name).toBe('TimeoutError');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
    openGate(rt, stop);
    await holder.done;
    expect(lock.tryLock()).toBe(true);
    lock.unlock();
    lock.free();
  });
});

describe('AbortSignal: already aborted, wrong arguments', () => {
  it('an already-aborted signal rejects at once with its reason, queuing and taking nothing, even where it would not wait', async () => {
    const c = new AbortController();
    const why = reason('before');
    c.abort(why);
    const signal = c.signal;
    const lock = rt.lock();
    const rw = rt.rwLock();
    const sem = rt.semaphore(3);
    const cond = rt.condition();
    const barrier = rt.barrier(1);
    const once = rt.once();
    const word = rt.int32(rt.alloc(4, 4));
    const records = rt.waiterRecords;
    let ran = false;
    await expect(lock.lockAsync(undefined, { signal })).rejects.toBe(why);
    await expect(lock.lockAsync(0, { signal })).rejects.toBe(why);
    await expect(lock.withLockAsync(() => (ran = true), { signal })).rejects.toBe(why);
    expect(lock.isLocked()).toBe(false);
    await expect(rw.readAsync(undefined, { signal })).rejects.toBe(why);
    await expect(rw.writeAsync(undefined, { signal })).rejects.toBe(why);
    await expect(rw.upgradableReadAsync(undefined, { signal })).rejects.toBe(why);
    await expect(rw.withReadAsync(() => (ran = true), { signal })).rejects.toBe(why);
    await expect(rw.withWriteAsync(() => (ran = true), { signal })).rejects.toBe(why);
    expect(await rw.upgradableReadAsync()).toBe(true);
    await expect(rw.upgradeAsync(undefined, { signal })).rejects.toBe(why);
    expect(rw.state()).toEqual({ held: 'read', readers: 1, upgradable: true });
    rw.unlockUpgradable();
    await expect(sem.acquireAsync(1, undefined, { signal })).rejects.toBe(why);
    expect(sem.available()).toBe(3);
    expect(await lock.lockAsync()).toBe(true);
    await expect(cond.waitAsync(lock, undefined, { signal })).rejects.toBe(why);
    expect(lock.isLocked()).toBe(true); // never released
    lock.unlock();
    await expect(barrier.waitAsync(undefined, { signal })).rejects.toBe(why);
    expect(barrier.broken).toBe(false); // it never arrived
    await expect(once.callOnceAsync(() => (ran = true), { signal })).rejects.toBe(why);
    expect(once.state()).toBe('new');
    const r = rt.atomics.waitAsync(word, 0, 0, undefined, { signal });
    expect(r.async).toBe(true);
    await expect(r.value).rejects.toBe(why);
    expect(ran).toBe(false);
    expect(rt.waiterRecords).toBe(records);
    expect(listeners(signal)).toBe(0);
  });

  it('options that are not an object, a signal that is not an AbortSignal, or a signal where the timeout goes: a TypeError', async () => {
    const lock = rt.lock();
    const word = rt.int32(rt.alloc(4, 4));
    const fake = { aborted: false, addEventListener() {}, removeEventListener() {} };
    const calls: [string, (options: unknown) => Promise<unknown>][] = [
      ['Lock.lockAsync()', (o) => lock.lockAsync(undefined, o as never)],
      ['RwLock.readAsync()', (o) => rt.rwLock().readAsync(undefined, o as never)],
      ['Semaphore.acquireAsync()', (o) => rt.semaphore(1).acquireAsync(1, undefined, o as never)],
      ['Condition.waitAsync()', (o) => rt.condition().waitAsync(lock, undefined, o as never)],
      ['Barrier.waitAsync()', (o) => rt.barrier(2).waitAsync(undefined, o as never)],
      ['Once.callOnceAsync()', (o) => rt.once().callOnceAsync(() => {}, o as never)],
      ['rt.atomics.waitAsync()', async (o) => rt.atomics.waitAsync(word, 0, 1, undefined, o as never)],
    ];
    for (const [name, call] of calls) {
      const escaped = name.replace(/[.()]/g, '\\$&');
      await expect(call(5), name).rejects.toThrow(new RegExp(`^parklot: ${escaped}: the options must be an object .*got number`));
      await expect(call({ signal: fake }), name).rejects.toThrow(new RegExp(`^parklot: ${escaped}: options\\.signal must be an AbortSignal`));
      await expect(call({ signal: 'x' }), name).rejects.toBeInstanceOf(TypeError);
    }
    // No signal, or no options: as before.
    expect(await lock.lockAsync(undefined, {})).toBe(true);
    lock.unlock();
    expect(await lock.lockAsync(100, { signal: undefined })).toBe(true);
    lock.unlock();
    // The habit of other libraries, acquire({ signal }): refused, not read as a timeout of NaN (forever).
    const c = new AbortController();
    await expect(lock.lockAsync({ signal: c.signal } as never)).rejects.toThrow(/^parklot: Lock\.lockAsync\(\): the timeout is an object with a signal; pass \{ signal \} after the timeout/);
    await expect(rt.semaphore(1).acquireAsync(1, { signal: c.signal } as never)).rejects.toThrow(/pass \{ signal \} after the timeout/);
    expect(lock.isLocked()).toBe(false);
  });
});

describe('AbortSignal: races and leaks', () => {
  it('abort racing with unlock against a busy worker, many times: the counter stays exact and the lock ends free', async () => {
    const lock = rt.lock();
    const counter = rt.alloc(8, 8);
    const stop = rt.alloc(4, 4);
    const gate = rt.alloc(4, 4);
    // Holding the lock 100 us at a time, so that most of this thread's calls queue and meet the abort there.
    const worker = spawn(rt, 'incrementUntilStop', { lock: lock.address, counter, stop, gate, holdUs: 100 });
    await worker.next('ready');
    openGate(rt, gate);
    const c = rt.float64(counter);
    const kept = new AbortController(); // never aborts: its listener must not pile up
    let mine = 0;
    let abortedCount = 0;
    const byMoment = [0, 0, 0, 0]; // aborted calls, by when the abort came
    await withTimeout(
      (async () => {
        for (let i = 0; i < 2000; i++) {
          const ctl = new AbortController();
          const why = reason(`race ${i}`);
          const p = lock.lockAsync(undefined, { signal: i % 4 === 3 ? kept.signal : ctl.signal });
          // Abort at different moments: before the first sleep, after a microtask, after a macrotask.
          if (i % 4 === 0) ctl.abort(why);
          else if (i % 4 === 1) queueMicrotask(() => ctl.abort(why));
          else if (i % 4 === 2) setImmediate(() => ctl.abort(why));
          try {
            if (await p) {
              c[0] = c[0]! + 1;
              mine++;
              lock.unlock();
            }
          } catch (e) {
            expect(e).toBe(why);
            abortedCount++;
            byMoment[i % 4]!++;
          }
          // Until the worker has the lock again (it woke and counted): the next call then queues behind it.
          for (const seen = c[0]; c[0] === seen; ) await new Promise(setImmediate);
        }
      })(),
      60_000,
      '2000 aborted or granted lockAsync calls',
    );
    expect(listeners(kept.signal)).toBe(0);
    Atomics.store(rt.int32(stop), 0, 1);
    const theirs = (await withTimeout(worker.done, 30_000, 'the worker to stop')) as number;
    console.log(`2000 lockAsync calls against a busy worker: ${mine} granted, ${abortedCount} aborted (at once ${byMoment[0]}, after a microtask ${byMoment[1]}, after a macrotask ${byMoment[2]}); the worker's ${theirs}`);
    expect(c[0]).toBe(mine + theirs);
    expect(mine + abortedCount).toBe(2000);
    expect(mine).toBeGreaterThanOrEqual(500); // at least the ones with the signal that never aborts
    expect(abortedCount).toBeGreaterThan(0);
    expect(lock.isLocked()).toBe(false);
    lock.free();
  });

  it('a hand-off that came before the abort is kept: the promise resolves true, holding the lock', async () => {
    // Two runtime instances on this thread: `page` waits for a lock `rt` holds and hands over fairly.
    const page = await Runtime.attach(rt.handle(), { mayBlock: false });
    try {
      const lock = rt.lock();
      const theirs = page.lockAt(lock.address);
      expect(lock.tryLock()).toBe(true);
      const c = new AbortController();
      const p = theirs.lockAsync(undefined, { signal: c.signal });
      await settleIn();
      lock.unlockFair(); // hands the lock to the queued record, whose promise has not run yet
      c.abort(reason('after the hand-off'));
      expect(await withTimeout(p, DEADLINE_MS, 'the handed-over lockAsync')).toBe(true);
      expect(theirs.isLocked()).toBe(true);
      theirs.unlock();
      expect(listeners(c.signal)).toBe(0);
      lock.free();
    } finally {
      page.close();
    }
  });

  it('a signal used for a hundred thousand contended waits keeps no listener and no record', async () => {
    const lock = rt.lock();
    const kept = new AbortController();
    const records = rt.waiterRecords;
    for (let i = 0; i < 100_000; i++) {
      lock.tryLock();
      const p = lock.lockAsync(undefined, { signal: kept.signal });
      queueMicrotask(() => lock.unlock());
      if (!(await p)) throw new Error('lockAsync without a timeout returned false');
      lock.unlock();
      if (i === 0) expect(listeners(kept.signal)).toBe(0);
    }
    expect(listeners(kept.signal)).toBe(0);
    expect(rt.waiterRecords).toBeLessThanOrEqual(Math.max(records, 1));
  });
});
