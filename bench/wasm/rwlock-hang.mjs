// Reproduces the hang the wasm-node-rwlock suite found: parklot's RwLock,
// half the workers reading and half writing, round after round, until one
// round does not end; then prints the lock word and the workers that never
// came back, and exits 1 (0 if every round ended).
//
//   node bench/wasm/rwlock-hang.mjs [wasm|package] [prefer-readers|prefer-writers] [WORKERS] [ROUNDS] [MS]
//
// Defaults: wasm prefer-readers 8 300 200. Seen (2-core machine): a reader
// parked on a free lock whose word is 0x44 (READERS_PARKED | WRITER_FIRST)
// within 3-40 rounds, through the package too; prefer-writers ran 300
// rounds clean, as did the same loop natively.
import { SHARED_BYTES, gatedRound, log, startPool } from './pool.mjs';
import { loadWasm, packageRuntime } from './module.mjs';
import { checkRound, isWriter, jsVersion, prepareCells, taskOf } from './rwlock-rounds.mjs';

const [how = 'wasm', policy = 'prefer-readers', ...rest] = process.argv.slice(2);
const [n = 8, rounds = 300, ms = 200] = rest.map(Number);
const HANG_MS = 10_000; // a starved worker gets in a few ms after the others stop

const { module, memory, glue, glueUrl, packageUrl } = await loadWasm(['rw_peer_loop']);
const shared = new SharedArrayBuffer(SHARED_BYTES);
const rt = await (await packageRuntime()).create();
const pool = await startPool(n, { module, memory, shared, glueUrl, packageUrl, packageHandle: rt.handle() }, HANG_MS);
const dataAddr = glue.alloc(64, 64);

/** A new lock: how the workers drive it, its version after a round, its word. */
function newLock() {
  if (how === 'package') {
    const l = rt.rwLock({ policy });
    return { driver: { how, lockAddr: l.address }, version: () => jsVersion(shared), state: () => JSON.stringify(l.state()) };
  }
  const kind = policy === 'prefer-writers' ? 0 : 1;
  const lockAddr = glue.rw_peer_new(kind);
  new BigUint64Array(memory.buffer, dataAddr, 1)[0] = 0n;
  return {
    driver: { how: 'wasm', kind, lockAddr, dataAddr },
    version: () => Number(new BigUint64Array(memory.buffer, dataAddr, 1)[0]),
    state: () => `word 0x${new Uint32Array(memory.buffer, lockAddr, 1)[0].toString(16)}`,
  };
}

for (let r = 0; r < rounds; r++) {
  prepareCells(shared);
  const lock = newLock();
  const what = `${how} ${policy}, ${n} workers, round ${r + 1}`;
  const answer = await gatedRound(pool, n, taskOf('rw', n, ms, lock.driver), shared, HANG_MS, what).catch((e) => e);
  if (answer instanceof Error) {
    const silent = (answer.silent ?? []).map((i) => `${i} (${isWriter(i) ? 'writer' : 'reader'})`);
    log(`${what}: HUNG, no answer in ${HANG_MS} ms from ${silent.join(', ')}; the lock: ${lock.state()}`);
    process.exit(1);
  }
  checkRound('rw', answer.done, { version: lock.version(), free: true, cpus: answer.cpus }, what);
}
log(`${how} ${policy}, ${n} workers: ${rounds} rounds of ${ms} ms, none hung`);
process.exit(0);
