// parklot's wasm benchmark suite in Node ("wasm-node"): the threaded wasm
// module driven by worker_threads on one shared memory, side by side with
// the other locks a wasm or JS program can use, and parklot's wait/notify
// against the engine's. Method: BENCHMARKS.md (interleaved rounds, medians
// with min–max, per-worker min/max, an exact counter check every round, the
// floor next to the results).
//
//   bash scripts/build-wasm.sh && node bench/wasm/run.mjs [--quick] [--out DIR]
//
// Writes DIR/wasm-node.json (machine, parameters, every round, the
// ChartSpecs bench/chart.mjs renders) and DIR/wasm-node.md (the tables),
// DIR defaulting to bench/results; prints the markdown to stdout and the
// progress to stderr. --quick is a smoke run (about 20 s): it checks every
// counter and writes every file, but its numbers are not measurements.
//
// 1. throughput.mjs: lock throughput with 1, 2, 4, 8, 16 workers (every peer;
//    --quick: 1 to 8)
// 2. single.mjs: uncontended lock + unlock, and the floor
// 3. single.mjs: notify without a waiter, wait that returns "not-equal"
// 4. ping-pong.mjs: wake latency between two sleeping workers
// The multithreading package's Mutex and Condvar (multithreading.mjs) take
// part in 1, 2 and 4 from a process of their own.
import { SHARED_BYTES, log, startPool } from './pool.mjs';
import { loadWasm, packageRuntime, startRun, suiteArgs, writeResults } from './module.mjs';
import { lockThroughput } from './throughput.mjs';
import { uncontended, waitNotify } from './single.mjs';
import { PAIRS, pingPong } from './ping-pong.mjs';
import { mainWake } from './main-wake.mjs';
import { startMultithreading } from './multithreading.mjs';
import { emccVersion } from './emscripten.mjs';
import { report } from './report.mjs';

const { quick: QUICK, outDir: OUT_DIR } = suiteArgs();

const SETTINGS = {
  workerCounts: QUICK ? [1, 2, 4, 8] : [1, 2, 4, 8, 16],
  work: 1, // add-and-multiply steps in the critical section (seed 000's microcontention)
  rounds: QUICK ? 2 : 5,
  roundMs: QUICK ? 80 : 500, // each worker's running time per round
  warmupMs: QUICK ? 30 : 100, // one discarded round per peer, all workers
  singleRuns: QUICK ? 3 : 5, // interleaved runs of each one-thread measurement
  uncontendedPairs: QUICK ? 200_000 : 2_000_000,
  waitNotifyCalls: QUICK ? 100_000 : 1_000_000,
  pingPongTrips: QUICK ? 200 : 2000, // round trips per ping-pong round
  pingPongWarmupTrips: QUICK ? 50 : 200,
  pingPongSweep: true, // also sweep the spin-before-sleep limit (one pair, wasm)
  wakeTickMs: 10, // how often the main thread is woken through each API
  wakeRoundMs: QUICK ? 300 : 2000, // each main-thread wake-up round
  roundTimeoutMs: 30_000, // a round still running after this is a deadlock
};

// ---------------------------------------------------------------- setup

const resultsOf = startRun('wasm-node', QUICK, emccVersion());
const { module, memory, glue, glueUrl, packageUrl } = await loadWasm(['peer_count_loop', 'bench_notify_loop', 'bench_ping_pong']);
const shared = new SharedArrayBuffer(SHARED_BYTES);

// --------------------------------------------------------- experiments

const ctx = { settings: SETTINGS, glue, memory, shared, pool: null };
const maxWorkers = Math.max(...SETTINGS.workerCounts);
log(`throughput: starting ${maxWorkers} workers`);
// The npm package as a user runs it: a Runtime of its own (another memory),
// attached in every worker, one Lock whose lock()/unlock() the workers call.
const Runtime = await packageRuntime();
const packageRt = await Runtime.create();
const packageLock = packageRt.lock();
ctx.packageLock = packageLock;
ctx.packageRt = packageRt;
const skipped = [];
ctx.multithreading = await startMultithreading(maxWorkers, Math.max(...PAIRS), skipped);
ctx.pool = await startPool(maxWorkers, {
  module, memory, shared, glueUrl,
  packageUrl, packageHandle: packageRt.handle(), packageLockAddress: packageLock.address,
}, SETTINGS.roundTimeoutMs);
const throughputResult = await lockThroughput(ctx);
log(`ping-pong: ${SETTINGS.rounds} rounds of ${SETTINGS.pingPongTrips} round trips per variant and pair count, and the spin-limit sweep`);
const pingPongResult = await pingPong(ctx);
log(`main thread woken through waitAsync: ${SETTINGS.rounds} rounds of ${SETTINGS.wakeRoundMs} ms, a wake-up per API every ${SETTINGS.wakeTickMs} ms`);
const mainWakeResult = await mainWake({ ...ctx, packageUrl });
// One-thread experiments last, while the workers sleep: by now threads have
// parked, so the ParkingLot's table exists, as in a program that has run a
// while (before any park, a notify finds no table and returns sooner).
log(`uncontended: ${SETTINGS.singleRuns} x ${SETTINGS.uncontendedPairs} lock+unlock pairs per variant`);
const uncontendedResult = await uncontended(ctx);
log(`wait/notify without waiters: ${SETTINGS.singleRuns} x ${SETTINGS.waitNotifyCalls} calls per variant`);
const waitNotifyResult = waitNotify(ctx);
await Promise.all(ctx.pool.map((w) => w.stop()));
await ctx.multithreading.stop();
packageRt.close();

// -------------------------------------------------------------- output

const results = resultsOf({
  params: SETTINGS,
  skipped: [...throughputResult.skipped, ...skipped],
  experiments: {
    throughput: throughputResult,
    uncontended: uncontendedResult,
    waitNotify: waitNotifyResult,
    pingPong: pingPongResult,
    mainWake: mainWakeResult,
  },
});
const { summaries, goals, charts, markdown } = report(results);
writeResults(OUT_DIR, { ...results, summaries, goals, charts }, markdown);
