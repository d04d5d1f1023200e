#!/usr/bin/env bash
# Installs what parklot's commands need on a fresh machine and skips what is
# already there. Safe to run again and again.
#
#   scripts/setup.sh run    the pinned stable Rust (enough for `npm start`)
#   scripts/setup.sh test   also nightly with Miri and wasm32, the ARM64
#                           target, and Debian's cross gcc and qemu-user
set -euo pipefail

cd "$(dirname "$0")/.."
mode=${1:-test}
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

if ! has_toolchain "$STABLE"; then
  say "installing Rust $STABLE"
  rustup toolchain install "$STABLE" --profile minimal -c clippy -c rustfmt
fi
for c in clippy rustfmt; do
  has_component "$STABLE" "$c" || rustup component add --toolchain "$STABLE" "$c"
done
if [ "$mode" = run ]; then
  say "ready"
  exit 0
fi
has_target "$STABLE" aarch64-unknown-linux-gnu || rustup target add --toolchain "$STABLE" aarch64-unknown-linux-gnu

if ! has_toolchain "$NIGHTLY"; then
  say "installing Rust $NIGHTLY"
  rustup toolchain install "$NIGHTLY" --profile minimal -c rust-src -c miri -t wasm32-unknown-unknown
fi
for c in rust-src miri; do
  has_component "$NIGHTLY" "$c" || rustup component add --toolchain "$NIGHTLY" "$c"
done
has_target "$NIGHTLY" wasm32-unknown-unknown || rustup target add --toolchain "$NIGHTLY" wasm32-unknown-unknown

# Debian packages: a C compiler and qemu for the ARM64 build and tests.
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/include/stdio.h ] || need+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
if [ ${#need[@]} -gt 0 ]; then
  say "installing Debian packages: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# npm dev dependencies (TypeScript, Vitest) for the JS package and its tests.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies"
  # npm install, not npm ci: this npm writes lockfiles that its own ci rejects
  # (optional packages for other platforms are left out of the lock).
  npm install --no-audit --no-fund
fi

# Miri keeps its own sysroot; build it once, quietly, so tests do not pay for it.
if [ ! -e "$HOME/.cache/miri" ] || [ -z "$(ls -A "$HOME/.cache/miri" 2>/dev/null)" ]; then
  say "preparing the Miri sysroot"
  cargo "+$NIGHTLY" miri setup >/dev/null 2>&1 || cargo "+$NIGHTLY" miri setup
fi

say "ready"
