#!/usr/bin/python3
"""torch_forward.py: the CPU time of PyTorch's forward, as tools/bench_reference.py
runs it (nn.MultiheadAttention, eval, no grad, need_weights=True,
average_attn_weights=False, one thread), for comparing with
tools/cpu_time/forward.c on a busy machine.

    env -u OPENBLAS_L2_SIZE LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \\
        OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX \\
        /usr/bin/python3 tools/cpu_time/torch_forward.py 512 512 8 20   # n, d_model, heads, samples

(OpenBLAS with the kernel the CPU's flags call for, as tools/bench.sh picks
it.) Prints the thread's CPU time (time.thread_time) and the wall time per
forward, min and median; a sample of a forward under 20 us is a batch.
"""
import sys
import time

import torch


def main():
    n, d, h, samples = map(int, sys.argv[1:5])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(d, h).eval()
    x = torch.rand(n, 1, d) * 2 - 1
    with torch.no_grad():
        t0 = time.perf_counter()
        mha(x, x, x, need_weights=True, average_attn_weights=False)
        one = time.perf_counter() - t0
        batch = int(20e-6 / max(one, 1e-9)) + 1 if one < 20e-6 else 1
        cpu, wall = [], []
        for _ in range(samples):
            c0, w0 = time.thread_time(), time.perf_counter()
            for _ in range(batch):
                mha(x, x, x, need_weights=True, average_attn_weights=False)
            cpu.append((time.thread_time() - c0) / batch * 1e3)
            wall.append((time.perf_counter() - w0) / batch * 1e3)
    cpu.sort()
    wall.sort()
    print("torch (%d,%d,%d) cpu min %.4g med %.4g ms | wall min %.4g med %.4g ms"
          % (n, d, h, cpu[0], cpu[samples // 2], wall[0], wall[samples // 2]))


if __name__ == "__main__":
    main()
