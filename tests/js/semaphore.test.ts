// The semaphore and the barrier from JS (issue 13): workers that block and
// workers that may not block (page-style async waiters) share one of each;
// the bound on held permits and the barrier's rounds are checked.
import { describe, expect, it } from 'vitest';
import { allDone, blockingAndAsync, rt, useRuntime } from './helpers.js';

useRuntime();

describe('Semaphore', () => {
  it('blocking and async workers never hold more permits than the bound', async () => {
    const bound = 3;
    const sem = rt.semaphore(bound);
    const held = rt.alloc(4, 4);
    const common = { sem: sem.address, held, bound, iterations: 10_000 };
    const violations = await allDone(blockingAndAsync(rt, 'semaphoreMix', common), 120_000, 'semaphore workers');
    expect(violations).toEqual([0, 0, 0, 0]);
    expect(sem.available()).toBe(bound);
  });

  it('counts, times out, and refuses what it cannot hold', async () => {
    const sem = rt.semaphore(2);
    expect(sem.tryAcquire(2)).toBe(true);
    expect(sem.tryAcquire()).toBe(false);
    const start = performance.now();
    expect(sem.acquireFor(1, 10)).toBe(false);
    expect(await sem.acquireAsync(1, 10)).toBe(false);
    expect(performance.now() - start).toBeGreaterThanOrEqual(19);
    const waiting = sem.acquireAsync(2, 5000);
    sem.release(2);
    expect(await waiting).toBe(true);
    sem.release(2);
    expect(sem.available()).toBe(2);
    expect(() => sem.release(0x3fff_ffff)).toThrow(RangeError);
    expect(sem.available()).toBe(2);
    expect(() => sem.acquire(0)).toThrow(RangeError);
    expect(() => rt.semaphore(-1)).toThrow(RangeError);
  });

  it('withPermits and withPermitsAsync hold n permits for fn and give them back however fn ends', async () => {
    const sem = rt.semaphore(3);
    expect(sem.withPermits(2, () => sem.available())).toBe(1);
    expect(() =>
      sem.withPermits(3, () => {
        throw new Error('inside');
      }),
    ).toThrow('inside');
    expect(sem.available()).toBe(3);
    expect(await sem.withPermitsAsync(3, async () => sem.available())).toBe(0);
    await expect(sem.withPermitsAsync(1, () => Promise.reject(new Error('async inside')))).rejects.toThrow('async inside');
    expect(sem.available()).toBe(3);
    // Waiting for permits held elsewhere: an abort ends the wait, fn never runs, nothing is taken.
    sem.acquire(3);
    const controller = new AbortController();
    let ran = false;
    const waiting = sem.withPermitsAsync(1, () => (ran = true), { signal: controller.signal });
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    sem.release(3);
    expect(ran).toBe(false);
    expect(sem.available()).toBe(3);
    expect(() => sem.withPermits(0, () => 1)).toThrow(RangeError);
  });
});

describe('Barrier', () => {
  it('blocking and async workers meet each round; one leader per opening', async () => {
    const parties = 4;
    const rounds = 200;
    const barrier = rt.barrier(parties);
    const arrived = rt.alloc(4, 4);
    const common = { barrier: barrier.address, arrived, parties, rounds };
    const results = await allDone<[number, number]>(blockingAndAsync(rt, 'barrierRounds', common), 120_000, 'barrier workers');
    expect(results.map(([v]) => v)).toEqual([0, 0, 0, 0]);
    expect(results.reduce((sum, [, l]) => sum + l, 0)).toBe(rounds);
  });

  it('a barrier for one never waits; bad party counts are refused', async () => {
    const b = rt.barrier(1);
    expect(b.wait()).toBe(true);
    expect(await b.waitAsync()).toBe(true);
    expect(() => rt.barrier(0)).toThrow(RangeError);
  });
});
