// One benchmark worker of bench/wasm/run.mjs. Started once per run; it
// instantiates the wasm module on the shared memory, then obeys commands:
//   {type: 'run', how, kind, lockAddr, counterAddr, gen, durationMs, chunk}
//     arm, wait at the start gate until the main thread moves it past `gen`,
//     then run lock / increment / unlock for `durationMs` and answer
//     {type: 'done', count, start, end} (start/end: ms since the Unix epoch).
//   {type: 'exit'}
//     free this thread's wasm stack and TLS, and let the worker end.
import { workerData, parentPort } from 'node:worker_threads';
import { jsLock, jsUnlock } from './js-mutex.mjs';

const { module, memory, shared, layout, glueUrl } = workerData;
const glue = await import(glueUrl);
// initSync returns the raw exports; __wbindgen_thread_destroy is only there.
const raw = glue.initSync({ module, memory });
glue.thread_init(true);

const i32 = new Int32Array(shared);
const f64 = new Float64Array(shared);
const { MUTEX, MUTEX_COUNTER, GLUE_COUNTER, GATE } = layout;

// Each loop runs whole chunks and looks at the clock between them, so the
// clock's cost stays out of the measurement. Separate functions keep each
// hot loop monomorphic.

/** A peer's own loop inside wasm (peer_count_loop), `chunk` iterations per call. */
function runPeer(kind, lockAddr, counterAddr, chunk, deadline) {
  const loop = glue.peer_count_loop;
  let n = 0;
  do {
    n += loop(kind, lockAddr, counterAddr, chunk, 1);
  } while (performance.now() < deadline);
  return n;
}

/** The pure-JS Atomics mutex; the counter is a plain Float64Array cell. */
function runJsMutex(chunk, deadline) {
  const m = i32;
  const c = f64;
  let n = 0;
  do {
    for (let k = 0; k < chunk; k++) {
      jsLock(m, MUTEX);
      c[MUTEX_COUNTER]++;
      jsUnlock(m, MUTEX);
    }
    n += chunk;
  } while (performance.now() < deadline);
  return n;
}

/** parklot::Lock driven from JS, one glue call per lock and per unlock. */
function runGlue(lockAddr, chunk, deadline) {
  const lock = glue.lock;
  const unlock = glue.unlock;
  const c = f64;
  let n = 0;
  do {
    for (let k = 0; k < chunk; k++) {
      lock(lockAddr);
      c[GLUE_COUNTER]++;
      unlock(lockAddr);
    }
    n += chunk;
  } while (performance.now() < deadline);
  return n;
}

parentPort.on('message', (cmd) => {
  if (cmd.type === 'exit') {
    raw.__wbindgen_thread_destroy();
    parentPort.close();
    return;
  }
  if (cmd.type !== 'run') throw new Error(`worker: unknown command ${cmd.type}`);

  parentPort.postMessage({ type: 'armed' });
  Atomics.wait(i32, GATE, cmd.gen); // returns at once if the gate already moved

  const t0 = performance.now();
  const deadline = t0 + cmd.durationMs;
  let count;
  switch (cmd.how) {
    case 'peer':
      count = runPeer(cmd.kind, cmd.lockAddr, cmd.counterAddr, cmd.chunk, deadline);
      break;
    case 'js':
      count = runJsMutex(cmd.chunk, deadline);
      break;
    case 'glue':
      count = runGlue(cmd.lockAddr, cmd.chunk, deadline);
      break;
    default:
      throw new Error(`worker: unknown lock driver ${cmd.how}`);
  }
  const t1 = performance.now();
  const origin = performance.timeOrigin;
  parentPort.postMessage({ type: 'done', count, start: origin + t0, end: origin + t1 });
});

parentPort.postMessage({ type: 'ready' });
