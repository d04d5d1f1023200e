#!/usr/bin/env bash
# Builds parklot's Node-API addon (the `node/` crate, napi-rs; release,
# stripped) and copies it to node/lib/parklot.<platform>.node, where
# `parklot/node` (node/lib/load.cjs) looks for it.
#
#   scripts/build-node.sh                                     # this machine's platform
#   scripts/build-node.sh --target aarch64-unknown-linux-gnu  # linux-arm64-gnu (cross)
#   scripts/build-node.sh --all    # every build the package ships: linux-x64-gnu, linux-arm64-gnu
#
# Incremental: cargo rebuilds only what changed. Works from any directory.
set -euo pipefail
cd "$(dirname "$0")/.."

# The builds the npm package ships: a Rust target and the platform name the
# loader gives it (package.json's "files" lists the same).
shipped=(x86_64-unknown-linux-gnu:linux-x64-gnu aarch64-unknown-linux-gnu:linux-arm64-gnu)

cargo_home=$(cd "${CARGO_HOME:-$HOME/.cargo}" && pwd)

# Builds for $1 (a Rust target, or "" for this machine), named $2.
build() {
  local target=$1 platform=$2 args=() dir lib
  # A target directory of its own: the flags below would otherwise rebuild
  # what the tests build in target/ (cargo keys its cache on them).
  local target_dir="${CARGO_TARGET_DIR:-target}/addon"
  if [ -n "$target" ] && [ "$target" != "$(rustc -vV | sed -n 's/^host: //p')" ]; then
    args=(--target "$target")
    dir="$target_dir/$target/release"
    if ! rustup target list --installed | grep -qx "$target"; then
      echo "build-node: the Rust target $target is missing: run scripts/setup.sh test" >&2
      exit 1
    fi
  else
    dir="$target_dir/release"
  fi
  # The addon ships in the npm package: panic locations name its crates'
  # sources, which must not be this machine's paths (checked below).
  RUSTFLAGS="--remap-path-prefix=$cargo_home=cargo --remap-path-prefix=$PWD=parklot" \
    CARGO_TARGET_DIR="$target_dir" cargo build --quiet --release -p parklot-node "${args[@]}"
  case "$platform" in
    darwin-*) lib="$dir/libparklot_node.dylib" ;;
    win32-*) lib="$dir/parklot_node.dll" ;;
    *) lib="$dir/libparklot_node.so" ;;
  esac
  bash scripts/no-machine-paths.sh "$lib"
  local out="node/lib/parklot.$platform.node"
  # Copy only when it changed, so that a running process keeps its mapping;
  # through a file of its own, so that concurrent builds do not mix.
  if ! cmp -s "$lib" "$out"; then
    local tmp
    tmp=$(mktemp "node/lib/.parklot.XXXXXX")
    cp "$lib" "$tmp"
    chmod 755 "$tmp"
    mv "$tmp" "$out"
  else
    touch "$out" # up to date with the sources it was built from
  fi
  echo "node addon: $out ($(wc -c <"$out") bytes)"
}

case "${1:-}" in
  "") build "" "$(node -p "require('./node/lib/load.cjs').platformName()")" ;;
  --all)
    for entry in "${shipped[@]}"; do build "${entry%%:*}" "${entry#*:}"; done
    ;;
  --target)
    for entry in "${shipped[@]}"; do
      if [ "${entry%%:*}" = "${2:-}" ]; then build "$2" "${entry#*:}" && exit 0; fi
    done
    echo "build-node: no platform name for target '${2:-}' (known: ${shipped[*]%%:*})" >&2
    exit 2
    ;;
  *)
    sed -n '2,10s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
