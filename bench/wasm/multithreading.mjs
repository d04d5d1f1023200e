// The `multithreading` npm package as a peer of the wasm-node suites, seen
// from run.mjs and rwlock.mjs: its Mutex in experiments 1 and 2, its Mutex +
// Condvar in the ping-pong, its RwLock, Semaphore and Barrier in experiment
// 6. They run in multithreading-child.mjs's process; a child that cannot
// start, or a request it does not answer in time, skips the peer for the
// rest of the run with the reason (the run goes on and says so), while a
// wrong counter still fails the run as for every peer.
import { log, startChildPeer } from './pool.mjs';

/**
 * Starts the child with `maxWorkers` workers and `maxPairs` ping-pong pairs;
 * reasons for skipping go to `skipped` ({peer, reason}). Resolves to
 * {available, ask(cmd, timeoutMs, what), stop()}: `ask` resolves to the
 * child's answer, or to null once the peer is skipped.
 */
export async function startMultithreading(maxWorkers, maxPairs, skipped, peer = 'multithreading (npm) Mutex and Condvar') {
  log(`multithreading: starting its process (${maxWorkers} workers)`);
  const child = await startChildPeer(new URL('./multithreading-child.mjs', import.meta.url), {
    name: 'multithreading', args: [maxWorkers, maxPairs],
  });
  let reason = null;
  const skip = (why) => {
    reason = why;
    skipped.push({ peer, reason });
    log(`SKIPPED ${peer}: ${reason}`);
  };
  if (child.skipped) skip(child.skipped);
  return {
    get available() {
      return reason === null;
    },
    async ask(cmd, timeoutMs, what) {
      if (reason !== null) return null;
      try {
        return await child.request(cmd, timeoutMs, what);
      } catch (e) {
        child.kill();
        skip(e.message.startsWith(what) ? e.message : `${what}: ${e.message}`);
        return null;
      }
    },
    async stop() {
      if (!child.skipped) await child.stop();
    },
  };
}
