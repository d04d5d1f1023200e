/**
 * Objects that travel between threads. Structured cloning (`postMessage`,
 * `workerData`) keeps only an object's own fields, not its class: a `Lock`
 * arrives as `{ kind: 'parklot.lock', address, runtimeId }` and a `Condition`
 * as `{ kind: 'parklot.condition', ... }`. `revive` walks what arrived and
 * turns those plain forms back into live objects of the receiving thread's
 * runtime, after checking that they come from that runtime's memory.
 */
import type { Condition } from './condition.js';
import type { Lock } from './lock.js';
import type { Runtime } from './runtime.js';

/** The plain form a `Lock` or `Condition` has after a structured clone (or `JSON.stringify`). */
export interface SentPrimitive {
  readonly kind: 'parklot.lock' | 'parklot.condition';
  readonly address: number;
  readonly runtimeId: number;
}

/** What `revive` gives for a value of type `T`: the plain forms of locks and conditions become the live objects. */
export type Revived<T> = T extends SentPrimitive
  ? T['kind'] extends 'parklot.lock'
    ? Lock
    : Condition
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
 * `value` with every plain-form (or live) Lock and Condition in it, at any
 * depth of plain objects and arrays, made a live object of `rt`. Other values
 * are kept as they are; objects and arrays holding something revived are
 * copies, the rest are the same objects.
 */
export function revive<T>(rt: Runtime, value: T): Revived<T> {
  const id = rt.handle().id;
  const seen = new Map<object, unknown>();
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const known = seen.get(v);
    if (known !== undefined) return known;
    const kind = (v as { kind?: unknown }).kind;
    if (kind === 'parklot.lock' || kind === 'parklot.condition') {
      const { address, runtimeId } = v as Partial<SentPrimitive>;
      const what = kind === 'parklot.lock' ? 'a Lock' : 'a Condition';
      if (typeof address !== 'number' || typeof runtimeId !== 'number') {
        throw new TypeError(`parklot: revive(): ${path} looks like ${what} but has no numeric address and runtimeId`);
      }
      if (runtimeId !== id) {
        throw new TypeError(
          `parklot: revive(): ${path} is ${what} of another runtime (id ${runtimeId}; this one is ${id}): ` +
            'revive it on a thread attached to the runtime it came from',
        );
      }
      const live = kind === 'parklot.lock' ? rt.lockAt(address) : rt.conditionAt(address);
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
