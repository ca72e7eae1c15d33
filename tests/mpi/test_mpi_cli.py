#!/usr/bin/env python3
"""clreduce-mpi under mpirun (stdlib only).

    test_mpi_cli.py MPIRUN CLREDUCE_MPI_EXE CLREDUCE_EXE

For 1, 2, 3 and 4 ranks, split evenly and unevenly (rank 0 with no
element): reductions and scans verified against the CPU reference of the
whole array; an exact float and double sum the same bits for every number
of ranks and equal to clreduce's exact sum of the same array on one device
(--input: each rank reads its slice of one file); the generated array the
same whatever the ranks (an integer sum equal for every count); argmin,
argmax and minmax with the whole array's indices, as clreduce gives them;
a .npy --input (a 1-D float sum over 1, 2 and 4 ranks, a 2-D int argmax
over 4, split unevenly): its dtype the type, its shape n, clreduce's
result on the same file; map expressions (of x, and of i: the global
index) and a built-in map verified over 1 to 3 ranks against clreduce's
result on the same array; bad command lines (a .npy dtype that differs
from --type, a Fortran-ordered .npy file, an expression with no value in
OpenCL C, a --platform that selects nothing) exit 2 with one line, on
every rank; a bad option value's line names clreduce-mpi's --help, not
clreduce's; an --input clreduce refuses (missing, a directory, empty, of
part of a value, holding more or fewer values than --n) is refused with
clreduce's line.

Jobs whose ranks disagree (mpirun's MPMD form, a command line a rank):
a bad option on any one rank, options that differ, a file that differs,
a device that fails on one rank: every rank ends, within HANG seconds,
with the same non-zero status (each rank runs under sh, which writes its
status to a file) and one line names the rank and the cause.  A rank
killed, or exiting without MPI_Finalize, at each stage (main.c's test
hook CLR_MPI_TEST_DIE): mpirun ends the job within HANG seconds, non-zero,
naming the rank; no rank exits 0 and no process is left behind.

The last line is "N passed, N failed".
"""
import json
import math
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

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


def moments(tmp):
    """var and std with --ddof over ranks: the parts' records merged, the
    divisor n - ddof, checked against the values worked by hand."""
    path = clrtest.write_values(tmp, "m.float", "f", [1.0, 2.0, 3.0, 4.0])
    for op, ddof, want, runs in (("var", 1, 5.0 / 3.0,
                                  [(2, "uneven"), (4, "uneven")]),
                                 ("std", 1, math.sqrt(5.0 / 3.0),
                                  [(3, "even")])):
        for np, split in runs:
            doc = mpi_json(np, ["--op=" + op, "--ddof=%d" % ddof,
                                "--type=float", "--input=" + path,
                                "--split=" + split, "--repeat=1"],
                           "%s ddof %d over %d ranks, %s" % (op, ddof, np,
                                                             split))
            if doc:
                check(abs(float(doc["result"]) - want) <= 1e-6 * want,
                      "%s ddof %d over %d ranks, %s: %g" % (op, ddof, np,
                                                            split, want),
                      doc["result"])
    # one element, ddof 1: NaN, as NumPy (the reference agrees)
    doc = mpi_json(2, ["--op=std", "--ddof=1", "--n=1", "--repeat=1"],
                   "std ddof 1 of one element over 2 ranks")
    if doc:
        check(math.isnan(float(doc["result"])),
              "std ddof 1 of one element: NaN", doc["result"])


def scans():
    for args in (["--kernel=decoupled", "--type=int"],
                 ["--kernel=kogge-stone", "--type=float", "--exclusive"],
                 ["--kernel=brent-kung", "--type=double", "--op=max"]):
        for np in (2, 4):
            mpi_json(np, args + ["--n=100003", "--split=uneven",
                                 "--repeat=1"],
                     "%s over %d ranks" % (" ".join(args), np))


