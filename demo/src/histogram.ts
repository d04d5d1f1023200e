/**
 * The wait/notify lab's histograms, without the drawing: latency samples in
 * logarithmic bins (four per doubling, from 1 µs up; times in ms), the bin
 * range a group of them needs, and a round y-axis maximum.
 */
const BINS_PER_OCTAVE = 4;
const FIRST_EDGE_MS = 0.001;

/** The bin of a latency: 0 for anything up to the first edge, zero and below included. */
export function binOf(ms: number): number {
  return ms > FIRST_EDGE_MS ? Math.floor(Math.log2(ms / FIRST_EDGE_MS) * BINS_PER_OCTAVE) : 0;
}

/** Where bin `bin` starts, in ms. */
export function edgeOf(bin: number): number {
  return FIRST_EDGE_MS * 2 ** (bin / BINS_PER_OCTAVE);
}

/** One measurement's samples: all of them, and their count per bin. */
export class Samples {
  readonly all: number[] = [];
  readonly bins = new Map<number, number>();
  add(ms: number): void {
    this.all.push(ms);
    const b = binOf(ms);
    this.bins.set(b, (this.bins.get(b) ?? 0) + 1);
  }
  sorted(): number[] {
    return [...this.all].sort((a, b) => a - b);
  }
}

/** The bins to show for `groups` together: one empty bin either side, or [0, -1] (none) when there are no samples. */
export function binRange(groups: Samples[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const g of groups) {
    for (const b of g.bins.keys()) {
      lo = Math.min(lo, b);
      hi = Math.max(hi, b);
    }
  }
  return lo === Infinity ? [0, -1] : [Math.max(0, lo - 1), hi + 1];
}

/** The largest count of any bin in `groups`. */
export function maxCount(groups: Samples[]): number {
  let m = 0;
  for (const g of groups) for (const c of g.bins.values()) m = Math.max(m, c);
  return m;
}

/** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) at least `n`: a y-axis maximum. */
export function roundUp(n: number): number {
  if (!(n > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8]) if (m * power >= n) return m * power;
  return 10 * power;
}
