// The barrier and what goes wrong around it (issue 29): more threads than
// parties, a party whose worker is terminated while it waits, timeouts
// (blocking and async), reset(), Node's event loop, and threads that may not
// block. Workers run tests/js/worker.mjs, watched (rt.watch) so that a
// terminated one is reaped.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BrokenBarrierError, Runtime } from '../../js/dist/index.js';
import { allDone, blockingAndAsync, outcome, queuedOn, rt, sleep, spawn, type Spawned, untilQueued, useRuntime, withTimeout } from './helpers.js';

const DEADLINE_MS = 10_000;

useRuntime();

/** Starts a worker waiting once at `barrier`, and returns once it is queued. */
async function waiting(barrier: number, data: Record<string, unknown> = {}): Promise<Spawned> {
  const before = queuedOn(rt, barrier);
  const w = spawn(rt, 'barrierWaitOnce', { barrier, ...data });
  await w.next('waiting');
  await untilQueued(rt, barrier, before + 1);
  return w;
}

/** What `f` threw, as `BrokenBarrierError timedOut=…`, or what it returned. */
async function failure(f: () => unknown): Promise<string> {
  try {
    return `returned ${String(await f())}`;
  } catch (e) {
    return e instanceof BrokenBarrierError ? `BrokenBarrierError timedOut=${e.timedOut}` : String(e);
  }
}

describe('more threads than parties', () => {
  it('4 workers on a barrier for 2, 2000 openings: every arrival counts, one leader per opening', async () => {
    const openings = 2000;
    const barrier = rt.barrier(2);
    const tickets = rt.alloc(4, 4);
    const common = { barrier: barrier.address, tickets, arrivals: 2 * openings };
    const results = await allDone<[number, number]>(blockingAndAsync(rt, 'barrierPool', common), 60_000, 'barrier workers (a lost arrival leaves one waiting)');
    expect(results.reduce((sum, [, n]) => sum + n, 0)).toBe(2 * openings);
    expect(results.reduce((sum, [l]) => sum + l, 0)).toBe(openings);
    expect(barrier.broken).toBe(false);
  });
});

describe('a worker terminated while it waits breaks the barrier', () => {
  for (const deadAsync of [false, true]) {
    it(`(its wait ${deadAsync ? 'async' : 'blocking'}): the blocking and async waiters, and later ones, get BrokenBarrierError until reset()`, async () => {
      const barrier = rt.barrier(4);
      const blocking = await waiting(barrier.address);
      const asynchronous = await waiting(barrier.address, { useAsync: true, mayBlock: false });
      const dead = await waiting(barrier.address, deadAsync ? { useAsync: true, mayBlock: false } : {});
      await dead.worker.terminate();
      expect(await withTimeout(blocking.done, DEADLINE_MS, 'the blocking waiter to learn of the break')).toBe('broken');
      expect(await withTimeout(asynchronous.done, DEADLINE_MS, 'the async waiter to learn of the break')).toBe('broken');
      expect(barrier.broken).toBe(true);
      const t0 = performance.now();
      expect(await failure(() => barrier.waitFor(5000))).toBe('BrokenBarrierError timedOut=false');
      expect(await failure(() => barrier.wait())).toBe('BrokenBarrierError timedOut=false');
      expect(await failure(() => barrier.waitAsync())).toBe('BrokenBarrierError timedOut=false');
      expect(performance.now() - t0).toBeLessThan(1000); // at once
      barrier.reset();
      expect(barrier.broken).toBe(false);
      // Whole again: four parties meet, one leads.
      const others = [await waiting(barrier.address), await waiting(barrier.address, { useAsync: true, mayBlock: false }), await waiting(barrier.address)];
      const mine = await withTimeout(barrier.waitAsync(), DEADLINE_MS, 'the fourth party');
      const theirs = await Promise.all(others.map((w) => withTimeout(w.done, DEADLINE_MS, 'the other parties')));
      expect([mine, ...theirs]).toEqual([true, 'passed', 'passed', 'passed']);
    });
  }
});

describe('timeouts', () => {
  it('waitFor(ms) throws BrokenBarrierError (timedOut) once its timeout passes; the others are told the barrier broke', async () => {
    const barrier = rt.barrier(3);
    const other = await waiting(barrier.address);
    const t0 = performance.now();
    expect(await failure(() => barrier.waitFor(30))).toBe('BrokenBarrierError timedOut=true');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(29);
    expect(await withTimeout(other.done, DEADLINE_MS, 'the other party')).toBe('broken');
    expect(barrier.broken).toBe(true);
    expect(await failure(() => barrier.waitFor(5000))).toBe('BrokenBarrierError timedOut=false');
    barrier.reset();
    expect(barrier.broken).toBe(false);
  });

  it('waitAsync(ms) rejects once its timeout passes and leaves nothing queued', async () => {
    const barrier = rt.barrier(2);
    const records = rt.waiterRecords;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      expect(await failure(() => barrier.waitAsync(20))).toBe('BrokenBarrierError timedOut=true');
      expect(performance.now() - t0).toBeGreaterThanOrEqual(19);
      expect(barrier.broken).toBe(true);
      barrier.reset();
    }
    // The record went back to the pool each time (it left the queue), and
    // the timed-out arrivals were withdrawn: the next two parties meet.
    expect(rt.waiterRecords - records).toBeLessThanOrEqual(1);
    const other = await waiting(barrier.address);
    expect(await withTimeout(barrier.waitAsync(DEADLINE_MS), DEADLINE_MS, 'the second party')).toBe(true);
    expect(await other.done).toBe('passed');
  });

  it('a timed wait that the others meet in time passes', async () => {
    const barrier = rt.barrier(2);
    const other = await waiting(barrier.address, { timeout: DEADLINE_MS });
    expect(barrier.waitFor(DEADLINE_MS)).toBe(true);
    expect(await other.done).toBe('passed');
  });
});

describe('Node event loop', () => {
  const dist = JSON.stringify(new URL('../../js/dist/index.js', import.meta.url).href);
  const run = (script: string) => spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });

  it('a pending waitAsync() without a timeout does not keep the process alive by itself', () => {
    const r = run(`
      import { Runtime } from ${dist};
      const rt = await Runtime.create();
      rt.barrier(2).waitAsync().then((v) => console.log('resolved', v), (e) => console.log('rejected', e.name));
      console.log('pending');
    `);
    expect(r.error).toBeUndefined(); // ETIMEDOUT if it never exits
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'pending\n', '']);
  });

  it('a timed one keeps it alive until it settles', () => {
    const r = run(`
      import { Runtime } from ${dist};
      const rt = await Runtime.create();
      rt.barrier(2).waitAsync(200).then((v) => console.log('resolved', v), (e) => console.log('rejected', e.name, e.timedOut));
    `);
    expect(r.error).toBeUndefined();
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'rejected BrokenBarrierError true\n', '']);
  });
});

describe('a thread that may not block', () => {
  it('barrier(1).wait() and waitFor() throw the TypeError naming waitAsync; waitAsync() passes', async () => {
    const page = await Runtime.create({ mayBlock: false });
    try {
      const b = page.barrier(1);
      expect(outcome(() => b.wait())).toBe(
        "TypeError: parklot: Barrier.wait() would block this thread, which may not block (a page's main thread, or a runtime made with mayBlock: false); use await barrier.waitAsync()",
      );
      expect(outcome(() => b.waitFor(0))).toMatch(/^TypeError: parklot: Barrier\.waitFor\(\) would block .*use await barrier\.waitAsync\(timeout\)$/);
      expect(await b.waitAsync()).toBe(true);
    } finally {
      page.close();
    }
  });
});
