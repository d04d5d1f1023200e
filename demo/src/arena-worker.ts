/**
 * An arena worker: one thread of parklot's wasm module (instantiated on the
 * page's shared memory) that hammers one lock until told to stop.
 *
 * Messages in: `init` (set up this thread; worker 0 also creates the lock),
 * `go` (run until the stop flag), `exit` (worker 0 frees the lock; all free
 * their wasm stack and close). Messages out: `ready`, `done`, `error`.
 */
import { initSync, peer_count_loop, peer_free, peer_names, peer_new, thread_init } from '../../js/wasm-pkg-bench/parklot_wasm.js';
import { Mutex } from 'multithreading';
import { Runtime, type Lock } from '../../js/dist/index.js';
import { jsLock, jsUnlock } from '../../bench/wasm/js-mutex.mjs';
import { CTRL, JS_MULTITHREADING, JS_MUTEX, JS_PACKAGE, JS_V8_MUTEX, v8MutexClass, type InitMessage, type WorkerReply } from './arena-protocol.js';

// The loops run in chunks and look at the stop flag between them; a chunk
// grows or shrinks so that it lasts about 1 to 4 ms, which keeps the live
// counts fresh and the stop quick even for a lock that hands over slowly.
const CHUNK_MIN_MS = 1;
const CHUNK_MAX_MS = 4;
const CHUNK_LIMIT = 1 << 20;

let init: InitMessage | undefined;
let destroyThread: (() => void) | undefined;
let lockAddr = 0;
/** JS_PACKAGE: the package's runtime attached in this worker, and the Lock. */
let pkg: { rt: Runtime; lock: Lock } | undefined;
/** JS_MULTITHREADING: the multithreading Mutex, rebuilt on the run's lock word. */
let mtMutex: Mutex<undefined> | undefined;

function reply(msg: WorkerReply): void {
  postMessage(msg);
}

/**
 * Calls `runChunk(chunk)` (which returns the acquisitions it made) until the
 * stop flag, publishing the count after each chunk and sizing the chunks.
 */
function untilStopped(m: InitMessage, ctrl: Int32Array, counts: Float64Array, runChunk: (chunk: number) => number): number {
  let n = 0;
  let chunk = 16;
  while (Atomics.load(ctrl, CTRL.STOP) === 0) {
    const t = performance.now();
    n += runChunk(chunk);
    counts[m.index] = n;
    chunk = nextChunk(chunk, performance.now() - t);
  }
  return n;
}

function nextChunk(chunk: number, ms: number): number {
  if (ms < CHUNK_MIN_MS && chunk < CHUNK_LIMIT) return chunk * 2;
  if (ms > CHUNK_MAX_MS && chunk > 1) return chunk >> 1;
  return chunk;
}

/** The lock loop for a wasm peer: `peer_count_loop` runs lock, critical section, unlock inside wasm. */
function runPeer(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  return untilStopped(m, ctrl, counts, (chunk) => peer_count_loop(m.peer, lockAddr, m.counterAddr, chunk, m.work));
}

/**
 * The critical section in JS, as the wasm peers run it: `work` steps of a
 * double add and multiply, then the u64 counter (as two u32s).
 */
function sectionFor(m: InitMessage): () => void {
  const buffer = m.memory.buffer;
  const count = new Uint32Array(buffer, m.counterAddr, 2);
  const value = new Float64Array(buffer, m.counterAddr + 8, 1);
  const work = m.work;
  return () => {
    for (let w = 0; w < work; w++) value[0] = (value[0]! + 1) * 0.75;
    const lo = count[0]!;
    if (lo === 0xffffffff) {
      count[0] = 0;
      count[1] = count[1]! + 1;
    } else {
      count[0] = lo + 1;
    }
  };
}

/**
 * A lock called from JS around the critical section in JS: for the pure-JS
 * Atomics mutex, the package's Lock and multithreading's Mutex.
 */
