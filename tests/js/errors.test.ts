// Bad input gets a TypeError or RangeError that says what to do, and
// corrupts nothing: after each one the runtime, its locks and its queues
// still work.
import { describe, expect, it } from 'vitest';
import { Condition, Lock, Runtime, type RuntimeHandle } from '../../js/dist/index.js';
import { outcome, rt, spawn, useRuntime } from './helpers.js';

useRuntime();

/** The runtime still works: a lock locks and unlocks, a wait times out. */
function stillWorks(r: Runtime = rt): void {
  const lock = r.lock();
  expect(lock.tryLock()).toBe(true);
  expect(lock.tryLock()).toBe(false);
  lock.unlock();
  expect(r.atomics.wait(r.int32(r.alloc(4, 4)), 0, 0, 0)).toBe('timed-out');
}

describe('Runtime.create and Runtime.attach', () => {
  it('attach refuses what is not a handle from Runtime.create', async () => {
    const h = rt.handle();
    const fresh = new WebAssembly.Memory({ initial: 18, maximum: 16384, shared: true });
    const unshared = new WebAssembly.Memory({ initial: 18, maximum: 16384 });
    const emptyModule = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    const cases: [string, unknown, RegExp][] = [
      ['undefined', undefined, /handle is not an object/],
      ['null', null, /handle is not an object/],
      ['a number', 42, /handle is not an object/],
      ['{module, memory} without its tag', { module: h.module, memory: h.memory }, /not a parklot runtime handle/],
      ['a non-shared memory', { ...h, memory: unshared }, /not shared/],
      ['another module', { ...h, module: emptyModule }, /not parklot's wasm module/],
      ['no module', { ...h, module: {} }, /not a WebAssembly\.Module/],
      ['no memory', { ...h, memory: new SharedArrayBuffer(8) }, /not a WebAssembly\.Memory/],
      ['a fresh shared memory', { ...h, memory: fresh }, /header does not match/],
      ['a wrong id', { ...h, id: (h.id + 1) >>> 0 }, /header does not match/],
      ['a header out of bounds', { ...h, header: 2 ** 31 }, /header does not match/],
      ['no header', { ...h, header: undefined }, /header and handle\.id are missing/],
    ];
    for (const [name, handle, message] of cases) {
      const error = await Runtime.attach(handle as RuntimeHandle).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(TypeError);
      expect((error as Error).message, name).toMatch(message);
      expect((error as Error).message, name).toMatch(/rt\.handle\(\)/);
    }
    stillWorks();
  });

  it('options are checked', async () => {
    await expect(Runtime.create({ mayBlock: 'yes' as unknown as boolean })).rejects.toThrow(TypeError);
    await expect(Runtime.create({ initialPages: 17 })).rejects.toThrow(RangeError);
    await expect(Runtime.create({ initialPages: 16385 })).rejects.toThrow(RangeError);
    await expect(Runtime.create({ module: 'file:///nonexistent/parklot.wasm' })).rejects.toThrow(/could not load the wasm module/);
    await expect(Runtime.attach(rt.handle(), { mayBlock: 1 as unknown as boolean })).rejects.toThrow(/mayBlock must be a boolean/);
    const mine = await Runtime.create({ initialPages: 64, module: rt.handle().module });
    expect(mine.memory.buffer.byteLength).toBeGreaterThanOrEqual(64 * 65536);
    stillWorks(mine);
    mine.close();
  });

  it('a runtime from create and one from attach are independent of other runtimes on the thread', async () => {
    const other = await Runtime.create();
    const a = rt.lock();
    const b = other.lock();
    a.lock();
    expect(b.tryLock()).toBe(true); // different memories: no relation
    b.unlock();
    a.unlock();
    other.close();
    stillWorks();
  });
});

describe('addresses', () => {
  it('lockAt / conditionAt refuse addresses outside the memory, and non-numbers', () => {
    const size = rt.memory.buffer.byteLength;
    for (const at of [rt.lockAt.bind(rt), rt.conditionAt.bind(rt)]) {
      expect(outcome(() => at(-1))).toMatch(/^RangeError: .*address -1 is outside the runtime's memory/);
      expect(outcome(() => at(0))).toMatch(/^RangeError/);
      expect(outcome(() => at(size))).toMatch(/^RangeError: .*outside/);
      expect(outcome(() => at(size + 1000))).toMatch(/^RangeError/);
      expect(outcome(() => at(1.5))).toMatch(/^RangeError/);
      expect(outcome(() => at(NaN))).toMatch(/^RangeError/);
      expect(outcome(() => at(Infinity))).toMatch(/^RangeError/);
      expect(outcome(() => at('64' as unknown as number))).toMatch(/^TypeError: .*must be a number/);
      expect(outcome(() => at(undefined as unknown as number))).toMatch(/^TypeError/);
      // In range, but an address is taken for what the runtime made there: nothing here.
      expect(outcome(() => at(size - 1))).toMatch(/^TypeError: .*address \d+ holds nothing this runtime made/);
    }
    stillWorks();
  });

  it('views refuse misaligned and out-of-bounds addresses and bad lengths', () => {
    const size = rt.memory.buffer.byteLength;
    const a = rt.alloc(64, 8);
    expect(outcome(() => rt.int32(a + 2))).toMatch(/^RangeError: .*not aligned to 4 bytes/);
    expect(outcome(() => rt.bigInt64(a + 4))).toMatch(/^RangeError: .*not aligned to 8 bytes/);
    expect(outcome(() => rt.float64(a + 1))).toMatch(/^RangeError/);
    expect(outcome(() => rt.int32(size - 4, 2))).toMatch(/^RangeError: .*outside/);
    expect(outcome(() => rt.uint8(size, 1))).toMatch(/^RangeError/);
    expect(outcome(() => rt.int32(a, -1))).toMatch(/^RangeError: .*length/);
    expect(outcome(() => rt.int32(a, 1.5))).toMatch(/^RangeError/);
    expect(outcome(() => rt.int32(a, '2' as unknown as number))).toMatch(/^TypeError/);
    expect(rt.int32(a, 16).length).toBe(16);
    // In range, but a view lies inside a block from rt.alloc (kinds.test.ts has the rest).
    expect(outcome(() => rt.uint8(size - 1))).toMatch(/^TypeError: .*a view must lie inside a block from rt\.alloc\(\)/);
  });

  it('alloc and free check sizes and alignments; running out of memory is a RangeError', () => {
    expect(outcome(() => rt.alloc(-1))).toMatch(/^RangeError: .*bytes must be an integer/);
    expect(outcome(() => rt.alloc(1.5))).toMatch(/^RangeError/);
    expect(outcome(() => rt.alloc(2 ** 31))).toMatch(/^RangeError/);
    expect(outcome(() => rt.alloc(8, 3))).toMatch(/^RangeError: .*align must be a power of two/);
    expect(outcome(() => rt.alloc(8, 0))).toMatch(/^RangeError/);
    expect(outcome(() => rt.alloc(8, 2 ** 17))).toMatch(/^RangeError/);
    expect(outcome(() => rt.alloc('8' as unknown as number))).toMatch(/^TypeError/);
    expect(outcome(() => rt.alloc(2 ** 30))).toMatch(/^RangeError: .*out of memory/); // more than is left of 1 GiB
    expect(outcome(() => rt.free(-8, 8))).toMatch(/^RangeError/);
    expect(outcome(() => rt.free(rt.alloc(8, 8), 8, 5))).toMatch(/^RangeError/);
    const a = rt.alloc(0, 1); // zero bytes: a valid unique address
    expect(a).toBeGreaterThan(0);
    rt.free(a, 0, 1);
    stillWorks();
  });
});

describe('locks and conditions', () => {
  it('unlock of a lock that is not locked is a TypeError and changes nothing', () => {
    const lock = rt.lock();
    expect(outcome(() => lock.unlock())).toBe('TypeError: parklot: Lock.unlock(): unlock of a lock that is not locked');
    expect(outcome(() => lock.unlockFair())).toMatch(/^TypeError: .*unlock of a lock that is not locked/);
    expect(lock.isLocked()).toBe(false);
    expect(lock.tryLock()).toBe(true);
    lock.unlockFair();
    expect(lock.isLocked()).toBe(false);
    expect(outcome(() => lock.withLock(() => lock.unlock()))).toMatch(/^TypeError: .*not locked/);
    expect(lock.isLocked()).toBe(false);
  });

  it('new Lock() / new Condition() are refused: locks come from the runtime', () => {
    expect(outcome(() => new (Lock as unknown as new () => Lock)())).toMatch(/^TypeError: .*rt\.lock\(\)/);
    expect(outcome(() => new (Condition as unknown as new () => Condition)())).toMatch(/^TypeError: .*rt\.condition\(\)/);
  });

  it('Condition.wait needs a Lock of the same runtime instance, held', async () => {
    const lock = rt.lock();
    const cond = rt.condition();
    expect(outcome(() => cond.wait(lock, 0))).toMatch(/^TypeError: .*Condition\.wait\(\) needs its lock held/);
    await expect(cond.waitAsync(lock, 0)).rejects.toThrow(/needs its lock held/);
    expect(outcome(() => cond.wait({ address: lock.address } as Lock, 0))).toMatch(/^TypeError: .*must be a Lock/);
    expect(outcome(() => cond.wait(undefined as unknown as Lock))).toMatch(/^TypeError/);
    const other = await Runtime.attach(rt.handle());
    const foreign = other.lockAt(lock.address);
    lock.lock();
    expect(outcome(() => cond.wait(foreign, 0))).toMatch(/^TypeError: .*another runtime instance/);
    expect(cond.wait(lock, 0)).toBe(false);
    expect(lock.isLocked()).toBe(true);
    lock.unlock();
    other.close();
    expect(cond.notifyAll()).toBe(0); // no stray waiter was queued
  });

  it('timeouts read like Atomics: NaN and Infinity wait forever, negative tries once, BigInt and Symbol throw', async () => {
    const lock = rt.lock();
    expect(lock.lockFor(NaN)).toBe(true); // free: taken at once
    lock.unlock();
    const holder = spawn(rt, 'hold', { lock: lock.address, ms: 100 });
    await holder.next('held');
    let t0 = performance.now();
    expect(lock.lockFor(-5)).toBe(false);
    expect(lock.lockFor(-Infinity)).toBe(false);
    expect(lock.lockFor(0)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(lock.lockFor(10)).toBe(false);
    t0 = performance.now();
    expect(lock.lockFor(NaN)).toBe(true); // waits until the holder lets go
    expect(performance.now() - t0).toBeGreaterThan(20);
    lock.unlock();
    await holder.done;
    expect(lock.lockFor(Infinity)).toBe(true);
    lock.unlock();
    expect(outcome(() => lock.lockFor(1n as unknown as number))).toMatch(/^TypeError/);
    expect(outcome(() => lock.lockFor(Symbol() as unknown as number))).toMatch(/^TypeError/);
    await expect(lock.lockAsync(1n as unknown as number)).rejects.toThrow(TypeError);
    expect(lock.isLocked()).toBe(false);
  });
});

describe('a closed runtime', () => {
  it('throws "runtime is closed" from every call, and other runtimes on the memory go on', async () => {
    const r = await Runtime.attach(rt.handle());
    const lock = r.lock();
    const cond = r.condition();
    const word = r.int32(r.alloc(4, 4));
    const address = lock.address;
    r.close();
    r.close(); // again: nothing
    expect(r.closed).toBe(true);
    const calls: [string, () => unknown][] = [
      ['handle', () => r.handle()],
      ['lock', () => r.lock()],
      ['lockAt', () => r.lockAt(address)],
      ['condition', () => r.condition()],
      ['conditionAt', () => r.conditionAt(address)],
      ['alloc', () => r.alloc(8)],
      ['free', () => r.free(address, 1, 1)],
      ['int32', () => r.int32(word.byteOffset)],
      ['lock.lock', () => lock.lock()],
      ['lock.tryLock', () => lock.tryLock()],
      ['lock.lockFor', () => lock.lockFor(0)],
      ['lock.unlock', () => lock.unlock()],
      ['lock.unlockFair', () => lock.unlockFair()],
      ['lock.isLocked', () => lock.isLocked()],
      ['lock.withLock', () => lock.withLock(() => 0)],
      ['cond.wait', () => cond.wait(lock, 0)],
      ['cond.notifyOne', () => cond.notifyOne()],
      ['cond.notifyAll', () => cond.notifyAll()],
      ['atomics.wait', () => r.atomics.wait(word, 0, 0, 0)],
      ['atomics.notify', () => r.atomics.notify(word, 0)],
      ['atomics.waitAsync', () => r.atomics.waitAsync(word, 0, 0, 0)],
    ];
    for (const [name, call] of calls) expect(outcome(call), name).toMatch(/^TypeError: parklot: runtime is closed/);
    await expect(lock.lockAsync()).rejects.toThrow(/runtime is closed/);
    await expect(cond.waitAsync(lock)).rejects.toThrow(/runtime is closed/);
    // The memory and the lock live on for the other threads.
    const same = rt.lockAt(address);
    expect(same.tryLock()).toBe(true);
    same.unlock();
    stillWorks();
  });
});
