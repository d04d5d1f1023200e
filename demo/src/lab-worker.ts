/**
 * A wait/notify lab worker. `ping` sends the ball and times each round trip;
 * `pong` sends it back. Both wait for the ball in blocks that alternate
 * between parklot (`rt.atomics.wait/notify`, served by parklot's ParkingLot)
 * and the engine (`Atomics.wait/notify`), on words of the same shared memory.
 * `ticker` wakes the page's main thread, which waits with `waitAsync`.
 * `cond-ping` and `cond-pong` play the same game under a lock, waiting on a
 * condition, in blocks that alternate between parklot's Lock and Condition
 * (the npm package) and the `multithreading` package's Mutex and Condvar.
 */
import { Condvar, Mutex } from 'multithreading';
import { Runtime, type RuntimeHandle } from '../../js/dist/index.js';
import { BLOCK, LAB, STOP_BALL, onlySide, type Api, type LabInit, type LabReply, type Measurement } from './lab-protocol.js';

/** Samples are sent to the page about this often. */
const REPORT_MS = 100;

function reply(msg: LabReply): void {
  postMessage(msg);
}

/** wait(word, value) and notify(word, 1) through one of the two APIs. */
interface Waits {
  api: Api;
  measurement: Measurement;
  view: Int32Array;
  wait(value: number): void;
  notify(): void;
}

function waitsFor(rt: Runtime, m: LabInit): Waits[] {
  const p = rt.int32(m.base + LAB.PING_PARKLOT);
  const n = rt.int32(m.base + LAB.PING_NATIVE);
  return onlySide<Waits>([
    { api: 'parklot', measurement: 'ping-parklot', view: p, wait: (v) => void rt.atomics.wait(p, 0, v), notify: () => void rt.atomics.notify(p, 0, 1) },
    { api: 'native', measurement: 'ping-native', view: n, wait: (v) => void Atomics.wait(n, 0, v), notify: () => void Atomics.notify(n, 0, 1) },
  ], m.only);
}

function ping(rt: Runtime, m: LabInit): void {
  const stop = new Int32Array(m.control);
  const both = waitsFor(rt, m);
  const pending = new Pending(both.map((w) => w.measurement));
  while (Atomics.load(stop, 0) === 0) {
    for (const w of both) {
      const into = pending.of(w.measurement);
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        Atomics.store(w.view, 0, 1);
        w.notify();
        while (Atomics.load(w.view, 0) === 1) w.wait(1);
        into.push(performance.now() - t0);
      }
    }
    pending.maybeFlush();
  }
  pending.flush();
  for (const w of both) {
    Atomics.store(w.view, 0, STOP_BALL);
    w.notify();
  }
}

/** Round-trip samples not yet sent, sent to the page about every REPORT_MS. */
class Pending {
  readonly #samples = new Map<Measurement, number[]>();
  #lastReport = performance.now();

  constructor(measurements: Measurement[]) {
    for (const m of measurements) this.#samples.set(m, []);
  }

  of(m: Measurement): number[] {
    return this.#samples.get(m)!;
  }

