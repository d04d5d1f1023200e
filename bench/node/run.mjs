// The addon against the engine: parklot/node's wait/notify/waitAsync next to
// Node's own Atomics, in one run. Measured, never asserted.
//
//   node bench/node/run.mjs [--quick] [--out DIR] [--addon DIR]
//
// Writes DIR/node-addon.json (machine, parameters, every round, ChartSpecs)
// and DIR/node-addon.md (the tables); bench/run.mjs renders the charts.
// Experiments, each for both implementations, rounds interleaved:
// - notify with no waiter, and wait with a value that differs (ns per call);
// - ping-pong: two workers wake each other in turn (µs per round trip);
// - waitAsync wake latency on the main thread (a worker wakes it, it wakes
//   the worker back: µs per round trip);
// - scaling: 1 to 8 pairs of workers (2 to 16 workers), each pair
//   ping-ponging on its own addresses (round trips per second, all pairs);
// - waitAsync per call, in batches of 1,000 settled by one notify or by a
//   1 ms timeout (ns per call);
// - memory per pending waitAsync (10,000 waits on distinct addresses).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, arch, release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, out: { type: 'string' }, addon: { type: 'string' } },
});
// --addon DIR: another build's node/lib (a "before" copy), used as it is.
const ADDON = args.addon ? join(args.addon, 'index.cjs') : join(ROOT, 'node', 'lib', 'index.cjs');
const QUICK = args.quick;
const OUT = args.out ?? join(ROOT, 'bench', 'results', ...(QUICK ? ['quick'] : []));
const log = (m) => process.stderr.write(`${m}\n`);

if (!args.addon) execFileSync('bash', [join(ROOT, 'scripts', 'build-node.sh')], { stdio: 'ignore' });
const { createRequire } = await import('node:module');
const addon = createRequire(import.meta.url)(ADDON);
const IMPLS = { engine: Atomics, parklot: addon };
const NAMES = { engine: "engine's Atomics", parklot: 'parklot/node' };

const params = {
  rounds: QUICK ? 2 : 5,
  calls: QUICK ? 20_000 : 1_000_000,
  roundMs: QUICK ? 150 : 1000,
  latencyTrips: QUICK ? 200 : 5000,
  pairs: QUICK ? [1, 2] : [1, 2, 4, 8],
  pendingWaits: QUICK ? 1000 : 10_000,
  asyncCalls: QUICK ? 5000 : 100_000,
  asyncBatch: 1000,
};
const machine = { cpu: cpus()[0]?.model.trim(), cores: cpus().length, node: process.version, v8: process.versions.v8, platform: `${platform()} ${release()} ${arch()}`, loadavg: loadavg() };
const started = Date.now();
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), rounds: xs });

/** Runs `measure(impl)` round by round, alternating the implementations. */
async function interleaved(measure) {
  const out = { engine: [], parklot: [] };
  for (let r = 0; r < params.rounds; r++) for (const impl of Object.keys(IMPLS)) out[impl].push(await measure(impl));
  return { engine: stats(out.engine), parklot: stats(out.parklot) };
}

function perCall(impl, call) {
  const A = IMPLS[impl];
  const ta = new Int32Array(new SharedArrayBuffer(8));
  for (let i = 0; i < 1000; i++) call(A, ta); // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < params.calls; i++) call(A, ta);
  return Number(process.hrtime.bigint() - t0) / params.calls;
}

// Ping-pong between two sides on ta[base]: the word holds whose turn it is.
const PAIR_WORKER = `
  const { workerData: d, parentPort } = require('node:worker_threads');
  const A = d.impl === 'parklot' ? require(d.addon) : Atomics;
  const ta = new Int32Array(d.sab);
  const STOP = 0, GO = 1;
  Atomics.add(ta, 2, 1); Atomics.notify(ta, 2);
  while (Atomics.load(ta, GO) === 0) Atomics.wait(ta, GO, 0);
  let trips = 0;
  outer: for (;;) {
    for (let v; (v = Atomics.load(ta, d.base)) !== d.side; ) {
      if (Atomics.load(ta, STOP)) break outer;
      A.wait(ta, d.base, v, 50);
    }
    trips++;
    Atomics.store(ta, d.base, 1 - d.side);
    A.notify(ta, d.base, 1);
  }
  parentPort.postMessage(trips);`;