def write_npy(tmp, name, descr, shape, fmt, values, **kw):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(clrtest.npy_bytes(descr, shape, struct.pack(
            "<%d%s" % (len(values), fmt), *values), **kw))
    return path


def npy_input(tmp):
    """A .npy --input: its dtype the type, its shape n, each rank reading
    its slice after the header; the result clreduce's on the same file.
    A --type that differs from the dtype, and a Fortran-ordered array:
    every rank exits 2, one line (clreduce's message)."""
    import random
    rnd = random.Random(11)
    f4 = write_npy(tmp, "x.npy", "<f4", (30011,), "f",
                   [rnd.uniform(-1, 1) for _ in range(30011)])
    ints = [rnd.randint(-10**6, 10**6) for _ in range(61 * 83)]
    i4 = write_npy(tmp, "rows.npy", "<i4", (61, 83), "i", ints, version=2)
    fo = write_npy(tmp, "fortran.npy", "<i4", (61, 83), "i", ints,
                   fortran=True)
    for path, extra, typ, n, ranks in (
            (f4, [], "float", 30011, (1, 2, 4)),
            (i4, ["--op=argmax"], "int", 61 * 83, (4,))):
        args = ["--input=" + path, "--repeat=1"] + extra
        rc, out, err = clrtest.run([CLREDUCE] + args + ["--json"],
                                   timeout=120)
        one = json.loads(out) if rc == 0 else None
        what = "%s %s" % (os.path.basename(path), " ".join(extra))
        if not check(one is not None and one.get("verified") is True,
                     "clreduce " + what, show(rc, out, err)):
            continue
        for np in ranks:  # 4: uneven, rank 0 none, every slice after 0
            split = ["--split=uneven"] if np == 4 else []
            doc = mpi_json(np, args + split, "%s over %d ranks" % (what, np))
            if not doc:
                continue
            if typ == "int":  # the value and its index exactly
                same = (float(doc["result"]) == float(one["result"]) and
                        doc["result_index"] == one["result_index"])
            else:  # the same array: the same reference, results in bound
                same = (float(doc["reference"]) == float(one["reference"]) and
                        abs(float(doc["result"]) - float(one["result"])) <=
                        doc["bound"] + one["bound"])
            check(doc["type"] == typ and doc["n"] == n and same,
                  "%s over %d ranks: the dtype's type, the shape's n, "
                  "clreduce's result" % (what, np), "%s vs %s" % (doc, one))
    for args in (["--input=" + f4, "--type=int"], ["--input=" + fo]):
        args = args + ["--repeat=1"]
        rc1, out1, err1 = clrtest.run([CLREDUCE] + args, timeout=120)
        want = err1.strip().split(": ", 1)[-1]
        check(rc1 == 2 and ("not the int of --type" in want or
                            "Fortran-ordered" in want),
              "clreduce %s: refused" % " ".join(args), show(rc1, out1, err1))
        expect_job([args] * 3, 2, ["clreduce-mpi: " + want],
                   "%s over 3 ranks: clreduce's message" % " ".join(args))


def refusals():
    for args, needle in [(["--n=12abc"], "--n"),
                         (["--n=100", "--save-input=/dev/null"],
                          "--save-input is not supported"),
                         (["--dot", "--n=100"], "--dot"),
                         (["--ranges=x", "--n=100"], "--ranges is not "
                                                     "supported"),
                         (["--list-devices"], "--list-devices"),
                         (["--cache-clear"], "--cache-clear is not "
                                             "supported"),
                         # an element with no value in OpenCL C
                         (["--type=int", "--map=1/(x-x)", "--n=100"],
                          "no CPU reference"),
                         (["--split=odd"], "--split"),
                         # a usage error, as for clreduce (not 3)
                         (["--platform=no-such-platform", "--n=100"],
                          "no OpenCL platform matches 'no-such-platform'"),
                         (["--op=and", "--type=float"], "and")]:
        rc, out, err = mpi(3, args)
        lines = [l for l in err.splitlines() if l.startswith("clreduce-mpi:")]
        check(rc == 2 and len(lines) == 1 and needle in lines[0],
              "%s: exit 2, one line from rank 0" % " ".join(args),
              show(rc, out, err))


