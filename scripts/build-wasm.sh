#!/usr/bin/env bash
# Builds the wasm module (wasm/, shared memory + threads) and its JS glue
# into js/wasm-pkg/ (wasm-bindgen --target web), and the forms of both the
# npm package loads (scripts/wrap-glue.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."

# The CLI must be exactly the version of the wasm-bindgen crate wasm/ pins.
WBG_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' wasm/Cargo.toml)
[ -n "$WBG_VERSION" ] || { echo "build-wasm: no pinned wasm-bindgen in wasm/Cargo.toml" >&2; exit 1; }
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WBG_VERSION" ]; then
    echo "build-wasm: installing wasm-bindgen-cli $WBG_VERSION (a few minutes)"
    # Not --locked: a version in its lockfile is missing from the registry here.
    cargo install wasm-bindgen-cli --version "$WBG_VERSION"
fi

# Inside wasm/ so its rust-toolchain.toml and .cargo/config.toml apply.
(cd wasm && cargo build --release)

WASM=wasm/target/wasm32-unknown-unknown/release/parklot_wasm.wasm
OUT=js/wasm-pkg
if [ ! -f "$OUT/parklot_wasm_bg.wasm" ] || [ "$WASM" -nt "$OUT/parklot_wasm_bg.wasm" ]; then
    wasm-bindgen --target web --out-dir "$OUT" "$WASM"
fi
# The glue is an ES module; say so, or Node warns and re-parses it on every import.
echo '{ "type": "module" }' > "$OUT/package.json"
# What the npm package loads: the glue as a function, the module's bytes as JS.
node scripts/wrap-glue.mjs "$OUT"

# The memory must be imported and shared, or threads cannot share it.
# (wasm-bindgen renames the import `env.memory` to `./parklot_wasm_bg.js.memory`.)
if command -v wasm-objdump >/dev/null; then
    if ! wasm-objdump -x -j Import "$OUT/parklot_wasm_bg.wasm" | grep -q ' memory\[0\] .* shared <- .*\.memory$'; then
        echo "build-wasm: $OUT/parklot_wasm_bg.wasm does not import a shared memory" >&2
        exit 1
    fi
fi
echo "build-wasm: $OUT/parklot_wasm_bg.wasm ($(wc -c < "$OUT/parklot_wasm_bg.wasm") bytes)"
