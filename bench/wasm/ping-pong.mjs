// Experiment 4, wake latency: two workers bounce a word of wasm memory,
// each sleeping until the other changes it, so that one round trip is two
// wakeups of a sleeping thread. parklot's wait/notify against the engine's,
// inside wasm (bench_ping_pong) and from JS; two workers that spin instead
// of sleeping give the floor (a cache line crossing two cores and back).
//
// Each variant runs with one pair of workers and with four pairs at once
// (8 workers: oversubscribed, where spinning before sleep must turn itself
// off). One pair runs under three placements, because the scheduler's own
// choice decides the result: two threads that keep waking each other are
// often put on one CPU and stay there (each runs only while the other
// sleeps, so no balancer ever sees two runnable threads to spread), and the
// same code then measures a context switch instead of a wakeup across
// CPUs. "apart" pins the two workers to CPUs of their own (each has a
// core), "shared" pins both to one CPU, "free" leaves them to the
// scheduler. Next to the latency, the CPU
// the process used per round trip: a spin that wins latency by burning a
// core shows there. A sweep of parklot's spin-before-sleep limit, one pair,
// in wasm, shows what the default was chosen from.
//
// The same handoff the way a user writes it with a lock and a condition
// variable (worker.mjs's conditionPingPong): parklot's Lock + Condition
// through the npm package, against the multithreading package's Mutex +
// Condvar (in its own process, multithreading-child.mjs).
import { fail, gatedRound, pin } from './pool.mjs';
import { quantile } from './table.mjs';

const VARIANTS = [
  { id: 'wasm-parklot', where: 'wasm', who: 'parklot', name: 'parklot futex wait32/notify, in wasm', how: 'wasm', side: 0 },
  { id: 'wasm-engine', where: 'wasm', who: 'engine', name: 'memory.atomic.wait32/notify, in wasm', how: 'wasm', side: 1 },
  { id: 'wasm-spin', where: 'wasm', who: 'spin (floor)', name: 'spinning on the word, in wasm (floor)', how: 'wasm', side: 2 },
  { id: 'js-parklot', where: 'js', who: 'parklot', name: 'glue atomics_wait32/atomics_notify, from JS', how: 'js-parklot' },
  { id: 'js-engine', where: 'js', who: 'engine', name: 'Atomics.wait/Atomics.notify, from JS', how: 'js-atomics' },
  { id: 'condition-parklot', where: 'condition', who: 'parklot', name: 'parklot Lock + Condition via the npm package, from JS', how: 'package-condition' },
  { id: 'condition-multithreading', where: 'condition', who: 'multithreading', name: 'multithreading Mutex + Condvar (npm, own process), from JS', how: 'mt-condvar', remote: true },
];

/** Pairs of workers bouncing their own words at once. */
export const PAIRS = [1, 4];

/**
 * Where one pair's two workers run: pinned each to a CPU of its own, both
 * pinned to one CPU, or wherever the scheduler puts them. Only the
 * variants inside wasm and from JS run pinned: the lock + condition rows
 * compare against a peer in another process, left to the scheduler.
 */
export const PLACEMENTS = [
  { id: 'free', cpus: null, name: "the scheduler's choice" },
  { id: 'apart', cpus: [0, 1], name: 'a CPU each (pinned)' },
  { id: 'shared', cpus: [0, 0], name: 'one CPU for both (pinned)' },
];
const FREE = PLACEMENTS[0];
const pinnable = (v) => v.where === 'wasm' || v.where === 'js';
/** The key of a variant's rounds: the scheduler's placement keeps the plain one. */
export const ppKey = (id, pairs, placement = 'free') => `${id}@${pairs}${placement === 'free' ? '' : `/${placement}`}`;

/** Spin-before-sleep limits of the sweep (iterations; 0 sleeps at once). */
export const SWEEP = [0, 1 << 13, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19];

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
 * Runs the experiment on the pool's workers; resolves to {variants, pairs,
 * placements, rounds: [{round, variant, pairs, placement, cpuUsPerTrip,
 * ...latencyStats}], pooled: {ppKey(variant, pairs, placement): latencyStats
 * over every round's samples + cpuUsPerTrip (median of the rounds')},
 * sweep: [{spins, ...latencyStats, cpuUsPerTrip}]}.
 */
