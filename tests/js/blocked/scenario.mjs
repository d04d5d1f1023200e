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

const [hold, death, wait, nested] = process.argv.slice(2);
const rt = await Runtime.create();
const obj = hold === 'lock' ? rt.lock() : rt.rwLock();
const stampAddress = rt.alloc(8, 8);
const stamp = rt.float64(stampAddress);
if (nested === 'nested') {
  const middle = await spawnWorker(rt, new URL('./middle.mjs', import.meta.url), { obj, hold, death, stamp: stampAddress, wait });
  const { outcome, ms } = await new Promise((resolve) => middle.once('message', resolve));
  console.log(JSON.stringify({ outcome, ms: Math.round(ms * 10) / 10 }));
  process.exit(0);
}
const worker = await spawnWorker(rt, new URL('./holder.mjs', import.meta.url), { obj, hold, death, stamp: stampAddress });
worker.on('error', () => {}); // the 'throw' scenario's error is expected
await new Promise((resolve) => worker.once('message', resolve));
if (death === 'terminate') {
  stamp[0] = performance.timeOrigin + performance.now();
  void worker.terminate();
}

let outcome;
try {
  if (hold === 'lock') {
    if (wait === 'timed') outcome = obj.lockFor(3000) ? 'acquired' : 'timed out';
    else {
      obj.lock();
      outcome = 'acquired';
    }
  } else if (wait === 'timed') outcome = obj.writeFor(3000) ? 'acquired' : 'timed out';
  else {
    obj.write();
    outcome = 'acquired';
  }
} catch (e) {
  outcome = e.constructor.name;
}
const ms = performance.timeOrigin + performance.now() - stamp[0];
console.log(JSON.stringify({ outcome, ms: Math.round(ms * 10) / 10 }));
process.exit(0);
