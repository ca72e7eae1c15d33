#!/usr/bin/env python3
"""clreduce's matrices from the command line: --shape=RxC --axis=0|1
(stdlib only).

    test_matrix_cli.py CLREDUCE_EXE --kernel-dir DIR

Answers worked out here, in plain Python, for small files: an int matrix
(raw) by column and by row for sum, prod, min, max, mean and the records
of argmin, argmax and minmax (indices: the row for --axis=0, the column
for --axis=1); a float64 2-D .npy --input written back as a .npy
--output; a built-in map by column and a map expression (i: the flat
index r*C + c) by row; map expressions of int, float and double by
column and by row (sums, an i-dependent one on data where a wrong i
gives another answer, argmin / argmax records indexed by the row or the
column, a count with --acc=long); a pipe as --input.  Generated runs of both axes
over many ops and types, verified (JSON: shape, axis, one result a
column or row; the human report's segments line and bandwidth), map
expressions among them, several runs at a time.  nanmean
by column and by row of a float matrix with NaNs (a whole row and column
of them giving NaN) against the means of each line's numbers.  Every
refusal: a bad --shape or --axis, one without the other, an --n or an
--input whose count is not R*C, and the options a matrix does not take
(exit 2, one line naming the problem).  Kernels that compute a wrong
square are caught on both axes (exit 1, the column or row named, --output
not written), and kernels whose expression sees i + 1 are caught by an
expression of i on both axes, not by one of x alone.  No timing
assertions.

The last line is "N passed, N failed".
"""
import concurrent.futures
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json, write = T.run, T.expect_error, T.run_json, T.write


def columns(m):
    return [[row[c] for row in m] for c in range(len(m[0]))]


def lines(m, axis):
    """The vectors each result folds: columns (axis 0) or rows (axis 1)."""
    return columns(m) if axis == 0 else [list(row) for row in m]


def first_index(v, better):
    best = 0
    for k in range(1, len(v)):
        if better(v[k], v[best]):
            best = k
    return best


def read_records(path, fmt):
    with open(path, "rb") as f:
        return list(struct.iter_unpack(fmt, f.read()))


