#!/usr/bin/env bash
# README's first command: install what is missing, build, and open NeuroRater. On first start
# with an empty database the app writes the demo study (synthesised from the MNI template) and
# imports it. Set NEURORATER_DB to use another database file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# A dev build, yet optimised where it computes (Cargo.toml, README), shared with the tests.
bash scripts/build-app.sh
app="${CARGO_TARGET_DIR:-target}/debug/neurorater-app"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "start: no display found; running under Xvfb (a virtual screen) instead."
  exec xvfb-run -a -s "-screen 0 1280x800x24" "$app"
fi
exec "$app"
