// The pure-JS Atomics mutex: Drepper's "Futexes Are Tricky" mutex 2 (the
// one with the compare-and-swap fast path, often called mutex 3) over one
// Int32Array element of a SharedArrayBuffer.
// States: 0 unlocked, 1 locked with no waiter, 2 locked and maybe waiters.

/** Acquires the mutex at `m[i]`, sleeping in Atomics.wait while it is held. */
export function jsLock(m, i) {
  let c = Atomics.compareExchange(m, i, 0, 1);
  if (c !== 0) {
    if (c !== 2) c = Atomics.exchange(m, i, 2);
    while (c !== 0) {
      Atomics.wait(m, i, 2);
      c = Atomics.exchange(m, i, 2);
    }
  }
}

/** Releases the mutex at `m[i]`, waking one sleeper if there may be one. */
export function jsUnlock(m, i) {
  if (Atomics.exchange(m, i, 0) === 2) Atomics.notify(m, i, 1);
}
