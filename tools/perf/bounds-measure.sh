#!/bin/bash
# What bounds the H100 figures of the scan, the int sum, the mid sizes and
# the host arrays (docs/perf-log/: reductions.md, scans.md, staging.md), on
# the lent GPU machine, in one command:
#   tools/perf/bounds-measure.sh [OUTDIR]
# - the scan and reduction tests on the GPU (unless TESTS=false);
# - mid sizes: the coarse float sum in one launch, 1e6 .. 1e8, against the
#   streaming read, for reduce.groups_per_cu 2, 4, 8 (shipped), 16 and
#   reduce.wg 512 (tuning files in $out/tune-*);
# - the int sum at 1e8 with 16- and 32-byte loads and 8 or 16 groups a
#   compute unit, beside the float sum and the stream;
# - the decoupled scan at 1e8 as shipped, with its look-back removed (the
#   kernel from a copy of cl/ where tiles never wait: wrong answers, so
#   --no-verify; what the tiles cost without the chain), and at other
#   shapes; PyTorch's copy (x.clone()) and cumsum (CUB) in the same run;
# - vec32: every reduction op and type at 1e8 and the mid sizes with the
#   shipped 16-byte loads and with 32-byte loads;
# - resident: mid sizes on a device-resident buffer (tools/perf/resident_sizes.c:
#   back to back, and after a flush of the L2), with the shipped kernel and
#   with two parts of its single launch cut from a copy of cl/ (wrong
#   answers, so the program's check is off for them): the last work-group's
#   fold of the partials ("noticket": no group folds), the work-group tree
#   ("notree").
# - minvec: the same resident program with reduce.min_vectors 16 (shipped),
#   8, 4, 2 and 1 (the stream and the sum both take the shape), and with
#   the strided loops of cl/reduce_coarse.cl and cl/stream_read.cl
#   unrolled by 4 (a copy of cl/), in two rounds.
# - fold: the single launch's tail (cl/reduce_coarse.cl), the resident
#   program in turns with this tree's kernels, with warp.shuffles=0
#   (the tree in local memory), and with the library of revision $BEFORE
#   (default c91e0f9: a ticket drawn at the end after a fence, partials
#   through 32-bit atomics, the tree), built beside; two rounds; then the
#   CLI at 1e8 (ops and types) the same three ways.
# - scanshfl: the decoupled scan at 1e8 (float, int) with this tree, with
#   warp.shuffles=0 and with revision $BEFORE, two rounds, and PyTorch's
#   copy and cumsum in the same run.
# - slots: the decoupled scan at 1e8 and 1e7 with its look-back through
#   tagged 64-bit slots (this tree) and through flags and 32-bit words
#   (decoupled.slots=0), in the shipped shape and in 128 x 64, three
#   rounds in turns, and PyTorch's copy and cumsum in the same run.
# - slotshape: the slotted scan at 1e8 in other shapes (wg x items), every
#   op and type with slots and with flags, and PyTorch's copies of 1e8
#   floats and doubles in the same run.
# - scanfinal: the decoupled scan at 1e8, ops and types, with this tree and
#   with revision $BEFORE (set BEFORE=4f860b4: before the slots), float
#   min and double max also at 256 x 32 (the order-key chains alone), the
#   bench's decoupled scan 1e6 .. 1e8, and PyTorch's copies and cumsum.
# - wideshape: the decoupled scan of 8-byte types (double, long) at 1e8 in
#   shapes wg x items (--wg, --coarse), two rounds, and PyTorch's copy of
#   1e8 doubles.
# - blocks: host arrays staged through pinned blocks of 256 KiB .. 8 MiB
#   (clreduce-bench --host --stage-block-kib, 16 threads), 1e7 and 1e8,
#   two rounds.
# - threads: the staged calls with the shipped defaults, and 1.5, 2 and
#   3 MiB blocks with 12 or 16 threads (--stage-threads), 1e7 and 1e8,
#   two rounds; STAGE_SHAPES="12x2048 16x4096" (threads x KiB) picks
#   other shapes, STAGE_MIN_N=1e8 drops the 1e7 rows.
# - stagedefault: the staged calls with the shipped defaults, 1e8 (from
#   STAGE_MIN_N up), three rounds; with STAGE_THREADS="10 14" also with
#   those threads; with STAGE_BEFORE=1 also revision $BEFORE's (or
#   BEFORE_TREE's) bench, in turns.
# - hostbounds: what bounds a malloc'd array's staged trip
#   (tools/perf/host_bounds.c): the host's threaded read and memcpy into
#   pinned memory at 1 .. 16 threads, the pinned write, the caller's array
#   wrapped in a CL_MEM_USE_HOST_PTR buffer and copied on the device, and
#   clr_reduce_host, two rounds.
# - hostcold: clr_reduce_host of malloc'd floats, 1e6 .. 1e8, warm (in
#   the host's cache) and cold (tools/perf/host_cold.c), two rounds; with
#   STAGE_BEFORE=1 also on revision $BEFORE's (or BEFORE_TREE's) library,
#   in turns.
# - busblocks: the bus alone (tools/perf/bus_blocks.c): 400 MB from pinned
#   memory in blocks of 3 .. 48 MiB on one queue or two, against one
#   write; the 12 MiB blocks again while 15 threads copy host memory.
# - gpcfold: the resident program with reduce.groups_per_cu 8 (shipped), 4
#   and 2: with the fold in the last work-group, fewer groups leave it
#   fewer partials to read; two rounds in turns.  Then the segmented scan
#   (rows of 1000, 1e8) of float sum, min and max on the GPU's tiles.
# - wgmid: the resident program with reduce.wg 256 (shipped), 512 and 1024
#   each with reduce.min_vectors 16 (shipped), 4 and 2: wider groups give
#   the fold fewer partials when the grid is wide; then the last group's
#   wait on the slots by a volatile load instead of an atomic (a copy of
#   cl/); two rounds in turns.  (NVIDIA's driver reports 256 as every
#   kernel's CL_KERNEL_WORK_GROUP_SIZE on the H100, so the library clamps
#   512 and 1024 to 256: those rows run the shipped shape.)
# - midpeers: the resident program (shipped), what the profiling events
#   give a kernel that does nothing (tools/perf/empty_kernel.c), then
#   PyTorch's x.sum() and x.clone() at 1e6 .. 2e7 floats and a fill of 32
#   floats, the kernels' device time from CUPTI (tools/perf/peers.py
#   mid_kernels), two rounds in turns.
# - mingroups: the resident program with reduce.min_groups_cu 0 (no
#   floor), 1, 2 and 4: a first pass over at least that many work-groups a
#   compute unit, two rounds in turns; then the CLI's float sum at 1e6 and
#   1e8 with each; then small calls (clreduce-bench --latency, n = 1e3 and
#   1e4: 1e4 takes 10 work-groups with the floor, one without) with 0 and
#   2, two rounds in turns.
# - unroll: the resident program with the strided loops of
#   cl/reduce_coarse.cl and cl/stream_read.cl unrolled by U = 2, 4, 8 (a
#   copy of cl/ each) against this tree, two rounds in turns; then the CLI
#   at 1e8 (float, int, double sums, float min) each way.
# - tail: the single launch's tail taken apart with the shipped grid
#   (copies of cl/, wrong answers): no fold (no group is last), then also
#   no slot published (group 0 stores its value), then also no tree, then
#   also no ticket drawn; the resident program for each and this tree, two
#   rounds in turns.
# - batch: the last group's fold reading its slots four words at a time
#   (one round trip a batch; a rejected experiment, not in the tree: its
#   patch is read from git, $BATCH_REV:scripts/fold-batch.patch with
#   BATCH_REV=66274fb by default, and applied to a copy of cl/),
#   and the same with the batch's first reads by plain volatile loads,
#   against this tree: the resident program two rounds in turns, then the
#   CLI at 1e7 and 1e8 for every type's sum and a float min and double
#   max, each way.
# SECTIONS="mid int scan vec32 resident minvec fold scanshfl slots
# slotshape scanfinal wideshape blocks threads stagedefault hostbounds
# hostcold busblocks gpcfold wgmid midpeers mingroups unroll tail batch"
# (the default: all) picks sections.
set -u
SECTIONS=${SECTIONS:-mid int scan vec32 resident minvec fold scanshfl slots slotshape scanfinal wideshape blocks threads stagedefault hostbounds hostcold busblocks gpcfold wgmid midpeers mingroups unroll tail batch}
on() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
. "$(dirname "$0")/measure-common.sh"
measure_build bounds "${1:-}"
# (TEST_NAMES: other tests instead)
measure_tests ${TEST_NAMES:-scan-matrix-decoupled scan-matrix-kogge-stone \
  scan-levels scan-inplace scan-carry scan-segments-matrix reduce-coarse \
  reduce-single-launch api segments-matrix transform-dot transform-maps \
  transform-half}
