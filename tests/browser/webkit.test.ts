// WebKit, Safari's engine (Debian's WebKitGTK through WebKitWebDriver, plain
// W3C WebDriver: tests/browser/webdriver.mjs), with JSC_useSharedArrayBuffer=1:
// what Firefox runs (the lock arena with the page's thread taking part, the
// wait/notify lab), the package's checks on a page (a counter exact across
// workers with the page in lockAsync, waitAsync, a Condition queue), and a
// terminated worker reaped through its Web Lock (owner-died). Then once
// without the flag: WebKitGTK's page is cross-origin isolated but has no
// SharedArrayBuffer, and Runtime.create() must say so.
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, startServer, type Server } from './browser.js';
import { launchWebKit, type WebKit } from './webdriver.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The small app's page without a bundler (bare.html, with reap/ and checks/) next to a link to the built package, in target/webkit-app. */
function appDir(): string {
  const dir = join(ROOT, 'target', 'webkit-app');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const page of ['bare.html', 'reap', 'checks']) cpSync(join(ROOT, 'tests', 'browser', 'app', page), join(dir, page), { recursive: true });
  symlinkSync(join(ROOT, 'js'), join(dir, 'js'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>parklot in WebKit</title><a href="bare.html?app=checks">checks</a> <a href="bare.html?app=reap">reap</a>\n');
  return dir;
}

const resultOf = (webkit: WebKit, id = 'result'): Promise<{ state: string; text: string }> =>
  webkit.execute(`const r = document.getElementById('${id}'); return { state: r.dataset.state, text: r.textContent };`);

async function screenshot(webkit: WebKit, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(join(SCREENSHOTS, `${name}.png`), await webkit.screenshot());
}

let demo: Server;
let app: Server;

beforeAll(async () => {
  demo = await startServer();
  app = await startServer('--root', appDir());
});

afterAll(async () => {
  await app?.stop();
  await demo?.stop();
});

describe('WebKit (WebKitGTK) with JSC_useSharedArrayBuffer=1', () => {
  let webkit: WebKit;
  beforeAll(async () => {
    webkit = await launchWebKit({ sharedArrayBuffer: true });
    console.log(`WebKitGTK ${webkit.version}`);
  });
  afterAll(async () => {
    await webkit?.stop();
  });

  it('arena: 4 workers and the main thread share parklot Lock, counter exact; lab: both histograms fill', async () => {
    await webkit.goto(`${demo.url}arena.html`);
    await webkit.waitFor(`return document.getElementById('result')?.dataset.state === 'idle'`, 30_000);
    expect(await webkit.execute('return [self.crossOriginIsolated, typeof SharedArrayBuffer]')).toEqual([true, 'function']);
    await webkit.execute(`document.getElementById('start').click()`);
    await webkit.waitFor(`return document.getElementById('result').dataset.state === 'running'`, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await webkit.execute(`document.getElementById('stop').click()`);
    await webkit.waitFor(`return document.getElementById('result').dataset.state === 'done'`, 30_000);
    const r = await webkit.execute<Record<string, string>>(`return { ...document.getElementById('result').dataset }`);
    const perWorker = JSON.parse(r['perWorker']!) as number[];
    expect(perWorker).toHaveLength(4);
    for (const n of perWorker) expect(n).toBeGreaterThan(0);
    expect(Number(r['main'])).toBeGreaterThan(0);
    expect(r['exact']).toBe('true');
    await screenshot(webkit, 'webkit-arena');

    await webkit.goto(`${demo.url}lab.html`);
    await webkit.waitFor(`return document.getElementById('lab-result')?.dataset.state === 'idle'`, 30_000);
    await webkit.execute(`document.getElementById('seconds').value = '2'; document.getElementById('start').click()`);
    await webkit.waitFor(`return document.getElementById('lab-result').dataset.state === 'done'`, 30_000);
    const counts = await webkit.execute<Record<string, string>>(`return { ...document.getElementById('lab-result').dataset }`);
    for (const key of ['pingParklotSamples', 'pingNativeSamples', 'mainParklotSamples', 'mainNativeSamples']) {
      expect(Number(counts[key]), key).toBeGreaterThan(20);
    }
    await screenshot(webkit, 'webkit-lab');
  });

  it('the package on a page: counter exact with the page in lockAsync, waitAsync, a Condition queue', async () => {
    await webkit.goto(`${app.url}bare.html?app=checks&entry=/js/dist/index.js`);
    await webkit.waitFor(`return document.getElementById('result').dataset.state !== 'running'`, 60_000);
    expect(await resultOf(webkit)).toEqual({ state: 'done', text: 'counter 15000/15000; waitAsync ok; condition 200/200' });
  });

  it('terminated workers are reaped through their Web Locks: notify counts only live waiters, a dead holder is reported', async () => {
    await webkit.goto(`${app.url}bare.html?app=reap&entry=/js/dist/index.js`);
    await webkit.waitFor(`return document.getElementById('result').dataset.state !== 'running'`, 60_000);
    expect(await resultOf(webkit)).toEqual({ state: 'done', text: 'notify woke 1; lock: owner-died' });
  });
});

describe('WebKit (WebKitGTK) without JSC_useSharedArrayBuffer', () => {
  it('the page is cross-origin isolated but has no SharedArrayBuffer: Runtime.create() says so', async () => {
    const webkit = await launchWebKit({ sharedArrayBuffer: false });
    try {
      await webkit.goto(`${app.url}bare.html?app=checks&entry=/js/dist/index.js`);
      await webkit.waitFor(`return document.getElementById('result').dataset.state !== 'running'`, 60_000);
      expect(await webkit.execute('return [self.crossOriginIsolated, typeof SharedArrayBuffer]')).toEqual([true, 'undefined']);
      const r = await resultOf(webkit);
      expect(r.state).toBe('error');
      expect(r.text).toMatch(/^TypeError: parklot: Runtime\.create\(\): this browser has no SharedArrayBuffer although the page is cross-origin isolated/);
      expect(r.text).toContain('JSC_useSharedArrayBuffer=1');
    } finally {
      await webkit.stop();
    }
  });
});
