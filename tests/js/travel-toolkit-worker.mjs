// A worker started by spawnWorker (travel.test.ts) with the rest of the
// toolkit: reports what arrived, then uses each one: the rwlock to write,
// the semaphore around an update, the once, and the barrier to meet the page.
import { parentPort } from 'node:worker_threads';
import { Barrier, Once, RwLock, Semaphore, attachWorker } from '../../js/dist/index.js';

const { runtime, data } = await attachWorker();
const { rw, sem, barrier, once, counter } = data;
parentPort.postMessage({
  rw: rw instanceof RwLock,
  sem: sem instanceof Semaphore,
  barrier: barrier instanceof Barrier,
  once: once instanceof Once,
});
rw.withWrite(() => { counter[0] += 1; });
sem.acquire(2);
counter[1] += 1;
sem.release(2);
once.callOnce(() => { counter[2] += 1; });
barrier.wait();
runtime.close();
