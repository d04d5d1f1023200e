// The host's cache-line round trip between the machine's CPUs, measured
// beside the lock rounds. On the 2-vCPU VM the suites run on, a word bounced
// between two threads takes about 80-140 ns to go there and back in some
// periods and about 370-420 ns in others, switching within seconds to
// minutes (where the host places the two vCPUs: it is not visible from
// inside). Two workers hammering one lock depend on it, and not every lock
// the same way: measured in Chromium, parklot::Lock led std's Mutex and
// CascadeLock by about 1.5x while the line was fast and trailed them by up
// to about 30% while it was slow. The suites record the probe before every lock
// round, so that a 2-worker row can be read by the state it ran in.
//
// The probe: this thread and one worker bounce a word through a
// SharedArrayBuffer (Atomics.store, then spin on Atomics.load until the
// answer comes back) `TRIPS` times; the result is nanoseconds per round
// trip. Unpinned: with two busy threads on two CPUs the scheduler puts them
// on different CPUs. About 2-15 ms per probe (a burst stops after 25 ms);
// none on a machine with one CPU.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { median as medianOf } from './wasm/table.mjs';

/** The median of `values`, or null for none. */
const median = (values) => (values.length ? medianOf(values) : null);

/** Round trips per burst; a probe is the median of three bursts (one preempted burst does not count). */
const TRIPS = 8_000;

/** A burst ends early after this long (a loaded machine, where a trip can wait for a time slice). */
const BURST_MS = 25;

/** Above this (ns per round trip), a probe says the line between the CPUs was slow. */
export const SLOW_LINE_NS = 250;

