// A worker's Atomics.waitAsync (parklot's, installed in the worker's context
// too) is resolved "ok" on the worker's own loop by the main thread's notify,
// and a timed one resolves "timed-out". Prints "ok" or throws.
import * as os from 'qjs:os';

const sab = new SharedArrayBuffer(16);
const ia = new Int32Array(sab);
const w = new os.Worker('./worker-wait-async-child.js');
w.postMessage({ sab });
// ia[1]: the worker's waits are queued; ia[2]/ia[3]: their results (1 ok, 2 timed-out).
while (Atomics.load(ia, 1) === 0) Atomics.wait(ia, 1, 0, 1000);
let woken = 0;
for (let tries = 0; woken === 0 && tries < 1000; tries++) {
  woken = Atomics.notify(ia, 0, 1);
  if (!woken) os.sleep(1);
}
if (woken !== 1) throw new Error(`notify woke ${woken}, expected the worker's waitAsync`);
while (Atomics.load(ia, 2) === 0 || Atomics.load(ia, 3) === 0) Atomics.wait(ia, 2, 0, 10);
if (Atomics.load(ia, 2) !== 1) throw new Error(`the notified wait resolved ${Atomics.load(ia, 2)}`);
if (Atomics.load(ia, 3) !== 2) throw new Error(`the timed wait resolved ${Atomics.load(ia, 3)}`);
print('ok');
