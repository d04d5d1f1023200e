// Starting the demo server and Debian's Chromium, for the browser tests and
// the browser benchmark (bench/browser/run.mjs). Both are stopped by their
// owners: the server by its PID, Chromium through close().
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Debian's Chromium (Playwright's own browser download does not work here). */
export const CHROMIUM = process.env.PARKLOT_CHROMIUM ?? '/usr/bin/chromium';

/** Flags that let Chromium run as root in a container, and keep it off the network. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Starts demo/serve.mjs on a free port (extra `args` go to it) and resolves
 * once it prints its URL.
 * @param {...string} args
 * @returns {Promise<{ url: string, pid: number, stop(): Promise<void> }>}
 */
export function startServer(...args) {
  const child = spawn(process.execPath, [join(ROOT, 'demo', 'serve.mjs'), '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`demo server printed no URL within 10 s: ${out}`)), 10_000);
    child.once('exit', (code) => reject(new Error(`demo server exited (${code}) before serving: ${out}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk.toString();
      const m = /parklot demo: (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const pid = /** @type {number} */ (child.pid);
      resolve({
        url: m[1],
        pid,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            process.kill(pid, 'SIGTERM');
          }),
      });
    });
  });
}

/**
 * Headless Chromium with a fresh profile, removed again by close().
 * @returns {Promise<{ context: import('playwright-core').BrowserContext, close(): Promise<void> }>}
 */
export async function launchBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'parklot-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
