// The reports of experiment 6 (seed 003's protocol) and its kin: the
// wasm-node-rwlock suite's summaries, ChartSpecs and markdown, and the
// combined table (bench/results/rwlock.md) that puts the native suite's rows
// (native-rwlock.json) beside the wasm and JS ones, shaped like seed 003's.
import { markdownTable, si, spread } from './table.mjs';

/**
 * A thread below this share of its lock's mean per-thread rate in a round
 * counts as starved: it got next to nothing (seed 003's 0), like glibc's
 * 2 ops/s beside readers at millions, not merely served slower.
 */
const STARVED_SHARE = 0.001;

const fixed = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const percent = (x) => (x >= 0.1 ? `${(100 * x).toFixed(0)}%` : x >= 0.001 ? `${(100 * x).toFixed(1)}%` : `${(100 * x).toFixed(3)}%`);

/** Which sides of a round ({readers, writers}: per-thread rates) have a starved thread. */
function starvedSides(r) {
  const all = [...r.readers, ...r.writers];
  const floor = STARVED_SHARE * mean(all);
  return ['readers', 'writers'].filter((side) => r[side].some((x) => x < floor));
}

/**
 * One row per peer and thread count from `rounds` ({peer, workers, readers,
 * writers, opsPerSec?}): each side's slowest, mean and fastest thread
 * ({median, min, max} over rounds), the slowest thread over the mean of all
 * (`evenness`), the total rate, and in how many rounds each side had a
 * starved thread.
 */
export function sideSummaries(rounds, peerIds, counts) {
  const out = [];
  for (const n of counts) {
    for (const peer of peerIds) {
      const rs = rounds.filter((r) => r.peer === peer && r.workers === n);
      if (!rs.length) continue;
      const side = (key) => (rs[0][key].length
        ? { min: spread(rs.map((r) => Math.min(...r[key]))), mean: spread(rs.map((r) => mean(r[key]))), max: spread(rs.map((r) => Math.max(...r[key]))) }
        : null);
      const starved = { readers: 0, writers: 0 };
      for (const r of rs) for (const s of starvedSides(r)) starved[s]++;
      const totals = rs.map((r) => r.opsPerSec ?? r.readers.reduce((a, b) => a + b, 0) + r.writers.reduce((a, b) => a + b, 0));
      const evenness = spread(rs.map((r) => Math.min(...r.readers, ...r.writers) / mean([...r.readers, ...r.writers])));
      out.push({ peer, workers: n, rounds: rs.length, readers: side('readers'), writers: side('writers'), evenness, starved, total: spread(totals) });
    }
  }
  return out;
}

export function summarize({ params, peers, rounds, deadlocks = [] }) {
  const sum = {};
  for (const [exp, list] of Object.entries(peers)) {
    const rows = sideSummaries(rounds.filter((r) => r.experiment === exp), list.map((p) => p.id), params.workerCounts);
    for (const row of rows) {
      const peer = list.find((p) => p.id === row.peer);
      const base = rows.find((b) => b.peer === peer.base && b.workers === row.workers);
      const deadlocked = deadlocks.filter((d) => d.peer === row.peer && d.workers === row.workers && d.round >= 0).length;
      Object.assign(row, { name: peer.name, layer: peer.layer, deadlocked, vsBase: base ? row.total.median / base.total.median : NaN });
    }
    sum[exp] = rows;
  }
  return sum;
}

// --------------------------------------------------------------- charts

/** The name on a chart: short enough for its legend. */
const label = (name) => name
  .replace(/RwLock, (writer|reader)-preferring/, 'prefer-$1s').replace('rt.rwLock(), ', '')
  .replace(' (npm, JS calls)', ', JS').replace(' (wasm)', ', wasm').replace(/ \(npm\)$/, '').replace('std::sync::', 'std ');

/** A line chart of `pick(row)` ({median, min, max}) against workers, one series per peer. */
function lineChart(id, title, yLabel, rows, pick, xLabel = 'workers (Node worker_threads)') {
  const names = [...new Set(rows.map((r) => r.name))];
  return {
    id, title, kind: 'line',
    x: { label: xLabel, log: true },
    y: { label: yLabel, log: true },
    series: names.map((name) => ({
      name: label(name),
      points: rows.filter((r) => r.name === name && pick(r)).map((r) => ({ x: r.workers, y: pick(r).median, min: pick(r).min, max: pick(r).max })),
    })),
  };
}

