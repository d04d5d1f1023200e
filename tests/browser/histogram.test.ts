// The wait/notify lab's histogram bins (demo/src/histogram.ts), without a
// browser: every sample lands in a bin the chart shows.
import { describe, expect, it } from 'vitest';
import { Samples, binOf, binRange, edgeOf } from '../../demo/src/histogram.js';

describe('lab histogram bins', () => {
  it('a latency falls in the bin whose edges hold it; up to 1 µs, in bin 0', () => {
    for (const ms of [0.0013, 0.0101, 0.25, 3, 47.9]) {
      const b = binOf(ms);
      expect(edgeOf(b)).toBeLessThanOrEqual(ms);
      expect(edgeOf(b + 1)).toBeGreaterThan(ms);
    }
    expect([binOf(0.001), binOf(0.0004), binOf(0)]).toEqual([0, 0, 0]);
  });

  it('a wake-up timed across two threads\' clocks can read below zero: it counts in bin 0 and the range stays drawable', () => {
    const s = new Samples();
    s.add(0.012);
    s.add(-0.002);
    expect(s.bins.get(0)).toBe(1);
    const [lo, hi] = binRange([s]);
    expect([Number.isInteger(lo), Number.isInteger(hi)]).toEqual([true, true]);
    // What the chart shows covers every sample.
    let shown = 0;
    for (let b = lo; b <= hi; b++) shown += s.bins.get(b) ?? 0;
    expect(shown).toBe(s.all.length);
  });
});
