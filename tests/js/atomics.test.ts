// rt.atomics against the ECMAScript spec: results ("ok", "not-equal",
// "timed-out"), notify counts, FIFO order, waitAsync's result objects, 32 and
// 64 bits, and argument handling checked against the engine's own Atomics on
// a plain SharedArrayBuffer for a matrix of odd arguments.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { outcome, rt, sleep, spawn, untilQueued, useRuntime } from './helpers.js';

useRuntime();

/** A fresh zeroed i32 (or i64) view of one element in the runtime's memory. */
const word32 = () => rt.int32(rt.alloc(4, 4));
const word64 = () => rt.bigInt64(rt.alloc(8, 8));

/** Whether a promise has settled, after letting queued tasks run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await sleep(10);
  return done;
}

describe('wait', () => {
  it('"not-equal", "timed-out", "ok" (32 bits)', async () => {
    const w = word32();
    expect(rt.atomics.wait(w, 0, 1)).toBe('not-equal');
    expect(rt.atomics.wait(w, 0, 0, 0)).toBe('timed-out');
    const t0 = performance.now();
    expect(rt.atomics.wait(w, 0, 0, 30)).toBe('timed-out');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(29);
    const notifier = spawn(rt, 'notifyAfter', { word: w.byteOffset, delay: 100, store: 1 });
    expect(rt.atomics.wait(w, 0, 0)).toBe('ok'); // blocks this thread until the worker notifies
    expect(await notifier.done).toBe(1);
    expect(w[0]).toBe(1);
  });

  it('"not-equal", "timed-out", "ok" (BigInt64Array)', async () => {
    const w = word64();
    expect(rt.atomics.wait(w, 0, 1n)).toBe('not-equal');
    expect(rt.atomics.wait(w, 0, 0n, 5)).toBe('timed-out');
    w[0] = -(2n ** 63n);
    expect(rt.atomics.wait(w, 0, 2n ** 63n, 0)).toBe('timed-out'); // ToBigInt64 wraps 2^63 to -2^63
    expect(rt.atomics.wait(w, 0, -(2n ** 63n) + 1n, 0)).toBe('not-equal');
    w[0] = 0n;
    const notifier = spawn(rt, 'notifyAfter', { word: w.byteOffset, delay: 100, store: 7n, wide: true });
    expect(rt.atomics.wait(w, 0, 0n, 10_000)).toBe('ok');
    expect(await notifier.done).toBe(1);
  });

  it('a blocking waiter in a worker is woken by notify from this thread', async () => {
    const w = word32();
    const waiter = spawn(rt, 'atomicsWait', { word: w.byteOffset, value: 0 });
    await waiter.next('waiting');
    let woken = 0;
    while (woken === 0) {
      woken = rt.atomics.notify(w, 0, 1); // 0 until the worker is queued
      await sleep(5);
    }
    expect(await waiter.next('woke')).toBe('ok');
  });

  it('wait on the second element of a view with an offset uses that element', async () => {
    const base = rt.alloc(16, 8);
    const v = rt.int32(base + 4, 3);
    v[1] = 5;
    expect(rt.atomics.wait(v, 1, 5, 0)).toBe('timed-out');
    expect(rt.atomics.wait(v, 0, 5, 0)).toBe('not-equal');
    const big = rt.bigInt64(base, 2); // big[1] spans v[1] and v[2]
    expect(rt.atomics.wait(big, 1, 5n, 0)).toBe('timed-out');
    expect(rt.atomics.wait(big, 0, 0n, 0)).toBe('timed-out');
  });
});

describe('notify', () => {
  it('wakes waiters oldest first (async waiters queued in a known order)', async () => {
    const w = word32();
    const order: number[] = [];
    const ps = [0, 1, 2].map((k) => {
      const r = rt.atomics.waitAsync(w, 0, 0);
      expect(r.async).toBe(true);
      return (r.value as Promise<string>).then((v) => order.push(k) && v);
    });
    for (let k = 0; k < 3; k++) {
      expect(rt.atomics.notify(w, 0, 1)).toBe(1);
      expect(await ps[k]).toBe('ok');
      await sleep(10);
      expect(order).toEqual([0, 1, 2].slice(0, k + 1));
    }
    expect(rt.atomics.notify(w, 0, 1)).toBe(0);
  });

  it('wakes blocking and async waiters oldest first in one queue', async () => {
    const w = word32();
    const order: string[] = [];
    // Queue order: worker A, then an async waiter of this thread (queued
    // synchronously by waitAsync), then worker B. A worker posts 'waiting'
    // just before it waits; the diagnostics say when it is queued.
    const a = spawn(rt, 'atomicsWait', { word: w.byteOffset, value: 0 });
    await a.next('waiting');
    await untilQueued(rt, w.byteOffset, 1);
    const mine = rt.atomics.waitAsync(w, 0, 0);
    if (!mine.async) throw new Error('expected an async wait');
    const minePromise = mine.value.then((v) => order.push('async') && v);
    const b = spawn(rt, 'atomicsWait', { word: w.byteOffset, value: 0 });
    await b.next('waiting');
    await untilQueued(rt, w.byteOffset, 3);
    a.next('woke').then(() => order.push('A'), () => {});
    b.next('woke').then(() => order.push('B'), () => {});
    for (const expected of [['A'], ['A', 'async'], ['A', 'async', 'B']]) {
      expect(rt.atomics.notify(w, 0, 1)).toBe(1);
      const until = performance.now() + 5000;
      while (order.length < expected.length && performance.now() < until) await sleep(2);
      await sleep(20);
      expect(order).toEqual(expected);
    }
    expect(await minePromise).toBe('ok');
    expect(await a.done).toBe('ok');
    expect(await b.done).toBe('ok');
  });

  it('count: 0, negative, NaN, fractions, strings, undefined, more than there are', async () => {
    const w = word32();
    const queue = (n: number) =>
      Array.from({ length: n }, () => {
        const r = rt.atomics.waitAsync(w, 0, 0);
        if (!r.async) throw new Error('expected an async wait');
        return r.value;
      });
    const ps = queue(8);
    expect(rt.atomics.notify(w, 0, 0)).toBe(0);
    expect(rt.atomics.notify(w, 0, -3)).toBe(0);
    expect(rt.atomics.notify(w, 0, -Infinity)).toBe(0);
    expect(rt.atomics.notify(w, 0, NaN)).toBe(0);
    expect(rt.atomics.notify(w, 0, null as unknown as number)).toBe(0);
    expect(rt.atomics.notify(w, 0, 0.9)).toBe(0);
    expect(rt.atomics.notify(w, 0, 1.9)).toBe(1);
    expect(rt.atomics.notify(w, 0, '2' as unknown as number)).toBe(2);
    expect(rt.atomics.notify(w, 0, true as unknown as number)).toBe(1);
    expect(rt.atomics.notify(w, 0, 100)).toBe(4);
    expect(await Promise.all(ps)).toEqual(Array(8).fill('ok'));
    const more = queue(3);
    expect(rt.atomics.notify(w, 0)).toBe(3); // undefined: all
    const last = queue(2);
    expect(rt.atomics.notify(w, 0, Infinity)).toBe(2);
    expect(rt.atomics.notify(w, 0, 2 ** 40)).toBe(0);
    await Promise.all([...more, ...last]);
    expect(() => rt.atomics.notify(w, 0, 1n as unknown as number)).toThrow(TypeError);
  });

  it('BigInt64Array: notify wakes a 64-bit waiter', async () => {
    const w = word64();
    const r = rt.atomics.waitAsync(w, 0, 0n);
    expect(r.async).toBe(true);
    expect(rt.atomics.notify(w, 0, 1)).toBe(1);
    expect(await r.value).toBe('ok');
  });
});

describe('waitAsync', () => {
  it('returns the result objects of Atomics.waitAsync', async () => {
    const w = word32();
    expect(rt.atomics.waitAsync(w, 0, 1)).toEqual({ async: false, value: 'not-equal' });
    expect(rt.atomics.waitAsync(w, 0, 1, 0)).toEqual({ async: false, value: 'not-equal' });
    expect(rt.atomics.waitAsync(w, 0, 0, 0)).toEqual({ async: false, value: 'timed-out' });
    expect(rt.atomics.waitAsync(w, 0, 0, -10)).toEqual({ async: false, value: 'timed-out' });
    const timed = rt.atomics.waitAsync(w, 0, 0, 20);
    expect(timed.async).toBe(true);
    expect(timed.value).toBeInstanceOf(Promise);
    const t0 = performance.now();
    expect(await timed.value).toBe('timed-out');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
    const notified = rt.atomics.waitAsync(w, 0, 0, 10_000);
    expect(await settled(notified.value as Promise<string>)).toBe(false);
    expect(rt.atomics.notify(w, 0)).toBe(1);
    expect(await notified.value).toBe('ok');
  });

  it('is woken by a notify from a worker; a timed-out wait leaves no queue entry', async () => {
    const w = word32();
    const gone = rt.atomics.waitAsync(w, 0, 0, 5);
    expect(await gone.value).toBe('timed-out');
    const r = rt.atomics.waitAsync(w, 0, 0);
    const notifier = spawn(rt, 'notifyAfter', { word: w.byteOffset, delay: 30, store: 0 });
    expect(await r.value).toBe('ok');
    expect(await notifier.done).toBe(1); // only the live waiter was in the queue
  });

  it('reuses its waiter records', async () => {
    const before = rt.waiterRecords;
    const w = word32();
    for (let i = 0; i < 200; i++) {
      const r = rt.atomics.waitAsync(w, 0, 0, 1_000);
      rt.atomics.notify(w, 0);
      await r.value;
    }
    // One in flight, and the one before it: a woken wait gives its record
    // back after the continuation of its `await` ran, which here waits again.
    expect(rt.waiterRecords - before).toBeLessThanOrEqual(2);
  });

  it('close() in the continuation of a woken waitAsync: the wait was settled, nothing is cancelled or lost', async () => {
    const own = await Runtime.create();
    const w = own.int32(own.alloc(4, 4));
    const other = own.int32(own.alloc(4, 4));
    const r = own.atomics.waitAsync(w, 0, 0);
    const pending = own.atomics.waitAsync(other, 0, 0); // still queued at close()
    expect(own.atomics.notify(w, 0)).toBe(1);
    expect(await r.value).toBe('ok');
    own.close(); // before the woken wait's bookkeeping
    await expect(pending.value).rejects.toThrow(/closed/);
  });

  it('a Node main thread whose last step is an awaited waitAsync exits once woken (the keep-alive is let go)', () => {
    const script = `
      import { Runtime } from ${JSON.stringify(new URL('../../js/dist/index.js', import.meta.url).href)};
      const rt = await Runtime.create();
      const w = rt.int32(rt.alloc(4, 4));
      const r = rt.atomics.waitAsync(w, 0, 0);
      setTimeout(() => rt.atomics.notify(w, 0), 20);
      console.log(await r.value); // and nothing else keeps the process alive
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.error).toBeUndefined(); // ETIMEDOUT if it never exits
    expect([run.status, run.stdout.trim()]).toEqual([0, 'ok']);
  });

  it("a wake of a waiter record's word that no notify claimed (a claimer's late wake reaching a reused record) is not \"ok\"", () => {
    // The engine's waitAsync is watched before the package loads, so that
    // the script learns which word the record sleeps on and wakes it as a
    // claimer's wake, still in flight from the record's last wait, would.
    const script = `
      const engineWaitAsync = Atomics.waitAsync;
      let recordWord;
      Atomics.waitAsync = (ta, i, v, t) => { recordWord = [ta, i]; return engineWaitAsync(ta, i, v, t); };
      const { Runtime } = await import(${JSON.stringify(new URL('../../js/dist/index.js', import.meta.url).href)});
      const rt = await Runtime.create();
      const w = rt.int32(rt.alloc(4, 4));
      let settled = 'pending';
      const r = rt.atomics.waitAsync(w, 0, 0);
      r.value.then((v) => { settled = v; });
      Atomics.notify(recordWord[0], recordWord[1]); // the stray wake: nobody claimed the record
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = settled;
      const woken = rt.atomics.notify(w, 0); // the real notify still finds it queued
      console.log(JSON.stringify([before, woken, await r.value]));
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.error).toBeUndefined();
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(['pending', 1, 'ok']);
  });
});

describe('views of the memory', () => {
  it('a view that reached a worker through workerData (another buffer object) is accepted', async () => {
    const view = word32();
    const w = spawn(rt, 'atomicsWaitAsyncOnView', { view, value: 0 });
    expect(await w.next('waiting')).toBe(true);
    let woken = 0;
    while (woken === 0) {
      woken = rt.atomics.notify(view, 0);
      await sleep(5);
    }
    expect(await w.done).toBe('ok');
  });

  it('a view over the buffer the memory had before it grew is accepted', () => {
    const old = word32();
    const before = rt.memory.buffer.byteLength;
    const big = rt.alloc(32 << 20, 8); // 32 MiB: the memory grows
    expect(rt.memory.buffer.byteLength).toBeGreaterThan(before);
    expect(old.buffer).not.toBe(rt.memory.buffer);
    expect(rt.atomics.wait(old, 0, 0, 0)).toBe('timed-out');
    expect(rt.atomics.notify(old, 0)).toBe(0);
    rt.free(big, 32 << 20, 8);
  });

  it('a view over another SharedArrayBuffer, even a copy of the memory, is refused', () => {
    const other = new Int32Array(new SharedArrayBuffer(1 << 22));
    expect(() => rt.atomics.wait(other, 0, 0, 0)).toThrow(/not this runtime's memory/);
    expect(() => rt.atomics.notify(other, 0)).toThrow(TypeError);
    expect(() => rt.atomics.waitAsync(other, 0, 0)).toThrow(TypeError);
    const copy = new Int32Array((rt.memory.buffer as unknown as SharedArrayBuffer).slice(0));
    expect(() => rt.atomics.notify(copy, 0)).toThrow(/not this runtime's memory/);
  });

  it("a typed array's own buffer and byteOffset properties count for nothing, as in the spec (its internal slots do)", async () => {
    const foreign = new Int32Array(new SharedArrayBuffer(16));
    Object.defineProperty(foreign, 'buffer', { value: rt.memory.buffer });
    for (let k = 0; k < 2; k++) {
      expect(() => rt.atomics.notify(foreign, 0)).toThrow(/not this runtime's memory/);
      expect(() => rt.atomics.wait(foreign, 0, 1, 0)).toThrow(/not this runtime's memory/);
    }
    const mine = word32();
    const liar = new Int32Array(mine.buffer, mine.byteOffset, 1);
    Object.defineProperties(liar, { buffer: { value: foreign.buffer }, byteOffset: { value: 0 }, length: { value: 0 } });
    const r = rt.atomics.waitAsync(mine, 0, 0);
    expect(r.async).toBe(true);
    expect(rt.atomics.notify(liar, 0, 1)).toBe(1);
    expect(await r.value).toBe('ok');
    expect(rt.atomics.wait(liar, 0, 1, 0)).toBe('not-equal');
  });

  it('a view used again waits and wakes on the element its index names', async () => {
    const view = rt.int32(rt.alloc(12, 4), 3);
    Atomics.store(view, 1, 5);
    Atomics.store(view, 2, 7);
    for (let pass = 0; pass < 2; pass++) {
      // The second pass goes through the remembered view.
      expect(rt.atomics.wait(view, 1, 5, 0)).toBe('timed-out');
      expect(rt.atomics.wait(view, 2, 5, 0)).toBe('not-equal');
      const r = rt.atomics.waitAsync(view, 2, 7);
      expect(r.async).toBe(true);
      expect(rt.atomics.notify(view, 1)).toBe(0);
      expect(rt.atomics.notify(view, 2, 1)).toBe(1);
      expect(await r.value).toBe('ok');
    }
  });

  it('a view used before is still checked each call: index range, an index object, a closed runtime', async () => {
    const other = await Runtime.create();
    const view = other.int32(other.alloc(8, 4), 2);
    expect(other.atomics.notify(view, 1)).toBe(0);
    expect(other.atomics.wait(view, 1, 1, 0)).toBe('not-equal');
    expect(() => other.atomics.notify(view, 2)).toThrow(RangeError);
    expect(() => other.atomics.wait(view, 2, 0, 0)).toThrow(RangeError);
    let reads = 0;
    const index = { valueOf: () => (reads++, 1) };
    expect(other.atomics.notify(view, index as unknown as number, 1)).toBe(0);
    expect(other.atomics.waitAsync(view, index as unknown as number, 0, 0)).toEqual({ async: false, value: 'timed-out' });
    expect(reads).toBe(2);
    other.close();
    expect(() => other.atomics.notify(view, 0)).toThrow(/closed/);
    expect(() => other.atomics.waitAsync(view, 0, 0)).toThrow(/closed/);
  });
});

// ---------------------------------------------------------------------------
// Argument handling, mirrored against the engine's Atomics on a plain SAB.

const odd = (name: string, value: unknown) => ({ name, value });
const indexes = [
  odd('0', 0), odd('"0"', '0'), odd('1.7', 1.7), odd('-0.5', -0.5), odd('-0', -0), odd('-1', -1), odd('3 (= length)', 3),
  odd('NaN', NaN), odd('undefined', undefined), odd('null', null), odd('"1e0"', '1e0'), odd('Infinity', Infinity),
  odd('2**53', 2 ** 53), odd('1n', 1n), odd('Symbol', Symbol('i')), odd('{valueOf: 2}', { valueOf: () => 2 }),
  odd('"x"', 'x'), odd('true', true),
];
const values32 = [
  odd('0', 0), odd('1', 1), odd('"0"', '0'), odd('-0', -0), odd('2**32', 2 ** 32), odd('2**32+1', 2 ** 32 + 1),
  odd('0.9', 0.9), odd('1n', 1n), odd('null', null), odd('undefined', undefined), odd('Symbol', Symbol('v')),
  odd('{valueOf: 0}', { valueOf: () => 0 }), odd('"abc"', 'abc'),
];
const values64 = [
  odd('0n', 0n), odd('1n', 1n), odd('0', 0), odd('"0"', '0'), odd('true', true), odd('false', false), odd('2n**64n', 2n ** 64n),
  odd('-1n', -1n), odd('"x"', 'x'), odd('null', null), odd('undefined', undefined), odd('{valueOf: 0n}', { valueOf: () => 0n }),
];
// Only timeouts that cannot block for long (or that throw).
const timeouts = [
  odd('0', 0), odd('-1', -1), odd('-Infinity', -Infinity), odd('"-5"', '-5'), odd('null', null), odd('false', false),
  odd('[]', []), odd('1n', 1n), odd('Symbol', Symbol('t')), odd('{valueOf: 0}', { valueOf: () => 0 }), odd('0.5', 0.5),
];
const counts = [
  odd('undefined', undefined), odd('0', 0), odd('-1', -1), odd('NaN', NaN), odd('1.5', 1.5), odd('"3"', '3'), odd('Infinity', Infinity),
  odd('1n', 1n), odd('Symbol', Symbol('c')), odd('{valueOf: 1}', { valueOf: () => 1 }), odd('null', null),
];

/** The error's constructor name, or the result as JSON (promises as "promise"). */
function describeOutcome(f: () => unknown): string {
  try {
    const r = f();
    if (r !== null && typeof r === 'object' && 'async' in r) {
      const { async, value } = r as { async: boolean; value: unknown };
      if (async) void (value as Promise<unknown>).catch(() => {});
      return JSON.stringify({ async, value: async ? 'promise' : value });
    }
    return JSON.stringify(r);
  } catch (e) {
    return (e as Error).constructor.name;
  }
}

