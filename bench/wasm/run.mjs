// parklot's wasm benchmark: locks in a threaded wasm module driven by Node
// worker_threads, side by side with Rust's std::sync::Mutex in the same
// module and the pure-JS Atomics mutex. Method: /work/shared/BENCHMARKS.md
// (interleaved rounds, medians with min–max, per-worker min/max, an exact
// counter check every round, the floor printed next to the results).
//
//   bash scripts/build-wasm.sh && node bench/wasm/run.mjs [--quick]
//
// Progress goes to stderr, markdown tables to stdout, and every round to
// bench/results/wasm-<date>.json.
//
// 1. Throughput: 1, 2, 4 workers contend for one lock, each for a fixed time
//    per round; the critical section adds one to a plain (non-atomic)
//    counter, which must equal the acquisitions counted by the workers.
// 2. Uncontended lock + unlock from JS on one thread, next to the floor
//    (Atomics.compareExchange + Atomics.store).
// 3. Notify with no waiter: parklot's atomics_notify vs Atomics.notify.
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { jsLock, jsUnlock } from './js-mutex.mjs';
import { median, si, ns, markdownTable } from './table.mjs';

const QUICK = process.argv.includes('--quick');
const SETTINGS = {
  quick: QUICK,
  workerCounts: [1, 2, 4],
  rounds: QUICK ? 3 : 5,
  roundMs: QUICK ? 200 : 500, // each worker's running time per round
  warmupMs: QUICK ? 50 : 100, // one discarded round per lock, all workers
  peerChunk: 2000, // peer_count_loop iterations per call (clock read between calls)
  jsChunk: 1000, // JS-loop iterations between clock reads
  singleRuns: QUICK ? 3 : 5, // runs of the single-thread measurements
  uncontendedPairs: QUICK ? 1_000_000 : 2_000_000,
  notifyCalls: QUICK ? 500_000 : 1_000_000,
};
const ROUND_TIMEOUT_MS = 30_000; // a round that takes longer is a deadlock

const GLUE_URL = new URL('../../js/wasm-pkg/parklot_wasm.js', import.meta.url);
const WASM_URL = new URL('../../js/wasm-pkg/parklot_wasm_bg.wasm', import.meta.url);
const RESULTS_DIR = new URL('../results/', import.meta.url);

// Cells of the small SharedArrayBuffer the JS-side locks and counters live
// in, each on its own 64-byte line. Indices are per view (Int32 / Float64).
const LAYOUT = {
  MUTEX: 0, // i32: the contended pure-JS mutex          (byte 0)
  MUTEX_COUNTER: 8, // f64: its counter                  (byte 64)
  GLUE_COUNTER: 16, // f64: counter for parklot via glue (byte 128)
  GATE: 48, // i32: start gate generation                (byte 192)
  SOLO_MUTEX: 64, // i32: the uncontended pure-JS mutex  (byte 256)
  FLOOR: 80, // i32: the floor's CAS target              (byte 320)
  NOTIFY: 96, // i32: Atomics.notify target              (byte 384)
};
const SHARED_BYTES = 448;

const log = (msg) => process.stderr.write(`${msg}\n`);

