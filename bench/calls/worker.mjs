// A worker of bench/calls/measure.mjs: attached to one package's runtime,
// it runs the call form the main thread names, for as long as the main
// thread says, and posts how many critical sections it ran.
//
// Control words (Int32Array `ctl` over a SharedArrayBuffer of the main
// thread's): GO = 1 starts a measurement, STOP = 1 ends it. The stop flag is
// read every 256 sections in every form alike.
import { parentPort } from 'node:worker_threads';

// Set by the small entry file measure.mjs writes per package.
const { attachWorker } = await import(globalThis.parklotBenchPackage);
const { data } = await attachWorker();
const { lock, rw, sem, ctl, jsMutex, counter } = data;
const GO = 0;
const STOP = 1;

// The ten-line futex mutex (3 states: 0 free, 1 held, 2 held with waiters),
// the floor a user would write by hand on a plain SharedArrayBuffer.
function jsLock(m) {
  let c = Atomics.compareExchange(m, 0, 0, 1);
  if (c !== 0) {
    if (c !== 2) c = Atomics.exchange(m, 0, 2);
    while (c !== 0) {
      Atomics.wait(m, 0, 2);
      c = Atomics.exchange(m, 0, 2);
    }
  }
}
function jsUnlock(m) {
  if (Atomics.sub(m, 0, 1) !== 1) {
    Atomics.store(m, 0, 0);
    Atomics.notify(m, 0, 1);
  }
}

const bump = () => {
  counter[0]++;
};

// Each form's loop is written out, not one loop calling the section as a
// function: the engines compile each loop with its calls inlined, as a
// user's own loop is; one shared call site would serve every form
// (polymorphic) and measure the dispatch instead.
const FORMS = {
  'lock/unlock': () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) {
        lock.lock();
        counter[0]++;
        lock.unlock();
      }
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
  withLock: () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) lock.withLock(bump);
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
  'write/unlockWrite': () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) {
        rw.write();
        counter[0]++;
        rw.unlockWrite();
      }
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
  withWrite: () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) rw.withWrite(bump);
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
  'acquire/release': () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) {
        sem.acquire();
        counter[0]++;
        sem.release();
      }
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
  withPermits: () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) sem.withPermits(1, bump);
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
  'JS mutex': () => {
    let n = 0;
    do {
      for (let i = 0; i < 256; i++) {
        jsLock(jsMutex);
        counter[0]++;
        jsUnlock(jsMutex);
      }
      n += 256;
    } while (Atomics.load(ctl, STOP) === 0);
    return n;
  },
};

parentPort.on('message', (form) => {
  parentPort.postMessage('ready');
  while (Atomics.load(ctl, GO) === 0) Atomics.wait(ctl, GO, 0, 50);
  parentPort.postMessage(FORMS[form]());
});
parentPort.postMessage('attached');
