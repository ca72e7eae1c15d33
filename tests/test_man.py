#!/usr/bin/env python3
"""The commands' man pages (doc/meson.build, tools/man/help2man.py).

    test_man.py --source-dir DIR --build-dir DIR --page EXE PAGE ...

For each program and its generated page: --help works without an OpenCL
device (an empty ICD vendor directory) and says the same as with one; the
page has its sections, its .TH names the version --version prints, and
every option --help lists (at the start of an option line) is a bold tag
of OPTIONS, every option its usage line names is in SYNOPSIS, and every
--option its text mentions anywhere is in the page; every '-' is \\- and
every escape one the generator writes; ENVIRONMENT names every CLREDUCE_
variable that src/ reads (getenv); meson installs the page into
mandir/man1; and groff (or man) renders it without a warning, no line
wider than 80 columns (skipped, and said so, when neither is installed).
No kernel runs: a second or two.

Every case prints one line; the last line is "N passed, N failed".
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clrtest  # noqa: E402  (tests/clrtest.py)
from clrtest import check, show  # noqa: E402

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
            "ENVIRONMENT", "SEE ALSO"]
OPTION = re.compile(r"(?<![\w-])--?[A-Za-z0-9][\w-]*")


def roff(text):
    return text.replace("\\", "\\e").replace("-", "\\-")


def sections(page):
    """{name: text} of the page's .SH sections."""
    out, cur = {}, None
    for ln in page.splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', ln)
        if m:
            cur = m.group(1)
            out[cur] = ""
        elif cur:
            out[cur] += ln + "\n"
    return out


def listed_options(help_text):
    """The options at the start of --help's option lines (indented a
    little, starting with '-'), and those of its usage lines."""
    opts, usage = set(), set()
    for ln in help_text.splitlines():
        m = re.match(r"^ {1,8}(-.*)$", ln)
        if m:
            spec = re.split(r" {2,}", m.group(1))[0]
            opts.update(OPTION.findall(re.sub(r"=\S*", "", spec)))
        elif re.match(r"^usage:", ln, re.I):
            usage.update(OPTION.findall(ln.split(":", 1)[1]))
    return opts, usage


