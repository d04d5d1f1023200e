// The benchmarks' cache-line probe (bench/line-probe.mjs): it measures, it
// stops, and the reports split the 2-worker rounds by the state it said.
import { describe, expect, it } from 'vitest';
import { SLOW_LINE_NS, lineRows, lineSplitText, startLineProbe, twoWorkersByLine } from '../../bench/line-probe.mjs';

describe('the line probe', () => {
  it('measures a round trip between two threads and stops its worker', async () => {
    const probe = await startLineProbe();
    const ns = [probe.measure(), probe.measure()];
    await probe.stop();
    for (const x of ns) {
      expect(Number.isFinite(x)).toBe(true);
      // A round trip is at least two cache misses' worth, and below a second
      // even on a loaded machine (preempted, it took 7.7 ms on 2 cores
      // beside a loom run): a sanity bound, not a timing.
      expect(x).toBeGreaterThan(1);
      expect(x).toBeLessThan(1e9);
    }
  });

  it('splits the 2-worker rounds of each lock by the state the probe before each said', () => {
    const fast = SLOW_LINE_NS - 150;
    const slow = SLOW_LINE_NS + 150;
    const rounds = [
      // parklot: 60 and 70 with a fast line, 40 with a slow one
      { lock: 'parklot', workers: 2, rate: 60, lineNs: fast },
      { lock: 'parklot', workers: 2, rate: 70, lineNs: fast },
      { lock: 'parklot', workers: 2, rate: 40, lineNs: slow },
      // std: 50 fast, 80 slow
      { lock: 'std', workers: 2, rate: 50, lineNs: fast },
      { lock: 'std', workers: 2, rate: 80, lineNs: slow },
      // not 2 workers, the main thread's run, a round without a probe (older results): left out
      { lock: 'parklot', workers: 4, rate: 1000, lineNs: slow },
      { lock: 'parklot', workers: 2, rate: 1000, lineNs: slow, mainThread: true },
      { lock: 'std', workers: 2, rate: 1000 },
    ];
    const split = twoWorkersByLine(rounds, (r: { lock: string }) => r.lock, (r: { rate: number }) => r.rate);
    expect(split.byLock.parklot).toEqual({ fast: { rate: 65, rounds: 2 }, slow: { rate: 40, rounds: 1 } });
    expect(split.byLock.std).toEqual({ fast: { rate: 50, rounds: 1 }, slow: { rate: 80, rounds: 1 } });
    expect(split.probes).toEqual({ fast, slow });
    expect(lineSplitText(split, 'parklot', ['std'])).toBe('; 2w by the line between the CPUs (table below): fast 1.30x, slow 0.50x');
    expect(lineRows(split, (id: string) => id, (x: number) => String(x))).toEqual([
      ['parklot', '65 (2)', '40 (1)'],
      ['std', '50 (1)', '80 (1)'],
    ]);
  });

  it('says nothing for results without probes', () => {
    const split = twoWorkersByLine([{ lock: 'parklot', workers: 2, rate: 60 }], (r: { lock: string }) => r.lock, (r: { rate: number }) => r.rate);
    expect(split.byLock).toEqual({});
    expect(lineSplitText(split, 'parklot', ['std'])).toBe('');
  });
});
