// The calls users write, against the floor: N workers run `lock();
// counter++; unlock()`, `withLock(fn)`, the same through RwLock's write lock
// and a Semaphore of one permit, and a ten-line pure-JS futex mutex on a
// plain SharedArrayBuffer, under Node 20 (the machine's), Deno and Bun
// (JavaScriptCore): the same harness (measure.mjs) in each, one runtime
// after the other. Measured, never asserted.
//
//   node bench/calls/run.mjs [--quick] [--out DIR] [--pkg NAME=PATH ...]
//       [--detection NAME ...] [--forms F,F,...] [--runtimes R,R,...]
//
// --pkg: a package build to measure (its js/dist/index.js), repeatable; the
// default is this tree's, named "parklot". Two builds (before=..., after=...)
// run side by side in one process per runtime, rounds interleaved.
// --detection: the package of that name runs with deadlock detection on
// (`rt.setDeadlockDetection(true)`); one build may be named twice, once with
// it. --forms: only these call forms (default all six: lock/unlock,
// withLock, write/unlockWrite, withWrite, acquire/release, withPermits).
// --runtimes: only these of Node, Deno and Bun (default all three).
// Writes DIR/calls.json (every round, ChartSpecs) and DIR/calls.md.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, arch, release } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    pkg: { type: 'string', multiple: true },
    detection: { type: 'string', multiple: true },
    forms: { type: 'string' },
    runtimes: { type: 'string' },
  },
});
const QUICK = args.quick;
const OUT = args.out ?? join(ROOT, 'bench', 'results', ...(QUICK ? ['quick'] : []));
const log = (m) => process.stderr.write(`${m}\n`);
const pkgs = (args.pkg ?? [`parklot=${join(ROOT, 'js', 'dist', 'index.js')}`]).map((spec) => {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`--pkg ${spec}: expected NAME=PATH`);
  const path = resolve(spec.slice(eq + 1));
  if (!existsSync(path)) throw new Error(`--pkg ${spec}: ${path} does not exist (npm run build:ts builds js/dist)`);
  const name = spec.slice(0, eq);
  return { name, url: pathToFileURL(path).href, detection: (args.detection ?? []).includes(name) };
});
for (const name of args.detection ?? []) {
  if (!pkgs.some((p) => p.name === name)) throw new Error(`--detection ${name}: no --pkg of that name`);
}
const FORMS = args.forms?.split(',');

// The runtimes' binaries: pinned in tests/runtimes/package.json, installed by scripts/setup.sh.
const bin = (path) => join(ROOT, 'tests', 'runtimes', 'node_modules', path);
const ALL_RUNTIMES = [
  { name: 'Node', command: [process.execPath] },
  { name: 'Deno', command: [bin('@deno/linux-x64-glibc/deno'), 'run', '--allow-all'] },
  { name: 'Bun', command: [bin('@oven/bun-linux-x64/bin/bun')] },
];
const RUNTIMES = args.runtimes === undefined ? ALL_RUNTIMES : args.runtimes.split(',').map((name) => {
  const rt = ALL_RUNTIMES.find((r) => r.name.toLowerCase() === name.trim().toLowerCase());
  if (rt === undefined) throw new Error(`--runtimes ${name}: expected one of ${ALL_RUNTIMES.map((r) => r.name).join(', ')}`);
  return rt;
});
const params = { rounds: QUICK ? 1 : 5, ms: QUICK ? 50 : 300, workers: QUICK ? [1, 2] : [1, 2, 4, 8], ...(FORMS && { forms: FORMS }) };
const machine = { cpu: cpus()[0]?.model.trim(), cores: cpus().length, platform: `${platform()} ${release()} ${arch()}`, loadavg: loadavg() };
const MEASURE = fileURLToPath(new URL('./measure.mjs', import.meta.url));

