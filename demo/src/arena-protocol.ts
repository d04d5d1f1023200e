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
 * `peer` value for the `multithreading` npm package's Mutex, as its README
 * uses it: `blockingLock()` returns a guard, `guard.dispose()` releases; a
 * JS loop around the same critical section in JS.
 */
export const JS_MULTITHREADING = -3;
/**
 * `peer` value for V8's experimental `Atomics.Mutex` (shared structs; in
 * Chromium only with `--js-flags=--harmony-struct`):
 * `Atomics.Mutex.lock(mutex, section)` around the same critical section in JS.
 */
export const JS_V8_MUTEX = -4;

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
  /** Which lock: a wasm peer index, JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING or JS_V8_MUTEX. */
  peer: number;
  /** Worker 0 creates the lock (`peer_new`) and frees it at exit. */
  create: boolean;
  /** 16 bytes: the u64 counter, then the f64 the critical section works on. */
  counterAddr: number;
  /** The pure-JS mutex's Int32 word (JS_MUTEX), or the package Lock's byte (JS_PACKAGE). */
  mutexAddr: number;
  /** The page's runtime, for `Runtime.attach` (JS_PACKAGE only). */
  handle?: RuntimeHandle;
  /**
   * The multithreading Mutex's lock word, a SharedArrayBuffer of its own
   * (JS_MULTITHREADING only): its constructor takes that buffer, which is
   * how the package itself rebuilds a Mutex sent to a worker.
   */
  mtLock?: SharedArrayBuffer;
  /** The run's `Atomics.Mutex` (JS_V8_MUTEX only): posting it shares it, it is not copied. */
  v8Mutex?: V8Mutex;
  /** Add-and-multiply steps per critical section. */
  work: number;
}

export type WorkerReply =
  | { type: 'ready'; names: string[]; lockAddr: number }
  | { type: 'done'; count: number }
  | { type: 'exited' }
  | { type: 'error'; message: string };

/** V8's `Atomics.Mutex` object, which no standard type describes. */
export type V8Mutex = object & { readonly __v8Mutex?: never };

/** V8's `Atomics.Mutex` class, where the engine has it (shared structs). */
export interface V8MutexClass {
  new (): V8Mutex;
  lock<T>(mutex: V8Mutex, section: () => T): T;
}

/** `Atomics.Mutex` if this engine has it, else undefined. */
export function v8MutexClass(): V8MutexClass | undefined {
  const m = (Atomics as unknown as { Mutex?: unknown }).Mutex;
  return typeof m === 'function' ? (m as V8MutexClass) : undefined;
}
