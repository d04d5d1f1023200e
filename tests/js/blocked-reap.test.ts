// The thread that receives a worker's death signal is itself blocked on a
// lock the worker holds. In Node the 'exit' event is delivered to the
// thread that made the worker, and a blocked thread runs no events: parklot
// must learn of the death another way (the worker's life port, watched by a
// runtime thread that never blocks) and end the blocked wait within a
// bounded time. Each case runs in a child process (tests/js/blocked), so
// that a hang fails the case instead of freezing the runner.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCENARIO = fileURLToPath(new URL('./blocked/scenario.mjs', import.meta.url));
/** How long a case may take before it counts as a hang. */
const HANG_MS = 10_000;
/** The bound the README states for learning of a death while blocked. */
const BOUND_MS = 500;

/** Runs one case; a child that did not finish within HANG_MS counts as hung. */
function run(hold: string, death: string, wait: string, nested = ''): Promise<{ outcome: string; ms: number }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCENARIO, hold, death, wait, nested], { timeout: HANG_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error !== null) resolve({ outcome: `hung or failed (${error.killed ? 'killed after the deadline' : error.message}): ${stderr.slice(0, 300)}`, ms: NaN });
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as { outcome: string; ms: number });
    });
  });
}

const expected: Record<string, string> = {
  lock: 'OwnerDiedError', // the next owner of a Lock whose holder died is told
  write: 'OwnerDiedError', // so is the next writer of a write lock
  upgradable: 'acquired', // a dead reader changed nothing: its read is released silently
};

describe('the thread that made a worker, blocked on a lock the worker holds, learns of its death', () => {
  for (const hold of ['lock', 'write', 'upgradable']) {
    for (const death of ['exit', 'throw', 'terminate']) {
      for (const wait of ['forever', 'timed']) {
        it(`${hold} holder, ${death}, main thread blocked ${wait === 'timed' ? 'for at most 3 s' : 'without a timeout'}`, async () => {
          const r = await run(hold, death, wait);
          expect(r.outcome).toBe(expected[hold]);
          expect(r.ms).toBeLessThan(BOUND_MS);
        });
      }
    }
  }
});

describe('a worker that spawned a worker, blocked on a lock that worker holds, learns of its death', () => {
  for (const hold of ['lock', 'write']) {
    for (const death of ['exit', 'terminate']) {
      it(`${hold} holder, ${death}, the spawning worker blocked without a timeout`, async () => {
        const r = await run(hold, death, 'forever', 'nested');
        expect(r.outcome).toBe(expected[hold]);
        expect(r.ms).toBeLessThan(BOUND_MS);
      });
    }
  }
});
