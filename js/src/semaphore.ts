/**
 * `Semaphore` in the runtime's shared memory, served by the wasm core
 * (runtime/src/semaphore.rs): waits park in the same ParkingLot as locks,
 * and threads that may not block wait asynchronously in the same queues.
 */
import { Acquired, holdingAsync } from './acquired.js';
import type { Core } from './core.js';
import { closedError } from './errors.js';
import { Kind, freedError } from './kinds.js';
import { Primitive, freedMark, refuseToBlock } from './primitive.js';
import { Queue } from './records.js';
import { type AsyncOptions, toAsyncTimeout, toSignal, toTimeout } from './validate.js';
import { acquireQueued } from './waiters.js';
import { SWAP_IN_JS as ENGINE_SWAPS_IN_JS } from './engine.js';

/**
 * `engine.ts`'s choice, copied into a constant of this module: read
 * through the import binding instead, an uncontended Lock pair cost
 * 1 ns more in Node 20 (16.1 against 14.9-15.0 ns, three runs each).
 */
const SWAP_IN_JS = ENGINE_SWAPS_IN_JS;

/** Whether a semaphore export's code says the permits are this thread's (its exports answer only yes or no). */
const granted = (code: number): boolean => code === Acquired.Yes;

/** The most permits a semaphore holds (2^30 - 1). */
export const MAX_PERMITS = 0x3fff_ffff;

/**
 * The semaphore's word (runtime/src/semaphore.rs): bit 0 `PARKED` (threads
 * may be parked), bit 1 `FAIR` (a turn is owed), the free permits above.
 */
const FAIR = 2;
const PARKED_OR_FAIR = 3;
const ONE_PERMIT = 4;

/** Checks a permit count (an integer from 1 to MAX_PERMITS; 0 for an initial count). */
export function checkPermits(call: string, n: unknown, min = 1): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > MAX_PERMITS) {
    throw new RangeError(`parklot: ${call}: the number of permits must be an integer from ${min} to ${MAX_PERMITS}, got ${String(n)}`);
  }
  return n;
}

/**
 * A counting semaphore of one 32-bit word: `acquire(n)` takes n permits,
 * waiting until they are free; `release(n)` returns them. Barging, with the
 * runtime's fairness timer letting waiting threads go first about once a
 * millisecond. On a thread that may not block, `acquire` and `acquireFor`
 * with a timeout above 0 throw, permits free or not (use `acquireAsync`).
 *
 * @example
 * const slots = rt.semaphore(4);
 * await slots.acquireAsync();
 * try { await fetchSomething(); } finally { slots.release(); }
 */
export class Semaphore extends Primitive<'parklot.semaphore'> {
  readonly #core: Core;
  /** A view of the memory that reaches the semaphore's word, and the word's index in it. */
  readonly #words: Uint32Array;
  readonly #index: number;

  /** Not for direct use: semaphores come from `rt.semaphore()` and `rt.semaphoreAt()`. */
  constructor(core: unknown, address: number) {
    super(core, address, Kind.Semaphore, 'parklot: semaphores come from rt.semaphore(permits) or rt.semaphoreAt(address)');
    this.#core = core as Core; // checked by Primitive
    this.#words = this.#core.wordsReaching(address);
    this.#index = address >>> 2;
  }

