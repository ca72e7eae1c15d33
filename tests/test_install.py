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
6. The CMake package (<libdir>/cmake/clreduce, cmake/meson.build): its
   version file answers find_package's requests as SameMajorVersion
   (`cmake -P`), and tests/cmake_consumer, a CMake project that calls
   find_package(clreduce 1.0 REQUIRED) and links clreduce::clreduce, is
   configured with CMAKE_PREFIX_PATH=T/P, built and run: the package,
   library and headers it found are the installed ones, its sum is right.
   Where libclreduce_mpi was installed, clreduce::clreduce_mpi is defined
   and its program runs as a singleton rank; where not, it is not.  No
   cmake on PATH is a failure, never a skip (scripts/packages.txt).
7. The installed prefix, moved elsewhere, still works without any
   environment: clreduce and clreduce-bench find their library (rpath),
   the kernels and the shipped tuning under the new prefix; the CMake
   consumer, configured afresh against the moved prefix, finds the package
   and library there and runs (no LD_LIBRARY_PATH: CMake's build rpath).
Each step prints ok / FAIL; the last line is "N passed, N failed".
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import struct
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


CONSUMER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "cmake_consumer")

def version_cases(version):
    """find_package's requests against the version file of `version` (the
    installed clreduce.pc's): (request, compatible, exact), as
    SameMajorVersion answers them (cmake -P sets what find_package would)."""
    major, minor = (int(x) for x in version.split(".")[:2])
    cases = [(version, True, True), (str(major), True, False),
             ("%d.%d" % (major, minor), True, version == "%d.%d" % (major, minor)),
             ("%d.%d" % (major, minor + 1), False, False),
             ("%d.0" % (major + 1), False, False),
             ("%d...<%d" % (major, major + 1), True, False),
             ("%d.%d...%d.%d" % (major, minor, major, minor + 9), True, False),
             ("%d...%d.0" % (major, major + 1), False, False),
             ("%d.0...%d.0" % (major + 1, major + 2), False, False)]
    if major > 0:  # an older major version: not compatible either
        cases.append(("%d.9" % (major - 1), False, False))
    return cases


VERSION_SCRIPT = r"""
foreach(req IN LISTS REQUESTS)
  foreach(v PACKAGE_FIND_VERSION PACKAGE_FIND_VERSION_MAJOR
            PACKAGE_FIND_VERSION_RANGE PACKAGE_FIND_VERSION_MIN_MAJOR
            PACKAGE_FIND_VERSION_MAX PACKAGE_FIND_VERSION_MAX_MAJOR
            PACKAGE_FIND_VERSION_RANGE_MAX PACKAGE_VERSION
            PACKAGE_VERSION_COMPATIBLE PACKAGE_VERSION_EXACT
            PACKAGE_VERSION_UNSUITABLE)
    unset(${v})
  endforeach()
  if(req MATCHES "^([0-9.]+)[.][.][.](<?)([0-9.]+)$")
    set(PACKAGE_FIND_VERSION_RANGE "${req}")
    set(PACKAGE_FIND_VERSION "${CMAKE_MATCH_1}")
    set(PACKAGE_FIND_VERSION_MAX "${CMAKE_MATCH_3}")
    if(CMAKE_MATCH_2 STREQUAL "<")
      set(PACKAGE_FIND_VERSION_RANGE_MAX EXCLUDE)
    else()
      set(PACKAGE_FIND_VERSION_RANGE_MAX INCLUDE)
    endif()
    string(REGEX REPLACE "[.].*" "" PACKAGE_FIND_VERSION_MIN_MAJOR "${PACKAGE_FIND_VERSION}")
    string(REGEX REPLACE "[.].*" "" PACKAGE_FIND_VERSION_MAX_MAJOR "${PACKAGE_FIND_VERSION_MAX}")
  else()
    set(PACKAGE_FIND_VERSION "${req}")
  endif()
  string(REGEX REPLACE "[.].*" "" PACKAGE_FIND_VERSION_MAJOR "${PACKAGE_FIND_VERSION}")
  set(CMAKE_SIZEOF_VOID_P ${SIZEOF_VOID_P})
  include("${VERSION_FILE}")
  message("${req} ${SIZEOF_VOID_P} version=${PACKAGE_VERSION} compatible=${PACKAGE_VERSION_COMPATIBLE} exact=${PACKAGE_VERSION_EXACT} unsuitable=${PACKAGE_VERSION_UNSUITABLE}")
endforeach()
"""


