#!/usr/bin/env bash
# Record the shared libraries' ABI: abi/libclreduce.abi and
# abi/libclreduce_mpi.abi, the baselines tests/abi_check.py compares the
# built libraries with (test abi-libclreduce, abi-libclreduce_mpi).
#
#   tools/abi/update-baseline.sh [BUILD-DIR]       (default: build)
#
# Builds the libraries in BUILD-DIR (configured from this tree, with debug
# information: buildtype debugoptimized, the default, or debug; a
# sanitizer build gives the same ABI), then writes each baseline with
# abidw (abigail-tools): only the types the public headers of include/
# declare, no undefined symbols (the OpenCL calls the library makes), no
# source locations, no paths, hashed type ids; so the file depends on
# neither the build directory nor the machine, and a header edit that
# changes no type leaves it as it was (a build directory at the top of the
# tree, as build/ is, keeps the translation units' names '../src/...').
# Run it when the ABI changes on purpose (tests/abi_check.py says when),
# and commit abi/ with the change.  The baselines describe x86-64 with
# Open MPI (CI's Debian: MPI_Comm is a pointer there, an int in MPICH):
# record them on such a machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}

if ! command -v abidw >/dev/null; then
  echo "update-baseline: abidw not found: apt-get install abigail-tools" >&2
  exit 1
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  echo "update-baseline: $BUILD is not a configured build (meson setup $BUILD)" >&2
  exit 1
fi

# The shared libraries' files, from meson's description of the build.
mapfile -t libs < <(meson introspect "$BUILD" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["type"] == "shared library" and t["name"] in ("clreduce", "clreduce_mpi"):
        print(t["name"] + " " + t["filename"][0])
')
if [ ${#libs[@]} -eq 0 ]; then
  echo "update-baseline: $BUILD builds no shared libclreduce (default_library=static?)" >&2
  exit 1
fi
files=()
for l in "${libs[@]}"; do files+=("$(realpath --relative-to="$BUILD" "${l#* }")"); done
ninja -C "$BUILD" "${files[@]}"

mkdir -p abi
for l in "${libs[@]}"; do
  name=${l%% *} file=${l#* }
  if ! readelf -S --wide "$file" | grep -Eq '\.z?debug_info'; then
    echo "update-baseline: $file has no debug information: configure $BUILD with -Ddebug=true" >&2
    exit 1
  fi
  abidw --headers-dir include --drop-private-types --drop-undefined-syms \
    --no-show-locs --no-corpus-path --no-comp-dir-path --type-id-style hash \
    --out-file "abi/lib$name.abi" "$file"
  echo "abi/lib$name.abi: from $file"
done
if [ ${#libs[@]} -lt 2 ] && [ -f abi/libclreduce_mpi.abi ]; then
  echo "update-baseline: $BUILD has no libclreduce_mpi (no MPI found): abi/libclreduce_mpi.abi left as it was" >&2
fi
git --no-pager diff --stat -- abi/ || true
