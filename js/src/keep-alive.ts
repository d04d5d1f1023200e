/**
 * Keeps a Node event loop (main thread or worker) alive while async waits are
 * pending: a pending `Atomics.waitAsync` alone does not, so a script that
 * awaits a lock would otherwise exit before it gets it. Browsers need nothing.
 *
 * One timer that never fires, made on the first wait and referenced only
 * while waits are pending: `ref()`/`unref()` flip a count, where making and
 * clearing a timer per wait cost about 17 µs of every async wake-up.
 */
export class KeepAlive {
  #pending = 0;
  #timer: { ref(): unknown; unref(): unknown } | undefined;
  readonly #node = typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === 'string';

  enter(): void {
    if (this.#pending++ !== 0 || !this.#node) return;
    if (this.#timer === undefined) {
      this.#timer = setInterval(noop, 0x7fffffff) as unknown as { ref(): unknown; unref(): unknown };
    } else {
      this.#timer.ref();
    }
  }

  leave(): void {
    if (this.#pending > 0 && --this.#pending === 0) this.#timer?.unref();
  }

  /** Drops every keep-alive (the runtime closed). */
  clear(): void {
    this.#pending = 0;
    if (this.#timer !== undefined) clearInterval(this.#timer as unknown as ReturnType<typeof setInterval>);
    this.#timer = undefined;
  }
}

function noop(): void {}
