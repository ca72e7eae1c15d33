#!/usr/bin/env python3
"""clreduce's segmented reductions and scans (--scan) from the command
line (stdlib only).

    test_segments_cli.py CLREDUCE_EXE --kernel-dir DIR

Answers worked out here for small files (--segments with empty segments,
--segment-length with a shorter last row, every op; segmented scans,
inclusive and exclusive; --ranges of (offset, length) pairs), --output
holding one result per segment (or the scanned values), generated runs
verified (human and JSON reports), and
every refusal: offsets decreasing, not starting at 0, not ending at n, a
file of one offset or of a size that is no multiple of 8 (exit 2, one
line), and the options that do not combine with segments.  A kernel that
drops a segment's carry, or a scan that loses a restart, is caught (exit
1, --output not written).

The last line is "N passed, N failed".
"""
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json, write = T.run, T.expect_error, T.run_json, T.write


def read(path, fmt):
    return clrtest.read_values(path, fmt)


def known_answers():
    ints = write("x.i32", "i", [3, -1, 4, 1, -5, 9, 2, -6, 5, 3])
    # segments: [3 -1 4] [] [1 -5] [9] [] [2 -6 5 3]
    offs = write("s.off", "Q", [0, 3, 3, 5, 6, 6, 10])
    inf = float("inf")
    cases = [
        ("sum", "long", "q", [6, 0, -4, 9, 0, 4]),
        ("prod", "long", "q", [-12, 1, -5, 9, 1, -180]),
        ("min", "int", "i", [-1, 2**31 - 1, -5, 9, 2**31 - 1, -6]),
        ("max", "int", "i", [4, -2**31, 1, 9, -2**31, 5]),
        ("and", "int", "i", [1, 1, 1, 1, 1, 1]),
        ("or", "int", "i", [1, 0, 1, 1, 0, 1]),
    ]
    for op, rtype, fmt, want in cases:
        out = T.path("r-" + op)
        doc = run_json(["--type=int", "--op=" + op, "--input=" + ints,
                        "--segments=" + offs, "--output=" + out,
                        "--repeat=2"], "int %s by segment" % op)
        if doc is None:
            continue
        check(doc["segments"] == 6 and doc["result_type"] == rtype and
              doc["verified"] is True and doc["bad_segments"] == 0 and
              doc["output"] == out,
              "int %s: 6 segments, %s results, verified" % (op, rtype),
              str(doc))
        got = read(out, fmt) if os.path.exists(out) else None
        check(got == want, "int %s: --output holds %s" % (op, want),
              "got %s" % got)
    # argmin / argmax / minmax: --output holds records (min, max: int32;
    # their indices: 64-bit, counted from the segment's first element;
    # -1 for an empty segment), the first index of a tie.
    imax, imin, none = 2**31 - 1, -2**31, 2**64 - 1
    lows = [(-1, 1), (imax, none), (-5, 1), (9, 0), (imax, none), (-6, 1)]
    highs = [(4, 2), (imin, none), (1, 0), (9, 0), (imin, none), (5, 2)]
    ties = write("t.i32", "i", [7, 2, 7, 2, 2, 7])
    tie_offs = write("t.off", "Q", [0, 6])
    for op in ["argmin", "argmax", "minmax"]:
        out = T.path("r-" + op)
        doc = run_json(["--type=int", "--op=" + op, "--input=" + ints,
                        "--segments=" + offs, "--output=" + out,
                        "--repeat=2"], "int %s by segment" % op)
        recs = None
        if doc is not None and os.path.exists(out):
            with open(out, "rb") as f:
                recs = list(struct.iter_unpack("<iiQQ", f.read()))
        got_lo = [(r[0], r[2]) for r in recs] if recs else None
        got_hi = [(r[1], r[3]) for r in recs] if recs else None
        ok = doc is not None and doc["verified"] is True and recs is not None
        if op != "argmax":
            ok = ok and got_lo == lows
        if op != "argmin":
            ok = ok and got_hi == highs
        check(ok, "int %s by segment: --output holds the records" % op,
              "got %s, %s" % (recs, doc))
        doc = run_json(["--type=int", "--op=" + op, "--input=" + ties,
                        "--segments=" + tie_offs, "--output=" + out],
                       "int %s with ties" % op)
        with open(out, "rb") as f:
            rec = struct.unpack("<iiQQ", f.read())
        check(doc is not None and
              (op == "argmax" or rec[0:3:2] == (2, 1)) and
              (op == "argmin" or rec[1:4:2] == (7, 0)),
              "int %s: the first index of a tie" % op, str(rec))
    # An empty last segment has no index: the report writes -1 (a signed
    # number in JSON), not 2^64 - 1.
    end_empty = write("e.off", "Q", [0, 6, 6])
    doc = run_json(["--type=int", "--op=minmax", "--input=" + ties,
                    "--segments=" + end_empty, "--repeat=1"],
                   "minmax, the last segment empty")
    check(doc is not None and doc["verified"] is True and
          doc["result_index"] == -1 and doc["result_max_index"] == -1 and
          doc["reference_index"] == -1,
          "an empty last segment: its indices -1 in JSON", str(doc))
    rc, out, err = run(["--type=int", "--op=argmin", "--input=" + ties,
                        "--segments=" + end_empty, "--repeat=1"])
    check(rc == 0 and "at index -1 (empty)" in out,
          "an empty last segment: 'at index -1 (empty)'", show(rc, out, err))
    # Means (doubles for int data): NaN for an empty segment.
    out = T.path("r-mean")
    doc = run_json(["--type=int", "--op=mean", "--input=" + ints,
                    "--segments=" + offs, "--output=" + out],
                   "int mean by segment")
    got = read(out, "d") if os.path.exists(out) else None
    check(doc is not None and doc["result_type"] == "double" and
          got is not None and len(got) == 6 and
          [got[i] for i in (0, 2, 3, 5)] == [2.0, -2.0, 9.0, 1.0] and
          all(math.isnan(got[i]) for i in (1, 4)),
          "int mean by segment: 2 NaN -2 9 NaN 1", "got %s, %s" % (got, doc))
    # Floats: min / max of an empty segment are +inf / -inf.
    floats = write("x.f32", "f", [0.5, -2.0, 8.0, 0.25])
    offs2 = write("f.off", "Q", [0, 0, 3, 4, 4])
    for op, want in [("min", [inf, -2.0, 0.25, inf]),
                     ("max", [-inf, 8.0, 0.25, -inf]),
                     ("sum", [0.0, 6.5, 0.25, 0.0])]:
        out = T.path("f-" + op)
        doc = run_json(["--op=" + op, "--input=" + floats,
                        "--segments=" + offs2, "--output=" + out],
                       "float %s by segment" % op)
        got = read(out, "f") if os.path.exists(out) else None
        check(doc is not None and got == want,
              "float %s with empty segments: %s" % (op, want), "got %s" % got)
    # Rows: 10 ints in rows of 4, the last of 2.
    out = T.path("rows")
    doc = run_json(["--type=int", "--input=" + ints, "--segment-length=4",
                    "--output=" + out], "rows of 4")
    got = read(out, "q") if os.path.exists(out) else None
    check(doc is not None and doc["segments"] == 3 and got == [7, 0, 8],
          "rows of 4: 3 sums 7 0 8", "got %s, %s" % (got, doc))


