/**
 * One runtime instance: parklot's wasm module instantiated on a shared memory
 * on this thread, with what every primitive needs to call into it. Internal:
 * the public face is `Runtime`, and `Lock`, `Condition` and `RuntimeAtomics`
 * each keep a reference to the `Core` they came from.
 */
import { closedError, poisonedError, setupError } from './errors.js';
import { KeepAlive } from './keep-alive.js';
import { Kind } from './kinds.js';
import { releaseGlue, type Glue, type RawExports } from './loader.js';
import { WaiterPool } from './records.js';

/**
 * What a thread needs to be found and told apart: its tag, and how to let go
 * of its life lock (liveness.ts, `beginLife`, makes it).
 */
export interface Life {
  readonly tag: number;
  /** Releases the life lock (the thread closed its runtime). */
  release(): void;
}

/** The life of an instance nobody watches (tests that open a Core directly). */
const UNWATCHED: Life = { tag: 0, release: () => {} };

/** First word of a runtime's header: "prlk", so `attach` can tell a parklot memory. */
const HEADER_MAGIC = 0x6b6c7270;

/** A shared memory's buffer (lib.dom types it as an ArrayBuffer). */
export function sharedBuffer(memory: WebAssembly.Memory): SharedArrayBuffer {
  return memory.buffer as unknown as SharedArrayBuffer;
}

/** Where a memory's runtime header lives and the id written in it. */
export interface Header {
  readonly address: number;
  readonly id: number;
}

/** What `thread_reap` returns (wasm/src/threads.rs, `reaped`). */
const Reaped = { None: 0, Reaped: 1, Busy: 2 } as const;

/** What wasm-bindgen's glue exports that calls into wasm, as a plain function. */
type GlueFunction = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The error a trap outside the runtime's internal sections becomes. A trap is
 * a bug in parklot (no argument can cause one): the thread's stack pointer
 * has been reset, so later calls work, but a lock the trapped call held may
 * stay held. A trap inside a section poisons the runtime instead (`trapHandler`).
 */
export function trapError(call: string, cause: unknown): Error {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `parklot: the wasm module trapped in ${call} (${message}); this is a bug in parklot, please report it. ` +
      "It trapped outside the runtime's internal sections and this thread's wasm stack was reset, so the runtime stays usable, " +
      'but a lock held by that call may stay held',
    { cause },
  );
}

/**
 * The runtime's poison word (runtime/src/critical.rs) as two i32s: the tag
 * of the thread that died, then its section (bits 0-7) and how it died
 * (bits 8-15); zero while the runtime is healthy. The view is over the buffer
 * of the moment: the word is in the module's static data, which every later
 * buffer of the growing memory shares.
 */
function poisonView(raw: RawExports, memory: WebAssembly.Memory): Int32Array {
  const address = (raw as unknown as { poison_address(): number }).poison_address() >>> 0;
  return new Int32Array(sharedBuffer(memory), address, 2);
}

/** The poisoned error if the runtime is poisoned, else undefined: one load. */
function poisonedBy(poison: Int32Array): Error | undefined {
  const cause = Atomics.load(poison, 1);
  return cause === 0 ? undefined : poisonedError(cause & 0xff, Atomics.load(poison, 0) >>> 0, (cause >>> 8) & 0xff);
}

/**
 * The glue with every function guarded: a trap unwinds past the epilogue that
 * would restore the thread's stack pointer, so each trap would leak stack
 * until later calls overwrite memory other threads allocated. The guard puts
 * the pointer back to where every call on this thread starts (no call nests
 * another) and rethrows a `trapError`. Once `state.released` (the runtime
 * closed and its glue went to another), every call throws the closed error;
 * once the runtime is poisoned (`poison`, one load), the poisoned error.
 * (The hot paths that call `raw` directly skip that load: they meet the
 * poison as a trap once they enter any of the runtime's sections.)
 */
