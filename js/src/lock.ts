/**
 * `Lock`: a one-byte lock in the runtime's shared memory, served by the
 * wasm core (WebKit's Lock algorithm: barging, spins a little, then parks in
 * the ParkingLot, with a direct hand-off about once a millisecond).
 *
 * The object carries the lock's address and a view of the memory:
 * `lock()`/`unlock()` swap the byte in JS where the engine compiles that
 * well (engine.ts), else call the wasm export with the address; they
 * allocate nothing.
 */
import { Acquired, holdingAsync, tookLock } from './acquired.js';
import type { Core } from './core.js';
import { OwnerDiedError, closedError, heldByAnotherError, notLockedError } from './errors.js';
import { Kind, freedError } from './kinds.js';
import { Primitive, refuseToBlock } from './primitive.js';
import { type AsyncOptions, toAsyncTimeout, toSignal, toTimeout } from './validate.js';
import { acquire } from './waiters.js';
import { LOCK_FLAT_IN_JS, SWAP_IN_JS as ENGINE_SWAPS_IN_JS } from './engine.js';

/**
 * `engine.ts`'s choice, copied into a constant of this module: read
 * through the import binding instead, an uncontended Lock pair cost
 * 1 ns more in Node 20 (16.1 against 14.9-15.0 ns, three runs each).
 */
const SWAP_IN_JS = ENGINE_SWAPS_IN_JS;

/** The `Core` of a real `Lock`, or undefined for anything else (a brand check). @internal */
export let lockCore: (value: unknown) => Core | undefined;
/** Whether a real `Lock` was freed. @internal */
export let lockFreed: (lock: Lock) => boolean;

/**
 * The lock's byte (runtime/src/lock.rs): `LOCKED` alone is a lock held with
 * nobody parked and no mark; 0 a free one nobody waits for.
 */
const LOCKED = 1;

/** `Core.held[0]` when this thread holds no Lock (wasm/src/threads.rs, `HeldLocks::NONE`). */
const HELD_NONE = -1;

/** What the wasm release exports return (wasm/src/lib.rs, `released`). */
const Released = { Ok: 0, NotLocked: 1, HeldByAnother: 2, Freed: 3 } as const;

/**
 * A lock of one byte in shared memory, usable from every thread attached to
 * the runtime. Sent to a worker (`postMessage`, `workerData`, `spawnWorker`)
 * it arrives as its plain form `{ kind, address, runtimeId }`, which
 * `rt.revive(value)` (and `attachWorker()`) turn back into a Lock.
 * It is not reentrant: locking it again on the thread that holds it throws.
 * Only the thread that took it may unlock it. If its holder dies (a worker
 * terminated while holding it, see `rt.watch`), it is released and the next
 * acquisition throws `OwnerDiedError`, holding the lock.
 *
 * `free()` (or a `using` declaration) gives its byte back, once no thread
 * holds or waits for it.
 *
 * @example
 * const lock = rt.lock();
 * lock.withLock(() => { counter[0] += 1; });
 */
export class Lock extends Primitive<'parklot.lock'> {
  readonly #core: Core;
  /**
   * The address every call passes to wasm: `address`, until `free()` points
   * it at a byte that stays locked (wasm/src/kinds.rs, `TOMBSTONE`), where
   * acquisitions and releases fail on the paths that already handle
   * failure. A freed Lock is thus refused at no cost to the fast paths.
   */
  #at: number;
  /** A view of the memory that reaches `#at` (the byte `lock`/`unlock` swap in JS). */
  readonly #bytes: Uint8Array;

