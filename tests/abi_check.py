#!/usr/bin/env python3
"""The built shared library against its recorded ABI (abi/*.abi).

    abi_check.py --baseline abi/libclreduce.abi --library LIB

Runs abidiff (libabigail, Debian's abigail-tools) between the baseline,
which tools/abi/update-baseline.sh wrote with abidw, and LIB, and reads its
exit status (bits: 1 error, 2 usage error, 4 ABI change, 8 incompatible
change) and its report:

  no change                                   pass
  functions or variables added, nothing else  pass; the report is printed,
                                              with a request to refresh
                                              the baseline
  anything else: a function or variable       FAIL
  removed or changed (a parameter's or the
  return type, a public struct's size or
  member offsets, an enumerator's value...),
  a symbol removed, a new SONAME

abidiff itself sets the incompatible bit (8) only for removed functions,
variables or symbols and a new SONAME or architecture: a member inserted
in the middle of a public struct is bit 4 alone, a "Changed" function in
its report; so every change to an existing interface fails here, and the
contributor who has checked that it keeps programs built against the old
header working (a member put in padding, an enumerator added before a
_COUNT) acknowledges it by refreshing the baseline in the same commit.
libabigail's harmless changes (an opaque struct's private definition, a
typedef's new name) are left out of its count, as abidiff does by default.

A missing abidiff fails the test (scripts/packages.txt installs it); so does
a library without debug information (the ABI's types are read from its
DWARF: a build with -Ddebug=false would compare symbols only).  A library
built for another architecture than the baseline's (abi/ describes x86-64)
is skipped (exit 77): the baseline cannot speak for it.

Why abidiff runs without --headers-dir2: the baselines carry no source
locations (abidw --no-show-locs, stable across build paths), and abidiff's
header filter keeps only the types whose location lies in the headers, so
with it every type change would be filtered out, silently.  Without it,
the private types behind the public opaque pointers (struct clr_context)
are libabigail's harmless declaration-to-definition changes.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ABIDIFF_ERROR = 1
ABIDIFF_USAGE_ERROR = 2
ABIDIFF_ABI_CHANGE = 4
ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 8

UPDATE = "tools/abi/update-baseline.sh"


def summary(report, what):
    """(removed, changed, added) of abidiff's "<what> changes summary" line,
    or None when the report has none."""
    m = re.search(r"^%s changes summary: (\d+) Removed(?: \([^)]*\))?, "
                  r"(\d+) Changed(?: \([^)]*\))?, (\d+) Added" % what,
                  report, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def symbols_summary(report, what):
    """(removed, added) of "<what> symbols changes summary", None if absent
    (symbols that no debug information describes)."""
    m = re.search(r"^%s symbols changes summary: (\d+) Removed(?: \([^)]*\))?"
                  r", (\d+) Added" % what, report, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def has_debug_info(library):
    readelf = shutil.which("readelf")
    if readelf is None:
        sys.exit("FAIL: readelf not found (binutils)")
    out = subprocess.run([readelf, "-S", "--wide", library], check=True,
                         text=True, stdout=subprocess.PIPE).stdout
    return re.search(r"\s\.z?debug_info\s", out) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--library", required=True)
    args = ap.parse_args()
    name = os.path.basename(args.baseline)

    abidiff = os.environ.get("ABIDIFF") or shutil.which("abidiff")
    if abidiff is None:
        print("FAIL: abidiff not found: install abigail-tools "
              "(apt-get install abigail-tools; scripts/packages.txt lists "
              "it, scripts/setup.sh and CI install it)")
        return 1
    if not os.path.exists(args.baseline):
        print("FAIL: no baseline %s: run %s to record it"
              % (args.baseline, UPDATE))
        return 1
    if not has_debug_info(args.library):
        print("FAIL: %s has no debug information, so abidiff would compare "
              "its symbols only: the ABI check needs a build with debug "
              "info (-Ddebug=true: buildtype debugoptimized, the default, "
              "or debug)" % args.library)
        return 1

    cmd = [abidiff, args.baseline, args.library]
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    rc, report = p.returncode, p.stdout
    print("abidiff: exit status %d (%.2f s)" % (rc, time.monotonic() - t0))

    arch = re.search(r"architecture changed from '([^']*)' to '([^']*)'",
                     report)
    if arch:
        print(report)
        print("SKIP: %s describes %s, this library is %s: the baselines "
              "speak for one architecture" % (name, arch.group(1),
                                              arch.group(2)))
        return 77
    if rc & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
        print(report)
        print("FAIL: abidiff could not compare %s with %s (exit status %d)"
              % (args.library, args.baseline, rc))
        return 1
    if rc == 0:
        print("%s: the ABI of %s is the baseline's" % (args.library, name))
        return 0

    funcs = summary(report, "Functions")
    vars_ = summary(report, "Variables")
    fsyms = symbols_summary(report, "Function")
    vsyms = symbols_summary(report, "Variable")
    additions_only = (
        not rc & ABIDIFF_ABI_INCOMPATIBLE_CHANGE and
        funcs is not None and vars_ is not None and
        funcs[0] == funcs[1] == vars_[0] == vars_[1] == 0 and
        (fsyms is None or fsyms[0] == 0) and (vsyms is None or vsyms[0] == 0)
        and "SONAME changed" not in report)
    print(report)
    if additions_only:
        print("PASS, a compatible ABI change: interfaces added, none changed "
              "or removed.  Refresh the baseline in the commit that adds "
              "them, so that the next change is checked against them too: "
              "%s (then commit abi/)" % UPDATE)
        return 0
    why = ("abidiff's incompatible bit (8)"
           if rc & ABIDIFF_ABI_INCOMPATIBLE_CHANGE else
           "an existing interface changed or removed (abidiff exit status "
           "%d)" % rc)
    print("FAIL: incompatible ABI change against %s: %s.\n"
          "Programs built against the recorded header may break: a public "
          "struct's size or member offsets, a parameter or return type, an "
          "enumerator's value, a removed function.\n"
          "- If it is a mistake, keep the old layout: a new function "
          "rather than a new parameter; a new enumerator before the "
          "_COUNT; a struct the caller allocates (clr_options, clr_value) "
          "grows only into its padding, in no other place.\n"
          "- If you have checked that it keeps old binaries working (a "
          "member put in padding, an enumerator added before a _COUNT), or "
          "it is a deliberate break: run %s and commit abi/ with the "
          "change; a break after 1.0 also bumps clreduce_soversion "
          "(src/lib/meson.build) and the version nodes of "
          "src/lib/libclreduce.map and src/mpi/libclreduce_mpi.map."
          % (name, why, UPDATE))
    return 1


if __name__ == "__main__":
    sys.exit(main())
