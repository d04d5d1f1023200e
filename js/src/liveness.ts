/**
 * Knowing when a thread is gone, from a real signal, never from memory.
 *
 * A thread that attaches registers in the wasm registry under a *tag*: Node's
 * `threadId` in Node, a random number elsewhere. When it is known to be gone,
 * another thread reaps it (`Core.reap(tag)`): its queued waits leave their
 * queues as if they had timed out, a wakeup or hand-off it had been given
 * passes to the next waiter, the locks it held are released and marked
 * owner-died, and its wasm stack and TLS block are freed.
 *
 * The signals:
 * - **Node**: the close of a worker's life port, seen by the runtime's
 *   reaper, a worker that never blocks (reaper.ts; workers from
 *   `spawnWorker`), and a `Worker`'s `'exit'` event, on the thread that
 *   made the worker: `rt.watch(worker)` (Node 20 has no Web Locks).
 * - **Browsers** (and Deno's Web Workers: any thread with `navigator.locks`
 *   that is not one of Node's threads): every attaching thread but the
 *   creator first takes a Web Lock named after its tag and holds it for its
 *   life; the Web Locks standard releases a lock when its holder's global is
 *   torn down (a terminated or closed worker). The thread that created the
 *   runtime watches: it queues for each registered thread's lock, and is
 *   granted it exactly when that thread is gone (or closed its runtime).
 * - **Elsewhere** (no Web Locks, a worker nobody watched): nothing tells
 *   parklot, so a dead thread's waits stay queued: a notify may count them
 *   and a lock handed to one stays held. `close()` on the thread itself
 *   always cleans up.
 */
import type { Core, Life } from './core.js';

interface LockManager {
  request(name: string, callback: () => Promise<unknown>): Promise<unknown>;
}

/** The host's Web Locks, if it has them. */
function webLocks(): LockManager | undefined {
  const nav = (globalThis as { navigator?: { locks?: LockManager } }).navigator;
  return nav?.locks !== undefined && typeof nav.locks.request === 'function' ? nav.locks : undefined;
}

/** The name of the Web Lock a thread holds for its life. */
function lifeLockName(runtimeId: number, tag: number): string {
  return `parklot.thread:${runtimeId}:${tag}`;
}

/**
 * Whether this thread is a Web Worker (its global is a `WorkerGlobalScope`):
 * in Deno, `node:worker_threads` there says `threadId` 0 and
 * `isMainThread` true in every Web Worker, so its ids are not the thread's.
 */
export function inWebWorker(): boolean {
  const g = globalThis as { WorkerGlobalScope?: abstract new () => unknown };
  return typeof g.WorkerGlobalScope === 'function' && globalThis instanceof g.WorkerGlobalScope;
}

/**
 * Node's `threadId` of this thread (Node, and Deno's and Bun's
 * `node:worker_threads`), or undefined outside Node and in a Web Worker.
 */
async function nodeThreadId(): Promise<number | undefined> {
  const proc = (globalThis as { process?: { versions?: { node?: string }; getBuiltinModule?(id: string): unknown } }).process;
  if (typeof proc?.versions?.node !== 'string' || inWebWorker()) return undefined;
  // Synchronous where Node has it (20.16+): a dynamic import of a builtin in a
  // worker that starts while another worker exits was seen to never settle.
  const builtin = proc.getBuiltinModule?.('node:worker_threads') as { threadId: number } | undefined;
  if (builtin !== undefined) return builtin.threadId;
  const name = 'node:worker_threads'; // a variable, so that bundlers for browsers leave it alone
  const wt = (await import(/* @vite-ignore */ name)) as { threadId: number };
  return wt.threadId;
}

/**
 * The tags of threads whose death signal is their life lock: random ones,
 * with the top bit set. Node's `threadId`s (small integers) stay below, so
 * the watcher never queues for a lock that a Node thread does not hold.
 */
const LIFE_LOCK_TAGS = 0x8000_0000;

/** How a thread begins its life on a runtime: see `beginLife`. */
export interface LifeOptions {
  /** This thread created the runtime: nobody watches it, so it takes no life lock. */
  readonly creator?: boolean;
  /** This thread's death is signalled otherwise (a life port the reaper watches: reaper.ts). */
  readonly watched?: boolean;
}

/**
 * This thread's tag, and its life lock where that is its death signal, taken
 * before it registers so that no watcher can mistake it for gone. A thread
 * of Node's (`worker_threads`, also in Deno and Bun) is known by its
 * `threadId` and signals its death through its `'exit'` event and its life
 * port, so it takes no Web Lock: in Deno a held Web Lock keeps the thread,
 * and the process, alive. Elsewhere (browsers, Web Workers) the tag is
 * random and the Web Lock is the signal.
 */
export async function beginLife(runtimeId: number, options: LifeOptions = {}): Promise<Life> {
  const nodeId = await nodeThreadId();
  const locks = webLocks();
  const tag = nodeId ?? (LIFE_LOCK_TAGS | (Math.random() * 0x7fff_ffff)) >>> 0;
  if (locks === undefined || nodeId !== undefined || options.creator === true || options.watched === true) return { tag, release: () => {} };
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await new Promise<void>((granted) => {
    void locks.request(lifeLockName(runtimeId, tag), () => {
      granted();
      return held;
    });
  });
  return { tag, release };
}

/**
 * Watches every thread that registers on `core`'s memory (Web Locks only):
 * queues for its life lock and reaps it once granted. Runs until `core`
 * closes.
 */
export function watchThreads(core: Core, runtimeId: number, self: number): void {
  const locks = webLocks();
  if (locks === undefined || typeof Atomics.waitAsync !== 'function') return;
  const watched = new Set<number>([self]);
  const generation = core.glue.thread_generation_address() >>> 2;
  const loop = async (): Promise<void> => {
    while (!core.closed) {
      const seen = Atomics.load(core.heap32(), generation);
      for (const tag of core.glue.thread_tags()) {
        if (watched.has(tag) || tag < LIFE_LOCK_TAGS) continue; // Node's threads signal otherwise (reaper.ts, rt.watch)
        watched.add(tag);
        void locks.request(lifeLockName(runtimeId, tag), async () => {
          watched.delete(tag);
          if (!core.closed) core.reap(tag);
        });
      }
      const r = Atomics.waitAsync(core.heap32(), generation, seen);
      if (r.async) await r.value;
    }
  };
  // A poisoned runtime (a thread died inside its internal sections) throws
  // from every call: then there is nothing left to watch.
  loop().catch(() => {});
}
