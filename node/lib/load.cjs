'use strict';
// Finds parklot/node's addon for the running platform: first in its platform
// package (@parklot/node-linux-x64-gnu: the optionalDependency npm installed
// for this platform), else beside this file (where scripts/build-node.sh puts
// it in a checkout). Where neither is, loading throws an error that says so
// (naming the package where npm left it out), instead of the dynamic loader's
// "cannot open shared object file".

const { readFileSync } = require('node:fs');
const path = require('node:path');

/**
 * The C library of a Linux process: 'musl' or 'gnu' (glibc). Reads the
 * system's ldd script (about 50 us; musl's names musl); where there is
 * none, asks Node's diagnostic report (about 9 ms), which gives glibc's version.
 */
function linuxLibc() {
  try {
    return readFileSync('/usr/bin/ldd', 'latin1').includes('musl') ? 'musl' : 'gnu';
  } catch {
    return process.report?.getReport?.().header?.glibcVersionRuntime ? 'gnu' : 'musl';
  }
}

/** The platform's name as the builds are named: `linux-x64-gnu`, `darwin-arm64`, `win32-x64`. */
function platformName({ platform = process.platform, arch = process.arch, libc } = {}) {
  if (platform !== 'linux') return `${platform}-${arch}`;
  return `${platform}-${arch}-${libc ?? linuxLibc()}`;
}

/** The file name of the build for `platform` (a platformName). */
const buildFile = (platform) => `parklot.${platform}.node`;

/** The npm package that holds the build for `platform`. */
const packageName = (platform) => `@parklot/node-${platform}`;

/** The build for `platform` in its package, as resolved from `dir`, else the file in `dir`. */
function findBuild(platform, dir) {
  try {
    return require.resolve(`${packageName(platform)}/${buildFile(platform)}`, { paths: [dir] });
  } catch {
    return path.join(dir, buildFile(platform));
  }
}

/** Whether parklot's package.json (two levels above `dir`) lists `platform`'s package: npm left it out. */
function isOptionalDependency(platform, dir) {
  try {
    return packageName(platform) in (require(path.join(dir, '..', '..', 'package.json')).optionalDependencies ?? {});
  } catch {
    return false;
  }
}

/**
 * Loads the addon built for `target` ({ platform, arch, libc }, default this
 * process's), from its platform package as resolved from `dir` or from `dir`
 * itself; throws a clear error where there is neither.
 */
function loadAddon(target = {}, dir = __dirname) {
  const platform = platformName(target);
  const file = findBuild(platform, dir);
  try {
    return require(file);
  } catch (e) {
    if (e?.code === 'MODULE_NOT_FOUND' && e.message.includes(file)) {
      if (isOptionalDependency(platform, dir)) {
        throw new Error(
          `parklot/node: its build for ${platform} is the package ${packageName(platform)}, which is not installed (an optional dependency of parklot: was it omitted, as by --omit=optional?); the wasm package 'parklot' works everywhere`,
        );
      }
      throw new Error(`parklot/node: no build for ${platform} in this package; the wasm package 'parklot' works everywhere`);
    }
    throw new Error(`parklot/node: its build for ${platform} (${file}) does not load: ${e?.message}`, { cause: e });
  }
}

module.exports = { platformName, buildFile, loadAddon };