r=${REPEAT:-30}

# tune NAME KEY=VALUE...: a tuning directory, the shipped files with the
# keys changed (or added) in the H100's file.
tune() {
  local d=$out/tune-$1
  shift
  rm -rf "$d" && cp -r "$root/data/tuning" "$d"
  for kv in "$@"; do
    if grep -q "^${kv%%=*}=" "$d/nvidia-h100.txt"; then
      sed -i "s/^${kv%%=*}=.*/$kv/" "$d/nvidia-h100.txt"
    else
      echo "$kv" >>"$d/nvidia-h100.txt"
    fi
  done
  echo "$d"
}

# torch_peers NAME...: PyTorch's copy (x.clone()), cumsum (CUB) and sum of
# 1e8 floats on the GPU, CUDA events, median of 30.
torch_peers() {
  python3 - "$@" <<'PY'
import sys, torch
x = torch.rand(10**8, device="cuda")
def med(f, r=30):
    for _ in range(3): f()
    ts = []
    for _ in range(r):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
x64 = x.double() if "copy64" in sys.argv else None
peers = {"copy": ("copy x.clone()", lambda: x.clone(), 8e8),
         "copy64": ("copy of doubles x64.clone()", lambda: x64.clone(), 1.6e9),
         "cumsum": ("cumsum (CUB)", lambda: torch.cumsum(x, 0), 8e8),
         "sum": ("sum", lambda: x.sum(), 4e8)}
for key in sys.argv[1:]:
    name, f, by = peers[key]
    ms = med(f)
    print("peer torch %s 1e8 float: %.4f ms %.0f GB/s" % (name, ms, by / ms / 1e6))
PY
}

