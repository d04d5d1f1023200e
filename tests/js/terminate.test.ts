// A worker terminated (worker.terminate()) while it waits must not make
// later unlocks or notifies hang for the other threads. Each case: worker A
// waits first, worker B second, A is terminated, then the lock is released
// or the waiters notified, and B must get through within a deadline.
//
// B is never terminated while it runs: a worker killed inside wasm code that
// holds a global lock (the allocator's, during rt.close() for one) leaves it
// held, and every later allocation on every thread spins forever. So B is
// left to finish, and killed only if it missed the deadline (it is parked then).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { sleep, spawn, withTimeout, type Spawned } from './helpers.js';

const DEADLINE_MS = 3000;

let rt: Runtime;
beforeAll(async () => {
  rt = await Runtime.create();
});
afterAll(() => rt.close());

/** Starts `task` and waits until it posted `type` and had 100 ms to queue itself. */
async function queued(task: string, data: Record<string, unknown>, type: string): Promise<Spawned> {
  const w = spawn(rt, task, data);
  await w.next(type);
  await sleep(100);
  return w;
}

/** B's `type` message and then its exit, each within the deadline; B is terminated only if it missed one. */
async function through(b: Spawned, type: string, what: string): Promise<unknown> {
  try {
    const value = await withTimeout(b.next(type), DEADLINE_MS, what);
    await withTimeout(b.done, DEADLINE_MS, 'worker B to finish');
    return value;
  } catch (e) {
    await b.worker.terminate();
    throw e;
  }
}

describe('a worker terminated while it waits', () => {
  it('on a lock: the next unlock still lets the other waiter in', async () => {
    const lock = rt.lock();
    lock.lock();
    const a = await queued('park', { lock: lock.address }, 'parking');
    const b = await queued('park', { lock: lock.address }, 'parking');
    await a.worker.terminate();
    lock.unlock();
    await through(b, 'locked', 'worker B to get the lock after worker A, parked before it, was terminated');
    expect(await lock.lockAsync(DEADLINE_MS)).toBe(true);
    lock.unlock();
  });

  it('on a lock, with fair unlocks: the lock is not handed to the dead waiter', async () => {
    const lock = rt.lock();
    lock.lock();
    const a = await queued('park', { lock: lock.address }, 'parking');
    const b = await queued('park', { lock: lock.address }, 'parking');
    await a.worker.terminate();
    lock.unlockFair();
    await through(b, 'locked', 'worker B to get the lock from unlockFair after worker A, parked before it, was terminated');
    expect(await lock.lockAsync(DEADLINE_MS)).toBe(true);
    lock.unlock();
  });

  it('on a condition: notifyAll still wakes the other waiter', async () => {
    const lock = rt.lock();
    const condition = rt.condition();
    const a = await queued('conditionWait', { lock: lock.address, condition: condition.address }, 'waiting');
    const b = await queued('conditionWait', { lock: lock.address, condition: condition.address }, 'waiting');
    await a.worker.terminate();
    const woken = condition.notifyAll();
    expect(await through(b, 'woke', 'worker B to wake from notifyAll')).toBe(true);
    expect(woken).toBeGreaterThanOrEqual(1);
  });

  it('on a condition: notifyOne reaches the live waiter', async () => {
    const lock = rt.lock();
    const condition = rt.condition();
    const a = await queued('conditionWait', { lock: lock.address, condition: condition.address }, 'waiting');
    const b = await queued('conditionWait', { lock: lock.address, condition: condition.address }, 'waiting');
    await a.worker.terminate();
    expect(condition.notifyOne()).toBe(true);
    expect(await through(b, 'woke', 'worker B to wake from notifyOne after worker A, queued before it, was terminated')).toBe(true);
  });

  it('on rt.atomics.wait: notify(…, 1) reaches the live waiter and counts 1', async () => {
    const word = rt.int32(rt.alloc(4, 4));
    const a = await queued('atomicsWait', { word: word.byteOffset, value: 0 }, 'waiting');
    const b = await queued('atomicsWait', { word: word.byteOffset, value: 0 }, 'waiting');
    await a.worker.terminate();
    expect(rt.atomics.notify(word, 0, 1)).toBe(1);
    expect(await through(b, 'woke', 'worker B to wake from notify(…, 1) after worker A, queued before it, was terminated')).toBe('ok');
    expect(rt.atomics.notify(word, 0)).toBe(0); // the dead waiter's record left the queue
  });
});
