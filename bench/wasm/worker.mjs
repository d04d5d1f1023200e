// One benchmark worker (pool.mjs starts them). If workerData carries the
// wasm module and memory it instantiates parklot on that memory; it then
// obeys commands:
//   {type: 'run', gen, task, ...}
//     answer {type: 'armed'}, wait until the gate (CELLS.GATE) moves past
//     `gen`, run the task and answer {type: 'done', ...its result}.
//   {type: 'exit'}
//     free this thread's wasm stack and TLS, and let the worker end.
// With packageHandle it also attaches to the npm package's Runtime; with
// `mt` (in multithreading-child.mjs's process) it builds the multithreading
// package's Mutex and Condvars on the buffers `mt` carries.
// Tasks: 'lock' (contend for a lock for durationMs, counting acquisitions)
// and 'ping-pong' (wake another worker back and forth, timing round trips).
import { workerData, parentPort } from 'node:worker_threads';
import { jsLock, jsUnlock } from './js-mutex.mjs';
import { CELLS, loadMultithreading } from './pool.mjs';

const { module, memory, shared, glueUrl, mutex, packageUrl, packageHandle, packageLockAddress, mt } = workerData;
let glue = null;
let raw = null;
if (module) {
  glue = await import(glueUrl);
  // initSync returns the raw exports; __wbindgen_thread_destroy is only there.
  raw = glue.initSync({ module, memory });
  glue.thread_init(true);
}
// The npm package's Runtime, attached as a user's worker attaches it.
let packageRt = null;
let packageLock = null;
if (packageHandle) {
  const { Runtime } = await import(packageUrl);
  packageRt = await Runtime.attach(packageHandle);
  packageLock = packageRt.lockAt(packageLockAddress);
}
// multithreading's Mutex for the lock rounds, and a Mutex, Condvar and flag
// per ping-pong pair.
let mtMutex = null;
let mtPairs = null;
if (mt) {
  const { Mutex, Condvar } = await loadMultithreading();
  mtMutex = new Mutex(undefined, mt.lock);
  mtPairs = mt.pairs.map((p, i) => ({ mutex: new Mutex(undefined, p.lock), condvar: new Condvar(p.condvar), flag: new Int32Array(mt.flags, 64 * i, 1) }));
}
const i32 = new Int32Array(shared);
const f64 = new Float64Array(shared);
const origin = performance.timeOrigin;

/** Seed 000's critical section on the data cell at f64 index `at`, as wasm/src/bench.rs does it. */
function criticalSection(at, work) {
  for (let k = 0; k < work; k++) f64[at + 1] = (f64[at + 1] + 1) * 0.75;
  f64[at]++;
}

/**
 * Calls `runChunk(chunk)` until `ms` have passed, then {count, start, end}.
 * The clock is read between chunks only, so its cost stays out of the
 * measurement; a chunk doubles while it takes under 0.25 ms and halves past
 * 2 ms, so a round overshoots its end by a few ms at most even when a lock
 * collapses to one acquisition per scheduler tick.
 */
function timed(ms, runChunk) {
  let count = 0;
  let chunk = 16;
  const start = performance.now();
  const deadline = start + ms;
  let now = start;
  while (now < deadline) {
    runChunk(chunk);
    count += chunk;
    const t = performance.now();
    if (t - now < 0.25) chunk *= 2;
    else if (t - now > 2 && chunk > 1) chunk >>= 1;
    now = t;
  }
  return { count, start: origin + start, end: origin + now };
}

// One closure per lock driver, so that each hot loop stays monomorphic.
function lockTask({ how, kind, lockAddr, dataAddr, durationMs, work }) {
  switch (how) {
    case 'peer': {
      // The whole loop runs inside wasm: peer_count_loop.
      const loop = glue.peer_count_loop;
      return timed(durationMs, (chunk) => loop(kind, lockAddr, dataAddr, chunk, work));
    }
    case 'js': {
      const at = CELLS.JS_DATA / 8;
      const m = CELLS.MUTEX / 4;
      return timed(durationMs, (chunk) => {
        for (let k = 0; k < chunk; k++) {
          jsLock(i32, m);
          criticalSection(at, work);
          jsUnlock(i32, m);
        }
      });
    }
    case 'glue': {
      // parklot's Lock from JS: one call into wasm to lock and one to unlock.
      const { lock, unlock } = glue;
      const at = CELLS.GLUE_DATA / 8;
      return timed(durationMs, (chunk) => {
        for (let k = 0; k < chunk; k++) {
          lock(lockAddr);
          criticalSection(at, work);
          unlock(lockAddr);
        }
      });
    }
    case 'package': {
      // parklot's Lock through the npm package: lock.lock() / lock.unlock(),
      // with the package's checks (ownership, closed runtime, traps).
      const lock = packageLock;
      const at = CELLS.PACKAGE_DATA / 8;
      return timed(durationMs, (chunk) => {
        for (let k = 0; k < chunk; k++) {
          lock.lock();
          criticalSection(at, work);
          lock.unlock();
        }
      });
    }
    case 'multithreading': {
      // multithreading's Mutex as its README uses it: a guard per
      // acquisition (blockingLock, since a worker may block), dispose() to release.
      const m = mtMutex;
      const at = CELLS.MT_DATA / 8;
      return timed(durationMs, (chunk) => {
        for (let k = 0; k < chunk; k++) {
          const guard = m.blockingLock();
          criticalSection(at, work);
          guard.dispose();
        }
      });
    }
    case 'v8-mutex': {
      const at = CELLS.V8_DATA / 8;
      const section = () => criticalSection(at, work); // made once: no closure per acquisition
      return timed(durationMs, (chunk) => {
        for (let k = 0; k < chunk; k++) Atomics.Mutex.lock(mutex, section);
      });
    }
    default:
      throw new Error(`worker: unknown lock driver ${how}`);
  }
}