function fail(msg) {
  log(`bench/wasm: FAIL: ${msg}`);
  process.exit(1);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms (deadlock?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A worker with an inbox: `next()` resolves to its next message. */
class PoolWorker {
  constructor(index, workerData) {
    this.index = index;
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

  next() {
    if (this.inbox.length) return Promise.resolve(this.inbox.shift());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async expect(type) {
    const m = await this.next();
    if (m.type !== type) fail(`worker ${this.index}: expected '${type}', got ${JSON.stringify(m)}`);
    return m;
  }

  post(message) {
    this.worker.postMessage(message);
  }

  stop() {
    this.exiting = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.post({ type: 'exit' });
    return exited;
  }
}

// ---------------------------------------------------------------- setup

const wasmBytes = (() => {
  try {
    return readFileSync(WASM_URL);
  } catch {
    return fail(`no ${fileURLToPath(WASM_URL)}: run bash scripts/build-wasm.sh first`);
  }
})();
// maximum must equal the module's --max-memory (1 GiB) / 64 KiB.
const memory = new WebAssembly.Memory({ initial: 64, maximum: 16384, shared: true });
const module = new WebAssembly.Module(wasmBytes);
const glue = await import(GLUE_URL.href);
glue.initSync({ module, memory });
glue.thread_init(true);

const shared = new SharedArrayBuffer(SHARED_BYTES);
const i32 = new Int32Array(shared);
const f64 = new Float64Array(shared);

const peerNames = glue.peer_names().split(',');
const kindOf = (name) => {
  const kind = peerNames.indexOf(name);
  if (kind < 0) fail(`peer_names() has no ${name}: ${peerNames.join(', ')}`);
  return kind;
};
const PARKLOT = kindOf('parklot::Lock');
const STD = kindOf('std::sync::Mutex');

// The wasm peers' counter: a u64 on its own 64-byte line.
const counterAddr = glue.alloc(64, 64);
// Re-read memory.buffer each time: the workers' stacks may grow the memory.
const wasmCounter = () => new BigUint64Array(memory.buffer, counterAddr, 1);
const glueFree = (addr) => glue.try_lock(addr) && glue.unlock(addr);

const LOCKS = [
  {
    id: 'parklot-wasm',
    name: 'parklot::Lock (wasm loop)',
    how: 'peer',
    kind: PARKLOT,
    lockAddr: glue.peer_new(PARKLOT),
    chunk: SETTINGS.peerChunk,
    reset: () => { wasmCounter()[0] = 0n; },
    counter: () => Number(wasmCounter()[0]),
    isFree() { return glueFree(this.lockAddr); },
  },
  {
    id: 'std-wasm',
    name: 'std::sync::Mutex (wasm loop)',
    how: 'peer',
    kind: STD,
    lockAddr: glue.peer_new(STD),
    chunk: SETTINGS.peerChunk,
    reset: () => { wasmCounter()[0] = 0n; },
    counter: () => Number(wasmCounter()[0]),
    isFree: () => true, // no export peeks at a std Mutex; the counter check stands
  },
  {
    id: 'js-mutex',
    name: 'JS Atomics mutex (JS loop)',
    how: 'js',
    chunk: SETTINGS.jsChunk,
    reset: () => { f64[LAYOUT.MUTEX_COUNTER] = 0; },
    counter: () => f64[LAYOUT.MUTEX_COUNTER],
    isFree: () => Atomics.load(i32, LAYOUT.MUTEX) === 0,
  },
  {
    id: 'parklot-glue',
    name: 'parklot::Lock via glue (JS loop)',
    how: 'glue',
    lockAddr: glue.peer_new(PARKLOT),
    chunk: SETTINGS.jsChunk,
    reset: () => { f64[LAYOUT.GLUE_COUNTER] = 0; },
    counter: () => f64[LAYOUT.GLUE_COUNTER],
    isFree() { return glueFree(this.lockAddr); },
  },
];
const BASELINE = LOCKS[0];

// ---------------------------------------------------------- 1. throughput

// Who had the CPUs during a round. This process's CPU time (all threads)
// from process.cpuUsage(), and, on Linux, all CPUs' busy time from
// /proc/stat (in USER_HZ ticks, 100 per second; steal counts as busy, since
// then the hypervisor gave the CPU to someone else). Their difference per
// wall second is the other processes' load: a contended round that got one
// CPU instead of two looks different from one that really ran in parallel.
const TICKS_PER_S = 100;
function cpuSnapshot() {
  const u = process.cpuUsage();
  let busyS = null;
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const idle = f[3] + f[4]; // idle + iowait
    busyS = (f.reduce((a, b) => a + b, 0) - idle) / TICKS_PER_S;
  } catch {
    // not Linux: only this process's own CPU use is known
  }
  return { selfS: (u.user + u.system) / 1e6, busyS };
}

/** One round: `n` workers run `lock` for `ms` each; checks the counter. */
async function round(pool, lock, n, ms) {
  lock.reset();
  const gen = Atomics.load(i32, LAYOUT.GATE);
  const workers = pool.slice(0, n);
  for (const w of workers) {
    w.post({
      type: 'run', how: lock.how, kind: lock.kind, lockAddr: lock.lockAddr, counterAddr,
      gen, durationMs: ms, chunk: lock.chunk,
    });
  }
  const what = `${lock.name}, ${n} workers`;
  await withTimeout(Promise.all(workers.map((w) => w.expect('armed'))), ROUND_TIMEOUT_MS, what);
  const cpu0 = cpuSnapshot();
  const t0 = performance.now();
  Atomics.store(i32, LAYOUT.GATE, gen + 1);
  Atomics.notify(i32, LAYOUT.GATE);
  const done = await withTimeout(Promise.all(workers.map((w) => w.expect('done'))), ROUND_TIMEOUT_MS + ms, what);
  const cpu1 = cpuSnapshot();
  const cpuWallS = (performance.now() - t0) / 1e3;
  const selfCpus = (cpu1.selfS - cpu0.selfS) / cpuWallS;
  const otherCpus = cpu0.busyS === null ? null : Math.max(0, (cpu1.busyS - cpu0.busyS) / cpuWallS - selfCpus);

  const total = done.reduce((sum, d) => sum + d.count, 0);
  const counter = lock.counter();
  if (counter !== total) fail(`${what}: counter is ${counter}, workers counted ${total} acquisitions`);
  if (!lock.isFree()) fail(`${what}: the lock is still held after the round`);
  const wallMs = Math.max(...done.map((d) => d.end)) - Math.min(...done.map((d) => d.start));
  const perWorker = done.map((d) => ({ count: d.count, ms: d.end - d.start, opsPerSec: (d.count / (d.end - d.start)) * 1e3 }));
  return { lock: lock.id, workers: n, total, counter, wallMs, opsPerSec: (total / wallMs) * 1e3, selfCpus, otherCpus, perWorker };
}

function summarizeThroughput(rounds) {
  const out = [];
  for (const n of SETTINGS.workerCounts) {
    const of = (lock) => rounds.filter((r) => r.lock === lock.id && r.workers === n);
    const baseMedian = median(of(BASELINE).map((r) => r.opsPerSec));
    for (const lock of LOCKS) {
      const rs = of(lock);
      const rates = rs.map((r) => r.opsPerSec);
      const mins = rs.map((r) => Math.min(...r.perWorker.map((w) => w.opsPerSec)));
      const maxs = rs.map((r) => Math.max(...r.perWorker.map((w) => w.opsPerSec)));
      const fair = rs.map((_, i) => mins[i] / maxs[i]);
      const m = median(rates);
      out.push({
        lock: lock.id, name: lock.name, workers: n, rounds: rs.length,
        median: m, min: Math.min(...rates), max: Math.max(...rates),
        vsBaseline: m / baseMedian,
        workerMin: median(mins), workerMax: median(maxs),
        fairness: median(fair), worstFairness: Math.min(...fair),
        selfCpus: median(rs.map((r) => r.selfCpus)),
        otherCpus: rs.some((r) => r.otherCpus === null) ? null : median(rs.map((r) => r.otherCpus)),
      });
    }
  }
  return out;
}

// ------------------------------------------- 2. and 3. single-thread costs

// The floor inside wasm: a hand-assembled module (no toolchain needed) with
//   floor(addr, n) -> i32: n times { won += cmpxchg(addr, 0, 1) == 0;
//                                    i32.atomic.store(addr, 0) }; won
// on its own one-page shared memory: what one uncontended CAS + store costs
// in wasm, the limit for the wasm-loop rows (the JS floor is that for JS).
function wasmFloor() {
  const section = (id, bytes) => [id, bytes.length, ...bytes];
  const body = [
    0x01, 0x01, 0x7f, // one local: won (i32)
    0x02, 0x40, 0x03, 0x40, // block, loop
    0x20, 0x01, 0x45, 0x0d, 0x01, // br_if (n == 0) out of the block
    0x20, 0x02, 0x20, 0x00, 0x41, 0x00, 0x41, 0x01, // won, addr, 0, 1
    0xfe, 0x48, 0x02, 0x00, // i32.atomic.rmw.cmpxchg
    0x45, 0x6a, 0x21, 0x02, // won += (old == 0)
    0x20, 0x00, 0x41, 0x00, 0xfe, 0x17, 0x02, 0x00, // i32.atomic.store addr, 0
    0x20, 0x01, 0x41, 0x01, 0x6b, 0x21, 0x01, // n -= 1
    0x0c, 0x00, 0x0b, 0x0b, // br loop; end loop; end block
    0x20, 0x02, 0x0b, // won
  ];
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]), // type (i32, i32) -> i32
    ...section(3, [0x01, 0x00]), // one function of that type
    ...section(5, [0x01, 0x03, 0x01, 0x01]), // memory: shared, 1 page, max 1
    ...section(7, [0x01, 0x05, ...Buffer.from('floor'), 0x00, 0x00]), // export "floor"
    ...section(10, [0x01, body.length, ...body]),
  ]);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.floor;
}
const floorInWasm = wasmFloor();

