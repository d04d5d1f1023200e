/**
 * Workers that start attached: `spawnWorker(rt, script, data)` starts a
 * worker (Node `worker_threads` or a browser's module worker) and sends it
 * the runtime's handle with `data`; in the worker, `attachWorker()` attaches
 * to that runtime and gives `data` back with its locks and conditions revived.
 *
 * The start message is `{ kind: 'parklot.start', handle, data }`: in Node it
 * is the worker's `workerData`, in browsers its first message.
 */
import type { UrlLike } from './host-types.js';
import { inWebWorker } from './liveness.js';
import { isNode } from './loader.js';
import { revive, type Revived } from './revive.js';
import { Runtime, type AttachOptions, type WatchableWorker } from './runtime.js';
import { checkThreadName } from './thread-names.js';

/** The least a worker has: a Node `worker_threads.Worker` and a browser `Worker` both fit. */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): unknown;
}

/**
 * Options for the Worker constructor (`name`, Node's `resourceLimits`, ...);
 * `workerData` is parklot's. `name` also names the worker's thread in
 * `rt.diagnostics()` and deadlock reports.
 */
export type SpawnOptions = Record<string, unknown>;

interface StartMessage {
  kind: 'parklot.start';
  handle: ReturnType<Runtime['handle']>;
  data: unknown;
  /** The thread's name (`spawnWorker`'s `options.name`). */
  name?: string;
  /** Node: the worker's life port, whose other end the runtime's reaper watches (reaper.ts). */
  life?: MessagePort;
}

const START = 'parklot.start';
// Variables, so that bundlers for browsers leave these Node-only imports alone.
const WORKER_THREADS = 'node:worker_threads';

interface NodeWorkerThreads {
  Worker: new (script: URL | string, options: Record<string, unknown>) => WorkerLike & { readonly threadId: number };
  isMainThread: boolean;
  workerData: unknown;
  parentPort: { once(event: 'message', listener: (value: unknown) => void): unknown } | null;
}

function nodeWorkerThreads(): Promise<NodeWorkerThreads> {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ WORKER_THREADS) as Promise<NodeWorkerThreads>;
}


function isStart(value: unknown): value is StartMessage {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === START;
}

/**
 * Starts a worker attached to `rt`: it gets the runtime's handle and `data`
 * (structured-cloned: Locks and Conditions in it arrive as plain forms that
 * `attachWorker()` revives). `script` is the worker's URL, or, in browsers,
 * a `Worker` you made with `new Worker(new URL('./worker.js',
 * import.meta.url), { type: 'module' })` so that your bundler sees it.
 * `options.name` names the worker's thread in `rt.diagnostics()` and in
 * `DeadlockError`s (default 'worker <id>'). Resolves to the worker.
 *
 * @example
 * const worker = await spawnWorker(rt, new URL('./worker.mjs', import.meta.url), { lock, counter }, { name: 'indexer' });
 * // worker.mjs: const { runtime, data } = await attachWorker();
 */
