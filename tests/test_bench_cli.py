#!/usr/bin/env python3
"""Tests of clreduce-bench's command line (stdlib only).

    test_bench_cli.py BENCH_EXE --kernel-dir DIR [--version X]
                      [--clreduce CLREDUCE_EXE]

Covers what it shares with clreduce: -h/--help and -V/--version (the
version and the git commit), one-line errors that name the option and the
value (exit 2), --kernel= (and the deprecated --kernels=), values it cannot
honour refused (--per-decade=0, a kernel that cannot compute the op,
options of the sweep with --host or --matrix, bad --shapes); and its
results: --json on stdout and --json=FILE with "version" and "commit", the
CSV's columns, '% stream' flags that agree with the numbers, the plot's y
scale and colours, the progress line only with --progress (stderr is no
terminal here), the library's log only with -v, --matrix's table and JSON
(a verified row a shape and axis of small --shapes); --ddof for var and
std, in the JSON and verified with the CPU's reference of the same
divisor (flat arrays, segments and matrices; a divisor of 1 and n <=
ddof's NaN, which a reference of ddof 0 would reject), and its refusals.
With --clreduce:
clreduce's --version and every JSON object of it (a run, --list-kernels,
--list-devices) name the same version and commit (none, null in the JSON,
for a build from no git checkout).  Every run is small (n <= 1e4, a few
repeats).

Every case prints one line; the last line is "N passed, N failed".
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error = T.run, T.expect_error

# A sweep that takes well under a second on PoCL.
SMALL = ["--min-n=1e3", "--max-n=1e4", "--repeat=2"]
VERSION_LINE = re.compile(r"^clreduce-bench (\S+) \(commit ([^()]+)\)$")


def test_help_version(version):
    for flag in ["-h", "--help"]:
        rc, out, err = run([flag])
        check(rc == 0 and err == "" and
              out.startswith("Usage: clreduce-bench [OPTION]...") and
              all(s in out for s in ["--kernel=LIST", "-V, --version",
                                     "--per-decade=K", "--y-scale=S",
                                     "--progress", "% stream",
                                     "-v, --verbose",
                                     "Exit status:"]),
              "%s: usage on stdout, exit 0" % flag, show(rc, out, err))
    commits = set()
    for flag in ["-V", "--version"]:
        rc, out, err = run([flag])
        m = VERSION_LINE.match(out.strip())
        check(rc == 0 and err == "" and m is not None and
              m.group(1) == version,
              "%s prints 'clreduce-bench %s (commit C)'" % (flag, version),
              show(rc, out, err))
        if m:  # None: built from no git checkout (JSON's "commit": null)
            commits.add(None if m.group(2).startswith("unknown")
                        else m.group(2))
    # Built from this git checkout (a '+': with uncommitted changes).
    if os.path.isdir(os.path.join(os.path.dirname(__file__), "..", ".git")):
        check(len(commits) == 1 and
              all(c is not None and
                  re.match(r"^[0-9a-f]{7,40}\+?$|^\S*-g[0-9a-f]{7,40}\+?$", c)
                  for c in commits),
              "--version names the git commit", repr(commits))
    return commits.pop() if len(commits) == 1 else None


def test_errors():
    cases = [
        (["--per-decade=0"], ["--per-decade", "'0'", "must be 1"],
         "--per-decade=0 refused"),
        (["--per-decade=4"], ["--per-decade", "'4'"],
         "--per-decade=4 refused, not changed"),
        (["--per-decade=2x"], ["--per-decade", "'2x'"], "--per-decade=2x"),
        (["--repeat=0"], ["--repeat", "'0'", "positive"], "--repeat=0"),
        (["--min-n=abc"], ["--min-n", "'abc'", "not a number"],
         "--min-n=abc"),
        (["--max-n=-5"], ["--max-n", "'-5'", "negative"], "--max-n=-5"),
        (["--min-n=1e5", "--max-n=1e3"], ["--min-n", "--max-n", "above"],
         "--min-n above --max-n"),
        (["--min-n=1500", "--max-n=1600"], ["no size", "1500", "1600"],
         "no size of the sweep in [min-n, max-n]"),
        (["--kernel=nosuch"], ["unknown kernel", "'nosuch'", "--kernel",
                               "coarse"], "--kernel=nosuch"),
        (["--kernels=coarse,nosuch"], ["unknown kernel", "'nosuch'",
                                       "--kernels"],
         "--kernels=coarse,nosuch"),
        (["--type=nosuch"], ["unknown type", "'nosuch'", "float"],
         "--type=nosuch"),
        (["--op=nosuch"], ["unknown op", "'nosuch'", "sum"], "--op=nosuch"),
        (["--op=argmax", "--kernel=sequential"],
         ["kernel 'sequential'", "argmax", "coarse"],
         "a kernel that cannot compute the op is refused, not dropped"),
        (["--map=abs", "--kernel=decoupled"], ["'decoupled'", "--map"],
         "a kernel that takes no map is refused"),
        (["--exact", "--type=int"], ["--exact", "int"], "--exact of int"),
        (["--svg=x.svg", "--y-scale=cubic"], ["--y-scale", "'cubic'",
                                               "log"], "--y-scale=cubic"),
        (["--y-scale=log"], ["--y-scale", "--svg"], "--y-scale without --svg"),
        (["--single-launch=2"], ["--single-launch", "'2'", "0 or 1"],
         "--single-launch=2"),
        (["--stage-threads=x"], ["--stage-threads", "'x'"],
         "--stage-threads=x"),
        (["--host", "--json"], ["--json", "--host"],
         "--json with --host refused (its table is its result)"),
        (["--host", "--kernel=coarse"], ["--kernel", "--host"],
         "--kernel with --host refused"),
        (["--latency", "--max-n=1e5"], ["--max-n", "--latency"],
         "sizes with --latency refused"),
        (["--host", "--group=all"], ["--group", "--host"],
         "two modes refused"),
        (["--autotune", "--repeat=3"], ["--repeat", "--autotune"],
         "--repeat with --autotune refused"),
        (["--bogus"], ["unknown", "'--bogus'"], "unknown option"),
        (["-x"], ["unknown option", "'-x'"], "unknown short option"),
        (["--csv"], ["'--csv' needs a value"], "--csv without a value"),
        (["--help=1"], ["'--help' takes no value"], "--help=1"),
        (["--json", "out.json"], ["unexpected argument", "'out.json'",
                                  "--json=FILE"],
         "--json FILE: the file is no argument of --json"),
        (["--json="], ["--json", "non-empty"], "--json= (empty)"),
        (["--matrix", "--shapes=3x"], ["--shapes", "'3x'", "columns"],
         "--shapes=3x (no columns) refused"),
        (["--matrix", "--shapes=3x4,5"], ["--shapes", "'5'", "RxC"],
         "--shapes with a shape that is no RxC"),
        (["--matrix", "--shapes=3x4:2"], ["--shapes", "'3x4:2'", "axis"],
         "--shapes=3x4:2 (no such axis)"),
        (["--shapes=3x4"], ["--shapes", "--matrix"],
         "--shapes without --matrix"),
        (["--matrix", "--kernel=coarse"], ["--kernel", "--matrix"],
         "--kernel with --matrix refused"),
        (["--matrix", "--max-n=1e5"], ["--max-n", "--matrix"],
         "sizes with --matrix refused (its shapes give them)"),
        (["--matrix", "--map=x * 2"], ["--matrix", "--map", "'x * 2'"],
         "--matrix with an expression map (no CPU check) refused"),
    ]
    for args, needles, what in cases:
        rc, out, err = expect_error(args, 2, needles, what)
        if rc == 2 and "(try 'clreduce-bench --help')" not in err and \
                "valid:" not in err:
            check(False, what + ": the line points to --help", err)


def test_json(commit):
    # --json alone: one JSON object on stdout, no table.
    rc, out, err = run(SMALL + ["--kernel=coarse", "--json"])
    try:
        doc = json.loads(out)
    except ValueError as ex:
        check(False, "--json: stdout is one JSON object",
              "%s; %s" % (ex, show(rc, out, err)))
        return
    check(rc == 0, "--kernel=coarse --json: exit 0", show(rc, out, err))
    check(doc.get("version") == VERSION and "commit" in doc and
          (commit is None or doc.get("commit") == commit),
          "--json has \"version\" and \"commit\" (those of --version)",
          "%r %r" % (doc.get("version"), doc.get("commit")))
    rows = doc.get("rows", [])
    check([r["kernel"] for r in rows] == ["coarse", "coarse"] and
          [r["n"] for r in rows] == [1000, 10000],
          "--kernel=coarse: the coarse kernel alone, at 1e3 and 1e4",
          repr([(r.get("kernel"), r.get("n")) for r in rows]))
    check(all(r["verified"] is True for r in rows), "--json: rows verified")
    # '% stream': the ratio, and flagged where it cannot be trusted.
    ok = all(abs(r["pct_stream"] - 100.0 * r["gbps"] / r["stream_gbps"]) <
             0.2 + 0.002 * r["pct_stream"] and
             (r["pct_stream"] <= 100 or r["stream_reliable"] is False)
             for r in rows if r["stream_gbps"] > 0)
    check(ok, "--json: pct_stream is gbps / stream_gbps, never above 100 "
          "unflagged", repr(rows))
    check(err == "", "nothing on stderr: no progress line (stderr is no "
          "terminal), no library log (no -v)", err[-300:])
    rc, out, err = run(SMALL + ["--kernel=coarse", "-v"])
    check(rc == 0 and all(l.startswith("clreduce-bench: ")
                          for l in err.splitlines()),
          "-v: the library's log lines on stderr, each 'clreduce-bench: '",
          show(rc, out, err))

    # --json=FILE and --csv=FILE (the deprecated --kernels= spelling); the
    # table on stdout; --progress on stderr, never in the files.
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as d:
        js, csv, svg = (os.path.join(d, f) for f in
                        ("r.json", "r.csv", "r.svg"))
        rc, out, err = run(SMALL + ["--kernels=coarse,sequential",
                                    "--json=" + js, "--csv=" + csv,
                                    "--svg=" + svg, "--progress"])
        check(rc == 0 and "% stream" in out and "(stream read)" in out,
              "--kernels= (deprecated) --json=FILE --csv=FILE --svg=FILE: "
              "exit 0, the table on stdout", show(rc, out, err))
        check(re.search(r"\[1/6\] .*elapsed", err) is not None and
              "[6/6] done" in err,
              "--progress: [row/rows] ... elapsed on stderr", err[-400:])
        try:
            with open(js) as f:
                fdoc = json.load(f)
            with open(csv) as f:
                lines = f.read().splitlines()
            with open(svg) as f:
                plot = f.read()
        except (OSError, ValueError) as ex:
            check(False, "the result files are written", str(ex))
            return
        check(fdoc.get("version") == VERSION and "commit" in fdoc and
              sorted({r["kernel"] for r in fdoc["rows"]}) ==
              ["coarse", "sequential"],
              "--json=FILE: version, commit, the two kernels",
              repr({k: fdoc.get(k) for k in ("version", "commit")}))
        head = lines[0].split(",")
        check(head[:2] == ["kernel", "n"] and "pct_stream" in head and
              "stream_reliable" in head and len(lines) == 5 and
              "elapsed" not in "".join(lines),
              "--csv=FILE: header with pct_stream and stream_reliable, "
              "4 rows", repr(lines[:2]))
        # A colour a series (two kernels and the stream read).
        colours = re.findall(r'<polyline fill="none" stroke="(#[0-9a-f]+)"',
                             plot)
        check(len(colours) == 3 and len(set(colours)) == 3,
              "--svg: a colour of its own for every series", repr(colours))
        for scale, want in (("log", True), ("linear", False)):
            rc, out, err = run(["--min-n=1e3", "--max-n=1e3", "--repeat=1",
                                "--kernel=coarse", "--svg=" + svg,
                                "--y-scale=" + scale])
            with open(svg) as f:
                plot = f.read()
            check(rc == 0 and ("log scale" in plot) == want,
                  "--y-scale=%s: the plot's y axis is %s" % (scale, scale),
                  show(rc, out, err))


def test_matrix():
    # Small shapes, each of both axes or of the one named; every row
    # verified (no timing checked).
    shapes = "3x5,6x4:0,1x7:1,9x1:0"
    want = [("matrix-rows", 3, 5), ("matrix-cols", 3, 5),
            ("matrix-cols", 6, 4), ("matrix-rows", 1, 7),
            ("matrix-cols", 9, 1)]
    rc, out, err = run(["--matrix", "--shapes=" + shapes, "--repeat=2"])
    check(rc == 0 and "(stream read)" in out and "% stream" in out,
          "--matrix --shapes=%s: exit 0, the table" % shapes,
          show(rc, out, err))
    got = re.findall(r"^(matrix-\S+) +(\d+)x(\d+) +(\d+) .* (\S+)$", out,
                     re.M)
    check([(k, int(r), int(c)) for k, r, c, _, _ in got] == want and
          all(int(n) == int(r) * int(c) and ok == "yes"
              for _, r, c, n, ok in got),
          "--matrix: a row a shape and axis, n = rows x cols, each verified",
          repr(got))
    doc = T.run_json(["--matrix", "--shapes=" + shapes, "--repeat=1",
                      "--op=argmax", "--type=int"],
                     "--matrix --op=argmax --type=int --json")
    if doc is not None:
        rows = doc.get("rows", [])
        check([(r["kernel"], r["rows"], r["cols"], r["axis"]) for r in rows]
              == [(k, r, c, int(k == "matrix-rows")) for k, r, c in want] and
              all(r["verified"] is True and r["n"] == r["rows"] * r["cols"]
                  for r in rows),
              "--matrix --json: kernel, rows, cols, axis a row, verified",
              repr(rows))


def test_ddof():
    # The reference's divisor is --ddof's: with --ddof=999 of n = 1000 the
    # variance is M2 / 1, a thousand times ddof 0's, and --ddof=1000 gives
    # NaN, so a reference of ddof 0 would fail these rows.
    for op, ddof, args, kernels in [
            ("var", 1, ["--n=1e3"], None),
            ("var", 999, ["--n=1e3"], None),
            ("std", 1000, ["--n=1e3", "--type=double"], None),
            ("var", 1, ["--segments", "--n=1e4"],
             ["seg-random", "seg-3-long", "seg-rows-1000"]),
            ("std", 999, ["--matrix", "--shapes=1000x30"],
             ["matrix-rows", "matrix-cols"])]:
        what = "--op=%s --ddof=%d %s" % (op, ddof, " ".join(args))
        doc = T.run_json(["--op=" + op, "--ddof=%d" % ddof, "--repeat=1"] +
                         args, what)
        if doc is None:
            continue
        rows = doc.get("rows", [])
        check(doc.get("ddof") == ddof and rows and
              all(r["verified"] is True for r in rows) and
              (kernels is None or [r["kernel"] for r in rows] == kernels),
              what + ": \"ddof\" %d in the JSON, every row verified" % ddof,
              repr(doc))
    doc = T.run_json(["--op=sum", "--n=1e3", "--repeat=1"], "--op=sum")
    check(doc is not None and doc.get("ddof", 0) is None,
          "--op=sum: \"ddof\" null in the JSON (no divisor)", repr(doc))
    rc, out, err = run(["--matrix", "--shapes=1000x30:0", "--op=var",
                        "--ddof=1", "--repeat=1"])
    check(rc == 0 and "var (ddof 1) of float" in out and
          re.search(r"^matrix-cols .* yes$", out, re.M),
          "--matrix --op=var --ddof=1: the table names the ddof, verified",
          show(rc, out, err))
    rc, out, err = run(["--help"])
    check(rc == 0 and "--ddof=N" in out, "--help lists --ddof=N",
          show(rc, out, err))
    for args, needles, what in [
            (["--op=var", "--ddof=-1"], ["--ddof", "'-1'", "negative"],
             "--ddof=-1"),
            (["--op=std", "--ddof=x"], ["--ddof", "'x'"], "--ddof=x"),
            (["--op=std", "--ddof=1.5"], ["--ddof", "'1.5'"], "--ddof=1.5"),
            (["--op=sum", "--ddof=1"], ["--ddof", "var", "std", "'sum'"],
             "--ddof with --op=sum"),
            (["--ddof=1"], ["--ddof", "var", "'sum'"],
             "--ddof with the default op"),
            (["--host", "--ddof=1"], ["--ddof", "--host"],
             "--ddof with --host")]:
        expect_error(args, 2, needles, what + " refused")


def test_clreduce(clreduce, commit):
    rc, out, err = run(["--version"], exe=clreduce)
    check(rc == 0 and out.strip() == "clreduce %s (commit %s)" %
          (VERSION, commit or "unknown: not built from a git checkout"),
          "clreduce --version: the version and commit of clreduce-bench's",
          show(rc, out, err))
    for args in (["--n=1000", "--repeat=1"], ["--list-kernels"],
                 ["--list-devices"]):
        rc, out, err = run(args + ["--json"], exe=clreduce)
        try:
            doc = json.loads(out)
        except ValueError:
            doc = {}
        check(rc == 0 and doc.get("version") == VERSION and
              "commit" in doc and doc["commit"] == commit,
              "clreduce %s --json: \"version\" and \"commit\"" %
              " ".join(args), show(rc, out, err))


def main():
    global VERSION
    a = clrtest.arguments(("--version", {"default": "1.1.0"}),
                          ("--clreduce", {"default": None}))
    VERSION = a.version
    os.environ.setdefault("CLREDUCE_KERNEL_DIR", a.kernel_dir)
    with T.open(os.path.abspath(a.exe), "clreduce-bench-cli-"):
        print("== help, version")
        commit = test_help_version(a.version)
        print("== errors")
        test_errors()
        print("== json, csv, svg, progress")
        test_json(commit)
        print("== matrix")
        test_matrix()
        print("== ddof")
        test_ddof()
        if a.clreduce:
            print("== clreduce's version and JSON")
            test_clreduce(os.path.abspath(a.clreduce), commit)
    return clrtest.finish("test_bench_cli")


VERSION = None

if __name__ == "__main__":
    sys.exit(main())
