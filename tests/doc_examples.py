#!/usr/bin/env python3
"""Run the shell examples of a Markdown document, as a reader would.

    doc_examples.py --source-root DIR --build-root DIR [--list] FILE.md

Every fenced block whose info string starts with `sh` is an example, and
its words after `sh` say how it runs:

    ```sh                  run; every command must succeed
    ```sh exit=2           run; the block must end with exit status 2
    ```sh gpu              needs a GPU: run only where OpenCL shows one
                           (`clreduce --list-devices --json`), else skipped
    ```sh multi-node       needs several machines: never run here
    ```sh ci               the commands CI itself runs (README's two
                           commands): not run again here, but each must
                           be a line of .ci/run, as printed
    ```console             an example's output: each `$ command` line in
                           it is run and must succeed (the output shown is
                           the reader's, not compared)
    ```c program           a whole C program: compiled as C11 with -Wall
                           -Wextra -Werror against the library (pkg-config
                           clreduce), run, and it must exit 0 (the
                           program checks its own answers); other `c`
                           blocks are fragments, shown, not compiled

A block with another word after `sh`, or a `bash` / `shell` block, fails
the test: nothing escapes unmarked.  Blocks run in the order of the file,
in one scratch directory, so a block can use files an earlier block
made (`--save-input`).  The directory holds links to the source tree's
top-level entries and `build` -> the build tree, so commands written from
the clone's root (`data/...`, `examples/...`, `build/...`) run verbatim;
the programs (`clreduce`, `clreduce-bench`, `clreduce-mpi`) are the build
tree's, first on PATH, as `scripts/setup.sh` installs them.  pkg-config
finds the build tree's library (meson's -uninstalled .pc files).

Inline commands (`` `clreduce --opt ...` `` in a sentence or a table) are
not run, but every long option they name must be one the program's
`--help` lists, so a renamed option cannot linger in the prose.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402
from clrtest import check, finish  # noqa: E402

FENCE = re.compile(r"^(`{3,})(.*)$")
KNOWN = {"gpu", "multi-node", "ci"}
PROGRAMS = ("clreduce", "clreduce-bench", "clreduce-mpi")
TIMEOUT = 600  # seconds a block


def blocks(path):
    """(line, info words, text) of every fenced block."""
    out, cur = [], None
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip("\n"))
            if cur is None and m:
                cur = (no, m.group(1), m.group(2).split(), [])
            elif cur is not None and m and m.group(1) == cur[1] \
                    and not m.group(2).strip():
                out.append((cur[0], cur[2], "".join(cur[3])))
                cur = None
            elif cur is not None:
                cur[3].append(line)
    return out


def prose(path):
    """The text outside fenced blocks."""
    keep, inside, fence = [], False, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = FENCE.match(line.rstrip("\n"))
            if m and not inside:
                inside, fence = True, m.group(1)
            elif m and inside and m.group(1) == fence:
                inside = False
            elif not inside:
                keep.append(line)
    return "".join(keep)


def help_options(env, program):
    r = subprocess.run([program, "--help"], env=env, capture_output=True,
                       text=True, timeout=60)
    return set(re.findall(r"--[a-z][a-z0-9-]*", r.stdout + r.stderr))


def has_gpu(env):
    r = subprocess.run(["clreduce", "--list-devices", "--json"], env=env,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return False
    # every device has a "gpu" field: true for a GPU
    try:
        devices = json.loads(r.stdout).get("devices", [])
    except ValueError:
        return False
    return any(d.get("gpu") is True for d in devices)


def scratch_dir(tmp, source, build):
    for name in os.listdir(source):
        if name in (".git", "build") or name.startswith("."):
            continue
        os.symlink(os.path.join(source, name), os.path.join(tmp, name))
    os.symlink(build, os.path.join(tmp, "build"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-root", required=True)
    ap.add_argument("--list", action="store_true",
                    help="print the examples and how each would run")
    ap.add_argument("doc")
    a = ap.parse_args()
    source = os.path.abspath(a.source_root)
    build = os.path.abspath(a.build_root)
    doc = os.path.join(source, a.doc)

    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        [os.path.join(build, "src", d) for d in ("cli", "bench", "mpi")]
        + [env.get("PATH", "/usr/bin:/bin")])
    env["PKG_CONFIG_PATH"] = os.path.join(build, "meson-uninstalled")
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [os.path.join(build, "src", "lib"), os.path.join(build, "src", "mpi")]
        + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else []))
    # mpirun as root (CI): what `--allow-run-as-root` says, as the
    # environment, so the examples stay as a user types them
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    todo = []
    for line, info, text in blocks(doc):
        where = f"{a.doc}:{line}"
        lang = info[0] if info else ""
        if lang in ("bash", "shell", "zsh"):
            check(False, f"{where}: a `{lang}` block",
                  "shell examples are `sh` blocks (tests/doc_examples.py)")
            continue
        if lang == "console":
            for cmd in re.findall(r"^\$ (.*)$", text, re.M):
                todo.append((where, [], cmd + "\n", 0))
            continue
        if lang == "c" and info[1:] == ["program"]:
            todo.append((where, ["c"], text, 0))
            continue
        if lang == "c" and info[1:]:
            check(False, f"{where}: unknown mark {' '.join(info[1:])}",
                  "a C block is `c program` (compiled and run) or `c`")
            continue
        if lang != "sh":
            continue
        expect, tags, bad = 0, [], []
        for word in info[1:]:
            if word.startswith("exit=") and word[5:].isdigit():
                expect = int(word[5:])
            elif word in KNOWN:
                tags.append(word)
            else:
                bad.append(word)
        if bad:
            check(False, f"{where}: unknown mark {' '.join(bad)}",
                  "known: exit=N, " + ", ".join(sorted(KNOWN)))
            continue
        todo.append((where, tags, text, expect))

    if a.list:
        for where, tags, text, expect in todo:
            print(f"--- {where} {' '.join(tags)} exit={expect}\n{text}", end="")
        return 0

    # Inline commands: every long option must be in the program's --help.
    known = {p: help_options(env, p) for p in PROGRAMS
             if any(os.access(os.path.join(d, p), os.X_OK)
                    for d in env["PATH"].split(os.pathsep))}
    for span in re.findall(r"`([^`\n]+)`", prose(doc)):
        words = span.split()
        if not words or os.path.basename(words[0]) not in known:
            continue
        prog = os.path.basename(words[0])
        for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", span):
            check(opt in known[prog],
                  f"{a.doc}: `{span}`: {opt} is an option of {prog}",
                  f"{prog} --help does not list {opt}")

    with open(os.path.join(source, ".ci", "run")) as f:
        ci = [ln.strip() for ln in f]
    gpu = None
    with tempfile.TemporaryDirectory(prefix="clreduce-doc-") as tmp:
        scratch_dir(tmp, source, build)
        for where, tags, text, expect in todo:
            if "ci" in tags:
                for cmd in text.splitlines():
                    cmd = cmd.split("#")[0].strip()
                    if cmd:
                        ran = any(ln == cmd or ln.startswith(cmd + " ||")
                                  for ln in ci)
                        check(ran, f"{where}: `{cmd}` is a line of .ci/run",
                              ".ci/run must run README's commands as printed")
                continue
            if "multi-node" in tags:
                print(f"skip: {where}: needs several machines")
                continue
            if "gpu" in tags:
                if gpu is None:
                    gpu = has_gpu(env)
                if not gpu:
                    print(f"skip: {where}: needs a GPU")
                    continue
            # -e: a block stops at its first failing command, as a reader
            # would; pipefail: a failing producer is not hidden by a pipe
            script = "set -eo pipefail\n" + text
            if "c" in tags:
                name = "example_%s" % where.split(":")[-1]
                with open(os.path.join(tmp, name + ".c"), "w") as f:
                    f.write(text)
                script = ("set -eo pipefail\n"
                          f"cc -std=c11 -Wall -Wextra -Werror {name}.c "
                          f"$(pkg-config --cflags --libs clreduce) -o {name}\n"
                          f"./{name}\n")
            try:
                r = subprocess.run(["bash", "-c", script], cwd=tmp, env=env,
                                   capture_output=True, text=True,
                                   timeout=TIMEOUT)
                rc, out, err = r.returncode, r.stdout, r.stderr
            except subprocess.TimeoutExpired:
                rc, out, err = "timeout", "", f"over {TIMEOUT} s"
            first = text.strip().splitlines()[0] if text.strip() else ""
            check(rc == expect, f"{where}: {first} (exit {expect})",
                  f"exit {rc}\n--- the block:\n{text}--- stdout (tail):\n"
                  f"{out[-2000:]}--- stderr (tail):\n{err[-2000:]}")
    if clrtest.PASSED == 0 and clrtest.FAILED == 0:
        print(f"{a.doc}: no shell example and no inline command")
        return 77  # meson: skipped
    return finish(os.path.basename(__file__) + " " + a.doc)


if __name__ == "__main__":
    sys.exit(main())