/** Word indices in the probe's buffer, each on its own 64-byte line. */
const BOUNCE = 0; // trip i: i from this thread, -i back from the worker; STOP ends the burst
const COMMAND = 16; // the burst the worker is asked to answer; -1: exit
const DONE = 32; // the last burst the worker has left
const READY = 48;
const STOP = 0x7fff_ffff;

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const w = new Int32Array(workerData.buffer);
Atomics.store(w, ${READY}, 1);
for (let seen = 0; ; ) {
  Atomics.wait(w, ${COMMAND}, seen);
  seen = Atomics.load(w, ${COMMAND});
  if (seen < 0) break;
  for (let i = 1; ; i++) {
    let v;
    while ((v = Atomics.load(w, ${BOUNCE})) !== i && v !== ${STOP});
    if (v === ${STOP}) break;
    Atomics.store(w, ${BOUNCE}, -i);
  }
  Atomics.store(w, ${DONE}, seen);
}
`;

/**
 * Starts the probe's worker; resolves to {measure, stop}: `measure()` runs
 * one probe and returns ns per round trip (null on a machine with one CPU,
 * where the two threads could only take turns), `stop()` ends the worker.
 */
export async function startLineProbe() {
  if (os.availableParallelism() < 2) return { measure: () => null, stop: async () => {} };
  const buffer = new SharedArrayBuffer(64 * 4);
  const w = new Int32Array(buffer);
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { buffer } });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const failed = new Promise((_, reject) => worker.once('error', reject));
  await Promise.race([failed, (async () => {
    while (Atomics.load(w, READY) === 0) await new Promise((r) => setTimeout(r, 1));
  })()]);
  failed.catch(() => {}); // from here on a failing worker shows as a burst that never ends
  let bursts = 0;
  /** One burst: ns per round trip. */
  const burst = () => {
    Atomics.store(w, BOUNCE, 0);
    Atomics.store(w, COMMAND, ++bursts);
    Atomics.notify(w, COMMAND);
    // The first trip waits for the worker to wake; time the rest.
    Atomics.store(w, BOUNCE, 1);
    while (Atomics.load(w, BOUNCE) !== -1);
    const start = performance.now();
    let trips = 1;
    while (trips < TRIPS) {
      trips++;
      Atomics.store(w, BOUNCE, trips);
      while (Atomics.load(w, BOUNCE) !== -trips);
      if ((trips & 63) === 0 && performance.now() - start > BURST_MS) break;
    }
    const ns = ((performance.now() - start) / (trips - 1)) * 1e6;
    Atomics.store(w, BOUNCE, STOP);
    while (Atomics.load(w, DONE) !== bursts);
    return ns;
  };
  // The first bursts compile the loops and wake the worker from its start: not measurements.
  for (let i = 0; i < 3; i++) burst();
  return {
    measure() {
      return [burst(), burst(), burst()].sort((a, b) => a - b)[1];
    },
    async stop() {
      Atomics.store(w, COMMAND, -1);
      Atomics.notify(w, COMMAND);
      await exited;
    },
  };
}

/**
 * A suite's 2-worker lock rounds that carry a probe (`lineNs`), by lock
 * (`idOf(round)`) and by the state the probe said: {id: {fast, slow}}, each
 * {rate: median of `rateOf(round)` or null, rounds}, plus the probes' own
 * medians per state under `probes`.
 */
export function twoWorkersByLine(rounds, idOf, rateOf) {
  const two = rounds.filter((r) => r.workers === 2 && !r.mainThread && typeof r.lineNs === 'number');
  const slow = (r) => r.lineNs > SLOW_LINE_NS;
  const split = (rs) => ({
    fast: { rate: median(rs.filter((r) => !slow(r)).map(rateOf)), rounds: rs.filter((r) => !slow(r)).length },
    slow: { rate: median(rs.filter(slow).map(rateOf)), rounds: rs.filter(slow).length },
  });
  /** @type {Record<string, {fast: {rate: number | null, rounds: number}, slow: {rate: number | null, rounds: number}}>} */
  const byLock = {};
  for (const id of new Set(two.map(idOf))) byLock[id] = split(two.filter((r) => idOf(r) === id));
  return { byLock, probes: { fast: median(two.filter((r) => !slow(r)).map((r) => r.lineNs)), slow: median(two.filter(slow).map((r) => r.lineNs)) } };
}

/**
 * "; 2w by the line between the CPUs: fast 1.45x, slow 0.88x": `ours`
 * against the best of `theirs` within each state, or '' where no state has
 * rounds of both (or the run had no probes).
 */
export function lineSplitText(split, ours, theirs) {
  const o = split.byLock[ours];
  if (!o) return '';
  const parts = ['fast', 'slow'].flatMap((state) => {
    const best = Math.max(0, ...theirs.map((id) => split.byLock[id]?.[state].rate ?? 0));
    return o[state].rate && best ? [`${state} ${(o[state].rate / best).toFixed(2)}x`] : [];
  });
  return parts.length ? `; 2w by the line between the CPUs (table below): ${parts.join(', ')}` : '';
}

/** What the 2-worker table by line state shows, for the suites' reports. */
export function lineNote(split) {
  const ns = (state) => (split.probes[state] === null ? 'none' : `median ${split.probes[state].toFixed(0)} ns`);
  return `Before every lock round the suite bounces a word between two threads of its own (bench/line-probe.mjs): a cache line's round trip between the two CPUs. On this VM it is either about 100 ns or about 400 ns, switching within seconds to minutes as the host places the vCPUs, and above ${SLOW_LINE_NS} ns it counts as slow. Two workers on one lock follow it, and not every lock the same way: the table gives each lock's rounds in each state. This run's probes: fast ${ns('fast')}, slow ${ns('slow')}.`;
}

/** The table's rows: [lock name, fast cell, slow cell] ("12.3M (4)", or "–" with no rounds). */
export function lineRows(split, nameOf, si) {
  const cell = (x) => (x.rounds ? `${si(x.rate)} (${x.rounds})` : '–');
  return Object.entries(split.byLock).map(([id, x]) => [nameOf(id), cell(x.fast), cell(x.slow)]);
}
