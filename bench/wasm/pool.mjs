// The benchmark's worker pool and rounds, shared by run.mjs and the V8
// Atomics.Mutex child (v8-mutex.mjs): workers wait at one start gate, run a
// task for a while, and report what they counted.
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread } from 'node:worker_threads';

/**
 * Cells of the small SharedArrayBuffer the JS-side locks and data live in,
 * as byte offsets, each on its own 64-byte line. A `_DATA` cell is 16 bytes
 * laid out as wasm/src/bench.rs's `Guarded`: the counter (f64 here, exact to
 * 2^53), then the value the critical section works on.
 */
export const CELLS = {
  GATE: 0, // i32: start gate generation
  MUTEX: 64, // i32: the contended pure-JS mutex
  JS_DATA: 128, // what the pure-JS mutex guards
  GLUE_DATA: 192, // what parklot's Lock guards when driven through the glue
  V8_DATA: 256, // what V8's Atomics.Mutex guards
  SOLO_MUTEX: 320, // i32: the uncontended pure-JS mutex
  FLOOR: 384, // i32: the floor's compare-and-swap target
  PACKAGE_DATA: 448, // what parklot's Lock guards when driven through the npm package
  MT_DATA: 512, // what multithreading's Mutex guards (in its own process)
  RW_DATA: 576, // f64: the version a JS-side reader-writer lock guards (rwlock.mjs)
  SEM_INSIDE: 640, // i32: how many workers hold a semaphore permit right now
  BARRIER_STOP: 704, // i32: the barrier pass after which every worker stops (-1: not yet)
};
export const SHARED_BYTES = 768;

export const log = (msg) => process.stderr.write(`${msg}\n`);

// Child processes (the Atomics.Mutex and Emscripten peers) die with this
// one, however it ends: a child whose parent is gone can hang in its own
// worker start-up (seen with the Atomics.Mutex child) and would spin forever.
const children = new Set();
export function ownChild(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
if (isMainThread) {
  process.once('exit', () => {
    for (const c of children) c.kill('SIGKILL');
  });
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) process.once(signal, () => process.exit(code));
}

/**
 * A peer that runs in a node process of its own (`url`, forked with
 * `execArgv` and `args`), driven over IPC one request at a time so that its
 * rounds interleave with the other peers'. The child answers its start with
 * {type: 'ready'} or {type: 'unavailable', reason}, then each request with
 * one message. Resolves to {request(cmd, timeoutMs, what), kill(), stop()}, or {skipped}
 * when it could not start; `request` rejects if the child dies or is late.
 */
export async function startChildPeer(url, { name, execArgv = [], args = [], startMs = 30_000 }) {
  const child = ownChild(fork(fileURLToPath(url), args.map(String), {
    execArgv,
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  }));
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  let pending = null;
  let exited = false;
  child.on('message', (m) => pending?.resolve(m));
  const said = () => (stderr.trim() ? `: ${stderr.trim()}` : '');
  child.on('exit', (code, signal) => {
    exited = true;
    pending?.reject(new Error(`the ${name} process exited with ${code ?? signal}${said()}`));
  });
  const next = (timeoutMs, what) => withTimeout(new Promise((resolve, reject) => { pending = { resolve, reject }; }), timeoutMs, what);

  let first;
  try {
    first = await next(startMs, `${name} process start (pid ${child.pid})`);
  } catch (e) {
    // Still alive, its IPC channel would keep this process from ever exiting.
    log(`killing the ${name} process (pid ${child.pid}): ${e.message}`);
    child.kill('SIGKILL');
    return { skipped: `its process did not start: ${e.message}` };
  }
  if (first.type === 'unavailable') return { skipped: first.reason };
  return {
    request(cmd, timeoutMs, what) {
      if (exited) return Promise.reject(new Error(`the ${name} process is gone${said()}`));
      child.send(cmd);
      return next(timeoutMs, what);
    },
    /** Ends the child at once (a peer given up on): its workers may be stuck. */
    kill() {
      child.kill('SIGKILL');
    },
    async stop() {
      if (exited || child.killed) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'exit' });
      await gone;
    },
  };
}

