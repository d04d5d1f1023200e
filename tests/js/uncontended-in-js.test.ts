// The uncontended calls of Lock and Semaphore in JS (js/src/engine.ts,
// `SWAP_IN_JS`): JavaScriptCore takes that path by itself; this file
// selects it on V8 (tests/js/lock-path-js.mjs, imported first) and checks
// that the path never calls wasm, keeps the thread's hold record of Locks
// (wasm/src/threads.rs, `HeldLocks`) right for every mix of JS and wasm
// acquisitions, leaves waking to wasm, and works beside threads on the wasm
// path.
import './lock-path-js.mjs';
import { describe, expect, it } from 'vitest';
import { type Lock, OwnerDiedError, type RwLock, type Semaphore } from '../../js/dist/index.js';
import type { Core } from '../../js/dist/core.js';
import { MAX_PERMITS } from '../../js/dist/semaphore.js';
import { allDone, openGate, outcome, rt, sleep, spawn, untilQueued, useRuntime } from './helpers.js';
import { lockCore, nextOwnerAfterDeath, pairCalls, preload, record, threadCore, wasmCalls } from './wasm-calls.js';

useRuntime();

/** What a worker needs to take the JS path too. */
const JS_PATH = preload('./lock-path-js.mjs');

describe('Lock: the uncontended path in JS', () => {
  it('lock()/unlock(), withLock, tryLock and lockFor never call wasm; the hold is recorded while held', () => {
    const lock = rt.lock();
    expect(pairCalls(lock)).toEqual({ calls: [], seen: [lock.address, 0] });
    const seen: [number, number][] = [];
    const calls = wasmCalls(() => {
      lock.withLock(() => seen.push(record(lock)));
      expect(lock.tryLock()).toBe(true);
      lock.unlock();
      expect(lock.lockFor(0)).toBe(true);
      lock.unlock();
    });
    expect(calls).toEqual([]);
    expect(seen).toEqual([[lock.address, 0]]);
    expect(record(lock)).toEqual([-1, 0]);
    expect(lock.isLocked()).toBe(false);
  });

  it('a second lock, and releases out of order, go through wasm and keep the record right', () => {
    const [a, b, c] = [rt.lock(), rt.lock(), rt.lock()];
    const calls = wasmCalls(() => {
      a.lock(); // JS
      b.lock(); // nested: wasm
      c.lock(); // wasm
      expect(record(a)).toEqual([c.address, 2]);
      a.unlock(); // not the last taken: wasm
      expect(record(a)).toEqual([c.address, 1]);
      c.unlock(); // the last taken, another held: wasm
      expect(record(a)).toEqual([b.address, 0]);
      b.unlock(); // the only one: JS
    });
    expect(calls).toEqual(['lock', 'lock', 'unlock', 'unlock']);
    expect(record(a)).toEqual([-1, 0]);
    expect([a.isLocked(), b.isLocked(), c.isLocked()]).toEqual([false, false, false]);
  });

  it('refuses what wasm refuses: a relock, an unlock of a free lock, a lock freed', () => {
    const lock = rt.lock();
    lock.lock();
    expect(outcome(() => lock.lock())).toMatch(/^TypeError: parklot: Lock.lock\(\): .*already holds/);
    expect(outcome(() => lock.tryLock())).toBe('returned false');
    lock.unlock();
    expect(outcome(() => lock.unlock())).toMatch(/^TypeError: parklot: Lock.unlock\(\): unlock of a lock that is not locked/);
    expect(record(lock)).toEqual([-1, 0]);
    lock.free();
    expect(outcome(() => lock.lock())).toMatch(/^TypeError: parklot: Lock.lock\(\): .*freed/);
    expect(outcome(() => lock.unlock())).toMatch(/^TypeError: parklot: Lock.unlock\(\): .*freed/);
    expect(record(lock)).toEqual([-1, 0]);
  });

  it('an unlock by a thread that does not hold it is refused, the holder keeps it', async () => {
    const lock = rt.lock();
    lock.lock();
    const w = spawn(rt, 'unlockOther', { lock: lock.address }, JS_PATH);
    expect(await w.done).toMatch(/held by another thread/);
    expect(lock.isLocked()).toBe(true);
    expect(record(lock)).toEqual([lock.address, 0]);
    lock.unlock();
  });

  it('with diagnostics on, every call reports to them (through wasm); a hold taken in JS before is released right', () => {
    const [early, late] = [rt.lock(), rt.lock()];
    early.lock(); // JS, unseen
    rt.setHoldTracking(true);
    try {
      const calls = wasmCalls(() => {
        late.lock();
        expect(rt.diagnostics().holds.map((h) => h.address)).toEqual([late.address]);
        late.unlock();
        early.unlock();
      });
      expect(calls.filter((c) => c !== 'diag_snapshot')).toEqual(['lock_seen', 'unlock_seen', 'unlock_seen']);
    } finally {
      rt.setHoldTracking(false);
    }
    expect(record(early)).toEqual([-1, 0]);
    expect(wasmCalls(() => early.withLock(() => {}))).toEqual([]);
  });

  it('a release with a thread parked goes through wasm, which hands over or wakes it', async () => {
    const lock = rt.lock();
    lock.lock(); // JS
    const w = spawn(rt, 'park', { lock: lock.address });
    await w.next('parking');
    await untilQueued(rt, lock.address);
    const calls = wasmCalls(() => lock.unlock());
    expect(calls).toEqual(['unlock']);
    await w.done;
    expect(lock.isLocked()).toBe(false);
  });

  it('a worker that took a lock in JS and was terminated: the next owner is told (OwnerDiedError)', async () => {
    expect(await nextOwnerAfterDeath(JS_PATH)).toBe('owner-died');
  });

  it('a lock made after the memory grew is taken in JS too', () => {
    const before = (lockCore(rt.lock()) as Core).byteLength();
    const big = rt.alloc(64 << 20, 8);
    const lock = rt.lock();
    expect((lockCore(lock) as Core).byteLength()).toBeGreaterThan(before);
    expect(wasmCalls(() => lock.withLock(() => {}))).toEqual([]);
    rt.free(big, 64 << 20, 8);
  });

  it('4 workers, two on the JS path and two on the wasm path, x 200,000 increments: exact', async () => {
    const lock = rt.lock();
    const counter = rt.alloc(8, 8);
    const gate = rt.alloc(4, 4);
    const iterations = 200_000;
    const workers = [JS_PATH, JS_PATH, undefined, undefined].map((argv) => spawn(rt, 'increment', { lock: lock.address, counter, iterations, gate }, argv));
    await Promise.all(workers.map((w) => w.next('ready')));
    openGate(rt, gate);
    await allDone(workers, 60_000, 'the increment workers');
    expect(rt.float64(counter)[0]).toBe(4 * iterations);
    expect(lock.isLocked()).toBe(false);
  });

  it('after close(), calls throw the closed error and change nothing', async () => {
    const { Runtime } = await import('../../js/dist/index.js');
    const other = await Runtime.create();
    const lock = other.lock();
    lock.lock();
    other.close();
    expect(outcome(() => lock.unlock())).toMatch(/closed/);
    expect(outcome(() => lock.lock())).toMatch(/closed/);
    expect(outcome(() => lock.tryLock())).toMatch(/closed/);
  });
});

