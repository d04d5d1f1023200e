/**
 * `rt.atomics`: `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` for
 * Int32Array and BigInt64Array views of the runtime's memory, served by the
 * wasm core's ParkingLot instead of the engine. Arguments are checked and
 * converted exactly as the ECMAScript algorithms do (ValidateIntegerTypedArray,
 * ValidateAtomicAccess, DoWait, Atomics.notify), in the same order, and the
 * results are the same strings and objects.
 *
 * Waiters here and waiters of the built-in `Atomics` are different queues:
 * notify with `rt.atomics.notify` what you wait for with `rt.atomics.wait`.
 *
 * An element must lie inside a block from `rt.alloc`, clear of the
 * primitives placed in it (kinds.ts): a wait or notify on a lock's word
 * would join or wake the lock's own queue. A view found wholly inside one
 * block is remembered, until the next free or placement anywhere.
 */
import { Core, sharedBuffer } from './core.js';
import { closedError, cannotBlockError } from './errors.js';
import { Checked, checkView } from './kinds.js';
import { Queue, type WaiterRecord } from './records.js';
import { type AsyncOptions, type AbortSignalLike, isSharedArrayBuffer, toBigInt64, toCount, toIndex, toInt32, toSignal, toTimeout } from './validate.js';
import { settle, settleQuickly } from './waiters.js';

/** What a wait ended with, as `Atomics.wait` says it. */
export type WaitResult = 'ok' | 'not-equal' | 'timed-out';

/** What `waitAsync` returns, as `Atomics.waitAsync` does. */
export type WaitAsyncResult =
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };

const RESULTS: readonly WaitResult[] = ['ok', 'not-equal', 'timed-out'];

const typedArrayPrototype = Object.getPrototypeOf(Int8Array.prototype) as object;

/** A getter of `%TypedArray%.prototype`: it reads the internal slot, whatever the object's own properties say. */
function intrinsicGetter<T>(key: PropertyKey): (this: unknown) => T {
  return Object.getOwnPropertyDescriptor(typedArrayPrototype, key)!.get as (this: unknown) => T;
}

/** `%TypedArray%.prototype[@@toStringTag]`: the element type's name for a real typed array, else undefined. */
const typedArrayTag = intrinsicGetter<string | undefined>(Symbol.toStringTag);
const viewedBuffer = intrinsicGetter<ArrayBufferLike>('buffer');
const viewByteOffset = intrinsicGetter<number>('byteOffset');
const viewLength = intrinsicGetter<number>('length');

/**
 * A view that passed every check once: an Int32Array or BigInt64Array over
 * this runtime's memory. Its internal slots never change (a SharedArrayBuffer
 * is never detached and never shrinks; a length-tracking view only grows), so
 * the next call with the same view and a plain index checks only the index.
 */
interface KnownView {
  /** The view's byte offset in the memory: the address of element 0. */
  readonly address: number;
  /** Its length when it was first checked (a lower bound). */
  readonly length: number;
  readonly bytes: 4 | 8;
  /** The kind table's generation when the view was found inside one block. */
  readonly generation: number;
}

/**
 * ValidateIntegerTypedArray(typedArray, waitable = true): a TypeError unless
 * it is an Int32Array or a BigInt64Array that is not detached. Returns whether it is 64-bit.
 */
function validateWaitable(typedArray: unknown, call: string): boolean {
  const tag = typedArrayTag.call(typedArray);
  if (tag === undefined) throw new TypeError(`parklot: ${call}: the first argument must be an Int32Array or a BigInt64Array`);
  const buffer = viewedBuffer.call(typedArray) as ArrayBuffer & { detached?: boolean };
  if (buffer.detached === true) throw new TypeError(`parklot: ${call}: the typed array's buffer is detached`);
  if (tag === 'Int32Array') return false;
  if (tag === 'BigInt64Array') return true;
  throw new TypeError(`parklot: ${call}: a ${tag} cannot be waited on; use an Int32Array or a BigInt64Array`);
}

