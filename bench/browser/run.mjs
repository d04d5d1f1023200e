// parklot's wasm benchmark suite in Chromium ("wasm-chromium"): the demo's
// own runners, driven headless. The lock arena (demo/src/arena-runner.ts)
// runs 1 to 16 Web Workers on one lock in parklot's shared memory, each lock
// in turn, rounds interleaved (arena.mjs, shared with Firefox's suite,
// firefox.mjs): the wasm module's locks, the pure-JS Atomics mutex, the npm
// package's Lock, the multithreading package's Mutex, V8's Atomics.Mutex
// (in a second Chromium with --js-flags=--harmony-struct) and, after them in
// each round, Emscripten's pthread_mutex_t (emscripten.mjs).
// The wait/notify lab (demo/src/lab.ts) times wake ping-pong (two workers,
// where the scheduler puts them and pinned a CPU each, and four pairs at
// once: oversubscribed) and
// main-thread waitAsync wake-ups through parklot and through the engine's
// Atomics, the ping-pong under a lock + condition through parklot and
// multithreading, and the CPU each ping-pong burns. Method: BENCHMARKS.md.
//
//   npm run build:demo && node bench/browser/run.mjs [--quick] [--out DIR]
//
// Writes DIR/wasm-chromium.json (machine, parameters, every round, the
// ChartSpecs bench/chart.mjs renders) and DIR/wasm-chromium.md (the
// tables), DIR defaulting to bench/results; progress goes to stderr. The
// demo server and Chromium are started here and stopped before exit.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { CHROMIUM, launchBrowser, startServer } from '../../tests/browser/chromium.mjs';
import { startEmscriptenPeer } from './emscripten.mjs';
import { MULTITHREADING_VERSION, QUICK_LOCKS, ROUND_TIMEOUT_MS, arenaConfigs, arenaLocks, arenaMethod, arenaReport, arenaSettings, goalsLines, logger, openArena, recordErrors, runArenaRounds, skipUnlessReady, suiteArgs, withTimeout } from './arena.mjs';
import { markdownTable, quantile, si, spread } from '../wasm/table.mjs';

const { quick: QUICK, outDir: OUT_DIR } = suiteArgs();

const SETTINGS = {
  ...arenaSettings(QUICK), // the lock arena's rounds, the same in Firefox (firefox.mjs)
  // Emscripten's pthread_mutex_t: one page per round, warmed up first with the most threads.
  emscriptenWarmupMs: QUICK ? 50 : 200,
  // The lab's rounds: each runs the ping-pong, then the wake-ups, for
  // labSeconds each; the goals take the median of the rounds' ratios.
  labRounds: QUICK ? 1 : 4,
  labSeconds: QUICK ? 2 : 4,
  // The ping-pong once more with this many pairs at once (8 workers on 2
  // CPUs: oversubscribed), its samples under ping8-*.
  oversubscribedPairs: 4,
  // Then, per lab round, each ping-pong through one side alone for
  // cpuSeconds, with the browser's CPU time read around it.
  cpuSeconds: QUICK ? 1 : 2,
  roundTimeoutMs: ROUND_TIMEOUT_MS,
};

const { log, fail } = logger('chromium');

skipUnlessReady(log, 'Chromium', CHROMIUM, 'scripts/setup.sh bench installs it; PARKLOT_CHROMIUM names another');

/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * Calls `each(pid)` for every process of the browser whose profile directory
 * is `profile` (every process with it on its command line: the browser, its
 * zygotes and renderers, where the pages' workers are threads). A process
 * that ends meanwhile is passed over. Needs Linux's /proc.
 */
function forBrowserProcesses(profile, each) {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(profile)) each(pid);
    } catch {
      // The process (or one of its threads) ended between the listing and the read.
    }
  }
}

/**
 * CPU seconds (user + system) used so far by the browser whose profile
 * directory is `profile`. A thread that ended still counts in its process.
 * Null without Linux's /proc.
 */
