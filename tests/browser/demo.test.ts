// The demo pages in a real Chromium: served cross-origin isolated by the main
// command's server, the arena with workers and the page's own thread on one
// lock, the wait/notify lab, and what a page says when it cannot share memory.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, startServer, type Browser, type Server } from './browser.js';

let server: Server;
let plain: Server;
let browser: Browser;

beforeAll(async () => {
  [server, plain, browser] = await Promise.all([startServer(), startServer('--no-isolation'), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([server?.stop(), plain?.stop()]);
  for (const s of [server, plain]) {
    if (!s) continue;
    // Stopped by PID: the process is gone.
    expect(() => process.kill(s.pid, 0)).toThrow();
  }
});

/** Where each page says it is idle (ready to run): its result element. */
const RESULT = { 'arena.html': '#result', 'lab.html': '#lab-result' } as const;

/** Opens the demo page `path` on the isolated server and waits until it is idle. */
async function openReady(path: keyof typeof RESULT): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser, `${server.url}${path}`);
  await opened.page.waitForSelector(`${RESULT[path]}[data-state=idle]`);
  return opened;
}

/** Runs `parklotLab.run(1, parts, only, pairs)` on the lab `page` for each case, one after the other, and expects each refused with its error (`name: message`). */
async function expectLabRefusals(page: Page, cases: [call: [parts: string, only?: string, pairs?: number], refusal: string][]): Promise<void> {
  const outcomes = await page.evaluate(async (calls) => {
    const lab = (window as unknown as { parklotLab: { run(seconds: number, parts: string, only?: string, pairs?: number): Promise<unknown> } }).parklotLab;
    const out: string[] = [];
    for (const [parts, only, pairs] of calls) out.push(await lab.run(1, parts, only, pairs).then(() => 'ran', (e: Error) => `${e.name}: ${e.message}`));
    return out;
  }, cases.map(([call]) => call));
  expect(outcomes).toEqual(cases.map(([, refusal]) => refusal));
}

/** The arena's result block, once a run has stopped. */
interface ArenaDone {
  exact: string;
  counter: string;
  expected: string;
  perWorker: string;
  main: string;
}

