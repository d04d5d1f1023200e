// Condition: a bounded ring buffer in shared memory, with producer and
// consumer workers (blocking waits) and a consumer on this thread that may
// not block (async waits, in the same queues): every message arrives exactly
// once. Then the basic contracts: notified or timed out, FIFO notifyOne,
// notifyAll counts, the lock held again after every wait.
import { beforeAll, describe, expect, it } from 'vitest';
import { Runtime, type Condition, type Lock } from '../../js/dist/index.js';
import { openGate, rt, sleep, spawn, useRuntime, withTimeout } from './helpers.js';

useRuntime();

describe('Condition: producer/consumer over a bounded ring buffer', () => {
  it('2 producers x 10,000 messages, 2 blocking consumers and 1 async consumer: each message exactly once', async () => {
    const producers = 2;
    const perProducer = 10_000;
    const total = producers * perProducer;
    const capacity = 8;
    const lock = rt.lock();
    const notEmpty = rt.condition();
    const notFull = rt.condition();
    const layout = {
      lock: lock.address,
      notEmpty: notEmpty.address,
      notFull: notFull.address,
      state: rt.alloc(16, 4),
      ring: rt.alloc(4 * capacity, 4),
      capacity,
      seen: rt.alloc(4 * total, 4),
      total,
      producers,
      gate: rt.alloc(4, 4),
    };
    const workers = [
      ...Array.from({ length: producers }, (_, p) => spawn(rt, 'producer', { ...layout, first: p * perProducer, n: perProducer })),
      spawn(rt, 'consumer', layout),
      spawn(rt, 'consumer', layout),
    ];
    await Promise.all(workers.map((w) => w.next('ready')));

    // The async consumer runs on this thread through a runtime that may not block.
    const page = await Runtime.attach(rt.handle(), { mayBlock: false });
    try {
      const l = page.lockAt(layout.lock);
      const ne = page.conditionAt(layout.notEmpty);
      const nf = page.conditionAt(layout.notFull);
      const s = page.int32(layout.state, 4);
      const ring = page.int32(layout.ring, capacity);
      const seen = page.int32(layout.seen, total);
      const asyncConsumer = async (): Promise<number> => {
        let taken = 0;
        for (;;) {
          await l.lockAsync();
          while (s[2] === 0 && s[3]! < producers) await ne.waitAsync(l);
          if (s[2] === 0) {
            l.unlock();
            return taken;
          }
          const id = ring[s[0]!]!;
          s[0] = (s[0]! + 1) % capacity;
          s[2]! -= 1;
          seen[id]! += 1;
          l.unlock();
          nf.notifyOne();
          taken++;
        }
      };
      const mine = asyncConsumer();
      openGate(rt, layout.gate);
      const [sent1, sent2, took1, took2] = (await withTimeout(
        Promise.all(workers.map((w) => w.done)),
        120_000,
        'producers and consumers',
      )) as number[];
      const tookHere = await withTimeout(mine, 30_000, 'the async consumer');
      expect(sent1! + sent2!).toBe(total);
      expect(took1! + took2! + tookHere).toBe(total);
      const counts = Array.from(page.int32(layout.seen, total));
      const wrong = counts.flatMap((c, id) => (c === 1 ? [] : [`${id}: ${c}`]));
      expect(wrong).toEqual([]);
      expect(tookHere).toBeGreaterThan(0); // the async consumer got a share
    } finally {
      page.close();
    }
  });
});

describe('Condition basics', () => {
  let lock: Lock;
  let cond: Condition;
  beforeAll(() => {
    lock = rt.lock();
    cond = rt.condition();
  });

  it('wait times out with false and holds the lock again; notify with no waiter is false / 0', () => {
    lock.lock();
    const t0 = performance.now();
    expect(cond.wait(lock, 20)).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(19);
    expect(lock.isLocked()).toBe(true);
    expect(cond.wait(lock, 0)).toBe(false);
    expect(cond.wait(lock, -5)).toBe(false);
    lock.unlock();
    expect(cond.notifyOne()).toBe(false);
    expect(cond.notifyAll()).toBe(0);
  });

  it('waitAsync resolves true on notify, false on timeout, and holds the lock again each time', async () => {
    await lock.lockAsync();
    const p = cond.waitAsync(lock);
    expect(lock.isLocked()).toBe(false); // released once queued
    expect(cond.notifyOne()).toBe(true);
    expect(await p).toBe(true);
    expect(lock.isLocked()).toBe(true);
    expect(await cond.waitAsync(lock, 10)).toBe(false);
    expect(lock.isLocked()).toBe(true);
    lock.unlock();
  });

  it('a blocking waiter in a worker is woken by notifyOne and gets true', async () => {
    const w = spawn(rt, 'conditionWait', { lock: lock.address, condition: cond.address });
    await w.next('waiting');
    // It holds the lock until it is queued: once we get the lock, it waits.
    await lock.lockAsync();
    lock.unlock();
    expect(cond.notifyOne()).toBe(true);
    expect(await w.done).toBe(true);
  });

  it('notifyOne wakes waiters oldest first, blocking and async alike; notifyAll returns how many', async () => {
    const order: string[] = [];
    const w1 = spawn(rt, 'conditionWait', { lock: lock.address, condition: cond.address });
    await w1.next('waiting');
    await lock.lockAsync();
    const a = cond.waitAsync(lock).then((n) => {
      order.push('async');
      lock.unlock();
      return n;
    });
    const w2 = spawn(rt, 'conditionWait', { lock: lock.address, condition: cond.address });
    await w2.next('waiting');
    await lock.lockAsync(); // w2 is queued now
    lock.unlock();

    expect(cond.notifyOne()).toBe(true);
    await w1.next('woke');
    order.push('w1');
    await sleep(50);
    expect(order).toEqual(['w1']); // the others still wait
    expect(cond.notifyOne()).toBe(true);
    await a;
    expect(order).toEqual(['w1', 'async']);
    expect(cond.notifyAll()).toBe(1);
    expect(await w2.next('woke')).toBe(true);
    await Promise.all([w1.done, w2.done]);
    expect(cond.notifyAll()).toBe(0);
  });
});
