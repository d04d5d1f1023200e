/**
 * An arena worker: one thread of parklot's wasm module (instantiated on the
 * page's shared memory) that hammers one lock until told to stop.
 *
 * Messages in: `init` (set up this thread; worker 0 also creates the lock),
 * `go` (run until the stop flag), `exit` (worker 0 frees the lock; all free
 * their wasm stack and close). Messages out: `ready`, `done`, `error`.
 */
import { initSync, peer_count_loop, peer_free, peer_names, peer_new, thread_init } from '../../js/wasm-pkg/parklot_wasm.js';
import { jsLock, jsUnlock } from '../../bench/wasm/js-mutex.mjs';
import { CTRL, JS_MUTEX, type InitMessage, type WorkerReply } from './arena-protocol.js';

// The loops run in chunks and look at the stop flag between them; a chunk
// grows or shrinks so that it lasts about 1 to 4 ms, which keeps the live
// counts fresh and the stop quick even for a lock that hands over slowly.
const CHUNK_MIN_MS = 1;
const CHUNK_MAX_MS = 4;
const CHUNK_LIMIT = 1 << 20;

let init: InitMessage | undefined;
let destroyThread: (() => void) | undefined;
let lockAddr = 0;

function reply(msg: WorkerReply): void {
  postMessage(msg);
}

/** The lock loop for a wasm peer: `peer_count_loop` runs lock, critical section, unlock inside wasm. */
function runPeer(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  let n = 0;
  let chunk = 16;
  while (Atomics.load(ctrl, CTRL.STOP) === 0) {
    const t = performance.now();
    n += peer_count_loop(m.peer, lockAddr, m.counterAddr, chunk, m.work);
    counts[m.index] = n;
    chunk = nextChunk(chunk, performance.now() - t);
  }
  return n;
}

/**
 * The pure-JS Atomics mutex around the same critical section in JS: `work`
 * steps of a double add and multiply, then the u64 counter (as two u32s).
 */
function runJsMutex(m: InitMessage, ctrl: Int32Array, counts: Float64Array): number {
  const buffer = m.memory.buffer;
  const mutex = new Int32Array(buffer, m.mutexAddr, 1);
  const count = new Uint32Array(buffer, m.counterAddr, 2);
  const value = new Float64Array(buffer, m.counterAddr + 8, 1);
  let n = 0;
  let chunk = 16;
  while (Atomics.load(ctrl, CTRL.STOP) === 0) {
    const t = performance.now();
    for (let k = 0; k < chunk; k++) {
      jsLock(mutex, 0);
      for (let w = 0; w < m.work; w++) value[0] = (value[0]! + 1) * 0.75;
      const lo = count[0]!;
      if (lo === 0xffffffff) {
        count[0] = 0;
        count[1] = count[1]! + 1;
      } else {
        count[0] = lo + 1;
      }
      jsUnlock(mutex, 0);
    }
    n += chunk;
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

onmessage = (e: MessageEvent) => {
  const msg = e.data as InitMessage | { type: 'go'; lockAddr: number } | { type: 'exit' };
  try {
    switch (msg.type) {
      case 'init': {
        init = msg;
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
        const n = m.peer === JS_MUTEX ? runJsMutex(m, ctrl, counts) : runPeer(m, ctrl, counts);
        counts[m.index] = n;
        reply({ type: 'done', count: n });
        break;
      }
      case 'exit': {
        if (init?.create && init.peer !== JS_MUTEX && lockAddr !== 0) peer_free(init.peer, lockAddr);
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
