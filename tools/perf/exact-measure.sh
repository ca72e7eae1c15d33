#!/usr/bin/env bash
# Exact sums on an NVIDIA GPU: the tests, `clreduce --exact` at 1e8 for
# float and double, and clreduce-bench --exact against the streaming read
# for a few tunings (exact.terms, reduce.vec_bytes): the GPU figures of
# docs/perf-log/transforms.md's exact-sum table.
#   tools/perf/exact-measure.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/clreduce-exact}; mkdir -p "$out" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] ||
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
b=/tmp/clreduce-exact-build; export CLREDUCE_CACHE_DIR=/tmp/clreduce-exact-cache
rm -rf "$b" "$CLREDUCE_CACHE_DIR"
meson setup "$b" "$root" --buildtype=release >"$out/setup.log" 2>&1 &&
  ninja -C "$b" >"$out/build.log" 2>&1 || { tail -30 "$out"/*.log; exit 1; }
cli=$b/src/cli/clreduce bench=$b/src/bench/clreduce-bench
if [ "${TESTS:-true}" = true ]; then
  timeout 200 meson test -C "$b" exact exact-rational >"$out/tests.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ |FAIL" "$out/tests.log" | head -20
fi
for t in float double; do
  $cli --exact --type=$t --n=1e8 --repeat=20 |
    grep -E "run:|pass|result|refer|error|kernel:|bandw|verified"
done
base=$(ls "$root"/data/tuning/*.txt)
# SPECS: terms:vec_bytes pairs, comma-separated
for spec in $(echo "${SPECS:-2:16,3:16,2:32}" | tr , ' '); do
  set -- $(echo "$spec" | tr : ' ')
  d=$out/tuning-$1-$2; mkdir -p "$d"
  for f in $base; do
    (cat "$f"; echo "exact.terms=$1"; echo "reduce.vec_bytes=$2") >"$d/$(basename "$f")"
  done
  for t in float double; do
    echo "== exact.terms=$1 reduce.vec_bytes=$2 $t"
    CLREDUCE_TUNING_DIR=$d $bench --type=$t --kernels=coarse --exact \
      --min-n=1e8 --max-n=1e8 --repeat=${REPEAT:-50} 2>/dev/null | tail -3
  done
done
