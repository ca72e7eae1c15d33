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
. "$(dirname "$0")/measure-common.sh"
measure_build segments "${1:-}"
r=${REPEAT:-50}
$cli --list-devices | head -4
# 1. Correctness on the device.
measure_tests segments-matrix segments-layouts segments-edges segments-cli
# 2. The issue's shapes as offsets files: 1e6 segments of random length
#    1..200 (seeded), 3 segments of 3e7.
segment_shapes
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
python3 - "$r" "$out" "$(dirname "$0")" <<'EOF' 2>&1 || echo "(no PyTorch / CUDA: peers not measured)"
import sys
sys.path.insert(0, sys.argv[3])
import torch
from peers import random_segments, report  # scripts/peers.py
r, out = int(sys.argv[1]), sys.argv[2]
off, lengths = random_segments(out)
x = torch.rand(int(off[-1]), device="cuda")
three = torch.tensor([30_000_000] * 3, device="cuda")
y = torch.rand(90_000_000, device="cuda")
m = torch.rand(10_000, 1_000, device="cuda")
s = torch.rand(100_000_000, device="cuda")
report([
    ("segment_reduce sum, random 1..200", lambda: torch.segment_reduce(
        x, "sum", lengths=lengths), 4 * x.numel() + 8 * len(off)),
    ("segment_reduce sum, 3 x 3e7", lambda: torch.segment_reduce(
        y, "sum", lengths=three), 4 * y.numel() + 32),
    ("M.sum(dim=1), 10000 x 1000", lambda: m.sum(dim=1), 4 * m.numel()),
    ("x.sum(), 1e8 (the stream's peer)", lambda: s.sum(), 4 * s.numel())], r)
EOF
