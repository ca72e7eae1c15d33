#!/bin/bash
# Where a staged host-array write spends its time, block by block.
#   scripts/stage-trace/run.sh OUT [N]
# Builds this tree's library with trace.patch (an instrumented
# src/lib/pinned.c: host times of every piece, enqueue and wait, device
# times of every block's write) in OUT, runs driver.c (1e6, 1e7, 1e8 or
# just N) twice, and summarises each traced call with analyze.py.  The
# patch is for measuring only: it keeps global state and prints.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
rm -rf "$out/src" "$out/build" && mkdir -p "$out/src"
(cd "$here/../.." && tar --exclude-vcs --exclude=./build --exclude='./tmp-*' \
  -cf - cl data examples include meson.build meson_options.txt src tests) | tar -x -C "$out/src"
(cd "$out/src" && patch -s -p1 <"$here/trace.patch")
meson setup "$out/build" "$out/src" --buildtype=release -Dprograms=disabled >"$out/setup.log" 2>&1
ninja -C "$out/build" >"$out/build.log" 2>&1
cc -O2 -o "$out/driver" "$here/driver.c" -I"$out/src/include" \
  -L"$out/build/src/lib" -lclreduce -lOpenCL -Wl,-rpath,"$out/build/src/lib"
for round in 1 2; do
  echo "-- round $round"
  CLREDUCE_KERNEL_DIR=$out/src/cl CLREDUCE_CACHE_DIR=$out/cache \
    "$out/driver" ${2:-} 2>"$out/trace-$round.txt"
  python3 "$here/analyze.py" "$out/trace-$round.txt"
done
