/**
 * `RwLock`: a reader-writer lock of one 32-bit word in the runtime's shared
 * memory, served by the wasm core (runtime/src/rwlock.rs: readers share,
 * writers exclude; barging with a short spin, then parking; about once a
 * millisecond the waiting side is handed the lock, so neither side starves).
 *
 * The object only carries the lock's address: `read()`/`unlockRead()` call
 * the wasm export with it and allocate nothing. What each thread holds is
 * recorded in wasm (wasm/src/threads.rs), so that releases, upgrades and
 * downgrades of what this thread does not hold are refused, and a worker
 * that dies holding the lock is reaped (see `RwLock`). Where the engine
 * compiles `Atomics` inline (`SWAP_IN_JS`), an uncontended read or write
 * and its release are one compare-and-swap of the word in JS, recorded in
 * the same place.
 */
import { Acquired, Mode, holdingAsync, tookLock } from './acquired.js';
import type { Core } from './core.js';
import { OwnerDiedError, closedError, heldByAnotherError, notLockedError } from './errors.js';
import { Kind, freedError } from './kinds.js';
import { Primitive, freedMark, refuseToBlock } from './primitive.js';
import { Queue } from './records.js';
import { type AsyncOptions, toAsyncTimeout, toSignal, toTimeout } from './validate.js';
import { acquireQueued } from './waiters.js';
import { SWAP_IN_JS as ENGINE_SWAPS_IN_JS } from './engine.js';

/** `engine.ts`'s choice, as a constant of this module (see semaphore.ts). */
const SWAP_IN_JS = ENGINE_SWAPS_IN_JS;

/**
 * The lock's word (runtime/src/rwlock.rs), as far as the JS fast paths read
 * it: who may enter is the core's rule (`Class::enter` in
 * runtime/src/rwlock/class.rs), every other case is left to wasm.
 */
const WRITER = 1;
const WRITERS_PARKED = 8;
const UPGRADE_PARKED = 16;
const WRITER_FIRST = 64;
const PREFER_WRITERS = 128;
const ONE_READER = 256;
/** Bits 8 to 31, the readers (as a JS bitwise operand: -256). */
const READERS_MASK = ~0xff;
/** Past this word, one more reader would overflow the count (wasm refuses it; JS leaves it to wasm). */
const LAST_WORD_BEFORE_FULL = 0xffff_ffff - ONE_READER;

/**
 * RwLock's acquisitions (a code of `Acquired`) and releases (of `Released`):
 * in JS first where `SWAP_IN_JS`, then through the exports; set once, by
 * the class's static block.
 */
let acquire: (lock: RwLock, core: Core, mode: Mode, timeout: number) => number;
let release: (lock: RwLock, core: Core, mode: Mode) => number;

/** How `Core.held[2]` marks a read and a write taken in JS (wasm/src/threads.rs, `JsRwHold`). */
const JS_READ = 1;
const JS_WRITE = 2;

/** What the wasm release exports return (wasm/src/lib.rs, `released`). */
const Released = { Ok: 0, NotLocked: 1, HeldByAnother: 2 } as const;

/** `rwlock_state`'s flags below the reader count (wasm/src/toolkit.rs, `rw_state`). */
const StateBit = { Read: 1, Write: 2, Upgradable: 4 } as const;

/** Which side a lock lets in first when both wait (neither starves either way). */
export type RwLockPolicy = 'prefer-writers' | 'prefer-readers';

/** What `rt.rwLock(options)` takes (or the policy's name alone: `rt.rwLock('prefer-readers')`). */
export interface RwLockOptions {
  /** Default 'prefer-writers'. */
  policy?: RwLockPolicy | undefined;
}

/** What `RwLock.state()` reports (a snapshot). */
export interface RwLockState {
  /** 'write' also while an upgrade waits for the other readers to leave. */
  held: 'free' | 'read' | 'write';
  /** Threads holding a read, the upgradable read included. */
  readers: number;
  /** Whether an upgradable read is held (or is upgrading). */
  upgradable: boolean;
}

