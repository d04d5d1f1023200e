// `npm run bench`: runs every benchmark suite as a child process, streams
// their progress, renders every chart to SVG and writes DIR/README.md.
//
//   node bench/run.mjs [--quick] [--out DIR] [--only SUITE,...] [--render-only]
//
// Suites (each writes DIR/<suite>.json and DIR/<suite>.md, same ChartSpec):
//   native            cargo run --release -p parklot-bench --bin suite -- [--quick] --out DIR
//   native-rwlock     cargo run --release -p parklot-bench --bin rwlock -- [--quick] --out DIR (experiment 6)
//   native-async      cargo run --release -p parklot-bench --bin async_locks -- [--quick] --out DIR
//   native-diagnostics cargo run --release -p parklot-bench --bin diagnostics -- [--quick] --out DIR
//                     (what hold tracking, deadlock detection and lock-order checking cost a Lock)
//                     (lock_async against tokio's and async-lock's Mutex, awaiting and mixed with blocking)
//   wasm-node         node bench/wasm/run.mjs [--quick] --out DIR
//   wasm-node-rwlock  node bench/wasm/rwlock.mjs [--quick] --out DIR (experiment 6, semaphore, barrier)
//   node-addon        node bench/node/run.mjs [--quick] --out DIR (parklot/node against the engine's Atomics)
//   calls             node bench/calls/run.mjs [--quick] --out DIR (lock/unlock and withLock, RwLock's write
//                     lock and a Semaphore of one permit, against a pure-JS mutex, in Node, Deno and Bun)
//   wasm-chromium     node bench/browser/run.mjs [--quick] --out DIR
//   wasm-firefox      node bench/browser/firefox.mjs [--quick] --out DIR (the lock arena in Firefox)
//   wasm-webkit       node bench/browser/webkit.mjs [--quick] --out DIR (the lock arena in WebKitGTK)
//   wasm-peers        node bench/browser/wasm-peers.mjs [--quick] --out DIR (Rust Mutexes for the web in
//                     Chromium: parklot, wasm_sync, wasm_safe_mutex, std; the wasm app's build)
// DIR is bench/results, or bench/results/quick with --quick (a smoke run of
// about a minute: it checks the suites' correctness checks pass and that
// every file is written and parses, never a timing). A suite that cannot run
// here (no cargo, or it exits with code 3 after printing why: no emcc, no
// Chromium) is reported as skipped; one that fails makes the exit code 1.
// The last line on stdout is "bench: N passed, M failed[, K skipped]".
// --render-only redraws the charts and the README from DIR's JSON files.
// Both times, DIR/rwlock.md gets experiment 6's combined table (seed 003's
// shape) from native-rwlock.json and wasm-node-rwlock.json.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderSuite } from './chart.mjs';
import { combinedTable } from './wasm/rwlock-report.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP_EXIT_CODE = 3; // a suite's way to say "cannot run here", with the reason on stderr

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
    'render-only': { type: 'boolean', default: false },
  },
});
const OUT = args.out ?? join(ROOT, 'bench', 'results', ...(args.quick ? ['quick'] : []));
const say = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** Each suite: how to run it, or why it cannot run here. */
const SUITES = [
  {
    name: 'native',
    command: ['cargo', 'run', '--release', '-p', 'parklot-bench', '--bin', 'suite', '--'],
    cannotRun: () => (!onPath('cargo') ? 'cargo is not installed (scripts/setup.sh installs Rust)' : null),
  },
  {
    name: 'native-rwlock',
    command: ['cargo', 'run', '--release', '-p', 'parklot-bench', '--bin', 'rwlock', '--'],
    cannotRun: () => (!onPath('cargo') ? 'cargo is not installed (scripts/setup.sh installs Rust)' : null),
  },
  {
    name: 'native-async',
    command: ['cargo', 'run', '--release', '-p', 'parklot-bench', '--bin', 'async_locks', '--'],
    cannotRun: () => (!onPath('cargo') ? 'cargo is not installed (scripts/setup.sh installs Rust)' : null),
  },
  {
    name: 'native-diagnostics',
    command: ['cargo', 'run', '--release', '-p', 'parklot-bench', '--bin', 'diagnostics', '--'],
    cannotRun: () => (!onPath('cargo') ? 'cargo is not installed (scripts/setup.sh installs Rust)' : null),
  },
  {
    name: 'wasm-node',
    command: [process.execPath, 'bench/wasm/run.mjs'],
    cannotRun: () => null, // its own checks say what is missing (the wasm build, emcc)
  },
  {
    name: 'wasm-node-rwlock',
    command: [process.execPath, 'bench/wasm/rwlock.mjs'],
    cannotRun: () => null, // its own checks say what is missing (the wasm build, the package build)
  },
  {
    name: 'node-addon',
    command: [process.execPath, '--expose-gc', 'bench/node/run.mjs'],
    cannotRun: () => (!onPath('cargo') ? 'cargo is not installed (the addon is built with it)' : null),
  },
  {
    name: 'calls',
    command: [process.execPath, 'bench/calls/run.mjs'],
    cannotRun: () => null, // the package build and the runtimes (tests/runtimes) come from scripts/bench.sh
  },
  {
    name: 'wasm-chromium',
    command: [process.execPath, 'bench/browser/run.mjs'],
    cannotRun: () => null, // exits with code 3 without Chromium or the built demo
  },
  {
    name: 'wasm-firefox',
    command: [process.execPath, 'bench/browser/firefox.mjs'],
    cannotRun: () => null, // exits with code 3 without Firefox or the built demo
  },
  {
    name: 'wasm-webkit',
    command: [process.execPath, 'bench/browser/webkit.mjs'],
    cannotRun: () => null, // exits with code 3 without WebKitWebDriver or the built demo
  },
  {
    name: 'wasm-peers',
    command: [process.execPath, 'bench/browser/wasm-peers.mjs'],
    cannotRun: () => null, // exits with code 3 without Chromium or the wasm app's build (scripts/build-wasm-app.sh)
  },
];