def read_npy(path):
    """The values of a 1-D float64 .npy file, its header checked."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:6] != b"\x93NUMPY":
        return None, None
    hlen = struct.unpack("<H", b[8:10])[0]
    header = b[10:10 + hlen].decode("latin-1")
    data = b[10 + hlen:]
    return header, list(struct.unpack("<%dd" % (len(data) // 8), data))


R, C = 4, 6
# small ints with negatives, ties and a zero: every op's answer is exact
M = [[((r * 7 + c * 3) % 11) - 5 for c in range(C)] for r in range(R)]


def int_known_answers():
    flat = [x for row in M for x in row]
    path = write("m.i32", "i", flat)
    shape = "--shape=%dx%d" % (R, C)
    values = [
        ("sum", "long", "q", lambda v: sum(v)),
        ("prod", "long", "q", lambda v: eval("*".join(map(str, v)))),
        ("min", "int", "i", min),
        ("max", "int", "i", max),
        ("mean", "double", "d", lambda v: sum(v) / len(v)),
    ]
    for axis in (0, 1):
        want_count = C if axis == 0 else R
        unit = "column" if axis == 0 else "row"
        for op, rtype, fmt, fold in values:
            out = T.path("r-%s-%d" % (op, axis))
            what = "int %s by %s" % (op, unit)
            doc = run_json(["--type=int", "--op=" + op, "--input=" + path,
                            shape, "--axis=%d" % axis, "--output=" + out,
                            "--repeat=2"], what)
            if doc is None:
                continue
            check(doc["verified"] is True and doc["segments"] == want_count
                  and doc["shape"] == [R, C] and doc["axis"] == axis and
                  doc["n"] == R * C and doc["result_type"] == rtype and
                  doc["bad_segments"] == 0 and doc["output"] == out,
                  "%s: %d results of %s, verified, shape and axis in JSON"
                  % (what, want_count, rtype), str(doc))
            want = [fold(v) for v in lines(M, axis)]
            got = clrtest.read_values(out, fmt) if os.path.exists(out) \
                else None
            check(got == want, "%s: --output holds %s" % (what, want),
                  "got %s" % got)
        # the records: (min, max, min's index, max's index), the index
        # within the column (its row) or the row (its column), the first
        # of a tie
        for op in ["argmin", "argmax", "minmax"]:
            out = T.path("r-%s-%d" % (op, axis))
            what = "int %s by %s" % (op, unit)
            doc = run_json(["--type=int", "--op=" + op, "--input=" + path,
                            shape, "--axis=%d" % axis, "--output=" + out,
                            "--repeat=1"], what)
            recs = read_records(out, "<iiQQ") if doc is not None and \
                os.path.exists(out) else None
            ok = doc is not None and doc["verified"] is True and \
                recs is not None and len(recs) == want_count
            for k, v in enumerate(lines(M, axis)):
                if not ok:
                    break
                lo = first_index(v, lambda a, b: a < b)
                hi = first_index(v, lambda a, b: a > b)
                if op != "argmax":
                    ok = ok and (recs[k][0], recs[k][2]) == (v[lo], lo)
                if op != "argmin":
                    ok = ok and (recs[k][1], recs[k][3]) == (v[hi], hi)
            check(ok, "%s: --output holds each %s's records (index within "
                  "the %s)" % (what, unit, unit), "got %s, %s" % (recs, doc))
    # the human report names the shape and the last column / row
    for axis, line, last in [(0, "segments:   6 columns of 4 rows",
                              "result:     last column "),
                             (1, "segments:   4 rows of 6",
                              "result:     last row ")]:
        rc, out, err = run(["--type=int", "--input=" + path, shape,
                            "--axis=%d" % axis, "--repeat=1"])
        check(rc == 0 and line in out and last in out and
              "verified: yes" in out and "(values)" in out,
              "human report, axis %d: '%s', '%s'" % (axis, line, last.strip()),
              show(rc, out, err))
    # a pipe: its values read to the end, R*C of them
    with open(path, "rb") as f:
        data = f.read()
    rc, out, err = run(["--type=int", "--input=/dev/stdin", shape,
                        "--axis=1", "--repeat=1", "--json"], stdin=data)
    check(rc == 0 and '"verified":true' in out and '"segments":4' in out,
          "a pipe as --input: 4 rows verified", show(rc, out, err))


def npy_and_maps():
    # a float64 2-D .npy (3, 5) of quarters: sums exact in any order
    R2, C2 = 3, 5
    m = [[(r * 5 + c) * 0.25 - 1.5 for c in range(C2)] for r in range(R2)]
    flat = [x for row in m for x in row]
    path = T.path("m.npy")
    with open(path, "wb") as f:
        f.write(clrtest.npy_bytes("<f8", (R2, C2),
                                  struct.pack("<%dd" % len(flat), *flat)))
    for axis in (0, 1):
        out = T.path("sums-%d.npy" % axis)
        what = ".npy float64 sums, axis %d" % axis
        doc = run_json(["--input=" + path, "--shape=%dx%d" % (R2, C2),
                        "--axis=%d" % axis, "--output=" + out, "--repeat=1"],
                       what)
        header, got = read_npy(out) if os.path.exists(out) else (None, None)
        want = [sum(v) for v in lines(m, axis)]
        check(doc is not None and doc["verified"] is True and
              doc["type"] == "double" and header is not None and
              "'<f8'" in header and "(%d,)" % len(want) in header and
              got == want,
              "%s: type from the .npy, a 1-D .npy --output of %s" % (what,
                                                                    want),
              "got %s %s, %s" % (header, got, doc))
    # a built-in map by column: the sum of |x| of each column
    vals = [0.5, -1.0, 2.0, -0.25, 3.0, -0.5, 1.5, 4.0, -2.0, 0.75, -3.0,
            1.25]
    fpath = write("m.f32", "f", vals)
    fm = [vals[r * 4:(r + 1) * 4] for r in range(3)]
    out = T.path("abs-0")
    doc = run_json(["--input=" + fpath, "--type=float", "--shape=3x4",
                    "--axis=0", "--map=abs", "--output=" + out,
                    "--repeat=1"], "sum of |x| by column")
    got = clrtest.read_values(out, "f") if os.path.exists(out) else None
    want = [sum(abs(x) for x in v) for v in columns(fm)]
    check(doc is not None and doc["verified"] is True and
          doc["map"] == "abs" and got == want,
          "sum of |x| by column: %s" % want, "got %s, %s" % (got, doc))
    # a map expression by row: i is the element's flat index r*C + c
    out = T.path("expr-1")
    doc = run_json(["--input=" + fpath, "--type=float", "--shape=3x4",
                    "--axis=1", "--map=(float)i * x", "--output=" + out,
                    "--repeat=1"], "sum of i * x by row")
    got = clrtest.read_values(out, "f") if os.path.exists(out) else None
    want = [sum((r * 4 + c) * fm[r][c] for c in range(4)) for r in range(3)]
    check(doc is not None and doc["verified"] is True and got == want,
          "sum of i * x by row (i flat): %s" % want, "got %s, %s" % (got, doc))


# A matrix whose C is no multiple of 3: i % 3 (i = r*C + c, the flat
# index) then differs from c % 3, and from the index of a column-major
# reading (c*R + r), so a check that got i wrong would not pass
RE, CE = 5, 7
ME = [[((r * 5 + c * 3) % 13) - 6 for c in range(CE)] for r in range(RE)]


def fold_expr(m, axis, f):
    """f(x, i) of every element of m (i its flat index), folded per column
    (axis 0) or row (axis 1): the lists of values, in order."""
    cols = len(m[0])
    vals = [[f(m[r][c], r * cols + c) for c in range(cols)]
            for r in range(len(m))]
    return lines(vals, axis)


def runs_at_once(arg_lists):
    """(rc, stdout, stderr) of clreduce with each list of arguments, run
    several at a time (each expression builds its own kernels: minutes
    one after another on PoCL)."""
    jobs = max(1, min(8, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(run, arg_lists))


def parse_json(rc, out, err, what):
    try:
        return json.loads(out)
    except ValueError as ex:
        check(False, what + ": JSON output parses",
              "%s; %s" % (ex, show(rc, out, err)))
        return None


def expression_known_answers():
    """Map expressions by column and by row, the answers worked out here:
    int sums of x * x and of an i-dependent expression, argmax of an
    expression (its index the row / the column), float quarters (exact
    sums) through fabs, a comparison counted with --acc=long, and a
    float64 matrix; --output read back."""
    flat = [x for row in ME for x in row]
    path = write("me.i32", "i", flat)
    shape = "--shape=%dx%d" % (RE, CE)
    cases = [
        # (expression, options, f(x, i), --output's format, fold; None:
        # a record's index and value checked)
        ("x * x", [], lambda x, i: x * x, "q", sum),
        ("i % 3 == 0 ? x : 0", [], lambda x, i: x if i % 3 == 0 else 0,
         "q", sum),
        ("(x - 2) * (x - 2)", ["--op=argmax"],
         lambda x, i: (x - 2) * (x - 2), "<iiQQ", None),
        ("i % 4 == 1 ? x : -7", ["--op=argmin"],
         lambda x, i: x if i % 4 == 1 else -7, "<iiQQ", None),
    ]
    todo = [(axis, k) for axis in (0, 1) for k in range(len(cases))]
    done = runs_at_once([["--type=int", "--input=" + path, shape,
                          "--axis=%d" % axis, "--map=" + cases[k][0],
                          "--output=" + T.path("me-%d-%d" % (axis, k)),
                          "--repeat=1", "--json"] + cases[k][1]
                         for axis, k in todo])
    for (axis, k), (rc, o, err) in zip(todo, done):
        expr, extra, f, fmt, fold = cases[k]
        unit = "column" if axis == 0 else "row"
        count = CE if axis == 0 else RE
        what = "int map '%s'%s by %s" % (expr, " " + extra[0]
                                         if extra else "", unit)
        out = T.path("me-%d-%d" % (axis, k))
        doc = parse_json(rc, o, err, what)
        check(rc == 0, what + ": exit 0", show(rc, o, err))
        ok = doc is not None and os.path.exists(out)
        check(ok and doc["verified"] is True and
              doc["segments"] == count and doc["bad_segments"] == 0 and
              doc["map"] == expr, what + ": %d results verified" % count,
              str(doc))
        if not ok:
            continue
        vecs = fold_expr(ME, axis, f)
        if fold:
            got = clrtest.read_values(out, fmt[-1])
            want = [fold(v) for v in vecs]
            check(got == want, "%s: --output holds %s" % (what, want),
                  "got %s" % got)
        else:
            recs = read_records(out, fmt)
            lo = extra == ["--op=argmin"]
            want = []
            for v in vecs:
                best = first_index(v, (lambda a, b: a < b) if lo else
                                   (lambda a, b: a > b))
                want.append((v[best], best))
            got = [(rec[0], rec[2]) if lo else (rec[1], rec[3])
                   for rec in recs]
            check(got == want, "%s: --output's records hold each %s's "
                  "value and index within the %s: %s"
                  % (what, unit, unit, want), "got %s" % got)
        if expr.startswith("i %"):
            # the data make i matter: i = c*R + r (a column-major
            # reading) or i = c (within the row) would give other
            # answers, so the equality above tests the flat index
            wrong_t = fold_expr([list(col) for col in columns(ME)],
                                1 - axis, f)
            wrong_c = lines([[f(ME[r][c], c) for c in range(CE)]
                             for r in range(RE)], axis)
            check(wrong_t != vecs and wrong_c != vecs,
                  "%s: a wrong i (c*R + r, or c) gives other values"
                  % what)
    # float quarters (sums exact in any order), a 3x4 matrix
    vals = [0.5, -1.0, 2.0, -0.25, 3.0, -0.5, 1.5, 4.0, -2.0, 0.75, -3.0,
            1.25]
    fm = [vals[r * 4:(r + 1) * 4] for r in range(3)]
    fpath = write("me.f32", "f", vals)
    dpath = write("me.f64", "d", vals)
    fcases = [
        ("float", fpath, "fabs(x - 0.5f)", [], "f",
         lambda x, i: abs(x - 0.5)),
        ("float", fpath, "(x > 0.5f) ? 1 : 0", ["--acc=long"], "q",
         lambda x, i: 1 if x > 0.5 else 0),
        ("float", fpath, "i % 3 == 0 ? x : 0", [], "f",
         lambda x, i: x if i % 3 == 0 else 0),
        ("double", dpath, "x * x", [], "d", lambda x, i: x * x),
        ("double", dpath, "i % 3 == 0 ? x : 0", [], "d",
         lambda x, i: x if i % 3 == 0 else 0),
    ]
    todo = [(axis, k) for axis in (0, 1) for k in range(len(fcases))]
    done = runs_at_once([["--type=" + fcases[k][0], "--input=" + fcases[k][1],
                          "--shape=3x4", "--axis=%d" % axis,
                          "--map=" + fcases[k][2],
                          "--output=" + T.path("mf-%d-%d" % (axis, k)),
                          "--repeat=1", "--json"] + fcases[k][3]
                         for axis, k in todo])
    for (axis, k), (rc, o, err) in zip(todo, done):
        t, p, expr, extra, fmt, f = fcases[k]
        unit = "column" if axis == 0 else "row"
        what = "%s map '%s'%s by %s" % (t, expr, " " + extra[0]
                                        if extra else "", unit)
        out = T.path("mf-%d-%d" % (axis, k))
        doc = parse_json(rc, o, err, what)
        check(rc == 0, what + ": exit 0", show(rc, o, err))
        got = clrtest.read_values(out, fmt) \
            if doc is not None and os.path.exists(out) else None
        want = [sum(v) for v in fold_expr(fm, axis, f)]
        check(doc is not None and doc["verified"] is True and
              got == want, "%s: verified, --output holds %s"
              % (what, want), "got %s, %s" % (got, doc))
    # the human report of an expression by column
    rc, out, err = run(["--type=int", "--input=" + path, shape, "--axis=0",
                        "--map=i % 3 == 0 ? x : 0", "--repeat=1"])
    check(rc == 0 and "segments:   7 columns of 5 rows" in out and
          "verified: yes" in out, "human report of an expression by "
          "column: 7 columns verified", show(rc, out, err))


def generated_expressions():
    """Generated matrices of float, double and int through expressions,
    both axes (a tall one by column, a wide one by row; no power of two):
    every result verified by the CPU's evaluation of the expression."""
    exprs = {
        "float": [("x * x", []), ("fabs(x - 0.5f)", ["--op=argmax"]),
                  ("(x > 0.5f) ? 1 : 0", ["--acc=long"]),
                  ("i % 3 == 0 ? x : 0", []),
                  ("i % 5 == 2 ? x : 0.5f", ["--op=minmax"])],
        "double": [("x * x", []), ("fabs(x - 0.5)", ["--op=argmax"]),
                   ("(x > 0.5) ? 1 : 0", ["--acc=long"]),
                   ("i % 3 == 0 ? x : 0", ["--op=mean"])],
        "int": [("x * x", []), ("x % 100", ["--op=argmax"]),
                ("(x > 0) ? 1 : 0", ["--acc=long"]),
                ("i % 3 == 0 ? x : 0", []),
                ("(int)(i % 7) - x", ["--op=min"])],
    }
    cases = []
    for t, es in exprs.items():
        for expr, extra in es:
            for axis, (rows, cols) in [(0, (203, 37)), (1, (37, 203))]:
                what = "generated %s map '%s'%s, %dx%d, axis %d" % (
                    t, expr, " " + extra[0] if extra else "", rows, cols,
                    axis)
                args = ["--type=" + t, "--map=" + expr,
                        "--shape=%dx%d" % (rows, cols), "--axis=%d" % axis,
                        "--repeat=1", "--json"] + extra
                cases.append((what, args, cols if axis == 0 else rows))

    done = runs_at_once([args for _, args, _ in cases])
    for (what, args, count), (rc, out, err) in zip(cases, done):
        doc = parse_json(rc, out, err, what)
        check(rc == 0 and doc is not None and
              doc["verified"] is True and doc["segments"] == count and
              doc["bad_segments"] == 0,
              what + ": %d results verified" % count, show(rc, out, err))


