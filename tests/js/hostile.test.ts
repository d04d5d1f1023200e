// Hostile arguments and traps (issue 11, items 2 and 3): no number a caller
// passes reaches a panic in the wasm module, from a thread that may block or
// from one that may not; and if a trap happens anyway (a bug), the glue puts
// the thread's stack pointer back, so later calls do not overwrite memory
// that other threads allocated.
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../js/dist/index.js';
import { Core } from '../../js/dist/core.js';
import { MAX_PAGES, MIN_PAGES, freshGlue, loadModule } from '../../js/dist/loader.js';
import { rt, spawn, useRuntime } from './helpers.js';

useRuntime();

/** `bytes` bytes of a pattern in the runtime's memory, and a check that they are intact. */
function canary(bytes: number): () => number {
  const address = rt.alloc(bytes, 8);
  const view = rt.uint8(address, bytes);
  for (let i = 0; i < bytes; i++) view[i] = (i * 7 + 3) & 0xff;
  return () => {
    let changed = 0;
    const now = rt.uint8(address, bytes);
    for (let i = 0; i < bytes; i++) if (now[i] !== ((i * 7 + 3) & 0xff)) changed++;
    return changed;
  };
}

describe('hostile numbers reach no panic', () => {
  for (const mayBlock of [true, false]) {
    it(`every call, ${mayBlock ? 'from a worker' : 'from a thread that may not block'}: nothing traps, no other allocation changes`, async () => {
      const changedBytes = canary(64 << 10);
      const lock = rt.lock();
      const cond = rt.condition();
      const word = rt.alloc(4, 4);
      Atomics.store(rt.int32(word), 0, 5);
      const stop = rt.alloc(4, 4);
      const notifier = spawn(rt, 'notifier', { cond: cond.address, word, stop });
      const fuzz = spawn(rt, 'hostile', { mayBlock, rounds: 40, lock: lock.address, cond: cond.address, word });
      const result = (await fuzz.done) as { traps: string[]; trapCount: number; calls: number };
      Atomics.store(rt.int32(stop), 0, 1);
      await notifier.done;
      expect(result.traps).toEqual([]);
      expect(result.calls).toBeGreaterThan(10_000);
      expect(changedBytes()).toBe(0);
      expect(lock.isLocked()).toBe(false);
    });
  }
});

describe('exhaustion is a RangeError that says what ran out', () => {
  it('an allocation the 1 GiB memory cannot hold', () => {
    expect(() => rt.alloc(0x3fff_0000, 8)).toThrow(/^parklot: Runtime\.alloc\(\): out of memory allocating 1073676288 bytes \(the memory's limit is 1 GiB\)/);
    expect(() => rt.alloc(16, 3)).toThrow(RangeError); // and a bad alignment
    expect(rt.alloc(16, 8)).toBeGreaterThan(0); // the runtime goes on
  });
});

describe('the benchmark exports refuse a peer they do not have', () => {
  it('peer_new, peer_count_loop, peer_free and bench_ping_pong return 0 or do nothing for an unknown kind', async () => {
    // They are only in the benchmarks' build of the module (the `bench` feature).
    const pkg = new URL('../../js/wasm-pkg-bench/', import.meta.url);
    const module = await loadModule(new URL('parklot_wasm_bg.wasm', pkg));
    const memory = new WebAssembly.Memory({ initial: MIN_PAGES, maximum: MAX_PAGES, shared: true });
    const bench = (await import(new URL('parklot_wasm.js', pkg).href)) as {
      initSync(init: { module: WebAssembly.Module; memory: WebAssembly.Memory }): unknown;
      thread_init(mayBlock: boolean): void;
      alloc(bytes: number, align: number): number;
      free(addr: number, bytes: number, align: number): void;
      peer_names(): string;
      peer_new(kind: number): number;
      peer_free(kind: number, addr: number): void;
      peer_count_loop(kind: number, addr: number, counter: number, n: number, work: number): number;
      bench_ping_pong(how: number, addr: number, pinger: boolean, n: number, samples: number): number;
    };
    bench.initSync({ module, memory });
    bench.thread_init(true);
    const data = bench.alloc(64, 8);
    for (const kind of [bench.peer_names().split(',').length, 99, 0xffff_ffff]) {
      expect(bench.peer_new(kind)).toBe(0);
      expect(bench.peer_count_loop(kind, data, data + 16, 10, 1)).toBe(0);
      bench.peer_free(kind, data);
      expect(bench.bench_ping_pong(kind, data, true, 10, data + 8)).toBe(0);
    }
    bench.free(data, 64, 8);
  });
});

describe('a trap (a bug) does not corrupt later calls', () => {
  it('20,000 traps: each is reported as a parklot bug, the stack pointer is reset, memory others allocated is intact', async () => {
    const module = await loadModule();
    const memory = new WebAssembly.Memory({ initial: MIN_PAGES, maximum: MAX_PAGES, shared: true });
    const core = Core.open(await freshGlue(), module, memory, true);
    const stackPointer = (core.raw as unknown as { __stack_pointer: WebAssembly.Global }).__stack_pointer;
    const top = stackPointer.value as number;
    const bytes = 1 << 20;
    const address = core.glue.alloc(bytes, 8);
    new Uint8Array(memory.buffer, address, bytes).fill(0xa5);
    const trap = core.glue as unknown as { trap_for_test(bytes: number): void };
    let reported = 0;
    for (let i = 0; i < 20_000; i++) {
      try {
        trap.trap_for_test(4096);
      } catch (e) {
        if (e instanceof Error && e.message.includes('wasm module trapped in trap_for_test')) reported++;
        else throw e;
      }
    }
    expect(reported).toBe(20_000);
    const changed = new Uint8Array(memory.buffer, address, bytes).filter((b) => b !== 0xa5).length;
    expect(changed).toBe(0);
    expect(stackPointer.value).toBe(top);
    // Later calls work.
    const again = core.glue.alloc(64, 8);
    expect(again).toBeGreaterThan(0);
    core.glue.free(again, 64, 8);
    core.close();
  });
});