function browserCpuSeconds(profile) {
  if (!existsSync('/proc/self/stat')) return null;
  let ticks = 0;
  forBrowserProcesses(profile, (pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]); // utime and stime, stat's 14th and 15th fields
  });
  return ticks / CLOCK_TICKS;
}

/** The thread ids of the dedicated workers of the browser whose profile directory is `profile` (empty without /proc). */
function workerThreads(profile) {
  const tids = new Set();
  if (!existsSync('/proc/self/task')) return tids;
  forBrowserProcesses(profile, (pid) => {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'DedicatedWorker') tids.add(tid);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  });
  return tids;
}

/**
 * Pins the worker threads that appeared since `before` (a lab run's pair,
 * whose two threads it waits for) to `cpus`, one each, with taskset.
 */
async function pinNewWorkers(profile, before, cpus, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const fresh = [...workerThreads(profile)].filter((t) => !before.has(t));
    if (fresh.length >= cpus.length) {
      if (fresh.length > cpus.length) fail(`${what}: ${fresh.length} new worker threads, expected ${cpus.length}`);
      fresh.forEach((tid, i) => execFileSync('taskset', ['-p', '-c', String(cpus[i]), tid], { stdio: 'ignore' }));
      return;
    }
    if (Date.now() > deadline) fail(`${what}: its worker threads did not appear within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * Where the lab's pinned ping-pong runs: its two workers each on a CPU of
 * its own, the issue's "each worker has a core" (the unpinned ping-pong
 * measures the scheduler's choice, which often puts a pair that keeps waking
 * each other on one CPU). Null where the workers cannot be pinned (one CPU,
 * no taskset, no /proc), and the goal is then judged unpinned.
 */
const PIN = (() => {
  const none = { cpus: null, why: '' };
  if (os.availableParallelism() < 2) return { ...none, why: 'one CPU' };
  if (!existsSync('/proc/self/task')) return { ...none, why: 'no /proc to find the worker threads' };
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return { ...none, why: 'no taskset (util-linux)' };
  }
  return { cpus: [0, 1], prefix: 'pinned', why: '' };
})();

/**
 * Samples (ms): how many, the mean (the precise number: the clock's 5 µs
 * steps average out over many samples) and quantiles.
 */
function sampleStats(v) {
  return { samples: v.length, mean: v.reduce((a, b) => a + b, 0) / v.length, p10: quantile(v, 0.1), median: quantile(v, 0.5), p90: quantile(v, 0.9), p99: quantile(v, 0.99) };
}

/** Each measurement's samples (ms) as counts per 5 µs bin below 1 ms, plus the count at or above 1 ms. */
function histograms(lab) {
  const BIN_MS = 0.005;
  const BINS = 200;
  return Object.fromEntries(
    Object.entries(lab).map(([k, v]) => {
      const counts = new Array(BINS).fill(0);
      let over = 0;
      for (const ms of v) {
        const b = Math.floor(ms / BIN_MS);
        if (b < BINS) counts[b]++;
        else over++;
      }
      return [k, { binMicroseconds: BIN_MS * 1000, counts, atOrAbove1ms: over }];
    }),
  );
}

const started = new Date();
const server = await startServer();
const browser = await launchBrowser();
// V8's Atomics.Mutex exists only under --js-flags=--harmony-struct: a second
// Chromium with that flag runs its rounds, in turn with every other lock's,
// so that the flag touches no other lock's numbers. Idle between its rounds.
const v8Browser = await launchBrowser(['--js-flags=--harmony-struct']);
/** Peers that could not run here, with the reason (the report says so). */
const skipped = [];
const EMSCRIPTEN = 'Emscripten pthread_mutex_t';
/** Emscripten's peer, once started (below). */
let emscripten = { skipped: 'not started' };
let results;
let labSamples;
/** Per lab round, each measurement's sampleStats. */
let labRounds;
try {
  // Emscripten brings its own runtime and thread pool: its page runs every
  // worker count in one go, once per round, after the arena's locks.
  emscripten = await startEmscriptenPeer(browser.context, Math.max(...SETTINGS.workerCounts), log);
  if (emscripten.skipped) skipped.push({ peer: EMSCRIPTEN, reason: emscripten.skipped });
  const page = await browser.context.newPage();
  const pageErrors = [];
  recordErrors(page, pageErrors);
  await openArena(page, server.url);
  const browserVersion = browser.context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent));
  let locks = (await arenaLocks(page)).map((l) => ({ ...l, page }));
  const v8Page = await v8Browser.context.newPage();
  recordErrors(v8Page, pageErrors);
  await openArena(v8Page, server.url);
  const [hasV8Mutex, jsV8Mutex] = await v8Page.evaluate(() => [window.parklotArena.arena.hasV8Mutex, window.parklotArena.JS_V8_MUTEX]);
  if (hasV8Mutex) locks.push({ name: 'V8 Atomics.Mutex (JS loop)', peer: jsV8Mutex, page: v8Page });
  else skipped.push({ peer: 'V8 Atomics.Mutex', reason: `Chromium ${browserVersion} has no Atomics.Mutex under --js-flags=--harmony-struct` });
  if (QUICK) locks = locks.filter((l) => QUICK_LOCKS.includes(l.name));
  const configs = arenaConfigs(locks, SETTINGS, fail);

  // Rounds interleave every configuration: A B C ..., A B C ...; Emscripten's batch ends each round.
  const rounds = await runArenaRounds(configs, SETTINGS, { log, fail }, async (round, lineProbe) => {
    if (emscripten.skipped) return [];
    const lineNs = lineProbe.measure();
    const batch = await emscripten
      .run({
        durationMs: SETTINGS.roundMs,
        work: SETTINGS.work,
        warmupMs: SETTINGS.emscriptenWarmupMs,
        threadCounts: SETTINGS.workerCounts,
        timeoutMs: SETTINGS.roundTimeoutMs + SETTINGS.workerCounts.length * SETTINGS.roundMs,
      })
      .catch((e) => fail(`${EMSCRIPTEN}: ${e.message}`));
    return batch.map((b) => {
      const acquisitions = b.counts.reduce((x, y) => x + y, 0);
      if (b.counter !== acquisitions) fail(`${EMSCRIPTEN}, ${b.threads} threads: counter ${b.counter} != ${acquisitions} acquisitions (lost updates)`);
      const ms = Math.max(...b.endMs) - Math.min(...b.startMs);
      const rate = (acquisitions / ms) * 1000;
      log(`round ${round + 1}/${SETTINGS.rounds}, ${b.threads} threads, ${EMSCRIPTEN}: ${si(rate)}/s, counter exact`);
      return { round, lock: EMSCRIPTEN, workers: b.threads, mainThread: false, ms, rate, perWorker: b.counts, main: 0, counter: b.counter, lineNs };
    });
  });
  if (!emscripten.skipped) {
    for (const workers of SETTINGS.workerCounts) configs.push({ lock: EMSCRIPTEN, workers, mainThread: false });
  }
  // The tables list each worker count's locks together, the main thread's run last.
  configs.sort((a, b) => a.workers - b.workers || Number(a.mainThread) - Number(b.mainThread));

  await page.goto(`${server.url}lab.html`);
  await page.waitForSelector('#lab-result[data-state=idle]', { timeout: 30_000 });
  // One part at a time: the goal is for two workers that each have a core,
  // and on 2 CPUs the ticker and the page's thread would take one from them.
  const lab = {};
  labRounds = [];
  for (let round = 0; round < SETTINGS.labRounds; round++) {
    const stats = {};
    /**
     * The lab's run of `parts`: its samples, the ping-pong's under `prefix`
     * in place of the page's (ping8-parklot for ping-parklot). With `cpus`,
     * the pair's two workers are pinned to those CPUs as soon as their
     * threads exist (within a few ms of the run's start).
     */
    const labRun = async (seconds, parts, { only, pairs = 1, prefix, cpus } = {}) => {
      const what = `${parts}${pairs > 1 ? ` of ${pairs} pairs` : ''}${cpus ? ` pinned to CPUs ${cpus.join(' and ')}` : ''}${only ? `, ${only} alone` : ''}`;
      log(`wait/notify lab, round ${round + 1}/${SETTINGS.labRounds}: ${seconds} s of ${what}`);
      const before = workerThreads(browser.profile);
      const got = await withTimeout(
        (async () => {
          await page.evaluate(([s, p, o, n]) => {
            window.labRun = window.parklotLab.run(s, p, o ?? undefined, n);
          }, [seconds, parts, only ?? null, pairs]);
          if (cpus) await pinNewWorkers(browser.profile, before, cpus, what);
          return page.evaluate(() => window.labRun);
        })(),
        seconds * 1000 + SETTINGS.roundTimeoutMs,
        `the wait/notify lab's ${what}`,
      );
      return prefix === undefined ? got : Object.fromEntries(Object.entries(got).map(([k, v]) => [k.replace(/^ping-/, `${prefix}-`), v]));
    };
    for (const [parts, keys, options] of [
      ['ping-pong', ['ping-parklot', 'ping-native']],
      ...(PIN.cpus ? [['ping-pong', ['pinned-parklot', 'pinned-native'], PIN]] : []),
      ['wake-ups', ['main-parklot', 'main-native', 'after-parklot', 'after-native']],
      ['condition', ['cond-parklot', 'cond-multithreading']],
    ]) {
      const got = await labRun(SETTINGS.labSeconds, parts, options);
      for (const k of keys) {
        if (got[k].length === 0) fail(`the lab took no ${k} samples in round ${round + 1}`);
        lab[k] = (lab[k] ?? []).concat(got[k]);
        stats[k] = sampleStats(got[k]);
      }
    }
    // CPU per round trip: each side alone (alternating blocks would mix them
    // in the process's total), in turn, the order flipped every round. The
    // oversubscribed ping-pong is timed only so, each side for labSeconds:
    // with more workers than CPUs, one side's waiters would take CPU from
    // the other's, so alternating blocks would not compare the two.
    stats.cpuUsPerTrip = {};
    const many = { pairs: SETTINGS.oversubscribedPairs, prefix: `ping${2 * SETTINGS.oversubscribedPairs}`, seconds: SETTINGS.labSeconds, timed: true };
    for (const [parts, prefix, sides, options] of [
      ['ping-pong', 'ping', ['parklot', 'native']],
      ...(PIN.cpus ? [['ping-pong', PIN.prefix, ['parklot', 'native'], PIN]] : []),
      ['ping-pong', many.prefix, ['parklot', 'native'], many],
      ['condition', 'cond', ['parklot', 'multithreading']],
    ]) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const k = `${prefix}-${side}`;
        const cpu0 = browserCpuSeconds(browser.profile);
        const got = await labRun(options?.seconds ?? SETTINGS.cpuSeconds, parts, { ...options, only: side });
        const cpu1 = browserCpuSeconds(browser.profile);
        if (got[k].length === 0) fail(`the lab took no ${k} samples alone in round ${round + 1}`);
        if (cpu0 !== null) stats.cpuUsPerTrip[k] = ((cpu1 - cpu0) * 1e6) / got[k].length;
        if (options?.timed) {
          lab[k] = (lab[k] ?? []).concat(got[k]);
          stats[k] = sampleStats(got[k]);
        }
      }
    }
    labRounds.push(stats);
  }
  labSamples = lab;
  if (pageErrors.length) fail(`the pages reported errors: ${pageErrors.join('; ')}`);

  results = {
    suite: 'wasm-chromium',
    date: started.toISOString(),
    quick: QUICK,
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, browser: `Chromium ${browserVersion}`, node: process.version, multithreading: MULTITHREADING_VERSION, emcc: emscripten.version ?? null, platform: `${os.platform()} ${os.release()} ${os.arch()}` },
    params: SETTINGS,
    // The lab's samples (hundreds of thousands) are kept as a histogram: 5 µs bins up to 1 ms, then the count above.
    skipped,
    experiments: { throughput: { configs: configs.map(({ peer, page, ...c }) => c), rounds }, lab: histograms(lab), labRounds },
  };
} finally {
  if (!emscripten.skipped) await emscripten.stop();
  await v8Browser.close();
  await browser.close();
  await server.stop();
}

