#!/usr/bin/env python3
"""Generate the reference inputs in data/ and data/README.md.

Every file is a raw array of native-endian (little-endian on the machines
this project runs on) elements, no header.  Each value is a closed formula
of the index i, and every answer is computed here with Python integers or
exact fractions, so it is exact whatever order a reduction uses: the
floating-point files hold small integers, quarters or powers of two whose
sums / products are exactly representable at every step.

Usage: python3 tests/make_data.py [DATA_DIR]    (default: data/ beside tests/)
The answers are also written, literally, in tests/test_data.c and
tests/test_cli.py; this script asserts nothing about those, so change all
three together.
"""
import os
import struct
import sys
from fractions import Fraction

U32 = 1 << 32
U64 = 1 << 64


def wrap_signed(x, bits):
    x %= 1 << bits
    return x - (1 << bits) if x >= 1 << (bits - 1) else x


def fmt(v):
    if isinstance(v, Fraction):
        if v.denominator == 1:
            return str(v.numerator)
        return repr(float(v))
    return str(v)


def files():
    """(name, struct code, values, answers, how) for every file."""
    out = []

    vals = [((i * 37) % 17) - 8 for i in range(1000)]
    out.append(("float_1000.bin", "f", vals,
                {"sum": sum(vals), "min": min(vals), "max": max(vals)},
                "((i*37) % 17) - 8: small integers, exact sums"))

    vals = [Fraction(((i * 13) % 41) - 20, 4) for i in range(4097)]
    out.append(("double_4097.bin", "d", vals,
                {"sum": sum(vals), "min": min(vals), "max": max(vals)},
                "(((i*13) % 41) - 20) / 4: quarters, exact sums"))

    vals = []
    for i in range(64):
        v = Fraction(2) ** ((i % 7) - 3)
        vals.append(-v if i % 5 == 0 else v)
    prod = Fraction(1)
    for v in vals:
        prod *= v
    out.append(("double_prod_64.bin", "d", vals,
                {"prod": prod, "min": min(vals), "max": max(vals)},
                "+-2^((i%7)-3), negative when i%5 == 0: exact products"))

    vals = [wrap_signed(i * 2654435761, 32) for i in range(65537)]
    out.append(("int_65537.bin", "i", vals,
                {"sum": sum(vals), "min": min(vals), "max": max(vals)},
                "(i*2654435761) mod 2^32 as int32"))

    vals = [(i * 2654435761) % (1 << 31) for i in range(4099)]
    out.append(("int_big_4099.bin", "i", vals,
                {"sum": sum(vals), "sum-narrow": wrap_signed(sum(vals), 32),
                 "min": min(vals), "max": max(vals)},
                "(i*2654435761) mod 2^31: the sum needs 64 bits"))

    vals = [(i * i * 2246822519) % U32 for i in range(1009)]
    out.append(("uint_1009.bin", "I", vals,
                {"sum": sum(vals), "min": min(vals), "max": max(vals)},
                "(i*i*2246822519) mod 2^32"))

    vals = [i * (1 << 48) + i - (1 << 62) for i in range(30011)]
    out.append(("long_30011.bin", "q", vals,
                {"sum": wrap_signed(sum(vals), 64), "min": min(vals),
                 "max": max(vals)},
                "i * 2^48 + i - 2^62: the sum wraps modulo 2^64"))

    vals = [(U64 - 1 - i * i * i) % U64 for i in range(1025)]
    out.append(("ulong_1025.bin", "Q", vals,
                {"sum": sum(vals) % U64, "min": min(vals), "max": max(vals)},
                "2^64 - 1 - i^3: the sum wraps modulo 2^64"))

    vals = [(i % 7) + 1 for i in range(300)]
    vals[299] = 0
    out.append(("int_last_zero_300.bin", "i", vals,
                {"and": 0, "or": 1, "min": 0, "max": 7, "sum": sum(vals)},
                "(i%7)+1, the last element 0"))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    data_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "data")
    os.makedirs(data_dir, exist_ok=True)
    types = {"f": "float", "d": "double", "i": "int", "I": "uint",
             "q": "long", "Q": "ulong"}
    rows = []
    for name, code, vals, answers, how in files():
        raw = struct.pack("=%d%s" % (len(vals), code),
                          *[float(v) if code in "fd" else v for v in vals])
        with open(os.path.join(data_dir, name), "wb") as f:
            f.write(raw)
        # The floats must be exact in the file.
        for v in vals:
            if code in "fd":
                back = struct.unpack("=" + code, struct.pack("=" + code, float(v)))[0]
                assert Fraction(back) == v, (name, v)
        for op, ans in answers.items():
            rows.append("| `%s` | %s | %d | %s | %s | %s |" %
                        (name, types[code], len(vals), op, fmt(ans), how))
    with open(os.path.join(data_dir, "README.md"), "w") as f:
        f.write(README_HEAD)
        f.write("\n".join(rows))
        f.write("\n")


README_HEAD = """# Reference inputs

Raw arrays of native-endian elements (little-endian here), no header, made
by `python3 tests/make_data.py` (which also rewrites this file).  Each value
is a formula of the index `i` (0-based); the answers were computed with
exact integer / fraction arithmetic, and every floating-point file holds
values (small integers, quarters, powers of two) whose sums and products are
exact at every step, so any reduction order must give exactly these numbers.
`tests/test_data.c` (library, every kernel) and `tests/test_cli.py`
(`clreduce --input`) compare against the answers written in them.

Integer sums follow the library's rule: `int` / `uint` sums accumulate in
64 bits (`sum`), `sum-narrow` is the 32-bit wrapped sum
(`narrow_accumulator`); `long` / `ulong` sums wrap modulo 2^64.

| file | type | n | op | expected | values |
| --- | --- | --- | --- | --- | --- |
"""

if __name__ == "__main__":
    main()
