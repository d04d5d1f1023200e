import { workerData } from 'node:worker_threads';
import { Runtime } from 'parklot';

const rt = await Runtime.attach(workerData.handle);
const lock = rt.lockAt(workerData.lock);
const done = rt.conditionAt(workerData.done);
const cells = rt.float64(workerData.cells, 2);
for (let i = 0; i < 100_000; i++) {
  lock.lock();
  cells[0] += 1;
  lock.unlock();
}
lock.withLock(() => { cells[1] += 1; });
done.notifyAll();
rt.close();