export async function spawnWorker<W extends WorkerLike>(rt: Runtime, script: W, data?: unknown, options?: { name?: string }): Promise<W>;
export async function spawnWorker(rt: Runtime, script: UrlLike | string, data?: unknown, options?: SpawnOptions): Promise<WorkerLike>;
export async function spawnWorker(rt: Runtime, script: UrlLike | string | WorkerLike, data?: unknown, options: SpawnOptions = {}): Promise<WorkerLike> {
  if (!(rt instanceof Runtime)) throw new TypeError('parklot: spawnWorker(rt, script, data): rt must be a Runtime (from Runtime.create())');
  options ??= {};
  const name = checkThreadName('spawnWorker()', options.name);
  const start: StartMessage = { kind: START, handle: rt.handle(), data, ...(name === undefined ? {} : { name }) };
  if (typeof script === 'object' && script !== null && !(script instanceof URL)) {
    if (typeof script.postMessage !== 'function') {
      throw new TypeError('parklot: spawnWorker(rt, script, data): script must be a URL, a string or a Worker');
    }
    // A worker of Node's threads made by hand (a Node Worker, or a Bun Web
    // Worker: both have a threadId, and their ports close when they end)
    // gets a life port in its start message (attachWorker keeps it) and is
    // watched; browsers' and Deno's Web Workers signal through Web Locks.
    const threadId = (script as { threadId?: unknown }).threadId;
    const nodeThread = isNode() && typeof threadId === 'number' && threadId >= 0;
    const life = nodeThread ? rt.lifeChannel() : undefined;
    if (life === undefined) script.postMessage(start);
    else {
      (script.postMessage as (message: unknown, transfer: unknown[]) => void)({ ...start, life: life.port }, [life.port]);
      life.watch();
    }
    if (nodeThread) rt.watch(script as unknown as WatchableWorker);
    return script;
  }
  if (typeof script !== 'string' && !(script instanceof URL)) {
    throw new TypeError('parklot: spawnWorker(rt, script, data): script must be a URL, a string or a Worker');
  }
  if (isNode()) {
    const { Worker } = await nodeWorkerThreads();
    // Watched: when it exits, however, its waits, locks and stack are reaped,
    // by the runtime's reaper through its life port (also while this thread
    // is blocked) and by its 'exit' event here.
    const life = rt.lifeChannel();
    const transferList = [...((options.transferList as unknown[] | undefined) ?? []), ...(life === undefined ? [] : [life.port])];
    const workerData: StartMessage = life === undefined ? start : { ...start, life: life.port };
    const worker = new Worker(script, { ...options, workerData, transferList });
    life?.watch();
    rt.watch(worker as unknown as WatchableWorker);
    return worker;
  }
  const BrowserWorker = (globalThis as { Worker?: new (url: URL | string, options: object) => WorkerLike }).Worker;
  if (BrowserWorker === undefined) throw new TypeError('parklot: spawnWorker(): this environment has no Worker');
  const worker = new BrowserWorker(script, { type: 'module', ...options });
  worker.postMessage(start);
  return worker;
}

/** The start message in a browser worker: the first message of kind 'parklot.start' (hidden from later listeners). */
function browserStart(): Promise<StartMessage> {
  const g = globalThis as {
    WorkerGlobalScope?: abstract new () => unknown;
    addEventListener?(type: 'message', listener: (e: MessageEvent) => void): void;
    removeEventListener?(type: 'message', listener: (e: MessageEvent) => void): void;
  };
  if (g.WorkerGlobalScope === undefined || !(globalThis instanceof g.WorkerGlobalScope) || g.addEventListener === undefined) {
    throw new TypeError('parklot: attachWorker() runs in a worker that spawnWorker(rt, worker, data) started, not on a page');
  }
  return new Promise((resolve) => {
    const listener = (e: MessageEvent): void => {
      if (!isStart(e.data)) return;
      e.stopImmediatePropagation();
      g.removeEventListener!('message', listener);
      resolve(e.data);
    };
    g.addEventListener!('message', listener);
  });
}

/** The start message in a Node worker: its `workerData`, else its first message. */
async function nodeStart(): Promise<StartMessage> {
  const threads = await nodeWorkerThreads();
  if (threads.isMainThread || threads.parentPort === null) {
    throw new TypeError('parklot: attachWorker() runs in a worker that spawnWorker(rt, script, data) started, not on the main thread');
  }
  if (isStart(threads.workerData)) return threads.workerData;
  const port = threads.parentPort;
  return new Promise((resolve) => {
    const wait = (): void => {
      port.once('message', (value) => (isStart(value) ? resolve(value) : wait()));
    };
    wait();
  });
}

/**
 * In a worker that `spawnWorker` started: attaches to its runtime and
 * returns it with the `data` sent, locks and conditions revived. Call it
 * first, before the worker awaits anything else (in browsers the start
 * message arrives as the worker's first message). `options.name` names this
 * thread (default: the name `spawnWorker` was given).
 *
 * @example
 * const { runtime, data } = await attachWorker();
 * data.lock.withLock(() => { data.counter[0] += 1; });
 */
export async function attachWorker<T = unknown>(options: AttachOptions = {}): Promise<{ runtime: Runtime; data: Revived<T> }> {
  // Deno's Web Workers pass for Node (`process.versions.node`) but get their
  // start message as a Web Worker does.
  const start = isNode() && !inWebWorker() ? await nodeStart() : await browserStart();
  const named = options?.name === undefined && start.name !== undefined ? { ...options, name: start.name } : options;
  const runtime = await Runtime.attachWithLifePort(start.handle, named, start.life);
  return { runtime, data: revive(runtime, start.data as T) };
}