/** Runs one suite, its stderr streamed line by line; resolves to {status, reason?, seconds}. */
function runSuite(suite) {
  const [cmd, ...rest] = suite.command;
  const argv = [...rest, ...(args.quick ? ['--quick'] : []), '--out', OUT];
  say(`${suite.name}: ${[cmd === process.execPath ? 'node' : cmd, ...argv].join(' ')}`);
  const started = Date.now();
  // A generous guard on top of each suite's own deadlock checks.
  const limitMs = (args.quick ? 10 : 60) * 60_000;
  return new Promise((resolve) => {
    // detached: its own process group, so that the guard below ends its children too.
    const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const tail = [];
    const keep = (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
    };
    createInterface({ input: child.stderr }).on('line', (line) => {
      keep(line);
      say(`${suite.name} ${line}`);
    });
    // stdout repeats the markdown the suite writes to its .md: kept only for a failure's report.
    createInterface({ input: child.stdout }).on('line', keep);
    const timer = setTimeout(() => {
      say(`${suite.name}: still running after ${limitMs / 60_000} min: stopping it (process group ${child.pid})`);
      child.kill('SIGTERM'); // lets it stop its own children
      setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL'); // and whatever of them is left
        } catch {
          // the group is gone
        }
      }, 5_000).unref();
    }, limitMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ status: 'failed', reason: e.message, seconds: 0 });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1e3;
      if (code === 0) return resolve({ status: 'ok', seconds });
      const last = tail.filter((l) => l.trim()).at(-1) ?? '';
      if (code === SKIP_EXIT_CODE) return resolve({ status: 'skipped', reason: last, seconds });
      process.stderr.write(`${tail.map((l) => `[bench] ${suite.name} | ${l}`).join('\n')}\n`);
      resolve({ status: 'failed', reason: `exit ${code ?? signal}: ${last}`, seconds });
    });
  });
}

/** A suite's results file, checked: the reason it is unusable, or null. */
function checkResults(results, name) {
  if (results.suite !== name) return `"suite" is ${JSON.stringify(results.suite)}, not "${name}"`;
  if (!Array.isArray(results.charts) || !results.charts.length) return 'no charts';
  for (const c of results.charts) {
    if (!c.id || !['line', 'bar'].includes(c.kind) || !c.x || !c.y || !Array.isArray(c.series)) return `chart ${c.id ?? '?'} is not a ChartSpec`;
  }
  return null;
}

