// The worker side of the JS tests: attaches to the runtime in workerData.handle
// and runs one task from `tasks` with workerData's other fields, posting
// {type, value} messages on the way and {type: 'done', value} at the end.
import { parentPort, workerData } from 'node:worker_threads';
import { BrokenBarrierError, OncePoisonedError, Runtime } from '../../js/dist/index.js';
import { lockCore } from '../../js/dist/lock.js';

const { task, handle, mayBlock, ...args } = workerData;
const post = (type, value) => parentPort.postMessage({ type, value });
/** A task's result that asks to end without rt.close(). */
const NO_CLOSE = Symbol('no close');

/** Blocks this worker for `ms` (never on the runtime: a plain Atomics.wait). */
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Makes this thread trap at the next point `point` inside a step of the
 * wasm module's lock bookkeeping (wasm/src/threads.rs, `StepPoint`), as a
 * thread terminated there would stop: a test-only export, reached through
 * the runtime's internals.
 */
function armStepTrap(rt, point) {
  lockCore(rt.lock()).glue.arm_step_trap_for_test(point);
}

/** Waits on the start gate (an i32 in the runtime's memory) until it reads non-zero. */
function passGate(rt, gate) {
  if (gate === undefined) return;
  const g = rt.int32(gate);
  post('ready');
  while (Atomics.load(g, 0) === 0) rt.atomics.wait(g, 0, 0);
}

/**
 * One write of the reader-writer lock `l` (async with `useAsync`): counts
 * itself into the i32 `occ[0]` as 1000 and adds 1 to the f64 `c[0]`.
 * Returns 1 if it found anyone inside (or `alsoBad()` says so), else 0.
 */
async function writeStep(l, occ, c, useAsync, alsoBad = () => false) {
  if (useAsync) await l.writeAsync();
  else l.write();
  const bad = Atomics.add(occ, 0, 1000) !== 0 || alsoBad();
  c[0] = c[0] + 1;
  Atomics.sub(occ, 0, 1000);
  l.unlockWrite();
  return bad ? 1 : 0;
}

/** One read of `l`: counts itself into `occ[0]` as 1; returns 1 if a writer was inside, else 0. */
async function readStep(l, occ, useAsync) {
  if (useAsync) await l.readAsync();
  else l.read();
  const bad = Atomics.add(occ, 0, 1) >= 1000;
  Atomics.sub(occ, 0, 1);
  l.unlockRead();
  return bad ? 1 : 0;
}

/**
 * The loop of rwMix and rwUpgradeMix: through the gate (blocking workers
 * only), then `iterations` steps on the reader-writer lock at `rw`, each
 * `step(l, occ, c, i)` (`occ`: the i32 at `occupancy`, `c`: the f64 at
 * `counter`) resolving [violations it saw, 1 if it wrote else 0]. Returns
 * [violations, writes].
 */
async function rwLoop(rt, { rw, occupancy, counter, iterations, useAsync, gate }, step) {
  const l = rt.rwLockAt(rw);
  const occ = rt.int32(occupancy);
  const c = rt.float64(counter);
  if (!useAsync) passGate(rt, gate);
  let violations = 0;
  let writes = 0;
  for (let i = 0; i < iterations; i++) {
    const [v, w] = await step(l, occ, c, i);
    violations += v;
    writes += w;
  }
  return [violations, writes];
}

/** Makes the export `name` of `glue` post 'resuming' and spin in JS for ever instead (until the test terminates the worker). */
function stopAt(glue, name) {
  glue[name] = () => {
    post('resuming');
    for (;;);
  };
}

