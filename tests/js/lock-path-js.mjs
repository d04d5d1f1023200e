// Preloaded (node --import) by the test run that takes Lock's, RwLock's and
// Semaphore's uncontended calls in JS on V8 too (scripts/test.sh): selects
// that path for every copy of the package loaded in the process and its
// workers (js/src/engine.ts, `SWAP_IN_JS`), as JavaScriptCore takes it on
// its own.
globalThis[Symbol.for('parklot.lockPath')] = 'js';
