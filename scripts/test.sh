#!/usr/bin/env bash
# Installs gpuknn with its test dependencies (and, as root, the real Fashion-MNIST data),
# then runs the whole test suite. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
if [ "$(id -u)" = 0 ] && [ ! -d /usr/share/datasets/fashion-mnist ] && command -v apt-get >/dev/null; then
  # Real data for the integration tests; they skip with a message if this fails.
  (apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist) >/dev/null 2>&1 \
    || echo "note: could not install dataset-fashion-mnist; real-data tests will be skipped" >&2
fi
exec python3 -m pytest -q "$@"
