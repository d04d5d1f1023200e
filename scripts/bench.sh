#!/usr/bin/env bash
# `npm run bench`: installs and builds what the benchmarks need (Rust, the
# wasm module, the package and demo pages for the browser runs, Chromium,
# Firefox, WebKitGTK and Emscripten, the wasm app), then runs every suite
# (bench/run.mjs): native, wasm in Node workers, wasm in Chromium workers (and
# the lock arena in Firefox's and WebKit's), Rust peers in Chromium.
# Results, charts and tables go to bench/results/ (with --quick, a
# one-minute smoke: bench/results/quick/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh bench
bash scripts/build-wasm.sh
printf '[bench] building the package, the demo pages and the native suite\n'
node node_modules/typescript/bin/tsc -p js/tsconfig.json
node node_modules/vite/bin/vite.js build --config demo/vite.config.ts --logLevel error
node node_modules/typedoc/bin/typedoc --logLevel Error # the API reference, served at /api/
cargo build --quiet --release -p parklot-bench
# The wasm app's parklot build carries the wasm-peers suite (a few seconds
# when the app's test built it already; about 1.5 min from cold).
bash scripts/build-wasm-app.sh
exec node bench/run.mjs "$@"
