#!/usr/bin/env bash
# Builds NeuroRater as clinicians install it: a Debian package (.deb) holding the desktop app, its
# licence notices, and (inside the binary) the demo study's template. Tauri's bundler (`tauri
# bundle`) packs the same debug-profile build the README's first command and the tests use
# (scripts/build-app.sh; every dependency and domain crate optimised, see Cargo.toml), so packaging
# costs no second build of the dependencies. `--release` builds the release profile with `tauri
# build` instead, for a package to hand out.
#
# Prints the path of the .deb on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
profile=debug
[ "${1:-}" = "--release" ] && profile=release

bash "$ROOT/scripts/setup.sh"
if [ "$profile" = debug ]; then
  # The app as the tests built and ran it (scripts/build-app.sh), then Tauri's bundler alone:
  # `tauri build` would run cargo for the app alone, whose features resolve differently from the
  # workspace's and rebuilt 164 crates.
  bash "$ROOT/scripts/build-app.sh"
fi
# The package carries the headless `neurorater` beside the app, the same version, for what has no
# window (bundle, ratings and ground-truth import, exports, audit verify, backup and restore):
# added to the .deb's files here, where the profile's folder is known.
cli="$CARGO_TARGET_DIR/$profile/neurorater"
[ "$profile" = release ] && cargo build --release --bin neurorater --manifest-path "$ROOT/Cargo.toml"
[ -x "$cli" ] || { echo "package: $cli was not built" >&2; exit 1; }
with_cli="{\"bundle\":{\"linux\":{\"deb\":{\"files\":{\"/usr/bin/neurorater\":\"$cli\"}}}}}"
if [ "$profile" = debug ]; then
  (cd "$ROOT/src-tauri" && "$ROOT/ui/node_modules/.bin/tauri" bundle --debug --bundles deb --ci --config "$with_cli")
else
  (cd "$ROOT/src-tauri" && "$ROOT/ui/node_modules/.bin/tauri" build --bundles deb --ci --config "$with_cli")
fi
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -1)"
deb="$CARGO_TARGET_DIR/$profile/bundle/deb/NeuroRater_${version}_amd64.deb"
[ -f "$deb" ] || { echo "package: $deb was not written" >&2; exit 1; }
echo "$deb"