def help_hint():
    """A bad option value, refused by the parser clreduce-mpi shares with
    clreduce: its line ends with the hint naming clreduce-mpi's --help
    (clreduce's the same line, naming clreduce's)."""
    args = ["--vec=3", "--n=100"]
    rc1, out1, err1 = clrtest.run([CLREDUCE] + args, timeout=120)
    check(rc1 == 2 and err1.strip() == "clreduce: bad --vec '3': must be 1, "
          "2, 4, 8 or 16 (try 'clreduce --help')",
          "clreduce %s: its own --help named" % " ".join(args),
          show(rc1, out1, err1))
    rc, out, err = mpi(1, args)
    lines = lines_of(err)
    check(rc == 2 and len(lines) == 1 and
          lines[0] == "clreduce-mpi: bad --vec '3': must be 1, 2, 4, 8 or 16 "
          "(try 'clreduce-mpi --help')" and "clreduce --help" not in err,
          "%s at 1 rank: exit 2, one line naming 'clreduce-mpi --help'" %
          " ".join(args), show(rc, out, err))


# A job still running after this many seconds is hung (each takes a few).
HANG = 90
TMP = None


def session_processes(sid):
    """The live processes of session sid (mpirun's, started in its own)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(d))
    return found


def job(rank_args, env=None, keep=True):
    """One job of len(rank_args) ranks, rank k given rank_args[k], each
    rank under sh, which writes the rank's exit status to a file.  keep: sh
    exits 0, so mpirun waits for every rank and keeps every status; else sh
    exits with the rank's status, as the rank would (mpirun then ends the
    job at the first non-zero status or signal; a rank it kills writes
    nothing).
    Returns mpirun's status (None: killed after HANG seconds), stdout,
    stderr, each rank's status (None where none was written) and the
    processes of the job still alive after it."""
    d = tempfile.mkdtemp(dir=TMP)
    wrap = '"$0" "$@"; s=$?; echo $s > %s/rc.$OMPI_COMM_WORLD_RANK; ' % (
        shlex.quote(d))
    # keep: exit 0; else the rank's way: its status, or its signal
    wrap += ("exit 0" if keep else
             'if [ $s -gt 128 ]; then kill -$((s - 128)) $$; fi; exit $s')
    cmd = [MPIRUN, "--oversubscribe"]
    for k, args in enumerate(rank_args):
        cmd += ([":"] if k else []) + ["-np", "1", "sh", "-c", wrap, EXE] + args
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=HANG)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        for pid in session_processes(p.pid):
            os.kill(pid, signal.SIGKILL)
        out, err = p.communicate()
        rc = None
    left = session_processes(p.pid)
    for _ in range(50):  # ranks mpirun killed, still on their way out
        if not left:
            break
        time.sleep(0.1)
        left = session_processes(p.pid)
    statuses = []
    for k in range(len(rank_args)):
        try:
            with open(os.path.join(d, "rc.%d" % k)) as f:
                statuses.append(int(f.read()))
        except (OSError, ValueError):
            statuses.append(None)
    shutil.rmtree(d, ignore_errors=True)
    return (rc, out.decode("utf-8", "replace"),
            err.decode("utf-8", "replace"), statuses, left)


def lines_of(err):
    return [l for l in err.splitlines() if l.startswith("clreduce-mpi:")]


def expect_job(rank_args, code, needles, what):
    """Every rank exits code (the same for all), one line with needles."""
    rc, out, err, st, left = job(rank_args)
    lines = lines_of(err)
    return check(rc is not None and st == [code] * len(rank_args) and
                 len(lines) == 1 and all(n in lines[0] for n in needles),
                 what + ": every rank exits %d, one line" % code,
                 "ranks %s; mpirun %s; %s" % (st, rc, show(rc or 0, out, err)))


BASE = ["--type=int", "--n=3000", "--repeat=1"]
BASE_F = ["--type=float", "--n=3000", "--repeat=1"]


def disagreements(tmp):
    """Ranks that disagree all stop, before any data moves."""
    for k in range(3):
        for bad, needle in ((["--bogus"], "unknown or ambiguous option "
                                          "'--bogus'"),
                            (["--n=12abc"], "bad --n '12abc'")):
            # the bad option first, last, or on its own
            args = [BASE + (bad if i == k else []) for i in range(3)]
            if k == 1:
                args[1] = bad + BASE
            expect_job(args, 2, ["rank %d: " % k, needle],
                       "%s on rank %d of 3" % (bad[0], k))
    for base, extra, name in ((BASE, ["--kernel=sequential"], "--kernel"),
                              (BASE, ["--repeat=2"], "--repeat"),
                              (BASE_F, ["--exact"], "--exact"),
                              (BASE, ["--n=3003", "--no-verify"],
                               "--n, --no-verify"),
                              (BASE, ["--op=max"], "--op"),
                              (BASE_F + ["--op=var"], ["--ddof=1"],
                               "--ddof"),
                              (BASE, ["--seed=7"], "--seed"),
                              (BASE, ["--split=uneven"], "--split")):
        expect_job([base, base, base + extra], 2,
                   ["rank 2 was given other options than rank 0: " + name +
                    " ("], "rank 2 with %s" % " ".join(extra))
    # A wrong sum, once: n differing, unverified.
    expect_job([BASE + ["--no-verify"], BASE + ["--n=3003", "--no-verify"]],
               2, ["rank 1 was given other options than rank 0: --n ("],
               "--n differing, --no-verify")
    # Inputs: one file at two paths runs; another file of the same size, or
    # of another size, stops the job.
    vals = list(range(-1500, 1500))
    a = clrtest.write_values(tmp, "a.int", "i", vals)
    a2 = clrtest.write_values(tmp, "a2.int", "i", vals)
    b = clrtest.write_values(tmp, "b.int", "i", vals[::-1][:-3] + [7, 8, 9])
    c = clrtest.write_values(tmp, "c.int", "i", vals + [1])
    rc, out, err, st, left = job([["--type=int", "--input=" + a, "--json"],
                                  ["--type=int", "--input=" + a2, "--json"]])
    check(st == [0, 0] and '"verified":true' in out and
          '"result":"-1500"' in out,
          "one file at two paths: the sum, verified", "ranks %s; %s" %
          (st, show(rc or 0, out, err)))
    for other in (b, c):
        expect_job([["--type=int", "--input=" + a, "--no-verify"],
                    ["--type=int", "--input=" + a, "--no-verify"],
                    ["--type=int", "--input=" + other, "--no-verify"]], 2,
                   ["rank 2 was given other options than rank 0: --input"],
                   "rank 2 reading %s" % os.path.basename(other))
    # --device: each rank's own; a device that fails on one rank ends all.
    rc, out, err, st, left = job([BASE + ["--json"],
                                  BASE + ["--json", "--device=0"]])
    check(st == [0, 0] and '"verified":true' in out,
          "--device=0 on rank 1 only: runs, verified",
          "ranks %s; %s" % (st, show(rc or 0, out, err)))
    expect_job([BASE, BASE + ["--device=99"], BASE], 2,
               ["rank 1: ", "creating the context"],
               "--device=99 on rank 1 of 3")


def lost_ranks():
    """A rank that dies: mpirun ends the job, naming it; none exits 0."""
    for die in ("1:options", "1:setup", "1:calls", "1:calls:exit",
                "0:verify", "2:verify:exit"):
        rank = int(die.split(":")[0])
        rc, out, err, st, left = job([BASE] * 3,
                                     env={"CLR_MPI_TEST_DIE": die},
                                     keep=False)
        named = (("process rank %d with PID" % rank) in err
                 if not die.endswith(":exit")
                 else re.search(r"\[\[\d+,\d+\],%d\]" % rank, err)
                 is not None)
        check(rc not in (None, 0) and named and 0 not in st and not left,
              "rank %s dies: the job ends, non-zero, naming it" % die,
              "mpirun %s, ranks %s, left %s; %s" % (rc, st, left,
                                                    show(rc or 0, out, err)))


def files(tmp):
    """--input that cannot be read: clreduce's message and status."""
    empty = os.path.join(tmp, "empty.int")
    open(empty, "wb").close()
    odd = os.path.join(tmp, "odd.int")
    with open(odd, "wb") as f:
        f.write(b"12345")
    whole = clrtest.write_values(tmp, "whole.int", "i", [1, 2, 3])
    odd13 = os.path.join(tmp, "odd13.int")  # more than --n=2, and odd
    with open(odd13, "wb") as f:
        f.write(b"1234567890123")
    for args in (["--input=" + os.path.join(tmp, "missing")],
                 ["--input=" + tmp], ["--input=" + empty],
                 ["--input=" + odd], ["--input=" + whole, "--n=4"],
                 ["--input=" + whole, "--n=2"],
                 ["--input=" + odd13, "--n=2"]):
        args = ["--type=int", "--repeat=1"] + args
        rc1, out1, err1 = clrtest.run([CLREDUCE] + args, timeout=120)
        want = err1.strip().split(": ", 1)[-1]
        for np in (1, 3):
            rc, out, err = mpi(np, args)
            lines = lines_of(err)
            check(rc == rc1 == 2 and len(lines) == 1 and
                  lines[0] == "clreduce-mpi: " + want,
                  "%s over %d ranks: clreduce's message, exit 2" %
                  (" ".join(args), np),
                  "clreduce %r; %s" % (err1, show(rc, out, err)))


