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

/** `Atomics.notify`: how many waiters it woke (0 for a non-shared buffer). */
export function notify(typedArray: Waitable, index: number, count?: number): number;

/** `Atomics.waitAsync`: settles on the calling thread's event loop. */
export function waitAsync(
  typedArray: Waitable,
  index: number,
  value: number | bigint,
  timeout?: number,
):
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };

/**
 * Replaces `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` of the
 * realm whose global object is `global` (default: the calling one).
 */
export function install(global?: typeof globalThis): void;

declare const atomics: {
  wait: typeof wait;
  notify: typeof notify;
  waitAsync: typeof waitAsync;
  install: typeof install;
};
export default atomics;
