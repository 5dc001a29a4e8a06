#!/usr/bin/python3
"""bench_reference.py: what a user would otherwise run, timed like `attnviz bench`.

    /usr/bin/python3 tools/bench_reference.py torch|numpy|products [N,D,H ...]

torch: nn.MultiheadAttention(D, H) (biases on, as PyTorch's default and as
       attnviz bench has them) in eval mode under torch.no_grad(), called as
       self-attention with need_weights=True, average_attn_weights=False, so
       it returns every head's attention weights; torch.set_num_threads(1).
numpy: the same traced forward as attnviz's engine, in plain float32 NumPy,
       keeping every intermediate attnviz records (Q, K, V, each head's
       Q_h, K_h, V_h copies, scores, scaled, weights and output, the concat,
       the output) alive until the forward returns; BLAS limited to 1 thread.
products: only the forward's matrix products, on the BLAS alone: X·W_Q,
       X·W_K, X·W_V, every head's Q_h·K_hᵀ and weights·V_h, concat·W_O, each
       into an output allocated once (no bias, scaling, softmax, copies or
       trace). The same flops as attnviz's forward, at the BLAS's own rate
       for these shapes: what the rest of the forward has left to fit in.

Inputs are random (X uniform in [-1, 1), weights scaled by 1/sqrt(D)). Each
configuration runs one untimed warm-up forward, then repeats until 1 s is
spent (at least 5 times, 3 when one forward takes over 0.5 s; at most 2000;
a forward under 20 us in batches, as attnviz bench does). A configuration
whose forward takes under 0.5 s is timed in ROUNDS such rounds and keeps the
round with the lowest median (tools/bench.sh does the same with attnviz
bench): on a shared machine a neighbour's burst can slow a whole second. It
prints, like attnviz bench:

    n=512 d_model=512 heads=8 threads=1 median: 454.1234 ms min: 440.0000 ms

With no N,D,H it runs the standard set (5,8,2) (64,64,8) (512,512,8)
(1024,512,8) (2048,512,8). Run with /usr/bin/python3 (Debian's torch).
"""
import math
import os
import sys
import time

# one BLAS thread for NumPy, before NumPy is imported
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[var] = "1"

STANDARD = [(5, 8, 2), (64, 64, 8), (512, 512, 8), (1024, 512, 8), (2048, 512, 8)]
ROUNDS = 5
AUTO_SECONDS, MIN_REPS, MAX_REPS = 1.0, 5, 2000
MIN_SAMPLE_SECONDS = 20e-6


def time_forward(forward):
    """(median, min) in ms of the round with the lowest median."""
    w0 = time.perf_counter()
    forward()  # warm-up
    # a forward of over half a second (PyTorch at n = 2048 takes 3-7 s here)
    # is timed 3 times in one round, not 5, to keep tools/bench.sh within
    # ~6 minutes
    slow = time.perf_counter() - w0 > 0.5
    rounds = [time_round(forward, 3 if slow else MIN_REPS) for _ in range(1 if slow else ROUNDS)]
    return min(rounds)


