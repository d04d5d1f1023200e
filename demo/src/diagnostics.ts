/**
 * The diagnostics page: dining philosophers on parklot locks (workers that
 * block, and this page, which waits with lockAsync), watched through
 * `rt.diagnostics()` every 100 ms; a deadlock shown from `rt.checkDeadlock()`
 * with detection off, or refused with `DeadlockError` with it on.
 */
import { DeadlockError, Runtime, spawnWorker, type DeadlockCycle, type DiagnosticsSnapshot, type Lock } from '../../js/dist/index.js';
import { byId, isolated, showError } from './common.js';
import { TIMING, between, forkOrder, type Mode, type PhilosopherReply, type Refusal, type SeatData } from './philosophers-protocol.js';

const POLL_MS = 100;
/** The newest DeadlockErrors listed. */
const SHOWN_REFUSALS = 8;
const PAGE = 'page';

/** One run of the table, from Start to Stop. */
interface Run {
  readonly rt: Runtime;
  /** Seats: the workers, then the page. */
  readonly seats: number;
  readonly forks: Lock[];
  /** Meals per seat, then DeadlockErrors per seat. */
  readonly stats: Int32Array;
  readonly stop: Int32Array;
  readonly workers: Worker[];
  running: boolean;
  readonly refusals: Refusal[];
  page: Promise<void>;
  /** When the meal count last moved. */
  lastMeals: number;
  lastMealAt: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function seatName(seat: number, seats: number): string {
  return seat === seats - 1 ? PAGE : `philosopher ${seat}`;
}

function escape(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]!};`);
}

/** The page's own seat: the same loop as the workers', with lockAsync (this thread may not block). */
async function pagePhilosopher(run: Run, mode: Mode): Promise<void> {
  const seat = run.seats - 1;
  const [a, b] = forkOrder(seat, run.seats, mode);
  const first = run.forks[a]!;
  const second = run.forks[b]!;
  while (run.running) {
    await sleep(between(TIMING.think));
    if (!run.running) return;
    await first.lockAsync();
    await sleep(between(TIMING.reach));
    try {
      await second.lockAsync();
    } catch (e) {
      if (!(e instanceof DeadlockError)) throw e;
      Atomics.add(run.stats, run.seats + seat, 1);
      run.refusals.push({ type: 'refused', seat, message: e.message, threads: e.cycle.threads.map((t) => t.name ?? `thread ${t.id}`), locks: e.cycle.locks.map((l) => l.address) });
      first.unlock();
      await sleep(between(TIMING.backoff));
      continue;
    }
    Atomics.add(run.stats, seat, 1);
    await sleep(between(TIMING.eat));
    second.unlock();
    first.unlock();
  }
}

async function startRun(workers: number, mode: Mode, detection: boolean): Promise<Run> {
  const rt = await Runtime.create({ name: PAGE });
  const seats = workers + 1;
  rt.setHoldTracking(true); // holders shown, and rt.checkDeadlock() sees cycles, with detection off too
  rt.setDeadlockDetection(detection);
  const forks = Array.from({ length: seats }, () => rt.lock());
  const statsAt = rt.alloc(seats * 2 * 4, 4);
  const stopAt = rt.alloc(4, 4);
  const run: Run = {
    rt,
    seats,
    forks,
    stats: rt.int32(statsAt, seats * 2),
    stop: rt.int32(stopAt),
    workers: [],
    running: true,
    refusals: [],
    page: Promise.resolve(),
    lastMeals: 0,
    lastMealAt: performance.now(),
  };
  for (let seat = 0; seat < workers; seat++) {
    const name = seatName(seat, seats);
    const worker = new Worker(new URL('./philosopher-worker.ts', import.meta.url), { type: 'module', name });
    worker.onmessage = (e: MessageEvent<PhilosopherReply>) => {
      if (e.data.type === 'refused') run.refusals.push(e.data);
      else showError(new Error(`${name}: ${e.data.message}`));
    };
    worker.onerror = (e) => showError(new Error(`${name}: ${e.message}`));
    const data: SeatData = { seat, seats, forks, stats: statsAt, stop: stopAt, mode };
    await spawnWorker(rt, worker, data, { name });
    run.workers.push(worker);
  }
  run.page = pagePhilosopher(run, mode).catch((e: unknown) => {
    if (run.running) showError(e); // after Stop, the closed runtime rejects the page's pending wait
  });
  return run;
}

async function stopRun(run: Run): Promise<void> {
  run.running = false;
  Atomics.store(run.stop, 0, 1);
  // Philosophers that are not stuck finish their round; the stuck ones are terminated.
  await sleep(100);
  for (const w of run.workers) w.terminate();
  run.rt.close();
  await run.page;
}

/** Everything the view shows, from one snapshot. */
function render(run: Run, snap: DiagnosticsSnapshot, cycles: DeadlockCycle[], costMs: number): void {
  const { seats, forks } = run;
  const forkOf = new Map(forks.map((f, i) => [f.address, i]));
  const seatOfThread = new Map<number, number>();
  for (const t of snap.threads) {
    if (t.state !== 'alive' || t.name === undefined) continue;
    const seat = t.name === PAGE ? seats - 1 : /^philosopher (\d+)$/.exec(t.name)?.[1];
    if (seat !== undefined) seatOfThread.set(t.id, Number(seat));
  }
  const holderOf = new Map<number, number>(); // fork -> seat
  for (const h of snap.holds) {
    const fork = forkOf.get(h.address);
    const seat = seatOfThread.get(h.thread);
    if (fork !== undefined && seat !== undefined) holderOf.set(fork, seat);
  }
  const waits: { seat: number; fork: number; async: boolean; sinceMs: number }[] = [];
  for (const w of snap.waiters) {
    const fork = forkOf.get(w.address);
    const seat = seatOfThread.get(w.thread);
    if (fork !== undefined && seat !== undefined) waits.push({ seat, fork, async: w.mode === 'async', sinceMs: w.sinceMs });
  }
  const inCycle = new Set<number>(); // seats
  const forksInCycle = new Set<number>();
  for (const c of cycles) {
    for (const t of c.threads) {
      const s = seatOfThread.get(t.id);
      if (s !== undefined) inCycle.add(s);
    }
    for (const l of c.locks) {
      const f = forkOf.get(l.address);
      if (f !== undefined) forksInCycle.add(f);
    }
  }
  const meals = Array.from({ length: seats }, (_, s) => Atomics.load(run.stats, s));
  const refused = Array.from({ length: seats }, (_, s) => Atomics.load(run.stats, seats + s));
  const total = meals.reduce((a, b) => a + b, 0);
  const now = performance.now();
  if (total !== run.lastMeals) {
    run.lastMeals = total;
    run.lastMealAt = now;
  }

  // The tables.
  const seatRows = meals.map((m, s) => {
    const held = [...holderOf].filter(([, seat]) => seat === s).map(([f]) => f);
    const wait = waits.find((w) => w.seat === s);
    const thread = snap.threads.find((t) => seatOfThread.get(t.id) === s);
    let doing = held.length === 2 ? `eating (forks ${held.join(' and ')})` : held.length === 1 ? `holds fork ${held[0]}` : 'thinking';
    if (wait !== undefined) doing += `, waits for fork ${wait.fork} (${wait.async ? 'async' : 'blocking'}, ${wait.sinceMs.toFixed(0)} ms)`;
    const cls = inCycle.has(s) ? ' class="in-cycle"' : '';
    return `<tr><td${cls}>${escape(seatName(s, seats))}</td><td>${thread === undefined ? '…' : thread.id}</td><td class="doing${inCycle.has(s) ? ' in-cycle' : ''}">${escape(doing)}</td><td>${m}</td><td>${refused[s]}</td></tr>`;
  });
  byId('seats').querySelector('tbody')!.innerHTML = seatRows.join('');
  const forkRows = forks.map((f, i) => {
    const holder = holderOf.get(i);
    const waiting = waits.filter((w) => w.fork === i).map((w) => `${seatName(w.seat, seats)} (${w.async ? 'async' : 'blocking'})`);
    const cls = forksInCycle.has(i) ? ' class="in-cycle"' : '';
    return `<tr><td${cls}>fork ${i}</td><td>${f.address}</td><td>${holder === undefined ? '–' : escape(seatName(holder, seats))}</td><td>${escape(waiting.join(', ') || '–')}</td></tr>`;
  });
  byId('forks').querySelector('tbody')!.innerHTML = forkRows.join('');
  const mealsEl = byId('meals');
  mealsEl.textContent = String(total);
  mealsEl.dataset['total'] = String(total);
  byId('refusal-count').textContent = String(refused.reduce((a, b) => a + b, 0));
  byId('snapshot-cost').textContent = `${(costMs * 1000).toFixed(0)} µs`;

  // The status, and the cycle with detection off.
  const status = byId('status');
  const cycleBox = byId('cycle');
  const frozenFor = (now - run.lastMealAt) / 1000;
  if (cycles.length > 0) {
    status.dataset['state'] = 'deadlock';
    status.textContent = `Deadlock: the table is frozen (no meal for ${frozenFor.toFixed(1)} s). Nobody will ever eat again: every philosopher in the cycle holds a fork and waits for the next one's.`;
    const describe = (c: DeadlockCycle): string =>
      c.steps
        .map((s, i) => {
          const who = (id: number, name: string | undefined): string => escape(name ?? `thread ${id}`);
          const fork = forkOf.get(s.lock.address);
          return `${i === 0 ? `<strong>${who(s.thread.id, s.thread.name)}</strong>` : 'which'} waits for <strong>fork ${fork ?? s.lock.address}</strong> held by <strong>${who(s.holder.id, s.holder.name)}</strong>`;
        })
        .join(', ');
    cycleBox.innerHTML = `<strong>The cycle</strong> (from <code>rt.checkDeadlock()</code>, ${cycles[0]!.threads.length} threads): ${describe(cycles[0]!)}.` +
      (snap.deadlockDetection ? ' Detection was switched on after these waits queued: it refuses new waits only. Stop and start again.' : ' Switch deadlock detection on and start again to see the closing wait refused.');
    cycleBox.hidden = false;
  } else {
    const refusals = refused.reduce((a, b) => a + b, 0);
    status.dataset['state'] = refusals > 0 ? 'detected' : 'running';
    status.textContent =
      refusals > 0
        ? `Running, deadlock detection on: ${refusals} waits refused with DeadlockError so far, and everyone keeps eating (${total} meals).`
        : `Running: ${total} meals${snap.deadlockDetection ? ', deadlock detection on' : ''}.`;
    cycleBox.hidden = true;
  }

  // The refusals, newest first.
  if (run.refusals.length > 0) {
    byId('refusals').innerHTML = run.refusals
      .slice(-SHOWN_REFUSALS)
      .reverse()
      .map((r) => {
        // Each thread waits for the fork after it, which the next thread holds.
        const ring = r.locks.map((a, i) => `${escape(r.threads[i] ?? '?')} → fork ${forkOf.get(a) ?? a}`).join(' → ');
        return `<li><strong>${escape(seatName(r.seat, seats))}</strong> got <code>DeadlockError</code>: its wait would have closed the cycle ${ring} → ${escape(r.threads[0] ?? '?')}.</li>`;
      })
      .join('');
  }

  drawGraph(seats, meals, holderOf, waits, inCycle, forksInCycle);
}

