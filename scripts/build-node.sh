#!/usr/bin/env bash
# Builds parklot's Node-API addon (the `node/` crate, napi-rs) and copies it
# to node/lib/parklot.node, where `parklot/node` loads it. Incremental: cargo
# rebuilds only what changed. Works from any directory.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p parklot-node
case "$(uname -s)" in
  Darwin) lib="$target_dir/release/libparklot_node.dylib" ;;
  *) lib="$target_dir/release/libparklot_node.so" ;;
esac
# Copy only when it changed, so that a running process keeps its mapping.
if ! cmp -s "$lib" node/lib/parklot.node; then
  cp "$lib" node/lib/parklot.node.tmp
  mv node/lib/parklot.node.tmp node/lib/parklot.node
else
  touch node/lib/parklot.node # up to date with the sources it was built from
fi
echo "node addon: node/lib/parklot.node"
