#!/usr/bin/env python3
"""Tests of the clreduce command's prefix scans (stdlib only).

    test_scan_cli.py CLREDUCE_EXE

Environment: CLREDUCE_KERNEL_DIR (default: the source tree's cl/) and
CLREDUCE_CACHE_DIR, as meson sets them.

Covers, for every scan kernel (kogge-stone, kogge-stone-db, brent-kung,
decoupled):
  * inclusive and exclusive scans of data written here (--input), every op
    (sum, prod, min, max) and every type, at awkward sizes (1, 2, 7, 1000,
    4099, 65537), with --output read back here: its length is n x the size
    of the type and every element equals a scan computed here (integers
    exactly, wrapping modulo 2^bits in the input type; float/double min and
    max exactly; float/double sums exactly on data whose partial sums are
    representable, otherwise within gamma_m(u) x the running sum of |x| for
    the m elements covered; products within gamma_m(u) x |product|); an
    exclusive scan starts from the op's identity;
  * the JSON report: kernel, scan, exclusive, op, type, result_type, n,
    seed, data, device, verified, kernel_ms > 0, gbps = 2 n size / time,
    passes, output, and the result equal to the last element written;
  * the human report, --wg / --coarse / --repeat / --seed on scans,
    generated data (reproducible, and its total equal to a reduction's),
    an existing output file replaced, --input and --output naming the same
    file, --no-verify, and one scan of 1e6 elements;
  * errors: and/or with a scan kernel (exit 2), an unwritable --output or
    one that names a directory (exit 3, nothing left behind), --output and
    --exclusive with a reduction kernel (exit 2), input files that are
    empty or not a whole number of elements, --n disagreeing with --input
    (exit 2), and a scan kernel that computes a wrong answer (exit 1, and
    the output file is not written: an old one is left as it was).

Every check prints one line; the last line is "N passed, N failed".
"""

import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

EXE = None
KERNEL_DIR = None
TMP = None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, is_number, show  # noqa: E402
run, expect_error, run_json = clrtest.bind(lambda: EXE)

# Filled in main() from `clreduce --list-kernels --json`.
SCAN_KERNELS = []
REDUCE_KERNELS = []
SIZES = [1, 2, 7, 1000, 4099, 65537]

# struct code, size in bytes, and for integers (bits, signed).
TYPES = {
    "float": ("f", 4, None),
    "double": ("d", 8, None),
    "int": ("i", 4, (32, True)),
    "uint": ("I", 4, (32, False)),
    "long": ("q", 8, (64, True)),
    "ulong": ("Q", 8, (64, False)),
}
UNIT_ROUNDOFF = {"float": 2.0**-24, "double": 2.0**-53}
TINY = 2.0**-1022  # covers a denormal result's absolute rounding


def json_value(v):
    """A JSON result: a number, or "inf" / "-inf" / "nan" as a string."""
    return float(v) if isinstance(v, str) else v


# ------------------------------------------------------------ raw files


def write_values(path, typ, xs):
    code = TYPES[typ][0]
    with open(path, "wb") as f:
        f.write(struct.pack("=%d%s" % (len(xs), code), *xs))


