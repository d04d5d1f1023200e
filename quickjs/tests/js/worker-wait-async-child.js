import * as os from 'qjs:os';

const parent = os.Worker.parent;
parent.onmessage = async (e) => {
  parent.onmessage = null;
  const ia = new Int32Array(e.data.sab);
  const code = { ok: 1, 'timed-out': 2 };
  const notified = Atomics.waitAsync(ia, 0, 0);
  const timed = Atomics.waitAsync(ia, 0, 0, 20);
  if (!notified.async || !timed.async) throw new Error('waitAsync did not wait');
  Atomics.store(ia, 1, 1);
  Atomics.notify(ia, 1);
  const [a, b] = await Promise.all([notified.value, timed.value]);
  Atomics.store(ia, 3, code[b]);
  Atomics.store(ia, 2, code[a]);
  Atomics.notify(ia, 2);
};
