#!/usr/bin/env bash
# The main job. Until the browser demo exists: a native contention demo that
# races parklot's Lock and WordLock against std, parking_lot and pthread
# mutexes and prints each lock's throughput and per-thread spread.
# Arguments go to the demo (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
exec cargo run --quiet --release -p parklot-bench --bin contend -- "$@"
