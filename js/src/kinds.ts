/**
 * What the runtime made where. The wasm module keeps one table for the whole
 * memory (wasm/src/kinds.rs): the kind of every object `rt.lock()`,
 * `rt.rwLock()`, ..., `rt.alloc()` and `rt.place()` made, and the runtime's
 * own memory. `rt.lockAt(address)` and the other `*At` calls, `revive()`,
 * the frees, views and `rt.atomics` ask it; locks and unlocks never do.
 * Here: the kinds, the checks the public calls make, and their errors,
 * which say what is at the address.
 */
import { closedError } from './errors.js';
import type { Glue } from './loader.js';
import { checkAddress } from './validate.js';

/**
 * What the checks here use of a runtime instance: a `Core` (core.ts), named
 * by its shape because core.ts imports this module for `Kind`.
 */
interface Instance {
  readonly glue: Glue;
  readonly closed: boolean;
  byteLength(): number;
}

/** What an address holds (wasm/src/kinds.rs, `kind`). */
export const Kind = { Freed: 0, Bytes: 1, Internal: 2, Lock: 3, Condition: 4, RwLock: 5, Semaphore: 6, Barrier: 7, Once: 8 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];
/** A primitive's kind. */
export type PrimitiveKind = Exclude<Kind, 0 | 1 | 2>;

/** What the table's exports report (wasm/src/kinds.rs, `checked`). */
export const Checked = { Ok: 0, NotThere: 1, Busy: 2, WrongLayout: 3, Overlap: 4, Misaligned: 5, PastEnd: 6, UnknownKind: 7 } as const;

/** Each primitive kind: its class's name, its plain form's `kind` (revive.ts), how `rt.place` names it, what a refused free says. */
const PRIMITIVES: Record<PrimitiveKind, { readonly name: string; readonly plain: string; readonly place: string; readonly busy: string }> = {
  [Kind.Lock]: { name: 'Lock', plain: 'parklot.lock', place: 'lock', busy: 'is locked or has waiters' },
  [Kind.Condition]: { name: 'Condition', plain: 'parklot.condition', place: 'condition', busy: 'has waiters' },
  [Kind.RwLock]: { name: 'RwLock', plain: 'parklot.rwlock', place: 'rwLock', busy: 'is held or has waiters' },
  [Kind.Semaphore]: { name: 'Semaphore', plain: 'parklot.semaphore', place: 'semaphore', busy: 'has waiters' },
  [Kind.Barrier]: { name: 'Barrier', plain: 'parklot.barrier', place: 'barrier', busy: 'has waiters' },
  [Kind.Once]: { name: 'Once', plain: 'parklot.once', place: 'once', busy: 'is running' },
};

/** A primitive kind's class name ('RwLock') and its plain form's `kind` ('parklot.rwlock'). */
export function primitiveNames(kind: PrimitiveKind): { readonly name: string; readonly plain: string } {
  return PRIMITIVES[kind];
}

/** `rt.place`'s names of the kinds. */
export const PLACE_KINDS: Readonly<Record<string, PrimitiveKind>> = Object.fromEntries(
  Object.entries(PRIMITIVES).map(([kind, p]) => [p.place, Number(kind) as PrimitiveKind]),
);

function isPrimitive(kind: number): kind is PrimitiveKind {
  return kind >= Kind.Lock && kind <= Kind.Once;
}

/** What the table says of `address`. */
interface Found {
  /** 0: nothing it knows; 1: an allocation or a freed range; 2: a primitive placed in a block. */
  readonly where: number;
  readonly kind: number;
  readonly start: number;
  readonly size: number;
  readonly align: number;
}

function find(core: Instance, address: number): Found {
  const [where = 0, kind = 0, start = 0, size = 0, align = 1] = core.glue.kind_describe(address);
  return { where, kind, start, size, align };
}

/**
 * What is at `address`, as the rest of a sentence that starts "address N":
 * "holds a RwLock", "was freed", "is inside a 64-byte block from rt.alloc() at 1200".
 */
function whatIs(found: Found, address: number): string {
  const { where, kind, start, size } = found;
  if (where === 0) return 'holds nothing this runtime made';
  if (kind === Kind.Freed) return 'was freed';
  if (kind === Kind.Bytes) return `is inside a ${size}-byte block from rt.alloc() at ${start}`;
  if (kind === Kind.Internal) return "is parklot's own memory (the runtime's header, a waiter record or a thread's bookkeeping)";
  const name = isPrimitive(kind) ? PRIMITIVES[kind].name : 'primitive';
  return start === address ? `holds a ${name}` : `is inside a ${name} at ${start}`;
}

/** What `address` holds, for an error about it: see `whatIs`. */
export function describe(core: Instance, address: number): string {
  return whatIs(find(core, address), address);
}

/** The error of a use of a freed object through the object itself. */
export function freedError(call: string, name: string): TypeError {
  return new TypeError(`parklot: ${call}: this ${name} was freed (free() or the end of a using block); it may not be used again`);
}

/**
 * Checks that `address` holds a live primitive of `kind` (made on any
 * thread, or placed in a block), for `rt.lockAt()` and its kin; throws a
 * TypeError that says what is there instead. Range and alignment are checked first.
 */