/** `pairs` pairs of workers ping-pong for roundMs; round trips per second, all pairs. */
async function pingPong(impl, pairs) {
  const sab = new SharedArrayBuffer(64 * (pairs + 1));
  const ta = new Int32Array(sab);
  const workers = [];
  for (let p = 0; p < pairs; p++) {
    for (const side of [0, 1]) {
      // Each pair's word on its own cache line.
      const base = 16 * (p + 1);
      workers.push(new Worker(PAIR_WORKER, { eval: true, workerData: { sab, impl, addon: ADDON, base, side } }));
    }
  }
  while (Atomics.load(ta, 2) < workers.length) Atomics.wait(ta, 2, Atomics.load(ta, 2), 100);
  const done = workers.map((w) => new Promise((r) => w.once('message', r)));
  Atomics.store(ta, 1, 1);
  Atomics.notify(ta, 1);
  await new Promise((r) => setTimeout(r, params.roundMs));
  Atomics.store(ta, 0, 1);
  const trips = await Promise.all(done);
  await Promise.all(workers.map((w) => w.terminate()));
  // Each side counts its turns; a round trip is one turn of each.
  return trips.reduce((a, b) => a + b, 0) / 2 / (params.roundMs / 1000);
}

// The main thread's waitAsync against a worker's blocking wait, in turns.
const ECHO_WORKER = `
  const { workerData: d } = require('node:worker_threads');
  const A = d.impl === 'parklot' ? require(d.addon) : Atomics;
  const ta = new Int32Array(d.sab);
  for (let i = 0; i < d.trips; i++) {
    while (Atomics.load(ta, 0) !== 1) A.wait(ta, 0, 0);
    Atomics.store(ta, 0, 0);
    Atomics.store(ta, 16, 1);
    A.notify(ta, 16, 1);
  }`;

async function waitAsyncLatency(impl) {
  const A = IMPLS[impl];
  const sab = new SharedArrayBuffer(128);
  const ta = new Int32Array(sab);
  const w = new Worker(ECHO_WORKER, { eval: true, workerData: { sab, impl, addon: ADDON, trips: params.latencyTrips } });
  await new Promise((r) => w.once('online', r));
  const t0 = performance.now();
  for (let i = 0; i < params.latencyTrips; i++) {
    const r = A.waitAsync(ta, 16, 0);
    Atomics.store(ta, 0, 1);
    A.notify(ta, 0, 1);
    if (r.async) await r.value;
    Atomics.store(ta, 16, 0);
  }
  const us = ((performance.now() - t0) * 1000) / params.latencyTrips;
  await w.terminate();
  return us;
}

/**
 * ns per waitAsync on the main thread, in batches of asyncBatch on one
 * address: settled by one notify (`timeout` undefined) or by their timeout.
 */
async function waitAsyncBatches(impl, timeout) {
  const A = IMPLS[impl];
  const ta = new Int32Array(new SharedArrayBuffer(8));
  const batch = async () => {
    const pending = [];
    for (let i = 0; i < params.asyncBatch; i++) pending.push(A.waitAsync(ta, 0, 0, timeout).value);
    if (timeout === undefined) A.notify(ta, 0);
    await Promise.all(pending);
  };
  await batch(); // warm up
  const t0 = process.hrtime.bigint();
  for (let done = 0; done < params.asyncCalls; done += params.asyncBatch) await batch();
  return Number(process.hrtime.bigint() - t0) / params.asyncCalls;
}

/** Bytes of RSS per pending waitAsync (distinct addresses), then all woken. */
async function memoryPerWait(impl) {
  const A = IMPLS[impl];
  const n = params.pendingWaits;
  const ta = new Int32Array(new SharedArrayBuffer(4 * n));
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const pending = [];
  for (let i = 0; i < n; i++) pending.push(A.waitAsync(ta, i, 0).value);
  const after = process.memoryUsage().rss;
  for (let i = 0; i < n; i++) A.notify(ta, i);
  await Promise.all(pending);
  return (after - before) / n;
}

