#!/usr/bin/env python3
"""clreduce's variance and standard deviation from the command line:
--op=var, --op=std and --ddof (stdlib only, no NumPy).

    test_cli_moments.py CLREDUCE_EXE --kernel-dir DIR

Answers worked out here in plain Python (fractions for the hand-made
inputs; math.fsum's two passes for generated data, which --save-input
writes): whole arrays of float, double, half and int (the JSON report's
result and result_mean, the human report's "var X, mean Y" line), a
matrix's columns (--shape=1000x100 --axis=0) and rows (--axis=1, std
with --ddof=1), segments of 7 (--segment-length=7, the last shorter, and
with --ddof=7 all NaN), each --output record (value, mean, count) read
back; NaN and infinity inputs; n <= ddof; maps (abs, square, an
expression of x and i) on the whole array, rows and columns.  Refusals,
exit 2 and one line: a negative or non-numeric --ddof, --ddof on
another op, --exact, records to a .npy --output.  A few seconds on a
warm program cache.

The last line is "N passed, N failed".
"""
import math
import os
import random
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json, write = T.run, T.expect_error, T.run_json, T.write

# struct formats of the types' elements, and of the records' values
FMT = {"float": "f", "double": "d", "half": "e", "int": "i", "uint": "I",
       "long": "q", "ulong": "Q"}
# the result type of var / std: float for float and half, else double
RESULT = {"float": "float", "half": "float"}
# relative agreement asked of a result of each type with the exact answer
# (the library's own check is the a-priori bound; this is a second look)
REL = {"float": 2e-5, "double": 1e-11}


def moments(xs, ddof):
    """(mean, var) of xs, divisor n - ddof (NaN when n <= ddof), computed
    by two passes of correctly rounded sums (math.fsum)."""
    n = len(xs)
    if n == 0:
        return math.nan, math.nan
    mean = math.fsum(xs) / n
    mean += math.fsum(x - mean for x in xs) / n  # its rounding corrected
    m2 = math.fsum((x - mean) ** 2 for x in xs)
    return mean, (m2 / (n - ddof) if n > ddof else math.nan)


def exact_moments(xs, ddof):
    """The same, exactly (fractions), rounded at the end."""
    n = len(xs)
    fx = [Fraction(x) for x in xs]
    mean = sum(fx) / n
    m2 = sum((x - mean) ** 2 for x in fx)
    return float(mean), (float(m2 / (n - ddof)) if n > ddof else math.nan)


def close(got, want, rel):
    if isinstance(got, str) or isinstance(want, str):
        return str(got) == str(want)
    if math.isnan(want):
        return math.isnan(got)
    return abs(got - want) <= rel * max(abs(want), 1e-300)


def value(doc, key):
    """A JSON number, or "nan" / "inf" as floats."""
    v = doc[key]
    return float(v) if isinstance(v, str) else v


def whole_arrays():
    cases = [("var", "float", None, 20000), ("std", "double", 1, 20000),
             ("var", "half", None, 5000), ("std", "int", 1, 5000)]
    for op, t, ddof, n in cases:
        data = T.path("x-%s-%s" % (op, t))
        args = ["--op=" + op, "--type=" + t, "--n=%d" % n, "--repeat=1",
                "--save-input=" + data]
        if ddof is not None:
            args.append("--ddof=%d" % ddof)
        what = "--op=%s --type=%s%s" % (op, t, "" if ddof is None
                                        else " --ddof=%d" % ddof)
        doc = run_json(args, what)
        if not doc:
            continue
        xs = clrtest.read_values(data, FMT[t])
        mean, var = moments(xs, ddof or 0)
        want = math.sqrt(var) if op == "std" else var
        rt = RESULT.get(t, "double")
        check(doc["verified"] is True and doc["op"] == op and
              doc["ddof"] == (ddof or 0) and doc["result_type"] == rt,
              what + ": verified, ddof %d, result type %s" % (ddof or 0, rt),
              str(doc))
        got, got_mean = value(doc, "result"), value(doc, "result_mean")
        check(close(got, want, REL[rt]) and close(got_mean, mean, REL[rt]),
              what + ": %s %.9g, mean %.9g as Python's two passes give"
              % (op, want, mean), "got %r, mean %r" % (got, got_mean))
        check(close(value(doc, "reference"), want, REL[rt]) and
              close(value(doc, "reference_mean"), mean, REL[rt]),
              what + ": the CPU reference and its mean too", str(doc))

    # several devices (a group: each part's ddof-0 variance, merged by
    # clr_value_merge_moments), two where PoCL shows two
    data = T.path("x-group")
    doc = run_json(["--op=std", "--ddof=1", "--device=all", "--n=30011",
                    "--repeat=1", "--save-input=" + data],
                   "--op=std --ddof=1 --device=all",
                   env={"POCL_DEVICES": "pthread pthread"})
    if doc:
        xs = clrtest.read_values(data, "f")
        mean, var = moments(xs, 1)
        check(doc["verified"] is True and
              close(value(doc, "result"), math.sqrt(var), REL["float"]) and
              close(value(doc, "result_mean"), mean, REL["float"]),
              "--device=all: std and mean as Python's two passes give",
              str(doc))

    # the human report: the run line's ddof, the value named with its mean
    rc, out, err = run(["--op=std", "--ddof=1", "--n=3000", "--repeat=1",
                        "--save-input=" + T.path("h")])
    xs = clrtest.read_values(T.path("h"), "f")
    mean, var = moments(xs, 1)
    lines = {ln.split(":", 1)[0]: ln.split(":", 1)[1].strip()
             for ln in out.splitlines() if ":" in ln}
    res = lines.get("result", "").replace(",", "").split()
    ok = (rc == 0 and "(ddof 1)" in lines.get("run", "") and
          len(res) == 4 and res[0] == "std" and res[2] == "mean" and
          close(float(res[1]), math.sqrt(var), REL["float"]) and
          close(float(res[3]), mean, REL["float"]) and
          lines.get("reference", "").startswith("std ") and
          "verified: yes" in out)
    check(ok, "human report: 'result: std S, mean M', the run's ddof, "
          "verified", show(rc, out, err))


