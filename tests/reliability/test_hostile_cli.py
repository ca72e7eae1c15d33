#!/usr/bin/env python3
"""Hostile input to the clreduce command (suite 'reliability').

    test_hostile_cli.py CLREDUCE --bench CLREDUCE_BENCH --kernel-dir DIR

Each case runs the command (or, for its result files, the benchmark) on
bad input and asserts
  * the documented exit status (0 ok, 1 verification failed, 2 usage
    error or unusable --input file, 3 OpenCL / runtime error),
  * no crash (no signal, no sanitizer report),
  * on failure: nothing on stdout and exactly one 'clreduce: ' line on
    stderr naming the problem (a failed build adds the build log after
    it), free of control characters,
  * with --output (scan kernels): no output file and no temporary file
    left behind unless the run succeeded;
  * --output never writes through a link at a temporary name, never
    replaces a device, a FIFO or a link, keeps an existing file's mode;
    every write is checked (/dev/full, a file size limit), also for the
    benchmark's --csv / --json / --svg;
  * a failed verification names result, reference and error on stderr;
    option values the device or kernel cannot use are usage errors (2);
    /proc and /sys files are read to their end, /dev/zero only with --n.

Complements tests/test_cli.py (unknown kernel / op / type / option, every
malformed --n, missing / directory / empty / odd-sized --input, no
platform, unknown device, a reduction kernel that fails to build) and
tests/scan/test_scan_cli.py (--output errors); the cases here are not
repeated there.  docs/RELIABILITY.md lists every case and its outcome.
"""
import json
import math
import os
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402
clrtest.QUIET = True  # print only the failures
run = clrtest.bind(lambda: EXE)[0]

EXE = None
BENCH = None
KERNEL_DIR = None
TMP = None
# (case, exit status, first stderr line) for the table in the log
table = []


def no_crash(rc, err, what):
    """A signal, or a sanitizer's or glibc's report, is a crash."""
    markers = ["Sanitizer", "runtime error:", "double free", "corrupted",
               "Segmentation", "Aborted"]
    hit = [m for m in markers if m in err]
    return check(rc >= 0 and rc < 128 and not hit,
                 "%s: no crash" % what,
                 "exit %d, markers %s, stderr %r" % (rc, hit, err[-800:]))


def temporaries(path):
    """Temporary files of a write to path: '<path>.tmp.XXXXXX' (and the old
    fixed '<path>.tmp'), or '.clreduce.XXXXXX' in its directory."""
    d = os.path.dirname(path) or "."
    base = os.path.basename(path)
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return [os.path.join(d, n) for n in names
            if n == base + ".tmp" or n.startswith(base + ".tmp.") or
            n.startswith(".clreduce.")]


def outputs_left(path):
    return [p for p in [path] if os.path.lexists(p)] + temporaries(path)


def expect_error(args, code, needles, what, env=None, stdin=None,
                 output=None, build_log=False, exe=None, prefix="clreduce: ",
                 preexec=None, stdout_ok=False):
    """A run that must fail with exit status code and one message line
    (stdout_ok: the run may print its report on stdout, as a failed
    verification and the benchmark's table do)."""
    if output:
        args = args + ["--output=" + output]
    rc, out, err = run(args, env=env, stdin=stdin, exe=exe, preexec=preexec)
    no_crash(rc, err, what)
    lines = err.splitlines()
    if exe is not None and exe != EXE:
        # the benchmark's progress lines ("[1/1] coarse n=1000") are not
        # messages
        lines = [l for l in lines if not re.match(r"\[\d+/\d+\] ", l)]
    mine = [l for l in lines if l.startswith(prefix)]
    first = mine[0] if mine else ""
    one_line = len(mine) == 1 and (build_log or len(lines) == 1)
    clean = all(ord(c) >= 0x20 and ord(c) != 0x7f for c in first)
    missing = [n for n in needles if n.lower() not in first.lower()]
    check(rc == code and (stdout_ok or out == "") and one_line and clean and
          not missing,
          "%s -> exit %d, one '%s' line with %s" % (what, code, prefix,
                                                     needles),
          show(rc, out, err) + (" missing %s" % missing if missing else ""))
    if output:
        left = outputs_left(output)
        check(not left, "%s: no output file left behind" % what, repr(left))
        for p in left:
            if p.startswith(TMP + os.sep):  # never anything outside TMP
                os.unlink(p)
    table.append((what, rc, first))
    return rc, out, err


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def kernel_copy(tag):
    d = tempfile.mkdtemp(prefix="kernels-%s-" % tag, dir=TMP)
    for f in os.listdir(KERNEL_DIR):
        shutil.copy(os.path.join(KERNEL_DIR, f), os.path.join(d, f))
    return d


# ------------------------------------------------------------ input files

