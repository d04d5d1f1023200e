/**
 * Objects that travel between threads. Structured cloning (`postMessage`,
 * `workerData`) keeps only an object's own fields, not its class: a `Lock`
 * arrives as `{ kind: 'parklot.lock', address, runtimeId }`, a `Condition`
 * as `{ kind: 'parklot.condition', ... }`, and so on for every primitive
 * (`KINDS`). All of them keep their whole state in their bytes of the shared
 * memory (a reader-writer lock's policy too), so the address is all they
 * need. `revive` walks what arrived and turns those plain forms back into
 * live objects of the receiving thread's runtime, after checking that they
 * come from that runtime's memory and that each address holds a live object
 * of the kind the plain form says (as `rt.lockAt()` and its kin check it).
 */
import type { Barrier } from './barrier.js';
import type { Condition } from './condition.js';
import type { Lock } from './lock.js';
import type { Once } from './once.js';
import type { RwLock } from './rwlock.js';
import type { Semaphore } from './semaphore.js';

/** Each primitive's plain-form kind, and the live object it revives as. */
export interface Kinds {
  'parklot.lock': Lock;
  'parklot.condition': Condition;
  'parklot.rwlock': RwLock;
  'parklot.semaphore': Semaphore;
  'parklot.barrier': Barrier;
  'parklot.once': Once;
}

/**
 * What `revive` uses of a runtime: its id and its `*At` calls. A `Runtime`
 * (runtime.ts), named by its shape because runtime.ts imports this module.
 */
export interface Reviver {
  handle(): { readonly id: number };
  lockAt(address: number): Lock;
  conditionAt(address: number): Condition;
  rwLockAt(address: number): RwLock;
  semaphoreAt(address: number): Semaphore;
  barrierAt(address: number): Barrier;
  onceAt(address: number): Once;
}

/** How each kind is named in errors and made live: `rt.<at>(address)`. */
const KINDS: { readonly [K in keyof Kinds]: { readonly what: string; readonly at: (rt: Reviver, address: number) => Kinds[K] } } = {
  'parklot.lock': { what: 'a Lock', at: (rt, a) => rt.lockAt(a) },
  'parklot.condition': { what: 'a Condition', at: (rt, a) => rt.conditionAt(a) },
  'parklot.rwlock': { what: 'an RwLock', at: (rt, a) => rt.rwLockAt(a) },
  'parklot.semaphore': { what: 'a Semaphore', at: (rt, a) => rt.semaphoreAt(a) },
  'parklot.barrier': { what: 'a Barrier', at: (rt, a) => rt.barrierAt(a) },
  'parklot.once': { what: 'a Once', at: (rt, a) => rt.onceAt(a) },
};

/** The plain form a primitive has after a structured clone (or `JSON.stringify`). */
export interface SentPrimitive {
  readonly kind: keyof Kinds;
  readonly address: number;
  readonly runtimeId: number;
}

/** What `revive` gives for a value of type `T`: the plain forms of the primitives become the live objects. */
export type Revived<T> = T extends SentPrimitive
  ? Kinds[T['kind']]
  : T extends readonly unknown[]
    ? { [K in keyof T]: Revived<T[K]> }
    : T extends object
      ? { [K in keyof T]: Revived<T[K]> }
      : T;

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * `value` with every plain-form (or live) primitive in it, at any
 * depth of plain objects and arrays, made a live object of `rt`. Other values
 * are kept as they are; objects and arrays holding something revived are
 * copies, the rest are the same objects.
 */
export function revive<T>(rt: Reviver, value: T): Revived<T> {
  const id = rt.handle().id;
  const seen = new Map<object, unknown>();
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const known = seen.get(v);
    if (known !== undefined) return known;
    const kind = (v as { kind?: unknown }).kind;
    if (typeof kind === 'string' && Object.hasOwn(KINDS, kind)) {
      const { address, runtimeId } = v as Partial<SentPrimitive>;
      const { what, at } = KINDS[kind as keyof Kinds];
      if (typeof address !== 'number' || typeof runtimeId !== 'number') {
        throw new TypeError(`parklot: revive(): ${path} looks like ${what} but has no numeric address and runtimeId`);
      }
      if (runtimeId !== id) {
        throw new TypeError(
          `parklot: revive(): ${path} is ${what} of another runtime (id ${runtimeId}; this one is ${id}): ` +
            'revive it on a thread attached to the runtime it came from',
        );
      }
      let live: unknown;
      try {
        live = at(rt, address); // checks the kind at the address (kinds.ts)
      } catch (e) {
        if (!(e instanceof TypeError)) throw e;
        const why = e.message.replace(/^parklot: [^:]*: /, '');
        throw new TypeError(`parklot: revive(): ${path} says it is ${what} at address ${address}, but ${why}`, { cause: e });
      }
      seen.set(v, live);
      return live;
    }
    if (Array.isArray(v)) {
      const copy: unknown[] = [];
      seen.set(v, copy);
      let changed = false;
      v.forEach((item: unknown, i) => {
        copy[i] = walk(item, `${path}[${i}]`);
        changed ||= copy[i] !== item;
      });
      if (!changed) seen.set(v, v);
      return changed ? copy : v;
    }
    if (!isPlainObject(v)) return v;
    const copy: Record<string, unknown> = {};
    seen.set(v, copy);
    let changed = false;
    for (const [key, item] of Object.entries(v)) {
      copy[key] = walk(item, `${path}.${key}`);
      changed ||= copy[key] !== item;
    }
    if (!changed) seen.set(v, v);
    return changed ? copy : v;
  };
  return walk(value, 'the value') as Revived<T>;
}