type WaitFn = (ta: unknown, i: unknown, v: unknown, t?: unknown) => unknown;

describe('argument handling matches the engine', () => {
  const mine32 = () => rt.int32(rt.alloc(12, 4), 3);
  const theirs32 = () => new Int32Array(new SharedArrayBuffer(12));
  const mine64 = () => rt.bigInt64(rt.alloc(24, 8), 3);
  const theirs64 = () => new BigInt64Array(new SharedArrayBuffer(24));

  for (const [name, ours, engine] of [
    ['wait', rt0((r) => r.atomics.wait.bind(r.atomics) as WaitFn), Atomics.wait as unknown as WaitFn],
    ['waitAsync', rt0((r) => r.atomics.waitAsync.bind(r.atomics) as WaitFn), Atomics.waitAsync as unknown as WaitFn],
  ] as const) {
    it(`${name}: index x value x timeout, 32 and 64 bits`, () => {
      const diffs: string[] = [];
      for (const [mine, theirs, values] of [
        [mine32(), theirs32(), values32],
        [mine64(), theirs64(), values64],
      ] as const) {
        for (const i of indexes)
          for (const v of values)
            for (const t of timeouts) {
              const a = describeOutcome(() => ours()(mine, i.value, v.value, t.value));
              const b = describeOutcome(() => engine(theirs, i.value, v.value, t.value));
              if (a !== b) diffs.push(`${mine.constructor.name}[${i.name}] == ${v.name}, timeout ${t.name}: parklot ${a}, engine ${b}`);
            }
      }
      expect(diffs).toEqual([]);
    });
  }

  it('notify: index x count', () => {
    const diffs: string[] = [];
    for (const [mine, theirs] of [
      [mine32(), theirs32()],
      [mine64(), theirs64()],
    ] as const)
      for (const i of indexes)
        for (const c of counts) {
          const a = describeOutcome(() => rt.atomics.notify(mine, i.value as number, c.value as number));
          const b = describeOutcome(() => Atomics.notify(theirs as Int32Array, i.value as number, c.value as number));
          if (a !== b) diffs.push(`${mine.constructor.name}[${i.name}] count ${c.name}: parklot ${a}, engine ${b}`);
        }
    expect(diffs).toEqual([]);
  });

  it('typed arrays that cannot be waited on: the same errors (and notify on a non-shared Int32Array is 0)', () => {
    const arrays: [string, unknown][] = [
      ['Float64Array', rt.float64(rt.alloc(8, 8))],
      ['Int16Array', new Int16Array(rt.memory.buffer, rt.alloc(4, 4), 2)],
      ['Uint32Array', new Uint32Array(rt.memory.buffer, rt.alloc(4, 4), 1)],
      ['BigUint64Array', new BigUint64Array(rt.memory.buffer, rt.alloc(8, 8), 1)],
      ['Uint8Array', rt.uint8(rt.alloc(4, 4), 4)],
      ['non-shared Int32Array', new Int32Array(4)],
      ['non-shared BigInt64Array', new BigInt64Array(4)],
      ['DataView', new DataView(rt.memory.buffer, 0, 8)],
      ['plain array', [0, 0]],
      ['undefined', undefined],
      ['{length: 1}', { length: 1 }],
    ];
    const diffs: string[] = [];
    for (const [name, ta] of arrays) {
      const pairs: [string, () => unknown, () => unknown][] = [
        ['wait', () => rt.atomics.wait(ta as Int32Array, 0, 0, 0), () => Atomics.wait(ta as Int32Array, 0, 0, 0)],
        ['waitAsync', () => rt.atomics.waitAsync(ta as Int32Array, 0, 0, 0), () => Atomics.waitAsync(ta as Int32Array, 0, 0, 0)],
        ['notify', () => rt.atomics.notify(ta as Int32Array, 0, 1), () => Atomics.notify(ta as Int32Array, 0, 1)],
      ];
      for (const [op, a, b] of pairs) {
        const x = describeOutcome(a);
        const y = describeOutcome(b);
        if (x !== y) diffs.push(`${op}(${name}): parklot ${x}, engine ${y}`);
      }
    }
    expect(diffs).toEqual([]);
    expect(outcome(() => rt.atomics.wait(new Float64Array(2) as unknown as Int32Array, 0, 0))).toMatch(/Int32Array or a BigInt64Array/);
  });
});

/** Defers reading `rt` until the test runs (it is made in beforeAll). */
function rt0<T>(f: (r: Runtime) => T): () => T {
  return () => f(rt);
}
