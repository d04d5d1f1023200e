// Workers terminated while they contend on one Lock, many times a second:
// the lock must never be lost. A worker woken from the lock's queue (handed
// the lock, or woken to compete with the queue's PARKED bit in its keeping)
// passes calls and loop back edges on its way back to the lock's byte, and
// an engine may stop it at any of them. Its reaper must then pass the wakeup
// on; before, the wakeup counted as taken as soon as the thread woke, and a
// worker stopped on its way left the lock held by nobody, or its queue
// with nobody to wake it: everyone else waited for ever.
//
// As the main thread: ROUNDS rounds; in each, one of WORKERS workers (half
// blocking, half async) is terminated at a random moment; once its 'exit'
// was reaped, every other worker must still get the lock (each counts its
// turns), and then the main thread must too (with a deadline); the worker
// is then replaced. Every holder also claims an owner slot while it holds
// the lock: a reaper that released a lock a live thread held (a death
// mistaken for a holder's) shows there as two holders at once. Prints a
// summary; exits 1 on a lost lock, a lost wakeup or two holders. As a
// worker: the loop.
import { isMainThread, parentPort, workerData, Worker } from 'node:worker_threads';
import { OwnerDiedError, Runtime } from '../../js/dist/index.js';

const ROUNDS = Number(process.env.ROUNDS ?? 300);
/** With CONDITION=1, each turn with the lock also waits on, or notifies, a Condition used with it. */
const CONDITION = process.env.CONDITION === '1';
const WORKERS = 4;
/** A termination lands a random 0 to this many ms after the round starts. */
const MAX_DELAY_MS = 4;
/** How long the main thread waits for the lock, or for each survivor's next turn, before it calls it lost. */
const TAKE_MS = 5000;
const POISONED = /^parklot: this runtime is poisoned: /;

/** `counted`'s slot of the lock's current holder (worker index + 1, or MAIN), 0 while free. */
const OWNER = 2 * WORKERS;
/** The main thread in the owner slot. */
const MAIN = 100;

/**
 * Claims the owner slot for `me`, who just took the lock: nobody else may
 * be in it, unless the lock came with `OwnerDiedError` (the dead holder's
 * claim is stale then).
 */
function enter(counted, me, ownerDied) {
  const was = Atomics.exchange(counted, OWNER, me);
  if (was !== 0 && !ownerDied) throw new Error(`two holders: ${me} took the lock while ${was} held it`);
}

/** Gives the owner slot back before `me` releases the lock: still its own. */
function leave(counted, me) {
  const was = Atomics.compareExchange(counted, OWNER, me, 0);
  if (was !== me) throw new Error(`two holders: ${was} took the lock from under ${me}`);
}

async function worker() {
  const { handle, lock: address, cond: condAddress, async, turns, index } = workerData;
  const counted = new Int32Array(turns);
  const me = index + 1;
  const rt = await Runtime.attach(handle);
  const lock = rt.lockAt(address);
  const cond = condAddress === undefined ? undefined : rt.conditionAt(condAddress);
  parentPort.postMessage('ready');
  for (let i = 0; ; i++) {
    Atomics.store(counted, WORKERS + index, 1); // in lock
    let ownerDied = false;
    try {
      if (async) await lock.lockAsync();
      else lock.lock();
    } catch (e) {
      if (poisonedBy(e)) return;
      ownerDied = true;
    }
    enter(counted, me, ownerDied);
    if (cond !== undefined) {
      Atomics.store(counted, WORKERS + index, 4); // in the condition
      const waits = i % 3 === 2;
      if (waits) leave(counted, me);
      ownerDied = false;
      try {
        if (i % 3 === 0) cond.notifyAll();
        else if (i % 3 === 1) cond.notifyOne();
        else if (async) await cond.waitAsync(lock, 2);
        else cond.wait(lock, 2);
      } catch (e) {
        if (poisonedBy(e)) return;
        ownerDied = true;
      }
      if (waits) enter(counted, me, ownerDied);
    }
    Atomics.store(counted, WORKERS + index, 2); // in unlock
    leave(counted, me);
    lock.unlock();
    Atomics.store(counted, WORKERS + index, 3); // between
    Atomics.add(counted, index, 1);
    // Let the event loop in now and then (an async worker needs it anyway).
    if (!async && i % 64 === 0) await new Promise((r) => setImmediate(r));
  }
}

/**
 * What a worker makes of an error its lock (or condition) call threw: an
 * `OwnerDiedError` leaves the lock held (a dead worker had it), the
 * poisoned error is reported (true: the worker stops), anything else is
 * thrown on.
 */
function poisonedBy(e) {
  if (e instanceof OwnerDiedError) return false;
  if (!POISONED.test(e?.message)) throw e;
  parentPort.postMessage('poisoned');
  return true;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `promise`, or a failure naming `what` if it takes longer than STEP_MS. */
const STEP_MS = 10_000;
function step(promise, what) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`stuck for ${STEP_MS} ms: ${what}`)), STEP_MS)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The Condition of each runtime, where CONDITION. */
const conditions = new WeakMap();

/** Each worker's turns with the lock, in its slot; then its phase; then the owner slot. */
const turns = new SharedArrayBuffer(8 * WORKERS + 4);
const counted = new Int32Array(turns);

