// Small helpers for the JS benchmarks and their reports: quantiles, number
// formats and aligned markdown tables.

/** The `q`-quantile of `values`, 0 ≤ q ≤ 1, interpolating between neighbours. */
export function quantile(values, q) {
  if (values.length === 0) throw new Error('quantile of nothing');
  const v = Float64Array.from(values).sort();
  const at = (v.length - 1) * q;
  const lo = Math.floor(at);
  return lo + 1 < v.length ? v[lo] + (v[lo + 1] - v[lo]) * (at - lo) : v[lo];
}

/** The median of `values` (the mean of the middle two for an even count). */
export const median = (values) => quantile(values, 0.5);

/** {median, min, max} of `values`: how every summary in the reports is made. */
export function spread(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** `x` with three significant digits and an SI suffix: 48.1M, 912k, 37 (as bench/src/report.rs). */
export function si(x) {
  const a = Math.abs(x);
  let scaled, suffix;
  if (a >= 1e9) [scaled, suffix] = [x / 1e9, 'G'];
  else if (a >= 1e6) [scaled, suffix] = [x / 1e6, 'M'];
  else if (a >= 1e3) [scaled, suffix] = [x / 1e3, 'k'];
  else return x.toFixed(0);
  const decimals = Math.abs(scaled) >= 100 ? 0 : Math.abs(scaled) >= 10 ? 1 : 2;
  return scaled.toFixed(decimals) + suffix;
}

/** Nanoseconds with two decimals below 100, else none. */
export function ns(x) {
  return x < 100 ? x.toFixed(2) : x.toFixed(0);
}

/**
 * An aligned markdown table. `columns` is a list of {title, left?}: text
 * columns are left-aligned, numbers right-aligned. A row that is `null`
 * becomes a separator row of blanks (between groups).
 */
export function markdownTable(columns, rows) {
  const cells = rows.map((r) => (r === null ? columns.map(() => '') : r.map(String)));
  const widths = columns.map((c, i) => Math.max(c.title.length, 3, ...cells.map((r) => r[i].length)));
  const pad = (s, i) => (columns[i].left ? s.padEnd(widths[i]) : s.padStart(widths[i]));
  const line = (r) => `| ${r.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (columns[i].left ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(columns.map((c) => c.title)), rule, ...cells.map(line)].join('\n');
}
