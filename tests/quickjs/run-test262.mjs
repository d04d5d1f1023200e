// Runs test262's Atomics.wait / notify / waitAsync tests (the same pinned
// copy and selection as tests/test262/run.mjs) through QuickJS, with
// quickjs-ng's own runner (run-test262, which gives $262.agent real threads),
// twice: built with parklot's Atomics (target/release/parklot-qjs-test262)
// and on QuickJS's own (target/release/qjs-own-test262). One process per
// test and scenario (non-strict, strict: as test262-harness counts them).
// Prints, side by side:
//
//   test262 (quickjs + parklot): N passed, M failed          (counted by npm test)
//   test262 (quickjs's own Atomics): N passed, M failed, K skipped   (the baseline)
//
// QuickJS has no Atomics.waitAsync: on its own Atomics those tests are
// skipped (as its test262.conf does) and listed as skipped.
// Usage: node tests/quickjs/run-test262.mjs [--only parklot|own] [file...]
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const suite = path.resolve(process.env.PARKLOT_TEST262_DIR ?? path.join(root, '..', 'shared', 'test262'));
const bin = path.join(root, 'target', 'release');
const JOBS = Number(process.env.PARKLOT_TEST262_THREADS ?? 4);
const TIMEOUT_MS = 60000;

const args = process.argv.slice(2);
let only = null;
if (args[0] === '--only') {
  only = args[1];
  args.splice(0, 2);
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return walk(p);
    return e.name.endsWith('.js') && !e.name.includes('_FIXTURE') ? [p] : [];
  });
}

/** The test's features and flags, from its front matter. */
function meta(file) {
  const text = readFileSync(file, 'utf8');
  const front = /\/\*---([\s\S]*?)---\*\//.exec(text)?.[1] ?? '';
  const list = (key) => {
    const inline = new RegExp(`^${key}:\\s*\\[([^\\]]*)\\]`, 'm').exec(front);
    if (inline) return inline[1].split(',').map((s) => s.trim()).filter(Boolean);
    const block = new RegExp(`^${key}:\\s*\\n((?:\\s+-.*\\n?)*)`, 'm').exec(front);
    return block ? block[1].split('\n').map((s) => s.replace(/^\s*-\s*/, '').trim()).filter(Boolean) : [];
  };
  return { features: list('features'), flags: list('flags') };
}

const files = (args.length
  ? args.map((f) => path.resolve(f))
  : ['wait', 'notify', 'waitAsync'].flatMap((d) => walk(path.join(suite, 'test', 'built-ins', 'Atomics', d)))
).sort();
if (!existsSync(path.join(suite, 'harness', 'atomicsHelper.js'))) {
  console.error(`test262: no suite at ${suite} (set PARKLOT_TEST262_DIR)`);
  process.exit(2);
}

// As tests/test262/run.mjs: immutable-arraybuffer is excluded from the selection.
const tests = [];
const allFeatures = new Set();
for (const file of files) {
  const { features, flags } = meta(file);
  if (features.includes('immutable-arraybuffer')) continue;
  features.forEach((f) => allFeatures.add(f));
  const scenarios = flags.includes('onlyStrict') ? ['strict']
    : flags.includes('noStrict') || flags.includes('raw') || flags.includes('module') ? ['nostrict']
    : ['nostrict', 'strict'];
  for (const scenario of scenarios) tests.push({ file, features, scenario });
}

const temp = mkdtempSync(path.join(tmpdir(), 'parklot-quickjs-test262-'));
const configFor = (mode) => {
  const config = path.join(temp, `${mode}.conf`);
  writeFileSync(config, [
    '[config]',
    `harnessdir=${path.join(suite, 'harness')}`,
    `mode=${mode}`,
    'async=yes',
    'module=yes',
    `features=${[...allFeatures].join(' ')}`,
    '',
  ].join('\n'));
  return config;
};
const configs = { nostrict: configFor('nostrict'), strict: configFor('strict') };

function runOne(runner, t) {
  return new Promise((resolve) => {
    execFile(runner, ['-v', '-c', configs[t.scenario], '-f', t.file], { timeout: TIMEOUT_MS, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const why = error?.killed ? `timed out after ${TIMEOUT_MS / 1000} s`
          : `${stdout}${stderr}`.split('\n').find((l) => /error|Error|assert/.test(l)) ?? (error ? `exit ${error.code ?? error.signal}` : '');
        // run-test262 skips a test whose feature its config lacks, and exits 0.
        const unknown = /unknown feature: .*/.exec(stdout)?.[0];
        resolve({ ...t, pass: !error && !unknown, why: unknown ?? why });
      });
  });
}

async function runSuite(name, skip) {
  const runner = path.join(bin, name);
  const results = [];
  const queue = tests.filter((t) => {
    if (skip(t)) results.push({ ...t, skipped: true });
    return !skip(t);
  });
  await Promise.all(Array.from({ length: JOBS }, async () => {
    while (queue.length) results.push(await runOne(runner, queue.shift()));
  }));
  return results;
}

function summarize(label, results) {
  const skipped = results.filter((r) => r.skipped);
  const ran = results.filter((r) => !r.skipped);
  const failed = ran.filter((r) => !r.pass);
  const tail = skipped.length ? `, ${skipped.length} skipped` : '';
  console.log(`${label}: ${ran.length - failed.length} passed, ${failed.length} failed${tail}`);
  for (const r of failed.sort((a, b) => a.file.localeCompare(b.file))) {
    console.log(`  FAIL ${path.relative(path.join(suite, 'test'), r.file)} (${r.scenario}): ${r.why.trim()}`);
  }
  if (skipped.length) {
    const dirs = new Set(skipped.map((r) => path.relative(path.join(suite, 'test'), path.dirname(r.file))));
    console.log(`  skipped (no Atomics.waitAsync in QuickJS): ${skipped.length} runs in ${[...dirs].join(', ')}`);
  }
  return failed.length;
}

const noWaitAsync = (t) => t.features.includes('Atomics.waitAsync');
// One after the other: the timing tests want the cores to themselves.
const mine = only === 'own' ? null : await runSuite('parklot-qjs-test262', () => false);
const own = only === 'parklot' ? null : await runSuite('qjs-own-test262', noWaitAsync);
rmSync(temp, { recursive: true, force: true });
let failures = 0;
if (mine) failures = summarize('test262 (quickjs + parklot)', mine);
if (own) summarize("test262 (quickjs's own Atomics)", own);
process.exitCode = failures ? 1 : 0;
