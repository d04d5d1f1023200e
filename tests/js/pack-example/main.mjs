// The README's Node example, run from an app that installed the packed
// tarball: two workers and this thread add to one plain counter under one
// parklot lock (the workers block, this thread awaits), and a condition
// tells this thread when they are done. The lock, the condition and the view
// of the memory go to the workers as they are.
import { Runtime, spawnWorker } from 'parklot';

const rt = await Runtime.create();
const lock = rt.lock();
const done = rt.condition();
const cells = rt.float64(rt.alloc(16, 8), 2); // [counter, workers finished]

const exited = [1, 2].map(async () => {
  const worker = await spawnWorker(rt, new URL('./worker.mjs', import.meta.url), { lock, done, cells });
  return new Promise((resolve, reject) => worker.on('exit', resolve).on('error', reject));
});
for (let i = 0; i < 100_000; i++) {
  await lock.lockAsync();
  cells[0] += 1;
  lock.unlock();
}
await lock.lockAsync();
while (cells[1] < 2) await done.waitAsync(lock);
lock.unlock();
console.log(`counter: ${cells[0]}`);
await Promise.all(exited);
rt.close();