/**
 * Ping-pong from JS: the word bounces 0 → 1 (pinger) → 0 (ponger), each
 * side sleeping in `wait(expected)` until it changes. The pinger returns
 * each round trip's ns.
 */
function jsPingPong(word, wait, notify, pinger, roundTrips) {
  if (!pinger) {
    for (let k = 0; k < roundTrips; k++) {
      while (Atomics.load(word, 0) === 0) wait(0);
      Atomics.store(word, 0, 0);
      notify();
    }
    return [];
  }
  const samples = new Float64Array(roundTrips);
  let t0 = performance.now();
  for (let k = 0; k < roundTrips; k++) {
    Atomics.store(word, 0, 1);
    notify();
    while (Atomics.load(word, 0) === 1) wait(1);
    const t1 = performance.now();
    samples[k] = (t1 - t0) * 1e6;
    t0 = t1;
  }
  return samples;
}

/**
 * Ping-pong under a lock and a condition, as a user writes a handoff: the
 * flag goes 0 → 1 (pinger) → 0 (ponger) with the lock held, and each side
 * waits on the one shared condition until it changes (only the other side
 * can be waiting, so notify-one wakes the right thread). The pinger returns
 * each round trip's ns.
 */
function conditionPingPong(flag, lock, unlock, wait, notify, pinger, roundTrips) {
  if (!pinger) {
    for (let k = 0; k < roundTrips; k++) {
      lock();
      while (Atomics.load(flag, 0) === 0) wait();
      Atomics.store(flag, 0, 0);
      notify();
      unlock();
    }
    return [];
  }
  const samples = new Float64Array(roundTrips);
  let t0 = performance.now();
  for (let k = 0; k < roundTrips; k++) {
    lock();
    Atomics.store(flag, 0, 1);
    notify();
    while (Atomics.load(flag, 0) === 1) wait();
    unlock();
    const t1 = performance.now();
    samples[k] = (t1 - t0) * 1e6;
    t0 = t1;
  }
  return samples;
}

function pingPongTask({ how, side, wordAddr, pinger, roundTrips, samplesAddr, pair, lockAddr, conditionAddr }) {
  if (how === 'mt-condvar') {
    // multithreading's process has no wasm memory: the pair's flag is in `mt.flags`.
    const { mutex: m, condvar, flag } = mtPairs[pair];
    let guard = null;
    const samples = conditionPingPong(flag, () => { guard = m.blockingLock(); }, () => guard.dispose(),
      () => condvar.blockingWait(guard), () => condvar.notifyOne(), pinger, roundTrips);
    return { samples, word: Atomics.load(flag, 0) };
  }
  const word = new Int32Array(memory.buffer, wordAddr, 1);
  let samples;
  switch (how) {
    case 'wasm':
      glue.bench_ping_pong(side, wordAddr, pinger, roundTrips, samplesAddr);
      samples = pinger ? new Float64Array(memory.buffer, samplesAddr, roundTrips).slice() : [];
      break;
    case 'js-parklot':
      samples = jsPingPong(word, (v) => glue.atomics_wait32(wordAddr, v, Infinity), () => glue.atomics_notify(wordAddr, 1), pinger, roundTrips);
      break;
    case 'js-atomics':
      samples = jsPingPong(word, (v) => Atomics.wait(word, 0, v), () => Atomics.notify(word, 0, 1), pinger, roundTrips);
      break;
    case 'package-condition': {
      // parklot's Lock and Condition through the npm package, on the word as the flag.
      const lock = packageRt.lockAt(lockAddr);
      const cond = packageRt.conditionAt(conditionAddr);
      samples = conditionPingPong(word, () => lock.lock(), () => lock.unlock(), () => cond.wait(lock), () => cond.notifyOne(), pinger, roundTrips);
      break;
    }
    default:
      throw new Error(`worker: unknown ping-pong ${how}`);
  }
  return { samples, word: Atomics.load(word, 0) };
}

const TASKS = { lock: lockTask, 'ping-pong': pingPongTask };

parentPort.on('message', (cmd) => {
  if (cmd.type === 'exit') {
    packageRt?.close();
    raw?.__wbindgen_thread_destroy();
    parentPort.close();
    return;
  }
  const task = TASKS[cmd.task];
  if (cmd.type !== 'run' || !task) throw new Error(`worker: unknown command ${JSON.stringify(cmd)}`);
  parentPort.postMessage({ type: 'armed' });
  Atomics.wait(i32, CELLS.GATE / 4, cmd.gen); // returns at once if the gate already moved
  parentPort.postMessage({ type: 'done', ...task(cmd) });
});

parentPort.postMessage({ type: 'ready' });