def indexed(tmp):
    """argmin, argmax and minmax: the whole array's indices."""
    import random
    rnd = random.Random(3)
    path = clrtest.write_values(tmp, "idx.int", "i",
                                [rnd.randint(-10**6, 10**6)
                                 for _ in range(50001)])
    for op in ("argmin", "argmax", "minmax"):
        args = ["--type=int", "--op=" + op, "--input=" + path, "--repeat=1",
                "--json"]
        rc, out, err = clrtest.run([CLREDUCE] + args, timeout=120)
        one = json.loads(out) if rc == 0 else {}
        keys = ["result_index"] + (["result_max_index"]
                                   if op == "minmax" else [])
        for np, split in ((3, "uneven"), (4, "even")):
            doc = mpi_json(np, args[:-1] + ["--split=" + split],
                           "%s over %d ranks" % (op, np))
            if doc:
                check(all(k in one and doc.get(k) == one[k] and
                          doc.get(k.replace("result", "reference")) == one[k]
                          for k in keys) and
                      float(doc["result"]) == float(one["result"]),
                      "%s over %d ranks, %s: clreduce's indices" %
                      (op, np, split), "%s vs %s" % (doc, one))
        rc, out, err = mpi(2, args[:-1])
        check(rc == 0 and re.search(r"^result: .* at index \d+", out, re.M),
              "%s over 2 ranks: the report gives the index" % op,
              show(rc, out, err))


