/**
 * `Runtime`: parklot's wasm module instantiated on a shared memory, on this
 * thread. One thread creates it (`Runtime.create`), hands `rt.handle()` to
 * workers, and each worker attaches (`Runtime.attach`): all of them then
 * share the memory, the locks and conditions in it, and one ParkingLot.
 */
import { RwLock, type RwLockPolicy } from './rwlock.js';
import { Barrier, MAX_PARTIES } from './barrier.js';
import { Semaphore, checkPermits } from './semaphore.js';
import { RuntimeAtomics } from './atomics.js';
import { Condition } from './condition.js';
import { Core, sharedBuffer } from './core.js';
import { checkIsolated, closedError, setupError } from './errors.js';
import type { UrlLike, WasmMemory, WasmModule } from './host-types.js';
import { beginLife, watchThreads } from './liveness.js';
import { keepLifePort, lifeChannel, stopReaper } from './reaper.js';
import { Lock } from './lock.js';
import { Once } from './once.js';
import { MAX_PAGES, MIN_PAGES, detectMayBlock, freshGlue, loadModule } from './loader.js';
import { revive, type Revived } from './revive.js';
import { checkAddress, checkAlign, checkSize, isSharedArrayBuffer } from './validate.js';

/** Options of `Runtime.create`. */
export interface RuntimeOptions {
  /**
   * Whether this thread may block. Default: detected (`false` on a page's
   * main thread, `true` in workers and Node). With `false`, blocking calls
   * throw a TypeError naming their async form, which works everywhere.
   */
  mayBlock?: boolean | undefined;
  /**
   * The wasm module: a compiled `WebAssembly.Module`, or the URL of
   * `parklot_wasm_bg.wasm` to serve it as a file (relative to the page, or in
   * Node to the working directory). Default: the module's bytes shipped
   * inside this package's JavaScript.
   */
  module?: WasmModule | UrlLike | string | undefined;
  /** The memory's initial size in 64 KiB pages (18 to 16384; default 18). It grows as needed. */
  initialPages?: number | undefined;
}

/** Options of `Runtime.attach`. */
export interface AttachOptions {
  /** As in `RuntimeOptions.mayBlock`: default detected. */
  mayBlock?: boolean | undefined;
}

/**
 * What a worker needs to attach to a runtime: structured-cloneable, so it
 * goes through `postMessage` or `workerData`. Get it from `rt.handle()`.
 */
export interface RuntimeHandle {
  readonly kind: 'parklot.runtime';
  /** The compiled wasm module. */
  readonly module: WasmModule;
  /** The shared memory. */
  readonly memory: WasmMemory;
  /** Address of the runtime's header in the memory, and its id: how `attach` recognizes the memory. */
  readonly header: number;
  readonly id: number;
}

/** The exports a module must have to be parklot's. */
const REQUIRED_EXPORTS = ['lock_async_begin', 'condition_wait_async_begin', 'atomics_wait32_async_begin', '__wbindgen_thread_destroy'];

function checkMayBlock(value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  throw new TypeError(`parklot: options.mayBlock must be a boolean, got ${typeof value}`);
}

function handleError(what: string): TypeError {
  return new TypeError(`parklot: Runtime.attach(handle): ${what}; pass the object rt.handle() returns, from a Runtime made by Runtime.create()`);
}

/** Checks a handle (plain checks first, then the memory's header) and returns it. */
function checkHandle(handle: unknown): RuntimeHandle {
  if (typeof handle !== 'object' || handle === null) throw handleError('the handle is not an object');
  const h = handle as Partial<RuntimeHandle>;
  if (h.kind !== 'parklot.runtime') throw handleError('this is not a parklot runtime handle');
  if (!(h.module instanceof WebAssembly.Module)) throw handleError('handle.module is not a WebAssembly.Module');
  const exports = new Set(WebAssembly.Module.exports(h.module).map((e) => e.name));
  if (!REQUIRED_EXPORTS.every((name) => exports.has(name))) throw handleError("handle.module is not parklot's wasm module");
  if (!(h.memory instanceof WebAssembly.Memory)) throw handleError('handle.memory is not a WebAssembly.Memory');
  if (!isSharedArrayBuffer(h.memory.buffer)) {
    throw handleError('handle.memory is not shared (threads can only share a WebAssembly.Memory made with shared: true)');
  }
  if (typeof h.header !== 'number' || typeof h.id !== 'number' || !Number.isInteger(h.header) || h.header <= 0) {
    throw handleError('handle.header and handle.id are missing');
  }
  if (!Core.hasHeader(h.memory, { address: h.header, id: h.id })) {
    throw handleError("handle.memory is not this runtime's memory (its header does not match)");
  }
  return h as RuntimeHandle;
}