/**
 * A reader-writer lock in shared memory, usable from every thread attached to
 * the runtime (`rt.rwLockAt(lock.address)` on another thread, or send it:
 * it travels as `{ kind: 'parklot.rwlock', address, runtimeId }`, its policy
 * being in its word). Many readers or one writer hold it at a time.
 *
 * An *upgradable read* (`upgradableRead()`) shares the lock with plain
 * readers but excludes writers and other upgradable readers, so its holder
 * can later `upgrade()` to the write lock without letting go: no writer gets
 * in between. `downgrade()` turns the write lock into a read,
 * `downgradeToUpgradable()` into an upgradable read, and
 * `downgradeUpgradable()` an upgradable read into a plain one.
 *
 * Holds belong to the thread that took them: releases, upgrades and
 * downgrades of what this thread does not hold throw a TypeError, changing
 * nothing; so does a blocking call without a timeout that would wait for
 * this thread's own hold (a write while it reads, say). Reads are not reentrant: a thread
 * that reads must not read again while a writer may be waiting (under
 * 'prefer-writers' that second read waits for the writer, who waits for the
 * first read).
 *
 * If a worker dies holding the lock (see `rt.watch`): its write lock is
 * released and the next thread that gets the write lock (`write()`,
 * `tryWrite()`, `writeFor()`, `writeAsync()`, or an upgrade) gets an
 * `OwnerDiedError`, holding it: repair the data, then unlock. Its reads and
 * upgradable read are released silently (a reader changed nothing); reads
 * taken between the death and that repair see the data as the dead writer
 * left it.
 *
 * On a thread that may not block, every call that can wait throws (the
 * `...Async` forms work there); tries and timeouts of 0 never wait and are
 * allowed.
 *
 * @example
 * const table = rt.rwLock();
 * const n = table.withRead(() => view[0]);
 * table.withWrite(() => { view[0] = n + 1; });
 */
export class RwLock extends Primitive<'parklot.rwlock'> {
  readonly #core: Core;
  /** A view of the memory that reaches the lock's word, and the word's index in it. */
  readonly #words: Uint32Array;
  readonly #index: number;

  /** Not for direct use: locks come from `rt.rwLock()` and `rt.rwLockAt(address)`. */
  constructor(core: unknown, address: number) {
    super(core, address, Kind.RwLock, 'parklot: reader-writer locks come from rt.rwLock() or rt.rwLockAt(address), not from new RwLock()');
    this.#core = core as Core; // checked by Primitive
    this.#words = this.#core.wordsReaching(address);
    this.#index = address >>> 2;
  }

  /**
   * Takes a read, blocking this thread while a writer holds the lock (or,
   * under 'prefer-writers', waits for it). Throws on a thread that may not
   * block (use `readAsync` there).
   *
   * @example
   * lock.read();
   * try { use(view[0]); } finally { lock.unlockRead(); }
   */
  read(): void {
    this.#take(Mode.Read, Infinity, 'RwLock.read()', 'await lock.readAsync()');
  }

  /** Takes a read if no writer holds or waits for the lock; never waits. */
  tryRead(): boolean {
    return this.#try(Mode.Read, 'RwLock.tryRead()');
  }

  /**
   * Takes a read, blocking at most `timeout` milliseconds (NaN or +Infinity:
   * forever; 0 or less: a try). Returns whether it did. A timeout above 0
   * throws on a thread that may not block.
   */
  readFor(timeout: number): boolean {
    return this.#take(Mode.Read, toTimeout(timeout), 'RwLock.readFor()', 'await lock.readAsync(timeout)');
  }

  /** Releases a read of this thread's. Throws a TypeError, changing nothing, if it holds none. */
  unlockRead(): void {
    this.#release(Mode.Read, 'RwLock.unlockRead()');
  }

  /**
   * Takes the write lock, blocking this thread while anyone holds it. Throws
   * on a thread that may not block (use `writeAsync` there), and
   * `OwnerDiedError` (holding the lock) if its last writer died holding it.
   *
   * @example
   * lock.write();
   * try { view[0] += 1; } finally { lock.unlockWrite(); }
   */
  write(): void {
    this.#take(Mode.Write, Infinity, 'RwLock.write()', 'await lock.writeAsync()');
  }

