# Sourced by the scripts that measure on a lent GPU (transform-measure.sh,
# segments-measure.sh; their PyTorch peers are timed by peers.py):
#   . "$(dirname "$0")/measure-common.sh"
#   measure_build NAME [OUTDIR]   then   measure_tests TEST...
# measure_build registers NVIDIA's OpenCL ICD where the driver is there
# (the lent machines have no ICD file), builds clreduce (release) afresh in
# $BUILD (default /tmp/clreduce-NAME-build) with its program cache in
# $CLREDUCE_CACHE_DIR (default /tmp/clreduce-NAME-cache), and sets out
# (OUTDIR, else $OUT, else /tmp/clreduce-NAME), b (the build), cli and bench.
# On a failed build it prints the logs' tails and exits.
measure_build() {
  local name=$1
  out=${2:-${OUT:-/tmp/clreduce-$name}}
  mkdir -p "$out" /etc/OpenCL/vendors 2>/dev/null
  if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] ||
    ldconfig -p 2>/dev/null | grep -q libnvidia-opencl; then
    [ -f /etc/OpenCL/vendors/nvidia.icd ] ||
      echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
  fi
  b=${BUILD:-/tmp/clreduce-$name-build}
  export CLREDUCE_CACHE_DIR=${CLREDUCE_CACHE_DIR:-/tmp/clreduce-$name-cache}
  rm -rf "$b"
  meson setup "$b" --buildtype=release >"$out/setup.log" 2>&1 &&
    ninja -C "$b" >"$out/build.log" 2>&1 || {
    tail -n 30 "$out/setup.log" "$out/build.log"
    exit 1
  }
  cli=$b/src/cli/clreduce bench=$b/src/bench/clreduce-bench
}

# The named meson tests on the device (unless TESTS=false), within
# TEST_TIMEOUT seconds (300); their log in $out/tests.log, a line a test.
measure_tests() {
  [ "${TESTS:-true}" = true ] || return 0
  timeout "${TEST_TIMEOUT:-300}" meson test -C "$b" --num-processes 4 "$@" \
    >"$out/tests.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):" "$out/tests.log"
}