/**
 * In a child peer's process: a function that sends a message to the parent
 * and resolves once it is sent. The parent kills its children when it ends
 * (ownChild); a parent that could not (SIGKILL) takes this process with it.
 */
export function parentChannel() {
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  return (m) => new Promise((resolve) => process.send(m, resolve));
}

/**
 * The `multithreading` package's Mutex, Condvar, RwLock, Semaphore and
 * Barrier classes. Importing it
 * reads `navigator.hardwareConcurrency`, a global Node has only from 21;
 * older Node gets one that says what os says. Only its own process and
 * workers (multithreading-child.mjs) call this: the package also installs
 * globals (self, Worker, WorkerGlobalScope, postMessage) that parklot's
 * package must not find in run.mjs's workers.
 */
export async function loadMultithreading() {
  globalThis.navigator ??= { hardwareConcurrency: os.availableParallelism() };
  const { Mutex, Condvar, RwLock, Semaphore, Barrier } = await import('multithreading');
  return { Mutex, Condvar, RwLock, Semaphore, Barrier };
}

/** Ends the run: a failed check or a stuck round must never look like a result. */
export function fail(msg) {
  log(`bench/wasm: FAIL: ${msg}`);
  process.exit(1);
}

/** `promise`, or a rejection naming `what` after `ms` (the deadlock guard). */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms (deadlock?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A worker running worker.mjs, with an inbox: `expect(type)` resolves to its next message. */
export class PoolWorker {
  constructor(index, workerData) {
    this.index = index;
    this.tid = null; // the kernel's id of its thread, from its 'ready' (Linux)
    this.inbox = [];
    this.waiting = [];
    this.exiting = false;
    this.worker = new Worker(new URL('./worker.mjs', import.meta.url), { workerData });
    this.worker.on('message', (m) => {
      const resolve = this.waiting.shift();
      if (resolve) resolve(m);
      else this.inbox.push(m);
    });
    this.worker.on('error', (e) => fail(`worker ${index}: ${e.stack ?? e}`));
    this.worker.on('exit', (code) => {
      if (!this.exiting) fail(`worker ${index} exited with code ${code}`);
    });
  }

  async expect(type) {
    const m = this.inbox.length ? this.inbox.shift() : await new Promise((resolve) => this.waiting.push(resolve));
    if (m.type !== type) fail(`worker ${this.index}: expected '${type}', got ${JSON.stringify(m)}`);
    return m;
  }

  post(message) {
    this.worker.postMessage(message);
  }

  /** Ends a worker that will never answer (stuck in a deadlock): resolves once it is gone. */
  terminate() {
    this.exiting = true;
    return this.worker.terminate();
  }

  stop() {
    this.exiting = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.post({ type: 'exit' });
    return exited;
  }
}

/**
 * `n` workers, each ready (module instantiated) when this resolves. With
 * `oneAtATime`, each worker starts only once the one before is ready: V8
 * (Node 20, --harmony-struct) can deadlock when several workers start at
 * once with a shared Atomics.Mutex in their workerData (about 1 start in 8
 * of 8 workers hung, every thread asleep, and process.exit could not end it).
 */
export async function startPool(n, workerData, timeoutMs, { oneAtATime = false } = {}) {
  const ready = (w) => w.expect('ready').then((m) => { w.tid = m.tid ?? null; });
  if (!oneAtATime) {
    const pool = Array.from({ length: n }, (_, i) => new PoolWorker(i, workerData));
    await withTimeout(Promise.all(pool.map(ready)), timeoutMs, 'worker start');
    return pool;
  }
  const pool = [];
  for (let i = 0; i < n; i++) {
    pool.push(new PoolWorker(i, workerData));
    await withTimeout(ready(pool[i]), timeoutMs, `worker ${i} start`);
  }
  return pool;
}

/**
 * Pins worker `workers[i]`'s thread to CPU `cpus[i]` (util-linux's taskset
 * on the thread's id), or with `cpus` null lets each run on every CPU again.
 * Returns false, changing nothing, where threads cannot be pinned (no
 * /proc, no taskset, or fewer CPUs than asked for): an experiment then says
 * which placements it could not run. Used to run a round under a stated
 * placement (each of two workers on a CPU of its own, or both on one)
 * instead of whatever the scheduler picks.
 */
export function pin(workers, cpus) {
  const all = `0-${os.availableParallelism() - 1}`;
  if (workers.some((w) => w.tid === null)) return false;
  if (cpus && cpus.some((c) => c >= os.availableParallelism())) return false;
  try {
    workers.forEach((w, i) => execFileSync('taskset', ['-p', '-c', cpus ? String(cpus[i]) : all, String(w.tid)], { stdio: 'ignore' }));
    return true;
  } catch {
    return false;
  }
}

// Who had the CPUs during a round: this process's CPU time (all threads)
// from process.cpuUsage(), and on Linux all CPUs' busy time from /proc/stat
// (USER_HZ ticks, 100 a second; steal counts as busy, since the hypervisor
// gave the CPU to someone else). A contended round that got one CPU instead
// of two looks different from one that really ran in parallel.
const TICKS_PER_S = 100;
function cpuSnapshot() {
  const u = process.cpuUsage();
  let busyS = null;
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    busyS = (f.reduce((a, b) => a + b, 0) - f[3] - f[4]) / TICKS_PER_S; // less idle and iowait
  } catch {
    // not Linux: only this process's own CPU use is known
  }
  return { at: performance.now(), selfS: (u.user + u.system) / 1e6, busyS };
}

