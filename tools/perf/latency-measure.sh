#!/usr/bin/env bash
# Small calls on a machine with an NVIDIA GPU (issue 16 item 5):
# docs/PERFORMANCE.md's "Small calls" figures.
#   scripts/latency-measure.sh [OUTDIR]
# Builds, runs the tests that cover both kinds of context on the GPU, then
# what the OpenCL calls of a small call cost alone (scripts/call_parts.c),
# clreduce-bench --latency (the default context and one with
# no_profiling) twice, and PyTorch's small calls in the same run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/measure-common.sh"
measure_build latency "${1:-}"
measure_tests api staging buffer async transform-dot
cc -O2 -o "$out/call_parts" "$here/call_parts.c" -lOpenCL && "$out/call_parts"
for i in 1 2; do
  $bench --latency --repeat="${REPEAT:-3000}"
done
PYTHONPATH=$here python3 -c "from peers import small_calls; small_calls(${REPEAT:-3000})"
