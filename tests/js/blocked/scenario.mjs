// One scenario, in a process of its own so that a hang is a timeout of the
// child and not of the test runner: the main thread (which created the
// runtime and the worker, and so receives the worker's 'exit' event) blocks
// on a lock a worker holds, and the worker dies. The main thread must learn
// it while blocked. Prints one JSON line: what the blocked call did and how
// many ms after the death it returned.
//
// node scenario.mjs <lock|write|upgradable> <exit|throw|terminate> <forever|timed> [nested]
// nested: the blocked thread is a worker (middle.mjs) that spawned the holder.
import { Runtime, spawnWorker } from '../../../js/dist/index.js';
import { blockOnHolder } from './block.mjs';

const [hold, death, wait, nested] = process.argv.slice(2);
const rt = await Runtime.create();
const obj = hold === 'lock' ? rt.lock() : rt.rwLock();
const stamp = rt.alloc(8, 8);
let outcome;
let ms;
if (nested === 'nested') {
  const middle = await spawnWorker(rt, new URL('./middle.mjs', import.meta.url), { obj, hold, death, stamp, wait });
  ({ outcome, ms } = await new Promise((resolve) => middle.once('message', resolve)));
} else {
  ({ outcome, ms } = await blockOnHolder(rt, { obj, hold, death, stamp, wait }));
}
console.log(JSON.stringify({ outcome, ms: Math.round(ms * 10) / 10 }));
process.exit(0);
