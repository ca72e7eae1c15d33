#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md's segmented-reduction table: build
# clreduce (release), run the segments tests on the device, then the
# issue's three shapes through clreduce (verified) and clreduce-bench (beside
# the streaming read), a sweep of the units per work-item (--coarse), and
# where PyTorch and a CUDA GPU are there the peers' figures with CUDA
# events: torch.segment_reduce of the same lengths, M.sum(dim=1).
#   scripts/segments-measure.sh [OUTDIR]      (REPEAT=50 by default)
# Also the H100 coarse float sum and decoupled scan at 1e8 (issue 10's
# check that those figures still hold).
set -u
out=${1:-${OUT:-/tmp/clreduce-segments}}
mkdir -p "$out" /etc/OpenCL/vendors 2>/dev/null
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] ||
  ldconfig -p 2>/dev/null | grep -q libnvidia-opencl; then
  [ -f /etc/OpenCL/vendors/nvidia.icd ] ||
    echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
b=${BUILD:-/tmp/clreduce-segments-build}
export CLREDUCE_CACHE_DIR=${CLREDUCE_CACHE_DIR:-/tmp/clreduce-segments-cache}
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
    segments-matrix segments-layouts segments-edges segments-cli \
    >"$out/tests.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):" "$out/tests.log"
fi
# 2. The issue's shapes as offsets files: 1e6 segments of random length
#    1..200 (seeded), 3 segments of 3e7.
python3 - "$out" <<'EOF'
import array, random, sys
random.seed(13)
off = [0]
for _ in range(1_000_000):
    off.append(off[-1] + random.randint(1, 200))
array.array("Q", off).tofile(open(sys.argv[1] + "/random.off", "wb"))
array.array("Q", [0, 30_000_000, 60_000_000, 90_000_000]).tofile(
    open(sys.argv[1] + "/three.off", "wb"))
print("random: %d segments, n = %d" % (len(off) - 1, off[-1]))
EOF
nrand=$(python3 -c "import array,sys; a=array.array('Q'); a.frombytes(open('$out/random.off','rb').read()); print(a[-1])")
shape() { # name, clreduce options: one verified run, JSON figures
  local name=$1
  shift
  $cli "$@" --repeat=$r --json >"$out/$name.json" 2>"$out/$name.err"
  python3 - "$out/$name.json" "$name" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("%-22s FAILED (see .err)" % sys.argv[2]); sys.exit()
print("%-22s segments %8d  n %10d  kernel %.4f ms  %7.1f GB/s  verified %s"
      % (sys.argv[2], d["segments"], d["n"], d["kernel_ms"], d["gbps"],
         d["verified"]))
EOF
}
shape random --segments="$out/random.off" --n=$nrand
shape three-long --segments="$out/three.off" --n=9e7
shape batch-10000x1000 --segment-length=1000 --n=1e7
# 3. Units per work-item (clr_options.coarse), each shape.
for c in ${COARSE:-4 8 16 32 64 128}; do
  shape "random-coarse-$c" --segments="$out/random.off" --n=$nrand --coarse=$c
  shape "three-long-coarse-$c" --segments="$out/three.off" --n=9e7 --coarse=$c
  shape "batch-coarse-$c" --segment-length=1000 --n=1e7 --coarse=$c
done
# 4. clreduce-bench: the shapes beside the streaming read (1e7: the batch;
#    1e8: the random and long shapes), and the coarse sum and the
#    decoupled scan at 1e8.
for n in 1e7 1e8; do
  echo "== clreduce-bench --segments --kernels=coarse --min-n=$n --max-n=$n"
  $bench --segments --kernels=coarse --min-n=$n --max-n=$n --repeat=$r \
    2>/dev/null | tail -5
done
echo "== clreduce-bench --kernels=decoupled --min-n=1e8 --max-n=1e8"
$bench --kernels=decoupled --min-n=1e8 --max-n=1e8 --repeat=$r 2>/dev/null |
  tail -2
# 5. Peers: PyTorch with CUDA events, median of $r runs after warm-up.
python3 - "$r" "$out" <<'EOF' 2>&1 || echo "(no PyTorch / CUDA: peers not measured)"
import array, sys, torch
r, out = int(sys.argv[1]), sys.argv[2]
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
off = array.array("Q")
off.frombytes(open(out + "/random.off", "rb").read())
lengths = torch.tensor([off[i + 1] - off[i] for i in range(len(off) - 1)],
                       device="cuda")
x = torch.rand(int(off[-1]), device="cuda")
three = torch.tensor([30_000_000] * 3, device="cuda")
y = torch.rand(90_000_000, device="cuda")
m = torch.rand(10_000, 1_000, device="cuda")
s = torch.rand(100_000_000, device="cuda")
for name, f, nbytes in [
        ("segment_reduce sum, random 1..200", lambda: torch.segment_reduce(
            x, "sum", lengths=lengths), 4 * x.numel() + 8 * len(off)),
        ("segment_reduce sum, 3 x 3e7", lambda: torch.segment_reduce(
            y, "sum", lengths=three), 4 * y.numel() + 32),
        ("M.sum(dim=1), 10000 x 1000", lambda: m.sum(dim=1), 4 * m.numel()),
        ("x.sum(), 1e8 (the stream's peer)", lambda: s.sum(), 4 * s.numel())]:
    ms = med(f)
    print("peer %-36s %.4f ms  %7.1f GB/s" % (name, ms, nbytes / ms / 1e6))
EOF