  /** Takes the write lock if nobody holds it; never waits. */
  tryWrite(): boolean {
    return this.#try(Mode.Write, 'RwLock.tryWrite()');
  }

  /** Takes the write lock, blocking at most `timeout` milliseconds. Returns whether it did. */
  writeFor(timeout: number): boolean {
    return this.#take(Mode.Write, toTimeout(timeout), 'RwLock.writeFor()', 'await lock.writeAsync(timeout)');
  }

  /** Releases this thread's write lock. Throws a TypeError, changing nothing, if it does not hold it. */
  unlockWrite(): void {
    this.#release(Mode.Write, 'RwLock.unlockWrite()');
  }

  /**
   * Takes an upgradable read, blocking while a writer or another upgradable
   * reader holds the lock. Throws on a thread that may not block (use
   * `upgradableReadAsync` there).
   *
   * @example
   * lock.upgradableRead();
   * if (needsChange(view)) { lock.upgrade(); view[0] += 1; lock.unlockWrite(); }
   * else lock.unlockUpgradable();
   */
  upgradableRead(): void {
    this.#take(Mode.Upgradable, Infinity, 'RwLock.upgradableRead()', 'await lock.upgradableReadAsync()');
  }

  /** Takes an upgradable read if the lock lets one in now; never waits. */
  tryUpgradableRead(): boolean {
    return this.#try(Mode.Upgradable, 'RwLock.tryUpgradableRead()');
  }

  /** Takes an upgradable read, blocking at most `timeout` milliseconds. Returns whether it did. */
  upgradableReadFor(timeout: number): boolean {
    return this.#take(Mode.Upgradable, toTimeout(timeout), 'RwLock.upgradableReadFor()', 'await lock.upgradableReadAsync(timeout)');
  }

  /** Releases this thread's upgradable read. Throws a TypeError, changing nothing, if it holds none. */
  unlockUpgradable(): void {
    this.#release(Mode.Upgradable, 'RwLock.unlockUpgradable()');
  }

  /**
   * Turns this thread's upgradable read into the write lock, blocking until
   * the other readers leave (new readers wait meanwhile). Release it with
   * `unlockWrite()`. Throws a TypeError if this thread holds no upgradable
   * read, and on a thread that may not block (use `upgradeAsync`).
   */
  upgrade(): void {
    this.#take(Mode.Upgrade, Infinity, 'RwLock.upgrade()', 'await lock.upgradeAsync()');
  }

  /** Upgrades if no other reader holds the lock now; never waits. On `false` the upgradable read is still held. */
  tryUpgrade(): boolean {
    return this.#try(Mode.Upgrade, 'RwLock.tryUpgrade()');
  }

  /**
   * Upgrades, blocking at most `timeout` milliseconds. Returns whether it
   * did; on `false` the upgradable read is still held (and new readers may
   * enter again).
   */
  upgradeFor(timeout: number): boolean {
    return this.#take(Mode.Upgrade, toTimeout(timeout), 'RwLock.upgradeFor()', 'await lock.upgradeAsync(timeout)');
  }

  /** Turns this thread's write lock into a read (release it with `unlockRead()`), letting waiting readers in. */
  downgrade(): void {
    this.#downgrade(Mode.Write, Mode.Read, 'RwLock.downgrade()', 'the write lock');
  }

  /** Turns this thread's write lock into an upgradable read, letting waiting readers in. */
  downgradeToUpgradable(): void {
    this.#downgrade(Mode.Write, Mode.Upgradable, 'RwLock.downgradeToUpgradable()', 'the write lock');
  }

  /** Turns this thread's upgradable read into a plain read, letting another upgradable reader in. */
  downgradeUpgradable(): void {
    this.#downgrade(Mode.Upgradable, Mode.Read, 'RwLock.downgradeUpgradable()', 'an upgradable read');
  }

