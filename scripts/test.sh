#!/usr/bin/env bash
# Runs every parklot test, after installing what they need (scripts/setup.sh):
#
#   1. formatting and clippy
#   2. native tests on x86-64: unit, stress, memory, doc tests
#   3. the C ABI test program, linked against the static library
#   4. loom model checking of the core's races (and of the word parker's
#      protocol against a modelled futex)
#   5. Miri on the unit tests (strict provenance, 8 scheduler seeds), and
#      on them again with the portable parker (--cfg parklot_portable_parker)
#   5b. ThreadSanitizer over the native stress and exact-wake tests
#   6. ARM64: the Rust tests and the C test under qemu-user; parklot/node's
#      linux-arm64 build on Node's arm64 binary (tests/addon-arm64: its
#      checks and a slice of test262), on an otherwise idle machine: its
#      test262 slice relies on test262's 100 ms yields
#   7. wasm32: the core builds with and without the atomics feature; the
#      wasm module (shared memory, threads) builds and 4 Node workers share it
#   8. the npm package: TypeScript build, Vitest suite with real worker_threads
#      (including npm pack and a fresh install); Lock's and Semaphore's files
#      again with their uncontended calls in JS (as JavaScriptCore takes them)
#   8a. the portable checks (tests/runtimes) under Node 20, 22 and 24, Deno
#      and Bun, with node:worker_threads and (Deno, Bun) Web Workers
#   8b. test262's Atomics.wait/notify/waitAsync tests, run against parklot/node
#      (the Node-API addon) and against the engine's own Atomics, side by side
#   8c. the same tests through QuickJS built with parklot's Atomics (quickjs/)
#      and through QuickJS's own, side by side
#   9. the demo pages in Chromium (Playwright): the main command's server,
#      the lock arena, the wait/notify lab, pages that cannot share memory;
#      the packed package in a small app under the Vite dev server, a Vite
#      build, webpack 5, Rollup and no bundler, and on a page without
#      isolation; the arena and the lab in Firefox (puppeteer-core,
#      WebDriver BiDi); and in WebKit (WebKitGTK's WebKitWebDriver under
#      xvfb-run, plain W3C WebDriver) the arena, the lab, the package's
#      checks on a page, a terminated worker reaped, and the error of a
#      WebKit without SharedArrayBuffer
#   9a. a wasm-bindgen app (tests/wasm-app: Rayon in Web Workers, a Mutex and
#      an RwLock on the page's main thread) in Chromium, built three ways:
#      with parklot's wasm-bindgen feature it finishes with exact results and
#      prints the main thread's time acquiring; with std's locks, and with
#      parklot without the feature, it traps (Atomics.wait cannot be called)
#  10. the benchmark smoke (npm run bench -- --quick): every suite runs
#      briefly and checks its counters and outputs, never its timings
#
# Every step that starts processes or workers runs under scripts/deadline.sh,
# which names and kills (by process group) whatever is still running at its
# deadline. Ends with one line, "parklot: N passed, M failed", counting every
# test that ran; exits non-zero if any step failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/toolchain.env

bash scripts/setup.sh test

logs=target/test-logs
rm -rf "$logs"
mkdir -p "$logs"
step() { printf '\n== %s\n' "$*"; }

# Runs a command, keeping its output in $logs/<name>.log for the tally.
run() {
  local name=$1
  shift
  "$@" 2>&1 | tee "$logs/$name.log"
}

step "format and lints"
cargo fmt --all --check
cargo clippy --quiet --workspace --all-targets -- -D warnings

step "native tests (x86-64)"
run native bash scripts/deadline.sh 1200 "native tests" cargo test --workspace

step "C ABI (x86-64)"
run c-abi bash scripts/c-abi-test.sh

step "loom model checking"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
  run loom cargo test -p parklot --test loom --test loom_deadlock --lib --release

