/**
 * Asynchronous waits: how a thread that may not block (a page's main thread)
 * still waits in the ParkingLot's queues, next to threads that block.
 *
 * An async wait queues a waiter record (records.ts) and sleeps on its word
 * with `Atomics.waitAsync(word, 1)`, then asks wasm what happened
 * (`waiter_poll`: the waker's token, or -1 while still queued); a futex wait,
 * whose token carries nothing, reads the word itself (`settleQuickly`).
 *
 * A waker that claims a record counts it whether or not anything watches its
 * word yet: the wait has then ended, and `waiter_poll` (or the cancel that
 * follows a timeout or an abort) reports the waker's token. The records of a
 * thread that is gone are reaped through the registry (liveness.ts), not
 * guessed at.
 */
import { Acquired, tookLock } from './acquired.js';
import type { Core } from './core.js';
import { closedError } from './errors.js';
import { Queue, type WaiterRecord } from './records.js';
import type { AbortSignalLike } from './validate.js';

type WaitAsync = typeof Atomics.waitAsync;
const waitAsync: WaitAsync | undefined = typeof Atomics.waitAsync === 'function' ? Atomics.waitAsync : undefined;

/**
 * How often a pending async wait looks at the runtime's poison word: the
 * core's sleepers look every 100 ms too (runtime/src/critical.rs,
 * `POISON_POLL_NS`). A runtime poisoned while a wait is queued (a thread
 * died inside one of its sections) may never wake it: the thread that held
 * what it waits for is not reaped, so the wait ends with the poisoned error
 * within this long instead of never.
 */
const POISON_POLL_MS = 100;

