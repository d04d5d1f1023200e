/**
 * The errors parklot throws. Each says what went wrong and what to do
 * instead, and each is thrown before anything in shared memory changed, so a
 * caught error leaves every lock, condition and queue as it was.
 */

/** A runtime used after `close()`. */
export function closedError(): TypeError {
  return new TypeError(
    'parklot: runtime is closed; create or attach a new one with Runtime.create() or Runtime.attach()',
  );
}

/**
 * A blocking call on a thread that may not block (a page's main thread, or a
 * runtime made with `mayBlock: false`); `alternative` names the async form.
 */
export function cannotBlockError(call: string, alternative: string): TypeError {
  return new TypeError(
    `parklot: ${call} would block this thread, which may not block ` +
      `(a page's main thread, or a runtime made with mayBlock: false); use ${alternative}`,
  );
}

/**
 * Thrown by an acquisition (`lock()`, `tryLock()`, `lockFor()`,
 * `lockAsync()`, a condition's `wait` taking its lock back) that got a lock
 * whose last owner died holding it (a terminated worker, reaped): like a
 * robust mutex's EOWNERDEAD. The caller holds the lock when it catches this;
 * the data the lock guards may be half-updated. Repair it, then unlock.
 */
export class OwnerDiedError extends Error {
  override readonly name = 'OwnerDiedError';
  /** The lock's address (this thread holds it now). */
  readonly address: number;
  constructor(call: string, address: number) {
    super(
      `parklot: ${call}: the lock's last owner died holding it (a terminated worker): ` +
        'this thread holds the lock now, and the data it guards may be inconsistent; check or repair it, then unlock',
    );
    this.address = address;
  }
}

/**
 * Thrown by a `Barrier` wait (`wait()`, `waitFor()`, `waitAsync()`) when the
 * barrier is broken: a party gave up (its timeout passed, or its runtime
 * closed) or its worker died while it waited (see `rt.watch`), or `reset()`
 * ran while this thread waited. The generation can never open, so every
 * wait at the barrier throws this at once until `reset()`.
 */
export class BrokenBarrierError extends Error {
  override readonly name = 'BrokenBarrierError';
  /** The barrier's address. */
  readonly address: number;
  /** This wait's own timeout broke the barrier (the other parties get `timedOut: false`). */
  readonly timedOut: boolean;
  constructor(call: string, address: number, timedOut: boolean) {
    super(
      timedOut
        ? `parklot: ${call}: timed out before every party arrived, which broke the barrier for the others; ` +
            'call barrier.reset() before its next use'
        : `parklot: ${call}: the barrier is broken (a party timed out, left or died while waiting, or it was reset ` +
            'meanwhile); call barrier.reset() before its next use',
    );
    this.address = address;
    this.timedOut = timedOut;
  }
}

/**
 * Thrown by `Once.callOnce()`/`callOnceAsync()` on a poisoned `Once`: an
 * earlier run threw, or its worker died while running it. Nothing ran.
 * `callOnceForce(fn)` runs again.
 */
export class OncePoisonedError extends Error {
  override readonly name = 'OncePoisonedError';
  /** The once's address. */
  readonly address: number;
  constructor(call: string, address: number) {
    super(
      `parklot: ${call}: this Once is poisoned: an earlier run of its function threw (or its worker died while running it), ` +
        'so it never completed; use callOnceForce(fn) to run it again',
    );
    this.address = address;
  }
}

/** A thread of a deadlock's cycle: its id in `rt.diagnostics()` and its name. */
export interface DeadlockThread {
  readonly id: number;
  /** The name it was given (`Runtime.create({ name })`, `spawnWorker(..., { name })`, ...), if any. */
  readonly name: string | undefined;
}

/** A lock of a deadlock's cycle. */
export interface DeadlockLock {
  /** Its address: `lock.address` of the object on any thread. */
  readonly address: number;
  /** What it is, and how it is waited for: 'Lock', 'RwLock.write', 'RwLock.upgradable', ... */
  readonly kind: string;
}

/** One wait of a cycle: `thread` waits for `lock`, which `holder` holds. */
export interface DeadlockStep {
  readonly thread: DeadlockThread;
  readonly lock: DeadlockLock;
  readonly holder: DeadlockThread;
}

/**
 * Threads that wait for each other's locks in a ring: `threads[i]` waits
 * for `locks[i]`, which `threads[i + 1]` holds (the last one's, which the
 * first holds).
 */
export interface DeadlockCycle {
  readonly threads: readonly DeadlockThread[];
  readonly locks: readonly DeadlockLock[];
  /** The same ring, one wait at a time. */
  readonly steps: readonly DeadlockStep[];
  /** The ring in words: "thread 2 (a) waits for Lock 1096 held by thread 3 (b), which waits for ...". */
  readonly description: string;
}

