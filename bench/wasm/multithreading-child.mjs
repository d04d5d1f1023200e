// The `multithreading` npm package's Mutex and Condvar as bench/wasm peers
// (and its RwLock, Semaphore and Barrier as rwlock.mjs's),
// in a node process of its own (see loadMultithreading in pool.mjs for why)
// with its own pool of worker.mjs workers, driven over IPC by
// multithreading.mjs one request at a time, so that its rounds interleave
// with the other peers'.
//   parent → child: {type: 'round', n, durationMs, work, timeoutMs}
//                   {type: 'ping-pong', pairs, trips, timeoutMs}
//                   {type: 'uncontended', n, runs}
//                   {type: 'experiment6', task, n, durationMs, timeoutMs}
//                   {type: 'exit'}
//   child → parent: {type: 'ready'} or {type: 'unavailable', reason}
//                   {type: 'round', counter, free, done, cpus}
//                   {type: 'ping-pong', samples, words, flags, cpus}
//                   {type: 'uncontended', variants, runs}
//                   {type: 'experiment6', done, cpus, version, free}
//
// A Mutex or Condvar is one Int32 in a SharedArrayBuffer of its own: the
// constructors take that buffer (Mutex's second argument, Condvar's first),
// which is how the package itself rebuilds one in a worker after a move().
// An RwLock, Semaphore or Barrier is made new for each round with its public
// constructor; its buffer reaches the workers the way move() sends it.
import { CELLS, SHARED_BYTES, fail, gatedRound, loadMultithreading, parentChannel, startPool } from './pool.mjs';
import { describe, jsFloor, timeInterleaved } from './single.mjs';
import { jsVersion, permitsFor, prepareCells, taskOf } from './rwlock-rounds.mjs';

const send = parentChannel();

let Mutex, RwLock, Semaphore, Barrier;
try {
  ({ Mutex, RwLock, Semaphore, Barrier } = await loadMultithreading());
} catch (e) {
  const why = e.code === 'ERR_MODULE_NOT_FOUND' ? 'it is not installed (npm ci installs it from package-lock.json)' : e.message;
  await send({ type: 'unavailable', reason: `the multithreading package did not load: ${why}` });
  process.exit(0);
}

const [maxWorkers, maxPairs] = process.argv.slice(2).map(Number);
const word = () => new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
const shared = new SharedArrayBuffer(SHARED_BYTES);
const data = new Float64Array(shared, CELLS.MT_DATA, 2);
const lock = word();
const pairs = Array.from({ length: maxPairs }, () => ({ lock: word(), condvar: word() }));
const flags = new SharedArrayBuffer(64 * maxPairs); // each pair's flag on its own line
const pool = await startPool(maxWorkers, { shared, mt: { lock, pairs, flags } }, 30_000);

/** The uncontended Mutex on this thread, next to the floor measured in this same process. */
function uncontended(n, runs) {
  const solo = word();
  const mutex = new Mutex(undefined, solo);
  const variants = [
    {
      id: 'multithreading-mutex',
      short: 'multithreading Mutex',
      floor: 'floor-js-mt',
      name: "multithreading Mutex (npm, own process): blockingLock() + guard.dispose()",
      // About 100 times the floor (4.5 µs a pair in the first runs: each new
      // guard goes into three WeakMaps, the compiled private fields), so a
      // twentieth of the calls still takes longer than the floor's run.
      calls: Math.ceil(n / 20),
      run(count) {
        // As its README has it: a guard per acquisition, released by dispose().
        for (let k = 0; k < count; k++) mutex.blockingLock().dispose();
        return Atomics.load(new Int32Array(solo), 0) === 0;
      },
    },
    jsFloor(new Int32Array(shared), 'floor-js-mt', 'floor, JS (its process)', "floor (JS, multithreading's process)"),
  ];
  return { variants: describe(variants), runs: timeInterleaved(variants, n, runs) };
}

async function lockRound({ n, durationMs, work, timeoutMs }) {
  data.fill(0);
  const task = { task: 'lock', how: 'multithreading', durationMs, work };
  const { done, cpus } = await gatedRound(pool, n, task, shared, timeoutMs, `multithreading Mutex, ${n} workers`);
  return { counter: data[0], free: Atomics.load(new Int32Array(lock), 0) === 0, done, cpus };
}

async function pingPong({ pairs: n, trips, timeoutMs }) {
  const flag = (p) => new Int32Array(flags, 64 * p, 1);
  for (let p = 0; p < n; p++) Atomics.store(flag(p), 0, 0);
  const task = (i) => ({ task: 'ping-pong', how: 'mt-condvar', pair: i >> 1, pinger: i % 2 === 0, roundTrips: trips });
  const { done, cpus } = await gatedRound(pool, 2 * n, task, shared, timeoutMs, `multithreading Condvar ping-pong, ${2 * n} workers`);
  return {
    // IPC sends JSON: plain arrays, not Float64Arrays.
    samples: done.filter((_, i) => i % 2 === 0).flatMap((d) => Array.from(d.samples)),
    words: done.map((d) => d.word),
    flags: Array.from({ length: n }, (_, p) => Atomics.load(flag(p), 0)),
    cpus,
  };
}

/**
 * The buffer holding `object`'s state, from the package's own serializer
 * (the symbol "Thread.Serialize" its move() calls; the package does not
 * export it): RwLock gives [[state, data], transfer], the others [state].
 */
function stateBuffer(object) {
  const serialize = Object.getOwnPropertySymbols(Object.getPrototypeOf(object)).find((s) => s.description === 'Thread.Serialize');
  const [first] = object[serialize]();
  return Array.isArray(first) ? first[0] : first;
}

/** One round of rwlock.mjs's experiments on a new RwLock, Semaphore or Barrier. */
async function experiment6({ task, n, durationMs, timeoutMs }) {
  const permits = permitsFor(n);
  const object = task === 'rw' ? new RwLock() : task === 'semaphore' ? new Semaphore(permits) : new Barrier(n);
  const buffer = stateBuffer(object);
  prepareCells(shared);
  const what = `multithreading ${task}, ${n} workers`;
  const { done, cpus } = await gatedRound(pool, n, taskOf(task, n, durationMs, { how: 'multithreading', buffer }), shared, timeoutMs, what);
  // Idle: an RwLock's and a Barrier's first word 0 (unlocked), a Semaphore's all its permits.
  const word = Atomics.load(new Int32Array(buffer), 0);
  return { done, cpus, version: jsVersion(shared), free: word === (task === 'semaphore' ? permits : 0) };
}

process.on('message', async (cmd) => {
  switch (cmd.type) {
    case 'exit':
      await Promise.all(pool.map((w) => w.stop()));
      process.exit(0);
      break;
    case 'round':
      await send({ type: 'round', ...(await lockRound(cmd)) });
      break;
    case 'ping-pong':
      await send({ type: 'ping-pong', ...(await pingPong(cmd)) });
      break;
    case 'experiment6':
      await send({ type: 'experiment6', ...(await experiment6(cmd)) });
      break;
    case 'uncontended':
      await send({ type: 'uncontended', ...uncontended(cmd.n, cmd.runs) });
      break;
    default:
      fail(`multithreading: unknown command ${JSON.stringify(cmd)}`);
  }
});
await send({ type: 'ready' });
