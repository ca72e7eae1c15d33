#!/usr/bin/env python3
"""Every combination of the command line's main options (stdlib only).

    test_cli_matrix.py CLREDUCE_EXE --kernel-dir DIR [--jobs N] [--all-types]

Walks the cross product of every operation (the parser's own list, from
the ops table), eight modes (plain, --exact, --map=abs, a --map
expression, --dot, a segmented --scan, --segment-length, --ranges) and
three kernels (the default coarse, another reduction kernel, a scan
kernel; all from --list-kernels), at n = 1000, each combination with one
of four types (float, int, half, double) in turn, so that every op meets
every type and every mode every type (a run that verifies compiles its
own kernels: this keeps a cold cache's build near a minute); with
--all-types, each combination with all four (the 'slow' suite's run).
Each run must either verify (exit 0, JSON "verified": true) with every
option it was given echoed as in effect (op, type, kernel, scan, map, dot,
exact_mode, segments / ranges), or be refused (exit 2, nothing on stdout,
one "clreduce: " line on stderr): never exit 0 with an option dropped,
never 1, 3 or a signal.  Then the single cases of the same rule: a dot
product of files with a scan kernel, --dot with one file, --narrow where
nothing widens, --exact on argmax, --device / --platform that select
nothing (2) and --device=ALL (any case, as the library reads names).

Only the failures print, then a summary and "N passed, N failed".
"""
import concurrent.futures
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json, write = T.run, T.expect_error, T.run_json, T.write

N = 1000
TYPES = ["float", "int", "half", "double"]


def table_ops():
    """The operations, as the parser lists them (the ops table's rows)."""
    rc, out, err = run(["--op=nonesuch"])
    names = err.split("(valid: ")[-1].strip().rstrip(")").split(", ")
    check(rc == 2 and len(names) > 5 and "sum" in names,
          "the parser lists the operations (%d)" % len(names),
          show(rc, out, err))
    return names


def modes(ranges):
    """(name, options, what the JSON must echo) for each mode."""
    return [
        ("plain", [], {}),
        ("exact", ["--exact"], {"exact_mode": True}),
        ("map-abs", ["--map=abs"], {"map": "abs"}),
        ("map-expr", ["--map=x + 0"], {"map": "x + 0"}),
        ("dot", ["--dot"], {"dot": True}),
        ("seg-scan", ["--segment-length=300", "--scan"],
         {"scan": True, "segments": 4}),
        ("segments", ["--segment-length=300"], {"segments": 4}),
        ("ranges", ["--ranges=" + ranges], {"segments": 5}),
    ]


def judge(case, rc, out, err):
    """None when the run is honoured and verified, or cleanly refused;
    else what is wrong."""
    what, args, echo = case
    if rc == 2:
        lines = err.strip("\n").split("\n")
        if out == "" and len(lines) == 1 and lines[0].startswith("clreduce: "):
            return None
        return "refused, but not with one line: " + show(rc, out, err)
    if rc != 0:
        return "exit %d (only 0 or 2 may come): %s" % (rc, show(rc, out, err))
    try:
        doc = json.loads(out)
    except ValueError as ex:
        return "JSON does not parse (%s): %s" % (ex, show(rc, out, err))
    if doc.get("verified") is not True:
        return "exit 0 but not verified: %r" % doc.get("verified")
    wrong = ["%s=%r (wanted %r)" % (k, doc.get(k), v)
             for k, v in echo.items() if doc.get(k) != v]
    if wrong:
        return "an option not in effect: " + ", ".join(wrong)
    return None


