// Compares builds of the wasm module by lock throughput, fairly on a host
// whose CPUs change under it (bench/line-probe.mjs): each build runs in a
// process of its own, the processes take turns, and every round measures the
// line between the CPUs before and after, so that rounds are grouped by the
// state they ran in (a round whose two probes disagree is dropped). Within a
// round the peers run back to back, so the ratio of the first peer to the
// second cancels the host's drift; that ratio is the number to compare.
//
// Loading several builds into one process is not fair: there, two copies of
// the same build differed by up to 17% for parklot::Lock, by load order.
//
//   node bench/wasm/compare-builds.mjs [--cycles 6] [--seconds 14] [--workers 2]
//        [--peers parklot::Lock,std::sync::Mutex] A.wasm B.wasm ...
//
// A build is a js/wasm-pkg-bench/parklot_wasm_bg.wasm (the module with the
// peers' loop) from scripts/build-wasm.sh (copy it aside before building the
// next). Prints a table per line state: each peer's median rate and the
// median ratio of the first peer to the second.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { SLOW_LINE_NS, startLineProbe } from '../line-probe.mjs';
import { markdownTable, median } from './table.mjs';

const GLUE_URL = new URL('../../js/wasm-pkg-bench/parklot_wasm.js', import.meta.url).href;
const ROUND_MS = 300;
const CHUNK = 4096;

if (!isMainThread) {
  // A worker: instantiate the build on the shared memory, then run rounds of
  // peer_count_loop until each round's stop flag (ctrl: [generation, kind, lock, counter, stop]).
  const { module, memory, ctrl } = workerData;
  const glue = await import(GLUE_URL);
  glue.initSync({ module, memory });
  glue.thread_init(true);
  parentPort.postMessage('ready');
  for (let seen = 0; ; ) {
    Atomics.wait(ctrl, 0, seen);
    seen = Atomics.load(ctrl, 0);
    if (seen < 0) break;
    const [kind, lock, counter] = [Atomics.load(ctrl, 1), Atomics.load(ctrl, 2), Atomics.load(ctrl, 3)];
    let n = 0;
    while (Atomics.load(ctrl, 4) === 0) {
      glue.peer_count_loop(kind, lock, counter, CHUNK, 1);
      n += CHUNK;
    }
    parentPort.postMessage(n);
  }
} else {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      cycles: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '14' },
      workers: { type: 'string', default: '2' },
      peers: { type: 'string', default: 'parklot::Lock,std::sync::Mutex' },
      child: { type: 'boolean', default: false },
    },
  });
  const opts = { seconds: Number(values.seconds), workers: Number(values.workers), peers: values.peers.split(',') };
  if (values.child) {
    await child(positionals[0], opts);
  } else {
    if (positionals.length < 1 || opts.peers.length < 2) {
      console.error('usage: node bench/wasm/compare-builds.mjs [--cycles N] [--seconds S] [--workers N] [--peers A,B,...] BUILD.wasm ...');
      process.exit(2);
    }
    if (new Set(positionals).size !== positionals.length) {
      console.error('compare-builds: a build is named twice; to compare a build with itself, copy it to a second name');
      process.exit(2);
    }
    const rounds = [];
    for (let c = 0; c < Number(values.cycles); c++) {
      for (const build of positionals) {
        const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--seconds', values.seconds, '--workers', values.workers, '--peers', values.peers, build], { encoding: 'utf8' });
        for (const line of out.trim().split('\n')) rounds.push({ build, ...JSON.parse(line) });
        process.stderr.write(`[compare-builds] cycle ${c + 1}/${values.cycles}: ${build} done\n`);
      }
    }
    process.stdout.write(report(rounds, positionals, opts.peers));
  }
}

/** One build in this process: rounds of every peer for `seconds`, one JSON line per round on stdout. */
async function child(build, { seconds, workers: count, peers }) {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 16384, shared: true });
  const module = new WebAssembly.Module(readFileSync(build));
  const glue = await import(GLUE_URL);
  glue.initSync({ module, memory });
  glue.thread_init(true);
  glue.set_cpu_count(os.availableParallelism());
  const names = glue.peer_names().split(',');
  const kinds = peers.map((p) => names.indexOf(p));
  if (kinds.includes(-1)) throw new Error(`${build} has no peer ${peers[kinds.indexOf(-1)]} (it has ${names.join(', ')})`);
  const locks = kinds.map((k) => glue.peer_new(k));
  const counter = glue.alloc(64, 64);
  const ctrl = new Int32Array(new SharedArrayBuffer(64));
  const workers = Array.from({ length: count }, () => new Worker(fileURLToPath(import.meta.url), { workerData: { module, memory, ctrl } }));
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  const probe = await startLineProbe();
  const end = Date.now() + seconds * 1000;
  for (let generation = 1; Date.now() < end; ) {
    const round = { before: probe.measure(), rates: {} };
    for (const [i, peer] of peers.entries()) {
      const counts = workers.map((w) => new Promise((resolve) => w.once('message', resolve)));
      Atomics.store(ctrl, 1, kinds[i]);
      Atomics.store(ctrl, 2, locks[i]);
      Atomics.store(ctrl, 3, counter);
      Atomics.store(ctrl, 4, 0);
      Atomics.store(ctrl, 0, generation++); // last: the workers read the rest after it
      Atomics.notify(ctrl, 0);
      const start = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ROUND_MS));
      Atomics.store(ctrl, 4, 1);
      const total = (await Promise.all(counts)).reduce((a, b) => a + b, 0);
      round.rates[peer] = total / ((performance.now() - start) / 1000);
    }
    round.after = probe.measure();
    process.stdout.write(`${JSON.stringify(round)}\n`);
  }
  await probe.stop();
  Atomics.store(ctrl, 0, -1);
  Atomics.notify(ctrl, 0);
}

/** The tables: per line state, per build, each peer's median rate and the first peer / second peer ratio. */
function report(rounds, builds, peers) {
  const state = (ns) => (ns === null ? null : ns > SLOW_LINE_NS ? 'slow' : 'fast');
  const kept = rounds.filter((r) => state(r.before) !== null && state(r.before) === state(r.after));
  const lines = [`${kept.length} of ${rounds.length} rounds kept (both probes in one state).`, ''];
  for (const s of ['fast', 'slow']) {
    const rows = builds.map((build) => {
      const rs = kept.filter((r) => r.build === build && state(r.before) === s);
      if (!rs.length) return [build, 0, ...peers.map(() => '–'), '–'];
      const rate = (p) => `${(median(rs.map((r) => r.rates[p])) / 1e6).toFixed(1)}M`;
      const ratio = median(rs.map((r) => r.rates[peers[0]] / r.rates[peers[1]]));
      return [build, rs.length, ...peers.map(rate), ratio.toFixed(3)];
    });
    lines.push(`### ${s} line`, '', markdownTable([{ title: 'build', left: true }, { title: 'rounds' }, ...peers.map((p) => ({ title: p })), { title: `${peers[0]} / ${peers[1]}` }], rows), '');
  }
  return `${lines.join('\n')}\n`;
}
