#!/usr/bin/env python3
"""clreduce as a meson subproject, as README's recipe has it.

    test_subproject.py SOURCE_ROOT EXAMPLE.c

A throw-away parent project with subprojects/clreduce pointing at this
source tree and `dependency('clreduce', fallback : ...)`: it configures,
builds only the library (no clreduce command, no benchmark, no tests in
the parent's `meson test`), and its program, examples/embed_sum.c, runs
and prints "embed_sum: OK"; without the kernels anywhere it finds them,
its error names the directories tried, $CLREDUCE_KERNEL_DIR and
-Dembed_kernels=true.  Then again with the kernels and the shipped tuning
built into a static library (-Dclreduce:default_library=static, which
embeds them by default): the programs, copied elsewhere (a moved prefix),
run with no data files and take the same shipped tuning as the shared
build, named "(built into the library)/<file>"; the user's tuning file,
$CLREDUCE_TUNING_DIR and $CLREDUCE_KERNEL_DIR still win.  The last line is
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
executable('tuned', 'tuned.c', dependencies : clreduce_dep)
"""

# A sum, then the tuning in effect and where it came from.
TUNED = r"""#include "clreduce.h"
#include <stdio.h>
int main(void) {
  static float x[1000];
  clr_context *ctx = NULL;
  clr_device_desc d;
  clr_tuning t = CLR_TUNING_INIT;
  clr_value v;
  char detail[512] = "";
  if (clr_context_create(NULL, &ctx, detail, sizeof detail) != CLR_OK) {
    fprintf(stderr, "tuned: %s\n", detail);
    return 2;
  }
  for (int i = 0; i < 1000; i++)
    x[i] = 1.0f;
  if (clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, 1000, &v) != CLR_OK) {
    fprintf(stderr, "tuned: %s\n", clr_context_error(ctx));
    clr_context_release(ctx);
    return 3;
  }
  clr_get_tuning(ctx, &t);
  clr_context_device(ctx, &d);
  printf("device: %s\norigin: %s\n", d.device_name, clr_tuning_origin(ctx));
  printf("values: reduce.wg=%zu reduce.vec_bytes=%u scan.wg=%zu "
         "scan.per_item=%zu\n", t.reduce_wg, t.reduce_vec_bytes, t.scan_wg,
         t.scan_per_item);
  clr_context_release(ctx);
  return 0;
}
"""


def tuned(prog, env):
    """(exit status, {"device": ..., "origin": ..., "values": ...}, text)."""
    rc, out = run([prog], "/", env)
    fields = dict(l.split(": ", 1) for l in out.splitlines() if ": " in l)
    return rc, fields, out