// ------------------------------------------------------------------ report

const report = arenaReport(results.experiments.throughput, SETTINGS.workerCounts);
const { tput } = report;

const labStats = Object.fromEntries(Object.entries(labSamples).map(([k, v]) => [k, sampleStats(v)]));
/** The median over the lab's rounds of `ratio(round)`, with its range, as text: "1.23x (0.98–1.40x)". */
function overRounds(ratio) {
  const rs = labRounds.map(ratio);
  const { median, min, max } = spread(rs);
  return { median, text: rs.length > 1 ? `${median.toFixed(2)}x (${min.toFixed(2)}–${max.toFixed(2)}x)` : `${median.toFixed(2)}x` };
}
const us = (ms) => (ms * 1000).toFixed(1);
/** The wake-latency chart's x label for each kind of lab measurement. */
const LAB_AXIS = { ping: 'worker ping-pong round trip', pinned: 'the same, a CPU each (pinned)', [`ping${2 * SETTINGS.oversubscribedPairs}`]: `the same, ${2 * SETTINGS.oversubscribedPairs} workers at once`, main: 'main thread waitAsync wake-up', after: 'the same, from the notify call\'s return', cond: 'round trip under a lock + condition' };

/** The goals this suite measures, each against its peer in the same run. */
function goalLines() {
  const ping = overRounds((r) => r['ping-native'].mean / r['ping-parklot'].mean);
  const many = `ping${2 * SETTINGS.oversubscribedPairs}`;
  const pingMany = overRounds((r) => r[`${many}-native`].mean / r[`${many}-parklot`].mean);
  const pinned = labRounds.every((r) => r['pinned-parklot'] !== undefined) ? overRounds((r) => r['pinned-native'].mean / r['pinned-parklot'].mean) : null;
  const cond = overRounds((r) => r['cond-multithreading'].mean / r['cond-parklot'].mean);
  /** "; CPU µs per round trip ...: parklot 1.2, engine 30.1" (medians over the rounds), or '' without /proc. */
  const cpu = (keys) => {
    if (!labRounds.every((r) => keys.every(([k]) => r.cpuUsPerTrip[k] !== undefined))) return '';
    return `; CPU µs per round trip (the browser's processes, each side run alone): ${keys.map(([k, name]) => `${name} ${spread(labRounds.map((r) => r.cpuUsPerTrip[k])).median.toFixed(1)}`).join(', ')}`;
  };
  /** ours/theirs at each of `qs` for the page's wake-ups `which` ('main' or 'after'), each to be ≤ 1. */
  const wake = (which, qs) => {
    const r = qs.map((q) => [q, overRounds((round) => round[`${which}-parklot`][q] / round[`${which}-native`][q])]);
    return { text: r.map(([q, x]) => `${q} ${x.text}`).join(', '), met: r.every(([, x]) => x.median <= 1) };
  };
  const goals = [
    pinned
      ? [
          'two-worker wake ping-pong, each worker on a CPU of its own (pinned), ≥ 5x faster than the engine\'s Atomics.wait/notify (mean)',
          {
            text: `${pinned.text}; all rounds' samples ${us(labStats['pinned-parklot'].mean)} / ${us(labStats['pinned-native'].mean)} µs${cpu([['pinned-parklot', 'parklot'], ['pinned-native', 'engine']])}; left to the scheduler: ${ping.text}, ${us(labStats['ping-parklot'].mean)} / ${us(labStats['ping-native'].mean)} µs${cpu([['ping-parklot', 'parklot'], ['ping-native', 'engine']])}`,
            met: pinned.median >= 5,
          },
        ]
      : [`two-worker wake ping-pong ≥ 5x faster than the engine's Atomics.wait/notify (mean; not pinned: ${PIN.why})`, { text: `${ping.text}; all rounds' samples ${us(labStats['ping-parklot'].mean)} / ${us(labStats['ping-native'].mean)} µs${cpu([['ping-parklot', 'parklot'], ['ping-native', 'engine']])}`, met: ping.median >= 5 }],
    [`wake ping-pong, ${2 * SETTINGS.oversubscribedPairs} workers (oversubscribed), no slower than the engine (mean)`, { text: `engine/parklot ${pingMany.text}; all rounds' samples ${us(labStats[`${many}-parklot`].mean)} / ${us(labStats[`${many}-native`].mean)} µs${cpu([[`${many}-parklot`, 'parklot'], [`${many}-native`, 'engine']])}`, met: pingMany.median >= 1 }],
    ['page thread woken through waitAsync ≤ 1.0x the engine, timed from before the notify call', wake('main', ['median', 'p99'])],
    ['the same, timed from the notify call\'s return (the page\'s side alone)', wake('after', ['median', 'p99'])],
    ['wake ping-pong under a lock + condition: parklot\'s Lock + Condition (npm package) no slower than `multithreading`\'s Mutex + Condvar (mean)', { text: `multithreading/parklot ${cond.text}; all rounds' samples ${us(labStats['cond-parklot'].mean)} / ${us(labStats['cond-multithreading'].mean)} µs${cpu([['cond-parklot', 'parklot'], ['cond-multithreading', 'multithreading']])}`, met: cond.median >= 1 }],
    ...report.goals([
      ['parklot::Lock ≥ 2x V8 Atomics.Mutex', 'V8 Atomics.Mutex (JS loop)', 2],
      ['parklot::Lock ≥ 1x Emscripten\'s pthread_mutex_t', EMSCRIPTEN, 1],
    ]),
  ];
  return goalsLines(goals);
}

