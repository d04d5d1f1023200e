// What the tests of the uncontended paths in JS look at (uncontended-in-js
// and uncontended-flat): every call into wasm a piece of code makes, and the
// thread's hold records (wasm/src/threads.rs, `HeldLocks`).
import { fileURLToPath } from 'node:url';
import { type Lock, OwnerDiedError } from '../../js/dist/index.js';
import type { Core } from '../../js/dist/core.js';
import * as lockModule from '../../js/dist/lock.js';
import { rt, spawn } from './helpers.js';

/** A worker's `execArgv` that preloads `file` of this directory (a lock path's selector). */
export function preload(file: string): string[] {
  return ['--import', fileURLToPath(new URL(file, import.meta.url))];
}

/** The Core of a Lock (lock.ts's internal brand check, which the typings leave out). */
export const lockCore = (lockModule as unknown as { lockCore(lock: unknown): Core | undefined }).lockCore;

/** The test file's runtime's Core (of this thread), once asked for. */
let probe: Core | undefined;

/** The Core of this thread's instance of the test file's runtime. */
export function threadCore(): Core {
  return (probe ??= lockCore(rt.lock()) as Core);
}

/**
 * Runs `f` with every call the runtime's primitives make into wasm recorded,
 * by export name: through the exports themselves (`core.raw`, Lock's hot
 * paths) and through the guarded glue (`core.glue`, the rest).
 */
export function wasmCalls(f: () => void): string[] {
  const core = threadCore();
  const calls: string[] = [];
  const counting = (of: object): Record<string, unknown> => {
    // A copy, not a Proxy: the exports object is frozen.
    const counted: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(of)) {
      counted[name] =
        typeof value === 'function'
          ? (...args: unknown[]) => {
              calls.push(name);
              return (value as (...a: unknown[]) => unknown)(...args);
            }
          : value;
    }
    return counted;
  };
  const { raw, glue } = core;
  Object.defineProperty(core, 'raw', { value: counting(raw), configurable: true });
  Object.defineProperty(core, 'glue', { value: counting(glue), configurable: true });
  try {
    f();
  } finally {
    Object.defineProperty(core, 'raw', { value: raw, configurable: true });
    Object.defineProperty(core, 'glue', { value: glue, configurable: true });
  }
  return calls;
}

/** This thread's hold record: [the Lock taken last or -1, how many others]. */
export function record(lock: Lock): [number, number] {
  const held = (lockCore(lock) as Core).held;
  return [held[0]!, held[1]!];
}

/**
 * 1000 `lock()`/`unlock()` pairs on `lock`: the calls into wasm they made,
 * and the hold record seen while the first was held.
 */
export function pairCalls(lock: Lock): { calls: string[]; seen: [number, number] | undefined } {
  let seen: [number, number] | undefined;
  const calls = wasmCalls(() => {
    for (let i = 0; i < 1000; i++) {
      lock.lock();
      if (i === 0) seen = record(lock);
      lock.unlock();
    }
  });
  return { calls, seen };
}

/**
 * A worker started with `execArgv` takes a lock and is terminated holding
 * it: what the next owner's `lockAsync(3000)` gives, 'owner-died' if it
 * learned of the death (a lost hold gives 'false' here instead of blocking
 * the test's thread).
 */
export async function nextOwnerAfterDeath(execArgv: string[]): Promise<string> {
  const lock = rt.lock();
  const w = spawn(rt, 'holdForever', { lock: lock.address }, execArgv);
  await w.next('held');
  await w.worker.terminate();
  const got = await lock.lockAsync(3000).then(String, (e: unknown) => (e instanceof OwnerDiedError ? 'owner-died' : String(e)));
  if (got === 'owner-died') lock.unlock();
  return got;
}

