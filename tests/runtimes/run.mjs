// Runs the portable checks (check.mjs) under every JavaScript runtime the
// package supports, each in a process of its own with a deadline: Node 20
// (the machine's), Node 22 and 24, Deno and Bun (their npm platform
// packages, pinned in tests/runtimes/package.json), with
// node:worker_threads workers everywhere and Web Workers where the runtime
// has them (Deno, Bun). A run that does not exit by itself after its
// checks fails: the README's examples must end on their own.
//
//   node tests/runtimes/run.mjs [--only node22,deno,...]
//
// Last line: "runtimes: N passed, M failed" (N counts checks; a runtime
// whose binary is missing counts as one failure, never as skipped).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const CHECK = fileURLToPath(new URL('./check.mjs', import.meta.url));
// Pinned in tests/runtimes/package.json, installed by scripts/setup.sh.
const bin = (path) => fileURLToPath(new URL(`./node_modules/${path}`, import.meta.url));
const DEADLINE_MS = 60_000;

const RUNTIMES = [
  { name: 'node20', command: [process.execPath], kinds: ['node'] },
  { name: 'node22', command: [bin('node22/bin/node')], kinds: ['node'] },
  { name: 'node24', command: [bin('node24/bin/node')], kinds: ['node'] },
  { name: 'deno', command: [bin('@deno/linux-x64-glibc/deno'), 'run', '--allow-all'], kinds: ['node', 'web'] },
  { name: 'bun', command: [bin('@oven/bun-linux-x64/bin/bun')], kinds: ['node', 'web'] },
];

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only?.split(',');

function run(command, args) {
  return new Promise((resolve) => {
    const started = performance.now();
    execFile(command[0], [...command.slice(1), ...args], { timeout: DEADLINE_MS, encoding: 'utf8', maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      resolve({ error, stdout, stderr, ms: performance.now() - started });
    });
  });
}

let passed = 0;
let failed = 0;
for (const rt of RUNTIMES) {
  if (only !== undefined && !only.includes(rt.name)) continue;
  if (!existsSync(rt.command[0])) {
    failed++;
    console.log(`FAIL ${rt.name}: ${rt.command[0]} is missing (scripts/setup.sh installs it)`);
    continue;
  }
  const version = (await run(rt.command.slice(0, 1), ['--version'])).stdout.split('\n')[0].trim();
  for (const kind of rt.kinds) {
    const r = await run(rt.command, [CHECK, kind]);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    const summary = lines.map((l) => /^checks: (\d+) passed, (\d+) failed$/.exec(l)).find((m) => m !== null);
    const label = `${rt.name} (${version}), ${kind === 'web' ? 'Web Workers' : 'node:worker_threads'}`;
    for (const l of lines) if (l.startsWith('ok ') || l.startsWith('FAIL ')) console.log(`${label}: ${l}`);
    if (summary === undefined) {
      failed++;
      console.log(`FAIL ${label}: no summary (${r.error?.killed ? `killed after ${DEADLINE_MS} ms` : `exit ${r.error?.code ?? 0}`}): ${r.stderr.slice(-600)}`);
      continue;
    }
    passed += Number(summary[1]);
    failed += Number(summary[2]);
    // An error thrown in one of parklot's own workers (the reaper, say) does
    // not fail the checks, nor, in Deno, the exit code: its report does.
    const uncaught = r.stderr.split('\n').find((l) => /\bUncaught\b|^(TypeError|ReferenceError|Error)\b/.test(l.replace(/\x1b\[[0-9;]*m/g, '')));
    if (uncaught !== undefined) {
      failed++;
      console.log(`FAIL ${label}: an uncaught error on stderr: ${uncaught.replace(/\x1b\[[0-9;]*m/g, '')}`);
    }
    if (r.error !== null) {
      // The checks ran, but the process did not end by itself (or failed at the end).
      failed++;
      console.log(`FAIL ${label}: the process ${r.error.killed ? `did not exit by itself within ${DEADLINE_MS} ms` : `exited with ${r.error.code}`}: ${r.stderr.slice(-600)}`);
    } else console.log(`${label}: exited by itself after ${(r.ms / 1000).toFixed(1)} s`);
  }
}
console.log(`runtimes: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
