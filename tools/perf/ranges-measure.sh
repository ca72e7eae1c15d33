#!/bin/bash
# Batches of ranges (clreduce --ranges) on a lent GPU, in one command:
#   tools/perf/ranges-measure.sh [OUTDIR]
# clreduce --ranges=FILE over 1e7 floats for three lists of 10,000
# (offset, length) pairs: the rows of a 10000 x 1000 matrix in order
# (reduced where they lie, as segments), the same rows shuffled, and
# random overlapping ranges of 1..2000 elements (both gathered first:
# cl/gather_ranges.cl); beside them, in the same run, the same rows as
# --segment-length=1000 and the streaming read of 1e7 floats.
set -u
. "$(dirname "$0")/measure-common.sh"
measure_build ranges "${1:-}"
r=${REPEAT:-50}
measure_tests segments-ranges segments-cli
python3 - "$out" <<'PY'
import array, random, sys
random.seed(13)
rows = [(i * 1000, 1000) for i in range(10_000)]
shuffled = rows[:]
random.shuffle(shuffled)
rnd = []
for _ in range(10_000):
    length = random.randint(1, 2000)
    rnd.append((random.randint(0, 10_000_000 - length), length))
for name, pairs in (("rows", rows), ("shuffled", shuffled), ("random", rnd)):
    flat = array.array("Q", [v for p in pairs for v in p])
    flat.tofile(open("%s/%s.rng" % (sys.argv[1], name), "wb"))
    print("%s: %d ranges, %d elements" % (name, len(pairs),
                                           sum(p[1] for p in pairs)))
PY
for f in rows shuffled random; do
  shape "ranges-$f" --ranges="$out/$f.rng" --n=1e7
done
shape "segment-length-1000" --segment-length=1000 --n=1e7
$bench --kernels=coarse --min-n=1e7 --max-n=1e7 --repeat=$r 2>/dev/null |
  grep -E "^\(stream|^coarse"