function runJsLoop(m: InitMessage, ctrl: Int32Array, counts: Float64Array, lock: () => void, unlock: () => void): number {
  const section = sectionFor(m);
  return untilStopped(m, ctrl, counts, (chunk) => {
    for (let k = 0; k < chunk; k++) {
      lock();
      section();
      unlock();
    }
    return chunk;
  });
}

function runJsMutex(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  const mutex = new Int32Array(m.memory.buffer, m.mutexAddr, 1);
  return runJsLoop(m, ctrl, counts, () => jsLock(mutex, 0), () => jsUnlock(mutex, 0));
}

function runJsPackage(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  const lock = pkg!.lock;
  return runJsLoop(m, ctrl, counts, () => lock.lock(), () => lock.unlock());
}

function runMultithreading(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  const mutex = mtMutex!;
  let guard: { dispose(): void } | undefined;
  return runJsLoop(m, ctrl, counts, () => { guard = mutex.blockingLock(); }, () => guard!.dispose());
}

/** V8's Atomics.Mutex runs the critical section as a callback under the lock. */
function runV8Mutex(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  const V8Mutex = v8MutexClass()!;
  const mutex = m.v8Mutex!;
  const section = sectionFor(m);
  return untilStopped(m, ctrl, counts, (chunk) => {
    for (let k = 0; k < chunk; k++) V8Mutex.lock(mutex, section);
    return chunk;
  });
}

/** The loop for the run's lock. */
function runLoop(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  switch (m.peer) {
    case JS_MUTEX:
      return runJsMutex(m, ctrl, counts);
    case JS_PACKAGE:
      return runJsPackage(m, ctrl, counts);
    case JS_MULTITHREADING:
      return runMultithreading(m, ctrl, counts);
    case JS_V8_MUTEX:
      return runV8Mutex(m, ctrl, counts);
    default:
      return runPeer(m, ctrl, counts);
  }
}

onmessage = async (e: MessageEvent) => {
  const msg = e.data as InitMessage | { type: 'go'; lockAddr: number } | { type: 'exit' };
  try {
    switch (msg.type) {
      case 'init': {
        init = msg;
        if (init.peer === JS_PACKAGE) {
          // The package alone, as a user's worker has it: no module instance of our own.
          const rt = await Runtime.attach(init.handle!);
          pkg = { rt, lock: rt.lockAt(init.mutexAddr) };
          reply({ type: 'ready', names: [], lockAddr: 0 });
          break;
        }
        if (init.peer === JS_MULTITHREADING) {
          // The package alone too: its Mutex on the run's word, no wasm module.
          mtMutex = new Mutex(undefined, init.mtLock!);
          reply({ type: 'ready', names: [], lockAddr: 0 });
          break;
        }
        if (init.peer === JS_V8_MUTEX) {
          if (!v8MutexClass()) throw new Error('this worker has no Atomics.Mutex');
          reply({ type: 'ready', names: [], lockAddr: 0 });
          break;
        }
        const exports = initSync({ module: init.module, memory: init.memory });
        destroyThread = exports.__wbindgen_thread_destroy as () => void;
        thread_init(true);
        if (init.create) lockAddr = init.peer === JS_MUTEX ? 0 : peer_new(init.peer);
        reply({ type: 'ready', names: peer_names().split(','), lockAddr });
        break;
      }
      case 'go': {
        const m = init!;
        lockAddr = msg.lockAddr;
        const ctrl = new Int32Array(m.control);
        const counts = new Float64Array(m.control, CTRL.COUNTS_BYTE);
        const n = runLoop(m, ctrl, counts);
        counts[m.index] = n;
        reply({ type: 'done', count: n });
        break;
      }
      case 'exit': {
        if (init?.create && init.peer >= 0 && lockAddr !== 0) peer_free(init.peer, lockAddr);
        pkg?.rt.close();
        pkg = undefined;
        mtMutex = undefined;
        destroyThread?.();
        destroyThread = undefined;
        reply({ type: 'exited' });
        close();
        break;
      }
      default:
        throw new Error(`arena worker: unknown message ${String((msg as { type: unknown }).type)}`);
    }
  } catch (err) {
    reply({ type: 'error', message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
