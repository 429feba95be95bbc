#!/usr/bin/env bash
# Installs gpuknn (and, as root, Debian's Fashion-MNIST package), then runs the main job:
# the Fashion-MNIST sweep on a 10 000-image training subset (31-34 s on a 2-core CPU on 2026-11-28; such a machine's speed varies up to twofold from day to day).
# Extra arguments go to `gpuknn sweep` (e.g. none of --subset for the full study).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .

# apt-get waits up to this long for the dpkg lock (held by another apt, unattended-upgrades,
# ...) instead of failing at once with "Could not get lock /var/lib/dpkg/lock-frontend".
APT_LOCK_TIMEOUT_S="${GPUKNN_APT_LOCK_TIMEOUT:-300}"

apt_install_fashion_mnist() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    sudo=(sudo)
  fi
  local apt=("${sudo[@]}" apt-get -o "DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT_S}")
  if ! { "${apt[@]}" update -qq && "${apt[@]}" install -y -qq dataset-fashion-mnist; }; then
    {
      echo "scripts/main.sh: error: could not install the Debian package dataset-fashion-mnist"
      echo "  (apt-get failed; its message is above). If another package manager held the dpkg lock"
      echo "  for more than ${APT_LOCK_TIMEOUT_S} s, wait for it and run this script again"
      echo "  (GPUKNN_APT_LOCK_TIMEOUT=SECONDS waits longer), or get the four IDX files yourself and"
      echo "  set GPUKNN_DATA=DIR (see data/README.md)."
    } >&2
    exit 1
  fi
}

if [ ! -d /usr/share/datasets/fashion-mnist ] && [ -z "${GPUKNN_DATA:-}" ]; then
  apt_install_fashion_mnist
fi
if [ "$#" -eq 0 ]; then
  set -- --subset 10000 --out results/quick
fi
exec gpuknn sweep "$@"
