'use strict';
// parklot/node: Atomics.wait, Atomics.notify and Atomics.waitAsync on any
// SharedArrayBuffer, served by parklot's ParkingLot through a Node-API addon
// (one ParkingLot per process, shared by the main thread and every worker).

const { performance } = require('node:perf_hooks');
const native = require('./load.cjs').loadAddon();
const { makeAtomics } = require('./atomics.cjs');

// The engine's own wait and notify, captured before install() replaces them
// (a module is loaded once per thread).
const engine = { wait: Atomics.wait, notify: Atomics.notify };

const host = {
  // Unreferenced: a pending waitAsync, timed or not, does not keep the loop
  // alive, as with the engine's own (Node 20, 22 and 24 alike).
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (timer) => clearTimeout(timer),
  now: () => performance.now(),
  queueMicrotask: (fn) => queueMicrotask(fn),
  engine,
  // The addon's count of queued waits, process-wide (undefined where an
  // external ArrayBuffer cannot be made: notify then always asks the addon).
  queued: (() => {
    try {
      return new Int32Array(native.queuedCounter());
    } catch {
      return undefined;
    }
  })(),
};

const own = makeAtomics(native, host);

/**
 * Replaces `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` of the
 * realm whose global object is `global` (default: this one) with parklot's.
 * For another realm (a `vm` context) the functions are made in that realm.
 */
function install(global = globalThis) {
  const atomics =
    global === globalThis
      ? own
      : new global.Function(`return (${makeAtomics.toString()})`)()(native, host);
  for (const name of ['wait', 'notify', 'waitAsync']) {
    Object.defineProperty(global.Atomics, name, {
      value: atomics[name],
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
}

module.exports = {
  wait: own.wait,
  notify: own.notify,
  waitAsync: own.waitAsync,
  waiterCount: own.waiterCount,
  install,
};
