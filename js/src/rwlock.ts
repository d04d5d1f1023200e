/**
 * `RwLock`: a reader-writer lock of one 32-bit word in the runtime's shared
 * memory, served by the wasm core (runtime/src/rwlock.rs: readers share,
 * writers exclude; barging with a short spin, then parking; about once a
 * millisecond the waiting side is handed the lock, so neither side starves).
 *
 * The object only carries the lock's address: `read()`/`unlockRead()` call
 * the wasm export with it and allocate nothing.
 */
import { Core } from './core.js';
import { closedError, notLockedError } from './errors.js';
import { Acquired, refuseToBlock } from './lock.js';
import { toTimeout } from './validate.js';
import { Queue, settle } from './waiters.js';

/** What the wasm release exports return (wasm/src/lib.rs, `released`). */
const Released = { Ok: 0 } as const;

/** Which side a lock lets in first when both wait (neither starves either way). */
export type RwLockPolicy = 'prefer-writers' | 'prefer-readers';

/**
 * A reader-writer lock in shared memory, usable from every thread attached to
 * the runtime (`rt.rwLockAt(lock.address)` on another thread). Many readers
 * or one writer hold it at a time. Not reentrant: a thread that reads must
 * not read again while a writer may be waiting (under 'prefer-writers' that
 * second read waits for the writer, who waits for the first read).
 *
 * @example
 * const table = rt.rwLock();
 * const n = table.withRead(() => view[0]);
 * table.withWrite(() => { view[0] = n + 1; });
 */
export class RwLock {
  /** The lock's byte address in the runtime's memory. */
  readonly address: number;
  /** What a structured clone keeps, to tell the kind of object. */
  readonly kind = 'parklot.rwlock';
  /** The id of the runtime whose memory holds the lock. */
  readonly runtimeId: number;
  readonly #core: Core;

  /** Not for direct use: locks come from `rt.rwLock()` and `rt.rwLockAt(address)`. */
  constructor(core: unknown, address: number) {
    if (!(core instanceof Core)) throw new TypeError('parklot: reader-writer locks come from rt.rwLock() or rt.rwLockAt(address), not from new RwLock()');
    this.#core = core;
    this.address = address;
    this.runtimeId = core.header.id;
  }

  /**
   * Takes a read, blocking this thread while a writer holds the lock (or,
   * under 'prefer-writers', waits for it). Throws on a thread that may not
   * block (use `readAsync` there).
   *
   * @example
   * lock.read();
   * try { use(view[0]); } finally { lock.unlockRead(); }
   */
  read(): void {
    this.#take(false, Infinity, 'RwLock.read()', 'await lock.readAsync()');
  }

  /** Takes a read if no writer holds or waits for the lock; never waits. */
  tryRead(): boolean {
    return this.#try(false);
  }

  /**
   * Takes a read, blocking at most `timeout` milliseconds (NaN or +Infinity:
   * forever). Returns whether it did. Throws on a thread that may not block.
   */
  readFor(timeout: number): boolean {
    return this.#take(false, toTimeout(timeout), 'RwLock.readFor()', 'await lock.readAsync(timeout)');
  }

  /** Releases a read. Throws a TypeError, changing nothing, if nobody reads. */
  unlockRead(): void {
    this.#release(false, 'RwLock.unlockRead()');
  }

  /**
   * Takes the write lock, blocking this thread while anyone holds it. Throws
   * on a thread that may not block (use `writeAsync` there).
   *
   * @example
   * lock.write();
   * try { view[0] += 1; } finally { lock.unlockWrite(); }
   */
  write(): void {
    this.#take(true, Infinity, 'RwLock.write()', 'await lock.writeAsync()');
  }

  /** Takes the write lock if nobody holds it; never waits. */
  tryWrite(): boolean {
    return this.#try(true);
  }

  /** Takes the write lock, blocking at most `timeout` milliseconds. Returns whether it did. */
  writeFor(timeout: number): boolean {
    return this.#take(true, toTimeout(timeout), 'RwLock.writeFor()', 'await lock.writeAsync(timeout)');
  }

  /** Releases the write lock. Throws a TypeError, changing nothing, if no writer holds it. */
  unlockWrite(): void {
    this.#release(true, 'RwLock.unlockWrite()');
  }