describe('the demo server', () => {
  it('serves the pages cross-origin isolated, with the wasm module as application/wasm', async () => {
    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(res.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    const html = await res.text();
    expect(html).toContain('arena.html');
    const { page, errors } = await openPage(browser, server.url);
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);
    expect(await page.locator('#isolation-help').count()).toBe(0);
    await expect.poll(() => page.locator('#isolation-state').textContent()).toContain('crossOriginIsolated: true');
    // The bundled wasm module is served with its MIME type (streaming compilation needs it).
    const assets = readdirSync(fileURLToPath(new URL('../../demo/dist/assets/', import.meta.url)));
    const wasm = assets.find((f) => f.endsWith('.wasm'));
    expect(wasm).toBeDefined();
    const wasmRes = await fetch(`${server.url}assets/${wasm}`);
    expect(wasmRes.headers.get('content-type')).toBe('application/wasm');
    expect(wasmRes.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    await screenshot(page, 'landing');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('is what the main command (npm start) builds and serves, until stopped by its PID', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const child = spawn('bash', ['scripts/start.sh', '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start printed no URL within 120 s:\n${out}`)), 120_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /parklot demo: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exited.then((code) => reject(new Error(`npm start exited (${code}):\n${out}`)));
    });
    const res = await fetch(`${url}lab.html`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    process.kill(child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  it('answers 404 for paths outside the demo', async () => {
    expect((await fetch(new URL('../package.json', server.url))).status).toBe(404);
    expect((await fetch(new URL('/%2e%2e/package.json', server.url))).status).toBe(404);
    expect((await fetch(new URL('/no-such-page.html', server.url))).status).toBe(404);
  });

  it('answers 400 for a request path it cannot parse, and keeps serving', async () => {
    // `//` as the whole path once made the URL parser throw, out of the request handler: the server died.
    expect((await fetch(`${server.url}/`)).status).toBe(400);
    expect((await fetch(server.url)).status).toBe(200);
  });
});

describe('lock arena', () => {
  it('4 workers and the main thread share parklot Lock for 2 s: counter exact, every thread served', async () => {
    const { page, errors } = await openReady('arena.html');
    expect(await page.locator('#lock option:checked').textContent()).toBe('parklot::Lock');
    await page.fill('#workers', '4');
    await page.selectOption('#work', '1');
    await page.check('#main-thread');
    await page.click('#start');
    await page.waitForSelector('#result[data-state=running]');
    await page.waitForTimeout(2000);
    await screenshot(page, 'arena-running');
    await page.click('#stop');
    await page.waitForSelector('#result[data-state=done]', { timeout: 30_000 });
    const r = (await page.locator('#result').evaluate((el) => ({ ...(el as HTMLElement).dataset }))) as unknown as ArenaDone;
    const perWorker = JSON.parse(r.perWorker) as number[];
    expect(perWorker).toHaveLength(4);
    for (const n of perWorker) expect(n).toBeGreaterThan(0);
    expect(Number(r.main)).toBeGreaterThan(0);
    expect(r.exact).toBe('true');
    expect(Number(r.counter)).toBe(perWorker.reduce((a, b) => a + b, 0) + Number(r.main));
    // The live charts were drawn: the rate line has points, the fairness chart 4 workers + main.
    const charts = await page.evaluate(() => {
      const canvases = [...document.querySelectorAll('canvas')];
      return canvases.map((c) => c.width * c.height);
    });
    expect(charts.every((area) => area > 0)).toBe(true);
    expect(await page.locator('#runs tbody tr').count()).toBe(1);
    expect(await page.locator('#runs tbody tr td.ok').textContent()).toMatch(/^exact/);
    await screenshot(page, 'arena');
    expect(errors.filter((e) => /cannot be called in this context/i.test(e))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("runs every lock the page offers, the pure-JS mutex, the npm package's Lock and multithreading's Mutex from JS, with exact counters", async () => {
    const { page, errors } = await openReady('arena.html');
    const results = await page.evaluate(async () => {
      const { arena, JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING } = window.parklotArena!;
      const out: { lock: string; exact: boolean; counter: number; min: number }[] = [];
      for (const peer of [...arena.peers.keys(), JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING]) {
        const r = await arena.run({ workers: 3, peer, work: 10, mainThread: false }, 300);
        out.push({ lock: r.lock, exact: r.exact, counter: r.counter, min: Math.min(...r.perWorker) });
      }
      return out;
    });
    expect(results.map((r) => r.lock)).toContain('std::sync::Mutex');
    expect(results.map((r) => r.lock)).toContain('pure-JS Atomics mutex');
    expect(results.map((r) => r.lock)).toContain('parklot Lock via the npm package (JS loop)');
    expect(results.map((r) => r.lock)).toContain('multithreading Mutex (npm, JS loop)');
    expect(results.length).toBeGreaterThanOrEqual(11);
    for (const r of results) {
      expect(r, r.lock).toMatchObject({ exact: true });
      expect(r.counter, r.lock).toBeGreaterThan(0);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it("runs V8's Atomics.Mutex where Chromium has it (--js-flags=--harmony-struct), and says how to get it where not", async () => {
    const { page, errors } = await openReady('arena.html');
    const refused = await page.evaluate(async () => {
      const { arena, JS_V8_MUTEX } = window.parklotArena!;
      try {
        await arena.start({ workers: 2, peer: JS_V8_MUTEX, work: 1, mainThread: false });
        return `started (hasV8Mutex ${arena.hasV8Mutex})`;
      } catch (e) {
        return `${(e as Error).name}: ${(e as Error).message}`;
      }
    });
    expect(refused).toMatch(/^TypeError: arena: this browser has no Atomics.Mutex .*--js-flags=--harmony-struct/);
    expect(await page.locator('#lock option', { hasText: 'Atomics.Mutex' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();

    const flagged = await launchBrowser(['--js-flags=--harmony-struct']);
    try {
      const { page: v8Page, errors: v8Errors } = await openPage(flagged, `${server.url}arena.html`);
      await v8Page.waitForSelector('#result[data-state=idle]');
      expect(await v8Page.locator('#lock option', { hasText: 'Atomics.Mutex' }).count()).toBe(1);
      const r = await v8Page.evaluate(async () => {
        const { arena, JS_V8_MUTEX } = window.parklotArena!;
        return arena.run({ workers: 3, peer: JS_V8_MUTEX, work: 10, mainThread: false }, 300);
      });
      expect(r.lock).toBe('V8 Atomics.Mutex (JS loop)');
      expect(r).toMatchObject({ exact: true });
      expect(Math.min(...r.perWorker)).toBeGreaterThan(0);
      expect(v8Errors).toEqual([]);
    } finally {
      await flagged.close();
    }
  });

  it('HandoffLock never hands the lock to a waiter that is not asleep yet (regression: a run hung)', async () => {
    // In wasm a waiter can be queued but not yet asleep when the fairness timer
    // makes an unlock probe it; HandoffLock handed the lock to such an
    // unconfirmed waiter, which then retried as if it had not got it. About
    // one run in six hung with 3 workers.
    const { page, errors } = await openReady('arena.html');
    const results = await page.evaluate(async () => {
      const { arena } = window.parklotArena!;
      const peer = arena.peers.indexOf('HandoffLock');
      const out: boolean[] = [];
      for (let i = 0; i < 12; i++) out.push((await arena.run({ workers: 3, peer, work: 1, mainThread: false }, 150)).exact);
      return out;
    });
    expect(results).toEqual(Array(12).fill(true));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses a bad configuration with an error that says what to do', async () => {
    const { page } = await openReady('arena.html');
    const messages = await page.evaluate(async () => {
      const { arena } = window.parklotArena!;
      const std = arena.peers.indexOf('std::sync::Mutex');
      const tries = [
        { workers: 0, peer: 0, work: 1, mainThread: false },
        { workers: 4, peer: 0, work: 0, mainThread: false },
        { workers: 4, peer: 99, work: 1, mainThread: false },
        { workers: 2, peer: std, work: 1, mainThread: true },
      ];
      const out: string[] = [];
      for (const c of tries) {
        try {
          await arena.start(c);
          out.push('started');
        } catch (e) {
          out.push(`${(e as Error).name}: ${(e as Error).message}`);
        }
      }
      return out;
    });
    expect(messages[0]).toMatch(/^RangeError: arena: workers must be 1 to 16/);
    expect(messages[1]).toMatch(/^RangeError: arena: work must be 1 to 1000/);
    expect(messages[2]).toMatch(/^RangeError: arena: no lock 99/);
    expect(messages[3]).toMatch(/^TypeError: .*only parklot::Lock can take the main thread/);
    // The main-thread box is off for a lock without an async path.
    await page.selectOption('#lock', { label: 'std::sync::Mutex (Rust, in wasm)' });
    expect(await page.isDisabled('#main-thread')).toBe(true);
    expect(await page.locator('#main-note').textContent()).toContain('async path');
    await page.close();
  });
});

describe('wait/notify lab', () => {
  it('measures ping-pong through parklot and the engine, and main-thread waitAsync wake-ups, with histograms', async () => {
    const { page, errors } = await openReady('lab.html');
    await page.fill('#seconds', '3');
    await page.click('#start');
    await page.waitForSelector('#lab-result[data-state=done]', { timeout: 30_000 });
    const counts = await page.locator('#lab-result').evaluate((el) => ({ ...(el as HTMLElement).dataset }));
    for (const key of ['pingParklotSamples', 'pingNativeSamples', 'mainParklotSamples', 'mainNativeSamples']) {
      expect(Number(counts[key]), key).toBeGreaterThan(20);
    }
    // Every wake-up is timed twice: from before the notify call and from its return.
    expect(counts['afterParklotSamples']).toBe(counts['mainParklotSamples']);
    expect(counts['afterNativeSamples']).toBe(counts['mainNativeSamples']);
    // Each histogram holds every sample of its measurement.
    const sums = await page.evaluate(() => {
      const sum = (id: string): number[] => (document.getElementById(id)!.dataset['sums'] ?? '').split(',').map(Number);
      return { parklot: sum('hist-parklot'), native: sum('hist-native'), main: sum('hist-main') };
    });
    expect(sums.parklot).toEqual([Number(counts['pingParklotSamples'])]);
    expect(sums.native).toEqual([Number(counts['pingNativeSamples'])]);
    expect(sums.main).toEqual([Number(counts['mainParklotSamples']), Number(counts['mainNativeSamples'])]);
    // Axes a reader can use: a round y maximum (not the tallest bin's count), every bin labelled.
    const axes = await page.evaluate(() =>
      ['hist-parklot', 'hist-native', 'hist-main'].map((id) => ({ ...document.getElementById(id)!.dataset })),
    );
    // The two ping-pong charts share a y maximum (set by the page; Chart.js picks the main chart's).
    expect(axes[0]!['yMax']).toBe(axes[1]!['yMax']);
    const yMax = Number(axes[0]!['yMax']);
    const mantissa = Number((yMax / 10 ** Math.floor(Math.log10(yMax) + 1e-9)).toPrecision(6));
    expect([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8], `y max ${yMax}`).toContain(mantissa);
    for (const a of axes) {
      const [labelled, bins] = a['xLabels']!.split('/').map(Number);
      expect(labelled, 'labelled bins').toBe(bins);
    }
    expect(await page.locator('#lab-table tbody tr').count()).toBe(8);
    await screenshot(page, 'lab');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("measures the ping-pong under a lock and a condition through parklot's and multithreading's, alone", async () => {
    const { page, errors } = await openReady('lab.html');
    await page.fill('#seconds', '2');
    await page.selectOption('#parts', 'condition');
    await page.click('#start');
    await page.waitForSelector('#lab-result[data-state=done]', { timeout: 30_000 });
    const counts = await page.locator('#lab-result').evaluate((el) => ({ ...(el as HTMLElement).dataset }));
    for (const key of ['condParklotSamples', 'condMultithreadingSamples']) expect(Number(counts[key]), key).toBeGreaterThan(20);
    // Alone: nothing else ran.
    for (const key of ['pingParklotSamples', 'pingNativeSamples', 'mainParklotSamples', 'mainNativeSamples']) expect(counts[key], key).toBe('0');
    const sums = await page.evaluate(() => (document.getElementById('hist-cond')!.dataset['sums'] ?? '').split(',').map(Number));
    expect(sums).toEqual([Number(counts['condParklotSamples']), Number(counts['condMultithreadingSamples'])]);
    // One side alone (the benchmark's CPU runs): only its samples.
    const alone = await page.evaluate(async () => {
      const lab = (window as unknown as { parklotLab: { run(seconds: number, parts: string, only?: string): Promise<Record<string, number[]>> } }).parklotLab;
      const r = await lab.run(1, 'condition', 'multithreading');
      return [r['cond-parklot']!.length, r['cond-multithreading']!.length];
    });
    expect(alone[0]).toBe(0);
    expect(alone[1]).toBeGreaterThan(20);
    await expectLabRefusals(page, [
      [['everything'], 'RangeError: lab: parts must be one of all, ping-pong, wake-ups, condition'],
      [['ping-pong', 'multithreading'], 'RangeError: lab: only must be one of parklot, native for ping-pong (or left out)'],
    ]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('wait/notify lab, several pairs', () => {
  it('plays the ping-pong in several pairs at once, each pair on words of its own', async () => {
    const { page, errors } = await openReady('lab.html');
    type Lab = { run(seconds: number, parts: string, only?: string, pairs?: number): Promise<Record<string, number[]>> };
    // Four pairs, one API alone (how the benchmark times 8 workers on 2 CPUs): every pair sends round trips.
    const r = await page.evaluate(async () => {
      const lab = (window as unknown as { parklotLab: Lab }).parklotLab;
      const got = await lab.run(1, 'ping-pong', 'parklot', 4);
      return { parklot: got['ping-parklot']!.length, native: got['ping-native']!.length };
    });
    expect(r.parklot).toBeGreaterThan(20);
    expect(r.native).toBe(0);
    expect(await page.locator('#lab-result').getAttribute('data-pairs-reporting')).toBe('4');
    // From the form: the pairs field.
    await page.fill('#seconds', '1');
    await page.fill('#pairs', '3');
    await page.click('#start');
    await page.waitForSelector('#lab-result[data-state=done]', { timeout: 30_000 });
    const counts = await page.locator('#lab-result').evaluate((el) => ({ ...(el as HTMLElement).dataset }));
    expect(counts['pairsReporting']).toBe('3');
    for (const key of ['pingParklotSamples', 'pingNativeSamples', 'mainParklotSamples']) expect(Number(counts[key]), key).toBeGreaterThan(20);
    await expectLabRefusals(page, [
      [['ping-pong', undefined, 0], 'RangeError: lab: pairs must be a whole number from 1 to 8'],
      [['ping-pong', undefined, 9], 'RangeError: lab: pairs must be a whole number from 1 to 8'],
      [['condition', undefined, 1.5], 'RangeError: lab: pairs must be a whole number from 1 to 8'],
      [['wake-ups', undefined, 2], 'RangeError: lab: wake-ups play no ping-pong: leave pairs out (or 1)'],
    ]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('a page that cannot share memory', () => {
  it('explains the missing headers when served without COOP/COEP', async () => {
    const res = await fetch(`${plain.url}arena.html`);
    expect(res.headers.get('cross-origin-opener-policy')).toBeNull();
    for (const path of ['', 'arena.html', 'lab.html']) {
      const { page } = await openPage(browser, plain.url + path);
      expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(false);
      const help = page.locator('#isolation-help');
      await help.waitFor();
      const text = await help.textContent();
      expect(text).toContain('not cross-origin isolated');
      expect(text).toContain('Cross-Origin-Opener-Policy: same-origin');
      expect(text).toContain('Cross-Origin-Embedder-Policy: require-corp');
      expect(text).toContain('npm start');
      expect(text).toContain('postMessage refuses to send that memory to a worker (DataCloneError)');
      if (path === 'arena.html') {
        expect(await page.locator('#controls').isVisible()).toBe(false);
        await screenshot(page, 'arena-not-isolated');
      }
      await page.close();
    }
  });

  it('behaves as the notice says: no SharedArrayBuffer, a shared memory that postMessage refuses to send', async () => {
    const { page } = await openPage(browser, `${plain.url}arena.html`);
    const seen = await page.evaluate(async () => {
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
      const worker = new Worker(URL.createObjectURL(new Blob([''], { type: 'text/javascript' })));
      let posted = 'sent';
      try {
        worker.postMessage(memory);
      } catch (e) {
        posted = (e as Error).name;
      }
      worker.terminate();
      return { sab: typeof SharedArrayBuffer, shared: Object.prototype.toString.call(memory.buffer), posted };
    });
    expect(seen).toEqual({ sab: 'undefined', shared: '[object SharedArrayBuffer]', posted: 'DataCloneError' });
    await page.close();
  });

  it('explains how to serve the page when it is opened as a file', async () => {
    const url = pathToFileURL(new URL('../../demo/dist/arena.html', import.meta.url).pathname).href;
    const { page } = await openPage(browser, url);
    const help = page.locator('#isolation-help');
    await help.waitFor();
    expect(await help.textContent()).toContain('opened as a file');
    expect(await help.textContent()).toContain('npm start');
    await page.close();
  });
});
