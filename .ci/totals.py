#!/usr/bin/env python3
"""Add up meson test results for CI's closing line.

  totals.py add TOTALS TESTLOG.json   add one `meson test` run's results
  totals.py fail TOTALS               count one failure (a step that
                                      stopped before its tests ran)
  totals.py print TOTALS              print "N passed, N failed"

TOTALS is a two-number text file (passed failed).  A test passes when
meson says OK, EXPECTEDFAIL or SKIP; anything else (FAIL, ERROR, TIMEOUT,
UNEXPECTEDPASS, ...) counts as failed.  A missing or empty log (meson
could not run its tests at all) counts as one failure.
"""
import json
import os
import sys

PASS = {"OK", "EXPECTEDFAIL", "SKIP"}


def read(path):
    if not os.path.exists(path):
        return [0, 0]
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "add":
        passed, failed = read(sys.argv[2])
        results = []
        try:
            with open(sys.argv[3]) as f:
                results = [json.loads(line)["result"] for line in f if line.strip()]
        except OSError:
            pass
        if not results:
            failed += 1
        for r in results:
            if r in PASS:
                passed += 1
            else:
                failed += 1
        with open(sys.argv[2], "w") as f:
            f.write(f"{passed} {failed}\n")
    elif len(sys.argv) == 3 and sys.argv[1] == "fail":
        passed, failed = read(sys.argv[2])
        with open(sys.argv[2], "w") as f:
            f.write(f"{passed} {failed + 1}\n")
    elif len(sys.argv) == 3 and sys.argv[1] == "print":
        passed, failed = read(sys.argv[2])
        print(f"{passed} passed, {failed} failed")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
