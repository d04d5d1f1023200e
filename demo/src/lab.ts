/** The wait/notify lab page: runs the workers, keeps the samples, draws the histograms. */
import { Runtime } from '../../js/dist/index.js';
import { Chart, byId, colourFor, duration, isolated, quantile, showError } from './common.js';
import { Samples, binRange, edgeOf, maxCount, roundUp } from './histogram.js';
import { LAB, MAX_PAIRS, type Api, type LabInit, type LabReply, type Measurement, type Side } from './lab-protocol.js';

const TICK_MS = 10;
const REDRAW_MS = 250;

/**
 * What a run measures: the ping-pong and the page's wake-ups at once (the
 * page's default), either alone (the benchmark runs them one after the
 * other, so that each ping-pong worker has a core to itself), or the
 * ping-pong under a lock and a condition.
 */
type LabParts = 'all' | 'ping-pong' | 'wake-ups' | 'condition';
const PARTS: LabParts[] = ['all', 'ping-pong', 'wake-ups', 'condition'];

const LABELS: Record<Measurement, string> = {
  'ping-parklot': 'round trip, parklot atomics.wait/notify',
  'ping-native': 'round trip, engine Atomics.wait/notify',
  'main-parklot': 'main thread wake-up, parklot waitAsync',
  'main-native': 'main thread wake-up, engine Atomics.waitAsync',
  'after-parklot': 'main thread wake-up after the notify call returned, parklot',
  'after-native': 'main thread wake-up after the notify call returned, engine',
  'cond-parklot': 'round trip under a lock, parklot Lock + Condition',
  'cond-multithreading': 'round trip under a lock, multithreading Mutex + Condvar',
};

declare global {
  interface Window {
    /** The lab, for the browser benchmark (bench/browser) and tests. */
    parklotLab?: { run(seconds: number, parts?: LabParts, only?: Side, pairs?: number): Promise<Record<Measurement, number[]>> };
  }
}

function histogramChart(canvas: HTMLCanvasElement, title: string, series: { label: string; colour: string }[]): Chart<'bar'> {
  return new Chart(canvas, {
    type: 'bar',
    data: { labels: [], datasets: series.map((s) => ({ label: s.label, data: [], backgroundColor: s.colour, barPercentage: 1, categoryPercentage: 0.9 })) },
    options: {
      scales: {
        // Every bin labelled: rotated, never skipped.
        x: { title: { display: true, text: 'latency (bin starts at)' }, ticks: { autoSkip: false, maxRotation: 90, font: { size: 10 } } },
        y: { beginAtZero: true, title: { display: true, text: 'samples' } },
      },
      plugins: { title: { display: true, text: title }, legend: { display: series.length > 1, position: 'bottom' } },
    },
  });
}

/** Draws `groups` of samples on `chart` over a common bin range (`range`: the bins to show). */
function drawHistogram(chart: Chart<'bar'>, groups: Samples[], range: [number, number], yMax?: number): void {
  const [lo, hi] = range;
  const bins = Array.from({ length: Math.max(0, hi - lo + 1) }, (_, i) => lo + i);
  chart.data.labels = bins.map((b) => (b === 0 ? `≤ ${duration(edgeOf(1))}` : duration(edgeOf(b))));
  groups.forEach((g, i) => {
    chart.data.datasets[i]!.data = bins.map((b) => g.bins.get(b) ?? 0);
  });
  // What each series shows, in total, for tests and for anyone inspecting the page.
  chart.canvas.dataset['sums'] = chart.data.datasets.map((d) => (d.data as number[]).reduce((a, b) => a + b, 0)).join(',');
  if (yMax !== undefined) chart.options.scales!['y']!.max = yMax;
  chart.update();
  // The axes as drawn, for tests: the y maximum and how many bins have a label.
  chart.canvas.dataset['yMax'] = String(chart.scales['y']!.max);
  chart.canvas.dataset['xLabels'] = `${chart.scales['x']!.ticks.filter((t) => t.label !== '' && t.label !== undefined).length}/${bins.length}`;
}

function spawn(role: LabInit['role'], init: Omit<LabInit, 'type' | 'role'>): { worker: Worker; ready: Promise<void>; done: Promise<void> } {
  const worker = new Worker(new URL('./lab-worker.ts', import.meta.url), { type: 'module', name: `lab-${role}` });
  let ready!: () => void;
  let done!: () => void;
  let fail!: (e: Error) => void;
  const readyP = new Promise<void>((r, f) => {
    ready = r;
    fail = f;
  });
  const doneP = new Promise<void>((r, f) => {
    done = r;
    const prev = fail;
    fail = (e) => {
      prev(e);
      f(e);
    };
  });
  doneP.catch(() => {});
  worker.onmessage = (e: MessageEvent<LabReply>) => {
    const m = e.data;
    if (m.type === 'ready') ready();
    else if (m.type === 'done') done();
    else if (m.type === 'error') fail(new Error(`lab ${role} worker: ${m.message}`));
    else onSamples(m.measurement, m.pair, m.ms);
  };
  worker.onerror = (e) => fail(new Error(`lab ${role} worker: ${e.message}`));
  worker.postMessage({ type: 'init', role, ...init } satisfies LabInit);
  return { worker, ready: readyP, done: doneP };
}

