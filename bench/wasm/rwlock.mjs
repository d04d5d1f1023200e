// The "wasm-node-rwlock" suite: experiment 6 of BENCHMARKS.md (seed 003's
// protocol) in Node workers, and the semaphore and barrier beside it.
//
//   bash scripts/build-wasm.sh && npm run build:ts
//   node bench/wasm/rwlock.mjs [--quick] [--out DIR] [--pkg NAME=PATH ...]
//        [--workers 2,4,8,16] [--rounds 5] [--only ID,...]
//
// --pkg: another build of the npm package (its js/dist/index.js), whose
// rt.rwLock() runs beside this tree's in both policies, rounds interleaved
// (e.g. the build before a change to the lock); repeatable. --workers,
// --rounds: instead of the defaults; --only: just these peers (ids as in
// the JSON file, `js-parklot-writers@NAME` for a --pkg build's).
//
// 1. Reader-writer locks, half the workers reading and half writing, short
//    critical sections, 2 to 16 workers: inside wasm (the loop in
//    wasm/src/bench_rwlock.rs), parklot's RwLock in both policies against
//    std::sync::RwLock compiled into the same module; from JS (one call per
//    read()/write(), as a web developer calls them), the npm package's
//    rt.rwLock() in both policies against the multithreading package's
//    RwLock. Every worker's rate: a starved one shows as next to nothing.
// 2. Semaphore: every worker acquires and releases one of n/2 permits;
//    parklot's rt.semaphore() against multithreading's Semaphore.
// 3. Barrier: all workers pass it together, again and again; passes per
//    second of parklot's rt.barrier() against multithreading's Barrier.
// Rounds interleave across peers (round r runs every peer at every worker
// count before round r+1), medians with min–max; every round checks its
// invariants (rwlock-rounds.mjs) and a broken one fails the run. A round
// still running long after its time is a deadlock: recorded with the lock's
// state and the workers that never answered (replaced by new ones), the
// other rounds go on, the report says so and the run exits 1
// (rwlock-hang.mjs repeats parklot's rounds alone until one hangs). The
// multithreading peers run in a process of their own (multithreading.mjs).
// Writes DIR/wasm-node-rwlock.json and .md (DIR: bench/results); bench/run.mjs
// renders the charts and, with native-rwlock.json, the combined rwlock.md.
import { PoolWorker, SHARED_BYTES, fail, gatedRound, log, startPool, withTimeout } from './pool.mjs';
import { loadWasm, otherPackages, packageRuntime, startRun, suiteArgs, writeResults } from './module.mjs';
import { startMultithreading } from './multithreading.mjs';
import { checkRound, isWriter, jsVersion, permitsFor, prepareCells, taskOf } from './rwlock-rounds.mjs';
import { report } from './rwlock-report.mjs';
import { si } from './table.mjs';

const args = suiteArgs({
  pkg: { type: 'string', multiple: true },
  workers: { type: 'string' },
  rounds: { type: 'string' },
  only: { type: 'string' },
});
const { quick: QUICK, outDir: OUT_DIR } = args;
const ONLY = args.only?.split(',');

const SETTINGS = {
  workerCounts: args.workers ? args.workers.split(',').map(Number) : QUICK ? [2, 4] : [2, 4, 8, 16],
  rounds: args.rounds ? Number(args.rounds) : QUICK ? 1 : 5,
  roundMs: QUICK ? 40 : 400, // each worker's running time per round
  warmupMs: QUICK ? 20 : 100, // one discarded round per peer, all workers
  // A round still running after this is a deadlock: a starved worker gets
  // in as soon as the others stop, a few ms after the round's end.
  roundTimeoutMs: 10_000,
};

// ---------------------------------------------------------------- setup

const resultsOf = startRun('wasm-node-rwlock', QUICK, null);
const { module, memory, glue, glueUrl, packageUrl } = await loadWasm(['rw_peer_loop', 'rw_peer_new', 'rwlock_state']);
const shared = new SharedArrayBuffer(SHARED_BYTES);