def scan_known_answers():
    """--scan: the segmented scans of the same ints, worked out by hand."""
    ints = write("sx.i32", "i", [3, -1, 4, 1, -5, 9, 2, -6, 5, 3])
    # segments: [3 -1 4] [] [1 -5] [9] [] [2 -6 5 3]
    offs = write("ss.off", "Q", [0, 3, 3, 5, 6, 6, 10])
    lo, hi = -2**31, 2**31 - 1
    cases = [
        ("sum", [], [3, 2, 6, 1, -4, 9, 2, -4, 1, 4]),
        ("sum", ["--exclusive"], [0, 3, 2, 0, 1, 0, 0, 2, -4, 1]),
        ("max", [], [3, 3, 4, 1, 1, 9, 2, 2, 5, 5]),
        ("max", ["--exclusive"], [lo, 3, 3, lo, 1, lo, lo, 2, 2, 5]),
        ("min", ["--exclusive"], [hi, 3, -1, hi, 1, hi, hi, 2, -6, -6]),
        ("prod", [], [3, -3, -12, 1, -5, 9, 2, -12, -60, -180]),
    ]
    for op, extra, want in cases:
        what = "segmented %s scan %s" % (op, " ".join(extra))
        out = T.path("s-" + op + "".join(extra))
        doc = run_json(["--type=int", "--op=" + op, "--input=" + ints,
                        "--segments=" + offs, "--scan", "--output=" + out,
                        "--repeat=2"] + extra, what)
        if doc is None:
            continue
        check(doc["scan"] is True and doc["segments"] == 6 and
              doc["exclusive"] == bool(extra) and doc["verified"] is True and
              doc["bad_elements"] == 0 and doc["output"] == out,
              what + ": a scan of 6 segments, verified", str(doc))
        got = read(out, "i") if os.path.exists(out) else None
        check(got == want, "%s: --output holds %s" % (what, want),
              "got %s" % got)
    # Rows, generated: three types (every type and op: the library's
    # tests/scan/test_scan_segments.c), into a wider type, a row length
    # that is no divisor of n, and the human report.
    for t in ["float", "ulong", "half"]:
        doc = run_json(["--type=" + t, "--n=100003", "--segment-length=97",
                        "--scan", "--repeat=1"], "generated %s row scans" % t)
        check(doc is not None and doc["verified"] is True and
              doc["scan"] is True and clrtest.is_number(doc["gbps"]),
              "%s: scans of 1031 rows of 97 verified" % t, str(doc))
    doc = run_json(["--type=int", "--acc=long", "--n=5000",
                    "--segment-length=7", "--scan", "--exclusive",
                    "--repeat=1"], "int row scans into long")
    check(doc is not None and doc["verified"] is True and
          doc["result_type"] == "long", "int row scans into long", str(doc))
    rc, out, err = run(["--n=50000", "--segment-length=1000", "--scan",
                        "--repeat=1"])
    check(rc == 0 and "segments:   50 of length 1000" in out and
          "result:     last element" in out and
          "(read + write + offsets)" in out and "verified: yes" in out,
          "segmented scan, human report", show(rc, out, err))


