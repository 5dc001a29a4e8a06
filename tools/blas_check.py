#!/usr/bin/python3
"""blas_check.py: which BLAS this Python runs on, and whether its products are right.

    /usr/bin/python3 tools/blas_check.py write FILE   # the test product, saved
    /usr/bin/python3 tools/blas_check.py compare FILE # this BLAS against FILE
    /usr/bin/python3 tools/blas_check.py name          # e.g. "OpenBLAS 0.3.21, kernel SkylakeX"
    /usr/bin/python3 tools/blas_check.py gemm [N]      # one thread's sgemm GFLOP/s at N×N×N

tools/bench.sh runs `write` under the reference BLAS and `compare` under
OpenBLAS with the kernel it chose: some OpenBLAS builds miscompute on some
CPUs, and a benchmark against a wrong product means nothing. The test product
is float64 (300×257)·(257×311) and float32 (512×512)·(512×512) of seeded
random numbers; compare passes when every element agrees within 1e-12 (float64)
and 1e-5 (float32) relative to the row's largest magnitude.
"""
import ctypes
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402


def products():
    rng = np.random.default_rng(12345)
    a = rng.standard_normal((300, 257))
    b = rng.standard_normal((257, 311))
    c = rng.standard_normal((512, 512)).astype(np.float32)
    d = rng.standard_normal((512, 512)).astype(np.float32)
    return a @ b, c @ d


def blas_name():
    try:
        lib = ctypes.CDLL("libblas.so.3")
    except OSError:
        return "no libblas.so.3"
    try:
        core = lib.openblas_get_corename
        core.restype = ctypes.c_char_p
        conf = lib.openblas_get_config
        conf.restype = ctypes.c_char_p
        version = conf().decode().split()[1] if conf().decode().startswith("OpenBLAS") else "?"
        return "OpenBLAS %s, kernel %s" % (version, core().decode())
    except AttributeError:
        return "reference BLAS (netlib)"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "write":
        p64, p32 = products()
        np.savez(sys.argv[2], p64=p64, p32=p32)
    elif cmd == "compare":
        ref = np.load(sys.argv[2])
        p64, p32 = products()
        worst = 0.0
        for got, want, tol in ((p64, ref["p64"], 1e-12), (p32, ref["p32"], 1e-5)):
            scale = np.abs(want).max(axis=1, keepdims=True)
            err = float((np.abs(got.astype(np.float64) - want) / scale).max())
            worst = max(worst, err / tol)
            if err > tol:
                print("%s: relative error %.3g against the reference BLAS, over %.0e" % (blas_name(), err, tol))
                sys.exit(1)
        print("%s: agrees with the reference BLAS (worst error %.2f of the tolerance)" % (blas_name(), worst))
    elif cmd == "name":
        print(blas_name())
    elif cmd == "gemm":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
        rng = np.random.default_rng(0)
        a = rng.random((n, n), dtype=np.float32)
        b = rng.random((n, n), dtype=np.float32)
        a @ b
        best = min(timeit(lambda: a @ b) for _ in range(7))
        print("sgemm %d: %.1f GFLOP/s (%s, 1 thread)" % (n, 2.0 * n ** 3 / best / 1e9, blas_name()))
    else:
        sys.exit(__doc__)


def timeit(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
