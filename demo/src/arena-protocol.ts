/** The messages and shared control block between the arena page and its workers. */
import type { RuntimeHandle } from '../../js/dist/index.js';

/** `peer` value for the pure-JS Atomics mutex (the wasm peers are 0, 1, 2, ...). */
export const JS_MUTEX = -1;
/**
 * `peer` value for parklot's Lock as a web developer uses it: the npm
 * package attached in each worker, `lock.lock()` / `lock.unlock()` from a JS
 * loop around the same critical section in JS.
 */
export const JS_PACKAGE = -2;

/**
 * The control block, a small SharedArrayBuffer next to the wasm memory:
 * Int32 index STOP is the stop flag (0 run, 1 stop), and from byte
 * COUNTS_BYTE one Float64 per worker holds its acquisitions so far, written
 * by the worker after every chunk and read by the page for the live charts.
 */
export const CTRL = { STOP: 0, COUNTS_BYTE: 64 } as const;

export interface InitMessage {
  type: 'init';
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  control: SharedArrayBuffer;
  index: number;
  /** Which lock: a wasm peer index, JS_MUTEX or JS_PACKAGE. */
  peer: number;
  /** Worker 0 creates the lock (`peer_new`) and frees it at exit. */
  create: boolean;
  /** 16 bytes: the u64 counter, then the f64 the critical section works on. */
  counterAddr: number;
  /** The pure-JS mutex's Int32 word (JS_MUTEX), or the package Lock's byte (JS_PACKAGE). */
  mutexAddr: number;
  /** The page's runtime, for `Runtime.attach` (JS_PACKAGE only). */
  handle?: RuntimeHandle;
  /** Add-and-multiply steps per critical section. */
  work: number;
}

export type WorkerReply =
  | { type: 'ready'; names: string[]; lockAddr: number }
  | { type: 'done'; count: number }
  | { type: 'exited' }
  | { type: 'error'; message: string };
