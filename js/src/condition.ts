/**
 * `Condition`: a one-byte condition variable in the runtime's shared memory,
 * used with a `Lock`. Waits return `true` only after a notify (no spurious
 * wakeups), and a notify with nobody waiting is one load.
 */
import type { Core } from './core.js';
import { deadlockError } from './diagnostics.js';
import { OwnerDiedError, closedError } from './errors.js';
import { Kind, freedError } from './kinds.js';
import { lockCore, lockFreed, type Lock } from './lock.js';
import { Primitive, freedMark, refuseToBlock } from './primitive.js';
import { Queue } from './records.js';
import { type AsyncOptions, toAsyncTimeout, toSignal, toTimeout } from './validate.js';
import { acquire, settle } from './waiters.js';

/**
 * A condition variable of one byte in shared memory, usable from every
 * thread attached to the runtime; sent to a worker it arrives as
 * `{ kind, address, runtimeId }`, which `rt.revive(value)` turns back into a
 * Condition. Wait while holding the lock it
 * guards, in a loop that re-checks the state you wait for.
 *
 * @example
 * lock.lock();
 * while (queue.length === 0) cond.wait(lock);
 */
export class Condition extends Primitive<'parklot.condition'> {
  readonly #core: Core;

  /**
   * Not for direct use: conditions come from `rt.condition()` and `rt.conditionAt(address)`.
   */
  constructor(core: unknown, address: number) {
    super(core, address, Kind.Condition, 'parklot: conditions come from rt.condition() or rt.conditionAt(address), not from new Condition()');
    this.#core = core as Core; // checked by Primitive
  }

  /**
   * Releases `lock` (which this thread holds), blocks until notified or until
   * `timeout` milliseconds passed (default: forever; read as `Atomics.wait`
   * reads it), then takes `lock` again. Returns whether it was notified.
   * Throws a TypeError on a thread that may not block (use `waitAsync`).
   * With deadlock detection on, taking `lock` back may be refused (a cycle
   * would close): it throws `DeadlockError`, and `lock` is not held.
   *
   * @example
   * lock.lock();
   * while (!ready()) cond.wait(lock);
   */
  wait(lock: Lock, timeout?: number): boolean {
    const core = this.#core;
    const lockAddress = this.#lockAddress(lock, 'Condition.wait()');
    const t = toTimeout(timeout);
    // Blocking even with a timeout of 0: it takes the lock back, which may be held.
    if (!core.canBlock) refuseToBlock(core, 'Condition.wait()', 'await condition.waitAsync(lock)');
    const r = core.glue.condition_wait(this.address, lockAddress, t);
    if (r & Waited.NotHeld) throw notHeldError('Condition.wait()');
    if (r & Waited.WrongLock) throw wrongLockError('Condition.wait()');
    // Waited, and refused taking the lock back: not held (as for waitAsync).
    if (r & Waited.Deadlock) throw deadlockError(core, 'Condition.wait()', lockAddress);
    if (r & Waited.OwnerDied) throw new OwnerDiedError('Condition.wait()', lockAddress);
    return (r & Waited.Notified) !== 0;
  }

