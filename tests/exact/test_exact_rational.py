"""Exact sums (clreduce --exact) against exact rational arithmetic.

Each case is a list of floats or doubles chosen so that a plain sum is
wrong by far (cancellation, the whole exponent range, ties, overflow of a
partial sum only, denormals, infinities, NaN, signed zeros).  Python's
fractions.Fraction sums them exactly and rounds once to the type (to
nearest, ties to even, written out below for float32); clreduce --exact
must print exactly that value, and its own check against the CPU's exact
sum (src/check/exact_sum.c) must pass, so the test checks the device, the
library's rounding and the CPU reference at once.

    test_exact_rational.py CLREDUCE WORKDIR
"""
import json
import math
import os
import random
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import clrtest  # noqa: E402  (tests/clrtest.py)
check = clrtest.check
clrtest.QUIET = True  # print only the failures

FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
FLT_TRUE_MIN = 2.0 ** -149
DBL_MAX = sys.float_info.max
DBL_TRUE_MIN = 2.0 ** -1074

def round_to(q, precision, bit0_exp, max_exp):
    """The float of `precision` bits nearest to the rational q (ties to
    even), with denormals down to 2^bit0_exp; +-inf at 2^max_exp."""
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    # exponent e with 2^e <= q < 2^(e+1)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    lsb = max(e - precision + 1, bit0_exp)
    scaled = q / Fraction(2) ** lsb
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2 == 1):
        m += 1
    value = Fraction(m) * Fraction(2) ** lsb
    if value >= Fraction(2) ** max_exp:
        return sign * math.inf
    return sign * float(value)  # exact: m has at most `precision` bits


def exact_sum(values, typ):
    """What --exact must print, as a Python float (NaN for NaN)."""
    finite = [v for v in values if math.isfinite(v)]
    if any(math.isnan(v) for v in values):
        return math.nan
    pinf = any(v == math.inf for v in values)
    ninf = any(v == -math.inf for v in values)
    if pinf and ninf:
        return math.nan
    if pinf or ninf:
        return math.inf if pinf else -math.inf
    q = sum((Fraction(v) for v in finite), Fraction(0))
    if q == 0:
        all_neg_zero = all(v == 0 and math.copysign(1, v) < 0 for v in values)
        return -0.0 if all_neg_zero else 0.0
    if typ == "float":
        return round_to(q, 24, -149, 128)
    return round_to(q, 53, -1074, 1024)


def as_float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def cases(typ):
    big, tiny = (FLT_MAX, FLT_TRUE_MIN) if typ == "float" else (DBL_MAX,
                                                                 DBL_TRUE_MIN)
    prec = 24 if typ == "float" else 53
    rng = random.Random(20261123 + (typ == "double"))
    c = {}
    c["cancel"] = [1e30, 1.0, -1e30] * 333 + [1e30, -1e30]
    rng.shuffle(c["cancel"])
    emin, emax = (-149, 127) if typ == "float" else (-1074, 1023)
    c["exponent-range"] = [rng.choice((-1, 1)) * 2.0 ** rng.randint(emin, emax)
                           * (1 + rng.random() / 2) for _ in range(3001)]
    c["equal"] = [0.1] * 10007
    c["alternating"] = [(-1) ** i * (1 + i * 2.0 ** -(prec - 1))
                        for i in range(5003)]
    one_ulp = 2.0 ** -(prec - 1)
    c["tie-to-even-down"] = [1.0] + [one_ulp / 4] * 2          # 1 + ulp/2
    c["tie-to-even-up"] = [1.0 + one_ulp] + [one_ulp / 4] * 2  # odd + ulp/2
    c["partial-overflow"] = [big, big, big, -big, -big, -big, 1.5] * 7
    c["overflow"] = [big, big, -1.0]
    c["tie-to-overflow"] = [big, 2.0 ** (127 - 24 if typ == "float"
                                         else 1023 - 53)]
    c["inf"] = [1.0, math.inf, 2.0]
    c["inf-minus-inf"] = [math.inf, 1.0, -math.inf]
    c["nan"] = [1.0, math.nan, -math.inf]
    c["negative-zeros"] = [-0.0] * 9
    c["mixed-zeros"] = [-0.0, 0.0, -0.0]
    c["cancel-to-zero"] = [3.5, -0.0, -3.5]
    c["denormals"] = [tiny] * 4099 + [-tiny * 3] * 5
    c["huge-and-tiny"] = [2.0 ** 100, tiny * 7, -(2.0 ** 100)]
    c["just-normal"] = [2.0 ** (emin + prec - 1 - 1)] * 3 + [-tiny]
    c["random-signs"] = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-60, 60)
                         for _ in range(20011)]
    return c


def pack(values, typ):
    fmt = "<%d%s" % (len(values), "f" if typ == "float" else "d")
    return struct.pack(fmt, *values)


def main():
    exe, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    for typ in ("float", "double"):
        for name, values in cases(typ).items():
            if typ == "float":
                values = [as_float32(v) for v in values]
            want = exact_sum(values, typ)
            path = os.path.join(workdir, "%s-%s.bin" % (typ, name))
            with open(path, "wb") as f:
                f.write(pack(values, typ))
            rc, out, err = clrtest.run([exe, "--exact", "--type=" + typ,
                                        "--input=" + path, "--repeat=1",
                                        "--json"])
            what = "%s %s (%d values)" % (typ, name, len(values))
            check(rc == 0, "%s: exit %d, %s" % (what, rc, err))
            try:
                # "-0" must stay a negative zero, not the integer 0
                rep = json.loads(out, parse_int=float)
            except ValueError:
                check(False, "%s: no JSON report: %r" % (what, out[:200]))
                continue
            got = float(rep["result"])  # a number, or "nan" / "inf" / "-inf"
            if typ == "float":
                got = as_float32(got)
            same = (math.isnan(got) and math.isnan(want)) or (
                got == want and math.copysign(1, got) == math.copysign(1, want))
            check(same, "%s: device %r, exact rational %r" % (what, got, want))
            check(rep.get("verified") is True,
                  "%s: the CLI's own check says %r" % (what,
                                                       rep.get("verified")))
    return clrtest.finish("test_exact_rational")


if __name__ == "__main__":
    sys.exit(main())
