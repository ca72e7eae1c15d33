"""The one Python test harness: every Python test imports it.

    check(ok, what, detail="")   count a check; print "ok:   what" (quiet=True:
                                 only failures) or "FAIL: what" and detail
    finish(program)              print "<program>: N passed, N failed"; the
                                 exit status (1 when a check failed or none
                                 ran)
    run(cmd, env=None, ...)      run a command, return (exit status, stdout,
                                 stderr) as text; env values of None remove
                                 the variable; the OpenCL compiler's own
                                 "N errors generated." lines and ASan's
                                 allocation warnings are taken out of stderr
    show(rc, out, err)           the three in one line, for a failure's detail
    expect_error(exe, args, ...) a failing run: exit code, nothing on stdout,
                                 one "<program>: " line naming every needle
    run_json(exe, args, what)    run with --json, parse the report
    write_values(directory, name, fmt, values) -> path: a file of values
                                 packed little-endian by struct format fmt
    read_values(path, fmt)       the values of such a file
    npy_bytes(descr, shape, payload, fortran=False, version=1)
                                 a NumPy .npy file's bytes, as
                                 numpy.lib.format writes them (stdlib only)
    is_number(x)
    kernels(exe) -> (reductions, scans): the kernel names in the order
                                 `clreduce --list-kernels --json` gives them
                                 (src/lib/kernels.def)
    arguments(*options)          a script's command line: the program under
                                 test (exe), --kernel-dir DIR, and options
"""
import argparse
import contextlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

PASSED = 0
FAILED = 0
QUIET = False  # print only the failures

# The kernels the course notes teach: a listing must hold at least these
# (a floor against a table that lost a row; loops use kernels()).
KNOWN_REDUCTIONS = ["interleaved", "sequential", "first-add", "coarse"]
KNOWN_SCANS = ["kogge-stone", "kogge-stone-db", "brent-kung", "decoupled"]

# PoCL's compiler prints clang's summary ("2 errors generated.") on stderr
# by itself when a kernel fails to build; that line is not clreduce's.
COMPILER_NOISE = re.compile(r"^[0-9]+ (errors?|warnings?) generated\.\n", re.M)
# Under AddressSanitizer (allocator_may_return_null=1, .ci/sanitize) a
# refused huge malloc returns NULL after this warning of ASan's own.
ASAN_ALLOC = re.compile(r"^==\d+==WARNING: AddressSanitizer failed to "
                        r"allocate.*\n", re.M)


