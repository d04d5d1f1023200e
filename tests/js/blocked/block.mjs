// The blocked side of a scenario, run by the main thread (scenario.mjs) or by
// a worker (middle.mjs): start the holder, let it die, block on its lock.
import { spawnWorker } from '../../../js/dist/index.js';

/**
 * Starts the holder (holder.mjs) on `runtime`, waits until it holds `obj`,
 * terminates it if `death` is 'terminate' (writing the time into the f64 at
 * `stamp` first; the holder writes it when it dies by itself), then blocks on
 * `obj` as `wait` says. Returns what the blocked call did (`outcome`) and how
 * many ms after the death it returned (`ms`).
 */
export async function blockOnHolder(runtime, { obj, hold, death, stamp, wait }) {
  const stampCell = runtime.float64(stamp);
  const holder = await spawnWorker(runtime, new URL('./holder.mjs', import.meta.url), { obj, hold, death, stamp });
  holder.on('error', () => {}); // the 'throw' scenario's error is expected
  await new Promise((resolve) => holder.once('message', resolve));
  if (death === 'terminate') {
    stampCell[0] = performance.timeOrigin + performance.now();
    void holder.terminate();
  }
  let outcome;
  try {
    if (hold === 'lock') outcome = wait === 'timed' ? (obj.lockFor(3000) ? 'acquired' : 'timed out') : (obj.lock(), 'acquired');
    else outcome = wait === 'timed' ? (obj.writeFor(3000) ? 'acquired' : 'timed out') : (obj.write(), 'acquired');
  } catch (e) {
    outcome = e.constructor.name;
  }
  return { outcome, ms: performance.timeOrigin + performance.now() - stampCell[0] };
}
