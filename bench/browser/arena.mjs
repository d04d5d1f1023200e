// The lock arena's part of the browser suites, shared by Chromium's
// (run.mjs) and Firefox's (firefox.mjs): the demo's arena page
// (demo/src/arena-runner.ts) runs 1 to 16 Web Workers on one lock in
// parklot's shared memory, each lock in turn, rounds interleaved, the
// counter checked exact every round. Here: the rounds' settings, the locks a
// page's arena offers, the interleaved rounds, and the report's pieces (the
// throughput table, the goals on it, the 2-worker rows by the line between
// the CPUs, the chart). The page is Playwright's (Chromium) or Puppeteer's
// (Firefox): both take the calls made here alike.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SLOW_LINE_NS, lineNote, lineRows, lineSplitText, startLineProbe, twoWorkersByLine } from '../line-probe.mjs';
import { markdownTable, si, spread } from '../wasm/table.mjs';

export const PARKLOT_LOCK = 'parklot::Lock';
export const JS_MUTEX_LOCK = 'pure-JS Atomics mutex';
export const PACKAGE_LOCK = 'parklot Lock via the npm package (JS loop)';
export const MULTITHREADING_LOCK = 'multithreading Mutex (npm, JS loop)';
const MAIN_THREAD_LOCK = 'parklot::Lock + main thread (lockAsync)';

/** In --quick, a few locks stand for all: the smoke checks the plumbing, not the numbers. */
export const QUICK_LOCKS = [PARKLOT_LOCK, 'std::sync::Mutex', JS_MUTEX_LOCK, PACKAGE_LOCK, MULTITHREADING_LOCK, 'V8 Atomics.Mutex (JS loop)'];

/** The `multithreading` package the demo bundles (package-lock.json pins it). */
export const MULTITHREADING_VERSION = JSON.parse(readFileSync(new URL('../../node_modules/multithreading/package.json', import.meta.url), 'utf8')).version;

/** A round that has not finished after this long is a deadlock (the suite fails). */
export const ROUND_TIMEOUT_MS = 30_000;

/** The arena's rounds, the same in every browser (a suite adds its own settings after these). */
export function arenaSettings(quick) {
  return {
    workerCounts: quick ? [1, 2, 4] : [1, 2, 4, 8, 16],
    work: 1, // add-and-multiply steps per critical section (seed 000's microcontention)
    rounds: quick ? 2 : 5,
    roundMs: quick ? 150 : 500,
    // parklot::Lock once more at 4 workers, with the page's main thread taking part through lockAsync.
    mainThreadWorkers: 4,
  };
}

/**
 * The report's first lines of method, for `machine` ({browser, cores, cpu}),
 * up to the end of the sentence on the locks whose loops are in JS (a suite
 * adds its own peers' before the full stop).
 */
export function arenaMethod(machine, settings) {
  return `${machine.browser}, ${machine.cores} CPUs (${machine.cpu}). ${settings.rounds} interleaved rounds of ${settings.roundMs} ms per lock and worker count; critical section: ${settings.work} add-and-multiply step, then a plain counter, checked exact every round. Locks run their loop inside wasm except the pure-JS mutex, the npm package's Lock and \`multithreading\`'s Mutex (npm ${MULTITHREADING_VERSION}: \`blockingLock()\`, then \`dispose()\` of the guard), whose loops and critical sections are in JS`;
}

/** A suite's command line: `--quick` (the smoke), `--out DIR` (bench/results by default). */
export function suiteArgs() {
  const { values: args } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } },
  });
  return { quick: args.quick, outDir: (args.out ?? fileURLToPath(new URL('../results/', import.meta.url))).replace(/\/$/, '') };
}

/**
 * Exits with code 3, which tells bench/run.mjs this suite cannot run here
 * (its last line says why), if there is no `browser` at `path` (`how`: how
 * to get one) or the demo is not built.
 */
export function skipUnlessReady(log, browser, path, how) {
  if (!existsSync(path)) {
    log(`skipped: no ${browser} at ${path} (${how})`);
    process.exit(3);
  }
  if (!existsSync(fileURLToPath(new URL('../../demo/dist/arena.html', import.meta.url)))) {
    log('skipped: demo/dist is not built (npm run build:demo)');
    process.exit(3);
  }
}

