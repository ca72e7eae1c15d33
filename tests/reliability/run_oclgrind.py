#!/usr/bin/env python3
"""Run a program under Oclgrind and judge Oclgrind's report.

    run_oclgrind.py --oclgrind PATH [--uninitialized] [--expect REGEX]...
                    -- PROGRAM [ARG]...

The program runs as
    oclgrind --data-races --check-api [--uninitialized] --log LOG PROGRAM ...
so Oclgrind is the only OpenCL platform it sees, and every diagnostic
Oclgrind has (data races, barrier divergence, out-of-bounds accesses,
uninitialised values, API misuse) lands in LOG.  Out-of-bounds and
barrier-divergence checks are always on in Oclgrind; the flags add the
rest.

Without --expect the test passes only when the program exits 0 and LOG
and the program's stderr are both empty: any Oclgrind report fails it.
With --expect (a deliberately broken kernel) it passes only when LOG
matches every REGEX: proof that the checker catches that class of bug.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MAX_SHOWN = 120  # lines of the Oclgrind log echoed into the test log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oclgrind", required=True)
    ap.add_argument("--uninitialized", action="store_true")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no program given")

    with tempfile.TemporaryDirectory(prefix="clr-oclgrind-") as tmp:
        log = os.path.join(tmp, "oclgrind.log")
        flags = ["--data-races", "--check-api", "--max-errors", "200"]
        if a.uninitialized:
            flags.append("--uninitialized")
        full = [a.oclgrind] + flags + ["--log", log] + cmd
        print("running:", " ".join(full), flush=True)
        env = dict(os.environ)
        env["CLREDUCE_CACHE_DIR"] = ""  # no binary cache: build every time
        try:
            p = subprocess.run(full, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, text=True,
                               errors="replace")
        except OSError as e:
            print("FAIL: cannot run oclgrind: %s" % e)
            return 1
        sys.stdout.write(p.stdout)
        report = ""
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                report = f.read()

    ok = True
    if report.strip():
        lines = report.strip().splitlines()
        print("---- Oclgrind report (%d lines%s) ----" %
              (len(lines), ", first %d shown" % MAX_SHOWN
               if len(lines) > MAX_SHOWN else ""))
        print("\n".join(lines[:MAX_SHOWN]))
        print("---- end of Oclgrind report ----")
    if p.stderr.strip():
        print("---- stderr ----")
        print(p.stderr.rstrip())
        print("---- end of stderr ----")

    if a.expect:
        for rx in a.expect:
            if re.search(rx, report, re.MULTILINE):
                print("ok: Oclgrind reported /%s/" % rx)
            else:
                print("FAIL: Oclgrind did not report /%s/" % rx)
                ok = False
        if p.returncode != 0:
            print("FAIL: the program exited with %d" % p.returncode)
            ok = False
    else:
        if p.returncode != 0:
            print("FAIL: the program exited with %d" % p.returncode)
            ok = False
        if report.strip():
            print("FAIL: Oclgrind reported problems (above)")
            ok = False
        if p.stderr.strip():
            print("FAIL: unexpected output on stderr (above)")
            ok = False
    print("run_oclgrind: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
