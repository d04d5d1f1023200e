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
 * Starts a long-running command (a server) and resolves once its output
 * (stdout and stderr, colours stripped) matches `pattern`, whose first group
 * is its URL. `stop()` sends SIGTERM to its PID and, if it has not exited
 * within 10 s, SIGKILL, and rejects naming it as stuck. `name` says what it is
 * in every message.
 * @param {string} name
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, pattern: RegExp, startTimeout?: number }} options
 * @returns {Promise<{ url: string, pid: number, output(): string, stop(): Promise<void> }>}
 */
export function startProcess(name, command, args, { cwd = ROOT, pattern, startTimeout = 10_000 }) {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = /** @type {number} */ (child.pid);
  let out = '';
  const exited = new Promise((done) => child.once('exit', done));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(pid, 'SIGTERM');
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => {
        process.kill(pid, 'SIGKILL');
        reject(new Error(`${name} (PID ${pid}) was stuck: still running 10 s after SIGTERM, killed`));
      }, 10_000);
    });
    try {
      await Promise.race([exited, deadline]);
    } finally {
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${name} printed no URL within ${startTimeout / 1000} s (stopped):\n${out}`));
    }, startTimeout);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before serving:\n${out}`));
    });
    const onData = (/** @type {Buffer} */ chunk) => {
      out += chunk.toString().replace(/\x1b\[[0-9;]*m/g, '');
      const m = pattern.exec(out);
      if (!m) return;
      clearTimeout(timer);
      pattern = /$^/; // resolve once
      resolve({ url: /** @type {string} */ (m[1]), pid, output: () => out, stop });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      onData(chunk);
    });
  });
}

/**
 * Starts demo/serve.mjs on a free port (extra `args` go to it, e.g.
 * `--no-isolation` or `--root DIR`) and resolves once it prints its URL.
 * @param {...string} args
 */
export function startServer(...args) {
  return startProcess('the demo server', process.execPath, [join(ROOT, 'demo', 'serve.mjs'), '--port', '0', ...args], {
    pattern: /parklot demo: (http:\/\/\S+)/,
  });
}

/**
 * Headless Chromium with a fresh profile, removed again by close();
 * `extraArgs` go after CHROMIUM_ARGS (e.g. `--js-flags=--harmony-struct`).
 * @param {string[]} [extraArgs]
 * @returns {Promise<{ context: import('playwright-core').BrowserContext, profile: string, close(): Promise<void> }>}
 */
export async function launchBrowser(extraArgs = []) {
  const profile = mkdtempSync(join(tmpdir(), 'parklot-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
  return {
    context,
    /** The profile directory: every process of this browser has it on its command line. */
    profile,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