describe('Semaphore: the uncontended path in JS', () => {
  it('acquire/release, tryAcquire, acquireFor and withPermits never call wasm; the count is exact', () => {
    const sem: Semaphore = rt.semaphore(3);
    const calls = wasmCalls(() => {
      for (let i = 0; i < 1000; i++) {
        sem.acquire(2);
        sem.release(2);
      }
      expect(sem.tryAcquire(3)).toBe(true);
      expect(sem.acquireFor(1, 0)).toBe(false); // none left: wasm's try says no
      sem.release(3);
      expect(sem.withPermits(3, () => 'ran')).toBe('ran');
    });
    expect(calls).toEqual(['semaphore_acquire_for']);
    expect(sem.available()).toBe(3);
  });

  it('more permits than are free, and more than MAX_PERMITS free, go to wasm, which refuses or waits', () => {
    const sem = rt.semaphore(MAX_PERMITS - 1);
    expect(outcome(() => sem.release(2))).toMatch(/^RangeError: parklot: Semaphore.release\(\): more than 1073741823 permits would be free/);
    sem.release(1);
    expect(sem.available()).toBe(MAX_PERMITS);
    expect(sem.tryAcquire(MAX_PERMITS)).toBe(true);
    expect(sem.available()).toBe(0);
    expect(sem.tryAcquire(1)).toBe(false);
  });

  it('a release with a thread parked goes through wasm, which wakes it', async () => {
    const sem = rt.semaphore(1);
    sem.acquire(); // JS
    const w = spawn(rt, 'semaphoreHoldForever', { sem: sem.address, n: 1 });
    await untilQueued(rt, sem.address);
    const calls = wasmCalls(() => sem.release());
    expect(calls).toEqual(['semaphore_release']);
    await w.next('held');
    expect(sem.available()).toBe(0);
    await w.worker.terminate();
  });
});