def main():
    source, example = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="clreduce-subproject-") as tmp:
        os.mkdir(os.path.join(tmp, "subprojects"))
        os.symlink(os.path.abspath(source),
                   os.path.join(tmp, "subprojects", "clreduce"))
        with open(os.path.join(tmp, "meson.build"), "w") as f:
            f.write(PARENT)
        shutil.copy(example, os.path.join(tmp, "consumer.c"))
        with open(os.path.join(tmp, "tuned.c"), "w") as f:
            f.write(TUNED)
        # An installed clreduce (pkg-config, or the CMake package that
        # meson's dependency() also asks) would shadow the fallback: hide
        # pkg-config's, and make meson take the subproject whatever it
        # finds (scripts/setup.sh installs into /usr/local).
        env = {"PKG_CONFIG_PATH": "", "PKG_CONFIG_LIBDIR": tmp}
        rc, out = run(["meson", "setup", "b", "--force-fallback-for=clreduce"],
                      tmp, env)
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
        # What the shared build's library reads from the source tree: the
        # static one below must take the same from its own copy.
        plain = {"CLREDUCE_CACHE_DIR": os.path.join(tmp, "cache"),
                 "CLREDUCE_KERNEL_DIR": None, "CLREDUCE_TUNING_DIR": None}
        rc, shared_tuning, out = tuned(os.path.join(tmp, "b", "tuned"), plain)
        check(rc == 0 and "origin" in shared_tuning,
              "the shared build's program reports its tuning: %s" %
              shared_tuning.get("origin"), "exit %d\n%s" % (rc, out))
        # No kernels where the library looks (the link to the source tree
        # removed; nothing installed under the default prefix): the error
        # says where it looked and how to give it the kernels.
        link = os.path.join(tmp, "b", "subprojects", "clreduce", "src", "lib",
                            "clreduce-source")
        if os.path.exists("/usr/local/share/clreduce/cl/common.cl"):
            print("note: /usr/local has installed kernels: no missing-kernel "
                  "case")
        elif os.path.islink(link):
            os.remove(link)
            rc, out = run([os.path.join(tmp, "b", "consumer")], "/", plain)
            check(rc != 0 and "CLREDUCE_KERNEL_DIR" in out and
                  "-Dembed_kernels=true" in out and
                  "tried /usr/local/share/clreduce/cl" in out,
                  "without kernels, the error names the directories tried, "
                  "$CLREDUCE_KERNEL_DIR and -Dembed_kernels=true",
                  "exit %d\n%s" % (rc, out))
        # The kernels and the tuning built into a static library (its
        # default): the programs need no file; $CLREDUCE_KERNEL_DIR and
        # $CLREDUCE_TUNING_DIR still win over them.
        rc, out = run(["meson", "setup", "b2", "--force-fallback-for=clreduce",
                       "-Dclreduce:default_library=static"], tmp, env)
        if check(rc == 0, "meson setup with a static library (embedded "
                 "kernels by default)", out):
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
            # A moved prefix: the programs copied out of the build tree,
            # away from the source tree and from any installed file.
            moved = os.path.join(tmp, "moved", "bin")
            os.makedirs(moved)
            for name in ("consumer", "tuned"):
                shutil.copy(os.path.join(tmp, "b2", name), moved)
            prog = os.path.join(moved, "consumer")
            cache = os.path.join(tmp, "cache2")
            alone = {"CLREDUCE_CACHE_DIR": cache, "CLREDUCE_KERNEL_DIR": None,
                     "CLREDUCE_TUNING_DIR": None}
            rc, out = run([prog], "/", alone)
            check(rc == 0 and "embed_sum: OK" in out,
                  "the static program, moved, runs with the built-in kernels",
                  "exit %d\n%s" % (rc, out))
            rc, got, out = tuned(os.path.join(moved, "tuned"), alone)
            origin = shared_tuning.get("origin", "")
            want = ("(built into the library)/" + os.path.basename(origin)
                    if origin.endswith(".txt") else origin)
            check(rc == 0 and got.get("origin") == want and
                  got.get("values") == shared_tuning.get("values"),
                  "the moved static program takes the shipped tuning built "
                  "in: origin %r, %s" % (got.get("origin"), got.get("values")),
                  "want origin %r and %s\nexit %d\n%s" % (
                      want, shared_tuning.get("values"), rc, out))
            # The user's file wins over the shipped one, as installed.
            user = os.path.join(cache, "tuning", "".join(
                c if c.isalnum() and c.isascii() else "_"
                for c in got.get("device", "")) + ".txt")
            os.makedirs(os.path.dirname(user), exist_ok=True)
            with open(user, "w") as f:
                f.write("scan.per_item=77\n")
            rc, mine, out = tuned(os.path.join(moved, "tuned"), alone)
            check(rc == 0 and mine.get("origin") == user and
                  "scan.per_item=77" in mine.get("values", ""),
                  "the user's tuning file wins over the built-in shipped one",
                  "exit %d\n%s" % (rc, out))
            os.remove(user)
            empty = os.path.join(tmp, "no-kernels")
            os.mkdir(empty)
            rc, none, out = tuned(os.path.join(moved, "tuned"),
                                  dict(alone, CLREDUCE_TUNING_DIR=empty))
            check(rc == 0 and none.get("origin", "").startswith("built-in"),
                  "$CLREDUCE_TUNING_DIR wins over the built-in tuning (an "
                  "empty one: the built-in defaults)", "exit %d\n%s" % (rc, out))
            rc, out = run([prog], "/", {"CLREDUCE_CACHE_DIR": cache,
                                        "CLREDUCE_KERNEL_DIR": empty})
            check(rc != 0 and "embed_sum: OK" not in out,
                  "$CLREDUCE_KERNEL_DIR wins over the built-in kernels (an "
                  "empty one fails)", "exit %d\n%s" % (rc, out))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
