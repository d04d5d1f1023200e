// Emscripten's pthread_mutex_t peer (bench/wasm/emscripten/pthread_mutex.c)
// in the Chromium the suite drives: the program built for the web, served
// cross-origin isolated from its own directory with the glue page
// emscripten.html as index.html, one page per batch of rounds. The rounds
// have the shape bench/wasm's runEmscriptenRounds gives under Node.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../tests/browser/chromium.mjs';
import { buildEmscriptenPeer, EMSCRIPTEN_WEB_DIR, emscriptenArgs, emscriptenRounds } from '../wasm/emscripten.mjs';

const PAGE = new URL('./emscripten.html', import.meta.url);

/**
 * @typedef {{ threads: number, counter: number, counts: number[], startMs: number[], endMs: number[] }} EmscriptenRound
 * @typedef {{ durationMs: number, work: number, warmupMs: number, threadCounts: number[], timeoutMs: number }} EmscriptenRun
 */

/**
 * Builds the web peer for up to `maxThreads` threads if needed and serves it;
 * `run` then opens a page of `context` per call. Resolves to {skipped: reason}
 * when emcc is missing; rejects if emcc or the server fails. Stop it with stop().
 *
 *   const peer = await startEmscriptenPeer(browser.context, 16, log);
 *   if (!peer.skipped) rounds = await peer.run({ durationMs: 500, work: 1, warmupMs: 200, threadCounts: [1, 4], timeoutMs: 60_000 });
 *
 * @param {import('playwright-core').BrowserContext} context
 * @param {number} maxThreads
 * @param {(msg: string) => void} log
 * @returns {Promise<{ skipped: string } | { skipped?: undefined, version: string, run(opts: EmscriptenRun): Promise<EmscriptenRound[]>, stop(): Promise<void> }>}
 */
export async function startEmscriptenPeer(context, maxThreads, log) {
  const built = buildEmscriptenPeer(maxThreads, log, { environment: 'web' });
  if (built.skipped) return { skipped: built.skipped };
  // demo/serve.mjs wants an index.html in the directory it serves.
  copyFileSync(PAGE, join(EMSCRIPTEN_WEB_DIR, 'index.html'));
  const server = await startServer('--root', EMSCRIPTEN_WEB_DIR);
  const base = server.url.endsWith('/') ? server.url : `${server.url}/`;
  /** Pages still open, closed by stop() if a run is cut short. */
  const pages = new Set();

  /**
   * One page: a warm-up of `warmupMs` with the most threads, then one timed
   * round per entry of `threadCounts`. Rejects with the program's stderr if
   * it fails (its counter check included), or if it has not finished within
   * `timeoutMs` of the page's opening.
   * @param {EmscriptenRun} opts
   */
  async function run({ durationMs, work, warmupMs, threadCounts, timeoutMs }) {
    const most = Math.max(...threadCounts);
    if (most > maxThreads) throw new RangeError(`pthread_mutex in Chromium: ${most} threads asked, but its pool was built for ${maxThreads} (startEmscriptenPeer's maxThreads)`);
    const deadline = Date.now() + timeoutMs;
    const page = await context.newPage();
    pages.add(page);
    let result;
    try {
      await page.goto(`${base}index.html?args=${emscriptenArgs({ durationMs, work, warmupMs, threadCounts }).join(',')}`, { timeout: timeoutMs });
      const done = await page.waitForFunction(() => window.emResult, null, { timeout: Math.max(1, deadline - Date.now()), polling: 50 });
      result = await done.jsonValue();
    } catch (e) {
      if (e?.name === 'TimeoutError') throw new Error(`pthread_mutex in Chromium: no answer in ${timeoutMs} ms (deadlock?)`);
      throw new Error(`pthread_mutex in Chromium: the page failed: ${e.message}`);
    } finally {
      pages.delete(page);
      await page.close();
    }
    return emscriptenRounds(result.code, result.out, result.err);
  }

  async function stop() {
    await Promise.all([...pages].map((p) => p.close()));
    await server.stop();
  }

  return { version: built.version, run, stop };
}