/** The CPU time per round trip, each side's ping-pong run alone: median and range over the lab's rounds. */
function cpuLines() {
  const many = `ping${2 * SETTINGS.oversubscribedPairs}`;
  const keys = ['ping-parklot', 'ping-native', 'pinned-parklot', 'pinned-native', `${many}-parklot`, `${many}-native`, 'cond-parklot', 'cond-multithreading'].filter((k) => labRounds.every((r) => r.cpuUsPerTrip[k] !== undefined));
  if (!keys.length) return [];
  return [
    '### CPU per round trip (µs)',
    '',
    markdownTable(
      [{ title: 'ping-pong', left: true }, { title: 'median' }, { title: 'min–max', left: true }],
      keys.map((k) => {
        const c = spread(labRounds.map((r) => r.cpuUsPerTrip[k]));
        return [k, c.median.toFixed(1), `${c.min.toFixed(1)}–${c.max.toFixed(1)}`];
      }),
    ),
    '',
    `Each side's ping-pong alone for ${SETTINGS.cpuSeconds} s per lab round (ping${2 * SETTINGS.oversubscribedPairs}: the ${SETTINGS.labSeconds} s runs its latencies come from; the order flipped every round): the CPU time (user + system) of every process of the browser, read from /proc before and after, over the round trips made. A spin that wins latency by burning a core shows here.`,
    '',
  ];
}

