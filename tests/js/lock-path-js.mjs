// Preloaded (node --import) by the test run that takes Lock's uncontended
// lock()/unlock() in JS on V8 too (scripts/test.sh): selects that path for
// every copy of the package loaded in the process and its workers
// (js/src/lock.ts, `SWAP_IN_JS`), which JavaScriptCore and SpiderMonkey
// take on their own.
globalThis[Symbol.for('parklot.lockPath')] = 'js';
