#!/usr/bin/env bash
# The figures of docs/perf-log/transforms.md's argmax, maps, dot, half table:
# build clreduce (release), run the transform tests on the device, then
# clreduce-bench at n = 1e8 for each new reduction beside the plain float
# sum and the streaming read, and (where PyTorch and a CUDA GPU are there)
# the peers' figures with CUDA events.
#   tools/perf/transform-measure.sh [OUTDIR]      (REPEAT=50 by default)
# On the lent NVIDIA machines the OpenCL ICD is registered first.
set -u
. "$(dirname "$0")/measure-common.sh"
measure_build transform "${1:-}"
r=${REPEAT:-50}
$cli --list-devices | head -4
# 1. Correctness on the device.
measure_tests transform-indexed transform-maps transform-dot transform-half \
  transform-errors transform-cli
# 2. clreduce-bench rows at 1e8 (each row prints the streaming read of the
#    bytes it reads first).
row() {
  echo "== clreduce-bench $* --kernels=coarse --min-n=1e8 --max-n=1e8 --repeat=$r"
  $bench "$@" --kernels=coarse --min-n=1e8 --max-n=1e8 --repeat=$r 2>/dev/null |
    tail -2
}
# The rows: the options of clreduce-bench, grouped (a line a group).
rows=(
  --op=sum --op=argmax --op=argmin --op=minmax
  "--op=argmax --type=int" "--op=argmax --type=double"
  "--op=minmax --type=double"
  --map=square "--map=abs --op=argmax" --dot "--dot --type=double"
  --type=half "--type=half --op=max" "--type=half --op=argmax"
  "--type=half --op=minmax"
  --op=mean "--op=mean --type=int" --op=max "--op=min --type=double"
  "--map='x > 0.5f'" "--map='(i % 2 == 0) ? x : 0.0f'"
)
for line in "${rows[@]}"; do
  eval "row $line"
done
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
python3 - "$r" "$(dirname "$0")" <<'EOF' 2>&1 || echo "(no PyTorch / CUDA: peers not measured)"
import sys
sys.path.insert(0, sys.argv[2])
import torch
from peers import report  # tools/perf/peers.py
r = int(sys.argv[1])
n = 100_000_000
x = torch.rand(n, device="cuda")
y = torch.rand(n, device="cuda")
h = x.half()
report([
    ("torch.sum(x) float", lambda: x.sum(), 4 * n),
    ("torch.argmax(x) float", lambda: x.argmax(), 4 * n),
    ("torch.aminmax(x) float", lambda: torch.aminmax(x), 4 * n),
    ("torch.linalg.vector_norm(x) float", lambda: torch.linalg.vector_norm(x), 4 * n),
    ("torch.dot(x, y) float", lambda: torch.dot(x, y), 8 * n),
    ("h.sum(dtype=float32) half", lambda: h.sum(dtype=torch.float32), 2 * n),
    ("(x > 0.5).sum() float", lambda: (x > 0.5).sum(), 4 * n)], r)
EOF
