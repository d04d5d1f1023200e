// WebKit (Debian's WebKitGTK, Safari's engine) driven over plain W3C
// WebDriver: WebKitWebDriver under xvfb-run on a loopback port, started and
// stopped by its PID, spoken to with fetch. Enough of the protocol for the
// browser tests and the WebKit benchmark (bench/browser/webkit.mjs): a
// session, navigation, scripts, screenshots.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

export const WEBKIT_DRIVER = process.env.PARKLOT_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
/** The browser WebKitWebDriver automates: WebKitGTK's MiniBrowser. */
export const MINIBROWSER = process.env.PARKLOT_MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

/**
 * @typedef {object} WebKit
 * @property {string} version The browser's version, as the driver reports it (WebKitGTK's).
 * @property {number} pid The process group started (xvfb-run, the driver, Xvfb, the browser).
 * @property {(url: string) => Promise<void>} goto
 * @property {<T>(script: string, ...args: unknown[]) => Promise<T>} execute Runs `script` (a function body) in the page and returns its value (a promise's, once settled).
 * @property {(condition: string, ms: number) => Promise<void>} waitFor Polls `condition` (a function body returning a boolean) until true, or throws after `ms`.
 * @property {() => Promise<Buffer>} screenshot A PNG of the viewport.
 * @property {() => Promise<void>} stop Ends the session and stops the driver, Xvfb and the browser (their process group, by the PID started).
 */

/**
 * A free loopback port, from the kernel.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts WebKitWebDriver under `xvfb-run -a` and opens a session in
 * MiniBrowser. `sharedArrayBuffer`: whether the browser gets
 * `JSC_useSharedArrayBuffer=1`, without which WebKitGTK has no
 * SharedArrayBuffer even on a cross-origin isolated page.
 * @param {{ sharedArrayBuffer: boolean }} options
 * @returns {Promise<WebKit>}
 */
export async function launchWebKit({ sharedArrayBuffer }) {
  for (const [what, path] of [['WebKitWebDriver', WEBKIT_DRIVER], ['MiniBrowser', MINIBROWSER], ['xvfb-run', '/usr/bin/xvfb-run']]) {
    if (!existsSync(path)) throw new Error(`no ${what} at ${path}: scripts/setup.sh test installs webkit2gtk-driver and xvfb`);
  }
  const port = await freePort();
  const env = { ...process.env };
  if (sharedArrayBuffer) env.JSC_useSharedArrayBuffer = '1';
  else delete env.JSC_useSharedArrayBuffer;
  // detached: its own process group, so that stop() reaches Xvfb and the browser too.
  const child = spawn('/usr/bin/xvfb-run', ['-a', WEBKIT_DRIVER, `--port=${port}`], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = /** @type {number} */ (child.pid);
  let output = '';
  child.stdout.on('data', (/** @type {Buffer} */ c) => (output += c.toString()));
  child.stderr.on('data', (/** @type {Buffer} */ c) => (output += c.toString()));
  /** @type {Promise<void>} */
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;

  let session = '';
  const stopGroup = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-pid, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-pid, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  /**
   * One WebDriver command; throws the driver's error with its message, or after `seconds` without an answer.
   * @template T
   * @param {'GET' | 'POST' | 'DELETE'} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<T>}
   */
  const command = async (method, path, body, seconds = 60) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      signal: AbortSignal.timeout(seconds * 1000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch((/** @type {unknown} */ e) => {
      throw new Error(`WebDriver ${method} ${path}: no answer (${String(e)})\n${output}`);
    });
    const json = /** @type {{ value: T & { error?: string, message?: string } }} */ (await response.json());
    if (!response.ok || (json.value && typeof json.value === 'object' && 'error' in json.value)) {
      throw new Error(`WebDriver ${method} ${path}: ${json.value?.error}: ${json.value?.message}`);
    }
    return json.value;
  };

  try {
    for (let t = 0; ; t++) {
      const ready = await command('GET', '/status', undefined, 1).catch(() => null);
      if (/** @type {{ ready?: boolean } | null} */ (ready)?.ready) break;
      if (t === 100 || child.exitCode !== null) throw new Error(`WebKitWebDriver did not start within 10 s:\n${output}`);
      await sleep(100);
    }
    /** @type {{ sessionId: string, capabilities: { browserVersion: string } }} */
    const created = await command('POST', '/session', {
      capabilities: {
        alwaysMatch: {
          'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
          timeouts: { pageLoad: 30_000, script: 30_000 },
        },
      },
    }, 100); // generous: the very first run here, just after the install, stalled for over 90 s
    session = created.sessionId;
    const s = `/session/${session}`;
    /** @type {WebKit['execute']} */
    const execute = (script, ...args) => command('POST', `${s}/execute/sync`, { script, args });
    return {
      version: created.capabilities.browserVersion,
      pid,
      goto: async (url) => void (await command('POST', `${s}/url`, { url })),
      execute,
      waitFor: async (condition, ms) => {
        const end = Date.now() + ms;
        while (!(await execute(condition))) {
          if (Date.now() > end) throw new Error(`WebKit: still not true after ${ms / 1000} s: ${condition}`);
          await sleep(100);
        }
      },
      screenshot: async () => Buffer.from(/** @type {string} */ (await command('GET', `${s}/screenshot`)), 'base64'),
      stop: async () => {
        try {
          await command('DELETE', s, undefined, 10);
        } finally {
          await stopGroup();
        }
      },
    };
  } catch (e) {
    await stopGroup();
    throw e;
  }
}