# versions LABEL CLREDUCE-ARGS...: a verified run (--repeat=$r) with this
# tree, with warp.shuffles=0 and with revision $BEFORE (build_before first),
# a line each.
versions() {
  local label=$1
  shift
  echo "-- $label this tree: $(kernel_line "$cli" "$@")"
  echo "-- $label warp.shuffles=0: $(CLREDUCE_TUNING_DIR=$(tune noshfl \
    warp.shuffles=0) kernel_line "$cli" "$@")"
  echo "-- $label before: $(CLREDUCE_KERNEL_DIR=$bt/cl \
    CLREDUCE_CACHE_DIR=$out/cache-before kernel_line "$bb/src/cli/clreduce" \
    "$@")"
}
kernel_line() { "$@" --repeat="$r" | grep -E 'kernel:|verified' | tr '\n' ' '; }

# resident ROWS: the resident program (tools/perf/resident_sizes.c, built
# with the tree in $tools), its header and its first ROWS sizes.
resident() { "$tools/resident_sizes" "$r" | head -n $(($1 + 1)); }

# on_cl NAME CMD...: CMD with the kernels of the copy of cl/ in
# $out/cl-NAME, cached in $out/cache-NAME.
on_cl() {
  local name=$1
  shift
  CLREDUCE_KERNEL_DIR=$out/cl-$name CLREDUCE_CACHE_DIR=$out/cache-$name "$@"
}

# cut_tail PIECE DIR: one piece of the single launch's tail cut from
# DIR/reduce_coarse.cl, a copy of cl/'s (wrong answers): nofold (no group
# is last), nopublish (group 0 stores its value, no slot is published),
# notree (no work-group tree), noticket (no ticket drawn); says so when
# the line was not found.
cut_tail() {
  local f=$2/reduce_coarse.cl before
  before=$(cat "$f")
  case $1 in
  nofold) sed -i 's/^    last = my_ticket == get_num_groups(0) - 1;$/    last = 0;/' "$f" ;;
  nopublish) sed -i 's/^    clr_slot_publish(slots, get_group_id(0), epoch, r);$/    if (get_group_id(0) == 0) final_out[final_index] = r;/' "$f" ;;
  notree) sed -i 's/^  r = clr_group_reduce(scratch, r);.*/  (void)scratch;/' "$f" ;;
  noticket) sed -i 's/^    my_ticket = atomic_inc(ticket);$/    my_ticket = 0;/' "$f" ;;
  esac
  [ "$before" = "$(cat "$f")" ] && echo "$1: no change"
  return 0
}

# program_before NAME: tools/perf/NAME.c against revision $BEFORE's
# library (build_before first), in $out/NAME_before.  (This tree's
# programs are built with it, in $tools.)
program_before() {
  cc -O2 -o "$out/${1}_before" "$perf/$1.c" -I"$bt/include" -L"$bb/src/lib" \
    -lclreduce -lOpenCL -lpthread -Wl,-rpath,"$bb/src/lib"
}

