#!/usr/bin/env python3
"""clreduce's indexed operations, maps and dot products from the command
line (stdlib only).

    test_transform_cli.py CLREDUCE_EXE --kernel-dir DIR

Answers written here for small files (argmax of ties, minmax, sum of
squares, a count by expression, a dot product, the index i of an
expression), JSON fields, generated runs verified, and every refusal:
bad map expressions (a token off the whitelist or a syntax error:
exit 2, one line naming it; a type error: exit 3 with the build log), --input2 without --input or of
another length, --dot with another op, maps on scans, argmin on a seed
kernel; and a kernel that picks the wrong index among ties is caught
(exit 1).

The last line is "N passed, N failed".
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json, write = T.run, T.expect_error, T.run_json, T.write


# (what, arguments, the JSON fields the answer must have): the files are
# written by known_answers, their answers worked out by hand.
KNOWN = [
    ("argmax of tied maxima: 3 at index 1 (the first)",
     ["--op=argmax", "@ties"],
     {"result": 3.0, "result_index": 1, "reference_index": 1}),
    ("minmax: -1 at 4, 3 at 1", ["--op=minmax", "@ties"],
     {"result": -1.0, "result_index": 4, "result_max": 3.0,
      "result_max_index": 1}),
    ("sum of squares of ints: 1 + 4 + 9 + 16 = 30 in long",
     ["--type=int", "--map=square", "@sq"],
     {"result": 30, "result_type": "long", "map": "square",
      "l2_norm": math.sqrt(30), "l2_norm_bound": 0}),
    ("i_amax of ints: 4 at index 3",
     ["--type=int", "--map=abs", "--op=argmax", "@sq"],
     {"result": 4, "result_index": 3}),
    ("count by expression: three above 0.5",
     ["--map=x > 0.5f", "--acc=long", "@count"],
     {"result": 3, "result_type": "long", "map": "x > 0.5f"}),
    ("the index in an expression: 0 + 1 + 2 + 3 + 4",
     ["--map=(float)i", "@count"], {"result": 10.0}),
    ("mean of 1 and 2 is 1.5, a double", ["--op=mean", "--type=int", "@ints"],
     {"result": 1.5, "result_type": "double"}),
    ("dot product of two files: 0.5 - 2 + 6 + 1",
     ["@a", "--input2=@b"], {"result": 5.5, "dot": True}),
    ("L1 distance by expression: sum |x - y| = 8.25",
     ["@a", "--input2=@b", "--map=fabs(x - y)"], {"result": 8.25}),
    ("an int scan written as long: 2 x INT32_MAX, no wrap",
     ["--kernel=kogge-stone", "--type=int", "--acc=long", "@big"],
     {"result": 2 * 2147483647, "result_type": "long"}),
    ("a half scan written as float: 1 + 2 + 0.5",
     ["--kernel=decoupled", "--type=half", "@halves"],
     {"result": 3.5, "result_type": "float"}),
]


def known_answers():
    files = {
        "ties": write("ties.f32", "f", [1.0, 3.0, 3.0, 2.0, -1.0, -1.0, 3.0]),
        "sq": write("sq.i32", "i", [1, -2, 3, -4]),
        "count": write("count.f32", "f", [0.1, 0.6, 0.7, 0.2, 0.9]),
        "ints": write("mean.i32", "i", [1, 2]),
        "a": write("a.f32", "f", [1.0, 2.0, 3.0, 4.0]),
        "b": write("b.f32", "f", [0.5, -1.0, 2.0, 0.25]),
        "big": write("big.i32", "i", [2147483647, 2147483647]),
        "halves": write("h.f16", "e", [1.0, 2.0, 0.5]),
    }

    def path(arg):  # "@name": --input=FILE; "--input2=@name": that FILE
        opt, at, name = arg.rpartition("@")
        if not at:
            return arg
        return (opt or "--input=") + files[name]

    for what, args, want in KNOWN:
        doc = run_json([path(a) for a in args] + ["--repeat=1"], what)
        if doc:
            wrong = {k: doc.get(k) for k, v in want.items() if doc.get(k) != v}
            check(not wrong and doc["verified"] is True, what,
                  "fields %s, want %s" % (wrong, want))
    rc, out, err = run(["--op=argmin", "--input=" + files["ties"],
                        "--repeat=1"])
    check(rc == 0 and "-1 at index 4" in out, "human report: value at index",
          show(rc, out, err))
    expect_error(["--op=mean", "--type=long", "--n=10"], 2,
                 ["mean", "long", "wraps"], "mean of longs")


def generated_runs():
    for args in (["--op=argmin", "--type=double"],
                 ["--op=argmax", "--type=ulong"],
                 ["--op=minmax", "--type=long"],
                 ["--map=abs", "--type=float"],
                 ["--map=square", "--type=double"],
                 ["--dot", "--type=int"],
                 ["--dot", "--type=float"],
                 ["--map=x * x - 1.0f", "--type=float"],
                 ["--op=or", "--map=x > 0.999f", "--type=float"],
                 ["--op=mean", "--type=half"], ["--op=mean", "--type=uint"],
                 ["--kernel=brent-kung", "--type=half", "--op=max"],
                 ["--kernel=decoupled", "--type=uint", "--acc=ulong"]):
        doc = run_json(args + ["--n=100003", "--repeat=2"],
                       "generated " + " ".join(args))
        if doc:
            check(doc["verified"] is True and doc["n"] == 100003,
                  "verified: " + " ".join(args), str(doc))
    doc = run_json(["--dot", "--n=1000", "--repeat=1"], "dot bandwidth")
    if doc:
        check(doc["gbps"] > 0 and clrtest.is_number(doc["gbps"]),
              "a dot product reports its bandwidth (both arrays)", str(doc))


def refusals():
    fl = write("r.f32", "f", [1.0, 2.0, 3.0])
    other = write("r2.f32", "f", [1.0, 2.0])
    # An expression of whitelisted tokens the compiler still refuses (a
    # float remainder) reaches it: exit 3 and its build log after the
    # one-line message.
    rc, out, err = run(["--map=x % 2", "--input=" + fl])
    check(rc == 3 and out == "" and err.startswith("clreduce: ") and
          "build" in err.lower() and "x % 2" in err and
          len(err.strip().split("\n")) > 1,
          "ill-typed --map: exit 3 with the build log",
          show(rc, out, err))
    expect_error(["--map=x); } __kernel void f(void) { (x",
                  "--input=" + fl], 2, ["map expression"],
                 "an expression trying to escape")
    expect_error(["--map=x; x", "--input=" + fl], 2, ["';'"],
                 "a ';' in the expression")
    expect_error(["--map=x // rest", "--input=" + fl], 2, ["'//'"],
                 "a comment in the expression")
    expect_error(["--input2=" + fl], 2, ["--input2 needs --input"],
                 "--input2 without --input")
    expect_error(["--input=" + fl, "--input2=" + other], 2,
                 ["--input2", "2 float", "3"], "--input2 of another length")
    expect_error(["--dot", "--op=max"], 2, ["--op=sum"], "--dot with max")
    expect_error(["--kernel=brent-kung", "--map=square", "--n=100"], 2,
                 ["maps apply to reductions"], "a map on a scan")
    expect_error(["--kernel=first-add", "--op=argmin", "--n=100"], 2,
                 ["argmin", "coarse"], "argmin on a seed kernel")
    # Ops scans do not take (their flags lack CLR_OPF_SCAN) are refused on
    # the command line, naming those they do take.
    for op in ("argmax", "mean"):
        expect_error(["--kernel=decoupled", "--op=" + op, "--n=100"], 2,
                     ["'%s'" % op, "scan", "sum, prod, min"],
                     "%s on a scan kernel" % op)
    expect_error(["--op=and", "--n=100"], 2, ["map expression"],
                 "and of floats without an expression")
    expect_error(["--op=argmax", "--exact", "--kernel=interleaved",
                  "--n=100"], 2, ["argmax"], "argmax on interleaved")


def expression_whitelist():
    """Every token of a map expression comes from the whitelist: the
    digraphs, keywords and unknown names are refused before any build, in
    one line naming the token and its column (exit 2)."""
    fl = write("w.f32", "f", [1.0, 2.0, 3.0])
    for expr, words, what in [
            ("(<% while (i < 2) <% %> %>), x", ["'<%' (a digraph)",
                                                "column 2"],
             "the digraph loop"),
            ("x %: 1", ["'%:' (a digraph)"], "the digraph of '#'"),
            ("x + while", ["'while' (a keyword)", "column 5"], "a keyword"),
            ("undefined_thing(x)", ["unknown name 'undefined_thing'",
                                    "column 1"], "an unknown name"),
            ("x +", ["ends where a value is expected"], "a syntax error"),
            ("x +\n1", ["a newline at column 4"], "a newline"),
            ("x + \u00e9", ["non-ASCII byte 0xc3 at column 5"],
             "a non-ASCII byte"),
            ("sqrt(x, x)", ["'sqrt'", "2 arguments; it takes 1"],
             "a built-in with two arguments"),
            ("1.5h", ["half literal"], "a half literal")]:
        rc, out, err = run(["--map=" + expr, "--input=" + fl])
        check(rc == 2 and out == "" and len(err.strip().split("\n")) == 1
              and all(w in err for w in words),
              "--map='%s' refused: %s" % (expr.replace("\n", "\\n"), what),
              show(rc, out, err))
    # The limit counts the expression as given: 4095 characters pass.
    long_expr = "+".join(["x"] * 2048)  # 4095 characters
    rc, out, err = run(["--map=" + long_expr, "--input=" + fl])
    check(rc == 0 and "verified: yes" in out,
          "a valid expression of 4095 characters is accepted",
          show(rc, out[-300:], err[-300:]))
    expect_error(["--map=" + long_expr + "+x", "--input=" + fl], 2,
                 ["4097 characters", "at most 4096"],
                 "an expression of 4097 characters")


def cpu_reference():
    """A map expression's reference is computed on the CPU from the input
    (src/check/expr_eval.c), not by the device: known answers, an
    allowance for the device's functions, and what has no value."""
    fl = write("c.f32", "f", [0.5, 0.25, -2.0, 1.0])
    for args, want, what in [
            (["--map=x * 1000.0f"], -250.0, "a float product"),
            (["--map=(i % 2 == 0) ? x : 0.0f"], -1.5, "the even elements"),
            (["--map=x > 0.3f", "--acc=long"], 2, "a count in long"),
            (["--map=(int)(x * 4.0f)", "--acc=int"], 2 + 1 - 8 + 4,
             "an int of a float"),
            (["--map=1.0 / 3", "--acc=double"], 4.0 / 3.0, "a double")]:
        doc = run_json(["--input=" + fl] + args, what)
        if doc is not None:
            got = doc.get("result")
            check(doc.get("verified") is True and got is not None and
                  abs(got - want) <= 1e-12 * abs(want),
                  "CPU reference of %s: %s" % (what, want), str(doc)[:300])
    # Functions the device computes within OpenCL's ulps: verified with
    # the allowance, over generated data of every shape.
    for args in (["--map=sin(x) * 100.0f", "--n=100000"],
                 ["--map=x * x - 0.25f", "--n=100000"],
                 ["--op=argmax", "--map=sin(x * 10.0f)", "--n=100000"],
                 ["--op=minmax", "--map=exp(x)", "--n=30000"],
                 ["--op=mean", "--map=sqrt(x)", "--type=double",
                  "--n=30000"],
                 ["--op=max", "--type=int", "--map=abs(x - 17)",
                  "--n=30000"],
                 ["--dot", "--map=pow(fabs(x - y), 1.5f)", "--n=30000"],
                 ["--op=and", "--map=isfinite(x)", "--n=30000"]):
        rc, out, err = run(args)
        check(rc == 0 and "verified: yes" in out,
              "clreduce %s: verified on the CPU" % " ".join(args),
              show(rc, out[-400:], err))
    # A value OpenCL C leaves undefined has no reference (exit 2); it
    # runs unverified.
    expect_error(["--type=int", "--map=x / (x - x)", "--n=100"], 2,
                 ["no CPU reference", "integer division by zero",
                  "index 0"], "an integer division by zero")
    rc, out, err = run(["--type=int", "--map=x / (x - x)", "--n=100",
                        "--no-verify"])
    check(rc == 0, "an undefined value runs with --no-verify",
          show(rc, out, err))
    # Half is a storage type: no accumulator, with or without a map.
    expect_error(["--map=x", "--acc=half", "--n=100"], 2,
                 ["half", "accumulator"], "--map=x --acc=half")


def wrong_index_is_caught(kernel_dir):
    """A kernel that keeps the last index among ties gives the right value
    at the wrong place: verification must fail (exit 1)."""
    broken = clrtest.broken_kernels(
        kernel_dir, T.path("broken-cl"), "records.cl",
        "return ia < ib;", "return ia > ib;", "the tie-break")
    ties = write("t.i32", "i", [5, 9, 9, 1, 9])
    rc, out, err = run(["--op=argmax", "--type=int", "--input=" + ties,
                        "--repeat=1"],
                       env={"CLREDUCE_KERNEL_DIR": broken,
                            "CLREDUCE_CACHE_DIR": T.path("c")})
    check(rc == 1 and "verification failed" in err and "index" in err,
          "argmax at the last tie instead of the first: exit 1",
          show(rc, out, err))


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-transform-cli-"):
        known_answers()
        generated_runs()
        refusals()
        expression_whitelist()
        cpu_reference()
        wrong_index_is_caught(a.kernel_dir)
    return clrtest.finish("test_transform_cli")


if __name__ == "__main__":
    sys.exit(main())
