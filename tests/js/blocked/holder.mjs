// A worker started by spawnWorker that takes a lock (a Lock, an RwLock's
// write lock or its upgradable read), says so, and then dies the way the
// scenario asks: a natural exit, an uncaught error, or (by its parent)
// terminate(). Just before it dies by itself it writes the time into
// `stamp`, so that the parent can tell how long it took to learn of it.
import { attachWorker } from '../../../js/dist/index.js';
import { parentPort } from 'node:worker_threads';

const { runtime, data } = await attachWorker();
const { obj, hold, death, stamp } = data;
if (hold === 'lock') obj.lock();
else if (hold === 'write') obj.write();
else obj.upgradableRead();
parentPort.postMessage('held');
const stampCell = runtime.float64(stamp);
if (death !== 'terminate') {
  setTimeout(() => {
    stampCell[0] = performance.timeOrigin + performance.now();
    if (death === 'throw') throw new Error('the holder fails');
    // 'exit': nothing keeps the worker alive, so it ends here, holding the lock.
  }, 200);
} else {
  setInterval(() => {}, 1000); // alive until terminated
}
