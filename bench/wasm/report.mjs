// The wasm-node suite's report: summaries of the raw experiments, the
// markdown tables, the goals with their verdicts, and the ChartSpecs that
// bench/chart.mjs renders (the same schema as the native and Chromium suites).
import { markdownTable, median, ns, si, spread } from './table.mjs';
import { ppKey } from './ping-pong.mjs';
import { SLOW_LINE_NS, lineNote, lineRows, lineSplitText, twoWorkersByLine } from '../line-probe.mjs';

const BASELINE = 'parklot-lock'; // parklot::Lock, its loop inside wasm

// The peers of the main throughput chart; the rest (WordLock and the toys,
// with parklot::Lock for reference) get their own, as in seed 000.
const HEADLINE = ['parklot-lock', 'std-mutex', 'js-mutex', 'parklot-package', 'parklot-glue', 'v8-mutex', 'multithreading-mutex', 'emscripten-pthread'];

const fixed = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
const ratio = (x) => `${fixed(x)}x`;

// ------------------------------------------------------------ summaries

function throughputSummaries({ peers, rounds }, workerCounts) {
  const out = [];
  for (const n of workerCounts) {
    const at = (id) => rounds.filter((r) => r.peer === id && r.workers === n);
    const base = at(BASELINE).length ? median(at(BASELINE).map((r) => r.opsPerSec)) : NaN;
    for (const peer of peers) {
      const rs = at(peer.id);
      if (!rs.length) continue;
      const mins = rs.map((r) => Math.min(...r.perWorker.map((w) => w.opsPerSec)));
      const maxs = rs.map((r) => Math.max(...r.perWorker.map((w) => w.opsPerSec)));
      const fair = rs.map((_, i) => mins[i] / maxs[i]);
      const cpu = (key) => (rs.some((r) => r.cpus?.[key] == null) ? null : median(rs.map((r) => r.cpus[key])));
      const ops = spread(rs.map((r) => r.opsPerSec));
      out.push({
        peer: peer.id, name: peer.name, workers: n, rounds: rs.length, ...ops,
        vsParklot: ops.median / base,
        workerMin: median(mins), workerMax: median(maxs),
        fairness: spread(fair), cpusOurs: cpu('ours'), cpusOthers: cpu('others'),
      });
    }
  }
  return out;
}

function singleSummaries({ variants, runs }) {
  return variants.map((v) => ({ ...v, ...spread(runs.filter((r) => r.variant === v.id).map((r) => r.nsPer)) }));
}

// One pair runs under each placement of ping-pong.mjs (results from before
// placements existed have the scheduler's only).
const FREE = { id: 'free', name: "the scheduler's choice" };
function pingPongSummaries({ variants, pairs, placements = [FREE], rounds, pooled }) {
  return pairs.flatMap((n) => (n === 1 ? placements : [FREE]).flatMap((placement) => variants
    .filter((v) => pooled[ppKey(v.id, n, placement.id)])
    .map((v) => ({
      ...v, pairs: n, workers: 2 * n, placement: placement.id, placementName: placement.name,
      ...pooled[ppKey(v.id, n, placement.id)],
      roundMedians: spread(rounds.filter((r) => r.variant === v.id && r.pairs === n && (r.placement ?? 'free') === placement.id).map((r) => r.median)),
    }))));
}

export function summarize(experiments, settings) {
  return {
    throughput: throughputSummaries(experiments.throughput, settings.workerCounts),
    uncontended: singleSummaries(experiments.uncontended),
    waitNotify: singleSummaries(experiments.waitNotify),
    pingPong: pingPongSummaries(experiments.pingPong),
    pingPongSweep: experiments.pingPong.sweep ?? [],
    pingPongDefaultSpins: experiments.pingPong.defaultSpinLimit,
    mainWake: mainWakeSummary(experiments.mainWake),
    byLine: twoWorkersByLine(experiments.throughput.rounds, (r) => r.peer, (r) => r.opsPerSec),
  };
}