  static {
    lockCore = (value) => (typeof value === 'object' && value !== null && #core in value ? value.#core : undefined);
    lockFreed = (lock) => lock.#at !== lock.address;
    // Where `LOCK_FLAT_IN_JS` (SpiderMonkey), lock(), unlock() and withLock
    // are these: `#takeInJs`'s swap and record (`#giveQuiet`'s) written out,
    // no method called on the way (each cost SpiderMonkey about 4 ns, see
    // engine.ts); anything else (diagnostics on, another Lock held, a byte
    // not free) goes through `#take` (`#give`), to wasm.
    if (LOCK_FLAT_IN_JS) {
      Lock.prototype.lock = function lock(this: Lock): void {
        const core = this.#core;
        if (!core.canBlock) refuseToBlock(core, 'Lock.lock()', 'await lock.lockAsync()');
        const held = core.held;
        if (core.diagMode[0] === 0 && held[0] === HELD_NONE && Atomics.compareExchange(this.#bytes, this.#at, 0, LOCKED) === 0) {
          held[0] = this.#at;
          return;
        }
        const code = this.#take(core);
        if (code !== Acquired.Yes) tookLock(code, 'Lock.lock()', this.address, core);
      };
      Lock.prototype.unlock = function unlock(this: Lock): void {
        const core = this.#core;
        if (core.closed) throw closedError();
        const at = this.#at;
        const held = core.held;
        if (core.diagMode[0] === 0 && held[0] === at && held[1] === 0 && Atomics.compareExchange(this.#bytes, at, LOCKED, 0) === LOCKED) {
          held[0] = HELD_NONE; // after the swap (#giveQuiet)
          return;
        }
        const code = this.#give(core);
        if (code !== Released.Ok) throw releaseError(code, 'Lock.unlock()');
      };
      Lock.prototype.withLock = function withLock<T>(this: Lock, fn: () => T): T {
        const core = this.#core;
        if (!core.canBlock) refuseToBlock(core, 'Lock.withLock()', 'await lock.withLockAsync(fn)');
        const at = this.#at;
        const held = core.held;
        if (core.diagMode[0] === 0 && held[0] === HELD_NONE && Atomics.compareExchange(this.#bytes, at, 0, LOCKED) === 0) {
          held[0] = at;
        } else {
          const code = this.#take(core);
          if (code !== Acquired.Yes) this.#refuseWith(code);
        }
        try {
          return fn();
        } finally {
          // As unlock() throws, these outrank fn's own outcome.
          if (core.closed) throw closedError();
          if (core.diagMode[0] === 0 && held[0] === at && held[1] === 0 && Atomics.compareExchange(this.#bytes, at, LOCKED, 0) === LOCKED) {
            held[0] = HELD_NONE; // after the swap (#giveQuiet)
          } else {
            const code = this.#give(core);
            if (code !== Released.Ok) throw releaseError(code, 'Lock.withLock()');
          }
        }
      };
    }
  }

  /**
   * Not for direct use: locks come from `rt.lock()` and `rt.lockAt(address)`.
   */
  constructor(core: unknown, address: number) {
    super(core, address, Kind.Lock, 'parklot: locks come from rt.lock() or rt.lockAt(address), not from new Lock()');
    this.#core = core as Core; // checked by Primitive
    this.#at = address;
    this.#bytes = this.#core.bytesReaching(address);
  }

  /**
   * Takes the lock, blocking this thread while another holds it. Throws a
   * TypeError on a thread that may not block (use `lockAsync` there).
   *
   * @example
   * lock.lock();
   * try { counter[0] += 1; } finally { lock.unlock(); }
   */
  lock(): void {
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'Lock.lock()', 'await lock.lockAsync()');
    const code = this.#take(core);
    if (code !== Acquired.Yes) tookLock(code, 'Lock.lock()', this.address, core);
  }

  /**
   * Takes the lock (blocking); returns its code (`Acquired`). Where
   * `SWAP_IN_JS` while the diagnostics are off: `#takeQuiet`. Else through
   * the export that reports to the diagnostics and checks their mode in
   * wasm (where the check costs V8 nothing measurable; in JS, 1.2-5.5 ns a
   * pair). The JS path is a method of its own: with its code written out
   * here (never run), V8 in Deno took 1.5 ns more a pair.
   */
  #take(core: Core): number {
    if (SWAP_IN_JS && core.diagMode[0] === 0) return this.#takeQuiet(core);
    try {
      return core.raw.lock_seen(this.#at);
    } catch (e) {
      throw core.trapped('lock', e);
    }
  }

  /** `#take` where `SWAP_IN_JS` while the diagnostics are off: `#takeInJs`, else the export that skips them. */
  #takeQuiet(core: Core): number {
    if (this.#takeInJs(core)) return Acquired.Yes;
    try {
      return core.raw.lock(this.#at);
    } catch (e) {
      throw core.trapped('lock', e);
    }
  }

  /**
   * Releases the lock; returns its code (`Released`). The caller checked
   * `closed`. Where `SWAP_IN_JS` while the diagnostics are off:
   * `#giveQuiet`; else as `#take`.
   */
  #give(core: Core): number {
    if (SWAP_IN_JS && core.diagMode[0] === 0) return this.#giveQuiet(core);
    try {
      return core.raw.unlock_seen(this.#at);
    } catch (e) {
      throw core.trapped('unlock', e);
    }
  }

  /**
   * `#give` where `SWAP_IN_JS` while the diagnostics are off. If this is the
   * only Lock the thread holds (`Core.held`): one compare-and-swap of
   * `LOCKED` to 0 (wasm's `release_alone`), then the hold forgotten; any
   * other byte (waiters to wake, a mark) and nested holds go to the export
   * that skips the diagnostics, which finds the hold still recorded.
   *
   * The swap comes first, the reverse of the acquisition, so that a thread
   * stopped for good on the way (a worker terminated) leaves its record
   * telling the truth: engines stop a thread where their code checks for
   * termination, at a call (the `Atomics` call too: V8 with this path
   * forced did, in tests/js/death-in-lock.mjs) or a loop's back edge, never
   * between an `Atomics` call's effect and the next statement (which the
   * acquisition relies on too: its record comes right after its swap).
   * Stopped before the swap, the thread still holds the byte and its
   * record says so: its reaper releases the lock, marked owner-died. (The
   * hold forgotten first left the lock held by nobody; inside a step, as
   * it was until this order, the reaper had to poison the runtime.)
   */
  #giveQuiet(core: Core): number {
    const at = this.#at;
    const held = core.held;
    if (held[0] === at && held[1] === 0 && Atomics.compareExchange(this.#bytes, at, LOCKED, 0) === LOCKED) {
      held[0] = HELD_NONE;
      return Released.Ok;
    }
    try {
      return core.raw.unlock(at);
    } catch (e) {
      throw core.trapped('unlock', e);
    }
  }

  /**
   * The uncontended acquisition in JS, while this thread holds no other Lock:
   * one compare-and-swap of the free byte to `LOCKED`, then the hold recorded
   * where a reaper reads it (`Core.held`). The same swap, with the same
   * orderings (JS's are sequentially consistent), as wasm's
   * `Lock::try_lock_unseen` on a free byte; every other case (a byte with
   * waiters or a mark, nested holds, a freed lock: its tombstone stays
   * locked) is left to wasm. The caller checked that the diagnostics are off.
   */

  #takeInJs(core: Core): boolean {
    const held = core.held;
    if (held[0] !== HELD_NONE) return false;
    const at = this.#at;
    if (Atomics.compareExchange(this.#bytes, at, 0, LOCKED) !== 0) return false;
    held[0] = at;
    return true;
  }

  /** `#takeInJs` where the engine is chosen for it (`SWAP_IN_JS`) and the diagnostics are off. */
  #tryInJs(core: Core): boolean {
    return SWAP_IN_JS && core.diagMode[0] === 0 && this.#takeInJs(core);
  }

  /**
   * Takes the lock if it is free, never waiting. Returns whether it did.
   *
   * @example
   * if (lock.tryLock()) { try { work(); } finally { lock.unlock(); } }
   */
  tryLock(): boolean {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this.#tryInJs(core)) return true;
    let code: number;
    try {
      code = core.raw.try_lock(this.#at);
    } catch (e) {
      throw core.trapped('try_lock', e);
    }
    return tookLock(code, 'Lock.tryLock()', this.address);
  }

  /**
   * Takes the lock, blocking at most `timeout` milliseconds (as `Atomics.wait`
   * reads a timeout: NaN or +Infinity wait forever, 0 or a negative one
   * tries once, never waiting). Returns whether it took the lock. A timeout
   * above 0 throws on a thread that may not block.
   *
   * @example
   * if (lock.lockFor(10)) { try { work(); } finally { lock.unlock(); } }
   */
  lockFor(timeout: number): boolean {
    const t = toTimeout(timeout);
    const core = this.#core;
    if (!core.canBlock && t !== 0) refuseToBlock(core, 'Lock.lockFor()', 'await lock.lockAsync(timeout)');
    if (this.#tryInJs(core)) return true;
    return tookLock(core.glue.lock_for(this.#at, t), 'Lock.lockFor()', this.address, core);
  }

  /**
   * Takes the lock without blocking the thread: resolves `true` once this
   * thread holds it, or `false` if `timeout` milliseconds (default: forever)
   * passed first. Works on every thread; it waits in the same queue as
   * threads that block, so they share the lock fairly. With `{ signal }`,
   * an abort rejects it with `signal.reason`, leaving the queue (see
   * `AsyncOptions`: a hand-off that won the race is kept, resolving `true`).
   *
   * @example
   * if (await lock.lockAsync(100)) {
   *   try { counter[0] += 1; } finally { lock.unlock(); }
   * }
   * await lock.lockAsync(undefined, { signal: controller.signal }); // no timeout, cancellable
   */
  async lockAsync(timeout?: number, options?: AsyncOptions): Promise<boolean> {
    const t = toAsyncTimeout('Lock.lockAsync()', timeout);
    const signal = toSignal('Lock.lockAsync()', options);
    const core = this.#core;
    if (core.closed) throw closedError();
    signal?.throwIfAborted();
    if (this.#tryInJs(core) || tookLock(core.glue.try_lock(this.#at), 'Lock.lockAsync()', this.address)) return true;
    if (t === 0) return false;
    const record = core.pool.take();
    try {
      return await acquire(core, record, this.address, t === Infinity ? Infinity : performance.now() + t, 'Lock.lockAsync()', signal);
    } finally {
      core.pool.give(record);
    }
  }

  /**
   * Releases the lock (held by this thread). Throws a TypeError, changing
   * nothing, if the lock is not locked.
   *
   * @example
   * lock.lock();
   * lock.unlock();
   */
  unlock(): void {
    const core = this.#core;
    if (core.closed) throw closedError();
    const code = this.#give(core);
    if (code !== Released.Ok) throw releaseError(code, 'Lock.unlock()');
  }

  /**
   * Releases the lock and hands it directly to the thread or async waiter
   * that has waited longest, if any (slower than `unlock`, but nobody barges).
   *
   * @example
   * lock.lock();
   * lock.unlockFair();
   */
  unlockFair(): void {
    const core = this.#core;
    if (core.closed) throw closedError();
    const code = core.glue.unlock_fair(this.#at);
    if (code !== Released.Ok) throw releaseError(code, 'Lock.unlockFair()');
  }

  /**
   * Whether some thread holds the lock right now (a snapshot, for
   * assertions and diagnostics).
   *
   * @example
   * lock.lock();
   * console.assert(lock.isLocked());
   */
  isLocked(): boolean {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this.#at !== this.address) throw freedError('Lock.isLocked()', 'Lock');
    return core.glue.is_locked(this.address);
  }

  /**
   * Runs `fn` holding the lock (taken with `lock()`, so only where blocking is
   * allowed) and releases it however `fn` ends. Returns what `fn` returns.
   * If the lock's last owner died holding it, `fn` does not run: the lock is
   * released and the `OwnerDiedError` thrown.
   *
   * @example
   * const total = lock.withLock(() => ++counter[0]);
   */
  withLock<T>(fn: () => T): T {
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'Lock.withLock()', 'await lock.withLockAsync(fn)');
    // No closure and no frame of its own: the form that releases on a
    // throw costs what the bare pair costs.
    let code = this.#take(core);
    if (code !== Acquired.Yes) this.#refuseWith(code);
    try {
      return fn();
    } finally {
      // As unlock() throws, these outrank fn's own outcome.
      if (core.closed) throw closedError();
      code = this.#give(core);
      if (code !== Released.Ok) throw releaseError(code, 'Lock.withLock()');
    }
  }

  /** withLock's acquisition did not simply take the lock: throws why, first releasing an owner-died lock (fn must not run on data that may be inconsistent, and its caller cannot unlock). */
  #refuseWith(code: number): never {
    try {
      tookLock(code, 'Lock.withLock()', this.address, this.#core);
    } catch (e) {
      if (e instanceof OwnerDiedError) this.unlock();
      throw e;
    }
    throw new Error(`parklot: Lock.withLock(): unexpected acquisition result ${code}`);
  }

  /**
   * Runs `fn` (which may be async) holding the lock, taken with `lockAsync()`,
   * and releases it once `fn`'s result settles. Works on every thread. An
   * `OwnerDiedError` is handled as in `withLock`. `{ signal }` cancels the
   * wait for the lock (then `fn` does not run), not `fn` itself.
   *
   * @example
   * await lock.withLockAsync(async () => { counter[0] += await nextValue(); });
   */
  withLockAsync<T>(fn: () => T | PromiseLike<T>, options?: AsyncOptions): Promise<Awaited<T>> {
    return holdingAsync(() => this.lockAsync(undefined, options), () => this.unlock(), fn);
  }

  /**
   * Gives the lock's byte back to the memory. Refused (a TypeError, nothing
   * done) while it is locked or has waiters, and for a lock already freed,
   * through this object or another (`rt.lockAt`) on any thread. Other
   * threads must be done with it first: their objects for it are not told
   * (only `rt.lockAt(address)` is refused from then on). This object's
   * calls throw from then on.
   *
   * @example
   * const lock = rt.lock();
   * lock.free();
   */
  override free(): void {
    super.free();
    this.#at = this.#core.glue.kind_tombstone_address();
  }
}

/** The error of a release export's failure code. */
function releaseError(code: number, call: string): TypeError {
  if (code === Released.Freed) return freedError(call, 'Lock');
  return code === Released.HeldByAnother ? heldByAnotherError(call) : notLockedError(call);
}

