/**
 * Diagnostics: who holds what and who waits for what across every thread
 * of a runtime (`rt.diagnostics()`), deadlocks refused as they close
 * (`rt.setDeadlockDetection(true)`, then `DeadlockError`) or found in a
 * frozen program (`rt.checkDeadlock()`), and lock-order inversions reported
 * before they deadlock (`rt.setLockOrderChecking(true)`).
 *
 * The wasm core keeps the wait-for graph (runtime/src/diagnostics); this
 * module reads its reports (JSON from wasm/src/diagnostics.rs) into typed
 * objects, and names the addresses with the kinds table (kinds.ts). The
 * switches are the memory's: one call covers every thread of the runtime.
 */
import { DeadlockError, closedError, type DeadlockCycle, type DeadlockLock, type DeadlockStep, type DeadlockThread } from './errors.js';
import { Kind, primitiveNames, type PrimitiveKind } from './kinds.js';

/** The wasm exports this module calls (wasm/src/diagnostics.rs). */
interface DiagnosticsExports {
  diag_snapshot(): string;
  diag_last_deadlock(): string;
  diag_check_deadlock(): string;
  diag_lock_order_violations(): string;
  diag_set_detection(on: boolean): void;
  diag_set_tracking(on: boolean): void;
  diag_set_lock_order(on: boolean): void;
}

/**
 * What this module uses of a runtime instance: a `Core` (core.ts), named by
 * its shape because core.ts reaches this module (through acquired.ts), and
 * without the glue's own types, which need the DOM's (the package's public
 * types must not).
 */
export interface Instance {
  readonly glue: DiagnosticsExports;
  readonly closed: boolean;
}

/** A primitive's class name. */
export type PrimitiveName = 'Lock' | 'Condition' | 'RwLock' | 'Semaphore' | 'Barrier' | 'Once';

/**
 * What the runtime made at an address, from its table of objects: a
 * primitive, 'bytes' (inside a block from `rt.alloc`: an `rt.atomics`
 * wait), or undefined (nothing it made: an embedder's own wait).
 */
export type MadeAs = PrimitiveName | 'bytes' | undefined;

/** Where a wait or a hold is, what is there, and whose it is. */
export interface OnAddress {
  /** The address: a primitive's (`lock.address`), or an `rt.atomics` element's. */
  readonly address: number;
  /**
   * What it is, as the core says: 'Lock', 'RwLock.read', 'RwLock.write',
   * 'RwLock.upgradable', 'Condition', 'Semaphore', 'Barrier', 'Once',
   * 'futex' (an `rt.atomics` wait), else the kind of primitive the runtime
   * made there, or 'unknown'.
   */
  readonly kind: string;
  /** What the runtime made at `address` (see `MadeAs`). */
  readonly primitive: MadeAs;
  /** Where that object starts (the block's address for 'bytes'), if known. */
  readonly objectAddress: number | undefined;
  /** The waiting or holding thread's id (see `ThreadInfo`) and name. */
  readonly thread: number;
  readonly threadName: string | undefined;
}

/** One queued wait, blocking or async. */
export interface WaiterInfo extends OnAddress {
  /** 'blocking': a thread asleep in it; 'async': a `lockAsync`, `waitAsync`, ... of a thread that goes on. */
  readonly mode: 'blocking' | 'async';
  /** How long it has waited, in milliseconds: 0 unless diagnostics (hold tracking, detection or lock-order checking) were on when it queued. */
  readonly sinceMs: number;
  /** How long until it gives up, in milliseconds (Infinity: no timeout; it may be a little below 0). */
  readonly timeoutMs: number;
  /** When it gives up, in milliseconds since the epoch (`Date.now()`'s clock), if it has a timeout. */
  readonly deadline: number | undefined;
}

/** A thread the runtime knows. */
export interface ThreadInfo {
  /** Its id: small numbers from 1, in the order threads first showed up, one sequence per runtime. */
  readonly id: number;
  /** Its name: `Runtime.create({ name })`, `Runtime.attach(handle, { name })`, `spawnWorker(..., { name })`; default 'main' or 'worker <id>'. */
  readonly name: string | undefined;
  /** 'reaped': it closed its runtime, or died and was reaped: it holds and waits for nothing. */
  readonly state: 'alive' | 'reaped';
  /** Whether it is the thread that took this snapshot. */
  readonly current: boolean;
}

/** A lock held, where the core knows its owner: 'Lock', 'RwLock.write' or 'RwLock.upgradable'. */
export type HoldInfo = OnAddress;

