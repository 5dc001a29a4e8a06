/* forward.c: the CPU time of one traced forward (attn_trace_create and
 * attn_trace_destroy), for measuring the engine on a busy machine, where
 * `attnviz bench`'s wall-clock times include the time other processes held
 * the core. docs/performance.md ("Fused multiply-add") uses it.
 *
 *   cc -O2 -I src/engine tools/cpu_time/forward.c build/src/engine/libattnviz_engine.a -lm -lpthread \
 *      -o /tmp/cpu_forward
 *   /tmp/cpu_forward 512 512 8 20      # n, d_model, heads, samples
 *
 * One thread; the inputs as `attnviz bench` makes them (X in [-1, 1),
 * weights scaled by 1/√d_model, biases in [-0.1, 0.1)), from another
 * generator. A sample under 20 µs is a batch of forwards. Prints the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and the wall time per forward,
 * min and median over the samples, and the products' rate at the CPU-time
 * minimum, counting 2·(4·n·d² + 2·n²·d) flops as tools/bench.sh does:
 *
 *   (512,512,8) cpu min 16.42 med 16.89 ms | wall min 28.62 med 35.01 ms | 98.1 GFLOP/s
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attn.h"

static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* uniform in [-1, 1) */
static float uniform(unsigned long long *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) / 16777216.0 * 2.0 - 1.0);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s N D_MODEL HEADS SAMPLES\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), dm = atoi(argv[2]), heads = atoi(argv[3]), samples = atoi(argv[4]);
    if (n < 1 || dm < 1 || heads < 1 || dm % heads != 0 || samples < 1) {
        fprintf(stderr, "%s: expected N, D_MODEL, HEADS ≥ 1 with HEADS dividing D_MODEL, and SAMPLES ≥ 1\n", argv[0]);
        return 2;
    }
    size_t nw = (size_t)dm * (size_t)dm;
    float *X = malloc(sizeof(float) * (size_t)n * dm); /* (n, d_model) */
    float *W = malloc(sizeof(float) * 4 * nw);          /* W_Q, W_K, W_V, W_O, each (d_model, d_model) */
    float *b = malloc(sizeof(float) * 4 * (size_t)dm);  /* b_Q, b_K, b_V, b_O */
    double *cpu = malloc(sizeof(double) * (size_t)samples), *wall = malloc(sizeof(double) * (size_t)samples);
    if (!X || !W || !b || !cpu || !wall) return 1;
    unsigned long long s = 42;
    for (size_t i = 0; i < (size_t)n * dm; i++) X[i] = uniform(&s);
    for (size_t i = 0; i < 4 * nw; i++) W[i] = uniform(&s) / sqrtf((float)dm);
    for (size_t i = 0; i < 4 * (size_t)dm; i++) b[i] = 0.1f * uniform(&s);
    AttnConfig c;
    attn_config_init(&c);
    c.n_q = c.n_k = n;
    c.d_model = dm;
    c.heads = heads;
    c.d_k = c.d_v = dm / heads;
    c.X = X;
    c.W_Q = W, c.W_K = W + nw, c.W_V = W + 2 * nw, c.W_O = W + 3 * nw;
    c.b_Q = b, c.b_K = b + dm, c.b_V = b + 2 * dm, c.b_O = b + 3 * dm;
    char err[256];
    AttnTrace *t = attn_trace_create(&c, err, sizeof err); /* untimed: the first touch of the trace's pages */
    if (!t) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 1;
    }
    attn_trace_destroy(t);
    double t0 = seconds(CLOCK_MONOTONIC);
    attn_trace_destroy(attn_trace_create(&c, err, sizeof err));
    double one = seconds(CLOCK_MONOTONIC) - t0;
    int batch = one < 20e-6 ? (int)(20e-6 / (one > 1e-9 ? one : 1e-9)) + 1 : 1;
    for (int r = 0; r < samples; r++) {
        double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
        for (int k = 0; k < batch; k++) attn_trace_destroy(attn_trace_create(&c, err, sizeof err));
        cpu[r] = (seconds(CLOCK_THREAD_CPUTIME_ID) - c0) / batch * 1e3;
        wall[r] = (seconds(CLOCK_MONOTONIC) - w0) / batch * 1e3;
    }
    qsort(cpu, (size_t)samples, sizeof *cpu, by_value);
    qsort(wall, (size_t)samples, sizeof *wall, by_value);
    double flops = 2.0 * (4.0 * n * (double)dm * dm + 2.0 * (double)n * n * dm);
    printf("(%d,%d,%d) cpu min %.4g med %.4g ms | wall min %.4g med %.4g ms | %.1f GFLOP/s\n", n, dm, heads, cpu[0],
           cpu[samples / 2], wall[0], wall[samples / 2], flops / cpu[0] / 1e6);
    attn_shutdown();
    free(X), free(W), free(b), free(cpu), free(wall);
    return 0;
}
