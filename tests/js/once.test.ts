// Once from JS (issue 13): one run however many threads ask, the others
// waiting (blocking workers, async page-style workers, the page itself);
// poisoning as Rust's parklot::Once: a run that throws, or whose worker
// dies, poisons it; callOnce then throws OncePoisonedError, callOnceForce
// runs again.
import { describe, expect, it } from 'vitest';
import { OncePoisonedError, Runtime } from '../../js/dist/index.js';
import { outcome, rt, sleep, spawn, useRuntime, withTimeout } from './helpers.js';

const DEADLINE_MS = 30_000;

useRuntime();

/** Polls `f` until it returns true, or fails naming `what` after the deadline. */
async function until(f: () => boolean, what: string): Promise<void> {
  const end = performance.now() + DEADLINE_MS;
  while (!f()) {
    if (performance.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(5);
  }
}

describe('Once', () => {
  it('runs once: blocking and async workers wait for the page\'s run, and see its effect', async () => {
    const once = rt.once();
    const counter = rt.float64(rt.alloc(8, 8));
    expect(once.state()).toBe('new');
    const args = { once: once.address, counter: counter.byteOffset, ms: 0 };
    const workers = [
      spawn(rt, 'onceCall', { ...args, useAsync: false }),
      spawn(rt, 'onceCall', { ...args, useAsync: true, mayBlock: false }),
    ];
    const ran = await once.callOnceAsync(async () => {
      await Promise.all(workers.map((w) => w.next('calling')));
      await sleep(50); // they wait meanwhile
      expect(once.state()).toBe('running');
      counter[0] = 1;
    });
    expect(ran).toBe(true);
    expect(await withTimeout(Promise.all(workers.map((w) => w.done)), DEADLINE_MS, 'the workers')).toEqual([
      [false, 1],
      [false, 1],
    ]);
    expect(once.done).toBe(true);
    expect(once.callOnce(() => { counter[0] = 99; })).toBe(false);
    expect(counter[0]).toBe(1);
  });

  it('four workers race: exactly one runs, everyone returns after its run', async () => {
    const once = rt.once();
    const counter = rt.float64(rt.alloc(8, 8));
    const args = { once: once.address, counter: counter.byteOffset, ms: 30 };
    const workers = [false, false, true, true].map((useAsync) =>
      spawn(rt, 'onceCall', { ...args, useAsync, ...(useAsync ? { mayBlock: false } : {}) }),
    );
    const results = (await withTimeout(Promise.all(workers.map((w) => w.done)), DEADLINE_MS, 'the workers')) as [boolean, number][];
    expect(results.filter(([ran]) => ran)).toHaveLength(1);
    expect(results.map(([, seen]) => seen)).toEqual([1, 1, 1, 1]);
    expect(await once.callOnceAsync(() => { counter[0] = 99; })).toBe(false);
    expect(counter[0]).toBe(1);
  });

  it('a run that throws poisons it, here and in the workers waiting for it; callOnceForce runs again', async () => {
    const once = rt.once();
    const counter = rt.float64(rt.alloc(8, 8));
    const args = { once: once.address, counter: counter.byteOffset, ms: 0 };
    const workers = [
      spawn(rt, 'onceCall', { ...args, useAsync: false }),
      spawn(rt, 'onceCall', { ...args, useAsync: true, mayBlock: false }),
    ];
    const failed = once.callOnceAsync(async () => {
      await Promise.all(workers.map((w) => w.next('calling')));
      await sleep(50);
      throw new Error('boom');
    });
    await expect(failed).rejects.toThrow('boom');
    expect(await withTimeout(Promise.all(workers.map((w) => w.done)), DEADLINE_MS, 'the workers')).toEqual(['poisoned', 'poisoned']);
    expect(once.state()).toBe('poisoned');
    expect(once.done).toBe(false);
    expect(outcome(() => once.callOnce(() => {}))).toMatch(/^OncePoisonedError: parklot: Once.callOnce\(\): this Once is poisoned: .*use callOnceForce\(fn\) to run it again/);
    await expect(once.callOnceAsync(() => {})).rejects.toBeInstanceOf(OncePoisonedError);
    expect(outcome(() => once.callOnce(() => { throw new TypeError('sync boom'); }))).toMatch(/^OncePoisonedError/); // did not run
    let told: boolean | undefined;
    expect(once.callOnceForce((poisoned) => { told = poisoned; })).toBe(true);
    expect(told).toBe(true);
    expect(once.state()).toBe('done');
    expect(once.callOnceForce(() => { told = undefined; })).toBe(false);
    expect(told).toBe(true);
  });

  it('a synchronous throw poisons it too, and the error reaches the caller', () => {
    const once = rt.once();
    expect(outcome(() => once.callOnce(() => { throw new RangeError('bad'); }))).toBe('RangeError: bad');
    expect(once.state()).toBe('poisoned');
    let told: boolean | undefined;
    once.callOnceForce((p) => { told = p; });
    expect(told).toBe(true);
    expect(once.done).toBe(true);
  });

  it('a worker that dies running it poisons it (reaped), waking whoever waited', async () => {
    const once = rt.once();
    const w = spawn(rt, 'onceRunForever', { once: once.address });
    await w.next('running');
    const waiting = once.callOnceAsync(() => {});
    await sleep(20);
    await w.worker.terminate();
    await expect(withTimeout(waiting, DEADLINE_MS, 'the waiting call')).rejects.toBeInstanceOf(OncePoisonedError);
    await until(() => once.state() === 'poisoned', 'the once to be poisoned');
    let told: boolean | undefined;
    expect(once.callOnceForce((p) => { told = p; })).toBe(true);
    expect(told).toBe(true);
  });

  it('errors that teach: a call from inside its own function, a missing function, a thread that may not block', async () => {
    const once = rt.once();
    expect(outcome(() => once.callOnce(() => once.callOnce(() => {})))).toMatch(/^TypeError: parklot: Once.callOnce\(\): called while this thread runs this Once's function/);
    expect(once.state()).toBe('poisoned'); // the outer run threw
    // @ts-expect-error: not a function
    expect(outcome(() => rt.once().callOnce(42))).toMatch(/^TypeError: parklot: Once.callOnce\(\): pass the function to run once, got number/);
    expect(() => rt.onceAt(-1)).toThrow(RangeError);
    const page = await Runtime.attach(rt.handle(), { mayBlock: false });
    try {
      const busy = rt.once();
      const w = spawn(rt, 'onceRunForever', { once: busy.address });
      await w.next('running');
      expect(outcome(() => page.onceAt(busy.address).callOnce(() => {}))).toMatch(/would block this thread.*use await once.callOnceAsync\(fn\)/);
      await w.worker.terminate();
    } finally {
      page.close();
    }
  });
});
