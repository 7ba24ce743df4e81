#!/usr/bin/env bash
# Builds the UI and the desktop app (debug), then drives the real window under Xvfb through
# tauri-driver with a fresh temporary database, so first start builds the demo study.
# Artefacts (screenshots, timings) land in tests/e2e/artifacts/. Needs the apt packages of
# docs/app.md (webkit2gtk-driver, xvfb among them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
APP="$CARGO_TARGET_DIR/debug/neurorater-app"
# Several runs at once (parallel work on one machine) need their own driver port and test files.
DRIVER_PORT="${E2E_DRIVER_PORT:-4444}"
export E2E_DRIVER_PORT="$DRIVER_PORT"
E2E_TESTS="${E2E_TESTS:-*.test.mjs}"

for tool in xvfb-run /usr/bin/WebKitWebDriver node npm cargo; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (see docs/app.md, 'Set-up')" >&2; exit 2; }
done

echo "e2e: building the UI, the app, the CLI the tests compare with and the tests' data writers (debug)"
bash "$ROOT/scripts/build-app.sh"
if ! command -v tauri-driver >/dev/null; then
  echo "e2e: installing tauri-driver"
  cargo install tauri-driver --locked
fi
(cd "$ROOT/tests/e2e" && { [ -d node_modules ] || npm install --no-audit --no-fund; })

WORK="$(mktemp -d -t neurorater-e2e.XXXXXX)"
export NEURORATER_DB="$WORK/e2e.sqlite"
# The run's own config folder: the team server's session files (team.test.mjs) land here, not in
# the user's.
export XDG_CONFIG_HOME="$WORK/config"
export NEURORATER_APP="$APP"
# The driver's log holds the app's own output too: the PHI test searches it.
export E2E_DRIVER_LOG="$WORK/tauri-driver.log"
mkdir -p "$ROOT/tests/e2e/artifacts"

# Everything that needs the display runs inside one xvfb-run. Each test file gets a driver of its
# own, stopped with everything it started (WebKitWebDriver, the app) once the file ends: a file
# whose session was left open (a failed after hook) would otherwise refuse every later file's
# session ("Maximum number of active sessions"), so one failure took the rest of the suite down.
# The files run in the shell's glob order, one at a time: a file's app starts where the previous
# file's left the database. The driver's log is appended to, so the PHI test reads every earlier
# file's app output.
status=0
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  set -u
  failed=()
  cd "'"$ROOT"'/tests/e2e"
  for file in '"$E2E_TESTS"'; do
    setsid tauri-driver --native-driver /usr/bin/WebKitWebDriver --port '"$DRIVER_PORT"' --native-port '"$((DRIVER_PORT + 1))"' >>"'"$WORK"'/tauri-driver.log" 2>&1 &
    driver=$!
    trap "kill -- -$driver 2>/dev/null; wait $driver 2>/dev/null" EXIT
    for _ in $(seq 1 100); do
      (exec 3<>/dev/tcp/127.0.0.1/'"$DRIVER_PORT"') 2>/dev/null && break
      sleep 0.1
    done
    node --test --test-concurrency=1 "$file" || failed+=("$file")
    kill -- -$driver 2>/dev/null
    wait $driver 2>/dev/null
    # The port is free again before the next file starts a driver on it.
    for _ in $(seq 1 100); do
      (exec 3<>/dev/tcp/127.0.0.1/'"$DRIVER_PORT"') 2>/dev/null || break
      sleep 0.1
    done
  done
  trap - EXIT
  if [ ${#failed[@]} -gt 0 ]; then
    echo "e2e: failed files: ${failed[*]}" >&2
    exit 1
  fi
' || status=$?

if [ "$status" -ne 0 ]; then
  echo "e2e: FAILED (status $status); tauri-driver log:" >&2
  tail -n 40 "$WORK/tauri-driver.log" >&2 || true
fi
rm -rf "$WORK"
exit "$status"
