// Experiments on one thread (run.mjs's own, while the workers sleep):
// 2. uncontended lock + unlock, next to the floor of one compare-and-swap
//    plus one store, in JS and inside wasm;
// 3. wait/notify without a waiter: notify with nobody waiting, and a wait
//    that returns "not-equal" at once, parklot's against the engine's, both
//    inside wasm (the fair comparison: no call from JS in the loop) and from
//    JS (what a JS caller pays: the glue call against an Atomics builtin).
import { jsLock, jsUnlock } from './js-mutex.mjs';
import { CELLS, fail } from './pool.mjs';

// The floor inside wasm: a hand-assembled module (no toolchain needed) with
//   floor(addr, n) -> i32: n times { won += cmpxchg(addr, 0, 1) == 0;
//                                    i32.atomic.store(addr, 0) }; won
// on its own one-page shared memory.
function wasmFloor() {
  const section = (id, bytes) => [id, bytes.length, ...bytes];
  const body = [
    0x01, 0x01, 0x7f, // one local: won (i32)
    0x02, 0x40, 0x03, 0x40, // block, loop
    0x20, 0x01, 0x45, 0x0d, 0x01, // br_if (n == 0) out of the block
    0x20, 0x02, 0x20, 0x00, 0x41, 0x00, 0x41, 0x01, // won, addr, 0, 1
    0xfe, 0x48, 0x02, 0x00, // i32.atomic.rmw.cmpxchg
    0x45, 0x6a, 0x21, 0x02, // won += (old == 0)
    0x20, 0x00, 0x41, 0x00, 0xfe, 0x17, 0x02, 0x00, // i32.atomic.store addr, 0
    0x20, 0x01, 0x41, 0x01, 0x6b, 0x21, 0x01, // n -= 1
    0x0c, 0x00, 0x0b, 0x0b, // br loop; end loop; end block
    0x20, 0x02, 0x0b, // won
  ];
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]), // type (i32, i32) -> i32
    ...section(3, [0x01, 0x00]), // one function of that type
    ...section(5, [0x01, 0x03, 0x01, 0x01]), // memory: shared, 1 page, max 1
    ...section(7, [0x01, 0x05, ...Buffer.from('floor'), 0x00, 0x00]), // export "floor"
    ...section(10, [0x01, body.length, ...body]),
  ]);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.floor;
}

/**
 * The floor from JS, on the i32 view `i32` of a SharedArrayBuffer: a
 * compare-and-swap and a store at CELLS.FLOOR, n times.
 */
export function jsFloor(i32, id, short, name) {
  return {
    id,
    short,
    floor: id,
    name: `${name}: Atomics.compareExchange(0→1) + Atomics.store(0)`,
    run(n) {
      const i = CELLS.FLOOR / 4;
      let won = 0;
      for (let k = 0; k < n; k++) {
        if (Atomics.compareExchange(i32, i, 0, 1) === 0) won++;
        Atomics.store(i32, i, 0);
      }
      return won === n;
    },
  };
}

// One function per variant keeps each loop monomorphic. Each returns
// whether its result was right, so no loop is dead code and none is wrong.

/** Experiment 2's variants: {id, short, floor (the id to compare with), name, run(n) -> ok}. */
function uncontendedVariants({ glue, memory, shared }) {
  const lockAddr = glue.peer_new(0);
  const stdAddr = glue.peer_new(2);
  const dataAddr = glue.alloc(64, 64);
  const count = () => new BigUint64Array(memory.buffer, dataAddr, 1)[0];
  const inWasm = (kind, addr) => (n) => {
    const before = count();
    glue.peer_count_loop(kind, addr, dataAddr, n, 1);
    return count() - before === BigInt(n);
  };
  const i32 = new Int32Array(shared);
  const floorInWasm = wasmFloor();
  return [
    { id: 'parklot-wasm', short: 'parklot Lock, wasm', floor: 'floor-wasm', name: 'parklot::Lock inside wasm (peer_count_loop, with the critical section)', run: inWasm(0, lockAddr) },
    { id: 'std-wasm', short: 'std Mutex, wasm', floor: 'floor-wasm', name: 'std::sync::Mutex inside wasm (peer_count_loop, with the critical section)', run: inWasm(2, stdAddr) },
    {
      id: 'parklot-glue',
      short: 'parklot Lock via glue',
      floor: 'floor-js',
      name: 'parklot::Lock via glue: lock() + unlock()',
      run(n) {
        const { lock, unlock } = glue;
        let ok = 0;
        for (let k = 0; k < n; k++) {
          lock(lockAddr);
          if (unlock(lockAddr) === 0) ok++; // 0: released (wasm/src/lib.rs, `released`)
        }
        return ok === n;
      },
    },
    {
      id: 'js-mutex',
      short: 'JS Atomics mutex',
      floor: 'floor-js',
      name: 'JS Atomics mutex: jsLock() + jsUnlock()',
      run(n) {
        const i = CELLS.SOLO_MUTEX / 4;
        for (let k = 0; k < n; k++) {
          jsLock(i32, i);
          jsUnlock(i32, i);
        }
        return Atomics.load(i32, i) === 0;
      },
    },
    jsFloor(i32, 'floor-js', 'floor, JS', 'floor (JS)'),
    { id: 'floor-wasm', short: 'floor, wasm', floor: 'floor-wasm', name: 'floor (wasm): i32.atomic.rmw.cmpxchg + i32.atomic.store', run: (n) => floorInWasm(0, n) === n },
  ];
}