  maybeFlush(): void {
    if (performance.now() - this.#lastReport > REPORT_MS) this.flush();
  }

  flush(): void {
    for (const [measurement, ms] of this.#samples) {
      if (ms.length) reply({ type: 'samples', measurement, ms: ms.splice(0) });
    }
    this.#lastReport = performance.now();
  }
}

function pong(rt: Runtime, m: LabInit): void {
  const both = waitsFor(rt, m);
  for (;;) {
    for (const w of both) {
      for (let i = 0; i < BLOCK; i++) {
        let v: number;
        while ((v = Atomics.load(w.view, 0)) === 0) w.wait(0);
        if (v === STOP_BALL) return;
        Atomics.store(w.view, 0, 0);
        w.notify();
      }
    }
  }
}

/** One side's lock + condition: the flag, lock(), unlock(), wait() (under the lock) and notifyOne(). */
interface CondWaits {
  measurement: Measurement;
  flag: Int32Array;
  lock(): void;
  unlock(): void;
  wait(): void;
  notify(): void;
}

function condWaitsFor(rt: Runtime, m: LabInit): CondWaits[] {
  const lock = rt.lockAt(m.base + LAB.COND_LOCK);
  const cond = rt.conditionAt(m.base + LAB.COND_CONDITION);
  // multithreading's Mutex and Condvar, rebuilt on their words as the package
  // itself rebuilds them in a worker; its guard is what its Condvar waits with.
  const mutex = new Mutex(undefined, m.mt!.lock);
  const condvar = new Condvar(m.mt!.condvar);
  let guard: ReturnType<typeof mutex.blockingLock> | undefined;
  return onlySide<CondWaits>([
    {
      measurement: 'cond-parklot',
      flag: rt.int32(m.base + LAB.COND_FLAG_PARKLOT),
      lock: () => lock.lock(),
      unlock: () => lock.unlock(),
      wait: () => cond.wait(lock),
      notify: () => cond.notifyOne(),
    },
    {
      measurement: 'cond-multithreading',
      flag: rt.int32(m.base + LAB.COND_FLAG_MULTITHREADING),
      lock: () => {
        guard = mutex.blockingLock();
      },
      unlock: () => guard!.dispose(),
      wait: () => condvar.blockingWait(guard!),
      notify: () => condvar.notifyOne(),
    },
  ], m.only);
}

/** The ping side under a lock: set the flag, notify, wait on the condition until it is answered. */
function condPing(rt: Runtime, m: LabInit): void {
  const stop = new Int32Array(m.control);
  const both = condWaitsFor(rt, m);
  const pending = new Pending(both.map((w) => w.measurement));
  while (Atomics.load(stop, 0) === 0) {
    for (const w of both) {
      const into = pending.of(w.measurement);
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        w.lock();
        Atomics.store(w.flag, 0, 1);
        w.notify();
        while (Atomics.load(w.flag, 0) === 1) w.wait();
        w.unlock();
        into.push(performance.now() - t0);
      }
    }
    pending.maybeFlush();
  }
  pending.flush();
  for (const w of both) {
    w.lock();
    Atomics.store(w.flag, 0, STOP_BALL);
    w.notify();
    w.unlock();
  }
}

function condPong(rt: Runtime, m: LabInit): void {
  const both = condWaitsFor(rt, m);
  for (;;) {
    for (const w of both) {
      for (let i = 0; i < BLOCK; i++) {
        w.lock();
        let v: number;
        while ((v = Atomics.load(w.flag, 0)) === 0) w.wait();
        if (v === STOP_BALL) {
          w.unlock();
          return;
        }
        Atomics.store(w.flag, 0, 0);
        w.notify();
        w.unlock();
      }
    }
  }
}

/**
 * Every `tickMs`, alternately: stamp the time, bump a tick word, notify it
 * (parklot's or the engine's), and stamp the time the notify returned.
 */
function ticker(rt: Runtime, m: LabInit): void {
  const stop = new Int32Array(m.control);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const ticks = [
    { word: rt.int32(m.base + LAB.TICK_PARKLOT), stamp: rt.float64(m.base + LAB.STAMP_PARKLOT), returned: rt.float64(m.base + LAB.RETURN_PARKLOT), notify: (w: Int32Array) => rt.atomics.notify(w, 0) },
    { word: rt.int32(m.base + LAB.TICK_NATIVE), stamp: rt.float64(m.base + LAB.STAMP_NATIVE), returned: rt.float64(m.base + LAB.RETURN_NATIVE), notify: (w: Int32Array) => Atomics.notify(w, 0) },
  ];
  let k = 0;
  while (Atomics.load(stop, 0) === 0) {
    Atomics.wait(sleeper, 0, 0, m.tickMs / 2); // a plain sleep
    const t = ticks[k++ % 2]!;
    t.stamp[0] = performance.timeOrigin + performance.now();
    Atomics.add(t.word, 0, 1);
    t.notify(t.word);
    t.returned[0] = performance.timeOrigin + performance.now();
  }
}

onmessage = async (e: MessageEvent<LabInit>) => {
  const m = e.data;
  try {
    const rt = await Runtime.attach(m.handle as RuntimeHandle);
    reply({ type: 'ready' });
    if (m.role === 'ping') ping(rt, m);
    else if (m.role === 'pong') pong(rt, m);
    else if (m.role === 'cond-ping') condPing(rt, m);
    else if (m.role === 'cond-pong') condPong(rt, m);
    else ticker(rt, m);
    rt.close();
    reply({ type: 'done' });
  } catch (err) {
    reply({ type: 'error', message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