def mapped():
    """var and std of mapped values against Python's two passes over the
    same map: abs and square of signed data, an expression of x and i,
    on the whole array, rows and columns."""
    rnd = random.Random(5)
    xs = [rnd.uniform(-1, 1) for _ in range(6000)]
    xs = list(struct.unpack("<%df" % len(xs), struct.pack("<%df" % len(xs),
                                                          *xs)))
    path = T.write("signed.f32", "f", xs)
    maps = [("abs", lambda x, i: abs(x)),
            ("square", lambda x, i: struct.unpack(
                "<f", struct.pack("<f", x * x))[0]),
            ("x * 0.5f + (float)(i % 3)", lambda x, i: x * 0.5 + i % 3)]
    for name, f in maps:
        ys = [f(x, i) for i, x in enumerate(xs)]
        for op, ddof, shape in (("var", 0, None), ("std", 1, (60, 100, 1)),
                                ("var", 1, (60, 100, 0))):
            args = ["--op=" + op, "--ddof=%d" % ddof, "--type=float",
                    "--input=" + path, "--map=" + name, "--repeat=1"]
            what = "--op=%s --map='%s'" % (op, name)
            if shape is None:
                doc = run_json(args, what)
                if not doc:
                    continue
                mean, var = moments(ys, ddof)
                want = math.sqrt(var) if op == "std" else var
                check(doc["verified"] is True and
                      close(value(doc, "result"), want, REL["float"]) and
                      close(value(doc, "result_mean"), mean, REL["float"]),
                      what + ": %.9g, mean %.9g as Python's two passes give"
                      % (want, mean), str(doc))
                continue
            rows, cols, axis = shape
            out = T.path("mapped-%s-%d" % (op, axis))
            rc, o, err = run(args + ["--shape=%dx%d" % (rows, cols),
                                     "--axis=%d" % axis, "--output=" + out])
            if not check(rc == 0 and "verified: yes" in o,
                         what + " --axis=%d: verified" % axis,
                         show(rc, o, err)):
                continue
            recs = records(out, "float")
            lines = ([ys[r * cols:(r + 1) * cols] for r in range(rows)]
                     if axis == 1 else
                     [ys[c::cols] for c in range(cols)])
            check_records(what + " --axis=%d" % axis, recs, lines, op, ddof,
                          "float")


def known_answers():
    """Hand-made inputs: exact answers."""
    path = write("k.f32", "f", [1, 2, 3, 4])
    for op, ddof, want in [("var", 0, 1.25), ("var", 1, 5 / 3),
                           ("std", 0, math.sqrt(1.25)),
                           ("std", 1, math.sqrt(5 / 3))]:
        doc = run_json(["--input=" + path, "--op=" + op, "--repeat=1",
                        "--ddof=%d" % ddof],
                       "[1,2,3,4] %s ddof %d" % (op, ddof))
        if doc:
            check(doc["verified"] is True and
                  close(value(doc, "result"), want, 1e-7) and
                  value(doc, "result_mean") == 2.5,
                  "[1,2,3,4] %s ddof %d is %.7g, mean 2.5" % (op, ddof, want),
                  str(doc))
    # a large mean (1e6 + small deviations, double): no cancellation
    xs = [1e6 + k * 0.125 for k in range(-500, 501)]
    path = write("big.f64", "d", xs)
    mean, var = exact_moments(xs, 1)
    doc = run_json(["--input=" + path, "--type=double", "--op=var",
                    "--ddof=1", "--repeat=1"], "a large mean, double")
    if doc:
        check(doc["verified"] is True and
              close(value(doc, "result"), var, 1e-12) and
              close(value(doc, "result_mean"), mean, 1e-15),
              "1e6 + k/8: var %.12g, mean %.12g exactly" % (var, mean),
              str(doc))
    # special values
    for name, xs, means in [("a NaN", [1.0, math.nan, 3.0], ["nan"]),
                            ("an infinity", [1.0, math.inf, 3.0],
                             ["nan", "inf"])]:
        path = write("s.f32", "f", xs)
        doc = run_json(["--input=" + path, "--op=var", "--repeat=1"], name)
        if doc:
            check(doc["verified"] is True and doc["result"] == "nan" and
                  doc["result_mean"] in means,
                  "%s: var nan, mean %s" % (name, " or ".join(means)),
                  str(doc))
    path = write("one.f32", "f", [7.5])
    doc = run_json(["--input=" + path, "--op=var", "--ddof=1", "--repeat=1"],
                   "one element, ddof 1")
    if doc:
        check(doc["verified"] is True and doc["result"] == "nan" and
              value(doc, "result_mean") == 7.5,
              "n <= ddof: var nan (NumPy's), mean 7.5", str(doc))


