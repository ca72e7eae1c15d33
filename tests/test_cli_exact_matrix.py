#!/usr/bin/env python3
"""clreduce --exact with --shape: exact sums and means of a matrix's
columns (--axis=0) and rows (--axis=1), from the command line (stdlib
only).

    test_cli_exact_matrix.py CLREDUCE_EXE --kernel-dir DIR

Generated float and double matrices of many shapes (1x1, one row, one
column, primes, 2^k +- 1, long rows, tall columns), both axes, sum and
mean: exit 0, verified by equality (JSON exact, no bad column or row).
Hard matrices as --input (raw and 2-D .npy), whose columns or rows
cancel (1e30, 1, -1e30), span the exponent range, are denormal, all
-0.0, +0 / -0 mixed, hold +inf, -inf, both, NaN, overflow on the way,
or sit on a tie: every result read back from --output must be, to the
bit, the exact rational sum rounded once (tests/exact's reference), and a
mean that sum divided as the library divides it (through long double,
emulated here where its width is known).  min and max with --exact are
verified as without it.  --exact with half data, nansum or prod on a
matrix: the flat call's exit status, one line.  Kernels whose exact
rounding gives zeros the wrong sign are caught on both axes (exit 1, the
first column or row that differs named, --output not written).

The last line is "N passed, N failed".
"""
import concurrent.futures
import json
import math
import os
import platform
import random
import struct
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "exact"))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402
from test_exact_rational import exact_sum, round_to  # noqa: E402
clrtest.QUIET = False  # (test_exact_rational prints only failures)

T = clrtest.Session()
run, expect_error, run_json = T.run, T.expect_error, T.run_json

FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
DBL_MAX = sys.float_info.max
FMT = {"float": "f", "double": "d"}
DESCR = {"float": "<f4", "double": "<f8"}


def as_type(x, typ):
    """x rounded to the type (float: binary32)."""
    if typ == "float":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    return x


def bits(x, typ):
    return struct.pack("<" + FMT[typ], x).hex()


def same(a, b):
    """The same value to the bit (any NaN matching NaN)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def round_fraction(q, precision):
    """q rounded to `precision` significant bits (ties to even), as a
    Fraction: a long double's division, whose exponent range a quotient
    of a float or double sum by a count never leaves."""
    if q == 0:
        return q
    sign = -1 if q < 0 else 1
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    scaled = q / Fraction(2) ** (e - precision + 1)
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2 == 1):
        m += 1
    return sign * Fraction(m) * Fraction(2) ** (e - precision + 1)


# The long double's significand (LDBL_MANT_DIG) where the platform says it
# plainly; elsewhere the means are left to the CLI's own check.
LDBL_BITS = {"x86_64": 64, "amd64": 64, "i686": 64, "i386": 64,
             "aarch64": 113}.get(platform.machine().lower())


def exact_mean(values, typ):
    """What an exact mean is: the exact sum in the type, divided by the
    count through long double (clr_value_sum_to_mean), rounded to the
    type; None where the long double's width is unknown."""
    s = exact_sum(values, typ)
    if not math.isfinite(s) or s == 0:
        return s  # NaN, +-inf and +-0 divide to themselves
    if LDBL_BITS is None:
        return None
    q = round_fraction(Fraction(s) / len(values), LDBL_BITS)
    return round_to_type(q, typ)


def round_to_type(q, typ):
    """The rational q rounded once to the type (q from a finite sum / n:
    never near the overflow threshold)."""
    if typ == "float":
        return round_to(q, 24, -149, 128)
    return round_to(q, 53, -1074, 1024)


# ------------------------------------------------------------ lines

