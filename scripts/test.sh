#!/usr/bin/env bash
# README's second command: every check and every test — formatting, lints, type checks, the Rust
# tests of every crate, the front end's tests, and the end-to-end tests in the real window.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --with-test-tools
# A one-off build gains nothing from incremental caches, which would take gigabytes of disk.
export CARGO_INCREMENTAL=0

echo "== formatting and lints"
cargo fmt --all -- --check
(cd ui && npm run build --silent)
cargo clippy --workspace --all-targets --quiet -- -D warnings
(cd ui && npm run lint --silent && npm run check --silent)

echo "== Rust tests"
cargo test --workspace

echo "== the team server's API against schemathesis"
bash scripts/test-schemathesis.sh

echo "== front-end tests"
(cd ui && npm test --silent)

echo "== end-to-end tests in the real window"
bash scripts/e2e.sh

echo "== the package as a clinician installs it"
bash tests/package/install.sh