const Runtime = await packageRuntime();
const rt = await Runtime.create();
// Each --pkg build with a Runtime of its own (its own module and memory).
const others = [];
for (const { name, url } of otherPackages(args.pkg)) {
  const Other = await packageRuntime(url);
  others.push({ name, url, rt: await Other.create() });
}
const maxWorkers = Math.max(...SETTINGS.workerCounts);
const skipped = [];
const mt = await startMultithreading(maxWorkers, 0, skipped, 'multithreading (npm) RwLock, Semaphore and Barrier');
log(`wasm-node-rwlock: starting ${maxWorkers} workers`);
const workerData = {
  module, memory, shared, glueUrl, packageUrl, packageHandle: rt.handle(),
  otherPackages: others.map(({ name, url, rt: o }) => ({ name, url, handle: o.handle() })),
};
const pool = await startPool(maxWorkers, workerData, SETTINGS.roundTimeoutMs);
const deadlocks = [];

/** Ends the workers stuck in a deadlock and puts new ones in their places. */
async function replaceWorkers(indexes) {
  for (const i of indexes) {
    await withTimeout(pool[i].terminate(), 10_000, `ending stuck worker ${i}`).catch((e) => fail(e.message));
    pool[i] = new PoolWorker(i, workerData);
    await withTimeout(pool[i].expect('ready'), SETTINGS.roundTimeoutMs, `worker ${i} restart`).catch((e) => fail(e.message));
  }
}

// ---------------------------------------------------------------- peers

/**
 * Each peer of each experiment: `make(n)` builds a new lock for one round of
 * n workers and says how the workers drive it ({driver, version(), free(),
 * state?() for a deadlock's report, dispose?()}); the multithreading peers build theirs in their process.
 * `base`: the peer whose total rate the ratios in the report divide by.
 */
