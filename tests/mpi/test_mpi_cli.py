#!/usr/bin/env python3
"""clreduce-mpi under mpirun (stdlib only).

    test_mpi_cli.py MPIRUN CLREDUCE_MPI_EXE CLREDUCE_EXE

For 1, 2, 3 and 4 ranks, split evenly and unevenly (rank 0 with no
element): reductions and scans verified against the CPU reference of the
whole array; an exact float and double sum the same bits for every number
of ranks and equal to clreduce's exact sum of the same array on one device
(--input: each rank reads its slice of one file); the generated array the
same whatever the ranks (an integer sum equal for every count); bad
command lines exit 2 with one line, on every rank.

The last line is "N passed, N failed".
"""
import json
import os
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

MPIRUN = EXE = CLREDUCE = None
# Every count of ranks, the uneven split (rank 0 with no element) on two.
RUNS = [(1, "even"), (2, "uneven"), (3, "even"), (4, "uneven")]


def mpi(np, args, timeout=300):
    return clrtest.run([MPIRUN, "--oversubscribe", "-np", str(np), EXE] + args,
                       timeout=timeout)


def mpi_json(np, args, what):
    rc, out, err = mpi(np, args + ["--json"])
    try:
        doc = json.loads(out)
    except ValueError as ex:
        check(False, what + ": one JSON report", "%s; %s" % (ex,
                                                           show(rc, out, err)))
        return None
    if not check(rc == 0 and doc["verified"] is True and doc["ranks"] == np,
                 what + ": verified", show(rc, out, err)):
        return None
    return doc


def sums_over_ranks():
    """Generated data: the same array for every count of ranks."""
    for args, what in [(["--type=long", "--n=300007"], "long sum"),
                       (["--type=int", "--op=max", "--n=300007"], "int max"),
                       (["--type=uint", "--op=argmin", "--n=300007"],
                        "uint argmin")]:
        results = set()
        for np, split in RUNS:
            doc = mpi_json(np, args + ["--split=" + split, "--repeat=2"],
                           "%s over %d ranks, %s" % (what, np, split))
            if doc:
                results.add(doc["result"])
                check(sum(p["n"] for p in doc["parts"]) == 300007 and
                      (split == "even" or np == 1 or
                       doc["parts"][0]["n"] == 0),
                      "%s over %d ranks, %s: the parts" % (what, np, split),
                      str(doc["parts"]))
        check(len(results) == 1, what + ": one answer for 1 to 4 ranks",
              str(results))


def exact_over_ranks(tmp):
    """Exact sums: the same bits for every count, and clreduce's."""
    for t, fmt in (("float", "f"), ("double", "d")):
        # Wide exponents and cancellation: a rounded sum would differ.
        import random
        rnd = random.Random(7)
        vals = [rnd.uniform(-1, 1) * 2.0 ** rnd.randint(-30, 30)
                for _ in range(100003)]
        if fmt == "f":
            vals = list(struct.unpack("<%df" % len(vals),
                                      struct.pack("<%df" % len(vals), *vals)))
        path = clrtest.write_values(tmp, "x." + t, fmt, vals)
        rc, out, err = clrtest.run([CLREDUCE, "--type=" + t, "--exact",
                                    "--input=" + path, "--repeat=1",
                                    "--json"])
        one = json.loads(out)["result"] if rc == 0 else None
        check(rc == 0, "clreduce's exact %s sum" % t, show(rc, out, err))
        seen = set()
        for np, split in RUNS:
            doc = mpi_json(np, ["--type=" + t, "--exact", "--input=" + path,
                                "--split=" + split, "--repeat=2"],
                           "exact %s sum over %d ranks, %s" % (t, np,
                                                               split))
            if doc:
                seen.add(doc["result"])
                check(one is not None and
                      float(doc["result"]) == float(one),
                      "exact %s sum over %d ranks, %s = clreduce's" %
                      (t, np, split), "%s vs %s" % (doc["result"], one))
        check(len(seen) == 1, "exact %s sum: one bit pattern for 1 to 4 ranks"
              % t, str(seen))


def scans():
    for args in (["--kernel=decoupled", "--type=int"],
                 ["--kernel=kogge-stone", "--type=float", "--exclusive"],
                 ["--kernel=brent-kung", "--type=double", "--op=max"]):
        for np in (2, 4):
            mpi_json(np, args + ["--n=100003", "--split=uneven",
                                 "--repeat=1"],
                     "%s over %d ranks" % (" ".join(args), np))


def refusals():
    for args, needle in [(["--n=12abc"], "--n"),
                         (["--dot", "--n=100"], "--dot"),
                         (["--split=odd"], "--split"),
                         (["--op=and", "--type=float"], "and")]:
        rc, out, err = mpi(3, args)
        lines = [l for l in err.splitlines() if l.startswith("clreduce-mpi:")]
        check(rc == 2 and len(lines) == 1 and needle in lines[0],
              "%s: exit 2, one line from rank 0" % " ".join(args),
              show(rc, out, err))


def main():
    global MPIRUN, EXE, CLREDUCE
    MPIRUN, EXE, CLREDUCE = sys.argv[1], sys.argv[2], sys.argv[3]
    clrtest.QUIET = True
    tmp = tempfile.mkdtemp(prefix="clreduce-mpi-")
    try:
        sums_over_ranks()
        exact_over_ranks(tmp)
        scans()
        refusals()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return clrtest.finish("test_mpi_cli")


if __name__ == "__main__":
    sys.exit(main())
