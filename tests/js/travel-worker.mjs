// A worker started by spawnWorker (travel.test.ts): attaches with
// attachWorker(), reports what arrived, adds `rounds` to counter[0] under the
// lock it was sent, counts itself in counter[1] and notifies `done`.
import { parentPort } from 'node:worker_threads';
import { Condition, Lock, attachWorker } from '../../js/dist/index.js';

const { runtime, data } = await attachWorker();
const { lock, done, counter, rounds } = data;
parentPort.postMessage({ lock: lock instanceof Lock, done: done instanceof Condition, mayBlock: runtime.mayBlock });
for (let i = 0; i < rounds; i++) lock.withLock(() => { counter[0] += 1; });
lock.withLock(() => { counter[1] += 1; });
done.notifyAll();
runtime.close();
