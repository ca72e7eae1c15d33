#!/usr/bin/env bash
# The figures of docs/perf-log/segments.md's segmented-reduction tables: build
# clreduce (release), run the segments tests on the device, then the
# three shapes (random, long, batch) through clreduce (verified) and
# clreduce-bench (beside the streaming read), a sweep of the units per work-item (--coarse), and
# where PyTorch and a CUDA GPU are there the peers' figures with CUDA
# events: torch.segment_reduce of the same lengths, M.sum(dim=1).
#   tools/perf/segments-measure.sh [OUTDIR]      (REPEAT=50 by default)
# Also the H100 coarse float sum and decoupled scan at 1e8 (a check that
# those figures still hold).
set -u
. "$(dirname "$0")/measure-common.sh"
measure_build segments "${1:-}"
r=${REPEAT:-50}
$cli --list-devices | head -4
# 1. Correctness on the device.
measure_tests segments-matrix segments-layouts segments-edges segments-cli
# 2. The shapes as offsets files: 1e6 segments of random length
#    1..200 (seeded), 3 segments of 3e7.
segment_shapes
three_shapes ""
# 3. Units per work-item (clr_options.coarse), each shape.
for c in ${COARSE:-4 8 16 32 64 128}; do
  three_shapes "coarse-$c-" --coarse=$c
done
# 4. clreduce-bench: the shapes beside the streaming read (1e7: the batch;
#    1e8: the random and long shapes), and the coarse sum and the
#    decoupled scan at 1e8.
for n in 1e7 1e8; do
  echo "== clreduce-bench --segments --kernels=coarse --min-n=$n --max-n=$n"
  $bench --segments --kernels=coarse --min-n=$n --max-n=$n --repeat=$r \
    2>/dev/null | tail -5
done
decoupled_bench 2
# 5. Peers: PyTorch with CUDA events, median of $r runs after warm-up.
python3 - "$r" "$out" "$(dirname "$0")" <<'EOF' 2>&1 || echo "(no PyTorch / CUDA: peers not measured)"
import sys
sys.path.insert(0, sys.argv[3])
from peers import report, segment_peers  # tools/perf/peers.py
report(segment_peers(sys.argv[2], "sum"), int(sys.argv[1]))
EOF