def wrong_i_is_caught(kernel_dir):
    """Kernels whose map expression sees i + 1 for i: an expression of i
    by column or by row must fail the CPU check (exit 1, the column or row
    named, --output not written), while one of x alone still passes on
    them: the check's i is the element's flat index, and it is checked."""
    broken = clrtest.broken_kernels(
        kernel_dir, T.path("broken-i-cl"), "common.cl",
        "#define CLR_MAP_VALUE(x, y, i) (CLR_MAP_EXPR((x), (i)))",
        "#define CLR_MAP_VALUE(x, y, i) (CLR_MAP_EXPR((x), (i) + 1))",
        "a one-input map expression")
    for axis, unit in [(0, "column"), (1, "row")]:
        env = {"CLREDUCE_KERNEL_DIR": broken,
               "CLREDUCE_CACHE_DIR": T.path("ci%d" % axis)}
        out = T.path("wrong-i-%d" % axis)
        rc, o, err = run(["--type=int", "--shape=60x50", "--axis=%d" % axis,
                          "--map=i % 3 == 0 ? x : 0", "--repeat=1",
                          "--output=" + out], env=env)
        check(rc == 1 and "verification failed" in err and
              ("%ss differ from the reference" % unit) in err and
              ("first at %s" % unit) in err and
              len(err.strip().split("\n")) == 1 and
              "VERIFICATION FAILED" in o and not os.path.exists(out),
              "axis %d, a device whose i is off by one: exit 1, the %s "
              "named, no --output" % (axis, unit), show(rc, o, err))
        rc, o, err = run(["--type=int", "--shape=60x50", "--axis=%d" % axis,
                          "--map=x * x", "--repeat=1"], env=env)
        check(rc == 0 and "verified: yes" in o, "axis %d, the same kernels: "
              "an expression without i still verifies" % axis,
              show(rc, o, err))


