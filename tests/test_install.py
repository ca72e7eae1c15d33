#!/usr/bin/env python3
"""Install test: the library as a user gets it.

    test_install.py --build-dir B --example embed_sum.c --prefix P --datadir D

1. `meson install -C B --destdir T --no-rebuild` into a temporary T.
2. The installed tree has the header, the library, clreduce.pc, the
   clreduce command and every kernel source (identical to cl/).
3. examples/embed_sum.c compiles with `cc -std=c11 -Wall -Wextra -Werror`
   and the flags of `pkg-config --cflags --libs clreduce`, found through
   PKG_CONFIG_PATH=<T><libdir>/pkgconfig with PKG_CONFIG_SYSROOT_DIR=T
   (so the .pc file's prefix is rebased into T).
4. It runs from another working directory (/) against the installed
   library (LD_LIBRARY_PATH) and exits 0 printing "embed_sum: OK".
   With DESTDIR the compiled-in kernel directory (P/D/clreduce/cl) does
   not exist, so CLREDUCE_KERNEL_DIR is set to the installed copy
   T/P/D/clreduce/cl for this run.
5. The installed clreduce command verifies a small run with the installed
   kernels.
6. The installed prefix, moved elsewhere, still works without any
   environment: clreduce and clreduce-bench find their library (rpath),
   the kernels and the shipped tuning under the new prefix.
Each step prints ok / FAIL; the last line is "N passed, N failed".
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
check = clrtest.check
sh = clrtest.run


def finish():
    return clrtest.finish("test_install")



def find(root, name):
    for d, _, files in os.walk(root):
        if name in files:
            return os.path.join(d, name)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--datadir", required=True)
    a = ap.parse_args()
    src_cl = os.environ.get("CLREDUCE_KERNEL_DIR")
    with tempfile.TemporaryDirectory(prefix="clreduce-install-") as tmp:
        dest = os.path.join(tmp, "dest")
        rc, out, err = sh(["meson", "install", "-C", a.build_dir, "--destdir", dest,
                           "--no-rebuild"])
        if not check(rc == 0, "meson install --destdir", out + err):
            return finish()
        root = dest + a.prefix
        datadir = a.datadir if os.path.isabs(a.datadir) else os.path.join(a.prefix, a.datadir)
        kdir = dest + os.path.join(datadir, "clreduce", "cl")
        header = os.path.join(root, "include", "clreduce.h")
        pc = find(dest, "clreduce.pc")
        lib = find(dest, "libclreduce.so")
        exe = os.path.join(root, "bin", "clreduce")
        check(os.path.isfile(header), "header installed: " + header)
        check(pc is not None, "clreduce.pc installed: %s" % pc)
        check(lib is not None, "libclreduce.so installed: %s" % lib)
        check(os.access(exe, os.X_OK), "clreduce command installed: " + exe)
        kernels = sorted(f for f in os.listdir(src_cl) if f.endswith(".cl")) if src_cl else []
        ok = bool(kernels) and os.path.isdir(kdir) and all(
            filecmp.cmp(os.path.join(src_cl, f), os.path.join(kdir, f), shallow=False)
            for f in kernels if os.path.exists(os.path.join(kdir, f)))
        check(ok and all(os.path.exists(os.path.join(kdir, f)) for f in kernels),
              "kernel sources installed in %s, identical to %s" % (kdir, src_cl),
              "installed: %s" % (os.listdir(kdir) if os.path.isdir(kdir) else "none"))
        if pc is None or lib is None:
            return finish()
        # No path of the source (or build) tree anywhere in the library:
        # code, data or debug information (-ffile-prefix-map,
        # -fdebug-prefix-map in meson.build).
        source_root = os.path.dirname(os.path.dirname(os.path.abspath(a.example)))
        with open(lib, "rb") as f:
            image = f.read()
        check(source_root.encode() not in image,
              "the installed library holds no source or build path (%s), "
              "debug information included" % source_root)

        penv = {"PKG_CONFIG_PATH": os.path.dirname(pc), "PKG_CONFIG_SYSROOT_DIR": dest}
        rc, flags, err = sh(["pkg-config", "--cflags", "--libs", "clreduce"], env=penv)
        if not check(rc == 0 and "-lclreduce" in flags,
                     "pkg-config --cflags --libs clreduce: " + flags.strip(), err):
            return finish()
        check(("-I" + os.path.join(root, "include")) in flags,
              "pkg-config points -I into the installed tree", flags)
        prog = os.path.join(tmp, "embed_sum")
        cc = os.environ.get("CC", "cc")
        rc, out, err = sh([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", a.example,
                           "-o", prog] + flags.split())
        if not check(rc == 0, "cc -std=c11 -Wall -Wextra -Werror embed_sum.c "
                     "$(pkg-config --cflags --libs clreduce)", out + err):
            return finish()
        libdir = os.path.dirname(lib)
        renv = {"LD_LIBRARY_PATH": libdir, "CLREDUCE_KERNEL_DIR": kdir,
                "CLREDUCE_CACHE_DIR": os.path.join(tmp, "cache")}
        rc, out, err = sh(["ldd", prog], env=renv)
        check(rc == 0 and libdir in out, "embed_sum loads the installed libclreduce",
              out + err)
        rc, out, err = sh([prog], env=renv, cwd="/")
        check(rc == 0 and "embed_sum: OK" in out,
              "installed embed_sum runs from / with the installed kernels: exit 0, "
              "'embed_sum: OK'", "exit %d\n%s%s" % (rc, out, err))
        # The installed kernel directory is what it read: with a kernel
        # directory that lacks them, the same program must fail.
        empty = os.path.join(tmp, "no-kernels")
        os.mkdir(empty)
        renv2 = dict(renv, CLREDUCE_KERNEL_DIR=empty)
        rc, out, err = sh([prog], env=renv2, cwd="/")
        check(rc == 2 and "could not be read" in err,
              "embed_sum with an empty CLREDUCE_KERNEL_DIR fails (exit 2) naming "
              "the kernel source", "exit %d\n%s%s" % (rc, out, err))
        rc, out, err = sh([exe, "--n=2.5e3", "--repeat=1", "--type=int"], env=renv, cwd="/")
        check(rc == 0 and "verified: yes" in out,
              "installed clreduce verifies a run with the installed kernels",
              "exit %d\n%s%s" % (rc, out, err))
        # A moved prefix: the installed tree, renamed, with no
        # CLREDUCE_KERNEL_DIR and no LD_LIBRARY_PATH.  The command finds
        # its library through its rpath ($ORIGIN/../<libdir>) and the
        # library finds the kernels and the shipped tuning beside itself.
        moved = os.path.join(tmp, "moved")
        shutil.move(root, moved)
        mexe = os.path.join(moved, "bin", "clreduce")
        menv = {"LD_LIBRARY_PATH": None, "CLREDUCE_KERNEL_DIR": None,
                "CLREDUCE_TUNING_DIR": None,
                "CLREDUCE_CACHE_DIR": os.path.join(tmp, "cache-moved")}
        rc, out, err = sh([mexe, "--n=2.5e3", "--repeat=1", "--json"], env=menv,
                          cwd="/")
        try:
            report = json.loads(out)
        except ValueError:
            report = {}
        kd = report.get("kernel_dir", "")
        check(rc == 0 and report.get("verified") is True and
              os.path.realpath(kd).startswith(os.path.realpath(moved)),
              "the installed clreduce, its prefix moved, verifies a run with "
              "the kernels under the new prefix (kernel_dir %r)" % kd,
              "exit %d\n%s%s" % (rc, out, err))
        bench = os.path.join(moved, "bin", "clreduce-bench")
        rc, out, err = sh([bench, "--kernels=coarse", "--min-n=1e3",
                           "--max-n=1e3", "--repeat=2"], env=menv, cwd="/")
        tuning = [l for l in out.splitlines() if l.startswith("tuning:")]
        check(rc == 0 and tuning and os.path.realpath(
                  tuning[0].split(":", 1)[1].strip()).startswith(
                      os.path.realpath(moved)),
              "clreduce-bench in the moved prefix reads the shipped tuning "
              "there: %s" % (tuning[0] if tuning else "no tuning line"),
              "exit %d\n%s%s" % (rc, out, err))
        shutil.rmtree(dest, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