  /**
   * Like `wait`, without blocking the thread: releases `lock`, waits for a
   * notify in the same queue as blocking waiters, takes `lock` back
   * asynchronously, and resolves whether it was notified (`false`: `timeout`
   * milliseconds passed first). Works on every thread. With `{ signal }`, an
   * abort ends the wait for a notify and rejects with `signal.reason`, once
   * `lock` is taken back (held again, as after every wait; an already
   * aborted signal rejects at once, never releasing it). A notify that won
   * the race is kept: it resolves `true`.
   *
   * @example
   * await lock.lockAsync();
   * while (!ready()) await cond.waitAsync(lock);
   * await cond.waitAsync(lock, undefined, { signal: controller.signal });
   */
  async waitAsync(lock: Lock, timeout?: number, options?: AsyncOptions): Promise<boolean> {
    const call = 'Condition.waitAsync()';
    const core = this.#core;
    const lockAddress = this.#lockAddress(lock, call);
    const t = toAsyncTimeout(call, timeout);
    const signal = toSignal(call, options);
    if (core.closed) throw closedError();
    signal?.throwIfAborted();
    const deadline = t === Infinity ? Infinity : performance.now() + t;
    const g = core.glue;
    const record = core.pool.take();
    try {
      record.key = this.address;
      record.queuedOn = Queue.Condition;
      // Queues, then unlocks (if this thread holds the lock: else nothing is done).
      const begun = g.condition_wait_async_begin(this.address, lockAddress, record.address);
      if (begun !== 0) {
        record.queuedOn = Queue.None;
        throw begun & Waited.WrongLock ? wrongLockError(call) : notHeldError(call);
      }
      let notified: boolean;
      core.keepAlive.enter();
      try {
        // Owing: a notify this record was chosen for, seen here or found by
        // the cancel, stays owed (its reaper passes it on) until the lock is
        // taken back below (lock_async_begin).
        notified = await settle(core, record, deadline, signal, true);
        if (!notified) notified = g.condition_wait_async_cancel(this.address, record.address);
      } finally {
        core.keepAlive.leave();
      }
      const aborted = !notified && signal?.aborted === true;
      record.queuedOn = Queue.None;
      // The lock comes back whatever ended the wait; the abort does not cut this short.
      await acquire(core, record, lockAddress, Infinity, call);
      if (aborted) signal!.throwIfAborted();
      return notified;
    } finally {
      core.pool.give(record);
    }
  }

  /**
   * Wakes the thread or async waiter that has waited longest. Returns
   * whether there was one.
   *
   * @example
   * lock.withLock(() => queue.push(item));
   * cond.notifyOne();
   */
  notifyOne(): boolean {
    const core = this.#live('Condition.notifyOne()');
    return core.glue.condition_notify_one(this.address);
  }

  /**
   * Wakes every waiter. Returns how many there were.
   *
   * @example
   * lock.withLock(() => { done = true; });
   * cond.notifyAll();
   */
  notifyAll(): number {
    const core = this.#live('Condition.notifyAll()');
    return core.glue.condition_notify_all(this.address);
  }

  /** The core, if this condition may be used: not closed, not freed. */
  #live(call: string): Core {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this[freedMark]) throw freedError(call, 'Condition');
    return core;
  }

  #lockAddress(lock: Lock, call: string): number {
    const core = lockCore(lock);
    if (core === undefined) throw new TypeError(`parklot: ${call}: the first argument must be a Lock (rt.lock() or rt.lockAt(address))`);
    if (core !== this.#core) {
      throw new TypeError(`parklot: ${call}: the lock belongs to another runtime instance; use rt.lockAt(lock.address) on this condition's runtime`);
    }
    if (this[freedMark]) throw freedError(call, 'Condition');
    if (lockFreed(lock)) throw freedError(call, 'Lock');
    return lock.address;
  }
}

/** What `condition_wait` returns: bit flags (wasm/src/lib.rs, `waited`). */
const Waited = { Notified: 1, OwnerDied: 2, NotHeld: 4, WrongLock: 8, Deadlock: 16 } as const;

/** A wait with another lock than the one this condition's queued waiters use. */
function wrongLockError(call: string): TypeError {
  return new TypeError(
    `parklot: ${call}: this condition is being waited on with another lock; every waiter of a condition must use the same lock ` +
      '(nothing was done: the lock is still held)',
  );
}

/** A wait on a condition with a lock this thread does not hold (checked in wasm against the locks this thread took). */
function notHeldError(call: string): TypeError {
  return new TypeError(
    `parklot: ${call} needs its lock held by this thread (it took it with lock(), tryLock(), lockFor() or lockAsync() ` +
      'and has not unlocked it): take it first',
  );
}
