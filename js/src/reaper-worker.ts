/**
 * The reaper (see reaper.ts): a worker parklot starts in Node for a runtime
 * whose threads spawn workers. It instantiates the module on the runtime's
 * memory without registering as a thread of it (it holds nothing and never
 * waits, so nothing of it needs reaping), watches one life port per worker,
 * and reaps a worker when its port closes. It never blocks: its only calls
 * into the core are reaps, which take the registry's and the buckets' locks
 * for a few instructions each.
 */
import { Core } from './core.js';
import { freshGlue } from './loader.js';
import type { NodePort, TagMessage, WatchMessage } from './reaper.js';

interface ReaperStart {
  readonly module: WebAssembly.Module;
  readonly memory: WebAssembly.Memory;
  readonly header: number;
  readonly id: number;
}

interface ParentPort {
  on(event: 'message', listener: (value: unknown) => void): unknown;
  /** Node's and Bun's; Deno's parentPort has none (the worker ends by `self.close()`). */
  close?(): void;
}

const proc = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process;
const threads = proc?.getBuiltinModule?.('node:worker_threads') as { workerData: ReaperStart; parentPort: ParentPort; threadId: number };
const start = threads.workerData;
const core = Core.open(await freshGlue(), start.module, start.memory, false, { tag: threads.threadId, release: () => {} }, { address: start.header, id: start.id }, undefined, false);
const ports = new Set<NodePort>();

function isWatch(value: unknown): value is WatchMessage {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'parklot.watch';
}

function isTag(value: unknown): value is TagMessage {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'parklot.tag';
}

/**
 * Watches a worker through `port`: it says its tag first, the workers it
 * spawns send their own ports through it, and its close reaps the tag. A
 * port that closes before a tag came belongs to a worker that never
 * attached: nothing to reap.
 */
function watch({ port }: WatchMessage): void {
  const p = port as NodePort;
  let tag: number | undefined;
  ports.add(p);
  const onMessage = (m: unknown): void => {
    if (isWatch(m)) watch(m);
    else if (isTag(m)) tag = m.tag;
  };
  const onClose = (): void => {
    ports.delete(p);
    if (tag !== undefined) core.reap(tag);
  };
  if (typeof p.on === 'function') {
    p.on('message', onMessage);
    p.on('close', onClose);
  } else {
    p.addEventListener('message', (e) => onMessage(e.data));
    p.addEventListener('close' as 'message', onClose);
    p.start();
  }
}

threads.parentPort.on('message', (m) => {
  if (isWatch(m)) watch(m);
  else if ((m as { kind?: unknown } | null)?.kind === 'parklot.stop') {
    core.close(); // first: a port closed below must not reap its live worker
    for (const p of ports) p.close();
    if (threads.parentPort.close !== undefined) threads.parentPort.close();
    else (globalThis as { close?(): void }).close?.();
  }
});
