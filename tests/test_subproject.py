#!/usr/bin/env python3
"""clreduce as a meson subproject, as README's recipe has it.

    test_subproject.py SOURCE_ROOT EXAMPLE.c

A throw-away parent project with subprojects/clreduce pointing at this
source tree and `dependency('clreduce', fallback : ...)`: it configures,
builds only the library (no clreduce command, no benchmark, no tests in
the parent's `meson test`), and its program, examples/embed_sum.c, runs
and prints "embed_sum: OK".  Then again with the kernels built into a
static library (-Dclreduce:embed_kernels=true): the program runs with no
kernel files, and $CLREDUCE_KERNEL_DIR still wins.  The last line is
"N passed, N failed".
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
check = clrtest.check


def finish():
    return clrtest.finish("test_subproject")



def run(cmd, cwd, env=None):
    """(exit status, stdout and stderr together)."""
    rc, out, err = clrtest.run(cmd, env=env, cwd=cwd, timeout=600)
    return rc, out + err


PARENT = """project('consumer', 'c', default_options : ['c_std=c11'])
clreduce_dep = dependency('clreduce', fallback : ['clreduce', 'clreduce_dep'])
executable('consumer', 'consumer.c', dependencies : clreduce_dep)
"""


def main():
    source, example = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="clreduce-subproject-") as tmp:
        os.mkdir(os.path.join(tmp, "subprojects"))
        os.symlink(os.path.abspath(source),
                   os.path.join(tmp, "subprojects", "clreduce"))
        with open(os.path.join(tmp, "meson.build"), "w") as f:
            f.write(PARENT)
        shutil.copy(example, os.path.join(tmp, "consumer.c"))
        # Only the system's pkg-config could shadow the fallback: hide it.
        env = {"PKG_CONFIG_PATH": "", "PKG_CONFIG_LIBDIR": tmp}
        rc, out = run(["meson", "setup", "b"], tmp, env)
        if not check(rc == 0, "meson setup of a parent using clreduce as a "
                     "subproject", out):
            return finish()
        rc, out = run(["ninja", "-C", "b"], tmp, env)
        if not check(rc == 0, "ninja builds the parent and the library", out):
            return finish()
        sub = os.path.join(tmp, "b", "subprojects", "clreduce")
        built = [os.path.relpath(os.path.join(d, f), sub)
                 for d, _, files in os.walk(sub) for f in files
                 if f in ("clreduce", "clreduce-bench", "test_api")]
        check(not built, "only the library is built in the subproject",
              "also built: %s" % built)
        rc, out = run(["meson", "test", "-C", "b", "--list"], tmp, env)
        # (meson exits 1 with "No tests defined." when there are none)
        check("No tests defined" in out or
              (rc == 0 and "clreduce:" not in out),
              "the parent's meson test lists no clreduce test", out)
        rc, out = run([os.path.join(tmp, "b", "consumer")], "/",
                      {"CLREDUCE_CACHE_DIR": os.path.join(tmp, "cache")})
        check(rc == 0 and "embed_sum: OK" in out,
              "the parent's program reduces through the subproject's library",
              "exit %d\n%s" % (rc, out))
        # The kernels built into a static library: the program needs no
        # file; $CLREDUCE_KERNEL_DIR still wins over them.
        rc, out = run(["meson", "setup", "b2", "-Dclreduce:embed_kernels=true",
                       "-Dclreduce:default_library=static"], tmp, env)
        if check(rc == 0, "meson setup with -Dclreduce:embed_kernels=true and "
                 "a static library", out):
            rc, out = run(["ninja", "-C", "b2"], tmp, env)
            check(rc == 0, "ninja builds it", out)
            prog = os.path.join(tmp, "b2", "consumer")
            rc, out = run(["nm", prog], tmp)
            check(rc == 0 and "clr_embedded_kernels" in out and
                  "clr_reduce_host" in out,
                  "the program carries the library and its kernel sources",
                  out[-500:])
            rc, out = run(["ldd", prog], tmp)
            check("libclreduce" not in out, "no shared libclreduce is loaded",
                  out)
            cache = os.path.join(tmp, "cache2")
            rc, out = run([prog], "/", {"CLREDUCE_CACHE_DIR": cache})
            check(rc == 0 and "embed_sum: OK" in out,
                  "the static program runs with the built-in kernels",
                  "exit %d\n%s" % (rc, out))
            empty = os.path.join(tmp, "no-kernels")
            os.mkdir(empty)
            rc, out = run([prog], "/", {"CLREDUCE_CACHE_DIR": cache,
                                        "CLREDUCE_KERNEL_DIR": empty})
            check(rc != 0 and "embed_sum: OK" not in out,
                  "$CLREDUCE_KERNEL_DIR wins over the built-in kernels (an "
                  "empty one fails)", "exit %d\n%s" % (rc, out))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
