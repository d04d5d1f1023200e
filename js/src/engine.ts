/**
 * What the JS engine running the package compiles well, measured, for the
 * primitives that choose where their uncontended calls run (lock.ts,
 * rwlock.ts, semaphore.ts). Imports nothing.
 */

/**
 * Whether Lock, RwLock and Semaphore take and release uncontended in JS,
 * with one `Atomics.compareExchange` on their state in the shared memory, rather
 * than through a call into wasm: where the engine compiles `Atomics` calls
 * inline. JavaScriptCore does: an uncontended Lock lock() + unlock()
 * measured 4.8-6 ns in JS, 13-16 ns through wasm, the ten-line JS futex
 * mutex 4.2 ns. V8 calls a builtin for each `Atomics` call: 27-30 ns in JS,
 * 16-17 ns through wasm, the JS mutex 18-19 ns; so V8 keeps the wasm path
 * (where the diagnostics' check also costs it least). SpiderMonkey (Firefox
 * 153) inlines them on a plain SharedArrayBuffer (the JS mutex: 4.2 ns) but
 * not, it seems, on a view of a wasm memory: the Lock pair measured 41 ns in
 * JS, 34-36 ns through wasm, so it keeps the wasm path too. JavaScriptCore
 * is told apart by the `line` its errors carry; every other engine takes
 * the wasm path, as all did before.
 */
export const SWAP_IN_JS = swapsInJs();

/**
 * Whether `Lock.lock()`/`unlock()` take and release uncontended in JS with
 * the swap written out in the methods themselves (lock.ts): SpiderMonkey.
 * It pays about 4 ns for each small method the layered JS path passes
 * through (measured in Firefox 153, ns a pair, lowest of 9 rounds: the bare
 * swaps 18-19, with the hold's record 26, through `#take`/`#give` 34,
 * `lock()`/`unlock()` 40-50 either path, the JS mutex 17-21); written out,
 * the pair took 26-27. Its RwLock and Semaphore keep the wasm path. Selected
 * by the `line`-less errors with a `lineNumber` SpiderMonkey's carry, or by
 * `globalThis[Symbol.for('parklot.lockPath')] = 'js-flat'` (which also
 * leaves `SWAP_IN_JS` false, as on SpiderMonkey).
 */
export const LOCK_FLAT_IN_JS = locksFlatInJs();

/**
 * `SWAP_IN_JS` for this engine, unless `globalThis[Symbol.for('parklot.lockPath')]`
 * was set to `'js'` or `'wasm'` before the package loaded (for tests and
 * benchmarks: the test suite runs the JS path's tests in Node too).
 */
function swapsInJs(): boolean {
  const chosen = chosenPath();
  if (chosen !== undefined) return chosen === 'js';
  return typeof errorField('line') === 'number';
}

/** `LOCK_FLAT_IN_JS` for this engine, unless a path was chosen as for `SWAP_IN_JS`. */
function locksFlatInJs(): boolean {
  const chosen = chosenPath();
  if (chosen !== undefined) return chosen === 'js-flat';
  return typeof errorField('line') !== 'number' && typeof errorField('lineNumber') === 'number';
}

/** The path chosen through `globalThis[Symbol.for('parklot.lockPath')]`, if any. */
function chosenPath(): 'js' | 'wasm' | 'js-flat' | undefined {
  const chosen = (globalThis as Record<symbol, unknown>)[Symbol.for('parklot.lockPath')];
  return chosen === 'js' || chosen === 'wasm' || chosen === 'js-flat' ? chosen : undefined;
}

/** A field of a new `Error`: `line` on JavaScriptCore, `lineNumber` on SpiderMonkey, neither on V8. */
function errorField(name: string): unknown {
  return (new Error() as unknown as Record<string, unknown>)[name];
}