def matrix(jobs, all_types):
    ops = table_ops()
    reductions, scans = clrtest.kernels(T.program())
    other = next(k for k in reductions if k != "coarse")
    kernels = [("coarse", []), (other, ["--kernel=" + other]),
               (scans[-1], ["--kernel=" + scans[-1]])]
    # (offset, length) pairs: overlapping, repeated, one empty, the last
    # element alone
    ranges = write("ranges.u64", "Q", [0, N, 10, 5, 500, 0, N - 1, 1, 10, 5])
    cases = []
    for i, op in enumerate(ops):
        for j, (mode, margs, mecho) in enumerate(modes(ranges)):
            for k, (kernel, kargs) in enumerate(kernels):
                types = TYPES if all_types else [TYPES[(i + j + k) % 4]]
                for typ in types:
                    args = (["--op=" + op, "--type=" + typ, "--n=%d" % N,
                             "--repeat=1", "--json"] + margs + kargs)
                    scan = kernel in scans or "--scan" in margs
                    echo = {"op": op, "type": typ, "kernel": kernel,
                            "scan": scan, "dot": False, "exact_mode": False,
                            "map": None}
                    echo.update(mecho)
                    cases.append(("%s %s %s %s" % (op, typ, mode, kernel),
                                  args, echo))
    t0 = time.time()

    def one(case):
        rc, out, err = run(case[1])
        return case, rc, out, err

    counts = {0: 0, 2: 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for case, rc, out, err in pool.map(one, cases):
            problem = judge(case, rc, out, err)
            if problem is None:
                counts[rc] += 1
            else:
                check(False, "%s: honoured and verified, or refused (exit 2)"
                      % case[0],
                      "clreduce %s: %s" % (" ".join(case[1]), problem))
    line = ("%d combinations (%d ops x %d modes x %d kernels x %s): %d "
            "verified, %d refused, in %.1f s"
            % (len(cases), len(ops), len(modes(ranges)), len(kernels),
               "%d types" % len(TYPES) if all_types else "a type each",
               counts[0], counts[2], time.time() - t0))
    if check(counts[0] + counts[2] == len(cases), line):
        print("ok:   " + line)  # (the one line of a quiet run's passes)


def singles():
    x = write("x.f32", "f", [1.0, 2.0, 3.0, 4.0])
    y = write("y.f32", "f", [0.5, 0.25, 2.0, 1.0])
    _, scans = clrtest.kernels(T.program())
    expect_error(["--input=" + x, "--input2=" + y, "--kernel=" + scans[0]], 2,
                 ["--dot", "scan"],
                 "a dot product of files with a scan kernel")
    expect_error(["--input=" + x, "--dot"], 2, ["--input2"],
                 "--dot with --input alone")
    expect_error(["--narrow", "--n=100"], 2, ["--narrow", "float"],
                 "--narrow on a float sum (nothing widens)")
    expect_error(["--narrow", "--type=int", "--op=max", "--n=100"], 2,
                 ["--narrow", "max"], "--narrow on an int max")
    doc = run_json(["--input=" + x, "--input2=" + y, "--repeat=1"],
                   "a dot product of two files")
    check(doc is not None and doc["dot"] is True and doc["result"] == 11.0,
          "a dot product of two files: 11, dot true", repr(doc)[:300])
    doc = run_json(["--op=argmax", "--exact", "--n=%d" % N, "--repeat=1"],
                   "--op=argmax --exact")
    check(doc is not None and doc["exact_mode"] is True and
          doc["exact"] is True and doc["verified"] is True,
          "--op=argmax --exact: exact mode, checked by equality",
          repr(doc)[:300])
    for opt, what in [("--device=99", "device"), ("--platform=99", "platform"),
                      ("--device=0,99", "device")]:
        expect_error([opt, "--n=100"], 2, [what, "99"],
                     opt + " (selects nothing: a usage error)")
    doc = run_json(["--device=ALL", "--n=%d" % N, "--repeat=1"],
                   "--device=ALL")
    check(doc is not None and doc.get("verified") is True and
          len(doc.get("parts", [])) >= 1,
          "--device=ALL is --device=all (every device)", repr(doc)[:300])


def main():
    a = clrtest.arguments(("--jobs", {"type": int, "default": 2}),
                          ("--all-types", {"action": "store_true"}))
    clrtest.QUIET = True
    with T.open(a.exe, "clr-cli-matrix-"):
        matrix(a.jobs, a.all_types)
        singles()
    return clrtest.finish("test_cli_matrix")


if __name__ == "__main__":
    sys.exit(main())
