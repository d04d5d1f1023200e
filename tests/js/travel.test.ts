// Objects that travel between threads: a Lock or Condition sent through
// postMessage or workerData arrives as a plain tagged form that rt.revive()
// (and attachWorker() in a worker spawnWorker started) make live again; the
// errors for misuse say what to do.
import { MessageChannel, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Barrier, Condition, Lock, Once, Runtime, RwLock, Semaphore, attachWorker, spawnWorker } from '../../js/dist/index.js';
import { rt, useRuntime, withTimeout } from './helpers.js';

useRuntime();

/** `value` after a structured clone, as another thread receives it. */
async function cloned<T>(value: T): Promise<unknown> {
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<unknown>((resolve) => port2.once('message', resolve));
  port1.postMessage(value);
  const out = await received;
  port1.close();
  return out;
}

describe('a Lock and a Condition sent to another thread', () => {
  it('arrive as { kind, address, runtimeId }, and rt.revive() makes them live again', async () => {
    const lock = rt.lock();
    const cond = rt.condition();
    const got = (await cloned({ lock, nested: [cond], n: 1 })) as { lock: object; nested: object[]; n: number };
    expect(got.lock).toEqual({ kind: 'parklot.lock', address: lock.address, runtimeId: lock.runtimeId });
    expect(got.nested[0]).toEqual({ kind: 'parklot.condition', address: cond.address, runtimeId: cond.runtimeId });
    expect(JSON.parse(JSON.stringify(lock))).toEqual(got.lock);
    const live = rt.revive(got) as unknown as { lock: Lock; nested: Condition[]; n: number };
    expect(live.lock).toBeInstanceOf(Lock);
    expect(live.nested[0]).toBeInstanceOf(Condition);
    expect(live.n).toBe(1);
    live.lock.lock();
    expect(lock.isLocked()).toBe(true); // the same byte
    lock.unlock();
  });

  it('so do an RwLock, a Semaphore, a Barrier and a Once, each with its whole state in shared memory', async () => {
    const sent = { rw: rt.rwLock({ policy: 'prefer-readers' }), sem: rt.semaphore(3), barrier: rt.barrier(2), once: rt.once() };
    const got = (await cloned(sent)) as Record<string, object>;
    for (const [name, kind] of [['rw', 'rwlock'], ['sem', 'semaphore'], ['barrier', 'barrier'], ['once', 'once']] as const) {
      expect(got[name]).toEqual({ kind: `parklot.${kind}`, address: sent[name].address, runtimeId: rt.handle().id });
    }
    const live = rt.revive(got as unknown as typeof sent);
    expect(live.rw).toBeInstanceOf(RwLock);
    expect(live.sem).toBeInstanceOf(Semaphore);
    expect(live.barrier).toBeInstanceOf(Barrier);
    expect(live.once).toBeInstanceOf(Once);
    sent.rw.read();
    expect(live.rw.state()).toEqual({ held: 'read', readers: 1, upgradable: false }); // the same word
    sent.rw.unlockRead();
    expect(live.sem.available()).toBe(3);
    live.once.callOnce(() => {});
    expect(sent.once.done).toBe(true);
  });

  it('revive() keeps what is not parklot\'s as it is', () => {
    const plain = { a: [1, 2], b: new Float64Array(2), c: new Map() };
    expect(rt.revive(plain)).toBe(plain);
    expect(rt.revive(7)).toBe(7);
  });

  it('revive() refuses a lock of another runtime, and a malformed one, with a TypeError', async () => {
    const other = await Runtime.create();
    try {
      const foreign = await cloned({ lock: other.lock() });
      expect(() => rt.revive(foreign)).toThrow(/^parklot: revive\(\): the value\.lock is a Lock of another runtime \(id \d+; this one is \d+\)/);
      expect(() => rt.revive({ kind: 'parklot.lock', address: '8' })).toThrow(TypeError);
      const foreignOnce = await cloned({ init: other.once() });
      expect(() => rt.revive(foreignOnce)).toThrow(/^parklot: revive\(\): the value\.init is a Once of another runtime/);
      expect(() => rt.revive({ kind: 'parklot.rwlock', runtimeId: rt.handle().id })).toThrow(/looks like an RwLock but has no numeric address/);
    } finally {
      other.close();
    }
  });
});

describe('spawnWorker / attachWorker', () => {
  it('two workers (one spawned from its URL, one made by hand and handed over) get the lock, the condition and a view of the memory as objects; counter exact', async () => {
    const lock = rt.lock();
    const done = rt.condition();
    const counter = rt.float64(rt.alloc(16, 8), 2);
    const rounds = 50_000;
    const workers: Worker[] = [];
    const reports: Promise<unknown>[] = [];
    const exits: Promise<unknown>[] = [];
    const script = new URL('./travel-worker.mjs', import.meta.url);
    for (const made of [undefined, new Worker(script)]) {
      // From a URL the start message is the worker's workerData; to a Worker made by hand, its first message.
      const worker = made ? await spawnWorker(rt, made, { lock, done, counter, rounds }) : ((await spawnWorker(rt, script, { lock, done, counter, rounds })) as Worker);
      workers.push(worker);
      reports.push(new Promise((resolve) => worker.once('message', resolve)));
      exits.push(new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject)));
    }
    expect(await withTimeout(Promise.all(reports), 30_000, 'workers report')).toEqual([
      { lock: true, done: true, mayBlock: true },
      { lock: true, done: true, mayBlock: true },
    ]);
    await lock.lockAsync();
    while (counter[1]! < 2) await withTimeout(done.waitAsync(lock), 30_000, 'done.waitAsync');
    lock.unlock();
    expect(counter[0]).toBe(2 * rounds);
    expect(await withTimeout(Promise.all(exits), 30_000, 'workers exit')).toEqual([0, 0]);
  });

  it('a worker gets an RwLock, a Semaphore, a Barrier and a Once live, and uses each with the page', async () => {
    const rw = rt.rwLock();
    const sem = rt.semaphore(2);
    const barrier = rt.barrier(2);
    const once = rt.once();
    const counter = rt.float64(rt.alloc(24, 8), 3);
    once.callOnce(() => { counter[2] = 1; });
    rw.write(); // the worker's write waits for this one
    const worker = (await spawnWorker(rt, new URL('./travel-toolkit-worker.mjs', import.meta.url), { rw, sem, barrier, once, counter })) as Worker;
    const exit = new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
    expect(await withTimeout(new Promise((resolve) => worker.once('message', resolve)), 30_000, 'the worker reports')).toEqual({
      rw: true,
      sem: true,
      barrier: true,
      once: true,
    });
    counter[0] = 10;
    rw.unlockWrite();
    await withTimeout(barrier.waitAsync(), 30_000, 'the barrier'); // opens once the worker is there too
    expect([counter[0], counter[1], counter[2]]).toEqual([11, 1, 1]);
    expect(sem.available()).toBe(2);
    expect(await withTimeout(exit, 30_000, 'the worker exits')).toBe(0);
  });

  it('attachWorker() on the main thread, and spawnWorker() without a runtime, throw a TypeError saying why', async () => {
    await expect(attachWorker()).rejects.toThrow(/^parklot: attachWorker\(\) runs in a worker that spawnWorker/);
    await expect(spawnWorker({} as Runtime, 'x.mjs')).rejects.toThrow(/rt must be a Runtime/);
    await expect(spawnWorker(rt, 42 as unknown as string)).rejects.toThrow(/script must be a URL, a string or a Worker/);
  });
});
