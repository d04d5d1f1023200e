// The npm package as users get it: `npm pack`, install the tarball into a
// fresh app, run the README-style example (workers + this thread on one
// lock), and type-check a TypeScript consumer against the installed types.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const example = fileURLToPath(new URL('./pack-example/', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let dir: string;
let app: string;
let files: string[];
let tarball: string;

/** Runs a command; on failure the error carries its stdout and stderr. */
function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`, { cause: e });
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'parklot-pack-'));
  // --ignore-scripts: the global setup has built the package already, and
  // prepack's build would print to the stdout that --json must own.
  const packed = JSON.parse(run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], root)) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(dir, packed[0]!.filename);
  files = packed[0]!.files.map((f) => f.path);
  app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  run(npm, ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball], app);
  for (const f of ['main.mjs', 'worker.mjs', 'check.ts']) copyFileSync(join(example, f), join(app, f));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('ships the compiled package and the wasm module, not the sources or tests', () => {
    for (const f of [
      'package.json',
      'LICENSE-MIT',
      'LICENSE-APACHE',
      'js/dist/index.js',
      'js/dist/index.d.ts',
      'js/dist/runtime.js',
      'js/wasm-pkg/parklot_wasm.js',
      'js/wasm-pkg/parklot_glue.js',
      'js/wasm-pkg/parklot_wasm_base64.js',
      'js/wasm-pkg/parklot_wasm.d.ts',
      'js/wasm-pkg/parklot_wasm_bg.wasm',
      'js/wasm-pkg/package.json',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => /^(js\/src|tests|runtime|wasm\/|target|bench|scripts)/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/parklot/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest.type).toBe('module');
  });

  it("the README's Node example runs verbatim from the installed tarball", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = /## Node\n+```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'README: a js block right under "## Node"').toBeDefined();
    const [main, worker] = block!.split(/^(?=\/\/ worker\.mjs$)/m);
    const dir = join(app, 'readme');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.mjs'), main!);
    writeFileSync(join(dir, 'worker.mjs'), worker!);
    expect(run(process.execPath, ['main.mjs'], dir)).toBe('counter: 100000\n');
  });

  it('the fuller example (tests/js/pack-example) runs from the installed tarball: workers and the main thread on one lock', () => {
    const out = run(process.execPath, ['main.mjs'], app);
    expect(out).toBe('counter: 300000\n');
  });

  // With the DOM's types, and with neither the DOM's nor Node's (the .d.ts must not need them).
  it.each([
    ['lib ES2024 + DOM', ['ES2024', 'DOM']],
    ['lib ES2022 alone, no types', ['ES2022']],
  ])('a TypeScript consumer type-checks against the installed .d.ts (exports map, NodeNext, %s)', (_name, lib) => {
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib,
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['check.ts'],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    expect(run(process.execPath, [tsc, '-p', app], app)).toBe('');
  });
});