# build_before: revision ${BEFORE:-c91e0f9} in $bt, built in $bb, and
# the resident program on its library ($out/resident_before).  A lent
# machine's git may not know a recent commit: BEFORE_TREE=DIR (a copy of
# the old tree, e.g. `git archive REV | tar -x -C DIR` in an untracked
# directory of the working tree, which travels with it) is built instead.
bt=$out/before-src bb=$out/before-build
build_before() {
  [ -x "$out/resident_before" ] && return 0
  rm -rf "$bt" "$bb" && mkdir -p "$bt" &&
    if [ -n "${BEFORE_TREE:-}" ]; then cp -r "$BEFORE_TREE"/. "$bt"; else
      git -C "$root" archive "${BEFORE:-c91e0f9}" | tar -x -C "$bt"; fi &&
    meson setup "$bb" "$bt" --buildtype=release >"$out/before-setup.log" 2>&1 &&
    ninja -C "$bb" >"$out/before-build.log" 2>&1 &&
    program_before resident_sizes || { echo "before: no build"; exit 1; }
}

on mid && echo "== mid sizes (coarse float sum, one launch)"
on mid && for v in "gpc8 reduce.groups_per_cu=8" "gpc2 reduce.groups_per_cu=2" \
  "gpc4 reduce.groups_per_cu=4" "gpc16 reduce.groups_per_cu=16" \
  "wg512 reduce.wg=512"; do
  set -- $v
  d=$(tune "$@")
  echo "-- $1"
  CLREDUCE_TUNING_DIR=$d $bench --kernels=coarse --per-decade=3 --min-n=1e6 \
    --max-n=1e8 --repeat=50 2>/dev/null | grep -E "^coarse|^\(stream"
done

on int && echo "== int sum at 1e8"
on int && for v in "i16x8 reduce.vec_bytes=16" "i32x8 reduce.vec_bytes=32" \
  "i16x16 reduce.groups_per_cu=16" "i32x16 reduce.vec_bytes=32 reduce.groups_per_cu=16"; do
  set -- $v
  d=$(tune "$@")
  for t in int float; do
    echo "-- $1 $t: $(CLREDUCE_TUNING_DIR=$d $cli --type=$t --n=1e8 \
      --repeat=$r | grep -E 'kernel:|verified' | tr '\n' ' ')"
  done
done
on int && $bench --kernels=coarse --min-n=1e8 --max-n=1e8 --repeat=$r \
  2>/dev/null | grep -E "^coarse|^\(stream"

if on scan; then
echo "== decoupled scan at 1e8"
for sh in "" "--coarse=16" "--coarse=64 --wg=128" "--coarse=16 --wg=512"; do
  echo "-- shipped $sh: $($cli --kernel=decoupled --n=1e8 --repeat=$r $sh |
    grep -E 'kernel:|verified' | tr '\n' ' ')"
done
nolb=$out/cl-nolookback
rm -rf "$nolb" && cp -r "$root/cl" "$nolb"
sed -i 's/^  if (t > 0) {$/  if (0) {/' "$nolb/scan_decoupled.cl"
grep -c "if (0) {" "$nolb/scan_decoupled.cl"
echo "-- no look-back: $(CLREDUCE_KERNEL_DIR=$nolb $cli --kernel=decoupled \
  --n=1e8 --repeat=$r --no-verify | grep -E 'kernel:' | tr '\n' ' ')"
torch_peers copy cumsum sum
fi

if on vec32; then
echo "== 16- and 32-byte loads, every op and type at 1e8"
for v in "v16 reduce.vec_bytes=16" "v32 reduce.vec_bytes=32"; do
  set -- $v
  d=$(tune "$@")
  for ot in "sum int" "sum float" "sum double" "sum long" "min float" \
    "max int" "prod float" "and int" "sum half"; do
    set -- $ot
    echo "-- $v $ot: $(CLREDUCE_TUNING_DIR=$d $cli --op=$1 --type=$2 --n=1e8 \
      --repeat=$r | grep -E 'kernel:|verified' | tr '\n' ' ')"
  done
  CLREDUCE_TUNING_DIR=$d $bench --kernels=coarse --per-decade=3 --min-n=1e6 \
    --max-n=1e8 --repeat=50 2>/dev/null | grep -E "^coarse|^\(stream"
done
fi

