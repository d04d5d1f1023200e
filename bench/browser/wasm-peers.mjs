// Rust locks for the web side by side in Chromium ("wasm-peers"): parklot's
// Mutex, the crates wasm_sync and wasm_safe_mutex (both spin on a thread
// that may not block), and std::sync::Mutex (workers only: it traps on the
// page's main thread), all in one wasm-bindgen module: the wasm app's
// parklot build with its `peers` feature (tests/wasm-app/src/peers.rs,
// page tests/wasm-app/www/peers.html). Two measurements per lock and worker
// count (1 to 8 Rayon workers on a machine of 2 CPUs: oversubscribed on
// purpose): the workers' throughput while the page waits, and the page's
// main thread taking the lock between turns of its event loop while the
// workers hammer it (parklot spinning on its queued record and awaiting
// lock_async, the peers spinning), timed per acquisition. Each run checks
// that the counter under the lock equals the acquisitions. Rounds
// interleaved, the order rotated each round; medians and ranges (method:
// BENCHMARKS.md).
//
//   bash scripts/build-wasm-app.sh && node bench/browser/wasm-peers.mjs [--quick] [--out DIR]
//
// Writes DIR/wasm-peers.json (machine, parameters, every run) and
// DIR/wasm-peers.md (the tables), DIR defaulting to bench/results; exits
// with code 3 (bench/run.mjs: skipped) without Chromium or the app's build.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CHROMIUM, launchBrowser, startServer } from '../../tests/browser/chromium.mjs';
import { markdownTable, si, spread } from '../wasm/table.mjs';

const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } },
});
const QUICK = args.quick;
const OUT_DIR = (args.out ?? fileURLToPath(new URL('../results/', import.meta.url))).replace(/\/$/, '');

const SETTINGS = {
  workerCounts: [1, 2, 4, 8],
  rounds: QUICK ? 2 : 5,
  roundMs: QUICK ? 100 : 500,
  runTimeoutMs: 30_000,
};
/** Workers only (the page waits); every lock. */
const THROUGHPUT = ['parklot', 'wasm_sync', 'wasm_safe_mutex', 'std'];
/** The page's main thread takes the lock too: how, per lock (std would trap). */
const MAIN = [
  { lock: 'parklot', main: 'spin', name: 'parklot lock() (spins on its queued record)' },
  { lock: 'parklot', main: 'async', name: 'parklot lock_async().await' },
  { lock: 'wasm_sync', main: 'spin', name: 'wasm_sync lock() (spins on try_lock)' },
  { lock: 'wasm_safe_mutex', main: 'spin', name: 'wasm_safe_mutex lock_sync() (spins)' },
];
const NAMES = { parklot: 'parklot::Mutex', wasm_sync: 'wasm_sync::Mutex', wasm_safe_mutex: 'wasm_safe_mutex::Mutex', std: 'std::sync::Mutex' };

const log = (msg) => process.stderr.write(`[wasm-peers] ${msg}\n`);
function fail(msg) {
  log(`FAIL: ${msg}`);
  process.exit(1);
}

const APP = fileURLToPath(new URL('../../tests/wasm-app/', import.meta.url));
if (!existsSync(CHROMIUM)) {
  log(`skipped: no Chromium at ${CHROMIUM} (scripts/setup.sh bench installs it; PARKLOT_CHROMIUM names another)`);
  process.exit(3);
}
const glue = `${APP}www/pkg/parklot/parklot_wasm_app.js`;
if (!existsSync(glue) || !readFileSync(glue, 'utf8').includes('peersStart')) {
  log('skipped: the wasm app is not built with its peers (bash scripts/build-wasm-app.sh)');
  process.exit(3);
}
if (!existsSync(fileURLToPath(new URL('../../demo/dist/index.html', import.meta.url)))) {
  log('skipped: demo/dist is not built (npm run build:demo; its server serves the app)');
  process.exit(3);
}

/** The peers' versions, as the app's Cargo.lock pins them. */
const LOCKED = Object.fromEntries(
  [...readFileSync(`${APP}Cargo.lock`, 'utf8').matchAll(/name = "([^"]+)"\nversion = "([^"]+)"/g)].map((m) => [m[1], m[2]]),
);

/** Every run of the benchmark, in the order they ran. */
const runs = [];

