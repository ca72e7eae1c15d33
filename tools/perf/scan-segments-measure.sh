#!/usr/bin/env bash
# The figures of docs/perf-log/scans.md's segmented-scan tables: build clreduce
# (release), run the segmented-scan tests on the device, then the shapes of
# the segmented reductions (1e6 segments of random length 1..200, three of
# 3e7, rows of 1000) as segmented scans through clreduce (verified), a
# sweep of the elements per work-item (--coarse), the plain scan and the
# streaming read beside them, and where PyTorch and a CUDA GPU are there a
# peer: the segmented sum as torch.cumsum minus each segment's base.
#   tools/perf/scan-segments-measure.sh [OUTDIR]      (REPEAT=50 by default)
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
segment_shapes
for t in float int; do
  BATCH_N=1e8 three_shapes "$t-" --scan --type=$t
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
decoupled_bench 3
# 5. Peer: PyTorch, CUDA events, median of $r runs after warm-up.
python3 - "$r" "$out" "$(dirname "$0")" <<'PY' 2>&1 || echo "(no PyTorch / CUDA: peer not measured)"
import sys
sys.path.insert(0, sys.argv[3])
import torch
from peers import random_segments, report  # tools/perf/peers.py
r, out = int(sys.argv[1]), sys.argv[2]
off, lengths = random_segments(out)
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
