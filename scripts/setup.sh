#!/usr/bin/env bash
# Set up clreduce on a Debian machine and run it:
#   scripts/setup.sh [clreduce options]      (default: --kernel=coarse --n=1e8)
# 1. installs what the build and the tests need (apt-get, as root or through
#    sudo; skipped when everything is already there),
# 2. configures build/ with meson and builds it,
# 3. installs it into /usr/local (as root or through sudo), so `clreduce`,
#    `clreduce-bench`, `clreduce-mpi`, their man pages, the library and its
#    pkg-config file are where a shell, `man`, a compiler and pkg-config
#    look (CLREDUCE_PREFIX=DIR installs into DIR instead, without sudo when
#    DIR is writable; then put DIR/bin on PATH),
# 4. runs clreduce with the options given.
# Afterwards `meson test -C build` runs the tests (on the build tree).
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

prefix=${CLREDUCE_PREFIX:-/usr/local}
if [ -f build/build.ninja ]; then
  [ "$(meson introspect build --buildoptions |
       python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')" = "$prefix" ] ||
    meson configure build --prefix="$prefix"
else
  meson setup build --prefix="$prefix"
fi
ninja -C build

# The install: as root, or through sudo where the prefix is not writable;
# --no-rebuild, so nothing in build/ becomes root's.
sudo=()
mkdir -p "$prefix" 2>/dev/null || true
if [ "$(id -u)" -ne 0 ] && ! [ -w "$prefix" ]; then sudo=(sudo); fi
"${sudo[@]}" meson install -C build --no-rebuild --quiet
# the dynamic linker's cache, for programs linked with -lclreduce
if [ -x /sbin/ldconfig ] && { [ "$(id -u)" -eq 0 ] || [ ${#sudo[@]} -gt 0 ]; }; then
  "${sudo[@]}" /sbin/ldconfig
fi

[ $# -gt 0 ] || set -- --kernel=coarse --n=1e8
echo "setup: installed into $prefix; running: $prefix/bin/clreduce $*" >&2
exec "$prefix/bin/clreduce" "$@"