function charts(sum, s) {
  const whiskers = `median, whiskers min–max of ${s.rounds} rounds`;
  return [
    lineChart('writers', `Reader-writer locks, half the workers writing: the slowest writer (${whiskers})`, 'slowest writer, writes per second', sum.rw, (r) => r.writers?.min),
    lineChart('readers', `Reader-writer locks, half the workers reading: the slowest reader (${whiskers})`, 'slowest reader, reads per second', sum.rw, (r) => r.readers?.min),
    lineChart('total', `Reader-writer locks, half readers half writers: all operations (${whiskers})`, 'reads + writes per second, all workers', sum.rw, (r) => r.total),
    lineChart('semaphore', `Semaphore of n/2 permits, every worker acquire + release (${whiskers})`, 'acquisitions per second, all workers', sum.semaphore, (r) => r.total),
    lineChart('barrier', `Barrier: all workers pass together (${whiskers})`, 'passes per second', sum.barrier, (r) => r.total),
  ];
}

// ------------------------------------------------------------- markdown

/** "median (worst round)" of a spread, or '-'. */
const worst = (x) => (x ? `${si(x.median)} (${si(x.min)})` : '-');

/** The seed-003-shaped columns of one side: slowest (worst round), mean, fastest. */
const sideCells = (x) => (x ? [worst(x.min), si(x.mean.median), si(x.max.median)] : ['-', '-', '-']);

const starvedCell = (r) => {
  const parts = ['writers', 'readers'].filter((k) => r.starved[k]).map((k) => `${k} ${r.starved[k]}/${r.rounds}`);
  if (r.deadlocked) parts.unshift(`DEADLOCKED in ${r.deadlocked} more round(s)`);
  return parts.length ? `**${parts.join(', ')}**` : 'no';
};

const SIDE_COLUMNS = [
  { title: 'writers: slowest (worst round)' }, { title: 'mean' }, { title: 'fastest' },
  { title: 'readers: slowest (worst round)' }, { title: 'mean' }, { title: 'fastest' },
  { title: 'slowest / mean (worst)' }, { title: 'starved' },
];

/** A row's seed-003 cells: both sides, how even, starved rounds. */
const rwCells = (r) => [...sideCells(r.writers), ...sideCells(r.readers), `${percent(r.evenness.median)} (${percent(r.evenness.min)})`, starvedCell(r)];

/** Rows grouped by thread count, a blank row between groups. */
function grouped(rows, cells) {
  const out = [];
  rows.forEach((r, i) => {
    if (i > 0 && rows[i - 1].workers !== r.workers) out.push(null);
    out.push(cells(r));
  });
  return out;
}

/** What the rows of other builds of the package (`--pkg`, peer ids `...@NAME`) are, or null if there are none. */
function otherBuilds(peers) {
  const names = [...new Set(Object.values(peers ?? {}).flat().map((p) => p.id.split('@')[1]).filter(Boolean))];
  if (!names.length) return null;
  return `Rows marked "build ${names.join('", "build ')}" ran another build of the npm package in the same rounds as this tree's, interleaved (\`node bench/wasm/rwlock.mjs --pkg NAME=PATH\`, PATH that build's js/dist/index.js).`;
}

