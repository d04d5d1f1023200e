// No suite can hang (issue 11, item 8): the benchmark's child processes (the
// Atomics.Mutex one, bench/wasm/v8-mutex.mjs, node --harmony-struct, and the
// multithreading one, bench/wasm/multithreading-child.mjs, 8 workers each)
// start and exit every time, and scripts/deadline.sh, which test.sh runs each
// step under, ends a stuck process group by a deadline and names it.
import { fork, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const V8_MUTEX = { what: 'the Atomics.Mutex process', script: `${ROOT}bench/wasm/v8-mutex.mjs`, args: ['8'], execArgv: ['--harmony-struct'] };
const MULTITHREADING = { what: 'the multithreading process', script: `${ROOT}bench/wasm/multithreading-child.mjs`, args: ['8', '4'], execArgv: [] };

/** Starts the child, waits for 'ready', asks it to exit; 'ok', or what was stuck (the child is then killed by its PID). */
function startAndStop(peer: typeof V8_MUTEX, deadlineMs: number): Promise<string> {
  const child = fork(peer.script, peer.args, { execArgv: peer.execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let phase = 'start-up (no ready message)';
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(`${peer.what} (pid ${child.pid}) was stuck in ${phase} after ${deadlineMs} ms: killed`);
    }, deadlineMs);
    child.on('message', (m: { type: string }) => {
      if (m.type === 'ready' || m.type === 'unavailable') {
        phase = 'exit';
        child.send({ type: 'exit' });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? 'ok' : `exited with ${code}`);
    });
  });
}

describe('benchmark children end', () => {
  it('the Atomics.Mutex child starts its 8 workers and exits, 20 times in a row', async () => {
    const results: string[] = [];
    for (let i = 0; i < 20; i++) results.push(await startAndStop(V8_MUTEX, 15_000));
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
  }, 400_000);

  it('the multithreading child starts its 8 workers and exits, 5 times in a row', async () => {
    const results: string[] = [];
    for (let i = 0; i < 5; i++) results.push(await startAndStop(MULTITHREADING, 15_000));
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
  }, 100_000);
});

describe('scripts/deadline.sh', () => {
  it('kills a stuck process group by its deadline and names it', () => {
    const started = Date.now();
    const r = spawnSync('bash', [`${ROOT}scripts/deadline.sh`, '1', 'a stuck step', 'bash', '-c', 'sleep 30 & sleep 30'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(124);
    expect(r.stderr).toMatch(/deadline: a stuck step is still running after 1 s \(pid \d+\)/);
    expect(r.stderr).toMatch(/deadline: killing process group \d+/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('passes a finished command status through', () => {
    expect(spawnSync('bash', [`${ROOT}scripts/deadline.sh`, '10', 'quick', 'bash', '-c', 'exit 3']).status).toBe(3);
  });
});