def ranges_known_answers():
    """--ranges: (offset, length) pairs in any order, overlapping."""
    ints = write("rx.i32", "i", [3, -1, 4, 1, -5, 9, 2, -6, 5, 3])
    pairs = [(2, 3), (0, 10), (9, 1), (4, 0), (0, 2), (3, 5), (10, 0)]
    path = write("r.rng", "Q", [v for p in pairs for v in p])
    xs = [3, -1, 4, 1, -5, 9, 2, -6, 5, 3]
    for op, fmt, rtype, fold, ident in [
            ("sum", "q", "long", sum, 0),
            ("max", "i", "int", max, -2**31),
            ("min", "i", "int", min, 2**31 - 1)]:
        want = [fold(xs[o:o + n]) if n else ident for o, n in pairs]
        out = T.path("r-" + op)
        doc = run_json(["--type=int", "--op=" + op, "--input=" + ints,
                        "--ranges=" + path, "--output=" + out, "--repeat=2"],
                       "int %s by range" % op)
        if doc is None:
            continue
        check(doc["segments"] == 7 and doc["verified"] is True and
              doc["result_type"] == rtype and doc["bad_segments"] == 0,
              "int %s of 7 ranges, verified" % op, str(doc))
        got = read(out, fmt) if os.path.exists(out) else None
        check(got == want, "int %s by range: --output holds %s" % (op, want),
              "got %s" % got)
    # generated: sliding windows (gathered) and sorted ones (in place)
    wins = write("w.rng", "Q", [v for k in range(0, 9900, 7)
                                for v in (k, 100)])
    doc = run_json(["--n=10000", "--ranges=" + wins, "--repeat=1"],
                   "sliding windows")
    check(doc is not None and doc["verified"] is True and
          doc["segments"] == len(range(0, 9900, 7)),
          "1415 sliding windows of 100 verified", str(doc))
    sort = write("s.rng", "Q", [v for k in range(0, 100000, 1000)
                                for v in (k + 3, 990)])
    doc = run_json(["--n=100000", "--type=double", "--op=max",
                    "--ranges=" + sort, "--repeat=1"], "sorted ranges")
    check(doc is not None and doc["verified"] is True,
          "100 sorted ranges with gaps verified", str(doc))
    expect_error(["--n=100", "--ranges=" + write("bad.rng", "Q", [95, 6])],
                 2, ["range 0", "n = 100"], "a range past n")
    odd = T.path("odd.rng")
    with open(odd, "wb") as f:
        f.write(b"\0" * 24)
    expect_error(["--n=100", "--ranges=" + odd], 2, ["odd.rng"],
                 "a ranges file of 24 bytes")
    expect_error(["--n=100", "--ranges=" + path, "--scan"], 2,
                 ["--ranges", "--scan"], "--ranges with --scan")
    expect_error(["--n=100", "--ranges=" + path, "--segment-length=10"], 2,
                 ["--ranges"], "--ranges with --segment-length")