function start(rt, lock, k) {
  const cond = CONDITION ? conditions.get(rt) ?? conditions.set(rt, rt.condition()).get(rt) : undefined;
  const w = rt.watch(new Worker(new URL(import.meta.url), { workerData: { handle: rt.handle(), lock: lock.address, cond: cond?.address, async: k % 2 === 1, turns, index: k } }));
  const ready = new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  // A worker's own error is a failure; not the poisoned error, which any
  // call may throw once a death poisoned the runtime.
  w.on('error', (e) => {
    if (!POISONED.test(e?.message)) workerErrors.push(`worker ${k}: ${e?.stack ?? e}`);
  });
  return { w, ready, exited };
}

/** The errors workers ended with, as they come. */
const workerErrors = [];

/** Where worker `j` was last: what it set in its phase slot. */
const phase = (j) => ['?', 'lock', 'unlock', 'neither', 'the condition'][Atomics.load(counted, WORKERS + j)];

/** A failure of the scenario (not the poisoned error, which any call may throw once a death poisoned the runtime). */
class Failed extends Error {}

/**
 * One round: terminates worker `k` at a random moment, then checks that
 * every other worker and the main thread get the lock, and replaces it.
 * Returns what the main thread was told ('taken' or 'owner-died'); throws
 * `Failed`, or the poisoned error.
 */
async function round(rt, lock, workers, k) {
  await sleep(Math.random() * MAX_DELAY_MS);
  await step(workers[k].w.terminate(), `terminate() of worker ${k}`);
  await step(workers[k].exited, `worker ${k} to exit`);
  await sleep(0); // the reaper runs on 'exit'
  // Every survivor gets the lock again, with nobody else's help.
  const before = counted.map((n) => n);
  const end = performance.now() + TAKE_MS;
  let stuck = [];
  for (;;) {
    stuck = workers.map((_, j) => j).filter((j) => j !== k && Atomics.load(counted, j) === before[j]);
    if (stuck.length === 0 || performance.now() > end) break;
    await sleep(1);
  }
  if (stuck.length > 0) {
    rt.lock().free(); // throws if a death poisoned the runtime meanwhile (the stuck then had the poisoned error)
    throw new Failed(`workers ${stuck.join(',')} had no turn with the lock within ${TAKE_MS} ms after worker ${k} was terminated (in ${phase(k)}; the stuck in ${stuck.map(phase).join(', ')}); its byte: ${new Uint8Array(rt.memory.buffer)[lock.address]}; threads: ${JSON.stringify(rt.diagnostics().threads.filter((t) => t.state !== 'reaped'))}; queues: ${JSON.stringify(rt.diagnostics().queues)}; the workers' errors: ${JSON.stringify(workerErrors)}`);
  }
  let outcome = 'taken';
  try {
    if (!(await lock.lockAsync(TAKE_MS))) {
      throw new Failed(`the lock was not free within ${TAKE_MS} ms after worker ${k} was terminated; diagnostics: ${JSON.stringify(rt.diagnostics().queues)}`);
    }
  } catch (e) {
    if (!(e instanceof OwnerDiedError)) throw e;
    outcome = 'owner-died';
  }
  try {
    enter(counted, MAIN, outcome === 'owner-died');
    leave(counted, MAIN);
  } catch (e) {
    throw new Failed(e.message);
  }
  lock.unlock();
  workers[k] = start(rt, lock, k);
  await step(workers[k].ready, `the replacement of worker ${k} to attach`);
  return outcome;
}

async function main() {
  let rt = await Runtime.create();
  let lock = rt.lock();
  let workers = Array.from({ length: WORKERS }, (_, k) => start(rt, lock, k));
  await step(Promise.all(workers.map((x) => x.ready)), 'the workers to attach');
  let poisoned = 0;
  for (let r = 1; r <= ROUNDS; r++) {
    const k = Math.floor(Math.random() * WORKERS);
    try {
      const outcome = await round(rt, lock, workers, k);
      console.log(`round ${r}: worker ${k} terminated${outcome === 'owner-died' ? ' (the main thread was told the owner died)' : ''}`);
    } catch (e) {
      if (e instanceof Failed) {
        console.log(`FAILED: round ${r}: ${e.message}`);
        process.exit(1);
      }
      if (!POISONED.test(e?.message)) throw e;
      // A death inside one of the runtime's own sections: start over.
      poisoned++;
      console.log(`round ${r}: worker ${k} terminated; the runtime poisoned (${e.message}): a new one`);
      await step(Promise.all(workers.map((x) => x.w.terminate())), 'the workers of the poisoned runtime to end');
      rt.close();
      Atomics.store(counted, OWNER, 0); // a claim the old runtime's workers left
      rt = await Runtime.create();
      lock = rt.lock();
      workers = Array.from({ length: WORKERS }, (_, j) => start(rt, lock, j));
      await step(Promise.all(workers.map((x) => x.ready)), 'the workers of the new runtime to attach');
    }
    if (workerErrors.length > 0) {
      console.log(`FAILED: round ${r}: workers ended with errors: ${workerErrors.join('; ')}`);
      process.exit(1);
    }
  }
  await Promise.all(workers.map((x) => x.w.terminate()));
  rt.close();
  console.log(`done: ${ROUNDS} rounds, ${poisoned} with the runtime poisoned`);
  process.exit(0);
}

if (isMainThread) main().catch((e) => {
  console.log(`FAILED: ${e?.stack ?? e}`);
  process.exit(1);
});
else void worker();
