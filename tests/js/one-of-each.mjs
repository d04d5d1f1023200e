// One object of each primitive kind: made by kinds.test.ts and by its worker
// (kinds-worker.mjs) alike.

/**
 * One object of each kind in `rt`, by the name of its `*At` method's prefix.
 * @param {import('../../js/dist/index.js').Runtime} rt
 */
export function oneOfEach(rt) {
  return {
    lock: rt.lock(),
    rwLock: rt.rwLock(),
    semaphore: rt.semaphore(1),
    barrier: rt.barrier(2),
    once: rt.once(),
    condition: rt.condition(),
  };
}
