// WebKit (Debian's WebKitGTK, Safari's engine) driven over plain W3C
// WebDriver: WebKitWebDriver under xvfb-run on a loopback port, started and
// stopped by its PID, spoken to with fetch. Enough of the protocol for the
// browser tests: a session, navigation, scripts, screenshots.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

export const WEBKIT_DRIVER = process.env['PARKLOT_WEBKIT_DRIVER'] ?? '/usr/bin/WebKitWebDriver';
/** The browser WebKitWebDriver automates: WebKitGTK's MiniBrowser. */
export const MINIBROWSER = process.env['PARKLOT_MINIBROWSER'] ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

export interface WebKit {
  /** The browser's version, as the driver reports it (WebKitGTK's). */
  readonly version: string;
  goto(url: string): Promise<void>;
  /** Runs `script` (a function body) in the page and returns its value. */
  execute<T>(script: string, ...args: unknown[]): Promise<T>;
  /** Polls `condition` (a function body returning a boolean) until true, or throws after `ms`. */
  waitFor(condition: string, ms: number): Promise<void>;
  /** A PNG of the viewport. */
  screenshot(): Promise<Buffer>;
  /** Ends the session and stops the driver, Xvfb and the browser (their process group, by the PID started). */
  stop(): Promise<void>;
}

/** A free loopback port, from the kernel. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts WebKitWebDriver under `xvfb-run -a` and opens a session in
 * MiniBrowser. `sharedArrayBuffer`: whether the browser gets
 * `JSC_useSharedArrayBuffer=1`, without which WebKitGTK has no
 * SharedArrayBuffer even on a cross-origin isolated page.
 */
export async function launchWebKit({ sharedArrayBuffer }: { sharedArrayBuffer: boolean }): Promise<WebKit> {
  for (const [what, path] of [['WebKitWebDriver', WEBKIT_DRIVER], ['MiniBrowser', MINIBROWSER], ['xvfb-run', '/usr/bin/xvfb-run']] as const) {
    if (!existsSync(path)) throw new Error(`no ${what} at ${path}: scripts/setup.sh test installs webkit2gtk-driver and xvfb`);
  }
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (sharedArrayBuffer) env['JSC_useSharedArrayBuffer'] = '1';
  else delete env['JSC_useSharedArrayBuffer'];
  // detached: its own process group, so that stop() reaches Xvfb and the browser too.
  const child = spawn('/usr/bin/xvfb-run', ['-a', WEBKIT_DRIVER, `--port=${port}`], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;

  let session = '';
  const stopGroup = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-pid, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-pid, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  /** One WebDriver command; throws the driver's error with its message, or after `seconds` without an answer. */
  const command = async <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, seconds = 60): Promise<T> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      signal: AbortSignal.timeout(seconds * 1000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch((e: unknown) => {
      throw new Error(`WebDriver ${method} ${path}: no answer (${String(e)})\n${output}`);
    });
    const json = (await response.json()) as { value: T & { error?: string; message?: string } };
    if (!response.ok || (json.value && typeof json.value === 'object' && 'error' in json.value)) {
      throw new Error(`WebDriver ${method} ${path}: ${json.value?.error}: ${json.value?.message}`);
    }
    return json.value;
  };

  try {
    for (let t = 0; ; t++) {
      const ready = await command<{ ready: boolean }>('GET', '/status', undefined, 1).catch(() => null);
      if (ready?.ready) break;
      if (t === 100 || child.exitCode !== null) throw new Error(`WebKitWebDriver did not start within 10 s:\n${output}`);
      await sleep(100);
    }
    const created = await command<{ sessionId: string; capabilities: { browserVersion: string } }>('POST', '/session', {
      capabilities: {
        alwaysMatch: {
          'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
          timeouts: { pageLoad: 30_000, script: 30_000 },
        },
      },
    }, 100); // generous: the very first run here, just after the install, stalled for over 90 s
    session = created.sessionId;
    const s = `/session/${session}`;
    const execute = <T>(script: string, ...args: unknown[]): Promise<T> => command<T>('POST', `${s}/execute/sync`, { script, args });
    return {
      version: created.capabilities.browserVersion,
      goto: async (url) => void (await command('POST', `${s}/url`, { url })),
      execute,
      waitFor: async (condition, ms) => {
        const end = Date.now() + ms;
        while (!(await execute<boolean>(condition))) {
          if (Date.now() > end) throw new Error(`WebKit: still not true after ${ms / 1000} s: ${condition}`);
          await sleep(100);
        }
      },
      screenshot: async () => Buffer.from(await command<string>('GET', `${s}/screenshot`), 'base64'),
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
