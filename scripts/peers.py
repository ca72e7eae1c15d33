"""Timing of PyTorch peers for the measurement scripts (*-measure.sh):
the median of r CUDA-event timings of f after three warm-up calls, and one
line a peer.  Imported as `from peers import med, report` with scripts/ on
sys.path."""
import torch


def med(f, r):
    for _ in range(3):
        f()
    ts = []
    for _ in range(r):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def report(peers, r):
    """peers: (name, function, bytes it reads) each."""
    for name, f, nbytes in peers:
        ms = med(f, r)
        print("peer %-36s %.4f ms  %7.1f GB/s" % (name, ms, nbytes / ms / 1e6))
