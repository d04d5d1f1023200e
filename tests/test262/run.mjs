// Runs test262's Atomics.wait / notify / waitAsync tests (a pinned copy in
// ../shared/test262 beside the repository, or $PARKLOT_TEST262_DIR) with
// test262-harness on Node, twice through the same agent (tests/test262/):
// with parklot/node installed in the test's realm and in every agent, and
// with the engine's own Atomics. Prints, side by side:
//
//   test262: N passed, M failed                      (parklot: counted by npm test)
//   test262 (engine's Atomics): N passed, M failed   (the baseline)
//
// and lists each failure. Exits non-zero if any parklot run fails.
// Usage: node tests/test262/run.mjs [--only parklot|engine] [glob...]
// ($PARKLOT_TEST262_HOST: the Node executable to test, default this one.)
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const suite = path.resolve(process.env.PARKLOT_TEST262_DIR ?? path.join(root, '..', 'shared', 'test262'));
const harness = path.join(root, 'node_modules', 'test262-harness', 'bin', 'run.js');
const THREADS = Number(process.env.PARKLOT_TEST262_THREADS ?? 4);

const args = process.argv.slice(2);
let only = null;
if (args[0] === '--only') {
  only = args[1];
  args.splice(0, 2);
}
const globs = args.length
  ? args.map((g) => path.resolve(g))
  : ['wait', 'notify', 'waitAsync'].map((d) => path.join(suite, 'test', 'built-ins', 'Atomics', d, '**', '*.js'));

if (!existsSync(path.join(suite, 'harness', 'atomicsHelper.js'))) {
  console.error(`test262: no suite at ${suite} (set PARKLOT_TEST262_DIR)`);
  process.exit(2);
}

/** Runs the suite with `atomics` ('parklot' or 'engine'); resolves to the harness's results. */
function runSuite(atomics) {
  const tempDir = mkdtempSync(path.join(tmpdir(), `parklot-test262-${atomics}-`));
  const argv = [
    harness,
    '--test262-dir', suite,
    '--preprocessor', path.join(here, 'preprocessor.cjs'),
    '--features-exclude', 'immutable-arraybuffer',
    '--threads', String(THREADS),
    '--timeout', '60000',
    '--temp-dir', tempDir,
    '--reporter', 'json',
    '--reporter-keys', 'file,scenario,result',
    // Another Node to run the tests on (tests/addon-arm64: linux-arm64 under qemu).
    ...(process.env.PARKLOT_TEST262_HOST ? ['--host-path', process.env.PARKLOT_TEST262_HOST] : []),
    ...globs,
  ];
  const env = {
    ...process.env,
    PARKLOT_TEST262_AGENT: path.join(here, 'agent.cjs'),
    PARKLOT_TEST262_ATOMICS: atomics,
  };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, argv, { env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      rmSync(tempDir, { recursive: true, force: true });
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`test262-harness (${atomics}) printed no results: ${error ?? ''}\n${stderr}`));
      }
    });
  });
}

function summarize(label, results) {
  const failed = results.filter((r) => !r.result.pass);
  console.log(`${label}: ${results.length - failed.length} passed, ${failed.length} failed`);
  for (const r of failed) {
    const file = path.relative(path.join(suite, 'test'), path.resolve(r.file));
    const why = (r.result.message ?? '').split('\n')[0];
    console.log(`  FAIL ${file} (${r.scenario}): ${why}`);
  }
  return failed.length;
}

// One after the other: the timing tests want the cores to themselves.
const mine = only === 'engine' ? null : await runSuite('parklot');
const engine = only === 'parklot' ? null : await runSuite('engine');
let failures = 0;
if (mine) failures = summarize('test262', mine);
if (engine) summarize("test262 (engine's Atomics)", engine);
process.exitCode = failures ? 1 : 0;