// One function per variant keeps each loop monomorphic. Each returns a
// value the caller checks, so no loop is dead code.
const soloLockAddr = glue.peer_new(PARKLOT);
const soloCounterAddr = glue.alloc(64, 64);
const notifyAddr = glue.alloc(4, 4);

const UNCONTENDED = [
  {
    id: 'parklot-glue',
    name: 'parklot::Lock via glue: lock() + unlock()',
    run(n) {
      const { lock, unlock } = glue;
      const a = soloLockAddr;
      let ok = 0;
      for (let k = 0; k < n; k++) {
        lock(a);
        if (unlock(a)) ok++;
      }
      return ok === n;
    },
  },
  {
    id: 'parklot-wasm',
    name: 'parklot::Lock inside wasm: peer_count_loop (incl. ++counter)',
    run(n) {
      const before = new BigUint64Array(memory.buffer, soloCounterAddr, 1)[0];
      glue.peer_count_loop(PARKLOT, soloLockAddr, soloCounterAddr, n, 1);
      return new BigUint64Array(memory.buffer, soloCounterAddr, 1)[0] - before === BigInt(n);
    },
  },
  {
    id: 'js-mutex',
    name: 'JS Atomics mutex: jsLock() + jsUnlock()',
    run(n) {
      const m = i32;
      const i = LAYOUT.SOLO_MUTEX;
      for (let k = 0; k < n; k++) {
        jsLock(m, i);
        jsUnlock(m, i);
      }
      return Atomics.load(m, i) === 0;
    },
  },
  {
    id: 'floor',
    name: 'floor (JS): Atomics.compareExchange(0→1) + Atomics.store(0)',
    run(n) {
      const m = i32;
      const i = LAYOUT.FLOOR;
      let won = 0;
      for (let k = 0; k < n; k++) {
        if (Atomics.compareExchange(m, i, 0, 1) === 0) won++;
        Atomics.store(m, i, 0);
      }
      return won === n;
    },
  },
  {
    id: 'floor-wasm',
    name: 'floor (wasm): i32.atomic.rmw.cmpxchg + i32.atomic.store',
    run: (n) => floorInWasm(0, n) === n,
  },
];