def check(ok, what, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        if not QUIET:
            print("ok:   " + what)
    else:
        FAILED += 1
        print("FAIL: " + what + ("\n      " + detail if detail else ""))
    sys.stdout.flush()
    return ok


def finish(program):
    print("%s: %d passed, %d failed" % (program, PASSED, FAILED))
    sys.stdout.flush()
    return 0 if FAILED == 0 and PASSED > 0 else 1


def run(cmd, env=None, cwd=None, timeout=300, stdin=None, preexec=None):
    e = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    p = subprocess.run(cmd, env=e, cwd=cwd, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, preexec_fn=preexec)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    return p.returncode, out, ASAN_ALLOC.sub("", COMPILER_NOISE.sub("", err))


def show(rc, out, err):
    return "exit %d, stdout %r, stderr %r" % (rc, out[-600:], err[-600:])


def expect_error(exe, args, code, needles, what, env=None, one_line=True):
    """A failing run: exit code, nothing on stdout, one '<program>: ' line
    on stderr containing every needle (case-insensitive)."""
    rc, out, err = run([exe] + args, env=env)
    program = os.path.basename(exe)
    lines = err.strip("\n").split("\n")
    low = err.lower()
    missing = [n for n in needles if n.lower() not in low]
    ok = (rc == code and out == "" and err.startswith(program + ": ")
          and not missing and (not one_line or len(lines) == 1))
    check(ok, "%s -> exit %d, message %s" % (what, code, needles),
          show(rc, out, err) + (" missing %s" % missing if missing else ""))
    return rc, out, err


def run_json(exe, args, what, env=None, code=0):
    rc, out, err = run([exe] + args + ["--json"], env=env)
    try:
        doc = json.loads(out)
    except ValueError as ex:
        check(False, what + ": JSON output parses",
              "%s; %s" % (ex, show(rc, out, err)))
        return None
    if not check(rc == code, "%s: exit %d" % (what, code), show(rc, out, err)):
        return None
    return doc


def write_values(directory, name, fmt, values):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
    return path


def broken_kernels(kernel_dir, into, name, needle, replacement, what):
    """A copy of kernel_dir at `into` whose kernel file `name` has needle
    replaced (checked, as `what`, to be there first, so a test of a broken
    kernel never passes on an unbroken one); returns the copy's path."""
    shutil.copytree(kernel_dir, into)
    path = os.path.join(into, name)
    with open(path) as f:
        text = f.read()
    check(needle in text, "%s is where the test expects it (%s)" % (what, name))
    with open(path, "w") as f:
        f.write(text.replace(needle, replacement))
    return into


def npy_bytes(descr, shape, payload, fortran=False, version=1):
    """A .npy file as numpy.lib.format writes it: magic, version, header
    length, the dict padded with spaces to a multiple of 64, newline, the
    data (payload, bytes)."""
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", repr(tuple(shape)))
    pre = 10 if version == 1 else 12
    total = (pre + len(d) + 1 + 63) // 64 * 64
    d += " " * (total - pre - len(d) - 1) + "\n"
    hlen = struct.pack("<H" if version == 1 else "<I", len(d))
    return b"\x93NUMPY" + bytes([version, 0]) + hlen + d.encode() + payload


def read_values(path, fmt):
    with open(path, "rb") as f:
        data = f.read()
    return list(struct.unpack("<%d%s" % (len(data) // struct.calcsize(fmt),
                                         fmt), data))


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def kernels(exe):
    rc, out, err = run([exe, "--list-kernels", "--json"], timeout=120)
    if rc != 0:
        raise RuntimeError("clreduce --list-kernels --json: " + show(rc, out, err))
    listed = json.loads(out)["kernels"]
    reductions = [k["name"] for k in listed if k["kind"] == "reduction"]
    scans = [k["name"] for k in listed if k["kind"] == "scan"]
    return reductions, scans


def arguments(*options):
    """Parse a test script's command line: the program under test (.exe),
    --kernel-dir DIR (.kernel_dir), and options, each (flag, keyword
    arguments of argparse's add_argument)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--kernel-dir", required=True)
    for flag, kw in options:
        ap.add_argument(flag, **kw)
    return ap.parse_args()


class Session:
    """One CLI test script's program under test and scratch directory,
    both set in its main by open():
        T = clrtest.Session()
        run, expect_error, run_json = T.run, T.expect_error, T.run_json
        ...
        def main():
            a = clrtest.arguments()
            with T.open(a.exe, "clr-what-"):
                ...
    get_exe: where the program's path comes from instead (bind)."""

    def __init__(self, get_exe=None):
        self.get_exe = get_exe
        self.exe = None
        self.tmp = None

    @contextlib.contextmanager
    def open(self, exe, prefix):
        self.exe = exe
        with tempfile.TemporaryDirectory(prefix=prefix) as d:
            self.tmp = d
            yield d

    def program(self):
        return self.get_exe() if self.get_exe else self.exe

    def path(self, name):
        """A path in the scratch directory."""
        return os.path.join(self.tmp, name)

    def write(self, name, fmt, values):
        return write_values(self.tmp, name, fmt, values)

    def run(self, args, env=None, cwd=None, timeout=300, stdin=None,
            preexec=None, exe=None):
        return run([exe or self.program()] + args, env=env, cwd=cwd,
                   timeout=timeout, stdin=stdin, preexec=preexec)

    def expect_error(self, args, code, needles, what, env=None,
                     one_line=True):
        return expect_error(self.program(), args, code, needles, what, env,
                            one_line)

    def run_json(self, args, what, env=None, code=0):
        return run_json(self.program(), args, what, env, code)


def bind(get_exe):
    """run, expect_error and run_json for one program, whose path get_exe()
    gives when called (scripts that keep it in a global set it in main):
        run, expect_error, run_json = clrtest.bind(lambda: EXE)"""
    s = Session(get_exe)
    return s.run, s.expect_error, s.run_json
