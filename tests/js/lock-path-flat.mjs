// Preloaded (node --import) by the test run that takes Lock's uncontended
// lock()/unlock() in JS written out flat, as SpiderMonkey does on its own
// (js/src/engine.ts, `LOCK_FLAT_IN_JS`; its RwLock and Semaphore keep the
// wasm path), for every copy of the package loaded in the process and its
// workers (scripts/test.sh).
globalThis[Symbol.for('parklot.lockPath')] = 'js-flat';