/**
 * parklot on this thread: the wasm module on a shared memory. Make one with
 * `Runtime.create()` on one thread and `Runtime.attach(rt.handle())` on every
 * other thread that shares its locks.
 *
 * @example
 * const rt = await Runtime.create();
 * worker.postMessage({ handle: rt.handle(), lock: rt.lock().address });
 */
export class Runtime {
  /**
   * `Atomics.wait` / `notify` / `waitAsync` on views of this runtime's memory.
   *
   * @example
   * const word = rt.int32(rt.alloc(4, 4));
   * rt.atomics.notify(word, 0); // wakes every waiter, returns how many
   */
  readonly atomics: RuntimeAtomics;
  readonly #core: Core;

  private constructor(core: Core) {
    this.#core = core;
    this.atomics = new RuntimeAtomics(core);
  }

  /**
   * Loads the wasm module, creates a new shared memory and sets up this
   * thread. Works on any thread (a page, a worker, Node).
   *
   * @example
   * const rt = await Runtime.create();               // mayBlock detected
   * const rtPage = await Runtime.create({ mayBlock: false }); // only async waits here
   */
  static async create(options: RuntimeOptions = {}): Promise<Runtime> {
    options ??= {};
    checkIsolated('Runtime.create()');
    const mayBlock = checkMayBlock(options.mayBlock) ?? detectMayBlock();
    const initial = options.initialPages ?? MIN_PAGES;
    if (typeof initial !== 'number') throw new TypeError(`parklot: options.initialPages must be a number, got ${typeof initial}`);
    if (!Number.isInteger(initial) || initial < MIN_PAGES || initial > MAX_PAGES) {
      throw new RangeError(`parklot: options.initialPages must be an integer from ${MIN_PAGES} to ${MAX_PAGES}, got ${String(initial)}`);
    }
    const module = await loadModule(options.module);
    let memory: WebAssembly.Memory;
    try {
      memory = new WebAssembly.Memory({ initial, maximum: MAX_PAGES, shared: true });
    } catch (e) {
      throw setupError(
        'could not create a shared WebAssembly.Memory (in a browser the page must be cross-origin isolated: ' +
          'serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)',
        e,
      );
    }
    const id = (Math.random() * 0x1_0000_0000) >>> 0;
    const life = await beginLife(id);
    const core = Core.open(await freshGlue(), module, memory, mayBlock, life, undefined, id);
    core.creator = true;
    watchThreads(core, id, life.tag);
    return new Runtime(core);
  }

  /**
   * Joins the runtime `handle` came from, on this thread (typically a
   * worker): same memory, same locks, same queues.
   *
   * @example
   * const rt = await Runtime.attach(workerData.handle);
   * const lock = rt.lockAt(workerData.lock);
   */
  static async attach(handle: RuntimeHandle, options: AttachOptions = {}): Promise<Runtime> {
    const h = checkHandle(handle);
    const mayBlock = checkMayBlock((options ?? {}).mayBlock) ?? detectMayBlock();
    const life = await beginLife(h.id);
    return new Runtime(Core.open(await freshGlue(), h.module, h.memory, mayBlock, life, { address: h.header, id: h.id }));
  }

  /**
   * What another thread passes to `Runtime.attach` (structured-cloneable).
   *
   * @example
   * const worker = new Worker(url, { workerData: { handle: rt.handle() } });
   * worker.postMessage(rt.handle());
   */
  handle(): RuntimeHandle {
    const core = this.#core;
    if (core.closed) throw closedError();
    return { kind: 'parklot.runtime', module: core.module, memory: core.memory, header: core.header.address, id: core.header.id };
  }

