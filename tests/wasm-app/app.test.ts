// The wasm-bindgen app (src/lib.rs) in Chromium: Rayon counts primes in Web
// Workers while the page's main thread takes a Mutex and an RwLock that the
// workers hold for a while. Built with parklot (its `wasm-bindgen` feature,
// no set_thread_may_block call anywhere) the page must finish with exact
// results; built with std's locks it must trap, which is why parklot exists
// here; and built with parklot without that feature it must trap too, which
// is why the feature exists. Prints the main thread's time acquiring the locks,
// spinning (tick) and awaiting lock_async/read_async (tickAsync), side by side.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, startServer, type Browser, type Server } from '../browser/browser.js';

/** What the page is asked to do (and the test checks). */
const LIMIT = 4_000_000;
const CHUNKS = 64;
const UPDATES = 8;

/** wasm-bindgen-rayon's worker script calls the glue's init the old way; it is harmless. */
const RAYON_HELPER_WARNING = /using deprecated parameters for the initialization function/;

type Distribution = { n: number; min: number; p50: number; p90: number; p99: number; max: number };
type Report = {
  locks: string;
  limit: number;
  block: number;
  primes: number;
  sum: string;
  checked: number;
  blocks: number;
  mainUpdates: number;
  mainMayBlock: boolean;
  workerMayBlock: boolean;
  mutexContended: number;
  readContended: number;
  acquire: Distribution;
  contendedAcquire: Distribution | null;
  mode: string;
  ticks: number;
  updatesPerTick: number;
  ms: number;
  /** The event loop's pulse meanwhile: frames, beats of a 1 ms timer, the longest gap between beats. */
  frames: number;
  beats: number;
  maxBeatGapMs: number;
};

let server: Server;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The count and the sum of the primes below `limit` (a sieve: nothing shared with the app). */
function primesBelow(limit: number): { count: number; sum: bigint } {
  const composite = new Uint8Array(limit);
  let count = 0;
  let sum = 0n;
  for (let n = 2; n < limit; n++) {
    if (composite[n]) continue;
    count++;
    sum += BigInt(n);
    for (let m = n * n; m < limit; m += n) composite[m] = 1;
  }
  return { count, sum };
}

/** Blocks the workers lock for: each chunk split into blocks of `block` numbers. */
function blocksOf(limit: number, chunks: number, block: number): number {
  let blocks = 0;
  for (let i = 0; i < chunks; i++) {
    const len = Math.floor(((i + 1) * limit) / chunks) - Math.floor((i * limit) / chunks);
    blocks += Math.ceil(len / block);
  }
  return blocks;
}

/** Loads the app with `locks`, waits for its end, and returns #result and #details. */
async function runApp(locks: 'parklot' | 'parklot-async' | 'std' | 'parklot-undetected'): Promise<{ state: string; text: string; details: string; errors: string[] }> {
  const { page, errors } = await openPage(browser, `${server.url}wasm-app/?lock=${locks}&limit=${LIMIT}&chunks=${CHUNKS}&updates=${UPDATES}`);
  try {
    await page.waitForSelector('#result:not([data-state=running])', { timeout: 90_000 });
    return {
      state: (await page.locator('#result').getAttribute('data-state')) ?? 'no #result',
      text: (await page.locator('#result').textContent()) ?? '',
      details: (await page.locator('#details').textContent()) ?? '',
      errors: errors.filter((e) => !RAYON_HELPER_WARNING.test(e)),
    };
  } finally {
    await page.close();
  }
}

/** In µs; performance.now() on a cross-origin isolated page counts in 5 µs steps. */
function line(d: Distribution): string {
  return `n=${d.n} min ${d.min} µs, p50 ${d.p50} µs, p90 ${d.p90} µs, p99 ${d.p99} µs, max ${d.max} µs`;
}

