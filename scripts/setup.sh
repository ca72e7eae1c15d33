#!/usr/bin/env bash
# Set up clreduce on a Debian machine and run it:
#   scripts/setup.sh [clreduce options]      (default: --kernel=coarse --n=1e8)
# 1. installs what the build and the tests need (apt-get, as root or through
#    sudo; skipped when everything is already there),
# 2. configures build/ with meson and builds it,
# 3. runs build/src/cli/clreduce with the options given.
# Afterwards `meson test -C build` runs the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# The one package list, shared with .ci/run.
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' scripts/packages.txt)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y \
    --no-install-recommends "${missing[@]}"
fi

[ -f build/build.ninja ] || meson setup build
ninja -C build

[ $# -gt 0 ] || set -- --kernel=coarse --n=1e8
exec build/src/cli/clreduce "$@"
