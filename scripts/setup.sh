#!/usr/bin/env bash
# Installs what NeuroRater needs on Debian 12 and is not there yet: the system libraries for
# Tauri (PLATFORM.md), Xvfb and WebKitWebDriver for the real-window tests, cmake for the JPEG-LS
# codec, the front end's npm packages and tauri-driver. Safe to run again: it only installs what
# is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libsoup-3.0-dev libjavascriptcoregtk-4.1-dev libxdo-dev libssl-dev
  build-essential pkg-config file xvfb xauth webkit2gtk-driver cmake
)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

install_npm() {
  local dir=$1
  # Only when the lock file is newer than what is installed. `npm install` rather than `npm ci`:
  # npm 11 reports @tauri-apps/cli's per-platform optional packages as missing from any lock
  # file and refuses `ci`; `install` still installs the locked versions.
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "setup: npm install in $dir"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
  fi
}
install_npm ui
if [ "${1:-}" = "--with-test-tools" ]; then
  install_npm tests/e2e
  if ! command -v tauri-driver >/dev/null 2>&1; then
    echo "setup: cargo install tauri-driver"
    cargo install tauri-driver --locked --quiet
  fi
fi
