#!/usr/bin/env bash
# The host-array path and small calls on a machine with an NVIDIA GPU
# (host arrays, mid sizes and small calls): the host-array and small-call
# figures of docs/PERFORMANCE.md (the investigation: docs/perf-log/staging.md).
#   tools/perf/host-measure.sh [OUTDIR]
# Builds, runs the staging test on the GPU, then clreduce-bench --host at
# 1e6..1e8 for several stage.threads / stage.block_kib, --latency, and
# PyTorch's peers in the same run: a pageable and a pinned tensor copied
# to the device and summed, and x.sum().item() on a device tensor.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/measure-common.sh"
measure_build host "${1:-}"
measure_tests staging api buffer scan-inplace reduce-coarse \
  reduce-single-launch transform-dot transform-indexed async adversarial
nproc
# STAGES: "threads block_kib" pairs, |-separated
IFS='|'
for tb in ${STAGES:-16 4096|8 4096}; do
  IFS=' '
  set -- $tb
  $bench --host --min-n=1e6 --max-n=1e8 --repeat=${REPEAT:-10} \
    --stage-threads=$1 --stage-block-kib=$2
done
$bench --latency --repeat=1000
$bench --latency --repeat=1000 --single-launch=0 | grep -E "clr_reduce"
# Mid sizes: the coarse sum in one launch and in two, 1e5..1e8.
for sl in 1 0; do
  echo "reduce.single_launch=$sl"
  $bench --kernels=coarse --per-decade=3 --min-n=1e5 --max-n=1e8 \
    --repeat=${REPEAT_MID:-50} --single-launch=$sl 2>/dev/null | tail -n 14
done
# Whole commands, as a user runs them (generated data in clr_host_alloc
# memory).
for k in coarse decoupled; do
  $cli --kernel=$k --n=1e8 --repeat=10 | grep -E "kernel|h2d|d2h|verified"
done
PYTHONPATH=$here python3 - <<'PY'
import torch
from peers import small_calls, wall  # tools/perf/peers.py
for n in (10**6, 10**7, 10**8):
    x = torch.rand(n)
    p = x.pin_memory()
    for name, h in (("pageable", x), ("pinned", p)):
        ms = wall(lambda: h.to("cuda").sum().item(), 10)
        print("peer torch %s tensor .to(cuda).sum().item() n=%d: %.3f ms %.2f GB/s"
              % (name, n, ms, n * 4 / ms / 1e6))
small_calls(1000)
PY