const lines = [
  `# wasm in Chromium workers (${results.date.slice(0, 10)})`,
  '',
  `${arenaMethod(results.machine, SETTINGS)}, and Emscripten's \`pthread_mutex_t\` (${results.machine.emcc ?? 'not built'}; bench/wasm/emscripten/pthread_mutex.c built for the web, its own page and thread pool, every worker count once per round after the others).${QUICK ? ' **--quick smoke: these numbers are not measurements.**' : ''}`,
  '',
  ...results.skipped.flatMap((sk) => [`**Skipped: ${sk.peer}**: ${sk.reason}.`, '']),
  ...goalLines(),
  ...report.throughputLines(),
  ...report.lineLines('Emscripten\'s rows take the probe before its batch of every worker count.'),
  '## Wait/notify latency (µs), parklot vs the engine',
  '',
  markdownTable(
    [{ title: 'measurement', left: true }, { title: 'samples' }, { title: 'mean' }, { title: 'p10' }, { title: 'median' }, { title: 'p90' }, { title: 'p99' }],
    Object.entries(labStats).map(([k, s]) => [k, s.samples, us(s.mean), us(s.p10), us(s.median), us(s.p90), us(s.p99)]),
  ),
  '',
  `The lab runs its parts one after the other, ${SETTINGS.labSeconds} s each, so that nothing else of ours runs beside each ping-pong's two workers, ${SETTINGS.labRounds} rounds of all of them; the goals above take the median over the rounds of each round's ratio (range in brackets), the table below all rounds' samples together. Ping-pong: two workers, each round trip two waits and two notifies, 50 round trips per API in alternating blocks, where the scheduler puts them; pinned: the same with the two workers pinned each to a CPU of its own (taskset on their threads, within a few ms of their start)${PIN.cpus ? '' : ` (not run here: ${PIN.why})`}; ping${2 * SETTINGS.oversubscribedPairs}: the same with ${SETTINGS.oversubscribedPairs} pairs at once, each on words of its own (${2 * SETTINGS.oversubscribedPairs} workers on ${results.machine.cores} CPUs), each API alone for ${SETTINGS.labSeconds} s (in alternating blocks one API's waiters would take CPU from the other's), every pair's round trips together; main: the page's thread woken through \`waitAsync\` by a worker's notify (includes the event loop's turn), timed from just before the notify call; after: the same wake-ups timed from the moment the notify call returned, so main minus after is the notifying worker's own time in the call; cond: the ping-pong under a lock, each side waiting on a condition while the flag is not its own, 50 round trips per package in alternating blocks (parklot's \`Lock\` + \`Condition\` through the npm package, \`multithreading\`'s \`Mutex\` + \`Condvar\`), run as a part of its own. Chromium's \`performance.now()\` has about 5 µs steps in an isolated page.`,
  '',
  ...cpuLines(),
];
const markdown = `${lines.join('\n')}\n`;

