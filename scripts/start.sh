#!/usr/bin/env bash
# The main job: builds the wasm module, the npm package and the demo pages,
# then serves the demo on 127.0.0.1 (cross-origin isolated) and prints its
# URL. Arguments go to the server (try --help; --port N picks the port).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
bash scripts/build-wasm.sh
say() { printf '[start] %s\n' "$*"; }
say "building the package and the demo pages"
node node_modules/typescript/bin/tsc -p js/tsconfig.json
node node_modules/vite/bin/vite.js build --config demo/vite.config.ts --logLevel error
node node_modules/typedoc/bin/typedoc --logLevel Error # the API reference, served at /api/
exec node demo/serve.mjs "$@"
