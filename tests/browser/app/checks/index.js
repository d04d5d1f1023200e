// The package's checks on a page (../bare.html?app=checks), for browsers
// driven without a bundler (tests/browser/webkit.test.ts): a counter exact
// across two workers and the page in lockAsync, rt.atomics.waitAsync woken by
// a worker, and a Condition queue the page consumes with waitAsync. The
// package: ?entry=<path>.
const entry = new URLSearchParams(location.search).get('entry') ?? '/node_modules/parklot/js/dist/index.js';
const result = document.getElementById('result');
const ROUNDS = 5000;
const ITEMS = 200;

/** Starts checks/worker.js on `task`; resolves with what it posts when done. */
function run(rt, task, data) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => {
      worker.terminate();
      if (typeof e.data === 'string' && e.data.startsWith('error')) reject(new Error(e.data));
      else resolve(e.data);
    };
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
    worker.postMessage({ entry, handle: rt.handle(), task, ...data });
  });
}

try {
  const { Runtime } = await import(entry);
  const rt = await Runtime.create();
  const seen = [];

  // A counter under one Lock: two workers block, the page awaits lockAsync.
  const lock = rt.lock();
  const counter = rt.float64(rt.alloc(8, 8));
  const workers = [1, 2].map(() => run(rt, 'count', { lock: lock.address, counter: counter.byteOffset, rounds: ROUNDS }));
  for (let i = 0; i < ROUNDS; i++) {
    await lock.lockAsync();
    counter[0] += 1;
    lock.unlock();
  }
  await Promise.all(workers);
  seen.push(`counter ${counter[0]}/${3 * ROUNDS}`);

  // rt.atomics.waitAsync on the page, notified by a worker.
  const word = rt.int32(rt.alloc(4, 4));
  const waited = rt.atomics.waitAsync(word, 0, 0, 10_000);
  const notifier = run(rt, 'notify', { word: word.byteOffset });
  seen.push(`waitAsync ${waited.async ? await waited.value : waited.value}`);
  await notifier;

  // A Condition queue: a worker produces under the lock, the page consumes with waitAsync.
  const qlock = rt.lock();
  const cond = rt.condition();
  const queue = rt.int32(rt.alloc(8, 4), 2); // [produced, consumed]
  const producer = run(rt, 'produce', { lock: qlock.address, cond: cond.address, queue: queue.byteOffset, items: ITEMS });
  let got = 0;
  await qlock.lockAsync();
  while (got < ITEMS) {
    while (queue[0] === queue[1]) await cond.waitAsync(qlock, 10_000);
    got += queue[0] - queue[1];
    queue[1] = queue[0];
  }
  qlock.unlock();
  await producer;
  seen.push(`condition ${got}/${ITEMS}`);

  result.textContent = seen.join('; ');
  result.dataset.state = 'done';
} catch (e) {
  result.textContent = `${e.name}: ${e.message}`;
  result.dataset.state = 'error';
}
