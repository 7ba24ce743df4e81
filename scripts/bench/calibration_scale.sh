#!/usr/bin/env bash
# The calibration report from a study database at a real study's size (issue 18), beside the CSV
# report's peer, in one run on the same machine:
#
#   scripts/bench/calibration_scale.sh [SIZES...]        (default: 2304 10000 50000 responses)
#
# For each size: the demo multiplied to that many responses (make_scale_study.py: every case
# copied with every rubric dimension and subgroup), imported with `neurorater import` and
# `import-ratings`; then, ROUNDS times each,
#   - cases/examples/report_from_db: the first numbers (the scores read and the headline built,
#     what the app's view waits for), reading the study from the database in one snapshot (which
#     includes that headline), the headline the app shows first, and the whole report (every
#     dimension, every subgroup, 2,000 resamples), as the app and `neurorater calibrate --db`
#     build it;
#   - the peer, calibration/examples/report_from_csv: the whole report from the same ratings as
#     a long CSV (the file `import-ratings` read), parsing excluded.
# PROFILE=release (default; the goal's build) or dev (what scripts/start.sh builds). WORK=folder
# keeps the studies (default: a temporary folder, removed). Prints one line per size and step,
# then a table. Figures: docs/performance.md, "Calibration report at a study's size".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PROFILE="${PROFILE:-release}"
ROUNDS="${ROUNDS:-3}"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(2304 10000 50000)
GRADER=demo-grader-v1

case "$PROFILE" in
  release) flag=(--release); dir=release ;;
  dev) flag=(); dir=debug ;;
  *) echo "PROFILE must be release or dev" >&2; exit 2 ;;
esac

echo "bench: building the CLI (dev, for set-up) and the two report examples ($PROFILE)"
cargo build -p neurorater-cli --manifest-path "$ROOT/Cargo.toml"
cargo build "${flag[@]}" -p neurorater-cases --example report_from_db --manifest-path "$ROOT/Cargo.toml"
cargo build "${flag[@]}" -p neurorater-calibration --example report_from_csv --manifest-path "$ROOT/Cargo.toml"
CLI="$CARGO_TARGET_DIR/debug/neurorater"
FROM_DB="$CARGO_TARGET_DIR/$dir/examples/report_from_db"
FROM_CSV="$CARGO_TARGET_DIR/$dir/examples/report_from_csv"

if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
else
  WORK="$(mktemp -d -t neurorater-calibration-scale.XXXXXX)"
  trap 'rm -rf "$WORK"' EXIT
fi
[ -d "$WORK/demo" ] || "$CLI" demo --out "$WORK/demo" >/dev/null

median() { tr ',' '\n' | tr -d ' []' | grep . | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

rows=()
for size in "${SIZES[@]}"; do
  bundle="$WORK/scale-$size"
  db="$WORK/scale-$size.sqlite"
  if [ ! -f "$db" ]; then
    rm -rf "$bundle"
    study=$(python3 "$ROOT/scripts/bench/make_scale_study.py" "$WORK/demo" "$bundle" --responses "$size")
    echo "bench: $size: study $study"
    start=$(date +%s.%N)
    "$CLI" import "$bundle" --db "$db" >/dev/null
    "$CLI" import-ratings "$bundle/ratings.csv" --db "$db" >/dev/null
    echo "bench: $size: import and import-ratings took $(echo "$(date +%s.%N) - $start" | bc) s"
  fi
  db_json=$("$FROM_DB" "$db" "$GRADER" "$ROUNDS")
  echo "bench: $size: report_from_db $db_json"
  csv_times=()
  for _ in $(seq "$ROUNDS"); do
    csv_times+=("$("$FROM_CSV" "$bundle/ratings.csv" "$GRADER" "$WORK/peer-$size.json" 2000 1 5 1 | tail -1)")
  done
  echo "bench: $size: report_from_csv seconds ${csv_times[*]}"
  field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$db_json" "$1"; }
  rows+=("$(printf '%s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f' "$size" "$(field items)" "$(field cases)" "$(field subgroup_sections)" \
    "$(field first_numbers_s | median)" "$(field read_s | median)" "$(field headline_s | median)" "$(field report_s | median)" \
    "$(printf '%s\n' "${csv_times[@]}" | median)")")
done

echo
echo "responses | items | cases | subgroup sections | first numbers (s) | read (s) | headline (s) | whole report (s) | peer: CSV report (s)"
echo "--- | --- | --- | --- | --- | --- | --- | --- | ---"
printf '%s\n' "${rows[@]}"
echo "(medians of $ROUNDS rounds, $PROFILE build, load average $(cut -d' ' -f1-3 /proc/loadavg))"
