// Experiment 1, microcontention: every peer's acquisitions per second with
// 1 to 16 workers on one lock, seed 000's critical section, rounds
// interleaved across peers (round r runs every peer at every worker count
// before round r+1 starts), an exact counter check every round.
import { CELLS, fail, gatedRound, lockRound, log, startChildPeer } from './pool.mjs';
import { buildEmscriptenPeer, runEmscriptenRounds } from './emscripten.mjs';
import { si } from './table.mjs';
import { startLineProbe } from '../line-probe.mjs';

/** Short stable ids for the report, by peer_names() entry. */
const idOf = (name) => name.replace(/^parklot::/, 'parklot-').replace(/^std::sync::/, 'std-').replace(/[<>:]+/g, '').toLowerCase();

/**
 * The peers: every lock in the wasm module (its loop inside wasm), the
 * pure-JS mutex and parklot's Lock called from JS, then V8's Atomics.Mutex,
 * the multithreading package's Mutex and Emscripten's pthread_mutex_t, each
 * in a process of its own.
 */
function inProcessPeers({ glue, memory, shared, packageLock }) {
  // What the wasm peers guard: one Guarded on its own 64-byte line.
  const dataAddr = glue.alloc(64, 64);
  const wasmData = () => new Float64Array(memory.buffer, dataAddr, 2); // re-read: memory may grow
  const wasmCount = () => Number(new BigUint64Array(memory.buffer, dataAddr, 1)[0]);
  const jsData = (cell) => new Float64Array(shared, cell, 2);
  const lockFree = (addr) => () => !glue.is_locked(addr);

  const peers = glue.peer_names().split(',').map((name, kind) => {
    const lockAddr = glue.peer_new(kind);
    return {
      id: idOf(name), name: `${name} (wasm)`, how: 'peer', kind, lockAddr, dataAddr,
      reset: () => wasmData().fill(0),
      counter: wasmCount,
      // Only parklot's Lock has an export that peeks; the counter check stands for all.
      isFree: kind === 0 ? lockFree(lockAddr) : () => true,
    };
  });
  const glueLock = glue.peer_new(0);
  peers.push(
    {
      id: 'js-mutex', name: 'JS Atomics mutex', how: 'js',
      reset: () => jsData(CELLS.JS_DATA).fill(0),
      counter: () => jsData(CELLS.JS_DATA)[0],
      isFree: () => Atomics.load(new Int32Array(shared), CELLS.MUTEX / 4) === 0,
    },
    {
      id: 'parklot-glue', name: 'parklot::Lock via glue (JS loop)', how: 'glue', lockAddr: glueLock,
      reset: () => jsData(CELLS.GLUE_DATA).fill(0),
      counter: () => jsData(CELLS.GLUE_DATA)[0],
      isFree: lockFree(glueLock),
    },
    {
      id: 'parklot-package', name: 'parklot Lock via the npm package (JS loop)', how: 'package',
      reset: () => jsData(CELLS.PACKAGE_DATA).fill(0),
      counter: () => jsData(CELLS.PACKAGE_DATA)[0],
      isFree: () => !packageLock.isLocked(),
    },
  );
  return peers;
}

function checkCounter(what, counter, total) {
  if (counter !== total) fail(`${what}: counter is ${counter}, workers counted ${total} acquisitions`);
}

/**
 * Runs the experiment; resolves to {peers, skipped, rounds}: rounds are raw
 * ({round, peer, workers, total, wallMs, opsPerSec, cpus, perWorker}), one
 * per peer, worker count and round.
 */
