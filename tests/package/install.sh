#!/usr/bin/env bash
# The package as a clinician meets it: build the .deb, install it with dpkg on this machine, and
# check what was installed — the version it reports, the licence notices, and that the installed
# app starts on an empty database and writes and imports the demo study (the demo is inside the
# binary). Removes the package afterwards, whatever the outcome.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

deb="$(bash "$ROOT/scripts/package.sh" | tail -1)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -1)"
fail() { echo "package test: $*" >&2; exit 1; }

[ "$(dpkg-deb -f "$deb" Package)" = "neuro-rater" ] || fail "package name is not neuro-rater"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version is not $version"

work="$(mktemp -d -t neurorater-package.XXXXXX)"
app=""
cleanup() {
  # The whole process group: xvfb-run, its Xvfb server, the app and WebKit's processes. Killing
  # xvfb-run alone left the display server and the app running after the test.
  [ -n "$app" ] && kill -- "-$app" 2>/dev/null || true
  $sudo dpkg -r neuro-rater >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

$sudo dpkg -i "$deb" >/dev/null
[ -x /usr/bin/neurorater-app ] || fail "/usr/bin/neurorater-app is not installed"
[ "$(/usr/bin/neurorater-app --version)" = "NeuroRater $version" ] || fail "--version does not say NeuroRater $version"
[ -x /usr/bin/neurorater ] || fail "/usr/bin/neurorater (the CLI) is not installed"
[ "$(/usr/bin/neurorater --version)" = "neurorater $version" ] \
  || fail "the installed CLI is not version $version: $(/usr/bin/neurorater --version)"
grep -q "MIT License" /usr/share/doc/neuro-rater/copyright || fail "the licence notice is missing"
grep -q "Louis Collins" /usr/share/doc/neuro-rater/mni152-LICENSE-and-README.md \
  || fail "the template's licence notice is missing"
grep -q "^Exec=neurorater-app" /usr/share/applications/NeuroRater.desktop || fail "no desktop entry"

# First start on an empty database: the installed app writes the demo study and imports it. In a
# session of its own, so that cleanup stops everything it started.
setsid xvfb-run -a -s "-screen 0 1280x800x24" /usr/bin/neurorater-app --db "$work/study.sqlite" \
  >"$work/app.log" 2>&1 &
app=$!
cases=""
for _ in $(seq 1 120); do
  if [ -f "$work/study.sqlite" ]; then
    cases="$(/usr/bin/neurorater cases --db "$work/study.sqlite" --json 2>/dev/null \
      | python3 -c 'import json,sys; print(sum(len(s["cases"]) for s in json.load(sys.stdin)))' 2>/dev/null || true)"
    [ "${cases:-0}" -gt 0 ] 2>/dev/null && break
  fi
  kill -0 "$app" 2>/dev/null || { cat "$work/app.log" >&2; fail "the installed app exited"; }
  sleep 1
done
[ "${cases:-0}" -gt 0 ] 2>/dev/null || { cat "$work/app.log" >&2; fail "the installed app did not import the demo study"; }
kill -0 "$app" 2>/dev/null || fail "the installed app exited after importing the demo"
echo "package test: $deb installs the app and its CLI, both version $version, carries its licences, and opened the demo study ($cases cases, counted by the installed CLI)"
