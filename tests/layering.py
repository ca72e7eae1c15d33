#!/usr/bin/env python3
"""The library's units call each other in one direction only.

    layering.py LIBCLREDUCE.a SRC_LIB_MESON_BUILD

Reads which unit defines and which uses each symbol (`nm -A` over the
static archive, one member a unit), then checks that
- no unit calls a unit that calls it back, directly or through others
  (no circle), and
- every unit calls only units listed before it in src/lib/meson.build's
  lib_sources, so that list reads bottom-up.
Prints each unit's level (1: calls no other unit) and exits 1 on a
violation, naming the symbols that make it.
"""
import collections
import re
import subprocess
import sys


def units_in_order(meson_build):
    text = open(meson_build).read()
    block = text[text.index("lib_sources = files("):]
    block = block[: block.index("\n)")]
    return [m.replace("/", "_") for m in re.findall(r"'([a-z_/]+)\.c'", block)]


def symbols(archive):
    out = subprocess.run(["nm", "-A", archive], check=True,
                         capture_output=True, text=True).stdout
    defs, uses = {}, collections.defaultdict(set)
    for line in out.splitlines():
        where, _, rest = line.rpartition(".c.o:")
        unit = where.split(":")[-1]
        parts = rest.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defs[parts[2]] = unit
        elif len(parts) == 2 and parts[0] == "U":
            uses[unit].add(parts[1])
    return defs, uses


def main():
    archive, meson_build = sys.argv[1:3]
    order = units_in_order(meson_build)
    defs, uses = symbols(archive)
    calls = collections.defaultdict(dict)  # unit -> callee -> symbols
    for unit, syms in uses.items():
        for s in sorted(syms):
            if s in defs and defs[s] != unit:
                calls[unit].setdefault(defs[s], []).append(s)
    units = sorted(set(defs.values()) | set(uses))
    bad = 0
    # A generated unit that calls no other (the kernels and tuning files
    # that -Dembed_kernels builds in: data only) sits below every unit.
    missing = [u for u in units if u not in order and
               not (u.startswith("meson-generated_") and not calls[u])]
    if missing:
        print("not in lib_sources:", " ".join(missing))
        bad = 1
    rank = {u: i for i, u in enumerate(order)}
    for u in units:
        for callee, syms in calls[u].items():
            if rank.get(callee, -1) >= rank.get(u, -1):
                print(f"{u} calls {callee}, listed after it: {' '.join(syms)}")
                bad = 1
    # Levels (a circle makes the recursion meet itself).
    level, active = {}, set()

    def lvl(u):
        if u in level:
            return level[u]
        if u in active:
            raise RecursionError(u)
        active.add(u)
        level[u] = 1 + max([lvl(c) for c in calls[u]] or [0])
        active.discard(u)
        return level[u]

    for u in units:
        try:
            lvl(u)
        except RecursionError as e:
            print(f"circle through {e}")
            return 1
    for u in sorted(units, key=lambda x: (level[x], rank.get(x, 0))):
        print(level[u], u, "->", " ".join(sorted(calls[u])))
    print(f"{len(units)} units, {max(level.values())} levels, "
          f"{'violations above' if bad else 'no circle, listed bottom-up'}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