/** CPU-seconds per wall second since `s0`: ours, and every other process's (null off Linux). */
function cpusSince(s0) {
  const s1 = cpuSnapshot();
  const wallS = (s1.at - s0.at) / 1e3;
  const ours = (s1.selfS - s0.selfS) / wallS;
  const others = s0.busyS === null ? null : Math.max(0, (s1.busyS - s0.busyS) / wallS - ours);
  return { ours, others, wallS, selfS: s1.selfS - s0.selfS };
}

/**
 * One round: the first `n` workers of `pool` run `task` (a worker.mjs
 * command, or a function from the worker's index to one), all released by one move of the gate at byte CELLS.GATE of
 * `shared`. Resolves to each worker's answer ({count, start, end, ...}, times
 * in ms since the Unix epoch) and the CPU use; rejects after `timeoutMs`,
 * the error naming the workers that did not answer (`silent`: their indexes).
 */
export async function gatedRound(pool, n, task, shared, timeoutMs, what) {
  const gate = new Int32Array(shared, CELLS.GATE, 1);
  const gen = Atomics.load(gate, 0);
  const workers = pool.slice(0, n);
  workers.forEach((w, i) => w.post({ ...(typeof task === 'function' ? task(i) : task), type: 'run', gen }));
  await withTimeout(Promise.all(workers.map((w) => w.expect('armed'))), timeoutMs, what);
  const cpu0 = cpuSnapshot();
  Atomics.store(gate, 0, gen + 1);
  Atomics.notify(gate, 0);
  const answered = workers.map(() => false);
  const answers = workers.map((w, i) => w.expect('done').then((d) => { answered[i] = true; return d; }));
  const done = await withTimeout(Promise.all(answers), timeoutMs, what).catch((e) => {
    e.silent = answered.flatMap((a, i) => (a ? [] : [i]));
    e.message += `; no answer from worker(s) ${e.silent.join(', ')}`;
    throw e;
  });
  return { done, cpus: cpusSince(cpu0) };
}

/** The counted round of a lock: per-worker counts and rates, total rate over the wall time. */
export function lockRound(done, cpus) {
  const total = done.reduce((sum, d) => sum + d.count, 0);
  const wallMs = Math.max(...done.map((d) => d.end)) - Math.min(...done.map((d) => d.start));
  const perWorker = done.map((d) => ({ count: d.count, ms: d.end - d.start, opsPerSec: (d.count / (d.end - d.start)) * 1e3 }));
  return { total, wallMs, opsPerSec: (total / wallMs) * 1e3, cpus, perWorker };
}