const charts = [
  report.throughputChart('Lock throughput in Chromium workers (wasm)'),
  labChart('condition', 'Ping-pong under a lock + condition in Chromium: parklot vs multithreading (mean, p10–p90)', [
    { name: 'parklot Lock + Condition (npm package)', keys: ['cond-parklot'] },
    { name: 'multithreading Mutex + Condvar (npm)', keys: ['cond-multithreading'] },
  ]),
  labChart('wait-notify', 'Wake latency in Chromium: parklot vs engine Atomics (mean, p10–p90)', [
    { name: 'parklot', keys: ['ping-parklot', 'pinned-parklot', `ping${2 * SETTINGS.oversubscribedPairs}-parklot`, 'main-parklot', 'after-parklot'] },
    { name: 'engine Atomics', keys: ['ping-native', 'pinned-native', `ping${2 * SETTINGS.oversubscribedPairs}-native`, 'main-native', 'after-native'] },
  ]),
];

/**
 * A bar chart of the lab's times in microseconds: per series `{ name, keys }`,
 * a bar for each of its keys measured (at its part's place on LAB_AXIS), the
 * mean, with whiskers from p10 to p90.
 */
function labChart(id, title, series) {
  return {
    id,
    title,
    kind: 'bar',
    x: { label: 'measurement', log: false },
    y: { label: 'microseconds', log: false },
    series: series.map(({ name, keys }) => ({
      name,
      points: keys.filter((k) => labStats[k] !== undefined).map((k) => ({ x: LAB_AXIS[k.split('-')[0]], y: labStats[k].mean * 1000, min: labStats[k].p10 * 1000, max: labStats[k].p90 * 1000 })),
    })),
  };
}

mkdirSync(OUT_DIR, { recursive: true });
writeFileSync(`${OUT_DIR}/wasm-chromium.json`, `${JSON.stringify({ ...results, summaries: { throughput: tput, lab: labStats }, charts }, null, 1)}\n`);
writeFileSync(`${OUT_DIR}/wasm-chromium.md`, markdown);
process.stdout.write(markdown);
log(`done in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s; wrote ${OUT_DIR}/wasm-chromium.json and wasm-chromium.md`);
