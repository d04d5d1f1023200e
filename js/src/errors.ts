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

/** Throws `notIsolatedError` where a browser says this context is not cross-origin isolated (Node says nothing). */
export function checkIsolated(call: string): void {
  if ((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === false) throw notIsolatedError(call);
}