export async function lockThroughput(ctx) {
  const { settings: s, pool, shared } = ctx;
  const maxWorkers = Math.max(...s.workerCounts);
  const timeoutMs = s.roundTimeoutMs;
  const peers = inProcessPeers(ctx);
  const skipped = [];

  log('throughput: starting the Atomics.Mutex process (node --harmony-struct)');
  const v8 = await startChildPeer(new URL('./v8-mutex.mjs', import.meta.url), {
    name: 'Atomics.Mutex', execArgv: ['--harmony-struct'], args: [maxWorkers],
  });
  if (v8.skipped) {
    skipped.push({ peer: 'V8 Atomics.Mutex', reason: v8.skipped });
    log(`throughput: SKIPPED V8 Atomics.Mutex: ${v8.skipped}`);
  } else {
    peers.push({ id: 'v8-mutex', name: 'V8 Atomics.Mutex', how: 'v8' });
  }
  const mt = ctx.multithreading;
  if (mt.available) peers.push({ id: 'multithreading-mutex', name: 'multithreading Mutex (npm)', how: 'multithreading' });
  let emscripten = null;
  try {
    const built = buildEmscriptenPeer(maxWorkers, log);
    if (built.skipped) {
      skipped.push({ peer: 'Emscripten pthread_mutex_t', reason: built.skipped });
      log(`throughput: SKIPPED Emscripten pthread_mutex_t: ${built.skipped}`);
    } else {
      emscripten = { id: 'emscripten-pthread', name: 'Emscripten pthread_mutex_t', how: 'emscripten' };
      peers.push(emscripten);
    }
  } catch (e) {
    fail(e.message);
  }

  /** One round of one in-process, V8 or multithreading peer; the raw result, or null if the peer was skipped. */
  async function round(peer, n, ms) {
    const what = `${peer.name}, ${n} workers`;
    if (peer.how === 'multithreading') {
      const m = await mt.ask({ type: 'round', n, durationMs: ms, work: s.work, timeoutMs }, timeoutMs + 5_000, what);
      if (!m) return null;
      const r = lockRound(m.done, m.cpus);
      checkCounter(what, m.counter, r.total);
      if (!m.free) fail(`${what}: the lock is still held after the round`);
      return r;
    }
    if (peer.how === 'v8') {
      const cmd = { type: 'round', n, durationMs: ms, work: s.work, timeoutMs };
      const m = await v8.request(cmd, timeoutMs + 5_000, what).catch((e) => fail(e.message));
      const r = lockRound(m.done, m.cpus);
      checkCounter(what, m.counter, r.total);
      return r;
    }
    peer.reset();
    const task = { task: 'lock', how: peer.how, kind: peer.kind, lockAddr: peer.lockAddr, dataAddr: peer.dataAddr, durationMs: ms, work: s.work };
    const { done, cpus } = await gatedRound(pool, n, task, shared, timeoutMs, what).catch((e) => fail(e.message));
    const r = lockRound(done, cpus);
    checkCounter(what, peer.counter(), r.total);
    if (!peer.isFree()) fail(`${what}: the lock is still held after the round`);
    return r;
  }

  const stepped = peers.filter((p) => p !== emscripten);
  const total = s.rounds * s.workerCounts.length * peers.length;
  const rounds = [];
  // The cache line's round trip between the CPUs before every round (see line-probe.mjs).
  const lineProbe = await startLineProbe();
  const record = (r, peer, n, res, lineNs) => {
    rounds.push({ round: r, peer: peer.id, workers: n, ...res, lineNs });
    const workers = res.perWorker.map((w) => si(w.opsPerSec)).join(' ');
    log(`${rounds.length}/${total}: round ${r + 1}, ${n} workers, ${peer.name}: ${si(res.opsPerSec)} acq/s (workers ${workers})`);
  };

  log(`throughput: warm-up, ${s.warmupMs} ms per peer with ${maxWorkers} workers`);
  for (const peer of stepped) await round(peer, maxWorkers, s.warmupMs);
  for (let r = 0; r < s.rounds; r++) {
    for (const n of s.workerCounts) {
      for (const peer of stepped) {
        const lineNs = lineProbe.measure();
        const res = await round(peer, n, s.roundMs);
        if (res) record(r, peer, n, res, lineNs);
      }
    }
    if (emscripten) {
      const lineNs = lineProbe.measure();
      // One process per round (Emscripten's start-up takes about 0.5 s), warmed up first.
      const batch = await runEmscriptenRounds({
        durationMs: s.roundMs, work: s.work, warmupMs: s.warmupMs, threadCounts: s.workerCounts,
        timeoutMs: timeoutMs + s.workerCounts.length * s.roundMs + 10_000,
      }).catch((e) => fail(e.message));
      for (const b of batch) {
        const done = b.counts.map((count, i) => ({ count, start: b.startMs[i], end: b.endMs[i] }));
        const res = lockRound(done, null);
        checkCounter(`${emscripten.name}, ${b.threads} threads`, b.counter, res.total);
        record(r, emscripten, b.threads, res, lineNs);
      }
    }
  }
  await lineProbe.stop();
  if (!v8.skipped) await v8.stop();
  return {
    peers: peers.map(({ id, name, how, kind }) => ({ id, name, how, kind: kind ?? null })),
    skipped,
    rounds,
  };
}