def test_input_files():
    out = os.path.join(TMP, "scan.out")
    empty = write("empty.bin", b"")
    expect_error(["--input=" + empty, "--kernel=kogge-stone"], 2,
                 ["empty", empty], "scan of an empty file", output=out)
    # A file cut short in its last element (a copy interrupted).
    good = struct.pack("=4097d", *[float(i % 17) for i in range(4097)])
    cut = write("truncated.bin", good[:-3])
    expect_error(["--input=" + cut, "--type=double", "--kernel=brent-kung"],
                 2, ["32773 bytes", "not a multiple of 8", "double"],
                 "scan of a truncated double file", output=out)
    expect_error(["--input=" + cut, "--type=double"], 2,
                 ["not a multiple of 8"], "reduction of a truncated double file")
    odd = write("ten.bin", b"\x01" * 10)
    expect_error(["--input=" + odd, "--type=long", "--kernel=decoupled"], 2,
                 ["10 bytes", "not a multiple of 8", "long"],
                 "scan of 10 bytes as long", output=out)
    # Streams: the size is only known at the end.
    expect_error(["--input=/dev/null"], 2, ["empty", "/dev/null"],
                 "--input=/dev/null (a character device, empty)")
    expect_error(["--input=/dev/stdin", "--type=int"], 2,
                 ["7 bytes", "not a multiple of 4"],
                 "--input=/dev/stdin piped 7 bytes as int", stdin=b"\x02" * 7)
    rc, o, err = run(["--input=/dev/stdin", "--type=int", "--op=sum",
                      "--repeat=1", "--json"],
                     stdin=struct.pack("=3i", 5, -7, 40))
    no_crash(rc, err, "--input=/dev/stdin piped 3 ints")
    doc = None
    try:
        doc = json.loads(o)
    except ValueError:
        pass
    check(rc == 0 and doc is not None and doc.get("result") == 38,
          "--input=/dev/stdin piped 3 ints sums to 38", show(rc, o, err))
    table.append(("--input=/dev/stdin piped 3 ints (control)", rc,
                  "result 38, verified"))


def strict_json(text):
    def bad(x):
        raise ValueError("non-standard JSON constant " + x)
    return json.loads(text, parse_constant=bad)


def test_nan_data():
    """NaN and infinities: verified or reported, never a crash; the JSON
    stays standard JSON; --output is written only for a verified scan."""
    nan, inf = float("nan"), float("inf")
    vals = [float(i % 9) for i in range(1000)]
    vals[3], vals[500], vals[998] = nan, inf, -inf
    f32 = write("nan_float.bin", struct.pack("=1000f", *vals))
    f64 = write("nan_double.bin", struct.pack("=1000d", *vals))
    infs = write("inf_double.bin", struct.pack("=4d", inf, 1.0, inf, 2.0))
    out = os.path.join(TMP, "nan.out")
    cases = []
    for path, typ in [(f32, "float"), (f64, "double")]:
        for k in ["interleaved", "coarse"]:
            for op in ["sum", "min", "max", "prod"]:
                cases.append((path, typ, k, op))
        for k in ["kogge-stone", "decoupled"]:
            for op in ["sum", "max"]:
                cases.append((path, typ, k, op))
    cases.append((infs, "double", "coarse", "sum"))
    cases.append((infs, "double", "brent-kung", "sum"))
    outcomes = {}
    for path, typ, k, op in cases:
        scan = k in ("kogge-stone", "decoupled", "brent-kung")
        what = "%s %s %s of %s" % (os.path.basename(path), k, op, typ)
        args = ["--input=" + path, "--type=" + typ, "--kernel=" + k,
                "--op=" + op, "--repeat=1", "--json"]
        if scan:
            args.append("--output=" + out)
        rc, o, err = run(args)
        no_crash(rc, err, what)
        doc = None
        try:
            doc = strict_json(o)
        except ValueError as ex:
            check(False, what + ": stdout is standard JSON", "%s; %s" %
                  (ex, show(rc, o, err)))
        if doc is not None:
            check(rc in (0, 1) and doc.get("verified") is (rc == 0),
                  what + ": exit 0 with verified true, or 1 with false",
                  show(rc, o, err))
            res = doc.get("result")
            # inf + (-inf) and 0 * inf are NaN: the honest sum / prod
            if k in ("interleaved", "coarse") and op in ("sum", "prod") \
                    and path != infs:
                check(isinstance(res, str) and res.lower() == "nan",
                      what + ": result is NaN", repr(res))
            outcomes[what] = (rc, res)
        if scan:
            left = outputs_left(out)
            check(os.path.exists(out) == (rc == 0) and
                  not os.path.exists(out + ".tmp"),
                  what + ": --output written only when verified", repr(left))
            if os.path.exists(out):
                check(os.path.getsize(out) == os.path.getsize(path),
                      what + ": --output has n elements",
                      "%d bytes" % os.path.getsize(out))
            for p in left:
                os.unlink(p)
    summary = {}
    for what, (rc, res) in outcomes.items():
        summary.setdefault(rc, []).append(what)
    for rc in sorted(summary):
        table.append(("NaN / inf data: %d runs" % len(summary[rc]), rc,
                      "verified" if rc == 0 else "VERIFICATION FAILED"))


# ------------------------------------------------------------ sizes

