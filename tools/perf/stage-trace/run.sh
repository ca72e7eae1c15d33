#!/bin/bash
# Where a staged host-array write spends its time, block by block.
#   tools/perf/stage-trace/run.sh OUT [N]
# Configures this tree in OUT/build with -Dstage_trace=true (the library's
# pinned.c then records host times of every piece, enqueue and wait, and
# device times of every block's write, and prints them when CLR_TRACE is
# set), runs the driver built with it (driver.c: 1e6, 1e7, 1e8 or just N)
# twice, and summarises each traced call with analyze.py.  The traced
# library is for measuring only: it keeps global state and prints.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$1
rm -rf "$out/build" && mkdir -p "$out"
meson setup "$out/build" "$root" --buildtype=release -Dstage_trace=true \
  -Dtests=false >"$out/setup.log" 2>&1
ninja -C "$out/build" tools/perf/stage_trace_driver >"$out/build.log" 2>&1
for round in 1 2; do
  echo "-- round $round"
  CLREDUCE_KERNEL_DIR=$root/cl CLREDUCE_CACHE_DIR=$out/cache \
    "$out/build/tools/perf/stage_trace_driver" ${2:-} 2>"$out/trace-$round.txt"
  python3 "$here/analyze.py" "$out/trace-$round.txt"
done
