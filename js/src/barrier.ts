/**
 * `Barrier` in the runtime's shared memory, served by the wasm core
 * (runtime/src/barrier.rs): waits park in the same ParkingLot as locks, and
 * threads that may not block wait asynchronously in the same queue.
 */
import { Core } from './core.js';
import { closedError } from './errors.js';
import { refuseToBlock } from './lock.js';
import { Queue, settle } from './waiters.js';

/** The most threads a barrier gathers. */
export const MAX_PARTIES = 0xffff;

/** What `barrier_async_begin` returns for the arrival that opened it; -2 for one
 *  that found it opened meanwhile; else a generation (wasm/src/toolkit.rs). */
const BARRIER_LEADER = -1;

/**
 * A reusable barrier for `parties` threads: it opens each time that many
 * wait; exactly one of them is told it is the leader.
 *
 * @example
 * const phase = rt.barrier(4);
 * if (phase.wait()) console.log('everyone is here');
 */
export class Barrier {
  /** The barrier's byte address (`rt.barrierAt(address)` on another thread). */
  readonly address: number;
  readonly kind = 'parklot.barrier';
  readonly runtimeId: number;
  readonly #core: Core;

  /** Not for direct use: barriers come from `rt.barrier()` and `rt.barrierAt()`. */
  constructor(core: unknown, address: number) {
    if (!(core instanceof Core)) throw new TypeError('parklot: barriers come from rt.barrier(parties) or rt.barrierAt(address)');
    this.#core = core;
    this.address = address;
    this.runtimeId = core.header.id;
  }

  /** Waits (blocking) until `parties` threads wait; returns whether this thread was the leader. */
  wait(): boolean {
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'Barrier.wait()', 'await barrier.waitAsync()');
    return core.glue.barrier_wait(this.address);
  }

  /** Waits without blocking the thread; resolves whether this thread was the leader. */
  async waitAsync(): Promise<boolean> {
    const core = this.#core;
    if (core.closed) throw closedError();
    const g = core.glue;
    const record = core.pool.take();
    record.key = this.address;
    const begun = g.barrier_async_begin(this.address, record.address);
    if (begun < 0) {
      core.pool.give(record);
      return begun === BARRIER_LEADER;
    }
    record.queuedOn = Queue.Barrier;
    core.keepAlive.enter();
    try {
      for (;;) {
        await settle(core, record, Infinity);
        if (g.barrier_async_resume(this.address, begun, record.address)) return false;
      }
    } finally {
      core.keepAlive.leave();
      record.queuedOn = Queue.None;
      core.pool.give(record);
    }
  }
}
