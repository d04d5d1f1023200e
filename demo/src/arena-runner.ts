/**
 * The arena's runner: N workers (and optionally the page's main thread)
 * contend for one lock in parklot's shared memory, each running seed 000's
 * critical section (`work` steps of a double add and multiply, then a plain
 * u64 counter) under the lock. The page drives it live; the browser
 * benchmark drives it through `window.parklotArena`.
 */
import { Runtime, type Lock, type RuntimeHandle } from '../../js/dist/index.js';
import { CTRL, JS_MULTITHREADING, JS_MUTEX, JS_PACKAGE, JS_V8_MUTEX, v8MutexClass, type InitMessage, type V8Mutex, type WorkerReply } from './arena-protocol.js';

export { JS_MULTITHREADING, JS_MUTEX, JS_PACKAGE, JS_V8_MUTEX };

export interface ArenaConfig {
  /** Worker threads, 1 to 16. */
  workers: number;
  /** A wasm peer index (see `Arena.peers`), JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING or JS_V8_MUTEX (where `Arena.hasV8Mutex`). */
  peer: number;
  /** Add-and-multiply steps per critical section, 1 to 1000. */
  work: number;
  /** Whether the page's main thread takes part, through `lockAsync` (parklot's Lock only). */
  mainThread: boolean;
}

export interface ArenaCounts {
  /** Milliseconds since the run started. */
  ms: number;
  perWorker: number[];
  main: number;
}

export interface ArenaResult extends ArenaCounts {
  config: ArenaConfig;
  lock: string;
  /** Acquisitions counted by the threads, and the counter the critical sections incremented. */
  expected: number;
  counter: number;
  exact: boolean;
  /** Acquisitions per second, all threads. */
  rate: number;
}

/** The peer name of parklot's Lock in the wasm module: the one lock with an async path. */
export const PARKLOT_LOCK = 'parklot::Lock';
export const JS_MUTEX_NAME = 'pure-JS Atomics mutex';
export const JS_PACKAGE_NAME = 'parklot Lock via the npm package (JS loop)';
export const JS_MULTITHREADING_NAME = 'multithreading Mutex (npm, JS loop)';
export const JS_V8_MUTEX_NAME = 'V8 Atomics.Mutex (JS loop)';
const MAX_WORKERS = 16;
const MAX_WORK = 1000;

/** A worker and a queue of its replies. */
class ArenaWorker {
  readonly worker: Worker;
  readonly #replies: WorkerReply[] = [];
  readonly #waiting: ((r: WorkerReply) => void)[] = [];

  constructor(index: number) {
    this.worker = new Worker(new URL('./arena-worker.ts', import.meta.url), { type: 'module', name: `arena-${index}` });
    this.worker.onmessage = (e: MessageEvent<WorkerReply>) => this.#push(e.data);
    this.worker.onerror = (e) => this.#push({ type: 'error', message: e.message || 'the worker failed to load' });
  }

  #push(r: WorkerReply): void {
    const w = this.#waiting.shift();
    if (w) w(r);
    else this.#replies.push(r);
  }

  /** The next reply, which must be of this type. */
  async next<T extends WorkerReply['type']>(type: T): Promise<Extract<WorkerReply, { type: T }>> {
    const r = this.#replies.shift() ?? (await new Promise<WorkerReply>((resolve) => this.#waiting.push(resolve)));
    if (r.type === 'error') throw new Error(`arena worker: ${r.message}`);
    if (r.type !== type) throw new Error(`arena worker: expected ${type}, got ${r.type}`);
    return r as Extract<WorkerReply, { type: T }>;
  }

  post(msg: unknown): void {
    this.worker.postMessage(msg);
  }
}

/** Yields to the event loop (a macrotask), so the page keeps painting while the main thread takes part. */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });
}

export class Arena {
  /** The wasm module's lock peers, in index order (from the module itself). */
  readonly peers: string[];
  /** Whether this browser has V8's `Atomics.Mutex` (Chromium: `--js-flags=--harmony-struct`), the JS_V8_MUTEX peer. */
  readonly hasV8Mutex = v8MutexClass() !== undefined;
  readonly rt: Runtime;
  #running: ArenaRun | undefined;

  private constructor(rt: Runtime, peers: string[]) {
    this.rt = rt;
    this.peers = peers;
  }

  /** Creates the runtime on this (main) thread and asks one worker for the module's lock peers. */
  static async create(): Promise<Arena> {
    // The benchmarks' build of the module: the package's, plus the lock peers the workers run.
    const module = new URL('../../js/wasm-pkg-bench/parklot_wasm_bg.wasm', import.meta.url);
    const rt = await Runtime.create({ mayBlock: false, module });
    const probe = new ArenaWorker(0);
    const h = rt.handle();
    probe.post(initMessage(h.module, h.memory, new SharedArrayBuffer(64), 0, 0, false, 0, 0, 1));
    const { names } = await probe.next('ready');
    probe.post({ type: 'exit' });
    await probe.next('exited');
    return new Arena(rt, names);
  }

