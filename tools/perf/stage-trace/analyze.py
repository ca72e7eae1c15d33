#!/usr/bin/env python3
"""Reads stage-trace's stderr (driver.c with the library built with
-Dstage_trace=true) and, for each traced call of a staged host-array write,
prints where its time went:
  first   the first block's copy (workers' start to its write's enqueue),
  bus     the first write's start to the last write's end, and the bytes'
          rate over it (GB/s),
  busy    the writes' own durations summed, and the rate they held,
  gaps    the bus idle between consecutive writes,
  after   the last write's end to the call's settle (the kernel and the
          result).
Times are in microseconds from the workers' start (B)."""
import sys

calls, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith('# n'):
        f = line.split()
        cur = {'n': int(f[2]), 'call': int(f[4]), 'ev': []}
        calls.append(cur)
    elif line.startswith('T ') and cur is not None:
        _, k, th, b, t = line.split()
        cur['ev'].append((float(t), k, int(th), int(b)))
bytes_per = 4
for c in calls:
    ev = c['ev']
    if not any(k == 'S' for _, k, _, _ in ev):
        continue
    Q = {b: t for t, k, _, b in ev if k == 'Q'}
    # Device times onto the host's clock: the first block's QUEUED time
    # is its enqueue (the queue was idle then).
    q = {b: t for t, k, _, b in ev if k == 'q'}
    off = Q[min(q)] - q[min(q)]
    S = {b: t + off for t, k, _, b in ev if k == 'S'}
    E = {b: t + off for t, k, _, b in ev if k == 'E'}
    Z = max(t for t, k, _, _ in ev if k == 'Z')
    blocks = sorted(S)
    nbytes = c['n'] * bytes_per
    bus = E[blocks[-1]] - S[blocks[0]]
    busy = sum(E[b] - S[b] for b in blocks)
    gaps = sum(max(0.0, S[b] - E[a]) for a, b in zip(blocks, blocks[1:]))
    print(f"n {c['n']} call {c['call']}: {len(blocks)} blocks; "
          f"first {Q[blocks[0]]:.0f}; bus {S[blocks[0]]:.0f}..{E[blocks[-1]]:.0f} "
          f"= {bus:.0f} us ({nbytes / bus / 1e3:.1f} GB/s); "
          f"busy {busy:.0f} us ({nbytes / busy / 1e3:.1f} GB/s); "
          f"gaps {gaps:.0f}; after {Z - E[blocks[-1]]:.0f}; "
          f"settled {Z:.0f}")
