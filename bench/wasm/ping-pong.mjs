// Experiment 4, wake latency: two workers bounce a word of wasm memory,
// each sleeping until the other changes it, so that one round trip is two
// wakeups of a sleeping thread. parklot's wait/notify against the engine's,
// inside wasm (bench_ping_pong) and from JS; two workers that spin instead
// of sleeping give the floor (a cache line crossing two cores and back).
import { fail, gatedRound } from './pool.mjs';
import { quantile } from './table.mjs';

const VARIANTS = [
  { id: 'wasm-parklot', where: 'wasm', who: 'parklot', name: 'parklot futex wait32/notify, in wasm', how: 'wasm', side: 0 },
  { id: 'wasm-engine', where: 'wasm', who: 'engine', name: 'memory.atomic.wait32/notify, in wasm', how: 'wasm', side: 1 },
  { id: 'wasm-spin', where: 'wasm', who: 'spin (floor)', name: 'spinning on the word, in wasm (floor)', how: 'wasm', side: 2 },
  { id: 'js-parklot', where: 'js', who: 'parklot', name: 'glue atomics_wait32/atomics_notify, from JS', how: 'js-parklot' },
  { id: 'js-engine', where: 'js', who: 'engine', name: 'Atomics.wait/Atomics.notify, from JS', how: 'js-atomics' },
];

/** Median, p10, p90, min, max of one round's samples (ns). */
export function latencyStats(samples) {
  return {
    count: samples.length,
    median: quantile(samples, 0.5),
    p10: quantile(samples, 0.1),
    p90: quantile(samples, 0.9),
    min: Math.min(...samples),
    max: Math.max(...samples),
  };
}

/**
 * Runs the experiment on the first two workers of `pool`; resolves to
 * {variants, rounds: [{round, variant, ...latencyStats}], pooled: {variant:
 * latencyStats over every round's samples}}.
 */
export async function pingPong({ settings: s, glue, memory, pool, shared }) {
  if (pool.length < 2) fail('ping-pong needs two workers');
  const maxTrips = Math.max(s.pingPongTrips, s.pingPongWarmupTrips);
  const wordAddr = glue.alloc(64, 64);
  const samplesAddr = glue.alloc(8 * maxTrips, 8);
  const word = () => new Int32Array(memory.buffer, wordAddr, 1);

  async function round(v, trips) {
    Atomics.store(word(), 0, 0);
    const task = (i) => ({ task: 'ping-pong', how: v.how, side: v.side, wordAddr, samplesAddr, pinger: i === 0, roundTrips: trips });
    const { done } = await gatedRound(pool, 2, task, shared, s.roundTimeoutMs, `ping-pong, ${v.name}`).catch((e) => fail(e.message));
    const samples = done[0].samples;
    if (samples.length !== trips || done.some((d) => d.word !== 0) || Atomics.load(word(), 0) !== 0) {
      fail(`ping-pong, ${v.name}: ${samples.length} of ${trips} round trips timed, word left at ${Atomics.load(word(), 0)}`);
    }
    return samples;
  }

  for (const v of VARIANTS) await round(v, s.pingPongWarmupTrips);
  const rounds = [];
  const all = Object.fromEntries(VARIANTS.map((v) => [v.id, []]));
  for (let r = 0; r < s.rounds; r++) {
    for (const v of VARIANTS) {
      const samples = await round(v, s.pingPongTrips);
      all[v.id].push(...samples);
      rounds.push({ round: r, variant: v.id, ...latencyStats(samples) });
    }
  }
  const pooled = Object.fromEntries(VARIANTS.map((v) => [v.id, latencyStats(all[v.id])]));
  return { variants: VARIANTS.map(({ id, where, who, name }) => ({ id, where, who, name })), rounds, pooled };
}
