/**
 * `Primitive`: the lifecycle every primitive class shares, written once.
 * It checks that the runtime made the object, holds what a structured
 * clone keeps of it (`address`, `kind`, `runtimeId`: its plain form, see
 * revive.ts), and frees it: `free()` (or `using`) gives its memory back
 * once and sets the object's freed mark. Each class keeps only its own
 * calls and, where they refuse a freed object, a `#live(call)` that
 * returns its core unless the runtime is closed or it was freed (a `Lock`
 * points its address at a tombstone instead; a `Barrier` does not check).
 *
 * What a call reads on every use stays in code of the class's own: its
 * `#core` (a private field here would take a getter) and that check. A
 * shared method reading `this` would see every class's objects at one
 * site, so V8 could not specialize it for one: measured in a loop on one
 * thread, one `live()` method here made an uncontended RwLock
 * read()+unlockRead() 48 -> 52 ns; a shared cold half (`if (closed ||
 * freed) refuse(...)`) cost a Semaphore acquire()+release() 43 -> 47 ns.
 *
 * The stripped .d.ts of this module must not reach kinds.ts (its types
 * bring loader.ts's WebAssembly ones): the constructor is internal.
 */
import { Core } from './core.js';
import { cannotBlockError, closedError } from './errors.js';
import { disposeSymbol } from './dispose.js';
import { freePrimitive, primitiveNames, type PrimitiveKind } from './kinds.js';

/**
 * The key of a primitive's freed mark, set by `free()`: a symbol the
 * package does not export, so the mark is no field a structured clone,
 * `JSON.stringify` or `Object.keys` sees, and each class reads it itself.
 * @internal
 */
export const freedMark: unique symbol = Symbol('parklot.freed');

/** Throws the error a blocking call gets on a closed runtime or a thread that may not block. @internal */
export function refuseToBlock(core: Core, call: string, alternative: string): never {
  throw core.closed ? closedError() : cannotBlockError(call, alternative);
}

/**
 * A primitive in the runtime's shared memory: a `Lock`, `Condition`,
 * `RwLock`, `Semaphore`, `Barrier` or `Once`, whose plain form's `kind` is `Plain`.
 */
export abstract class Primitive<Plain extends string> {
  /** Its byte address in the runtime's memory: `rt.lockAt(address)` (and its kin) on another thread gives the same one. */
  readonly address: number;
  /** What `rt.revive()` recognizes after a structured clone (which keeps only own fields): 'parklot.lock', ... */
  readonly kind: Plain;
  /** The id of the runtime whose memory holds it (`rt.revive()` checks it). */
  readonly runtimeId: number;
  /** Whether `free()` ran on this object. @internal */
  protected [freedMark] = false;
  readonly #core: Core;
  readonly #kind: PrimitiveKind;

  /** `made`: the TypeError a direct `new` gets (objects come from `rt.lock()` and its kin). @internal */
  protected constructor(core: unknown, address: number, kind: PrimitiveKind, made: string) {
    if (!(core instanceof Core)) throw new TypeError(made);
    this.address = address;
    this.kind = primitiveNames(kind).plain as Plain; // kinds.ts's table and each class's type agree (travel.test.ts)
    this.runtimeId = core.header.id;
    this.#core = core;
    this.#kind = kind;
  }

  /**
   * Gives its bytes back to the memory. Refused (a TypeError, nothing done)
   * while it is held or waited for (a `Once`: while its function runs), and
   * for one already freed, through this object or another on any thread.
   * Other threads must be done with it first; this object's calls throw
   * from then on (a `Barrier`'s are not checked).
   *
   * @example
   * const slots = rt.semaphore(4);
   * slots.free();
   */
  free(): void {
    const { name } = primitiveNames(this.#kind);
    if (this[freedMark]) throw new TypeError(`parklot: ${name}.free(): this ${name} was freed already`);
    freePrimitive(this.#core, `${name}.free()`, this.address, this.#kind);
    this[freedMark] = true;
  }

  /**
   * `free()`, for a `using` declaration (TypeScript 5.2+).
   *
   * @example
   * { using slots = rt.semaphore(4); slots.withPermits(1, work); } // freed here
   */
  [disposeSymbol](): void {
    this.free();
  }
}
