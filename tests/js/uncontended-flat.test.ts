// Lock's lock()/unlock() written out flat in JS (js/src/engine.ts,
// `LOCK_FLAT_IN_JS`): SpiderMonkey takes that form by itself; this file
// selects it on V8 (tests/js/lock-path-flat.mjs, imported first) and checks
// that the uncontended pair never calls wasm, that everything else goes to
// the exports the layered form would call, and that the thread's hold
// record stays right for the reaper.
import './lock-path-flat.mjs';
import { describe, expect, it } from 'vitest';
import { rt, spawn, useRuntime } from './helpers.js';
import { nextOwnerAfterDeath, pairCalls, preload, record, wasmCalls } from './wasm-calls.js';

useRuntime();

/** What a worker needs to take the flat form too. */
const FLAT = preload('./lock-path-flat.mjs');

describe('Lock: lock()/unlock() written out flat in JS', () => {
  it('the uncontended pair and withLock never call wasm and record the hold while held; tryLock keeps the wasm path', () => {
    const lock = rt.lock();
    expect(pairCalls(lock)).toEqual({ calls: [], seen: [lock.address, 0] });
    const seen: [number, number][] = [];
    expect(wasmCalls(() => lock.withLock(() => seen.push(record(lock))))).toEqual([]);
    expect(seen).toEqual([[lock.address, 0]]);
    expect(record(lock)).toEqual([-1, 0]);
    const inside = () => {
      throw new Error('inside');
    };
    expect(() => lock.withLock(inside)).toThrow('inside');
    expect(record(lock)).toEqual([-1, 0]);
    expect(lock.isLocked()).toBe(false);
    expect(wasmCalls(() => expect(lock.tryLock()).toBe(true))).toEqual(['try_lock']);
    lock.unlock();
  });

  it('a second hold, a refused relock and the unlock of a free Lock go to wasm, with the records right', () => {
    const [a, b] = [rt.lock(), rt.lock()];
    a.lock(); // JS
    expect(wasmCalls(() => b.lock())).toEqual(['lock_seen']); // a second hold: wasm keeps the list
    expect(record(a)).toEqual([b.address, 1]);
    expect(() => a.lock()).toThrow(/already holds/);
    expect(wasmCalls(() => a.unlock())).toEqual(['unlock_seen']); // not the only hold
    expect(record(a)).toEqual([b.address, 0]);
    expect(wasmCalls(() => b.unlock())).toEqual([]); // the only hold again: JS
    expect(record(a)).toEqual([-1, 0]);
    expect(() => a.unlock()).toThrow(/not locked/);
  });

  it('with diagnostics on, lock() and unlock() report to them', () => {
    const lock = rt.lock();
    rt.setHoldTracking(true);
    try {
      const calls = wasmCalls(() => {
        lock.lock();
        expect(rt.diagnostics().holds.map((h) => h.address)).toEqual([lock.address]);
        lock.unlock();
      });
      expect(calls.filter((c) => c !== 'diag_snapshot')).toEqual(['lock_seen', 'unlock_seen']);
    } finally {
      rt.setHoldTracking(false);
    }
  });

  it('a worker that took a lock flat and was terminated: the next owner is told (OwnerDiedError)', async () => {
    expect(await nextOwnerAfterDeath(FLAT)).toBe('owner-died');
  });

  it('a release with a thread parked goes through wasm, which wakes it', async () => {
    const lock = rt.lock();
    lock.lock(); // JS
    const w = spawn(rt, 'park', { lock: lock.address }, FLAT);
    await w.next('parking');
    await new Promise((r) => setTimeout(r, 50));
    expect(wasmCalls(() => lock.unlock())).toEqual(['unlock_seen']);
    await w.done;
  });
});