/**
 * Experiment 5 (results from before it existed have none: null): the pooled
 * samples' statistics, and for each of `median` and `p99`, from each start
 * point, the spread over rounds of each round's parklot / engine ratio.
 */
function mainWakeSummary(mainWake) {
  if (!mainWake || mainWake.skipped) return mainWake?.skipped ? { skipped: mainWake.skipped } : null;
  const ratios = {};
  for (const from of ['main', 'after']) {
    for (const q of ['median', 'p99']) {
      ratios[`${from}-${q}`] = spread(mainWake.rounds.map((r) => r.stats[`${from}-parklot`][q] / r.stats[`${from}-engine`][q]));
    }
  }
  return { pooled: mainWake.pooled, ratios, rounds: mainWake.rounds.length };
}

// ---------------------------------------------------------------- goals

/** The issue's wasm goals, each with its measured ratio(s) and whether it is met. */
export function goals(sum, settings) {
  const at = (peer, n) => sum.throughput.find((s) => s.peer === peer && s.workers === n);
  // A shortfall counts as noise when the rounds overlap: parklot's best
  // round reaches the target against the peer's worst.
  const verdictOf = (n, ours, theirs, target) => {
    const r = ours.median / theirs.median;
    return { n, r, verdict: r >= target ? 'met' : ours.max >= target * theirs.min ? 'noise' : 'missed' };
  };
  const judged = (goal, verdicts, label = () => '') => {
    const all = (v) => verdicts.every((x) => x.verdict === v || x.verdict === 'met');
    return {
      goal,
      measured: verdicts.length ? verdicts.map((x) => `${x.n}w ${fixed(x.r)}x${label(x)}${x.verdict === 'noise' ? ' (noise)' : ''}`).join(', ') : 'not run',
      met: verdicts.length ? (all('met') ? true : all('noise') ? 'within noise' : false) : null,
    };
  };
  const lockGoal = (peer, what, target, mine = BASELINE, myName = 'parklot::Lock') => {
    const rows = settings.workerCounts.map((n) => ({ n, ours: at(mine, n), theirs: at(peer, n) })).filter((x) => x.ours && x.theirs);
    return judged(`${myName} ≥ ${target}x ${what}`, rows.map(({ n, ours, theirs }) => verdictOf(n, ours, theirs, target)));
  };
  // Seed 000's open question (take the best of ThunderLock and CascadeLock
  // into WTF::Lock), answered by measurement: the Lock against the better
  // of the two at each contended count.
  const toyGoal = () => {
    const rows = settings.workerCounts.filter((n) => n >= 2).map((n) => {
      const best = ['thunderlock', 'cascadelock'].map((id) => at(id, n)).filter(Boolean).sort((a, b) => b.median - a.median)[0];
      return { n, ours: at(BASELINE, n), best };
    }).filter((x) => x.ours && x.best);
    const verdicts = rows.map(({ n, ours, best }) => ({ ...verdictOf(n, ours, best, 1), toy: best.name.replace(' (wasm)', '') }));
    return judged("parklot::Lock ≥ 1x the better of seed 000's ThunderLock and CascadeLock, contended", verdicts, (x) => ` ${x.toy}`);
  };
  const single = (id) => sum.waitNotify.find((s) => s.id === id)?.median;
  const notifyRatio = single('notify-wasm-engine') / single('notify-wasm-parklot');
  const notifyJs = single('notify-js-engine') / single('notify-js-parklot');
  const ppOf = (id, pairs, placement = 'free') => sum.pingPong.find((s) => s.id === id && s.pairs === pairs && s.placement === placement);
  const pp = (id, pairs = 1, placement = 'free') => ppOf(id, pairs, placement)?.median;
  const most = Math.max(...sum.pingPong.map((v) => v.pairs));
  const wakeOver = pp('wasm-engine', most) / pp('wasm-parklot', most);
  const wakeOverJs = pp('js-engine', most) / pp('js-parklot', most);
  const ppRounds = (id, pairs = most, placement = 'free') => ppOf(id, pairs, placement).roundMedians;
  const cpu = (id, pairs = 1, placement = 'free') => fixed(ppOf(id, pairs, placement)?.cpuUsPerTrip, 1);
  // One pair's goals: each worker on a CPU of its own (the issue's "each
  // worker has a core", pinned so that the scheduler cannot put the pair on
  // one CPU), and both on one CPU; the scheduler's own choice beside them.
  const pinned = ppOf('wasm-parklot', 1, 'apart') !== undefined;
  const pairGoal = (placement, bar) => {
    const r = (where, pl = placement) => pp(`${where}-engine`, 1, pl) / pp(`${where}-parklot`, 1, pl);
    const free = placement === 'free' ? '' : `; left to the scheduler: in wasm ${fixed(r('wasm', 'free'))}x (from JS ${fixed(r('js', 'free'))}x)`;
    const met = r('wasm') >= bar && r('js') >= bar ? true
      // noise (the bar of 1 only): parklot's best round no slower than the engine's worst, in both
      : bar === 1 && ['wasm', 'js'].every((w) => ppRounds(`${w}-parklot`, 1, placement).min <= ppRounds(`${w}-engine`, 1, placement).max) ? 'within noise' : false;
    return {
      measured: `in wasm engine/parklot ${fixed(r('wasm'))}x (from JS ${fixed(r('js'))}x); µs median: parklot ${us('wasm-parklot', 1, placement)}, engine ${us('wasm-engine', 1, placement)}; CPU µs per round trip: parklot ${cpu('wasm-parklot', 1, placement)}, engine ${cpu('wasm-engine', 1, placement)}${free}`,
      met,
    };
  };
  const us = (id, pairs, placement) => fixed(pp(id, pairs, placement) / 1e3);
  const pairCounts = [...new Set(sum.pingPong.map((v) => v.pairs))];
  // The condition handoff against multithreading's Condvar, the engine's bare wait/notify beside it.
  const conditionGoal = () => {
    const rows = pairCounts.filter((n) => ppOf('condition-multithreading', n) && ppOf('condition-parklot', n));
    if (!rows.length) return { goal: "wake ping-pong under a lock + condition: parklot's Condition (npm package) no slower than `multithreading`'s Condvar", measured: 'not run', met: null };
    const r = (n) => pp('condition-multithreading', n) / pp('condition-parklot', n);
    return {
      goal: "wake ping-pong under a lock + condition: parklot's Condition (npm package) no slower than `multithreading`'s Condvar",
      measured: rows.map((n) => `${2 * n}w multithreading/parklot ${fixed(r(n))}x (µs median: parklot ${us('condition-parklot', n)}, multithreading ${us('condition-multithreading', n)}, engine's bare Atomics.wait/notify ${us('js-engine', n)}; CPU µs per round trip ${cpu('condition-parklot', n)}, ${cpu('condition-multithreading', n)}, ${cpu('js-engine', n)})`).join('; '),
      met: rows.every((n) => r(n) >= 1) ? true : rows.every((n) => ppOf('condition-parklot', n).roundMedians.min <= ppOf('condition-multithreading', n).roundMedians.max) ? 'within noise' : false,
    };
  };
  // The 2-worker rows by the host's line state (line-probe.mjs); results from before it have none.
  const withLineSplit = (g, theirs) => ({ ...g, measured: g.measured + (sum.byLine ? lineSplitText(sum.byLine, BASELINE, theirs) : '') });
  return [
    withLineSplit(lockGoal('std-mutex', 'Rust std::sync::Mutex in the same module', 1), ['std-mutex']),
    withLineSplit(toyGoal(), ['thunderlock', 'cascadelock']),
    lockGoal('js-mutex', 'the pure-JS Atomics mutex', 1.5),
    lockGoal('v8-mutex', 'V8 Atomics.Mutex', 2),
    lockGoal('emscripten-pthread', "Emscripten's pthread_mutex_t", 1),
    lockGoal('multithreading-mutex', "`multithreading`'s Mutex (npm)", 5),
    // The issue sets 5x for the Lock in wasm only; from a JS loop, the bar of the pure-JS mutex row below.
    lockGoal('multithreading-mutex', "`multithreading`'s Mutex (npm), both called from a JS loop", 1.2, 'parklot-package', 'parklot Lock via the npm package'),
    lockGoal('js-mutex', 'the pure-JS Atomics mutex, both called from a JS loop', 1.2, 'parklot-package', 'parklot Lock via the npm package'),
    {
      goal: 'parklot Lock via the npm package: fairness ≥ the pure-JS Atomics mutex',
      measured: settings.workerCounts.filter((n) => n > 1).map((n) => {
        const [ours, theirs] = [at('parklot-package', n)?.fairness, at('js-mutex', n)?.fairness];
        return `${n}w ${fixed(ours?.median)} vs ${fixed(theirs?.median)}${ours?.median < theirs?.median && ours.max >= theirs.min ? ' (noise)' : ''}`;
      }).join(', '),
      // noise, as for the rates: where it falls short, parklot's fairest round reaches the mutex's least fair
      met: ((rows) => rows.every(([o, t]) => o?.median >= t?.median) ? true : rows.every(([o, t]) => o?.median >= t?.median || o?.max >= t?.min) ? 'within noise' : false)(
        settings.workerCounts.filter((n) => n > 1).map((n) => [at('parklot-package', n)?.fairness, at('js-mutex', n)?.fairness]),
      ),
    },
    {
      goal: 'notify with no waiter ≥ 10x faster than the engine',
      measured: `in wasm ${fixed(notifyRatio)}x (from JS ${fixed(notifyJs)}x)`,
      met: notifyRatio >= 10,
    },
    pinned
      ? { goal: 'wake ping-pong, 2 workers each on a CPU of its own (pinned), ≥ 5x faster than the engine', ...pairGoal('apart', 5) }
      : { goal: 'wake ping-pong, 2 workers, ≥ 5x faster than the engine (not pinned: the scheduler may put both on one CPU)', ...pairGoal('free', 5) },
    ...(pinned ? [{ goal: 'wake ping-pong, 2 workers pinned to one CPU, no slower than the engine', ...pairGoal('shared', 1) }] : []),
    {
      goal: `wake ping-pong, ${2 * most} workers (oversubscribed), no slower than the engine`,
      measured: `in wasm engine/parklot ${fixed(wakeOver)}x (from JS ${fixed(wakeOverJs)}x); CPU µs per round trip: parklot ${cpu('wasm-parklot', most)}, engine ${cpu('wasm-engine', most)}`,
      // noise: parklot's best round is no slower than the engine's worst
      met: wakeOver >= 1 && wakeOverJs >= 1 ? true : ppRounds('wasm-parklot').min <= ppRounds('wasm-engine').max ? 'within noise' : false,
    },
    conditionGoal(),
    ...mainWakeGoals(sum.mainWake),
  ];
}

