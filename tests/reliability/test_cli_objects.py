#!/usr/bin/env python3
"""Every OpenCL object the clreduce command creates is released, on
success and on every error path (suite 'reliability').

    test_cli_objects.py CLREDUCE --shim LIBFAULTSHIM --kernel-dir DIR

Each run has faultshim (tests/reliability/faultshim.c) preloaded: it counts
the contexts, queues, buffers, programs, kernels and events created,
retained and released, and writes what is still alive at exit to
CLR_FAULT_REPORT.  With CLR_FAULT it also makes one chosen OpenCL call
fail.  The test asserts the exit status, that the injected fault fired,
and 'live 0' / 'bad_releases 0' in the report.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import clrtest  # noqa: E402  (tests/clrtest.py)
check = clrtest.check
clrtest.QUIET = True  # print only the failures



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("clreduce")
    ap.add_argument("--shim", required=True)
    ap.add_argument("--kernel-dir", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="clreduce-objects-")
    broken = os.path.join(tmp, "broken-kernels")
    shutil.copytree(a.kernel_dir, broken)
    with open(os.path.join(broken, "reduce_sequential.cl"), "a") as f:
        f.write("\n}}} not OpenCL C (;\n")
    out = os.path.join(tmp, "scan.out")
    nocache = {"CLREDUCE_CACHE_DIR": ""}
    # (what, args, extra env, CLR_FAULT, expected exit)
    cases = [
        ("coarse sum", ["--n=10007"], {}, None, 0),
        ("interleaved double max", ["--kernel=interleaved", "--type=double",
                                    "--op=max", "--n=3001"], {}, None, 0),
        ("decoupled scan, --output", ["--kernel=decoupled", "--n=5003",
                                      "--output=" + out], {}, None, 0),
        ("kogge-stone-db exclusive", ["--kernel=kogge-stone-db",
                                      "--exclusive", "--type=long",
                                      "--n=999"], {}, None, 0),
        ("unknown device", ["--device=no-such-device", "--n=10"], {}, None, 2),
        ("kernel that fails to build", ["--kernel=sequential", "--n=100"],
         dict(nocache, CLREDUCE_KERNEL_DIR=broken), None, 3),
        ("missing kernel directory", ["--n=100"],
         {"CLREDUCE_KERNEL_DIR": os.path.join(tmp, "none")}, None, 3),
        ("clCreateBuffer fails", ["--n=10007", "--kernel=first-add"], {},
         "clCreateBuffer:1:-4", 3),
        ("clBuildProgram fails", ["--n=100", "--kernel=brent-kung"], nocache,
         "clBuildProgram:2:-11", 3),
        ("clEnqueueNDRangeKernel fails", ["--n=100003", "--kernel=sequential"],
         {}, "clEnqueueNDRangeKernel:2:-5", 3),
        ("the last clEnqueueNDRangeKernel fails (3rd run)",
         ["--n=5003", "--kernel=kogge-stone", "--output=" + out], {},
         "clEnqueueNDRangeKernel:LAST:-5", 3),
        ("clEnqueueReadBuffer fails (read-back)",
         ["--n=50001", "--kernel=coarse", "--type=long"], {},
         "clEnqueueReadBuffer:1:-5", 3),
        ("clEnqueueMapBuffer fails (scan read-back)",
         ["--n=5003", "--kernel=decoupled", "--output=" + out], {},
         "clEnqueueMapBuffer:1:-5", 3),
        ("clCreateCommandQueue fails", ["--n=100"], {},
         "clCreateCommandQueue:1:-6", 3),
    ]
    def calls_of(args, env, name):
        """How often a clean run calls name (for a fault on the last)."""
        report = os.path.join(tmp, "count.txt")
        env = dict(env, CLR_FAULT_REPORT=report)
        env.pop("CLR_FAULT", None)
        subprocess.run([a.clreduce, "--repeat=2"] + args, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=300)
        with open(report) as f:
            for l in f:
                if l.startswith("calls %s " % name):
                    return int(l.split()[2])
        return 0

    try:
        for what, args, env_extra, fault, want in cases:
            report = os.path.join(tmp, "report.txt")
            if os.path.exists(report):
                os.unlink(report)
            env = dict(os.environ)
            env.update(env_extra)
            env["LD_PRELOAD"] = a.shim
            env["CLR_FAULT_REPORT"] = report
            # ASan builds: the preloaded shim comes before libasan.
            env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                                   ":verify_asan_link_order=0").lstrip(":")
            env.pop("CLR_FAULT", None)
            if fault and ":LAST:" in fault:
                name = fault.split(":")[0]
                n = calls_of(args, env, name)
                check(n > 2, "%s: a clean run calls %s more than twice" %
                      (what, name), "%d calls" % n)
                fault = fault.replace(":LAST:", ":%d:" % n)
            if fault:
                env["CLR_FAULT"] = fault
            p = subprocess.run([a.clreduce, "--repeat=2"] + args, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, errors="replace", timeout=300)
            detail = "exit %d, stderr %r" % (p.returncode, p.stderr[-600:])
            check(p.returncode == want, "%s: exit %d" % (what, want), detail)
            try:
                with open(report) as f:
                    lines = f.read().splitlines()
            except OSError as ex:
                check(False, "%s: faultshim report written" % what, str(ex))
                continue
            fields = dict(l.split(" ", 1) for l in lines if " " in l)
            leaks = [l for l in lines if l.startswith("leak ")]
            creates = sum(int(l.split()[2]) for l in lines
                          if l.startswith("calls clCreate"))
            check(fields.get("live") == "0" and not leaks,
                  "%s: every OpenCL object released" % what, "\n".join(leaks))
            check(fields.get("bad_releases") == "0",
                  "%s: no double release" % what, fields.get("bad_releases"))
            if want == 0 or "device" not in what:
                check(creates > 0, "%s: the shim saw objects created" % what,
                      "%d clCreate* calls" % creates)
            if fault:
                check(fields.get("fired", "0") != "0",
                      "%s: the fault fired" % what, repr(fields.get("fired")))
            print("%-45s exit %d, %d clCreate* calls, live %s" %
                  (what, p.returncode, creates, fields.get("live")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return clrtest.finish("test_cli_objects")


if __name__ == "__main__":
    sys.exit(main())
