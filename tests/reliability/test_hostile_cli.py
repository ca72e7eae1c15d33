#!/usr/bin/env python3
"""Hostile input to the clreduce command (suite 'reliability').

    test_hostile_cli.py CLREDUCE --kernel-dir DIR

Each case runs the command on bad input and asserts
  * the documented exit status (0 ok, 1 verification failed, 2 usage
    error or unusable --input file, 3 OpenCL / runtime error),
  * no crash (no signal, no sanitizer report),
  * on failure: nothing on stdout and exactly one 'clreduce: ' line on
    stderr naming the problem (a failed build adds the build log after
    it), free of control characters,
  * with --output (scan kernels): no output file and no temporary file
    left behind unless the run succeeded.

Complements tests/test_cli.py (unknown kernel / op / type / option, every
malformed --n, missing / directory / empty / odd-sized --input, no
platform, unknown device, a reduction kernel that fails to build) and
tests/scan/test_scan_cli.py (--output errors); the cases here are not
repeated there.  docs/RELIABILITY.md lists every case and its outcome.
"""
import argparse
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

EXE = None
KERNEL_DIR = None
TMP = None
passed = 0
failed = 0
# (case, exit status, first stderr line) for the table in the log
table = []


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s%s" % (what, ("\n      " + detail) if detail else ""))
    return ok


def run(args, env=None, stdin=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([EXE] + args, env=e, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    err = p.stderr.decode("utf-8", "replace")
    # Under AddressSanitizer (allocator_may_return_null=1, .ci/sanitize) a
    # refused huge malloc returns NULL after this warning of ASan's own.
    err = "".join(l for l in err.splitlines(True)
                  if not re.match(r"==\d+==WARNING: AddressSanitizer failed "
                                  r"to allocate", l))
    return (p.returncode, p.stdout.decode("utf-8", "replace"), err)


def show(rc, out, err):
    return "exit %d, stdout %r, stderr %r" % (rc, out[-400:], err[-600:])


def no_crash(rc, err, what):
    """A signal, or a sanitizer's or glibc's report, is a crash."""
    markers = ["Sanitizer", "runtime error:", "double free", "corrupted",
               "Segmentation", "Aborted"]
    hit = [m for m in markers if m in err]
    return check(rc >= 0 and rc < 128 and not hit,
                 "%s: no crash" % what,
                 "exit %d, markers %s, stderr %r" % (rc, hit, err[-800:]))


def outputs_left(path):
    return [p for p in (path, path + ".tmp") if os.path.lexists(p)]


def expect_error(args, code, needles, what, env=None, stdin=None,
                 output=None, build_log=False):
    """A run that must fail with exit status code and one message line."""
    if output:
        args = args + ["--output=" + output]
    rc, out, err = run(args, env=env, stdin=stdin)
    no_crash(rc, err, what)
    lines = err.splitlines()
    mine = [l for l in lines if l.startswith("clreduce: ")]
    first = mine[0] if mine else ""
    one_line = len(mine) == 1 and (build_log or len(lines) == 1)
    clean = all(ord(c) >= 0x20 and ord(c) != 0x7f for c in first)
    missing = [n for n in needles if n.lower() not in first.lower()]
    check(rc == code and out == "" and one_line and clean and not missing,
          "%s -> exit %d, one 'clreduce: ' line with %s" % (what, code, needles),
          show(rc, out, err) + (" missing %s" % missing if missing else ""))
    if output:
        left = outputs_left(output)
        check(not left, "%s: no output file left behind" % what, repr(left))
        for p in left:
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
    expect_error(["--n=100", "--kernel=decoupled", "--device=no-such-gpu"], 3,
                 ["no matching OpenCL device", "no-such-gpu"],
                 "unknown device, scan with --output", output=out)
    expect_error(["--n=100", "--device=99"], 3, ["device", "99"],
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


def main():
    global EXE, KERNEL_DIR, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("clreduce")
    ap.add_argument("--kernel-dir", required=True)
    a = ap.parse_args()
    EXE = os.path.abspath(a.clreduce)
    KERNEL_DIR = a.kernel_dir
    TMP = tempfile.mkdtemp(prefix="clreduce-hostile-")
    try:
        test_input_files()
        test_nan_data()
        test_sizes()
        test_arguments()
        test_device_and_kernels()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("\ncase | exit | message")
    for what, rc, first in table:
        print("%s | %d | %s" % (what, rc, first[:160]))
    print("\ntest_hostile_cli: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
