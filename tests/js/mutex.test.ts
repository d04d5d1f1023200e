// Mutual exclusion from JS: workers increment plain (non-atomic) f64
// counters under parklot locks, through Lock.lock()/unlock(); any lost
// update shows as a wrong total. A start gate releases the workers together,
// and the main thread holds the lock at the start, so that they all park.
import { describe, expect, it } from 'vitest';
import { openGate, rt, sleep, spawn, useRuntime, withTimeout } from './helpers.js';

const WORKERS = 4;
const ITERATIONS = 1_000_000;

useRuntime();

describe('Lock excludes', () => {
  it(`${WORKERS} workers x ${ITERATIONS} increments under one lock: exact`, async () => {
    const lock = rt.lock();
    const counter = rt.alloc(8, 8);
    const gate = rt.alloc(4, 4);
    const workers = Array.from({ length: WORKERS }, () =>
      spawn(rt, 'increment', { lock: lock.address, counter, iterations: ITERATIONS, gate }),
    );
    await Promise.all(workers.map((w) => w.next('ready')));
    lock.lock();
    openGate(rt, gate);
    await sleep(20); // the workers find the lock held and park
    lock.unlock();
    await withTimeout(Promise.all(workers.map((w) => w.done)), 120_000, 'workers incrementing under one lock');
    expect(rt.float64(counter)[0]).toBe(WORKERS * ITERATIONS);
    expect(lock.isLocked()).toBe(false);
  });

  it(`${WORKERS} workers x ${ITERATIONS} increments over 100 locks, each guarding its counter: exact`, async () => {
    const n = 100;
    const locks = Array.from({ length: n }, () => rt.lock().address);
    const counters = rt.alloc(8 * n, 8);
    const gate = rt.alloc(4, 4);
    const workers = Array.from({ length: WORKERS }, () =>
      spawn(rt, 'incrementMany', { locks, counters, iterations: ITERATIONS, gate }),
    );
    await Promise.all(workers.map((w) => w.next('ready')));
    openGate(rt, gate);
    await withTimeout(Promise.all(workers.map((w) => w.done)), 120_000, 'workers incrementing under 100 locks');
    const c = rt.float64(counters, n);
    expect(Array.from(c)).toEqual(Array.from({ length: n }, () => (WORKERS * ITERATIONS) / n));
    for (const a of locks) expect(rt.lockAt(a).isLocked()).toBe(false);
  });
});
