// A pending Atomics.waitAsync leaves its thread's event loop running: the
// loop's timers fire and a worker's messages arrive while it waits, and the
// wait settles through the loop (a worker notifies it 300 ms later).
import * as os from 'qjs:os';

const sab = new SharedArrayBuffer(16);
const ia = new Int32Array(sab);
const started = Date.now();
let ticks = 0;
let messages = 0;
const tick = () => {
  ticks++;
  if (ticks < 1000) os.setTimeout(tick, 10);
};
os.setTimeout(tick, 10);

const worker = new os.Worker('./loop-while-waiting-child.js');
worker.onmessage = (e) => {
  if (e.data === 'hello') messages++;
};
worker.postMessage({ sab });

const { async, value } = Atomics.waitAsync(ia, 0, 0);
if (!async) throw new Error('waitAsync did not wait');
const outcome = await value;
const waited = Date.now() - started;
worker.onmessage = null;
// Until the notify (at about 300 ms): some 30 ticks of 10 ms, and the
// worker's three messages, sent while the main thread waited.
print(outcome, ticks >= 10 ? 'ticks' : `only ${ticks} ticks`, messages === 3 ? 'messages' : `${messages} messages`, waited >= 250 ? 'waited' : `woken after ${waited} ms`);
ticks = 1000; // stop ticking: the loop ends
