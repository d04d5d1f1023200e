/**
 * Asynchronous waits: how a thread that may not block (a page's main thread)
 * still waits in the ParkingLot's queues, next to threads that block.
 *
 * An async wait uses a *waiter record* from wasm (`waiter_new`): a queue entry
 * whose 32-bit word reads 1 while it is queued and turns 0, with a
 * `memory.atomic.notify`, when a waker claims it. The JS side sleeps on that
 * word with `Atomics.waitAsync(word, 1)`, then asks wasm what happened
 * (`waiter_poll`: the waker's token, or -1 while still queued); a futex wait,
 * whose token carries nothing, reads the word itself (`settleQuickly`).
 *
 * Records come from a per-thread pool and go back to it after every wait, so
 * a thread that waits in a loop allocates none in steady state; the pool holds
 * as many records as the thread ever had waits in flight at once (a futex
 * wait's record counts as in flight until its waiter's continuation ran:
 * `settleQuickly`).
 *
 * A waker that claims a record counts it whether or not anything watches its
 * word yet: the wait has then ended, and `waiter_poll` (or the cancel that
 * follows a timeout) reports the waker's token. The records of a thread that
 * is gone are reaped through the registry (liveness.ts), not guessed at.
 *
 * Each record says what it is queued on (`queuedOn`, `key`), so that
 * `close()` can take every in-flight wait out of its queue before it frees
 * the records: a freed record left in a queue would corrupt it.
 */
import { closedError } from './errors.js';
import type { Core } from './core.js';
import { Acquired, tookLock } from './lock.js';
import { heldAfter } from './rwlock.js';

/** What a record is queued on (`WaiterRecord.queuedOn`). */
export const Queue = {
  /** Not in any queue: free to reuse or free. */
  None: 0,
  /** `lock_async_begin` on the lock at `key`. */
  Lock: 1,
  /** `condition_wait_async_begin` on the condition at `key`. */
  Condition: 2,
  /** `atomics_wait{32,64}_async_begin` on the word at `key`. */
  Address: 3,
  /** `rwlock_async_begin` for mode `arg` (rwlock.ts, `Mode`) of the reader-writer lock at `key` */
  RwLock: 4,
  /** `semaphore_async_begin` for `arg` permits of the semaphore at `key` */
  Semaphore: 6,
  /** `barrier_async_begin` on the barrier at `key` */
  Barrier: 7,
  /** `once_wait_async_begin` on the once at `key` */
  Once: 8,
} as const;
export type Queue = (typeof Queue)[keyof typeof Queue];

/** One wasm waiter record, created once and reused. */
export class WaiterRecord {
  /**
   * The record's word, as a one-element view made once: a wake-up reads it
   * without `memory.buffer` (a call into the engine's API that costs about
   * 40 ns, and several µs on a thread that just woke). The view stays valid
   * as the memory grows, since the word was inside the memory when it was made.
   */
  readonly word: Int32Array;
  queuedOn: Queue = Queue.None as Queue;
  key = 0;
  /** What else the queue needs to cancel the wait (a semaphore's permit count). */
  arg = 0;
  constructor(readonly address: number, wordAddress: number, heap: Int32Array) {
    this.word = new Int32Array(heap.buffer, wordAddress, 1);
  }
}

/** The records of one runtime instance (one thread). */
export class WaiterPool {
  readonly #idle: WaiterRecord[] = [];
  readonly #all: WaiterRecord[] = [];

  constructor(private readonly core: Core) {}

  /** A record that is in no queue. */
  take(): WaiterRecord {
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle;
    const g = this.core.glue;
    const address = g.waiter_new();
    const record = new WaiterRecord(address, g.waiter_word(address), this.core.heap32());
    this.#all.push(record);
    return record;
  }

  /** Returns a record after its wait is settled (or after the runtime closed). */
  give(record: WaiterRecord): void {
    if (this.core.closed) return; // close() freed it already
    record.queuedOn = Queue.None;
    this.#idle.push(record);
  }

  /** How many records this thread has made (for tests of reuse). */
  get size(): number {
    return this.#all.length;
  }

