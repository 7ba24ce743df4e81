# Sourced by every script that builds the workspace (scripts/build-app.sh, scripts/test.sh), so
# each cargo command sees the same settings and reuses the one build instead of rebuilding it.
#
# An incremental cache gains a one-off build nothing and takes gigabytes of disk.
export CARGO_INCREMENTAL=0
# Clippy's lints run inside the build itself: clippy-driver is the workspace's compiler wrapper
# (what `cargo clippy` does, but compiling to the end instead of stopping at the check), so the
# lints cost no check pass of their own. A separate `cargo clippy --all-targets` compiled every
# dependency a second time in check mode, about 300 s of a cold CI run (docs/performance.md, "CI
# build time"). Cargo replays a fresh crate's warnings, so scripts/test.sh sees them on every
# build. The wrapper is part of the workspace crates' fingerprint: a cargo command run without it
# rebuilds them.
if clippy_driver="$(command -v clippy-driver)"; then
  export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
fi