export async function pingPong({ settings: s, glue, memory, pool, shared, packageRt, multithreading: mt }) {
  const pairsList = PAIRS.filter((p) => 2 * p <= pool.length);
  if (pairsList.length === 0) fail('ping-pong needs two workers');
  const maxPairs = Math.max(...pairsList);
  const maxTrips = Math.max(s.pingPongTrips, s.pingPongWarmupTrips);
  const wordsAddr = glue.alloc(64 * maxPairs, 64);
  const samplesAddr = glue.alloc(8 * maxTrips * maxPairs, 8);
  const wordAddr = (pair) => wordsAddr + 64 * pair;
  const word = (pair) => new Int32Array(memory.buffer, wordAddr(pair), 1);
  // Each pair's Lock and Condition in the npm package's runtime.
  const packagePairs = Array.from({ length: maxPairs }, () => ({ lock: packageRt.lock(), condition: packageRt.condition() }));

  /**
   * One round: {samples, cpuUsPerTrip}, or null when the variant's peer was
   * skipped or the placement cannot be made (see PLACEMENTS).
   */
  async function round(v, pairs, trips, placement = FREE) {
    // The spinning floor runs with one pair on CPUs of their own only: pure
    // spinners sharing a CPU answer about once per time slice, so a round
    // would take minutes and measure the scheduler.
    if (v.id === 'wasm-spin' && (pairs > 1 || placement.id === 'shared')) return null;
    if (placement.cpus) {
      if (pairs !== 1 || !pinnable(v) || !pin(pool.slice(0, 2), placement.cpus)) return null;
      try {
        return await localRound(v, pairs, trips);
      } finally {
        pin(pool.slice(0, 2), null);
      }
    }
    if (v.remote) return remoteRound(v, pairs, trips);
    return localRound(v, pairs, trips);
  }

  /** A round on the pool's workers, checked: every round trip timed, every word back at 0. */
  async function localRound(v, pairs, trips) {
    for (let p = 0; p < pairs; p++) Atomics.store(word(p), 0, 0);
    const task = (i) => ({
      task: 'ping-pong', how: v.how, side: v.side, wordAddr: wordAddr(i >> 1),
      samplesAddr: samplesAddr + 8 * maxTrips * (i >> 1), pinger: i % 2 === 0, roundTrips: trips,
      lockAddr: packagePairs[i >> 1].lock.address, conditionAddr: packagePairs[i >> 1].condition.address,
    });
    const what = `ping-pong, ${v.name}, ${2 * pairs} workers`;
    const { done, cpus } = await gatedRound(pool, 2 * pairs, task, shared, s.roundTimeoutMs, what).catch((e) => fail(e.message));
    const samples = done.filter((_, i) => i % 2 === 0).flatMap((d) => Array.from(d.samples));
    const left = Array.from({ length: pairs }, (_, p) => Atomics.load(word(p), 0));
    if (samples.length !== trips * pairs || done.some((d) => d.word !== 0) || left.some((w) => w !== 0)) {
      fail(`${what}: ${samples.length} of ${trips * pairs} round trips timed, words left at ${left}`);
    }
    return { samples, cpuUsPerTrip: (cpus.selfS * 1e6) / (trips * pairs) };
  }

  /** A round in multithreading's process, checked as above; its CPU is that process's. */
  async function remoteRound(v, pairs, trips) {
    const what = `ping-pong, ${v.name}, ${2 * pairs} workers`;
    const m = await mt.ask({ type: 'ping-pong', pairs, trips, timeoutMs: s.roundTimeoutMs }, s.roundTimeoutMs + 5_000, what);
    if (!m) return null;
    if (m.samples.length !== trips * pairs || m.words.some((w) => w !== 0) || m.flags.some((w) => w !== 0)) {
      fail(`${what}: ${m.samples.length} of ${trips * pairs} round trips timed, flags left at ${m.flags}`);
    }
    return { samples: m.samples, cpuUsPerTrip: (m.cpus.selfS * 1e6) / (trips * pairs) };
  }

  const variants = VARIANTS.filter((v) => !v.remote || mt.available);

  // Each round runs every variant under every placement (one pair), the
  // scheduler's first, and then the oversubscribed pairs: so the free rounds
  // follow the 8-worker rounds, which leave the pair wherever the scheduler
  // put it, and not a pinned round, which would leave both workers on one
  // CPU or on two.
  const plan = pairsList.flatMap((pairs) => (pairs === 1 ? PLACEMENTS : [FREE])
    .flatMap((placement) => variants.map((v) => ({ v, pairs, placement }))));
  for (const { v, pairs, placement } of plan) await round(v, pairs, s.pingPongWarmupTrips, placement);
  const rounds = [];
  const all = {};
  for (let r = 0; r < s.rounds; r++) {
    for (const { v, pairs, placement } of plan) {
      const res = await round(v, pairs, s.pingPongTrips, placement);
      if (!res) continue;
      const { samples, cpuUsPerTrip } = res;
      (all[ppKey(v.id, pairs, placement.id)] ??= []).push({ samples, cpuUsPerTrip });
      rounds.push({ round: r, variant: v.id, pairs, placement: placement.id, cpuUsPerTrip, ...latencyStats(samples) });
    }
  }
  const pooled = Object.fromEntries(Object.entries(all).map(([k, rs]) => [k, {
    ...latencyStats(rs.flatMap((x) => x.samples)),
    cpuUsPerTrip: quantile(rs.map((x) => x.cpuUsPerTrip), 0.5),
  }]));

  // The sweep: one pair, parklot in wasm, interleaved over the limits.
  const defaultSpinLimit = glue.set_park_spin_limit(0);
  glue.set_park_spin_limit(defaultSpinLimit);
  const sweep = [];
  if (s.pingPongSweep) {
    const v = VARIANTS[0];
    const byLimit = new Map(SWEEP.map((n) => [n, []]));
    try {
      for (let r = 0; r < s.rounds; r++) {
        for (const spins of SWEEP) {
          glue.set_park_spin_limit(spins);
          byLimit.get(spins).push(await round(v, 1, s.pingPongTrips));
        }
      }
    } finally {
      glue.set_park_spin_limit(defaultSpinLimit);
    }
    for (const [spins, rs] of byLimit) {
      sweep.push({ spins, ...latencyStats(rs.flatMap((x) => x.samples)), cpuUsPerTrip: quantile(rs.map((x) => x.cpuUsPerTrip), 0.5) });
    }
  }
  return {
    // Only those measured (a peer skipped mid-run has no pooled entry; the
    // floor has one pair only): the report looks up each pair count's entry.
    variants: variants.filter((v) => pairsList.some((p) => all[ppKey(v.id, p)])).map(({ id, where, who, name }) => ({ id, where, who, name })),
    pairs: pairsList,
    // The placements that ran (pinning needs Linux, taskset and 2 CPUs).
    placements: PLACEMENTS.filter((pl) => Object.keys(all).some((k) => k === ppKey(k.split('@')[0], 1, pl.id))).map(({ id, name }) => ({ id, name })),
    defaultSpinLimit,
    rounds,
    pooled,
    sweep,
  };
}