def generated_runs():
    # every type, many ops, both axes: a tall matrix by column, a wide one
    # by row (shapes no power of two)
    cases = [("float", "sum"), ("double", "max"), ("int", "argmin"),
             ("uint", "and"), ("long", "min"), ("ulong", "sum"),
             ("half", "mean"), ("float", "minmax"), ("double", "nanargmax"),
             ("int", "prod"), ("float", "nanmax"), ("float", "nanmean"),
             ("double", "nanmean"), ("half", "nanmean")]
    for t, op in cases:
        for axis, (rows, cols) in [(0, (1003, 37)), (1, (37, 1003))]:
            what = "generated %s %s, %dx%d, axis %d" % (t, op, rows, cols,
                                                        axis)
            doc = run_json(["--type=" + t, "--op=" + op,
                            "--shape=%dx%d" % (rows, cols),
                            "--axis=%d" % axis, "--repeat=1"], what)
            count = cols if axis == 0 else rows
            check(doc is not None and doc["verified"] is True and
                  doc["segments"] == count and doc["n"] == rows * cols and
                  doc["bad_segments"] == 0 and
                  clrtest.is_number(doc["gbps"]),
                  what + ": %d results verified, GB/s reported" % count,
                  str(doc))
    # --n agreeing with --shape, numbers as --n takes them, tuning options
    # a matrix reads
    doc = run_json(["--shape=1e3x2e2", "--n=2e5", "--axis=0", "--wg=64",
                    "--layout=contiguous", "--acc=double", "--repeat=1"],
                   "--shape=1e3x2e2 --n=2e5 --layout=contiguous --acc=double")
    check(doc is not None and doc["verified"] is True and
          doc["segments"] == 200 and doc["result_type"] == "double",
          "1e3x2e2: 200 columns verified in double", str(doc))
    doc = run_json(["--shape=500x40", "--axis=0", "--map=square",
                    "--repeat=1"], "sum of squares by column")
    check(doc is not None and doc["verified"] is True, "sum of squares by "
          "column verified", str(doc))
    doc = run_json(["--shape=40x500", "--axis=1", "--map=x > 0.5f",
                    "--acc=long", "--repeat=1"], "a count by row")
    check(doc is not None and doc["verified"] is True and
          doc["result_type"] == "long", "a count by expression per row, "
          "verified", str(doc))
    doc = run_json(["--shape=40x50", "--axis=0", "--map=x * 2.0f",
                    "--repeat=1"], "an expression by column")
    check(doc is not None and doc["verified"] is True and
          doc["segments"] == 50, "an expression by column verified",
          str(doc))