/** The page-wake goal, on Node's main thread: parklot / engine ≤ 1 at the median and p99, from each start point. */
function mainWakeGoals(w) {
  const goal = (from) => (from === 'main'
    ? "Node's main thread woken through waitAsync ≤ 1.0x the engine, timed from before the notify call"
    : 'the same, timed from the notify call\'s return (the woken side alone)');
  if (!w || w.skipped) return w?.skipped ? ['main', 'after'].map((from) => ({ goal: goal(from), measured: `not run: ${w.skipped}`, met: null })) : [];
  return ['main', 'after'].map((from) => {
    const r = (q) => w.ratios[`${from}-${q}`];
    return {
      goal: goal(from),
      measured: ['median', 'p99'].map((q) => `${q} ${fixed(r(q).median)}x (${fixed(r(q).min)}–${fixed(r(q).max)}x)`).join(', ') +
        `; all rounds' samples, µs median: parklot ${fixed(w.pooled[`${from}-parklot`].median, 1)}, engine ${fixed(w.pooled[`${from}-engine`].median, 1)}`,
      // noise: in some round parklot was at or under the engine at both
      met: r('median').median <= 1 && r('p99').median <= 1 ? true : r('median').min <= 1 && r('p99').min <= 1 ? 'within noise' : false,
    };
  });
}