  /**
   * Takes a read without blocking the thread: resolves `true` once it holds
   * one, `false` if `timeout` milliseconds (default: forever) passed first.
   * Works on every thread, in the same queue as threads that block. With
   * `{ signal }`, an abort rejects it with `signal.reason`, leaving the
   * queue (a grant that won the race is kept: see `AsyncOptions`).
   *
   * @example
   * if (await lock.readAsync(100)) { try { use(view[0]); } finally { lock.unlockRead(); } }
   * await lock.readAsync(undefined, { signal: controller.signal });
   */
  readAsync(timeout?: number, options?: AsyncOptions): Promise<boolean> {
    return this.#takeAsync(Mode.Read, timeout, options, 'RwLock.readAsync()');
  }

  /** Takes the write lock without blocking the thread; as `readAsync` (and `OwnerDiedError` as `write`). */
  writeAsync(timeout?: number, options?: AsyncOptions): Promise<boolean> {
    return this.#takeAsync(Mode.Write, timeout, options, 'RwLock.writeAsync()');
  }

  /** Takes an upgradable read without blocking the thread; as `readAsync`. */
  upgradableReadAsync(timeout?: number, options?: AsyncOptions): Promise<boolean> {
    return this.#takeAsync(Mode.Upgradable, timeout, options, 'RwLock.upgradableReadAsync()');
  }

  /**
   * Upgrades this thread's upgradable read without blocking the thread:
   * resolves `true` once it holds the write lock, `false` if `timeout`
   * milliseconds (default: forever) passed first (the upgradable read is
   * still held). Rejects with a TypeError if this thread holds no upgradable
   * read, and with `signal.reason` on an abort (`{ signal }`; the upgradable
   * read is then still held).
   *
   * @example
   * await lock.upgradableReadAsync();
   * if (await lock.upgradeAsync(100)) { view[0] += 1; lock.unlockWrite(); } else lock.unlockUpgradable();
   */
  upgradeAsync(timeout?: number, options?: AsyncOptions): Promise<boolean> {
    return this.#takeAsync(Mode.Upgrade, timeout, options, 'RwLock.upgradeAsync()');
  }

