#!/usr/bin/env bash
# Two revisions on one device, in turns: did a change move the plain
# operations' speed?  And the operations the second revision adds, against
# the same streaming read.
#   BEFORE_TREE=DIR tools/perf/revisions-measure.sh [OUTDIR]
#   BEFORE=REV      tools/perf/revisions-measure.sh [OUTDIR]   (git archive)
# DIR is a source tree of the earlier revision (the lent machines have no
# git history: `git archive REV | tar -x -C DIR` beside the tree first).
# Builds both (release), runs the tests named in $GPU_TESTS on this tree,
# then ROUNDS (2) rounds of clreduce-bench over CASES for the earlier
# build and this one in turn (the same cache state: each build warmed
# once), and NEW_CASES on this tree alone.  A case is
# "TYPE OP KERNEL MIN_N MAX_N": one clreduce-bench run of it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/measure-common.sh"
measure_build revisions "${1:-}"
after_bench=$bench
before=${BEFORE_TREE:-}
if [ -z "$before" ]; then
  before=$(mktemp -d /tmp/clreduce-before.XXXXXX)
  git -C "$root" archive "${BEFORE:?BEFORE_TREE or BEFORE}" | tar -x -C "$before"
fi
bb=/tmp/clreduce-before-build
rm -rf "$bb"
meson setup "$bb" "$before" --buildtype=release -Dtests=false \
  >"$out/before-setup.log" 2>&1 && ninja -C "$bb" >"$out/before-build.log" 2>&1 ||
  { tail -n 30 "$out"/before-*.log; exit 1; }
before_bench=$bb/src/bench/clreduce-bench
$cli --list-devices | head -3
[ -n "${GPU_TESTS:-}" ] && measure_tests $GPU_TESTS

r=${REPEAT:-50}
CASES=${CASES:-"float sum coarse 1e5 1e8
int sum coarse 1e8 1e8
double sum coarse 1e8 1e8
float min coarse 1e8 1e8
float argmax coarse 1e8 1e8
float sum decoupled 1e8 1e8
int and sequential 1e7 1e7"}
NEW_CASES=${NEW_CASES:-"uint xor coarse 1e8 1e8
uint xor decoupled 1e8 1e8
float nansum coarse 1e8 1e8
float nanmin coarse 1e8 1e8
float nanargmax coarse 1e8 1e8
float nanmean coarse 1e8 1e8
half nansum coarse 1e8 1e8"}
# one CASE on one build: its lines (the stream read and the kernel)
run_case() {
  local bench=$1 type=$2 op=$3 kernel=$4 lo=$5 hi=$6
  CLREDUCE_CACHE_DIR=$7 $bench --type="$type" --op="$op" --kernels="$kernel" \
    --min-n="$lo" --max-n="$hi" --repeat="$r" 2>/dev/null |
    grep -E "^\(stream read\)|^$kernel " | sed "s/^/$type $op: /"
}
for round in $(seq "${ROUNDS:-2}"); do
  echo "$CASES" | while read -r type op kernel lo hi; do
    echo "== round $round: $type $op $kernel $lo..$hi"
    echo "-- before"
    run_case "$before_bench" "$type" "$op" "$kernel" "$lo" "$hi" /tmp/clreduce-before-cache
    echo "-- after"
    run_case "$after_bench" "$type" "$op" "$kernel" "$lo" "$hi" "$CLREDUCE_CACHE_DIR"
  done
done
echo "$NEW_CASES" | while read -r type op kernel lo hi; do
  echo "== new: $type $op $kernel $lo..$hi"
  run_case "$after_bench" "$type" "$op" "$kernel" "$lo" "$hi" "$CLREDUCE_CACHE_DIR"
done
# PyTorch's peers of the new cases (where PyTorch has the operation), in
# the same run: 1e8 floats uniform in [0,1) with 1% NaN.
if [ "${PEERS:-true}" = true ] && python3 -c "import torch" 2>/dev/null; then
  PYTHONPATH=$perf python3 - "$r" <<'PY'
import sys, torch
from peers import report
r = int(sys.argv[1])
x = torch.rand(100_000_000, device="cuda")
x[torch.rand(x.numel(), device="cuda") < 0.01] = float("nan")
nb = x.numel() * 4
report([("torch.nansum(x)", lambda: x.nansum(), nb),
        ("torch.nanmean(x)", lambda: x.nanmean(), nb),
        ("torch.sum(x) (the same data)", lambda: x.sum(), nb),
        ("x.clone() (a copy: 2x the bytes)", lambda: x.clone(), 2 * nb)], r)
PY
fi
