#!/usr/bin/env bash
# Argmin / argmax per segment on the device (docs/perf-log/segments.md,
# "Argmin / argmax / minmax per segment"): build clreduce (release), run the indexed-segment tests
# there, then the segmented reductions' three shapes (random, long, batch)
# with --op=argmax through clreduce (verified), and where PyTorch and a CUDA GPU are there its nearest
# peers with CUDA events: M.argmax(dim=1) of the 10000 x 1000 batch,
# torch.segment_reduce "max" (values only: PyTorch has no segmented
# argmax) of the random and long shapes, x.argmax() of 1e8.
#   tools/perf/segments-indexed-measure.sh [OUTDIR]      (REPEAT=50 by default)
set -u
. "$(dirname "$0")/measure-common.sh"
measure_build segments-indexed "${1:-}"
r=${REPEAT:-50}
$cli --list-devices | head -4
measure_tests segments-indexed segments-keys segments-ranges segments-cli \
  transform-indexed transform-cli
segment_shapes
for op in argmax minmax; do
  three_shapes "$op-" --op=$op
done
shape sum-random --segments="$out/random.off" --n=$nrand
shape argmax-1e8 --op=argmax --n=1e8
python3 - "$r" "$out" "$(dirname "$0")" <<'PY' 2>&1 || echo "(no PyTorch / CUDA: peers not measured)"
import sys
sys.path.insert(0, sys.argv[3])
from peers import report, segment_peers  # tools/perf/peers.py
report(segment_peers(sys.argv[2], "max"), int(sys.argv[1]))
PY