/** One address's queue: its waiters, oldest first, and its holder if known. */
export interface QueueInfo {
  readonly address: number;
  /** The kind of its oldest waiter (see `WaiterInfo.kind`). */
  readonly kind: string;
  readonly primitive: MadeAs;
  /** The thread holding it (while hold tracking, detection or lock-order checking is on), if any. */
  readonly holder: number | undefined;
  readonly waiters: readonly WaiterInfo[];
}

/**
 * The runtime at one moment (each queue is read whole, one after another),
 * from `rt.diagnostics()`. Plain data: it can be posted to another thread.
 */
export interface DiagnosticsSnapshot {
  /** When it was taken, in milliseconds since the epoch. */
  readonly takenAt: number;
  /** The id of the thread that took it. */
  readonly thread: number;
  /** Whether holds are tracked (`setHoldTracking`, or implied by detection or lock-order checking): without it `holds` is empty. */
  readonly holdTracking: boolean;
  readonly deadlockDetection: boolean;
  readonly lockOrderChecking: boolean;
  /** Every queued wait, grouped by address, oldest first per address. */
  readonly waiters: readonly WaiterInfo[];
  /** The same waits, one entry per address. */
  readonly queues: readonly QueueInfo[];
  /** Every thread named, seen holding or waiting, or reaped. */
  readonly threads: readonly ThreadInfo[];
  /** What each thread holds, by thread. */
  readonly holds: readonly HoldInfo[];
}

/** Two locks taken in both orders (`rt.lockOrderViolations()`). */
export interface LockOrderViolation {
  /** The lock held: `thread` took `second` while holding it. */
  readonly first: number;
  readonly second: number;
  readonly thread: DeadlockThread;
  /** Where `thread` was when it took `second` (a JS stack), if known. */
  readonly stack: string | undefined;
  /** The thread that took them the other way, earlier: `second`, then `first`. */
  readonly otherThread: DeadlockThread;
  readonly otherStack: string | undefined;
  /** The inversion in words. */
  readonly description: string;
}

interface RawHold {
  a: number;
  k: string;
  t: number;
  made: number;
  start: number;
}
interface RawWaiter extends RawHold {
  b: boolean;
  waited: number;
  left: number | null;
}
/** Times in whole microseconds (wasm/src/diagnostics.rs). */
interface RawSnapshot {
  now: number;
  me: number;
  tracking: boolean;
  detecting: boolean;
  ordering: boolean;
  waiters: RawWaiter[];
  threads: { id: number; name: string | null; reaped: boolean }[];
  holds: RawHold[];
}
interface RawCycle {
  steps: { t: number; n: string | null; a: number; k: string; h: number; made: number }[];
}
interface RawViolation {
  first: number;
  second: number;
  thread: number;
  threadName: string | null;
  stack: string | null;
  otherThread: number;
  otherThreadName: string | null;
  otherStack: string | null;
}

function glueOf(core: Instance): DiagnosticsExports {
  if (core.closed) throw closedError();
  return core.glue;
}

/** The kinds table's word (wasm/src/kinds.rs) as `MadeAs`; -1: nothing there. */
function madeAs(made: number): MadeAs {
  if (made >= Kind.Lock && made <= Kind.Once) return primitiveNames(made as PrimitiveKind).name as PrimitiveName;
  return made === Kind.Bytes ? 'bytes' : undefined;
}

/**
 * The core's kind, or the table's where the core did not say (an async
 * wait's): inside a block, only an `rt.atomics` wait can queue: 'futex'.
 */
function kindName(core: string, made: number): string {
  if (core !== 'unknown') return core;
  const as = madeAs(made);
  return as === 'bytes' ? 'futex' : (as ?? 'unknown');
}