function measure(rt) {
  const config = JSON.stringify({ pkgs, ...params });
  return new Promise((done, fail) => {
    execFile(rt.command[0], [...rt.command.slice(1), MEASURE, config], { timeout: 15 * 60_000, maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      if (error) return fail(new Error(`${rt.name}: ${error.message}\n${stderr.slice(-2000)}`));
      done(JSON.parse(stdout.trim().split('\n').at(-1)));
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), rounds: xs });
const results = { suite: 'calls', date: new Date().toISOString(), quick: QUICK, machine, params, pkgs: pkgs.map((p) => p.name), runtimes: {} };
for (const rt of RUNTIMES) {
  if (!existsSync(rt.command[0])) {
    log(`calls: ${rt.name} is not installed (${rt.command[0]}; scripts/setup.sh installs it)`);
    process.exit(1);
  }
  log(`calls: ${rt.name}`);
  const r = await measure(rt);
  const cells = {};
  for (const [key, xs] of Object.entries(r.results)) cells[key] = stats(xs.map((x) => x / 1e6));
  results.runtimes[rt.name] = { version: r.version, labels: r.labels, cells };
}

const fmt = (s) => `${s.median.toFixed(1)} (${s.min.toFixed(1)}-${s.max.toFixed(1)})`;
const md = [
  '# The calls users write: lock/unlock and withLock against a pure-JS futex mutex',
  '',
  `- date: ${results.date}${QUICK ? ' (--quick: not measurements)' : ''}`,
  `- machine: ${machine.cpu}, ${machine.cores} cores`,
  `- N workers of node:worker_threads, each running \`lock(); counter++; unlock()\`, \`withLock(() => counter++)\`, the same through RwLock's write lock (\`write()\`/\`unlockWrite()\`, \`withWrite\`) and a Semaphore of one permit (\`acquire()\`/\`release()\`, \`withPermits(1, fn)\`), or through a ten-line futex mutex (three states, \`Atomics.wait\`/\`notify\`) on a plain SharedArrayBuffer; ${params.ms} ms per measurement, ${params.rounds} rounds, every cell once per round in turn; M sections/s, median (min-max) over rounds; ratio = median / the JS mutex's median`,
  ...pkgs.filter((p) => p.detection).map((p) => `- ${p.name}: deadlock detection on (\`rt.setDeadlockDetection(true)\`) for the whole run`),
  '',
];
/** The tables: each primitive's bare pair and helper, for every package, beside the JS mutex. */
const GROUPS = [
  { title: 'Lock', forms: ['lock/unlock', 'withLock'] },
  { title: "RwLock's write lock", forms: ['write/unlockWrite', 'withWrite'] },
  { title: 'Semaphore of one permit', forms: ['acquire/release', 'withPermits'] },
];
for (const rt of Object.values(results.runtimes)) {
  md.push(`## ${rt.version}`, '');
  for (const group of GROUPS) {
    const mine = rt.labels.filter((l) => group.forms.some((f) => l.endsWith(` ${f}`)));
    if (mine.length === 0) continue;
    const labels = [...mine, 'JS mutex'];
    md.push(`### ${group.title}`, '', `| workers | ${labels.join(' | ')} | ${mine.map((l) => `${l} / JS`).join(' | ')} |`, `|---|${labels.map(() => '---|').join('')}${mine.map(() => '---|').join('')}`);
    for (const n of params.workers) {
      const js = rt.cells[`JS mutex|${n}`].median;
      md.push(`| ${n} | ${labels.map((l) => fmt(rt.cells[`${l}|${n}`])).join(' | ')} | ${mine.map((l) => `${(rt.cells[`${l}|${n}`].median / js).toFixed(2)}x`).join(' | ')} |`);
    }
    md.push('');
  }
}

const point = (x, s) => ({ x, y: s.median, min: s.min, max: s.max });
results.charts = Object.entries(results.runtimes).map(([name, rt]) => ({
  id: `calls-${name.toLowerCase()}`,
  title: `${rt.version}: critical sections per second, all workers (median, whiskers min–max)`,
  kind: 'line',
  x: { label: 'workers', log: true },
  y: { label: 'M sections/s', log: false },
  // Lock's forms and the JS mutex: the toolkit's rows are in the tables.
  series: rt.labels
    .filter((label) => label === 'JS mutex' || GROUPS[0].forms.some((f) => label.endsWith(` ${f}`)))
    .map((label) => ({ name: label, points: params.workers.map((n) => point(n, rt.cells[`${label}|${n}`])) })),
}));

mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'calls.json'), `${JSON.stringify(results, null, 1)}\n`);
writeFileSync(join(OUT, 'calls.md'), `${md.join('\n')}\n`);
process.stdout.write(`${md.join('\n')}\n`);
