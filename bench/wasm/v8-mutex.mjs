// V8's experimental Atomics.Mutex as a bench/wasm peer. It exists only
// under `node --harmony-struct`, a flag worker_threads' execArgv rejects, so
// run.mjs forks this file as its own node process with the flag (its
// workers inherit it) and drives it over IPC, one round per message, so that
// its rounds interleave with the other peers'.
//   parent → child: {type: 'round', n, durationMs, work, timeoutMs}
//                   {type: 'exit'}
//   child → parent: {type: 'ready'} or {type: 'unavailable', reason}
//                   {type: 'round', counter, done, cpus}
import { CELLS, SHARED_BYTES, fail, gatedRound, parentChannel, startPool } from './pool.mjs';

const send = parentChannel();

if (typeof Atomics.Mutex !== 'function') {
  await send({ type: 'unavailable', reason: `this node (${process.version}) has no Atomics.Mutex under --harmony-struct` });
  process.exit(0);
}

const maxWorkers = Number(process.argv[2]);
const shared = new SharedArrayBuffer(SHARED_BYTES);
const data = new Float64Array(shared, CELLS.V8_DATA, 2);
// One mutex object, shared: workerData hands each worker the same one.
const pool = await startPool(maxWorkers, { shared, mutex: new Atomics.Mutex() }, 30_000, { oneAtATime: true });

process.on('message', async (cmd) => {
  if (cmd.type === 'exit') {
    await Promise.all(pool.map((w) => w.stop()));
    process.exit(0);
  }
  if (cmd.type !== 'round') fail(`v8-mutex: unknown command ${JSON.stringify(cmd)}`);
  data[0] = 0;
  const task = { task: 'lock', how: 'v8-mutex', durationMs: cmd.durationMs, work: cmd.work };
  const what = `Atomics.Mutex, ${cmd.n} workers`;
  const { done, cpus } = await gatedRound(pool, cmd.n, task, shared, cmd.timeoutMs, what);
  await send({ type: 'round', counter: data[0], done, cpus });
});
await send({ type: 'ready' });
