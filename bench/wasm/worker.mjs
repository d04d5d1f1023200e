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
// package's Mutex and Condvars on the buffers `mt` carries (and, for a
// reader-writer, semaphore or barrier task, that object on the buffer the
// task carries).
// Tasks: 'lock' (contend for a lock for durationMs, counting acquisitions),
// 'ping-pong' (wake another worker back and forth, timing round trips), and
// experiment 6's 'rw' (read or write a reader-writer lock), 'semaphore'
// (acquire and release one permit) and 'barrier' (pass a barrier together).
import { readlinkSync } from 'node:fs';
import { workerData, parentPort } from 'node:worker_threads';
import { jsLock, jsUnlock } from './js-mutex.mjs';
import { CELLS, loadMultithreading } from './pool.mjs';

const { module, memory, shared, glueUrl, mutex, packageUrl, packageHandle, packageLockAddress, mt, otherPackages = [] } = workerData;
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
  if (packageLockAddress !== undefined) packageLock = packageRt.lockAt(packageLockAddress);
}
// Other builds of the package measured beside it (rwlock.mjs --pkg), by name.
const otherRts = {};
for (const { name, url, handle } of otherPackages) {
  const { Runtime } = await import(url);
  otherRts[name] = await Runtime.attach(handle);
}
// multithreading's Mutex for the lock rounds, and a Mutex, Condvar and flag
// per ping-pong pair, each rebuilt from its buffer as the package's own
// deserializer does (and its classes, for experiment 6's tasks).
let mtMutex = null;
let mtPairs = null;
let mtClasses = null;
if (mt) {
  mtClasses = await loadMultithreading();
  const { Mutex, Condvar } = mtClasses;
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
 * collapses to one acquisition per scheduler tick. A starved thread counts
 * the chunk it was blocked in when the others stopped: with `firstChunk`
 * 1, one acquisition.
 */
function timed(ms, runChunk, firstChunk = 16) {
  let count = 0;
  let chunk = firstChunk;
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

// ------------------------------------------------- experiment 6 and kin

/**
 * Experiment 6 (seed 003): one side of a reader-writer lock for durationMs,
 * starting with chunks of 1 so that a starved side shows as about nothing.
 * A write moves the version at the data cell by 2 in two plain steps; a
 * read that sees it odd caught a writer inside (`torn`).
 */
function rwTask({ how, kind, lockAddr, dataAddr, buffer, write, durationMs, pkg }) {
  let torn = 0;
  const at = CELLS.RW_DATA / 8;
  const writeSection = () => {
    const v = f64[at];
    f64[at] = v + 1;
    f64[at] = v + 2;
  };
  let run;
  switch (how) {
    case 'wasm': {
      // The loop runs inside wasm (wasm/src/bench_rwlock.rs).
      const loop = glue.rw_peer_loop;
      run = (chunk) => {
        const r = loop(kind, lockAddr, dataAddr, write, chunk);
        if (r === 0xffff_ffff) throw new Error(`worker: no reader-writer peer ${kind}`);
        torn += r;
      };
      break;
    }
    case 'package': {
      // One call per read() / unlockRead(), as a web developer writes it.
      const l = (pkg === undefined ? packageRt : otherRts[pkg]).rwLockAt(lockAddr);
      run = write
        ? (chunk) => { for (let k = 0; k < chunk; k++) { l.write(); writeSection(); l.unlockWrite(); } }
        : (chunk) => { for (let k = 0; k < chunk; k++) { l.read(); torn += f64[at] % 2; l.unlockRead(); } };
      break;
    }
    case 'multithreading': {
      // As its README has it: a guard per acquisition, released by dispose().
      const l = new mtClasses.RwLock(undefined, buffer);
      run = write
        ? (chunk) => { for (let k = 0; k < chunk; k++) { const g = l.blockingWrite(); writeSection(); g.dispose(); } }
        : (chunk) => { for (let k = 0; k < chunk; k++) { const g = l.blockingRead(); torn += f64[at] % 2; g.dispose(); } };
      break;
    }
    default:
      throw new Error(`worker: unknown reader-writer driver ${how}`);
  }
  return { ...timed(durationMs, run, 1), torn };
}

/**
 * A semaphore of `permits` for durationMs: acquire one permit, count
 * yourself in (CELLS.SEM_INSIDE), out, release. `over`: how many times more
 * than `permits` workers were inside at once (0 unless it is broken).
 */
function semaphoreTask({ how, address, buffer, permits, durationMs }) {
  const inside = CELLS.SEM_INSIDE / 4;
  let over = 0;
  const section = () => {
    if (Atomics.add(i32, inside, 1) >= permits) over++;
    Atomics.sub(i32, inside, 1);
  };
  let run;
  if (how === 'package') {
    const s = packageRt.semaphoreAt(address);
    run = (chunk) => { for (let k = 0; k < chunk; k++) { s.acquire(); section(); s.release(); } };
  } else if (how === 'multithreading') {
    const s = new mtClasses.Semaphore(0, buffer);
    run = (chunk) => { for (let k = 0; k < chunk; k++) { const g = s.blockingAcquire(); section(); g.dispose(); } };
  } else {
    throw new Error(`worker: unknown semaphore driver ${how}`);
  }
  return { ...timed(durationMs, run, 1), over };
}

/**
 * All the round's workers pass one barrier again and again until durationMs
 * have passed. The leader of pass k past the deadline writes k + 1 to
 * CELLS.BARRIER_STOP (the main thread set it to -1); everyone reads it after
 * pass k + 1, so all stop after the same pass. Returns the passes and how
 * many this worker led (the leaders of a round sum to its passes).
 */
function barrierTask({ how, address, buffer, durationMs }) {
  let wait;
  if (how === 'package') {
    const b = packageRt.barrierAt(address);
    wait = () => b.wait();
  } else if (how === 'multithreading') {
    const b = new mtClasses.Barrier(undefined, buffer);
    wait = () => b.blockingWait().isLeader;
  } else {
    throw new Error(`worker: unknown barrier driver ${how}`);
  }
  const stop = CELLS.BARRIER_STOP / 4;
  const start = performance.now();
  const deadline = start + durationMs;
  let led = 0;
  let k = 0;
  for (;;) {
    const leader = wait();
    if (leader) led++;
    if (Atomics.load(i32, stop) === k) break;
    if (leader && performance.now() >= deadline) Atomics.store(i32, stop, k + 1);
    k++;
  }
  return { count: k + 1, led, start: origin + start, end: origin + performance.now() };
}

const TASKS = { lock: lockTask, 'ping-pong': pingPongTask, rw: rwTask, semaphore: semaphoreTask, barrier: barrierTask };

parentPort.on('message', (cmd) => {
  if (cmd.type === 'exit') {
    packageRt?.close();
    for (const rt of Object.values(otherRts)) rt.close();
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

// This thread's kernel id ("pid/task/tid"), so that the pool can pin it to
// a CPU (pool.mjs's pin); null where there is no /proc.
let tid = null;
try {
  tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
} catch {
  // not Linux: experiments that pin threads say they could not
}
parentPort.postMessage({ type: 'ready', tid });
