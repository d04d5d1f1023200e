#!/usr/bin/env bash
# Builds the wasm module (wasm/, shared memory + threads) and its JS glue
# into js/wasm-pkg/ (wasm-bindgen --target web), and the forms of both the
# npm package loads (scripts/wrap-glue.mjs); then the benchmarks' build of
# the module, with their exports (the `bench` feature), into js/wasm-pkg-bench/.
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
# std's own allocator must not be linked: it serves std's registrations of
# thread-local destructors (which wasm never runs) behind a global lock that
# a worker terminated inside it would leave held (runtime/src/sys/mod.rs,
# `NoDestructor`). Its name is in the module's name section until wasm-bindgen
# removes that section below.
if grep -q -a 'dlmalloc' "$WASM"; then
    echo "build-wasm: $WASM links std's dlmalloc: a thread-local with a destructor? (runtime/src/sys/mod.rs, NoDestructor)" >&2
    exit 1
fi
if [ ! -f "$OUT/parklot_wasm_bg.wasm" ] || [ "$WASM" -nt "$OUT/parklot_wasm_bg.wasm" ]; then
    # Without the name section (function names for stack traces): about 28 KB
    # of the module. binaryen's wasm-opt is not used: version 132 saves only
    # 1.5 KB gzip more, and its -O3 ignores #[inline(never)], which keeps each
    # memory.atomic.wait32 out of its caller's loop for a bug of Node 20's
    # baseline compiler (runtime/src/sys/wasm.rs): inlined into the benchmark's
    # loop of "not-equal" waits, it counted 1 instead of 100 (right with --no-liftoff).
    wasm-bindgen --target web --remove-name-section --out-dir "$OUT" "$WASM"
fi
# The module ships in the npm package: no path of the machine that built it
# (wasm/.cargo/config.toml leaves out the panic locations that would).
bash scripts/no-machine-paths.sh "$OUT/parklot_wasm_bg.wasm"
# Let the package release a closed runtime's instance: an ES module is never
# collected, so without this each glue copy would keep its instance and the
# memory (a 1 GiB reservation) alive for the life of the process; with it, a
# released copy can be initialized again by the next runtime (js/src/loader.ts).
if ! grep -q '__parklot_release' "$OUT/parklot_wasm.js"; then
    cat >> "$OUT/parklot_wasm.js" <<'EOF'

/** Added by parklot's scripts/build-wasm.sh: forgets the instance, so that `initSync` may run again. */
export function __parklot_release() {
    wasm = undefined;
    wasmInstance = undefined;
    wasmModule = undefined;
    cachedUint8ArrayMemory0 = null;
    __wbg_init_promise = undefined;
}
EOF
    cat >> "$OUT/parklot_wasm.d.ts" <<'EOF'

/** Added by parklot's scripts/build-wasm.sh: forgets the instance, so that `initSync` may run again. */
export function __parklot_release(): void;
EOF
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

# For bench/wasm and the demo's arena. A target dir of its own, so that the
# two builds do not rebuild each other in turn.
(cd wasm && cargo build --release --features bench --target-dir target/bench)
WASM=wasm/target/bench/wasm32-unknown-unknown/release/parklot_wasm.wasm
OUT=js/wasm-pkg-bench
if [ ! -f "$OUT/parklot_wasm_bg.wasm" ] || [ "$WASM" -nt "$OUT/parklot_wasm_bg.wasm" ]; then
    wasm-bindgen --target web --remove-name-section --out-dir "$OUT" "$WASM"
fi
echo '{ "type": "module" }' > "$OUT/package.json"
echo "build-wasm: $OUT/parklot_wasm_bg.wasm ($(wc -c < "$OUT/parklot_wasm_bg.wasm") bytes)"