def nanmean_known_answers():
    """nanmean by column and by row of a float matrix with NaNs scattered,
    a whole row and a whole column of NaN (their results NaN, as NumPy's
    np.nanmean gives with a warning): verified, --output holds the means
    of each line's numbers."""
    nan = float("nan")
    rows, cols = 5, 7
    m = [[nan if (r == 1 or c == 4 or (r * cols + c) % 5 == 3)
          else float((r * 3 + c * 5) % 9) - 2.0 for c in range(cols)]
         for r in range(rows)]
    path = write("nm.f32", "f", [x for row in m for x in row])
    for axis in (0, 1):
        unit = "column" if axis == 0 else "row"
        out = T.path("nm-%d.f32" % axis)
        doc = run_json(["--type=float", "--input=" + path, "--op=nanmean",
                        "--shape=%dx%d" % (rows, cols), "--axis=%d" % axis,
                        "--output=" + out, "--repeat=1"],
                       "nanmean by " + unit)
        got = clrtest.read_values(out, "f") \
            if doc is not None and os.path.exists(out) else None
        want = []
        for v in lines(m, axis):
            nums = [x for x in v if x == x]
            want.append(sum(nums) / len(nums) if nums else nan)
        same = got is not None and len(got) == len(want) and all(
            (g != g and w != w) or abs(g - w) <= 1e-6 * (abs(w) + 1)
            for g, w in zip(got, want))
        check(doc is not None and doc["verified"] is True and same,
              "nanmean by %s: verified, --output %s (NaN for the line of "
              "NaN)" % (unit, want), "got %s, %s" % (got, doc))


