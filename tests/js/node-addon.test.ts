// parklot/node, the Node-API addon: loads with import and require, install()
// swaps the realm's Atomics functions, and wait / notify / waitAsync work
// between the main thread and real worker_threads on one process-wide
// ParkingLot. (The spec's argument handling is test262's job:
// tests/test262/run.mjs.)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { addon, pl, useAddon, type Atomics } from './addon.js';

useAddon();

/** A worker running `body` with `pl` (the addon), `ta` (an Int32Array over `sab`) and `post`. */
function worker(body: string, sab: SharedArrayBuffer): Worker {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const pl = require(workerData.addon);
    const ta = new Int32Array(workerData.sab);
    const post = (m) => parentPort.postMessage(m);
    ${body}`;
  return inbox(new Worker(source, { eval: true, workerData: { addon, sab } }));
}

// Each worker's messages, kept from its start: a Worker emits a message
// whether or not anyone listens, so a listener attached after a macrotask
// (an await of a timer) could miss one the worker already posted.
const inboxes = new WeakMap<Worker, { kept: unknown[]; takers: ((m: unknown) => void)[] }>();
function inbox(w: Worker): Worker {
  const box = { kept: [] as unknown[], takers: [] as ((m: unknown) => void)[] };
  inboxes.set(w, box);
  w.on('message', (m) => {
    const take = box.takers.shift();
    if (take) take(m);
    else box.kept.push(m);
  });
  return w;
}
/** The worker's next message, posted before or after this call. */
function message(w: Worker): Promise<unknown> {
  const box = inboxes.get(w)!;
  if (box.kept.length) return Promise.resolve(box.kept.shift());
  return new Promise((resolve) => box.takers.push(resolve));
}
// Listen for 'exit' before awaiting a message: a worker that has exited by
// the time its last message is read emits both in one go (Node drains the
// port, then emits 'exit'), before an await's continuation could listen.
const exited = (w: Worker): Promise<number> => new Promise((resolve) => w.once('exit', resolve));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Notifies `ta[i]` until it wakes someone (the waiter may not be queued yet); returns the count. */
async function notifyWhenQueued(ta: Int32Array, i: number): Promise<number> {
  for (let tries = 0; tries < 500; tries++) {
    const n = pl.notify(ta, i, 1);
    if (n) return n;
    await sleep(10);
  }
  return 0;
}

describe('loading', () => {
  it('import and require give the same module', async () => {
    const required = createRequire(import.meta.url)('parklot/node') as Atomics;
    const imported = (await import('parklot/node')) as unknown as Atomics & { default: Atomics };
    expect(imported.wait).toBe(required.wait);
    expect(imported.default).toBe(required);
  });

  it("install() puts the functions on Atomics with the built-ins' names, lengths and attributes", () => {
    const original = Object.getOwnPropertyDescriptor(Atomics, 'wait');
    try {
      pl.install();
      for (const [name, length] of [['wait', 4], ['notify', 3], ['waitAsync', 4]] as const) {
        const d = Object.getOwnPropertyDescriptor(Atomics, name)!;
        expect(d.value).toBe(pl[name]);
        expect([d.writable, d.enumerable, d.configurable]).toEqual([true, false, true]);
        expect(d.value.name).toBe(name);
        expect(d.value.length).toBe(length);
        expect(() => Reflect.construct(d.value, [])).toThrow(TypeError);
      }
    } finally {
      Object.defineProperty(Atomics, 'wait', original!);
    }
  });
});

describe('between threads', () => {
  it('a worker blocked in wait is woken by a notify from the main thread, through another view of the bytes', async () => {
    const sab = new SharedArrayBuffer(16);
    const w = worker(`post(pl.wait(ta, 2, 0));`, sab);
    const exit = exited(w);
    // Same bytes through a view with a byte offset: the key is the address.
    const shifted = new Int32Array(sab, 8);
    expect(await notifyWhenQueued(shifted, 0)).toBe(1);
    expect(await message(w)).toBe('ok');
    await exit;
  });

  it("notify's fast path keeps no buffer alive past the task that notified on it", () => {
    const script = `
      const pl = require(${JSON.stringify(addon)});
      let ta = new Int32Array(new SharedArrayBuffer(1 << 20));
      pl.notify(ta, 0, 1);
      pl.notify(ta, 0, 1); // the fast path, on the view it remembers
      const ref = new WeakRef(ta.buffer);
      ta = undefined;
      setTimeout(() => {
        gc();
        setTimeout(() => {
          gc();
          console.log(ref.deref() === undefined ? 'collected' : 'kept');
        }, 10);
      }, 10);`;
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('collected');
  });

  it('BigInt64Array: compares all 64 bits and wakes', async () => {
    const sab = new SharedArrayBuffer(16);
    const big = new BigInt64Array(sab);
    big[1] = 1n << 40n;
    expect(pl.wait(big, 1, 0n, 0)).toBe('not-equal');
    const w = worker(`post(pl.wait(new BigInt64Array(workerData.sab), 1, 1n << 40n));`, sab);
    const exit = exited(w);
    for (let tries = 0; tries < 500 && pl.notify(big, 1) === 0; tries++) await sleep(10);
    expect(await message(w)).toBe('ok');
    await exit;
  });

  it("notify's fast path (the same view, nobody queued) never misses a wait queued since: 200 hand-offs, every count exact", async () => {
    // Two words: ta[0] is the turn, ta[1] counts the worker's wakes. The
    // worker waits on ta[0] in a loop; the main thread notifies the same
    // view over and over while nobody waits (the engine-only fast path),
    // and must count each wait once it is queued, never 0 then a lost wake.
    const sab = new SharedArrayBuffer(8);
    const ta = new Int32Array(sab);
    const rounds = 200;
    const w = worker(
      `let ok = 0;
       for (let r = 0; r < ${rounds}; r++) {
         while (Atomics.load(ta, 0) === r) if (pl.wait(ta, 0, r) === 'ok') ok++;
         Atomics.add(ta, 1, 1);
       }
       post(ok);`,
      sab,
    );
    const exit = exited(w);
    let early = 0; // notifies before the hand-off: 0, unless the wait was queued meanwhile
    let woken = 0;
    for (let r = 0; r < rounds; r++) {
      // Until the worker's wait is queued, notify takes the fast path.
      while (pl.waiterCount(ta, 0) === 0) {
        early += pl.notify(ta, 0, 1);
        await sleep(0);
      }
      Atomics.store(ta, 0, r + 1);
      woken += pl.notify(ta, 0, 1);
      while (Atomics.load(ta, 1) === r) await sleep(0);
    }
    // Every wait that said "ok" was counted by exactly one notify.
    expect(await message(w)).toBe(woken + early);
    await exit;
    expect(woken).toBe(rounds);
    expect(pl.waiterCount(ta, 0)).toBe(0);
  });

  it('waitAsync on the main thread resolves "ok" on a worker\'s notify without blocking the loop', async () => {
    const sab = new SharedArrayBuffer(8);
    const ta = new Int32Array(sab);
    const r = pl.waitAsync(ta, 0, 0);
    expect(r.async).toBe(true);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    await sleep(50);
    const w = worker(`post(pl.notify(ta, 0));`, sab);
    const exit = exited(w);
    expect(await message(w)).toBe(1);
    expect(await r.value).toBe('ok');
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(0); // the loop ran while the wait was pending
    await exit;
  });

  it('waitAsync times out no earlier than its timeout, and a notify afterwards counts nobody', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(8));
    const start = performance.now();
    const r = pl.waitAsync(ta, 0, 0, 30);
    expect(await r.value).toBe('timed-out');
    expect(performance.now() - start).toBeGreaterThanOrEqual(30);
    expect(pl.notify(ta, 0)).toBe(0);
  });

  it("a worker that exits with a waitAsync pending leaves no waiter behind", async () => {
    const sab = new SharedArrayBuffer(8);
    const ta = new Int32Array(sab);
    const w = worker(`pl.waitAsync(ta, 0, 0); post('queued');`, sab);
    expect(await message(w)).toBe('queued');
    await w.terminate();
    expect(pl.notify(ta, 0)).toBe(0);
  });

  it('a worker blocked in wait can be terminated', async () => {
    const sab = new SharedArrayBuffer(8);
    const ta = new Int32Array(sab);
    const w = worker(`post('waiting'); pl.wait(ta, 0, 0); post('woke');`, sab);
    expect(await message(w)).toBe('waiting');
    await sleep(50);
    const start = performance.now();
    await w.terminate();
    expect(performance.now() - start).toBeLessThan(2000);
    expect(pl.notify(ta, 0)).toBe(0);
  });

  it("a pending waitAsync does not keep the process alive, as the engine's does not", () => {
    // The only thing left on the loop is the wait; an unref'd worker would
    // notify it later (node-addon-engine.test.ts checks the engine's side).
    const script = `
      const { Worker } = require('node:worker_threads');
      const pl = require(${JSON.stringify(addon)});
      const sab = new SharedArrayBuffer(8);
      pl.waitAsync(new Int32Array(sab), 0, 0).value.then((v) => console.log(v));
      new Worker(\`
        const { workerData } = require('node:worker_threads');
        const ta = new Int32Array(workerData.sab);
        Atomics.wait(ta, 1, 0, 200);
        require(workerData.addon).notify(ta, 0);
      \`, { eval: true, workerData: { sab, addon: ${JSON.stringify(addon)} } }).unref();`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect({ out: child.stdout.trim(), signal: child.signal }).toEqual({ out: '', signal: null });
  });
});
