#!/usr/bin/env bash
# Installs gpuknn (and, as root, Debian's Fashion-MNIST package), then runs the main job:
# the Fashion-MNIST sweep on a 10 000-image training subset (about 22-25 s on a 2-core CPU).
# Extra arguments go to `gpuknn sweep` (e.g. none of --subset for the full study).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
if [ ! -d /usr/share/datasets/fashion-mnist ] && [ -z "${GPUKNN_DATA:-}" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq dataset-fashion-mnist
  fi
fi
if [ "$#" -eq 0 ]; then
  set -- --subset 10000 --out results/quick
fi
exec gpuknn sweep "$@"
