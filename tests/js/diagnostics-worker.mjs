// The worker side of diagnostics.test.ts: started by spawnWorker (with a
// name), attached with attachWorker(), runs data.task and posts
// { type, value } messages, ending with { type: 'done', value }.
import { parentPort } from 'node:worker_threads';
import { DeadlockError, attachWorker } from '../../js/dist/index.js';

const { runtime: rt, data } = await attachWorker();
const post = (type, value) => parentPort.postMessage({ type, value });

/** A DeadlockError as plain data for the test, or rethrows anything else. */
function refusal(e) {
  if (!(e instanceof DeadlockError)) throw e;
  return { message: e.message, address: e.address, threads: e.cycle.threads, locks: e.cycle.locks };
}

/** Waits for the i32 at `address` to read non-zero. */
function waitFor(address) {
  const word = rt.int32(address);
  while (Atomics.load(word, 0) === 0) rt.atomics.wait(word, 0, 0);
}

/** Takes `first` then `second` (named, so that the stacks show it), releases both. */
function takeInOrder(first, second) {
  first.lock();
  second.lock();
  second.unlock();
  first.unlock();
}

/** Holds `mine`, runs `between`, then takes `other` (blocking) and lets both go: `{ refused }` if detection refused it. */
function holdThenTry(mine, other, between) {
  mine.lock();
  between();
  let refused;
  try {
    other.lock();
    other.unlock();
  } catch (e) {
    refused = refusal(e);
  }
  mine.unlock();
  return { refused };
}

const tasks = {
  /** Holds `mine`, meets the others at `barrier`, then takes `next`: refused, or taken once its holder lets go. */
  ring({ mine, next, barrier }) {
    return holdThenTry(mine, next, () => barrier.wait());
  },

  /** Holds `mine`, says so, waits for `go`, then takes `other` (blocking). */
  holdThenTake({ mine, other, go }) {
    return holdThenTry(mine, other, () => {
      post('holding');
      waitFor(go);
    });
  },

  /** Holds `hold` and `lock`, then waits on `cond` with `lock` (blocking): refused taking `lock` back, or notified. */
  condWaitHolding({ hold, lock, cond }) {
    hold.lock();
    lock.lock();
    post('waiting');
    let refused;
    try {
      cond.wait(lock);
      lock.unlock();
    } catch (e) {
      refused = refusal(e);
    }
    const stillHeld = lock.isLocked();
    hold.unlock();
    return { refused, stillHeld };
  },

  /** Takes `lock` for at most `ms` (a timed wait the snapshot shows). */
  lockFor({ lock, ms }) {
    post('waiting');
    const took = lock.lockFor(ms);
    if (took) lock.unlock();
    return took;
  },

  /** Waits on the i32 at `word` while it reads 0, at most `ms`. */
  futexWait({ word, ms }) {
    post('waiting');
    return rt.atomics.wait(rt.int32(word), 0, 0, ms);
  },

  /** Holds `mine`, then blocks on `other` for ever (the test terminates it). */
  holdAndHang({ mine, other }) {
    mine.lock();
    post('holding');
    other.lock();
    return 'unreachable';
  },

  /** Until `ms` passed: takes two of `locks` (by index order), holds them a moment, releases. */
  ordered({ locks, ms, seed }) {
    let x = seed;
    const random = (n) => {
      x = (x * 1103515245 + 12345) >>> 0;
      return x % n;
    };
    const end = performance.now() + ms;
    let rounds = 0;
    let refusals = 0;
    while (performance.now() < end) {
      const i = random(locks.length);
      let j = random(locks.length - 1);
      if (j >= i) j++;
      const [a, b] = i < j ? [locks[i], locks[j]] : [locks[j], locks[i]];
      try {
        a.withLock(() => b.withLock(() => rounds++));
      } catch (e) {
        refusal(e);
        refusals++;
      }
    }
    return { rounds, refusals };
  },

  /** Takes `first` then `second`, once. */
  inOrder({ first, second }) {
    takeInOrder(first, second);
    return 'ok';
  },
};

const value = await tasks[data.task](data);
rt.close();
post('done', value);
