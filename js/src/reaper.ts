/**
 * Learning of a Node worker's death on a thread that never blocks.
 *
 * Node delivers a worker's `'exit'` event to the thread that made it, and a
 * thread blocked in parklot (`lock()` on a lock the worker holds) runs no
 * events: it would wait forever for a signal it cannot receive. So every
 * worker that `spawnWorker` starts gets a *life port*: one end of a
 * `MessageChannel` that it keeps for its life, while the other end goes to
 * the runtime's **reaper**, a small worker of parklot's own that never
 * blocks. Node closes a thread's ports when the thread ends, however it
 * ends (natural exit, an uncaught error, `process.exit()`, `terminate()`),
 * and the reaper's end then emits `'close'` (Bun's Web Workers' ports do
 * too; Deno's Web Workers' do not, and take a Web Lock instead). The
 * worker tells the reaper its tag through the port as it attaches, before
 * it registers; on the close the reaper reaps that tag: the thread
 * (its waits leave their queues, the locks it held are released
 * owner-died), which wakes whoever is blocked on them.
 *
 * Routes to the reaper: the thread that created the runtime starts it (on
 * the first `spawnWorker`) and posts to it directly; a worker that
 * `spawnWorker` started posts through its own life port, whose other end
 * the reaper holds, so that the workers it spawns are covered too. A worker
 * attached by hand has no route: the workers it spawns are reaped through
 * their `'exit'` event alone (`rt.watch`), on a thread that must then not
 * be blocked.
 *
 * Only where `worker_threads` and `MessageChannel` exist (Node); browsers
 * learn of deaths through Web Locks (liveness.ts).
 */
import type { Core } from './core.js';

/** What the reaper is told: watch a new worker through `port`. */
export interface WatchMessage {
  readonly kind: 'parklot.watch';
  readonly port: MessagePort;
}

/** What a worker tells the reaper through its life port: its tag, before it registers. */
export interface TagMessage {
  readonly kind: 'parklot.tag';
  readonly tag: number;
}

/** The parts of Node's `MessagePort` parklot uses beyond the DOM type. */
export interface NodePort extends MessagePort {
  on(event: 'close' | 'message', listener: (value: unknown) => void): unknown;
  unref(): unknown;
}

/** The parts of Node's `Worker` the reaper needs. */
interface NodeWorker {
  postMessage(message: unknown, transfer?: readonly unknown[]): void;
  unref(): unknown;
  terminate(): unknown;
  once(event: 'online', listener: () => void): unknown;
}

interface WorkerThreads {
  Worker: new (script: URL, options: Record<string, unknown>) => NodeWorker;
}

/** How a thread reaches the reaper of one runtime. */
interface Route {
  post(message: WatchMessage): void;
  /** The reaper itself, on the thread that started it (stopped on close). */
  readonly reaper?: NodeWorker;
}

/** This thread's routes, by runtime id. */
const routes = new Map<number, Route>();

function workerThreads(): WorkerThreads | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process;
  return proc?.getBuiltinModule?.('node:worker_threads') as WorkerThreads | undefined;
}

/**
 * Keeps `port`, this worker's life port for runtime `runtimeId` (from its
 * start message), for the worker's life, tells the reaper through it the
 * tag this thread registers under, and makes it this thread's route to
 * that runtime's reaper. It does not keep the worker alive.
 */
export function keepLifePort(runtimeId: number, port: unknown, tag: number): void {
  if (typeof port !== 'object' || port === null || typeof (port as MessagePort).postMessage !== 'function') return;
  const life = port as NodePort;
  (life.unref as (() => unknown) | undefined)?.call(life); // Node's ports only: a Web Worker's do not keep it alive
  const told: TagMessage = { kind: 'parklot.tag', tag };
  life.postMessage(told);
  routes.set(runtimeId, { post: (m) => life.postMessage(m, [m.port]) });
}

/**
 * A new life channel for a worker about to start on `core`'s runtime: the
 * port to hand the worker, and `watch(tag)` to call, at once, once the
 * worker exists (its other end goes to the reaper). Undefined where this
 * thread has no route to a reaper (see the module docs).
 */
export function lifeChannel(core: Core): { port: MessagePort; watch(): void } | undefined {
  if (typeof MessageChannel !== 'function') return undefined;
  const route = routeOf(core);
  if (route === undefined) return undefined;
  const { port1, port2 } = new MessageChannel();
  // The reaper's end must leave before the worker could end: a port whose
  // peer is gone can no longer be transferred.
  return { port: port1, watch: () => route.post({ kind: 'parklot.watch', port: port2 }) };
}

/** This thread's route to `core`'s reaper, started here if this thread created the runtime. */
function routeOf(core: Core): Route | undefined {
  const known = routes.get(core.header.id);
  if (known !== undefined || !core.creator) return known;
  const threads = workerThreads();
  if (threads === undefined) return undefined;
  const handle = { module: core.module, memory: core.memory, header: core.header.address, id: core.header.id };
  const script = './reaper-worker.js'; // a variable, so that bundlers for browsers leave this Node-only file alone
  const reaper = new threads.Worker(new URL(script, import.meta.url), { workerData: handle, name: 'parklot reaper' });
  reaper.unref(); // it never keeps the process alive
  const route: Route = { post: (m) => reaper.postMessage(m, [m.port]), reaper };
  routes.set(core.header.id, route);
  return route;
}

/** Stops the reaper this thread started for `core`'s runtime, if any (the runtime closes here). */
export function stopReaper(core: Core): void {
  const route = routes.get(core.header.id);
  routes.delete(core.header.id);
  if (route?.reaper !== undefined) route.reaper.postMessage({ kind: 'parklot.stop' });
}
