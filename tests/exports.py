#!/usr/bin/env python3
"""The shared libraries export exactly their header's functions.

    exports.py HEADER LIBRARY [HEADER LIBRARY]...

For each pair: the functions HEADER declares with CLR_API (read from the
text, comments and preprocessor lines left out) against the dynamic symbols
LIBRARY defines (`nm -D --defined-only`): none missing, none extra, no data
symbol, every one under the version node named after the library's SONAME
(libclreduce.so.1: CLREDUCE_1; libclreduce_mpi.so.1: CLREDUCE_MPI_1; the
version scripts src/lib/libclreduce.map and src/mpi/libclreduce_mpi.map),
as the default version (name@@NODE); and every function HEADER declares
has its comment: one ending on the line above its declaration (or above a
run of declarations with no blank line between, which the comment then
describes together), or one inside the declaration.  A missing nm or
readelf is a failure.
"""
import re
import shutil
import subprocess
import sys


def header_functions(path):
    """The names CLR_API declares in the header at path: functions, and
    variables (declarations without a parameter list)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # comments out, then preprocessor lines with their continuations (the
    # CLR_API definitions, the X-macro tables)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    functions, variables = set(), set()
    for m in re.finditer(r"\bCLR_API\b([^;{]*)", text):
        decl = m.group(1)
        paren = decl.find("(")
        if paren >= 0:   # the name just before the parameter list
            functions.add(re.findall(r"[A-Za-z_]\w*", decl[:paren])[-1])
        else:
            variables.add(re.findall(r"[A-Za-z_]\w*", decl)[-1])
    return functions, variables


def undocumented(path):
    """The CLR_API declarations of the header at path that no comment
    describes (see the module's text), as 'line: name'."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    missing = []
    for i, line in enumerate(lines):
        if not line.startswith("CLR_API"):
            continue
        j = i
        while j < len(lines) - 1 and ";" not in lines[j] and "{" not in lines[j]:
            j += 1
        decl = " ".join(lines[i:j + 1])
        if "/*" in decl:
            continue
        k = i - 1   # back over the declarations of one run
        while k >= 0 and lines[k].strip() and not lines[k].rstrip().endswith("*/"):
            k -= 1
        if k < 0 or not lines[k].rstrip().endswith("*/"):
            paren = decl.find("(")
            name = re.findall(r"[A-Za-z_]\w*", decl[:paren if paren >= 0 else None])[-1]
            missing.append("%d: %s" % (i + 1, name))
    return missing


def run(argv):
    tool = shutil.which(argv[0])
    if tool is None:
        sys.exit("exports: %s not found (binutils)" % argv[0])
    return subprocess.run([tool] + argv[1:], check=True, text=True,
                          stdout=subprocess.PIPE).stdout


def check(header, library):
    errors = []
    functions, variables = header_functions(header)
    if not functions:
        return ["%s: no CLR_API function found (parser broken?)" % header]
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]",
                  run(["readelf", "-d", library]))
    if not m:
        return ["%s: no SONAME" % library]
    soname = m.group(1)
    sm = re.fullmatch(r"lib(\w+)\.so\.(\d+)", soname)
    if not sm:
        return ["%s: SONAME %s is not lib<name>.so.<N>" % (library, soname)]
    node = "%s_%s" % (sm.group(1).upper(), sm.group(2))

    exported_funcs, exported_data, nodes = {}, {}, set()
    for line in run(["nm", "-D", "--defined-only", library]).splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, sym = parts[-2], parts[-1]
        if kind == "A":            # a version node's own symbol
            nodes.add(sym)
            continue
        name, sep, version = sym.partition("@")
        if kind in "TtWiu":
            exported_funcs[name] = version
        else:
            exported_data[name] = (kind, version)

    for name in sorted(functions - exported_funcs.keys()):
        errors.append("declared in %s but not exported: %s" % (header, name))
    for name in sorted(exported_funcs.keys() - functions):
        errors.append("exported but not declared CLR_API in %s: %s"
                      % (header, name))
    for name, (kind, _) in sorted(exported_data.items()):
        if name not in variables:
            errors.append("exported data symbol (nm type %s): %s"
                          % (kind, name))
    for name in sorted(variables - exported_data.keys()):
        errors.append("variable declared in %s but not exported: %s"
                      % (header, name))
    if nodes != {node}:
        errors.append("version nodes %s, want exactly %s (from SONAME %s)"
                      % (sorted(nodes) or "none", node, soname))
    for name, version in sorted(list(exported_funcs.items()) +
                                [(n, v[1]) for n, v in exported_data.items()]):
        if version != "@" + node:
            errors.append("%s has version '%s', want '@%s' (the default "
                          "version)" % (name, version or "none", node))
    print("%s (SONAME %s): %d functions, %d variables of %s exported under "
          "%s" % (library, soname, len(exported_funcs), len(exported_data),
                  header, node))
    for where in undocumented(header):
        errors.append("%s:%s has no comment (what it does, and where it "
                      "departs from the header's rules: blocking, errors, "
                      "ownership, threads)" % (header, where))
    return errors


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    errors = []
    for header, library in zip(args[::2], args[1::2]):
        errors += check(header, library)
    for e in errors:
        print("FAIL: " + e)
    if errors:
        print("The exports come from CLR_API (include/*.h: default "
              "visibility) and the version scripts (src/lib/libclreduce.map,"
              " src/mpi/libclreduce_mpi.map).")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