/**
 * Thrown by an acquisition (`lock()`, `lockFor()`, `withLock()`, a
 * reader-writer lock's blocking calls) and the rejection of an async one
 * (`lockAsync()`, `withLockAsync()`, `writeAsync()`, ...) that deadlock
 * detection refused (`rt.setDeadlockDetection(true)`): waiting would have
 * closed `cycle`, threads waiting for each other's locks for ever. Nothing
 * was taken and nothing queued; the other threads of the cycle are
 * untouched and go on once this thread releases what it holds (a
 * `Condition.waitAsync` refused while taking its lock back rejects with
 * this, not holding the lock).
 *
 * @example
 * try { second.lock(); } catch (e) {
 *   if (e instanceof DeadlockError) console.log(e.cycle.threads.map((t) => t.name));
 * }
 */
export class DeadlockError extends Error {
  override readonly name = 'DeadlockError';
  /** The address of the lock whose wait was refused. */
  readonly address: number;
  /** The cycle the wait would have closed, starting with this thread's own wait. */
  readonly cycle: DeadlockCycle;
  constructor(call: string, address: number, cycle: DeadlockCycle) {
    super(
      `parklot: ${call}: deadlock: ${cycle.description}. Deadlock detection refused this wait, so nothing was taken: ` +
        'release the locks this thread holds (the others then go on), and take locks in one global order',
    );
    this.address = address;
    this.cycle = cycle;
  }
}

/** A lock taken again by the thread that holds it. */
export function alreadyHeldError(call: string): TypeError {
  return new TypeError(`parklot: ${call}: this thread already holds the lock (locks are not reentrant); unlock it first`);
}

/** `unlock()` of a lock that another thread holds. */
export function heldByAnotherError(call: string): TypeError {
  return new TypeError(`parklot: ${call}: the lock is held by another thread; only the thread that took it may unlock it`);
}

/** `unlock()` of a lock that nobody holds. */
export function notLockedError(call: string): TypeError {
  return new TypeError(`parklot: ${call}: unlock of a lock that is not locked`);
}

/** Something that failed while loading or attaching a runtime, with the step that failed. */
export function setupError(step: string, cause: unknown): TypeError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new TypeError(`parklot: ${step}: ${message}`, { cause });
}

/**
 * A browser context that is not cross-origin isolated: it may make a shared
 * memory, but `postMessage` refuses to send it, so no worker could join.
 */
export function notIsolatedError(call: string): TypeError {
  return new TypeError(
    `parklot: ${call}: this page is not cross-origin isolated (self.crossOriginIsolated is false), so the browser ` +
      'will not send shared memory to workers. Serve the page and its scripts with the two headers ' +
      '"Cross-Origin-Opener-Policy: same-origin" and "Cross-Origin-Embedder-Policy: require-corp" ' +
      "(Vite: server.headers and preview.headers in vite.config.js; see parklot's README, \"The browser\")",
  );
}

/**
 * An engine without `SharedArrayBuffer` although the page is cross-origin
 * isolated (WebKitGTK and WPE ship it turned off): a memory could be made,
 * but no worker could ever share it.
 */
export function noSharedArrayBufferError(call: string): TypeError {
  return new TypeError(
    `parklot: ${call}: this browser has no SharedArrayBuffer although the page is cross-origin isolated ` +
      '(self.crossOriginIsolated is true), so no worker could share the memory. WebKitGTK and WPE turn it off: ' +
      'start the browser with the environment variable JSC_useSharedArrayBuffer=1; Safari, Chrome and Firefox have it',
  );
}

/**
 * Throws `notIsolatedError` where a browser says this context is not
 * cross-origin isolated (Node says nothing), and `noSharedArrayBufferError`
 * where it is isolated but has no `SharedArrayBuffer`.
 */
export function checkIsolated(call: string): void {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
  if (isolated === false) throw notIsolatedError(call);
  if (typeof SharedArrayBuffer === 'undefined') throw noSharedArrayBufferError(call);
}

/**
 * The runtime's internal critical sections, by the number the wasm module
 * gives each (runtime/src/critical.rs, wasm/src/sections.rs).
 */
const SECTIONS: Record<number, string> = {
  1: 'wait queues',
  16: 'thread registry',
  17: 'internal tables',
  18: 'lock bookkeeping',
  19: 'kind table',
};

/** How the thread that poisoned a runtime died (runtime/src/critical.rs). */
const HOW = { terminated: 1, trapped: 2 } as const;

/**
 * Every call on a runtime in which a thread died (a terminated worker) or
 * trapped inside one of the runtime's own critical sections, which cannot
 * be rolled back: the runtime's shared state may be inconsistent, so
 * nothing is done; create a new runtime.
 */
export function poisonedError(section: number, tag: number, how: number): Error {
  const where = `the runtime's ${SECTIONS[section] ?? `section ${section}`}`;
  const who = how === HOW.trapped ? `thread ${tag} trapped inside ${where}` : `worker ${tag} was terminated inside ${where}`;
  return new Error(`parklot: this runtime is poisoned: ${who}; its shared state may be inconsistent. Create a new Runtime.`);
}