/** This thread's reader-writer hold recorded by JS (`Core.held[2]`): the lock's address plus 1 (read) or 2 (write), or 0. */
function rwRecord(): number {
  return threadCore().held[2]!;
}

describe('RwLock: the uncontended path in JS', () => {
  it('read/write, their releases, withRead/withWrite, the tries and timeouts of 0 never call wasm; the hold is recorded while held', () => {
    const rw: RwLock = rt.rwLock();
    const seen: number[] = [];
    const calls = wasmCalls(() => {
      for (let i = 0; i < 1000; i++) {
        rw.read();
        if (i === 0) seen.push(rwRecord());
        rw.unlockRead();
        rw.write();
        if (i === 0) seen.push(rwRecord());
        rw.unlockWrite();
      }
      rw.withRead(() => seen.push(rwRecord()));
      rw.withWrite(() => seen.push(rwRecord()));
      expect(rw.tryRead()).toBe(true);
      rw.unlockRead();
      expect(rw.tryWrite()).toBe(true);
      rw.unlockWrite();
      expect(rw.readFor(0)).toBe(true);
      rw.unlockRead();
      expect(rw.writeFor(0)).toBe(true);
      rw.unlockWrite();
    });
    expect(calls).toEqual([]);
    expect(seen).toEqual([rw.address + 1, rw.address + 2, rw.address + 1, rw.address + 2]);
    expect(rwRecord()).toBe(0);
    expect(rw.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
  });

  it('a second hold, a downgrade and the upgradable read go through wasm, and every release finds its record', () => {
    const [a, b] = [rt.rwLock(), rt.rwLock()];
    const calls = wasmCalls(() => {
      a.read(); // JS
      b.read(); // a second: wasm
      a.read(); // again: wasm
      expect(rwRecord()).toBe(a.address + 1);
      a.unlockRead(); // the one JS recorded: JS
      expect(rwRecord()).toBe(0);
      a.unlockRead(); // wasm's
      b.unlockRead(); // wasm's
      b.write(); // JS
      b.downgrade(); // wasm: the record JS made becomes a read in wasm's list
      expect(rwRecord()).toBe(0);
      b.unlockRead(); // wasm
      a.upgradableRead(); // never in JS
      a.unlockUpgradable();
    });
    expect(calls).toEqual([
      'rwlock_acquire_for',
      'rwlock_acquire_for',
      'rwlock_release',
      'rwlock_release',
      'rwlock_downgrade',
      'rwlock_release',
      'rwlock_acquire_for',
      'rwlock_release',
    ]);
    expect([a.state().held, b.state().held]).toEqual(['free', 'free']);
  });

  it('refuses what wasm refuses: a write while reading, a read while writing, releases of what is not held', () => {
    const rw = rt.rwLock();
    rw.read(); // JS
    expect(outcome(() => rw.write())).toMatch(/^TypeError: parklot: RwLock.write\(\) would wait for this thread's own hold/);
    expect(outcome(() => rw.unlockWrite())).toMatch(/^TypeError: parklot: RwLock.unlockWrite\(\)/);
    rw.unlockRead();
    expect(outcome(() => rw.unlockRead())).toMatch(/^TypeError: parklot: RwLock.unlockRead\(\)/);
    rw.write(); // JS
    expect(outcome(() => rw.read())).toMatch(/^TypeError: parklot: RwLock.read\(\) would wait for this thread's own hold/);
    expect(outcome(() => rw.tryRead())).toBe('returned false');
    expect(outcome(() => rw.unlockRead())).toMatch(/^TypeError: parklot: RwLock.unlockRead\(\)/);
    rw.unlockWrite();
    expect(rwRecord()).toBe(0);
    rw.free();
    expect(outcome(() => rw.read())).toMatch(/freed/);
  });

  it('a write or read taken in JS with a writer parked is released through wasm, which hands over or wakes it', async () => {
    const rw = rt.rwLock();
    rw.write(); // JS
    const stop = rt.alloc(4, 4);
    const other = spawn(rt, 'rwHoldUntilStop', { rw: rw.address, mode: 'write', stop }, JS_PATH);
    await untilQueued(rt, rw.address);
    expect(wasmCalls(() => rw.unlockWrite())).toEqual(['rwlock_release']);
    await other.next('held');
    expect(rw.state().held).toBe('write');
    openGate(rt, stop);
    await other.done;
    rw.read(); // JS
    const writer = spawn(rt, 'rwPark', { rw: rw.address, write: true }, JS_PATH);
    await writer.next('parking');
    await untilQueued(rt, rw.address);
    expect(wasmCalls(() => rw.unlockRead())).toEqual(['rwlock_release']);
    await writer.done;
    expect(rw.state().held).toBe('free');
  });

  it.each(['write', 'read'] as const)('a worker that took a %s in JS and was terminated: its hold is released (a write as owner-died)', async (mode) => {
    const rw = rt.rwLock();
    const stop = rt.alloc(4, 4);
    const w = spawn(rt, 'rwHoldUntilStop', { rw: rw.address, mode, stop }, JS_PATH);
    await w.next('held');
    await w.worker.terminate();
    // Asynchronously, so that a lost hold fails here (false) instead of blocking the test's thread.
    const got = await rw.writeAsync(3000).then(String, (e: unknown) => (e instanceof OwnerDiedError ? 'owner-died' : String(e)));
    expect(got).toBe(mode === 'write' ? 'owner-died' : 'true');
    rw.unlockWrite();
    // The mark is taken: the next write, in JS, is plain.
    const calls = wasmCalls(() => {
      rw.write();
      rw.unlockWrite();
    });
    expect(calls).toEqual([]);
  });

  it('the owner-died mark reaches a write taken in JS', async () => {
    const rw = rt.rwLock();
    const stop = rt.alloc(4, 4);
    const w = spawn(rt, 'rwHoldUntilStop', { rw: rw.address, mode: 'write', stop }, JS_PATH);
    await w.next('held');
    await w.worker.terminate();
    const deadline = Date.now() + 3000;
    while (rw.state().held !== 'free' && Date.now() < deadline) await sleep(5); // reaped
    let thrown = '';
    const calls = wasmCalls(() => {
      try {
        rw.write(); // JS: the word was free, a mark is set
      } catch (e) {
        thrown = e instanceof OwnerDiedError ? 'owner-died' : String(e);
      }
    });
    expect({ thrown, calls }).toEqual({ thrown: 'owner-died', calls: ['rwlock_owner_died'] });
    rw.unlockWrite();
  });

  it('4 workers, two on the JS path and two on the wasm path, reading and writing: no writer ever meets anyone, the count exact', async () => {
    const rw = rt.rwLock();
    const occupancy = rt.alloc(4, 4);
    const counter = rt.alloc(8, 8);
    const gate = rt.alloc(4, 4);
    const iterations = 50_000;
    const writeEvery = 3;
    const workers = [JS_PATH, JS_PATH, undefined, undefined].map((argv) =>
      spawn(rt, 'rwMix', { rw: rw.address, occupancy, counter, iterations, writeEvery, useAsync: false, gate }, argv),
    );
    await Promise.all(workers.map((w) => w.next('ready')));
    openGate(rt, gate);
    const results = (await allDone(workers, 60_000, 'the reader-writer workers')) as [number, number][];
    expect(results.map(([violations]) => violations)).toEqual([0, 0, 0, 0]);
    const writes = results.reduce((n, [, w]) => n + w, 0);
    expect(rt.float64(counter)[0]).toBe(writes);
    expect(rw.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
  });
});