/** Experiment 3's variants: {id, op, where, who, name, run(n) -> ok}. */
function waitNotifyVariants({ glue, memory }) {
  // A word of wasm memory that holds 0 and that nobody waits on.
  const addr = glue.alloc(64, 64);
  const view = () => new Int32Array(memory.buffer, addr, 1);
  return [
    { id: 'notify-wasm-parklot', op: 'notify', where: 'wasm', who: 'parklot', name: 'parklot::futex::notify in a wasm loop', run: (n) => glue.bench_notify_loop(false, addr, n) === 0 },
    { id: 'notify-wasm-engine', op: 'notify', where: 'wasm', who: 'engine', name: 'memory.atomic.notify in a wasm loop', run: (n) => glue.bench_notify_loop(true, addr, n) === 0 },
    { id: 'wait-wasm-parklot', op: 'wait', where: 'wasm', who: 'parklot', name: 'parklot::futex::wait32, not-equal, in a wasm loop', run: (n) => glue.bench_wait_not_equal_loop(false, addr, n) === n },
    { id: 'wait-wasm-engine', op: 'wait', where: 'wasm', who: 'engine', name: 'memory.atomic.wait32, not-equal, in a wasm loop', run: (n) => glue.bench_wait_not_equal_loop(true, addr, n) === n },
    {
      id: 'notify-js-parklot', op: 'notify', where: 'js', who: 'parklot', name: 'glue atomics_notify(addr, 1) from JS',
      run(n) {
        const notify = glue.atomics_notify;
        let woken = 0;
        for (let k = 0; k < n; k++) woken += notify(addr, 1);
        return woken === 0;
      },
    },
    {
      id: 'notify-js-engine', op: 'notify', where: 'js', who: 'engine', name: 'Atomics.notify(i32, i, 1) from JS',
      run(n) {
        const v = view();
        let woken = 0;
        for (let k = 0; k < n; k++) woken += Atomics.notify(v, 0, 1);
        return woken === 0;
      },
    },
    {
      id: 'wait-js-parklot', op: 'wait', where: 'js', who: 'parklot', name: 'glue atomics_wait32(addr, 1, ∞), not-equal, from JS',
      run(n) {
        const wait = glue.atomics_wait32;
        let notEqual = 0;
        for (let k = 0; k < n; k++) if (wait(addr, 1, Infinity) === 1) notEqual++;
        return notEqual === n;
      },
    },
    {
      id: 'wait-js-engine', op: 'wait', where: 'js', who: 'engine', name: 'Atomics.wait(i32, i, 1), not-equal, from JS',
      run(n) {
        const v = view();
        let notEqual = 0;
        for (let k = 0; k < n; k++) if (Atomics.wait(v, 0, 1) === 'not-equal') notEqual++;
        return notEqual === n;
      },
    },
  ];
}

/**
 * Interleaved runs of each variant: one warm-up each, then `runs` timed, of
 * `n` calls (or the variant's own `calls`). Raw {variant, run, calls, nsPer}.
 */
export function timeInterleaved(variants, n, runs) {
  for (const v of variants) if (!v.run(Math.ceil((v.calls ?? n) / 4))) fail(`${v.name}: wrong result in warm-up`);
  const all = [];
  for (let r = 0; r < runs; r++) {
    for (const v of variants) {
      const calls = v.calls ?? n;
      const t0 = performance.now();
      const ok = v.run(calls);
      const nsPer = ((performance.now() - t0) * 1e6) / calls;
      if (!ok) fail(`${v.name}: wrong result`);
      all.push({ variant: v.id, run: r, calls, nsPer });
    }
  }
  return all;
}

export const describe = (variants) => variants.map(({ run, ...meta }) => meta);

/**
 * Experiment 2 here, then the multithreading package's Mutex in its own
 * process, timed there next to that process's own floor (the "x floor"
 * column compares it within its process).
 */
export async function uncontended(ctx) {
  const { settings: s, multithreading: mt } = ctx;
  const variants = uncontendedVariants(ctx);
  const result = { variants: describe(variants), runs: timeInterleaved(variants, s.uncontendedPairs, s.singleRuns) };
  const theirs = await mt.ask({ type: 'uncontended', n: s.uncontendedPairs, runs: s.singleRuns }, s.roundTimeoutMs, 'uncontended multithreading Mutex');
  if (theirs) {
    result.variants.push(...theirs.variants);
    result.runs.push(...theirs.runs);
  }
  return result;
}

export function waitNotify(ctx) {
  const variants = waitNotifyVariants(ctx);
  return { variants: describe(variants), runs: timeInterleaved(variants, ctx.settings.waitNotifyCalls, ctx.settings.singleRuns) };
}