def under(path, root):
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


def version_file_checks(cmake, version_file, version, tmp):
    """The installed clreduceConfigVersion.cmake answers as SameMajorVersion
    would for version, and a 32-bit project finds the 64-bit build (or the
    other way round) unsuitable."""
    cases = version_cases(version)
    script = os.path.join(tmp, "version-check.cmake")
    with open(script, "w") as f:
        f.write(VERSION_SCRIPT)
    reqs = ";".join(r for r, _, _ in cases)
    own = str(struct.calcsize("P"))
    other = "4" if own == "8" else "8"
    got = {}
    for size in (own, other):
        rc, out, err = sh([cmake, "-DVERSION_FILE=" + version_file,
                           "-DREQUESTS=" + reqs, "-DSIZEOF_VOID_P=" + size,
                           "-P", script])
        if not check(rc == 0, "cmake -P includes clreduceConfigVersion.cmake",
                     "exit %d\n%s%s" % (rc, out, err)):
            return
        for line in (out + err).splitlines():
            m = re.match(r"(\S+) (\d) version=(.*) compatible=(\S*) "
                         r"exact=(\S*) unsuitable=(\S*)$", line)
            if m:
                got[m.group(1, 2)] = dict(zip(
                    ("version", "compatible", "exact", "unsuitable"),
                    m.group(3, 4, 5, 6)))
    wrong = []
    for req, compatible, exact in cases:
        r = got.get((req, own), {})
        if (r.get("version") != version or
                (r.get("compatible") == "TRUE") != compatible or
                (r.get("exact") == "TRUE") != exact or r.get("unsuitable")):
            wrong.append("%s: %s" % (req, r))
    check(not wrong, "the version file: %s, SameMajorVersion (%s)" % (
          version, ", ".join("%s %s" % (r, "yes" if c else "no")
                             for r, c, _ in cases)), "; ".join(wrong))
    r = got.get((version, other), {})
    check(r.get("unsuitable") == "TRUE",
          "the version file: a %s-bit project finds this %s-bit build "
          "unsuitable" % (int(other) * 8, int(own) * 8), str(r))


