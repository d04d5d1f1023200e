// Two workers and this page add to one counter under one parklot Lock; the
// lock and the counter travel to the workers as they are.
import { Runtime, spawnWorker } from 'parklot';

const ROUNDS = 20_000;
const result = document.getElementById('result');
try {
  const rt = await Runtime.create();
  const lock = rt.lock();
  const counter = rt.float64(rt.alloc(8, 8));
  const workers = [1, 2].map(async () => {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    await spawnWorker(rt, worker, { lock, counter, rounds: ROUNDS });
    await new Promise((resolve, reject) => {
      worker.onmessage = (e) => (e.data === 'done' ? resolve() : reject(new Error(`worker: ${e.data}`)));
      worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
    });
  });
  for (let i = 0; i < ROUNDS; i++) await lock.withLockAsync(() => { counter[0] += 1; });
  await Promise.all(workers);
  result.textContent = `counter: ${counter[0]}`;
  result.dataset.state = 'done';
} catch (e) {
  result.textContent = `${e.name}: ${e.message}`;
  result.dataset.state = 'error';
}
