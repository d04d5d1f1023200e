// Issue 29: workers that create and free primitives, terminated at random
// moments, must never hang anyone. Before the fix, a worker killed while it
// held the allocator's lock left it held, and the main thread (reaping it,
// which frees its stack) spun at 100% CPU forever. A thread that dies inside
// one of the runtime's own critical sections now either leaves it consistent
// (the allocator takes no lock) or poisons the runtime: every later call
// throws one clear error, and threads waiting there come out with it.
//
// The scenario runs in a child process (death-in-runtime.mjs) so that a hang
// fails this test instead of hanging vitest: the child prints a line per
// round, and a round that prints nothing for ROUND_SILENCE_MS kills it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Core } from '../../js/dist/core.js';
import { Runtime } from '../../js/dist/index.js';
import { MAX_PAGES, MIN_PAGES, freshGlue, loadModule } from '../../js/dist/loader.js';
import * as lockModule from '../../js/dist/lock.js';
import { queuedOn, sleep, spawn as spawnWorker, untilQueued, withTimeout } from './helpers.js';

/**
 * Terminates `w`, then waits up to 3 s for the write lock of `rw`, without
 * blocking this thread (whose event loop runs the reaper): what that
 * resolved or rejected with (`false` if the dead thread's hold was lost).
 */
async function writeOnceReaped(w: { worker: { terminate(): Promise<unknown> } }, rw: { writeAsync(ms: number): Promise<boolean> }): Promise<string> {
  await w.worker.terminate();
  return rw.writeAsync(3000).then(String, (e: unknown) => String(e));
}

const ROUNDS = 60;
/** A round takes well under a second; this long without a line is a hang. */
const ROUND_SILENCE_MS = 20_000;

interface Run {
  code: number | null;
  lines: string[];
  hung: boolean;
}

/** Rounds of death-in-lock.mjs. */
const LOCK_ROUNDS = 50;

/** Runs the scenario `file` (death-in-runtime.mjs by default) in a child process for `rounds` rounds, with `env` added to its environment. */
function runScenario(file = './death-in-runtime.mjs', rounds = ROUNDS, env: Record<string, string> = {}): Promise<Run> {
  const script = fileURLToPath(new URL(file, import.meta.url));
  const child = spawn(process.execPath, [script], { env: { ...process.env, ROUNDS: String(rounds), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let hung = false;
  let watchdog: ReturnType<typeof setTimeout>;
  const arm = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      hung = true;
      lines.push(`(no output for ${ROUND_SILENCE_MS} ms: killed the child)`);
      child.kill('SIGKILL');
    }, ROUND_SILENCE_MS);
  };
  arm();
  let partial = '';
  const take = (chunk: Buffer) => {
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) lines.push(line);
    arm();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(watchdog);
      if (partial) lines.push(partial);
      resolve({ code, lines, hung });
    });
  });
}