def generated_runs():
    # Generated data, every type, a row length that is no divisor of n.
    for t in ["float", "double", "int", "uint", "long", "ulong", "half"]:
        doc = run_json(["--type=" + t, "--n=100003", "--segment-length=97",
                        "--repeat=1"], "generated %s rows" % t)
        check(doc is not None and doc["verified"] is True and
              doc["segments"] == 1031 and clrtest.is_number(doc["gbps"]),
              "%s: 1031 rows of 97 verified, GB/s reported" % t, str(doc))
    # The human report names the segments and the worst one.
    rc, out, err = run(["--n=50000", "--segment-length=1000", "--op=max",
                        "--repeat=1"])
    check(rc == 0 and "segments:   50 of length 1000" in out and
          "result:     last segment" in out and "verified: yes" in out,
          "human report: segments line, last segment, verified",
          show(rc, out, err))
    # Maps per segment: the sum of squares of each row.
    doc = run_json(["--n=20000", "--segment-length=300", "--map=square",
                    "--repeat=1"], "sum of squares by row")
    check(doc is not None and doc["verified"] is True and
          doc["map"] == "square", "sum of squares by row verified", str(doc))
    # A map expression per row, checked against its CPU reference.
    doc = run_json(["--n=1000", "--segment-length=10", "--map=x > 0.5f",
                    "--acc=long", "--repeat=1"],
                   "a count by expression per row")
    check(doc is not None and doc["verified"] is True and
          doc["result_type"] == "long", "count by expression: long, verified",
          str(doc))


def expressions():
    """Map expressions by segment, row and range, checked against the CPU
    evaluation of the expression (src/check/expr_eval.c): i is the
    element's index in the whole array, as the kernels count it."""
    vals = write("e.f32", "f", [0.5, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5, 4.0])
    offs = write("e.off", "Q", [0, 3, 3, 8])
    for args, want, what in [
            (["--segments=" + offs, "--map=(float)i * x"],
             [0 * 0.5 - 1.0 + 2 * 2.0, 0.0,
              3 * 0.25 + 4 * 3.0 - 5 * 0.5 + 6 * 1.5 + 7 * 4.0],
             "i * x by segment (one empty)"),
            (["--segments=" + offs, "--map=x > 0.3f", "--acc=long"],
             [2, 0, 3], "a count by segment"),
            (["--ranges=" + write("e.rng", "Q", [6, 2, 0, 8, 2, 0, 1, 3]),
              "--map=(float)i"], [13.0, 28.0, 0.0, 6.0],
             "i by range, where each lies")]:
        out = T.path("e.out")
        doc = run_json(["--input=" + vals, "--output=" + out] + args, what)
        if doc is None:
            continue
        size = 8 if "--acc=long" in args else 4
        with open(out, "rb") as f:
            data = f.read()
        got = list(struct.unpack("<%d%s" % (len(data) // size,
                                            "q" if size == 8 else "f"), data))
        check(doc["verified"] is True and got == want,
              "%s: %s, verified" % (what, want), "%s %s" % (got, doc))
    # Functions within OpenCL's ulps, argmax among near ties: verified
    # with the allowance.
    for args in (["--segment-length=1000", "--op=mean", "--map=sin(x)"],
                 ["--segment-length=77", "--op=argmax",
                  "--map=cos(x * 3.0f)"],
                 ["--segment-length=300", "--op=minmax", "--map=exp(x)"]):
        rc, out, err = run(["--n=30000", "--repeat=1"] + args)
        check(rc == 0 and "verified: yes" in out,
              "clreduce %s: verified" % " ".join(args), show(rc, out, err))
    expect_error(["--n=100", "--segment-length=10", "--type=int",
                  "--map=x / (x - x)"], 2,
                 ["no CPU reference", "division by zero"],
                 "an undefined expression by segment")