/** Markdown nested one level deeper (outside code fences), to sit under a README section. */
function demote(md) {
  let fenced = false;
  return md.split('\n').map((l) => {
    if (l.startsWith('```')) fenced = !fenced;
    return !fenced && /^#{1,5} /.test(l) ? `#${l}` : l;
  }).join('\n');
}

function readme(outcomes, suites, started) {
  const rel = relative(ROOT, OUT) || '.';
  const out = [];
  const p = (...lines) => out.push(...(lines.length ? lines : ['']));
  p(`# parklot benchmark results${args.quick ? ' (--quick smoke run: not measurements)' : ''}`);
  p();
  p(args['render-only']
    ? `Rendered ${started.toISOString()} by \`node bench/run.mjs --render-only\` from the results in \`${rel}/\` (each suite's date below).`
    : `Run ${started.toISOString()} by \`node bench/run.mjs${args.quick ? ' --quick' : ''}\`, into \`${rel}/\`.`);
  // The suites' machine fields together, the first suite's value for a shared key.
  const machine = Object.assign({}, ...suites.map((s) => s.results.machine ?? {}).reverse());
  const shown = Object.entries(machine).filter(([, v]) => v !== null && typeof v !== 'object');
  if (shown.length) p(`Machine: ${shown.map(([k, v]) => `${k} ${v}`).join('; ')}.`);
  p();
  p('## How to rerun');
  p();
  p('- `npm run bench`: every suite, full length (several minutes), into `bench/results/`.');
  p('- `npm run bench -- --quick`: the smoke run (about a minute), into `bench/results/quick/`.');
  p('- One suite: `cargo run --release -p parklot-bench --bin suite -- --out DIR`, `cargo run --release -p parklot-bench --bin rwlock -- --out DIR`, `node bench/wasm/run.mjs --out DIR`, `node bench/wasm/rwlock.mjs --out DIR`, `node --expose-gc bench/node/run.mjs --out DIR`, `node bench/calls/run.mjs --out DIR [--pkg before=DIR/js/dist/index.js --pkg after=js/dist/index.js]`, `node bench/browser/run.mjs --out DIR`, `node bench/browser/firefox.mjs --out DIR`, `node bench/browser/webkit.mjs --out DIR`, `node bench/browser/wasm-peers.mjs --out DIR`; then `node bench/run.mjs --render-only --out DIR` redraws the charts, this file and `rwlock.md`.');
  p('- One browser\'s suite, the demo pages built first: `npm run bench:chromium` (wasm-chromium: the lock arena and the wait/notify lab), `npm run bench:firefox` (wasm-firefox: the lock arena in Firefox ESR) or `npm run bench:webkit` (wasm-webkit: the lock arena in WebKitGTK); add `-- --quick` for the smoke, `-- --out DIR` to write elsewhere.');
  p('- Two builds of the wasm module against each other (a change to the Lock, say): `node bench/wasm/compare-builds.mjs A.wasm B.wasm`, each build in a process of its own, taking turns, rounds grouped by the line between the CPUs (bench/line-probe.mjs).');
  if (existsSync(join(OUT, 'rwlock.md'))) {
    p();
    p('Experiment 6 (reader-writer locks, seed 003\'s table) with the native, wasm and JS rows side by side: [rwlock.md](rwlock.md).');
  }
  p();
  p('## Suites');
  p();
  p('| suite | this run | results from |');
  p('|:--|:--|:--|');
  for (const s of SUITES) {
    const o = outcomes[s.name];
    const r = suites.find((x) => x.name === s.name);
    const run = !o ? 'not run now' : o.status === 'ok' ? `ok, ${o.seconds.toFixed(0)} s` : `**${o.status}**: ${o.reason}`;
    p(`| ${s.name} | ${run} | ${r ? `${r.results.date}${r.results.quick ? ' (quick)' : ''}` : 'none'} |`);
  }
  for (const s of suites) {
    p();
    // A suite's markdown opens with its own title: it becomes the section's heading.
    if (!/^# /.test(s.md)) p(`## ${s.name}`, '');
    p(demote(s.md.trim()));
    p();
    for (const [i, svg] of s.svgs.entries()) {
      p(`![${s.results.charts[i].title}](${svg})`);
      p();
    }
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}

// ------------------------------------------------------------------ main

const started = new Date();
mkdirSync(OUT, { recursive: true });
const only = args.only ? args.only.split(',') : null;
const unknown = (only ?? []).filter((n) => !SUITES.some((s) => s.name === n));
if (unknown.length) {
  say(`--only: no suite ${unknown.join(', ')} (suites: ${SUITES.map((s) => s.name).join(', ')})`);
  process.exit(2);
}

const outcomes = {};
if (!args['render-only']) {
  for (const suite of SUITES.filter((s) => !only || only.includes(s.name))) {
    const why = suite.cannotRun();
    outcomes[suite.name] = why ? { status: 'skipped', reason: why, seconds: 0 } : await runSuite(suite);
    const o = outcomes[suite.name];
    say(`${suite.name}: ${o.status.toUpperCase()}${o.reason ? `: ${o.reason}` : ''}${o.seconds ? ` (${o.seconds.toFixed(1)} s)` : ''}`);
  }
}

// Every suite's results in OUT, this run's or an earlier one's; a suite that
// ran now must have written both files, and they must parse.
const suites = [];
for (const s of SUITES) {
  const json = join(OUT, `${s.name}.json`);
  const md = join(OUT, `${s.name}.md`);
  const ranNow = outcomes[s.name]?.status === 'ok';
  const problem = (msg) => {
    if (ranNow) outcomes[s.name] = { ...outcomes[s.name], status: 'failed', reason: msg };
    say(`${s.name}: ${msg}`);
  };
  if (!existsSync(json) || !existsSync(md)) {
    if (ranNow) problem(`did not write ${!existsSync(json) ? json : md}`);
    continue;
  }
  let results;
  try {
    results = JSON.parse(readFileSync(json, 'utf8'));
  } catch (e) {
    problem(`${json} does not parse: ${e.message}`);
    continue;
  }
  const bad = checkResults(results, s.name);
  if (bad) {
    problem(`${json}: ${bad}`);
    continue;
  }
  try {
    const svgs = renderSuite(results, OUT);
    suites.push({ name: s.name, results, md: readFileSync(md, 'utf8'), svgs });
    say(`${s.name}: ${svgs.length} charts: ${svgs.join(', ')}`);
  } catch (e) {
    problem(`rendering its charts failed: ${e.stack}`);
  }
}
for (const f of readdirSync(OUT).filter((f) => f.endsWith('.json') && !SUITES.some((s) => `${s.name}.json` === f))) {
  say(`note: ${join(OUT, f)} is no suite's results file; left alone`);
}

// Experiment 6's combined table, from whichever of its two suites has results.
const resultsOf = (name) => suites.find((x) => x.name === name)?.results ?? null;
if (resultsOf('native-rwlock') || resultsOf('wasm-node-rwlock')) {
  writeFileSync(join(OUT, 'rwlock.md'), combinedTable(resultsOf('native-rwlock'), resultsOf('wasm-node-rwlock')));
  say(`wrote ${join(OUT, 'rwlock.md')}`);
}
writeFileSync(join(OUT, 'README.md'), readme(outcomes, suites, started));
const failed = Object.entries(outcomes).filter(([, o]) => o.status === 'failed').map(([n]) => n);
const skipped = Object.entries(outcomes).filter(([, o]) => o.status === 'skipped').map(([n, o]) => `${n} (${o.reason})`);
say(`wrote ${join(OUT, 'README.md')} in ${((Date.now() - started.getTime()) / 1e3).toFixed(1)} s`);
if (skipped.length) say(`SKIPPED: ${skipped.join('; ')}`);
// The closing line scripts/test.sh tallies: one "test" per suite.
const passed = Object.values(outcomes).filter((o) => o.status !== 'failed' && o.status !== 'skipped').length;
process.stdout.write(`bench: ${passed} passed, ${failed.length} failed${skipped.length ? `, ${skipped.length} skipped` : ''}\n`);
if (failed.length) {
  say(`FAILED: ${failed.join(', ')}`);
  process.exit(1);
}
