// Shared by the JS tests: the test file's runtime, workers running
// tests/js/worker.mjs, waiting with a deadline, sleeping.
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect } from 'vitest';
import { Runtime, type RuntimeOptions, type RwLock } from '../../js/dist/index.js';

/** The test file's runtime, once `useRuntime()` made it (each test file has its own module instance). */
export let rt: Runtime;

/** Gives the test file a runtime, `rt`: created before its tests, closed after them. */
export function useRuntime(options?: RuntimeOptions): void {
  beforeAll(async () => {
    rt = await Runtime.create(options);
  });
  afterAll(() => rt.close());
}

export interface Message {
  type: string;
  value?: unknown;
}

export interface Spawned {
  worker: Worker;
  /** The next message of `type` (buffered), or a rejection after `ms` or if the worker failed. */
  next(type: string, ms?: number): Promise<unknown>;
  /** The value of the worker's 'done' message; rejects if it failed or exited without one. */
  done: Promise<unknown>;
}

const WORKER = new URL('./worker.mjs', import.meta.url);
/** The longest any test worker may run (a test's own timeout is 60 s). */
const WORKER_DEADLINE_MS = 90_000;

/** Starts worker.mjs on `task`, attached to `rt` (workerData also gets `data`; `execArgv`: its Node options). */
export function spawn(rt: Runtime, task: string, data: Record<string, unknown> = {}, execArgv?: string[]): Spawned {
  // Watched: when it exits, however, its waits, locks and stack are reaped.
  const worker = rt.watch(new Worker(WORKER, { workerData: { task, handle: rt.handle(), ...data }, ...(execArgv && { execArgv }) }));
  const inbox: Message[] = [];
  const waiting: { type: string; resolve(v: unknown): void; reject(e: Error): void }[] = [];
  let failure: Error | undefined;
  let resolveDone!: (v: unknown) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<unknown>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => {}); // a test that never awaits it must not fail on an unhandled rejection
  let doneValue: { value: unknown } | undefined;

  const fail = (e: Error) => {
    failure ??= e;
    rejectDone(failure);
    for (const w of waiting.splice(0)) w.reject(failure);
  };
  worker.on('message', (m: Message) => {
    if (m.type === 'done') doneValue = { value: m.value };
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m.value);
    else inbox.push(m);
  });
  worker.on('error', (e) => fail(e));
  // No worker outlives its deadline: a stuck one is named and terminated.
  const deadline = setTimeout(() => {
    fail(new Error(`worker '${task}' (thread ${worker.threadId}) still running after ${WORKER_DEADLINE_MS} ms: terminated`));
    void worker.terminate();
  }, WORKER_DEADLINE_MS);
  deadline.unref();
  worker.on('exit', (code) => {
    clearTimeout(deadline);
    if (doneValue !== undefined && code === 0) resolveDone(doneValue.value);
    else fail(new Error(`worker '${task}' exited with code ${code} before it was done`));
  });

  const next = (type: string, ms = 30_000): Promise<unknown> => {
    const i = inbox.findIndex((m) => m.type === type);
    if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0]!.value);
    if (failure) return Promise.reject(failure);
    return withTimeout(
      new Promise((resolve, reject) => waiting.push({ type, resolve, reject })),
      ms,
      `worker '${task}' sent no '${type}' message`,
    );
  };
  return { worker, next, done };
}

/**
 * Starts `task` on four workers with `data`: two that block, then two that
 * wait asynchronously (`useAsync`) on threads that may not block.
 */
export function blockingAndAsync(rt: Runtime, task: string, data: Record<string, unknown>): Spawned[] {
  return [false, false, true, true].map((useAsync) => spawn(rt, task, useAsync ? { ...data, useAsync, mayBlock: false } : { ...data, useAsync }));
}

/** What every worker's task returned, or a rejection naming `what` after `ms` milliseconds. */
export function allDone<T>(workers: Spawned[], ms: number, what: string): Promise<T[]> {
  return withTimeout(Promise.all(workers.map((w) => w.done)), ms, what) as Promise<T[]>;
}

/**
 * Runs worker.mjs's `task` (rwMix, rwUpgradeMix: `data` gives the rest) on
 * `blockingAndAsync` workers over `lock`, written while they start so that
 * every one finds it held and waits (blocking ones park, async ones queue),
 * and checks what they report: nobody saw an overlap, the counter holds
 * every write, and the lock is free at the end.
 */
export async function checkRwMix(rt: Runtime, lock: RwLock, task: string, data: Record<string, unknown>): Promise<void> {
  const occupancy = rt.alloc(4, 4);
  const counter = rt.alloc(8, 8);
  const gate = rt.alloc(4, 4);
  const workers = blockingAndAsync(rt, task, { ...data, rw: lock.address, occupancy, counter, gate });
  await Promise.all(workers.slice(0, 2).map((w) => w.next('ready')));
  lock.write();
  openGate(rt, gate);
  await sleep(20);
  lock.unlockWrite();
  const results = await allDone<[number, number]>(workers, 120_000, `${task} workers`);
  expect(results.map(([v]) => v)).toEqual([0, 0, 0, 0]);
  expect(rt.float64(counter)[0]).toBe(results.reduce((sum, [, w]) => sum + w, 0));
  expect(lock.state()).toEqual({ held: 'free', readers: 0, upgradable: false });
}

/** `promise`, or a rejection naming `what` after `ms` milliseconds. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves once `rt.diagnostics()` shows at least `count` waiters queued on
 * `address` (a word, or a primitive's address): a fixed sleep is not enough
 * on a busy machine. Rejects after `ms`.
 */
export async function untilQueued(rt: Runtime, address: number, count = 1, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (queuedOn(rt, address) < count) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms: ${count} waiter(s) to queue on ${address} (${queuedOn(rt, address)} queued)`);
    await sleep(2);
  }
}

/** How many waiters `rt.diagnostics()` shows queued on `address`: a word, or a primitive (whose queues may sit at an address inside it). */
export function queuedOn(rt: Runtime, address: number): number {
  let n = 0;
  for (const q of rt.diagnostics().queues) for (const w of q.waiters) if (w.address === address || w.objectAddress === address) n++;
  return n;
}

/** Opens the start gate: an i32 the workers wait on with rt.atomics.wait. */
export function openGate(rt: Runtime, gate: number): void {
  const g = rt.int32(gate);
  Atomics.store(g, 0, 1);
  rt.atomics.notify(g, 0);
}

/** What a call throws: `Constructor: message`, or 'returned <value>'. */
export function outcome(f: () => unknown): string {
  try {
    return `returned ${String(f())}`;
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
}
