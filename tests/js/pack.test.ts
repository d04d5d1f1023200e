// The npm packages as users get them: `npm pack` the root package and
// parklot/node's platform packages (scripts/pack-platforms.mjs), install the
// root and this platform's tarballs into a fresh app, run the README-style
// example (workers + this thread on one lock), and type-check a TypeScript
// consumer against the installed types.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const example = fileURLToPath(new URL('./pack-example/', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// --offline: every package comes from a tarball here; the root's optional
// platform packages that are not (linux-arm64's) are looked up in npm's cache
// only, fail, and are skipped, as optional ones are.
const install = ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'];

type Packed = { name: string; filename: string; files: { path: string }[] };
let dir: string;
let app: string;
let files: string[];
let tarball: string;
/** The platform packages, by platform name (linux-x64-gnu), as packed. */
let platforms: Map<string, Packed>;

/** Runs a command; on failure the error carries its stdout and stderr. */
function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`, { cause: e });
  }
}

/** A fresh project named `name` in the temporary directory: its package.json (with `fields`) alone. */
function project(name: string, fields: Record<string, unknown> = {}): string {
  const at = join(dir, name);
  mkdirSync(at);
  writeFileSync(join(at, 'package.json'), JSON.stringify({ name, private: true, ...fields }));
  return at;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'parklot-pack-'));
  // Builds every addon the platform packages ship (incremental: a no-op when built).
  const packedPlatforms = JSON.parse(run(process.execPath, ['scripts/pack-platforms.mjs', '--json', dir], root)) as Packed[];
  platforms = new Map(packedPlatforms.map((p) => [p.name.replace('@parklot/node-', ''), p]));
  // --ignore-scripts: the global setup has built the package already, and
  // prepack's build would print to the stdout that --json must own.
  // The README and package.json swap that prepack and postpack make (scripts/package-swap.mjs).
  run(process.execPath, ['scripts/package-swap.mjs', 'use'], root);
  let packed: Packed[];
  try {
    packed = JSON.parse(run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], root)) as Packed[];
  } finally {
    run(process.execPath, ['scripts/package-swap.mjs', 'restore'], root);
  }
  tarball = join(dir, packed[0]!.filename);
  files = packed[0]!.files.map((f) => f.path);
  app = project('app', { type: 'module' });
  // As from the registry: parklot and the platform package npm picks for this machine.
  run(npm, [...install, tarball, platforms.get('linux-x64-gnu')!.filename], app);
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

  // The platform packages, by the platform names node/lib/load.cjs gives,
  // with the ELF machine each build must be (e_machine: 62 x86-64, 183 AArch64).
  const builds = [
    ['linux-x64-gnu', 'x64', 62],
    ['linux-arm64-gnu', 'arm64', 183],
  ] as const;

  it('the root package ships no addon build: the platform packages do', () => {
    expect(files).toContain('node/lib/load.cjs');
    expect(files.filter((f) => f.endsWith('.node'))).toEqual([]);
    expect([...platforms.keys()].sort()).toEqual(builds.map(([platform]) => platform).sort());
  });

  it.each(builds)(
    'the %s package holds its build alone (stripped, under the name the loader looks for), the license texts, and os/cpu/libc',
    (platform, cpu, machine) => {
      const packed = platforms.get(platform)!;
      const load = createRequire(import.meta.url)(join(app, 'node_modules/parklot/node/lib/load.cjs')) as { buildFile(platform: string): string };
      const file = load.buildFile(platform);
      expect(packed.name).toBe(`@parklot/node-${platform}`);
      expect(packed.files.map((f) => f.path).sort()).toEqual([file, 'package.json', 'LICENSE-MIT', 'LICENSE-APACHE'].sort());
      const unpacked = join(dir, 'unpacked', platform);
      mkdirSync(unpacked, { recursive: true });
      run('tar', ['-xzf', packed.filename, '-C', unpacked], dir);
      const manifest = JSON.parse(readFileSync(join(unpacked, 'package/package.json'), 'utf8')) as Record<string, unknown>;
      const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
      expect(manifest).toMatchObject({ os: ['linux'], cpu: [cpu], libc: ['glibc'], main: file, files: [file, 'LICENSE-MIT', 'LICENSE-APACHE'] });
      for (const key of ['version', 'license', 'repository']) expect(manifest[key], key).toEqual(rootManifest[key]);
      const bytes = readFileSync(join(unpacked, 'package', file));
      expect(bytes.subarray(0, 4).toString('latin1'), file).toBe('\x7fELF');
      expect(bytes.readUInt16LE(18), `${file}: ELF machine`).toBe(machine);
      // Stripped: no symbol table, no debug info.
      expect(elfSections(bytes).filter((name) => name === '.symtab' || name.startsWith('.debug')), file).toEqual([]);
      expect(bytes.length, file).toBeLessThan(1 << 20);
    },
  );

  it('the root package declares no os/cpu (its wasm part runs everywhere) and lists each platform package as an optional dependency at its version', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/parklot/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.os).toBeUndefined();
    expect(manifest.cpu).toBeUndefined();
    expect(manifest.libc).toBeUndefined();
    expect(manifest.optionalDependencies).toEqual(Object.fromEntries([...platforms.values()].map((p) => [p.name, manifest.version])));
    // The repository's package.json is back, without them (scripts/package-swap.mjs).
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).optionalDependencies).toBeUndefined();
  });

  it("installing another platform's package is refused by npm (EBADPLATFORM), naming what it wants", () => {
    const other = project('other');
    // Its own log level: under `npm run --silent` (as `npm test` runs this
    // suite) npm_config_loglevel=silent is inherited, and npm prints nothing.
    const r = spawnSync(npm, [...install, '--loglevel=error', platforms.get('linux-arm64-gnu')!.filename], { cwd: other, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/npm error code EBADPLATFORM/);
    expect(r.stderr).toMatch(/Unsupported platform for @parklot\/node-linux-arm64-gnu@[\d.]+: wanted \{"os":"linux","cpu":"arm64","libc":"glibc"\}/);
  });

  it('parklot/node from the installed tarballs loads its linux-x64 build from its package: a worker woken by exact count, and no build elsewhere', () => {
    expect(existsSync(join(app, 'node_modules/@parklot/node-linux-x64-gnu/parklot.linux-x64-gnu.node'))).toBe(true);
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

  it('installed without its optional dependencies (--omit=optional), parklot installs and parklot/node names the package it lacks', () => {
    const omitted = project('omitted');
    run(npm, [...install, '--omit=optional', tarball], omitted);
    const check = "try { require('parklot/node'); } catch (e) { console.log(e.message); }";
    expect(run(process.execPath, ['-e', check], omitted)).toBe(
      "parklot/node: its build for linux-x64-gnu is the package @parklot/node-linux-x64-gnu, which is not installed (an optional dependency of parklot: was it omitted, as by --omit=optional?); the wasm package 'parklot' works everywhere\n",
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
