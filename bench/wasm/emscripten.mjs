// Emscripten's pthread_mutex_t as a bench/wasm peer: builds
// emscripten/pthread_mutex.c with emcc into target/emscripten/ (again only
// when the source, the flags or emcc change) and runs one round per thread
// count in a node process of its own, since Emscripten brings its own
// runtime and thread pool.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ownChild } from './pool.mjs';

const SOURCE = new URL('./emscripten/pthread_mutex.c', import.meta.url);
const OUT_DIR = new URL('../../target/emscripten/', import.meta.url);
const OUTPUT = new URL('pthread_mutex.js', OUT_DIR);
const STAMP = new URL('pthread_mutex.stamp', OUT_DIR);

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
 * Builds the peer for up to `maxThreads` threads if needed. Returns
 * {version} or {skipped: reason}.
 */
export function buildEmscriptenPeer(maxThreads, log) {
  const version = emccVersion();
  if (!version) return { skipped: 'emcc is not installed (scripts/setup.sh bench installs Emscripten)' };
  // PROXY_TO_PTHREAD runs main() on a pthread too: the pool needs one more.
  // SINGLE_FILE embeds the wasm, so plain `node` runs it (no fetch of a .wasm).
  const flags = ['-O2', '-pthread', `-sPTHREAD_POOL_SIZE=${maxThreads + 1}`, '-sPROXY_TO_PTHREAD',
    '-sINITIAL_MEMORY=64MB', '-sEXIT_RUNTIME=1', '-sSINGLE_FILE=1'];
  const stamp = createHash('sha256').update(readFileSync(SOURCE)).update(flags.join(' ')).update(version).digest('hex');
  if (existsSync(OUTPUT) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) return { version };
  log(`emscripten: building pthread_mutex.c (${version})`);
  mkdirSync(OUT_DIR, { recursive: true });
  try {
    execFileSync('emcc', [...flags, fileURLToPath(SOURCE), '-o', fileURLToPath(OUTPUT)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new Error(`emcc failed: ${e.stderr?.toString().trim() || e.message}`);
  }
  // The repository's package.json says "type": "module"; emcc's output is CommonJS.
  writeFileSync(new URL('package.json', OUT_DIR), '{ "type": "commonjs" }\n');
  writeFileSync(STAMP, stamp);
  return { version };
}

/**
 * One process: a warm-up of `warmupMs` with the most threads, then one
 * timed round per entry of `threadCounts`. Resolves to the rounds
 * ([{threads, counter, counts, startMs, endMs}]); rejects if the program
 * fails, its counter check fails, or it takes longer than `timeoutMs`.
 */
export function runEmscriptenRounds({ durationMs, work, warmupMs, threadCounts, timeoutMs }) {
  const args = [fileURLToPath(OUTPUT), durationMs, work, warmupMs, ...threadCounts].map(String);
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
      // The last lines only: an uncaught error also prints the whole one-line program.
      if (code !== 0) return reject(new Error(`pthread_mutex exited with ${code}: ${err.trim().split('\n').slice(-6).join('\n').slice(-1500)}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`pthread_mutex printed no JSON: ${out.slice(0, 200)}`));
      }
    });
  });
}