// --------------------------------------------------------------- charts

/** Where a ping-pong's loop runs, on the chart's x axis. */
const WHERE = { wasm: 'inside wasm', js: 'from JS', condition: 'lock + condition, from JS' };

/** The name on a chart: without the crate path and the "(wasm)" tag. */
const label = (name) => name.replace(/^parklot::/, 'parklot ').replace(/^std::sync::/, 'std ').replace(' (wasm)', '');

function charts(sum, settings, peers) {
  const lineOf = (ids) => peers.filter((p) => ids.includes(p.id)).map((p) => ({
    name: label(p.name),
    points: sum.throughput.filter((s) => s.peer === p.id).map((s) => ({ x: s.workers, y: s.median, min: s.min, max: s.max })),
  })).filter((s) => s.points.length);
  const workersAxis = { label: 'workers (Node worker_threads)', log: true };
  const acqAxis = { label: 'acquisitions per second, all workers', log: true };
  const whiskers = `median, whiskers min–max of ${settings.rounds} rounds`;
  const fairCounts = settings.workerCounts.filter((n) => n >= 4);
  const waitCats = [
    ['notify, no waiter, in wasm', 'notify', 'wasm'], ['wait, not-equal, in wasm', 'wait', 'wasm'],
    ['notify, no waiter, from JS', 'notify', 'js'], ['wait, not-equal, from JS', 'wait', 'js'],
  ];
  const us = (x) => x / 1e3;
  return [
    {
      id: 'throughput',
      title: `Lock throughput, seed 000's critical section (${whiskers})`,
      kind: 'line', x: workersAxis, y: acqAxis,
      series: lineOf(HEADLINE),
    },
    {
      id: 'throughput-toys',
      title: `Toy locks in wasm against parklot::Lock (${whiskers})`,
      kind: 'line', x: workersAxis, y: acqAxis,
      series: lineOf(peers.map((p) => p.id).filter((id) => id === BASELINE || !HEADLINE.includes(id))),
    },
    {
      id: 'fairness',
      title: `Fairness: slowest worker / fastest worker (1 = fair; median, whiskers min–max of ${settings.rounds} rounds)`,
      kind: 'bar',
      x: { label: 'lock', log: false },
      y: { label: 'slowest / fastest worker rate', log: false },
      series: fairCounts.map((n) => ({
        name: `${n} workers`,
        points: sum.throughput.filter((s) => s.workers === n).map((s) => ({ x: label(s.name), y: s.fairness.median, min: s.fairness.min, max: s.fairness.max })),
      })),
    },
    {
      id: 'wait-notify',
      title: `Wait and notify without a waiter (median, whiskers min–max of ${settings.singleRuns} runs)`,
      kind: 'bar',
      x: { label: 'operation', log: false },
      y: { label: 'ns per call', log: true },
      series: ['parklot', 'engine'].map((who) => ({
        name: who === 'engine' ? 'engine (V8 Atomics / memory.atomic)' : 'parklot',
        points: waitCats.map(([cat, op, where]) => {
          const s = sum.waitNotify.find((v) => v.op === op && v.where === where && v.who === who);
          return { x: cat, y: s.median, min: s.min, max: s.max };
        }),
      })),
    },
    {
      id: 'ping-pong',
      title: 'Wake ping-pong: one round trip = two wakeups (median, whiskers p10–p90)',
      kind: 'bar',
      x: { label: 'where the loop runs, workers', log: false },
      y: { label: 'µs per round trip', log: true },
      series: ['parklot', 'engine', 'multithreading', 'spin (floor)'].map((who) => ({
        name: who === 'multithreading' ? 'multithreading (npm)' : who,
        points: sum.pingPong.filter((v) => v.who === who).map((v) => ({
          x: `${WHERE[v.where]}, ${v.workers}${v.pairs === 1 ? ` ${v.placement}` : ''}`, y: us(v.median), min: us(v.p10), max: us(v.p90),
        })),
      })).filter((series) => series.points.length),
    },
    ...(sum.mainWake?.pooled ? [{
      id: 'main-wake',
      title: "Node's main thread woken through waitAsync by a worker's notify (median, whiskers p10–p90)",
      kind: 'bar',
      x: { label: 'timed from', log: false },
      y: { label: 'µs per wake-up', log: false },
      series: ['parklot', 'engine'].map((who) => ({
        name: who === 'engine' ? 'engine (Atomics)' : 'parklot (rt.atomics)',
        points: [['main', 'before the notify call'], ['after', "the notify call's return"]].map(([from, x]) => {
          const v = sum.mainWake.pooled[`${from}-${who}`];
          return { x, y: v.median, min: v.p10, max: v.p90 };
        }),
      })),
    }] : []),
    {
      id: 'uncontended',
      title: `Uncontended lock + unlock on one thread (median, whiskers min–max of ${settings.singleRuns} runs)`,
      kind: 'bar',
      x: { label: 'operation', log: false },
      y: { label: 'ns per lock + unlock', log: true }, // multithreading's Mutex is ~100x the floor
      series: [{
        name: 'ns per pair',
        points: sum.uncontended.map((v) => ({ x: v.short, y: v.median, min: v.min, max: v.max })),
      }],
    },
  ];
}

