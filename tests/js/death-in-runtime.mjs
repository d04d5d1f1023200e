// The scenario of death-in-runtime.test.ts, run in a child process so that a
// hang (a thread spinning forever inside wasm, as issue 29 reported) kills
// the child instead of the test run. As the main thread: ROUNDS rounds of
// WORKERS workers that churn primitives in a tight loop, some of them
// terminated at a random moment; the survivors are then told to stop, and
// the main thread creates, uses and frees primitives. It prints one line per
// round (the parent's watchdog waits for each) and a summary. As a worker
// (workerData set): the churn loop.
import { isMainThread, parentPort, workerData, Worker } from 'node:worker_threads';
import { OwnerDiedError, Runtime } from '../../js/dist/index.js';

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const WORKERS = 3;
/** Terminations land a random 0 to this many ms after every worker started churning. */
const MAX_DELAY_MS = 20;
/** How long a round may take before the main thread itself reports it stuck. */
const ROUND_DEADLINE_MS = 8000;
/** What every call on a runtime a thread died inside must say. */
const POISONED = /^Error: parklot: this runtime is poisoned: /;

/** Frees a primitive: its own `free()` where it has one, else `rt.free`. */
function release(rt, p, bytes, align) {
  if (typeof p.free === 'function') p.free();
  else rt.free(p.address, bytes, align);
}

/** Makes a Lock and an RwLock, takes and releases each once (the RwLock for `rwMode`: 'write' or 'read'), and frees them. */
function useLocks(rt, rwMode) {
  const l = rt.lock();
  l.lock();
  l.unlock();
  release(rt, l, 1, 1);
  const rw = rt.rwLock();
  if (rwMode === 'write') {
    rw.write();
    rw.unlockWrite();
  } else {
    rw.read();
    rw.unlockRead();
  }
  release(rt, rw, 4, 4);
}

/** Where a worker is in its pass, by the index in PHASES it stores in its slot of the shared `phase` array: printed if a round gets stuck. */
const PHASES = ['attaching', 'loop top', 'locks', 'condition', 'allocations', 'frees', 'big block', 'lockAsync', 'lock', 'unlock', 'waitAsync', 'close', 'stopped'];
const at = (slot, name) => Atomics.store(slot.array, slot.index, PHASES.indexOf(name));

/** One pass of the churn: every kind of call that allocates, frees, queues or parks. */
async function churnOnce(rt, i, shared, word, slot) {
  at(slot, 'locks');
  useLocks(rt, 'write');
  at(slot, 'condition');
  const c = rt.condition();
  release(rt, c, 1, 1);
  at(slot, 'allocations');
  // A burst of allocations of mixed sizes, freed out of order: most of a
  // pass is spent inside the allocator.
  const blocks = [];
  for (let k = 0; k < 48; k++) {
    const n = 1 + ((i * 7919 + k * 104729) % 5000);
    blocks.push([rt.alloc(n, 8), n]);
  }
  at(slot, 'frees');
  for (let k = 0; k < blocks.length; k++) {
    const [a, n] = blocks[(k * 17) % blocks.length];
    rt.free(a, n, 8);
  }
  at(slot, 'big block');
  const big = 1 << (10 + (i % 8)); // 1 KiB to 128 KiB, aligned to itself up to 64 KiB
  rt.free(rt.alloc(big, Math.min(big, 65536)), big, Math.min(big, 65536));
  // Contended: the workers park on it (bucket locks) and queue async records.
  try {
    if (i % 4 === 0) {
      at(slot, 'lockAsync');
      await shared.lockAsync();
    } else {
      at(slot, 'lock');
      shared.lock();
    }
  } catch (e) {
    if (!(e instanceof OwnerDiedError)) throw e; // held now: a dead worker had it
  }
  at(slot, 'unlock');
  shared.unlock();
  if (i % 16 === 0) {
    at(slot, 'waitAsync');
    const r = rt.atomics.waitAsync(word, 0, 0, 1); // an async record, timed out
    if (r.async) await r.value;
  }
}

async function worker() {
  const { handle, stop, shared, word, phase, index } = workerData;
  const stopped = new Int32Array(stop);
  const slot = { array: new Int32Array(phase), index };
  let rt;
  let outcome = 'ok';
  try {
    rt = await Runtime.attach(handle);
    const lock = rt.lockAt(shared);
    const w = rt.int32(word);
    parentPort.postMessage('ready');
    for (let i = 0; Atomics.load(stopped, 0) === 0; i++) {
      at(slot, 'loop top');
      await churnOnce(rt, i, lock, w, slot);
    }
  } catch (e) {
    outcome = `${e?.constructor?.name}: ${e?.message}`;
  }
  at(slot, 'close');
  try {
    rt?.close();
  } catch (e) {
    outcome += ` (then close(): ${e?.constructor?.name}: ${e?.message})`;
  }
  at(slot, 'stopped');
  parentPort.postMessage(outcome);
}

