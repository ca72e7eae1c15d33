"""Timing of PyTorch peers for the measurement scripts (*-measure.sh):
the median of r CUDA-event timings of f after three warm-up calls, and one
line a peer.  Imported as `from peers import med, report` with tools/perf/
on sys.path."""
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


def wall(f, r):
    """The median wall clock (ms) of r calls of f after three warm-up
    calls: what a caller waits for, not just the device."""
    import time
    for _ in range(3):
        f()
    ts = []
    for _ in range(r):
        t0 = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def small_calls(r):
    """PyTorch's small calls, n = 1e3 and 1e4: a device
    tensor's x.sum().item(), and a host tensor's x.to("cuda").sum().item(),
    wall clock, median of r."""
    for n in (1000, 10000):
        d = torch.rand(n, device="cuda")
        print("peer torch device x.sum().item() n=%d: %.1f us"
              % (n, wall(lambda: d.sum().item(), r) * 1e3))
        h = torch.rand(n)
        print("peer torch host x.to(cuda).sum().item() n=%d: %.1f us"
              % (n, wall(lambda: h.to("cuda").sum().item(), r) * 1e3))


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


def segment_peers(out, how):
    """The segment shapes (segment_shapes' offsets in $out) as CUDA tensors,
    and PyTorch's peers on them for report(): torch.segment_reduce of `how`
    ("sum" or "max") over the random and the long shapes, the 10000 x 1000
    batch's rows (M.sum(dim=1), or M.argmax(dim=1) for "max") and one
    array of 1e8 (x.sum(), x.argmax())."""
    off, lengths = random_segments(out)
    x = torch.rand(int(off[-1]), device="cuda")
    three = torch.tensor([30_000_000] * 3, device="cuda")
    y = torch.rand(90_000_000, device="cuda")
    m = torch.rand(10_000, 1_000, device="cuda")
    s = torch.rand(100_000_000, device="cuda")
    rows, whole = ("sum", "sum") if how == "sum" else ("argmax", "argmax")
    return [
        ("segment_reduce %s, random 1..200" % how,
         lambda: torch.segment_reduce(x, how, lengths=lengths),
         4 * x.numel() + 8 * len(off)),
        ("segment_reduce %s, 3 x 3e7" % how,
         lambda: torch.segment_reduce(y, how, lengths=three),
         4 * y.numel() + 32),
        ("M.%s(dim=1), 10000 x 1000" % rows,
         lambda: getattr(m, rows)(dim=1), 4 * m.numel()),
        ("x.%s(), 1e8" % whole, lambda: getattr(s, whole)(), 4 * s.numel())]