if on resident; then
echo "== mid sizes, device-resident (coarse float sum, one launch)"
echo "-- shipped"
"$tools/resident_sizes" "$r"
for v in noticket notree; do
  d=$out/cl-$v
  rm -rf "$d" && cp -r "$root/cl" "$d"
  case $v in
  noticket) cut_tail nofold "$d" ;; # (the fold and the ticket's use)
  notree) cut_tail notree "$d" ;;
  esac
  echo "-- $v (wrong answers)"
  RESIDENT_NO_CHECK=1 on_cl $v "$tools/resident_sizes" "$r"
done
fi

if on minvec; then
echo "== mid sizes, device-resident: loads a work-item at least (reduce.min_vectors)"
unr=$out/cl-unroll
rm -rf "$unr" && cp -r "$root/cl" "$unr"
sed -i 's/^  for (ulong v = gid; v < nv; v += stride) {$/#pragma unroll 4\n&/' \
  "$unr/reduce_coarse.cl"
sed -i 's/^  for (ulong v = gid; v < nv; v += get_global_size(0))$/#pragma unroll 4\n&/' \
  "$unr/stream_read.cl"
[ "$(cat "$unr/reduce_coarse.cl" "$unr/stream_read.cl" | grep -c 'pragma unroll 4')" = 2 ] ||
  echo "unroll: the loops were not found"
for round in 1 2; do
  for m in 16 8 4 2 1; do
    echo "-- min_vectors=$m, round $round"
    CLREDUCE_TUNING_DIR=$(tune m$m reduce.min_vectors=$m) \
      resident 5
  done
  for m in 16 4; do
    echo "-- unrolled by 4, min_vectors=$m, round $round"
    CLREDUCE_TUNING_DIR=$(tune m$m reduce.min_vectors=$m) \
      on_cl unroll resident 5
  done
done
fi

if on fold; then
echo "== the single launch's tail: this tree, warp.shuffles=0, revision ${BEFORE:-c91e0f9}"
build_before
noshfl=$(tune noshfl warp.shuffles=0)
for round in 1 2; do
  echo "-- this tree, round $round"
  resident 6
  echo "-- warp.shuffles=0, round $round"
  CLREDUCE_TUNING_DIR=$noshfl resident 6
  echo "-- ${BEFORE:-c91e0f9}, round $round"
  CLREDUCE_KERNEL_DIR=$bt/cl CLREDUCE_CACHE_DIR=$out/cache-before \
    "$out/resident_before" "$r" | head -n 7
done
for ot in "sum float" "sum int" "sum double" "sum long" "sum half" \
  "min float" "max double" "prod float" "and int" "max uint"; do
  set -- $ot
  for round in 1 2; do
    versions "1e8 $1 $2" --op=$1 --type=$2 --n=1e8
  done
done
fi

if on scanshfl; then
echo "== decoupled scan at 1e8: this tree, warp.shuffles=0, ${BEFORE:-c91e0f9}"
build_before
for round in 1 2; do
  for t in float int; do
    versions "$t" --kernel=decoupled --type=$t --n=1e8
  done
done
torch_peers copy cumsum
fi

if on slots; then
echo "== decoupled scan: tagged slots (this tree) and flags (decoupled.slots=0)"
flags=$(tune flags decoupled.slots=0)
s64=$(tune s64 decoupled.wg=128 decoupled.items=64)
f64=$(tune f64 decoupled.wg=128 decoupled.items=64 decoupled.slots=0)
for round in 1 2 3; do
  for t in float int double; do
    echo "-- 1e8 $t slots: $(kernel_line "$cli" --kernel=decoupled --type=$t --n=1e8)"
    echo "-- 1e8 $t flags: $(CLREDUCE_TUNING_DIR=$flags kernel_line "$cli" \
      --kernel=decoupled --type=$t --n=1e8)"
  done
  echo "-- 1e8 float 128x64 slots: $(CLREDUCE_TUNING_DIR=$s64 kernel_line \
    "$cli" --kernel=decoupled --n=1e8)"
  echo "-- 1e8 float 128x64 flags: $(CLREDUCE_TUNING_DIR=$f64 kernel_line \
    "$cli" --kernel=decoupled --n=1e8)"
  echo "-- 1e7 float slots: $(kernel_line "$cli" --kernel=decoupled --n=1e7)"
  echo "-- 1e7 float flags: $(CLREDUCE_TUNING_DIR=$flags kernel_line "$cli" \
    --kernel=decoupled --n=1e7)"
