// Emscripten's pthread_mutex_t as a bench/wasm peer: builds
// emscripten/pthread_mutex.c with emcc into target/emscripten/ (again only
// when the source, the flags or emcc change) and runs one round per thread
// count in a node process of its own, since Emscripten brings its own
// runtime and thread pool. The same program built for the web
// (target/emscripten-web/) is what bench/browser/emscripten.mjs runs in Chromium.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ownChild } from './pool.mjs';

const SOURCE = new URL('./emscripten/pthread_mutex.c', import.meta.url);
const OUT_DIR = new URL('../../target/emscripten/', import.meta.url);
const OUTPUT = new URL('pthread_mutex.js', OUT_DIR);
const WEB_OUT_DIR = new URL('../../target/emscripten-web/', import.meta.url);

/** Where the web build lives: pthread_mutex.js and the pthread_mutex.worker.js it loads. */
export const EMSCRIPTEN_WEB_DIR = fileURLToPath(WEB_OUT_DIR);

// Per environment: its output directory and the flags it adds. emcc 3.1.6
// writes pthread_mutex.worker.js even with SINGLE_FILE; Node never reads it,
// a page's pthreads load it from next to pthread_mutex.js.
const TARGETS = {
  node: { dir: OUT_DIR, flags: [] },
  web: { dir: WEB_OUT_DIR, flags: ['-sENVIRONMENT=web,worker'] },
};

// Debian's emcc finds its JS dependencies (acorn, ...) only through NODE_PATH.
const env = { ...process.env, NODE_PATH: process.env.NODE_PATH ?? '/usr/share/nodejs' };

/** emcc's version line, or null when emcc is not installed. */
export function emccVersion() {
  try {
    return execFileSync('emcc', ['--version'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n', 1)[0].trim();
  } catch {
    return null;
  }
}

/**
 * Builds the peer for up to `maxThreads` threads if needed, for Node
 * (target/emscripten/) or, with `{ environment: 'web' }`, for a page
 * (EMSCRIPTEN_WEB_DIR). Returns {version} or {skipped: reason}.
 */
export function buildEmscriptenPeer(maxThreads, log, { environment = 'node' } = {}) {
  const target = TARGETS[environment];
  if (!target) throw new TypeError(`buildEmscriptenPeer: environment is 'node' or 'web', not ${JSON.stringify(environment)}`);
  const version = emccVersion();
  if (!version) return { skipped: 'emcc is not installed (scripts/setup.sh bench installs Emscripten)' };
  // PROXY_TO_PTHREAD runs main() on a pthread too: the pool needs one more.
  // SINGLE_FILE embeds the wasm, so plain `node` runs it (no fetch of a .wasm).
  const flags = ['-O2', '-pthread', `-sPTHREAD_POOL_SIZE=${maxThreads + 1}`, '-sPROXY_TO_PTHREAD',
    '-sINITIAL_MEMORY=64MB', '-sEXIT_RUNTIME=1', '-sSINGLE_FILE=1', ...target.flags];
  const output = new URL('pthread_mutex.js', target.dir);
  const stampFile = new URL('pthread_mutex.stamp', target.dir);
  const stamp = createHash('sha256').update(readFileSync(SOURCE)).update(flags.join(' ')).update(version).digest('hex');
  if (existsSync(output) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return { version };
  log(`emscripten: building pthread_mutex.c for ${environment} (${version})`);
  mkdirSync(target.dir, { recursive: true });
  try {
    execFileSync('emcc', [...flags, fileURLToPath(SOURCE), '-o', fileURLToPath(output)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new Error(`emcc failed: ${e.stderr?.toString().trim() || e.message}`);
  }
  // The repository's package.json says "type": "module"; emcc's output is CommonJS.
  if (environment === 'node') writeFileSync(new URL('package.json', target.dir), '{ "type": "commonjs" }\n');
  writeFileSync(stampFile, stamp);
  return { version };
}

/** The program's command line after its name: ROUND_MS WORK WARMUP_MS N1 [N2 ...]. */
export function emscriptenArgs({ durationMs, work, warmupMs, threadCounts }) {
  return [durationMs, work, warmupMs, ...threadCounts].map(String);
}

/**
 * The rounds a finished run printed, from its exit code and output; throws
 * with the last lines of its stderr if it failed or printed no JSON.
 */
export function emscriptenRounds(code, out, err) {
  // The last lines only: an uncaught error also prints the whole one-line program.
  if (code !== 0) throw new Error(`pthread_mutex exited with ${code}: ${err.trim().split('\n').slice(-6).join('\n').slice(-1500)}`);
  try {
    return JSON.parse(out);
  } catch {
    throw new Error(`pthread_mutex printed no JSON: ${out.slice(0, 200)}`);
  }
}

/**
 * One process: a warm-up of `warmupMs` with the most threads, then one
 * timed round per entry of `threadCounts`. Resolves to the rounds
 * ([{threads, counter, counts, startMs, endMs}]); rejects if the program
 * fails, its counter check fails, or it takes longer than `timeoutMs`.
 */
export function runEmscriptenRounds({ durationMs, work, warmupMs, threadCounts, timeoutMs }) {
  const args = [fileURLToPath(OUTPUT), ...emscriptenArgs({ durationMs, work, warmupMs, threadCounts })];
  return new Promise((resolve, reject) => {
    const child = ownChild(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pthread_mutex: no answer in ${timeoutMs} ms (deadlock?)`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        resolve(emscriptenRounds(code, out, err));
      } catch (e) {
        reject(e);
      }
    });
  });
}
