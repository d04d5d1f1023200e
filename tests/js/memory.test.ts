// Memory: views stay valid when the shared memory grows, allocations are
// zeroed and reused, and lock()/unlock() allocate nothing on the JS heap.
// (vitest runs this file with node --expose-gc; see vitest.config.ts.)
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { PerformanceObserver } from 'node:perf_hooks';
import { rt, sleep, spawn, useRuntime } from './helpers.js';

useRuntime();

describe('views and growth', () => {
  it('allocations are zeroed, aligned and distinct', () => {
    const seen = new Set<number>();
    for (const align of [1, 2, 4, 8, 16, 64, 4096]) {
      const a = rt.alloc(24, align);
      expect(a % align).toBe(0);
      expect(Array.from(rt.uint8(a, 24))).toEqual(Array(24).fill(0));
      expect(seen.has(a)).toBe(false);
      seen.add(a);
    }
  });

  it('views made before the memory grows still address the same bytes; locks at old addresses still work', async () => {
    const a = rt.alloc(32, 8);
    const i32 = rt.int32(a, 2);
    const f64 = rt.float64(a + 8, 1);
    const i64 = rt.bigInt64(a + 16, 2);
    const lock = rt.lock();
    i32[0] = 7;
    f64[0] = 2.5;
    i64[1] = -3n;
    const oldBuffer = i32.buffer;
    const before = rt.memory.buffer.byteLength;

    const big = rt.alloc(64 << 20, 8); // 64 MiB: the memory grows
    const after = rt.memory.buffer.byteLength;
    expect(after).toBeGreaterThanOrEqual(before + (64 << 20));
    expect(rt.memory.buffer).not.toBe(oldBuffer);
    expect(i32.buffer.byteLength).toBe(before); // old views keep their old length...
    // ...and the same bytes, both ways.
    expect(rt.int32(a, 1)[0]).toBe(7);
    expect(rt.float64(a + 8)[0]).toBe(2.5);
    expect(rt.bigInt64(a + 16, 2)[1]).toBe(-3n);
    rt.int32(a, 2)[1] = 11;
    expect(i32[1]).toBe(11);
    i32[0] = 8;
    expect(rt.int32(a)[0]).toBe(8);
    // The new region is usable, through new views and by a worker.
    const tail = rt.float64(big + (64 << 20) - 8);
    tail[0] = 1;
    lock.lock();
    const w = spawn(rt, 'increment', { lock: lock.address, counter: big + (64 << 20) - 8, iterations: 1000 });
    lock.unlock();
    await w.done;
    expect(tail[0]).toBe(1001);
    expect(lock.tryLock()).toBe(true);
    lock.unlock();
    // Atomics through the view over the old buffer.
    expect(rt.atomics.wait(i32, 0, 8, 0)).toBe('timed-out');
    rt.free(big, 64 << 20, 8);
  });

  it('freed memory is reused', () => {
    const a = rt.alloc(256, 8);
    rt.free(a, 256, 8);
    const b = rt.alloc(256, 8);
    expect(b).toBe(a);
    rt.free(b, 256, 8);
  });
});

describe('no allocation on the hot path', () => {
  it('10 million lock/unlock pairs grow the JS heap by less than 1 MB (after a GC) and trigger no GC', async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    const lock = rt.lock();
    const cond = rt.condition();
    const run = (n: number) => {
      for (let i = 0; i < n; i++) {
        lock.lock();
        lock.unlock();
      }
      for (let i = 0; i < n / 10; i++) {
        if (lock.tryLock()) lock.unlock();
        cond.notifyOne();
      }
    };
    run(100_000); // warm up: compile the hot path first
    gc?.();
    await sleep(0);
    // Garbage would also show as collections: 10M calls allocating even 16
    // bytes each make 160 MB, dozens of young-generation GCs.
    let collections = 0;
    const observer = new PerformanceObserver((list) => {
      collections += list.getEntries().length;
    });
    observer.observe({ entryTypes: ['gc'] });
    const before = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    run(10_000_000);
    const ms = performance.now() - t0;
    await sleep(20); // let the observer hear of collections during the run
    observer.disconnect();
    gc?.();
    const grown = process.memoryUsage().heapUsed - before;
    console.log(
      `10M lock/unlock pairs (+1M tryLock/unlock, 1M notifyOne): ${ms.toFixed(0)} ms, ` +
        `heap ${grown >= 0 ? '+' : ''}${grown} bytes (gc ${gc ? 'on' : 'unavailable'}), ${collections} GCs meanwhile`,
    );
    expect(collections).toBeLessThanOrEqual(2);
    // Without a GC to call, garbage of 10M calls would still show in megabytes.
    expect(grown).toBeLessThan(gc ? 1 << 20 : 8 << 20);
  });
});

describe('nothing per runtime outlives it', () => {
  /** This process's virtual address space in GiB (Linux), or null elsewhere. */
  async function addressSpaceGiB(): Promise<number | null> {
    try {
      const { readFileSync } = await import('node:fs');
      const kb = /VmSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
      return kb ? Number(kb[1]) / 2 ** 20 : null;
    } catch {
      return null;
    }
  }
  const gc = (globalThis as { gc?: () => void }).gc!;

  it('10,000 Runtime.create() + close() cycles keep the address space and the heap flat', async () => {
    // Each runtime's memory reserves about 10 GiB of address space (1 GiB
    // maximum plus guard regions): one that outlived its runtime shows at once.
    const cycle = async () => {
      const other = await Runtime.create();
      other.lock().lock();
      other.close();
    };
    for (let i = 0; i < 1_000; i++) await cycle();
    gc();
    const space0 = await addressSpaceGiB();
    const heap0 = process.memoryUsage().heapUsed;
    for (let i = 1; i <= 9_000; i++) {
      await cycle();
      if (i % 100 === 0) gc();
    }
    gc();
    const space1 = await addressSpaceGiB();
    const heap1 = process.memoryUsage().heapUsed;
    if (space0 !== null && space1 !== null) expect(space1 - space0).toBeLessThan(25); // two uncollected memories at most
    expect(heap1 - heap0).toBeLessThan(4 * 2 ** 20);
  }, 120_000);
});
