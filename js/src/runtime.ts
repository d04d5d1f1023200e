/**
 * `Runtime`: parklot's wasm module instantiated on a shared memory, on this
 * thread. One thread creates it (`Runtime.create`), hands `rt.handle()` to
 * workers, and each worker attaches (`Runtime.attach`): all of them then
 * share the memory, the locks and conditions in it, and one ParkingLot.
 */
import { RwLock, type RwLockOptions, type RwLockPolicy } from './rwlock.js';
import { Barrier, MAX_PARTIES } from './barrier.js';
import { Semaphore, checkPermits } from './semaphore.js';
import { RuntimeAtomics } from './atomics.js';
import { Condition } from './condition.js';
import { Core, sharedBuffer } from './core.js';
import { checkIsolated, closedError, setupError } from './errors.js';
import { Kind, PLACE_KINDS, checkKind, checkView, freeBlock, placePrimitive, type PrimitiveKind } from './kinds.js';
import type { UrlLike, WasmMemory, WasmModule } from './host-types.js';
import { beginLife, watchThreads } from './liveness.js';
import { keepLifePort, lifeChannel, stopReaper } from './reaper.js';
import { Lock } from './lock.js';
import { Once } from './once.js';
import { MAX_PAGES, MIN_PAGES, detectMayBlock, freshGlue, loadModule } from './loader.js';
import { revive, type Revived } from './revive.js';
import { checkAddress, checkAlign, checkSize, isSharedArrayBuffer } from './validate.js';
import { checkDeadlock, lockOrderViolations, setSwitch, snapshot, type DiagnosticsSnapshot, type LockOrderViolation } from './diagnostics.js';
import type { DeadlockCycle } from './errors.js';
import { checkThreadName, nameThread } from './thread-names.js';

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
  /** This thread's name in `rt.diagnostics()` and deadlock reports (default 'main', or 'worker <id>' in a worker). */
  name?: string | undefined;
}

/** Options of `Runtime.attach`. */
export interface AttachOptions {
  /** As in `RuntimeOptions.mayBlock`: default detected. */
  mayBlock?: boolean | undefined;
  /** This thread's name in `rt.diagnostics()` and deadlock reports (default: the name `spawnWorker` was given, else 'worker <id>'). */
  name?: string | undefined;
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

/** What `rt.place` lays out: the name of the method that makes one. */
export type PlaceKind = 'lock' | 'condition' | 'once' | 'rwLock' | 'semaphore' | 'barrier';

/** An options argument: an object, or undefined or null for none; else a TypeError naming `call`. */
function checkOptions(call: string, options: unknown): { readonly [key: string]: unknown } {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new TypeError(`parklot: ${call}: options must be an object, got ${typeof options}`);
  return options as { readonly [key: string]: unknown };
}

const POLICIES: readonly unknown[] = ['prefer-writers', 'prefer-readers'];

/**
 * A reader-writer lock's policy from `rt.rwLock(options)`: the policy's
 * name itself, or `{ policy }`, or nothing (undefined or null: 'prefer-writers').
 * `example` starts the call the messages show.
 */
function rwLockPolicy(call: string, example: string, options: unknown): RwLockPolicy {
  const right = `${example}'prefer-readers') or ${example}{ policy: 'prefer-readers' })`;
  let policy: unknown = options;
  if (typeof options !== 'string') {
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw new TypeError(`parklot: ${call}: options must be an object ({ policy }) or a policy's name, got ${typeof options}; write ${right}`);
    }
    policy = checkOptions(call, options)['policy'] ?? 'prefer-writers';
  }
  if (!POLICIES.includes(policy)) {
    const got = typeof policy === 'string' ? `'${policy}'` : typeof policy === 'symbol' ? 'a symbol' : String(policy);
    throw new TypeError(`parklot: ${call}: policy must be 'prefer-writers' or 'prefer-readers', got ${got}; write ${right}`);
  }
  return policy as RwLockPolicy;
}

/** A barrier's number of parties. */
function checkParties(call: string, parties: unknown): number {
  if (typeof parties !== 'number' || !Number.isInteger(parties) || parties < 1 || parties > MAX_PARTIES) {
    throw new RangeError(`parklot: ${call}: parties must be an integer from 1 to ${MAX_PARTIES}, got ${typeof parties === 'symbol' ? 'a symbol' : String(parties)}`);
  }
  return parties;
}

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