  /** A lock's display name. */
  lockName(peer: number): string {
    if (peer === JS_MUTEX) return JS_MUTEX_NAME;
    if (peer === JS_PACKAGE) return JS_PACKAGE_NAME;
    if (peer === JS_MULTITHREADING) return JS_MULTITHREADING_NAME;
    if (peer === JS_V8_MUTEX) return JS_V8_MUTEX_NAME;
    return this.peers[peer] ?? `peer ${peer}`;
  }

  /** Starts a run; it goes on until `stop()`. One run at a time. */
  async start(config: ArenaConfig): Promise<ArenaRun> {
    if (this.#running) throw new Error('arena: a run is already going; stop it first');
    checkConfig(config, this);
    const run = new ArenaRun(this, config);
    this.#running = run;
    try {
      await run.begin();
    } catch (e) {
      this.#running = undefined;
      throw e;
    }
    run.finished.finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    return run;
  }

  /** Runs for `ms` milliseconds and returns the result (for tests and benchmarks). */
  async run(config: ArenaConfig, ms: number): Promise<ArenaResult> {
    const r = await this.start(config);
    await new Promise((resolve) => setTimeout(resolve, ms));
    return r.stop();
  }
}

function checkConfig(c: ArenaConfig, arena: Arena): void {
  if (!Number.isInteger(c.workers) || c.workers < 1 || c.workers > MAX_WORKERS) throw new RangeError(`arena: workers must be 1 to ${MAX_WORKERS}`);
  if (!Number.isInteger(c.work) || c.work < 1 || c.work > MAX_WORK) throw new RangeError(`arena: work must be 1 to ${MAX_WORK}`);
  const jsLocks = [JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING, JS_V8_MUTEX];
  if (!jsLocks.includes(c.peer) && !(Number.isInteger(c.peer) && c.peer >= 0 && c.peer < arena.peers.length)) {
    throw new RangeError(`arena: no lock ${c.peer}; choose one of Arena.peers, JS_MUTEX, JS_PACKAGE, JS_MULTITHREADING or JS_V8_MUTEX`);
  }
  if (c.peer === JS_V8_MUTEX && !arena.hasV8Mutex) {
    throw new TypeError('arena: this browser has no Atomics.Mutex (V8 shared structs: start Chromium with --js-flags=--harmony-struct)');
  }
  if (c.mainThread && arena.lockName(c.peer) !== PARKLOT_LOCK) {
    throw new TypeError(`arena: only ${PARKLOT_LOCK} can take the main thread (through lockAsync); ${arena.lockName(c.peer)} would have to block`);
  }
}

function initMessage(
  module: WebAssembly.Module,
  memory: WebAssembly.Memory,
  control: SharedArrayBuffer,
  index: number,
  peer: number,
  create: boolean,
  counterAddr: number,
  mutexAddr: number,
  work: number,
  handle?: RuntimeHandle,
  mtLock?: SharedArrayBuffer,
  v8Mutex?: V8Mutex,
): InitMessage {
  return { type: 'init', module, memory, control, index, peer, create, counterAddr, mutexAddr, work, handle, mtLock, v8Mutex };
}

/** One run of the arena: its workers, its lock and counter, and the main thread's loop. */
export class ArenaRun {
  readonly config: ArenaConfig;
  readonly #arena: Arena;
  readonly #control = new SharedArrayBuffer(CTRL.COUNTS_BYTE + 8 * MAX_WORKERS);
  readonly #counts = new Float64Array(this.#control, CTRL.COUNTS_BYTE, MAX_WORKERS);
  readonly #workers: ArenaWorker[] = [];
  #counterAddr = 0;
  #mutexAddr = 0;
  #lockAddr = 0;
  #t0 = 0;
  #mainCount = 0;
  #mainStop = false;
  #mainLoop: Promise<void> = Promise.resolve();
  #result: Promise<ArenaResult> | undefined;
  #finish!: (r: ArenaResult) => void;
  #fail!: (e: unknown) => void;
  /** Settles when the run has stopped and cleaned up. */
  readonly finished: Promise<ArenaResult>;

  constructor(arena: Arena, config: ArenaConfig) {
    this.#arena = arena;
    this.config = { ...config };
    this.finished = new Promise<ArenaResult>((resolve, reject) => {
      this.#finish = resolve;
      this.#fail = reject;
    });
    this.finished.catch(() => {}); // the caller of stop() sees the error
  }

  get lock(): string {
    return this.#arena.lockName(this.config.peer);
  }

