"""Shared by the Python tests: facts read from the program itself, so no
test keeps its own copy of them.

    kernels(exe) -> (reductions, scans): the kernel names in the order
    `clreduce --list-kernels --json` gives them (src/lib/kernel_table.h).
"""
import json
import subprocess

# The kernels the course notes teach: a listing must hold at least these
# (a floor against a table that lost a row; loops use kernels()).
KNOWN_REDUCTIONS = ["interleaved", "sequential", "first-add", "coarse"]
KNOWN_SCANS = ["kogge-stone", "kogge-stone-db", "brent-kung", "decoupled"]


def kernels(exe):
    p = subprocess.run([exe, "--list-kernels", "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, check=True)
    listed = json.loads(p.stdout.decode("utf-8"))["kernels"]
    reductions = [k["name"] for k in listed if k["kind"] == "reduction"]
    scans = [k["name"] for k in listed if k["kind"] == "scan"]
    return reductions, scans
