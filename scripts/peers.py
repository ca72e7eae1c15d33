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


def random_segments(out):
    """The offsets of $out/random.off (measure-common.sh's segment_shapes)
    and the segments' lengths as a CUDA tensor."""
    import array
    off = array.array("Q")
    with open(out + "/random.off", "rb") as f:
        off.frombytes(f.read())
    lengths = torch.tensor([off[i + 1] - off[i] for i in range(len(off) - 1)],
                           device="cuda")
    return off, lengths
