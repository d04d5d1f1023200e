// Renders the benchmark suites' ChartSpecs to standalone SVG files, with no
// dependencies (the SVG chart libraries on npm want a DOM or a canvas).
//
//   node bench/chart.mjs DIR/SUITE.json... [--out DIR]
//
// writes OUT/<suite>-<chart id>.svg (OUT: each JSON file's own folder). A
// ChartSpec is {id, title, kind: 'line'|'bar', x: {label, log}, y: {label,
// log}, series: [{name, points: [{x, y, min, max}]}]}: lines get a marker
// and a min–max whisker per point, bars are grouped by category (x is then a
// string) with a whisker each; a log axis gets decade ticks.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const W = 960;
const H = 540;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';
// Tableau 10: distinct in colour and in grey, so the lines stay apart.
const COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const DASHES = ['', '6 3', '2 3']; // past ten series, colours repeat with a dash

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const text = (x, y, s, attrs = '') => `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`;
const line = (x1, y1, x2, y2, attrs) => `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" ${attrs}/>`;

/** A tick label: 3 significant digits, SI suffix from a thousand up (12k, 3.5M). */
export function tickLabel(v) {
  const a = Math.abs(v);
  for (const [scale, suffix] of [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) {
    if (a >= scale) return `${Number((v / scale).toPrecision(3))}${suffix}`;
  }
  return `${Number(v.toPrecision(3))}`;
}

/** `s` broken into lines of at most `width` characters, at spaces. */
function wrap(s, width) {
  const lines = [];
  let cur = '';
  for (const word of s.split(' ')) {
    if (cur && cur.length + 1 + word.length > width) {
      lines.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  return cur ? [...lines, cur] : lines;
}

/**
 * A numeric axis over [lo, hi] mapped onto [a, b] pixels: {map, ticks:
 * [{v, label, minor}]}. Log: whole decades around the data, minor ticks at
 * 2..9; `at` (the data's own values, for few discrete x) replaces the labels.
 */
function numericAxis(lo, hi, a, b, log, { at = null, zero = false } = {}) {
  if (log) {
    if (lo <= 0) throw new Error('log axis with a value ≤ 0');
    // The data's span, padded by 6% (at least a third of a decade in all).
    const [d0, d1] = [Math.log10(lo), Math.log10(hi)];
    const pad = Math.max((d1 - d0) * 0.06, (1 / 3 - (d1 - d0)) / 2);
    const [l0, l1] = [d0 - pad, d1 + pad];
    const map = (v) => a + ((Math.log10(v) - l0) / (l1 - l0)) * (b - a);
    if (at) return { map, ticks: at.map((v) => ({ v, label: tickLabel(v) })) };
    // Decades labelled; under two decades 2 and 5 too, under one all but 7 and 9.
    const labelled = l1 - l0 < 1 ? [1, 2, 3, 4, 5, 6, 8] : l1 - l0 < 2 ? [1, 2, 5] : [1];
    const ticks = [];
    for (let d = Math.floor(l0); d <= Math.ceil(l1); d++) {
      for (let m = 1; m < 10; m++) {
        const v = m * 10 ** d;
        const major = labelled.includes(m);
        if (Math.log10(v) >= l0 && Math.log10(v) <= l1) ticks.push({ v, label: major ? tickLabel(v) : '', minor: m !== 1 });
      }
    }
    return { map, ticks };
  }
  if (zero) lo = Math.min(0, lo);
  if (hi === lo) hi = lo + 1;
  const raw = (hi - lo) / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const t0 = Math.floor(lo / step) * step;
  const t1 = Math.ceil(hi / step) * step;
  const map = (v) => a + ((v - t0) / (t1 - t0)) * (b - a);
  if (at) return { map, ticks: at.map((v) => ({ v, label: tickLabel(v) })) };
  const ticks = [];
  for (let v = t0; v <= t1 + step / 2; v += step) ticks.push({ v, label: tickLabel(Number(v.toPrecision(12))) });
  return { map, ticks };
}

/** The SVG document for one ChartSpec. */
export function renderChart(spec) {
  const series = spec.series.filter((s) => s.points.length);
  const points = series.flatMap((s) => s.points);
  const bar = spec.kind === 'bar';
  const categories = bar ? [...new Set(points.map((p) => String(p.x)))] : [];

  // Legend on the right, as wide as its longest name needs.
  const legendW = Math.min(260, 40 + 6.6 * Math.max(...series.map((s) => s.name.length), 4));
  const titleLines = wrap(spec.title, Math.floor((W - 40) / 8.2));
  const top = 24 + titleLines.length * 20 + 10;
  // Category names go on two lines where one is too narrow, else at an angle.
  const plotW0 = W - 90 - legendW - 20;
  const perLine = Math.floor((plotW0 / Math.max(categories.length, 1) - 6) / 6.6);
  const catLines = categories.map((c) => wrap(c, perLine));
  const slanted = catLines.some((l) => l.length > 2 || l.some((x) => x.length > perLine));
  const longest = Math.max(0, ...categories.map((c) => c.length));
  const bottom = 56 + (slanted ? Math.min(longest, 30) * 4.6 : catLines.some((l) => l.length > 1) ? 14 : 0);
  const [x0, x1, y0, y1] = [90, 90 + plotW0, H - bottom, top]; // plot area: y grows downwards

  const ys = points.flatMap((p) => [p.y, p.min ?? p.y, p.max ?? p.y]).filter((v) => Number.isFinite(v) && (!spec.y.log || v > 0));
  // Log bars stand on the decade below the smallest value, not on the value itself.
  const yLo = bar && spec.y.log ? 10 ** Math.floor(Math.log10(Math.min(...ys))) : Math.min(...ys);
  const yAxis = numericAxis(yLo, Math.max(...ys), y0, y1, spec.y.log, { zero: bar && !spec.y.log });
  const ymap = (v) => (spec.y.log && v <= 0 ? y0 : yAxis.map(v));
  let xAxis = null;
  if (!bar) {
    const xs = [...new Set(points.map((p) => p.x))].sort((a, b) => a - b);
    xAxis = numericAxis(xs[0], xs[xs.length - 1], x0, x1, spec.x.log, { at: xs.length <= 12 ? xs : null });
  }

  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT} font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  titleLines.forEach((t, i) => out.push(text(W / 2, 26 + i * 20, t, 'text-anchor="middle" font-size="15" font-weight="bold"')));

  // Grid and y ticks.
  for (const t of yAxis.ticks) {
    const y = ymap(t.v);
    if (y < y1 - 0.5 || y > y0 + 0.5) continue;
    out.push(line(x0, y, x1, y, `stroke="${t.minor ? '#f2f2f2' : '#dddddd'}"`));
    if (t.label) out.push(text(x0 - 6, y + 4, t.label, 'text-anchor="end"'));
  }
  out.push(line(x0, y0, x1, y0, 'stroke="#444"'), line(x0, y0, x0, y1, 'stroke="#444"'));
  out.push(text(22, (y0 + y1) / 2, spec.y.label + (spec.y.log ? ' (log)' : ''), `text-anchor="middle" transform="rotate(-90 22 ${((y0 + y1) / 2).toFixed(1)})"`));
  out.push(text((x0 + x1) / 2, H - 12, spec.x.label + (spec.x.log && !bar ? ' (log)' : ''), 'text-anchor="middle"'));

  const whisker = (x, lo, hi, color, cap) => {
    if (!Number.isFinite(lo) || !Number.isFinite(hi) || Math.abs(ymap(lo) - ymap(hi)) < 1) return '';
    return line(x, ymap(lo), x, ymap(hi), `stroke="${color}" stroke-width="1.2"`)
      + line(x - cap, ymap(lo), x + cap, ymap(lo), `stroke="${color}" stroke-width="1.2"`)
      + line(x - cap, ymap(hi), x + cap, ymap(hi), `stroke="${color}" stroke-width="1.2"`);
  };
  const style = (i) => ({ color: COLORS[i % COLORS.length], dash: DASHES[Math.floor(i / COLORS.length) % DASHES.length] });

  if (bar) {
    const band = (x1 - x0) / categories.length;
    const barW = (band * 0.8) / series.length;
    categories.forEach((c, ci) => {
      const cx = x0 + band * (ci + 0.5);
      if (slanted) out.push(text(cx, y0 + 14, c, `text-anchor="end" transform="rotate(-35 ${cx.toFixed(1)} ${(y0 + 14).toFixed(1)})"`));
      else catLines[ci].forEach((l, li) => out.push(text(cx, y0 + 16 + 14 * li, l, 'text-anchor="middle"')));
    });
    series.forEach((s, si) => {
      const { color } = style(si);
      for (const p of s.points) {
        const ci = categories.indexOf(String(p.x));
        const bx = x0 + band * ci + band * 0.1 + barW * si;
        const top = ymap(p.y);
        out.push(`<rect x="${bx.toFixed(1)}" y="${Math.min(top, y0).toFixed(1)}" width="${Math.max(barW - 1, 1).toFixed(1)}" height="${Math.abs(y0 - top).toFixed(1)}" fill="${color}"><title>${esc(`${s.name}, ${p.x}: ${tickLabel(p.y)}`)}</title></rect>`);
        out.push(whisker(bx + barW / 2, p.min, p.max, '#333', Math.min(barW / 4, 5)));
        // The value over the bar (and its whisker), where there is room for it.
        const labelY = Math.min(top, Number.isFinite(p.max) ? ymap(p.max) : top) - 4;
        if (barW >= 22) out.push(text(bx + barW / 2, labelY, tickLabel(p.y), 'text-anchor="middle" font-size="10" fill="#333"'));
      }
    });
  } else {
    for (const t of xAxis.ticks) {
      const x = xAxis.map(t.v);
      if (x < x0 - 0.5 || x > x1 + 0.5) continue;
      out.push(line(x, y0, x, y0 + (t.minor ? 3 : 5), 'stroke="#444"'));
      if (t.label) out.push(text(x, y0 + 18, t.label, 'text-anchor="middle"'));
    }
    // A slight sideways offset per series keeps overlapping whiskers apart.
    const nudge = (si) => (si - (series.length - 1) / 2) * 2.5;
    series.forEach((s, si) => {
      const { color, dash } = style(si);
      const pts = [...s.points].sort((a, b) => a.x - b.x);
      const at = (p) => [xAxis.map(p.x) + nudge(si), ymap(p.y)];
      for (const p of pts) out.push(whisker(at(p)[0], p.min, p.max, color, 3));
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${pts.map((p) => at(p).map((v) => v.toFixed(1)).join(',')).join(' ')}"/>`);
      for (const p of pts) {
        const [x, y] = at(p);
        out.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3.2" fill="${color}"><title>${esc(`${s.name}, ${p.x}: ${tickLabel(p.y)}`)}</title></circle>`);
      }
    });
  }

  // Legend.
  const lx = W - legendW;
  series.forEach((s, si) => {
    const { color, dash } = style(si);
    const ly = y1 + 8 + si * 20;
    out.push(bar
      ? `<rect x="${lx}" y="${ly - 9}" width="18" height="10" fill="${color}"/>`
      : line(lx, ly - 4, lx + 18, ly - 4, `stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}`));
    out.push(text(lx + 24, ly, s.name));
  });
  out.push('</svg>');
  return `${out.filter(Boolean).join('\n')}\n`;
}

/** Renders every chart of a suite's results (parsed JSON) into `dir`; the files' names. */
export function renderSuite(results, dir) {
  return (results.charts ?? []).map((spec) => {
    const name = `${results.suite}-${spec.id}.svg`;
    writeFileSync(join(dir, name), renderChart(spec));
    return name;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true });
  if (!positionals.length) {
    process.stderr.write('usage: node bench/chart.mjs SUITE.json... [--out DIR]\n');
    process.exit(2);
  }
  for (const file of positionals) {
    const names = renderSuite(JSON.parse(readFileSync(file, 'utf8')), values.out ?? dirname(file));
    process.stderr.write(`chart: ${file}: ${names.join(', ')}\n`);
  }
}
