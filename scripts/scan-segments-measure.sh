#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md's segmented-scan table: build clreduce
# (release), run the segmented-scan tests on the device, then the shapes of
# the segmented reductions (1e6 segments of random length 1..200, three of
# 3e7, rows of 1000) as segmented scans through clreduce (verified), a
# sweep of the elements per work-item (--coarse), the plain scan and the
# streaming read beside them, and where PyTorch and a CUDA GPU are there a
# peer: the segmented sum as torch.cumsum minus each segment's base.
#   scripts/scan-segments-measure.sh [OUTDIR]      (REPEAT=50 by default)
set -u
. "$(dirname "$0")/measure-common.sh"
measure_build scan-segments "${1:-}"
r=${REPEAT:-50}
$cli --list-devices | head -4
# 1. Correctness on the device (and the scan and platform paths the change
#    touched).
measure_tests scan-segments-matrix scan-segments-shapes scan-segments-edges \
  segments-cli segments-edges scan-errors scan-carry api cli
# 2. The shapes as offsets files (seeded as segments-measure.sh's).
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
shape() { # name, clreduce options: one verified run, JSON figures
  local name=$1
  shift
  $cli "$@" --repeat=$r --json >"$out/$name.json" 2>"$out/$name.err"
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("%-26s FAILED (see .err)" % sys.argv[2]); sys.exit()
print("%-26s n %10d  kernel %.4f ms  %7.1f GB/s  h2d %.2f ms  verified %s"
      % (sys.argv[2], d["n"], d["kernel_ms"], d["gbps"], d["h2d_ms"],
         d["verified"]))
PY
}
for t in float int; do
  shape "random-$t" --scan --type=$t --segments="$out/random.off" --n=$nrand
  shape "three-long-$t" --scan --type=$t --segments="$out/three.off" --n=9e7
  shape "rows-1000-$t" --scan --type=$t --segment-length=1000 --n=1e8
  shape "plain-scan-$t" --type=$t --kernel=decoupled --n=1e8
done
shape rows-exclusive-double --scan --exclusive --type=double \
  --segment-length=1000 --n=1e8
# 3. Elements per work-item.
for c in ${COARSE:-4 8 16 32 64}; do
  shape "random-coarse-$c" --scan --segments="$out/random.off" --n=$nrand \
    --coarse=$c
  shape "three-long-coarse-$c" --scan --segments="$out/three.off" --n=9e7 \
    --coarse=$c
done
# 4. The streaming read and the decoupled scan in one bench run.
echo "== clreduce-bench --kernels=decoupled --min-n=1e8 --max-n=1e8"
$bench --kernels=decoupled --min-n=1e8 --max-n=1e8 --repeat=$r 2>/dev/null |
  tail -3
# 5. Peer: PyTorch, CUDA events, median of $r runs after warm-up.
python3 - "$r" "$out" "$(dirname "$0")" <<'PY' 2>&1 || echo "(no PyTorch / CUDA: peer not measured)"
import array, sys
sys.path.insert(0, sys.argv[3])
import torch
from peers import report  # scripts/peers.py
r, out = int(sys.argv[1]), sys.argv[2]
off = array.array("Q")
off.frombytes(open(out + "/random.off", "rb").read())
lengths = torch.tensor([off[i + 1] - off[i] for i in range(len(off) - 1)],
                       device="cuda")
n = int(off[-1])
x = torch.rand(n, device="cuda")
def seg_cumsum(x, lengths):
    c = x.cumsum(0)
    ends = lengths.cumsum(0)
    base = torch.cat([torch.zeros(1, device=x.device), c[ends[:-1] - 1]])
    return c - base.repeat_interleave(lengths, output_size=x.numel())
report([("cumsum - base, random 1e6 segs", lambda: seg_cumsum(x, lengths),
         2 * n * 4 + len(off) * 8),
        ("torch.cumsum (no segments)", lambda: x.cumsum(0), 2 * n * 4)], r)
PY
