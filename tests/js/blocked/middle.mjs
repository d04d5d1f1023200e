// A worker started by spawnWorker that itself spawns the holder
// (holder.mjs) and then blocks on the holder's lock: the holder's 'exit'
// event would come to this worker, which is blocked, so only the reaper
// (reached through this worker's own life port) can end its wait.
import { attachWorker, spawnWorker } from '../../../js/dist/index.js';
import { parentPort } from 'node:worker_threads';

const { runtime, data } = await attachWorker();
const { obj, hold, death, stamp, wait } = data;
const stampCell = runtime.float64(stamp);
const holder = await spawnWorker(runtime, new URL('./holder.mjs', import.meta.url), { obj, hold, death, stamp });
holder.on('error', () => {});
await new Promise((resolve) => holder.once('message', resolve));
if (death === 'terminate') {
  stampCell[0] = performance.timeOrigin + performance.now();
  void holder.terminate();
}
let outcome;
try {
  if (hold === 'lock') outcome = wait === 'timed' ? (obj.lockFor(3000) ? 'acquired' : 'timed out') : (obj.lock(), 'acquired');
  else outcome = wait === 'timed' ? (obj.writeFor(3000) ? 'acquired' : 'timed out') : (obj.write(), 'acquired');
} catch (e) {
  outcome = e.constructor.name;
}
parentPort.postMessage({ outcome, ms: performance.timeOrigin + performance.now() - stampCell[0] });