function guardGlue(glue: Glue, trapped: (call: string, e: unknown) => Error, state: { released: boolean }, poison: Int32Array): Glue {
  const guarded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(glue)) {
    if (typeof value !== 'function' || name === 'initSync' || name === 'default') {
      guarded[name] = value;
      continue;
    }
    const call = value as GlueFunction;
    // Fixed parameters, not `arguments`: the exports take at most five, and a
    // call through `apply(this, arguments)` cost about 10 ns per call.
    guarded[name] = function guarded(p0?: unknown, p1?: unknown, p2?: unknown, p3?: unknown, p4?: unknown) {
      // After close() the glue serves another instance: nothing may reach it from here.
      if (state.released) throw closedError();
      if (Atomics.load(poison, 1) !== 0) throw poisonedBy(poison)!;
      let result: unknown;
      try {
        result = call(p0, p1, p2, p3, p4);
      } catch (e) {
        throw trapped(name, e);
      }
      if (result === 0 && name === 'waiter_new') {
        throw new RangeError('parklot: the memory is full (1 GiB): no room for an async waiter record; free memory with rt.free() or settle pending async waits');
      }
      return result;
    };
  }
  return guarded as Glue;
}

/**
 * What the guard does with an exception from wasm: a trap (a
 * `WebAssembly.RuntimeError`) puts the thread's stack pointer back to where
 * every call starts. A trap inside one of the runtime's internal sections
 * (this thread, registered as `tag`, is still marked inside one), which
 * cannot be rolled back, poisons the runtime; so the trap becomes the
 * poisoned error if the runtime is poisoned (by it, or by a death that made
 * the call leave), else a `trapError`. Anything else passes through.
 */
function trapHandler(raw: RawExports, tag: number, poison: Int32Array): (call: string, e: unknown) => Error {
  const stackPointer = (raw as unknown as { __stack_pointer?: WebAssembly.Global }).__stack_pointer;
  if (stackPointer === undefined) throw new TypeError('parklot: the wasm module does not export __stack_pointer; rebuild it with scripts/build-wasm.sh');
  const top = stackPointer.value as number;
  const threadTrapped = (raw as unknown as { thread_trapped(tag: number): number }).thread_trapped;
  return (call, e) => {
    if (!(e instanceof WebAssembly.RuntimeError)) return e as Error;
    stackPointer.value = top;
    try {
      threadTrapped(tag);
    } catch {
      // It only reads a thread-local and sets a word; the poison word says the rest.
    }
    return poisonedBy(poison) ?? trapError(call, e);
  };
}

export class Core {
  /** Set by `close()`; every entry point checks it before calling into wasm. */
  closed = false;
  /** Whether this instance created the runtime (`Runtime.create`): it starts the reaper (reaper.ts). */
  creator = false;
  /** `mayBlock && !closed`: the one test a blocking call makes on its fast path. */
  canBlock: boolean;
  /**
   * The diagnostics' mode byte (runtime/src/diagnostics: 0 while all are
   * off), read by Lock's `lock`/`unlock` to choose the export that reports
   * to them only while they are on (wasm/src/lib.rs, `lock_seen`). Static
   * data, so the view over the buffer of the moment stays right.
   */
  readonly diagMode: Uint8Array;
  /**
   * This thread's record of the `Lock`s it holds (wasm/src/threads.rs,
   * `HeldLocks`): `held[0]` the one taken last, or -1 (none); `held[1]`
   * how many others; `held[2]` one reader-writer lock hold taken in JS
   * (its address plus 1 for a read, 2 for a write), or 0. Lock's and
   * RwLock's uncontended calls write them themselves (lock.ts, rwlock.ts),
   * so that a reaper finds what a dead thread held. Three words of the
   * thread's registry entry, which stays where it is until the thread
   * unregisters; before that and after, three words of nobody's
   * (`noHolds()`: no fast path applies).
   */
  held: Int32Array;
  /** The count of reader-writer locks marked owner-died (wasm/src/owner_died.rs), read after RwLock's uncontended write in JS. Static data, as `diagMode`. */
  readonly rwMarks: Uint32Array;
  readonly pool: WaiterPool;
  readonly keepAlive = new KeepAlive();

  #heapBuffer: SharedArrayBuffer;
  #heap32: Int32Array;
  #heap8: Uint8Array;
  #heapU32: Uint32Array;
  /** Buffers known to be (or not to be) views of this memory: see `ownsBuffer`. */
  readonly #ours = new WeakSet<SharedArrayBuffer>();
  readonly #foreign = new WeakSet<SharedArrayBuffer>();
  /** A 4-byte cell only this instance touches, for `ownsBuffer`'s probe. */
  readonly #probe: number;
  /** Two u32s `thread_reap` writes a reaped thread's TLS block and stack to. */
  readonly #reaped: number;
  /** The runtime's poison word (see `poisonView`). */
  readonly #poison: Int32Array;