def time_round(forward, min_reps):
    # as attnviz bench: forwards under 20 us are timed in batches (1 ms of
    # warm-up forwards sets the batch size); none of these is that short
    count, c0 = 0, time.perf_counter()
    while time.perf_counter() - c0 < 1e-3:
        forward()
        count += 1
    each = (time.perf_counter() - c0) / count
    batch = max(1, math.ceil(MIN_SAMPLE_SECONDS / each)) if each < MIN_SAMPLE_SECONDS else 1
    times = []
    start = time.perf_counter()
    while len(times) < MAX_REPS:
        t0 = time.perf_counter()
        for _ in range(batch):
            forward()
        t1 = time.perf_counter()
        times.append((t1 - t0) * 1e3 / batch)
        if len(times) >= min_reps and t1 - start >= AUTO_SECONDS:
            break
    times.sort()
    k = len(times)
    median = times[k // 2] if k % 2 else 0.5 * (times[k // 2 - 1] + times[k // 2])
    return median, times[0]


def decimal(ms):
    """At least 4 significant digits, never in exponent form (as attnviz bench)."""
    d = 4
    v = ms
    while 0 < v < 1.0 and d < 9:
        v *= 10
        d += 1
    d = 1 if ms >= 1000 else 2 if ms >= 100 else 3 if ms >= 10 else d
    return "%.*f" % (d, ms)


def make_torch(n, d, h):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(d, h).eval()
    x = torch.rand(n, 1, d) * 2 - 1  # (seq, batch, embed)

    def forward():
        with torch.no_grad():
            out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
        return out, w

    return forward


def make_numpy(n, d, h):
    import numpy as np
    rng = np.random.default_rng(0)
    f32 = np.float32
    X = (rng.random((n, d), dtype=f32) * 2 - 1)
    s = f32(1 / np.sqrt(d))
    W_Q, W_K, W_V, W_O = [((rng.random((d, d), dtype=f32) * 2 - 1) * s) for _ in range(4)]
    b_Q, b_K, b_V, b_O = [((rng.random(d, dtype=f32) * 2 - 1) * f32(0.1)) for _ in range(4)]
    dk = d // h
    divisor = f32(np.sqrt(dk))

    def forward():
        trace = {}
        Q = X @ W_Q + b_Q  # (n, h·d_k)
        K = X @ W_K + b_K
        V = X @ W_V + b_V
        trace.update(Q=Q, K=K, V=V)
        heads = []
        for i in range(h):
            cols = slice(i * dk, (i + 1) * dk)
            Qh = np.ascontiguousarray(Q[:, cols])  # (n, d_k), copied like the split step
            Kh = np.ascontiguousarray(K[:, cols])
            Vh = np.ascontiguousarray(V[:, cols])
            scores = Qh @ Kh.T  # (n, n)
            scaled = scores / divisor
            e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
            weights = e / e.sum(axis=1, keepdims=True)
            out = weights @ Vh  # (n, d_v)
            trace[i] = (Qh, Kh, Vh, scores, scaled, weights, out)
            heads.append(out)
        concat = np.concatenate(heads, axis=1)  # (n, h·d_v)
        output = concat @ W_O + b_O  # (n, d)
        trace.update(concat=concat, output=output)
        return trace

    return forward


def make_products(n, d, h):
    import numpy as np
    rng = np.random.default_rng(0)
    f32 = np.float32
    dk = d // h
    X = rng.random((n, d), dtype=f32) * 2 - 1
    W = [rng.random((d, d), dtype=f32) * 2 - 1 for _ in range(4)]
    P = [np.empty((n, d), f32) for _ in range(4)]  # Q, K, V, output
    # each head's operands, contiguous as attnviz's split steps are
    Qh, Kh, Vh = ([np.ascontiguousarray(rng.random((n, dk), dtype=f32)) for _ in range(h)] for _ in range(3))
    S = [np.empty((n, n), f32) for _ in range(h)]
    Wt = [rng.random((n, n), dtype=f32) for _ in range(h)]
    O = [np.empty((n, dk), f32) for _ in range(h)]
    concat = rng.random((n, d), dtype=f32)

    def forward():
        for i in range(3):
            np.matmul(X, W[i], out=P[i])
        for i in range(h):
            np.matmul(Qh[i], Kh[i].T, out=S[i])
            np.matmul(Wt[i], Vh[i], out=O[i])
        np.matmul(concat, W[3], out=P[3])

    return forward


def main():
    makers = {"torch": make_torch, "numpy": make_numpy, "products": make_products}
    if len(sys.argv) < 2 or sys.argv[1] not in makers:
        sys.exit("usage: bench_reference.py torch|numpy|products [N,D,H ...]")
    impl = sys.argv[1]
    shapes = [tuple(int(v) for v in a.split(",")) for a in sys.argv[2:]] or STANDARD
    make = makers[impl]
    for n, d, h in shapes:
        median, best = time_forward(make(n, d, h))
        print("n=%d d_model=%d heads=%d threads=1 median: %s ms min: %s ms" % (n, d, h, decimal(median), decimal(best)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