step "Miri (unit tests, strict provenance, 8 scheduler seeds; then 4 on the portable parker)"
# Miri interprets on one core: two lanes of seeds side by side use both
# (its clock is virtual, so sharing the cores changes no result). The
# portable parker (--cfg parklot_portable_parker: the std Mutex + Condvar
# parker that macOS, Windows and the BSDs run) builds into a target dir of
# its own, so the lanes never rebuild each other's crate. Each seed's output
# is kept in its log and shown when both lanes are done.
miri_seed() { # <log name> <seed> [portable]
  local env=(MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-seed=$2")
  [ -z "${3:-}" ] || env+=(RUSTFLAGS="--cfg parklot_portable_parker" CARGO_TARGET_DIR=target/miri-portable)
  env "${env[@]}" cargo "+$NIGHTLY" miri test -q -p parklot --lib >"$logs/$1.log" 2>&1
}
# Both builds first, one after the other, then the lanes run.
cargo "+$NIGHTLY" miri test -q -p parklot --lib --no-run
RUSTFLAGS="--cfg parklot_portable_parker" CARGO_TARGET_DIR=target/miri-portable \
  cargo "+$NIGHTLY" miri test -q -p parklot --lib --no-run
miri_lane_a() { for seed in 0 1 2 3 4 5; do miri_seed "miri-$seed" "$seed" || return 1; done; }
miri_lane_b() {
  for seed in 6 7; do miri_seed "miri-$seed" "$seed" || return 1; done
  for seed in 0 1 2 3; do miri_seed "miri-portable-$seed" "$seed" portable || return 1; done
}
miri_lane_a & lane_a=$!
miri_lane_b & lane_b=$!
miri_ok=0
wait "$lane_a" || miri_ok=1
wait "$lane_b" || miri_ok=1
for log in "$logs"/miri-*.log; do
  printf -- '-- %s\n' "$(basename "$log" .log)"
  cat "$log"
done
[ "$miri_ok" = 0 ] || { echo "Miri failed (logs above)" >&2; exit 1; }

step "ThreadSanitizer (native stress and exact-wake tests)"
# std rebuilt with the sanitizer (build-std, rust-src on the nightly). Not the
# fairness test: the sanitizer's slower atomics let an asker slip into a
# spinlock's release window, so its check that spinlocks starve cannot hold.
RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR=target/tsan TSAN_OPTIONS="halt_on_error=1" \
  run tsan bash scripts/deadline.sh 1800 "ThreadSanitizer tests" \
  cargo "+$NIGHTLY" test -Zbuild-std --target x86_64-unknown-linux-gnu -p parklot \
  --test stress --test exact --release

step "ARM64 under qemu (Rust tests, C ABI, parklot/node's linux-arm64 build)"
PARKLOT_STRESS_SCALE=0.1 run arm64 cargo test -p parklot --target aarch64-unknown-linux-gnu
run c-abi-arm64 bash scripts/c-abi-test.sh --target aarch64-unknown-linux-gnu
# parklot/node's linux-arm64 build on Node's arm64 binary, with nothing
# beside it (about two minutes, mostly qemu): test262's notify tests assume
# that an agent reaches its wait within a 100 ms yield (atomicsHelper.js's
# tryYield), which qemu on cores loom saturated once missed
# (notify-in-order-one-time.js).
bash scripts/build-node.sh --target aarch64-unknown-linux-gnu
run addon-arm64 bash scripts/deadline.sh 900 "addon-arm64" node tests/addon-arm64/run.mjs

step "wasm32 builds (atomics: memory.atomic parker; without: portable parker)"
CARGO_TARGET_DIR=target/wasm-check \
  RUSTFLAGS="-C target-feature=+atomics,+bulk-memory,+mutable-globals" \
  cargo "+$NIGHTLY" check --quiet -p parklot --lib --target wasm32-unknown-unknown
CARGO_TARGET_DIR=target/wasm-check-plain \
  cargo "+$NIGHTLY" check --quiet -p parklot --lib --target wasm32-unknown-unknown
echo "wasm32 check: ok"
bash scripts/build-wasm.sh
run wasm-smoke bash scripts/deadline.sh 300 "wasm smoke test" node tests/wasm-smoke.mjs

step "npm package (TypeScript build, Vitest with worker_threads)"
npm run --silent build:ts
run js bash scripts/deadline.sh 1200 "Vitest suite" npm run --silent test:js
# Node's V8 takes Lock's, RwLock's and Semaphore's uncontended calls through
# wasm, as V8 should (js/src/engine.ts, SWAP_IN_JS); JavaScriptCore takes
# them in JS. The files that hold, nest, contend for and lose locks and
# permits (dead holders, deaths inside the runtime, diagnostics) run again on
# the JS path, which a preload selects in every process and worker of the
# run (about a minute).
NODE_OPTIONS="--import=$PWD/tests/js/lock-path-js.mjs" \
  run js-lock-in-js bash scripts/deadline.sh 600 "Vitest suite (Lock in JS)" npx vitest run \
  tests/js/{mutex,semaphore,rwlock,upgradable,terminate,blocked-reap,condition,diagnostics,errors,hostile,travel,death-in-runtime,kinds,async,abort}.test.ts
# SpiderMonkey's form (LOCK_FLAT_IN_JS): Lock's lock()/unlock() written out
# in JS, RwLock and Semaphore through wasm; the files that hold, nest and
# lose Locks run once more with it selected (under a minute).
NODE_OPTIONS="--import=$PWD/tests/js/lock-path-flat.mjs" \
  run js-lock-flat bash scripts/deadline.sh 600 "Vitest suite (Lock flat in JS)" npx vitest run \
  tests/js/{mutex,terminate,blocked-reap,condition,diagnostics,errors,hostile,death-in-runtime,async}.test.ts

step "the portable checks on Node 20, 22 and 24, Deno and Bun (both kinds of workers)"
run runtimes bash scripts/deadline.sh 600 "runtime checks" node tests/runtimes/run.mjs

step "test262: Atomics.wait/notify/waitAsync, on parklot/node and on the engine's Atomics"
bash scripts/build-node.sh
run test262 bash scripts/deadline.sh 1200 "test262" node tests/test262/run.mjs

step "test262 through QuickJS: on parklot's Atomics (quickjs/) and on QuickJS's own"
run test262-quickjs bash scripts/deadline.sh 1200 "test262 (quickjs)" bash scripts/quickjs-test.sh

step "demo pages and the package in bundlers, in Chromium (Playwright); demo in Firefox and WebKit"
run browser bash scripts/deadline.sh 1200 "browser tests" npm run --silent test:browser

step "a wasm-bindgen app with Rayon and locks on the main thread, in Chromium (parklot spinning and awaited with lock_async; std and parklot without detection trap)"
# Builds it first (scripts/build-wasm-app.sh; its own target dir, about 1.5 min
# from cold), then serves it with the demo server built by the step above.
run wasm-app bash scripts/deadline.sh 900 "wasm app" npm run --silent test:wasm-app

step "benchmark smoke (correctness and outputs, never timings)"
run bench bash scripts/deadline.sh 1200 "benchmark smoke" bash scripts/bench.sh --quick

step "summary"
# cargo and libtest print "test result: ok. N passed; M failed; ..."; the C
# test, the wasm smoke test, the Vitest suites, test262 on parklot, the arm64
# addon, the wasm app and the benchmark smoke print "<name>: N passed, M failed" (test262's
# engine line, "test262 (engine's Atomics): ...", is a baseline and is not
# counted).
cat "$logs"/*.log | awk '
  /^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
  /^(c-abi|wasm-smoke|js|runtimes|browser|wasm-app|bench|test262|addon-arm64): [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ { p += $2; f += $4 }
  /^test262 \(quickjs \+ parklot\): [0-9]+ passed, [0-9]+ failed$/ { p += $5; f += $7 }
  END { printf "parklot: %d passed, %d failed\n", p, f; exit (f > 0) }
'