/** ValidateAtomicAccess: the element index, a RangeError unless it is inside the array. */
function validateIndex(typedArray: Int32Array | BigInt64Array, index: unknown, call: string): number {
  const length = viewLength.call(typedArray);
  const i = toIndex(index, call);
  if (i >= length) throw new RangeError(`parklot: ${call}: index ${i} is out of range for a typed array of length ${length}`);
  return i;
}

/**
 * `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` on views of the
 * runtime's memory (`rt.int32(...)`, `rt.bigInt64(...)`, or any Int32Array
 * or BigInt64Array over `rt.memory.buffer`).
 *
 * @example
 * const word = rt.int32(rt.alloc(4, 4), 1);
 * rt.atomics.wait(word, 0, 0, 100); // "timed-out" unless another thread notifies
 */
export class RuntimeAtomics {
  readonly #core: Core;
  /**
   * Views checked before, for the fast path of every call: a rarely called
   * `notify` (a worker waking the page now and then) runs cold, and there
   * each function and getter the full checks go through costs about a
   * microsecond; one lookup here keeps its cost near the engine's own
   * `Atomics.notify`. Only the checks are skipped: the results are the same.
   */
  readonly #known = new WeakMap<object, KnownView>();
  /** The kind table's generation (wasm/src/kinds.rs): a view known before the last free or placement is checked again. */
  readonly #generation: Int32Array;

  /**
   * Not for direct use: it is `rt.atomics`.
   */
  constructor(core: unknown) {
    if (!(core instanceof Core)) throw new TypeError('parklot: use rt.atomics, not new RuntimeAtomics()');
    this.#core = core;
    this.#generation = new Int32Array(sharedBuffer(core.memory), core.glue.kind_generation_address(), 1);
  }

  /**
   * Blocks while `typedArray[index]` equals `value`, until notified or until
   * `timeout` milliseconds (default: forever) passed, like `Atomics.wait`.
   * Throws a TypeError on a thread that may not block (use `waitAsync`).
   *
   * @example
   * const r = rt.atomics.wait(word, 0, 0, 50); // "ok" | "not-equal" | "timed-out"
   * if (r === 'ok') console.log('notified');
   */
  wait(typedArray: Int32Array, index: number, value: number, timeout?: number): WaitResult;
  wait(typedArray: BigInt64Array, index: number, value: bigint, timeout?: number): WaitResult;
  wait(typedArray: Int32Array | BigInt64Array, index: number, value: number | bigint, timeout?: number): WaitResult {
    const call = 'rt.atomics.wait()';
    const { core, is64, v, t, address } = this.#doWaitArguments(call, typedArray, index, value, timeout);
    if (!core.mayBlock) throw cannotBlockError(call, 'rt.atomics.waitAsync()');
    const g = core.glue;
    const r = is64 ? g.atomics_wait64(address, v as bigint, t) : g.atomics_wait32(address, v as number, t);
    return RESULTS[r]!;
  }

  /**
   * Wakes up to `count` waiters (default: all) of `typedArray[index]`, those
   * that waited longest first, like `Atomics.notify`. Returns how many it woke.
   * As with `Atomics.notify`, a view of a non-shared buffer has no waiters: 0.
   *
   * @example
   * Atomics.store(word, 0, 1);
   * rt.atomics.notify(word, 0, 1);
   */
  notify(typedArray: Int32Array | BigInt64Array, index: number, count?: number): number {
    const core = this.#core;
    const known = this.#known.get(typedArray);
    let address: number;
    let wake: number; // the count as the export takes it: at most 2^32 - 1, which is "all"
    if (
      known !== undefined &&
      known.generation === this.#generation[0] &&
      typeof index === 'number' &&
      index >>> 0 === index &&
      index < known.length &&
      (count === undefined || typeof count === 'number')
    ) {
      // A known view, and an index and count that run no user code: the
      // checks below would pass and convert nothing.
      if (core.closed) throw closedError();
      address = known.address + index * known.bytes;
      // toCount, inline: no call is cheap when this runs cold.
      wake = count === undefined || count >= 0xffff_ffff ? 0xffff_ffff : count > 0 ? count >>> 0 : 0;
    } else {
      const call = 'rt.atomics.notify()';
      if (core.closed) throw closedError();
      const is64 = validateWaitable(typedArray, call);
      const i = validateIndex(typedArray, index, call);
      const c = toCount(count);
      wake = c >= 0xffff_ffff ? 0xffff_ffff : c;
      if (!isSharedArrayBuffer(viewedBuffer.call(typedArray))) return 0;
      this.#checkBuffer(typedArray, call);
      address = this.#reach(typedArray, is64, i, call);
    }
    // The export itself, not the shared guard (see Core.raw).
    try {
      return core.raw.atomics_notify(address, wake) >>> 0;
    } catch (e) {
      throw core.trapped('atomics_notify', e);
    }
  }

