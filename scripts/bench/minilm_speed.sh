#!/usr/bin/env bash
# all-MiniLM-L6-v2 embeddings of 2,000 rationales of about 100 tokens: our candle code
# (textmetrics/examples/embed_speed.rs, release build) beside sentence-transformers (torch, CPU) on
# the same texts in one run (scripts/bench/minilm_speed.py). Figures: docs/performance.md,
# "Automatic text metrics".
#
#   bash scripts/bench/minilm_speed.sh [ROUNDS]     # best of ROUNDS (default 3) on each side
#   PROFILE=dev bash scripts/bench/minilm_speed.sh  # the profile the app and its package ship
#                                                   # (dependencies and textmetrics at opt-level 2)
#
# The model is the folder scripts/setup.sh fills (or $NEURORATER_MINILM_DIR). Python's side is
# installed once into a venv of its own (BENCH_VENV, default ~/.cache/neurorater/bench-venv):
# torch and sentence-transformers from PyPI (PyPI's torch for Linux brings CUDA libraries, several
# GB, unused here: the run is on the CPU). CARGO_TARGET_DIR is honoured.
set -euo pipefail
rounds=${1:-3}
profile=${PROFILE:-release}
here=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$here/target}
venv=${BENCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/neurorater/bench-venv}

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sentence_transformers' 2>/dev/null; then
  echo "minilm_speed: installing torch and sentence-transformers into $venv (once)" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet "torch>=2.4" "sentence-transformers>=3"
fi

# --workspace: the features the rest of the build resolved, so nothing else is rebuilt.
(cd "$here" && cargo build --workspace --profile "$profile" --quiet --example embed_speed)
dir=$profile
[ "$profile" = dev ] && dir=debug
"$venv/bin/python" "$here/scripts/bench/minilm_speed.py" "$target/$dir/examples/embed_speed" "$rounds"
