#!/usr/bin/env bash
# Builds QuickJS twice from the rquickjs-sys crate's quickjs-ng sources (the
# parklot-quickjs crate, quickjs/): with Atomics.wait/notify/waitAsync served
# by parklot's C ABI, and on QuickJS's own Atomics; then runs the pinned
# test262 Atomics suite (../shared/test262: wait, notify, waitAsync) through
# both, printing
#
#   test262 (quickjs + parklot): N passed, M failed          (counted by npm test)
#   test262 (quickjs's own Atomics): N passed, M failed, K skipped   (the baseline)
#
# Incremental: QuickJS itself compiles once. Exits non-zero if a parklot run fails.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet -p parklot-quickjs
node tests/quickjs/run-test262.mjs "$@"
