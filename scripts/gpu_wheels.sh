#!/usr/bin/env bash
# Run on a machine WITH network, before the GPU check: downloads the wheels that a GPU
# machine without network needs to run `scripts/gpu_check.sh`, and builds gpuknn's own wheel.
#
#     bash scripts/gpu_wheels.sh [WHEELDIR] [PYVER]      (defaults: .whl 3.12)
#
# PYVER is the GPU machine's Python (major.minor): pip picks wheels for it, not for the
# Python running this script. Only pure-Python wheels are fetched, never torch or CuPy
# (gigabytes; a GPU image brings its own build of both, matched to its CUDA driver).
set -euo pipefail
cd "$(dirname "$0")/.."

WHEELDIR=${1:-.whl}
PYVER=${2:-3.12}

# What the target GPU image (Python 3.12 with numpy, scipy, scikit-learn, matplotlib, pytest,
# tqdm, joblib, threadpoolctl, torch, cupy-cuda13x) lacks of pyproject.toml's dependencies and
# its [test] extra. Exact versions: the ones the test suite passes with on the CPU machine.
# For an image without threadpoolctl (a [test] dependency), add "threadpoolctl==3.8.0".
WHEELS=(
  "array-api-compat==1.16.0"   # dependency: the array API over NumPy, CuPy and torch
  "array-api-strict==2.6.1"    # [test]: the strict backend of the "one answer" tests
  "imbalanced-learn==0.14.2"   # [test]: reference results for the resampling tests
  "sklearn-compat==0.1.6"      # needed by imbalanced-learn (--no-deps fetches no needs)
)

# manylinux tags of an x86-64 Linux machine; pure wheels (py3-none-any) match any of them.
PLATFORMS=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64
           manylinux2014_x86_64 manylinux1_x86_64)

mkdir -p "$WHEELDIR"

# One version of each distribution only: `pip install --no-index` of two versions of one
# name stops the whole install, so earlier downloads of these names (and gpuknn) go first.
for spec in "${WHEELS[@]}" gpuknn; do
  name=${spec%%==*}
  stem=$(printf '%s' "$name" | tr 'A-Z' 'a-z' | sed 's/[-.]/_/g')  # as wheel files name it
  rm -f "$WHEELDIR/$stem"-*.whl
done

platform_args=()
for p in "${PLATFORMS[@]}"; do
  platform_args+=(--platform "$p")
done

python3 -m pip download --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version "$PYVER" --implementation cp "${platform_args[@]}" \
  -d "$WHEELDIR" "${WHEELS[@]}"

# gpuknn itself, from this checkout (pure Python: one py3-none-any wheel). setuptools builds
# in ./build and would pack a module deleted since an earlier build, so it goes before and after.
rm -rf build
python3 -m pip wheel --disable-pip-version-check --no-deps -q -w "$WHEELDIR" .
rm -rf build

echo
echo "wheels in $WHEELDIR (for Python $PYVER):"
ls -l "$WHEELDIR"/*.whl
if [ -d /usr/share/datasets/fashion-mnist ] && [ ! -d data/fashion-mnist ]; then
  echo
  echo "Fashion-MNIST is here but not in data/fashion-mnist; for a GPU machine without it:"
  echo "  mkdir -p data/fashion-mnist && cp /usr/share/datasets/fashion-mnist/*.gz data/fashion-mnist/"
fi
echo
echo "next: put $WHEELDIR in the GPU machine's checkout as .whl (or point GPUKNN_WHEELS at it),"
echo "then run there: bash scripts/gpu_check.sh OUTDIR"