def test_sizes():
    out = os.path.join(TMP, "big.out")
    expect_error(["--n=1e15"], 3, ["out of host memory"],
                 "--n=1e15 (4 PB of floats)")
    expect_error(["--n=1e15", "--kernel=brent-kung"], 3,
                 ["out of host memory"], "--n=1e15 scan", output=out)
    expect_error(["--n=9e18", "--type=double"], 3, ["do not fit"],
                 "--n=9e18 doubles (bytes overflow size_t)")
    expect_error(["--n=1e19"], 2, ["--n", "too large"], "--n=1e19 (above 2^63)")
    expect_error(["--n=100", "--repeat=1000001"], 2, ["--repeat", "too large"],
                 "--repeat above its maximum")
    expect_error(["--n=100", "--coarse=99999999999999999999999"], 2,
                 ["--coarse", "too large"], "--coarse beyond 2^63")


# ------------------------------------------------------------ arguments

def test_arguments():
    long_name = "A" * 100000
    rc, o, err = expect_error(["--kernel=" + long_name], 2, ["unknown kernel"],
                              "--kernel of 100000 characters")
    check(len(err) < 4096, "a 100000-character argument gives a bounded "
          "message", "%d bytes" % len(err))
    expect_error(["--type=fl\noat\x1b[31m\r"], 2, ["unknown type"],
                 "--type with a newline and an escape sequence")
    rc, o, err = run([b"--op=\xff\xfe".decode("utf-8", "surrogateescape")])
    no_crash(rc, err, "--op with invalid UTF-8")
    check(rc == 2 and err.startswith("clreduce: ") and
          len(err.splitlines()) == 1, "--op with invalid UTF-8 -> exit 2",
          show(rc, o, err))
    table.append(("--op with invalid UTF-8 bytes", rc, err.splitlines()[0]
                  if err else ""))
    expect_error(["--n=1e3", "--n"], 2, ["--n", "needs a value"],
                 "--n given twice, the second without a value")
    expect_error(["-x"], 2, ["unknown option", "-x"], "unknown short option")
    expect_error(["--help=yes"], 2, ["takes no value"], "--help=yes")


# ------------------------------------------------------------ device, kernels

def test_device_and_kernels():
    out = os.path.join(TMP, "dev.out")
    # (a device that selects nothing: the command line's mistake, exit 2)
    expect_error(["--n=100", "--kernel=decoupled", "--device=no-such-gpu"], 2,
                 ["no matching OpenCL device", "no-such-gpu"],
                 "unknown device, scan with --output", output=out)
    expect_error(["--n=100", "--device=99"], 2, ["device", "99"],
                 "device index out of range")
    env = {"CLREDUCE_KERNEL_DIR": "/nonexistent", "CLREDUCE_CACHE_DIR": ""}
    expect_error(["--n=100", "--repeat=1"], 3,
                 ["could not be read", "/nonexistent/"],
                 "CLREDUCE_KERNEL_DIR=/nonexistent", env=env)
    expect_error(["--n=100", "--repeat=1", "--kernel=kogge-stone"], 3,
                 ["could not be read", "/nonexistent/"],
                 "CLREDUCE_KERNEL_DIR=/nonexistent, scan", env=env, output=out)
    # Unreadable kernel source: a directory in its place (root reads files
    # of any mode, so chmod 000 would prove nothing when run as root).
    d = kernel_copy("unreadable")
    os.unlink(os.path.join(d, "reduce_coarse.cl"))
    os.mkdir(os.path.join(d, "reduce_coarse.cl"))
    env = {"CLREDUCE_KERNEL_DIR": d, "CLREDUCE_CACHE_DIR": ""}
    expect_error(["--n=100", "--repeat=1"], 3,
                 ["could not be read", "reduce_coarse.cl"],
                 "unreadable kernel source (coarse)", env=env)
    if os.geteuid() != 0:
        os.chmod(os.path.join(d, "scan_brent_kung.cl"), 0)
        expect_error(["--n=100", "--repeat=1", "--kernel=brent-kung"], 3,
                     ["could not be read", "scan_brent_kung.cl"],
                     "kernel source of mode 000 (brent-kung)", env=env,
                     output=out)
    # A kernel that fails to build: a syntax error in the decoupled scan's
    # source.  Exit 3, the message names the sources, the build log
    # follows; nothing is written to --output.
    d = kernel_copy("broken")
    with open(os.path.join(d, "scan_decoupled.cl"), "a") as f:
        f.write("\n}}} clreduce_injected_syntax_error (;\n")
    env = {"CLREDUCE_KERNEL_DIR": d, "CLREDUCE_CACHE_DIR": ""}
    rc, o, err = expect_error(["--n=1000", "--repeat=1", "--kernel=decoupled"],
                              3, ["build failed", "scan_decoupled.cl"],
                              "decoupled scan source with a syntax error",
                              env=env, output=out, build_log=True)
    after = err.split("build failed", 1)[-1]
    check("error" in after.lower() and len(err.splitlines()) > 1,
          "the build log follows the message", err[-600:])
    # The other kernels of that directory still work.
    rc, o, err = run(["--n=1000", "--repeat=1", "--kernel=kogge-stone"],
                     env=env)
    check(rc == 0 and "verified: yes" in o,
          "the other scans of that kernel directory still run",
          show(rc, o, err))