  /**
   * Takes every in-flight record out of its queue, wakes the JS promise
   * sleeping on its word (its loop then sees the runtime closed), and frees
   * every record. A lock an async attempt was handed meanwhile is released.
   */
  closeAll(): void {
    const g = this.core.glue;
    for (const r of this.#all) {
      switch (r.queuedOn) {
        case Queue.Lock:
          if (g.lock_async_cancel(r.key, r.address) !== Acquired.No) g.unlock(r.key);
          break;
        case Queue.Condition:
          g.condition_wait_async_cancel(r.key, r.address);
          break;
        case Queue.Address:
          g.atomics_wait_async_cancel(r.key, r.address);
          break;
        case Queue.RwLock:
          // Taken after all: let go of it (an upgrade's upgradable read is released with the thread).
          if (g.rwlock_async_cancel(r.key, r.arg, r.address) !== Acquired.No) g.rwlock_release(r.key, heldAfter(r.arg));
          break;
        case Queue.Semaphore:
          if (g.semaphore_async_cancel(r.key, r.arg, r.address) !== Acquired.No) g.semaphore_release(r.key, r.arg);
          break;
        case Queue.Barrier:
          g.barrier_async_cancel(r.key, r.address); // this party leaves: the barrier breaks
          break;
        case Queue.Once:
          g.once_wait_async_cancel(r.key, r.address);
          break;
        case Queue.None:
          continue;
      }
      r.queuedOn = Queue.None;
      Atomics.notify(r.word, 0);
    }
    for (const r of this.#all) g.waiter_free(r.address);
    this.#all.length = 0;
    this.#idle.length = 0;
  }
}

type WaitAsync = typeof Atomics.waitAsync;
const waitAsync: WaitAsync | undefined = typeof Atomics.waitAsync === 'function' ? Atomics.waitAsync : undefined;

/** Resolves after a macrotask: lets the event loop run between two polls. */
function nextTask(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Sleeps until `record`'s wait was claimed by a waker (returns true) or until
 * `deadline` (a `performance.now()` time; Infinity for never) passed first
 * (returns false, and the record is still queued: the caller cancels it).
 * Rejects if the runtime is closed meanwhile.
 */
export async function settle(core: Core, record: WaiterRecord, deadline: number): Promise<boolean> {
  for (;;) {
    if (core.closed) throw closedError();
    if (claimed(core, record)) return true;
    const remaining = deadline - performance.now();
    if (remaining <= 0) return false;
    if (waitAsync !== undefined) {
      const r = waitAsync(record.word, 0, 1, remaining);
      // Not async means the word was already 0: the waker is finishing; look again soon.
      await (r.async ? r.value : nextTask(0));
    } else {
      // Engines without Atomics.waitAsync (Firefox before 145): poll.
      await nextTask(Math.min(remaining, 1));
    }
    if (core.closed) throw closedError();
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

/**
 * Takes the lock at `lockAddress` with `record` (idle), waiting at most until
 * `deadline`. Resolves true once the caller holds the lock, false on timeout.
 */
export async function acquire(core: Core, record: WaiterRecord, lockAddress: number, deadline: number, call: string): Promise<boolean> {
  const g = core.glue;
  record.key = lockAddress;
  record.queuedOn = Queue.Lock;
  const begun = g.lock_async_begin(lockAddress, record.address);
  if (begun !== Acquired.No) {
    record.queuedOn = Queue.None;
    return tookLock(begun, call, lockAddress);
  }
  core.keepAlive.enter();
  try {
    for (;;) {
      if (await settle(core, record, deadline)) {
        // Claimed: either handed the lock, or woken to compete again.
        const resumed = g.lock_async_resume(lockAddress, record.address);
        if (resumed === Acquired.No) continue; // lost the race: queued again
        record.queuedOn = Queue.None;
        return tookLock(resumed, call, lockAddress);
      }
      // Timed out: leave the queue; a hand-off may have won the race.
      const cancelled = g.lock_async_cancel(lockAddress, record.address);
      record.queuedOn = Queue.None;
      return tookLock(cancelled, call, lockAddress);
    }
  } finally {
    core.keepAlive.leave();
  }
}

/**
 * Keeps a Node event loop (main thread or worker) alive while async waits are
 * pending: a pending `Atomics.waitAsync` alone does not, so a script that
 * awaits a lock would otherwise exit before it gets it. Browsers need nothing.
 *
 * One timer that never fires, made on the first wait and referenced only
 * while waits are pending: `ref()`/`unref()` flip a count, where making and
 * clearing a timer per wait cost about 17 µs of every async wake-up.
 */
export class KeepAlive {
  #pending = 0;
  #timer: { ref(): unknown; unref(): unknown } | undefined;
  readonly #node = typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === 'string';

  enter(): void {
    if (this.#pending++ !== 0 || !this.#node) return;
    if (this.#timer === undefined) {
      this.#timer = setInterval(noop, 0x7fffffff) as unknown as { ref(): unknown; unref(): unknown };
    } else {
      this.#timer.ref();
    }
  }

  leave(): void {
    if (this.#pending > 0 && --this.#pending === 0) this.#timer?.unref();
  }

  /** Drops every keep-alive (the runtime closed). */
  clear(): void {
    this.#pending = 0;
    if (this.#timer !== undefined) clearInterval(this.#timer as unknown as ReturnType<typeof setInterval>);
    this.#timer = undefined;
  }
}

function noop(): void {}
