#!/usr/bin/env bash
# README's second command: every check and every test — formatting, lints, type checks, the Rust
# tests of every crate, the front end's tests, and the end-to-end tests in the real window.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase is announced with the seconds since the start, so a slow CI run says where it went
# (the target is 30 minutes, 1,613 s cold at the last measure: docs/performance.md, "CI build time").
phase() { echo "== $1 (at ${SECONDS} s)"; }
bash scripts/setup.sh --with-test-tools
# The same cargo settings as the build, so `cargo test` reuses it (scripts/cargo-env.sh).
source scripts/cargo-env.sh

phase "formatting and lints"
cargo fmt --all -- --check
(cd ui && npm run lint --silent && npm run check --silent)

# Clippy lints every crate, binary, example, test and benchmark of the workspace as this build
# compiles them, and any warning fails it (scripts/build-app.sh).
phase "the one build, linted: every crate, binary, example, test and benchmark (scripts/build-app.sh)"
bash scripts/build-app.sh --deny-warnings

# The window tests wait on the display for most of their time, so they run beside the Rust tests,
# schemathesis and vitest rather than after them (docs/performance.md, "CI build time"). Their
# output is kept apart and printed whole when they end, so the two logs do not interleave.
phase "end-to-end tests in the real window, started beside the next three phases"
e2e_log="$(mktemp -t neurorater-e2e-log.XXXXXX)"
setsid bash scripts/e2e.sh >"$e2e_log" 2>&1 &
e2e_pid=$!
# A failing phase below ends the script: the window tests must not outlive it.
trap 'kill -- -$e2e_pid 2>/dev/null || kill $e2e_pid 2>/dev/null || true' EXIT

phase "Rust tests"
# No crate has a doc-test, and rustdoc still expands each crate to find none: naming the targets
# leaves the doc-tests out.
cargo test --workspace --lib --bins --tests

phase "the team server's API against schemathesis"
bash scripts/test-schemathesis.sh

phase "front-end tests"
(cd ui && npm test --silent)

phase "waiting for the end-to-end tests in the real window"
e2e_status=0
wait "$e2e_pid" || e2e_status=$?
trap - EXIT
cat "$e2e_log"
rm -f "$e2e_log"
[ "$e2e_status" -eq 0 ] || { echo "test: the end-to-end tests failed (status $e2e_status)" >&2; exit "$e2e_status"; }

phase "the package as a clinician installs it"
bash tests/package/install.sh
phase "done"