/** Runs the parklot build (`tick` or `tickAsync`) and checks that its results are exact. */
async function runExact(mode: 'parklot' | 'parklot-async'): Promise<Report> {
  const { state, text, details, errors } = await runApp(mode);
  expect(state, `${text}\n${details}`).toBe('done');
  expect(errors).toEqual([]);
  const r = JSON.parse(details) as Report;
  const expected = primesBelow(LIMIT);
  expect(r.locks).toBe('parklot');
  expect(r.mode).toBe(mode);
  expect(r.limit).toBe(LIMIT);
  expect(r.checked).toBe(LIMIT);
  expect(r.primes).toBe(expected.count);
  expect(BigInt(r.sum)).toBe(expected.sum);
  expect(r.blocks).toBe(blocksOf(LIMIT, CHUNKS, r.block));
  expect(r.mainUpdates).toBe(r.ticks * UPDATES);
  // Detected, not configured: the app never calls set_thread_may_block.
  expect(r.mainMayBlock).toBe(false);
  expect(r.workerMayBlock).toBe(true);
  // The contention the app is built for did happen.
  expect(r.mutexContended).toBeGreaterThan(0);
  expect(r.acquire.n).toBe(r.mainUpdates + r.ticks - 1); // one read per tick but the last
  expect(r.beats).toBeGreaterThan(0);
  return r;
}

function summary(r: Report, how: string): string {
  return (
    `wasm-app (${r.mode}, ${how}): ${r.primes} primes below ${r.limit} in ${r.ms} ms, ${r.ticks} main-thread ticks; ` +
    `event loop meanwhile: ${r.frames} frames, ${r.beats} timer beats, longest gap ${r.maxBeatGapMs} ms\n` +
    `  main thread's time acquiring (Mutex lock + RwLock read; performance.now(), 5 µs steps), all: ${line(r.acquire)}\n` +
    `  the contended ones (${r.mutexContended} Mutex, ${r.readContended} RwLock read): ${r.contendedAcquire ? line(r.contendedAcquire) : 'none'}`
  );
}

describe('a wasm-bindgen app with Rayon in workers and locks on the main thread', () => {
  let spinning: Report | undefined;

  it('with parklot (feature wasm-bindgen) the page finishes with exact results and no trap', async () => {
    spinning = await runExact('parklot');
    expect(spinning.readContended).toBeGreaterThan(0);
    console.log(summary(spinning, 'lock()/read() spin on the main thread'));
  });

  it('with parklot awaited on the main thread (lock_async, read_async) the page finishes with exact results', async () => {
    // wasm-bindgen-futures drives tickAsync: the main thread queues with the
    // workers, which hold the locks with blocking lock()/write(), and is woken.
    const r = await runExact('parklot-async');
    console.log(
      `${summary(r, 'lock_async()/read_async() awaited, timed from the call to its resolution')}\n` +
        (spinning ? `  next to the spinning mode's contended ones: ${spinning.contendedAcquire ? line(spinning.contendedAcquire) : 'none'}` : ''),
    );
  });

  it('with std::sync::{Mutex, RwLock} the main thread traps the first time it is contended', async () => {
    const { state, text, details } = await runApp('std');
    expect(state, `${text}\n${details}`).toBe('trapped');
    expect(text).toBe('RuntimeError: Atomics.wait cannot be called in this context');
    // Where: inside std's futex lock, called from the app's tick().
    const frame = details.split('\n').find((l) => /::sys::sync::/.test(l)) ?? '';
    expect(frame).toMatch(/futex/);
    expect(details).toMatch(/\.tick \(/);
    console.log(`wasm-app (std): ${text}\n  ${details.split('\n')[0]}\n  ${frame.trim().replace(/ \(http.*$/, '')}`);
  });

  it('with parklot built without its wasm-bindgen feature the main thread traps as well', async () => {
    // Nobody told parklot that the page's main thread may not block, and
    // without the feature it does not ask: it sleeps there, and traps.
    const { state, text, details } = await runApp('parklot-undetected');
    expect(state, `${text}\n${details}`).toBe('trapped');
    expect(text).toBe('RuntimeError: Atomics.wait cannot be called in this context');
    const frame = details.split('\n').find((l) => /parklot\[[0-9a-f]+\]::sys::/.test(l)) ?? '';
    expect(frame).toMatch(/::wait/);
    console.log(`wasm-app (parklot without the feature): ${text}\n  ${frame.trim().replace(/ \(http.*$/, '')}`);
  });
});
