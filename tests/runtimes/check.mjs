// The portable checks: what a user does with parklot in any JavaScript
// runtime, with one kind of worker. Run by tests/runtimes/run.mjs under Node
// 20, 22 and 24, Deno and Bun:
//
//   <runtime> tests/runtimes/check.mjs <node|web>
//
// node: workers of `node:worker_threads` (spawnWorker with a URL); web: Web
// Workers (spawnWorker with a `new Worker(url, { type: 'module' })`). Prints
// "ok <check>" or "FAIL <check>: <why>" per check, then
// "checks: N passed, M failed"; the process must then exit by itself (the
// runner times it out otherwise).
import { OwnerDiedError, Runtime, spawnWorker } from '../../js/dist/index.js';

const kind = process.argv[2] ?? 'node';
const WORKER = new URL('./worker.mjs', import.meta.url);
const DEADLINE_MS = 10_000;
let passed = 0;
let failed = 0;

const rt = await Runtime.create();

/** Starts worker.mjs on `task`; returns the worker, its messages, and how to end it. */
async function start(task, data = {}) {
  const inbox = [];
  const waiting = [];
  const deliver = (m) => {
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0].resolve(m.value);
    else inbox.push(m);
  };
  let worker;
  if (kind === 'web') {
    worker = new Worker(WORKER, { type: 'module' });
    worker.addEventListener('message', (e) => deliver(e.data));
    await spawnWorker(rt, worker, { ...data, task, kind });
  } else {
    worker = await spawnWorker(rt, WORKER, { ...data, task, kind });
    worker.on('message', deliver);
  }
  const next = (type) => {
    const i = inbox.findIndex((m) => m.type === type);
    if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0].value);
    return new Promise((resolve, reject) => {
      waiting.push({ type, resolve });
      setTimeout(() => reject(new Error(`no '${type}' from the '${task}' worker within ${DEADLINE_MS} ms`)), DEADLINE_MS).unref?.();
    });
  };
  return { worker, next };
}

async function check(name, f) {
  try {
    await f();
    passed++;
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}

function equal(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

/** How `lock.lockAsync(DEADLINE_MS)` ends: 'acquired', 'timed out', 'OwnerDiedError' (then holding it) or the error. */
async function lockWithin(lock) {
  try {
    return (await lock.lockAsync(DEADLINE_MS)) ? 'acquired' : 'timed out';
  } catch (e) {
    return e instanceof OwnerDiedError ? 'OwnerDiedError' : String(e);
  }
}

await check('a Lock: two workers and the main thread (lockAsync) count exactly', async () => {
  const lock = rt.lock();
  const counter = rt.float64(rt.alloc(8, 8));
  const rounds = 20_000;
  const workers = await Promise.all([start('count', { lock, counter, rounds }), start('count', { lock, counter, rounds })]);
  for (let i = 0; i < 2000; i++) {
    await lock.lockAsync();
    counter[0] += 1;
    lock.unlock();
  }
  await Promise.all(workers.map((w) => w.next('done')));
  equal(counter[0], 2 * rounds + 2000, 'counter');
});

await check('rt.atomics: not-equal, timed-out, and notify counts exactly the one waiter', async () => {
  const word = rt.int32(rt.alloc(4, 4));
  equal(rt.atomics.wait(word, 0, 1, 0), 'not-equal', 'wait on a changed word');
  equal(await rt.atomics.waitAsync(word, 0, 0, 5).value, 'timed-out', 'waitAsync with a timeout');
  const w = await start('atomicsWait', { word });
  await w.next('waiting');
  let woken = 0;
  const end = Date.now() + DEADLINE_MS;
  while (woken === 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 5));
    woken = rt.atomics.notify(word, 0);
  }
  equal(woken, 1, 'notify');
  equal(await w.next('woke'), 'ok', "the worker's wait");
});

await check('a Condition: a queue of 200 items from the main thread to a worker', async () => {
  const lock = rt.lock();
  const condition = rt.condition();
  const queue = rt.float64(rt.alloc(16, 8), 2); // [full, item]
  const items = 200;
  const w = await start('consume', { lock, condition, queue, items });
  let sent = 0;
  for (let i = 1; i <= items; i++) {
    for (;;) {
      await lock.lockAsync();
      if (queue[0] === 0) break;
      lock.unlock();
      await new Promise((r) => setTimeout(r, 0));
    }
    queue[1] = i;
    queue[0] = 1;
    sent += i;
    lock.unlock();
    condition.notifyAll();
  }
  equal(await w.next('sum'), sent, 'sum of the items');
});

await check('the toolkit: RwLock, Semaphore, Barrier, Once across a worker', async () => {
  const rw = rt.rwLock();
  const sem = rt.semaphore(2);
  const barrier = rt.barrier(2);
  const once = rt.once();
  const counter = rt.float64(rt.alloc(16, 8), 2);
  const w = await start('toolkit', { rw, sem, barrier, once, counter });
  const mine = await barrier.waitAsync();
  once.callOnce(() => { counter[1] += 1; });
  const theirs = await w.next('toolkit');
  equal(mine !== theirs, true, 'exactly one leader');
  await rw.writeAsync();
  equal(counter[0], 1000, 'writes');
  rw.unlockWrite();
  equal(counter[1], 1, 'Once ran once');
  equal(sem.available(), 2, 'permits back');
});

await check('a worker terminated while it holds a Lock: the next owner gets OwnerDiedError', async () => {
  const lock = rt.lock();
  const w = await start('hold', { lock });
  await w.next('held');
  w.worker.terminate();
  equal(await lockWithin(lock), 'OwnerDiedError', 'lockAsync after the holder was terminated');
  lock.unlock();
});

await check('an AbortSignal ends a queued lockAsync: it rejects with the reason and leaves the queue', async () => {
  const lock = rt.lock();
  const w = await start('hold', { lock });
  await w.next('held');
  const controller = new AbortController();
  const waiting = lock.lockAsync(undefined, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const reason = new Error('gave up');
  controller.abort(reason);
  let outcome;
  try {
    outcome = await waiting;
  } catch (e) {
    outcome = e;
  }
  equal(outcome, reason, 'the rejection');
  w.worker.terminate();
  // The holder's death hands the lock on; had the aborted wait stayed queued,
  // it would have been chosen and this one would wait its full deadline.
  equal(await lockWithin(lock), 'OwnerDiedError', 'the next lockAsync');
  lock.unlock();
});

if (kind === 'node') {
  // A runtime closed after its node:worker_threads worker ended stops its
  // reaper (a worker of parklot's own); an error there reaches only stderr,
  // which run.mjs reads.
  await check('a second runtime closes cleanly after its worker ends (its reaper stops)', async () => {
    const rt2 = await Runtime.create();
    const lock = rt2.lock();
    const counter = rt2.float64(rt2.alloc(8, 8));
    const worker = await spawnWorker(rt2, WORKER, { task: 'count', kind, lock, counter, rounds: 100 });
    await new Promise((resolve) => worker.on('exit', resolve));
    equal(counter[0], 100, 'counter');
    rt2.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
}

console.log(`checks: ${passed} passed, ${failed} failed`);
// No rt.close(), as in the README's example: the process must end by itself.
