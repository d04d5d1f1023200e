/**
 * Argument checks and the ECMAScript conversions that `Atomics` applies, so
 * that parklot's calls accept and reject exactly what the built-ins do.
 * Every function either returns a clean value or throws before any effect.
 */

/** The largest integer `ToIndex` accepts: 2^53 - 1. */
const MAX_INDEX = Number.MAX_SAFE_INTEGER;

/** ToNumber: unary plus throws a TypeError on a BigInt or a Symbol, like the spec. */
export function toNumber(value: unknown): number {
  return +(value as number);
}

/** ToIntegerOrInfinity: NaN and -0 become 0, fractions truncate toward zero. */
export function toIntegerOrInfinity(value: unknown): number {
  const n = toNumber(value);
  if (n !== n || n === 0) return 0;
  return Math.trunc(n) + 0; // + 0 turns -0 (from -0.5) into 0
}

/**
 * ToIndex: an integer in [0, 2^53 - 1], else a RangeError naming `call`'s
 * index (the message is built only then: no string per call).
 */
export function toIndex(value: unknown, call: string): number {
  const i = toIntegerOrInfinity(value);
  if (i < 0 || i > MAX_INDEX) throw new RangeError(`parklot: ${call}: index ${String(i)} is not a valid index`);
  return i;
}

/** ToInt32. */
export function toInt32(value: unknown): number {
  return toNumber(value) | 0;
}

/** ToBigInt64: `BigInt.asIntN` applies ToBigInt itself (TypeError on a Number, SyntaxError on a bad string). */
export function toBigInt64(value: unknown): bigint {
  return BigInt.asIntN(64, value as bigint);
}

/**
 * A timeout in milliseconds as `Atomics.wait` reads it: NaN (so `undefined`)
 * and +Infinity wait forever, anything else is clamped to at least 0.
 */
export function toTimeout(value: unknown): number {
  const q = toNumber(value);
  if (q !== q) return Infinity;
  return q > 0 ? q : 0;
}

/**
 * The timeout of an async call, as `toTimeout` reads it, after refusing an
 * object with a signal there: `lockAsync({ signal })`, other libraries'
 * habit, would otherwise be read as NaN, a wait forever that ignores the signal.
 */
export function toAsyncTimeout(call: string, value: unknown): number {
  if (typeof value === 'object' && value !== null && 'signal' in value) {
    throw new TypeError(`parklot: ${call}: the timeout is an object with a signal; pass { signal } after the timeout (undefined: no timeout), as in lock.lockAsync(undefined, { signal })`);
  }
  return toTimeout(value);
}

/**
 * What parklot uses of an `AbortSignal`, written out so that the package's
 * types need no DOM library (a consumer on `lib: ES2022` alone type-checks);
 * every real AbortSignal has it, and only a real one is accepted at run time.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * What every async acquisition and wait takes after its timeout (or, where
 * it has none, after its other arguments): `lock.lockAsync(100, { signal })`.
 */
export interface AsyncOptions {
  /**
   * Aborting it ends the wait: the promise rejects with `signal.reason` and
   * the wait leaves its queue. A signal aborted already rejects at once. A
   * grant that won the race with the abort (the lock handed over, the
   * permits taken, the notify, the barrier opened) is kept: the promise
   * settles as it would have without the signal.
   */
  readonly signal?: AbortSignalLike | undefined;
}

/** AbortSignal.prototype.aborted's getter: it accepts real AbortSignals only. */
const signalAborted = typeof AbortSignal === 'function' ? Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get : undefined;

/**
 * The signal of an async call's options (`{ signal }`), or undefined; a
 * TypeError for options that are not an object or a signal that is not an
 * AbortSignal (checked by its internal slot, as `isSharedArrayBuffer` does).
 */
export function toSignal(call: string, options: unknown): AbortSignalLike | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`parklot: ${call}: the options must be an object ({ signal }) or undefined, got ${options === null ? 'null' : typeof options}`);
  }
  const signal = (options as { signal?: unknown }).signal;
  if (signal === undefined) return undefined;
  try {
    if (signalAborted === undefined || typeof signal !== 'object' || signal === null) throw new TypeError();
    signalAborted.call(signal);
  } catch {
    throw new TypeError(`parklot: ${call}: options.signal must be an AbortSignal (from an AbortController, or AbortSignal.timeout()), got ${signal === null ? 'null' : typeof signal}`);
  }
  return signal as AbortSignalLike;
}

/** A notify count as `Atomics.notify` reads it: `undefined` is +Infinity, else at least 0. */
export function toCount(value: unknown): number {
  if (value === undefined) return Infinity;
  const c = toIntegerOrInfinity(value);
  return c > 0 ? c : 0;
}

/** SharedArrayBuffer.prototype.byteLength's getter: it accepts real SharedArrayBuffers only. */
const sharedByteLength = typeof SharedArrayBuffer === 'function' ? Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength')?.get : undefined;

/**
 * Whether `buffer` is a SharedArrayBuffer, by its internal slot (as the spec's
 * IsSharedArrayBuffer): from any realm, and not fooled by a prototype. The
 * getter check costs no allocation, where `Object.prototype.toString` built a
 * string on every notify.
 */
export function isSharedArrayBuffer(buffer: unknown): buffer is SharedArrayBuffer {
  if (sharedByteLength === undefined || typeof buffer !== 'object' || buffer === null) return false;
  try {
    sharedByteLength.call(buffer);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks that `address` is an integer byte offset, not 0, aligned to `align`,
 * with `bytes` bytes inside a memory of `byteLength` bytes.
 */
export function checkAddress(what: string, address: unknown, bytes: number, align: number, byteLength: number): number {
  if (typeof address !== 'number') {
    throw new TypeError(`parklot: ${what}: the address must be a number (a byte offset in the runtime's memory), got ${typeof address}`);
  }
  if (!Number.isInteger(address) || address <= 0 || address + bytes > byteLength) {
    throw new RangeError(
      `parklot: ${what}: address ${address} is outside the runtime's memory (1 to ${byteLength - bytes}); ` +
        'use an address from rt.alloc(), or lock.address / condition.address',
    );
  }
  if (address % align !== 0) {
    throw new RangeError(`parklot: ${what}: address ${address} is not aligned to ${align} bytes`);
  }
  return address;
}

/** Checks a size in bytes (`what` names the argument) and returns it. */
export function checkSize(what: string, value: unknown, max: number): number {
  if (typeof value !== 'number') throw new TypeError(`parklot: ${what} must be a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`parklot: ${what} must be an integer from 0 to ${max}, got ${value}`);
  }
  return value;
}

/** Checks an alignment: a power of two from 1 to 65536. */
export function checkAlign(value: unknown): number {
  if (typeof value !== 'number') throw new TypeError(`parklot: align must be a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > 65536 || (value & (value - 1)) !== 0) {
    throw new RangeError(`parklot: align must be a power of two from 1 to 65536, got ${value}`);
  }
  return value;
}