let onSamples: (measurement: Measurement, pair: number, ms: number[]) => void = () => {};

async function main(): Promise<void> {
  const rt = await Runtime.create({ mayBlock: false });
  const samples: Record<Measurement, Samples> = {
    'ping-parklot': new Samples(),
    'ping-native': new Samples(),
    'main-parklot': new Samples(),
    'main-native': new Samples(),
    'after-parklot': new Samples(),
    'after-native': new Samples(),
    'cond-parklot': new Samples(),
    'cond-multithreading': new Samples(),
  };
  const parklotColour = colourFor('parklot');
  const nativeColour = colourFor('engine');
  const charts = {
    parklot: histogramChart(byId('hist-parklot'), 'parklot: rt.atomics.wait / notify', [{ label: 'round trips', colour: parklotColour }]),
    native: histogramChart(byId('hist-native'), 'engine: Atomics.wait / notify', [{ label: 'round trips', colour: nativeColour }]),
    main: histogramChart(byId('hist-main'), 'main thread: waitAsync woken by a worker', [
      { label: 'parklot rt.atomics.waitAsync', colour: parklotColour },
      { label: 'engine Atomics.waitAsync', colour: nativeColour },
    ]),
    cond: histogramChart(byId('hist-cond'), 'round trip under a lock: wait on a condition, notify one', [
      { label: 'parklot Lock + Condition', colour: parklotColour },
      { label: 'multithreading Mutex + Condvar', colour: colourFor('multithreading') },
    ]),
  };
  const section = byId('lab-result');
  const startButton = byId<HTMLButtonElement>('start');
  const stopButton = byId<HTMLButtonElement>('stop');
  const secondsInput = byId<HTMLInputElement>('seconds');
  const partsSelect = byId<HTMLSelectElement>('parts');
  const pairsInput = byId<HTMLInputElement>('pairs');

  function redraw(): void {
    const ping = [samples['ping-parklot'], samples['ping-native']];
    const range = binRange(ping);
    const yMax = roundUp(maxCount(ping));
    drawHistogram(charts.parklot, [ping[0]!], range, yMax);
    drawHistogram(charts.native, [ping[1]!], range, yMax);
    const mains = [samples['main-parklot'], samples['main-native']];
    drawHistogram(charts.main, mains, binRange(mains));
    const conds = [samples['cond-parklot'], samples['cond-multithreading']];
    drawHistogram(charts.cond, conds, binRange(conds));
    const body = byId('lab-table').querySelector('tbody')!;
    body.replaceChildren(
      ...(Object.keys(samples) as Measurement[]).map((k) => {
        const s = samples[k].sorted();
        const row = document.createElement('tr');
        const mean = s.length ? duration(s.reduce((a, b) => a + b, 0) / s.length) : '–';
        for (const text of [LABELS[k], String(s.length), mean, ...[0.1, 0.5, 0.9, 0.99].map((q) => (s.length ? duration(quantile(s, q)) : '–'))]) {
          const td = document.createElement('td');
          td.textContent = text;
          row.append(td);
        }
        return row;
      }),
    );
    for (const k of Object.keys(samples) as Measurement[]) section.dataset[camel(k)] = String(samples[k].all.length);
  }

  /**
   * The main thread's side: wait for ticks with waitAsync, one loop per API.
   * Each wake-up is timed from the tick's stamp (before the notify call) and
   * from the call's return: the difference is the notifier's own time. A
   * wake-up that comes before the notifier stamped the return counts as 0.
   */
  async function waitForTicks(api: Api, base: number, running: () => boolean): Promise<void> {
    const word = rt.int32(base + (api === 'parklot' ? LAB.TICK_PARKLOT : LAB.TICK_NATIVE));
    const stamp = rt.float64(base + (api === 'parklot' ? LAB.STAMP_PARKLOT : LAB.STAMP_NATIVE));
    const returned = rt.float64(base + (api === 'parklot' ? LAB.RETURN_PARKLOT : LAB.RETURN_NATIVE));
    const into = samples[api === 'parklot' ? 'main-parklot' : 'main-native'];
    const intoAfter = samples[api === 'parklot' ? 'after-parklot' : 'after-native'];
    while (running()) {
      const seen = Atomics.load(word, 0);
      // A timeout lets the loop see the end of the run even if no tick comes.
      const r = api === 'parklot' ? rt.atomics.waitAsync(word, 0, seen, 4 * TICK_MS) : Atomics.waitAsync(word, 0, seen, 4 * TICK_MS);
      if (!r.async) continue; // a tick came in between: nothing to time
      if ((await r.value) !== 'ok') continue;
      const now = performance.timeOrigin + performance.now();
      // Each thread's clock is coarsened on its own (5 µs steps, with jitter):
      // a quick wake-up can read below zero, and counts as 0.
      into.add(Math.max(0, now - stamp[0]!));
      intoAfter.add(returned[0]! >= stamp[0]! ? Math.max(0, now - returned[0]!) : 0);
    }
  }

  let stopRequested: (() => void) | undefined;

  /**
   * Runs `parts` for `seconds`; `only` plays the ping-pong through that side
   * alone instead of in alternating blocks (the benchmark's CPU runs);
   * `pairs` ping-pong pairs play at once, each on words of its own.
   */
  async function run(seconds: number, parts: LabParts = 'all', only?: Side, pairs = 1): Promise<Record<Measurement, number[]>> {
    if (!PARTS.includes(parts)) throw new RangeError(`lab: parts must be one of ${PARTS.join(', ')}`);
    const sides: Record<LabParts, Side[]> = { all: [], 'wake-ups': [], 'ping-pong': ['parklot', 'native'], condition: ['parklot', 'multithreading'] };
    if (only !== undefined && !sides[parts].includes(only)) {
      throw new RangeError(`lab: only must be one of ${sides[parts].join(', ') || 'nothing'} for ${parts} (or left out)`);
    }
    const hasPingPong = parts !== 'wake-ups';
    if (!Number.isInteger(pairs) || pairs < 1 || pairs > (hasPingPong ? MAX_PAIRS : 1)) {
      throw new RangeError(hasPingPong ? `lab: pairs must be a whole number from 1 to ${MAX_PAIRS}` : 'lab: wake-ups play no ping-pong: leave pairs out (or 1)');
    }
    for (const s of Object.values(samples)) {
      s.all.length = 0;
      s.bins.clear();
    }
    // A block per pair: each pair bounces its own words (the ticker uses the first).
    const blocks = Array.from({ length: pairs }, () => rt.alloc(LAB.BYTES, 64));
    // The lock + condition ping-pong's Lock and Condition, declared in each block (the workers' rt.lockAt() accepts them).
    for (const block of blocks) {
      rt.place('lock', block + LAB.COND_LOCK);
      rt.place('condition', block + LAB.COND_CONDITION);
    }
    const base = blocks[0]!;
    const control = new SharedArrayBuffer(4);
    const initOf = (pair: number) => ({
      handle: rt.handle(),
      base: blocks[pair]!,
      pair,
      control,
      tickMs: TICK_MS,
      mt: { lock: new SharedArrayBuffer(4), condvar: new SharedArrayBuffer(4) },
      only,
    });
    const reporting = new Set<number>();
    onSamples = (measurement, pair, ms) => {
      reporting.add(pair);
      const into = samples[measurement];
      for (const t of ms) into.add(t);
    };
    let running = true;
    section.dataset['state'] = 'running';
    const workers: ReturnType<typeof spawn>[] = [];
    const pingPong = async (pongRole: LabInit['role'], pingRole: LabInit['role']): Promise<void> => {
      for (let pair = 0; pair < pairs; pair++) {
        const init = initOf(pair);
        const pong = spawn(pongRole, init);
        await pong.ready; // ping starts only once pong can answer
        workers.push(pong, spawn(pingRole, init));
      }
    };
    const wakeUps = parts === 'all' || parts === 'wake-ups';
    if (parts === 'all' || parts === 'ping-pong') await pingPong('pong', 'ping');
    if (parts === 'condition') await pingPong('cond-pong', 'cond-ping');
    if (wakeUps) workers.push(spawn('ticker', initOf(0)));
    await Promise.all(workers.map((w) => w.ready));
    const mainLoops = wakeUps ? [waitForTicks('parklot', base, () => running), waitForTicks('native', base, () => running)] : [];
    const timer = setInterval(redraw, REDRAW_MS);
    try {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, seconds * 1000);
        stopRequested = () => {
          clearTimeout(t);
          resolve();
        };
      });
      Atomics.store(new Int32Array(control), 0, 1);
      running = false;
      await Promise.all([...workers.map((w) => w.done), ...mainLoops]);
    } finally {
      stopRequested = undefined;
      clearInterval(timer);
      for (const w of workers) w.worker.terminate();
      for (const block of blocks) rt.free(block, LAB.BYTES, 64);
    }
    redraw();
    // How many ping-pong pairs sent samples (for tests).
    section.dataset['pairsReporting'] = String(reporting.size);
    section.dataset['state'] = 'done';
    return Object.fromEntries((Object.keys(samples) as Measurement[]).map((k) => [k, [...samples[k].all]])) as Record<Measurement, number[]>;
  }

  window.parklotLab = { run };
  section.dataset['state'] = 'idle';
  startButton.disabled = false;
  byId('controls').addEventListener('submit', (e) => {
    e.preventDefault();
    startButton.disabled = true;
    stopButton.disabled = false;
    const seconds = Math.min(120, Math.max(1, Number(secondsInput.value) || 5));
    const pairs = Math.min(MAX_PAIRS, Math.max(1, Math.round(Number(pairsInput.value)) || 1));
    run(seconds, partsSelect.value as LabParts, undefined, pairs)
      .catch(showError)
      .finally(() => {
        startButton.disabled = false;
        stopButton.disabled = true;
      });
  });
  stopButton.addEventListener('click', () => stopRequested?.());
}

function camel(k: string): string {
  return `${k.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}Samples`;
}

if (isolated()) main().catch(showError);
