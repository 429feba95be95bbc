#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html: the user guide (docs/*.md), the API
# reference of every public name and the executed example gallery (examples/). Warnings are
# errors (-W). CI runs it from .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[docs]"
rm -rf docs/_build docs/generated docs/auto_examples
MPLBACKEND=Agg python3 -m sphinx -W --keep-going -b html docs docs/_build/html "$@"
echo "docs: open docs/_build/html/index.html"