def refusals():
    ints = write("y.i32", "i", list(range(10)))
    bad = [
        ("decreasing", [0, 6, 4, 10], ["offsets[2]", "never decrease"]),
        ("not from 0", [1, 4, 10], ["offsets[0]", "starts at 0"]),
        ("not to n", [0, 4, 9], ["offsets[2]", "n = 10"]),
        ("past n", [0, 4, 11], ["offsets[2]", "n = 10"]),
    ]
    for what, offs, needles in bad:
        path = write("bad.off", "Q", offs)
        out = T.path("never")
        expect_error(["--type=int", "--input=" + ints, "--segments=" + path,
                      "--output=" + out], 2, needles, "offsets " + what)
        check(not os.path.exists(out), "offsets %s: no --output" % what)
    one = write("one.off", "Q", [0])
    expect_error(["--type=int", "--input=" + ints, "--segments=" + one], 2,
                 ["one.off", "1 offset"], "a file of one offset")
    odd = T.path("odd.off")
    with open(odd, "wb") as f:
        f.write(b"\0" * 12)
    expect_error(["--type=int", "--input=" + ints, "--segments=" + odd], 2,
                 ["odd.off"], "a file of 12 bytes")
    expect_error(["--type=int", "--input=" + ints,
                  "--segments=" + T.path("missing")], 2,
                 ["missing"], "a missing file")
    expect_error(["--segment-length=0"], 2, ["--segment-length"],
                 "--segment-length=0")
    for extra, needle in [(["--kernel=interleaved"], "--kernel"),
                          (["--kernel=decoupled"], "scan kernel"),
                          (["--dot"], "--dot"), (["--exact"], "--exact"),
                          (["--segments=" + one], "--segment-length"),
                          (["--vec=4"], "--vec")]:
        expect_error(["--n=100", "--segment-length=10"] + extra, 2, [needle],
                     "--segment-length with %s" % " ".join(extra))
    expect_error(["--n=100", "--scan"], 2, ["--scan", "--segments"],
                 "--scan without segments")
    expect_error(["--n=100", "--segment-length=10", "--exclusive"], 2,
                 ["--exclusive", "--scan"], "--exclusive without --scan")
    expect_error(["--n=100", "--segment-length=10", "--scan", "--map=abs"],
                 2, ["--map"], "a segmented scan with a map")
    expect_error(["--n=100", "--segment-length=10", "--scan", "--op=and"],
                 2, ["and"], "a segmented scan of and")
    path = write("bad2.off", "Q", [0, 6, 4, 10])
    expect_error(["--type=int", "--input=" + ints, "--segments=" + path,
                  "--scan"], 2, ["offsets[2]", "never decrease"],
                 "a segmented scan with decreasing offsets")
    expect_error(["--n=100", "--segment-length=10", "--op=mean",
                  "--type=long"], 2, ["mean"], "a mean of longs by segment")
    expect_error(["--n=100", "--segment-length=10", "--op=and"], 2,
                 ["and", "float"], "and of floats by segment")


def dropped_carry_is_caught(kernel_dir):
    """A copy of the kernels whose finishing pass forgets the carries of the
    work-items a segment spans: verification must fail (exit 1), and the
    --output file must not be written."""
    broken = clrtest.broken_kernels(
        kernel_dir, T.path("broken-cl"), "reduce_segmented.cl",
        "  acc = seg_merge(acc, mid);\n", "", "the carry combine")
    out = T.path("dropped")
    rc, o, err = run(["--n=100000", "--segment-length=30000", "--repeat=1",
                      "--output=" + out],
                     env={"CLREDUCE_KERNEL_DIR": broken,
                          "CLREDUCE_CACHE_DIR": T.path("c")})
    check(rc == 1 and "verification failed" in err and "segment" in err and
          not os.path.exists(out),
          "a dropped carry: exit 1, the segment named, no --output",
          show(rc, o, err))


def dropped_restart_is_caught(kernel_dir):
    """A copy of the kernels whose scan ignores the heads of the level
    above (a segment's restart lost between work-items): verification
    fails (exit 1, an element named), --output is not written."""
    broken = clrtest.broken_kernels(
        kernel_dir, T.path("broken-scan-cl"), "scan_segmented.cl",
        "f |= (uchar)head;", "(void)head;", "the flag fold")
    out = T.path("restart-dropped")
    rc, o, err = run(["--n=100000", "--segment-length=3000", "--scan",
                      "--repeat=1", "--output=" + out],
                     env={"CLREDUCE_KERNEL_DIR": broken,
                          "CLREDUCE_CACHE_DIR": T.path("c2")})
    check(rc == 1 and "verification failed" in err and "index" in err and
          not os.path.exists(out),
          "a lost restart: exit 1, the element named, no --output",
          show(rc, o, err))


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-segments-cli-"):
        known_answers()
        scan_known_answers()
        ranges_known_answers()
        generated_runs()
        expressions()
        refusals()
        dropped_carry_is_caught(a.kernel_dir)
        dropped_restart_is_caught(a.kernel_dir)
    return clrtest.finish("test_segments_cli")


if __name__ == "__main__":
    sys.exit(main())
