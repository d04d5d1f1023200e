// The worker side of check.mjs: attached by attachWorker(), it runs one
// task and reports through its parent's channel (parentPort in a Node-style
// worker, postMessage in a Web Worker).
import { attachWorker } from '../../js/dist/index.js';

const { runtime, data } = await attachWorker();
let post;
if (data.kind === 'web') post = (m) => globalThis.postMessage(m);
else {
  const { parentPort } = await import('node:worker_threads');
  post = (m) => parentPort.postMessage(m);
}

switch (data.task) {
  case 'count': {
    const { lock, counter, rounds } = data;
    for (let i = 0; i < rounds; i++) lock.withLock(() => { counter[0] += 1; });
    post({ type: 'done' });
    break;
  }
  case 'atomicsWait': {
    post({ type: 'waiting' });
    post({ type: 'woke', value: runtime.atomics.wait(data.word, 0, 0, 10_000) });
    break;
  }
  case 'consume': {
    const { lock, condition, queue, items } = data;
    let sum = 0;
    for (let got = 0; got < items; got++) {
      lock.lock();
      while (queue[0] === 0) condition.wait(lock);
      sum += queue[1];
      queue[0] = 0;
      lock.unlock();
      condition.notifyAll();
    }
    post({ type: 'sum', value: sum });
    break;
  }
  case 'toolkit': {
    const { rw, sem, barrier, once, counter } = data;
    for (let i = 0; i < 1000; i++) rw.withWrite(() => { counter[0] += 1; });
    rw.withRead(() => {});
    sem.acquire(2);
    sem.release(2);
    const leader = barrier.wait();
    once.callOnce(() => { counter[1] += 1; });
    post({ type: 'toolkit', value: leader });
    break;
  }
  case 'hold': {
    data.lock.lock();
    post({ type: 'held' });
    setInterval(() => {}, 1000); // alive, holding the lock, until terminated
    break;
  }
}
if (data.task !== 'hold') runtime.close();
if (data.kind === 'web' && data.task !== 'hold') globalThis.close(); // a Web Worker does not end by itself
