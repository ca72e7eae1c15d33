#!/usr/bin/env python3
"""clreduce on PoCL as a user runs it: no POCL_WORK_GROUP_SPECIALIZATION=0
and no -cl-opt-disable (the other tests set one or both to save compile
time), so PoCL compiles each kernel's work-group function for its local
size, optimised.  Each run must verify against the CPU.  A kernel once
lost a row's tail element only so (clr_rows_runs: rows of 70 floats
squared, 297 of 300 rows short).

    test_pocl_default.py CLREDUCE_EXE --kernel-dir DIR
The last line is "N passed, N failed".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()

# rows and columns whose lengths leave tails (70: 4 chains and 2; 13: a
# vector of 8 and 5), maps, half data, var and std; segments; the whole
RUNS = [
    ["--shape=300x70", "--axis=1", "--map=square"],
    ["--shape=300x70", "--axis=0", "--map=abs", "--type=double"],
    ["--shape=300x70", "--axis=1", "--type=half", "--op=mean"],
    ["--shape=257x13", "--axis=1", "--op=argmax"],
    ["--shape=257x13", "--axis=0", "--op=min", "--type=int"],
    ["--shape=301x71", "--axis=1", "--op=var"],
    ["--shape=301x71", "--axis=0", "--op=std", "--ddof=1"],
    ["--shape=301x71", "--axis=1", "--op=std", "--type=half"],
    ["--segment-length=70", "--n=21000", "--op=var"],
    ["--segment-length=70", "--n=21000", "--map=square"],
    ["--n=100003", "--op=var", "--type=double"],
    ["--n=100003", "--op=nanmax", "--type=half"],
]


def main():
    a = clrtest.arguments()
    exe = os.path.abspath(a.exe)
    env = {"POCL_WORK_GROUP_SPECIALIZATION": None,
           "POCL_EXTRA_BUILD_FLAGS": None,
           "CLREDUCE_KERNEL_DIR": a.kernel_dir}
    with T.open(exe, "clreduce-pocl-default-"):
        env["CLREDUCE_CACHE_DIR"] = T.path("cache")
        for args in RUNS:
            rc, out, err = clrtest.run([exe] + args + ["--repeat=1"], env=env)
            check(rc == 0 and "verified: yes" in out,
                  "clreduce %s: verified" % " ".join(args),
                  show(rc, out, err))
    return clrtest.finish("test_pocl_default")


if __name__ == "__main__":
    sys.exit(main())
