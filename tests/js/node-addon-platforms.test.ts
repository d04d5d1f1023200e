// parklot/node picks its build by platform (node/lib/load.cjs): the one in
// the platform's package (@parklot/node-<platform>) if installed, else the
// file named after the platform beside load.cjs; on a platform with neither,
// loading throws an error that says so (naming the package where npm left it
// out) and points at the wasm package. (The packed packages and a fresh
// install: pack.test.ts; the linux-arm64 build under qemu: tests/addon-arm64.)
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAddon, root } from './addon.js';

const load = createRequire(import.meta.url)(`${root}node/lib/load.cjs`) as {
  platformName(target?: { platform?: string; arch?: string; libc?: string }): string;
  buildFile(platform: string): string;
  loadAddon(target?: { platform?: string; arch?: string; libc?: string }, dir?: string): { queuedCounter?: unknown };
};

const noBuild = (platform: string) =>
  `parklot/node: no build for ${platform} in this package; the wasm package 'parklot' works everywhere`;

beforeAll(buildAddon);

/** Runs `node --require <fake> -e <code>` in a child with process.platform/arch replaced; returns its status and stderr. */
function withFakePlatform(cwd: string, platform: string, arch: string, code: string): { status: number | null; stderr: string; stdout: string } {
  const fake = `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} }); Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} });`;
  const r = spawnSync(process.execPath, ['--eval', `${fake}\n${code}`], { cwd, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('the build for this platform', () => {
  it('names platforms as the builds are named (libc on Linux only)', () => {
    expect(load.platformName({ platform: 'linux', arch: 'x64', libc: 'gnu' })).toBe('linux-x64-gnu');
    expect(load.platformName({ platform: 'linux', arch: 'arm64', libc: 'musl' })).toBe('linux-arm64-musl');
    expect(load.platformName({ platform: 'darwin', arch: 'arm64' })).toBe('darwin-arm64');
    expect(load.platformName({ platform: 'win32', arch: 'x64' })).toBe('win32-x64');
    expect(load.buildFile('linux-arm64-gnu')).toBe('parklot.linux-arm64-gnu.node');
  });

  it("on this machine (Linux, glibc) the build for its platform loads, and parklot/node uses it", async () => {
    expect(load.platformName()).toBe(`${process.platform}-${process.arch}-gnu`);
    const native = load.loadAddon();
    expect(typeof native.queuedCounter).toBe('function');
    const pl = (await import('parklot/node')) as unknown as { waiterCount(ta: Int32Array, i: number): number };
    expect(pl.waiterCount(new Int32Array(new SharedArrayBuffer(4)), 0)).toBe(0);
  });
});

describe('a platform without a build', () => {
  it.each([
    [{ platform: 'darwin', arch: 'arm64' }, 'darwin-arm64'],
    [{ platform: 'win32', arch: 'x64' }, 'win32-x64'],
    [{ platform: 'linux', arch: 'riscv64', libc: 'gnu' }, 'linux-riscv64-gnu'],
    [{ platform: 'linux', arch: 'x64', libc: 'musl' }, 'linux-x64-musl'],
  ])('loadAddon(%o) throws a clear error naming %s', (target, name) => {
    expect(() => load.loadAddon(target)).toThrow(new Error(noBuild(name)));
  });

  it.each([
    ['darwin', 'arm64', 'darwin-arm64'],
    ['linux', 'riscv64', 'linux-riscv64-gnu'],
  ])("require('parklot/node') on %s-%s (faked in a child process) throws it, and the wasm package still loads", (platform, arch, name) => {
    const r = withFakePlatform(
      root,
      platform,
      arch,
      `try { require('parklot/node'); console.log('loaded'); } catch (e) { console.log(e.message); }
       import('parklot').then((p) => console.log(typeof p.Runtime.create));`,
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${noBuild(name)}\nfunction\n`);
  });

  it("a build that is there but does not load says which, with the dynamic loader's error as its cause", () => {
    const dir = mkdtempSync(join(tmpdir(), 'parklot-load-'));
    try {
      const file = join(dir, load.buildFile('linux-x64-gnu'));
      writeFileSync(file, 'not a shared object');
      let err: unknown;
      try {
        load.loadAddon({ platform: 'linux', arch: 'x64', libc: 'gnu' }, dir);
      } catch (e) {
        err = e;
      }
      expect((err as Error).message).toMatch(new RegExp(`^parklot/node: its build for linux-x64-gnu \\(${file}\\) does not load: .*${file}`));
      expect((err as Error).cause).toBeInstanceOf(Error);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the platform's package, as npm installs it beside parklot", () => {
  // This machine's platform, so that the package's build is one that loads here.
  const platform = load.platformName();
  let dir: string;
  let lib: string;
  let pkg: string;

  beforeAll(() => {
    // node_modules/parklot/node/lib (no build in it) and node_modules/@parklot/node-<platform>.
    dir = mkdtempSync(join(tmpdir(), 'parklot-platform-pkg-'));
    lib = join(dir, 'node_modules/parklot/node/lib');
    pkg = join(dir, `node_modules/@parklot/node-${platform}`);
    mkdirSync(lib, { recursive: true });
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: `@parklot/node-${platform}`, version: '0.1.0', main: load.buildFile(platform) }));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loadAddon finds the build in the package (here with none beside load.cjs), and loads it', () => {
    copyFileSync(join(root, 'node/lib', load.buildFile(platform)), join(pkg, load.buildFile(platform)));
    // In a child: a second copy of the addon in this process would be a second ParkingLot.
    const code = `const native = require(${JSON.stringify(`${root}node/lib/load.cjs`)}).loadAddon({}, ${JSON.stringify(lib)});
      console.log(typeof native.queuedCounter, Object.keys(require.cache).filter((f) => f.endsWith('.node')).join());`;
    const r = spawnSync(process.execPath, ['--eval', code], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`function ${join(pkg, load.buildFile(platform))}\n`);
  });

  it("the package's build comes first: one that does not load is reported, not skipped for the file beside load.cjs", () => {
    const inPackage = join(pkg, load.buildFile(platform));
    writeFileSync(inPackage, 'not a shared object');
    copyFileSync(join(root, 'node/lib', load.buildFile(platform)), join(lib, load.buildFile(platform)));
    expect(() => load.loadAddon({}, lib)).toThrow(`parklot/node: its build for ${platform} (${inPackage}) does not load`);
  });

  it("a platform package parklot lists that npm left out (--omit=optional) is named in the error", () => {
    writeFileSync(join(lib, '../../package.json'), JSON.stringify({ name: 'parklot', optionalDependencies: { '@parklot/node-linux-arm64-gnu': '0.1.0' } }));
    expect(() => load.loadAddon({ platform: 'linux', arch: 'arm64', libc: 'gnu' }, lib)).toThrow(
      new Error(
        "parklot/node: its build for linux-arm64-gnu is the package @parklot/node-linux-arm64-gnu, which is not installed (an optional dependency of parklot: was it omitted, as by --omit=optional?); the wasm package 'parklot' works everywhere",
      ),
    );
    expect(() => load.loadAddon({ platform: 'linux', arch: 'riscv64', libc: 'gnu' }, lib)).toThrow(new Error(noBuild('linux-riscv64-gnu')));
  });
});