  async begin(): Promise<void> {
    const { rt } = this.#arena;
    const { workers, peer, work } = this.config;
    this.#counterAddr = rt.alloc(64, 64); // zeroed: count 0, value 0.0
    // The JS mutex's word, or the package Lock's byte (zeroed: unlocked), on a line of its own.
    if (peer === JS_MUTEX || peer === JS_PACKAGE) this.#mutexAddr = rt.alloc(64, 64);
    // The package's Lock is declared in its line, so that the workers' rt.lockAt() accepts it.
    if (peer === JS_PACKAGE) rt.place('lock', this.#mutexAddr);
    const h = rt.handle();
    // multithreading's Mutex keeps its word in a SharedArrayBuffer of its own (zeroed: unlocked).
    const mtLock = peer === JS_MULTITHREADING ? new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT) : undefined;
    const V8Mutex = peer === JS_V8_MUTEX ? v8MutexClass() : undefined;
    const v8Mutex = V8Mutex ? new V8Mutex() : undefined;
    for (let i = 0; i < workers; i++) {
      const w = new ArenaWorker(i);
      this.#workers.push(w);
      w.post(initMessage(h.module, h.memory, this.#control, i, peer, i === 0, this.#counterAddr, this.#mutexAddr, work, peer === JS_PACKAGE ? h : undefined, mtLock, v8Mutex));
    }
    try {
      const ready = await Promise.all(this.#workers.map((w) => w.next('ready')));
      this.#lockAddr = ready[0]!.lockAddr;
    } catch (e) {
      for (const w of this.#workers) w.worker.terminate();
      this.#freeMemory();
      throw e;
    }
    this.#t0 = performance.now();
    for (const w of this.#workers) w.post({ type: 'go', lockAddr: this.#lockAddr });
    if (this.config.mainThread) this.#mainLoop = this.#runMain(rt.lockAt(this.#lockAddr));
  }

  /**
   * The main thread's share: `lockAsync` queues it in the same ParkingLot
   * queue as the workers; the critical section is the workers' one, in JS.
   */
  async #runMain(lock: Lock): Promise<void> {
    const { rt } = this.#arena;
    const count = rt.int32(this.#counterAddr, 2);
    const value = rt.float64(this.#counterAddr + 8);
    const work = this.config.work;
    let lastYield = performance.now();
    while (!this.#mainStop) {
      await lock.lockAsync();
      for (let w = 0; w < work; w++) value[0] = (value[0]! + 1) * 0.75;
      const lo = count[0]! >>> 0;
      if (lo === 0xffffffff) {
        count[0] = 0;
        count[1] = count[1]! + 1;
      } else {
        count[0] = lo + 1;
      }
      lock.unlock();
      this.#mainCount++;
      // An uncontended lockAsync settles without a macrotask: let the page paint every ~8 ms.
      if (performance.now() - lastYield > 8) {
        await yieldToPage();
        lastYield = performance.now();
      }
    }
  }

  /** Counts so far (live; a worker's count lags by at most one chunk of a few ms). */
  sample(): ArenaCounts {
    return {
      ms: performance.now() - this.#t0,
      perWorker: Array.from(this.#counts.subarray(0, this.config.workers)),
      main: this.#mainCount,
    };
  }

  /** Stops every thread, checks the counter, frees the lock and the workers. */
  stop(): Promise<ArenaResult> {
    this.#result ??= this.#stop().then(
      (r) => {
        this.#finish(r);
        return r;
      },
      (e: unknown) => {
        this.#fail(e);
        throw e;
      },
    );
    return this.#result;
  }

  async #stop(): Promise<ArenaResult> {
    const ctrl = new Int32Array(this.#control);
    Atomics.store(ctrl, CTRL.STOP, 1);
    this.#mainStop = true;
    const ms = performance.now() - this.#t0;
    try {
      const done = await Promise.all(this.#workers.map((w) => w.next('done')));
      await this.#mainLoop;
      const perWorker = done.map((d) => d.count);
      const main = this.#mainCount;
      const expected = perWorker.reduce((a, b) => a + b, 0) + main;
      const c = this.#arena.rt.int32(this.#counterAddr, 2);
      const counter = (c[1]! >>> 0) * 2 ** 32 + (c[0]! >>> 0);
      for (const w of this.#workers) w.post({ type: 'exit' });
      await Promise.all(this.#workers.map((w) => w.next('exited')));
      return { config: this.config, lock: this.lock, ms, perWorker, main, expected, counter, exact: counter === expected, rate: (expected / ms) * 1000 };
    } finally {
      for (const w of this.#workers) w.worker.terminate();
      this.#freeMemory();
    }
  }

  #freeMemory(): void {
    const { rt } = this.#arena;
    if (this.#counterAddr) rt.free(this.#counterAddr, 64, 64);
    if (this.#mutexAddr) rt.free(this.#mutexAddr, 64, 64);
    this.#counterAddr = this.#mutexAddr = 0;
  }
}
