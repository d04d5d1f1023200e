// The demo in Firefox (Debian's firefox-esr, 153: it has Atomics.waitAsync),
// driven through WebDriver BiDi by puppeteer-core: the lock arena with the
// page's thread taking part, and the wait/notify lab. Chromium is covered in
// depth by demo.test.ts; this checks the pages do not depend on it.
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { SCREENSHOTS, startServer, type Server } from './browser.js';
import { FIREFOX, launchFirefox } from './firefox.mjs';

let server: Server;
let firefox: Awaited<ReturnType<typeof launchFirefox>>;

beforeAll(async () => {
  if (!existsSync(FIREFOX)) throw new Error(`no Firefox at ${FIREFOX}: scripts/setup.sh test installs firefox-esr`);
  server = await startServer();
  firefox = await launchFirefox();
});

afterAll(async () => {
  await firefox?.close();
  await server?.stop();
});

describe('the demo in Firefox', () => {
  it('arena: 4 workers and the main thread share parklot Lock, counter exact; lab: both histograms fill', async () => {
    const page = await firefox.browser.newPage();
    await page.setViewport({ width: 1280, height: 1000 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${server.url}arena.html`);
    await page.waitForSelector('#result[data-state=idle]', { timeout: 30_000 });
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);
    await page.click('#start');
    await page.waitForSelector('#result[data-state=running]');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await page.click('#stop');
    await page.waitForSelector('#result[data-state=done]', { timeout: 30_000 });
    const r = await page.evaluate(() => ({ ...document.getElementById('result')!.dataset }));
    const perWorker = JSON.parse(r['perWorker']!) as number[];
    expect(perWorker).toHaveLength(4);
    for (const n of perWorker) expect(n).toBeGreaterThan(0);
    expect(Number(r['main'])).toBeGreaterThan(0);
    expect(r['exact']).toBe('true');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'firefox-arena.png') });

    await page.goto(`${server.url}lab.html`);
    await page.waitForSelector('#lab-result[data-state=idle]', { timeout: 30_000 });
    await page.evaluate(() => {
      (document.getElementById('seconds') as HTMLInputElement).value = '2';
    });
    await page.click('#start');
    await page.waitForSelector('#lab-result[data-state=done]', { timeout: 30_000 });
    const counts = await page.evaluate(() => ({ ...document.getElementById('lab-result')!.dataset }));
    for (const key of ['pingParklotSamples', 'pingNativeSamples', 'mainParklotSamples', 'mainNativeSamples']) {
      expect(Number(counts[key]), key).toBeGreaterThan(20);
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'firefox-lab.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('terminated workers are reaped through their Web Locks: notify counts only live waiters, a dead holder is reported', async () => {
    // The small app's reap page (bare.html, as the server's index.html, with reap/), next to a link to the built package.
    const repo = fileURLToPath(new URL('../..', import.meta.url));
    const dir = join(repo, 'target', 'firefox-reap');
    rmSync(dir, { recursive: true, force: true });
    cpSync(join(repo, 'tests', 'browser', 'app', 'reap'), join(dir, 'reap'), { recursive: true });
    cpSync(join(repo, 'tests', 'browser', 'app', 'bare.html'), join(dir, 'index.html'));
    symlinkSync(join(repo, 'js'), join(dir, 'js'));
    const root = await startServer('--root', dir);
    try {
      const page = await firefox.browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${root.url}?app=reap&entry=/js/dist/index.js`);
      await page.waitForSelector('#result:not([data-state=running])', { timeout: 60_000 });
      expect(await page.evaluate(() => document.getElementById('result')!.textContent)).toBe('notify woke 1; lock: owner-died');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await root.stop();
    }
  });
});
