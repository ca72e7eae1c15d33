# Sourced by the scripts of tools/perf that measure on a device
# (transform-measure.sh, segments-measure.sh, ...; their PyTorch peers are
# timed by peers.py):
#   . "$(dirname "$0")/measure-common.sh"
#   measure_build NAME [OUTDIR]   then   measure_tests TEST...,
#   segment_shapes and shape
# Sourcing it sets perf (this directory, tools/perf) and root (the source
# tree, two levels up), so that the scripts run from any directory.
# measure_build registers NVIDIA's OpenCL ICD where the driver is there
# (the lent machines have no ICD file: measure_icd, which a script that
# builds nothing calls alone), builds clreduce (release) afresh in
# $BUILD (default /tmp/clreduce-NAME-build) with its program cache in
# $CLREDUCE_CACHE_DIR (default /tmp/clreduce-NAME-cache), and sets out
# (OUTDIR, else $OUT, else /tmp/clreduce-NAME), b (the build), cli, bench
# and tools (the build's tools/perf, where the measuring programs are).
# On a failed build it prints the logs' tails and exits.
perf=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$perf/../.." && pwd)
# measure_icd: NVIDIA's OpenCL ICD registered where its driver is there
# without one (needs root; nothing done elsewhere).
measure_icd() {
  if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] ||
    ldconfig -p 2>/dev/null | grep -q libnvidia-opencl; then
    mkdir -p /etc/OpenCL/vendors 2>/dev/null
    [ -f /etc/OpenCL/vendors/nvidia.icd ] ||
      echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
  fi
}
measure_build() {
  local name=$1
  out=${2:-${OUT:-/tmp/clreduce-$name}}
  mkdir -p "$out"
  measure_icd
  b=${BUILD:-/tmp/clreduce-$name-build}
  export CLREDUCE_CACHE_DIR=${CLREDUCE_CACHE_DIR:-/tmp/clreduce-$name-cache}
  rm -rf "$b"
  meson setup "$b" "$root" --buildtype=release >"$out/setup.log" 2>&1 &&
    ninja -C "$b" >"$out/build.log" 2>&1 || {
    tail -n 30 "$out/setup.log" "$out/build.log"
    exit 1
  }
  cli=$b/src/cli/clreduce bench=$b/src/bench/clreduce-bench tools=$b/tools/perf
}

# The named meson tests on the device (unless TESTS=false), within
# TEST_TIMEOUT seconds (300); their log in $out/tests.log, a line a test.
measure_tests() {
  [ "${TESTS:-true}" = true ] || return 0
  timeout "${TEST_TIMEOUT:-300}" meson test -C "$b" --num-processes 4 "$@" \
    >"$out/tests.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):" "$out/tests.log"
}

# shape NAME CLREDUCE-OPTIONS...: one verified clreduce run with --repeat=$r
# and --json into $out/NAME.json, and a line of its figures.
shape() {
  local name=$1
  shift
  $cli "$@" --repeat="${r:-50}" --json >"$out/$name.json" 2>"$out/$name.err"
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("%-26s FAILED (see .err)" % sys.argv[2]); sys.exit()
print("%-26s segments %8s  n %10d  kernel %.4f ms  %7.1f GB/s  h2d %.2f ms"
      "  verified %s" % (sys.argv[2], d.get("segments", "-"), d["n"],
                         d["kernel_ms"], d["gbps"], d["h2d_ms"],
                         d["verified"]))
PY
}

# segment_shapes: the segmented reductions' three shapes (random, long,
# batch); the first two as offsets files in $out: random.off
# (1e6 segments of random length 1..200, seeded) and three.off (3 of 3e7);
# sets nrand, the random shape's element count.
segment_shapes() {
  python3 - "$out" <<'PY'
import array, random, sys
random.seed(13)
off = [0]
for _ in range(1_000_000):
    off.append(off[-1] + random.randint(1, 200))
array.array("Q", off).tofile(open(sys.argv[1] + "/random.off", "wb"))
array.array("Q", [0, 30_000_000, 60_000_000, 90_000_000]).tofile(
    open(sys.argv[1] + "/three.off", "wb"))
print("random: %d segments, n = %d" % (len(off) - 1, off[-1]))
PY
  nrand=$(python3 -c "import array; a=array.array('Q'); a.frombytes(open('$out/random.off','rb').read()); print(a[-1])")
}

# three_shapes PREFIX CLREDUCE-OPTIONS...: `shape` over the three segment
# shapes (segment_shapes first) with the options: PREFIXrandom,
# PREFIXthree-long and PREFIXbatch (rows of 1000, $BATCH_N elements: 1e7
# unless set).
three_shapes() {
  local p=$1
  shift
  shape "${p}random" "$@" --segments="$out/random.off" --n="$nrand"
  shape "${p}three-long" "$@" --segments="$out/three.off" --n=9e7
  shape "${p}batch" "$@" --segment-length=1000 --n="${BATCH_N:-1e7}"
}

# decoupled_bench LINES: the decoupled scan at 1e8 beside the streaming
# read, one clreduce-bench run, its last LINES lines.
decoupled_bench() {
  echo "== clreduce-bench --kernels=decoupled --min-n=1e8 --max-n=1e8"
  $bench --kernels=decoupled --min-n=1e8 --max-n=1e8 --repeat="$r" \
    2>/dev/null | tail -"$1"
}
