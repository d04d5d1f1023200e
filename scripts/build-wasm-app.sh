#!/usr/bin/env bash
# Builds tests/wasm-app (a wasm-bindgen app with wasm-bindgen-rayon, parklot's
# browser test) three times, into tests/wasm-app/www/pkg/: parklot/ with
# parklot's locks and its `wasm-bindgen` feature, std/ with std's locks (the
# app's `std-mutex` feature), and parklot-undetected/ with parklot's locks
# but without that feature. demo/serve.mjs serves the page at /wasm-app/
# (?lock=std or ?lock=parklot-undetected for the other two; ?lock=parklot-async
# runs the parklot build with lock_async/read_async on the main thread), and
# bench/browser/wasm-peers.mjs runs the parklot build's peer benchmark
# (feature `peers`) at /wasm-app/peers.html.
set -euo pipefail
cd "$(dirname "$0")/.."

# The CLI must be exactly the version of the wasm-bindgen crate the app pins
# (scripts/build-wasm.sh installs it).
WBG_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' tests/wasm-app/Cargo.toml)
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WBG_VERSION" ]; then
    echo "build-wasm-app: needs wasm-bindgen-cli $WBG_VERSION: run scripts/build-wasm.sh first (it installs it)" >&2
    exit 1
fi

WASM=target/wasm32-unknown-unknown/release/parklot_wasm_app.wasm
for locks in parklot std parklot-undetected; do
    case $locks in
    parklot) features=(--features peers) ;; # also the peer benchmark's exports
    std) features=(--features std-mutex) ;;
    parklot-undetected) features=(--no-default-features) ;;
    esac
    # Inside the crate so its rust-toolchain.toml and .cargo/config.toml apply.
    (cd tests/wasm-app && cargo build --release --quiet "${features[@]}")
    out=tests/wasm-app/www/pkg/$locks
    rm -rf "$out"
    wasm-bindgen --target web --out-dir "$out" "tests/wasm-app/$WASM"
    echo "build-wasm-app: $out/parklot_wasm_app_bg.wasm ($(wc -c < "$out/parklot_wasm_app_bg.wasm") bytes)"
done