function markdown({ date, quick, machine, params: s, skipped, deadlocks = [], peers }, sum) {
  const out = [];
  const p = (line = '') => out.push(line);
  p('# Experiment 6 in Node: reader-writer locks (seed 003), semaphores and barriers, wasm and JS workers');
  p();
  p(`${date}${quick ? ' (--quick: a smoke run, not a measurement)' : ''}. Machine: ${machine.cores} CPUs (${machine.cpu}), node ${machine.node} (V8 ${machine.v8}); load average at start ${machine.loadavg.map((x) => x.toFixed(2)).join(' ')}.`);
  p();
  p('Rerun: `bash scripts/build-wasm.sh && npm run build:ts && node bench/wasm/rwlock.mjs [--quick] [--out DIR]`.');
  const builds = otherBuilds(peers);
  if (builds) p(`\n${builds}`);
  for (const sk of skipped) p(`\n**Skipped: ${sk.peer}**: ${sk.reason}.`);
  p();
  if (deadlocks.length) {
    p('## Deadlocks');
    p();
    p(`Rounds still running ${s.roundTimeoutMs / 1e3} s after their ${s.roundMs} ms (a starved worker gets in a few ms after the others stop): their workers were ended and replaced, the round left out of the tables, and the run exited 1.`);
    p();
    p(markdownTable([{ title: 'experiment', left: true }, { title: 'peer', left: true }, { title: 'workers' }, { title: 'round' }, { title: 'never answered', left: true }, { title: 'the lock then', left: true }],
      deadlocks.map((d) => [d.experiment, d.name, d.workers, d.round < 0 ? 'warm-up' : d.round + 1, d.silent.join(', '), d.lock ?? 'unknown'])));
    p();
  }
  p(`${s.rounds} rounds of ${s.roundMs} ms per peer and worker count, interleaved across peers. Rates per second; each cell is the median over rounds, and "(worst round)" the lowest of the rounds. **slowest / mean**: the slowest thread's rate over the mean of all threads of that lock (100% is even; median over rounds, and the worst round). A thread is **starved** in a round when it ran under ${percent(STARVED_SHARE)} of that mean; the column counts such rounds per side. A starved worker still shows the one acquisition it was blocked in when the others stopped, so its rate is about 1 / (round length), not 0.`);
  p();
  p('## 1. Reader-writer locks: half the workers read, half write');
  p();
  p('Workers 0, 2, 4, ... read, 1, 3, 5, ... write. A write moves a version by 2 in two plain steps; a read that sees it odd caught a writer inside, and the final version must be twice the writes: both checked every round. "(wasm)": the loop inside the module (one call per chunk); "JS calls": one call per read()/unlockRead() or write()/unlockWrite() (multithreading: `blockingRead()`/`blockingWrite()` and the guard\'s `dispose()`), the version in a SharedArrayBuffer.');
  p();
  p(markdownTable([{ title: 'workers' }, { title: 'lock', left: true }, ...SIDE_COLUMNS, { title: 'all ops/s (min–max)' }, { title: 'x parklot' }],
    grouped(sum.rw, (r) => [r.workers, r.name, ...rwCells(r),
      `${si(r.total.median)} (${si(r.total.min)}–${si(r.total.max)})`, `${fixed(r.vsBase)}x`])));
  p();
  p('x parklot: all operations per second over parklot\'s writer-preferring lock in the same layer (wasm or JS calls) at the same worker count.');
  p();
  const counted = (title, rows, what) => {
    p(title);
    p();
    p(markdownTable([{ title: 'workers' }, { title: 'peer', left: true }, { title: `${what} median` }, { title: 'min–max' }, { title: 'x parklot' },
      { title: 'slowest worker/s' }, { title: 'fastest worker/s' }, { title: 'starved' }],
    grouped(rows, (r) => [r.workers, r.name, si(r.total.median), `${si(r.total.min)}–${si(r.total.max)}`, `${fixed(r.vsBase)}x`,
      worst(r.readers.min), si(r.readers.max.median), r.starved.readers ? `**${r.starved.readers}/${r.rounds}**` : 'no'])));
    p();
  };
  counted('## 2. Semaphore: n/2 permits, every worker acquire + release', sum.semaphore, 'acq/s');
  p('Each holder counts itself in and out of a shared cell; more holders than permits fails the run, as do permits missing after it.');
  p();
  counted('## 3. Barrier: all workers pass together', sum.barrier, 'passes/s');
  p('A pass is every worker arriving once; all workers must pass equally often and exactly one leads each pass, checked every round. The per-worker columns are passes per second too.');
  return `${out.join('\n')}\n`;
}

/** The suite's report: {summaries, charts, markdown}. */
export function report(results) {
  const sum = summarize(results);
  return { summaries: sum, charts: charts(sum, results.params), markdown: markdown(results, sum) };
}

// ------------------------------------------------------- combined table

/** native-rwlock.json's rounds in the shape of this suite's. */
const nativeRounds = (native) => native.rounds.map((r) => ({ peer: r.lock, workers: r.threads, readers: r.readers, writers: r.writers }));

/**
 * bench/results/rwlock.md: seed 003's table (per-thread writer and reader
 * rates, both preferences) with parklot beside every peer, natively
 * (`native`: native-rwlock.json, or null), in wasm and from JS (`node`:
 * wasm-node-rwlock.json, or null), and what the numbers say about
 * starvation.
 */