const NOTIFY = [
  {
    id: 'parklot-notify',
    name: 'parklot glue.atomics_notify(addr, 1)',
    run(n) {
      const notify = glue.atomics_notify;
      const a = notifyAddr;
      let woken = 0;
      for (let k = 0; k < n; k++) woken += notify(a, 1);
      return woken === 0;
    },
  },
  {
    id: 'atomics-notify',
    name: 'Atomics.notify(i32, i, 1)',
    run(n) {
      const m = i32;
      const i = LAYOUT.NOTIFY;
      let woken = 0;
      for (let k = 0; k < n; k++) woken += Atomics.notify(m, i, 1);
      return woken === 0;
    },
  },
];

/** Interleaved runs of each variant: one warm-up each, then `runs` timed. */
function timeSingleThread(variants, n, runs) {
  for (const v of variants) if (!v.run(Math.ceil(n / 4))) fail(`${v.name}: wrong result in warm-up`);
  const all = [];
  for (let r = 0; r < runs; r++) {
    for (const v of variants) {
      const t0 = performance.now();
      const ok = v.run(n);
      const nsPer = ((performance.now() - t0) * 1e6) / n;
      if (!ok) fail(`${v.name}: wrong result`);
      all.push({ variant: v.id, run: r, calls: n, nsPer });
    }
  }
  return all;
}

function summarizeSingle(variants, runs, baselineId) {
  const base = median(runs.filter((r) => r.variant === baselineId).map((r) => r.nsPer));
  return variants.map((v) => {
    const xs = runs.filter((r) => r.variant === v.id).map((r) => r.nsPer);
    const m = median(xs);
    return { variant: v.id, name: v.name, runs: xs.length, median: m, min: Math.min(...xs), max: Math.max(...xs), vsBaseline: m / base };
  });
}

// ------------------------------------------------------------------ main

const started = new Date();
const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  node: process.version,
  v8: process.versions.v8,
  platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  loadavg: os.loadavg(),
};
log(`bench/wasm: ${machine.cpus} CPUs, node ${machine.node}, load ${machine.loadavg.map((x) => x.toFixed(2)).join(' ')}${QUICK ? ', --quick' : ''}`);

