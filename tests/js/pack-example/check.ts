// Compiled with tsc against the installed package: its "exports" map must
// lead TypeScript to the .d.ts files, and the types must say what the API does.
import { Condition, Lock, Runtime, RwLock, attachWorker, spawnWorker, type RuntimeHandle, type WaitAsyncResult, type WaitResult, type WorkerLike } from 'parklot';

export async function check(): Promise<void> {
  const rt: Runtime = await Runtime.create({ mayBlock: false });
  const handle: RuntimeHandle = rt.handle();
  const other: Runtime = await Runtime.attach(handle, { mayBlock: true });
  const lock: Lock = rt.lock();
  const cond: Condition = rt.conditionAt(rt.condition().address);
  const got: boolean = await lock.lockAsync(10);
  const notified: boolean = await cond.waitAsync(lock, 5);
  const n: number = cond.notifyAll();
  const word: Int32Array = rt.int32(rt.alloc(4, 4));
  const r: WaitResult = other.atomics.wait(word, 0, 0, 0);
  const a: WaitAsyncResult = rt.atomics.waitAsync(rt.bigInt64(rt.alloc(8, 8)), 0, 0n);
  if (a.async) {
    const v: 'ok' | 'timed-out' = await a.value;
    void v;
  }
  const woken: number = rt.atomics.notify(word, 0);
  const total: number = lock.withLock(() => 1 + 1);
  // A primitive placed in a block of one's own, a policy by name, and freeing (`using` calls [Symbol.dispose]).
  const placed: Lock = rt.place('lock', rt.alloc(8));
  const table: RwLock = rt.rwLock('prefer-readers');
  placed.free();
  table[Symbol.dispose]();
  // @ts-expect-error: a BigInt64Array waits for a bigint
  rt.atomics.wait(rt.bigInt64(8), 0, 0);
  // @ts-expect-error: Float64Array cannot be waited on
  rt.atomics.wait(new Float64Array(1), 0, 0);
  // @ts-expect-error: locks come from the runtime
  new Lock();
  const worker: WorkerLike = await spawnWorker(rt, 'worker.mjs', { lock, cond });
  const revived: { lock: Lock; cond: Condition } = rt.revive({ lock: JSON.parse(JSON.stringify(lock)) as typeof lock, cond });
  const attached: { runtime: Runtime; data: { lock: Lock } } = await attachWorker<{ lock: Lock }>();
  void [got, notified, n, r, woken, total, worker, revived, attached];
  other.close();
  rt.close();
}