/** The wait-for graph as SVG: seats on a circle, forks between them; holds solid, waits dashed. */
function drawGraph(
  seats: number,
  meals: number[],
  holderOf: Map<number, number>,
  waits: { seat: number; fork: number; async: boolean }[],
  inCycle: Set<number>,
  forksInCycle: Set<number>,
): void {
  const at = (slot: number, r: number): [number, number] => {
    const a = -Math.PI / 2 + (2 * Math.PI * slot) / seats;
    return [r * Math.cos(a), r * Math.sin(a)];
  };
  const seatAt = (s: number) => at(s, 165);
  // Fork k lies between seat k - 1 (whose right fork it is) and seat k (whose left fork it is).
  const forkAt = (f: number) => at(f - 0.5, 95);
  const line = (from: [number, number], to: [number, number], cls: string, arrow: boolean): string =>
    `<line x1="${from[0].toFixed(1)}" y1="${from[1].toFixed(1)}" x2="${to[0].toFixed(1)}" y2="${to[1].toFixed(1)}" class="${cls}"${arrow ? ' marker-end="url(#arrow)"' : ''}/>`;
  const shorten = (from: [number, number], to: [number, number], by: number): [number, number] => {
    const dx = to[0] - from[0];
    const dy = to[1] - from[1];
    const d = Math.hypot(dx, dy) || 1;
    return [to[0] - (dx / d) * by, to[1] - (dy / d) * by];
  };
  const parts: string[] = [
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
    '<style>.hold{stroke:#1a7f37;stroke-width:4}.wait{stroke:#57606a;stroke-width:2.5;stroke-dasharray:6 4}.wait.async{stroke:#1f6feb}.cyc{stroke:#cf222e!important}.seat{fill:#fff;stroke:#1d232b;stroke-width:1.5}.seat.cyc{fill:#fff5f5;stroke-width:3}.fork{fill:#f5f7fa;stroke:#5b6775}.fork.cyc{stroke:#cf222e;stroke-width:2}text{font:12px system-ui,sans-serif;text-anchor:middle;dominant-baseline:middle}</style>',
    '<circle r="60" fill="#f5f7fa" stroke="#d8dee6"/>',
  ];
  for (const [fork, seat] of holderOf) parts.push(line(seatAt(seat), forkAt(fork), `hold${inCycle.has(seat) && forksInCycle.has(fork) ? ' cyc' : ''}`, false));
  for (const w of waits) {
    const to = shorten(seatAt(w.seat), forkAt(w.fork), 13);
    parts.push(line(seatAt(w.seat), to, `wait${w.async ? ' async' : ''}${inCycle.has(w.seat) && forksInCycle.has(w.fork) ? ' cyc' : ''}`, true));
  }
  for (let f = 0; f < seats; f++) {
    const [x, y] = forkAt(f);
    parts.push(`<rect x="${(x - 11).toFixed(1)}" y="${(y - 11).toFixed(1)}" width="22" height="22" rx="4" class="fork${forksInCycle.has(f) ? ' cyc' : ''}"/><text x="${x.toFixed(1)}" y="${y.toFixed(1)}">${f}</text>`);
  }
  for (let s = 0; s < seats; s++) {
    const [x, y] = seatAt(s);
    const label = s === seats - 1 ? PAGE : `P${s}`;
    parts.push(
      `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="30" class="seat${inCycle.has(s) ? ' cyc' : ''}"/><text x="${x.toFixed(1)}" y="${(y - 7).toFixed(1)}" font-weight="600">${label}</text><text x="${x.toFixed(1)}" y="${(y + 9).toFixed(1)}" fill="#5b6775">${meals[s]} meals</text>`,
    );
  }
  byId('graph').innerHTML = parts.join('');
}