/** `rt.diagnostics()`. */
export function snapshot(core: Instance): DiagnosticsSnapshot {
  const raw = JSON.parse(glueOf(core).diag_snapshot()) as RawSnapshot;
  const names = new Map<number, string | undefined>(raw.threads.map((t) => [t.id, t.name ?? undefined]));
  const threads: ThreadInfo[] = raw.threads.map((t) => ({ id: t.id, name: t.name ?? undefined, state: t.reaped ? 'reaped' : 'alive', current: t.id === raw.me }));
  // What a hold and a wait share: where, what is there, whose.
  const onAddress = (r: RawHold): OnAddress => ({
    address: r.a,
    kind: kindName(r.k, r.made),
    primitive: madeAs(r.made),
    objectAddress: r.made < 0 ? undefined : r.start,
    thread: r.t,
    threadName: names.get(r.t),
  });
  const holds: HoldInfo[] = raw.holds.map(onAddress);
  const holder = new Map<number, number>(holds.map((h) => [h.address, h.thread]));
  const waiters: WaiterInfo[] = raw.waiters.map((w) => ({
    ...onAddress(w),
    mode: w.b ? 'blocking' : 'async',
    sinceMs: w.waited / 1000,
    timeoutMs: w.left === null ? Infinity : w.left / 1000,
    deadline: w.left === null ? undefined : (raw.now + w.left) / 1000,
  }));
  const queues: QueueInfo[] = [];
  for (const w of waiters) {
    const last = queues[queues.length - 1];
    if (last !== undefined && last.address === w.address) (last.waiters as WaiterInfo[]).push(w);
    else queues.push({ address: w.address, kind: w.kind, primitive: w.primitive, holder: holder.get(w.address), waiters: [w] });
  }
  return {
    takenAt: raw.now / 1000,
    thread: raw.me,
    holdTracking: raw.tracking,
    deadlockDetection: raw.detecting,
    lockOrderChecking: raw.ordering,
    waiters,
    queues,
    threads,
    holds,
  };
}

/** "thread 3 (worker a)". */
function who(t: DeadlockThread): string {
  return t.name === undefined ? `thread ${t.id}` : `thread ${t.id} (${t.name})`;
}

function cycleOf(raw: RawCycle): DeadlockCycle {
  const threads: DeadlockThread[] = raw.steps.map((s) => ({ id: s.t, name: s.n ?? undefined }));
  const locks: DeadlockLock[] = raw.steps.map((s) => ({ address: s.a, kind: kindName(s.k, s.made) }));
  const byId = new Map(threads.map((t) => [t.id, t]));
  const steps: DeadlockStep[] = raw.steps.map((s, i) => ({
    thread: threads[i]!,
    lock: locks[i]!,
    holder: byId.get(s.h) ?? { id: s.h, name: undefined },
  }));
  // Each holder is the next step's thread: "A waits for L held by B, which waits for M held by A".
  const description = steps.map((s, i) => `${i > 0 ? 'which' : who(s.thread)} waits for ${s.lock.kind} ${s.lock.address} held by ${who(s.holder)}`).join(', ');
  return { threads, locks, steps, description };
}

/**
 * The `DeadlockError` of an acquisition export that returned
 * `Acquired.Deadlock`: the cycle it would have closed, kept by the module
 * for this thread.
 */
export function deadlockError(core: Instance, call: string, address: number): DeadlockError {
  const json = core.glue.diag_last_deadlock();
  const cycle = json === '' ? cycleOf({ steps: [] }) : cycleOf(JSON.parse(json) as RawCycle);
  return new DeadlockError(call, address, cycle.steps.length > 0 ? cycle : { ...cycle, description: 'waiting would close a cycle of waiting threads' });
}

/** `rt.checkDeadlock()`. */
export function checkDeadlock(core: Instance): DeadlockCycle[] {
  return (JSON.parse(glueOf(core).diag_check_deadlock()) as RawCycle[]).map(cycleOf);
}

/** `rt.lockOrderViolations()`. */
export function lockOrderViolations(core: Instance): LockOrderViolation[] {
  return (JSON.parse(glueOf(core).diag_lock_order_violations()) as RawViolation[]).map((v) => {
    const thread = { id: v.thread, name: v.threadName ?? undefined };
    const otherThread = { id: v.otherThread, name: v.otherThreadName ?? undefined };
    return {
      first: v.first,
      second: v.second,
      thread,
      stack: v.stack ?? undefined,
      otherThread,
      otherStack: v.otherStack ?? undefined,
      description: `${who(thread)} took lock ${v.first} then lock ${v.second}; ${who(otherThread)} took lock ${v.second} then lock ${v.first}`,
    };
  });
}

/** The switches: `setDeadlockDetection`, `setLockOrderChecking`, `setHoldTracking`. */
export type Switch = 'detection' | 'lockOrder' | 'tracking';

/** Turns one switch on or off for every thread of `core`'s runtime. */
export function setSwitch(core: Instance, which: Switch, call: string, on: unknown): void {
  if (typeof on !== 'boolean') throw new TypeError(`parklot: ${call}: pass true or false, got ${typeof on}`);
  const g = glueOf(core);
  if (which === 'detection') g.diag_set_detection(on);
  else if (which === 'lockOrder') g.diag_set_lock_order(on);
  else g.diag_set_tracking(on);
}
