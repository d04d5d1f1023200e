// The reader-writer lock from JS (issue 13): workers that block and workers
// that may not block (the page-style async waiters) mix reads and writes on
// one lock; any writer overlapping anyone, or a lost update, shows. Plus the
// calls' contracts on the main thread.
import { describe, expect, it } from 'vitest';
import { checkRwMix, rt, sleep, spawn, untilQueued, useRuntime, withTimeout } from './helpers.js';

const DEADLINE_MS = 30_000;

useRuntime();

describe('RwLock', () => {
  for (const policy of ['prefer-writers', 'prefer-readers'] as const) {
    it(`${policy}: blocking and async workers mix reads and writes; no writer overlaps anyone`, async () => {
      await checkRwMix(rt, rt.rwLock({ policy }), 'rwMix', { iterations: 20_000, writeEvery: 4 });
    });
  }

  it('readers share, a writer excludes, and the snapshots say so', () => {
    const lock = rt.rwLock();
    expect(lock.tryRead()).toBe(true);
    expect(lock.tryRead()).toBe(true);
    expect(lock.state()).toEqual({ held: 'read', readers: 2, upgradable: false });
    expect(lock.tryWrite()).toBe(false);
    lock.unlockRead();
    lock.unlockRead();
    expect(lock.withWrite(() => lock.state())).toEqual({ held: 'write', readers: 0, upgradable: false });
    expect(lock.withRead(() => lock.tryWrite())).toBe(false);
    expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
  });

  it('timeouts: readFor/writeFor/readAsync/writeAsync give up and change nothing', async () => {
    const lock = rt.rwLock({ policy: 'prefer-readers' });
    lock.write();
    const start = performance.now();
    expect(lock.readFor(10)).toBe(false);
    expect(await lock.readAsync(10)).toBe(false);
    lock.unlockWrite();
    lock.read();
    expect(lock.writeFor(10)).toBe(false);
    expect(await lock.writeAsync(10)).toBe(false);
    expect(performance.now() - start).toBeGreaterThanOrEqual(39);
    lock.unlockRead();
    expect(await lock.writeAsync(10)).toBe(true);
    lock.unlockWrite();
    expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
  });

  it('a queued writeAsync gets the lock when the last reader leaves', async () => {
    const lock = rt.rwLock();
    lock.read();
    const writing = lock.writeAsync(5000);
    await sleep(5);
    expect(lock.tryRead()).toBe(false); // writer-preferring: a writer waits
    lock.unlockRead();
    expect(await writing).toBe(true);
    expect(lock.state().held).toBe('write');
    lock.unlockWrite();
  });

  it('a worker terminated while it waits to write: the next writer still gets in', async () => {
    const lock = rt.rwLock();
    lock.read();
    const a = spawn(rt, 'rwPark', { rw: lock.address, write: true });
    await a.next('parking');
    await untilQueued(rt, lock.address, 1);
    const b = spawn(rt, 'rwPark', { rw: lock.address, write: true });
    await b.next('parking');
    await untilQueued(rt, lock.address, 2);
    await a.worker.terminate();
    lock.unlockRead();
    await withTimeout(b.next('locked'), DEADLINE_MS, 'worker B to write after worker A, queued before it, was terminated');
    await withTimeout(b.done, DEADLINE_MS, 'worker B to finish');
    expect(await lock.writeAsync(DEADLINE_MS)).toBe(true);
    lock.unlockWrite();
    expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
  });

  it('errors that teach: unlocks of what is not held, bad policies, addresses', () => {
    const lock = rt.rwLock();
    expect(() => lock.unlockRead()).toThrow(TypeError);
    expect(() => lock.unlockWrite()).toThrow(TypeError);
    lock.read();
    expect(() => lock.unlockWrite()).toThrow(TypeError);
    lock.unlockRead();
    // @ts-expect-error: not a policy
    expect(() => rt.rwLock({ policy: 'fifo' })).toThrow(/prefer-writers/);
    expect(() => rt.rwLockAt(lock.address + 1)).toThrow(RangeError);
    expect(rt.rwLockAt(lock.address).tryWrite()).toBe(true);
    lock.unlockWrite();
  });
});