  /**
   * Takes a read without blocking the thread: resolves `true` once it holds
   * one, `false` if `timeout` milliseconds (default: forever) passed first.
   * Works on every thread, in the same queue as threads that block.
   *
   * @example
   * if (await lock.readAsync(100)) { try { use(view[0]); } finally { lock.unlockRead(); } }
   */
  readAsync(timeout?: number): Promise<boolean> {
    return this.#takeAsync(false, timeout, 'RwLock.readAsync()');
  }

  /** Takes the write lock without blocking the thread; as `readAsync`. */
  writeAsync(timeout?: number): Promise<boolean> {
    return this.#takeAsync(true, timeout, 'RwLock.writeAsync()');
  }

  /** Runs `fn` holding a read (taken with `read()`) and releases it however `fn` ends. */
  withRead<T>(fn: () => T): T {
    this.read();
    try {
      return fn();
    } finally {
      this.unlockRead();
    }
  }

  /** Runs `fn` holding the write lock (taken with `write()`) and releases it however `fn` ends. */
  withWrite<T>(fn: () => T): T {
    this.write();
    try {
      return fn();
    } finally {
      this.unlockWrite();
    }
  }

  /** Runs `fn` (maybe async) holding a read taken with `readAsync()`; works on every thread. */
  async withReadAsync<T>(fn: () => T | PromiseLike<T>): Promise<Awaited<T>> {
    await this.readAsync();
    try {
      return await fn();
    } finally {
      this.unlockRead();
    }
  }

  /** Runs `fn` (maybe async) holding the write lock taken with `writeAsync()`. */
  async withWriteAsync<T>(fn: () => T | PromiseLike<T>): Promise<Awaited<T>> {
    await this.writeAsync();
    try {
      return await fn();
    } finally {
      this.unlockWrite();
    }
  }

  /**
   * A snapshot of who holds the lock: 'free', 'read' (by `readers` threads)
   * or 'write'. For assertions and diagnostics.
   */
  state(): { held: 'free' | 'read' | 'write'; readers: number } {
    const core = this.#core;
    if (core.closed) throw closedError();
    const s = core.glue.rwlock_state(this.address);
    if (s === 2) return { held: 'write', readers: 0 };
    return s === 0 ? { held: 'free', readers: 0 } : { held: 'read', readers: s >>> 1 };
  }

  #try(write: boolean): boolean {
    const core = this.#core;
    if (core.closed) throw closedError();
    const g = core.glue;
    return (write ? g.rwlock_write_for(this.address, 0) : g.rwlock_read_for(this.address, 0)) === Acquired.Yes;
  }

  #take(write: boolean, timeout: number, call: string, alternative: string): boolean {
    const core = this.#core;
    if (!core.canBlock) {
      // A thread that may not block may still take a free lock.
      if (this.#try(write)) return true;
      refuseToBlock(core, call, alternative);
    }
    const g = core.glue;
    return (write ? g.rwlock_write_for(this.address, timeout) : g.rwlock_read_for(this.address, timeout)) === Acquired.Yes;
  }

  #release(write: boolean, call: string): void {
    const core = this.#core;
    if (core.closed) throw closedError();
    const g = core.glue;
    const code = write ? g.rwlock_unlock_write(this.address) : g.rwlock_unlock_read(this.address);
    if (code !== Released.Ok) throw notLockedError(call);
  }

  async #takeAsync(write: boolean, timeout: number | undefined, call: string): Promise<boolean> {
    const t = toTimeout(timeout);
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this.#try(write)) return true;
    if (t === 0) return false;
    const deadline = t === Infinity ? Infinity : performance.now() + t;
    const g = core.glue;
    const record = core.pool.take();
    record.key = this.address;
    record.queuedOn = write ? Queue.RwWrite : Queue.RwRead;
    core.keepAlive.enter();
    try {
      if (g.rwlock_async_begin(this.address, write, record.address) === Acquired.Yes) return true;
      for (;;) {
        if (await settle(core, record, deadline)) {
          // Claimed: handed the lock, or woken to compete again.
          if (g.rwlock_async_resume(this.address, write, record.address) === Acquired.Yes) return true;
          continue; // queued again
        }
        // Timed out: leave the queue; a hand-off may have won the race.
        return g.rwlock_async_cancel(this.address, write, record.address) === Acquired.Yes;
      }
    } catch (e) {
      if (core.closed) throw closedError();
      throw e;
    } finally {
      core.keepAlive.leave();
      record.queuedOn = Queue.None;
      core.pool.give(record);
      void call;
    }
  }
}
