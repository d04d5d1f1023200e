/**
 * What the wasm acquisition exports take and return, and what each result
 * means to a caller: shared by every primitive that can be acquired, and by
 * the waiter pool, which releases what a cancelled async wait was granted.
 */
import { deadlockError, type Instance } from './diagnostics.js';
import { OwnerDiedError, alreadyHeldError } from './errors.js';
import { freedError } from './kinds.js';

/** What the wasm acquisition exports return (wasm/src/lib.rs, `acquired`). */
export const Acquired = { No: 0, Yes: 1, OwnerDied: 2, AlreadyHeld: 3, NotHeld: 4, Freed: 5, Deadlock: 6 } as const;

/** What a reader-writer lock's call takes, releases or turns into (wasm/src/toolkit.rs, `rw_mode`). */
export const Mode = { Read: 0, Write: 1, Upgradable: 2, Upgrade: 3 } as const;
export type Mode = (typeof Mode)[keyof typeof Mode];

/** What a thread holds once an acquisition of `mode` succeeded (an upgrade: the write lock). */
export function heldAfter(mode: number): number {
  return mode === Mode.Upgrade ? Mode.Write : mode;
}

/**
 * Runs `fn` (which may be async) holding what `take` acquired, and `give`s it
 * back once `fn`'s result settles. If `take` rejects with an `OwnerDiedError`
 * (holding it), `fn` does not run on data that may be inconsistent: it is
 * given back and the error rethrown.
 */
export async function holdingAsync<T>(take: () => Promise<unknown>, give: () => void, fn: () => T | PromiseLike<T>): Promise<Awaited<T>> {
  try {
    await take();
  } catch (e) {
    if (e instanceof OwnerDiedError) give();
    throw e;
  }
  try {
    return await fn();
  } finally {
    give();
  }
}

/**
 * Whether an acquisition export took the lock at `address`; throws for an
 * owner-died lock (then held by this thread), for a lock this thread
 * already holds and for a wait deadlock detection refused (then nothing
 * changed: a `DeadlockError`, whose cycle `core` gives).
 */
export function tookLock(code: number, call: string, address: number, core?: Instance): boolean {
  switch (code) {
    case Acquired.Yes:
      return true;
    case Acquired.No:
      return false;
    case Acquired.OwnerDied:
      throw new OwnerDiedError(call, address);
    case Acquired.Freed: // only a freed Lock object calls with its stand-in's address
      throw freedError(call, 'Lock');
    case Acquired.Deadlock:
      if (core !== undefined) throw deadlockError(core, call, address);
      throw new Error(`parklot: ${call}: deadlock detection refused this wait (waiting would close a cycle)`);
    default:
      throw alreadyHeldError(call);
  }
}