  /**
   * Watches a Node worker that attaches to this runtime (call it on the
   * thread that made the worker): when the worker exits, however it ends
   * (`terminate()`, an uncaught error, `process.exit()`, or simply
   * finishing without `rt.close()`), its queued waits leave their queues
   * without being counted by any notify, a lock it was handed passes to the
   * next waiter, locks it held are released and reported to their next
   * owner as `OwnerDiedError` (a reader-writer lock's write lock to its
   * next writer; its reads are released silently), a `Once` it was running
   * is poisoned, and its wasm stack is freed. Semaphore permits it took are
   * not given back: permits have no owner. Returns `worker`.
   *
   * The `'exit'` event runs on this thread, so it reaps only once this
   * thread is free: a worker started by `spawnWorker` is also reaped by the
   * runtime's reaper through its life port, while this thread is blocked
   * (see reaper.ts and the README). Browsers need no call: there each thread
   * holds a Web Lock for its life and the thread that created the runtime
   * reaps the ones that go. Without either signal a dead thread's waits stay
   * queued (see the README).
   *
   * @example
   * const worker = rt.watch(new Worker(url, { workerData: { handle: rt.handle() } }));
   */
  watch<W extends { readonly threadId: number; once(event: 'exit', listener: () => void): unknown }>(worker: W): W {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (typeof worker !== 'object' || worker === null || typeof worker.threadId !== 'number' || typeof worker.once !== 'function') {
      throw new TypeError("parklot: Runtime.watch(worker): pass a Node worker_threads Worker (it has threadId and once('exit'))");
    }
    const tag = worker.threadId; // -1 once it has exited: read it now
    if (tag >= 0) worker.once('exit', () => core.reap(tag));
    return worker;
  }