describe('a worker that dies inside the runtime', () => {
  it(`${ROUNDS} rounds of workers terminated at random while they churn primitives: nothing hangs; a death inside an internal section poisons the runtime with one clear error`, async () => {
    const run = await runScenario();
    const output = run.lines.join('\n');
    console.log(output);
    expect(run.hung, output).toBe(false);
    expect(run.code, output).toBe(0);
    expect(run.lines.filter((l) => l.startsWith('round ')).length).toBe(ROUNDS);
    const summary = run.lines.find((l) => l.startsWith('done: '));
    expect(summary).toMatch(new RegExp(`^done: ${ROUNDS} rounds, \\d+ ended with the runtime poisoned$`));
    // Every error reported is the poisoned error, naming the thread and the section.
    for (const line of run.lines.filter((l) => l.includes('poisoned:'))) {
      expect(line).toMatch(/this runtime is poisoned: (worker|thread) \d+ (was terminated|trapped) inside the runtime's [a-z ]+; its shared state may be inconsistent\. Create a new Runtime\./);
    }
  }, 15 * 60_000);
});

describe('a worker terminated on its way back from a wakeup', () => {
  // The worker saw its wakeup (the lock handed over, or the write lock
  // released to it) and was stopped before the call that takes it over and
  // records it. Before, seeing the wakeup ended its debt: the reaper then
  // passed nothing on, and the lock stayed held by a thread that was gone.
  const cases = [
    { what: 'an async lock (lockAsync)', task: 'stopBeforeLockResume', make: (rt: Runtime) => ({ lock: rt.lock(), key: 'lock' }) },
    { what: 'a write lock (writeAsync)', task: 'stopBeforeWriteResume', make: (rt: Runtime) => ({ lock: rt.rwLock(), key: 'rw' }) },
  ];
  it.each(cases)('$what handed to a worker stopped before it resumed is released by its reaper (it never held it): the next taker gets it', async ({ task, make }) => {
    const rt = await Runtime.create();
    const { lock, key } = make(rt);
    const [take, release, takeAsync] =
      'unlockFair' in lock
        ? [() => lock.lock(), () => lock.unlockFair(), (ms: number) => lock.lockAsync(ms)] // fair: hands it to the worker's record
        : [() => lock.write(), () => lock.unlockWrite(), (ms: number) => lock.writeAsync(ms)];
    take();
    const w = spawnWorker(rt, task, { [key]: lock.address });
    await withTimeout(w.next('waiting'), 5000, 'the worker to queue');
    await untilQueued(rt, lock.address);
    release();
    await withTimeout(w.next('resuming'), 5000, 'the worker to see its wakeup');
    await w.worker.terminate();
    expect(await takeAsync(3000).then(String, (e: unknown) => String(e))).toBe('true');
    if ('unlockFair' in lock) lock.unlock();
    else lock.unlockWrite();
    rt.close();
  });

  // With CONDITION, each turn with the lock also waits on the Condition
  // used with it (2 ms), or notifies it (one, or all): a worker terminated
  // on its way back from a notify, or from the lock a requeue handed it,
  // or between forgetting its hold and releasing the byte to wait, left
  // the lock held by nobody (1 run in 7 of 60 rounds, before).
  it.each([
    ['', {}],
    [', each turn also waiting on or notifying a Condition', { CONDITION: '1' }],
  ])(`${LOCK_ROUNDS} rounds of workers contending on one Lock%s, one terminated at random each round: every survivor gets the lock again, and so does the main thread`, async (_, env) => {
    const run = await runScenario('./death-in-lock.mjs', LOCK_ROUNDS, env);
    const output = run.lines.join('\n');
    console.log(output);
    expect(run.hung, output).toBe(false);
    expect(run.code, output).toBe(0);
    expect(run.lines.find((l) => l.startsWith('done: ')), output).toMatch(new RegExp(`^done: ${LOCK_ROUNDS} rounds, `));
  }, 15 * 60_000);
});

/** What `rt.lock()` throws once the runtime is poisoned (it enters the runtime's kind table), polled until it throws. */
async function untilPoisoned(rt: Runtime): Promise<string> {
  for (;;) {
    try {
      rt.lock().free();
    } catch (e) {
      return String(e);
    }
    await sleep(5);
  }
}

describe('a trap (a bug) in the wasm module', () => {
  /** What a call throws: `Constructor: message`, or 'returned'. */
  function outcome(f: () => unknown): string {
    try {
      f();
      return 'returned';
    } catch (e) {
      return `${(e as Error).constructor.name}: ${(e as Error).message}`;
    }
  }

  it('outside the internal sections keeps the runtime usable; inside one poisons it for every caller, and close() still works', async () => {
    const module = await loadModule();
    const memory = new WebAssembly.Memory({ initial: MIN_PAGES, maximum: MAX_PAGES, shared: true });
    const core = Core.open(await freshGlue(), module, memory, true, { tag: 7, release: () => {} });
    const glue = core.glue as unknown as { trap_for_test(bytes: number): void; trap_in_section_for_test(): void };
    expect(outcome(() => glue.trap_for_test(64))).toMatch(
      /^Error: parklot: the wasm module trapped in trap_for_test \(.*\); this is a bug in parklot, please report it\. It trapped outside the runtime's internal sections and this thread's wasm stack was reset, so the runtime stays usable, but a lock held by that call may stay held$/,
    );
    expect(core.poisoned()).toBeUndefined();
    const a = core.glue.alloc(64, 8);
    expect(a).toBeGreaterThan(0);
    core.glue.free(a, 64, 8);

    const poisoned =
      "Error: parklot: this runtime is poisoned: thread 7 trapped inside the runtime's internal tables; its shared state may be inconsistent. Create a new Runtime.";
    expect(outcome(() => glue.trap_in_section_for_test())).toBe(poisoned);
    // Every later call says the same, first cause first; so does an attach.
    expect(outcome(() => core.glue.alloc(64, 8))).toBe(poisoned);
    expect(outcome(() => core.check())).toBe(poisoned);
    expect(outcome(() => glue.trap_for_test(64))).toBe(poisoned);
    const other = await freshGlue();
    expect(outcome(() => Core.open(other, module, memory, true, { tag: 8, release: () => {} }, core.header))).toBe(poisoned);
    expect(core.reap(7)).toBe(0); // never throws: reaping runs in event handlers
    core.close();
    expect(core.closed).toBe(true);
  });

  it("a reader-writer lock's release stopped between its hold's record and its word poisons the runtime: a reaper never releases a write lock another thread took since", async () => {
    // Stopped with the word released and the record still there, the
    // reaper of the dead thread released the write lock again, by then
    // another thread's: two writers at once. Stopped inside the step, the
    // runtime is poisoned instead, and says so to every caller.
    const rt = await Runtime.create();
    const rw = rt.rwLock();
    const w = spawnWorker(rt, 'rwStopped', { rw: rw.address, point: 1 });
    const released = (await withTimeout(w.next('stopped'), 3000, 'the stopped release')) as string;
    // The stopped thread's write lock: never taken here (the fast paths
    // take no look at the poison, so this may return rather than throw).
    let taken: string;
    try {
      taken = String(rw.tryWrite());
    } catch (e) {
      taken = String(e);
    }
    await w.worker.terminate();
    await sleep(200); // reaped
    let after: string;
    try {
      after = JSON.stringify(rw.state()); // this thread's write, if it took one
    } catch (e) {
      after = String(e);
    }
    const poisoned = /^Error: parklot: this runtime is poisoned: thread \d+ trapped inside the runtime's lock bookkeeping/;
    expect({ released, after }).toEqual({ released: expect.stringMatching(poisoned), after: expect.stringMatching(poisoned) });
    expect(taken === 'false' || poisoned.test(taken)).toBe(true);
    rt.close();
  });

  it("a reader-writer lock's acquisition stopped between its word and its hold's record poisons the runtime: nobody waits for ever for a lock no reaper releases", async () => {
    // Stopped with the word taken and no record yet, the dead thread's
    // hold was never released: every later writer waited for ever.
    const rt = await Runtime.create();
    const rw = rt.rwLock();
    const w = spawnWorker(rt, 'rwStopped', { rw: rw.address, point: 2 });
    const taken = (await withTimeout(w.next('stopped'), 3000, 'the stopped acquisition')) as string;
    const after = await writeOnceReaped(w, rw);
    const poisoned = /^Error: parklot: this runtime is poisoned: (thread|worker) \d+ (trapped|was terminated) inside the runtime's lock bookkeeping/;
    expect({ taken, after }).toEqual({ taken: expect.stringMatching(poisoned), after: expect.stringMatching(poisoned) });
    rt.close();
  });

  it.each([
    ['release', 1],
    ['acquisition', 2],
  ])("a reader-writer lock's %s terminated (not trapped) inside its step poisons the runtime through the reaper", async (_, point) => {
    // The trap tests above reach the poison through the trap handler; a
    // worker terminated inside the step leaves no trap, and only its reaper,
    // finding the thread's step unfinished, can say so. Without that check
    // the reaper found no record (the release had removed it; the
    // acquisition had not written it yet) and left the write lock held:
    // every later writer waited for ever.
    const rt = await Runtime.create();
    const rw = rt.rwLock();
    const w = spawnWorker(rt, 'rwStopped', { rw: rw.address, point, hang: true });
    await withTimeout(w.next('stepping'), 3000, 'the worker at its step');
    await sleep(300); // spinning inside the step
    const after = await writeOnceReaped(w, rw);
    expect(after).toMatch(/^Error: parklot: this runtime is poisoned: worker \d+ was terminated inside the runtime's lock bookkeeping/);
    rt.close();
  });

  it.each([false, true])('a condition wait stopped between releasing its lock and forgetting the hold poisons the runtime (hang: %s): no reaper releases the lock by that record', async (hang) => {
    // The byte released, the hold still on record: a reaper would release
    // the lock again, from under whoever took it since. Before, the record
    // went first and a death before the byte's release left the lock held
    // by nobody (death-in-lock.mjs with CONDITION found it).
    const rt = await Runtime.create();
    const lock = rt.lock();
    const cond = rt.condition();
    const w = spawnWorker(rt, 'condStopped', { lock: lock.address, cond: cond.address, hang });
    const poisoned = /^Error: parklot: this runtime is poisoned: (thread|worker) \d+ (trapped|was terminated) inside the runtime's lock bookkeeping/;
    if (hang) {
      await withTimeout(w.next('stepping'), 3000, 'the worker at its step');
      await untilQueued(rt, cond.address, 1);
      await sleep(100); // spinning inside the step
    } else {
      expect(await withTimeout(w.next('stopped'), 3000, 'the stopped wait')).toMatch(poisoned);
    }
    await w.worker.terminate();
    // The reaper learned of it: a call that enters the runtime's tables
    // throws (not the lock's uncontended calls, which do not look, and on
    // the JS path take the released lock in JS).
    expect(await withTimeout(untilPoisoned(rt), 3000, 'the poisoning')).toMatch(poisoned);
    rt.close();
  });

  it.each([false, true])("a worker terminated in a Lock's release before it gives the byte up (a waiter queued) is reaped: the lock is released, owner-died, to the waiter, and the runtime stays whole (the waiter async: %s)", async (waitAsync) => {
    // Before, such a release forgot the hold first and ran the rest inside
    // a section whose death poisoned the runtime (death-in-lock.mjs: 23 of
    // 150 rounds poisoned). The hold now stays on record until the byte is
    // given up, so the reaper releases the lock as the dead holder's.
    const rt = await Runtime.create();
    const lock = rt.lock();
    const gate = rt.alloc(4, 4);
    const w = spawnWorker(rt, 'unlockStopped', { lock: lock.address, gate });
    await withTimeout(w.next('held'), 3000, 'the worker to take the lock');
    const waiter = waitAsync ? undefined : spawnWorker(rt, 'lockOnce', { lock: lock.address });
    const mine = waitAsync ? lock.lockAsync(3000).then(String, (e: unknown) => `${(e as Error).name}: ${(e as Error).message}`) : undefined;
    await untilQueued(rt, lock.address, 1);
    Atomics.store(rt.int32(gate), 0, 1);
    Atomics.notify(rt.int32(gate), 0);
    const returned = w.next('stopped').then(() => 'returned');
    expect(await Promise.race([returned, sleep(200).then(() => 'spinning')])).toBe('spinning'); // inside the release, holding the lock
    expect(queuedOn(rt, lock.address)).toBe(1); // the waiter was not woken
    await w.worker.terminate();
    if (mine !== undefined) {
      expect(await withTimeout(mine, 3000, 'the async waiter')).toMatch(/^OwnerDiedError: /);
      lock.unlock();
    } else {
      expect(await withTimeout(waiter!.done, 3000, 'the blocked waiter')).toMatch(/^OwnerDiedError: /);
    }
    // Not poisoned: the lock and the runtime's tables work.
    expect(lock.tryLock()).toBe(true);
    lock.unlock();
    const l = rt.lock();
    l.lock();
    l.unlock();
    l.free();
    lock.free();
    rt.free(gate, 4, 4);
    rt.close();
  });

  it.each([
    ['first', 4],
    ['second', 5],
  ])('a worker terminated while it edits the %s copy of the kind table is reaped, and the runtime stays whole: the other copy repairs the table', async (_, point) => {
    // Before, every death inside the table's section poisoned the runtime:
    // a half-edited BTreeMap cannot be repaired (death-in-runtime.mjs:
    // about half of its rounds).
    const rt = await Runtime.create();
    const before = [rt.lock(), rt.condition(), rt.rwLock()];
    const block = rt.alloc(64, 8);
    const w = spawnWorker(rt, 'allocStopped', { point });
    await withTimeout(w.next('stepping'), 3000, 'the worker at its point');
    const returned = w.next('stopped').then(() => 'returned');
    expect(await Promise.race([returned, sleep(100).then(() => 'spinning')])).toBe('spinning'); // inside the edit, holding the table's lock
    await w.worker.terminate();
    const end = performance.now() + 3000;
    while (rt.attachedThreads !== 1 && performance.now() < end) await sleep(5); // reaped
    expect(rt.attachedThreads).toBe(1);
    // The table answers as before, and takes edits again.
    expect(rt.lockAt(before[0]!.address).address).toBe(before[0]!.address);
    expect(rt.int32(block, 16).length).toBe(16);
    const made = Array.from({ length: 200 }, (_, i) => [rt.alloc(8 + (i % 50) * 8, 8), 8 + (i % 50) * 8] as const);
    expect(new Set(made.map(([a]) => a)).size).toBe(made.length);
    for (const [a, n] of made) rt.free(a, n, 8);
    const l = rt.lock();
    l.lock();
    l.unlock();
    l.free();
    for (const p of before) p.free();
    rt.free(block, 64, 8);
    expect(() => rt.free(block, 64, 8)).toThrow(/not|freed/i);
    rt.close();
  });

  it('a poisoning ends the async waits queued behind a thread that will not be reaped: they reject with the poisoned error', async () => {
    // Before, such a wait (here, for a lock a worker holds) waited for ever:
    // the poisoned runtime reaps nobody, so its holder never lets go.
    const rt = await Runtime.create();
    const lock = rt.lock();
    const holder = spawnWorker(rt, 'holdForever', { lock: lock.address });
    await holder.next('held');
    const waits = [lock.lockAsync(), lock.lockAsync(60_000)];
    for (const w of waits) w.catch(() => {});
    await untilQueued(rt, lock.address, 2);
    const core = (lockModule as unknown as { lockCore(l: unknown): Core }).lockCore(lock);
    const poisoned = /^Error: parklot: this runtime is poisoned: thread \d+ trapped inside the runtime's internal tables/;
    expect(outcome(() => (core.glue as unknown as { trap_in_section_for_test(): void }).trap_in_section_for_test())).toMatch(poisoned);
    const started = performance.now();
    for (const w of waits) {
      expect(await withTimeout(w.then(String, (e: unknown) => String(e)), 3000, 'a queued lockAsync to end')).toMatch(poisoned);
    }
    expect(performance.now() - started).toBeLessThan(1000);
    await holder.worker.terminate();
    rt.close();
  });
});