// A pending waitAsync does not keep the loop alive (the engine's, nor, as
// the engine, parklot's): this interval does, while the suite runs.
const keepAlive = setInterval(() => {}, 1000);
const results = { suite: 'node-addon', date: new Date().toISOString(), quick: QUICK, machine, params, experiments: {} };
const E = results.experiments;
log('node-addon: notify with no waiter');
E.notifyNoWaiter = await interleaved((impl) => perCall(impl, (A, ta) => A.notify(ta, 0, 1)));
log('node-addon: wait, not-equal');
E.waitNotEqual = await interleaved((impl) => perCall(impl, (A, ta) => A.wait(ta, 0, 1)));
log('node-addon: ping-pong, two workers');
E.pingPong = await interleaved(async (impl) => 1e6 / (await pingPong(impl, 1)));
log('node-addon: waitAsync, notified');
E.waitAsyncNotified = await interleaved((impl) => waitAsyncBatches(impl, undefined));
log('node-addon: waitAsync, timed out (1 ms)');
E.waitAsyncTimedOut = await interleaved((impl) => waitAsyncBatches(impl, 1));
log('node-addon: waitAsync wake latency, main thread');
E.waitAsyncLatency = await interleaved(waitAsyncLatency);
E.scaling = {};
for (const pairs of params.pairs) {
  log(`node-addon: scaling, ${pairs} pair(s)`);
  E.scaling[pairs] = await interleaved((impl) => pingPong(impl, pairs));
}
log('node-addon: memory per pending waitAsync');
E.memory = await interleaved(memoryPerWait);
results.elapsedSeconds = (Date.now() - started) / 1000;
clearInterval(keepAlive);

const point = (x, s) => ({ x, y: s.median, min: s.min, max: s.max });
results.charts = [
  {
    id: 'scaling',
    title: 'Pairs of workers ping-ponging, each pair on its own addresses (median, whiskers min–max)',
    kind: 'line',
    x: { label: 'workers (pairs x 2)', log: true },
    y: { label: 'round trips per second, all pairs', log: false },
    series: Object.keys(IMPLS).map((impl) => ({
      name: NAMES[impl],
      points: params.pairs.map((p) => point(2 * p, E.scaling[p][impl])),
    })),
  },
  {
    id: 'costs',
    title: 'Cost per operation (median, whiskers min–max; lower is better)',
    kind: 'bar',
    x: { label: 'operation' },
    y: { label: 'ns (calls) / µs (round trips)', log: true },
    series: Object.keys(IMPLS).map((impl) => ({
      name: NAMES[impl],
      points: [
        point('notify, no waiter (ns)', E.notifyNoWaiter[impl]),
        point('wait, not-equal (ns)', E.waitNotEqual[impl]),
        point('ping-pong round trip (µs)', E.pingPong[impl]),
        point('waitAsync round trip (µs)', E.waitAsyncLatency[impl]),
        point('waitAsync notified (ns)', E.waitAsyncNotified[impl]),
        point('waitAsync timed out (ns)', E.waitAsyncTimedOut[impl]),
      ],
    })),
  },
];

const fmt = (s, digits = 1) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
const row = (label, e, unit, digits) =>
  `| ${label} | ${fmt(e.engine, digits)} ${unit} | ${fmt(e.parklot, digits)} ${unit} | ${(e.parklot.median / e.engine.median).toFixed(2)} |`;
const md = [
  '# parklot/node against the engine\'s Atomics',
  '',
  `- date: ${results.date}${QUICK ? ' (--quick: not measurements)' : ''}`,
  `- machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node} (V8 ${machine.v8})`,
  `- rounds: ${params.rounds} per implementation, interleaved; cells: median (min-max); the last column is parklot / engine`,
  '',
  '| operation | engine\'s Atomics | parklot/node | ratio |',
  '|---|---|---|---|',
  row('notify with no waiter', E.notifyNoWaiter, 'ns', 1),
  row('wait, not-equal', E.waitNotEqual, 'ns', 1),
  row(`waitAsync notified (batches of ${params.asyncBatch}), per call`, E.waitAsyncNotified, 'ns', 0),
  row(`waitAsync timed out (1 ms, batches of ${params.asyncBatch}), per call`, E.waitAsyncTimedOut, 'ns', 0),
  row('ping-pong between two workers, per round trip', E.pingPong, 'µs', 2),
  row('waitAsync on the main thread, per round trip', E.waitAsyncLatency, 'µs', 2),
  row(`memory per pending waitAsync (RSS, ${params.pendingWaits} waits)`, E.memory, 'B', 0),
  '',
  '## Scaling: pairs of workers, each on its own addresses (round trips per second, all pairs)',
  '',
  '| workers | engine\'s Atomics | parklot/node | ratio |',
  '|---|---|---|---|',
  ...params.pairs.map((p) => row(String(2 * p), E.scaling[p], '', 0)),
  '',
].join('\n');

mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'node-addon.json'), `${JSON.stringify(results, null, 1)}\n`);
writeFileSync(join(OUT, 'node-addon.md'), md);
process.stdout.write(md);
