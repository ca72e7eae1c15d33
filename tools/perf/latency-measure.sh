#!/usr/bin/env bash
# Small calls on a machine with an NVIDIA GPU: the small-call figures of
# docs/PERFORMANCE.md (the investigation: docs/perf-log/small-calls.md).
#   tools/perf/latency-measure.sh [OUTDIR]
# Builds, runs the tests that cover both kinds of context on the GPU, then
# what the OpenCL calls of a small call cost alone (tools/perf/call_parts.c),
# clreduce-bench --latency (the default context and one with
# no_profiling) twice, and PyTorch's small calls in the same run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/measure-common.sh"
measure_build latency "${1:-}"
measure_tests api staging buffer async transform-dot
"$tools/call_parts"
for i in 1 2; do
  $bench --latency --repeat="${REPEAT:-3000}"
done
PYTHONPATH=$here python3 -c "from peers import small_calls; small_calls(${REPEAT:-3000})"