  /**
   * Detaches this thread: pending async waits of this thread reject, its
   * waiter records and (in an attached worker) its wasm stack are freed, and
   * every later call on this runtime, its locks and conditions throws. Other
   * threads and the memory are not affected. Calling it again does nothing.
   *
   * @example
   * rt.close();
   * rt.lock(); // TypeError: parklot: runtime is closed ...
   */
  close(): void {
    stopReaper(this.#core);
    this.#core.close();
  }

  /**
   * A life channel for a Node worker about to start on this runtime (see
   * reaper.ts), or undefined where this thread has no route to a reaper.
   * @internal
   */
  lifeChannel(): ReturnType<typeof lifeChannel> {
    return this.#core.closed ? undefined : lifeChannel(this.#core);
  }

  /**
   * Keeps this worker's life port (from its start message; see reaper.ts).
   * @internal
   */
  keepLifePort(port: unknown): void {
    keepLifePort(this.#core.header.id, port);
  }

  /**
   * Whether `close()` was called.
   *
   * @example
   * rt.close();
   * console.assert(rt.closed);
   */
  get closed(): boolean {
    return this.#core.closed;
  }

  /**
   * Whether this thread may block (see `RuntimeOptions.mayBlock`).
   *
   * @example
   * if (rt.mayBlock) lock.lock();
   * else await lock.lockAsync();
   */
  get mayBlock(): boolean {
    return this.#core.mayBlock;
  }

  /**
   * The shared memory. Its `buffer` changes identity when it grows; views made
   * earlier keep addressing the same bytes.
   *
   * @example
   * const bytes = new Uint8Array(rt.memory.buffer);
   * console.log(bytes.length);
   */
  get memory(): WasmMemory {
    return this.#core.memory;
  }

  /**
   * How many threads are attached to this runtime's memory right now: those
   * that attached and neither closed nor were reaped as gone (see `watch`).
   *
   * @example
   * console.log(rt.attachedThreads); // 1: this thread
   */
  get attachedThreads(): number {
    const core = this.#core;
    if (core.closed) throw closedError();
    return core.glue.thread_tags().length;
  }

  /**
   * How many async waiter records this thread has made: at most the number of
   * async waits it ever had in flight at once, since records are reused (an
   * `rt.atomics.waitAsync` that was notified counts as in flight until the
   * code awaiting it has run: a loop that waits again at once keeps two).
   *
   * @example
   * await lock.lockAsync(); lock.unlock();
   * console.log(rt.waiterRecords); // 0 or 1
   */
  get waiterRecords(): number {
    return this.#core.pool.size;
  }

  /**
   * A new lock (one zeroed byte from `alloc`), unlocked.
   *
   * @example
   * const lock = rt.lock();
   * worker.postMessage(lock.address);
   */
  lock(): Lock {
    return new Lock(this.#core, this.alloc(1, 1));
  }

  /**
   * The lock at `address` (from `lock.address`, maybe on another thread).
   * Throws a RangeError for an address outside the memory.
   *
   * @example
   * const lock = rt.lockAt(message.lockAddress);
   * lock.withLock(() => work());
   */
  lockAt(address: number): Lock {
    const core = this.#core;
    if (core.closed) throw closedError();
    return new Lock(core, checkAddress('Runtime.lockAt()', address, 1, 1, core.byteLength()));
  }

  /**
   * A new reader-writer lock (four bytes from `alloc`), unlocked. `policy`:
   * 'prefer-writers' (the default: new readers wait while a writer waits) or
   * 'prefer-readers'; about once a millisecond the other side is handed the
   * lock, so neither starves.
   *
   * @example
   * const table = rt.rwLock();
   * table.withRead(() => lookup());
   */
  rwLock(options: { policy?: RwLockPolicy } = {}): RwLock {
    const policy = options.policy ?? 'prefer-writers';
    if (policy !== 'prefer-writers' && policy !== 'prefer-readers') {
      throw new TypeError(`parklot: Runtime.rwLock(): policy must be 'prefer-writers' or 'prefer-readers', got ${String(policy)}`);
    }
    const address = this.alloc(4, 4);
    this.#core.glue.rwlock_init(address, policy === 'prefer-writers');
    return new RwLock(this.#core, address);
  }

  /**
   * The reader-writer lock at `address` (from `rwLock.address`, maybe on
   * another thread). Throws a RangeError for an address outside the memory
   * or not aligned to 4.
   *
   * @example
   * const table = rt.rwLockAt(message.tableLock);
   */
  rwLockAt(address: number): RwLock {
    const core = this.#core;
    if (core.closed) throw closedError();
    return new RwLock(core, checkAddress('Runtime.rwLockAt()', address, 4, 4, core.byteLength()));
  }

  /**
   * A new counting semaphore with `permits` free permits (four bytes from `alloc`).
   *
   * @example
   * const slots = rt.semaphore(4);
   * slots.acquire(); try { work(); } finally { slots.release(); }
   */
  semaphore(permits: number): Semaphore {
    checkPermits('Runtime.semaphore()', permits, 0);
    const address = this.alloc(4, 4);
    this.#core.glue.semaphore_init(address, permits);
    return new Semaphore(this.#core, address);
  }

  /** The semaphore at `address` (from `semaphore.address`, maybe on another thread). */
  semaphoreAt(address: number): Semaphore {
    const core = this.#core;
    if (core.closed) throw closedError();
    return new Semaphore(core, checkAddress('Runtime.semaphoreAt()', address, 4, 4, core.byteLength()));
  }

  /**
   * A new reusable barrier for `parties` threads (eight bytes from `alloc`).
   *
   * @example
   * const phase = rt.barrier(4);
   * await phase.waitAsync();
   */
  barrier(parties: number): Barrier {
    if (typeof parties !== 'number' || !Number.isInteger(parties) || parties < 1 || parties > MAX_PARTIES) {
      throw new RangeError(`parklot: Runtime.barrier(): parties must be an integer from 1 to ${MAX_PARTIES}, got ${String(parties)}`);
    }
    const address = this.alloc(8, 4);
    this.#core.glue.barrier_init(address, parties);
    return new Barrier(this.#core, address);
  }

  /** The barrier at `address` (from `barrier.address`, maybe on another thread). */
  barrierAt(address: number): Barrier {
    const core = this.#core;
    if (core.closed) throw closedError();
    return new Barrier(core, checkAddress('Runtime.barrierAt()', address, 8, 4, core.byteLength()));
  }

  /**
   * A new `Once` (one zeroed byte from `alloc`), not run yet.
   *
   * @example
   * const init = rt.once();
   * init.callOnce(() => setUp());
   */
  once(): Once {
    return new Once(this.#core, this.alloc(1, 1));
  }

  /**
   * The `Once` at `address` (from `once.address`, maybe on another thread).
   *
   * @example
   * rt.onceAt(message.init).callOnce(() => setUp());
   */
  onceAt(address: number): Once {
    const core = this.#core;
    if (core.closed) throw closedError();
    return new Once(core, checkAddress('Runtime.onceAt()', address, 1, 1, core.byteLength()));
  }

  /**
   * A new condition variable (one zeroed byte from `alloc`).
   *
   * @example
   * const cond = rt.condition();
   * worker.postMessage(cond.address);
   */
  condition(): Condition {
    return new Condition(this.#core, this.alloc(1, 1));
  }

  /**
   * The condition at `address` (from `condition.address`).
   *
   * @example
   * const cond = rt.conditionAt(message.condAddress);
   * cond.notifyAll();
   */
  conditionAt(address: number): Condition {
    const core = this.#core;
    if (core.closed) throw closedError();
    return new Condition(core, checkAddress('Runtime.conditionAt()', address, 1, 1, core.byteLength()));
  }

  /**
   * Allocates `bytes` zeroed bytes aligned to `align` (a power of two,
   * default 8) in the shared memory and returns their address. The memory
   * grows as needed, up to 1 GiB; beyond that a RangeError.
   *
   * @example
   * const address = rt.alloc(8 * 16, 8);
   * const cells = rt.float64(address, 16);
   */
  alloc(bytes: number, align = 8): number {
    const core = this.#core;
    if (core.closed) throw closedError();
    checkSize('Runtime.alloc(): bytes', bytes, MAX_PAGES * 65536);
    checkAlign(align);
    if (bytes + align > 0x7fff_ffff) throw new RangeError(`parklot: Runtime.alloc(): ${bytes} bytes aligned to ${align} do not fit in memory`);
    const address = core.glue.alloc(bytes, align);
    if (address === 0) {
      throw new RangeError(
        `parklot: Runtime.alloc(): out of memory allocating ${bytes} bytes (the memory's limit is 1 GiB); free what you no longer use with rt.free()`,
      );
    }
    return address;
  }

  /**
   * Frees memory from `alloc`, with the same `bytes` and `align`. Free a lock
   * or condition (`rt.free(lock.address, 1, 1)`) only when no thread uses it;
   * freeing twice corrupts the allocator.
   *
   * @example
   * const address = rt.alloc(64);
   * rt.free(address, 64);
   */
  free(address: number, bytes: number, align = 8): void {
    const core = this.#core;
    if (core.closed) throw closedError();
    checkSize('Runtime.free(): bytes', bytes, MAX_PAGES * 65536);
    checkAlign(align);
    checkAddress('Runtime.free()', address, Math.max(bytes, 1), align, core.byteLength());
    core.glue.free(address, bytes, align);
  }

  /**
   * An Int32Array of `length` elements (default 1) at `address` (4-aligned).
   * Views stay valid when the memory grows.
   *
   * @example
   * const word = rt.int32(rt.alloc(4, 4));
   * Atomics.store(word, 0, 1);
   */
  int32(address: number, length = 1): Int32Array {
    return new Int32Array(this.#viewBuffer('Runtime.int32()', address, length, 4), address, length);
  }

  /**
   * A BigInt64Array of `length` elements (default 1) at `address` (8-aligned).
   *
   * @example
   * const word = rt.bigInt64(rt.alloc(8, 8));
   * rt.atomics.wait(word, 0, 1n, 0); // "not-equal"
   */
  bigInt64(address: number, length = 1): BigInt64Array {
    return new BigInt64Array(this.#viewBuffer('Runtime.bigInt64()', address, length, 8), address, length);
  }

  /**
   * A Uint8Array of `length` bytes (default 1) at `address`.
   *
   * @example
   * const bytes = rt.uint8(rt.alloc(256, 1), 256);
   * bytes.fill(7);
   */
  uint8(address: number, length = 1): Uint8Array {
    return new Uint8Array(this.#viewBuffer('Runtime.uint8()', address, length, 1), address, length);
  }

  /**
   * A Float64Array of `length` elements (default 1) at `address` (8-aligned).
   *
   * @example
   * const cells = rt.float64(rt.alloc(8 * 4, 8), 4);
   * lock.withLock(() => { cells[0]! += 1; });
   */
  float64(address: number, length = 1): Float64Array {
    return new Float64Array(this.#viewBuffer('Runtime.float64()', address, length, 8), address, length);
  }

  /**
   * `value` (a message from another thread) with the Locks, Conditions,
   * RwLocks, Semaphores, Barriers and Onces in it, which structured cloning
   * turned into plain `{ kind, address, runtimeId }` objects, made live
   * objects of this runtime again. Throws a TypeError for one that belongs
   * to another runtime.
   *
   * @example
   * worker.onmessage = ({ data }) => rt.revive(data).lock.withLock(work);
   */
  revive<T>(value: T): Revived<T> {
    return revive(this, value);
  }

  #viewBuffer(call: string, address: number, length: number, size: number): SharedArrayBuffer {
    const core = this.#core;
    if (core.closed) throw closedError();
    checkSize(`${call}: length`, length, (MAX_PAGES * 65536) / size);
    const buffer = sharedBuffer(core.memory);
    checkAddress(call, address, length * size, size, buffer.byteLength);
    core.adoptBuffer(buffer);
    return buffer;
  }
}