/** A suite's progress lines on stderr, "[name] ...", and `fail`, which says why and exits 1. */
export function logger(name) {
  const log = (msg) => process.stderr.write(`[${name}] ${msg}\n`);
  return {
    log,
    fail(msg) {
      log(`FAIL: ${msg}`);
      process.exit(1);
    },
  };
}

/** `promise`, or a rejection naming `what` after `ms`. */
export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s: a deadlock?`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Collects `page`'s uncaught exceptions and console errors into `errors`. */
export function recordErrors(page, errors) {
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
}

/** Opens the demo's arena page (served at `serverUrl`) in `page` and waits until its arena is ready. */
export async function openArena(page, serverUrl) {
  await page.goto(`${serverUrl}arena.html`);
  await page.waitForSelector('#result[data-state=idle]', { timeout: 30_000 });
}

/** The locks the arena on `page` runs in every browser, {name, peer}: the wasm module's, then the JS loops'. */
export async function arenaLocks(page) {
  const peers = await page.evaluate(() => window.parklotArena.arena.peers);
  const [jsMutex, jsPackage, jsMultithreading] = await page.evaluate(() => [window.parklotArena.JS_MUTEX, window.parklotArena.JS_PACKAGE, window.parklotArena.JS_MULTITHREADING]);
  return [
    ...peers.map((name, peer) => ({ name, peer })),
    { name: JS_MUTEX_LOCK, peer: jsMutex },
    { name: PACKAGE_LOCK, peer: jsPackage },
    { name: MULTITHREADING_LOCK, peer: jsMultithreading },
  ];
}

/**
 * Every lock ({name, peer, page}) at every worker count, then parklot::Lock
 * with the page's main thread taking part; `fail` if there is no parklot::Lock.
 */
export function arenaConfigs(locks, settings, fail) {
  const parklot = locks.find((l) => l.name === PARKLOT_LOCK) ?? fail('the arena offers no parklot::Lock');
  const configs = [];
  for (const workers of settings.workerCounts) {
    for (const lock of locks) configs.push({ lock: lock.name, workers, peer: lock.peer, mainThread: false, page: lock.page });
  }
  configs.push({ lock: MAIN_THREAD_LOCK, workers: settings.mainThreadWorkers, peer: parklot.peer, mainThread: true, page: parklot.page });
  return configs;
}

/**
 * The interleaved rounds (A B C ..., A B C ...) of `configs`, each timed on
 * its page's arena and its counter checked exact (else `fail`), with the line
 * probe (bench/line-probe.mjs) before each; `afterRound(round, lineProbe)`
 * may run more and returns their rounds. Resolves to every round's record.
 */
export async function runArenaRounds(configs, settings, { log, fail }, afterRound = async () => []) {
  const rounds = [];
  const lineProbe = await startLineProbe();
  for (let round = 0; round < settings.rounds; round++) {
    for (const c of configs) {
      const config = { workers: c.workers, peer: c.peer, work: settings.work, mainThread: c.mainThread };
      const lineNs = lineProbe.measure();
      const r = await withTimeout(
        c.page.evaluate(([config, ms]) => window.parklotArena.arena.run(config, ms), [config, settings.roundMs]),
        settings.roundTimeoutMs,
        `${c.lock} with ${c.workers} workers`,
      );
      if (!r.exact) fail(`${c.lock}, ${c.workers} workers: counter ${r.counter} != ${r.expected} acquisitions (lost updates)`);
      rounds.push({ round, lock: c.lock, workers: c.workers, mainThread: c.mainThread, ms: r.ms, rate: r.rate, perWorker: r.perWorker, main: r.main, counter: r.counter, lineNs });
      log(`round ${round + 1}/${settings.rounds}, ${c.workers} workers, ${c.lock}: ${si(r.rate)}/s, counter exact${lineNs === null ? '' : ` (line ${lineNs.toFixed(0)} ns)`}`);
    }
    rounds.push(...(await afterRound(round, lineProbe)));
  }
  await lineProbe.stop();
  return rounds;
}

/**
 * The report on the throughput experiment ({configs, rounds}, `configs`
 * without their pages): per config, the median and range of the rate over
 * the rounds, of the fairness (least/most lucky worker) and of the main
 * thread's share; and the goals' ratios on them.
 */
export function arenaReport(throughput, workerCounts) {
  const tput = [];
  for (const c of throughput.configs) {
    const rs = throughput.rounds.filter((r) => r.lock === c.lock && r.workers === c.workers);
    const rate = spread(rs.map((r) => r.rate));
    const fairness = spread(rs.map((r) => Math.min(...r.perWorker) / Math.max(...r.perWorker)));
    const mainShare = c.mainThread ? spread(rs.map((r) => r.main / (r.main + r.perWorker.reduce((a, b) => a + b, 0)))) : null;
    tput.push({ ...c, rate, fairness, mainShare });
  }
  const at = (lock, n) => tput.find((t) => t.lock === lock && t.workers === n && !t.mainThread);
  const base = (n) => at(PARKLOT_LOCK, n)?.rate.median;
  /** The 2-worker rounds by the line probe before each (bench/line-probe.mjs). */
  const lineSplit = twoWorkersByLine(throughput.rounds, (r) => r.lock, (r) => r.rate);

  /**
   * A goal's verdict from its rows' ratios, as the Node and native suites give
   * it: met if every row meets `goal`; "within noise" if every row that falls
   * short is noise (its best round reaches `goal` against the peer's worst).
   */
  function verdict(rows, goal) {
    if (!rows.length) return null;
    const short = rows.filter(([, a, b]) => a.median / b.median < goal);
    if (!short.length) return true;
    return short.every(([, a, b]) => a.max >= b.min * goal) ? 'within noise' : false;
  }

  /**
   * "Nw 1.23x, ..." for ours/theirs (by `of`: 'rate' or 'fairness') at every
   * worker count from `from` that both ran, and whether each is at least
   * `goal`; "(noise)" marks a miss whose min–max ranges overlap the goal's.
   */
  function ratios(ours, theirs, goal, of = 'rate', from = 1) {
    const rows = workerCounts.filter((n) => n >= from).map((n) => [n, at(ours, n)?.[of], at(theirs, n)?.[of]]).filter(([, a, b]) => a && b);
    const text = rows.map(([n, a, b]) => {
      const r = a.median / b.median;
      return `${n}w ${r.toFixed(2)}x${r < goal && a.max >= b.min * goal ? ' (noise)' : ''}`;
    });
    if (!rows.length) return { text: 'not run', met: null };
    return { text: text.join(', '), met: verdict(rows, goal) };
  }

  /**
   * Seed 000's open question (take the best of ThunderLock and CascadeLock into
   * WTF::Lock), answered by measurement: parklot::Lock against the better of
   * the two at each contended count, "(noise)" where the ranges overlap.
   */
  function againstToys() {
    const rows = workerCounts.filter((n) => n >= 2).map((n) => {
      const [toy, theirs] = ['ThunderLock', 'CascadeLock'].map((l) => [l, at(l, n)?.rate]).filter(([, r]) => r).sort((a, b) => b[1].median - a[1].median)[0] ?? [];
      return [n, at(PARKLOT_LOCK, n)?.rate, toy, theirs];
    }).filter(([, a, , b]) => a && b);
    const text = rows.map(([n, a, toy, b]) => `${n}w ${(a.median / b.median).toFixed(2)}x ${toy}${a.median < b.median && a.max >= b.min ? ' (noise)' : ''}`);
    if (!rows.length) return { text: 'not run', met: null };
    return { text: text.join(', '), met: verdict(rows.map(([n, a, , b]) => [n, a, b]), 1) };
  }

  const withLineSplit = (r, theirs) => ({ ...r, text: r.text + lineSplitText(lineSplit, PARKLOT_LOCK, theirs) });

  return {
    tput,
    /**
     * The arena's goals, [goal, {text, met}]: parklot::Lock against the
     * module's peers, the JS loops', and `enginePeers` ([goal, lock, ratio]:
     * a browser's own, after the pure-JS mutex's row); the npm package's Lock
     * against the JS loops.
     */
    goals(enginePeers = []) {
      return [
        ['parklot::Lock ≥ 1x std::sync::Mutex in the same module', withLineSplit(ratios(PARKLOT_LOCK, 'std::sync::Mutex', 1), ['std::sync::Mutex'])],
        ['parklot::Lock ≥ 1x the better of seed 000\'s ThunderLock and CascadeLock, contended', withLineSplit(againstToys(), ['ThunderLock', 'CascadeLock'])],
        ['parklot::Lock ≥ 1.5x the pure-JS Atomics mutex', ratios(PARKLOT_LOCK, JS_MUTEX_LOCK, 1.5)],
        ...enginePeers.map(([goal, lock, x]) => [goal, ratios(PARKLOT_LOCK, lock, x)]),
        ['parklot::Lock ≥ 5x `multithreading`\'s Mutex (npm)', ratios(PARKLOT_LOCK, MULTITHREADING_LOCK, 5)],
        ['parklot Lock via the npm package ≥ 1.2x `multithreading`\'s Mutex, both from a JS loop', ratios(PACKAGE_LOCK, MULTITHREADING_LOCK, 1.2)],
        ['parklot Lock via the npm package ≥ 1.2x the pure-JS Atomics mutex, both from a JS loop', ratios(PACKAGE_LOCK, JS_MUTEX_LOCK, 1.2)],
        ['its fairness (least/most lucky worker, median) ≥ the pure-JS mutex\'s', ratios(PACKAGE_LOCK, JS_MUTEX_LOCK, 1, 'fairness', 2)],
      ];
    },
    /** The throughput table's section of the markdown, as lines. */
    throughputLines() {
      return [
        '## Lock throughput (acquisitions/s, all workers)',
        '',
        markdownTable(
          [{ title: 'workers' }, { title: 'lock', left: true }, { title: 'median' }, { title: 'min–max', left: true }, { title: 'vs parklot::Lock' }, { title: 'least/most lucky worker' }, { title: 'main thread share' }],
          tput.map((t) => [
            t.workers,
            t.lock,
            si(t.rate.median),
            `${si(t.rate.min)}–${si(t.rate.max)}`,
            `${(t.rate.median / base(t.workers)).toFixed(2)}x`,
            t.fairness.median.toFixed(2),
            t.mainShare ? `${(100 * t.mainShare.median).toFixed(2)}%` : '',
          ]),
        ),
        '',
      ];
    },
    /** With a line probe before every round: the 2-worker rows by the state it said, `notes` after the table's own. */
    lineLines(...notes) {
      if (!Object.keys(lineSplit.byLock).length) return [];
      return [
        '### Two workers by the line between the CPUs',
        '',
        markdownTable(
          [{ title: 'lock', left: true }, { title: `fast line (≤ ${SLOW_LINE_NS} ns): median acq/s (rounds)` }, { title: 'slow line: median acq/s (rounds)' }],
          lineRows(lineSplit, (id) => id, si),
        ),
        '',
        [lineNote(lineSplit), ...notes].join(' '),
        '',
      ];
    },
    /** The chart of every lock's median rate (whiskers: min–max) by worker count, the main thread's run left out. */
    throughputChart(title) {
      const lockNames = [...new Set(tput.filter((t) => !t.mainThread).map((t) => t.lock))];
      return {
        id: 'throughput',
        title,
        kind: 'line',
        x: { label: 'workers', log: false },
        y: { label: 'acquisitions/s', log: true },
        series: lockNames.map((name) => ({
          name,
          points: tput.filter((t) => t.lock === name && !t.mainThread).map((t) => ({ x: t.workers, y: t.rate.median, min: t.rate.min, max: t.rate.max })),
        })),
      };
    },
  };
}

/** The goals' section of the markdown, as lines: `goals` is [goal, {text, met}]; none if no goal ran. */
export function goalsLines(goals) {
  if (goals.every(([, r]) => r.text === 'not run')) return [];
  return [
    '## Goals',
    '',
    markdownTable(
      [{ title: 'goal', left: true }, { title: 'measured (ours / theirs)', left: true }, { title: 'met', left: true }],
      goals.map(([goal, r]) => [goal, r.text, r.met === null ? 'n/a' : r.met === true ? 'yes' : r.met || '**no**']),
    ),
    '',
  ];
}
