'use strict';
// The spec's Atomics.wait, Atomics.notify and Atomics.waitAsync (ECMAScript
// 2024, DoWait and Atomics.notify): argument validation and coercion, in the
// spec's order, around the addon's waiting and waking. `makeAtomics` is
// self-contained so that `install(global)` can compile it inside another
// realm (a vm context): its errors, result objects and promises are then
// that realm's own, as a built-in's would be.

/**
 * Makes `{ wait, notify, waitAsync, waiterCount }` over `native` (the addon)
 * and `host` ({ setTimeout, clearTimeout, now, queueMicrotask }: the module realm's timers,
 * unreferenced, and clock; `engine`: the engine's own `Atomics.wait` and
 * `Atomics.notify`, captured before any install).
 */
function makeAtomics(native, host) {
  'use strict';
  const TypedArray = Object.getPrototypeOf(Int32Array);
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const typedArrayName = getter(TypedArray.prototype, Symbol.toStringTag);
  const typedArrayLength = getter(TypedArray.prototype, 'length');
  const typedArrayBuffer = getter(TypedArray.prototype, 'buffer');
  const sharedByteLength = getter(SharedArrayBuffer.prototype, 'byteLength');
  const byteLength = getter(ArrayBuffer.prototype, 'byteLength');
  const { apply } = Reflect;
  const { load, add } = Atomics;
  const { asIntN, asUintN } = BigInt;
  const { trunc, min, ceil } = Math;
  const RESULTS = ['ok', 'not-equal', 'timed-out'];
  const { wait: engineWait, notify: engineNotify } = host.engine;
  // AgentCanSuspend(): whether this thread may block. Node-API does not say,
  // but the engine's wait does: it throws a TypeError where V8's "Atomics.wait
  // allowed" flag is off, before it compares (here: not-equal at once).
  const mayBlock = (() => {
    try {
      engineWait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
      return true;
    } catch {
      return false;
    }
  })();
  // Per typed array over a SharedArrayBuffer, once validated: element 0's
  // address and its kind. Its buffer never moves nor detaches and its kind
  // never changes, so notify validates it once and needs the addon only to
  // wake; and only if the addon has a wait queued anywhere (`queued`, a
  // count read with a read-modify-write: see node/src/queued.rs).
  const views = new WeakMap();
  const queued = host.queued;
  // The view the last notify validated (only where `queued` can be read),
  // and its length then; forgotten at the next microtask checkpoint, so that
  // the wrapper never keeps a buffer alive past the current task.
  let lastView;
  let lastLength = 0;
  const forget = () => {
    lastView = undefined;
    lastLength = 0;
  };

  function isShared(buffer) {
    try {
      apply(sharedByteLength, buffer, []);
      return true;
    } catch {
      return false;
    }
  }

  function isDetached(buffer) {
    if (apply(byteLength, buffer, []) !== 0) return false;
    try {
      new Uint8Array(buffer);
      return false;
    } catch {
      return true;
    }
  }

  // ValidateIntegerTypedArray(typedArray, waitable = true).
  function validate(typedArray, what) {
    const name =
      typeof typedArray === 'object' && typedArray !== null
        ? apply(typedArrayName, typedArray, [])
        : undefined;
    if (name === undefined) {
      throw new TypeError(`Atomics.${what}: the first argument must be an Int32Array or a BigInt64Array`);
    }
    const buffer = apply(typedArrayBuffer, typedArray, []);
    const shared = isShared(buffer);
    if (!shared && isDetached(buffer)) {
      throw new TypeError(`Atomics.${what}: the typed array's buffer is detached`);
    }
    if (name !== 'Int32Array' && name !== 'BigInt64Array') {
      throw new TypeError(`Atomics.${what}: a ${name} cannot be waited on; use an Int32Array or a BigInt64Array`);
    }
    return { big: name === 'BigInt64Array', shared };
  }

  // ToIntegerOrInfinity: unary plus is ToNumber (a TypeError for a BigInt or a Symbol).
  function toIntegerOrInfinity(value) {
    const number = +value;
    return number !== number || number === 0 ? 0 : trunc(number);
  }

  // ValidateAtomicAccess: the length is read before the index is coerced.
  function accessIndex(typedArray, index, what) {
    const length = apply(typedArrayLength, typedArray, []);
    const i = toIntegerOrInfinity(index);
    if (i < 0 || i > Number.MAX_SAFE_INTEGER) {
      throw new RangeError(`Atomics.${what}: index ${i} is not a valid index`);
    }
    if (i >= length) {
      throw new RangeError(`Atomics.${what}: index ${i} is out of range (length ${length})`);
    }
    return i;
  }

  // DoWait(mode, typedArray, index, value, timeout) up to the waiter list.
  function coerce(typedArray, index, value, timeout, what) {
    const { big, shared } = validate(typedArray, what);
    if (!shared) {
      throw new TypeError(`Atomics.${what}: the typed array must view a SharedArrayBuffer`);
    }
    const i = accessIndex(typedArray, index, what);
    const v = big ? asIntN(64, value) : value | 0;
    const q = +timeout;
    const t = q !== q ? Infinity : q < 0 ? 0 : q;
    return { big, i, v, t };
  }

  // A BigInt's two 32-bit halves, as the addon takes them.
  const high = (v) => Number(asIntN(32, v >> 32n));
  const low = (v) => Number(asUintN(32, v));

  const methods = {
    wait(typedArray, index, value, timeout) {
      const { big, i, v, t } = coerce(typedArray, index, value, timeout, 'wait');
      if (!mayBlock) {
        throw new TypeError('Atomics.wait cannot be called in this context (this thread may not block); use Atomics.waitAsync');
      }
      // A first look, as a sequentially consistent read: "not-equal" needs
      // no queue (the addon compares again under the queue's lock).
      if (load(typedArray, i) !== v) return 'not-equal';
      const code = big
        ? native.wait64(typedArray, i, high(v), low(v), t)
        : native.wait32(typedArray, i, v, t);
      return RESULTS[code];
    },

    notify(typedArray, index, count) {
      // The fast path, for a notify with no parklot wait queued anywhere, on
      // the view the last notify validated, with a plain in-range integer
      // index and a numeric or absent count: nothing here can run user code
      // or throw, so the engine's notify alone gives the spec's answer (it
      // wakes the engine's own waiters, if any).
      if (
        typedArray === lastView &&
        typeof index === 'number' &&
        index >>> 0 === index &&
        index < lastLength &&
        (count === undefined || typeof count === 'number') &&
        add(queued, 0, 0) === 0
      ) {
        return engineNotify(typedArray, index, count);
      }
      let view = views.get(typedArray);
      const { big, shared } = view ?? validate(typedArray, 'notify');
      const i = accessIndex(typedArray, index, 'notify');
      let c = Infinity;
      if (count !== undefined) {
        c = toIntegerOrInfinity(count);
        if (c < 0) c = 0;
      }
      if (!shared) return 0;
      if (view === undefined) {
        view = { base: native.address(typedArray), big, shared };
        views.set(typedArray, view);
      }
      if (queued !== undefined) {
        if (lastView === undefined) host.queueMicrotask(forget);
        // A SharedArrayBuffer never shrinks: this length stays a bound.
        lastView = typedArray;
        lastLength = apply(typedArrayLength, typedArray, []);
      }
      // parklot's waiters first, then the engine's own (its Atomics.wait
      // captured before install(), another realm's, wasm's wait32), up to
      // `count` in all. The engine's notify cannot see parklot's waiters.
      const woken =
        queued !== undefined && add(queued, 0, 0) === 0 ? 0 : native.notifyAddress(view.base + i * (big ? 8 : 4), c);
      // (A built-in called as a plain function: it reads no `this`.)
      return woken < c ? woken + engineNotify(typedArray, i, c - woken) : woken;
    },

    // Waits queued on typedArray[index] now, blocking and async (parklot's
    // only): V8's %AtomicsNumWaitersForTesting plus its async count.
    waiterCount(typedArray, index) {
      validate(typedArray, 'waiterCount');
      return native.waiterCount(typedArray, accessIndex(typedArray, index, 'waiterCount'));
    },

    waitAsync(typedArray, index, value, timeout) {
      const { big, i, v, t } = coerce(typedArray, index, value, timeout, 'waitAsync');
      if (load(typedArray, i) !== v) return { async: false, value: 'not-equal' };
      if (t === 0) return { async: false, value: 'timed-out' };
      let resolve;
      const promise = new Promise((r) => {
        resolve = r;
      });
      let timer;
      // The pending wait keeps its buffer alive (the addon holds `settle`
      // until it settles): a collected buffer's bytes may be reused by a new
      // buffer, whose notify must not reach this wait.
      let buffer = typedArray;
      // Runs on this thread's loop: 0 woken, 1 timed out (2, cancelled, only
      // when the thread is going away, and then never runs).
      const settle = (outcome) => {
        buffer = undefined;
        if (timer !== undefined) host.clearTimeout(timer);
        resolve(outcome === 0 ? 'ok' : 'timed-out');
      };
      const id = big
        ? native.waitAsync64(typedArray, i, high(v), low(v), settle)
        : native.waitAsync32(typedArray, i, v, settle);
      if (id === 0) return { async: false, value: 'not-equal' };
      if (t !== Infinity) {
        // The loop's timers may fire up to a millisecond early and take at
        // most 2^31-1 ms: re-arm until the deadline has really passed.
        const deadline = host.now() + t;
        const arm = () => {
          const left = deadline - host.now();
          timer = undefined;
          if (left <= 0) native.expire(id);
          else timer = host.setTimeout(arm, min(ceil(left), 0x7fffffff));
        };
        arm();
      }
      return { async: true, value: promise };
    },
  };
  return { wait: methods.wait, notify: methods.notify, waitAsync: methods.waitAsync, waiterCount: methods.waiterCount };
}

module.exports = { makeAtomics };
