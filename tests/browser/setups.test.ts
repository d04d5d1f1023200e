// The packed package in the set-ups a web developer starts from, each with no
// parklot-specific configuration: Vite's dev server, a Vite build, webpack 5,
// Rollup, and a plain page with an import map and no bundler. One small app
// (tests/browser/app/: a page, two workers and the page's own thread adding to
// one counter under one Lock) is installed from the tarball into
// target/setups/app, built by each tool, served cross-origin isolated and run
// in Chromium. Every server is stopped by its PID.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, startServer, type Browser } from './browser.js';
import { startProcess } from './chromium.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORK = join(ROOT, 'target', 'setups');
const APP = join(WORK, 'app');
const BIN = {
  vite: join(ROOT, 'node_modules/vite/bin/vite.js'),
  webpack: join(ROOT, 'node_modules/webpack-cli/bin/cli.js'),
  rollup: join(ROOT, 'node_modules/rollup/dist/bin/rollup'),
};
/** What the page computes: two workers and the page, 20 000 increments each. */
const EXPECTED = 60_000;

let browser: Browser;

/** Runs a command in `cwd`, killing it (by PID) if it runs past `seconds`; rejects with its output. */
function run(name: string, command: string, args: string[], cwd: string, seconds = 180): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: seconds * 1000, killSignal: 'SIGKILL', maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      const why = error.killed ? `was stuck: still running after ${seconds} s, killed` : `failed (${error.code})`;
      reject(new Error(`${name} ${why}:\n${stdout}${stderr}`));
    });
  });
}

/** Loads `url` in Chromium and waits for the app's result: the counter, or the error the page caught. */
async function runApp(url: string): Promise<{ state: string; text: string; errors: string[] }> {
  const { page, errors } = await openPage(browser, url);
  try {
    await page.waitForSelector('#result:not([data-state=running])', { timeout: 60_000 }).catch(() => undefined);
    const state = (await page.locator('#result').getAttribute('data-state')) ?? 'no #result';
    const text = (await page.locator('#result').textContent()) ?? '';
    return { state, text, errors };
  } finally {
    await page.close();
  }
}

/** Serves `dir` cross-origin isolated (demo/serve.mjs --root) while `body` runs. */
async function served<T>(dir: string, body: (url: string) => Promise<T>): Promise<T> {
  const server = await startServer('--root', dir);
  try {
    return await body(server.url);
  } finally {
    await server.stop();
  }
}

/** A page that loads one script of a build, as a user's own HTML would. */
function page(dir: string, script: string): void {
  const html = readFileSync(join(APP, 'index.html'), 'utf8').replace('./src/index.js', script);
  writeFileSync(join(dir, 'index.html'), html);
}

/** `text` with `from` replaced by `to`; throws if `from` is not in it (the app changed). */
function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`tests/browser/app changed: no ${JSON.stringify(from)} to replace`);
  return text.replace(from, to);
}

/**
 * The app as a page without a bundler loads it, in APP/no-bundler/: an import
 * map names parklot's entry. Workers do not see the page's import map, so the
 * worker imports parklot by its path. With no bundler to see
 * `new Worker(...)`, spawnWorker makes the worker from its URL.
 */
function writeNoBundlerApp(): void {
  const dir = join(APP, 'no-bundler');
  const entry = '/node_modules/parklot/js/dist/index.js';
  cpSync(join(APP, 'src'), dir, { recursive: true });
  const worker = join(dir, 'worker.js');
  writeFileSync(worker, replaced(readFileSync(worker, 'utf8'), "from 'parklot'", `from '${entry}'`));
  const main = join(dir, 'index.js');
  const made = "const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });\n    await spawnWorker(rt, worker, ";
  writeFileSync(main, replaced(readFileSync(main, 'utf8'), made, "const worker = await spawnWorker(rt, new URL('./worker.js', import.meta.url), "));
  const importMap = `<script type="importmap">{ "imports": { "parklot": "${entry}" } }</script>\n    <title>`;
  writeFileSync(join(dir, 'index.html'), readFileSync(join(APP, 'index.html'), 'utf8').replace('<title>', importMap).replace('./src/index.js', './index.js'));
}

beforeAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  cpSync(fileURLToPath(new URL('./app/', import.meta.url)), APP, { recursive: true });
  const packed = JSON.parse(await run('npm pack', 'npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', WORK], ROOT)) as {
    filename: string;
  }[];
  await run('npm install', 'npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', join(WORK, packed[0]!.filename)], APP);
  writeNoBundlerApp();
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
});

describe('the packed package, unconfigured, in Chromium', () => {
  it('Vite dev server (vite): dependency pre-bundling does not lose the wasm module', async () => {
    const vite = await startProcess('the Vite dev server', process.execPath, [BIN.vite, '--host', '127.0.0.1', '--port', '0'], {
      cwd: APP,
      pattern: /Local:\s+(http:\/\/127\.0\.0\.1:\d+\/)/,
      startTimeout: 60_000,
    });
    try {
      const r = await runApp(vite.url);
      expect(r.text).toBe(`counter: ${EXPECTED}`);
      expect(r.errors).toEqual([]);
    } finally {
      await vite.stop();
    }
  });

  it('Vite build (vite build)', async () => {
    await run('vite build', process.execPath, [BIN.vite, 'build', '--outDir', 'dist-vite', '--logLevel', 'warn'], APP);
    const r = await served(join(APP, 'dist-vite'), runApp);
    expect(r.text).toBe(`counter: ${EXPECTED}`);
    expect(r.errors).toEqual([]);
  });

  it('webpack 5 (webpack --mode production)', async () => {
    const out = join(APP, 'dist-webpack');
    await run('webpack', process.execPath, [BIN.webpack, '--mode', 'production', '--output-path', out], APP);
    page(out, './main.js');
    const r = await served(out, runApp);
    expect(r.text).toBe(`counter: ${EXPECTED}`);
    expect(r.errors).toEqual([]);
  });

  it('Rollup 4 (rollup -p node-resolve)', async () => {
    const out = join(APP, 'dist-rollup');
    await run('rollup', process.execPath, [BIN.rollup, 'src/index.js', 'src/worker.js', '-d', out, '-f', 'es', '-p', 'node-resolve'], APP);
    page(out, './index.js');
    const r = await served(out, runApp);
    expect(r.text).toBe(`counter: ${EXPECTED}`);
    expect(r.errors).toEqual([]);
  });

  it('no bundler: <script type="module"> with an import map, spawnWorker(rt, url, data)', async () => {
    const r = await served(APP, (url) => runApp(`${url}no-bundler/`));
    expect(r.text).toBe(`counter: ${EXPECTED}`);
    expect(r.errors).toEqual([]);
  });

  it('terminated workers are reaped through their Web Locks: notify counts only live waiters, a dead holder is reported', async () => {
    const r = await served(APP, (url) => runApp(`${url}bare.html?app=reap`));
    expect(r.text).toBe('notify woke 1; lock: owner-died');
    expect(r.errors).toEqual([]);
  });

  it("parklot/wasm: the module as a file, for bundlers that handle .wasm and for Runtime.create({ module })", async () => {
    const script =
      "import { Runtime } from 'parklot'; const url = new URL(import.meta.resolve('parklot/wasm'));" +
      'const rt = await Runtime.create({ module: url }); const lock = rt.lock(); lock.lock(); lock.unlock(); rt.close();' +
      "console.log(url.pathname.endsWith('/parklot_wasm_bg.wasm') ? 'ok' : url.href);";
    expect((await run('node', process.execPath, ['--input-type=module', '-e', script], APP)).trim()).toBe('ok');
  });

  it('a page that is not cross-origin isolated: Runtime.create() says which headers are missing', async () => {
    const server = await startServer('--root', APP, '--no-isolation');
    try {
      const r = await runApp(`${server.url}no-bundler/`);
      expect(r.state).toBe('error');
      expect(r.text).toMatch(/^TypeError: parklot: Runtime.create\(\): this page is not cross-origin isolated/);
      expect(r.text).toContain('Cross-Origin-Opener-Policy: same-origin');
      expect(r.text).toContain('Cross-Origin-Embedder-Policy: require-corp');
    } finally {
      await server.stop();
    }
  });
});
