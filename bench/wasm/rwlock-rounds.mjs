// Experiment 6's rounds (seed 003's protocol) and their kin, shared by the
// suite (rwlock.mjs) and the multithreading package's process
// (multithreading-child.mjs): what each worker is told to do, the cells a
// round starts from, and the checks every round must pass.
//   'rw'         even workers read, odd ones write (as bench/src/bin/rwlock.rs)
//   'semaphore'  every worker acquires and releases one of `permits`
//   'barrier'    every worker passes the barrier until the round's time is up
import { CELLS, fail, lockRound } from './pool.mjs';

/** Readers are the even workers, writers the odd ones. */
export const isWriter = (i) => i % 2 === 1;

/** Permits of the semaphore a round of `n` workers contends for: half of them. */
export const permitsFor = (n) => Math.max(1, n >> 1);

/** Resets the JS-side cells of `shared` that a round of `task` uses. */
export function prepareCells(shared) {
  new Float64Array(shared, CELLS.RW_DATA, 1)[0] = 0;
  const i32 = new Int32Array(shared);
  Atomics.store(i32, CELLS.SEM_INSIDE / 4, 0);
  Atomics.store(i32, CELLS.BARRIER_STOP / 4, -1);
}

/** The version a JS-side reader-writer round left in `shared` (2 per write). */
export const jsVersion = (shared) => new Float64Array(shared, CELLS.RW_DATA, 1)[0];

/** Worker i's command for a round of `task`, given the driver's fields (`how`, addresses or buffer). */
export const taskOf = (task, n, durationMs, driver) => (i) => ({
  task, ...driver, write: isWriter(i), permits: permitsFor(n), durationMs,
});

/**
 * Checks a finished round and reduces it to rates. `done` is every worker's
 * answer, `version` the guarded version after a reader-writer round (2 per
 * write), `free` whether the object is back to its idle state. Fails the run
 * on any broken invariant: a reader that saw a writer inside, a lost write,
 * more holders than permits, workers that passed a barrier unequally often
 * or leaders that do not add up to the passes. Returns {total, wallMs,
 * opsPerSec, cpus, perWorker, readers, writers} (readers and writers: the
 * per-worker rates of each side; for a semaphore or barrier, all are readers;
 * a barrier's opsPerSec counts passes, not arrivals).
 */
export function checkRound(task, done, { version, free, cpus }, what) {
  if (!free) fail(`${what}: not back to its idle state after the round`);
  if (task === 'rw') {
    const torn = done.reduce((s, d) => s + d.torn, 0);
    if (torn) fail(`${what}: ${torn} reads saw a writer inside (a writer overlapped a reader)`);
    const writes = done.filter((_, i) => isWriter(i)).reduce((s, d) => s + d.count, 0);
    if (version !== 2 * writes) fail(`${what}: version ${version} after ${writes} writes (expected ${2 * writes}: a lost update)`);
  } else if (task === 'semaphore') {
    const over = done.reduce((s, d) => s + d.over, 0);
    if (over) fail(`${what}: ${over} times more workers than permits held one`);
  } else {
    const passes = done[0].count;
    if (done.some((d) => d.count !== passes)) fail(`${what}: workers passed ${done.map((d) => d.count).join(', ')} times, not all equally`);
    const led = done.reduce((s, d) => s + d.led, 0);
    if (led !== passes) fail(`${what}: ${led} leaders over ${passes} passes`);
  }
  const r = lockRound(done, cpus);
  if (task === 'barrier') r.opsPerSec /= done.length; // passes of all the workers together
  const rates = r.perWorker.map((w) => w.opsPerSec);
  return {
    ...r,
    readers: task === 'rw' ? rates.filter((_, i) => !isWriter(i)) : rates,
    writers: task === 'rw' ? rates.filter((_, i) => isWriter(i)) : [],
  };
}