export function checkKind(core: Instance, call: string, address: number, kind: PrimitiveKind): number {
  if (core.glue.kind_check(address, kind)) return address;
  const { name, place } = PRIMITIVES[kind];
  const found = find(core, address);
  const there = found.where !== 0 && found.start === address && isPrimitive(found.kind) ? `holds a ${PRIMITIVES[found.kind].name}, not a ${name}` : whatIs(found, address);
  throw new TypeError(
    `parklot: ${call}: address ${address} ${there}; pass the address of a live ${name} (${name.toLowerCase()}.address), ` +
      `or declare one in a block of yours with rt.place('${place}', address)`,
  );
}

/** Frees the primitive of `kind` at `address` (for its class's `free()`), or throws saying why not. */
export function freePrimitive(core: Instance, call: string, address: number, kind: PrimitiveKind): void {
  if (core.closed) throw closedError();
  const code = core.glue.kind_free(address, kind, 0, 0);
  if (code === Checked.Ok) return;
  const { name, busy } = PRIMITIVES[kind];
  if (code === Checked.Busy) {
    throw new TypeError(`parklot: ${call}: the ${name} at ${address} ${busy}; free it once no thread holds it or waits for it`);
  }
  throw new TypeError(`parklot: ${call}: address ${address} ${describe(core, address)}: there is no ${name} to free there`);
}

/** Frees a block from `rt.alloc` (`rt.free`), or throws saying why not. */
export function freeBlock(core: Instance, address: number, bytes: number, align: number): void {
  const call = 'Runtime.free()';
  const code = core.glue.kind_free(address, Kind.Bytes, bytes, align);
  if (code === Checked.Ok) return;
  const found = find(core, address);
  if (code === Checked.WrongLayout) {
    throw new TypeError(
      `parklot: ${call}: the block at ${address} was allocated as ${found.size} bytes aligned to ${found.align}, ` +
        `not ${bytes} bytes aligned to ${align}; pass what you passed to rt.alloc()`,
    );
  }
  if (code === Checked.Busy) {
    const at = core.glue.kind_busy_in(address, found.size);
    const inside = find(core, at);
    const p = isPrimitive(inside.kind) ? PRIMITIVES[inside.kind] : undefined;
    throw new TypeError(
      `parklot: ${call}: the ${p?.name ?? 'primitive'} at ${at} (placed in the block at ${address}) ${p?.busy ?? 'is in use'}; ` +
        'free the block once no thread holds or waits for what is placed in it',
    );
  }
  if (found.where !== 0 && found.start === address && isPrimitive(found.kind)) {
    const { name } = PRIMITIVES[found.kind];
    throw new TypeError(`parklot: ${call}: address ${address} holds a ${name}: free it with ${name.charAt(0).toLowerCase()}${name.slice(1)}.free()`);
  }
  throw new TypeError(`parklot: ${call}: address ${address} ${whatIs(found, address)}; rt.free() takes an address rt.alloc() returned, once`);
}

/**
 * Checks that a view of `bytes` bytes at `address` lies inside one block
 * from `rt.alloc`, clear of the primitives placed in it; else throws a
 * TypeError naming `call`.
 */
export function checkView(core: Instance, call: string, address: number, bytes: number): void {
  const code = core.glue.kind_view(address, bytes);
  if (code === Checked.Ok) return;
  if (code === Checked.PastEnd) {
    const { start, size } = find(core, address);
    throw new TypeError(
      `parklot: ${call}: the ${bytes} bytes at ${address} run past the end of the ${size}-byte block from rt.alloc() at ${start}; ` +
        'a view must lie inside one block',
    );
  }
  if (code === Checked.Overlap) {
    const at = core.glue.kind_placed_in(address, bytes);
    const { kind } = find(core, at);
    throw new TypeError(
      `parklot: ${call}: the ${bytes} bytes at ${address} overlap the ${isPrimitive(kind) ? PRIMITIVES[kind].name : 'primitive'} placed at ${at}; ` +
        "a view may not reach a primitive's bytes",
    );
  }
  throw new TypeError(`parklot: ${call}: a view must lie inside a block from rt.alloc(), and address ${address} ${describe(core, address)}`);
}

/**
 * Declares a primitive of `kind` at `address` inside a block (`rt.place`),
 * zeroing its bytes, or throws saying why not.
 */
export function placePrimitive(core: Instance, address: number, kind: PrimitiveKind): void {
  const call = 'Runtime.place()';
  const layout = core.glue.kind_layout(kind);
  const size = layout & 0xffff;
  checkAddress(call, address, size, layout >>> 16, core.byteLength());
  const code = core.glue.kind_place(address, kind);
  if (code === Checked.Ok) return;
  const { name } = PRIMITIVES[kind];
  if (code === Checked.PastEnd) {
    const { start, size } = find(core, address);
    throw new TypeError(`parklot: ${call}: a ${name} at ${address} would run past the end of the ${size}-byte block from rt.alloc() at ${start}`);
  }
  if (code === Checked.Overlap) {
    const at = core.glue.kind_placed_in(address, size);
    throw new TypeError(`parklot: ${call}: a ${name} at ${address} would overlap what is placed at ${at}, which ${describe(core, at)}; free that first`);
  }
  if (code === Checked.Misaligned) throw new RangeError(`parklot: ${call}: address ${address} is not aligned for a ${name}`);
  throw new TypeError(`parklot: ${call}: a primitive is placed inside a block from rt.alloc(), and address ${address} is not inside a block from rt.alloc(): it ${describe(core, address)}`);
}
