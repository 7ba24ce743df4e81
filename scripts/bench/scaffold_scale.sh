#!/usr/bin/env bash
# The scaffold scale benchmark (issue 14, docs/performance.md "Scaffold and import at scale"):
# writes CASES studies × SERIES series × SLICES slices of SIZE² uncompressed 16-bit MR slices,
# then times, in one run and on the same warm files:
#   cp-r      `cp -r` of the export: what writing every byte once costs on this disk;
#   scaffold  `neurorater scaffold`, the whole run (scan, de-identified copies, bundle, key);
#   scan      its scan alone: finding the files, reading every header, grouping and ordering
#             (the phases it reports on its `took:` line before "writing the bundle");
#   import    `neurorater import` of the bundle it wrote;
#   pydicom   scripts/bench/pydicom_walk_group.py, pydicom reading every header and grouping by
#             study and series, writing nothing: the scan's counterpart. Its walk and grouping
#             alone (interpreter start and imports left out) are `pydicom-scan`.
# Files/s are over the export's files; wall time and peak resident memory from GNU time.
#
#   scripts/bench/scaffold_scale.sh 100 4 150 256   # 60,000 files (≈ 8 GB twice: export + bundle)
#   scripts/bench/scaffold_scale.sh 10 4 150 256    # 6,000 files
#
# Needs: cargo (CARGO_TARGET_DIR honoured), python3 with pydicom and numpy, GNU time, bc.
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

# Built as the workspace, so that the test suite's build (the same features) is reused.
(cd "$here" && cargo build --quiet --workspace --bin neurorater --example scale_export)
files=$("$target/debug/examples/scale_export" "$work/export" "$cases" "$series" "$slices" "$size")
echo "export: $files files of ${size}² in $work/export ($(du -sh "$work/export" | cut -f1))"

measure() { # NAME COMMAND...: wall seconds and peak resident memory, then files/s
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/$name.out" 2> "$work/$name.err" ||
    { cat "$work/$name.err"; exit 1; }
  read -r seconds kib < "$work/time"
  printf '%-12s %8.2f s  %7.0f files/s  peak %6.0f MB\n' "$name" "$seconds" \
    "$(echo "$files / $seconds" | bc -l)" "$(echo "$kib / 1024" | bc -l)"
}

# What writing a copy of every byte costs on this disk, without reading a header: the floor for
# any scaffold that writes de-identified copies.
measure cp-r cp -r "$work/export" "$work/plain-copy"
rm -rf "$work/plain-copy"
# The copy's dirty pages written out first, so the scaffold does not pay for them.
sync
measure scaffold "$target/debug/neurorater" scaffold "$work/export" --out "$work/bundle"
measure import "$target/debug/neurorater" import "$work/bundle" --db "$work/study.sqlite"
measure pydicom python3 "$here/scripts/bench/pydicom_walk_group.py" "$work/export"

rate() { # NAME SECONDS
  printf '%-12s %8.2f s  %7.0f files/s\n' "$1" "$2" "$(echo "$files / $2" | bc -l)"
}
# "took: finding files 0.05 s, reading headers 0.61 s, writing the bundle 4.80 s"
scan=$(grep '^took:' "$work/scaffold.out" |
  sed -E 's/.*finding files ([0-9.]+) s, reading headers ([0-9.]+) s.*/\1 + \2/' | bc -l)
read -r _ _ _ pydicom_scan < "$work/pydicom.out"
rate scan "$scan"
rate pydicom-scan "$pydicom_scan"
printf 'scan against pydicom-scan: %.1f× faster\n' "$(echo "$pydicom_scan / $scan" | bc -l)"
grep '^took:' "$work/scaffold.out"
tail -1 "$work/scaffold.out"
cat "$work/pydicom.out"