  /** Runs `fn` holding a read (taken with `read()`) and releases it however `fn` ends. */
  withRead<T>(fn: () => T): T {
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'RwLock.withRead()', 'await lock.withReadAsync(fn)');
    this.read();
    try {
      return fn();
    } finally {
      this.unlockRead();
    }
  }

  /**
   * Runs `fn` holding the write lock (taken with `write()`) and releases it
   * however `fn` ends. If its last writer died holding it, `fn` does not
   * run: the lock is released and the `OwnerDiedError` thrown.
   */
  withWrite<T>(fn: () => T): T {
    const core = this.#core;
    if (!core.canBlock) refuseToBlock(core, 'RwLock.withWrite()', 'await lock.withWriteAsync(fn)');
    try {
      this.write();
    } catch (e) {
      if (e instanceof OwnerDiedError) this.unlockWrite();
      throw e;
    }
    try {
      return fn();
    } finally {
      this.unlockWrite();
    }
  }

  /** Runs `fn` (maybe async) holding a read taken with `readAsync()`; works on every thread. `{ signal }` cancels the wait (then `fn` does not run). */
  withReadAsync<T>(fn: () => T | PromiseLike<T>, options?: AsyncOptions): Promise<Awaited<T>> {
    return holdingAsync(() => this.readAsync(undefined, options), () => this.unlockRead(), fn);
  }

  /** Runs `fn` (maybe async) holding the write lock taken with `writeAsync()`; `OwnerDiedError` as in `withWrite`, `{ signal }` as in `withReadAsync`. */
  withWriteAsync<T>(fn: () => T | PromiseLike<T>, options?: AsyncOptions): Promise<Awaited<T>> {
    return holdingAsync(() => this.writeAsync(undefined, options), () => this.unlockWrite(), fn);
  }

  /** A snapshot of who holds the lock. For assertions and diagnostics. */
  state(): RwLockState {
    const core = this.#live('RwLock.state()');
    const s = core.glue.rwlock_state(this.address);
    const held = s & StateBit.Write ? 'write' : s & StateBit.Read ? 'read' : 'free';
    return { held, readers: s >>> 3, upgradable: (s & StateBit.Upgradable) !== 0 };
  }

  /** The core, if this lock may be used: not closed, not freed. */
  #live(call: string): Core {
    const core = this.#core;
    if (core.closed) throw closedError();
    if (this[freedMark]) throw freedError(call, 'RwLock');
    return core;
  }

  /** Whether an acquisition's `code` took the lock; throws for the codes that say why not. */
  #took(code: number, call: string): boolean {
    if (code === Acquired.AlreadyHeld) {
      throw new TypeError(
        `parklot: ${call} would wait for this thread's own hold of this reader-writer lock (it holds the write lock, ` +
          'an upgradable read, or a read while asking to write); release it first, or upgrade an upgradable read with upgrade()',
      );
    }
    if (code === Acquired.NotHeld) {
      throw new TypeError(
        `parklot: ${call}: this thread holds no upgradable read of this lock (a plain read cannot upgrade); ` +
          'take one with upgradableRead() or upgradableReadAsync() first',
      );
    }
    return tookLock(code, call, this.address, this.#core);
  }

  #try(mode: Mode, call: string): boolean {
    const core = this.#live(call);
    return this.#took(acquire(this, core, mode, 0), call);
  }

  static {
    // The paths, chosen once. Measured on uncontended pairs, one thread:
    // a test of `SWAP_IN_JS` written out in `#take` and `#release` cost V8
    // about 3 ns a write pair in Deno (34 against 31 ns before the JS path),
    // a call through these variables about 1 ns (32; part of it is wasm's
    // look at the record JS keeps). JavaScriptCore ran the read pair in
    // 9.5-9.8 ns with the test written out, 9.5-13.7 ns so (the JIT's code
    // varies between processes; 19 ns before the JS path).
    acquire = SWAP_IN_JS
      ? (lock, core, mode, timeout) => {
          const code = lock.#takeInJs(core, mode);
          return code !== Acquired.No ? code : lock.#acquireFor(core, mode, timeout);
        }
      : (lock, core, mode, timeout) => lock.#acquireFor(core, mode, timeout);
    release = SWAP_IN_JS
      ? (lock, core, mode) => (lock.#giveInJs(core, mode) ? Released.Ok : lock.#releaseFor(core, mode))
      : (lock, core, mode) => lock.#releaseFor(core, mode);
  }

  /**
   * A read or write taken in JS, where `SWAP_IN_JS`, while the diagnostics
   * are off and this thread records no other reader-writer hold of JS's: one
   * compare-and-swap of the word as the core's uncontended acquisition
   * makes it (JS's orderings are sequentially consistent, stronger than its
   * Acquire), then the hold recorded in `Core.held[2]` with nothing called in
   * between, where a reaper reads it. A write then looks at the owner-died
   * marks, and only if one is set asks wasm for the lock's. Returns the
   * acquisition's code (`Acquired.No`: left to wasm, nothing done).
   */
  #takeInJs(core: Core, mode: Mode): number {
    const held = core.held;
    if (held[2] !== 0 || core.diagMode[0] !== 0) return Acquired.No;
    const words = this.#words;
    const i = this.#index;
    const s = Atomics.load(words, i);
    if (mode === Mode.Read) {
      const writerWaits = (s & PREFER_WRITERS) !== 0 && (s & WRITERS_PARKED) !== 0;
      if ((s & (WRITER | WRITER_FIRST)) !== 0 || writerWaits || s > LAST_WORD_BEFORE_FULL) return Acquired.No;
      if (Atomics.compareExchange(words, i, s, s + ONE_READER) !== s) return Acquired.No;
      held[2] = this.address + JS_READ;
      return Acquired.Yes;
    }
    if (mode !== Mode.Write || (s & (WRITER | READERS_MASK)) !== 0) return Acquired.No;
    if (Atomics.compareExchange(words, i, s, s | WRITER) !== s) return Acquired.No;
    held[2] = this.address + JS_WRITE;
    // An atomic load: the reaper counts its mark before it releases the
    // word, and the compare-and-swap above saw that release.
    if (Atomics.load(core.rwMarks, 0) === 0) return Acquired.Yes;
    let died: boolean;
    try {
      died = core.glue.rwlock_owner_died(this.address);
    } catch (e) {
      throw core.trapped('rwlock_owner_died', e);
    }
    return died ? Acquired.OwnerDied : Acquired.Yes;
  }

  /**
   * Releases in JS, where `SWAP_IN_JS`, a read or write `#takeInJs` took,
   * if releasing it wakes nobody (no writer or upgrade parked after a read;
   * a plain write lock): one compare-and-swap, then the record forgotten
   * (why in this order: lock.ts, `#giveQuiet`). Whether it did; if not,
   * nothing changed and wasm releases it (it finds the record there too).
   */
  #giveInJs(core: Core, mode: Mode): boolean {
    const held = core.held;
    const mine = this.address + (mode === Mode.Read ? JS_READ : JS_WRITE);
    if (held[2] !== mine || (mode !== Mode.Read && mode !== Mode.Write)) return false;
    const words = this.#words;
    const i = this.#index;
    const s = Atomics.load(words, i);
    const quiet = mode === Mode.Read ? (s & (WRITERS_PARKED | UPGRADE_PARKED)) === 0 : (s & ~PREFER_WRITERS) === WRITER;
    if (!quiet) return false;
    // The swap first, then the record, as Lock's release in JS (lock.ts, `#giveQuiet`).
    if (Atomics.compareExchange(words, i, s, mode === Mode.Read ? s - ONE_READER : s & ~WRITER) !== s) return false;
    held[2] = 0;
    return true;
  }

  /**
   * The acquisition's export, called directly, as Lock's hot paths call
   * theirs (core.ts, `Core.raw`), and as `#release` calls its own: through
   * the guarded glue an uncontended read() + unlockRead() measured 45-58 ns
   * in V8, 28-33 ns so.
   */
  #acquireFor(core: Core, mode: Mode, timeout: number): number {
    try {
      return core.raw.rwlock_acquire_for(this.address, mode, timeout);
    } catch (e) {
      throw core.trapped('rwlock_acquire_for', e);
    }
  }

  /** Takes `mode`, waiting at most `timeout` (a timeout of 0 is a try, allowed everywhere). */
  #take(mode: Mode, timeout: number, call: string, alternative: string): boolean {
    const core = this.#live(call);
    // Blocking calls throw on a thread that may not block, whether or not they would wait.
    if (!core.canBlock && timeout !== 0) refuseToBlock(core, call, alternative);
    return this.#took(acquire(this, core, mode, timeout), call);
  }

  #release(mode: Mode, call: string): void {
    const core = this.#live(call);
    const code = release(this, core, mode);
    if (code === Released.HeldByAnother) throw heldByAnotherError(call);
    if (code !== Released.Ok) throw notLockedError(call);
  }

  /** The release's export, called directly (see `#acquireFor`). */
  #releaseFor(core: Core, mode: Mode): number {
    try {
      return core.raw.rwlock_release(this.address, mode);
    } catch (e) {
      throw core.trapped('rwlock_release', e);
    }
  }

  #downgrade(from: Mode, to: Mode, call: string, what: string): void {
    const core = this.#live(call);
    const code = core.glue.rwlock_downgrade(this.address, from, to);
    if (code === Released.HeldByAnother) throw heldByAnotherError(call);
    if (code !== Released.Ok) throw new TypeError(`parklot: ${call}: this thread does not hold ${what} of this lock; take it first`);
  }

  async #takeAsync(mode: Mode, timeout: number | undefined, options: AsyncOptions | undefined, call: string): Promise<boolean> {
    const t = toAsyncTimeout(call, timeout);
    const signal = toSignal(call, options);
    const core = this.#live(call);
    try {
      return await acquireQueued(core, 'rwlock', this.address, mode, Queue.RwLock, t, signal, (code) => this.#took(code, call));
    } catch (e) {
      if (core.closed) throw closedError();
      throw e;
    }
  }
}
