// The worker side of kinds.test.ts: attaches to the runtime in
// workerData.handle, then runs the operations the test sends, one at a time,
// answering each {id, op, args} with {id, value} or {id, error}.
import { parentPort, workerData } from 'node:worker_threads';
import { Runtime } from '../../js/dist/index.js';
import { oneOfEach } from './one-of-each.mjs';

const rt = await Runtime.attach(workerData.handle);
/** What this worker made, by name. */
const made = {};

/** What a call does: 'returned <value>' or '<Error class>: <message>'. */
function outcome(f) {
  try {
    return `returned ${String(f())}`;
  } catch (e) {
    return `${e.constructor.name}: ${e.message}`;
  }
}

const ops = {
  /** Makes one object of every kind, and a Lock placed in a block; returns their addresses. */
  make() {
    const block = rt.alloc(64, 8);
    Object.assign(made, { ...oneOfEach(rt), placed: rt.place('lock', block + 8) });
    const addresses = { block };
    for (const [name, object] of Object.entries(made)) addresses[name] = object.address;
    return addresses;
  },
  /** What `rt.<kind>At(address)` does here. */
  at({ kind, address }) {
    return outcome(() => rt[`${kind}At`](address).address);
  },
  /** Frees what `make` made under `name`. */
  free({ name }) {
    return outcome(() => made[name].free());
  },
  /** Frees the block `make` made (with the lock placed in it). */
  freeBlock({ block }) {
    return outcome(() => rt.free(block, 64, 8));
  },
};

parentPort.on('message', ({ id, op, args }) => {
  if (op === 'close') {
    rt.close();
    parentPort.postMessage({ id, value: 'closed' });
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id, value: ops[op](args) });
  } catch (e) {
    parentPort.postMessage({ id, error: `${e.constructor.name}: ${e.message}` });
  }
});
parentPort.postMessage({ ready: true });
