// parklot.waiterCount counts the waits queued on an element; notify counts
// and ends waitAsync waits, whose promises settle on this thread's loop, as
// does a timed one when its timeout passes.
const ia = new Int32Array(new SharedArrayBuffer(16));
const check = (what, got, want) => {
  if (got !== want) throw new Error(`${what}: ${got}, expected ${want}`);
};
const settled = Promise.all([
  Atomics.waitAsync(ia, 1, 0).value,
  Atomics.waitAsync(ia, 1, 0, 60000).value,
  Atomics.waitAsync(ia, 2, 0, 1).value.then((v) => `2:${v}`),
]);
check('waits on [1]', parklot.waiterCount(ia, 1), 2);
check('waits on [0]', parklot.waiterCount(ia, 0), 0);
check('notify([1])', Atomics.notify(ia, 1), 2);
check('waits on [1] after notify', parklot.waiterCount(ia, 1), 0);
settled.then((results) => print(results.sort().join(' ')));
