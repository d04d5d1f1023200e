/**
 * `Once`: one-time initialization in one byte of the runtime's shared
 * memory, served by the wasm core (runtime/src/once.rs, parklot::Once): the
 * first caller runs its function while the others wait, blocking or
 * asynchronously, in the same ParkingLot queue.
 */
import type { Core } from './core.js';
import { OncePoisonedError, closedError } from './errors.js';
import { Kind, freedError } from './kinds.js';
import { Primitive, freedMark, refuseToBlock } from './primitive.js';
import { Queue } from './records.js';
import { type AsyncOptions, type AbortSignalLike, toSignal } from './validate.js';
import { settle } from './waiters.js';

/** What `once_begin` returns (wasm/src/toolkit.rs, `once_begun`). */
const Begun = { Done: 0, Poisoned: 1, Running: 2, RunningHere: 3, Run: 4, RunPoisoned: 5 } as const;

/** Where a `Once` stands (a snapshot): as Rust's `OnceState`. */
export type OnceState = 'new' | 'poisoned' | 'running' | 'done';
const STATES: readonly OnceState[] = ['new', 'poisoned', 'running', 'done'];

function checkFunction(call: string, fn: unknown): void {
  if (typeof fn !== 'function') throw new TypeError(`parklot: ${call}: pass the function to run once, got ${typeof fn}`);
}

/**
 * Runs a function once, however many threads ask: the first caller runs it
 * and every other caller waits until it has finished. Usable from every
 * thread attached to the runtime (`rt.onceAt(once.address)`, or send it: it
 * travels as `{ kind: 'parklot.once', address, runtimeId }`).
 *
 * Poisoning, as Rust's `parklot::Once` (and parking_lot's): if the function
 * throws (or its worker dies while running it), the error reaches its
 * caller and the `Once` is *poisoned*: it is not done, and every later
 * `callOnce`/`callOnceAsync`, including those that were waiting, throws
 * `OncePoisonedError` without running anything. `callOnceForce(fn)` runs
 * its function even then (telling it so), and if that completes, the
 * `Once` is done.
 *
 * @example
 * const init = rt.once();
 * init.callOnce(() => { table[0] = expensive(); });  // in every worker: runs once
 * await init.callOnceAsync(() => setUp());           // on a page's main thread
 */
export class Once extends Primitive<'parklot.once'> {
  readonly #core: Core;

  /** Not for direct use: onces come from `rt.once()` and `rt.onceAt(address)`. */
  constructor(core: unknown, address: number) {
    super(core, address, Kind.Once, 'parklot: onces come from rt.once() or rt.onceAt(address), not from new Once()');
    this.#core = core as Core; // checked by Primitive
  }

  /**
   * Runs `fn` unless a call has completed, blocking this thread while
   * another thread runs its function. Returns whether this call ran `fn`.
   * Throws what `fn` throws (and the `Once` is then poisoned),
   * `OncePoisonedError` if it is poisoned, a TypeError when called from
   * inside its own function, and on a thread that may not block, whether or
   * not another thread runs it (it may wait: use `callOnceAsync` there).
   *
   * @example
   * once.callOnce(() => { config[0] = load(); });
   */
  callOnce(fn: () => void): boolean {
    checkFunction('Once.callOnce()', fn);
    return this.#call(false, fn, 'Once.callOnce()', 'await once.callOnceAsync(fn)');
  }

  /**
   * As `callOnce`, but runs `fn` even if the `Once` is poisoned, passing
   * `true` then; if `fn` completes, the `Once` is done.
   *
   * @example
   * once.callOnceForce((poisoned) => { if (poisoned) reset(); init(); });
   */
  callOnceForce(fn: (poisoned: boolean) => void): boolean {
    checkFunction('Once.callOnceForce()', fn);
    return this.#call(true, fn, 'Once.callOnceForce()', 'await once.callOnceAsync(fn)');
  }