/** A Node `worker_threads` Worker, as `rt.watch` uses it. */
export interface NodeWorkerExit {
  readonly threadId: number;
  once(event: 'exit', listener: () => void): unknown;
}

/** A Bun Web Worker, as `rt.watch` uses it: it has Node's `threadId` and a `'close'` event. */
export interface BunWorkerClose {
  readonly threadId: number;
  addEventListener(event: 'close', listener: () => void): unknown;
}

/** What `rt.watch` takes: a worker of Node's threads, from Node, Deno's `node:worker_threads` or Bun. */
export type WatchableWorker = NodeWorkerExit | BunWorkerClose;

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
    const name = checkThreadName('Runtime.create()', options.name);
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
    const life = await beginLife(id, { creator: true });
    const core = Core.open(await freshGlue(), module, memory, mayBlock, life, undefined, id);
    core.creator = true;
    nameThread(core, name);
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
    return Runtime.attachWithLifePort(handle, options, undefined);
  }

  /**
   * `Runtime.attach`, for a worker that `spawnWorker` started: with
   * `lifePort` (from its start message) the thread's death is signalled by
   * that port's close, which the runtime's reaper sees (reaper.ts), so it
   * takes no Web Lock; the port learns the thread's tag before the thread
   * registers. `attachWorker` calls it.
   * @internal
   */
  static async attachWithLifePort(handle: RuntimeHandle, options: AttachOptions, lifePort: unknown): Promise<Runtime> {
    const h = checkHandle(handle);
    const given = checkOptions('Runtime.attach()', options);
    const mayBlock = checkMayBlock(given['mayBlock']) ?? detectMayBlock();
    const name = checkThreadName('Runtime.attach()', given['name']);
    const life = await beginLife(h.id, { watched: lifePort !== undefined });
    if (lifePort !== undefined) keepLifePort(h.id, lifePort, life.tag);
    const core = Core.open(await freshGlue(), h.module, h.memory, mayBlock, life, { address: h.header, id: h.id });
    nameThread(core, name);
    return new Runtime(core);
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
  watch<W extends WatchableWorker>(worker: W): W {
    const core = this.#core;
    if (core.closed) throw closedError();
    const w = worker as Partial<NodeWorkerExit & BunWorkerClose> | null;
    if (typeof w !== 'object' || w === null || typeof w.threadId !== 'number' || (typeof w.once !== 'function' && typeof w.addEventListener !== 'function')) {
      throw new TypeError(
        "parklot: Runtime.watch(worker): pass a Node worker_threads Worker (it has threadId and once('exit')) or a Bun Worker (threadId and a 'close' event)",
      );
    }
    const tag = w.threadId; // -1 once it has exited: read it now
    if (tag >= 0) {
      if (typeof w.once === 'function') w.once('exit', () => core.reap(tag));
      else w.addEventListener!('close', () => core.reap(tag));
    }
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
   * A new lock (one zeroed byte), unlocked. `lock.free()` gives it back.
   *
   * @example
   * const lock = rt.lock();
   * worker.postMessage(lock.address);
   */
  lock(): Lock {
    return new Lock(this.#core, this.#allocPrimitive(Kind.Lock, 'Runtime.lock()'));
  }

  /**
   * The lock at `address` (from `lock.address`, maybe on another thread).
   * Throws a RangeError for an address outside the memory, and a TypeError
   * for one that does not hold a live Lock (another kind of object, one
   * that was freed, the inside of a block from `alloc`: see `place`).
   *
   * @example
   * const lock = rt.lockAt(message.lockAddress);
   * lock.withLock(() => work());
   */
  lockAt(address: number): Lock {
    return new Lock(this.#core, this.#checkAt('Runtime.lockAt()', address, 1, 1, Kind.Lock));
  }

  /**
   * A new reader-writer lock (four bytes), unlocked. Its policy:
   * 'prefer-writers' (the default: new readers wait while a writer waits) or
   * 'prefer-readers', given as the argument or as `{ policy }`; about once a
   * millisecond the other side is handed the lock, so neither starves.
   *
   * @example
   * const table = rt.rwLock();                  // or rt.rwLock('prefer-readers')
   * table.withRead(() => lookup());
   */
  rwLock(options?: RwLockOptions | RwLockPolicy): RwLock {
    const policy = rwLockPolicy('Runtime.rwLock()', 'rt.rwLock(', options);
    return this.#setUp(Kind.RwLock, this.#allocPrimitive(Kind.RwLock, 'Runtime.rwLock()'), policy) as RwLock;
  }

  /**
   * The reader-writer lock at `address` (from `rwLock.address`, maybe on
   * another thread). Throws as `lockAt` does (RangeError: outside the
   * memory or not aligned to 4; TypeError: no live RwLock there).
   *
   * @example
   * const table = rt.rwLockAt(message.tableLock);
   */
  rwLockAt(address: number): RwLock {
    return new RwLock(this.#core, this.#checkAt('Runtime.rwLockAt()', address, 4, 4, Kind.RwLock));
  }

  /**
   * A new counting semaphore with `permits` free permits (four bytes).
   *
   * @example
   * const slots = rt.semaphore(4);
   * slots.acquire(); try { work(); } finally { slots.release(); }
   */
  semaphore(permits: number): Semaphore {
    checkPermits('Runtime.semaphore()', permits, 0);
    return this.#setUp(Kind.Semaphore, this.#allocPrimitive(Kind.Semaphore, 'Runtime.semaphore()'), permits) as Semaphore;
  }

  /** The semaphore at `address` (from `semaphore.address`, maybe on another thread); throws as `lockAt` does. */
  semaphoreAt(address: number): Semaphore {
    return new Semaphore(this.#core, this.#checkAt('Runtime.semaphoreAt()', address, 4, 4, Kind.Semaphore));
  }

  /**
   * A new reusable barrier for `parties` threads (eight bytes).
   *
   * @example
   * const phase = rt.barrier(4);
   * await phase.waitAsync();
   */
  barrier(parties: number): Barrier {
    checkParties('Runtime.barrier()', parties);
    return this.#setUp(Kind.Barrier, this.#allocPrimitive(Kind.Barrier, 'Runtime.barrier()'), parties) as Barrier;
  }

  /** The barrier at `address` (from `barrier.address`, maybe on another thread); throws as `lockAt` does. */
  barrierAt(address: number): Barrier {
    return new Barrier(this.#core, this.#checkAt('Runtime.barrierAt()', address, 8, 4, Kind.Barrier));
  }

  /**
   * A new `Once` (one zeroed byte), not run yet.
   *
   * @example
   * const init = rt.once();
   * init.callOnce(() => setUp());
   */
  once(): Once {
    return new Once(this.#core, this.#allocPrimitive(Kind.Once, 'Runtime.once()'));
  }

  /**
   * The `Once` at `address` (from `once.address`, maybe on another thread);
   * throws as `lockAt` does.
   *
   * @example
   * rt.onceAt(message.init).callOnce(() => setUp());
   */
  onceAt(address: number): Once {
    return new Once(this.#core, this.#checkAt('Runtime.onceAt()', address, 1, 1, Kind.Once));
  }

  /**
   * A new condition variable (one zeroed byte).
   *
   * @example
   * const cond = rt.condition();
   * worker.postMessage(cond.address);
   */
  condition(): Condition {
    return new Condition(this.#core, this.#allocPrimitive(Kind.Condition, 'Runtime.condition()'));
  }

  /**
   * The condition at `address` (from `condition.address`); throws as `lockAt` does.
   *
   * @example
   * const cond = rt.conditionAt(message.condAddress);
   * cond.notifyAll();
   */
  conditionAt(address: number): Condition {
    return new Condition(this.#core, this.#checkAt('Runtime.conditionAt()', address, 1, 1, Kind.Condition));
  }

  /**
   * A new primitive of `kind` at `address`, inside a block of yours from
   * `alloc` (a hand-made layout): its bytes are zeroed and set up as the
   * matching `rt.lock()`, `rt.rwLock(policy)`, `rt.semaphore(permits)`,
   * `rt.barrier(parties)`, `rt.once()` or `rt.condition()` would, and from
   * then on `rt.lockAt(address)` (and its kin) accept it on every thread.
   * Throws a RangeError for a misaligned address, and a TypeError for one
   * that is not inside a block from `alloc`, would run past its end, or
   * would overlap a primitive placed there before. Views (`int32`, ...)
   * may not overlap it. `free()` on it, or `rt.free()` of its block, ends
   * it; the block's bytes stay the block's.
   *
   * @example
   * const block = rt.alloc(64, 8);
   * const lock = rt.place('lock', block);          // byte 0: a Lock
   * const count = rt.int32(block + 4);             // bytes 4..7: data it guards
   */
  place(kind: 'lock', address: number): Lock;
  place(kind: 'condition', address: number): Condition;
  place(kind: 'once', address: number): Once;
  place(kind: 'rwLock', address: number, options?: RwLockOptions | RwLockPolicy): RwLock;
  place(kind: 'semaphore', address: number, permits: number): Semaphore;
  place(kind: 'barrier', address: number, parties: number): Barrier;
  place(kind: PlaceKind, address: number, setUp?: unknown): Lock | Condition | Once | RwLock | Semaphore | Barrier {
    const call = 'Runtime.place()';
    const core = this.#core;
    if (core.closed) throw closedError();
    const k = typeof kind === 'string' && Object.hasOwn(PLACE_KINDS, kind) ? PLACE_KINDS[kind]! : undefined;
    if (k === undefined) {
      const names = Object.keys(PLACE_KINDS).map((n) => `'${n}'`).join(', ');
      throw new TypeError(`parklot: ${call}: kind must be one of ${names}, got ${typeof kind === 'string' ? `'${kind}'` : typeof kind}`);
    }
    // The set-up argument first: nothing is placed for a bad one.
    let arg: RwLockPolicy | number | undefined;
    if (k === Kind.RwLock) arg = rwLockPolicy(call, "rt.place('rwLock', address, ", setUp);
    else if (k === Kind.Semaphore) arg = checkPermits(call, setUp, 0);
    else if (k === Kind.Barrier) arg = checkParties(call, setUp);
    placePrimitive(core, address, k);
    return this.#setUp(k, address, arg);
  }

  /**
   * Allocates `bytes` zeroed bytes aligned to `align` (a power of two,
   * default 8) in the shared memory and returns their address. The memory
   * grows as needed, up to 1 GiB; beyond that a RangeError. The block is
   * yours: views (`int32`, ...) may reach it, and `place` lays primitives
   * out in it.
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
    const address = core.glue.kind_alloc(Kind.Bytes, bytes, align);
    if (address === 0) {
      throw new RangeError(
        `parklot: Runtime.alloc(): out of memory allocating ${bytes} bytes (the memory's limit is 1 GiB); free what you no longer use with rt.free()`,
      );
    }
    return address;
  }

  /**
   * Frees a block from `alloc`, with the same `bytes` and `align`, and the
   * primitives placed in it. Refused (a TypeError, nothing done) for
   * anything else: an address `alloc` did not return, a block already
   * freed, another size or alignment, a primitive (free it with its own
   * `free()`), or a block holding a placed primitive that is held or waited
   * for. Other threads must be done with the block first.
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
    checkAddress('Runtime.free()', address, 1, 1, core.byteLength());
    freeBlock(core, address, bytes, align);
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

  /**
   * A snapshot of the runtime now, across its threads: every queued wait
   * (its address and kind of primitive, the thread, blocking or async, how
   * long it has waited and how long it may still wait), every thread (its
   * name, alive or reaped, which one is this), and who holds which lock
   * while holds are tracked (`setHoldTracking`, `setDeadlockDetection` or
   * `setLockOrderChecking`; only `Lock`s and reader-writer locks' write and
   * upgradable holds have one owner to show). Cheap enough to poll every
   * 100 ms. Match `address` with a primitive's `address` to find it.
   *
   * @example
   * for (const q of rt.diagnostics().queues) console.log(q.address, q.primitive, q.holder, q.waiters.length);
   */
  diagnostics(): DiagnosticsSnapshot {
    return snapshot(this.#core);
  }

  /**
   * Switches deadlock detection on or off for every thread of this runtime
   * (off by default, and then free on the fast paths). While on, an
   * acquisition that would close a cycle of threads waiting for each
   * other's locks (across workers and this thread's async waits) throws or
   * rejects with `DeadlockError` instead of waiting for ever; the other
   * threads are untouched. Turns hold tracking on while on.
   *
   * @example
   * rt.setDeadlockDetection(true);
   * try { b.lock(); } catch (e) { if (e instanceof DeadlockError) a.unlock(); }
   */
  setDeadlockDetection(on: boolean): void {
    setSwitch(this.#core, 'detection', 'Runtime.setDeadlockDetection()', on);
  }

  /**
   * Switches lock-order checking on or off for every thread of this
   * runtime (for tests and development; switching it on starts afresh).
   * While on, every acquisition records "took B while holding A" with the
   * JS stack of the call (`new Error().stack`, taken only while on), and
   * the first pair of locks taken in both orders is reported by
   * `lockOrderViolations()`, before the two orders ever deadlock.
   *
   * @example
   * rt.setLockOrderChecking(true);
   * runTests();
   * for (const v of rt.lockOrderViolations()) console.warn(v.description, v.stack, v.otherStack);
   */
  setLockOrderChecking(on: boolean): void {
    setSwitch(this.#core, 'lockOrder', 'Runtime.setLockOrderChecking()', on);
  }

  /**
   * Switches hold tracking on or off for every thread of this runtime: while
   * on, `diagnostics()` says who holds each lock, and `checkDeadlock()` can
   * see cycles. Locks taken while it was off are not known.
   *
   * @example
   * rt.setHoldTracking(true);
   * console.log(rt.diagnostics().holds);
   */
  setHoldTracking(on: boolean): void {
    setSwitch(this.#core, 'tracking', 'Runtime.setHoldTracking()', on);
  }

  /**
   * The lock-order inversions seen since lock-order checking was switched
   * on, first first: both threads, and where each took the second lock.
   *
   * @example
   * expect(rt.lockOrderViolations()).toEqual([]);
   */
  lockOrderViolations(): LockOrderViolation[] {
    return lockOrderViolations(this.#core);
  }

  /**
   * Every cycle of threads waiting for each other's locks now (each once),
   * without disturbing them: for a program that froze with detection off.
   * Needs holds tracked (`setHoldTracking`, or detection or lock-order
   * checking on) since before the locks were taken.
   *
   * @example
   * for (const cycle of rt.checkDeadlock()) console.error(cycle.description);
   */
  checkDeadlock(): DeadlockCycle[] {
    return checkDeadlock(this.#core);
  }

  #viewBuffer(call: string, address: number, length: number, size: number): SharedArrayBuffer {
    const core = this.#core;
    if (core.closed) throw closedError();
    checkSize(`${call}: length`, length, (MAX_PAGES * 65536) / size);
    const buffer = sharedBuffer(core.memory);
    checkAddress(call, address, length * size, size, buffer.byteLength);
    checkView(core, call, address, length * size);
    core.adoptBuffer(buffer);
    return buffer;
  }

  /** A new zeroed primitive of `kind`, in the layout the core gives its type. */
  #allocPrimitive(kind: PrimitiveKind, call: string): number {
    const core = this.#core;
    if (core.closed) throw closedError();
    const address = core.glue.kind_alloc(kind, 0, 0);
    if (address === 0) {
      throw new RangeError(`parklot: ${call}: out of memory (the memory's limit is 1 GiB); free what you no longer use with free() or rt.free()`);
    }
    return address;
  }

  /** Sets up zeroed bytes at `address` as a new primitive of `kind` (`arg`: its policy, permits or parties). */
  #setUp(kind: PrimitiveKind, address: number, arg: RwLockPolicy | number | undefined): Lock | Condition | Once | RwLock | Semaphore | Barrier {
    const core = this.#core;
    switch (kind) {
      case Kind.Lock:
        return new Lock(core, address);
      case Kind.Condition:
        return new Condition(core, address);
      case Kind.Once:
        return new Once(core, address);
      case Kind.RwLock:
        core.glue.rwlock_init(address, arg === 'prefer-writers');
        return new RwLock(core, address);
      case Kind.Semaphore:
        core.glue.semaphore_init(address, arg as number);
        return new Semaphore(core, address);
      case Kind.Barrier:
        core.glue.barrier_init(address, arg as number);
        return new Barrier(core, address);
    }
  }

  /** Checks that `address` holds a live primitive of `kind` (kinds.ts) for a `*At` call. */
  #checkAt(call: string, address: number, bytes: number, align: number, kind: PrimitiveKind): number {
    const core = this.#core;
    if (core.closed) throw closedError();
    checkAddress(call, address, bytes, align, core.byteLength());
    return checkKind(core, call, address, kind);
  }
}
