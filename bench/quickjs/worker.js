// A worker of bench/quickjs/atomics.js: ping-pong, or one blocking waiter on
// its own address (the "waiters elsewhere" rows). Started with a message
// { ia, kind, id, n }.
import * as os from 'qjs:os';

const parent = os.Worker.parent;
parent.onmessage = (e) => {
  const { sab, kind, id, n } = e.data;
  const ia = new Int32Array(sab);
  parent.onmessage = null; // one job: let the worker's loop end after it
  if (kind === 'pingpong') {
    // ia[0]: whose turn (0 or 1); ia[2]: ready count; ia[3]: go.
    Atomics.add(ia, 2, 1);
    Atomics.notify(ia, 2);
    while (Atomics.load(ia, 3) === 0) Atomics.wait(ia, 3, 0);
    for (let i = 0; i < n; i++) {
      while (Atomics.load(ia, 0) !== id) Atomics.wait(ia, 0, 1 - id);
      Atomics.store(ia, 0, 1 - id);
      Atomics.notify(ia, 0, 1);
    }
  } else {
    // ia[2]: ready count; this worker waits on ia[16 + id] until it is 1.
    const at = 16 + id;
    Atomics.add(ia, 2, 1);
    Atomics.notify(ia, 2);
    while (Atomics.load(ia, at) === 0) Atomics.wait(ia, at, 0);
  }
  Atomics.add(ia, 1, 1);
  Atomics.notify(ia, 1);
};
