// notify(count) is exact: every wait that ends "ok" was counted by exactly one
// notify, whether its worker was asleep, on its way to sleep, or just queued.
// Workers wait in a loop while the page notifies one at a time; at the end
// the notifies' results and the waits' "ok"s must add up to the same number.
import { describe, expect, it } from 'vitest';
import { rt, spawn, useRuntime, withTimeout } from './helpers.js';

useRuntime();

describe('notify counts exactly the waits it ends', () => {
  it('3 workers waiting in a loop, 20,000 notify(…, 1): the counts agree', async () => {
    const word = rt.int32(rt.alloc(4, 4));
    const stop = rt.int32(rt.alloc(4, 4));
    const workers = [0, 1, 2].map(() => spawn(rt, 'countOks', { word: word.byteOffset, stop: stop.byteOffset }));
    for (const w of workers) await w.next('started');
    let counted = 0;
    let churn = 0;
    for (let i = 0; i < 20_000; i++) {
      const n = rt.atomics.notify(word, 0, 1);
      expect(n).toBeLessThanOrEqual(1);
      counted += n;
      // Let the waiters run: many notifies then find one on its way to sleep.
      if (n === 0) churn++;
    }
    Atomics.store(stop, 0, 1);
    Atomics.store(word, 0, 1);
    counted += rt.atomics.notify(word, 0);
    const oks = (await withTimeout(Promise.all(workers.map((w) => w.done)), 30_000, 'the waiters to stop')) as number[];
    const total = oks.reduce((a, b) => a + b, 0);
    console.log(`notify counted ${counted}, waits ended "ok" ${total} times (${oks.join(' + ')}); ${churn} notifies found nobody`);
    expect(total).toBe(counted);
    expect(counted).toBeGreaterThan(0);
  });
});