def own_help():
    """--help: clreduce-mpi's own text (not clreduce's usage), exit 0."""
    rc, out, err = mpi(2, ["--help"])
    taken, _, refused = out.partition("Refused")
    refused = refused.split("\n\n", 1)[0]
    check(rc == 0 and out.startswith("Usage: mpirun -np P clreduce-mpi") and
          out.count("Usage:") == 1 and "--split=S" in out and
          "Exit status" in out and
          all(o in refused for o in ["--dot", "--input2", "--segments",
                                     "--segment-length", "--ranges",
                                     "--output", "--list-devices",
                                     "--list-kernels"]) and
          not re.search(r"^  --(dot|segments|ranges|output|list-devices)",
                        taken, re.M),
          "--help: its own usage, the options it takes and those it "
          "refuses, exit 0", show(rc, out, err))


def same_as_clreduce():
    """The same --n and --seed: the array clreduce generates, so the same
    answer (integers and max exactly; a float sum's reference the same)."""
    for args, exact in [(["--type=int"], True), (["--op=max"], True),
                        ([], False)]:
        args = args + ["--n=100003", "--seed=7", "--repeat=1"]
        rc, out, err = clrtest.run([CLREDUCE] + args + ["--json"],
                                   timeout=120)
        one = json.loads(out) if rc == 0 else None
        if not check(one is not None and one.get("verified") is True,
                     "clreduce %s" % " ".join(args), show(rc, out, err)):
            continue
        for np, split in ((1, "even"), (2, "even"), (3, "uneven")):
            doc = mpi_json(np, args + ["--split=" + split],
                           "%s over %d ranks" % (" ".join(args), np))
            if not doc:
                continue
            if exact:
                same = float(doc["result"]) == float(one["result"])
            else:  # the same array: the same reference, results in bound
                same = (float(doc["reference"]) == float(one["reference"]) and
                        abs(float(doc["result"]) - float(one["result"])) <=
                        doc["bound"] + one["bound"])
            check(same, "%s over %d ranks (%s): clreduce's %s" %
                  (" ".join(args), np, split,
                   "result" if exact else "array (reference)"),
                  "%s vs %s" % (doc, one))


