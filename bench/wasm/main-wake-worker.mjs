// The notifier of main-wake.mjs: attached to the npm package's runtime, it
// ticks for each round the main thread asks for, then says so.
import { parentPort, workerData } from 'node:worker_threads';
import { WAKE } from './main-wake.mjs';

const { packageUrl, handle, base, tickMs, roundMs } = workerData;
const { Runtime } = await import(packageUrl);
const rt = await Runtime.attach(handle);
const control = rt.int32(base + WAKE.CONTROL, 1);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const ticks = [
  { word: rt.int32(base + WAKE.TICK_PARKLOT, 1), stamps: rt.float64(base + WAKE.STAMPS_PARKLOT, 2), notify: (w) => rt.atomics.notify(w, 0) },
  { word: rt.int32(base + WAKE.TICK_ENGINE, 1), stamps: rt.float64(base + WAKE.STAMPS_ENGINE, 2), notify: (w) => Atomics.notify(w, 0) },
];
parentPort.postMessage('ready');
let asked = 0;
for (;;) {
  Atomics.wait(control, 0, asked);
  asked = Atomics.load(control, 0);
  if (asked < 0) break;
  const end = performance.now() + roundMs;
  for (let k = 0; performance.now() < end; k++) {
    Atomics.wait(sleeper, 0, 0, tickMs / 2); // a plain sleep: each API is notified every tickMs
    const t = ticks[k % 2];
    t.stamps[0] = performance.timeOrigin + performance.now();
    Atomics.add(t.word, 0, 1);
    t.notify(t.word);
    t.stamps[1] = performance.timeOrigin + performance.now();
  }
  parentPort.postMessage('round');
}
rt.close();
