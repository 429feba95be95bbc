#!/usr/bin/env bash
# Lint and format check (rules in pyproject.toml, [tool.ruff]) over the package, the tests, the
# scripts and the examples. CI runs it first; `ruff format gpuknn tests scripts examples` and
# `ruff check --fix ...` repair what they can.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check "ruff>=0.17,<0.18"
python3 -m ruff check gpuknn tests scripts examples
python3 -m ruff format --check gpuknn tests scripts examples
echo "lint: ruff check and ruff format --check passed"