/** Resolves after a macrotask: lets the event loop run between two polls. */
function nextTask(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Sleeps until `record`'s wait was claimed by a waker (returns true) or until
 * `deadline` (a `performance.now()` time; Infinity for never) passed or
 * `signal` aborted first (returns false, and the record is still queued: the
 * caller cancels it, and a claim that won the race shows in what the cancel
 * returns). Rejects if the runtime is closed meanwhile, or with the poisoned
 * error once it is poisoned (the record is then left as it is, as all of a
 * poisoned runtime's memory is).
 *
 * `owing`: the claim is read from the record's word, and its token stays
 * owed until the caller's resume export has acted on it and recorded what
 * it took (a lock handed over): a worker terminated between this and that
 * call has its wakeup passed on by its reaper. Without it, the claim is
 * read through `waiter_poll`, which ends the debt (a notify, seen here, is
 * acted on).
 */
export async function settle(core: Core, record: WaiterRecord, deadline: number, signal?: AbortSignalLike, owing = false): Promise<boolean> {
  // An abort wakes the sleep below (the record's word still reads 1: nobody claimed it).
  const wake = signal === undefined ? undefined : () => Atomics.notify(record.word, 0);
  if (wake !== undefined) signal!.addEventListener('abort', wake);
  try {
    for (;;) {
      if (core.closed) throw closedError();
      const poisoned = core.poisoned();
      if (poisoned !== undefined) throw poisoned;
      if (owing ? Atomics.load(record.word, 0) === 0 : claimed(core, record)) return true;
      if (signal?.aborted === true) return false;
      const remaining = deadline - performance.now();
      if (remaining <= 0) return false;
      if (waitAsync !== undefined) {
        const r = waitAsync(record.word, 0, 1, Math.min(remaining, POISON_POLL_MS));
        // Not async means the word was already 0: the waker is finishing; look again soon.
        await (r.async ? r.value : nextTask(0));
      } else {
        // Engines without Atomics.waitAsync (Firefox before 145): poll.
        await nextTask(Math.min(remaining, 1));
      }
      if (core.closed) throw closedError();
    }
  } finally {
    if (wake !== undefined) signal!.removeEventListener('abort', wake);
  }
}

/** Whether a waker has claimed `record` (its token is there to read). */
function claimed(core: Core, record: WaiterRecord): boolean {
  try {
    return core.raw.waiter_poll(record.address) !== -1; // the export itself (see Core.raw)
  } catch (e) {
    throw core.trapped('waiter_poll', e);
  }
}

/**
 * `settle`'s common case in one promise reaction: one `Atomics.waitAsync` on
 * the record's word, and if the wake that ends it claimed the record, the
 * promise resolves to `woken` at once. Anything else (a timeout, an engine
 * without waitAsync, a word already 0, the runtime closed) goes to
 * `otherwise`, which settles the slow way. Each await through an async
 * function adds microtask hops to a wake-up; this path adds one reaction to
 * the engine's own promise.
 *
 * Only for waits whose token carries nothing (a futex wait's): the claim is
 * read from JS, as the record's word reading 0 (the waker's swap, after it
 * wrote the token), with no call into wasm on the woken thread: code that runs
 * cold, as a thread's first steps after it slept do, costs about a microsecond
 * for each function and getter it goes through, and the engine's whole
 * `Atomics.notify` costs a few. The unread token is dropped when the record
 * queues again (`park_async_owing`), so it never becomes a debt.
 *
 * For the same reason the bookkeeping of a claimed wait (`after`: the
 * record back to its pool, the Node keep-alive let go, a timer's `unref()`)
 * runs in a reaction added to the returned promise once it is settled, that
 * is after the reactions the caller added while it waited (its `await`).
 * Measured on a Node main thread woken by a worker every 10 ms, this took the
 * woken side of a wake-up from 1.5–1.7x the engine's `Atomics.waitAsync` to
 * 1.2–1.4x (medians of three runs each). A caller that waits again at once
 * takes another record meanwhile, so a thread that waits in a loop keeps two.
 *
 * The one reaction, and its read of the word, are what exactness costs: a
 * notify of the record's word is not proof of a claim (a claimer's notify
 * can still be in flight when the record, its wait settled another way, is
 * reused), so the word is read. Measured on a Node main thread woken every
 * 10 ms, the engine's own `Atomics.waitAsync` behind one reaction that reads
 * the notified word is 1.13–1.14x the bare engine's wake-up (a reaction
 * alone: 1.02–1.14x); this path measured 1.01–1.15x there.
 */
export function settleQuickly<T>(core: Core, record: WaiterRecord, deadline: number, woken: T, after: () => void, otherwise: () => Promise<T>): Promise<T> {
  if (waitAsync === undefined) return otherwise();
  const r = waitAsync(record.word, 0, 1, deadline - performance.now());
  if (!r.async) return otherwise();
  const settled: Promise<T> = r.value.then(() => {
    if (core.closed || Atomics.load(record.word, 0) !== 0) return otherwise();
    // In no queue from now on: close() must not cancel it.
    record.queuedOn = Queue.None;
    void settled.then(after);
    return woken;
  });
  return settled;
}

/** The primitives whose async acquisitions go through `<kind>_acquire_for`, `_async_begin`, `_async_resume` and `_async_cancel` (wasm/src/toolkit.rs). */
export type QueuedKind = 'rwlock' | 'semaphore';

/**
 * Takes `arg` (a reader-writer lock's mode, a semaphore's permits) of the
 * `kind` primitive at `address` without blocking the thread: a try, then,
 * unless `timeout` (checked, in ms) is 0, a pool record queued as `queue` in
 * the same queue as blocking threads. Resolves what `took` makes of the
 * export's `Acquired` code (false on timeout); rejects with `signal`'s reason
 * if it aborts first (a grant that won the race is kept).
 */
export async function acquireQueued(
  core: Core,
  kind: QueuedKind,
  address: number,
  arg: number,
  queue: Queue,
  timeout: number,
  signal: AbortSignalLike | undefined,
  took: (code: number) => boolean,
): Promise<boolean> {
  const g = core.glue;
  signal?.throwIfAborted();
  if (took(g[`${kind}_acquire_for`](address, arg, 0))) return true;
  if (timeout === 0) return false;
  const deadline = timeout === Infinity ? Infinity : performance.now() + timeout;
  const record = core.pool.take();
  record.key = address;
  record.arg = arg;
  record.queuedOn = queue;
  core.keepAlive.enter();
  try {
    const begun = g[`${kind}_async_begin`](address, arg, record.address);
    if (begun !== Acquired.No) {
      record.queuedOn = Queue.None;
      return took(begun);
    }
    for (;;) {
      if (await settle(core, record, deadline, signal, true)) {
        // Claimed: handed what it asked for, or woken to compete again.
        const resumed = g[`${kind}_async_resume`](address, arg, record.address);
        if (resumed === Acquired.No) continue; // queued again
        record.queuedOn = Queue.None;
        return took(resumed);
      }
      // Timed out or aborted: leave the queue; a grant may have won the race (then it is ours).
      const cancelled = g[`${kind}_async_cancel`](address, arg, record.address);
      record.queuedOn = Queue.None;
      if (cancelled === Acquired.No) signal?.throwIfAborted();
      return took(cancelled);
    }
  } finally {
    core.keepAlive.leave();
    record.queuedOn = Queue.None;
    core.pool.give(record);
  }
}

/**
 * Takes the lock at `lockAddress` with `record` (idle), waiting at most until
 * `deadline`. Resolves true once the caller holds the lock, false on timeout;
 * rejects with `signal`'s reason if it aborts first.
 */
export async function acquire(core: Core, record: WaiterRecord, lockAddress: number, deadline: number, call: string, signal?: AbortSignalLike): Promise<boolean> {
  const g = core.glue;
  record.key = lockAddress;
  record.queuedOn = Queue.Lock;
  const begun = g.lock_async_begin(lockAddress, record.address);
  if (begun !== Acquired.No) {
    record.queuedOn = Queue.None;
    return tookLock(begun, call, lockAddress, core);
  }
  core.keepAlive.enter();
  try {
    for (;;) {
      if (await settle(core, record, deadline, signal, true)) {
        // Claimed: either handed the lock, or woken to compete again.
        const resumed = g.lock_async_resume(lockAddress, record.address);
        if (resumed === Acquired.No) continue; // lost the race: queued again
        record.queuedOn = Queue.None;
        return tookLock(resumed, call, lockAddress, core);
      }
      // Timed out or aborted: leave the queue; a hand-off may have won the race (then the lock is ours).
      const cancelled = g.lock_async_cancel(lockAddress, record.address);
      record.queuedOn = Queue.None;
      if (cancelled === Acquired.No) signal?.throwIfAborted();
      return tookLock(cancelled, call, lockAddress, core);
    }
  } finally {
    core.keepAlive.leave();
  }
}
