#!/usr/bin/env bash
# Builds parklot's static library and tests its C ABI from C
# (runtime/tests/c/parklot_test.c against runtime/include/parklot.h).
#
# Usage:
#   scripts/c-abi-test.sh                                      # native
#   scripts/c-abi-test.sh --target aarch64-unknown-linux-gnu   # ARM64, run under qemu-user
#
# Works from any directory. Output goes to target/c-abi/ (native) or
# target/c-abi-aarch64/.
set -euo pipefail

cd "$(dirname "$0")/.."

usage() { sed -n '2,9s/^# \{0,1\}//p' "$0"; }
say() { printf '[c-abi] %s\n' "$*"; }

target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?--target needs a value}"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

target_dir="${CARGO_TARGET_DIR:-target}"
case "$target" in
  "")
    cargo_args=()
    cc=cc
    nm=nm
    lib="$target_dir/release/libparklot.a"
    out="$target_dir/c-abi"
    runner=()
    ;;
  aarch64-unknown-linux-gnu)
    cargo_args=(--target "$target")
    cc=aarch64-linux-gnu-gcc
    nm=aarch64-linux-gnu-nm
    lib="$target_dir/$target/release/libparklot.a"
    out="$target_dir/c-abi-aarch64"
    runner=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
    ;;
  *)
    echo "unsupported target: $target (native or aarch64-unknown-linux-gnu)" >&2
    exit 2
    ;;
esac

header=runtime/include/parklot.h
cflags=(-std=c11 -O2 -Wall -Wextra -Werror -pthread -I runtime/include)
libs=(-lpthread -ldl -lm)

say "building libparklot.a${target:+ for $target}"
cargo build --release -p parklot "${cargo_args[@]}"

# Every function the library exports under C linkage must be declared in the header.
say "checking that $header declares every exported parklot_* function"
exported=$("$nm" -g --defined-only "$lib" 2>/dev/null | awk '$2 == "T" && $3 ~ /^parklot_/ { print $3 }' | sort -u)
declared=$(grep -oE '\bparklot_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
if [ -z "$exported" ] || [ "$exported" != "$declared" ]; then
  echo "exported and declared functions differ:" >&2
  diff <(echo "$exported") <(echo "$declared") >&2 || true
  exit 1
fi

# The header must stand alone in C99 and in C++ (extern "C" and static_assert guards).
say "compiling $header alone as C99 and as C++"
"$cc" -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -x c "$header"
if command -v c++ >/dev/null 2>&1; then
  c++ -fsyntax-only -x c++ -std=c++11 -Wall -Wextra -Werror "$header"
else
  say "no c++ here: skipping the C++ check"
fi

say "compiling runtime/tests/c/parklot_test.c"
mkdir -p "$out"
"$cc" "${cflags[@]}" runtime/tests/c/parklot_test.c "$lib" "${libs[@]}" -o "$out/parklot_test"

say "running $out/parklot_test${runner[0]:+ under ${runner[*]}}"
"${runner[@]}" "$out/parklot_test"
