/**
 * `Barrier` in the runtime's shared memory, served by the wasm core
 * (runtime/src/barrier.rs): waits park in the same ParkingLot as locks, and
 * threads that may not block wait asynchronously in the same queue.
 */
import type { Core } from './core.js';
import { BrokenBarrierError, closedError } from './errors.js';
import { Kind } from './kinds.js';
import { Primitive, refuseToBlock } from './primitive.js';
import { Queue } from './records.js';
import { type AsyncOptions, toAsyncTimeout, toSignal, toTimeout } from './validate.js';
import { settle } from './waiters.js';

/** The most threads a barrier gathers. */
export const MAX_PARTIES = 0xffff;

/** What the wasm barrier waits return (wasm/src/toolkit.rs, `barrier_result`). */
const BarrierResult = { Passed: 0, Leader: 1, Broken: 2, TimedOut: 3, Queued: 4 } as const;

/**
 * Whether this thread is a Node worker. A Node main thread's process is kept
 * alive by every worker that runs, so an untimed async wait there needs no
 * keep-alive of its own (and must not hold the process once nobody is left
 * to arrive); a worker's event loop is kept alive by nothing but its handles.
 */
const inNodeWorker = ((): boolean => {
  const proc = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process;
  const threads = proc?.getBuiltinModule?.('node:worker_threads') as { isMainThread?: boolean } | undefined;
  return threads?.isMainThread === false;
})();

/** Whether a barrier wait that ended with `code` led; throws `BrokenBarrierError` for one that failed. */
function led(code: number, call: string, address: number): boolean {
  if (code === BarrierResult.Leader) return true;
  if (code === BarrierResult.Passed) return false;
  throw new BrokenBarrierError(call, address, code === BarrierResult.TimedOut);
}

/**
 * A reusable barrier for `parties` threads: it opens each time that many
 * wait; exactly one of them is told it is the leader. A thread that arrives
 * while it opens counts toward the next opening.
 *
 * It breaks, as Java's `CyclicBarrier` does, when a waiting party gives up
 * (its timeout passes, its runtime closes) or its worker dies (see
 * `rt.watch`): that generation could never open, so every wait throws
 * `BrokenBarrierError` (the one whose timeout broke it with `timedOut`)
 * until `reset()`.
 *
 * `free()` gives its bytes back once nobody waits at it; unlike the other
 * primitives, a call through this object after that is not detected.
 *
 * @example
 * const phase = rt.barrier(4);
 * if (phase.wait()) console.log('everyone is here');
 */
export class Barrier extends Primitive<'parklot.barrier'> {
  readonly #core: Core;

  /** Not for direct use: barriers come from `rt.barrier()` and `rt.barrierAt()`. */
  constructor(core: unknown, address: number) {
    super(core, address, Kind.Barrier, 'parklot: barriers come from rt.barrier(parties) or rt.barrierAt(address)');
    this.#core = core as Core; // checked by Primitive
  }

  /**
   * Waits (blocking) until `parties` threads wait; returns whether this
   * thread was the leader. Throws `BrokenBarrierError` if the barrier is or
   * breaks, and a TypeError on a thread that may not block (even where it
   * would not wait: use `waitAsync` there).
   */
  wait(): boolean {
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'Barrier.wait()', 'await barrier.waitAsync()');
    return led(core.glue.barrier_wait(this.address, Infinity), 'Barrier.wait()', this.address);
  }

  /**
   * `wait()`, blocking at most `timeout` milliseconds (NaN or +Infinity:
   * forever). If the others have not all arrived by then, this thread leaves
   * and the barrier breaks: it throws `BrokenBarrierError` with `timedOut`
   * true, and the other parties get one with `timedOut` false.
   *
   * @example
   * try { phase.waitFor(1000); } catch (e) { if (e instanceof BrokenBarrierError) phase.reset(); else throw e; }
   */
  waitFor(timeout: number): boolean {
    const t = toTimeout(timeout);
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'Barrier.waitFor()', 'await barrier.waitAsync(timeout)');
    return led(core.glue.barrier_wait(this.address, t), 'Barrier.waitFor()', this.address);
  }

  /**
   * Waits without blocking the thread, at most `timeout` milliseconds
   * (default: forever); resolves whether this thread was the leader, and
   * rejects with `BrokenBarrierError` as `waitFor` throws. On a Node main
   * thread a wait without a timeout does not keep the process alive by
   * itself: the workers it waits for do, while they run (in a worker it
   * keeps the worker's event loop alive, which nothing else would).
   * With `{ signal }`, an abort makes this party leave as a timeout does
   * (the barrier breaks for the others) and rejects with `signal.reason`;
   * an opening that won the race is kept (it resolves as usual).
   *
   * @example
   * if (await phase.waitAsync(5000)) console.log('everyone is here');
   * await phase.waitAsync(undefined, { signal: controller.signal });
   */
  async waitAsync(timeout?: number, options?: AsyncOptions): Promise<boolean> {
    const call = 'Barrier.waitAsync()';
    const t = toAsyncTimeout(call, timeout);
    const signal = toSignal(call, options);
    const core = this.#core;
    if (core.closed) throw closedError();
    signal?.throwIfAborted();
    const g = core.glue;
    const record = core.pool.take();
    record.key = this.address;
    const begun = g.barrier_async_begin(this.address, record.address);
    if (begun !== BarrierResult.Queued) {
      core.pool.give(record);
      return led(begun, call, this.address);
    }
    record.queuedOn = Queue.Barrier;
    const timed = t !== Infinity;
    const keepAlive = timed || inNodeWorker;
    if (keepAlive) core.keepAlive.enter();
    try {
      const deadline = timed ? performance.now() + t : Infinity;
      let code: number;
      do {
        // Woken (opened or broken), or the deadline passed or the signal aborted: then leave, which breaks it.
        code = (await settle(core, record, deadline, signal)) ? g.barrier_async_resume(this.address, record.address) : g.barrier_async_cancel(this.address, record.address);
      } while (code === BarrierResult.Queued);
      // This party's leaving broke it: for an abort, the abort's reason.
      if (code === BarrierResult.TimedOut) signal?.throwIfAborted();
      return led(code, call, this.address);
    } finally {
      if (keepAlive) core.keepAlive.leave();
      record.queuedOn = Queue.None;
      core.pool.give(record);
    }
  }

  /**
   * Starts the barrier over: not broken, nobody arrived. Threads waiting at
   * it now get `BrokenBarrierError`.
   */
  reset(): void {
    const core = this.#core;
    if (core.closed) throw closedError();
    core.glue.barrier_reset(this.address);
  }

  /** Whether the barrier is broken (see `BrokenBarrierError`), until `reset()`. */
  get broken(): boolean {
    const core = this.#core;
    if (core.closed) throw closedError();
    return core.glue.barrier_is_broken(this.address);
  }
}
