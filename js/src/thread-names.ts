/**
 * Thread names for the diagnostics (diagnostics.ts): the name a thread is
 * given when it creates or attaches to a runtime (`Runtime.create({ name })`,
 * `Runtime.attach(handle, { name })`, `spawnWorker(rt, script, data, { name })`),
 * or a default that says which thread it is.
 */
import type { Core } from './core.js';
import { inWebWorker } from './liveness.js';

/** The longest thread name kept. */
const MAX_NAME = 256;

/** A thread name option: a string of 1 to 256 characters, or undefined; else a TypeError or RangeError naming `call`. */
export function checkThreadName(call: string, name: unknown): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== 'string') throw new TypeError(`parklot: ${call}: options.name must be a string, got ${name === null ? 'null' : typeof name}`);
  if (name.length === 0 || name.length > MAX_NAME) {
    throw new RangeError(`parklot: ${call}: options.name must have 1 to ${MAX_NAME} characters, got ${name.length}`);
  }
  return name;
}

/**
 * Names this thread in `core`'s runtime: `name`, else 'main' on a page's or
 * Node's main thread, else the worker's own name (a Web Worker's `name`)
 * or 'worker <Node threadId>' / 'worker <id>'.
 */
export function nameThread(core: Core, name: string | undefined): void {
  core.glue.diag_set_thread_name(name ?? defaultName(core));
}

function defaultName(core: Core): string {
  if (inWebWorker()) {
    const own = (globalThis as { name?: unknown }).name;
    return typeof own === 'string' && own !== '' ? own : `worker ${core.glue.diag_thread_id()}`;
  }
  // Node's threads are tagged with their threadId (liveness.ts): 0 is the
  // main thread; elsewhere tags are random, with the top bit set.
  const tag = core.life.tag;
  return tag !== 0 && tag < 0x8000_0000 ? `worker ${tag}` : 'main';
}