// ------------------------------------------------------------- markdown

function markdown({ date, quick, machine, params: s, skipped }, sum, goalRows) {
  const out = [];
  const p = (line = '') => out.push(line);
  p(`# wasm in Node: parklot against the engine's and other wasm locks`);
  p();
  p(`${date}${quick ? ' (--quick: a smoke run, not a measurement)' : ''}. Machine: ${machine.cores} CPUs (${machine.cpu}), node ${machine.node} (V8 ${machine.v8}), ${machine.emcc ?? 'no emcc'}; load average at start ${machine.loadavg.map((x) => x.toFixed(2)).join(' ')}.`);
  p();
  p('Rerun: `bash scripts/build-wasm.sh && node bench/wasm/run.mjs [--quick] [--out DIR]`.');
  for (const sk of skipped) p(`\n**Skipped: ${sk.peer}**: ${sk.reason}.`);
  p();
  p('## Goals');
  p();
  p(markdownTable([{ title: 'goal', left: true }, { title: 'measured', left: true }, { title: 'met', left: true }],
    goalRows.map((g) => [g.goal, g.measured, g.met === null ? 'not run' : g.met === true ? 'yes' : g.met || '**no**'])));
  p();
  p('## 1. Lock throughput');
  p();
  p(`Workers 1–${Math.max(...s.workerCounts)} contend for one lock, ${s.roundMs} ms per round, ${s.rounds} rounds interleaved across peers; critical section: ${s.work} add-and-multiply on a double, then ++counter; the counter is checked equal to the acquisitions every round.`);
  p();
  const rows = [];
  sum.throughput.forEach((t, i) => {
    if (i > 0 && sum.throughput[i - 1].workers !== t.workers) rows.push(null);
    rows.push([t.workers, t.name, si(t.median), `${si(t.min)}–${si(t.max)}`, ratio(t.vsParklot),
      si(t.workerMin), si(t.workerMax), fixed(t.fairness.median), fixed(t.fairness.min), fixed(t.cpusOurs), fixed(t.cpusOthers)]);
  });
  p(markdownTable([
    { title: 'workers' }, { title: 'lock', left: true }, { title: 'acq/s median' }, { title: 'min–max' },
    { title: 'vs parklot' }, { title: 'worker min/s' }, { title: 'worker max/s' }, { title: 'fair' }, { title: 'worst' },
    { title: 'CPUs ours' }, { title: 'CPUs others' },
  ], rows));
  p();
  if (sum.byLine && Object.keys(sum.byLine.byLock).length) {
    p('### Two workers by the line between the CPUs');
    p();
    const nameOf = (id) => sum.throughput.find((t) => t.peer === id)?.name ?? id;
    p(markdownTable([{ title: 'lock', left: true }, { title: `fast line (≤ ${SLOW_LINE_NS} ns): median acq/s (rounds)` }, { title: 'slow line: median acq/s (rounds)' }],
      lineRows(sum.byLine, nameOf, si)));
    p();
    p(`${lineNote(sum.byLine)} Emscripten's rows take the probe before its batch of every worker count.`);
    p();
  }
  const floor = (id) => sum.uncontended.find((v) => v.id === id).median;
  const spinOn = (placement) => sum.pingPong.find((v) => v.id === 'wasm-spin' && v.pairs === 1 && v.placement === placement);
  const spin = spinOn('apart') ?? spinOn('free');
  p(`Floor, measured in this run: one uncontended compare-and-swap + store costs ${ns(floor('floor-wasm'))} ns inside wasm (${si(1e9 / floor('floor-wasm'))}/s) and ${ns(floor('floor-js'))} ns from JS; a word bounced between two spinning workers takes ${ns(spin.median)} ns per round trip (${si(1e9 / spin.median)}/s), the fastest any contended handoff can go.`);
  p();
  p('## 2. Uncontended lock + unlock, one thread');
  p();
  p(markdownTable([{ title: 'operation', left: true }, { title: 'ns median' }, { title: 'min–max' }, { title: 'x floor' }],
    sum.uncontended.map((v) => [v.name, ns(v.median), `${ns(v.min)}–${ns(v.max)}`, ratio(v.median / floor(v.floor))])));
  p();
  p(`## 3. Wait and notify without a waiter, one thread`);
  p();
  p(`${s.singleRuns} interleaved runs of ${si(s.waitNotifyCalls)} calls each. "In wasm" loops inside the module (bench_notify_loop, bench_wait_not_equal_loop): the fair comparison. "From JS" is one call per operation: the glue's call into wasm against an Atomics builtin.`);
  p();
  p(markdownTable([{ title: 'operation', left: true }, { title: 'ns median' }, { title: 'min–max' }],
    sum.waitNotify.map((v) => [v.name, ns(v.median), `${ns(v.min)}–${ns(v.max)}`])));
  p();
  p('## 4. Wake ping-pong');
  p();
  p(`Two workers bounce a word of wasm memory, each sleeping until the other changes it: one round trip is two wakeups. One pair (2 workers) runs under each placement in the CPUs column: pinned each to a CPU of its own (each has a core), pinned both to one CPU, and left to the scheduler, which often puts two threads that keep waking each other on one CPU and leaves them there. With 8 workers (four pairs at once, left to the scheduler) the machine is oversubscribed. ${s.rounds} rounds of ${si(s.pingPongTrips)} round trips per pair, interleaved; quantiles over all of them, and the spread of the rounds' medians. CPU: what the process used per round trip (median of the rounds), so that a spin that buys latency with a core shows (for multithreading, its own process's). The "lock + condition" rows do the handoff as a user writes it: under a lock, each side waits on one condition variable until the flag flips; parklot's Lock + Condition through the npm package against the \`multithreading\` package's Mutex + Condvar (blockingLock, blockingWait, notifyOne).`);
  p();
  p(markdownTable([{ title: 'workers' }, { title: 'CPUs', left: true }, { title: 'wait / wake', left: true }, { title: 'µs median' }, { title: 'p10' }, { title: 'p90' }, { title: 'round medians' }, { title: 'CPU µs / trip' }],
    sum.pingPong.map((v) => [v.workers, v.placementName, v.name, fixed(v.median / 1e3), fixed(v.p10 / 1e3), fixed(v.p90 / 1e3), `${fixed(v.roundMedians.min / 1e3)}–${fixed(v.roundMedians.max / 1e3)}`, fixed(v.cpuUsPerTrip, 1)])));
  p();
  if (sum.pingPongSweep.length) {
    p(`### Spin before sleep: the sweep`);
    p();
    p(`parklot in wasm, 2 workers, the spin-before-sleep limit set process-wide (set_park_spin_limit); the default is ${si(sum.pingPongDefaultSpins)} iterations. 0 sleeps at once.`);
    p();
    p(markdownTable([{ title: 'spin limit' }, { title: 'µs median' }, { title: 'p10' }, { title: 'p90' }, { title: 'CPU µs / trip' }],
      sum.pingPongSweep.map((v) => [v.spins, fixed(v.median / 1e3), fixed(v.p10 / 1e3), fixed(v.p90 / 1e3), fixed(v.cpuUsPerTrip, 1)])));
    p();
  }
  if (sum.mainWake?.pooled) {
    p("## 5. Node's main thread woken through waitAsync");
    p();
    p(`The main thread waits in two loops at once, one with parklot's \`rt.atomics.waitAsync\` (the npm package) and one with the engine's \`Atomics.waitAsync\`, on words of the package's memory. One worker, every ${s.wakeTickMs / 2} ms, alternately stamps the time, bumps one of the words, notifies it (\`rt.atomics.notify\` or \`Atomics.notify\`) and stamps the call's return; ${s.rounds} rounds of ${s.wakeRoundMs} ms after one dropped. **main**: timed from before the notify call (includes the notifier's call and the event loop's turn); **after**: from the call's return, the woken side alone. The goals take each round's parklot / engine ratio; this table pools all rounds' samples.`);
    p();
    p(markdownTable([{ title: 'measurement', left: true }, { title: 'samples' }, { title: 'mean' }, { title: 'p10' }, { title: 'median' }, { title: 'p90' }, { title: 'p99' }],
      Object.entries(sum.mainWake.pooled).map(([k, v]) => [k, v.n, fixed(v.mean, 1), fixed(v.p10, 1), fixed(v.median, 1), fixed(v.p90, 1), fixed(v.p99, 1)])));
    p();
  } else if (sum.mainWake?.skipped) {
    p(`## 5. Node's main thread woken through waitAsync: not run (${sum.mainWake.skipped})`);
    p();
  }
  p('### Legend');
  p();
  p('- **(wasm)**: the loop runs inside wasm (peer_count_loop); **JS Atomics mutex**: Drepper\'s "Futexes Are Tricky" mutex on an Int32Array, loop and critical section in JS; **via glue**: parklot\'s Lock from a JS loop, one call into wasm per lock and per unlock; **V8 Atomics.Mutex**: `node --harmony-struct`, in its own process, critical section in JS; **multithreading Mutex (npm)**: the `multithreading` package\'s Mutex, `blockingLock()` and the guard\'s `dispose()` per acquisition, in its own process (on Node 20 the package needs a `navigator` global, and it installs globals that parklot\'s package must not see), critical section in JS; **Emscripten pthread_mutex_t**: a C program built with emcc, in its own process, critical section in C.');
  p('- **acq/s**: acquisitions per second, all workers together (total / (last worker end − first worker start)). **vs parklot**: over parklot::Lock (wasm) at the same worker count; >1 is faster.');
  p('- **worker min/max**: the slowest and fastest worker\'s acquisitions per second (median over rounds); **fair**: slowest / fastest (1 fair, 0 starved), **worst**: its lowest round.');
  p(`- **CPUs ours / others**: CPU-seconds per wall second during a round: the benchmark process's (the child's for Atomics.Mutex and for multithreading's Mutex; '-' for Emscripten, which runs whole in a child), and all other processes' (Linux /proc/stat). With ${machine.cores} CPUs, more workers than CPUs oversubscribe the machine.`);
  p('- Compare ratios within one run: the machine is shared and noisy, absolute numbers move between runs.');
  return `${out.join('\n')}\n`;
}

/** The suite's report: {summaries, goals, charts, markdown}. */
export function report(results) {
  const sum = summarize(results.experiments, results.params);
  const goalRows = goals(sum, results.params);
  return {
    summaries: sum,
    goals: goalRows,
    charts: charts(sum, results.params, results.experiments.throughput.peers),
    markdown: markdown(results, sum, goalRows),
  };
}
