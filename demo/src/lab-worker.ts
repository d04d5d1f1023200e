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
import { BLOCK, LAB, STOP_BALL, onlySide, type LabInit, type LabReply, type Measurement } from './lab-protocol.js';

/** Samples are sent to the page about this often. */
const REPORT_MS = 100;

function reply(msg: LabReply): void {
  postMessage(msg);
}

/**
 * One side of a ping-pong: its flag (the ball), and lock(), wait(value) while
 * the flag holds `value`, notify() one waiter, unlock(). The bare ping-pong
 * waits on the flag itself and has no lock; the one under a lock waits on a
 * condition (the value is then only the flag's, read again after each wake).
 */
interface Side {
  measurement: Measurement;
  flag: Int32Array;
  lock(): void;
  unlock(): void;
  wait(value: number): void;
  notify(): void;
}

const noLock = (): void => {};

/** parklot's `rt.atomics.wait/notify` and the engine's `Atomics.wait/notify` on the flags. */
function bareSides(rt: Runtime, m: LabInit): Side[] {
  const p = rt.int32(m.base + LAB.PING_PARKLOT);
  const n = rt.int32(m.base + LAB.PING_NATIVE);
  return [
    { measurement: 'ping-parklot', flag: p, lock: noLock, unlock: noLock, wait: (v) => void rt.atomics.wait(p, 0, v), notify: () => void rt.atomics.notify(p, 0, 1) },
    { measurement: 'ping-native', flag: n, lock: noLock, unlock: noLock, wait: (v) => void Atomics.wait(n, 0, v), notify: () => void Atomics.notify(n, 0, 1) },
  ];
}

/** parklot's Lock + Condition (the npm package) and multithreading's Mutex + Condvar. */
function conditionSides(rt: Runtime, m: LabInit): Side[] {
  const lock = rt.lockAt(m.base + LAB.COND_LOCK);
  const cond = rt.conditionAt(m.base + LAB.COND_CONDITION);
  // multithreading's Mutex and Condvar, rebuilt on their words as the package
  // itself rebuilds them in a worker; its guard is what its Condvar waits with.
  const mutex = new Mutex(undefined, m.mt!.lock);
  const condvar = new Condvar(m.mt!.condvar);
  let guard: ReturnType<typeof mutex.blockingLock> | undefined;
  return [
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
  ];
}

/** The ping side: send the ball, wait until it comes back, time the round trip; stop on the flag. */
function ping(sides: Side[], m: LabInit): void {
  const stop = new Int32Array(m.control);
  const pending = new Pending(sides.map((s) => s.measurement), m.pair);
  while (Atomics.load(stop, 0) === 0) {
    for (const s of sides) {
      const into = pending.of(s.measurement);
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        s.lock();
        Atomics.store(s.flag, 0, 1);
        s.notify();
        while (Atomics.load(s.flag, 0) === 1) s.wait(1);
        s.unlock();
        into.push(performance.now() - t0);
      }
    }
    pending.maybeFlush();
  }
  pending.flush();
  for (const s of sides) {
    s.lock();
    Atomics.store(s.flag, 0, STOP_BALL);
    s.notify();
    s.unlock();
  }
}

/** The pong side: wait for the ball, send it back, until the stop ball. */
function pong(sides: Side[]): void {
  for (;;) {
    for (const s of sides) {
      for (let i = 0; i < BLOCK; i++) {
        s.lock();
        let v: number;
        while ((v = Atomics.load(s.flag, 0)) === 0) s.wait(0);
        if (v === STOP_BALL) {
          s.unlock();
          return;
        }
        Atomics.store(s.flag, 0, 0);
        s.notify();
        s.unlock();
      }
    }
  }
}

/** Round-trip samples not yet sent, sent to the page about every REPORT_MS. */
class Pending {
  readonly #samples = new Map<Measurement, number[]>();
  #lastReport = performance.now();

  constructor(
    measurements: Measurement[],
    readonly pair: number,
  ) {
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
      if (ms.length) reply({ type: 'samples', measurement, pair: this.pair, ms: ms.splice(0) });
    }
    this.#lastReport = performance.now();
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
    if (m.role === 'ticker') ticker(rt, m);
    else {
      const sides = onlySide(m.role.startsWith('cond-') ? conditionSides(rt, m) : bareSides(rt, m), m.only);
      if (m.role.endsWith('ping')) ping(sides, m);
      else pong(sides);
    }
    rt.close();
    reply({ type: 'done' });
  } catch (err) {
    reply({ type: 'error', message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