async function run(page, kind, lock, workers, main) {
  let timer;
  const r = await Promise.race([
    page.evaluate(([l, w, ms, m]) => window.peersRun(l, w, ms, m), [lock, workers, SETTINGS.roundMs, main]),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${lock} with ${workers} workers took over ${SETTINGS.runTimeoutMs / 1000} s: a deadlock?`)), SETTINGS.runTimeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  const acquisitions = r.workers.reduce((a, b) => a + b, 0);
  if (r.workers.length !== workers) fail(`${lock}: ${r.workers.length} workers ran, not ${workers}`);
  if (r.counter !== acquisitions + r.main) fail(`${lock} (${main ?? 'workers only'}, ${workers} workers): the counter is ${r.counter}, the acquisitions ${acquisitions} + ${r.main} on the main thread: the lock lost an update`);
  if (main && !r.mainAcquire) fail(`${lock} (${main}): the main thread never took the lock`);
  runs.push({ kind, mode: main, ...r, perSecond: (acquisitions / r.windowMs) * 1000, fairness: Math.min(...r.workers) / Math.max(...r.workers) });
}

const started = new Date();
const server = await startServer();
const browser = await launchBrowser();
let browserVersion;
try {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && !/deprecated parameters/.test(m.text()) && errors.push(m.text()));
  await page.goto(`${server.url}wasm-app/peers.html?threads=${Math.max(...SETTINGS.workerCounts)}`);
  await page.waitForSelector('#state:not([data-state=loading])', { timeout: 30_000 });
  const state = await page.locator('#state').getAttribute('data-state');
  if (state !== 'ready') fail(`the page did not start: ${await page.locator('#state').textContent()}`);
  browserVersion = browser.context.browser()?.version() ?? 'unknown';
  log(`Chromium ${browserVersion}: the page is ready (${Math.max(...SETTINGS.workerCounts)} Rayon workers), ${((Date.now() - started) / 1e3).toFixed(1)} s after the start`);
  const entries = [...THROUGHPUT.map((lock) => ({ kind: 'throughput', lock, main: null })), ...MAIN.map((m) => ({ kind: 'main', ...m }))];
  for (let round = 0; round < SETTINGS.rounds; round++) {
    for (const workers of SETTINGS.workerCounts) {
      // Rotated each round, so that no lock always runs first or after the same one.
      const k = (round * 3 + workers) % entries.length;
      for (const e of [...entries.slice(k), ...entries.slice(0, k)]) await run(page, e.kind, e.lock, workers, e.main);
    }
    log(`round ${round + 1}/${SETTINGS.rounds} done (${runs.length} runs, every counter exact)`);
  }
  if (errors.length) fail(`the page reported errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
  await server.stop();
}

// ------------------------------------------------------------------ report

const of = (kind, lock, main, workers) => runs.filter((r) => r.kind === kind && r.lock === lock && r.mode === main && r.workers.length === workers);
const range = (s, f = si) => `${f(s.min)}–${f(s.max)}`;
const us = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

const throughputRows = [];
const throughputSeries = THROUGHPUT.map((lock) => ({ name: NAMES[lock], points: [] }));
for (const w of SETTINGS.workerCounts) {
  const base = spread(of('throughput', 'parklot', null, w).map((r) => r.perSecond)).median;
  THROUGHPUT.forEach((lock, i) => {
    const rs = of('throughput', lock, null, w);
    const s = spread(rs.map((r) => r.perSecond));
    throughputSeries[i].points.push({ x: w, y: s.median, min: s.min, max: s.max });
    throughputRows.push([w, NAMES[lock], si(s.median), range(s), `${(s.median / base).toFixed(2)}x`, spread(rs.map((r) => r.fairness)).median.toFixed(2)]);
  });
  throughputRows.push(null);
}
throughputRows.pop();

const mainRows = [];
const p99Series = MAIN.map((m) => ({ name: m.name, points: [] }));
const p999Series = MAIN.map((m) => ({ name: m.name, points: [] }));
for (const w of SETTINGS.workerCounts) {
  MAIN.forEach((m, i) => {
    const rs = of('main', m.lock, m.main, w);
    const [p50, p99, p999] = ['p50', 'p99', 'p999'].map((q) => spread(rs.map((r) => r.mainAcquire[q])));
    const max = spread(rs.map((r) => r.mainAcquire.max));
    p99Series[i].points.push({ x: w, y: p99.median, min: p99.min, max: p99.max });
    p999Series[i].points.push({ x: w, y: p999.median, min: p999.min, max: p999.max });
    const mainRate = spread(rs.map((r) => (r.main / r.windowMs) * 1000)).median;
    const workersRate = spread(rs.map((r) => r.perSecond)).median;
    mainRows.push([w, m.name, us(p50.median), us(p99.median), range(p99, us), us(p999.median), range(p999, us), us(max.median), range(max, us), si(mainRate), si(workersRate)]);
  });
  mainRows.push(null);
}
mainRows.pop();

const machine = { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, browser: `Chromium ${browserVersion}`, node: process.version, platform: `${os.platform()} ${os.release()} ${os.arch()}` };
const versions = `wasm_sync ${LOCKED.wasm_sync}, wasm_safe_mutex ${LOCKED.wasm_safe_mutex}, wasm-bindgen ${LOCKED['wasm-bindgen']}, wasm-bindgen-rayon ${LOCKED['wasm-bindgen-rayon']}`;
const chart = (id, title, y, series, log = true) => ({ id, title, kind: 'line', x: { label: 'Rayon workers', log: false }, y: { label: y, log }, series });
const charts = [
  chart('throughput', 'Rust Mutexes in Chromium workers (wasm): acquisitions/s, the page idle', 'acquisitions/s', throughputSeries),
  chart('main-p99', "The page's main thread taking the Mutex while the workers hammer it: p99 acquisition (µs)", 'µs', p99Series),
  chart('main-p999', "The page's main thread taking the Mutex while the workers hammer it: p99.9 acquisition (µs)", 'µs', p999Series),
];
const results = { suite: 'wasm-peers', date: started.toISOString(), quick: QUICK, machine, params: { ...SETTINGS, versions: { ...LOCKED } }, runs, charts };

const markdown = [
  `# Rust locks for the web, side by side in Chromium (${started.toISOString().slice(0, 10)})`,
  '',
  `${machine.browser}, ${machine.cores} CPUs (${machine.cpu}); ${versions}. One wasm-bindgen module (the wasm app's parklot build, feature \`peers\`) holds all four locks; ${SETTINGS.rounds} interleaved rounds of ${SETTINGS.roundMs} ms per lock, measurement and worker count, the order rotated each round; medians and min–max over the rounds. Critical section: one add-and-multiply step and a plain counter, checked exact after every run.${QUICK ? ' **--quick smoke: these numbers are not measurements.**' : ''}`,
  '',
  '## Worker throughput (acquisitions/s, all workers; the page waits)',
  '',
  markdownTable(
    [{ title: 'workers' }, { title: 'lock', left: true }, { title: 'median' }, { title: 'min–max' }, { title: 'vs parklot' }, { title: 'least/most lucky worker' }],
    throughputRows,
  ),
  '',
  `In a worker, \`wasm_sync::Mutex::lock()\` is std's \`lock()\` (it spins only where \`window\` exists), so the two should be within noise of each other; \`wasm_safe_mutex::Mutex::lock_sync()\` asks the engine on every call whether this thread may block (a JS call that makes a \`SharedArrayBuffer\` and calls \`Atomics.wait\` on it), which is most of its cost per acquisition.`,
  '',
  "## The page's main thread taking the lock while the workers hammer it (µs per acquisition)",
  '',
  "The page takes the lock 8 times per turn of its event loop, turns back to back (a MessageChannel), for the whole run; each acquisition is timed with `performance.now()` (5 µs steps), from the call to holding the lock (for `lock_async`, to the future's resolution). Quantiles are each run's, then the median (and range) over the rounds; main acq/s and workers acq/s are the median rates of the same runs. std's Mutex is not in this table: on the main thread it traps (`Atomics.wait cannot be called in this context`).",
  '',
  markdownTable(
    [{ title: 'workers' }, { title: 'main thread', left: true }, { title: 'p50' }, { title: 'p99' }, { title: 'p99 min–max' }, { title: 'p99.9' }, { title: 'p99.9 min–max' }, { title: 'max' }, { title: 'max min–max' }, { title: 'main acq/s' }, { title: 'workers acq/s' }],
    mainRows,
  ),
  '',
].join('\n');

mkdirSync(OUT_DIR, { recursive: true });
writeFileSync(`${OUT_DIR}/wasm-peers.json`, `${JSON.stringify(results, null, 1)}\n`);
writeFileSync(`${OUT_DIR}/wasm-peers.md`, markdown);
process.stdout.write(markdown);
log(`wrote ${OUT_DIR}/wasm-peers.json and wasm-peers.md (${runs.length} runs, every counter exact)`);
