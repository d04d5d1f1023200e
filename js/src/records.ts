/**
 * Waiter records: the queue entries an async wait uses (`waiter_new` in
 * wasm), and each thread's pool of them. A record's 32-bit word reads 1
 * while it is queued and turns 0, with a `memory.atomic.notify`, when a
 * waker claims it (waiters.ts sleeps on it).
 *
 * Records come from a per-thread pool and go back to it after every wait, so
 * a thread that waits in a loop allocates none in steady state; the pool holds
 * as many records as the thread ever had waits in flight at once (a futex
 * wait's record counts as in flight until its waiter's continuation ran:
 * `settleQuickly`).
 *
 * Each record says what it is queued on (`queuedOn`, `key`), so that
 * `close()` can take every in-flight wait out of its queue before it frees
 * the records: a freed record left in a queue would corrupt it.
 */
import { Acquired, heldAfter } from './acquired.js';
import type { Glue } from './loader.js';

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
  /** `rwlock_async_begin` for mode `arg` (acquired.ts, `Mode`) of the reader-writer lock at `key` */
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
  /** Set by `closeAll()`: the records are freed. */
  #closed = false;

  /** `glue` is the instance's (guarded) glue; `heap` its memory as an Int32Array now. */
  constructor(
    private readonly glue: Glue,
    private readonly heap: () => Int32Array,
  ) {}

  /** A record that is in no queue. */
  take(): WaiterRecord {
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle;
    const g = this.glue;
    const address = g.waiter_new();
    const record = new WaiterRecord(address, g.waiter_word(address), this.heap());
    this.#all.push(record);
    return record;
  }

  /** Returns a record after its wait is settled (or after the runtime closed). */
  give(record: WaiterRecord): void {
    if (this.#closed) return; // closeAll() freed it already
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
    this.#closed = true;
    const g = this.glue;
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
