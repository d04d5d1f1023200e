'use strict';
// The test262 host hooks Node's eshost runtime lacks: `$262.agent` over
// worker_threads, and `$262.detachArrayBuffer`. With
// PARKLOT_TEST262_ATOMICS=parklot, parklot/node is installed in the test's
// realm and in every agent; otherwise the engine's own Atomics run.
//
// The agent's own waiting (broadcast's acknowledgements, sleep) uses this
// realm's Atomics, which the tests never replace.

const { Worker, MessageChannel, receiveMessageOnPort } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const path = require('node:path');

const ADDON = path.join(__dirname, '..', '..', 'node', 'lib', 'index.cjs');
const WORKER = path.join(__dirname, 'agent-worker.cjs');
const parklot = process.env.PARKLOT_TEST262_ATOMICS === 'parklot';

const agents = [];
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

function sleep(ms) {
  Atomics.wait(sleepCell, 0, 0, ms);
}

// Agents blocked in a wait would keep the process from exiting (Node joins
// its workers at exit, and neither its Atomics.wait nor parklot's is
// interrupted by that): end them once the test's own work is done.
process.on('beforeExit', () => {
  for (const agent of agents.splice(0)) agent.worker.terminate();
});

const agent = {
  start(source) {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(WORKER, {
      workerData: { source: String(source), reports: port2, addon: parklot ? ADDON : null },
      transferList: [port2],
    });
    worker.unref();
    agents.push({ worker, reports: port1 });
  },

  // Returns once every agent has received the buffer (not run its callback).
  broadcast(sab, id) {
    const received = new Int32Array(new SharedArrayBuffer(4));
    for (const { worker } of agents) worker.postMessage({ sab, id, received: received.buffer });
    for (let n; (n = Atomics.load(received, 0)) < agents.length; ) Atomics.wait(received, 0, n);
  },

  getReport() {
    for (const { reports } of agents) {
      const report = receiveMessageOnPort(reports);
      if (report) return report.message;
    }
    return null;
  },

  sleep,
  monotonicNow: () => performance.now(),
};

function detachArrayBuffer(buffer) {
  structuredClone(buffer, { transfer: [buffer] });
}

/** Fills in `$262` for a test whose global object is `global`. */
function setUp(global, $262) {
  if (parklot) require(ADDON).install(global);
  $262.agent = agent;
  $262.detachArrayBuffer = detachArrayBuffer;
}

module.exports = { setUp };
