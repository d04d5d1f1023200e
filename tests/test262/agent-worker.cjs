'use strict';
// One test262 agent: a worker that runs the agent source the test passed to
// `$262.agent.start`, with `$262.agent`'s agent-side half.

const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');

// Before parklot replaces them: the agent's own plumbing uses the engine's.
const { add, notify, wait } = Atomics;
const { source, reports, addon } = workerData;
if (addon) require(addon).install(globalThis);

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => void wait(sleepCell, 0, 0, ms);

globalThis.$262 = {
  agent: {
    receiveBroadcast(callback) {
      parentPort.on('message', ({ sab, id, received }) => {
        const count = new Int32Array(received);
        add(count, 0, 1);
        notify(count, 0);
        callback(sab, id);
      });
    },
    report(value) {
      reports.postMessage(String(value));
    },
    leaving() {},
    sleep,
    monotonicNow: () => performance.now(),
    // atomicsHelper.js's additions, which agent code may use too.
    timeouts: { yield: 100, small: 200, long: 1000, huge: 10000 },
    tryYield: () => sleep(100),
    trySleep: sleep,
  },
};

// Indirect eval: the agent source runs as a global script of this realm.
(0, eval)(source);
