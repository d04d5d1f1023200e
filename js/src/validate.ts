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
