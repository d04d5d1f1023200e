import { attachWorker } from 'parklot';

const { runtime, data: { lock, done, cells } } = await attachWorker();
for (let i = 0; i < 100_000; i++) {
  lock.lock();
  cells[0] += 1;
  lock.unlock();
}
lock.withLock(() => { cells[1] += 1; });
done.notifyAll();
runtime.close();