// 2 and 3 first, on this thread, while the pool does not exist yet.
log(`uncontended: ${SETTINGS.singleRuns} x ${SETTINGS.uncontendedPairs} lock+unlock pairs per variant`);
const uncontendedRuns = timeSingleThread(UNCONTENDED, SETTINGS.uncontendedPairs, SETTINGS.singleRuns);
const uncontended = summarizeSingle(UNCONTENDED, uncontendedRuns, 'floor');
log(`notify without waiters: ${SETTINGS.singleRuns} x ${SETTINGS.notifyCalls} calls per variant`);
const notifyRuns = timeSingleThread(NOTIFY, SETTINGS.notifyCalls, SETTINGS.singleRuns);
const notify = summarizeSingle(NOTIFY, notifyRuns, 'atomics-notify');
const floorNs = uncontended.find((s) => s.variant === 'floor').median;
const floorWasmNs = uncontended.find((s) => s.variant === 'floor-wasm').median;

const maxWorkers = Math.max(...SETTINGS.workerCounts);
log(`throughput: starting ${maxWorkers} workers`);
const workerData = { module, memory, shared, layout: LAYOUT, glueUrl: GLUE_URL.href };
const pool = Array.from({ length: maxWorkers }, (_, i) => new PoolWorker(i, workerData));
await withTimeout(Promise.all(pool.map((w) => w.expect('ready'))), ROUND_TIMEOUT_MS, 'worker start');

for (const lock of LOCKS) await round(pool, lock, maxWorkers, SETTINGS.warmupMs); // warm-up, not kept

const rounds = [];
const totalRounds = SETTINGS.rounds * SETTINGS.workerCounts.length * LOCKS.length;
for (let r = 0; r < SETTINGS.rounds; r++) {
  for (const n of SETTINGS.workerCounts) {
    for (const lock of LOCKS) {
      const res = await round(pool, lock, n, SETTINGS.roundMs);
      rounds.push({ round: r, ...res });
      const cpus = `CPUs ours ${res.selfCpus.toFixed(2)}${res.otherCpus === null ? '' : ` others ${res.otherCpus.toFixed(2)}`}`;
      log(`  [${String(rounds.length).padStart(String(totalRounds).length)}/${totalRounds}] round ${r + 1} ${n}w ${lock.name.padEnd(32)} ${si(res.opsPerSec).padStart(6)} ops/s  ${cpus}  workers ${res.perWorker.map((w) => si(w.opsPerSec)).join(' ')}`);
    }
  }
}
await Promise.all(pool.map((w) => w.stop()));
const throughput = summarizeThroughput(rounds);
const elapsedS = (Date.now() - started.getTime()) / 1e3;

// ---------------------------------------------------------------- report

const print = (s = '') => process.stdout.write(`${s}\n`);
const baseShort = 'vs parklot (wasm)';

