#!/usr/bin/env bash
# Matrix reductions (clr_run's CLR_REQ_MATRIX: a result per row, axis 1,
# or per column, axis 0): build clreduce (release), run the matrix tests
# and the bench's command-line test on the device, then
# `clreduce-bench --matrix` for TYPES x OPS (every shape's results
# verified against the CPU, its kernel time beside the streaming read of
# the same bytes; the table and a JSON file each), and where PyTorch and a
# CUDA GPU are there the peers on the same shapes (peers.py's
# matrix_peers): M.sum(dim=1), M.sum(dim=0) and
# torch.var_mean(M, dim=..., correction=0), CUDA-event medians and the
# kernels' device time.
#   tools/perf/matrix-measure.sh [OUTDIR]        (REPEAT=30 by default)
# SHAPES=RxC[:axis],... replaces the default shapes (rows of 1e5x1000,
# 1e6x100, 1e7x10, 1e4x1e4; columns of 1e5x1000, 1000x1e5, 1e7x10, 10x1e7)
# in both; TYPES (default float) and OPS (default sum) the bench's runs
# (the peers: float sums and var_mean alone).  An op of OPS that is var or
# std is timed over the flat array of FLAT elements (1e8) too, beside the
# stream read (the peers: torch.var_mean of the flat array).  BENCH=PATH times that
# clreduce-bench (BENCH=clreduce-bench: the one on PATH) instead of
# building one, and runs no tests.  On PoCL:
#   TESTS=false REPEAT=5 tools/perf/matrix-measure.sh
# Exit status 1 when a bench run failed (a result that failed
# verification, or an error; its .err file says which), else 0.
set -u
. "$(dirname "$0")/measure-common.sh"
r=${REPEAT:-30}
if [ -n "${BENCH:-}" ]; then
  bench=$(command -v "$BENCH") || {
    echo "BENCH=$BENCH: no such program"
    exit 1
  }
  out=${1:-${OUT:-/tmp/clreduce-matrix}}
  mkdir -p "$out"
  measure_icd
else
  measure_build matrix "${1:-}"
  measure_tests matrix-ops matrix-shapes matrix-stream matrix-errors \
    matrix-ref bench-cli
fi
"$bench" --version
fail=0
for t in ${TYPES:-float}; do
  for op in ${OPS:-sum}; do
    name=matrix-$op-$t
    echo "== clreduce-bench --matrix --type=$t --op=$op --repeat=$r${SHAPES:+ --shapes=$SHAPES}"
    "$bench" --matrix --type="$t" --op="$op" --repeat="$r" \
      ${SHAPES:+--shapes="$SHAPES"} --json="$out/$name.json" \
      >"$out/$name.txt" 2>"$out/$name.err"
    rc=$?
    head -n 1 "$out/$name.txt" # the device
    sed -n '/^kernel /,$p' "$out/$name.txt"
    if [ "$rc" != 0 ]; then
      echo "FAILED (exit $rc): $(tail -n 3 "$out/$name.err")"
      fail=1
    fi
  done
  case " ${OPS:-sum} " in
  *" var "* | *" std "*)
    name=flat-var-$t
    echo "== clreduce-bench --op=var --type=$t --kernel=coarse --min-n=${FLAT:-1e8} --max-n=${FLAT:-1e8} --repeat=$r"
    "$bench" --op=var --type="$t" --kernel=coarse --min-n="${FLAT:-1e8}" \
      --max-n="${FLAT:-1e8}" --repeat="$r" --json="$out/$name.json" \
      >"$out/$name.txt" 2>"$out/$name.err"
    rc=$?
    sed -n '/^kernel /,$p' "$out/$name.txt"
    if [ "$rc" != 0 ]; then
      echo "FAILED (exit $rc): $(tail -n 3 "$out/$name.err")"
      fail=1
    fi
    ;;
  esac
done
# The peers: PyTorch with CUDA events and CUPTI, median of $r runs after
# warm-up.
if python3 -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' \
  2>/dev/null; then
  echo "== PyTorch peers (M.sum, torch.var_mean), median of $r"
  python3 - "$r" "$(dirname "$0")" "${SHAPES:-}" >"$out/peers.txt" 2>&1 <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
from peers import matrix_peers  # tools/perf/peers.py
matrix_peers(int(sys.argv[1]), sys.argv[3])
EOF
  rc=$?
  cat "$out/peers.txt"
  [ "$rc" = 0 ] || echo "peers FAILED (exit $rc)"
else
  echo "(no PyTorch / CUDA: peers not measured)"
fi
exit $fail
