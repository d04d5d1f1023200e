'use strict';
// Finds parklot/node's addon for the running platform. The package ships one
// build per platform, named after it (parklot.linux-x64-gnu.node,
// parklot.linux-arm64-gnu.node); elsewhere loading throws an error that says
// so, instead of the dynamic loader's "cannot open shared object file".

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

/**
 * Loads the addon built for `target` ({ platform, arch, libc }, default this
 * process's) from `dir`; throws a clear error where this package has no build.
 */
function loadAddon(target = {}, dir = __dirname) {
  const platform = platformName(target);
  const file = path.join(dir, buildFile(platform));
  try {
    return require(file);
  } catch (e) {
    if (e?.code === 'MODULE_NOT_FOUND' && e.message.includes(file)) {
      throw new Error(`parklot/node: no build for ${platform} in this package; the wasm package 'parklot' works everywhere`);
    }
    throw new Error(`parklot/node: its build for ${platform} (${file}) does not load: ${e?.message}`, { cause: e });
  }
}

module.exports = { platformName, buildFile, loadAddon };
