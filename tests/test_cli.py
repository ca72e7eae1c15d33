#!/usr/bin/env python3
"""Tests of the clreduce command (stdlib only).

    test_cli.py CLREDUCE_EXE --data-dir DIR --kernel-dir DIR [--version X]

Covers: --help, --version, --list-kernels, --list-devices (human and JSON),
runs of every reduction kernel with JSON output (every field checked),
the tuning options, --input with the data/ files (answers written here),
a Python-written file read back, the NaN-skipping ops on files with NaNs
nowhere, first, last, scattered and everywhere (answers computed here),
exit codes 0 / 1 / 2 / 3 and every error
message: unknown kernel / op / type / option, bad --n values, unreadable,
empty and misaligned input files, and/or on floating types, no OpenCL
platform, no matching device, a kernel that fails to build (with its build
log), a missing kernel directory, and a kernel that computes a wrong
answer (exit 1); --device=all on two and on one device: the bandwidth
from the call's wall time and each part's.

Every case prints one line; the last line is "N passed, N failed".
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

EXE = None
KERNEL_DIR = None
DATA_DIR = None
TMP = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, is_number, show  # noqa: E402
run, expect_error, run_json = clrtest.bind(lambda: EXE)

# Filled in main() from `clreduce --list-kernels --json`.
REDUCE_KERNELS = []
ALL_KERNELS = []
TYPES = ["float", "double", "int", "uint", "long", "ulong"]
OPS = ["sum", "prod", "min", "max", "and", "or"]


def check_report(doc, what, kernel, op, typ, n, verified=True):
    """Every field the JSON report must have, with consistent values."""
    if doc is None:
        return
    want_keys = ["kernel", "op", "type", "n", "device", "result", "reference",
                 "verified", "kernel_ms", "gbps", "h2d_ms", "build_ms",
                 "passes"]
    missing = [k for k in want_keys if k not in doc]
    check(not missing, what + ": JSON has every field", "missing %s" % missing)
    check(doc.get("kernel") == kernel and doc.get("op") == op
          and doc.get("type") == typ and doc.get("n") == n,
          what + ": kernel/op/type/n echoed",
          "got %r %r %r %r" % (doc.get("kernel"), doc.get("op"),
                               doc.get("type"), doc.get("n")))
    check(isinstance(doc.get("device"), str) and doc.get("device") != "",
          what + ": device named", repr(doc.get("device")))
    for k in ["kernel_ms", "h2d_ms", "build_ms"]:
        v = doc.get(k)
        check(is_number(v) and v >= 0, what + ": %s is a number >= 0" % k, repr(v))
    g = doc.get("gbps")
    check(g is None or (is_number(g) and g >= 0),
          what + ": gbps is a number >= 0 or null", repr(g))
    passes = doc.get("passes")
    ok = isinstance(passes, list) and len(passes) >= 1
    if ok:
        p0 = passes[0]
        ok = (p0.get("n_in") == n and all(
            is_number(p.get("global_size")) and is_number(p.get("local_size"))
            and p["local_size"] >= 1 and p["global_size"] % p["local_size"] == 0
            for p in passes))
    check(ok, what + ": passes describe the launch (first reads n)", repr(passes))
    if verified:
        check(doc.get("verified") is True, what + ": verified is true",
              repr(doc.get("verified")))
        if typ not in ("float", "double") or op in ("min", "max"):
            check(doc.get("result") == doc.get("reference"),
                  what + ": exact result equals the reference",
                  "%r vs %r" % (doc.get("result"), doc.get("reference")))
    else:
        check(doc.get("verified") is None and doc.get("reference") is None,
              what + ": --no-verify gives verified/reference null",
              "%r %r" % (doc.get("verified"), doc.get("reference")))


# ------------------------------------------------------------ info

def test_info(version):
    rc, out, err = run(["--help"])
    opts = ["--kernel", "--op", "--type", "--n", "--input", "--device",
            "--platform", "--json", "--list-devices", "--list-kernels",
            "--version", "--wg", "--coarse", "--vec", "--layout", "--narrow",
            "--no-verify", "--seed", "--repeat"]
    missing = [o for o in opts if o not in out]
    check(rc == 0 and "Usage" in out and not missing and err == "",
          "--help: exit 0, usage with every option", show(rc, out, err) + " missing %s" % missing)
    rc2, out2, _ = run(["-h"])
    check(rc2 == 0 and out2 == out, "-h is --help")
    # The op and type lists come from the tables (clreduce_ops.def,
    # clreduce_types.def): every name the parser knows has its own line,
    # the name and its description, in the parser's order; none is
    # hand-typed, so a new row shows up here by itself.
    help_rows = [line.split() for line in out.split("\n")]
    for what in ("op", "type"):
        rc2, _, err2 = run(["--%s=nonesuch" % what])
        names = err2.split("(valid: ")[-1].strip().rstrip(")").split(", ")
        at = [next((i for i, r in enumerate(help_rows)
                    if len(r) > 1 and r[0] == name), None) for name in names]
        check(rc2 == 2 and len(names) > 3 and None not in at and
              at == sorted(at),
              "--help lists every %s on a line of its own, in order" % what,
              "%s at %s" % (names, at))
    rc, out, err = run(["--version"])
    check(rc == 0 and err == "" and re.match(
        r"clreduce %s \(commit [^()]+\)$" % re.escape(version), out.strip()),
          "--version prints 'clreduce %s (commit C)'" % version,
          show(rc, out, err))
    rc, out, err = run(["--list-kernels"])
    known = clrtest.KNOWN_REDUCTIONS + clrtest.KNOWN_SCANS
    check(rc == 0 and all(k in out for k in known),
          "--list-kernels names every kernel of the course notes",
          show(rc, out, err))
    doc = run_json(["--list-kernels"], "--list-kernels --json")
    if doc is not None:
        names = [k.get("name") for k in doc.get("kernels", [])]
        kinds = {k.get("name"): k.get("kind") for k in doc.get("kernels", [])}
        check(names[:4] == clrtest.KNOWN_REDUCTIONS and set(known) <= set(names),
              "--list-kernels --json: the reductions first, then the scans",
              repr(names))
        check(all(kinds[k] == "reduction" for k in REDUCE_KERNELS)
              and all(kinds[k] == "scan" for k in names[4:]),
              "--list-kernels --json: kinds", repr(kinds))
        check(all(k in out for k in names), "--list-kernels: human and JSON agree")
    rc, out, err = run(["--list-devices"])
    check(rc == 0 and out.strip() != "" and err == "",
          "--list-devices lists something", show(rc, out, err))
    doc = run_json(["--list-devices"], "--list-devices --json")
    if doc is not None:
        devs = doc.get("devices", [])
        ok = len(devs) >= 1 and all(
            d.get("device") and d.get("platform")
            and is_number(d.get("max_work_group_size"))
            and d.get("max_work_group_size") >= 1 for d in devs)
        check(ok, "--list-devices --json: devices with names and sizes", repr(devs)[:400])
        if devs:
            check(devs[0]["device"] in out,
                  "--list-devices human output names the JSON's device")
            # Selecting the listed device by a name substring and by index.
            name = devs[0]["device"]
            d2 = run_json(["--device=" + name[:8].upper(), "--n=100", "--repeat=1"],
                          "--device by upper-case name substring")
            check(d2 is not None and d2.get("device") == name,
                  "--device substring selects that device", repr(d2)[:200])
            d3 = run_json(["--platform=%d" % devs[0]["platform_index"],
                           "--device=%d" % devs[0]["device_index"], "--n=100",
                           "--repeat=1"], "--platform / --device by index")
            check(d3 is not None and d3.get("device") == name,
                  "--platform=N --device=N select that device", repr(d3)[:200])


# ------------------------------------------------------------ runs

def test_runs():
    # Every reduction kernel x a spread of ops and types, generated data.
    cases = [("sum", "float"), ("sum", "int"), ("prod", "double"),
             ("min", "long"), ("max", "uint"), ("and", "ulong"),
             ("or", "int"), ("max", "float"), ("xor", "uint"), ("xor", "long")]
    for k in REDUCE_KERNELS:
        for op, t in cases:
            what = "run %s %s %s n=2.5e3" % (k, op, t)
            doc = run_json(["--kernel=" + k, "--op=" + op, "--type=" + t,
                            "--n=2.5e3", "--repeat=2"], what)
            check_report(doc, what, k, op, t, 2500)
            if doc is not None and op in ("and", "or"):
                check(doc.get("result") in (0, 1) and doc.get("result_type") == "int",
                      what + ": logical result 0/1 of type int", repr(doc.get("result")))
    # Human output of a passing run.
    rc, out, err = run(["--n=1000", "--repeat=1", "--type=int"])
    check(rc == 0 and "verified: yes" in out and "result:" in out and err == "",
          "human output: result and 'verified: yes'", show(rc, out, err))
    # Defaults: coarse sum of float.
    doc = run_json(["--n=1e3", "--repeat=1"], "defaults")
    check_report(doc, "defaults", "coarse", "sum", "float", 1000)
    # --n forms.
    for form, n in [("2500", 2500), ("2.5e3", 2500), ("25e2", 2500),
                    ("0.25e4", 2500), ("2.5E3", 2500), ("1e3", 1000)]:
        doc = run_json(["--n=" + form, "--repeat=1"], "--n=" + form)
        check(doc is not None and doc.get("n") == n, "--n=%s means %d" % (form, n),
              repr(doc and doc.get("n")))
    doc = run_json(["--n", "2.5e3", "--repeat", "1"], "--n VALUE (separate argument)")
    check(doc is not None and doc.get("n") == 2500, "--n 2.5e3 as two arguments")
    # Large forms are accepted by the parser: the run fails on the device
    # it names (none: a usage error of --device, not of --n) before
    # anything is allocated.
    for form in ["100000000", "1e8", "2.5e6"]:
        rc, out, err = run(["--n=" + form, "--device=no-such-device-xyzzy"])
        check(rc == 2 and "--n" not in err and "device" in err.lower(),
              "--n=%s accepted by the parser (fails later on the device)" % form,
              show(rc, out, err))
    # Options.
    for extra, what in [(["--wg=64"], "--wg=64"), (["--wg=3"], "--wg=3"),
                        (["--coarse=7"], "--coarse=7"),
                        (["--coarse=1000", "--vec=8"], "--coarse=1000 --vec=8"),
                        (["--vec=16", "--layout=strided"], "--vec=16 --layout=strided"),
                        (["--vec=2", "--layout=contiguous"], "--vec=2 --layout=contiguous"),
                        (["--layout=auto"], "--layout=auto"),
                        (["--seed=123456789"], "--seed")]:
        for k in (["coarse"] if ("--vec" in " ".join(extra) or "--coarse" in " ".join(extra))
                  else REDUCE_KERNELS):
            doc = run_json(["--kernel=" + k, "--type=long", "--op=sum",
                            "--n=4099", "--repeat=1"] + extra, "%s %s" % (k, what))
            check_report(doc, "%s %s" % (k, what), k, "sum", "long", 4099)
    # --wg=1: one-element-per-item kernels cannot shrink their input with
    # it; a run either verifies or is refused with a message.
    for k in REDUCE_KERNELS:
        rc, out, err = run(["--wg=1", "--kernel=" + k, "--n=999", "--repeat=1",
                            "--type=int", "--json"])
        ok = (rc == 0 and json.loads(out).get("verified") is True) if rc == 0 else (
            rc in (2, 3) and out == "" and "work-group" in err)
        check(ok, "--wg=1 --kernel=%s: verified, or refused naming the work-group size" % k,
              show(rc, out, err))
    rc, out, err = run(["--wg=64", "--n=65536", "--repeat=1", "--json", "--kernel=sequential"])
    try:
        doc = json.loads(out)
        check(rc == 0 and doc["passes"][0]["local_size"] == 64,
              "--wg=64: the first pass runs with local size 64", repr(doc["passes"]))
    except (ValueError, KeyError, IndexError) as ex:
        check(False, "--wg=64 JSON", "%s %s" % (ex, show(rc, out, err)))
    # --narrow: 32-bit accumulator for int sums.
    doc = run_json(["--type=int", "--op=sum", "--narrow", "--n=3000", "--repeat=1"],
                   "--narrow")
    check(doc is not None and doc.get("result_type") == "int" and doc.get("verified") is True,
          "--narrow: int sum has result type int", repr(doc)[:300])
    doc = run_json(["--type=int", "--op=sum", "--n=3000", "--repeat=1"], "int sum")
    check(doc is not None and doc.get("result_type") == "long",
          "without --narrow: int sum has result type long")
    # --no-verify.
    doc = run_json(["--no-verify", "--n=1000", "--repeat=1"], "--no-verify")
    check_report(doc, "--no-verify", "coarse", "sum", "float", 1000, verified=False)
    # Same seed, same data and result; another seed, other data.
    a = run_json(["--seed=7", "--type=ulong", "--n=5000", "--repeat=1"], "seed 7")
    b = run_json(["--seed=7", "--type=ulong", "--n=5000", "--repeat=1"], "seed 7 again")
    c = run_json(["--seed=8", "--type=ulong", "--n=5000", "--repeat=1"], "seed 8")
    if a and b and c:
        check(a["result"] == b["result"] and a["result"] != c["result"]
              and a.get("seed") == 7, "--seed: reproducible, and it matters",
              "%r %r %r" % (a["result"], b["result"], c["result"]))


# ------------------------------------------------------------ --input

# The answers of data/README.md, written out (tests/make_data.py made the
# files; the values are exact).
DATA_ANSWERS = [
    ("float_1000.bin", "float", 1000, [("sum", -9), ("min", -8), ("max", 8)]),
    ("double_4097.bin", "double", 4097, [("sum", 3.75), ("min", -5), ("max", 5)]),
    ("double_prod_64.bin", "double", 64, [("prod", -0.125), ("min", -8), ("max", 8)]),
    ("int_65537.bin", "int", 65537,
     [("sum", 1020821504), ("min", -2147453962), ("max", 2147430868),
      ("xor", 2048196608)]),
    ("int_big_4099.bin", "int", 4099,
     [("sum", 4401773810963), ("min", 0), ("max", 2147101004)]),
    ("uint_1009.bin", "uint", 1009,
     [("sum", 2137155209624), ("min", 0), ("max", 4290363615),
      ("xor", 1017129664)]),
    ("long_30011.bin", "long", 30011,
     [("sum", -8993969930385276113), ("min", -4611686018427387904),
      ("max", 3835378032659428666), ("xor", 3835659507636139323)]),
    ("ulong_1025.bin", "ulong", 1025,
     [("sum", 18446743798294510591), ("min", 18446744072635809791),
      ("max", 18446744073709551615), ("xor", 18446744071840503807)]),
    ("int_last_zero_300.bin", "int", 300,
     [("and", 0), ("or", 1), ("min", 0), ("max", 7), ("sum", 1191)]),
]


def test_input():
    for name, t, n, answers in DATA_ANSWERS:
        path = os.path.join(DATA_DIR, name)
        for op, want in answers:
            for k in ["first-add", "coarse"]:
                what = "--input=%s --op=%s --kernel=%s" % (name, op, k)
                doc = run_json(["--input=" + path, "--type=" + t, "--op=" + op,
                                "--kernel=" + k, "--repeat=1"], what)
                check_report(doc, what, k, op, t, n)
                if doc is not None:
                    check(doc.get("result") == want and doc.get("seed") is None,
                          what + ": result %r" % (want,), repr(doc.get("result")))
    # --narrow on a file: the 32-bit wrapped sum.
    doc = run_json(["--input=" + os.path.join(DATA_DIR, "int_big_4099.bin"),
                    "--type=int", "--narrow", "--repeat=1"], "--input --narrow")
    check(doc is not None and doc.get("result") == -567667437,
          "--input int_big_4099.bin --narrow: -567667437", repr(doc and doc.get("result")))
    # --n must agree with the file.
    p = os.path.join(DATA_DIR, "float_1000.bin")
    doc = run_json(["--input=" + p, "--n=1e3", "--repeat=1"], "--input with matching --n")
    check(doc is not None and doc.get("n") == 1000, "--input with --n=1e3 (agrees)")
    expect_error(["--input=" + p, "--n=999"], 2, ["999", "1000", "float_1000.bin"],
                 "--input with a disagreeing --n")
    # Round trip: values written here, summed here exactly, read by clreduce.
    vals = [((i * 7919) % 20011) - 10005 for i in range(50021)]
    path = os.path.join(TMP, "roundtrip_long.bin")
    with open(path, "wb") as f:
        f.write(struct.pack("=%dq" % len(vals), *vals))
    doc = run_json(["--input=" + path, "--type=long", "--op=sum", "--repeat=1"],
                   "round trip")
    check(doc is not None and doc.get("result") == sum(vals) and doc.get("n") == len(vals),
          "round trip: a file written here sums to %d" % sum(vals),
          repr(doc and doc.get("result")))
    fvals = [float((i % 33) - 16) for i in range(7777)]
    path = os.path.join(TMP, "roundtrip_double.bin")
    with open(path, "wb") as f:
        f.write(struct.pack("=%dd" % len(fvals), *fvals))
    for op, want in [("sum", sum(fvals)), ("min", -16.0), ("max", 16.0)]:
        doc = run_json(["--input=" + path, "--type=double", "--op=" + op,
                        "--repeat=1"], "round trip double " + op)
        check(doc is not None and doc.get("result") == want,
              "round trip double %s = %r" % (op, want), repr(doc and doc.get("result")))


# ------------------------------------------------------------ errors

def kernel_copy(name, corrupt=None, text=None, prepend=False):
    """A copy of the kernel directory with one file changed."""
    d = tempfile.mkdtemp(prefix="clreduce-cli-kernels-", dir=TMP)
    for f in os.listdir(KERNEL_DIR):
        shutil.copy(os.path.join(KERNEL_DIR, f), os.path.join(d, f))
    if corrupt:
        p = os.path.join(d, corrupt)
        with open(p) as f:
            src = f.read()
        with open(p, "w") as f:
            f.write(text + src if prepend else src + text)
    return d


def test_errors():
    expect_error(["--kernel=foo", "--n=10"], 2, ["unknown kernel", "'foo'", "coarse"],
                 "unknown kernel")
    expect_error(["--op=median", "--n=10"], 2, ["unknown op", "'median'", "mean"],
                 "unknown op (the valid ones listed)")
    expect_error(["--type=quad", "--n=10"], 2, ["unknown type", "'quad'", "half"],
                 "unknown type (the valid ones listed)")
    expect_error(["--frobnicate"], 2, ["--frobnicate"], "unknown option")
    expect_error(["--n=10", "extra"], 2, ["extra"], "unexpected argument")
    expect_error(["--n"], 2, ["--n"], "--n without a value")
    for val, reason in [("0", "zero"), ("-5", "negative"), ("2.5", "integer"),
                        ("12abc", "number"), ("", "empty"), ("1e30", "large"),
                        ("abc", "number"), ("1.5e0", "integer"), ("0x10", "number"),
                        ("9223372036854775808", "large")]:
        expect_error(["--n=" + val], 2, ["--n", "'%s'" % val, reason],
                     "bad --n '%s'" % val)
    expect_error(["--vec=3", "--n=10"], 2, ["--vec", "'3'"], "bad --vec")
    expect_error(["--layout=diagonal", "--n=10"], 2, ["layout", "'diagonal'"],
                 "bad --layout")
    expect_error(["--wg=0", "--n=10"], 2, ["--wg"], "--wg=0")
    expect_error(["--seed=-1", "--n=10"], 2, ["--seed"], "bad --seed")
    expect_error(["--repeat=0", "--n=10"], 2, ["--repeat"], "--repeat=0")
    for t in ["float", "double"]:
        for op in ["and", "or", "xor"]:
            expect_error(["--op=" + op, "--type=" + t, "--n=10"], 2, [op, t],
                         "%s on %s" % (op, t))
    # A work-group size above the device's limit: refused at run time.
    rc, out, err = run(["--wg=1000000", "--n=1000", "--repeat=1"])
    check(rc in (2, 3) and "work-group" in err.lower() and out == "",
          "--wg above the device limit is refused with a message", show(rc, out, err))

    # Input files.
    missing = os.path.join(TMP, "does-not-exist.bin")
    expect_error(["--input=" + missing], 2, ["cannot read", missing],
                 "--input of a missing file")
    expect_error(["--input=" + TMP], 2, ["cannot read", TMP],
                 "--input of a directory")
    if os.geteuid() != 0:
        p = os.path.join(TMP, "unreadable.bin")
        with open(p, "wb") as f:
            f.write(b"\0" * 16)
        os.chmod(p, 0)
        expect_error(["--input=" + p], 2, ["cannot read", p], "--input unreadable (mode 000)")
    else:
        print("note: running as root, a mode-000 file is readable: "
              "unreadable input is tested with a missing file and a directory")
    empty = os.path.join(TMP, "empty.bin")
    open(empty, "wb").close()
    expect_error(["--input=" + empty], 2, ["empty", empty], "--input of an empty file")
    odd = os.path.join(TMP, "ten_bytes.bin")
    with open(odd, "wb") as f:
        f.write(b"\1" * 10)
    expect_error(["--input=" + odd, "--type=float"], 2, ["10 bytes", "multiple", "4"],
                 "--input of 10 bytes as float")
    expect_error(["--input=" + odd, "--type=double"], 2, ["10 bytes", "multiple", "8"],
                 "--input of 10 bytes as double")
    expect_error(["--input="], 2, ["--input"], "--input with an empty value")

    # No OpenCL platform: an ICD loader with an empty vendor directory, and
    # no extra ICDs named through OCL_ICD_FILENAMES (the lent GPU machine
    # sets it).
    empty_vendors = tempfile.mkdtemp(prefix="clreduce-no-icd-", dir=TMP)
    env = {"OCL_ICD_VENDORS": empty_vendors, "OPENCL_VENDOR_PATH": empty_vendors,
           "OCL_ICD_FILENAMES": None}
    expect_error(["--n=100"], 3, ["platform"], "no OpenCL platform (run)", env=env)
    expect_error(["--list-devices"], 3, ["platform"], "no OpenCL platform (--list-devices)",
                 env=env)
    # Listing kernels needs no platform.
    rc, out, err = run(["--list-kernels"], env=env)
    check(rc == 0 and "coarse" in out, "--list-kernels works without a platform",
          show(rc, out, err))

    # No matching device or platform: the command line's mistake (2).
    expect_error(["--device=nonexistent", "--n=100"], 2, ["device", "nonexistent"],
                 "--device=nonexistent")
    expect_error(["--platform=nonexistent", "--n=100"], 2, ["nonexistent"],
                 "--platform=nonexistent")

    # A kernel that does not build: exit 3, 'build failed', and the log.
    bad = kernel_copy("bad", "reduce_first_add.cl",
                      "\nclreduce_cli_corruption !!! not OpenCL C ;\n")
    env = {"CLREDUCE_KERNEL_DIR": bad, "CLREDUCE_CACHE_DIR": ""}
    rc, out, err = expect_error(["--kernel=first-add", "--n=100"], 3,
                                ["build failed", "reduce_first_add.cl",
                                 "clreduce_cli_corruption"],
                                "corrupted kernel source", env=env, one_line=False)
    check(err.split("\n")[0].startswith("clreduce: ") and "build" in err.split("\n")[0],
          "build failure: first line is the one-line message, the log follows",
          show(rc, out, err))
    rc, out, err = run(["--kernel=coarse", "--n=100", "--repeat=1"], env=env)
    check(rc == 0, "the other kernels still build from that directory", show(rc, out, err))

    # Missing kernel directory.
    expect_error(["--n=100"], 3, ["/nonexistent", "kernel"],
                 "CLREDUCE_KERNEL_DIR=/nonexistent",
                 env={"CLREDUCE_KERNEL_DIR": "/nonexistent"})

    # Exit 1: a kernel that builds but computes a wrong answer (its padding
    # value is 7 instead of the identity), so the verification must catch it.
    wrong = kernel_copy("wrong", "reduce_sequential.cl",
                        "#undef IDENTITY\n#define IDENTITY ((ACC_T)7)\n", prepend=True)
    env = {"CLREDUCE_KERNEL_DIR": wrong, "CLREDUCE_CACHE_DIR": ""}
    rc, out, err = run(["--kernel=sequential", "--type=int", "--n=1009", "--repeat=1"],
                       env=env)
    check(rc == 1 and "VERIFICATION FAILED" in out,
          "a wrong device answer -> exit 1, 'VERIFICATION FAILED'", show(rc, out, err))
    rc, out, err = run(["--kernel=sequential", "--type=int", "--n=1009", "--repeat=1",
                        "--json"], env=env)
    try:
        doc = json.loads(out)
        check(rc == 1 and doc.get("verified") is False
              and doc.get("result") != doc.get("reference")
              and doc.get("reference") is not None,
              "a wrong device answer in JSON: verified false, result != reference",
              show(rc, out, err))
    except ValueError as ex:
        check(False, "a wrong device answer in JSON parses", "%s %s" % (ex, show(rc, out, err)))
    rc, out, err = run(["--kernel=sequential", "--type=int", "--n=1009", "--repeat=1",
                        "--no-verify"], env=env)
    check(rc == 0, "the same wrong answer with --no-verify exits 0", show(rc, out, err))


# ------------------------------------------------------------ overflow

HUGE_COARSE = ["4611686018427387904", "4611686018427387905",
               "72057594037927937", "18446744073709551615"]


def test_overflow():
    """Coarse factors that wrap the launch arithmetic (gid * per_item, the
    scan tile wg * coarse): with --no-verify nothing checks the answer, so
    a run must either print the right one (exit 0) or refuse with a
    message (exit 2 or 3) -- never a wrong result with exit 0.  The answers are computed here."""
    n = 1000
    vals = [((i * 7919) % 2001) - 1000 for i in range(n)]
    path = os.path.join(TMP, "overflow_int.bin")
    with open(path, "wb") as f:
        f.write(struct.pack("<%di" % n, *vals))
    total = sum(vals)
    prefix, run_sum = [], 0
    for v in vals:
        run_sum += v
        prefix.append(run_sum)  # |run_sum| < 2^31: no int32 wrap
    for c in HUGE_COARSE:
        for layout in ["contiguous", "strided"]:
            what = "--coarse=%s --layout=%s --no-verify int sum" % (c, layout)
            rc, out, err = run(["--input=" + path, "--type=int", "--coarse=" + c,
                                "--layout=" + layout, "--no-verify", "--json",
                                "--repeat=1"])
            if rc == 0:
                try:
                    got = json.loads(out).get("result")
                except ValueError:
                    got = None
                check(got == total, what + ": right answer with exit 0",
                      "result %r, want %d; %s" % (got, total, show(rc, out, err)))
            else:
                check(rc in (2, 3) and "clreduce: " in err, what + ": refused",
                      show(rc, out, err))
        for k in ["kogge-stone", "kogge-stone-db", "brent-kung", "decoupled"]:
            what = "--kernel=%s --coarse=%s --no-verify --output" % (k, c)
            dest = os.path.join(TMP, "overflow_scan.bin")
            if os.path.exists(dest):
                os.unlink(dest)
            rc, out, err = run(["--input=" + path, "--type=int", "--kernel=" + k,
                                "--coarse=" + c, "--no-verify", "--repeat=1",
                                "--output=" + dest])
            if rc == 0:
                try:
                    with open(dest, "rb") as f:
                        got = list(struct.unpack("<%di" % n, f.read()))
                except (OSError, struct.error) as ex:
                    got = repr(ex)
                check(got == prefix, what + ": right scan written with exit 0",
                      "%s; %s" % (str(got)[:200], show(rc, out, err)))
            else:
                check(rc in (2, 3) and "clreduce: " in err, what + ": refused",
                      show(rc, out, err))


def nan_answer(op, vals):
    """NumPy's nan* semantics, computed here apart from the library: NaNs
    left out; no number gives 0 (nansum), NaN (nanmin, nanmax, nanmean)
    or NaN at index -1 (nanargmin, nanargmax)."""
    nums = [(v, i) for i, v in enumerate(vals) if v == v]
    if op == "nansum":
        return sum(v for v, _ in nums), None
    if not nums:
        return float("nan"), (-1 if op.startswith("nanarg") else None)
    if op == "nanmean":
        return sum(v for v, _ in nums) / len(nums), None
    want = min if op.endswith("min") else max
    best = want(v for v, _ in nums)
    first = next(i for v, i in nums if v == best)
    return best, (first if op.startswith("nanarg") else None)


def test_nan_ops():
    # NaN-skipping ops on files with NaNs nowhere, first, last, scattered
    # and everywhere, float and double: small integers, so every sum is
    # exact and the answers are known here without rounding.
    nan = float("nan")
    n = 4099
    base = [float(((i * 37) % 17) - 8) for i in range(n)]
    places = {
        "nowhere": lambda i: False,
        "first": lambda i: i == 0,
        "last": lambda i: i == n - 1,
        "scattered": lambda i: i % 13 == 5,
        "everywhere": lambda i: True,
    }
    for t, fmt in [("float", "f"), ("double", "d")]:
        for place, is_nan in places.items():
            vals = [nan if is_nan(i) else v for i, v in enumerate(base)]
            path = os.path.join(TMP, "nan_%s_%s.bin" % (place, t))
            with open(path, "wb") as f:
                f.write(struct.pack("<%d%s" % (n, fmt), *vals))
            for op in ["nansum", "nanmin", "nanmax", "nanargmin", "nanargmax",
                       "nanmean"]:
                what = "--input NaN %s %s --op=%s" % (place, t, op)
                doc = run_json(["--input=" + path, "--type=" + t, "--op=" + op,
                                "--repeat=1"], what)
                check_report(doc, what, "coarse", op, t, n)
                if doc is None:
                    continue
                want, index = nan_answer(op, vals)
                got = doc.get("result")
                if want != want:
                    ok = got == "nan"
                elif op == "nanmean":
                    ok = is_number(got) and abs(got - want) <= 1e-6 * max(1, abs(want))
                else:
                    ok = got == want
                check(ok, what + ": result %r" % (want,), repr(got))
                if index is not None:
                    check(doc.get("result_index") == index,
                          what + ": index %d" % index, repr(doc.get("result_index")))
    # A mean of a map expression is checked against the expression's
    # sequential mean in double, with the bound of a sum over n (it failed
    # every run before: the reference was a float mean with no bound).
    for op in ["mean", "nanmean"]:
        for t in ["float", "double"]:
            what = "--op=%s --type=%s --map='x*3'" % (op, t)
            doc = run_json(["--op=" + op, "--type=" + t, "--map=x*3",
                            "--n=100003", "--repeat=2"], what)
            check_report(doc, what, "coarse", op, t, 100003)
    # Integers: each is its plain op; --op=nansum of an int file is its sum.
    doc = run_json(["--input=" + os.path.join(DATA_DIR, "int_65537.bin"),
                    "--type=int", "--op=nansum", "--repeat=1"], "nansum of int")
    check(doc is not None and doc.get("result") == 1020821504,
          "nansum of int_65537.bin is its sum", repr(doc and doc.get("result")))


def test_group():
    """--device=all: the bandwidth from the call's wall time, beside each
    part's from its kernel time (PoCL's CPU device twice, as the group
    test runs it; then once: "1 device")."""
    n = 1000003
    for devices, count in (("pthread pthread", 2), ("pthread", 1)):
        env = {"POCL_DEVICES": devices}
        args = ["--device=all", "--n=%d" % n, "--repeat=3"]
        what = "--device=all on %d device%s" % (count, "s"[:count != 1])
        doc = clrtest.run_json(EXE, args, what, env=env)
        if doc is None:
            continue
        parts = doc.get("parts", [])
        wall = doc.get("wall_ms")
        want = 4.0 * n / wall / 1e6 if clrtest.is_number(wall) and wall > 0 \
            else None
        check(len(parts) == count and doc.get("verified") is True and
              want is not None and doc.get("gbps") == doc.get("gbps_call") and
              abs(doc["gbps"] - want) <= 1e-6 * want and
              all(clrtest.is_number(p.get("gbps")) and p["gbps"] > 0 and
                  abs(p["gbps"] - 4.0 * p["n"] / p["kernel_ms"] / 1e6) <=
                  1e-6 * p["gbps"] for p in parts),
              what + ": JSON gbps (= gbps_call) from the call's wall time, "
              "each part's gbps from its kernel time", repr(doc)[:600])
        rc, out, err = clrtest.run([EXE] + args, env=env)
        label = ("(the call's wall time, %d device%s); %s:" %
                 (count, "s"[:count != 1],
                  "parts by their kernel times" if count > 1
                  else "its part by its kernel time"))
        line = [l for l in out.splitlines() if l.startswith("bandwidth:")]
        check(rc == 0 and len(line) == 1 and label in line[0] and
              line[0].count("GB/s") == count + 1 and
              re.search(r"^wall: .* over %d device%s \(" %
                        (count, "s"[:count != 1]), out, re.M),
              what + ": the call's bandwidth and the parts', 'over %d "
              "device%s'" % (count, "s"[:count != 1]), show(rc, out, err))


def without_timings(doc):
    """A JSON report less what differs from run to run: the times
    (*_ms, a pass's ms) and the bandwidths (gbps*)."""
    if isinstance(doc, dict):
        return {k: without_timings(v) for k, v in doc.items()
                if not re.search(r"(^|_)ms($|_)|gbps", k)}
    if isinstance(doc, list):
        return [without_timings(v) for v in doc]
    return doc


def test_progress():
    """--progress: a line on stderr, redrawn (\\r) with the phase, how
    far it is (a percentage where src/check's loops report: generating,
    the CPU reference) and the seconds so far, ended before the report;
    stdout (--json) keeps only the report, the same as without it.
    Without it, stderr not being a terminal: nothing.  Messages clear the
    line first."""
    # min's data (log-uniform magnitudes) is slow to generate: some 1 s
    # for 5e7 floats, and as long for the CPU reference (a redraw each
    # 200 ms)
    args = ["--n=5e7", "--op=min", "--repeat=2", "--json"]
    rc, out, err = clrtest.run([EXE] + args + ["--progress"])
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    phases = [p for p in err.replace("\n", "\r").split("\r") if p]
    check(rc == 0 and doc is not None and doc.get("verified") is True and
          err.endswith("\n") and phases and
          all(re.search(r", \d+ s$", p) for p in phases) and
          any("timed run" in p for p in phases),
          "--progress: phases with their seconds on stderr, the JSON "
          "report alone on stdout", show(rc, out, err))
    # each draw of a phase that reports: its percentage, never falling;
    # generating's from its first draw (its work is planned with it)
    gen = "generating 50000000 float values"
    pcts = {}
    for p in phases:
        m = re.match(r"(.*): (\d+)%, \d+ s$", p)
        if m:
            pcts.setdefault(m.group(1), []).append(int(m.group(2)))
    # (how many draws a phase gets depends on the machine's speed: the
    # CPU reference of a fast one ends before its first redraw, so no
    # draw count or growth is asked for here; test progress checks the
    # fractions themselves, call by call)
    ref = [k for k in pcts if k.endswith(": the CPU reference")]
    gen_lines = [p for p in phases if p.startswith(gen)]
    check(gen_lines and len(pcts.get(gen, [])) == len(gen_lines) and
          len(ref) <= 1 and
          any(p.endswith(" s") and "the CPU reference" in p for p in phases)
          and all(v == sorted(v) and v[-1] <= 100 for v in pcts.values()),
          "--progress: generating with a percentage on every draw, never "
          "falling, and the CPU reference's phase", show(rc, out, err))
    rc2, out2, err2 = clrtest.run([EXE] + args)
    try:
        doc2 = json.loads(out2)
    except ValueError:
        doc2 = None
    check(rc2 == 0 and err2 == "" and doc2 is not None and doc is not None and
          list(doc2) == list(doc) and
          without_timings(doc2) == without_timings(doc),
          "--json without --progress: the same report (its times aside), "
          "nothing on stderr", show(rc2, out2, err2))
    rc, out, err = clrtest.run([EXE, "--n=1e6", "--repeat=3"])
    check(rc == 0 and err == "" and "verified: yes" in out,
          "no --progress, stderr no terminal: nothing on stderr",
          show(rc, out, err))
    rc, out, err = clrtest.run([EXE, "--progress", "--n=1000",
                                "--input=/nonexistent/x.f32"])
    lines = err.replace("\r", "\n").splitlines()
    msg = [l for l in lines if l.startswith("clreduce: ")]
    check(rc == 2 and len(msg) == 1 and out == "",
          "--progress and an error: the message on a line of its own",
          show(rc, out, err))


def main():
    global EXE, KERNEL_DIR, DATA_DIR, TMP
    a = clrtest.arguments(
        ("--data-dir", {"required": True}),
        ("--version", {"default": "1.1.0"}),
        ("--only", {"default": None,
                    "help": "info, runs, input, nan, errors, overflow, "
                            "group or progress"}),
    )
    EXE = os.path.abspath(a.exe)
    reductions, scans = clrtest.kernels(EXE)
    REDUCE_KERNELS[:] = reductions
    ALL_KERNELS[:] = reductions + scans
    KERNEL_DIR = a.kernel_dir
    DATA_DIR = a.data_dir
    os.environ.setdefault("CLREDUCE_KERNEL_DIR", KERNEL_DIR)
    with tempfile.TemporaryDirectory(prefix="clreduce-cli-") as tmp:
        TMP = tmp
        parts = {"info": lambda: test_info(a.version), "runs": test_runs,
                 "input": test_input, "nan": test_nan_ops,
                 "errors": test_errors,
                 "overflow": test_overflow, "group": test_group,
                 "progress": test_progress}
        for name, fn in parts.items():
            if a.only and a.only != name:
                continue
            print("== " + name)
            fn()
    return clrtest.finish("test_cli")


if __name__ == "__main__":
    sys.exit(main())
