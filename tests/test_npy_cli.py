#!/usr/bin/env python3
"""clreduce and NumPy .npy files, from the command line (stdlib only:
the files are written and read here by hand, from the format's header).

    test_npy_cli.py CLREDUCE_EXE --kernel-dir DIR

--input of every dtype clreduce reads (float16/32/64, int32/64,
uint32/64), 1-D and 2-D, format versions 1.0 and 2.0, from a file of any
name (known by its magic) and from a pipe: the type taken from the
header, the run verified, its result against the sum worked out here
(exact for the integers); --input2 for dot products; a 2-D array's rows
through --segment-length.  The refusals (exit 2, one line): a big-endian
dtype, a Fortran-ordered 2-D array, a complex dtype, more than 2
dimensions, an empty array, data shorter or longer than the header says,
a --type, --n or --input2 that disagrees, records in a .npy --output.
--output=FILE.npy of a scan and of segment results: header parsed here,
data the bytes of the raw --output of the same run.  --save-input, raw
and .npy, read back by clreduce and here.

The last line is "N passed, N failed".
"""
import ast
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json = T.run, T.expect_error, T.run_json

# dtype -> (clreduce's type name, struct format, float?)
DTYPES = {
    "<f2": ("half", "e", True),
    "<f4": ("float", "f", True),
    "<f8": ("double", "d", True),
    "<i4": ("int", "i", False),
    "<i8": ("long", "q", False),
    "<u4": ("uint", "I", False),
    "<u8": ("ulong", "Q", False),
}


def write_npy(name, descr, shape, payload, **kw):
    path = T.path(name)
    with open(path, "wb") as f:
        f.write(clrtest.npy_bytes(descr, shape, payload, **kw))
    return path


def read_npy(path):
    """(header dict, data bytes) of a .npy file, the header checked as the
    format requires."""
    with open(path, "rb") as f:
        b = f.read()
    check(b[:6] == b"\x93NUMPY", "%s starts with the .npy magic" % path)
    major = b[6]
    pre = 10 if major == 1 else 12
    hlen = struct.unpack("<H" if major == 1 else "<I", b[8:pre])[0]
    text = b[pre:pre + hlen].decode("latin1")
    check((pre + hlen) % 64 == 0 and text.endswith("\n"),
          "%s: header padded to 64 bytes, ends with a newline" % path,
          repr(text))
    return ast.literal_eval(text.strip()), b[pre + hlen:]


