/* bandwidth.c: how fast one core writes memory with ordinary stores and with
 * non-temporal ones, and reads it, for docs/performance.md ("Writing the
 * trace past the cache"). x86-64 only: 64-byte stores and loads where the
 * CPU has AVX-512 (as the engine's streams are), else SSE2's 16-byte ones.
 *
 *   cc -O2 tools/cpu_time/bandwidth.c -o /tmp/bandwidth && /tmp/bandwidth [MiB]
 *
 * Fills a buffer of MiB mebibytes (default 64, far more than the caches),
 * with ordinary stores and then with non-temporal ones, and sums it, each
 * the best of 5 passes:
 *
 *   avx512: store 9.6 GB/s  non-temporal store 24.5 GB/s  load 15.2 GB/s
 *
 * An ordinary store that misses the cache first reads its line from memory
 * (and writes it back later); a non-temporal store writes whole lines
 * without reading them. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* mode 0: ordinary stores of v, 1: non-temporal stores of v, 2: the sum */
__attribute__((target("avx512f"))) static float pass_avx512(float *p, size_t n, float v, int mode)
{
    __m512 x = _mm512_set1_ps(v), a = _mm512_setzero_ps(), b = a;
    if (mode == 0)
        for (size_t i = 0; i < n; i += 16) _mm512_store_ps(p + i, x);
    else if (mode == 1) {
        for (size_t i = 0; i < n; i += 16) _mm512_stream_ps(p + i, x);
        _mm_sfence();
    } else
        for (size_t i = 0; i < n; i += 32) {
            a = _mm512_add_ps(a, _mm512_load_ps(p + i));
            b = _mm512_add_ps(b, _mm512_load_ps(p + i + 16));
        }
    return _mm512_reduce_add_ps(_mm512_add_ps(a, b));
}

static float pass_sse2(float *p, size_t n, float v, int mode)
{
    __m128 x = _mm_set1_ps(v), a = _mm_setzero_ps(), b = a;
    if (mode == 0)
        for (size_t i = 0; i < n; i += 4) _mm_store_ps(p + i, x);
    else if (mode == 1) {
        for (size_t i = 0; i < n; i += 4) _mm_stream_ps(p + i, x);
        _mm_sfence();
    } else
        for (size_t i = 0; i < n; i += 8) {
            a = _mm_add_ps(a, _mm_load_ps(p + i));
            b = _mm_add_ps(b, _mm_load_ps(p + i + 4));
        }
    float out[4];
    _mm_storeu_ps(out, _mm_add_ps(a, b));
    return out[0] + out[1] + out[2] + out[3];
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    if (mib < 1) mib = 1;
    size_t bytes = mib << 20, n = bytes / sizeof(float);
    float *p = aligned_alloc(64, bytes); /* (n) */
    if (!p) {
        fprintf(stderr, "bandwidth: no memory for %zu MiB\n", mib);
        return 1;
    }
    memset(p, 0, bytes); /* every page mapped before timing */
    __builtin_cpu_init();
    int wide = __builtin_cpu_supports("avx512f");
    double best[3] = {1e9, 1e9, 1e9};
    volatile float sink = 0;
    for (int pass = 0; pass < 5; pass++)
        for (int mode = 0; mode < 3; mode++) {
            double t = now();
            sink += wide ? pass_avx512(p, n, (float)pass, mode) : pass_sse2(p, n, (float)pass, mode);
            t = now() - t;
            if (t < best[mode]) best[mode] = t;
        }
    printf("%s: store %.1f GB/s  non-temporal store %.1f GB/s  load %.1f GB/s\n", wide ? "avx512" : "sse2",
           (double)bytes / best[0] / 1e9, (double)bytes / best[1] / 1e9, (double)bytes / best[2] / 1e9);
    free(p);
    return 0;
}