def kernel_times(f, r, skip=()):
    """The median device time (ms) of the GPU work that one call of f
    launches, from r profiled calls after three warm-up calls (CUPTI
    through torch.profiler: each kernel's start to end on the device, as
    OpenCL's profiling events time clreduce's kernels); the same leaving
    out the activities whose names start with one of `skip`; and the
    names of those it counts."""
    from torch.profiler import profile, ProfilerActivity
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(r):
            f()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CUDA]
    per_call = len(kernels) // r if r else 0
    if per_call == 0 or per_call * r != len(kernels):
        nan = float("nan")
        return nan, nan, {"(%d activities in %d calls)" % (len(kernels), r)}
    calls = [kernels[i * per_call:(i + 1) * per_call] for i in range(r)]

    def median(leave_out):
        ts = sorted(sum(k.time_range.elapsed_us() for k in c
                        if not k.name.startswith(leave_out)) for c in calls)
        return ts[r // 2] / 1e3
    return median(()), median(tuple(skip)), {k.name for k in calls[0]}


def mid_kernels(r):
    """The mid sizes' peers: PyTorch's x.sum() and x.clone() of n floats
    on the GPU, n = 1e6 .. 2e7, back to back on one tensor (hot in the L2
    where it fits, as clreduce's resident program times them), the device
    time of their kernels, median of r; the sum also without the memset
    that zeroes its semaphore.  First a kernel that does next to nothing
    (fill 32 floats): CUPTI's floor, beside tools/perf/empty_kernel.c's."""
    y = torch.empty(32, device="cuda")
    t, _, names = kernel_times(lambda: y.fill_(1.0), r)
    print("peer torch fill of 32 floats: %.4f ms (%s)"
          % (t, ", ".join(sorted(m[:50] for m in names))))
    for n in (1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000):
        x = torch.ones(n, device="cuda")
        s, k, names = kernel_times(lambda: x.sum(), r, skip=("Memset",))
        c, _, _ = kernel_times(lambda: x.clone(), r)
        print("peer torch n=%d: sum %.4f ms (%s), its reduce kernel alone "
              "%.4f ms; clone %.4f ms"
              % (n, s, ", ".join(sorted(m[:40] for m in names)), k, c))


# clreduce-bench --matrix's shapes (rows, cols, axis): rows (axis 1) of
# 1e3, 100, 10 and 1e4 elements, then columns (axis 0) of 1e5, 1e3, 1e7
# and 10, 1e8 elements each.
MATRIX_SHAPES = [(100_000, 1000, 1), (1_000_000, 100, 1), (10_000_000, 10, 1),
                 (10_000, 10_000, 1), (100_000, 1000, 0), (1000, 100_000, 0),
                 (10_000_000, 10, 0), (10, 10_000_000, 0)]


def parse_shapes(text):
    """clreduce-bench's --shapes=RxC[:axis],... as (rows, cols, axis)
    tuples (no axis: both, rows first); None or "" gives MATRIX_SHAPES."""
    from decimal import Decimal
    if not text:
        return list(MATRIX_SHAPES)
    shapes = []
    for tok in text.split(","):
        dims, _, axis = tok.partition(":")
        r, c = (int(Decimal(v)) for v in dims.split("x"))
        shapes += [(r, c, a) for a in ((int(axis),) if axis else (1, 0))]
    return shapes


def matrix_peers(r, shapes=None):
    """PyTorch's peers of clreduce-bench --matrix on its shapes (float32,
    uniform in [0, 1), one tensor of the largest size viewed as each
    shape): M.sum(dim=axis) and torch.var_mean(M, dim=axis, correction=0),
    where axis 1 gives a result per row and axis 0 one per column, as the
    bench's axis.  One line a peer and shape: the CUDA-event median of r
    calls (med) and the device time of the kernels alone (kernel_times,
    CUPTI: as OpenCL's profiling events time clreduce's kernels), GB/s of
    rows x cols x 4 bytes over each."""
    if shapes is None or isinstance(shapes, str):
        shapes = parse_shapes(shapes)
    base = torch.rand(max(rows * cols for rows, cols, _ in shapes),
                      device="cuda")
    # the flat array's var_mean (clreduce-bench --op=var of as many)
    nbytes = 4 * base.numel()
    for name, f in (("x.sum()", lambda: base.sum()),
                    ("torch.var_mean(x, correction=0)",
                     lambda: torch.var_mean(base, correction=0))):
        ms = med(f, r)
        k, _, _ = kernel_times(f, r)
        print("peer flat   %-11d %-38s %.4f ms %7.1f GB/s  kernels "
              "%.4f ms %7.1f GB/s"
              % (base.numel(), name, ms, nbytes / ms / 1e6, k,
                 nbytes / k / 1e6))
    for rows, cols, axis in shapes:
        m = base[:rows * cols].view(rows, cols)
        nbytes = 4 * rows * cols
        for name, f in (
                ("M.sum(dim=%d)" % axis,
                 lambda m=m, axis=axis: m.sum(dim=axis)),
                ("torch.var_mean(M, dim=%d, correction=0)" % axis,
                 lambda m=m, axis=axis: torch.var_mean(m, dim=axis,
                                                       correction=0))):
            ms = med(f, r)
            k, _, _ = kernel_times(f, r)
            print("peer matrix %-11s %-38s %.4f ms %7.1f GB/s  kernels "
                  "%.4f ms %7.1f GB/s"
                  % ("%dx%d" % (rows, cols), name, ms, nbytes / ms / 1e6, k,
                     nbytes / k / 1e6))