const tasks = {
  /** `iterations` times: lock, add 1 to a plain f64 counter, unlock. */
  increment(rt, { lock, counter, iterations, gate }) {
    const l = rt.lockAt(lock);
    const c = rt.float64(counter);
    passGate(rt, gate);
    for (let i = 0; i < iterations; i++) {
      l.lock();
      c[0] = c[0] + 1;
      l.unlock();
    }
    return iterations;
  },

  /** Like increment, over `locks.length` locks, each guarding its own counter. */
  incrementMany(rt, { locks, counters, iterations, gate }) {
    const ls = locks.map((a) => rt.lockAt(a));
    const n = ls.length;
    const c = rt.float64(counters, n);
    passGate(rt, gate);
    for (let i = 0; i < iterations; i++) {
      const k = i % n;
      const l = ls[k];
      l.lock();
      c[k] = c[k] + 1;
      l.unlock();
    }
    return iterations;
  },

  /** Increments under the lock (holding it `holdUs` more) until the i32 at `stop` is non-zero; returns how often. */
  incrementUntilStop(rt, { lock, counter, stop, gate, holdUs = 0 }) {
    const l = rt.lockAt(lock);
    const c = rt.float64(counter);
    const s = rt.int32(stop);
    passGate(rt, gate);
    let count = 0;
    while (Atomics.load(s, 0) === 0) {
      l.lock();
      c[0] = c[0] + 1;
      // Holding it `holdUs` microseconds (spinning), so that others queue.
      for (const until = performance.now() + holdUs / 1000; holdUs > 0 && performance.now() < until; );
      l.unlock();
      count++;
    }
    return count;
  },

  /** Bounded ring buffer, producer side: sends ids first..first+n-1, then marks itself done. */
  producer(rt, { lock, notEmpty, notFull, state, ring, capacity, first, n, gate }) {
    const l = rt.lockAt(lock);
    const ne = rt.conditionAt(notEmpty);
    const nf = rt.conditionAt(notFull);
    const s = rt.int32(state, 4); // head, tail, count, producers done
    const r = rt.int32(ring, capacity);
    passGate(rt, gate);
    for (let i = 0; i < n; i++) {
      l.lock();
      while (s[2] === capacity) nf.wait(l);
      r[s[1]] = first + i;
      s[1] = (s[1] + 1) % capacity;
      s[2] += 1;
      l.unlock();
      ne.notifyOne();
    }
    l.withLock(() => {
      s[3] += 1;
    });
    ne.notifyAll();
    return n;
  },

  /** Ring buffer, consumer side: counts every id it takes into `seen`; stops when all producers are done and the ring is empty. */
  consumer(rt, { lock, notEmpty, notFull, state, ring, capacity, seen, total, producers, gate }) {
    const l = rt.lockAt(lock);
    const ne = rt.conditionAt(notEmpty);
    const nf = rt.conditionAt(notFull);
    const s = rt.int32(state, 4);
    const r = rt.int32(ring, capacity);
    const seenCounts = rt.int32(seen, total);
    passGate(rt, gate);
    let taken = 0;
    for (;;) {
      l.lock();
      while (s[2] === 0 && s[3] < producers) ne.wait(l);
      if (s[2] === 0) {
        l.unlock();
        return taken;
      }
      const id = r[s[0]];
      s[0] = (s[0] + 1) % capacity;
      s[2] -= 1;
      seenCounts[id] += 1;
      l.unlock();
      nf.notifyOne();
      taken++;
    }
  },

  /** Posts 'parking', takes the lock (parking while it is held), posts 'locked', releases it. */
  park(rt, { lock }) {
    const l = rt.lockAt(lock);
    post('parking');
    l.lock();
    post('locked');
    l.unlock();
    return true;
  },

  /** rt.atomics.wait on the i32 at `word` (expecting 0) until the i32 at `stop` is set; returns how many waits ended "ok". */
  countOks(rt, { word, stop }) {
    const w = rt.int32(word);
    const s = rt.int32(stop);
    post('started');
    let oks = 0;
    while (Atomics.load(s, 0) === 0) {
      if (rt.atomics.wait(w, 0, 0) === 'ok') oks++;
    }
    return oks;
  },

  /**
   * Waits for the lock at `lock` with lockAsync(), posting 'waiting' once it
   * is queued; once woken, it stops for good where the wakeup was seen and
   * the resume export not yet called (posting 'resuming', then spinning in
   * JS until the test terminates it), as a worker terminated there would.
   */
  async stopBeforeLockResume(rt, { lock }) {
    const l = rt.lockAt(lock);
    stopAt(lockCore(l).glue, 'lock_async_resume');
    const taking = l.lockAsync();
    post('waiting');
    await taking;
    post('locked'); // never: the resume above does not return
  },

  /** As stopBeforeLockResume, for the write lock of the reader-writer lock at `rw` (writeAsync()). */
  async stopBeforeWriteResume(rt, { rw }) {
    const l = rt.rwLockAt(rw);
    stopAt(lockCore(rt.lock()).glue, 'rwlock_async_resume');
    const taking = l.writeAsync();
    post('waiting');
    await taking;
    post('locked');
  },

  /** Takes the lock, posts 'held', and never lets go (to be terminated holding it). */
  holdForever(rt, { lock }) {
    rt.lockAt(lock).lock();
    post('held');
    sleep(1e9);
  },

  /** Unlocks the lock at `lock`, which another thread holds; returns what that threw. */
  unlockOther(rt, { lock }) {
    try {
      rt.lockAt(lock).unlock();
      return 'unlocked';
    } catch (e) {
      return String(e);
    }
  },

  /** Takes the locks at `take` in order, releases those at `release` in order, posts 'held', never returns. */
  holdSeveral(rt, { take, release }) {
    for (const a of take) rt.lockAt(a).lock();
    for (const a of release) rt.lockAt(a).unlock();
    post('held');
    sleep(1e9);
  },

  /** Takes the lock, posts 'held', waits until the i32 at `stop` is non-zero, releases it. */
  holdUntilStop(rt, { lock, stop }) {
    const l = rt.lockAt(lock);
    const s = rt.int32(stop);
    l.lock();
    post('held');
    while (Atomics.load(s, 0) === 0) rt.atomics.wait(s, 0, 0);
    l.unlock();
    return true;
  },

  /** Posts 'attached' and ends without rt.close() (its exit alone must free what it had). */
  exitWithoutClose() {
    post('attached');
    return NO_CLOSE;
  },

  /** Takes the lock, posts 'held', keeps it `ms` milliseconds, releases it. */
  hold(rt, { lock, ms }) {
    const l = rt.lockAt(lock);
    l.lock();
    post('held');
    sleep(ms);
    l.unlock();
    return true;
  },

  /** Takes the lock, waits on the condition once, posts 'woke' with the result. */
  conditionWait(rt, { lock, condition, timeout }) {
    const l = rt.lockAt(lock);
    const c = rt.conditionAt(condition);
    l.lock();
    post('waiting');
    const notified = c.wait(l, timeout);
    post('woke', notified);
    l.unlock();
    return notified;
  },

  /** rt.atomics.wait on an i32 (or i64 with `wide`) at `word`; posts 'waiting' before and 'woke' after. */
  atomicsWait(rt, { word, value, timeout, wide, view }) {
    const v = view ?? (wide ? rt.bigInt64(word) : rt.int32(word));
    post('waiting');
    const result = rt.atomics.wait(v, 0, value, timeout);
    post('woke', result);
    return result;
  },

  /** rt.atomics.waitAsync on a view that came through workerData (a different buffer object). */
  async atomicsWaitAsyncOnView(rt, { view, value }) {
    const r = rt.atomics.waitAsync(view, 0, value, 10_000);
    post('waiting', r.async);
    return r.async ? await r.value : r.value;
  },

  /** Sleeps `delay` ms, stores `store` at `word`, notifies it; returns how many woke. */
  notifyAfter(rt, { word, delay, store, wide }) {
    const v = wide ? rt.bigInt64(word) : rt.int32(word);
    sleep(delay);
    Atomics.store(v, 0, store);
    return rt.atomics.notify(v, 0);
  },

  /**
   * Drives every call that reaches the wasm module with hostile numbers
   * (huge, NaN, ±Infinity, -0, fractions, out-of-range addresses) `rounds`
   * times; returns the calls that failed with anything but a TypeError or
   * RangeError (a trap), and how many calls it made. The blocking waits with
   * an equal value are woken by a `notifier` worker on `cond` and `word`.
   */
  async hostile(rt, { rounds, lock: lockAddress, cond: condAddress, word }) {
    const numbers = [1e300, -1e300, 1.8e22, Number.MAX_VALUE, NaN, Infinity, -Infinity, -0, 0.5, -0.5, 1e-300, 2 ** 32, 2 ** 53, -1];
    const bigs = [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n)];
    const lock = rt.lockAt(lockAddress);
    const cond = rt.conditionAt(condAddress);
    const w32 = rt.int32(word); // holds 5, and the notifier wakes its waiters
    const w64 = rt.bigInt64(rt.alloc(8, 8));
    const traps = [];
    let calls = 0;
    const note = (what, e) => {
      if (!(e instanceof TypeError || e instanceof RangeError)) traps.push(`${what}: ${e?.constructor?.name}: ${e?.message}`);
    };
    const attempt = async (what, f) => {
      calls++;
      try {
        await f();
      } catch (e) {
        note(what, e);
      }
    };
    for (let round = 0; round < rounds; round++) {
      for (const t of numbers) {
        await attempt(`atomics.wait(i32, not-equal, ${t})`, () => rt.atomics.wait(w32, 0, 1, t));
        await attempt(`atomics.wait(i32, equal, ${t})`, () => rt.atomics.wait(w32, 0, 5, t));
        for (const b of bigs) await attempt(`atomics.wait(i64, ${b}, ${t})`, () => rt.atomics.wait(w64, 0, b === 0n ? 1n : b, t));
        await attempt(`atomics.wait(i32, index ${t})`, () => rt.atomics.wait(w32, t, 1, 0));
        await attempt(`atomics.notify(i32, 0, ${t})`, () => rt.atomics.notify(w32, 0, t));
        await attempt(`atomics.notify(i32, ${t})`, () => rt.atomics.notify(w32, t));
        await attempt(`atomics.waitAsync(i32, not-equal, ${t})`, () => rt.atomics.waitAsync(w32, 0, 1, t));
        await attempt(`atomics.waitAsync(i32, equal, ${t})`, async () => {
          const r = rt.atomics.waitAsync(w32, 0, 5, t);
          if (r.async) await r.value;
        });
        await attempt(`atomics.waitAsync(i64, ${t})`, () => rt.atomics.waitAsync(w64, 0, 1n, t));
        await attempt(`lock.lockFor(${t})`, () => {
          if (lock.lockFor(t)) lock.unlock();
        });
        await attempt(`lock.lockAsync(${t})`, async () => {
          if (await lock.lockAsync(t)) lock.unlock();
        });
        await attempt(`cond.wait(lock, ${t})`, () => {
          lock.lock();
          try {
            cond.wait(lock, t);
          } finally {
            lock.unlock();
          }
        });
        await attempt(`cond.waitAsync(lock, ${t})`, async () => {
          if (!(await lock.lockAsync())) return;
          try {
            await cond.waitAsync(lock, t);
          } finally {
            lock.unlock();
          }
        });
        await attempt(`alloc(${t})`, () => rt.alloc(t));
        await attempt(`alloc(8, ${t})`, () => rt.alloc(8, t));
        await attempt(`free(${t}, 8)`, () => rt.free(t, 8));
        await attempt(`lockAt(${t})`, () => rt.lockAt(t).tryLock());
        await attempt(`conditionAt(${t})`, () => rt.conditionAt(t).notifyAll());
        await attempt(`int32(${t})`, () => rt.int32(t, t));
      }
      await attempt('alloc(almost 1 GiB): out of memory', () => rt.alloc(0x3fff_0000, 8));
    }
    return { traps: traps.slice(0, 10), trapCount: traps.length, calls };
  },

  /** Until the word at `stop` is non-zero: every millisecond, wakes every waiter on `cond` and on the word at `word`. */
  notifier(rt, { cond, word, stop }) {
    const c = rt.conditionAt(cond);
    const w = rt.int32(word);
    const s = rt.int32(stop);
    while (Atomics.load(s, 0) === 0) {
      c.notifyAll();
      rt.atomics.notify(w, 0);
      sleep(1);
    }
    return 0;
  },

  /** Checks that blocking calls throw in this worker (mayBlock: false) and async ones work. */
  async cannotBlock(rt, { lock }) {
    const l = rt.lockAt(lock);
    const errors = [];
    for (const f of [() => l.lock(), () => l.lockFor(5)]) {
      try {
        f();
        errors.push('no error');
      } catch (e) {
        errors.push(`${e.constructor.name}: ${e.message}`);
      }
    }
    const got = await l.lockAsync(5000);
    if (got) l.unlock();
    return { errors, got };
  },

  // ----- issue 13: the reader-writer lock -----

  /** Posts 'parking', takes the reader-writer lock at `rw` (`write` or read), posts 'locked', releases it. */
  rwPark(rt, { rw, write }) {
    const l = rt.rwLockAt(rw);
    post('parking');
    if (write) l.write();
    else l.read();
    post('locked');
    if (write) l.unlockWrite();
    else l.unlockRead();
    return true;
  },

  /**
   * `iterations` times: a read or (every `writeEvery`th) a write of the
   * reader-writer lock at `rw`, blocking or (`useAsync`) with readAsync /
   * writeAsync. `occupancy` is an i32: readers add 1, a writer adds 1000, and
   * whoever finds the other side inside counts a violation. Writers add 1 to
   * a plain f64 counter. Returns [violations, writes].
   */
  rwMix(rt, { writeEvery, useAsync, ...data }) {
    return rwLoop(rt, { useAsync, ...data }, async (l, occ, c, i) =>
      i % writeEvery === 0 ? [await writeStep(l, occ, c, useAsync), 1] : [await readStep(l, occ, useAsync), 0],
    );
  },

  /**
   * Takes `holds` of the reader-writer lock at `rw` in order ('read',
   * 'upgradable', 'write', or 'upgrade' of the upgradable read, posting
   * 'upgrading' first), posts 'held', and sleeps until terminated.
   */
  rwHoldForever(rt, { rw, holds }) {
    const l = rt.rwLockAt(rw);
    for (const h of holds) {
      if (h === 'read') l.read();
      else if (h === 'upgradable') l.upgradableRead();
      else if (h === 'write') l.write();
      else {
        post('upgrading');
        l.upgrade();
      }
    }
    post('held');
    sleep(1e9);
  },

  /**
   * Takes the write lock of the reader-writer lock at `rw` and releases it,
   * with the thread stopped inside the step of one of the two (`point`: 2
   * the acquisition, 1 the release): by a trap, whose error it posts as
   * 'stopped', or with `hang`, spinning there after it posts 'stepping'
   * until the test terminates it. Never returns.
   */
  rwStopped(rt, { rw, point, hang = false }) {
    const l = rt.rwLockAt(rw);
    // A read of another lock first: where RwLock's uncontended calls run in
    // JS (js/src/engine.ts), they record one hold only, so the write below
    // and its release go through wasm's steps, as they do elsewhere.
    rt.rwLock().read();
    if (point === 1) l.write();
    armStepTrap(rt, hang ? point + 0x100 : point);
    if (hang) post('stepping');
    try {
      if (point === 1) l.unlockWrite();
      else l.write();
      post('stopped', 'returned');
    } catch (e) {
      post('stopped', String(e));
    }
    sleep(1e9);
  },

  /**
   * Waits on the condition at `cond` with the lock at `lock`, stopped (a
   * trap, or with `hang` spinning until terminated: posts 'stepping' first)
   * between releasing the lock's byte and forgetting its hold; posts
   * 'stopped' with what the wait did.
   */
  condStopped(rt, { lock, cond, hang = false }) {
    const l = rt.lockAt(lock);
    const c = rt.conditionAt(cond);
    l.lock();
    armStepTrap(rt, hang ? 3 + 0x100 : 3);
    if (hang) post('stepping');
    try {
      c.wait(l, 60_000);
      post('stopped', 'returned');
    } catch (e) {
      post('stopped', String(e));
    }
    sleep(1e9);
  },

  /** Takes the lock at `lock` once and releases it; returns 'locked', or what the acquisition threw (an `OwnerDiedError` holds the lock: released too). */
  lockOnce(rt, { lock }) {
    const l = rt.lockAt(lock);
    try {
      l.lock();
    } catch (e) {
      if (e.name === 'OwnerDiedError') l.unlock();
      return `${e.name}: ${e.message}`;
    }
    l.unlock();
    return 'locked';
  },

  /**
   * Takes the lock at `lock`, posts 'held', and once the i32 at `gate`
   * reads non-zero releases it, stopped (spinning until terminated) where a
   * release that must wake a waiter has not given the byte up yet
   * (StepPoint 6, `LockRelease`); posts 'stopped' if the release returned.
   */
  unlockStopped(rt, { lock, gate }) {
    const l = rt.lockAt(lock);
    const g = rt.int32(gate);
    l.lock();
    armStepTrap(rt, 6 + 0x100);
    post('held');
    while (Atomics.load(g, 0) === 0) Atomics.wait(g, 0, 0, 10);
    l.unlock();
    post('stopped', 'returned');
    sleep(1e9);
  },

  /**
   * Allocates a block, stopped inside the kind table's edit of it (`point`:
   * 4 while it changes the table's first copy, 5 the second), spinning
   * there after it posts 'stepping' until the test terminates it.
   */
  allocStopped(rt, { point }) {
    armStepTrap(rt, point + 0x100);
    post('stepping');
    rt.alloc(24, 8);
    post('stopped', 'returned');
    sleep(1e9);
  },

  /** Takes `mode` ('read' or 'write') of the reader-writer lock at `rw`, posts 'held', releases it once the i32 at `stop` is non-zero. */
  rwHoldUntilStop(rt, { rw, mode, stop }) {
    const l = rt.rwLockAt(rw);
    const s = rt.int32(stop);
    if (mode === 'write') l.write();
    else l.read();
    post('held');
    while (Atomics.load(s, 0) === 0) rt.atomics.wait(s, 0, 0);
    if (mode === 'write') l.unlockWrite();
    else l.unlockRead();
    return true;
  },

  /** Takes `n` permits of the semaphore at `sem`, posts 'held', and sleeps until terminated. */
  semaphoreHoldForever(rt, { sem, n }) {
    rt.semaphoreAt(sem).acquire(n);
    post('held');
    sleep(1e9);
  },

  /**
   * Takes an upgradable read of `rw` and posts 'upgradable', then upgrades
   * (both async with `useAsync`) and returns what the i32 at `left` read
   * once upgraded (the test sets it just before its reader leaves).
   */
  async rwUpgrade(rt, { rw, left, useAsync }) {
    const l = rt.rwLockAt(rw);
    if (useAsync) await l.upgradableReadAsync();
    else l.upgradableRead();
    post('upgradable');
    if (useAsync) await l.upgradeAsync();
    else l.upgrade();
    const sawLeft = Atomics.load(rt.int32(left), 0);
    l.unlockWrite();
    return sawLeft;
  },

  /**
   * rwMix with upgradable reads: every 4th iteration an upgradable read,
   * which every 8th iteration upgrades to add 1 to the counter it read;
   * every 4th + 1 a write; the rest reads. `occupancy`
   * as in rwMix; `upgradable` counts upgradable readers inside (at most 1).
   * An upgrade must find the counter as it read it. Returns [violations, writes].
   */
  rwUpgradeMix(rt, { upgradable, useAsync, ...data }) {
    const upg = rt.int32(upgradable);
    return rwLoop(rt, { useAsync, ...data }, async (l, occ, c, i) => {
      if (i % 4 === 1) return [await writeStep(l, occ, c, useAsync, () => Atomics.load(upg, 0) !== 0), 1];
      if (i % 4 !== 0) return [await readStep(l, occ, useAsync), 0];
      let violations = 0;
      if (useAsync) await l.upgradableReadAsync();
      else l.upgradableRead();
      if (Atomics.add(upg, 0, 1) !== 0 || Atomics.add(occ, 0, 1) >= 1000) violations++;
      const seen = c[0];
      Atomics.sub(occ, 0, 1);
      if (i % 8 !== 0) {
        Atomics.sub(upg, 0, 1);
        l.unlockUpgradable();
        return [violations, 0];
      }
      if (useAsync) await l.upgradeAsync();
      else l.upgrade();
      if (Atomics.add(occ, 0, 1000) !== 0 || c[0] !== seen) violations++;
      c[0] = seen + 1;
      Atomics.sub(occ, 0, 1000);
      Atomics.sub(upg, 0, 1);
      l.unlockWrite();
      return [violations, 1];
    });
  },

  /**
   * Posts 'calling', then calls the Once at `once` (callOnceAsync with
   * `useAsync`) with a function that sleeps `ms` and adds 1 to the f64 at
   * `counter`. Returns [ran, the counter after], or 'poisoned' if it got
   * OncePoisonedError.
   */
  async onceCall(rt, { once, counter, ms, useAsync }) {
    const o = rt.onceAt(once);
    const c = rt.float64(counter);
    const fn = () => {
      sleep(ms);
      c[0] = c[0] + 1;
    };
    post('calling');
    try {
      const ran = useAsync ? await o.callOnceAsync(fn) : o.callOnce(fn);
      return [ran, c[0]];
    } catch (e) {
      if (e instanceof OncePoisonedError) return 'poisoned';
      throw e;
    }
  },

  /** Runs the Once at `once` with a function that posts 'running' and sleeps until terminated. */
  onceRunForever(rt, { once }) {
    rt.onceAt(once).callOnce(() => {
      post('running');
      sleep(1e9);
    });
  },

  /**
   * `iterations` times: take 1 to `bound` permits of the semaphore at `sem`
   * (blocking, or `useAsync`), count them into the i32 `held`, and give them
   * back; returns how often `held` passed `bound`.
   */
  async semaphoreMix(rt, { sem, held, bound, iterations, useAsync }) {
    const s = rt.semaphoreAt(sem);
    const h = rt.int32(held);
    let violations = 0;
    for (let i = 0; i < iterations; i++) {
      const n = (i % bound) + 1;
      if (useAsync) await s.acquireAsync(n);
      else s.acquire(n);
      if (Atomics.add(h, 0, n) + n > bound) violations++;
      Atomics.sub(h, 0, n);
      s.release(n);
    }
    return violations;
  },

  /**
   * Posts 'waiting', then waits once at the barrier (`waitAsync` with
   * `useAsync`; `waitFor` with a `timeout`). Returns 'leader', 'passed',
   * 'broken' or 'timed out' (a BrokenBarrierError), or another error's text.
   */
  async barrierWaitOnce(rt, { barrier, useAsync, timeout }) {
    const b = rt.barrierAt(barrier);
    post('waiting');
    try {
      const leader = useAsync ? await b.waitAsync(timeout) : timeout === undefined ? b.wait() : b.waitFor(timeout);
      return leader ? 'leader' : 'passed';
    } catch (e) {
      if (e instanceof BrokenBarrierError) return e.timedOut ? 'timed out' : 'broken';
      return `${e.name}: ${e.message}`;
    }
  },

  /**
   * Waits at the barrier (async with `useAsync`) once for every ticket it
   * takes from the i32 `tickets` while fewer than `arrivals` were taken.
   * Returns [leaderships, arrivals].
   */
  async barrierPool(rt, { barrier, tickets, arrivals, useAsync }) {
    const b = rt.barrierAt(barrier);
    const t = rt.int32(tickets);
    let leaderships = 0;
    let mine = 0;
    while (Atomics.add(t, 0, 1) < arrivals) {
      mine++;
      if (useAsync ? await b.waitAsync() : b.wait()) leaderships++;
    }
    return [leaderships, mine];
  },

  /**
   * `rounds` times: add 1 to the i32 `arrived`, wait at the barrier, and
   * check that all `parties` arrived for this round. Returns [violations, leaderships].
   */
  async barrierRounds(rt, { barrier, arrived, parties, rounds, useAsync }) {
    const b = rt.barrierAt(barrier);
    const a = rt.int32(arrived);
    let violations = 0;
    let leaderships = 0;
    for (let round = 0; round < rounds; round++) {
      Atomics.add(a, 0, 1);
      const leader = useAsync ? await b.waitAsync() : b.wait();
      if (Atomics.load(a, 0) < parties * (round + 1)) violations++;
      if (leader) leaderships++;
      if (useAsync) await b.waitAsync();
      else b.wait();
    }
    return [violations, leaderships];
  },
};

const rt = await Runtime.attach(handle, mayBlock === undefined ? {} : { mayBlock });
const value = await tasks[task](rt, args);
if (value === NO_CLOSE) {
  post('done', true);
} else {
  rt.close();
  post('done', value);
}
