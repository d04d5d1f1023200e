/** The lock arena page: controls, live charts and the run table around `Arena`. */
import { Chart, byId, colourFor, isolated, showError, si } from './common.js';
import { Arena, ArenaRun, JS_MULTITHREADING, JS_MUTEX, JS_PACKAGE, JS_V8_MUTEX, PARKLOT_LOCK, type ArenaConfig, type ArenaResult } from './arena-runner.js';

const SAMPLE_MS = 250;
/** Points kept per lock on the live chart (one per SAMPLE_MS): a few minutes. */
const MAX_POINTS = 1200;

declare global {
  interface Window {
    /** The running arena, for the browser benchmark (bench/browser) and tests. */
    parklotArena?: { arena: Arena; JS_MUTEX: number; JS_PACKAGE: number; JS_MULTITHREADING: number; JS_V8_MUTEX: number };
  }
}

const form = byId<HTMLFormElement>('controls');
const lockSelect = byId<HTMLSelectElement>('lock');
const workersInput = byId<HTMLInputElement>('workers');
const workSelect = byId<HTMLSelectElement>('work');
const mainCheck = byId<HTMLInputElement>('main-thread');
const startButton = byId<HTMLButtonElement>('start');
const stopButton = byId<HTMLButtonElement>('stop');
const result = byId<HTMLElement>('result');

type Point = { x: number; y: number | null };

const rateChart = new Chart<'line', Point[]>(byId<HTMLCanvasElement>('rate-chart'), {
  type: 'line',
  data: { datasets: [] },
  options: {
    parsing: false,
    normalized: true,
    spanGaps: false,
    scales: {
      x: { type: 'linear', title: { display: true, text: 'seconds on this page (running)' } },
      y: { type: 'linear', beginAtZero: true, title: { display: true, text: 'acquisitions/s, all threads' }, ticks: { callback: (v) => si(Number(v)) } },
    },
    elements: { point: { radius: 0 }, line: { borderWidth: 2 } },
    plugins: { legend: { position: 'bottom' } },
  },
});

const fairChart = new Chart<'bar', number[], string>(byId<HTMLCanvasElement>('fair-chart'), {
  type: 'bar',
  data: { labels: [], datasets: [{ label: 'acquisitions this run', data: [], backgroundColor: [] }] },
  options: {
    scales: {
      x: { title: { display: true, text: 'thread' } },
      y: { beginAtZero: true, title: { display: true, text: 'acquisitions' }, ticks: { callback: (v) => si(Number(v)) } },
    },
    plugins: { legend: { display: false } },
  },
});

/** Seconds of running shown on the x axis so far: runs follow each other on the live chart. */
let sessionSeconds = 0;

function config(): ArenaConfig {
  const peer = Number(lockSelect.value);
  return {
    workers: Math.min(16, Math.max(1, Math.round(Number(workersInput.value) || 1))),
    peer,
    work: Number(workSelect.value),
    mainThread: mainCheck.checked && !mainCheck.disabled,
  };
}

function updateMainOption(arena: Arena): void {
  const parklot = arena.lockName(Number(lockSelect.value)) === PARKLOT_LOCK;
  mainCheck.disabled = !parklot;
  byId('main-note').textContent = parklot
    ? ''
    : `Only ${PARKLOT_LOCK} has an async path for the page's main thread, which may not block; with this lock only the workers run.`;
}

/** The live chart's line for a lock: runs of the same lock continue one line. */
function lineFor(lock: string): { data: Point[] } {
  let ds = rateChart.data.datasets.find((d) => d.label === lock);
  if (!ds) {
    const colour = colourFor(lock);
    ds = { label: lock, data: [], borderColor: colour, backgroundColor: colour };
    rateChart.data.datasets.push(ds);
  }
  return ds;
}

function showCounts(run: ArenaRun, perWorker: number[], main: number): void {
  const labels = perWorker.map((_, i) => `W${i + 1}`);
  const data = [...perWorker];
  const colours = perWorker.map(() => colourFor(run.lock));
  if (run.config.mainThread) {
    labels.push('main');
    data.push(main);
    colours.push('#111827');
  }
  fairChart.data.labels = labels;
  fairChart.data.datasets[0]!.data = data;
  fairChart.data.datasets[0]!.backgroundColor = colours;
  fairChart.update();
  const total = data.reduce((a, b) => a + b, 0);
  const min = Math.min(...perWorker);
  const max = Math.max(...perWorker);
  byId('s-total').textContent = si(total);
  byId('s-fair').textContent = max > 0 ? `${si(min)} / ${si(max)} (${(min / max).toFixed(2)})` : '–';
  byId('s-main').textContent = run.config.mainThread ? `${si(main)} (${total > 0 ? ((100 * main) / total).toFixed(2) : '0'}%)` : 'not taking part';
}