  /**
   * Waits without blocking, like `Atomics.waitAsync`: `{async: false, value:
   * "not-equal"}` if `typedArray[index]` is not `value`, `{async: false, value:
   * "timed-out"}` for a timeout of 0, else `{async: true, value}` with a
   * promise of "ok" or "timed-out". Works on every thread.
   *
   * The four arguments are the spec's; a fifth, `{ signal }`, is parklot's:
   * an abort rejects the promise with `signal.reason` and takes the wait out
   * of the queue (a notify that won the race is kept: "ok"). With a signal
   * aborted already, the result is `{async: true}` with a rejected promise,
   * whatever the word holds.
   *
   * @example
   * const r = rt.atomics.waitAsync(word, 0, 0, 1000);
   * if (r.async) console.log(await r.value); // "ok" or "timed-out"
   * rt.atomics.waitAsync(word, 0, 0, undefined, { signal: controller.signal });
   */
  waitAsync(typedArray: Int32Array, index: number, value: number, timeout?: number, options?: AsyncOptions): WaitAsyncResult;
  waitAsync(typedArray: BigInt64Array, index: number, value: bigint, timeout?: number, options?: AsyncOptions): WaitAsyncResult;
  waitAsync(typedArray: Int32Array | BigInt64Array, index: number, value: number | bigint, timeout?: number, options?: AsyncOptions): WaitAsyncResult {
    const call = 'rt.atomics.waitAsync()';
    const { core, is64, i, v, t, address } = this.#doWaitArguments(call, typedArray, index, value, timeout);
    // After the spec's steps, which may run user code.
    const signal = toSignal(call, options);
    if (signal?.aborted === true) return { async: true, value: Promise.reject(signal.reason as unknown) };
    if (t === 0) {
      // DoWait compares first, then gives up at once: no queueing needed.
      const current = Atomics.load(typedArray as Int32Array, i) as number | bigint;
      return { async: false, value: current === v ? 'timed-out' : 'not-equal' };
    }
    const record = core.pool.take();
    record.key = address;
    record.queuedOn = Queue.Address;
    let queued: boolean;
    try {
      queued =
        (is64
          ? core.raw.atomics_wait64_async_begin(address, v as bigint, record.address)
          : core.raw.atomics_wait32_async_begin(address, v as number, record.address)) !== 0;
    } catch (e) {
      throw core.trapped('atomics_wait_async_begin', e);
    }
    if (!queued) {
      core.pool.give(record);
      return { async: false, value: 'not-equal' };
    }
    const deadline = t === Infinity ? Infinity : performance.now() + t;
    return { async: true, value: waitForNotify(core, address, record, deadline, signal) };
  }