def refusals():
    ok = ["--axis=0"]
    for args, needles, what in [
            (["--shape=0x5"] + ok, ["--shape", "0x5", "rows", "zero"],
             "no rows"),
            (["--shape=5x0"] + ok, ["--shape", "columns", "zero"],
             "no columns"),
            (["--shape=5"] + ok, ["--shape", "'5'", "RxC"], "no x"),
            (["--shape=5x"] + ok, ["--shape", "columns", "missing"],
             "no columns after the x"),
            (["--shape=x5"] + ok, ["--shape", "rows", "missing"],
             "no rows before the x"),
            (["--shape=ax5"] + ok, ["--shape", "rows", "not a number"],
             "rows not a number"),
            (["--shape=5xb"] + ok, ["--shape", "columns", "not a number"],
             "columns not a number"),
            (["--shape=5x3x2"] + ok, ["--shape", "not a number"],
             "two x"),
            (["--shape=2.5x4"] + ok, ["--shape", "not an integer"],
             "a fraction"),
            (["--shape=-5x3"] + ok, ["--shape", "negative"], "negative"),
            (["--shape=4294967296x4294967296"] + ok,
             ["--shape", "too many"], "R*C past 2^63"),
            (["--shape=1e10x1e10"] + ok, ["--shape", "too many"],
             "R*C past 2^63, in exponents"),
            (["--shape=5x5", "--axis=2"], ["--axis", "'2'", "0", "1"],
             "--axis=2"),
            (["--shape=5x5", "--axis=-1"], ["--axis", "'-1'"], "--axis=-1"),
            (["--shape=5x5", "--axis=x"], ["--axis", "'x'"], "--axis=x"),
            (["--axis=0"], ["--axis", "--shape"], "--axis without --shape"),
            (["--axis=1", "--n=100"], ["--axis", "--shape"],
             "--axis=1 without --shape"),
            (["--shape=5x5"], ["--shape", "needs --axis"],
             "--shape without --axis"),
            (["--shape=5x5", "--axis=0", "--n=24"],
             ["--n=24", "--shape=5x5", "25"], "--n disagreeing"),
            (["--shape=5x5", "--axis=0", "--segments=s"],
             ["--shape", "--segments"], "with --segments"),
            (["--shape=5x5", "--axis=0", "--segment-length=5"],
             ["--shape", "--segment-length"], "with --segment-length"),
            (["--shape=5x5", "--axis=1", "--ranges=r"],
             ["--shape", "--ranges"], "with --ranges"),
            (["--shape=5x5", "--axis=0", "--scan"], ["--shape", "--scan"],
             "with --scan"),
            (["--shape=5x5", "--axis=0", "--dot"], ["--shape", "--dot"],
             "with --dot"),
            (["--shape=5x5", "--axis=0", "--input=a", "--input2=b"],
             ["--shape", "--input2"], "with --input2"),
            (["--shape=5x5", "--axis=0", "--exclusive"],
             ["--shape", "--exclusive"], "with --exclusive"),
            (["--shape=5x5", "--axis=0", "--vec=4"], ["--shape", "--vec"],
             "with --vec"),
            (["--shape=5x5", "--axis=0", "--coarse=8"],
             ["--shape", "--coarse"], "with --coarse"),
            (["--shape=5x5", "--axis=1", "--layout=strided"],
             ["--shape", "--layout", "--axis=0"],
             "--layout with --axis=1 (it reads no layout)"),
            (["--shape=5x5", "--axis=0", "--kernel=decoupled"],
             ["--shape", "scan kernel", "decoupled"], "with a scan kernel"),
            (["--shape=5x5", "--axis=1", "--kernel=sequential"],
             ["--shape", "--kernel=sequential"],
             "with another reduction kernel"),
            (["--shape=5x5", "--axis=0", "--device=all"],
             ["--shape", "one device", "--device=all"], "--device=all"),
            (["--shape=5x5", "--axis=1", "--device=0,1"],
             ["--shape", "one device", "--device=0,1"], "--device=0,1"),
            (["--shape=5x5", "--axis=0", "--op=argmax",
              "--output=" + T.path("o.npy")],
             ["--output", ".npy", "records"], "records as .npy"),
    ]:
        expect_error(args, 2, needles, "--shape refusal: " + what)
    # the input's count must be R*C
    path = write("c.i32", "i", list(range(35)))
    expect_error(["--type=int", "--input=" + path, "--shape=5x8",
                  "--axis=0"], 2, ["--shape=5x8", "40", "35"],
                 "a raw --input of 35 values for 5x8")
    expect_error(["--type=int", "--input=" + path, "--shape=5x8",
                  "--axis=0", "--n=40"], 2, ["--n=40", "35"],
                 "a raw --input of 35 values for 5x8, --n=40")
    npy = T.path("c.npy")
    with open(npy, "wb") as f:
        f.write(clrtest.npy_bytes("<i4", (5, 7),
                                  struct.pack("<35i", *range(35))))
    expect_error(["--input=" + npy, "--shape=6x6", "--axis=1"], 2,
                 ["c.npy", "35", "--shape=6x6"],
                 "a (5, 7) .npy for 6x6")