def values(n, fmt, seed):
    """n values for a struct format: small integers (exact in half too),
    negative ones for the signed formats."""
    signed = fmt in "eifdq"
    top = 2**62 if fmt == "Q" else 2**40 if fmt == "q" else 1000
    out, x = [], seed
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        v = (x if fmt in "qQ" else x >> 33) % (8 if fmt == "e" else top)
        out.append(v - (4 if fmt == "e" else top // 2) if signed else v)
    return out


def sum_check(doc, want, isfloat, what):
    got = doc.get("result")
    if isfloat:
        ok = abs(got - want) <= 1e-3 * max(1.0, abs(want))
    else:
        ok = got == want
    check(ok, what + ": result %r (worked out here)" % (want,), repr(got))


# ------------------------------------------------------------ input

def every_dtype():
    for descr, (tname, fmt, isfloat) in DTYPES.items():
        for shape in [(37,), (5, 7), (1, 9)]:
            n = shape[0] * (shape[1] if len(shape) == 2 else 1)
            vals = values(n, fmt, n + len(descr))
            want = sum(vals)
            if fmt == "Q":
                want %= 2**64  # ulong sums wrap
            path = write_npy("in-%s-%d.npy" % (tname, len(shape)), descr,
                             shape, struct.pack("<%d%s" % (n, fmt), *vals))
            what = "%s %r .npy" % (descr, shape)
            doc = run_json(["--input=" + path, "--repeat=1"], what)
            if doc is None:
                continue
            check(doc["type"] == tname and doc["n"] == n and
                  doc["verified"] is True,
                  what + ": type %s from the header, %d values, verified"
                  % (tname, n), repr(doc))
            sum_check(doc, want, isfloat, what)
            # max: exact for every type
            doc = run_json(["--input=" + path, "--op=max", "--repeat=1"],
                           what + " max")
            if doc is not None:
                check(doc["result"] == max(vals) and doc["verified"] is True,
                      what + ": max %r" % max(vals), repr(doc["result"]))
    # --type that agrees is fine
    path = T.path("in-int-1.npy")
    doc = run_json(["--input=" + path, "--type=int", "--repeat=1"],
                   "<i4 .npy with --type=int")
    check(doc is not None and doc["type"] == "int", "--type=int agrees")


def known_by_content():
    vals = list(range(-50, 50))
    blob = clrtest.npy_bytes("<i4", (100,), struct.pack("<100i", *vals))
    plain = T.path("data")  # no extension
    with open(plain, "wb") as f:
        f.write(blob)
    doc = run_json(["--input=" + plain, "--repeat=1"], ".npy named 'data'")
    check(doc is not None and doc["type"] == "int" and doc["result"] == -50
          and doc["verified"] is True, "a .npy file named 'data': read as "
          ".npy (its magic)", repr(doc))
    # raw values in a file named .npy are raw
    raw = clrtest.write_values(T.tmp, "raw.npy", "i", vals)
    doc = run_json(["--input=" + raw, "--type=int", "--repeat=1"],
                   "raw file named raw.npy")
    check(doc is not None and doc["n"] == 100 and doc["result"] == -50,
          "raw values in 'raw.npy': read raw (no magic)", repr(doc))
    # a pipe, with and without --n
    for extra in [[], ["--n=100"]]:
        rc, out, err = run(["--input=/dev/stdin", "--repeat=1", "--json"]
                           + extra, stdin=blob)
        ok = rc == 0
        if ok:
            doc = __import__("json").loads(out)
            ok = doc["type"] == "int" and doc["result"] == -50
        check(ok, ".npy through a pipe %s" % extra, show(rc, out, err))
    # an op for integers only: the type is the header's, not the default
    doc = run_json(["--input=" + plain, "--op=or", "--repeat=1"],
                   "--op=or of an <i4 .npy")
    check(doc is not None and doc["result"] == 1, "--op=or of an int .npy "
          "without --type (the op checked on the header's type)", repr(doc))
    fl = write_npy("fl.npy", "<f4", (2,), struct.pack("<2f", 1, 2))
    expect_error(["--input=" + fl, "--op=or"], 2, ["'or'", "float"],
                 "--op=or of an <f4 .npy")
    # format version 2.0
    v2 = write_npy("v2.npy", "<u8", (3,), struct.pack("<3Q", 1, 2, 2**63),
                   version=2)
    doc = run_json(["--input=" + v2, "--repeat=1"], "version 2.0 header")
    check(doc is not None and doc["type"] == "ulong" and
          doc["result"] == 2**63 + 3, "a version 2.0 .npy file", repr(doc))
    # a 1-D array marked Fortran-ordered is the same bytes: read
    f1 = write_npy("f1.npy", "<f4", (4,), struct.pack("<4f", 1, 2, 3, 4),
                   fortran=True)
    doc = run_json(["--input=" + f1, "--repeat=1"], "1-D fortran_order")
    check(doc is not None and doc["result"] == 10,
          "a 1-D Fortran-ordered array: read", repr(doc))


def dot_and_rows():
    x = values(64, "i", 1)
    y = values(64, "i", 2)
    px = write_npy("x.npy", "<i4", (64,), struct.pack("<64i", *x))
    py = write_npy("y.npy", "<i4", (8, 8), struct.pack("<64i", *y))
    doc = run_json(["--input=" + px, "--input2=" + py, "--repeat=1"],
                   "dot of two .npy files")
    want = sum(a * b for a, b in zip(x, y))
    check(doc is not None and doc["type"] == "int" and doc["result"] == want
          and doc["verified"] is True, "--input2 .npy: dot %d" % want,
          repr(doc))
    # a 2-D array's rows: --segment-length=C
    out = T.path("rows.npy")
    doc = run_json(["--input=" + py, "--segment-length=8", "--output=" + out,
                    "--repeat=1"], "rows of a (8, 8) .npy")
    if doc is not None:
        head, data = read_npy(out)
        rows = [sum(y[8 * r:8 * r + 8]) for r in range(8)]
        check(doc["segments"] == 8 and head["descr"] == "<i8" and
              head["shape"] == (8,) and
              list(struct.unpack("<8q", data)) == rows,
              "(8, 8) int .npy by rows: 8 long sums in rows.npy", repr(head))


def refusals():
    f4 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    cases = [
        ("be.npy", ">f4", (6,), f4, {}, [], ["big-endian"]),
        ("fortran.npy", "<f4", (2, 3), f4, {"fortran": True}, [],
         ["Fortran-ordered"]),
        ("c8.npy", "<c8", (3,), f4, {}, [], ["unsupported dtype"]),
        ("d3.npy", "<f4", (1, 2, 3), f4, {}, [], ["more than 2 dimensions"]),
        ("empty.npy", "<f4", (0,), b"", {}, [], ["empty array"]),
        ("short.npy", "<f4", (7,), f4, {}, [], ["24 bytes of data", "28"]),
        ("long.npy", "<f4", (5,), f4, {}, [], ["more than 20 bytes"]),
        ("typed.npy", "<f4", (6,), f4, {}, ["--type=int"],
         ["float values", "not the int of --type"]),
        ("counted.npy", "<f4", (6,), f4, {}, ["--n=5"],
         ["holds 6 values", "not the 5 of --n"]),
    ]
    for name, descr, shape, payload, kw, extra, needles in cases:
        path = write_npy(name, descr, shape, payload, **kw)
        expect_error(["--input=" + path] + extra, 2, [name] + needles,
                     "--input=%s %s" % (name, " ".join(extra)))
    with open(T.path("cut.npy"), "wb") as f:
        f.write(clrtest.npy_bytes("<f4", (6,), f4)[:40])
    expect_error(["--input=" + T.path("cut.npy")], 2,
                 ["cut.npy", "ends within its header"], "a cut-short header")
    ok = write_npy("ok.npy", "<f4", (6,), f4)
    other = write_npy("i6.npy", "<i4", (6,), struct.pack("<6i", *range(6)))
    five = write_npy("f5.npy", "<f4", (5,), f4[:20])
    expect_error(["--input=" + ok, "--input2=" + other], 2,
                 ["--input2", "int values", "not the float of --input"],
                 "--input2 of another dtype")
    expect_error(["--input=" + ok, "--input2=" + five], 2,
                 ["--input2", "holds 5 values", "not the 6 of --input"],
                 "--input2 of another count")
    expect_error(["--n=100", "--segment-length=10", "--op=argmin",
                  "--output=" + T.path("rec.npy")], 2,
                 ["records", "not ending in .npy"], "argmin records to .npy")
    check(not os.path.exists(T.path("rec.npy")), "rec.npy not written")


# ------------------------------------------------------------ output

def output_files():
    # a scan: int with --acc=long writes long
    vals = values(1000, "i", 7)
    path = write_npy("scan-in.npy", "<i4", (1000,),
                     struct.pack("<1000i", *vals))
    base = ["--input=" + path, "--kernel=decoupled", "--acc=long",
            "--repeat=1"]
    o_npy, o_raw = T.path("scan.npy"), T.path("scan.raw")
    d1 = run_json(base + ["--output=" + o_npy], "int scan to .npy")
    d2 = run_json(base + ["--output=" + o_raw], "int scan to raw")
    if d1 is not None and d2 is not None:
        head, data = read_npy(o_npy)
        with open(o_raw, "rb") as f:
            raw = f.read()
        pref, acc = [], 0
        for v in vals:
            acc += v
            pref.append(acc)
        check(head == {"descr": "<i8", "fortran_order": False,
                       "shape": (1000,)},
              "scan .npy header: <i8, (1000,)", repr(head))
        check(data == raw, "scan .npy data == the raw --output's bytes")
        check(list(struct.unpack("<1000q", data)) == pref,
              "scan .npy data: the prefix sums worked out here")
    # float segment sums (generated data)
    base = ["--n=10000", "--segment-length=300", "--repeat=1"]
    s_npy, s_raw = T.path("seg.npy"), T.path("seg.raw")
    d1 = run_json(base + ["--output=" + s_npy], "segment sums to .npy")
    d2 = run_json(base + ["--output=" + s_raw], "segment sums to raw")
    if d1 is not None and d2 is not None:
        head, data = read_npy(s_npy)
        with open(s_raw, "rb") as f:
            raw = f.read()
        check(head == {"descr": "<f4", "fortran_order": False,
                       "shape": (34,)} and d1["verified"] is True,
              "segment .npy header: <f4, (34,)", repr(head))
        check(data == raw, "segment .npy data == the raw --output's bytes")
    # the name decides: out.f32 is raw
    check(os.path.getsize(s_raw) == 34 * 4, "a name not ending in .npy: raw")


def save_input():
    base = ["--n=5000", "--type=int", "--op=max", "--repeat=1"]
    s_npy, s_raw = T.path("saved.npy"), T.path("saved.i32")
    d0 = run_json(base + ["--save-input=" + s_npy], "--save-input=saved.npy")
    d1 = run_json(base + ["--save-input=" + s_raw, "--no-verify"],
                  "--save-input=saved.i32 --no-verify")
    if d0 is None or d1 is None:
        return
    head, data = read_npy(s_npy)
    with open(s_raw, "rb") as f:
        raw = f.read()
    check(head == {"descr": "<i4", "fortran_order": False, "shape": (5000,)},
          "saved .npy header: <i4, (5000,)", repr(head))
    check(data == raw and len(raw) == 20000,
          "saved .npy data == the raw --save-input's bytes")
    check(max(struct.unpack("<5000i", raw)) == d0["result"],
          "saved values: their max is the run's result")
    for args, what in [(["--input=" + s_npy], "saved.npy"),
                       (["--input=" + s_raw, "--type=int"], "saved.i32")]:
        doc = run_json(args + ["--op=max", "--repeat=1"], "read back " + what)
        check(doc is not None and doc["result"] == d0["result"] and
              doc["type"] == "int" and doc["verified"] is True,
              "%s read back: the same result" % what, repr(doc))
    # a read input saved: .npy to raw (2-D saved as its values)
    src = write_npy("two.npy", "<f8", (2, 2), struct.pack("<4d", 1, 2, 3, 4))
    back = T.path("two.f64")
    doc = run_json(["--input=" + src, "--save-input=" + back, "--repeat=1"],
                   "--save-input of a read .npy")
    with open(back, "rb") as f:
        check(doc is not None and f.read() == struct.pack("<4d", 1, 2, 3, 4),
              "a read .npy saved raw: its values")


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-npy-cli-"):
        every_dtype()
        known_by_content()
        dot_and_rows()
        refusals()
        output_files()
        save_input()
    return clrtest.finish("test_npy_cli")


if __name__ == "__main__":
    sys.exit(main())
