// A suite that runs the lock arena alone in one browser other than Chromium
// (firefox.mjs, webkit.mjs): Chromium's arena rounds (run.mjs; both through
// arena.mjs), 1 to 16 Web Workers on one lock in parklot's shared memory,
// each lock in turn, rounds interleaved, the counter checked exact every
// round: the wasm module's locks, the pure-JS Atomics mutex, the npm
// package's Lock and the multithreading package's Mutex, then parklot::Lock
// with the page's main thread taking part. V8's Atomics.Mutex is Chromium's
// alone, and Emscripten's pthread_mutex_t runs in Chromium's suite only (its
// page is driven through Playwright). Method: BENCHMARKS.md.
//
// Writes DIR/<suite>.json (machine, parameters, every round, the chart
// bench/chart.mjs renders) and DIR/<suite>.md (the tables), DIR defaulting
// to bench/results; progress goes to stderr. The demo server and the
// browser are started here and stopped before exit, a failed run's too.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { startServer } from '../../tests/browser/chromium.mjs';
import { MULTITHREADING_VERSION, QUICK_LOCKS, ROUND_TIMEOUT_MS, arenaConfigs, arenaLocks, arenaMethod, arenaReport, arenaSettings, goalsLines, logger, openArena, recordErrors, runArenaRounds, skipUnlessReady, suiteArgs } from './arena.mjs';

/**
 * @typedef {object} Browser
 * @property {string} name With its version: "Firefox 153.8.0".
 * @property {number | undefined} pid The process (or process group) started.
 * @property {object} page The page the arena runs in: Puppeteer's, or one that answers the same calls (goto, waitForSelector, evaluate, on).
 * @property {() => Promise<void>} close Stops the browser, by its PID.
 */

/**
 * Runs the suite `suite` ("wasm-firefox") in the browser `launch()` starts,
 * or exits with code 3 if there is none at `path` (`how`: how to get one).
 * `engine` names the browser in the title ("Firefox"); `note`, a sentence on
 * how it is driven, follows the method.
 * @param {{ suite: string, engine: string, path: string, how: string, note: string, launch: () => Promise<Browser> }} options
 */
export async function runArenaSuite({ suite, engine, path, how, note, launch }) {
  const { quick, outDir } = suiteArgs();
  const settings = { ...arenaSettings(quick), roundTimeoutMs: ROUND_TIMEOUT_MS };
  const { log } = logger(engine.toLowerCase());
  skipUnlessReady(log, engine, path, how);
  /** A failure ends the run through `finally` (the browser and the server stopped), then exits 1. */
  const fail = (msg) => {
    throw new Error(msg);
  };

  const started = new Date();
  let results;
  let failure;
  const server = await startServer();
  let browser;
  try {
    browser = await launch();
    log(`${browser.name} (PID ${browser.pid})`);
    const { page } = browser;
    const pageErrors = [];
    recordErrors(page, pageErrors);
    await openArena(page, server.url);
    let locks = (await arenaLocks(page)).map((l) => ({ ...l, page }));
    if (quick) locks = locks.filter((l) => QUICK_LOCKS.includes(l.name));
    const configs = arenaConfigs(locks, settings, fail);
    // Rounds interleave every configuration: A B C ..., A B C ...
    const rounds = await runArenaRounds(configs, settings, { log, fail });
    if (pageErrors.length) fail(`the page reported errors: ${pageErrors.join('; ')}`);
    // The tables list each worker count's locks together, the main thread's run last.
    configs.sort((a, b) => a.workers - b.workers || Number(a.mainThread) - Number(b.mainThread));
    results = {
      suite,
      date: started.toISOString(),
      quick,
      machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, browser: browser.name, node: process.version, multithreading: MULTITHREADING_VERSION, platform: `${os.platform()} ${os.release()} ${os.arch()}` },
      params: settings,
      experiments: { throughput: { configs: configs.map(({ peer, page, ...c }) => c), rounds } },
    };
  } catch (e) {
    failure = e;
  } finally {
    await browser?.close();
    await server.stop();
  }
  if (failure) {
    log(`FAIL: ${failure.message}`);
    process.exit(1);
  }

  const report = arenaReport(results.experiments.throughput, settings.workerCounts);
  const lines = [
    `# wasm in ${engine} workers (${results.date.slice(0, 10)})`,
    '',
    `${arenaMethod(results.machine, settings)}. V8's \`Atomics.Mutex\` and Emscripten's \`pthread_mutex_t\` run in Chromium's suite only (wasm-chromium.md), whose arena rounds these are. ${note}${quick ? ' **--quick smoke: these numbers are not measurements.**' : ''}`,
    '',
    ...goalsLines(report.goals()),
    ...report.throughputLines(),
    ...report.lineLines(),
  ];
  const markdown = `${lines.join('\n')}\n`;
  const charts = [report.throughputChart(`Lock throughput in ${engine} workers (wasm)`)];

  mkdirSync(outDir, { recursive: true });
  writeFileSync(`${outDir}/${suite}.json`, `${JSON.stringify({ ...results, summaries: { throughput: report.tput }, charts }, null, 1)}\n`);
  writeFileSync(`${outDir}/${suite}.md`, markdown);
  process.stdout.write(markdown);
  log(`done in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s; wrote ${outDir}/${suite}.json and ${suite}.md`);
}
