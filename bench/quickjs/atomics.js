// One benchmark row, run by a QuickJS shell (target/release/parklot-qjs or
// qjs-own); bench/quickjs/run.mjs runs the rows on both, interleaved, and
// prints the medians. Prints "<row> <ns per operation>".
//
//   wait-ne N           Atomics.wait on a value that differs (no sleep)
//   notify-none N       Atomics.notify where nobody waits
//   pingpong N          two workers hand a word back and forth (per round trip)
//   notify-others K N   Atomics.notify on an address nobody waits on while K
//                       workers wait (blocking) on K other addresses
//   notify-others-async K N   the same with K waitAsync waiters in this thread
//                       (parklot only: QuickJS has no waitAsync)
import * as os from 'qjs:os';
import * as std from 'qjs:std';

const [row, a, b] = scriptArgs.slice(1);
const here = scriptArgs[0].replace(/[^/]*$/, '');
const now = () => performance.now();

function workers(count, kind, sab, n) {
  const list = [];
  for (let id = 0; id < count; id++) {
    const w = new os.Worker(here + 'worker.js');
    w.postMessage({ sab, kind, id, n });
    list.push(w);
  }
  return list;
}

/** Waits (blocking) until ia[i] reaches `value`. */
function awaitCount(ia, i, value) {
  for (let v; (v = Atomics.load(ia, i)) < value;) Atomics.wait(ia, i, v, 1000);
}

function notifyLoop(ia, n) {
  const t0 = now();
  for (let i = 0; i < n; i++) Atomics.notify(ia, 4, 1);
  return ((now() - t0) * 1e6) / n;
}

let ns;
if (row === 'wait-ne') {
  const n = Number(a);
  const ia = new Int32Array(new SharedArrayBuffer(64));
  const t0 = now();
  for (let i = 0; i < n; i++) Atomics.wait(ia, 0, 1);
  ns = ((now() - t0) * 1e6) / n;
} else if (row === 'notify-none') {
  const ia = new Int32Array(new SharedArrayBuffer(64));
  ns = notifyLoop(ia, Number(a));
} else if (row === 'pingpong') {
  const n = Number(a);
  const sab = new SharedArrayBuffer(64);
  const ia = new Int32Array(sab);
  workers(2, 'pingpong', sab, n);
  awaitCount(ia, 2, 2);
  const t0 = now();
  Atomics.store(ia, 3, 1);
  Atomics.notify(ia, 3);
  awaitCount(ia, 1, 2);
  ns = ((now() - t0) * 1e6) / n;
} else if (row === 'notify-others' || row === 'notify-others-async') {
  const k = Number(a);
  const n = Number(b);
  const sab = new SharedArrayBuffer(4 * (16 + k));
  const ia = new Int32Array(sab);
  if (row === 'notify-others') {
    workers(k, 'waiter', sab, 0);
    awaitCount(ia, 2, k);
    os.sleep(20 + k / 10); // let the last ones reach their wait
  } else {
    for (let id = 0; id < k; id++) Atomics.waitAsync(ia, 16 + id, 0);
  }
  ns = notifyLoop(ia, n);
  for (let id = 0; id < k; id++) {
    Atomics.store(ia, 16 + id, 1);
    Atomics.notify(ia, 16 + id);
  }
  if (row === 'notify-others') awaitCount(ia, 1, k);
}
print(`${row} ${ns.toFixed(1)}`);
std.exit(0);