def check_page(exe, path, env_vars, installed):
    prog = os.path.basename(exe)
    if not check(os.path.isfile(path) and os.path.getsize(path) > 0,
                 "%s: the page %s exists" % (prog, path)):
        return
    with open(path, encoding="utf-8") as f:
        page = f.read()
    # Open MPI's MPI_Init leaks: under .ci/sanitize's ASan, LeakSanitizer
    # would fail clreduce-mpi's --help (its leaks are the mpi suite's).
    asan = os.environ.get("ASAN_OPTIONS")
    env = {}
    if asan and prog == "clreduce-mpi":
        env["ASAN_OPTIONS"] = asan + ":detect_leaks=0"
    rc, help_text, err = clrtest.run([exe, "--help"], env=env)
    check(rc == 0 and help_text.strip(), "%s --help" % prog,
          show(rc, help_text, err))
    with tempfile.TemporaryDirectory(prefix="clreduce-man-") as empty:
        rc2, out2, err2 = clrtest.run([exe, "--help"], env=dict(
            env, OCL_ICD_VENDORS=empty, OCL_ICD_FILENAMES=None))
    check(rc2 == 0 and out2 == help_text,
          "%s --help without an OpenCL platform: the same text" % prog,
          show(rc2, out2, err2))
    rc, version, err = clrtest.run([exe, "--version"], env=env)
    version = version.splitlines()[0].strip() if version.strip() else ""
    th = re.search(r'^\.TH "([^"]*)" 1 "[^"]*" "([^"]*)"', page, re.M)
    check(rc == 0 and th and th.group(1) == roff(prog.upper()) and
          th.group(2) == roff(version),
          "%s: .TH names section 1 and '%s'" % (prog, version),
          th.group(0) if th else "no .TH line")

    sec = sections(page)
    missing = [s for s in SECTIONS if s not in sec]
    check(not missing, "%s: sections %s" % (prog, ", ".join(SECTIONS)),
          "missing: %s" % missing)
    check(re.match(r"^%s \\- \S" % re.escape(roff(prog)),
                   sec.get("NAME", "")) is not None,
          "%s: NAME is 'name \\- what it does'" % prog, sec.get("NAME", ""))
    check(re.search(r"^\.TP\n\.B \d+$", sec.get("EXIT STATUS", ""), re.M)
          is not None, "%s: EXIT STATUS gives each code" % prog,
          sec.get("EXIT STATUS", ""))

    opts, usage = listed_options(help_text)
    tags = sec.get("OPTIONS", "")
    lost = sorted(o for o in opts if "\\fB%s\\fR" % roff(o) not in tags)
    check(opts and not lost,
          "%s: OPTIONS has a tag for each of the %d options --help lists" %
          (prog, len(opts)), "missing: %s" % lost)
    lost = sorted(o for o in usage
                  if "\\fB%s\\fR" % roff(o) not in sec.get("SYNOPSIS", ""))
    check(not lost, "%s: SYNOPSIS has the usage line's options %s" %
          (prog, sorted(usage)), "missing: %s" % lost)
    mentioned = set(OPTION.findall(help_text))
    mentioned = {o for o in mentioned if o.startswith("--")}
    lost = sorted(o for o in mentioned if roff(o) not in page)
    check(not lost, "%s: the page mentions every --option --help does (%d)"
          % (prog, len(mentioned)), "missing: %s" % lost)

    text = [ln for ln in page.splitlines() if not ln.startswith('.\\"')]
    bad_dash = [ln for ln in text if re.search(r"(?<!\\)-", ln)]
    check(not bad_dash, "%s: every '-' is written \\-" % prog,
          "%r" % bad_dash[:3])
    bad_esc = [ln for ln in text
               if re.search(r"\\(?!e|-|&|f[BIR]|\(dq|\[u[0-9A-F]{4}\])", ln)]
    check(not bad_esc, "%s: only the generator's escapes" % prog,
          "%r" % bad_esc[:3])
    macros = {".TH", ".SH", ".SS", ".PP", ".TP", ".B", ".BR", ".br", ".nf",
              ".fi", ".nh", ".ad"}
    bad_req = [ln for ln in text if ln[:1] in (".", "'") and
               ln.split()[0] not in macros]
    check(not bad_req, "%s: no text line read as a request" % prog,
          "%r" % bad_req[:3])
    env = sec.get("ENVIRONMENT", "")
    lost = sorted(v for v in env_vars if ".B %s\n" % roff(v) not in env)
    check(env_vars and not lost, "%s: ENVIRONMENT names %s" %
          (prog, ", ".join(sorted(env_vars))), "missing: %s" % lost)

    dest = installed.get(os.path.realpath(path), "")
    check(re.search(r"/man1/%s\.1$" % re.escape(prog), dest) is not None,
          "%s: meson install puts the page in mandir/man1" % prog,
          "installed as %r" % dest)
    render(prog, path)


def render(prog, path):
    groff, man = shutil.which("groff"), shutil.which("man")
    if groff:
        cmd = [groff, "-man", "-Tutf8", "-ww", "-rLL=78n", path]
        env = {}
    elif man:
        cmd = [man, "--warnings", "-l", path]
        env = {"MANWIDTH": "80", "MAN_KEEP_FORMATTING": None,
               "MANPAGER": "cat", "PAGER": "cat"}
    else:
        print("skip: %s: rendering (neither groff nor man is installed)" %
              prog)
        return
    rc, out, err = clrtest.run(cmd, env=env)
    check(rc == 0 and not err.strip() and out.strip(),
          "%s: %s renders it without a warning" %
          (prog, os.path.basename(cmd[0])),
          "exit %d, stderr %r" % (rc, err[-600:]))
    plain = re.sub(r"\x1b\[[0-9;]*m|.\x08", "", out)
    wide = [ln for ln in plain.splitlines() if len(ln) > 80]
    check(not wide, "%s: no rendered line wider than 80 columns" % prog,
          "%r" % wide[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--page", nargs=2, action="append", required=True,
                    metavar=("EXE", "PAGE"))
    a = ap.parse_args()
    env_vars = set()
    for src in glob.glob(os.path.join(a.source_dir, "src", "**", "*.c"),
                         recursive=True):
        with open(src, encoding="utf-8", errors="replace") as f:
            env_vars.update(re.findall(r'getenv\("(CLREDUCE_\w+)"\)',
                                       f.read()))
    with open(os.path.join(a.build_dir, "meson-info",
                           "intro-installed.json")) as f:
        installed = {os.path.realpath(k): v for k, v in json.load(f).items()}
    for exe, page in a.page:
        check_page(os.path.abspath(exe), os.path.abspath(page), env_vars,
                   installed)
    return clrtest.finish("test_man")


if __name__ == "__main__":
    sys.exit(main())