  /**
   * Runs `fn` (which may be async: the run lasts until its promise settles)
   * unless a call has completed, waiting without blocking the thread while
   * another runs its function: works on every thread. Resolves whether this
   * call ran `fn`; rejects as `callOnce` throws. Async tasks of one thread
   * take turns: one that finds another task of its thread running the
   * function waits for it (so `fn` must not wait for its own `Once`).
   * With `{ signal }`, an abort ends the wait for another caller's run and
   * rejects with `signal.reason` (an already aborted signal rejects at
   * once); it does not stop `fn` once this call runs it.
   *
   * @example
   * await once.callOnceAsync(async () => { view.set(await fetchTable()); });
   * await once.callOnceAsync(setUp, { signal: AbortSignal.timeout(1000) });
   */
  async callOnceAsync(fn: () => unknown, options?: AsyncOptions): Promise<boolean> {
    checkFunction('Once.callOnceAsync()', fn);
    const signal = toSignal('Once.callOnceAsync()', options);
    const g = this.#live('Once.callOnceAsync()').glue;
    signal?.throwIfAborted();
    for (;;) {
      this.#live('Once.callOnceAsync()');
      const begun = g.once_begin(this.address, false);
      if (begun === Begun.Done) return false;
      if (begun === Begun.Poisoned) throw new OncePoisonedError('Once.callOnceAsync()', this.address);
      if (begun === Begun.Run) {
        try {
          await fn();
        } catch (e) {
          g.once_finish(this.address, false);
          throw e;
        }
        g.once_finish(this.address, true);
        return true;
      }
      await this.#waitAsync(signal);
    }
  }

  /** Whether a call has completed: nothing will run again. */
  get done(): boolean {
    return this.state() === 'done';
  }

  /** Where it stands (a snapshot): 'new', 'poisoned', 'running' or 'done'. */
  state(): OnceState {
    const core = this.#live('Once.state()');
    return STATES[core.glue.once_state(this.address)]!;
  }

  /** The core, if this once may be used: not closed, not freed. */
  #live(call: string): Core {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this[freedMark]) throw freedError(call, 'Once');
    return core;
  }

  #call(force: boolean, fn: (poisoned: boolean) => void, call: string, alternative: string): boolean {
    const core = this.#core;
    const g = core.glue;
    // It may wait for another thread's run: refused where blocking is not allowed, run or not.
    if (!core.canBlock) refuseToBlock(core, call, alternative);
    for (;;) {
      this.#live(call);
      const begun = g.once_begin(this.address, force);
      switch (begun) {
        case Begun.Done:
          return false;
        case Begun.Poisoned:
          throw new OncePoisonedError(call, this.address);
        case Begun.RunningHere:
          throw new TypeError(`parklot: ${call}: called while this thread runs this Once's function (from inside it, or from an async run of it); it would wait for itself`);
        case Begun.Running:
          g.once_wait(this.address, Infinity);
          continue;
        default: {
          let completed = false;
          try {
            fn(begun === Begun.RunPoisoned);
            completed = true;
          } finally {
            g.once_finish(this.address, completed);
          }
          return true;
        }
      }
    }
  }

  /**
   * Waits, without blocking, until the run in progress ends (at once if none
   * is); rejects with `signal`'s reason if it aborts first (a run that ended
   * in the race counts as ended).
   */
  async #waitAsync(signal: AbortSignalLike | undefined): Promise<void> {
    const core = this.#core;
    const g = core.glue;
    const record = core.pool.take();
    record.key = this.address;
    record.queuedOn = Queue.Once;
    core.keepAlive.enter();
    try {
      if (g.once_wait_async_begin(this.address, record.address) && !(await settle(core, record, Infinity, signal))) {
        if (!g.once_wait_async_cancel(this.address, record.address)) signal?.throwIfAborted();
      }
    } finally {
      core.keepAlive.leave();
      record.queuedOn = Queue.None;
      core.pool.give(record);
    }
  }
}