def hard_lines(typ, length, rng):
    """(name, values) lines of `length` elements each, every one hard."""
    big = FLT_MAX if typ == "float" else DBL_MAX
    emin, emax = (-149, 127) if typ == "float" else (-1074, 1023)
    tiny = 2.0 ** emin
    ulp = 2.0 ** (-23 if typ == "float" else -52)

    def cycle(pattern):
        return [pattern[k % len(pattern)] for k in range(length)]

    def with_at(values, at, x):
        v = list(values)
        v[at % length] = x
        return v

    rand = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-20, 20)
            for _ in range(length)]
    lines = [
        ("cancel", cycle([1e30, 1.0, -1e30])),
        ("cancel shuffled", rng.sample(cycle([1e30, 1.0, -1e30]), length)),
        ("exponent range", [rng.choice((-1, 1)) *
                            2.0 ** rng.randint(emin, emax) *
                            (1 + rng.random() / 2) for _ in range(length)]),
        ("denormals", [rng.choice((-1, 1)) * tiny * rng.randint(1, 1 << 20)
                       for _ in range(length)]),
        ("all -0.0", [-0.0] * length),
        ("+0 and -0", with_at([-0.0] * length, length // 2, 0.0)),
        ("+inf", with_at(rand, 3, math.inf)),
        ("-inf", with_at(rand, 5, -math.inf)),
        ("+inf and -inf", with_at(with_at(rand, 1, math.inf), 2, -math.inf)),
        ("NaN", with_at(rand, 4, math.nan)),
        ("partial overflow", cycle([big, big, -big, -big, 1.5])),
        ("tie", with_at(with_at([0.0] * length, 0, 1.0), 1, ulp / 2)),
        ("tie, a sticky bit far below", with_at(with_at(with_at(
            [0.0] * length, 0, 1.0), 1, ulp / 2), length - 1, tiny)),
        ("under a tie by a sticky bit", with_at(with_at(with_at(
            [0.0] * length, 0, 1.0 + ulp), length // 2, ulp / 2),
            length - 1, -tiny)),
        ("a tie that rounds to inf", with_at(with_at(
            [0.0] * length, 0, big), length - 1,
            2.0 ** (emax - (24 if typ == "float" else 53)))),
        ("alternating", [(-1) ** k * (1 + (k % 1024) * ulp)
                         for k in range(length)]),
        ("random", rand),
    ]
    return [(name, [as_type(x, typ) for x in v]) for name, v in lines]


def matrix_of(lines, axis):
    """The row-major matrix (flat list, rows, cols) whose columns (axis 0)
    or rows (axis 1) are the lines."""
    k, length = len(lines), len(lines[0][1])
    if axis == 1:
        return [x for _, v in lines for x in v], k, length
    return [lines[c][1][r] for r in range(length) for c in range(k)], \
        length, k


def hard_inputs():
    rng = random.Random(20261128)
    for typ in ("float", "double"):
        for length in (7, 1001):
            lines = hard_lines(typ, length, rng)
            for axis in (0, 1):
                for op in ("sum", "mean"):
                    for npy in (False, True):
                        one_hard(typ, lines, axis, op, npy)


def one_hard(typ, lines, axis, op, npy):
    flat, rows, cols = matrix_of(lines, axis)
    length = len(lines[0][1])
    unit = "column" if axis == 0 else "row"
    tag = "%s-%d-%d-%s-%d" % (typ, length, axis, op, npy)
    payload = struct.pack("<%d%s" % (len(flat), FMT[typ]), *flat)
    if npy:
        inp = T.path("in-%s.npy" % tag)
        with open(inp, "wb") as f:
            f.write(clrtest.npy_bytes(DESCR[typ], (rows, cols), payload))
    else:
        inp = T.path("in-%s.bin" % tag)
        with open(inp, "wb") as f:
            f.write(payload)
    out = T.path("out-%s.bin" % tag)
    what = "--input %s%s %dx%d --axis=%d --op=%s" % (
        typ, " .npy" if npy else "", rows, cols, axis, op)
    args = ["--exact", "--input=" + inp, "--shape=%dx%d" % (rows, cols),
            "--axis=%d" % axis, "--op=" + op, "--output=" + out,
            "--repeat=1"]
    if not npy:
        args.append("--type=" + typ)
    doc = run_json(args, what)
    if doc is None:
        return
    check(doc.get("verified") is True and doc.get("exact") is True and
          doc.get("exact_mode") is True and doc.get("bad_segments") == 0 and
          doc.get("segments") == len(lines),
          "%s: exit 0, %d %ss verified by equality" % (what, len(lines), unit),
          json.dumps(doc)[:600])
    got = clrtest.read_values(out, FMT[typ]) if os.path.exists(out) else []
    if not check(len(got) == len(lines), "%s: --output holds %d results"
                 % (what, len(lines)), "got %d" % len(got)):
        return
    bad = []
    for k, (name, values) in enumerate(lines):
        want = exact_sum(values, typ) if op == "sum" else \
            exact_mean(values, typ)
        if want is None:
            continue
        if not same(got[k], want):
            bad.append("%s %d (%s): got %s (%r), exact %s (%r)" % (
                unit, k, name, bits(got[k], typ), got[k], bits(want, typ),
                want))
    check(not bad, "%s: every %s the exact rational %s, to the bit"
          % (what, unit, op), "; ".join(bad[:3]))


# ------------------------------------------------------------ generated

def generated():
    shapes = ["1x1", "1x1009", "1009x1", "1009x3", "3x1009", "97x101",
              "63x65", "257x255", "3x300001", "300001x3", "5x100003"]
    jobs = []
    for i, shape in enumerate(shapes):
        for typ in ("float", "double"):
            for axis in (0, 1):
                op = ("sum", "mean")[(i + axis + (typ == "double")) % 2]
                jobs.append((shape, typ, axis, op, 100 + i))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for job, doc in zip(jobs, pool.map(generated_one, jobs)):
            shape, typ, axis, op, seed = job
            rows, cols = (int(x) for x in shape.split("x"))
            count = cols if axis == 0 else rows
            what = "generated %s %s --axis=%d --op=%s" % (typ, shape, axis, op)
            if doc is None:
                check(False, what + ": a JSON report")
                continue
            check(doc.get("verified") is True and doc.get("exact") is True and
                  doc.get("exact_mode") is True and
                  doc.get("bad_segments") == 0 and
                  doc.get("segments") == count and
                  doc.get("shape") == [rows, cols] and
                  doc.get("axis") == axis and doc.get("type") == typ,
                  "%s: exit 0, %d results verified by equality"
                  % (what, count), json.dumps(doc)[:600])


def generated_one(job):
    shape, typ, axis, op, seed = job
    rc, out, err = run(["--exact", "--shape=" + shape, "--axis=%d" % axis,
                        "--type=" + typ, "--op=" + op, "--seed=%d" % seed,
                        "--repeat=1", "--json"])
    if rc != 0:
        print("  %s %s axis %d %s: %s" % (typ, shape, axis, op,
                                           show(rc, out, err)))
        return None
    try:
        return json.loads(out)
    except ValueError:
        return None


def human_report():
    for axis, unit, count in ((0, "columns", 101), (1, "rows", 97)):
        rc, out, err = run(["--exact", "--shape=97x101", "--axis=%d" % axis,
                            "--repeat=1"])
        check(rc == 0 and "error:      exact match (all %d %s)" % (count, unit)
              in out and "verified: yes" in out and "matrix exact sum" in out,
              "human report, axis %d: an exact match of all %d %s"
              % (axis, count, unit), show(rc, out, err))


def unchanged_ops():
    """min and max are exact anyway: verified, by equality."""
    for op in ("min", "max"):
        for axis in (0, 1):
            what = "--exact --op=%s --axis=%d" % (op, axis)
            doc = run_json(["--exact", "--op=" + op, "--shape=61x37",
                            "--axis=%d" % axis, "--repeat=1"], what)
            check(doc is not None and doc.get("verified") is True and
                  doc.get("exact") is True and doc.get("exact_mode") is True,
                  what + ": verified by equality", json.dumps(doc)[:400])


def refusals():
    """What exact mode refuses for a whole array it refuses for a matrix,
    with the same exit status and one line."""
    for extra, needles in ((["--type=half"], ["exact", "half"]),
                           (["--op=nansum"], ["exact", "nansum"]),
                           (["--op=prod"], ["exact", "prod"])):
        rc, out, err = run(["--exact", "--n=100", "--repeat=1"] + extra)
        check(rc != 0 and out == "" and len(err.strip().split("\n")) == 1,
              "flat --exact %s: refused, one line" % " ".join(extra),
              show(rc, out, err))
        for axis in (0, 1):
            expect_error(["--exact", "--shape=10x10", "--axis=%d" % axis,
                          "--repeat=1"] + extra, rc, needles,
                         "--exact %s --shape=10x10 --axis=%d: the flat "
                         "call's exit %d" % (" ".join(extra), axis, rc))


def wrong_results_are_caught(kernel_dir):
    """Kernels whose exact rounding swaps the zeros' signs (a zero sum of
    nonzero elements -0.0, a sum of -0.0 alone +0.0: cl/reduce_exact.cl's
    rounding, which the matrices' kernels share): the check by equality
    names the first column / row that differs, exit 1, one line, no
    --output."""
    broken = clrtest.broken_kernels(
        kernel_dir, T.path("broken-cl"), "reduce_exact.cl",
        "r = (flags & EX_NONZERO) ? 0 : (EX_BITS_T)1 << EX_SIGN_SHIFT;",
        "r = (flags & EX_NONZERO) ? (EX_BITS_T)1 << EX_SIGN_SHIFT : 0;",
        "the exact rounding's signed zero")
    # columns: 7.75, +0 (1 - 1 + 2 - 2), -0 (-0.0 alone); rows: the same
    # lines as rows
    lines = [[1.5, 2.0, 0.25, 4.0], [1.0, -1.0, 2.0, -2.0], [-0.0] * 4]
    for axis, unit in [(0, "column"), (1, "row")]:
        flat, rows, cols = matrix_of([("", v) for v in lines], axis)
        inp = T.path("wrong-%d.f32" % axis)
        with open(inp, "wb") as f:
            f.write(struct.pack("<%df" % len(flat), *flat))
        out = T.path("wrong-out-%d" % axis)
        rc, o, err = run(["--exact", "--type=float", "--input=" + inp,
                          "--shape=%dx%d" % (rows, cols), "--axis=%d" % axis,
                          "--repeat=1", "--output=" + out],
                         env={"CLREDUCE_KERNEL_DIR": broken,
                              "CLREDUCE_CACHE_DIR": T.path("wc%d" % axis)})
        check(rc == 1 and "verification failed" in err and
              ("2 of 3 %ss differ" % unit) in err and
              ("first at %s 1" % unit) in err and
              len(err.strip().split("\n")) == 1 and
              "VERIFICATION FAILED" in o and not os.path.exists(out),
              "axis %d, zeros of the wrong sign: exit 1, %s 1 named, no "
              "--output" % (axis, unit), show(rc, o, err))


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-exact-matrix-"):
        refusals()
        unchanged_ops()
        human_report()
        generated()
        hard_inputs()
        wrong_results_are_caught(a.kernel_dir)
    return clrtest.finish("test_cli_exact_matrix")


if __name__ == "__main__":
    sys.exit(main())
