// The reader-writer lock's upgradable reads from JS (issue 13): an
// upgradable read shares with readers but excludes writers and other
// upgradable readers; an upgrade waits for the readers to leave and keeps
// new ones out meanwhile; blocking and async (page-style) workers mix all
// four kinds of acquisition on one lock without overlap or lost updates.
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { checkRwMix, outcome, rt, sleep, spawn, useRuntime, withTimeout } from './helpers.js';

const DEADLINE_MS = 30_000;

useRuntime();

describe('RwLock upgradable reads', () => {
  for (const policy of ['prefer-writers', 'prefer-readers'] as const) {
    it(`${policy}: coexists with readers, excludes another upgradable reader and writers; timeouts; downgrades`, async () => {
      const lock = rt.rwLock({ policy });
      lock.read();
      expect(lock.tryUpgradableRead()).toBe(true);
      expect(lock.state()).toEqual({ held: 'read', readers: 2, upgradable: true });
      expect(lock.tryUpgradableRead()).toBe(false);
      expect(lock.tryWrite()).toBe(false);
      expect(lock.tryRead()).toBe(true); // plain readers still join
      lock.unlockRead();
      const start = performance.now();
      expect(lock.upgradableReadFor(10)).toBe(false);
      expect(await lock.upgradableReadAsync(10)).toBe(false);
      expect(lock.tryUpgrade()).toBe(false); // a plain reader still reads
      expect(lock.upgradeFor(10)).toBe(false);
      expect(await lock.upgradeAsync(10)).toBe(false);
      expect(performance.now() - start).toBeGreaterThanOrEqual(39);
      expect(lock.state()).toEqual({ held: 'read', readers: 2, upgradable: true }); // a timed-out upgrade keeps the upgradable read
      expect(lock.tryRead()).toBe(true); // ... and lets readers in again
      lock.unlockRead();
      lock.unlockRead();
      expect(lock.tryUpgrade()).toBe(true);
      expect(lock.state()).toEqual({ held: 'write', readers: 0, upgradable: false });
      expect(lock.tryRead()).toBe(false);
      lock.downgradeToUpgradable();
      expect(lock.state()).toEqual({ held: 'read', readers: 1, upgradable: true });
      expect(lock.tryRead()).toBe(true);
      expect(lock.tryUpgradableRead()).toBe(false);
      lock.downgradeUpgradable();
      expect(lock.state()).toEqual({ held: 'read', readers: 2, upgradable: false });
      expect(lock.tryUpgradableRead()).toBe(true);
      lock.unlockUpgradable();
      lock.unlockRead();
      lock.unlockRead();
      lock.write();
      lock.downgrade();
      expect(lock.state()).toEqual({ held: 'read', readers: 1, upgradable: false });
      lock.unlockRead();
      lock.upgradableRead();
      lock.upgrade(); // alone: no wait
      lock.unlockWrite();
      expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
    });
  }

  for (const useAsync of [false, true]) {
    it(`a worker's ${useAsync ? 'async (page-style) ' : ''}upgrade waits for the reader to leave and keeps new readers out meanwhile`, async () => {
      const lock = rt.rwLock();
      const left = rt.int32(rt.alloc(4, 4));
      lock.read();
      const w = spawn(rt, 'rwUpgrade', { rw: lock.address, left: left.byteOffset, useAsync, ...(useAsync ? { mayBlock: false } : {}) });
      await w.next('upgradable');
      await sleep(50);
      expect(lock.state()).toEqual({ held: 'write', readers: 2, upgradable: true }); // the upgrade waits
      expect(lock.tryRead()).toBe(false);
      Atomics.store(left, 0, 1);
      lock.unlockRead();
      expect(await withTimeout(w.done, DEADLINE_MS, 'the upgrade')).toBe(1);
      expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
    });
  }

  it('the page waits asynchronously for an upgradable read a worker holds, and for its own upgrade', async () => {
    const lock = rt.rwLock();
    const w = spawn(rt, 'rwHoldForever', { rw: lock.address, holds: ['read', 'upgradable'] });
    await w.next('held');
    const mine = lock.upgradableReadAsync(DEADLINE_MS);
    await sleep(20);
    expect(lock.state().readers).toBe(2); // queued, not in
    await w.worker.terminate(); // reaped: its read and upgradable read are released
    expect(await withTimeout(mine, DEADLINE_MS, 'upgradableReadAsync')).toBe(true);
    expect(lock.state()).toEqual({ held: 'read', readers: 1, upgradable: true });
    expect(await lock.upgradeAsync(DEADLINE_MS)).toBe(true);
    expect(lock.state()).toEqual({ held: 'write', readers: 0, upgradable: false });
    lock.unlockWrite();
  });

  for (const policy of ['prefer-writers', 'prefer-readers'] as const) {
    it(`${policy}: blocking and async workers mix reads, upgradable reads, upgrades and writes; nobody overlaps, no update is lost`, async () => {
      await checkRwMix(rt, rt.rwLock({ policy }), 'rwUpgradeMix', { upgradable: rt.alloc(4, 4), iterations: 8_000 });
    });
  }

  it('close() with async waits pending: they reject, and what the closing thread held is let go', async () => {
    const page = await Runtime.attach(rt.handle(), { mayBlock: false });
    const lock = rt.rwLock();
    const there = page.rwLockAt(lock.address);
    lock.upgradableRead();
    const waitingRead = there.upgradableReadAsync();
    expect(await there.upgradableReadAsync(5)).toBe(false);
    lock.unlockUpgradable();
    expect(await withTimeout(waitingRead, DEADLINE_MS, 'the queued upgradable read')).toBe(true);
    lock.read();
    const upgrading = there.upgradeAsync();
    await sleep(5);
    expect(lock.state()).toEqual({ held: 'write', readers: 2, upgradable: true }); // its upgrade waits for our read
    expect(outcome(() => there.upgradableRead())).toMatch(/RwLock.upgradableRead\(\) would block this thread.*use await lock.upgradableReadAsync\(\)/);
    expect(outcome(() => there.upgradeFor(10))).toMatch(/use await lock.upgradeAsync\(timeout\)/);
    const once = rt.once();
    let release!: () => void;
    const running = once.callOnceAsync(() => new Promise<void>((resolve) => { release = resolve; }));
    const onceWait = page.onceAt(once.address).callOnceAsync(() => {});
    await sleep(5);
    page.close();
    await expect(upgrading).rejects.toThrow(/runtime is closed/);
    await expect(onceWait).rejects.toThrow(/runtime is closed/);
    expect(lock.state()).toEqual({ held: 'read', readers: 1, upgradable: false }); // its upgrade withdrawn, its upgradable read released
    lock.unlockRead();
    expect(lock.tryWrite()).toBe(true);
    lock.unlockWrite();
    release();
    expect(await running).toBe(true);
    expect(once.done).toBe(true);
  });

  it('errors that teach: upgrades, downgrades and releases of what this thread does not hold, and waits for itself', async () => {
    const lock = rt.rwLock();
    expect(outcome(() => lock.upgrade())).toMatch(/^TypeError: parklot: RwLock.upgrade\(\): this thread holds no upgradable read of this lock \(a plain read cannot upgrade\); take one with upgradableRead\(\)/);
    await expect(lock.upgradeAsync()).rejects.toThrow(/holds no upgradable read/);
    lock.read();
    expect(outcome(() => lock.tryUpgrade())).toMatch(/holds no upgradable read/);
    expect(outcome(() => lock.unlockUpgradable())).toMatch(/^TypeError: parklot: RwLock.unlockUpgradable\(\)/);
    expect(outcome(() => lock.downgradeUpgradable())).toMatch(/^TypeError: parklot: RwLock.downgradeUpgradable\(\): this thread does not hold an upgradable read/);
    expect(outcome(() => lock.downgrade())).toMatch(/does not hold the write lock/);
    expect(outcome(() => lock.write())).toMatch(/^TypeError: parklot: RwLock.write\(\) would wait for this thread's own hold/);
    expect(lock.writeFor(5)).toBe(false); // a timed wait just times out
    lock.unlockRead();
    lock.upgradableRead();
    expect(outcome(() => lock.upgradableRead())).toMatch(/would wait for this thread's own hold/);
    lock.unlockUpgradable();
    expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });

    // Another thread's holds are not this thread's to release or upgrade.
    const w = spawn(rt, 'rwHoldForever', { rw: lock.address, holds: ['upgradable'] });
    await w.next('held');
    expect(outcome(() => lock.unlockUpgradable())).toMatch(/^TypeError: parklot: RwLock.unlockUpgradable\(\): the lock is held by another thread/);
    expect(outcome(() => lock.upgrade())).toMatch(/holds no upgradable read/);
    expect(lock.state()).toEqual({ held: 'read', readers: 1, upgradable: true });
    await w.worker.terminate();
  });
});
