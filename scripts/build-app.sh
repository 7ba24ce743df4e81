#!/usr/bin/env bash
# Builds the front end, then every crate of the workspace with its binaries, examples, tests and
# benchmarks, linted by clippy as they compile (debug profile, optimised where it computes: Cargo.toml) in ONE cargo invocation: the app, the
# CLI, the server, the end-to-end tests' data writers and the Rust tests. The start script, the
# Rust tests, schemathesis, the end-to-end tests and the package all build through here, so cargo
# resolves features once (the domain crates' `specta` and `utoipa` are on by default, and a
# dev-dependency's features count for every target once tests are among them) and every one of
# them reuses the same build. Each alone resolved the shared dependencies' features differently:
# `tauri build` selecting only the app rebuilt 164 crates (16 minutes of a cold CI run on
# 2026-11-26), and three feature sets rebuilt the workspace's crates three times (issue 34).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# One set of settings for both README commands (a build made with others would be rebuilt):
# no incremental cache, and clippy's lints inside the build (scripts/cargo-env.sh).
source "$ROOT/scripts/cargo-env.sh"
# The front end is built only when a source is newer than the last build: the app embeds
# ui/dist, and Tauri's build script reruns on its files' times, so rebuilding it unchanged
# recompiled the app (1 min 27 s of a test run, once per later call of this script).
ui_stale() {
  [ ! -f "$ROOT/ui/dist/index.html" ] || [ -n "$(find "$ROOT/ui/src" "$ROOT/ui/index.html" \
    "$ROOT/ui/package.json" "$ROOT/ui/package-lock.json" "$ROOT/ui/vite.config.ts" \
    "$ROOT/ui/svelte.config.js" -newer "$ROOT/ui/dist/index.html" -print -quit)" ]
}
(cd "$ROOT/ui" && { [ -d node_modules ] || npm install --no-audit --no-fund; })
if ui_stale; then (cd "$ROOT/ui" && npm run build --silent); fi
# `--deny-warnings` (scripts/test.sh): a warning, clippy's or the compiler's, fails the build, as
# `cargo clippy -- -D warnings` did. Cargo replays a fresh crate's warnings, so a build that
# compiles nothing still fails on them. Not in the compiler's arguments: they are part of the
# fingerprint, and the start command would then rebuild what the tests built.
deny_warnings=0
[ "${1:-}" = --deny-warnings ] && deny_warnings=1
log="$(mktemp -t neurorater-build.XXXXXX)"
trap 'rm -f "$log"' EXIT
cargo build --workspace --bins --examples --tests --benches --manifest-path "$ROOT/Cargo.toml" 2>&1 | tee "$log"
if [ "$deny_warnings" = 1 ]; then
  [ -n "${RUSTC_WORKSPACE_WRAPPER:-}" ] || {
    echo "build-app: clippy-driver is missing, so nothing was linted: rustup component add clippy" >&2
    exit 1
  }
  if grep -q '^warning' "$log"; then
    echo "build-app: the build printed the warnings above; fix them (clippy's lints are errors here)" >&2
    exit 1
  fi
fi
