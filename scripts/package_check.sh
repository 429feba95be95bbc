#!/usr/bin/env bash
# Packaging check (CI runs it from .ci/run): builds the sdist and the wheel, with no warning
# allowed; resolves every extra against the package registries; installs the built wheel into
# a fresh virtual environment and runs a smoke test there, outside the source tree, so what is
# tested is the installed package and not the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 -m pip install --quiet --disable-pip-version-check build
# PYTHONDONTWRITEBYTECODE makes setuptools warn that it skips byte-compiling: a property of the
# machine, not of the package, so it is unset for the build.
if ! env -u PYTHONDONTWRITEBYTECODE python3 -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1; then
  cat "$WORK/build.log" >&2
  exit 1
fi
if grep -i "warning" "$WORK/build.log" >&2; then
  echo "package check: the build printed the warnings above" >&2
  exit 1
fi
wheel=$(ls "$WORK"/dist/gpuknn-*.whl)
ls "$WORK"/dist/gpuknn-*.tar.gz >/dev/null

# Every extra resolves (a dry run: nothing is installed, CuPy is not downloaded).
python3 -m pip install --dry-run --quiet --disable-pip-version-check --ignore-installed \
  "$wheel[cuda12,cuda13,gpu,docs,test,bench]"

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
cd "$WORK"  # away from the checkout: `import gpuknn` must find the installed copy
"$WORK/venv/bin/python" - "$WORK/venv" <<'PY'
import sys

import numpy as np

import gpuknn

assert gpuknn.__file__.startswith(sys.argv[1]), f"imported {gpuknn.__file__}, not the installed wheel"
X = np.random.default_rng(0).normal(size=(50, 4))
d, i = gpuknn.kneighbors(X[:5], X, 3)
assert (i[:, 0] == np.arange(5)).all() and d.shape == (5, 3)
print(f"installed gpuknn {gpuknn.__version__} from {gpuknn.__file__}: kneighbors ok")
PY
"$WORK/venv/bin/gpuknn" --help >/dev/null
"$WORK/venv/bin/gpuknn" sweep --help >/dev/null
echo "package check: sdist and wheel built without warnings, extras resolve, the installed wheel works"
