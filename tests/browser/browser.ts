// What the browser tests share: the demo server and Chromium (chromium.mjs,
// shared with the browser benchmark), a page that records its errors, and
// screenshots.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser, startServer } from './chromium.mjs';

export { launchBrowser, startServer } from './chromium.mjs';
export type Browser = Awaited<ReturnType<typeof launchBrowser>>;
export type Server = Awaited<ReturnType<typeof import('./chromium.mjs').startServer>>;

/** Screenshots for a human to look at; not committed (target/ is ignored). */
export const SCREENSHOTS = join(fileURLToPath(new URL('../..', import.meta.url)), 'target', 'demo-screenshots');

/** A new page that collects console errors and warnings and uncaught exceptions. */
export async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (process.env['PARKLOT_PAGE_LOG']) console.log(`[page] ${m.type()}: ${m.text()}`); // to debug a test
    if (m.type() === 'error' || m.type() === 'warning') errors.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  await page.goto(url);
  return { page, errors };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * The demo server and a browser for one test file: started before its tests,
 * stopped after them. Read `server` and `browser` inside the tests.
 */
export function useServerAndBrowser(): { readonly server: Server; readonly browser: Browser } {
  const state = {} as { server: Server; browser: Browser };
  beforeAll(async () => {
    [state.server, state.browser] = await Promise.all([startServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await state.browser?.close();
    await state.server?.stop();
  });
  return state;
}
