#!/usr/bin/env python3
"""clreduce --cache-info and --cache-clear (stdlib only).

    test_cache_cli.py CLREDUCE_EXE --kernel-dir DIR

Every case uses a program cache of its own in a scratch directory (set by
$CLREDUCE_CACHE_DIR, or $XDG_CACHE_HOME / $HOME without it), never the
suite's.  --cache-info on a directory not made yet (0 entries), after a
run (the entries and bytes counted here from the *.clbin files), human
and --json (every field, the version and commit of --list-kernels
--json); the cap from $CLREDUCE_CACHE_MAX_BYTES (default 256 MiB, 64M,
0: none).  --cache-clear removes the entries (how many and their bytes
as counted before, human and --json), keeps the user's tuning file,
leaves --cache-info at 0, and a run after it fills the cache again.  The
directory from $XDG_CACHE_HOME and $HOME; a disabled cache
($CLREDUCE_CACHE_DIR empty); a cache path that is a file (exit 3, one
line naming it).  Both work with no OpenCL platform.  Like --list-devices
they ignore a run's options, and the first of the listing options wins.

The last line is "N passed, N failed".
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

T = clrtest.Session()
run, expect_error, run_json = T.run, T.expect_error, T.run_json

DEFAULT_CAP = 256 << 20


def cache_env(directory, cap=None):
    """The environment of a run on the cache at directory (cap: the
    $CLREDUCE_CACHE_MAX_BYTES value, None: unset, the default)."""
    return {"CLREDUCE_CACHE_DIR": directory, "CLREDUCE_CACHE_MAX_BYTES": cap}


def on_disk(directory):
    """(entries, bytes) of the *.clbin regular files in directory."""
    n = size = 0
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            p = os.path.join(directory, name)
            if name.endswith(".clbin") and os.path.isfile(p) \
                    and not os.path.islink(p):
                n += 1
                size += os.path.getsize(p)
    return n, size


def info(env, what):
    return run_json(["--cache-info"], what, env=env)


def reduce_run(env, what):
    rc, out, err = run(["--n=10000", "--repeat=1"], env=env)
    check(rc == 0, what + ": a run exits 0", show(rc, out, err))


def build_fields():
    doc = run_json(["--list-kernels"], "--list-kernels --json")
    return (doc or {}).get("version"), (doc or {}).get("commit")


def fill_count_clear():
    d = T.path("cache")
    env = cache_env(d)
    version, commit = build_fields()

    rc, out, err = run(["--cache-info"], env=env)
    check(rc == 0 and err == "" and "directory: %s\n" % d in out
          and "entries:   0\n" in out and "0 B (0 bytes)" in out
          and "cap:       256.00 MiB (%d bytes)" % DEFAULT_CAP in out,
          "--cache-info before any run: the directory, 0 entries, the cap",
          show(rc, out, err))
    check(not os.path.exists(d), "--cache-info makes no directory")
    doc = info(env, "--cache-info --json before any run")
    want = {"directory": d, "entries": 0, "bytes": 0,
            "max_bytes": DEFAULT_CAP, "version": version, "commit": commit}
    check(doc == want, "--cache-info --json: every field, nothing else",
          "%r, want %r" % (doc, want))

    reduce_run(env, "a float sum")
    rc, out, err = run(["--n=10000", "--repeat=1", "--op=max",
                        "--type=int"], env=env)
    check(rc == 0, "an int max exits 0", show(rc, out, err))
    n, size = on_disk(d)
    doc = info(env, "--cache-info --json after two runs")
    check(doc is not None and n >= 2 and doc["entries"] == n
          and doc["bytes"] == size and doc["directory"] == d,
          "--cache-info after two runs: the entries and bytes on disk "
          "(%d, %d)" % (n, size), repr(doc))
    rc, out, err = run(["--cache-info"], env=env)
    check(rc == 0 and "entries:   %d\n" % n in out
          and "(%d bytes)\n" % size in out,
          "--cache-info after two runs, human", show(rc, out, err))

    # The cap, from the environment.
    doc = info(cache_env(d, "64M"), "--cache-info --json, cap 64M")
    check(doc is not None and doc["max_bytes"] == 64 << 20,
          "CLREDUCE_CACHE_MAX_BYTES=64M: max_bytes", repr(doc))
    doc = info(cache_env(d, "0"), "--cache-info --json, no cap")
    check(doc is not None and doc["max_bytes"] == 0,
          "CLREDUCE_CACHE_MAX_BYTES=0: max_bytes 0", repr(doc))
    rc, out, err = run(["--cache-info"], env=cache_env(d, "0"))
    check(rc == 0 and "cap:       none\n" in out, "no cap, human: 'none'",
          show(rc, out, err))

    # A run's options are ignored, as by --list-devices; the first
    # listing option wins.
    doc = run_json(["--cache-info", "--n=5", "--op=min", "--cache-clear"],
                   "--cache-info with a run's options and --cache-clear after",
                   env=env)
    check(doc is not None and doc.get("entries") == n and on_disk(d)[0] == n,
          "--cache-info first: it shows, nothing cleared", repr(doc))
    rc, out, err = run(["--list-kernels", "--cache-clear"], env=env)
    check(rc == 0 and "coarse" in out and on_disk(d)[0] == n,
          "--list-kernels first: it lists, nothing cleared",
          show(rc, out, err))

    # The user's tuning file, and a clear.
    tuning = os.path.join(d, "tuning", "Some_device.txt")
    os.makedirs(os.path.dirname(tuning))
    with open(tuning, "w") as f:
        f.write("reduce.wg=64\n")
    rc, out, err = run(["--cache-clear"], env=env)
    check(rc == 0 and err == "" and out.startswith("removed %d entries (" % n)
          and out.endswith(") from %s\n" % d),
          "--cache-clear: how many went, from where", show(rc, out, err))
    check(on_disk(d) == (0, 0), "--cache-clear leaves no entry",
          repr(on_disk(d)))
    with open(tuning) as f:
        check(f.read() == "reduce.wg=64\n", "the tuning file survives")
    doc = info(env, "--cache-info --json after --cache-clear")
    check(doc is not None and doc["entries"] == 0 and doc["bytes"] == 0,
          "--cache-info after --cache-clear: 0 entries of 0 bytes", repr(doc))
    doc = run_json(["--cache-clear"], "--cache-clear --json, empty",
                   env=env)
    want = {"directory": d, "removed": 0, "bytes": 0, "version": version,
            "commit": commit}
    check(doc == want, "--cache-clear --json of an empty cache",
          "%r, want %r" % (doc, want))

    # Filled again by a run; cleared with --json.
    reduce_run(env, "a run after the clear")
    n, size = on_disk(d)
    doc = run_json(["--cache-clear"], "--cache-clear --json", env=env)
    check(n >= 1 and doc is not None and doc["removed"] == n
          and doc["bytes"] == size and on_disk(d) == (0, 0),
          "--cache-clear --json: removed and bytes as on disk (%d, %d)"
          % (n, size), repr(doc))
    check(os.path.exists(tuning), "the tuning file survives again")


def directories():
    xdg = T.path("xdg")
    home = T.path("home")
    env = {"CLREDUCE_CACHE_DIR": None, "XDG_CACHE_HOME": xdg, "HOME": home}
    doc = info(env, "--cache-info --json, $XDG_CACHE_HOME")
    check(doc is not None and doc["directory"] == xdg + "/clreduce",
          "without $CLREDUCE_CACHE_DIR: $XDG_CACHE_HOME/clreduce", repr(doc))
    env["XDG_CACHE_HOME"] = None
    doc = info(env, "--cache-info --json, $HOME")
    check(doc is not None and doc["directory"] == home + "/.cache/clreduce",
          "without $XDG_CACHE_HOME: $HOME/.cache/clreduce", repr(doc))

    env = cache_env("")
    rc, out, err = run(["--cache-info"], env=env)
    check(rc == 0 and "disabled" in out, "a disabled cache, human",
          show(rc, out, err))
    doc = info(env, "--cache-info --json, disabled")
    check(doc is not None and doc["directory"] is None
          and doc["entries"] == 0, "a disabled cache: directory null",
          repr(doc))
    rc, out, err = run(["--cache-clear"], env=env)
    check(rc == 0 and "nothing removed" in out,
          "--cache-clear of a disabled cache", show(rc, out, err))

    f = T.path("a-file")
    with open(f, "w") as fh:
        fh.write("not a directory\n")
    for opt in ("--cache-info", "--cache-clear"):
        expect_error([opt], 3, ["program cache", f, "not a directory"],
                     "%s on a file" % opt, env=cache_env(f))
    check(os.path.isfile(f), "the file is left alone")


def no_platform():
    """Both work where OpenCL has no platform at all."""
    empty = tempfile.mkdtemp(prefix="no-icd-", dir=T.tmp)
    d = T.path("cache-no-platform")
    os.makedirs(os.path.join(d, "tuning"))
    entry = os.path.join(d, "0123456789abcdef0123456789abcdef.clbin")
    with open(entry, "wb") as f:
        f.write(b"CLRBIN2\n" + b"x" * 100)
    env = dict(cache_env(d), OCL_ICD_VENDORS=empty, OPENCL_VENDOR_PATH=empty,
               OCL_ICD_FILENAMES=None)
    rc, out, err = run(["--list-devices"], env=env)
    check(rc == 3, "no platform: --list-devices fails (the setting holds)",
          show(rc, out, err))
    doc = info(env, "--cache-info --json, no OpenCL platform")
    check(doc is not None and doc["entries"] == 1 and doc["bytes"] == 108,
          "no platform: --cache-info counts the entry", repr(doc))
    doc = run_json(["--cache-clear"], "--cache-clear --json, no platform",
                   env=env)
    check(doc is not None and doc["removed"] == 1 and not os.path.exists(entry)
          and os.path.isdir(os.path.join(d, "tuning")),
          "no platform: --cache-clear removes it, tuning/ stays", repr(doc))


def help_text():
    rc, out, err = run(["--help"])
    check(rc == 0 and "--cache-info" in out and "--cache-clear" in out,
          "--help names --cache-info and --cache-clear", show(rc, out, err))


def main():
    a = clrtest.arguments()
    with T.open(a.exe, "clr-cache-cli-"):
        help_text()
        fill_count_clear()
        directories()
        no_platform()
    return clrtest.finish("test_cache_cli")


if __name__ == "__main__":
    sys.exit(main())
