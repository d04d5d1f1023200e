#!/usr/bin/env bash
# Fails if a built file names a path of the machine that built it: the
# workspace's, or Cargo's and rustup's homes (panic locations carry the source
# paths of the crates they come from). The npm package ships these files.
#
#   scripts/no-machine-paths.sh FILE...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
paths=("$root/" "${CARGO_HOME:-$HOME/.cargo}/" "${RUSTUP_HOME:-$HOME/.rustup}/")
status=0
for file in "$@"; do
    for path in "${paths[@]}"; do
        if grep -a -q -F -e "$path" "$file"; then
            echo "no-machine-paths: $file names $path" >&2
            status=1
        fi
    done
done
exit $status
