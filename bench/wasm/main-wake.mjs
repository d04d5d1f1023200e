// Experiment 5, the main thread woken through waitAsync: Node's main thread
// (this one, the counterpart of a page's) waits in two loops at once, one
// with parklot's rt.atomics.waitAsync and one with the engine's
// Atomics.waitAsync, each on a word of the npm package's memory. One worker
// (main-wake-worker.mjs) sleeps, then stamps the time, bumps one of the words,
// notifies it (rt.atomics.notify or Atomics.notify, alternately) and stamps
// the call's return. A wake-up is timed from the stamp before the call
// ("main") and from the return ("after": the woken side alone; 0 when the
// wake-up came before the notifier stamped). Both APIs take turns tick by
// tick within each round; the goals take each round's ratio.
import { Worker } from 'node:worker_threads';
import { quantile } from './table.mjs';
import { withTimeout } from './pool.mjs';

/** Byte offsets in the experiment's block of the package's memory, one line each. */
export const WAKE = { TICK_PARKLOT: 0, TICK_ENGINE: 64, STAMPS_PARKLOT: 128, STAMPS_ENGINE: 192, CONTROL: 256, BYTES: 320 };

/** The four kinds of sample, by API and where they are timed from. */
export const WAKE_KEYS = ['main-parklot', 'main-engine', 'after-parklot', 'after-engine'];

/** {n, mean, p10, median, p90, p99} of `values` (µs). */
export function latencyStats(values) {
  const q = (p) => quantile(values, p);
  return { n: values.length, mean: values.reduce((a, b) => a + b, 0) / values.length, p10: q(0.1), median: q(0.5), p90: q(0.9), p99: q(0.99) };
}

/**
 * Runs the experiment; resolves to {rounds: [{round, stats: {key: latencyStats}}],
 * pooled: {key: latencyStats}} (µs), or {skipped} where there is no waitAsync.
 */
export async function mainWake({ settings: s, packageRt: rt, packageUrl }) {
  if (typeof Atomics.waitAsync !== 'function') return { skipped: 'this Node has no Atomics.waitAsync' };
  const base = rt.alloc(WAKE.BYTES, 64);
  const control = rt.int32(base + WAKE.CONTROL, 1); // the round the worker is asked to tick for, -1 to stop
  const worker = new Worker(new URL('./main-wake-worker.mjs', import.meta.url), {
    workerData: { packageUrl, handle: rt.handle(), base, tickMs: s.wakeTickMs, roundMs: s.wakeRoundMs },
  });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const messages = [];
  let wake = null;
  worker.on('message', (m) => { messages.push(m); wake?.(); });
  worker.on('error', (e) => { messages.push({ error: e.message }); wake?.(); });
  const next = async (what) => {
    while (!messages.length) await withTimeout(new Promise((resolve) => { wake = resolve; }), 30_000, what);
    const m = messages.shift();
    if (m.error) throw new Error(`main-wake worker: ${m.error}`);
    return m;
  };
  await next('the main-wake worker starts');

  let samples = null; // the current round's, by key
  let running = true;
  const loop = async (api) => {
    const word = rt.int32(base + (api === 'parklot' ? WAKE.TICK_PARKLOT : WAKE.TICK_ENGINE), 1);
    const stamps = rt.float64(base + (api === 'parklot' ? WAKE.STAMPS_PARKLOT : WAKE.STAMPS_ENGINE), 2);
    while (running) {
      const seen = Atomics.load(word, 0);
      // A timeout lets the loop see the end of the run even if no tick comes.
      const r = api === 'parklot' ? rt.atomics.waitAsync(word, 0, seen, 8 * s.wakeTickMs) : Atomics.waitAsync(word, 0, seen, 8 * s.wakeTickMs);
      if (!r.async || (await r.value) !== 'ok' || samples === null) continue;
      const now = performance.timeOrigin + performance.now();
      const [stamp, returned] = stamps;
      samples[`main-${api}`].push((now - stamp) * 1e3);
      samples[`after-${api}`].push(returned >= stamp ? Math.max(0, now - returned) * 1e3 : 0);
    }
  };
  // Keeps this process alive while the engine's waitAsync is all that is pending.
  const keepAlive = setInterval(() => {}, 1000);
  const loops = [loop('parklot'), loop('engine')];
  const rounds = [];
  try {
    for (let round = -1; round < s.rounds; round++) { // round -1 warms up and is dropped
      samples = Object.fromEntries(WAKE_KEYS.map((k) => [k, []]));
      Atomics.store(control, 0, round + 2);
      Atomics.notify(control, 0);
      await next(`main-wake round ${round + 1}`);
      const taken = samples;
      samples = null;
      if (round >= 0) rounds.push({ round, samples: taken });
    }
  } finally {
    running = false;
    Atomics.store(control, 0, -1);
    Atomics.notify(control, 0);
    await withTimeout(exited, 30_000, 'the main-wake worker exits');
    await Promise.all(loops);
    clearInterval(keepAlive);
  }
  if (rounds.some((r) => WAKE_KEYS.some((k) => r.samples[k].length === 0))) throw new Error('main-wake: a round woke nothing');
  return {
    rounds: rounds.map((r) => ({ round: r.round, stats: Object.fromEntries(WAKE_KEYS.map((k) => [k, latencyStats(r.samples[k])])) })),
    pooled: Object.fromEntries(WAKE_KEYS.map((k) => [k, latencyStats(rounds.flatMap((r) => r.samples[k]))])),
  };
}
