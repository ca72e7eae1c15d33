#!/usr/bin/env bash
# Several devices on a machine with two NVIDIA GPUs (clr_group):
# docs/SCALING.md's GPU figures.
#   tools/perf/group-measure.sh [OUTDIR]
# Builds, lists the devices, then clreduce-bench --group=all (a float sum
# over both GPUs against the first alone: resident buffers and host
# arrays) from 1e3 to 1e9 and at 2e9, and the clreduce command over both
# devices and over one (reduction and scan), each verified.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/measure-common.sh"
measure_build group "${1:-}"
$cli --list-devices
nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current \
  --format=csv 2>/dev/null
$bench --group=all --min-n=1e3 --max-n=1e9 --repeat=${REPEAT:-10}
$bench --group=all --min-n=2e9 --max-n=2e9 --repeat=${REPEAT:-10} |
  tail -n 1
for d in 0 all; do
  echo "== clreduce --device=$d"
  $cli --device=$d --n=1e9 --repeat=5 |
    grep -E "^(part|kernel|wall|h2d|d2h|bandwidth|verified)"
  $cli --device=$d --kernel=decoupled --n=5e8 --repeat=5 |
    grep -E "^(part|kernel|wall|h2d|d2h|bandwidth|verified)"
  $cli --device=$d --exact --n=1e9 --repeat=5 |
    grep -E "^(result|kernel|wall|verified)"
done
