// Smoke test for the threaded wasm build (run scripts/build-wasm.sh first):
// 4 worker_threads share one module and one shared memory, and each adds
// 250,000 to a plain u64 counter under one parklot Lock. Any lost update
// (a lock that does not exclude, a stack or TLS shared between threads)
// shows up as a wrong total. A start gate releases the workers together:
// without it each finishes its loop before the next has even started, and
// nothing contends. The main thread holds the lock for the first 50 ms, so
// every worker also parks (memory.atomic.wait32) and is woken by an unlock.
//
//   node tests/wasm-smoke.mjs
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';

const GLUE = new URL('../js/wasm-pkg/parklot_wasm.js', import.meta.url);
const WASM = new URL('../js/wasm-pkg/parklot_wasm_bg.wasm', import.meta.url);
const WORKERS = 4;
const ITERATIONS = 250_000;
const TIMEOUT_MS = 120_000;

if (isMainThread) {
  await main();
} else {
  await worker();
}

async function main() {
  // maximum must equal the module's --max-memory (1 GiB) / 64 KiB.
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 16384, shared: true });
  const module = new WebAssembly.Module(readFileSync(WASM));
  const wasm = await import(GLUE);
  wasm.initSync({ module, memory });
  wasm.thread_init(true);

  const lockAddr = wasm.alloc(1, 1);
  const counterAddr = wasm.alloc(8, 8);

  const gate = new Int32Array(new SharedArrayBuffer(4)); // 0 = wait, 1 = go
  const ready = [];
  const runs = [];
  for (let i = 0; i < WORKERS; i++) {
    const w = new Worker(new URL(import.meta.url), {
      workerData: { module, memory, gate, lockAddr, counterAddr, iterations: ITERATIONS },
    });
    let onReady;
    ready.push(new Promise((resolve) => { onReady = resolve; }));
    runs.push(new Promise((resolve, reject) => {
      let done = false;
      w.on('message', (m) => { if (m === 'ready') onReady(); else done = m === 'done'; });
      w.on('error', reject);
      w.on('exit', (code) => (done && code === 0 ? resolve() : reject(new Error(`worker ${i} exited with ${code} before finishing`))));
    }));
  }

  let failure = null;
  const timeout = new Promise((_, reject) => {
    const t = setTimeout(() => reject(new Error(`workers did not finish in ${TIMEOUT_MS} ms (deadlock?)`)), TIMEOUT_MS);
    t.unref();
  });
  let started;
  try {
    await Promise.race([Promise.all(ready), Promise.all(runs), timeout]);
    wasm.lock(lockAddr);
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    started = performance.now();
    // Results as wasm/src/lib.rs's `acquired` and `released` say: 1 taken, 0 released, 1 not locked.
    if (wasm.unlock(lockAddr) !== 0) throw new Error('unlock of the held lock did not return 0 (released)');
    await Promise.race([Promise.all(runs), timeout]);
    // Re-read memory.buffer: the workers' stacks may have grown the memory.
    const counter = new BigUint64Array(memory.buffer, counterAddr, 1)[0];
    const expected = BigInt(WORKERS * ITERATIONS);
    if (counter !== expected) failure = `counter is ${counter}, expected ${expected}`;
    else if (wasm.try_lock(lockAddr) !== 1 || wasm.unlock(lockAddr) !== 0 || wasm.unlock(lockAddr) !== 1) {
      failure = 'lock is not free after the run, or unlock of a free lock did not return 1 (not locked)';
    }
  } catch (e) {
    failure = e.message;
  }

  const ms = (performance.now() - started).toFixed(0);
  if (failure) {
    console.error(`wasm-smoke: FAIL: ${failure}`);
    console.log('wasm-smoke: 0 passed, 1 failed');
    process.exit(1);
  }
  console.log(`wasm-smoke: ${WORKERS} workers x ${ITERATIONS} lock/increment/unlock in ${ms} ms`);
  console.log('wasm-smoke: 1 passed, 0 failed');
  process.exit(0);
}

async function worker() {
  const { module, memory, gate, lockAddr, counterAddr, iterations } = workerData;
  const wasm = await import(GLUE);
  // initSync returns the raw instance exports; the glue does not re-export
  // __wbindgen_thread_destroy, so take it from there.
  const raw = wasm.initSync({ module, memory });
  wasm.thread_init(true);
  parentPort.postMessage('ready');
  Atomics.wait(gate, 0, 0);
  wasm.lock_increment_loop(lockAddr, counterAddr, iterations);
  // Frees this thread's wasm stack and TLS block (TLS destructors do not run).
  raw.__wbindgen_thread_destroy();
  parentPort.postMessage('done');
}