function addRow(r: ArenaResult): void {
  const min = Math.min(...r.perWorker);
  const max = Math.max(...r.perWorker);
  const total = r.expected;
  const row = document.createElement('tr');
  const cells = [
    r.lock,
    String(r.config.workers),
    String(r.config.work),
    r.config.mainThread ? 'yes' : 'no',
    (r.ms / 1000).toFixed(1),
    si(r.rate),
    max > 0 ? (min / max).toFixed(2) : '–',
    r.config.mainThread ? `${((100 * r.main) / Math.max(1, total)).toFixed(2)}%` : '–',
    r.exact ? `exact (${si(r.counter)})` : `LOST UPDATES: ${r.counter} ≠ ${r.expected}`,
  ];
  for (const c of cells) {
    const td = document.createElement('td');
    td.textContent = c;
    row.append(td);
  }
  row.lastElementChild!.className = r.exact ? 'ok' : 'fail';
  byId('runs').querySelector('tbody')!.prepend(row);
}

async function main(): Promise<void> {
  const arena = await Arena.create();
  window.parklotArena = { arena, JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING, JS_V8_MUTEX };
  lockSelect.replaceChildren();
  arena.peers.forEach((name, i) => lockSelect.add(new Option(name === 'std::sync::Mutex' ? 'std::sync::Mutex (Rust, in wasm)' : name, String(i))));
  lockSelect.add(new Option(`${arena.lockName(JS_MUTEX)} (JS)`, String(JS_MUTEX)));
  lockSelect.add(new Option(arena.lockName(JS_PACKAGE), String(JS_PACKAGE)));
  lockSelect.add(new Option(arena.lockName(JS_MULTITHREADING), String(JS_MULTITHREADING)));
  if (arena.hasV8Mutex) lockSelect.add(new Option(arena.lockName(JS_V8_MUTEX), String(JS_V8_MUTEX)));
  lockSelect.value = String(Math.max(0, arena.peers.indexOf(PARKLOT_LOCK)));
  lockSelect.disabled = false;
  startButton.disabled = false;
  updateMainOption(arena);
  lockSelect.addEventListener('change', () => updateMainOption(arena));
  result.dataset.state = 'idle';

  let run: ArenaRun | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;

  async function stop(): Promise<void> {
    if (!run) return;
    const r = run;
    run = undefined;
    clearInterval(timer);
    stopButton.disabled = true;
    const res = await r.stop();
    lineFor(res.lock).data.push({ x: sessionSeconds, y: null }); // a gap before the next run
    showCounts(r, res.perWorker, res.main);
    byId('s-counter').textContent = res.exact ? `exact: ${si(res.counter)}` : `LOST UPDATES: ${res.counter} ≠ ${res.expected}`;
    byId('s-counter').className = `value ${res.exact ? 'ok' : 'fail'}`;
    byId('s-rate').textContent = `${si(res.rate)} (run)`;
    addRow(res);
    Object.assign(result.dataset, {
      state: 'done',
      exact: String(res.exact),
      counter: String(res.counter),
      expected: String(res.expected),
      perWorker: JSON.stringify(res.perWorker),
      main: String(res.main),
    });
    startButton.disabled = false;
    for (const el of [lockSelect, workersInput, workSelect]) el.disabled = false;
    updateMainOption(arena);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      const chosen = config();
      startButton.disabled = true;
      for (const el of [lockSelect, workersInput, workSelect, mainCheck]) el.disabled = true;
      try {
        run = await arena.start(chosen);
      } catch (err) {
        startButton.disabled = false;
        for (const el of [lockSelect, workersInput, workSelect]) el.disabled = false;
        updateMainOption(arena);
        showError(err);
        return;
      }
      const r = run;
      result.dataset.state = 'running';
      byId('s-lock').textContent = r.lock;
      byId('s-counter').textContent = 'checked when the run stops';
      byId('s-counter').className = 'value';
      stopButton.disabled = false;
      const line = lineFor(r.lock);
      let last = r.sample();
      let lastTotal = 0;
      timer = setInterval(() => {
        const now = r.sample();
        const total = now.perWorker.reduce((a, b) => a + b, 0) + now.main;
        const dt = (now.ms - last.ms) / 1000;
        sessionSeconds += dt;
        const rate = (total - lastTotal) / dt;
        line.data.push({ x: sessionSeconds, y: rate });
        if (line.data.length > MAX_POINTS) line.data.splice(0, line.data.length - MAX_POINTS);
        rateChart.update();
        byId('s-rate').textContent = si(rate);
        showCounts(r, now.perWorker, now.main);
        last = now;
        lastTotal = total;
      }, SAMPLE_MS);
    })();
  });
  stopButton.addEventListener('click', () => void stop().catch(showError));
}

if (isolated()) main().catch(showError);