# ------------------------------------------------------------ output files

def int_scan(xs):
    """The inclusive int sum scan, wrapping in 32 bits, as raw bytes."""
    out, acc = [], 0
    for x in xs:
        acc = (acc + x + 2**31) % 2**32 - 2**31
        out.append(acc)
    return struct.pack("=%di" % len(out), *out)


def scan_ok(args, what, preexec=None):
    """A scan run that must succeed; returns (rc, stdout, stderr)."""
    rc, o, err = run(args, preexec=preexec)
    no_crash(rc, err, what)
    check(rc == 0 and err == "", what + " -> exit 0, nothing on stderr",
          show(rc, o, err))
    table.append((what, rc, "verified; written" if rc == 0 else
                  (err.splitlines() or [""])[0]))
    return rc, o, err


def test_output_files():
    """--output through links, over an existing '<out>.tmp', onto devices
    and FIFOs; modes kept; no temporary file left."""
    d = tempfile.mkdtemp(prefix="output-", dir=TMP)
    xs = [(i * 7919) % 201 - 100 for i in range(3001)]
    inp = write("scan_in.bin", struct.pack("=3001i", *xs))
    want = int_scan(xs)
    base = ["--input=" + inp, "--type=int", "--op=sum", "--repeat=1",
            "--kernel=kogge-stone"]

    def content(p):
        with open(p, "rb") as f:
            return f.read()

    # A symbolic link at '<out>.tmp' (the old fixed temporary name): its
    # target is not written, the link stays.
    out = os.path.join(d, "a.bin")
    victim = os.path.join(d, "victim")
    with open(victim, "wb") as f:
        f.write(b"do not overwrite")
    os.symlink(victim, out + ".tmp")
    scan_ok(base + ["--output=" + out], "symlink at '<out>.tmp'")
    check(content(victim) == b"do not overwrite" and
          os.path.islink(out + ".tmp") and content(out) == want,
          "symlink at '<out>.tmp': its target untouched, the output written",
          repr(content(victim)[:40]))
    if os.path.lexists(out + ".tmp"):
        os.unlink(out + ".tmp")
    # An existing file named '<out>.tmp' is not destroyed.
    with open(out + ".tmp", "wb") as f:
        f.write(b"someone's file")
    scan_ok(base + ["--output=" + out], "existing file '<out>.tmp'")
    check(os.path.exists(out + ".tmp") and
          content(out + ".tmp") == b"someone's file" and content(out) == want,
          "existing '<out>.tmp': kept as it was, the output written")
    if os.path.lexists(out + ".tmp"):
        os.unlink(out + ".tmp")
    check(temporaries(out) == [], "no temporary file left after the runs",
          repr(temporaries(out)))

    # A symbolic link at the output path is written through: the link
    # stays, its target gets the scan (created when missing).
    link = os.path.join(d, "link.bin")
    target = os.path.join(d, "target.bin")
    os.symlink("target.bin", link)          # relative, dangling
    scan_ok(base + ["--output=" + link], "--output a dangling symlink")
    check(os.path.islink(link) and os.readlink(link) == "target.bin" and
          os.path.isfile(target) and content(target) == want,
          "dangling symlink at --output: link kept, its target created")
    with open(target, "wb") as f:
        f.write(b"old")
    scan_ok(base + ["--output=" + link], "--output a symlink to a file")
    check(os.path.islink(link) and content(target) == want,
          "symlink at --output: link kept, its target replaced")
    check(temporaries(link) == [] and temporaries(target) == [],
          "symlinks: no temporary file left")

    # Modes: an existing file keeps its permission bits; a new one gets
    # 0666 & ~umask, as open() gives.
    m600 = os.path.join(d, "m600.bin")
    with open(m600, "wb") as f:
        f.write(b"old")
    os.chmod(m600, 0o600)
    scan_ok(base + ["--output=" + m600], "--output an existing 0600 file")
    mode = os.stat(m600).st_mode & 0o7777
    check(mode == 0o600 and content(m600) == want,
          "an existing 0600 file stays 0600", "mode %o" % mode)
    fresh = os.path.join(d, "fresh.bin")
    scan_ok(base + ["--output=" + fresh], "--output a new file, umask 027",
            preexec=lambda: os.umask(0o027))
    mode = os.stat(fresh).st_mode & 0o7777
    check(mode == 0o640, "a new file under umask 027 is 0640", "mode %o" % mode)

    # Devices and FIFOs are written in place, never replaced.  First
    # through a link in our own directory (harmless if it were replaced),
    # then the devices themselves, which only run if the link case held
    # (as root, a rename would replace /dev/null or /dev/full for every
    # process on the machine).
    devlink = os.path.join(d, "devnull")
    os.symlink("/dev/null", devlink)
    scan_ok(base + ["--output=" + devlink], "--output a symlink to /dev/null")
    linked_ok = check(os.path.islink(devlink) and
                      os.readlink(devlink) == "/dev/null" and
                      temporaries(devlink) == [] and
                      not os.path.exists("/dev/null.tmp"),
                      "a symlink to /dev/null stays a symlink")
    null_ok = stat.S_ISCHR(os.stat("/dev/null").st_mode)
    check(null_ok, "/dev/null is still a character device")
    if linked_ok and null_ok:
        scan_ok(base + ["--output=/dev/null"], "--output=/dev/null")
        check(stat.S_ISCHR(os.stat("/dev/null").st_mode) and
              not os.path.exists("/dev/null.tmp"),
              "--output=/dev/null: still a character device, no temporary")
        p = subprocess.run([EXE] + base + ["--output=/dev/stdout", "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=300)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
        no_crash(rc, err, "--output=/dev/stdout")
        doc = {}
        try:
            doc = json.loads(p.stdout[len(want):])
        except ValueError:
            pass
        check(rc == 0 and p.stdout.startswith(want) and
              doc.get("output") == "/dev/stdout" and
              os.path.islink("/dev/stdout"),
              "--output=/dev/stdout: the scan, then the report, on stdout; "
              "/dev/stdout still a link",
              "exit %d, %d bytes on stdout, stderr %r" % (rc, len(p.stdout),
                                                         err[-300:]))
        table.append(("--output=/dev/stdout (a pipe)", rc,
                      "scan bytes then the report on stdout"))
        # (Not through expect_error's output=, which removes what a
        # failed run leaves: /dev/full is no file of ours.)
        expect_error(base + ["--output=/dev/full"], 3,
                     ["cannot write output file", "'/dev/full'",
                      "No space left"], "--output=/dev/full")
        check(stat.S_ISCHR(os.stat("/dev/full").st_mode) and
              not os.path.exists("/dev/full.tmp"),
              "/dev/full is still a character device")

    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    scan_ok(base + ["--output=" + fifo], "--output a FIFO (with a reader)")
    t.join(60)
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode) and got == [want] and
          temporaries(fifo) == [],
          "--output a FIFO: written through it, still a FIFO",
          "read %r bytes" % [len(g) for g in got])

    # A write that fails part-way (the file size limit: EFBIG): the old
    # output is left as it was, no temporary file, the message names the
    # output path.
    big = write("big_in.bin", struct.pack("=300000i", *([1] * 300000)))
    old = os.path.join(d, "old.bin")
    with open(old, "wb") as f:
        f.write(b"previous result")
    args = ["--input=" + big, "--type=int", "--repeat=1",
            "--kernel=kogge-stone", "--output=" + old]

    def limit_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))
    run(args)  # warm the program caches, which the limit would also hit
    with open(old, "wb") as f:
        f.write(b"previous result")
    expect_error(args, 3, ["cannot write output file", "'%s'" % old,
                           "File too large"],
                 "--output over the file size limit (EFBIG)",
                 preexec=limit_size)
    check(content(old) == b"previous result" and temporaries(old) == [],
          "a failed write: the old output kept, no temporary file left",
          repr(temporaries(old)))

    # Two runs writing one output at the same time: both succeed, the file
    # is one of the two scans whole.
    ys = [2] * 3001
    inp2 = write("scan_in2.bin", struct.pack("=3001i", *ys))
    same = os.path.join(d, "same.bin")
    procs = []
    for i in (inp, inp2):
        procs.append(subprocess.Popen(
            [EXE, "--input=" + i, "--type=int", "--repeat=3",
             "--kernel=kogge-stone", "--output=" + same],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    res = [(p.wait(300), p.stdout.read(), p.stderr.read().decode()) for p in
           procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    check(all(r[0] == 0 and r[2] == "" for r in res) and
          content(same) in (want, int_scan(ys)) and temporaries(same) == [],
          "two runs writing one output: both exit 0, the file is one scan",
          repr([(r[0], r[2]) for r in res]))
    table.append(("two runs writing one --output at once", 0,
                  "both verified; the file is one of the two scans"))


# ------------------------------------------------------------ benchmark files

def test_bench_files():
    if not BENCH:
        check(False, "the benchmark's path was given (--bench)")
        return
    base = ["--kernels=coarse", "--min-n=1000", "--max-n=1000", "--repeat=1"]
    for opt in ["csv", "json", "svg"]:
        expect_error(base + ["--%s=/dev/full" % opt], 3,
                     ["cannot write output file", "'/dev/full'",
                      "No space left"],
                     "clreduce-bench --%s=/dev/full" % opt, exe=BENCH,
                     prefix="clreduce-bench: ", stdout_ok=True)
    # The table on stdout is checked too.
    with open("/dev/full", "wb") as full:
        p = subprocess.run([BENCH] + base, stdout=full,
                           stderr=subprocess.PIPE, timeout=300)
    err = p.stderr.decode("utf-8", "replace")
    no_crash(p.returncode, err, "clreduce-bench >/dev/full")
    check(p.returncode == 3 and
          "clreduce-bench: cannot write to standard output" in err,
          "clreduce-bench >/dev/full -> exit 3, 'cannot write to standard "
          "output'", "exit %d, stderr %r" % (p.returncode, err[-300:]))
    table.append(("clreduce-bench >/dev/full", p.returncode,
                  "clreduce-bench: cannot write to standard output"))
    d = tempfile.mkdtemp(prefix="bench-", dir=TMP)
    csv, js = os.path.join(d, "r.csv"), os.path.join(d, "r.json")
    expect_error(base + ["--csv=" + csv, "--json=" + os.path.join(d, "no", "r")],
                 3, ["cannot write output file", os.path.join(d, "no", "r")],
                 "clreduce-bench --json in a missing directory", exe=BENCH,
                 prefix="clreduce-bench: ", stdout_ok=True)
    rc, o, err = run(base + ["--csv=" + csv, "--json=" + js], exe=BENCH)
    ok = rc == 0
    try:
        with open(csv) as f:
            lines = f.read().splitlines()
        with open(js) as f:
            doc = json.load(f)
        ok = ok and lines[0].startswith("kernel,n,") and len(lines) == 2 and \
            doc["rows"][0]["n"] == 1000
    except (OSError, ValueError, KeyError, IndexError) as ex:
        ok = False
        err += " " + str(ex)
    check(ok, "clreduce-bench --csv --json: exit 0, both files complete",
          show(rc, o, err))
    check(temporaries(csv) == [] and temporaries(js) == [],
          "clreduce-bench: no temporary file left")
    table.append(("clreduce-bench --csv=FILE --json=FILE (control)", rc,
                  "both files written"))


# ------------------------------------------------------------ verification

def patched_kernels(tag, name):
    """A kernel directory whose `name` has a wrong identity (7), so it
    builds and computes a wrong answer."""
    d = kernel_copy(tag)
    p = os.path.join(d, name)
    with open(p) as f:
        src = f.read()
    with open(p, "w") as f:
        f.write("#undef IDENTITY\n#define IDENTITY ((ACC_T)7)\n" + src)
    return {"CLREDUCE_KERNEL_DIR": d, "CLREDUCE_CACHE_DIR": ""}


def test_verification_message():
    """A failed verification: exit 1, the report on stdout, and one line on
    stderr naming the run, the result, the reference and the error."""
    env = patched_kernels("wrong-reduce", "reduce_sequential.cl")
    args = ["--kernel=sequential", "--type=int", "--n=1009", "--repeat=1"]
    rc, o, err = run(args + ["--json"], env=env)
    doc = {}
    try:
        doc = json.loads(o)
    except ValueError:
        pass
    res, ref = doc.get("result"), doc.get("reference")
    rc, o, err = expect_error(args, 1, ["verification failed",
                                        "sequential sum of int",
                                        "result %s" % res,
                                        "reference %s" % ref],
                              "a wrong int sum (exact)", env=env,
                              stdout_ok=True)
    check("VERIFICATION FAILED" in o and res is not None and res != ref,
          "a wrong int sum: the report says VERIFICATION FAILED", o[-300:])
    expect_error(["--kernel=sequential", "--type=float", "--n=1009",
                  "--repeat=2"], 1,
                 ["verification failed", "sequential sum of float", "result",
                  "reference", "error", "bound", "runs failed"],
                 "a wrong float sum (error against its bound)", env=env,
                 stdout_ok=True)
    env = patched_kernels("wrong-scan", "scan_kogge_stone.cl")
    out = os.path.join(TMP, "wrong_scan.out")
    expect_error(["--kernel=kogge-stone", "--type=int", "--n=1009",
                  "--repeat=1"], 1,
                 ["verification failed", "kogge-stone sum of int scan",
                  "elements differ", "index", "result", "reference",
                  "--output not written"],
                 "a wrong int scan, --output", env=env, output=out,
                 stdout_ok=True)
    expect_error(["--kernel=kogge-stone", "--type=float", "--n=1009",
                  "--repeat=1"], 1,
                 ["verification failed", "kogge-stone sum of float scan",
                  "outside their error bound", "error", "bound"],
                 "a wrong float scan", env=env, stdout_ok=True)


# ------------------------------------------------------------ device limits

def test_device_limits():
    """Option values the device or kernel cannot use are usage errors."""
    out = os.path.join(TMP, "limits.out")
    expect_error(["--n=1000", "--repeat=1", "--wg=100000"], 2,
                 ["work-group size 100000", "limit"],
                 "--wg=100000 (above the device's limit)")
    expect_error(["--n=1000", "--repeat=1", "--wg=100000",
                  "--kernel=brent-kung"], 2, ["work-group size 100000"],
                 "--wg=100000, brent-kung scan", output=out)
    expect_error(["--n=1000", "--repeat=1", "--coarse=100", "--wg=64",
                  "--kernel=decoupled"], 2, ["decoupled", "100"],
                 "--coarse=100 with the decoupled scan's work-groups of 64 "
                 "(at most 64)", output=out)
    expect_error(["--n=1000", "--vec=4", "--kernel=sequential"], 2,
                 ["--vec", "'sequential'"], "--vec=4 with a one-element "
                 "kernel (sequential)")


# ------------------------------------------------------------ endless and
# ------------------------------------------------------------ unsized input

def test_unsized_inputs():
    """/proc and /sys files (size 0 or 4096 in stat) are read to their end;
    /dev/zero ends only with --n."""
    rc, o, err = expect_error(["--input=/dev/zero", "--repeat=1"], 2,
                              ["'/dev/zero'", "did not end", "--n"],
                              "--input=/dev/zero without --n")
    rc, o, err = run(["--input=/dev/zero", "--n=1000", "--repeat=1",
                      "--json"])
    no_crash(rc, err, "--input=/dev/zero --n=1000")
    doc = {}
    try:
        doc = json.loads(o)
    except ValueError:
        pass
    check(rc == 0 and doc.get("result") == 0 and doc.get("n") == 1000,
          "--input=/dev/zero --n=1000: 1000 zeros, sum 0", show(rc, o, err))
    table.append(("--input=/dev/zero --n=1000", rc, "result 0, verified"))
    out = os.path.join(TMP, "zero.out")
    scan_ok(["--input=/dev/zero", "--n=4099", "--repeat=1",
             "--kernel=decoupled", "--output=" + out],
            "--input=/dev/zero --n=4099, decoupled scan")
    check(os.path.getsize(out) == 4099 * 4, "--output holds 4099 floats")
    os.unlink(out)
    # --n bounds a pipe; a regular file must hold exactly n.
    rc, o, err = run(["--input=/dev/stdin", "--type=int", "--n=3", "--json",
                      "--repeat=1"], stdin=struct.pack("=5i", 5, -7, 40, 9, 9))
    check(rc == 0 and '"result":38' in o,
          "--input=/dev/stdin --n=3 piped 5 ints: the first 3 (38)",
          show(rc, o, err))
    table.append(("--input=/dev/stdin --n=3, 5 ints piped", rc,
                  "the first 3 values: result 38"))
    five = write("five.bin", struct.pack("=5i", 1, 2, 3, 4, 5))
    expect_error(["--input=" + five, "--type=int", "--n=3"], 2,
                 ["--n=3", "more than 3 int"], "a file of 5 ints with --n=3")

    # /proc/version says size 0 and has content: its first 12 bytes are
    # "Linux versio" on every Linux.
    pv = "/proc/version"
    if os.path.exists(pv):
        check(os.stat(pv).st_size == 0, "/proc/version reports size 0")
        with open(pv, "rb") as f:
            text = f.read()
        want = sum(struct.unpack("=3i", text[:12]))
        rc, o, err = run(["--input=" + pv, "--type=int", "--n=3", "--json",
                          "--repeat=1"])
        no_crash(rc, err, "--input=/proc/version --n=3")
        check(rc == 0 and text.startswith(b"Linux versio") and
              '"result":%d' % want in o,
              "--input=/proc/version --type=int --n=3: sum of 'Linux versio'",
              show(rc, o, err))
        table.append(("--input=/proc/version --type=int --n=3", rc,
                      "sum of the ints of 'Linux versio'"))
        # Without --n: read to its end, its real length reported.
        rc, o, err = run(["--input=" + pv, "--type=ulong", "--op=max",
                          "--repeat=1", "--json"])
        no_crash(rc, err, "--input=/proc/version")
        if len(text) % 8:
            check(rc == 2 and "has %d bytes" % len(text) in err,
                  "--input=/proc/version: its %d bytes read" % len(text),
                  show(rc, o, err))
        else:
            check(rc == 0 and '"n":%d' % (len(text) // 8) in o,
                  "--input=/proc/version: its %d bytes read" % len(text),
                  show(rc, o, err))
        table.append(("--input=/proc/version (size 0 in stat)", rc,
                      (err.splitlines() or ["read whole"])[0]))
    # A /sys attribute says 4096 bytes and holds a few.
    sysf = "/sys/devices/system/cpu/online"
    if os.path.exists(sysf):
        with open(sysf, "rb") as f:
            text = f.read()
        rc, o, err = run(["--input=" + sysf, "--type=int", "--repeat=1",
                          "--json", "--op=max"])
        no_crash(rc, err, "--input=" + sysf)
        if len(text) % 4:
            ok = rc == 2 and "has %d bytes" % len(text) in err
        else:
            ok = rc == 0 and '"n":%d' % (len(text) // 4) in o
        check(ok and "shrank" not in err and "empty" not in err,
              "--input=%s (stat says %d bytes): its %d bytes read"
              % (sysf, os.stat(sysf).st_size, len(text)), show(rc, o, err))
        table.append(("--input=" + sysf + " (4096 in stat)", rc,
                      (err.splitlines() or ["read whole"])[0]))


def test_cache_and_tuning():
    """A damaged program cache and hostile tuning files, through the
    command: every run gives a verified answer promptly, none crashes (the
    library's own checks are in tests/test_cache_tuning.c)."""
    cache = os.path.join(TMP, "cache")
    env = {"CLREDUCE_CACHE_DIR": cache, "CLREDUCE_KERNEL_DIR": KERNEL_DIR}
    args = ["--n=5000", "--type=int", "--repeat=1"]
    rc, out, err = run(args, env=env, timeout=120)
    check(rc == 0 and "verified: yes" in out, "cache: first run fills it",
          show(rc, out, err))
    entries = sorted(os.path.join(cache, n) for n in os.listdir(cache)
                     if n.endswith(".clbin")) if os.path.isdir(cache) else []
    if not check(entries, "cache: the first run stored entries",
                 "nothing in %s" % cache):
        return

    def damage(kind):
        for e in entries:
            with open(e, "rb") as f:
                data = bytearray(f.read())
            if kind == "flip":
                data[len(data) // 2] ^= 0x5A  # inside the payload
            elif kind == "truncate":
                data = data[:len(data) // 2]
            elif kind == "empty":
                data = bytearray()
            os.unlink(e)
            if kind == "fifo":
                os.mkfifo(e)
            else:
                with open(e, "wb") as f:
                    f.write(data)

    for kind in ("flip", "truncate", "empty", "fifo"):
        damage(kind)
        what = "cache entries damaged (%s)" % kind
        try:
            rc, out, err = run(args, env=env, timeout=120)
        except subprocess.TimeoutExpired:
            check(False, "%s: the run returns" % what, "hung for 120 s")
            continue
        no_crash(rc, err, what)
        check(rc == 0 and "verified: yes" in out,
              "%s: rebuilt, verified, exit 0" % what, show(rc, out, err))
        table.append((what, rc, (err.splitlines() or [""])[0]))
        ok = all(os.path.isfile(e) and os.path.getsize(e) > 64
                 for e in entries)
        check(ok, "%s: every entry rewritten" % what,
              str([(e, os.path.getsize(e) if os.path.isfile(e) else None)
                   for e in entries]))

    # Tuning: a FIFO among the shipped files (a reader would block on it)
    # and a legal but useless file for this device (scan.wg=1,
    # scan.per_item=1: a tile of one element never shrinks the input).
    rc, out, err = run(["--list-devices", "--json"], env=env, timeout=60)
    name = ""
    try:
        devs = json.loads(out).get("devices", [])
        name = devs[0].get("device", "") if devs else ""
    except ValueError:
        pass
    if not check(len(name) >= 3, "tuning: a device name to match",
                 show(rc, out, err)):
        return
    tdir = os.path.join(TMP, "tuning")
    os.mkdir(tdir)
    os.mkfifo(os.path.join(tdir, "a-fifo.txt"))
    with open(os.path.join(tdir, "tiny.txt"), "w") as f:
        f.write("match=no-such-device|%s\nscan.wg=1\nscan.per_item=1\n"
                "scan.kernel=kogge-stone\n" % name[:3])
    tenv = dict(env, CLREDUCE_TUNING_DIR=tdir)
    for k in ("kogge-stone", "kogge-stone-db", "brent-kung"):
        what = "tuning dir with a FIFO and scan.wg=1 scan.per_item=1: %s" % k
        try:
            rc, out, err = run(["--kernel=" + k, "--n=100003", "--repeat=1"],
                               env=tenv, timeout=120)
        except subprocess.TimeoutExpired:
            check(False, "%s: the run returns" % what, "hung for 120 s")
            continue
        no_crash(rc, err, what)
        check(rc == 0 and "verified: yes" in out, "%s: verified" % what,
              show(rc, out, err))
        table.append((what, rc, (err.splitlines() or [""])[0]))


def main():
    global EXE, BENCH, KERNEL_DIR, TMP
    a = clrtest.arguments(
        ("--bench", {"help": "clreduce-bench, for its result files"}))
    EXE = os.path.abspath(a.exe)
    BENCH = os.path.abspath(a.bench) if a.bench else None
    KERNEL_DIR = a.kernel_dir
    TMP = tempfile.mkdtemp(prefix="clreduce-hostile-")
    try:
        test_input_files()
        test_nan_data()
        test_sizes()
        test_arguments()
        test_device_and_kernels()
        for part in (test_output_files, test_bench_files,
                     test_verification_message, test_device_limits,
                     test_unsized_inputs, test_cache_and_tuning):
            try:
                part()
            except (OSError, subprocess.SubprocessError) as ex:
                # A case that left the files in an unexpected state: a
                # failure of that part; the others still run.
                check(False, "%s ran to its end" % part.__name__, repr(ex))
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("\ncase | exit | message")
    for what, rc, first in table:
        print("%s | %d | %s" % (what, rc, first[:160]))
    print()
    return clrtest.finish("test_hostile_cli")


if __name__ == "__main__":
    sys.exit(main())