def cmake_consumer(cmake, prefix, build, env, version, mpi, what):
    """Configure tests/cmake_consumer against prefix (CMAKE_PREFIX_PATH),
    build it and run it (and its MPI program where mpi is true): the
    package, library and headers found must all be under prefix."""
    rc, out, err = sh([cmake, "-S", CONSUMER, "-B", build,
                       "-DCMAKE_PREFIX_PATH=" + prefix,
                       "-DCMAKE_BUILD_TYPE=Release"], env=env)
    if not check(rc == 0, what + ": cmake configures tests/cmake_consumer "
                 "(find_package(clreduce 1.0 REQUIRED))",
                 "exit %d\n%s%s" % (rc, out, err)):
        return
    found = {}  # the consumer's "-- clreduce-consumer: <key> <value>" lines
    for line in out.splitlines():
        text = line.partition("-- clreduce-consumer: ")[2]
        for key in ("version", "dir", "location", "include", "mpi location",
                    "no mpi target"):
            if text == key or text.startswith(key + " "):
                found[key] = text[len(key):].strip()
    paths = [found.get(k, "") for k in ("dir", "location", "include")]
    check(found.get("version") == version and all(
              under(p, prefix) for p in paths) and
          os.path.isfile(found.get("location", "")),
          what + ": version %s, the package, the library and the headers "
          "found in %s" % (version, prefix), str(found))
    if mpi:
        check(under(found.get("mpi location", ""), prefix) and
              os.path.isfile(found.get("mpi location", "")),
              what + ": clreduce::clreduce_mpi in the prefix", str(found))
    else:
        check("no mpi target" in found and "mpi location" not in found,
              what + ": no clreduce::clreduce_mpi without libclreduce_mpi",
              str(found))
    rc, out, err = sh([cmake, "--build", build], env=env)
    if not check(rc == 0, what + ": cmake --build (-Wall -Wextra -Werror)",
                 "exit %d\n%s%s" % (rc, out, err)):
        return
    prog = os.path.join(build, "consumer")
    rc, out, err = sh(["ldd", prog], env=env)
    loaded = [l.split("=>")[1].split()[0] for l in out.splitlines()
              if "libclreduce.so" in l and "=>" in l]
    check(rc == 0 and loaded and under(loaded[0], prefix),
          what + ": the consumer loads libclreduce from the prefix: %s" %
          (loaded[0] if loaded else "none"), out + err)
    rc, out, err = sh([prog], env=env, cwd="/")
    check(rc == 0 and "clreduce-consumer: OK" in out,
          what + ": the consumer's sum is right (exit 0)",
          "exit %d\n%s%s" % (rc, out, err))
    if mpi:
        menv = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1",
                    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        rc, out, err = sh([os.path.join(build, "consumer_mpi")], env=menv,
                          cwd="/", timeout=120)
        check(rc == 0 and "clreduce-consumer-mpi: OK" in out,
              what + ": the clreduce::clreduce_mpi program's sum is right "
              "(a singleton rank, exit 0)", "exit %d\n%s%s" % (rc, out, err))


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
        # The CMake package, and a CMake project that uses it.
        cmake = shutil.which("cmake")
        check(cmake is not None, "cmake is on PATH (scripts/packages.txt)")
        cmake_dir = os.path.join(libdir, "cmake", "clreduce")
        has_mpi = find(dest, "libclreduce_mpi.so") is not None
        for f in ("clreduceConfig.cmake", "clreduceConfigVersion.cmake"):
            check(os.path.isfile(os.path.join(cmake_dir, f)),
                  "%s installed in %s" % (f, cmake_dir))
        cenv = {"LD_LIBRARY_PATH": None, "CLREDUCE_KERNEL_DIR": kdir,
                "CLREDUCE_CACHE_DIR": os.path.join(tmp, "cache")}
        rc, version, err = sh(["pkg-config", "--modversion", "clreduce"],
                              env=penv)
        version = version.strip()
        if cmake and check(rc == 0 and re.match(r"\d+\.\d+", version),
                           "pkg-config --modversion clreduce: " + version, err):
            version_file_checks(
                cmake, os.path.join(cmake_dir, "clreduceConfigVersion.cmake"),
                version, tmp)
            cmake_consumer(cmake, root, os.path.join(tmp, "cmake-build"), cenv,
                           version, has_mpi, "CMake")
        else:
            cmake = None
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
        # The build tree's clreduce reads the source tree's kernels, never
        # an installed copy at the prefix compiled in (which may be older:
        # scripts/setup.sh installs into /usr/local).
        bexe = os.path.join(a.build_dir, "src", "cli", "clreduce")
        rc, out, err = sh([bexe, "--n=2.5e3", "--repeat=1", "--json"],
                          env=menv, cwd="/")
        try:
            report = json.loads(out)
        except ValueError:
            report = {}
        kd = report.get("kernel_dir", "")
        check(rc == 0 and src_cl and
              os.path.realpath(kd) == os.path.realpath(src_cl),
              "the build tree's clreduce reads the source tree's kernels "
              "(kernel_dir %r; installed at the prefix compiled in: %s)"
              % (kd, os.path.isdir(os.path.join(datadir, "clreduce", "cl"))),
              "exit %d\n%s%s" % (rc, out, err))
        bench = os.path.join(moved, "bin", "clreduce-bench")
        rc, out, err = sh([bench, "--kernel=coarse", "--min-n=1e3",
                           "--max-n=1e3", "--repeat=2"], env=menv, cwd="/")
        tuning = [l for l in out.splitlines() if l.startswith("tuning:")]
        check(rc == 0 and tuning and os.path.realpath(
                  tuning[0].split(":", 1)[1].strip()).startswith(
                      os.path.realpath(moved)),
              "clreduce-bench in the moved prefix reads the shipped tuning "
              "there: %s" % (tuning[0] if tuning else "no tuning line"),
              "exit %d\n%s%s" % (rc, out, err))
        # The CMake package in the moved prefix: its paths come from where
        # the file is (CMAKE_CURRENT_LIST_DIR), no environment at all.
        if cmake:
            cmake_consumer(cmake, moved, os.path.join(tmp, "cmake-build-moved"),
                           menv, version, has_mpi, "CMake, prefix moved")
        shutil.rmtree(dest, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