def read_values(path, typ):
    """The values of a raw native-endian file, or None with the reason."""
    code, size, _ = TYPES[typ]
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as ex:
        return None, "cannot read %s: %s" % (path, ex)
    if len(raw) % size:
        return None, "%d bytes, not a multiple of %d" % (len(raw), size)
    return list(struct.unpack("=%d%s" % (len(raw) // size, code), raw)), ""


def f32(x):
    """x rounded to float."""
    return struct.unpack("=f", struct.pack("=f", x))[0]


# ------------------------------------------------------------ reference


def wrap(v, typ):
    bits, signed = TYPES[typ][2]
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def identity(op, typ):
    """The op's identity: what an exclusive scan starts from."""
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if TYPES[typ][2] is None:
        return math.inf if op == "min" else -math.inf
    bits, signed = TYPES[typ][2]
    if op == "min":
        return (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    return -(1 << (bits - 1)) if signed else 0


def exact_scan(op, typ, xs, exclusive):
    """Integers (wrapping in typ) and float min/max: the exact scan."""
    integer = TYPES[typ][2] is not None
    acc = identity(op, typ)
    out = []
    for x in xs:
        if exclusive:
            out.append(acc)
        if op == "sum":
            acc = wrap(acc + x, typ) if integer else acc + x
        elif op == "prod":
            acc = wrap(acc * x, typ) if integer else acc * x
        elif op == "min":
            acc = min(acc, x)
        else:
            acc = max(acc, x)
        if not exclusive:
            out.append(acc)
    return out


def gamma(m, u):
    return m * u / (1.0 - m * u)


def compare_exact(got, want):
    """Index of the first mismatch, or -1."""
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w or (
            isinstance(g, float) and math.copysign(1, g) != math.copysign(1, w)
        ):
            return i
    return -1


def check_same(what, got, want):
    """One check: got equals want element for element."""
    i = compare_exact(got, want)
    check(
        i < 0,
        what,
        ("first mismatch at %d: got %r, want %r" % (i, got[i], want[i]))
        if i >= 0
        else "",
    )


def compare_bounded(got, refs):
    """got against refs, one (reference, bound) per element.  Returns
    (index of the worst element, its error / bound, first index out of
    its bound or -1)."""
    worst, worst_ratio, first_bad = -1, 0.0, -1
    for i, (ref, bound) in enumerate(refs):
        err = abs(got[i] - ref) if math.isfinite(got[i]) else math.inf
        ratio = err / bound
        if ratio > worst_ratio or worst < 0:
            worst, worst_ratio = i, ratio
        if err > bound and first_bad < 0:
            first_bad = i
    return worst, worst_ratio, first_bad


def sum_bounds(typ, xs, exclusive, scale):
    """Float/double sums.  Every x is an integer K / 2^scale, so the
    running sum is kept exactly in integers.  Element i, covering m
    elements, must be within gamma_m(u) * sum|x| + u |s| of the exact s
    (any order of m - 1 additions in the type, or a wider accumulator
    rounded once), plus the double rounding of the exact value here.
    Yields (reference, bound) per element."""
    u = UNIT_ROUNDOFF[typ]
    den = 2**scale
    s = 0
    abs_s = 0
    for i, x in enumerate(xs):
        k = int(x * den)
        if not exclusive:
            s += k
            abs_s += abs(k)
        m = i if exclusive else i + 1
        ref = s / den  # correctly rounded
        yield ref, gamma(m, u) * (abs_s / den) + (u + 2.0**-52) * abs(ref) + TINY
        if exclusive:
            s += k
            abs_s += abs(k)


def compare_sum(typ, got, xs, exclusive, scale):
    return compare_bounded(got, sum_bounds(typ, xs, exclusive, scale))


def prod_bounds(typ, xs, exclusive):
    """Float/double products against a running product in double here:
    within (gamma_m(u) + gamma_m(2^-53) + u) |p| for m factors.  Yields
    (reference, bound) per element."""
    u = UNIT_ROUNDOFF[typ]
    p = 1.0
    for i, x in enumerate(xs):
        if not exclusive:
            p *= x
        m = i if exclusive else i + 1
        yield p, (gamma(m, u) + gamma(m, 2.0**-53) + u) * abs(p) + TINY
        if exclusive:
            p *= x


def compare_prod(typ, got, xs, exclusive):
    return compare_bounded(got, prod_bounds(typ, xs, exclusive))


# ------------------------------------------------------------ data


def make_data(op, typ, n, rng, flavor=""):
    """(values, scale): values exactly representable in typ; for float sums
    every value is an integer / 2^scale."""
    integer = TYPES[typ][2]
    if integer:
        bits, signed = integer
        lo, hi = (
            (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
            if signed
            else (0, (1 << bits) - 1)
        )
        if op == "prod":
            # Odd factors: the wrapped product never becomes 0 for good.
            pool = [-3, -1, 1, 3, 5, -7] if signed else [1, 3, 5, 7, 9]
            return [rng.choice(pool) for _ in range(n)], 0
        # Full range: sums wrap all the time.
        return [rng.randint(lo, hi) for _ in range(n)], 0
    if op == "sum":
        if flavor == "exact":
            # Multiples of 1/256 in [-4, 4]: every contiguous partial sum
            # of these is representable, so any order of additions is exact.
            return [rng.randint(-1024, 1024) / 256.0 for _ in range(n)], 8
        scale = 24 if typ == "float" else 53
        # Positive drift, mixed signs; the sums round.
        return [
            rng.randint(-(1 << (scale - 1)), 1 << scale) / 2.0**scale for _ in range(n)
        ], scale
    if op == "prod":
        # +-(1 + k/4096): the product stays near 1 for any n.
        return [
            rng.choice((-1, 1)) * (1 + rng.randint(-8, 8) / 4096.0) for _ in range(n)
        ], 0
    # min / max: magnitudes over many binades, and an infinity of the
    # op's direction part way through (odd n >= 7).
    xs = []
    for _ in range(n):
        x = rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** rng.randint(-30, 30)
        xs.append(f32(x) if typ == "float" else x)
    if n >= 7 and n % 2:
        xs[(3 * n) // 4] = -math.inf if op == "min" else math.inf
    return xs, 0


# ------------------------------------------------------------ one scan


def check_scan_json(doc, what, kernel, op, typ, n, exclusive, output, seed=None):
    """The fields of a scan's JSON report."""
    if doc is None:
        return
    want_keys = [
        "kernel",
        "scan",
        "exclusive",
        "op",
        "type",
        "result_type",
        "n",
        "seed",
        "data",
        "device",
        "result",
        "reference",
        "verified",
        "exact",
        "output",
        "kernel_ms",
        "kernel_ms_min",
        "kernel_ms_max",
        "gbps",
        "h2d_ms",
        "d2h_ms",
        "build_ms",
        "passes",
        "repeat",
        "error_depth",
    ]
    missing = [k for k in want_keys if k not in doc]
    check(not missing, what + ": JSON has every field", "missing %s" % missing)
    got = tuple(
        doc.get(k)
        for k in ("kernel", "scan", "exclusive", "op", "type", "result_type", "n")
    )
    want = (kernel, True, bool(exclusive), op, typ, typ, n)
    check(
        got == want,
        what + ": kernel/scan/exclusive/op/type/result_type/n",
        "got %r, want %r" % (got, want),
    )
    check(
        isinstance(doc.get("device"), str) and doc.get("device") != "",
        what + ": device named",
        repr(doc.get("device")),
    )
    check(
        doc.get("verified") is True,
        what + ": verified is true",
        repr(doc.get("verified")),
    )
    check(
        doc.get("output") == output,
        what + ": output names the file",
        repr(doc.get("output")),
    )
    if seed is None:
        check(
            doc.get("seed") is None and "from file" in str(doc.get("data")),
            what + ": seed null, data from the file",
            "%r %r" % (doc.get("seed"), doc.get("data")),
        )
    else:
        check(doc.get("seed") == seed, what + ": seed %d" % seed, repr(doc.get("seed")))
    ms, lo, hi = (
        doc.get("kernel_ms"),
        doc.get("kernel_ms_min"),
        doc.get("kernel_ms_max"),
    )
    check(
        all(is_number(v) for v in (ms, lo, hi)) and 0 < lo <= ms <= hi,
        what + ": 0 < kernel_ms_min <= kernel_ms <= kernel_ms_max",
        "%r %r %r" % (lo, ms, hi),
    )
    for k in ("h2d_ms", "d2h_ms", "build_ms"):
        check(
            is_number(doc.get(k)) and doc.get(k) >= 0,
            what + ": %s >= 0" % k,
            repr(doc.get(k)),
        )
    g = doc.get("gbps")
    if is_number(ms) and ms > 0:
        want_g = 2.0 * n * TYPES[typ][1] / ms / 1e6
        check(
            is_number(g) and g > 0 and abs(g - want_g) <= 0.01 * want_g,
            what + ": gbps = 2 n size / kernel_ms (read + write)",
            "gbps %r, 2*%d*%d/%r/1e6 = %r" % (g, n, TYPES[typ][1], ms, want_g),
        )
    passes = doc.get("passes")
    ok = isinstance(passes, list) and len(passes) >= 1
    if ok:
        ok = passes[0].get("n_in") == n and all(
            is_number(p.get("global_size"))
            and is_number(p.get("local_size"))
            and p["local_size"] >= 1
            and p["global_size"] % p["local_size"] == 0
            for p in passes
        )
    check(ok, what + ": passes non-empty, the first reads n", repr(passes)[:400])
    if TYPES[typ][2] is not None or op in ("min", "max"):
        check(
            doc.get("exact") is True and doc.get("result") == doc.get("reference"),
            what + ": exact, result equals the reference",
            "%r %r %r" % (doc.get("exact"), doc.get("result"), doc.get("reference")),
        )


def check_output(path, op, typ, xs, exclusive, scale, what):
    """The --output file: n x size bytes, and the scan of xs."""
    n = len(xs)
    size = TYPES[typ][1]
    try:
        length = os.path.getsize(path)
    except OSError as ex:
        check(False, what + ": output file written", str(ex))
        return None
    check(
        length == n * size,
        what + ": output is n x %d = %d bytes" % (size, n * size),
        "%d bytes" % length,
    )
    got, why = read_values(path, typ)
    if got is None or len(got) != n:
        check(False, what + ": output readable as %d %s" % (n, typ), why)
        return got
    check(
        not os.path.exists(path + ".tmp"),
        what + ": no temporary file left",
        path + ".tmp exists",
    )
    if exclusive:
        ident = identity(op, typ)
        check(
            got[0] == ident,
            what + ": exclusive scan starts from the identity %r" % (ident,),
            "got %r" % (got[0],),
        )
    if TYPES[typ][2] is not None or op in ("min", "max"):
        check_same(
            what + ": every element equals the exact scan",
            got,
            exact_scan(op, typ, xs, exclusive),
        )
    elif op == "sum" and scale == 8:
        check_same(
            what + ": every element equals the exact sum (representable data)",
            got,
            exact_scan(op, typ, xs, exclusive),  # exact in double
        )
    else:
        if op == "sum":
            worst, ratio, bad = compare_sum(typ, got, xs, exclusive, scale)
            how = "gamma_m(u) sum|x|"
        else:
            worst, ratio, bad = compare_prod(typ, got, xs, exclusive)
            how = "gamma_m(u) |p|"
        check(
            bad < 0,
            what + ": every element within %s (worst %.3g of its bound)" % (how, ratio),
            "first element out of bound: %d (got %r); worst %d at %.3g of the bound"
            % (bad, got[bad] if bad >= 0 else None, worst, ratio),
        )
    return got


def scan_file_case(kernel, op, typ, n, exclusive, rng, flavor="", extra=(), tag=""):
    """Scan data written here; check the report and the output file."""
    what = (
        "%s %s %s %s n=%d%s"
        % (
            kernel,
            "exclusive" if exclusive else "inclusive",
            op,
            typ,
            n,
            (" " + " ".join(extra)) if extra else "",
        )
        + tag
    )
    xs, scale = make_data(op, typ, n, rng, flavor)
    base = "%s_%s_%s_%d_%d%s" % (kernel, op, typ, n, exclusive, flavor)
    inp = os.path.join(TMP, "in_" + base + ".bin")
    out = os.path.join(TMP, "out_" + base + ".bin")
    write_values(inp, typ, xs)
    args = [
        "--kernel=" + kernel,
        "--op=" + op,
        "--type=" + typ,
        "--input=" + inp,
        "--output=" + out,
        "--repeat=1",
    ] + list(extra)
    if exclusive:
        args.append("--exclusive")
    doc = run_json(args, what)
    check_scan_json(doc, what, kernel, op, typ, n, exclusive, out)
    got = check_output(out, op, typ, xs, exclusive, scale, what)
    if doc is not None and got:
        last = got[-1]
        res = json_value(doc.get("result"))
        if typ == "float" and is_number(res):
            res = f32(res)
        check(
            res == last,
            what + ": JSON result is the last element written",
            "result %r, last %r" % (doc.get("result"), last),
        )
    for p in (inp, out):
        if os.path.exists(p):
            os.remove(p)


# ------------------------------------------------------------ parts

# (op, type, flavor): every op and every type; each kernel runs them all.
COMBOS = [
    ("sum", "int", ""), ("sum", "float", ""), ("min", "uint", ""),
    ("prod", "double", ""), ("sum", "ulong", ""), ("max", "float", ""),
    ("sum", "double", ""), ("prod", "int", ""), ("min", "double", ""),
    ("sum", "long", ""), ("max", "int", ""), ("sum", "float", "exact"),
]
# Further pairs, each on one kernel, inclusive and exclusive.
EXTRA_COMBOS = [
    ("prod", "float", ""), ("prod", "ulong", ""), ("prod", "uint", ""),
    ("prod", "long", ""), ("min", "int", ""), ("min", "long", ""),
    ("min", "float", ""), ("max", "long", ""), ("max", "ulong", ""),
    ("max", "double", ""), ("sum", "uint", ""), ("sum", "double", "exact"),
]


def test_sizes():
    """Every kernel, every size, inclusive and exclusive: 12 runs a kernel,
    each on another (op, type); the offset k makes each pair meet both modes
    and several sizes across the kernels."""
    rng = random.Random(20240601)
    for k, kernel in enumerate(SCAN_KERNELS):
        for j, n in enumerate(SIZES):
            for exclusive in (False, True):
                op, typ, flavor = COMBOS[(2 * j + int(exclusive) + 3 * k) % len(COMBOS)]
                scan_file_case(kernel, op, typ, n, exclusive, rng, flavor)
    for i, (op, typ, flavor) in enumerate(EXTRA_COMBOS):
        kernel = SCAN_KERNELS[i % len(SCAN_KERNELS)]
        for exclusive in (False, True):
            scan_file_case(
                kernel, op, typ, 4099 if i % 2 else 1000, exclusive, rng, flavor
            )


def test_options():
    rng = random.Random(7)
    # Tuning options on every kernel, the output still the exact scan.
    for kernel in SCAN_KERNELS:
        scan_file_case(
            kernel, "sum", "long", 4099, True, rng, extra=("--wg=3", "--coarse=5")
        )
        scan_file_case(kernel, "max", "uint", 65537, False, rng, extra=("--wg=64",))
    rc, out, err = run(
        ["--kernel=brent-kung", "--wg=64", "--n=65537", "--repeat=1", "--json"]
    )
    try:
        doc = json.loads(out)
        check(
            rc == 0 and doc["passes"][0]["local_size"] == 64,
            "--wg=64 on a scan: the first pass runs with local size 64",
            repr(doc["passes"]),
        )
    except (ValueError, KeyError, IndexError) as ex:
        check(False, "--wg=64 scan JSON", "%s %s" % (ex, show(rc, out, err)))
    doc = run_json(
        ["--kernel=kogge-stone-db", "--n=4099", "--repeat=3", "--type=int"],
        "--repeat=3",
    )
    check(
        doc is not None and doc.get("repeat") == 3,
        "--repeat=3 on a scan: repeat 3",
        repr(doc and doc.get("repeat")),
    )

    # The human report.
    inp = os.path.join(TMP, "human_in.bin")
    outp = os.path.join(TMP, "human_out.bin")
    xs = list(range(1, 101))
    write_values(inp, "int", xs)
    for exclusive in (False, True):
        args = [
            "--kernel=kogge-stone",
            "--type=int",
            "--input=" + inp,
            "--output=" + outp,
            "--repeat=1",
        ]
        rc, out, err = run(args + (["--exclusive"] if exclusive else []))
        mode = "exclusive" if exclusive else "inclusive"
        last = 4950 if exclusive else 5050
        check(
            rc == 0
            and err == ""
            and "verified: yes" in out
            and "output:     " + outp in out
            and "kogge-stone %s sum of int -> int" % mode in out
            and "last element %d" % last in out
            and "(read + write)" in out,
            "human report of an %s scan: mode, last element %d, output, verified"
            % (mode, last),
            show(rc, out, err),
        )
        got, _ = read_values(outp, "int")
        want = exact_scan("sum", "int", xs, exclusive)
        check(
            got == want,
            "human run (%s): output file is the scan" % mode,
            repr(got and got[:5]),
        )

    # An existing output file (larger than the new one) is replaced whole.
    with open(outp, "wb") as f:
        f.write(b"\xab" * 100000)
    rc, out, err = run(
        [
            "--kernel=brent-kung",
            "--type=int",
            "--input=" + inp,
            "--output=" + outp,
            "--repeat=1",
            "--json",
        ]
    )
    got, why = read_values(outp, "int")
    check(
        rc == 0 and got == exact_scan("sum", "int", xs, False),
        "an existing, larger output file is replaced by the scan (400 bytes)",
        show(rc, out, err) + " " + why + " size %d" % os.path.getsize(outp),
    )

    # --input and --output naming one file: the file becomes its scan.
    same = os.path.join(TMP, "same.bin")
    ys = [rng.randint(-(2**63), 2**63 - 1) for _ in range(4099)]
    write_values(same, "long", ys)
    rc, out, err = run(
        [
            "--kernel=decoupled",
            "--type=long",
            "--op=max",
            "--input=" + same,
            "--output=" + same,
            "--repeat=1",
        ]
    )
    got, why = read_values(same, "long")
    check(
        rc == 0 and got == exact_scan("max", "long", ys, False),
        "--input and --output the same file: replaced by its scan",
        show(rc, out, err) + " " + why,
    )

    # --n agreeing with --input is accepted.
    doc = run_json(
        [
            "--kernel=kogge-stone",
            "--type=int",
            "--input=" + inp,
            "--n=100",
            "--repeat=1",
        ],
        "--input with a matching --n",
    )
    check(doc is not None and doc.get("n") == 100, "--input with --n=100 (agrees)")


def test_generated():
    """Generated data: reproducible per seed, and the inclusive scan's last
    element equals the reduction of the same data."""
    outs = {}
    for seed in (7, 7, 8):
        p = os.path.join(TMP, "gen_%d_%d.bin" % (seed, len(outs)))
        what = "generated long sum scan, seed %d" % seed
        doc = run_json(
            [
                "--kernel=decoupled",
                "--type=long",
                "--op=sum",
                "--n=65537",
                "--seed=%d" % seed,
                "--output=" + p,
                "--repeat=1",
            ],
            what,
        )
        check_scan_json(
            doc, what, "decoupled", "sum", "long", 65537, False, p, seed=seed
        )
        got, why = read_values(p, "long")
        check(
            got is not None and len(got) == 65537, what + ": 65537 values written", why
        )
        outs[(seed, len(outs))] = got
    a, b, c = outs[(7, 0)], outs[(7, 1)], outs[(8, 2)]
    check(a == b and a != c, "--seed on a scan: reproducible, and it matters")
    if a:
        # Exclusive: the same data shifted right by one, from 0.
        p = os.path.join(TMP, "gen_excl.bin")
        same_data = ["--type=long", "--op=sum", "--n=65537", "--seed=7"]
        rc, out, err = run(
            ["--kernel=kogge-stone", "--exclusive", "--output=" + p, "--repeat=1"]
            + same_data
        )
        e, _ = read_values(p, "long")
        check(
            rc == 0 and e == [0] + a[:-1],
            "generated data: exclusive = inclusive shifted right from 0",
            show(rc, out, err),
        )
        doc = run_json(
            ["--kernel=coarse", "--repeat=1"] + same_data,
            "reduction of the same generated data",
        )
        check(
            doc is not None and doc.get("result") == a[-1],
            "generated data: the scan's last element equals the reduction",
            "%r vs %r" % (doc and doc.get("result"), a[-1]),
        )
    # --no-verify still writes the output.
    p = os.path.join(TMP, "noverify.bin")
    rc, out, err = run(
        [
            "--kernel=brent-kung",
            "--type=double",
            "--op=min",
            "--n=1000",
            "--no-verify",
            "--output=" + p,
            "--repeat=1",
            "--json",
        ]
    )
    try:
        doc = json.loads(out)
        got, _ = read_values(p, "double")
        check(
            rc == 0
            and doc.get("verified") is None
            and doc.get("output") == p
            and got is not None
            and len(got) == 1000
            and all(got[i + 1] <= got[i] for i in range(999)),
            "--no-verify: verified null, output written (a non-increasing prefix min)",
            show(rc, out, err),
        )
    except ValueError as ex:
        check(False, "--no-verify JSON", "%s %s" % (ex, show(rc, out, err)))


def test_big():
    """One scan of 1e6 elements: int sums that wrap, checked exactly."""
    rng = random.Random(1000000)
    scan_file_case("decoupled", "sum", "int", 1000000, False, rng, tag=" (1e6)")


def kernel_copy(name, text):
    """A copy of the kernel directory with text put before name's source."""
    d = tempfile.mkdtemp(prefix="clreduce-scan-kernels-", dir=TMP)
    for f in os.listdir(KERNEL_DIR):
        shutil.copy(os.path.join(KERNEL_DIR, f), os.path.join(d, f))
    p = os.path.join(d, name)
    with open(p) as f:
        src = f.read()
    with open(p, "w") as f:
        f.write(text + src)
    return d


def test_errors():
    out_path = os.path.join(TMP, "never.bin")
    # and/or: not scans; refused for every scan kernel, integer or float.
    for i, kernel in enumerate(SCAN_KERNELS):
        for op in ("and", "or"):
            typ = ["int", "uint", "long", "ulong"][i]
            expect_error(
                [
                    "--kernel=" + kernel,
                    "--op=" + op,
                    "--type=" + typ,
                    "--n=100",
                    "--output=" + out_path,
                ],
                2,
                ["'%s'" % op, "scan", "sum, prod, min, max and xor"],
                "--op=%s --type=%s with %s" % (op, typ, kernel),
            )
    expect_error(
        ["--kernel=brent-kung", "--op=and", "--type=float", "--n=100"],
        2,
        ["'and'", "scan", "sum, prod, min, max and xor"],
        "--op=and --type=float with brent-kung",
    )
    check(not os.path.exists(out_path), "and/or refused: no output file created")

    # An output file that cannot be written: a runtime error (3), nothing
    # on stdout, nothing left behind.
    bad = "/nonexistent/dir/x.bin"
    expect_error(
        ["--kernel=kogge-stone", "--n=1000", "--repeat=1", "--output=" + bad],
        3,
        ["cannot write output file", "'%s'" % bad],
        "--output=" + bad,
    )
    check(
        not os.path.exists(bad) and not os.path.exists(bad + ".tmp"),
        "unwritable --output: no file left",
    )
    notdir = os.path.join(TMP, "plain_file")
    open(notdir, "wb").close()
    expect_error(
        [
            "--kernel=decoupled",
            "--n=1000",
            "--repeat=1",
            "--output=" + notdir + "/x.bin",
        ],
        3,
        ["cannot write output file", notdir + "/x.bin"],
        "--output under a regular file",
    )
    # A directory as the output: the temporary file is written, then cannot
    # replace the directory; it must be removed.
    outdir = os.path.join(TMP, "an_output_dir")
    os.mkdir(outdir)
    expect_error(
        ["--kernel=brent-kung", "--n=1000", "--repeat=1", "--output=" + outdir],
        3,
        ["cannot write output file", outdir],
        "--output naming a directory",
    )
    check(
        os.path.isdir(outdir)
        and os.listdir(outdir) == []
        and not os.path.exists(outdir + ".tmp"),
        "--output naming a directory: directory untouched, no temporary file left",
        repr(os.listdir(TMP)),
    )

    # --output and --exclusive belong to scans.
    for kernel in REDUCE_KERNELS:
        expect_error(
            ["--kernel=" + kernel, "--n=100", "--output=" + out_path],
            2,
            ["--output", "scan kernels", "'%s'" % kernel],
            "--output with reduction " + kernel,
        )
        expect_error(
            ["--kernel=" + kernel, "--n=100", "--exclusive"],
            2,
            ["--exclusive", "scan kernels", "'%s'" % kernel],
            "--exclusive with reduction " + kernel,
        )
    expect_error(
        ["--n=100", "--exclusive"],
        2,
        ["--exclusive", "'coarse'"],
        "--exclusive with the default (reduction) kernel",
    )
    check(
        not os.path.exists(out_path),
        "--output with a reduction: no output file created",
    )

    # Input files.
    odd = os.path.join(TMP, "ten_bytes.bin")
    with open(odd, "wb") as f:
        f.write(b"\1" * 10)
    for typ, size in (("float", 4), ("long", 8)):
        expect_error(
            [
                "--kernel=kogge-stone",
                "--input=" + odd,
                "--type=" + typ,
                "--output=" + out_path,
            ],
            2,
            ["10 bytes", "multiple", str(size), typ],
            "scan --input of 10 bytes as " + typ,
        )
    twelve = os.path.join(TMP, "twelve_bytes.bin")
    with open(twelve, "wb") as f:
        f.write(b"\0" * 12)
    expect_error(
        ["--kernel=decoupled", "--input=" + twelve, "--type=ulong"],
        2,
        ["12 bytes", "multiple", "8"],
        "scan --input of 12 bytes as ulong",
    )
    empty = os.path.join(TMP, "empty.bin")
    open(empty, "wb").close()
    expect_error(
        ["--kernel=brent-kung", "--input=" + empty, "--output=" + out_path],
        2,
        ["empty", empty],
        "scan --input of an empty file",
    )
    expect_error(
        ["--kernel=brent-kung", "--input=" + twelve, "--type=int", "--n=4"],
        2,
        ["--n=4", "3 int"],
        "scan --input with a disagreeing --n",
    )
    expect_error(
        ["--kernel=kogge-stone", "--n=10", "--output="],
        2,
        ["--output"],
        "--output with an empty value",
    )
    check(not os.path.exists(out_path), "bad input files: no output file created")

    # A scan kernel that builds but computes a wrong answer (its identity
    # is 7): exit 1, and --output is not written -- an existing file keeps
    # its contents.
    wrong = kernel_copy(
        "scan_kogge_stone.cl", "#undef IDENTITY\n#define IDENTITY ((ACC_T)7)\n"
    )
    env = {"CLREDUCE_KERNEL_DIR": wrong, "CLREDUCE_CACHE_DIR": ""}
    old = os.path.join(TMP, "old_output.bin")
    with open(old, "wb") as f:
        f.write(b"old contents")
    args = [
        "--kernel=kogge-stone",
        "--type=int",
        "--n=1009",
        "--repeat=1",
        "--output=" + old,
    ]
    rc, out, err = run(args, env=env)
    check(
        rc == 1 and "VERIFICATION FAILED" in out,
        "a wrong scan -> exit 1, 'VERIFICATION FAILED'",
        show(rc, out, err),
    )
    with open(old, "rb") as f:
        kept = f.read()
    check(
        kept == b"old contents" and not os.path.exists(old + ".tmp"),
        "a wrong scan: the existing output file is left as it was",
        repr(kept[:40]),
    )
    rc, out, err = run(args + ["--json"], env=env)
    try:
        doc = json.loads(out)
        check(
            rc == 1
            and doc.get("verified") is False
            and doc.get("output") is None
            and doc.get("bad_elements", 0) >= 1,
            "a wrong scan in JSON: verified false, output null, bad elements counted",
            show(rc, out, err),
        )
    except ValueError as ex:
        check(False, "a wrong scan in JSON parses", "%s %s" % (ex, show(rc, out, err)))
    fresh = os.path.join(TMP, "fresh_output.bin")
    run(args[:-1] + ["--output=" + fresh], env=env)
    check(
        not os.path.exists(fresh) and not os.path.exists(fresh + ".tmp"),
        "a wrong scan: no output file created",
    )
    rc, out, err = run(args[:-1] + ["--output=" + fresh, "--no-verify"], env=env)
    check(
        rc == 0 and os.path.exists(fresh) and os.path.getsize(fresh) == 1009 * 4,
        "the same wrong scan with --no-verify: exit 0, output written",
        show(rc, out, err),
    )


def main():
    global EXE, KERNEL_DIR, TMP
    if len(sys.argv) < 2:
        print("usage: test_scan_cli.py CLREDUCE_EXE [PART...]", file=sys.stderr)
        return 2
    EXE = os.path.abspath(sys.argv[1])
    REDUCE_KERNELS[:], SCAN_KERNELS[:] = clrtest.kernels(EXE)
    check(set(clrtest.KNOWN_SCANS) <= set(SCAN_KERNELS) and
          set(clrtest.KNOWN_REDUCTIONS) <= set(REDUCE_KERNELS),
          "--list-kernels --json lists the course notes' kernels",
          repr((REDUCE_KERNELS, SCAN_KERNELS)))
    here = os.path.dirname(os.path.abspath(__file__))
    KERNEL_DIR = os.environ.get("CLREDUCE_KERNEL_DIR") or os.path.join(
        here, "..", "..", "cl"
    )
    os.environ["CLREDUCE_KERNEL_DIR"] = KERNEL_DIR
    parts = {
        "sizes": test_sizes,
        "options": test_options,
        "generated": test_generated,
        "big": test_big,
        "errors": test_errors,
    }
    only = sys.argv[2:]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="clreduce-scan-cli-") as tmp:
        TMP = tmp
        for name, fn in parts.items():
            if only and name not in only:
                continue
            print("== " + name)
            t0 = time.monotonic()
            fn()
            print("   (%s: %.1f s)" % (name, time.monotonic() - t0))
    print("run time: %.1f s" % (time.monotonic() - start))
    return clrtest.finish("test_scan_cli")


if __name__ == "__main__":
    sys.exit(main())