function main(): void {
  const diag = byId('diag');
  const startButton = byId<HTMLButtonElement>('start');
  const stopButton = byId<HTMLButtonElement>('stop');
  const workersInput = byId<HTMLInputElement>('workers');
  const modeSelect = byId<HTMLSelectElement>('mode');
  const detection = byId<HTMLInputElement>('detection');
  let run: Run | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;

  const poll = (): void => {
    if (run === undefined || !run.running) return;
    const t0 = performance.now();
    const snap = run.rt.diagnostics();
    const cost = performance.now() - t0;
    render(run, snap, run.rt.checkDeadlock(), cost);
  };

  byId('controls').addEventListener('submit', (e) => {
    e.preventDefault();
    startButton.disabled = true;
    const workers = Math.min(12, Math.max(1, Math.round(Number(workersInput.value)) || 5));
    startRun(workers, modeSelect.value as Mode, detection.checked)
      .then((r) => {
        run = r;
        byId('refusals').innerHTML = '<li class="note">None yet: detection refuses the wait that would close a cycle.</li>';
        diag.dataset['state'] = 'running';
        stopButton.disabled = false;
        timer = setInterval(() => {
          try {
            poll();
          } catch (err) {
            showError(err);
          }
        }, POLL_MS);
      })
      .catch((err: unknown) => {
        showError(err);
        startButton.disabled = false;
      });
  });
  stopButton.addEventListener('click', () => {
    stopButton.disabled = true;
    clearInterval(timer);
    const stopping = run;
    run = undefined;
    if (stopping === undefined) return;
    stopRun(stopping)
      .catch(showError)
      .finally(() => {
        diag.dataset['state'] = 'stopped';
        byId('status').dataset['state'] = 'idle';
        byId('status').textContent = 'Stopped. Press Start for another run.';
        startButton.disabled = false;
      });
  });
  detection.addEventListener('change', () => run?.rt.setDeadlockDetection(detection.checked));
  diag.dataset['state'] = 'idle';
  startButton.disabled = false;
}

if (isolated()) main();