def wrong_results_are_caught(kernel_dir):
    """Kernels whose square map adds 1 to every square (cl/common.cl, which
    every kernel includes: whichever kernel a column or a row takes): the
    CPU check names the column / row, exit 1, --output not written."""
    broken = clrtest.broken_kernels(
        kernel_dir, T.path("broken-cl"), "common.cl",
        "#define CLR_MAP_VALUE(x, y, i) ((ACC_T)(x) * (ACC_T)(x))",
        "#define CLR_MAP_VALUE(x, y, i) ((ACC_T)(x) * (ACC_T)(x) + (ACC_T)1)",
        "the square map")
    for axis, unit in [(0, "column"), (1, "row")]:
        out = T.path("wrong-%d" % axis)
        rc, o, err = run(["--shape=300x200", "--axis=%d" % axis,
                          "--map=square", "--repeat=1", "--output=" + out],
                         env={"CLREDUCE_KERNEL_DIR": broken,
                              "CLREDUCE_CACHE_DIR": T.path("c%d" % axis)})
        check(rc == 1 and "verification failed" in err and
              ("%ss outside their error bound" % unit) in err and
              ("worst at %s" % unit) in err and
              len(err.strip().split("\n")) == 1 and
              "VERIFICATION FAILED" in o and not os.path.exists(out),
              "axis %d, a wrong square: exit 1, the %s named, no --output"
              % (axis, unit), show(rc, o, err))


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-matrix-cli-"):
        int_known_answers()
        npy_and_maps()
        expression_known_answers()
        generated_runs()
        nanmean_known_answers()
        generated_expressions()
        refusals()
        wrong_results_are_caught(a.kernel_dir)
        wrong_i_is_caught(a.kernel_dir)
    return clrtest.finish("test_matrix_cli")


if __name__ == "__main__":
    sys.exit(main())
