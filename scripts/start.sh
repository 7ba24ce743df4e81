#!/usr/bin/env bash
# README's first command: install what is missing, build, and open NeuroRater. On first start
# with an empty database the app writes the demo study (synthesised from the MNI template) and
# imports it. Set NEURORATER_DB to use another database file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd ui && npm run build --silent)
# A dev build, yet optimised where it computes: Cargo.toml's dev profile gives every dependency and
# both domain crates opt-level 2 (README).
cargo build -p neurorater-app
app=target/debug/neurorater-app
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "start: no display found; running under Xvfb (a virtual screen) instead."
  exec xvfb-run -a -s "-screen 0 1280x800x24" "$app"
fi
exec "$app"
