#!/usr/bin/env bash
# Builds the front end, then the desktop app, the CLI and the end-to-end tests' data writers
# (debug profile, optimised where it computes: Cargo.toml) in ONE cargo invocation. The start
# script, the end-to-end tests and the package all build through here, so cargo resolves the
# features once and every one of them reuses the same build. Each alone resolved the shared
# dependencies' features differently: `tauri build` selecting only the app rebuilt 164 crates
# (16 minutes of a cold CI run on 2026-11-26), and each test data writer built alone rebuilt
# `cases` (1.5 minutes each).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$ROOT/ui" && { [ -d node_modules ] || npm install --no-audit --no-fund; } && npm run build --silent)
cargo build -p neurorater-app -p neurorater-cli -p neurorater-tests --bins \
  --example pacs_export --example phi_bundle --manifest-path "$ROOT/Cargo.toml"
