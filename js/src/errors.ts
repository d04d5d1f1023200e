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