function peers() {
  const dataAddr = glue.alloc(64, 64); // the wasm peers' Versioned, on its own line
  const wasmVersion = () => new BigUint64Array(memory.buffer, dataAddr, 1); // re-read: memory may grow
  const wasmRw = glue.rw_peer_names().split(';').map((name, kind) => ({
    id: `wasm-${['parklot-writers', 'parklot-readers', 'std'][kind]}`, name: `${name} (wasm)`, layer: 'wasm', base: 'wasm-parklot-writers',
    make() {
      wasmVersion()[0] = 0n;
      const lockAddr = glue.rw_peer_new(kind);
      if (!lockAddr) fail(`rw_peer_new(${kind}) failed`);
      return {
        driver: { how: 'wasm', kind, lockAddr, dataAddr },
        version: () => Number(wasmVersion()[0]),
        // parklot's lock word is the toolkit's RawRwLock: rwlock_state reads it.
        free: () => kind === 2 || glue.rwlock_state(lockAddr) === 0,
        state: () => `word 0x${new Uint32Array(memory.buffer, lockAddr, 1)[0].toString(16)}${kind === 2 ? ' (std)' : ` (runtime/src/rwlock.rs's state table)`}`,
        dispose: () => glue.rw_peer_free(kind, lockAddr),
      };
    },
  }));
  const builds = [{ name: null, rt }, ...others];
  const packageRw = builds.flatMap(({ name, rt: buildRt }) => ['prefer-writers', 'prefer-readers'].map((policy) => ({
    id: `js-parklot-${policy.slice(7)}${name ? `@${name}` : ''}`,
    name: `parklot rt.rwLock(), ${policy} (npm, JS calls${name ? `, build ${name}` : ''})`, layer: 'js', base: 'js-parklot-writers',
    make() {
      const l = buildRt.rwLock({ policy });
      return {
        driver: { how: 'package', lockAddr: l.address, ...(name ? { pkg: name } : {}) }, version: () => jsVersion(shared),
        free: () => l.state().held === 'free', state: () => JSON.stringify(l.state()),
      };
    },
  })));
  const mtPeer = (id, name, base) => ({ id, name, layer: 'js', base, how: 'multithreading' });
  return {
    rw: [...wasmRw, ...packageRw, mtPeer('js-mt', 'multithreading RwLock (npm, JS calls)', 'js-parklot-writers')],
    semaphore: [
      {
        id: 'sem-parklot', name: 'parklot rt.semaphore() (npm)', layer: 'js', base: 'sem-parklot',
        make(n) {
          const s = rt.semaphore(permitsFor(n));
          return { driver: { how: 'package', address: s.address }, free: () => s.available() === permitsFor(n) };
        },
      },
      mtPeer('sem-mt', 'multithreading Semaphore (npm)', 'sem-parklot'),
    ],
    barrier: [
      {
        id: 'barrier-parklot', name: 'parklot rt.barrier() (npm)', layer: 'js', base: 'barrier-parklot',
        make(n) {
          const b = rt.barrier(n);
          // No state to read back: the workers' equal pass counts are the check.
          return { driver: { how: 'package', address: b.address }, free: () => true };
        },
      },
      mtPeer('barrier-mt', 'multithreading Barrier (npm)', 'barrier-parklot'),
    ],
  };
}

const roundName = (r) => (r < 0 ? 'warm-up' : `round ${r + 1}`);

/** Round r (-1: the warm-up) of `peer` in experiment `exp` with n workers; the checked result, or null (its peer skipped, or a deadlock). */
async function round(exp, peer, n, ms, r) {
  const what = `${exp}: ${peer.name}, ${n} workers`;
  const timeoutMs = SETTINGS.roundTimeoutMs;
  if (peer.how === 'multithreading') {
    const m = await mt.ask({ type: 'experiment6', task: exp, n, durationMs: ms, timeoutMs }, timeoutMs + 5_000, what);
    return m && checkRound(exp, m.done, m, what);
  }
  prepareCells(shared);
  const made = peer.make(n);
  const answer = await gatedRound(pool, n, taskOf(exp, n, ms, made.driver), shared, timeoutMs, what).catch((e) => e);
  if (answer instanceof Error) {
    if (!answer.silent?.length) fail(answer.message);
    // A deadlock: what the lock looked like then, and who never came back.
    const silent = answer.silent.map((i) => `${i} (${exp === 'rw' ? (isWriter(i) ? 'writer' : 'reader') : 'worker'})`);
    deadlocks.push({ experiment: exp, peer: peer.id, name: peer.name, workers: n, round: r, silent, lock: made.state?.() ?? null });
    log(`DEADLOCK: ${what}, ${roundName(r)}: no answer in ${timeoutMs} ms from worker(s) ${silent.join(', ')}; the lock: ${made.state?.() ?? 'unknown'}`);
    await replaceWorkers(answer.silent);
    return null; // the lock is left as it is: a stuck thread's record may still sit in its queue
  }
  const { done, cpus } = answer;
  const res = checkRound(exp, done, { version: made.version?.(), free: made.free(), cpus }, what);
  made.dispose?.();
  return res;
}

// ---------------------------------------------------------- experiments

const all = peers();
const experiments = Object.keys(all);
const live = (exp) => all[exp].filter((p) => (p.how !== 'multithreading' || mt.available) && (!ONLY || ONLY.includes(p.id)));
log(`wasm-node-rwlock: warm-up, ${SETTINGS.warmupMs} ms per peer with ${maxWorkers} workers`);
for (const exp of experiments) for (const peer of live(exp)) await round(exp, peer, maxWorkers, SETTINGS.warmupMs, -1);

const rounds = [];
const total = SETTINGS.rounds * SETTINGS.workerCounts.length * experiments.reduce((s, e) => s + live(e).length, 0);
for (let r = 0; r < SETTINGS.rounds; r++) {
  for (const n of SETTINGS.workerCounts) {
    for (const exp of experiments) {
      for (const peer of live(exp)) {
        const res = await round(exp, peer, n, SETTINGS.roundMs, r);
        if (!res) continue;
        const { perWorker, ...kept } = res;
        rounds.push({ experiment: exp, round: r, peer: peer.id, workers: n, ...kept, counts: perWorker.map((w) => w.count) });
        const side = (xs) => (xs.length ? `${si(Math.min(...xs))}–${si(Math.max(...xs))}` : '-');
        log(`${rounds.length}/${total}: round ${r + 1}, ${n} workers, ${exp}, ${peer.name}: ${si(res.opsPerSec)}/s (readers ${side(res.readers)}, writers ${side(res.writers)})`);
      }
    }
  }
}
await Promise.all(pool.map((w) => w.stop()));
await mt.stop();
rt.close();
for (const o of others) o.rt.close();

// -------------------------------------------------------------- output

const results = resultsOf({
  params: SETTINGS,
  skipped,
  deadlocks,
  peers: Object.fromEntries(experiments.map((e) => [e, all[e].map(({ id, name, layer, base }) => ({ id, name, layer, base }))])),
  rounds,
});
const { summaries, charts, markdown } = report(results);
writeResults(OUT_DIR, { ...results, summaries, charts }, markdown);
if (deadlocks.length) fail(`${deadlocks.length} round(s) deadlocked: ${deadlocks.map((d) => `${d.name}, ${d.workers} workers, ${roundName(d.round)}`).join('; ')} (the results say so)`);
