/**
 * parklot/node: `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` on
 * any SharedArrayBuffer, served by parklot's ParkingLot (a Node-API addon).
 *
 * ```js
 * import { install } from 'parklot/node';
 * install(); // Atomics.wait/notify/waitAsync of this realm are parklot's now
 * ```
 */
type Waitable = Int32Array | BigInt64Array;

/** `Atomics.wait`, with the spec's argument order, coercions and errors. */
export function wait(
  typedArray: Waitable,
  index: number,
  value: number | bigint,
  timeout?: number,
): 'ok' | 'not-equal' | 'timed-out';

/**
 * `Atomics.notify`: how many waiters it woke (0 for a non-shared buffer):
 * parklot's first, then the engine's own `Atomics.wait`/`waitAsync` waiters
 * on the same element, up to `count` in all.
 */
export function notify(typedArray: Waitable, index: number, count?: number): number;

/**
 * `Atomics.waitAsync`: settles on the calling thread's event loop; as the
 * engine's, a pending wait does not keep the loop alive, and it keeps its
 * buffer alive until it settles.
 */
export function waitAsync(
  typedArray: Waitable,
  index: number,
  value: number | bigint,
  timeout?: number,
):
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };

/**
 * How many waits, blocking and async, of any thread, parklot has queued on
 * `typedArray[index]` right now (for tests; the engine's own waiters are not
 * counted).
 *
 * ```js
 * while (waiterCount(ta, 0) === 0) await sleep(1); // the worker is waiting
 * ```
 */
export function waiterCount(typedArray: Waitable, index: number): number;

/**
 * Replaces `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` of the
 * realm whose global object is `global` (default: the calling one).
 */
export function install(global?: typeof globalThis): void;

declare const atomics: {
  wait: typeof wait;
  notify: typeof notify;
  waitAsync: typeof waitAsync;
  waiterCount: typeof waiterCount;
  install: typeof install;
};
export default atomics;
