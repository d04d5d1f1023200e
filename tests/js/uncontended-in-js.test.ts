// The uncontended calls of Lock and Semaphore in JS (js/src/engine.ts,
// `SWAP_IN_JS`): JavaScriptCore takes that path by itself; this file
// selects it on V8 (tests/js/lock-path-js.mjs, imported first) and checks
// that the path never calls wasm, keeps the thread's hold record of Locks
// (wasm/src/threads.rs, `HeldLocks`) right for every mix of JS and wasm
// acquisitions, leaves waking to wasm, and works beside threads on the wasm
// path.
import './lock-path-js.mjs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Lock, OwnerDiedError, type Semaphore } from '../../js/dist/index.js';
import type { Core } from '../../js/dist/core.js';
import * as lockModule from '../../js/dist/lock.js';
import { MAX_PERMITS } from '../../js/dist/semaphore.js';
import { allDone, openGate, outcome, rt, sleep, spawn, useRuntime } from './helpers.js';

useRuntime();

/** The Core of a Lock (lock.ts's internal brand check, which the typings leave out). */
const lockCore = (lockModule as unknown as { lockCore(lock: unknown): Core | undefined }).lockCore;

/** What a worker needs to take the JS path too. */
const JS_PATH = ['--import', fileURLToPath(new URL('./lock-path-js.mjs', import.meta.url))];

/** The test file's runtime's Core (of this thread), once `wasmCalls` asked for it. */
let probe: Core | undefined;

/**
 * Runs `f` with every call the runtime's primitives make into wasm recorded,
 * by export name: through the exports themselves (`core.raw`, Lock's hot
 * paths) and through the guarded glue (`core.glue`, the rest).
 */
function wasmCalls(f: () => void): string[] {
  const core = (probe ??= lockCore(rt.lock()) as Core);
  const calls: string[] = [];
  const counting = (of: object): Record<string, unknown> => {
    // A copy, not a Proxy: the exports object is frozen.
    const counted: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(of)) {
      counted[name] =
        typeof value === 'function'
          ? (...args: unknown[]) => {
              calls.push(name);
              return (value as (...a: unknown[]) => unknown)(...args);
            }
          : value;
    }
    return counted;
  };
  const { raw, glue } = core;
  Object.defineProperty(core, 'raw', { value: counting(raw), configurable: true });
  Object.defineProperty(core, 'glue', { value: counting(glue), configurable: true });
  try {
    f();
  } finally {
    Object.defineProperty(core, 'raw', { value: raw, configurable: true });
    Object.defineProperty(core, 'glue', { value: glue, configurable: true });
  }
  return calls;
}

/** This thread's hold record: [the Lock taken last or -1, how many others]. */
function record(lock: Lock): [number, number] {
  const held = (lockCore(lock) as Core).held;
  return [held[0]!, held[1]!];
}

describe('Lock: the uncontended path in JS', () => {
  it('lock()/unlock(), withLock, tryLock and lockFor never call wasm; the hold is recorded while held', () => {
    const lock = rt.lock();
    const seen: [number, number][] = [];
    const calls = wasmCalls(() => {
      for (let i = 0; i < 1000; i++) {
        lock.lock();
        if (i === 0) seen.push(record(lock));
        lock.unlock();
      }
      lock.withLock(() => seen.push(record(lock)));
      expect(lock.tryLock()).toBe(true);
      lock.unlock();
      expect(lock.lockFor(0)).toBe(true);
      lock.unlock();
    });
    expect(calls).toEqual([]);
    expect(seen).toEqual([
      [lock.address, 0],
      [lock.address, 0],
    ]);
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
    await sleep(50);
    const calls = wasmCalls(() => lock.unlock());
    expect(calls).toEqual(['unlock']);
    await w.done;
    expect(lock.isLocked()).toBe(false);
  });

  it('a worker that took a lock in JS and was terminated: the next owner is told (OwnerDiedError)', async () => {
    const lock = rt.lock();
    const w = spawn(rt, 'holdForever', { lock: lock.address }, JS_PATH);
    await w.next('held');
    await w.worker.terminate();
    // Asynchronously, so that a lost hold fails here (false) instead of blocking the test's thread.
    const got = await lock.lockAsync(3000).then(String, (e: unknown) => (e instanceof OwnerDiedError ? 'owner-died' : String(e)));
    expect(got).toBe('owner-died');
    lock.unlock();
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
    await sleep(100); // parked by now
    const calls = wasmCalls(() => sem.release());
    expect(calls).toEqual(['semaphore_release']);
    await w.next('held');
    expect(sem.available()).toBe(0);
    await w.worker.terminate();
  });
});
