#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md's "argmax, maps, dot, half" table:
# build clreduce (release), run the transform tests on the device, then
# clreduce-bench at n = 1e8 for each new reduction beside the plain float
# sum and the streaming read, and (where PyTorch and a CUDA GPU are there)
# the peers' figures with CUDA events.
#   scripts/transform-measure.sh [OUTDIR]      (REPEAT=50 by default)
# On the lent NVIDIA machines the OpenCL ICD is registered first.
set -u
out=${1:-${OUT:-/tmp/clreduce-transform}}
mkdir -p "$out" /etc/OpenCL/vendors 2>/dev/null
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] ||
  ldconfig -p 2>/dev/null | grep -q libnvidia-opencl; then
  [ -f /etc/OpenCL/vendors/nvidia.icd ] ||
    echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
b=${BUILD:-/tmp/clreduce-transform-build}
export CLREDUCE_CACHE_DIR=${CLREDUCE_CACHE_DIR:-/tmp/clreduce-transform-cache}
rm -rf "$b"
meson setup "$b" --buildtype=release >"$out/setup.log" 2>&1 &&
  ninja -C "$b" >"$out/build.log" 2>&1 || {
  tail -n 30 "$out/setup.log" "$out/build.log"
  exit 1
}
cli=$b/src/cli/clreduce bench=$b/src/bench/clreduce-bench
r=${REPEAT:-50}
$cli --list-devices | head -4
# 1. Correctness on the device.
if [ "${TESTS:-true}" = true ]; then
  timeout ${TEST_TIMEOUT:-300} meson test -C "$b" --num-processes 4 \
    transform-indexed transform-maps transform-dot transform-half \
    transform-errors transform-cli >"$out/tests.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):" "$out/tests.log"
fi
# 2. clreduce-bench rows at 1e8 (each row prints the streaming read of the
#    bytes it reads first).
row() {
  echo "== clreduce-bench $* --kernels=coarse --min-n=1e8 --max-n=1e8 --repeat=$r"
  $bench "$@" --kernels=coarse --min-n=1e8 --max-n=1e8 --repeat=$r 2>/dev/null |
    tail -2
}
# One row a line: the options of clreduce-bench.
while IFS= read -r line; do
  eval "row $line"
done <<'ROWS'
--op=sum
--op=argmax
--op=argmin
--op=minmax
--op=argmax --type=int
--op=argmax --type=double
--op=minmax --type=double
--map=square
--map=abs --op=argmax
--dot
--dot --type=double
--type=half
--type=half --op=max
--type=half --op=argmax
--type=half --op=minmax
--op=mean
--op=mean --type=int
--op=max
--op=min --type=double
--map='x > 0.5f'
--map='(i % 2 == 0) ? x : 0.0f'
ROWS
# 3. Whole commands, verified.
cmd() {
  echo "== clreduce $* --n=1e8 --repeat=20"
  $cli "$@" --n=1e8 --repeat=20 | grep -E "^(run|result|reference|error|kernel|bandwidth|verified)"
}
cmd --op=argmax
cmd --dot
cmd --type=half
cmd '--map=x > 0.5f' --acc=long
cmd --map=square
cmd --op=minmax --type=int
# 4. Peers: PyTorch with CUDA events, median of $r runs after warm-up.
python3 - "$r" <<'EOF' 2>&1 || echo "(no PyTorch / CUDA: peers not measured)"
import sys, torch
r = int(sys.argv[1])
n = 100_000_000
x = torch.rand(n, device="cuda")
y = torch.rand(n, device="cuda")
h = x.half()
def med(f):
    for _ in range(3):
        f()
    ts = []
    for _ in range(r):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]
for name, f, nbytes in [
        ("torch.sum(x) float", lambda: x.sum(), 4 * n),
        ("torch.argmax(x) float", lambda: x.argmax(), 4 * n),
        ("torch.aminmax(x) float", lambda: torch.aminmax(x), 4 * n),
        ("torch.linalg.vector_norm(x) float", lambda: torch.linalg.vector_norm(x), 4 * n),
        ("torch.dot(x, y) float", lambda: torch.dot(x, y), 8 * n),
        ("h.sum(dtype=float32) half", lambda: h.sum(dtype=torch.float32), 2 * n),
        ("(x > 0.5).sum() float", lambda: (x > 0.5).sum(), 4 * n)]:
    ms = med(f)
    print("peer %-36s %.4f ms  %7.1f GB/s" % (name, ms, nbytes / ms / 1e6))
EOF
