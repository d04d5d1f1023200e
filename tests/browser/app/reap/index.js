// On ../bare.html?app=reap: workers terminated while they wait, or while they
// hold a lock, are reaped through the Web Lock each one holds for its life:
// notify counts only the live waiters, and the next owner of the dead
// worker's lock is told.
// The package: 'parklot' through the page's import map, or ?entry=<path>.
const entry = new URLSearchParams(location.search).get('entry') ?? '/node_modules/parklot/js/dist/index.js';
const { OwnerDiedError, Runtime } = await import(entry);

const result = document.getElementById('result');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts reap/worker.js on `task`; resolves with the worker once it posted its first message. */
function start(rt, task, data) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => (typeof e.data === 'string' && e.data.startsWith('error') ? reject(new Error(e.data)) : resolve(worker));
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
    worker.postMessage({ entry, handle: rt.handle(), task, ...data });
  });
}

/** Resolves once only `n` threads are attached (the watcher reaped the rest), or throws after 5 s. */
async function attached(rt, n) {
  for (let t = 0; t < 500; t++) {
    if (rt.attachedThreads === n) return;
    await sleep(10);
  }
  throw new Error(`still ${rt.attachedThreads} threads attached, expected ${n}: a terminated worker was not reaped`);
}

try {
  const rt = await Runtime.create();
  if (typeof navigator.locks?.request !== 'function') throw new Error('this browser has no Web Locks');
  const word = rt.int32(rt.alloc(4, 4));
  const a = await start(rt, 'wait', { word: word.byteOffset });
  const b = await start(rt, 'wait', { word: word.byteOffset });
  await sleep(100); // both asleep in rt.atomics.wait
  a.terminate();
  await attached(rt, 2);
  const woken = rt.atomics.notify(word, 0);
  b.terminate();
  await attached(rt, 1);

  const lock = rt.lock();
  const holder = await start(rt, 'hold', { lock: lock.address });
  holder.terminate();
  await attached(rt, 1);
  let told = 'not told';
  try {
    await lock.lockAsync(5000);
  } catch (e) {
    if (e instanceof OwnerDiedError) told = 'owner-died';
    else throw e;
  }
  lock.unlock();
  result.textContent = `notify woke ${woken}; lock: ${told}`;
  result.dataset.state = 'done';
} catch (e) {
  result.textContent = `${e.name}: ${e.message}`;
  result.dataset.state = 'error';
}