def maps():
    """Maps verified over the ranks, against clreduce's result on the same
    generated array: an expression of x (a float sum: the same reference,
    results within their bounds), one of i and x (an int sum, exactly: i
    the global index, whatever the ranks' parts), and a built-in map."""
    for args, exact, ranks in (
            (["--map=x*x+1"], False, (1, 2, 3)),
            (["--type=int", "--map=x*(int)(i%5)-(int)(i&3)"], True,
             (1, 2, 3)),
            (["--map=square"], False, (2,))):
        args = args + ["--n=100003", "--seed=7", "--repeat=1"]
        rc, out, err = clrtest.run([CLREDUCE] + args + ["--json"],
                                   timeout=120)
        one = json.loads(out) if rc == 0 else None
        what = " ".join(args[:2])
        if not check(one is not None and one.get("verified") is True,
                     "clreduce " + what, show(rc, out, err)):
            continue
        for np in ranks:
            split = "uneven" if np == 3 else "even"
            doc = mpi_json(np, args + ["--split=" + split],
                           "%s over %d ranks (%s)" % (what, np, split))
            if not doc:
                continue
            if exact:
                same = float(doc["result"]) == float(one["result"])
            else:
                same = (float(doc["reference"]) == float(one["reference"]) and
                        abs(float(doc["result"]) - float(one["result"])) <=
                        doc["bound"] + one["bound"])
            check(same, "%s over %d ranks (%s): clreduce's %s" %
                  (what, np, split, "result" if exact else "reference"),
                  "%s vs %s" % (doc, one))


def main():
    global MPIRUN, EXE, CLREDUCE, TMP
    MPIRUN, EXE, CLREDUCE = sys.argv[1], sys.argv[2], sys.argv[3]
    clrtest.QUIET = True
    tmp = TMP = tempfile.mkdtemp(prefix="clreduce-mpi-")
    try:
        own_help()
        same_as_clreduce()
        sums_over_ranks()
        exact_over_ranks(tmp)
        moments(tmp)
        scans()
        npy_input(tmp)
        maps()
        refusals()
        help_hint()
        files(tmp)
        indexed(tmp)
        disagreements(tmp)
        lost_ranks()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return clrtest.finish("test_mpi_cli")


if __name__ == "__main__":
    sys.exit(main())
