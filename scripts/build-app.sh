#!/usr/bin/env bash
# Builds the front end, then every crate of the workspace with its binaries, examples and tests
# (debug profile, optimised where it computes: Cargo.toml) in ONE cargo invocation: the app, the
# CLI, the server, the end-to-end tests' data writers and the Rust tests. The start script, the
# Rust tests, schemathesis, the end-to-end tests and the package all build through here, so cargo
# resolves features once (the domain crates' `specta` and `utoipa` are on by default, and a
# dev-dependency's features count for every target once tests are among them) and every one of
# them reuses the same build. Each alone resolved the shared dependencies' features differently:
# `tauri build` selecting only the app rebuilt 164 crates (16 minutes of a cold CI run on
# 2026-11-26), and three feature sets rebuilt the workspace's crates three times (issue 34).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# One setting for both README commands: an incremental cache gains a one-off build nothing and
# takes gigabytes of disk, and a build made with another setting would be rebuilt whole.
export CARGO_INCREMENTAL=0
(cd "$ROOT/ui" && { [ -d node_modules ] || npm install --no-audit --no-fund; } && npm run build --silent)
cargo build --workspace --bins --examples --tests --manifest-path "$ROOT/Cargo.toml"