done
torch_peers copy cumsum
fi

if on slotshape; then
echo "== the slotted decoupled scan at 1e8: shapes (decoupled.wg x decoupled.items)"
for round in 1 2; do
  for sh in 256x32 256x16 512x16 128x32 512x8 1024x8 128x16; do
    d=$(tune "sh$sh" decoupled.wg=${sh%x*} decoupled.items=${sh#*x})
    echo "-- $sh round $round: $(CLREDUCE_TUNING_DIR=$d kernel_line "$cli" \
      --kernel=decoupled --n=1e8)"
  done
done
echo "== every op and type at 1e8: slots (this tree) and flags"
flags=$(tune flags decoupled.slots=0)
for ot in "sum float" "sum int" "sum uint" "sum long" "sum double" \
  "sum half" "min float" "max int" "prod double" "max ulong"; do
  set -- $ot
  echo "-- $1 $2 slots: $(kernel_line "$cli" --kernel=decoupled --op=$1 \
    --type=$2 --n=1e8)"
  echo "-- $1 $2 flags: $(CLREDUCE_TUNING_DIR=$flags kernel_line "$cli" \
    --kernel=decoupled --op=$1 --type=$2 --n=1e8)"
done
torch_peers copy copy64 cumsum
fi

if on scanfinal; then
echo "== the decoupled scan at 1e8: this tree and ${BEFORE:-c91e0f9}"
build_before
w256=$(tune w256 decoupled.wg=256)
for round in $(seq "${ROUNDS:-2}"); do
  for ot in "sum float" "sum int" "sum double" "sum long" "sum half" \
    "min float" "max float" "min double" "max int"; do
    set -- $ot
    echo "-- $1 $2 this tree: $(kernel_line "$cli" --kernel=decoupled \
      --op=$1 --type=$2 --n=1e8)"
    echo "-- $1 $2 before: $(CLREDUCE_KERNEL_DIR=$bt/cl \
      CLREDUCE_CACHE_DIR=$out/cache-before kernel_line "$bb/src/cli/clreduce" \
      --kernel=decoupled --op=$1 --type=$2 --n=1e8)"
  done
  for ot in "min float" "min double"; do
    set -- $ot
    echo "-- $1 $2 this tree at 256 x 32: $(CLREDUCE_TUNING_DIR=$w256 \
      kernel_line "$cli" --kernel=decoupled --op=$1 --type=$2 --n=1e8)"
  done
done
$bench --kernels=decoupled --per-decade=1 --min-n=1e6 --max-n=1e8 \
  --repeat=$r 2>/dev/null | grep -E "^decoupled|^\(stream"
torch_peers copy copy64 cumsum
fi

if on wideshape; then
echo "== the decoupled scan of 8-byte types at 1e8: shapes wg x items"
for round in 1 2; do
  for t in double long; do
    for sh in 128x32 128x16 256x16 64x32 256x8 512x8; do
      echo "-- $t $sh round $round: $(kernel_line "$cli" --kernel=decoupled \
        --type=$t --n=1e8 --wg=${sh%x*} --coarse=${sh#*x})"
    done
  done
done
torch_peers copy copy64
fi

if on blocks; then
echo "== host arrays staged: pinned block sizes (stage.block_kib)"
for round in 1 2; do
  for kib in 4096 256 512 1024 2048 8192; do
    echo "-- $kib KiB, round $round"
    $bench --host --min-n=1e7 --max-n=1e8 --repeat=10 --stage-threads=16 \
      --stage-block-kib=$kib | grep -E "n = |pinned memory|staged"
  done
done
fi

if on threads; then
echo "== host arrays staged: threads and blocks"
for round in 1 2; do
  echo "-- defaults, round $round"
  $bench --host --min-n=${STAGE_MIN_N:-1e7} --max-n=1e8 --repeat=10 |
    grep -E "n = |stage.threads|pinned memory|staged|host_alloc"
  for tk in ${STAGE_SHAPES:-16x1536 16x3072 12x2048 12x3072}; do
    echo "-- ${tk%x*} threads, ${tk#*x} KiB, round $round"
    $bench --host --min-n=${STAGE_MIN_N:-1e7} --max-n=1e8 --repeat=10 \
      --stage-threads=${tk%x*} --stage-block-kib=${tk#*x} |
      grep -E "n = |pinned memory|staged"
  done
done
fi

if on stagedefault; then
echo "== host arrays staged with the shipped defaults"
[ -z "${STAGE_BEFORE:-}" ] || build_before
for round in 1 2 3; do
  echo "-- round $round"
  $bench --host --min-n=${STAGE_MIN_N:-1e8} --max-n=1e8 --repeat=10 |
    grep -E "n = |stage.threads|pinned memory|staged|host_alloc"
  for th in ${STAGE_THREADS:-}; do
    echo "-- $th threads, round $round"
    $bench --host --min-n=${STAGE_MIN_N:-1e8} --max-n=1e8 --repeat=10 \
      --stage-threads=$th |
      grep -E "pinned memory|staged"
  done
  [ -n "${STAGE_BEFORE:-}" ] || continue
  for th in 0 ${STAGE_THREADS:-}; do
    echo "-- ${BEFORE:-c91e0f9}, ${th/#0/default} threads, round $round"
    CLREDUCE_KERNEL_DIR=$bt/cl CLREDUCE_CACHE_DIR=$out/cache-before \
      "$bb/src/bench/clreduce-bench" --host --min-n=${STAGE_MIN_N:-1e8} --max-n=1e8 \
      --repeat=10 $([ "$th" = 0 ] || echo --stage-threads=$th) |
      grep -E "pinned memory|staged"
  done
done
fi

if on hostbounds; then
echo "== what bounds a malloc'd host array's trip (host_bounds)"
for round in 1 2; do
  echo "-- round $round"
  "$tools/host_bounds" 10
done
fi

if on hostcold; then
echo "== clr_reduce_host warm and cold by size (host_cold)"
if [ -n "${STAGE_BEFORE:-}" ]; then
  build_before && program_before host_cold || exit 1
fi
for round in 1 2; do
  echo "-- this tree, round $round"
  "$tools/host_cold"
  [ -n "${STAGE_BEFORE:-}" ] || continue
  echo "-- ${BEFORE_TREE:-${BEFORE:-c91e0f9}}, round $round"
  CLREDUCE_KERNEL_DIR=$bt/cl CLREDUCE_CACHE_DIR=$out/cache-before \
    "$out/host_cold_before"
done
fi

if on busblocks; then
echo "== the bus alone: 400 MB in blocks, one queue or two (bus_blocks)"
for round in 1 2; do
  echo "-- round $round"
  "$tools/bus_blocks" 7
done
fi

if on gpcfold; then
echo "== mid sizes, device-resident: work-groups a compute unit, with the fold"
for round in 1 2; do
  for g in 8 4 2; do
    echo "-- groups_per_cu=$g, round $round"
    CLREDUCE_TUNING_DIR=$(tune g$g reduce.groups_per_cu=$g) \
      resident 5
  done
done
echo "== the segmented scan's tiles, rows of 1000, 1e8: float sum, min, max"
for op in sum min max; do
  echo "-- $op: $(kernel_line "$cli" --scan --segment-length=1000 --n=1e8 \
    --op=$op)"
done
fi

if on wgmid; then
echo "== mid sizes, device-resident: work-group size x loads a work-item"
for w in 512 1024; do
  echo "-- the CLI at --wg=$w: $(kernel_line "$cli" --n=1e6 --wg=$w)"
done
vp=$out/cl-vpoll
rm -rf "$vp" && cp -r "$root/cl" "$vp"
sed -i 's/^      w\[k\] = atom_add(&slots\[i \* CLR_SLOT_WORDS + k\], 0ul);$/      w[k] = slots[i * CLR_SLOT_WORDS + k];/' "$vp/common.cl"
cmp -s "$root/cl/common.cl" "$vp/common.cl" && echo "vpoll: no change"
for round in 1 2; do
  for w in 256 512 1024; do
    for m in 16 4 2; do
      echo "-- wg=$w min_vectors=$m, round $round"
      CLREDUCE_TUNING_DIR=$(tune w$w-m$m reduce.wg=$w reduce.min_vectors=$m) \
        resident 5
    done
  done
  for wm in 256:16 1024:4; do
    w=${wm%:*} m=${wm#*:}
    echo "-- volatile poll, wg=$w min_vectors=$m, round $round"
    CLREDUCE_TUNING_DIR=$(tune w$w-m$m reduce.wg=$w reduce.min_vectors=$m) \
      on_cl vpoll resident 5
  done
done
fi

if on midpeers; then
echo "== mid sizes, device-resident: the sum against PyTorch's kernels"
for round in 1 2; do
  echo "-- shipped, round $round"
  resident 5
  echo "-- a kernel that does nothing, round $round"
  "$tools/empty_kernel" 200
  echo "-- PyTorch, round $round"
  PYTHONPATH=$perf python3 -c "from peers import mid_kernels; mid_kernels($r)"
done
fi

if on mingroups; then
echo "== mid sizes, device-resident: work-groups a compute unit at least"
for round in 1 2; do
  for g in 0 1 2 4; do
    echo "-- min_groups_cu=$g, round $round"
    CLREDUCE_TUNING_DIR=$(tune mg$g reduce.min_groups_cu=$g) \
      resident 5
  done
done
for g in 0 1 2 4; do
  for n in 1e6 1e8; do
    echo "-- min_groups_cu=$g, the CLI at $n: $(CLREDUCE_TUNING_DIR=$out/tune-mg$g \
      kernel_line "$cli" --n=$n)"
  done
done
for round in 1 2; do
  for g in 0 2; do
    echo "-- min_groups_cu=$g, small calls, round $round"
    CLREDUCE_TUNING_DIR=$out/tune-mg$g "$bench" --latency --repeat=1000
  done
done
fi

if on unroll; then
echo "== mid sizes, device-resident: the strided loops unrolled"
for u in 2 4 8; do
  d=$out/cl-unroll$u
  rm -rf "$d" && cp -r "$root/cl" "$d"
  sed -i "s/^  for (ulong v = gid; v < nv; v += stride) {\$/#pragma unroll $u\n&/" \
    "$d/reduce_coarse.cl"
  sed -i "s/^  for (ulong v = gid; v < nv; v += get_global_size(0))\$/#pragma unroll $u\n&/" \
    "$d/stream_read.cl"
  [ "$(cat "$d/reduce_coarse.cl" "$d/stream_read.cl" | grep -c "pragma unroll $u")" = 2 ] ||
    echo "unroll $u: the loops were not found"
done
for round in 1 2; do
  echo "-- this tree, round $round"
  resident 5
  for u in 2 4 8; do
    echo "-- unrolled by $u, round $round"
    on_cl unroll$u resident 5
  done
done
for a in "--type=float" "--type=int" "--type=double" "--type=float --op=min"; do
  echo "-- 1e8 $a, this tree: $(kernel_line "$cli" --n=1e8 $a)"
  for u in 2 4 8; do
    echo "-- 1e8 $a, unrolled by $u: $(on_cl unroll$u kernel_line "$cli" \
      --n=1e8 $a)"
  done
done
fi

if on tail; then
echo "== the single launch's tail taken apart (wrong answers)"
prev=$root/cl
for v in nofold nopublish notree noticket; do
  d=$out/cl-$v
  rm -rf "$d" && cp -r "$prev" "$d"
  cut_tail $v "$d"
  prev=$d
done
for round in 1 2; do
  echo "-- this tree, round $round"
  resident 5
  for v in nofold nopublish notree noticket; do
    echo "-- $v (and the cuts before it), round $round"
    RESIDENT_NO_CHECK=1 on_cl $v resident 5
  done
done
fi

if on batch; then
rev=${BATCH_REV:-66274fb}
echo "== the fold's slots in batches ($rev:scripts/fold-batch.patch) against this tree"
bat=$out/cl-batch vbat=$out/cl-vbatch
rm -rf "$bat" "$vbat" && cp -r "$root/cl" "$bat" &&
  git -C "$root" show "$rev:scripts/fold-batch.patch" >"$out/fold-batch.patch" &&
  patch -s -p1 -d "$bat" <"$out/fold-batch.patch" && cp -r "$bat" "$vbat" || exit 1
sed -i 's/^    w\[k\] = atom_add(&p\[k\], 0ul);$/    w[k] = p[k];/' "$vbat/common.cl"
[ "$(grep -c 'w\[k\] = p\[k\];' "$vbat/common.cl")" = 1 ] || echo "vbatch: no change"
for round in 1 2; do
  for v in tree batch vbatch; do
    echo "-- $v, round $round"
    case $v in
    tree) resident 7 ;;
    *) on_cl $v resident 7 ;;
    esac
  done
done
for a in "--type=float" "--type=int" "--type=double" "--type=long" \
  "--type=half" "--type=float --op=min" "--type=double --op=max"; do
  for n in 1e7 1e8; do
    echo "-- $n $a, this tree: $(kernel_line "$cli" --n=$n $a)"
    for v in batch vbatch; do
      echo "-- $n $a, $v: $(on_cl $v kernel_line "$cli" --n=$n $a)"
    done
  done
done
fi