print(`# parklot wasm benchmark (${started.toISOString()}${QUICK ? ', --quick' : ''})`);
print();
print(`machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.platform}, node ${machine.node} (V8 ${machine.v8}), load average at start ${machine.loadavg.map((x) => x.toFixed(2)).join(' ')}`);
print();
print(`## 1. Lock throughput: 1, 2, 4 workers on one lock`);
print();
print(`${SETTINGS.rounds} rounds of ${SETTINGS.roundMs} ms per worker, interleaved across locks; plain counter checked equal to the acquisitions every round.`);
print();
const tRows = [];
throughput.forEach((s, i) => {
  if (i > 0 && throughput[i - 1].workers !== s.workers) tRows.push(null);
  tRows.push([
    s.workers, s.name, si(s.median), `${si(s.min)}–${si(s.max)}`,
    s.lock === BASELINE.id ? '1.00x' : `${s.vsBaseline.toFixed(2)}x`,
    si(s.workerMin), si(s.workerMax), s.fairness.toFixed(2), s.worstFairness.toFixed(2),
    s.selfCpus.toFixed(2), s.otherCpus === null ? '-' : s.otherCpus.toFixed(2),
  ]);
});
print(markdownTable([
  { title: 'workers' }, { title: 'lock', left: true }, { title: 'ops/s median' }, { title: 'min–max' },
  { title: baseShort }, { title: 'worker min/s' }, { title: 'worker max/s' }, { title: 'fair' }, { title: 'worst' },
  { title: 'CPUs ours' }, { title: 'CPUs others' },
], tRows));
print();
print(`floor, measured in this run on one thread: an uncontended CAS + store costs ${ns(floorWasmNs)} ns inside wasm (${si(1e9 / floorWasmNs)} pairs/s, the limit for the wasm-loop rows) and ${ns(floorNs)} ns as Atomics.compareExchange + Atomics.store from JS (${si(1e9 / floorNs)} pairs/s, the limit for the JS Atomics mutex).`);
print();
print(`## 2. Uncontended lock + unlock from JS, one thread`);
print();
print(`median of ${SETTINGS.singleRuns} runs of ${si(SETTINGS.uncontendedPairs)} pairs, interleaved.`);
print();
print(markdownTable(
  [{ title: 'operation', left: true }, { title: 'ns/pair median' }, { title: 'min–max' }, { title: 'vs floor (JS)' }],
  uncontended.map((s) => [s.name, ns(s.median), `${ns(s.min)}–${ns(s.max)}`, `${s.vsBaseline.toFixed(2)}x`]),
));
print();
print(`## 3. Notify with no waiter, one thread`);
print();
print(`median of ${SETTINGS.singleRuns} runs of ${si(SETTINGS.notifyCalls)} calls, interleaved.`);
print();
print(markdownTable(
  [{ title: 'call', left: true }, { title: 'ns/call median' }, { title: 'min–max' }, { title: 'vs Atomics.notify' }],
  notify.map((s) => [s.name, ns(s.median), `${ns(s.min)}–${ns(s.max)}`, `${s.vsBaseline.toFixed(2)}x`]),
));
print();
print(`### Legend`);
print();
print(`- **wasm loop**: peer_count_loop runs lock / ++counter / unlock inside wasm, ${SETTINGS.peerChunk} iterations per call from JS; **JS loop**: the loop is JS, ${SETTINGS.jsChunk} iterations between clock reads.`);
print(`- **JS Atomics mutex**: Drepper's "Futexes Are Tricky" mutex (states 0/1/2, CAS fast path, Atomics.wait/notify) on an Int32Array; **via glue**: glue.lock(addr) / glue.unlock(addr) per operation, what the npm package pays per call before its own checks.`);
print(`- **ops/s**: acquisitions per second, all workers together (total / (last worker end − first worker start)); median and min–max over rounds.`);
print(`- **${baseShort}**: median over parklot::Lock (wasm loop)'s median at the same worker count; >1 is faster.`);
print(`- **worker min/max**: slowest and fastest single worker's acquisitions per second (median over rounds); **fair**: slowest / fastest (median over rounds; 1 fair, 0 starved); **worst**: its lowest round.`);
print(`- **CPUs ours / others**: CPU-seconds per wall second during the round (median over rounds): this process's (all workers), and every other process's (Linux /proc/stat, steal included; '-' elsewhere). With 2 CPUs, contended rounds where ours is near 1 ran mostly one worker at a time (parked losers, or others holding a CPU); compare rounds in the JSON.`);
print(`- **vs floor (JS)**: ns/pair over the JS floor's; that floor is the cheapest a lock written with JS Atomics can be (each Atomics call is a builtin call), while a call into wasm can come in under it. The wasm floor is a hand-assembled loop of one CAS + one store inside wasm.`);
print(`- This machine has ${machine.cpus} CPUs: 4 workers oversubscribe it when it has 2, and other load shows as spread; compare ratios within this run, not absolute numbers across runs.`);

mkdirSync(RESULTS_DIR, { recursive: true });
const jsonUrl = new URL(`wasm-${started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}.json`, RESULTS_DIR);
writeFileSync(jsonUrl, `${JSON.stringify({
  benchmark: 'bench/wasm/run.mjs',
  date: started.toISOString(),
  elapsedSeconds: elapsedS,
  machine,
  settings: SETTINGS,
  peerNames,
  locks: LOCKS.map((l) => ({ id: l.id, name: l.name, how: l.how, kind: l.kind ?? null })),
  floorNs,
  floorWasmNs,
  throughput: { summaries: throughput, rounds },
  uncontended: { summaries: uncontended, runs: uncontendedRuns },
  notify: { summaries: notify, runs: notifyRuns },
}, null, 2)}\n`);
log(`bench/wasm: done in ${elapsedS.toFixed(1)} s; every round in ${fileURLToPath(jsonUrl)}`);