  /**
   * Takes `n` permits in JS if they are free and no turn is owed (where
   * `SWAP_IN_JS`): one compare-and-swap of the word, as wasm's uncontended
   * `Semaphore::try_acquire` does (JS's orderings are sequentially
   * consistent, stronger than its Acquire). Whether it took them; if not,
   * the caller goes to wasm, which waits or hands out turns.
   */
  #takeInJs(n: number): boolean {
    if (!SWAP_IN_JS) return false;
    const s = Atomics.load(this.#words, this.#index);
    if ((s & FAIR) !== 0 || s >>> 2 < n) return false;
    return Atomics.compareExchange(this.#words, this.#index, s, s - n * ONE_PERMIT) === s;
  }

  /**
   * Returns `n` permits in JS if nobody is parked and no turn is owed (where
   * `SWAP_IN_JS`): one compare-and-swap, as wasm's release adds them when it
   * has nobody to wake. Whether it did; if not, the caller goes to wasm,
   * which wakes waiters (or refuses more than `MAX_PERMITS`).
   */
  #giveInJs(n: number): boolean {
    if (!SWAP_IN_JS) return false;
    const s = Atomics.load(this.#words, this.#index);
    if ((s & PARKED_OR_FAIR) !== 0 || (s >>> 2) + n > MAX_PERMITS) return false;
    return Atomics.compareExchange(this.#words, this.#index, s, s + n * ONE_PERMIT) === s;
  }

  /** Takes `n` permits (default 1), blocking this thread until they are free. Throws where blocking is not allowed (use `acquireAsync`). */
  acquire(n = 1): void {
    this.#take(checkPermits('Semaphore.acquire()', n), Infinity, 'Semaphore.acquire()', 'await sem.acquireAsync(n)');
  }

  /** Takes `n` permits if they are free now; never waits. */
  tryAcquire(n = 1): boolean {
    return this.#try(checkPermits('Semaphore.tryAcquire()', n), 'Semaphore.tryAcquire()');
  }

  /** Takes `n` permits, blocking at most `timeout` milliseconds (0 or less: a try). Returns whether it did. */
  acquireFor(n: number, timeout: number): boolean {
    return this.#take(checkPermits('Semaphore.acquireFor()', n), toTimeout(timeout), 'Semaphore.acquireFor()', 'await sem.acquireAsync(n, timeout)');
  }

  /**
   * Takes `n` permits without blocking the thread: resolves `true` once they
   * are this thread's, `false` if `timeout` milliseconds (default: forever)
   * passed first. Works on every thread. With `{ signal }`, an abort rejects
   * it with `signal.reason`, leaving the queue (permits taken in a race with
   * the abort are kept: see `AsyncOptions`).
   *
   * @example
   * if (await slots.acquireAsync(2, undefined, { signal: controller.signal })) slots.release(2);
   */
  async acquireAsync(n = 1, timeout?: number, options?: AsyncOptions): Promise<boolean> {
    const call = 'Semaphore.acquireAsync()';
    checkPermits(call, n);
    const t = toAsyncTimeout(call, timeout);
    const signal = toSignal(call, options);
    const core = this.#live(call);
    return acquireQueued(core, 'semaphore', this.address, n, Queue.Semaphore, t, signal, granted);
  }

  /**
   * Runs `fn` holding `n` permits (taken with `acquire(n)`, so only where
   * blocking is allowed) and returns them however `fn` ends. Returns what
   * `fn` returns.
   *
   * @example
   * const page = slots.withPermits(1, () => fetchPage(url));
   */
  withPermits<T>(n: number, fn: () => T): T {
    this.acquire(n);
    try {
      return fn();
    } finally {
      this.release(n);
    }
  }

  /**
   * Runs `fn` (which may be async) holding `n` permits taken with
   * `acquireAsync(n)`, and returns them once `fn`'s result settles. Works on
   * every thread. `{ signal }` cancels the wait (then `fn` does not run).
   *
   * @example
   * await slots.withPermitsAsync(2, async () => { await upload(a); await upload(b); });
   */
  withPermitsAsync<T>(n: number, fn: () => T | PromiseLike<T>, options?: AsyncOptions): Promise<Awaited<T>> {
    return holdingAsync(() => this.acquireAsync(n, undefined, options), () => this.release(n), fn);
  }

  /** Returns `n` permits (default 1). Throws a RangeError, changing nothing, past MAX_PERMITS free. */
  release(n = 1): void {
    checkPermits('Semaphore.release()', n);
    const core = this.#live('Semaphore.release()');
    if (this.#giveInJs(n)) return;
    let released: number;
    try {
      released = core.raw.semaphore_release(this.address, n);
    } catch (e) {
      throw core.trapped('semaphore_release', e);
    }
    if (released === 0) {
      throw new RangeError(`parklot: Semaphore.release(): more than ${MAX_PERMITS} permits would be free; release only what you acquired`);
    }
  }

  /** How many permits are free (a snapshot). */
  available(): number {
    const core = this.#live('Semaphore.available()');
    return core.glue.semaphore_available(this.address);
  }

  /** The core, if this semaphore may be used: not closed, not freed. */
  #live(call: string): Core {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this[freedMark]) throw freedError(call, 'Semaphore');
    return core;
  }

  #try(n: number, call: string): boolean {
    const core = this.#live(call);
    return this.#takeInJs(n) || this.#acquireFor(core, n, 0);
  }

  /** Takes `n` permits, waiting at most `timeout` (a timeout of 0 is a try, allowed everywhere). */
  #take(n: number, timeout: number, call: string, alternative: string): boolean {
    const core = this.#live(call);
    // Blocking calls throw on a thread that may not block, whether or not they would wait.
    if (!core.canBlock && timeout !== 0) refuseToBlock(core, call, alternative);
    return this.#takeInJs(n) || this.#acquireFor(core, n, timeout);
  }

  /**
   * The acquisition through wasm. Its export is called directly, as Lock's
   * hot paths call theirs (core.ts, `Core.raw`): an uncontended acquire() +
   * release() measured 45-52 ns in V8 through the guarded glue, 22-24 ns so.
   */
  #acquireFor(core: Core, n: number, timeout: number): boolean {
    try {
      return core.raw.semaphore_acquire_for(this.address, n, timeout) === Acquired.Yes;
    } catch (e) {
      throw core.trapped('semaphore_acquire_for', e);
    }
  }
}
