'use strict';
// Run by Node's linux-arm64 binary under qemu-user (run.mjs): parklot/node
// loads its linux-arm64 build and wait / notify / waitAsync work between
// worker_threads with exact counts. Prints one line per check, "ok <name>" or
// "not ok <name>: <why>".
const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');

const lib = path.join(__dirname, '..', '..', 'node', 'lib');
const pl = require(path.join(lib, 'index.cjs'));

// Every worker a check started: ended after the check, whatever happened to it.
const workers = [];

/** A worker running `body` with `pl` (the addon), `ta` (an Int32Array over `sab`) and `post`. */
function worker(body, sab) {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const pl = require(workerData.addon);
    const ta = new Int32Array(workerData.sab);
    const post = (m) => parentPort.postMessage(m);
    ${body}`;
  const w = new Worker(source, { eval: true, workerData: { addon: path.join(lib, 'index.cjs'), sab } });
  workers.push(w);
  return w;
}
const message = (w) => new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
const exited = (w) => new Promise((resolve) => w.once('exit', resolve));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits (polling; threads start slowly under qemu) until `waiterCount(ta, i)` is `n`. */
async function queued(ta, i, n) {
  for (let tries = 0; tries < 3000; tries++) {
    if (pl.waiterCount(ta, i) === n) return;
    await sleep(10);
  }
  assert.fail(`waiterCount stayed ${pl.waiterCount(ta, i)}, not ${n}`);
}

const checks = {
  'the linux-arm64 build is the one loaded'() {
    assert.equal(process.arch, 'arm64');
    const loaded = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
    assert.deepEqual(loaded.map((f) => path.basename(f)), ['parklot.linux-arm64-gnu.node']);
  },

  'wait without a notify: "not-equal" and "timed-out", nothing left queued'() {
    const ta = new Int32Array(new SharedArrayBuffer(8));
    ta[1] = 7;
    assert.equal(pl.wait(ta, 1, 0), 'not-equal');
    assert.equal(pl.wait(ta, 0, 0, 20), 'timed-out');
    assert.equal(pl.waiterCount(ta, 0), 0);
    assert.equal(pl.notify(ta, 0), 0);
  },

  async 'two workers blocked in wait, woken one by one by a third worker: exact counts and waiterCount'() {
    const sab = new SharedArrayBuffer(8);
    const ta = new Int32Array(sab);
    const waiters = [0, 1].map(() => worker(`post(pl.wait(ta, 0, 0));`, sab));
    const woke = waiters.map(message);
    await queued(ta, 0, 2);
    const notifier = worker(
      `const counts = [pl.notify(ta, 0, 1)];
       while (pl.waiterCount(ta, 0) !== 1) {}
       counts.push(pl.waiterCount(ta, 0), pl.notify(ta, 0, 5), pl.waiterCount(ta, 0), pl.notify(ta, 0));
       post(counts);`,
      sab,
    );
    assert.deepEqual(await message(notifier), [1, 1, 1, 0, 0]);
    assert.deepEqual(await Promise.all(woke), ['ok', 'ok']);
    await Promise.all([...waiters, notifier].map(exited));
  },

  async "waitAsync on the main thread resolves on a worker's notify, which counts it"() {
    const sab = new SharedArrayBuffer(8);
    const ta = new Int32Array(sab);
    const r = pl.waitAsync(ta, 0, 0);
    assert.equal(r.async, true);
    assert.equal(pl.waiterCount(ta, 0), 1);
    const w = worker(`post(pl.notify(ta, 0));`, sab);
    assert.equal(await message(w), 1);
    assert.equal(await r.value, 'ok');
    assert.equal(pl.waiterCount(ta, 0), 0);
    await exited(w);
  },

  async 'install() replaces Atomics.wait/notify; a BigInt64Array wait is woken through them'() {
    const sab = new SharedArrayBuffer(16);
    const big = new BigInt64Array(sab);
    big[1] = 1n << 40n;
    const w = worker(`pl.install(); post(Atomics.wait(new BigInt64Array(workerData.sab), 1, 1n << 40n));`, sab);
    const woke = message(w);
    pl.install();
    for (let tries = 0; tries < 3000 && pl.waiterCount(big, 1) === 0; tries++) await sleep(10);
    assert.equal(Atomics.notify(big, 1), 1);
    assert.equal(await woke, 'ok');
    await exited(w);
  },
};

(async () => {
  for (const [name, check] of Object.entries(checks)) {
    try {
      await check();
      console.log(`ok ${name}`);
    } catch (e) {
      console.log(`not ok ${name}: ${String(e?.stack ?? e).replace(/\n/g, '\n    ')}`);
    }
    await Promise.all(workers.splice(0).map((w) => w.terminate()));
  }
})();
