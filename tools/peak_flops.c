/* peak_flops.c: one core's peak float32 arithmetic rate, with and without
 * fused multiply-add, for tools/bench.sh.
 *
 *   cc -O2 -ffp-contract=off tools/peak_flops.c -o peak_flops && ./peak_flops
 *
 * Each kernel keeps 24 independent accumulators in vector registers and runs
 * acc = acc·a + b on them, which never reaches a denormal (it converges to
 * b / (1 − a)). With FMA that is one instruction of 2 flops per lane; without,
 * a multiply and an add. Prints one line per instruction set the CPU has:
 *
 *   avx512 fma: 123.4 GFLOP/s  mul+add: 61.7 GFLOP/s
 *
 * the best of 7 runs of about 50 ms each. */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define ACC   24
#define ITERS 2000000L

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define KERNEL(NAME, TARGET, VEC, SET1, FMA, MUL, ADD, STORE, LANES, FUSED)                                            \
    __attribute__((target(TARGET))) static double NAME(void)                                                           \
    {                                                                                                                  \
        VEC acc[ACC];                                                                                                  \
        VEC a = SET1(0.999999f), b = SET1(0.001f);                                                                     \
        for (int i = 0; i < ACC; i++) acc[i] = SET1((float)i);                                                         \
        double t0 = now();                                                                                             \
        for (long it = 0; it < ITERS; it++) {                                                                          \
            _Pragma("GCC unroll 24") for (int i = 0; i < ACC; i++) acc[i] =                                            \
                FUSED ? FMA(acc[i], a, b) : ADD(MUL(acc[i], a), b);                                                    \
        }                                                                                                              \
        double t = now() - t0;                                                                                         \
        float sink[LANES], total = 0;                                                                                  \
        for (int i = 0; i < ACC; i++) {                                                                                \
            STORE(sink, acc[i]);                                                                                       \
            total += sink[0];                                                                                          \
        }                                                                                                              \
        if (total == 12345.0f) puts("");                                                                               \
        return 2.0 * LANES * ACC * (double)ITERS / t / 1e9;                                                            \
    }

KERNEL(avx512_fma, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_mul_ps, _mm512_add_ps, _mm512_storeu_ps,
       16, 1)
KERNEL(avx512_muladd, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_mul_ps, _mm512_add_ps,
       _mm512_storeu_ps, 16, 0)
KERNEL(avx2_fma, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_mul_ps, _mm256_add_ps, _mm256_storeu_ps, 8,
       1)
KERNEL(avx2_muladd, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_mul_ps, _mm256_add_ps, _mm256_storeu_ps,
       8, 0)

static double best(double (*kernel)(void))
{
    double b = 0;
    for (int r = 0; r < 7; r++) {
        double g = kernel();
        if (g > b) b = g;
    }
    return b;
}

int main(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        printf("avx512 fma: %.1f GFLOP/s  mul+add: %.1f GFLOP/s\n", best(avx512_fma), best(avx512_muladd));
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        printf("avx2 fma: %.1f GFLOP/s  mul+add: %.1f GFLOP/s\n", best(avx2_fma), best(avx2_muladd));
    return 0;
}
