#!/usr/bin/env bash
# Builds NeuroRater as clinicians install it: a Debian package (.deb) holding the desktop app, its
# licence notices, and (inside the binary) the demo study's template. Tauri's bundler does the work
# (`tauri build`, the bundler `cargo tauri build` drives), from the same debug-profile build the
# README's first command and the tests use (every dependency and domain crate optimised; see
# Cargo.toml), so packaging costs no second build of the dependencies. `--release` builds the
# release profile instead, for a package to hand out.
#
# Prints the path of the .deb on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
profile=debug
build_flags=(--debug)
if [ "${1:-}" = "--release" ]; then
  profile=release
  build_flags=()
fi

bash "$ROOT/scripts/setup.sh"
(cd "$ROOT/src-tauri" && "$ROOT/ui/node_modules/.bin/tauri" build "${build_flags[@]}" --bundles deb --ci)
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -1)"
deb="$CARGO_TARGET_DIR/$profile/bundle/deb/NeuroRater_${version}_amd64.deb"
[ -f "$deb" ] || { echo "package: $deb was not written" >&2; exit 1; }
echo "$deb"