  /**
   * How many waiters (blocking or async, of any thread) are queued on
   * `typedArray[index]` right now: what engines expose only to their own
   * tests. A snapshot: by the time it returns, waiters may have come or gone.
   * Throws as `notify` does for a bad array or index, and a TypeError for a
   * view of a buffer that is not this runtime's memory.
   *
   * @example
   * while (rt.atomics.waiterCount(word, 0) < 2) await sleep(1); // both workers are waiting
   */
  waiterCount(typedArray: Int32Array | BigInt64Array, index: number): number {
    const call = 'rt.atomics.waiterCount()';
    const core = this.#core;
    if (core.closed) throw closedError();
    const is64 = validateWaitable(typedArray, call);
    this.#checkBuffer(typedArray, call);
    const i = validateIndex(typedArray, index, call);
    return core.glue.diag_waiter_count(this.#reach(typedArray, is64, i, call)) >>> 0;
  }

  /**
   * DoWait's argument steps, in the spec's order (closed runtime first):
   * validate the typed array and its buffer, the index, the value, the timeout.
   */
  #doWaitArguments(call: string, typedArray: Int32Array | BigInt64Array, index: number, value: number | bigint, timeout: number | undefined) {
    const core = this.#core;
    if (core.closed) throw closedError();
    const known = this.#known.get(typedArray);
    let i: number;
    let is64: boolean;
    let address = -1;
    if (known !== undefined && known.generation === this.#generation[0] && typeof index === 'number' && index >>> 0 === index && index < known.length) {
      i = index; // a known view and a plain index: the checks below would pass
      is64 = known.bytes === 8;
      address = known.address + i * known.bytes;
    } else {
      is64 = validateWaitable(typedArray, call);
      this.#checkBuffer(typedArray, call);
      i = validateIndex(typedArray, index, call);
    }
    const v = is64 ? toBigInt64(value) : toInt32(value);
    const t = toTimeout(timeout);
    // parklot's own check comes after the spec's steps (which may run user code).
    if (address < 0) address = this.#reach(typedArray, is64, i, call);
    return { core, is64, i, v, t, address };
  }

  /**
   * The address of `typedArray[i]`, once the kind table allows a view to
   * reach it (else a TypeError): a view wholly inside one block is
   * remembered; any other (a view of the whole memory, say) has each
   * element checked, every call.
   */
  #reach(typedArray: Int32Array | BigInt64Array, is64: boolean, i: number, call: string): number {
    const bytes = is64 ? 8 : 4;
    const address = viewByteOffset.call(typedArray);
    const length = viewLength.call(typedArray);
    const generation = this.#generation[0]!; // read before the check: a free meanwhile makes the next call check again
    const core = this.#core;
    if (core.glue.kind_view(address, length * bytes) === Checked.Ok) {
      this.#known.set(typedArray, { address, length, bytes, generation });
    } else {
      this.#known.delete(typedArray);
      checkView(core, call, address + i * bytes, bytes);
    }
    return address + i * bytes;
  }

  /** The TypeErrors of DoWait's "not shared" step, plus: the buffer must be this runtime's memory. */
  #checkBuffer(typedArray: Int32Array | BigInt64Array, call: string): void {
    const buffer = viewedBuffer.call(typedArray);
    if (!isSharedArrayBuffer(buffer)) {
      throw new TypeError(`parklot: ${call}: the typed array's buffer is not shared; use a view of the runtime's memory (rt.int32(), rt.bigInt64())`);
    }
    if (!this.#core.ownsBuffer(buffer)) {
      throw new TypeError(
        `parklot: ${call}: the typed array is over a SharedArrayBuffer that is not this runtime's memory; ` +
          'use a view of it (rt.int32(), rt.bigInt64()), or the built-in Atomics for other buffers',
      );
    }
  }
}

/**
 * The async half of `waitAsync`: "ok" once notified, "timed-out" at the
 * deadline, `signal`'s reason if it aborts first. A wait with a signal takes
 * the general path (`settle`), which watches it.
 */
function waitForNotify(core: Core, address: number, record: WaiterRecord, deadline: number, signal: AbortSignalLike | undefined): Promise<'ok' | 'timed-out'> {
  core.keepAlive.enter();
  const done = (): void => {
    core.keepAlive.leave();
    core.pool.give(record);
  };
  const settleSlowly = async (): Promise<'ok' | 'timed-out'> => {
    try {
      if (await settle(core, record, deadline, signal)) return 'ok';
      // Timed out or aborted; a notify may have claimed the record in the meantime (then "ok").
      if (core.glue.atomics_wait_async_cancel(address, record.address) === 0) return 'ok';
      signal?.throwIfAborted();
      return 'timed-out';
    } finally {
      done();
    }
  };
  return signal === undefined ? settleQuickly(core, record, deadline, 'ok' as const, done, settleSlowly) : settleSlowly();
}
