// The JS API reference (TypeDoc, built from the package's doc comments into
// demo/dist/api by the browser tests' set-up, `npm run build` and
// `npm start`), served by the demo server at /api/: it opens in Chromium,
// names every public class, and every link in it leads somewhere.
import { describe, expect, it } from 'vitest';
import { openPage, screenshot, useServerAndBrowser } from './browser.js';

const env = useServerAndBrowser();

describe('the API reference at /api/', () => {
  it('lists the public classes, and the landing page links to it', async () => {
    const { page, errors } = await openPage(env.browser, `${env.server.url}api/`);
    const text = (await page.locator('body').textContent()) ?? '';
    for (const name of ['Runtime', 'Lock', 'Condition', 'RwLock', 'Semaphore', 'Barrier', 'Once', 'RuntimeAtomics', 'OwnerDiedError', 'spawnWorker', 'attachWorker']) {
      expect(text, `the reference names ${name}`).toContain(name);
    }
    await screenshot(page, 'api');
    expect(errors).toEqual([]);
    await page.close();
    const landing = await (await fetch(env.server.url)).text();
    expect(landing).toContain('href="./api/"');
  });

  it('has no broken link: every page it links to is served', async () => {
    const seen = new Set<string>();
    const queue = [`${env.server.url}api/`];
    const broken: string[] = [];
    while (queue.length > 0 && seen.size < 500) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await fetch(url);
      if (res.status !== 200) {
        broken.push(`${url}: ${res.status}`);
        continue;
      }
      if (!(res.headers.get('content-type') ?? '').startsWith('text/html')) continue;
      const html = await res.text();
      for (const [, href] of html.matchAll(/href="([^"#]+)(?:#[^"]*)?"/g)) {
        const next = new URL(href!, url);
        if (next.origin === new URL(env.server.url).origin && next.pathname.startsWith('/api/')) queue.push(next.href);
      }
    }
    expect(broken).toEqual([]);
    expect(seen.size).toBeGreaterThan(10); // the classes' pages, not just the index
  });
});
