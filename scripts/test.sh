#!/usr/bin/env bash
# Installs gpuknn with its test dependencies (and, as root, the real Fashion-MNIST data;
# with GPUKNN_TEST_TORCH=1, torch for the torch backend tests), then runs the whole test
# suite with coverage. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
if [ "${GPUKNN_TEST_TORCH:-0}" = 1 ] && ! python3 -c "import torch" 2>/dev/null; then
  # torch tensors are a supported input: CI sets GPUKNN_TEST_TORCH=1 (a CPU build there);
  # elsewhere torch is a large download, so it is tested only when asked for.
  python3 -m pip install --quiet --disable-pip-version-check "torch==2.13.0" \
    || echo "note: could not install torch; torch tests will be skipped" >&2
fi
if [ "$(id -u)" = 0 ] && [ ! -d /usr/share/datasets/fashion-mnist ] && command -v apt-get >/dev/null; then
  # Real data for the integration tests; they skip with a message if this fails.
  (apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist) >/dev/null 2>&1 \
    || echo "note: could not install dataset-fashion-mnist; real-data tests will be skipped" >&2
fi
# Coverage of the package is reported at the end (terminal table, files below 100 % only).
exec python3 -m pytest -q --cov=gpuknn --cov-report=term:skip-covered "$@"
