#!/usr/bin/env bash
# The scaffold scale benchmark (issue 14, docs/performance.md "Scaffold and import at scale"):
# writes CASES studies × SERIES series × SLICES slices of SIZE² uncompressed 16-bit MR slices,
# then times, in one run and on the same warm files, `neurorater scaffold`, `neurorater import` of
# the bundle it wrote, `cp -r` of the export (the cost of writing the bytes at all), and
# scripts/bench/pydicom_walk_group.py (pydicom reading every header and
# grouping by study and series: what a user's own script would do, writing nothing).
#
#   scripts/bench/scaffold_scale.sh 100 4 150 256   # 60,000 files (≈ 8 GB twice: export + bundle)
#   scripts/bench/scaffold_scale.sh 10 4 150 256    # 6,000 files
#
# Needs: a built workspace (CARGO_TARGET_DIR honoured), python3 with pydicom and numpy, GNU time.
# WORK (default: a new temporary folder) is deleted at the end unless KEEP=1.
set -euo pipefail
cases=${1:?usage: scaffold_scale.sh CASES SERIES SLICES [SIZE]}
series=${2:?}
slices=${3:?}
size=${4:-256}
here=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$here/target}
work=${WORK:-$(mktemp -d)}
trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$work"' EXIT

(cd "$here" && cargo build --workspace --examples --quiet)
files=$("$target/debug/examples/scale_export" "$work/export" "$cases" "$series" "$slices" "$size")
echo "export: $files files of ${size}² in $work/export ($(du -sh "$work/export" | cut -f1))"

measure() { # NAME COMMAND...: wall seconds and peak resident memory, then files/s
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/$name.out" 2> "$work/$name.err" ||
    { cat "$work/$name.err"; exit 1; }
  read -r seconds kib < "$work/time"
  printf '%-10s %8.2f s  %7.0f files/s  peak %6.0f MB\n' "$name" "$seconds" \
    "$(echo "$files / $seconds" | bc -l)" "$(echo "$kib / 1024" | bc -l)"
}

# What writing a copy of every byte costs on this disk, without reading a header: the floor for
# any scaffold that writes de-identified copies.
measure cp-r cp -r "$work/export" "$work/plain-copy"
rm -rf "$work/plain-copy"
measure scaffold "$target/debug/neurorater" scaffold "$work/export" --out "$work/bundle"
measure import "$target/debug/neurorater" import "$work/bundle" --db "$work/study.sqlite"
measure pydicom python3 "$here/scripts/bench/pydicom_walk_group.py" "$work/export"
tail -1 "$work/scaffold.out"
cat "$work/pydicom.out"