/** `promise`, or a rejection naming `what` after `ms`. */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`stuck for ${ms} ms: ${what}`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What a call on a runtime threw, in the form the summary counts. */
function describe(e) {
  return `${e?.constructor?.name === 'Error' ? 'Error' : e?.constructor?.name}: ${e?.message}`;
}

/** The main thread's own use after a round: create, use and free primitives, and count the threads. */
async function mainUse(rt, expectedThreads) {
  useLocks(rt, 'read');
  const l = rt.lock();
  if (!(await l.lockAsync(1000))) throw new Error('a free lock could not be taken');
  l.unlock();
  release(rt, l, 1, 1);
  rt.free(rt.alloc(100, 8), 100, 8);
  // The dead were reaped (their 'exit' events may still be on their way).
  const end = performance.now() + 5000;
  while (rt.attachedThreads !== expectedThreads) {
    if (performance.now() > end) throw new Error(`${rt.attachedThreads} threads attached after the round, expected ${expectedThreads}`);
    await sleep(5);
  }
}

async function round(rt, r) {
  const stop = new SharedArrayBuffer(4);
  const shared = rt.lock();
  const word = rt.alloc(4, 4);
  const phase = new SharedArrayBuffer(4 * WORKERS);
  const workers = [];
  for (let k = 0; k < WORKERS; k++) {
    const w = rt.watch(new Worker(new URL(import.meta.url), { workerData: { handle: rt.handle(), stop, shared: shared.address, word, phase, index: k } }));
    const messages = [];
    const waiting = [];
    w.on('message', (m) => (waiting.length ? waiting.shift()(m) : messages.push(m)));
    const exited = new Promise((resolve) => w.once('exit', resolve));
    const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => waiting.push(resolve)));
    workers.push({ w, next, exited, killed: false });
  }
  await within(Promise.all(workers.map((x) => x.next())), ROUND_DEADLINE_MS, 'the workers to attach');
  // Kill one to all of them, each at its own random moment.
  const victims = workers.filter((_, k) => k === 0 || Math.random() < 0.5);
  const delays = victims.map(() => Math.floor(Math.random() * (MAX_DELAY_MS + 1)));
  await within(
    Promise.all(
      victims.map(async (x, k) => {
        await sleep(delays[k]);
        x.killed = true;
        await x.w.terminate();
      }),
    ),
    ROUND_DEADLINE_MS,
    'terminate() of the victims',
  );
  // The survivors stop and report; a survivor waiting on an internal lock
  // a victim held must come out too (with the poisoned error).
  Atomics.store(new Int32Array(stop), 0, 1);
  const survivors = workers.filter((x) => !x.killed);
  const outcomes = await within(Promise.all(survivors.map((x) => x.next())), ROUND_DEADLINE_MS, 'the survivors to stop').catch((e) => {
    // Say where each survivor is, and what the runtime's queues hold.
    const phases = new Int32Array(phase);
    const where = workers.map((x, k) => `worker ${k}${x.killed ? ' (terminated)' : ''}: ${PHASES[phases[k]]}`).join('; ');
    let queues;
    try {
      queues = JSON.stringify(rt.diagnostics());
    } catch (d) {
      queues = describe(d);
    }
    throw new Error(`${e.message}; ${where}; diagnostics: ${queues}`);
  });
  await Promise.all(survivors.map((x) => x.w.terminate()));
  await within(Promise.all(workers.map((x) => x.exited)), ROUND_DEADLINE_MS, 'every worker to exit');
  for (const o of outcomes) if (o !== 'ok' && !POISONED.test(o)) throw new Error(`a survivor failed: ${o}`);
  let main = 'ok';
  try {
    await within(mainUse(rt, 1), ROUND_DEADLINE_MS, "the main thread's calls after the round");
  } catch (e) {
    main = describe(e);
    if (!POISONED.test(main)) throw e;
  }
  return { killed: victims.length, delays, outcomes, main };
}

async function main() {
  let rt = await Runtime.create();
  let poisoned = 0;
  for (let r = 1; r <= ROUNDS; r++) {
    const t0 = performance.now();
    const { killed, delays, outcomes, main: mainOutcome } = await round(rt, r);
    const ms = (performance.now() - t0).toFixed(0);
    console.log(`round ${r}: ${killed} of ${WORKERS} terminated after ${delays.join(',')} ms, survivors ${JSON.stringify(outcomes)}, main: ${mainOutcome} (${ms} ms)`);
    if (mainOutcome !== 'ok' || outcomes.some((o) => o !== 'ok')) {
      poisoned++;
      // Every later call throws the same error; close() still works.
      try {
        rt.lock();
        throw new Error('a call on a poisoned runtime did not throw');
      } catch (e) {
        if (!POISONED.test(describe(e))) throw e;
      }
      rt.close();
      rt = await Runtime.create();
    }
  }
  rt.close();
  console.log(`done: ${ROUNDS} rounds, ${poisoned} ended with the runtime poisoned`);
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (e) => {
      console.log(`FAILED: ${e?.stack ?? e}`);
      process.exit(1);
    },
  );
} else {
  void worker();
}
