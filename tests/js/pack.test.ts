// The npm package as users get it: `npm pack`, install the tarball into a
// fresh app, run the README-style example (workers + this thread on one
// lock), and type-check a TypeScript consumer against the installed types.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
  // Every addon build the package ships (incremental: a no-op when built).
  run('bash', ['scripts/build-node.sh', '--all'], root);
  dir = mkdtempSync(join(tmpdir(), 'parklot-pack-'));
  // --ignore-scripts: the global setup has built the package already, and
  // prepack's build would print to the stdout that --json must own.
  // The README swap that prepack and postpack make (scripts/package-readme.mjs).
  run(process.execPath, ['scripts/package-readme.mjs', 'use'], root);
  let packed: { filename: string; files: { path: string }[] }[];
  try {
    packed = JSON.parse(run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], root)) as typeof packed;
  } finally {
    run(process.execPath, ['scripts/package-readme.mjs', 'restore'], root);
  }
  tarball = join(dir, packed[0]!.filename);
  files = packed[0]!.files.map((f) => f.path);
  app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  run(npm, ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball], app);
  for (const f of ['main.mjs', 'worker.mjs', 'check.ts']) copyFileSync(join(example, f), join(app, f));
}, 300_000);
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

  /** The section names of a 64-bit little-endian ELF file. */
  function elfSections(elf: Buffer): string[] {
    const table = Number(elf.readBigUInt64LE(0x28));
    const [size, count, namesAt] = [elf.readUInt16LE(0x3a), elf.readUInt16LE(0x3c), elf.readUInt16LE(0x3e)];
    const names = Number(elf.readBigUInt64LE(table + namesAt * size + 0x18));
    return Array.from({ length: count }, (_, i) => {
      const at = names + elf.readUInt32LE(table + i * size);
      return elf.toString('latin1', at, elf.indexOf(0, at));
    });
  }

  // The builds node/lib/load.cjs looks for, by platform name, with the ELF
  // machine each must be (e_machine: 62 x86-64, 183 AArch64).
  const builds = [
    ['linux', 'x64', 62],
    ['linux', 'arm64', 183],
  ] as const;

  it('ships the Node addon for linux-x64 and linux-arm64 (glibc), stripped, under the names the loader looks for', () => {
    const load = createRequire(import.meta.url)(join(app, 'node_modules/parklot/node/lib/load.cjs')) as {
      platformName(t: { platform: string; arch: string; libc: string }): string;
      buildFile(platform: string): string;
    };
    expect(files).toContain('node/lib/load.cjs');
    expect(files.filter((f) => f.endsWith('.node')).length).toBe(builds.length);
    for (const [platform, arch, machine] of builds) {
      const file = `node/lib/${load.buildFile(load.platformName({ platform, arch, libc: 'gnu' }))}`;
      expect(files).toContain(file);
      const bytes = readFileSync(join(app, 'node_modules/parklot', file));
      expect(bytes.subarray(0, 4).toString('latin1'), file).toBe('\x7fELF');
      expect(bytes.readUInt16LE(18), `${file}: ELF machine`).toBe(machine);
      // Stripped: no symbol table, no debug info.
      expect(elfSections(bytes).filter((name) => name === '.symtab' || name.startsWith('.debug')), file).toEqual([]);
      expect(bytes.length, file).toBeLessThan(1 << 20);
    }
  });

  it('the package declares no os/cpu: it installs everywhere (the wasm part runs everywhere; parklot/node says where it has no build)', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/parklot/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.os).toBeUndefined();
    expect(manifest.cpu).toBeUndefined();
    expect(manifest.libc).toBeUndefined();
  });

  it('parklot/node from the installed tarball loads its linux-x64 build: a worker woken by exact count, and no build elsewhere', () => {
    const check = `
      const { Worker } = require('node:worker_threads');
      const pl = require('parklot/node');
      const sab = new SharedArrayBuffer(4);
      const ta = new Int32Array(sab);
      const w = new Worker("const pl = require('parklot/node'); const { workerData, parentPort } = require('node:worker_threads'); parentPort.postMessage(pl.wait(new Int32Array(workerData), 0, 0));", { eval: true, workerData: sab });
      w.once('message', (m) => console.log(m, pl.waiterCount(ta, 0)));
      (function poll() { if (pl.waiterCount(ta, 0) === 1) console.log('woke', pl.notify(ta, 0, 5)); else setTimeout(poll, 5); })();`;
    expect(run(process.execPath, ['-e', check], app)).toBe('woke 1\nok 0\n');
    const fake = "Object.defineProperty(process, 'arch', { value: 'riscv64' }); try { require('parklot/node'); } catch (e) { console.log(e.message); }";
    expect(run(process.execPath, ['-e', fake], app)).toBe(
      "parklot/node: no build for linux-riscv64-gnu in this package; the wasm package 'parklot' works everywhere\n",
    );
  });

  /** Runs the js block right under `heading` in `readme` (main.mjs, then worker.mjs) in the app; returns what it printed. */
  function runExample(readme: string, heading: string, name: string): string {
    const block = new RegExp(`${heading.replace(/[()]/g, '\\$&')}\\n+\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
    expect(block, `${name}: a js block right under "${heading}"`).toBeDefined();
    const [main, worker] = block!.split(/^(?=\/\/ worker\.mjs$)/m);
    const dir = join(app, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.mjs'), main!);
    writeFileSync(join(dir, 'worker.mjs'), worker!);
    return run(process.execPath, ['main.mjs'], dir);
  }

  it("the README's Node example runs verbatim from the installed tarball", () => {
    expect(runExample(readFileSync(join(root, 'README.md'), 'utf8'), '## Node', 'readme')).toBe('counter: 100000\n');
  });

  it("the package's README is the users' (js/README.md), the repository's is back, and its Node example runs verbatim", () => {
    expect(files).toContain('README.md');
    const packedReadme = readFileSync(join(app, 'node_modules/parklot/README.md'), 'utf8');
    expect(packedReadme).toBe(readFileSync(join(root, 'js/README.md'), 'utf8'));
    expect(packedReadme).not.toMatch(/npm (start|test)/); // the developers' two commands stay in the repository
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toMatch(/## The two commands/);
    expect(runExample(packedReadme, '## Node (also Deno and Bun)', 'users-readme')).toBe('counter: 100000\n');
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/parklot/package.json'), 'utf8')) as Record<string, { url?: string } | string>;
    expect(manifest['repository']).toBeDefined();
    expect(manifest['homepage']).toBeDefined();
    expect(manifest['bugs']).toBeDefined();
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

  // Node16 resolution from a CommonJS file: `require('parklot/node')` takes
  // index.d.cts, which imports the ESM types (TS1541 without its resolution-mode).
  it('a CommonJS TypeScript consumer (.cts, node16) type-checks against parklot/node', () => {
    const dir = join(app, 'cts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'check.cts'),
      "import atomics = require('parklot/node');\nconst ta = new Int32Array(new SharedArrayBuffer(4));\nconst n: number = atomics.notify(ta, 0, 1);\nvoid n;\n",
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'node16', moduleResolution: 'node16', lib: ['ES2022'], types: [], strict: true, noEmit: true, skipLibCheck: false },
        files: ['check.cts'],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    expect(run(process.execPath, [tsc, '-p', dir], dir)).toBe('');
  });
});