  /** The glue module itself (`glue` is its guarded copy), released on close. */
  readonly #glueModule: Glue;
  readonly #glueState: { released: boolean };

  private constructor(
    glueModule: Glue,
    glueState: { released: boolean },
    readonly glue: Glue,
    /**
     * The module's exports themselves, for the hot paths (Lock's lock,
     * tryLock, unlock; the acquisitions and releases of Semaphore and
     * RwLock): each calls one directly, inside its own `try`, and
     * passes what it catches to `trapped`. Through the shared guard every
     * call site is megamorphic and costs about 25 ns more per lock + unlock.
     * A caller checks `closed` (or `canBlock`) first, as the guard checks
     * `released`.
     */
    readonly raw: RawExports,
    readonly trapped: (call: string, e: unknown) => Error,
    readonly module: WebAssembly.Module,
    readonly memory: WebAssembly.Memory,
    readonly mayBlock: boolean,
    readonly header: Header,
    readonly life: Life,
  ) {
    this.#glueModule = glueModule;
    this.#glueState = glueState;
    this.canBlock = mayBlock;
    this.#heapBuffer = sharedBuffer(memory);
    this.#heap32 = new Int32Array(this.#heapBuffer);
    this.#heap8 = new Uint8Array(this.#heapBuffer);
    this.#heapU32 = new Uint32Array(this.#heapBuffer);
    this.#poison = poisonView(raw, memory);
    this.diagMode = new Uint8Array(this.#heapBuffer, raw.diag_mode_address() >>> 0, 1);
    this.rwMarks = new Uint32Array(this.#heapBuffer, raw.rwlock_marks_address() >>> 0, 1);
    const held = raw.thread_held_address() >>> 0;
    this.held = held === 0 ? noHolds() : new Int32Array(this.#heapBuffer, held, 3);
    this.pool = new WaiterPool(glue, () => this.heap32());
    // The runtime's own memory: no public call may reach it (kinds.ts).
    this.#probe = glue.kind_alloc(Kind.Internal, 4, 4);
    this.#reaped = glue.kind_alloc(Kind.Internal, 8, 4);
    if (this.#probe === 0 || this.#reaped === 0) {
      throw new RangeError("parklot: the memory is full (1 GiB): no room for this thread's 12 bytes of bookkeeping; free memory with rt.free()");
    }
  }

  /**
   * Instantiates the module on `memory` with a glue copy of its own and sets
   * up this thread. Without `header` the memory is new and this instance
   * writes its header; with one, the memory belongs to a live runtime.
   */
  static open(
    glue: Glue,
    module: WebAssembly.Module,
    memory: WebAssembly.Memory,
    mayBlock: boolean,
    life: Life = UNWATCHED,
    header?: Header,
    newId?: number,
    register = true,
  ): Core {
    let raw: RawExports;
    let poison: Int32Array;
    try {
      raw = glue.initSync({ module, memory });
      poison = poisonView(raw, memory);
    } catch (e) {
      throw setupError('could not instantiate the wasm module on this memory (it must be shared, with maximum 16384 pages)', e);
    }
    // A poisoned memory takes nobody in: its registry may be half-edited.
    const poisoned = poisonedBy(poison);
    if (poisoned !== undefined) {
      releaseGlue(glue);
      throw poisoned;
    }
    try {
      glue.thread_init(mayBlock);
      glue.set_cpu_count(hostCpuCount());
      // What `__wbindgen_thread_destroy` frees for this thread once it is gone.
      const globals = raw as unknown as { __tls_base?: WebAssembly.Global; __stack_alloc?: WebAssembly.Global };
      // Not the reaper (reaper-worker.ts): it holds and waits for nothing, so nothing of it needs reaping.
      if (register) glue.thread_register(life.tag, Number(globals.__tls_base?.value ?? 0), Number(globals.__stack_alloc?.value ?? 0));
    } catch (e) {
      throw setupError('could not instantiate the wasm module on this memory (it must be shared, with maximum 16384 pages)', e);
    }
    const glueModule = glue;
    const glueState = { released: false };
    const trapped = trapHandler(raw, life.tag, poison);
    glue = guardGlue(glueModule, trapped, glueState, poison);
    if (header === undefined) {
      const address = glue.kind_alloc(Kind.Internal, 8, 8);
      if (address === 0) throw new RangeError('parklot: Runtime.create(): the new memory has no room for the runtime header');
      const id = newId ?? (Math.random() * 0x1_0000_0000) >>> 0;
      const heap = new Int32Array(memory.buffer);
      Atomics.store(heap, (address >>> 2) + 1, id);
      Atomics.store(heap, address >>> 2, HEADER_MAGIC);
      header = { address, id };
    }
    return new Core(glueModule, glueState, glue, raw, trapped, module, memory, mayBlock, header, life);
  }

  /** Whether `memory` carries the header `header` describes (read-only check, before instantiating). */
  static hasHeader(memory: WebAssembly.Memory, header: Header): boolean {
    const heap = new Int32Array(memory.buffer);
    const i = header.address >>> 2;
    return (
      header.address % 8 === 0 &&
      i + 1 < heap.length &&
      Atomics.load(heap, i) === HEADER_MAGIC &&
      Atomics.load(heap, i + 1) >>> 0 === header.id
    );
  }

  /** Throws if closed or poisoned. */
  check(): void {
    if (this.closed) throw closedError();
    const poisoned = poisonedBy(this.#poison);
    if (poisoned !== undefined) throw poisoned;
  }

  /**
   * The poisoned error if a thread died (or trapped) inside one of the
   * runtime's internal sections, which cannot be rolled back; else undefined.
   */
  poisoned(): Error | undefined {
    return poisonedBy(this.#poison);
  }

  /** The memory's current size in bytes. */
  byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** An Int32Array over the whole memory as it is now (a new one after the memory grew). */
  heap32(): Int32Array {
    const buffer = sharedBuffer(this.memory);
    if (buffer !== this.#heapBuffer) {
      this.#heapBuffer = buffer;
      this.#heap32 = new Int32Array(buffer);
    }
    return this.#heap32;
  }

  /**
   * A Uint8Array over the whole memory that reaches `address` (a view over
   * the buffer of the moment if the memory grew since the last one): the
   * memory never shrinks, so it stays right for that address for good.
   */
  bytesReaching(address: number): Uint8Array {
    if (address >= this.#heap8.length) this.#heap8 = new Uint8Array(sharedBuffer(this.memory));
    return this.#heap8;
  }

  /** As `bytesReaching`, a Uint32Array (index: `address >>> 2`). */
  wordsReaching(address: number): Uint32Array {
    if (address >= this.#heapU32.byteLength) this.#heapU32 = new Uint32Array(sharedBuffer(this.memory));
    return this.#heapU32;
  }

  /**
   * Whether `buffer` (a SharedArrayBuffer) is a view of this runtime's memory:
   * its current buffer, one it had before it grew, or one that reached this
   * thread through postMessage (a different object over the same bytes).
   * An unknown buffer is probed without writing to it: a fresh value goes
   * into this instance's private cell through the memory and must read back
   * through `buffer`, twice (a copy of the memory fails this). A buffer too
   * small to reach the cell (the memory grew since it was taken) is compared
   * on the runtime header instead. Results are cached per buffer object.
   */
  ownsBuffer(buffer: SharedArrayBuffer): boolean {
    if (buffer === this.#heapBuffer || this.#ours.has(buffer)) return true;
    if (this.#foreign.has(buffer)) return false;
    const heap = this.heap32();
    let ours = buffer === this.#heapBuffer;
    if (!ours && buffer.byteLength >= this.#probe + 4) {
      const view = new Int32Array(buffer, this.#probe, 1);
      const cell = this.#probe >>> 2;
      const token = (Math.random() * 0x1_0000_0000) | 0;
      Atomics.store(heap, cell, token);
      ours = Atomics.load(view, 0) === token;
      if (ours) {
        Atomics.store(heap, cell, ~token);
        ours = Atomics.load(view, 0) === ~token;
      }
    } else if (!ours && buffer.byteLength >= this.header.address + 8) {
      const view = new Int32Array(buffer, this.header.address, 2);
      ours = Atomics.load(view, 0) === HEADER_MAGIC && Atomics.load(view, 1) >>> 0 === this.header.id;
    }
    (ours ? this.#ours : this.#foreign).add(buffer);
    return ours;
  }

  /** Remembers a buffer of this memory (one a view was made over). */
  adoptBuffer(buffer: SharedArrayBuffer): void {
    this.#ours.add(buffer);
  }

  /**
   * Detaches this thread: takes its async waits out of their queues (their
   * promises reject), frees its waiter records, and frees the wasm stack and
   * TLS block of an instance that attached (the first instance on a memory
   * runs on the module's static stack, which wasm-bindgen cannot free).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.canBlock = false;
    this.held = noHolds(); // the entry is freed below
    // A poisoned runtime's memory is left as it is (its registry and queues
    // may be half-edited): only this thread's JS side lets go. Its pending
    // async waits end with the closed error (waiters.ts, `settle`).
    const healthy = this.poisoned() === undefined;
    try {
      if (healthy) {
        this.pool.closeAll();
        this.glue.kind_free(this.#probe, Kind.Internal, 4, 4);
        this.glue.kind_free(this.#reaped, Kind.Internal, 8, 4);
        // Leaves the registry; locks this thread still holds are released, marked owner-died.
        this.glue.thread_unregister();
      }
    } catch (e) {
      if (this.poisoned() === undefined) throw e; // poisoned meanwhile: as above
    }
    this.keepAlive.clear();
    this.life.release();
    if (this.poisoned() === undefined) {
      Atomics.notify(this.heap32(), this.glue.thread_generation_address() >>> 2); // ends a watcher's wait
      const stack = (this.raw as unknown as { __stack_alloc?: WebAssembly.Global }).__stack_alloc;
      if (stack !== undefined && stack.value !== 0) this.raw.__wbindgen_thread_destroy();
    }
    this.#glueState.released = true;
    releaseGlue(this.#glueModule);
  }

  /**
   * Reaps the threads registered under `tag`, which must be gone for good
   * (see liveness.ts): their waits leave the queues, the locks they held are
   * released as owner-died, and their stacks and TLS blocks are freed.
   * Returns how many threads it reaped now. A thread that died inside one
   * of the runtime's internal sections is not reaped: it poisons the
   * runtime (wasm/src/threads.rs, `thread_reap`). While another thread is
   * inside one (it may have died too, its death not yet delivered to this
   * thread), the reap is tried again later instead of waiting for that
   * section, `retry` ms later, doubling up to 100 ms. Never throws for a
   * poisoned runtime: it runs in event handlers.
   */
  reap(tag: number, retry = 1): number {
    if (this.closed || this.poisoned() !== undefined) return 0;
    let n = 0;
    try {
      for (;;) {
        const r = this.glue.thread_reap(tag, this.#reaped);
        if (r === Reaped.None) break;
        if (r === Reaped.Busy) {
          const again = setTimeout(() => this.reap(tag, Math.min(retry * 2, 100)), retry) as { unref?: () => void };
          again.unref?.(); // in Node: not a reason to keep the process alive
          break;
        }
        n++;
        const heap = this.heap32();
        const tls = heap[this.#reaped >>> 2]! >>> 0;
        const stack = heap[(this.#reaped >>> 2) + 1]! >>> 0;
        // A thread on the module's own stack (the first instance) has nothing to free.
        if (stack !== 0) this.raw.__wbindgen_thread_destroy(tls, stack);
      }
    } catch (e) {
      if (this.poisoned() === undefined) throw e;
    }
    return n;
  }
}

/**
 * `Core.held` of a thread with no registry entry: no lock is at 0 and no
 * reader-writer hold is -1, so neither Lock's nor RwLock's fast paths apply.
 */
function noHolds(): Int32Array {
  return Int32Array.of(0, 0, -1);
}

/**
 * CPUs the host runs threads on at once, for the core's spin before sleep
 * (it spins only where another CPU can wake it meanwhile); 1 if unknown.
 */
function hostCpuCount(): number {
  const g = globalThis as {
    navigator?: { hardwareConcurrency?: number };
    process?: { getBuiltinModule?: (name: string) => { availableParallelism?: () => number } | undefined };
  };
  const n = g.navigator?.hardwareConcurrency ?? g.process?.getBuiltinModule?.('os')?.availableParallelism?.() ?? 1;
  return Number.isInteger(n) && n > 0 ? n : 1;
}