export function combinedTable(native, node) {
  const layers = [];
  if (native) {
    const locks = [...new Set(native.rounds.map((r) => r.lock))];
    const counts = [...new Set(native.rounds.map((r) => r.threads))];
    layers.push({
      title: 'native threads', date: native.date, quick: native.quick,
      rows: sideSummaries(nativeRounds(native), locks, counts).map((r) => ({ ...r, name: r.peer })),
    });
  }
  if (node) {
    const rw = summarize(node).rw; // from the rounds: the stored summaries may predate this code
    for (const [layer, title] of [['wasm', 'wasm in Node workers (loop inside the module)'], ['js', 'JS in Node workers (one call per read or write)']]) {
      layers.push({ title, date: node.date, quick: node.quick, rows: rw.filter((r) => r.layer === layer) });
    }
  }
  const out = [];
  const p = (line = '') => out.push(line);
  p('# Experiment 6: reader-writer locks, half the threads reading and half writing (seed 003\'s protocol)');
  p();
  p(`Seed 003 ran 48 writers and 48 readers on 96 CPUs and reported the per-thread writer and reader locking rates in each preference; a 0 there is a starved side. Here: 2 to 16 threads on this 2-CPU machine (so 4 and up oversubscribe it), short critical sections, parklot beside every peer in each layer. Cells: operations per second per thread, the median over rounds of the slowest, mean and fastest thread of each side; "(worst round)" is the lowest slowest thread of any round. **slowest / mean**: the slowest thread of either side over the mean of all the lock's threads (100% is even; median over rounds, and the worst round). **starved**: in how many rounds a side had a thread under ${percent(STARVED_SHARE)} of that mean, next to nothing (seed 003's 0). Compare within a layer and a thread count: the layers ran at different times.`);
  p();
  p('Regenerate: `npm run bench` (all suites), or `node bench/run.mjs --render-only` from the JSON files: `native-rwlock.json` (`cargo run --release -p parklot-bench --bin rwlock`) and `wasm-node-rwlock.json` (`node bench/wasm/rwlock.mjs`).');
  const builds = node && otherBuilds(node.peers);
  if (builds) p(`\n${builds}`);
  for (const layer of layers) {
    p();
    p(`## ${layer.title}`);
    p();
    p(`Measured ${layer.date}${layer.quick ? ' (--quick: a smoke run, not a measurement)' : ''}, ${layer.rows[0]?.rounds ?? 0} rounds.`);
    p();
    p(markdownTable([{ title: 'threads' }, { title: 'lock', left: true }, ...SIDE_COLUMNS],
      grouped(layer.rows, (r) => [r.workers, r.name, ...rwCells(r)])));
  }
  p();
  p('## Who starves whom');
  p();
  const deadlocks = node?.deadlocks ?? [];
  if (deadlocks.length) {
    p(`**Deadlocks** in the Node run (wasm-node-rwlock.md lists them; those rounds are left out above): ${deadlocks.map((d) => `${d.name}, ${d.workers} workers, ${d.round < 0 ? 'warm-up' : `round ${d.round + 1}`}: worker(s) ${d.silent.join(', ')} never came back, the lock ${d.lock ?? 'unknown'}`).join('; ')}.`);
    p();
  }
  for (const layer of layers) {
    const counts = [...new Set(layer.rows.map((r) => r.workers))];
    const lines = counts.map((n) => {
      const at = layer.rows.filter((r) => r.workers === n);
      const starving = (r) => r.starved.readers + r.starved.writers + (r.deadlocked ?? 0) > 0;
      const isParklot = (r) => /parklot/i.test(r.name);
      const ours = at.filter(isParklot);
      const peers = at.filter((r) => !isParklot(r));
      const name = (r) => `${r.name} (${[
        ...(r.deadlocked ? [`DEADLOCKED in ${r.deadlocked} more round(s)`] : []),
        ...['writers', 'readers'].filter((k) => r.starved[k]).map((k) => `${k} starved in ${r.starved[k]}/${r.rounds} rounds`),
      ].join(', ')})`;
      const oursText = ours.some(starving) ? `parklot: ${ours.filter(starving).map(name).join('; ')}` : 'parklot starved nobody in either policy';
      const peersText = peers.some(starving) ? `peers: ${peers.filter(starving).map(name).join('; ')}` : 'no peer starved anyone';
      return `- ${n} threads: ${oursText}; ${peersText}.`;
    });
    p(`**${layer.title}**`);
    p();
    lines.forEach((l) => p(l));
    p();
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}
