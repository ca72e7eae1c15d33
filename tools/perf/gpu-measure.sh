#!/usr/bin/env bash
# Build clreduce on a machine with an NVIDIA GPU and measure it: the first
# H100 tables (docs/perf-log/baseline.md; the headline figures in
# docs/PERFORMANCE.md) come from this script.
#   tools/perf/gpu-measure.sh [OUTDIR]
# NVIDIA's OpenCL ICD is registered first (the lent H100 has the driver but
# no ICD file).  Needs meson, ninja, a C compiler and the OpenCL loader.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-/tmp/clreduce-gpu}}
mkdir -p "$out" /etc/OpenCL/vendors 2>/dev/null
[ -f /etc/OpenCL/vendors/nvidia.icd ] ||
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
b=/tmp/clreduce-gpu-build
export CLREDUCE_CACHE_DIR=/tmp/clreduce-gpu-cache
rm -rf "$b" "$CLREDUCE_CACHE_DIR"
meson setup "$b" "$root" --buildtype=release >"$out/setup.log" 2>&1 &&
  ninja -C "$b" >"$out/build.log" 2>&1 || { tail -n 30 "$out/setup.log" "$out/build.log"; exit 1; }
cli=$b/src/cli/clreduce bench=$b/src/bench/clreduce-bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
$cli --list-devices
# 1. Correctness on the GPU: the tests named in $TESTS (default: the
#    reduction and scan matrices and the decoupled scan's level tests; "all"
#    runs the fast suite, "none" nothing) run every kernel there.
tests=${TESTS:-"reduce-coarse reduce-sequential reduce-first-add reduce-interleaved scan-matrix-decoupled scan-matrix-kogge-stone scan-levels scan-carry data adversarial buffer"}
case $tests in
none | false) ;;
all | true)
  timeout ${TEST_TIMEOUT:-300} meson test -C "$b" --suite fast \
    --num-processes 8 >"$out/tests.log" 2>&1 ;;
*)
  timeout ${TEST_TIMEOUT:-300} meson test -C "$b" --num-processes 8 $tests \
    >"$out/tests.log" 2>&1 ;;
esac
[ -f "$out/tests.log" ] && grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):" "$out/tests.log"
# 1b. Autotune (stored under $CLREDUCE_CACHE_DIR/tuning and used below).
if [ "${AUTOTUNE:-false}" = true ]; then
  timeout 240 $bench --autotune >"$out/autotune.txt" 2>&1
  tail -20 "$out/autotune.txt"
  cp "$CLREDUCE_CACHE_DIR"/tuning/*.txt "$out/" 2>/dev/null
fi
# 2. Every kernel, float sum, 1e3 .. 1e8, against the streaming read.
$bench --per-decade=3 --repeat=${REPEAT:-50} --csv="$out/float_sum.csv" \
  --svg="$out/float_sum.svg" --json="$out/float_sum.json" \
  >"$out/float_sum.txt" 2>"$out/float_sum.err"
cat "$out/float_sum.txt"
# 3. The coarse reduction for int sum, min and max, and the scans, at 1e8.
for spec in "int sum" "float min" "float max" "double sum"; do
  set -- $spec
  $bench --type=$1 --op=$2 --min-n=1e8 --max-n=1e8 --kernels=coarse \
    --repeat=${REPEAT:-50} 2>/dev/null | tail -2
done
# 4. Whole commands, as a user runs them.
for k in coarse decoupled kogge-stone; do
  $cli --kernel=$k --n=1e8 --repeat=20 | tail -9
done
