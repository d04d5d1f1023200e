// One runtime's side of bench/calls/run.mjs (Node, Deno and Bun run this
// same file): N workers of node:worker_threads run `lock(); counter++;
// unlock()`, `withLock(fn)` and the same through a ten-line pure-JS futex
// mutex, for `ms` per measurement, rounds interleaved (every form and
// worker count once per round, in turn). Prints one JSON object.
//
//   <runtime> bench/calls/measure.mjs '<json: {pkgs: [{name, url, detection}], workers, rounds, ms, forms?}>'
//
// Each package gets a runtime of its own and 8 attached workers; the JS
// mutex runs on the first package's workers. After each measurement the
// shared counter must equal the sections the workers report, or the run
// fails (a broken mutual exclusion shows as a miscount).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2]);
const WORKER = new URL('./worker.mjs', import.meta.url);
// Per package, an entry file that names the package, then runs worker.mjs
// (workerData is parklot's own start message).
const entries = mkdtempSync(join(tmpdir(), 'parklot-calls-'));
const GO = 0;
const STOP = 1;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const maxWorkers = Math.max(...config.workers);

/** A package's runtime, its lock and its workers, with their message queues. */
async function setUp(pkg) {
  const { Runtime, spawnWorker } = await import(pkg.url);
  const rt = await Runtime.create();
  if (pkg.detection) rt.setDeadlockDetection(true);
  const ctl = new Int32Array(new SharedArrayBuffer(8));
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const jsMutex = new Int32Array(new SharedArrayBuffer(4));
  const lock = rt.lock();
  const rw = rt.rwLock();
  const sem = rt.semaphore(1);
  const entry = pathToFileURL(join(entries, `${pkg.name.replace(/\W/g, '_')}.mjs`));
  writeFileSync(entry, `globalThis.parklotBenchPackage = ${JSON.stringify(pkg.url)};\nawait import(${JSON.stringify(WORKER.href)});\n`);
  const workers = [];
  for (let i = 0; i < maxWorkers; i++) {
    const inbox = [];
    const waiting = [];
    const w = await spawnWorker(rt, entry, { lock, rw, sem, ctl, counter, jsMutex });
    w.on('message', (m) => (waiting.length > 0 ? waiting.shift()(m) : inbox.push(m)));
    const next = () => (inbox.length > 0 ? Promise.resolve(inbox.shift()) : new Promise((r) => waiting.push(r)));
    await next(); // 'attached'
    workers.push({ w, next });
  }
  return { rt, ctl, counter, workers };
}

/** Critical sections per second of `form` on the first `n` workers of `side`. */
async function measure(side, form, n) {
  const { ctl, counter, workers } = side;
  const active = workers.slice(0, n);
  Atomics.store(ctl, GO, 0);
  Atomics.store(ctl, STOP, 0);
  counter[0] = 0;
  for (const { w } of active) w.postMessage(form);
  for (const { next } of active) await next(); // 'ready'
  const t0 = performance.now();
  Atomics.store(ctl, GO, 1);
  Atomics.notify(ctl, GO);
  await sleep(config.ms);
  Atomics.store(ctl, STOP, 1);
  const t1 = performance.now();
  let total = 0;
  for (const { next } of active) total += await next();
  if (counter[0] !== (total | 0)) throw new Error(`${form}, ${n} workers: the counter reads ${counter[0]}, the workers ran ${total} sections`);
  return total / ((t1 - t0) / 1000);
}

/** What the workers run (worker.mjs): Lock, RwLock's write lock and a Semaphore of one permit, each bare and in its helper. */
const FORMS = config.forms ?? ['lock/unlock', 'withLock', 'write/unlockWrite', 'withWrite', 'acquire/release', 'withPermits'];
const sides = [];
for (const pkg of config.pkgs) sides.push({ pkg, ...(await setUp(pkg)) });
const cells = [];
for (const s of sides) for (const form of FORMS) cells.push({ side: s, label: `${s.pkg.name} ${form}`, form });
cells.push({ side: sides[0], label: 'JS mutex', form: 'JS mutex' });

const results = {};
for (let round = 0; round < config.rounds; round++) {
  for (const n of config.workers) {
    for (const c of cells) {
      const key = `${c.label}|${n}`;
      (results[key] ??= []).push(await measure(c.side, c.form, n));
    }
  }
}
for (const s of sides) {
  for (const { w } of s.workers) await w.terminate();
  s.rt.close();
}
rmSync(entries, { recursive: true, force: true });
const version =
  typeof Deno !== 'undefined' ? `Deno ${Deno.version.deno} (V8 ${Deno.version.v8})`
  : typeof Bun !== 'undefined' ? `Bun ${Bun.version} (JavaScriptCore)`
  : `Node ${process.version} (V8 ${process.versions.v8})`;
console.log(JSON.stringify({ version, labels: cells.map((c) => c.label), results }));