def records(path, rt):
    f = "<ddQ" if rt == "double" else "<ffQ"
    with open(path, "rb") as fh:
        return list(struct.iter_unpack(f, fh.read()))


def check_records(what, recs, vectors, op, ddof, rt):
    bad = []
    for k, (v, m, count) in enumerate(recs):
        mean, var = moments(vectors[k], ddof)
        want = math.sqrt(var) if op == "std" else var
        if not (count == len(vectors[k]) and close(v, want, REL[rt]) and
                close(m, mean, REL[rt])):
            bad.append((k, v, m, count, want, mean, len(vectors[k])))
    check(len(recs) == len(vectors) and not bad,
          "%s: %d records (value, mean, count) as Python computes them"
          % (what, len(vectors)), "%d records; first bad %r"
          % (len(recs), bad[:1]))


def matrices_and_segments():
    rows, cols = 1000, 100
    for axis, op, t, ddof in [(0, "var", "float", 0), (1, "std", "double", 1)]:
        data, out = T.path("m%d" % axis), T.path("m%d.out" % axis)
        what = "--shape=%dx%d --axis=%d --op=%s --type=%s --ddof=%d" % (
            rows, cols, axis, op, t, ddof)
        doc = run_json(["--shape=%dx%d" % (rows, cols), "--axis=%d" % axis,
                        "--op=" + op, "--type=" + t, "--ddof=%d" % ddof,
                        "--repeat=1", "--save-input=" + data,
                        "--output=" + out], what)
        if not doc:
            continue
        check(doc["verified"] is True and doc["segments"] ==
              (cols if axis == 0 else rows) and doc["bad_segments"] == 0,
              what + ": every %s verified" % ("column" if axis == 0 else "row"),
              str(doc))
        xs = clrtest.read_values(data, FMT[t])
        m = [xs[r * cols:(r + 1) * cols] for r in range(rows)]
        vectors = [[row[c] for row in m] for c in range(cols)] if axis == 0 \
            else m
        rt = RESULT.get(t, "double")
        check_records(what, records(out, rt), vectors, op, ddof, rt)

    n, L = 1000, 7
    for ddof in [0, 7]:
        data, out = T.path("s%d" % ddof), T.path("s%d.out" % ddof)
        what = "--segment-length=%d --op=var --ddof=%d" % (L, ddof)
        doc = run_json(["--segment-length=%d" % L, "--n=%d" % n, "--op=var",
                        "--ddof=%d" % ddof, "--repeat=1",
                        "--save-input=" + data, "--output=" + out], what)
        if not doc:
            continue
        check(doc["verified"] is True and doc["segments"] == (n + L - 1) // L,
              what + ": %d segments verified" % ((n + L - 1) // L), str(doc))
        xs = clrtest.read_values(data, "f")
        vectors = [xs[a:a + L] for a in range(0, n, L)]
        check_records(what, records(out, "float"), vectors, "var", ddof,
                      "float")


def refusals():
    for bad, why in [("-1", "negative"), ("abc", "not a decimal"),
                     ("1.5", "not a decimal"), ("", "")]:
        expect_error(["--op=var", "--ddof=" + bad, "--n=10"], 2,
                     ["--ddof", why], "--ddof='%s'" % bad)
    expect_error(["--op=sum", "--ddof=1", "--n=10"], 2,
                 ["--ddof", "var and std", "sum"], "--ddof on sum")
    expect_error(["--op=var", "--exact", "--n=100", "--repeat=1"], 2,
                 ["var", "exact", "not supported"], "--op=var --exact")
    expect_error(["--op=var", "--segment-length=10", "--n=100",
                  "--output=" + T.path("r.npy")], 2,
                 ["records", "value, mean and count"],
                 "var records to a .npy --output")
    rc, out, err = run(["--help"])
    check(rc == 0 and "--ddof=N" in out and "NumPy" in out and
          "PyTorch" in out and "var " in out and "std " in out,
          "--help lists var, std and --ddof (NumPy's 0, PyTorch's 1)",
          show(rc, out[:200], err))


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-moments-cli-"):
        whole_arrays()
        known_answers()
        mapped()
        matrices_and_segments()
        refusals()
    return clrtest.finish("test_cli_moments")


if __name__ == "__main__":
    sys.exit(main())
