/**
 * A philosopher of the diagnostics page: attached by `spawnWorker` (with its
 * name), it thinks, takes its first fork, reaches for the second, eats,
 * puts both down, and again, until the page stops it. A `DeadlockError`
 * (detection on, and its wait would close the cycle) is reported to the
 * page; the philosopher puts its fork down, backs off and goes on.
 */
import { DeadlockError, attachWorker } from '../../js/dist/index.js';
import { TIMING, between, forkOrder, type PhilosopherReply, type SeatData } from './philosophers-protocol.js';

const nap = new Int32Array(new SharedArrayBuffer(4));
/** Sleeps `ms` on a word of its own (the engine's Atomics: no parklot queue to clutter the view). */
function sleep(ms: number): void {
  Atomics.wait(nap, 0, 0, ms);
}

function reply(msg: PhilosopherReply): void {
  postMessage(msg);
}

try {
  const { runtime: rt, data } = await attachWorker<SeatData>();
  const { seat, seats, forks, mode } = data;
  const stats = rt.int32(data.stats, seats * 2);
  const stop = rt.int32(data.stop);
  const [a, b] = forkOrder(seat, seats, mode);
  const first = forks[a]!;
  const second = forks[b]!;
  while (Atomics.load(stop, 0) === 0) {
    sleep(between(TIMING.think));
    first.lock();
    sleep(between(TIMING.reach));
    try {
      second.lock();
    } catch (e) {
      if (!(e instanceof DeadlockError)) throw e;
      Atomics.add(stats, seats + seat, 1);
      reply({ type: 'refused', seat, message: e.message, threads: e.cycle.threads.map((t) => t.name ?? `thread ${t.id}`), locks: e.cycle.locks.map((l) => l.address) });
      first.unlock();
      sleep(between(TIMING.backoff));
      continue;
    }
    Atomics.add(stats, seat, 1);
    sleep(between(TIMING.eat));
    second.unlock();
    first.unlock();
  }
  rt.close();
} catch (e) {
  reply({ type: 'error', message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
}
