/* cmd_bench.c: `attnviz bench`, the time of one traced multi-head forward.
 *
 * Each repetition is what a lesson costs: attn_trace_create on a self-attention
 * config with all four projections and their biases (as PyTorch's
 * nn.MultiheadAttention has them), recording every intermediate, then
 * attn_trace_destroy. Inputs are seeded pseudo-random numbers, the same on
 * every run. One line per configuration, in this fixed format (tools/bench.sh
 * parses it):
 *
 *   n=512 d_model=512 heads=8 threads=1 median: 41.200 ms min: 40.100 ms trace: 33554432 bytes data: 33030144 bytes
 *
 * median and min are milliseconds per forward over the timed samples (a
 * sample is one forward, or for a forward under 20 us a batch of forwards
 * back to back, divided by their number);
 * trace is trace->alloc_bytes (the one allocation that holds the trace), data
 * is trace->data_bytes (the recorded matrices themselves).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "attn.h"
#include "lesson.h"

typedef struct BenchShape {
    int n, d_model, heads;
} BenchShape;

/* The standard set: two lesson sizes, then the documents' d_model = 512
 * with growing sequence length. */
static const BenchShape bench_standard[] = {
    {5, 8, 2}, {64, 64, 8}, {512, 512, 8}, {1024, 512, 8}, {2048, 512, 8},
};
enum { BENCH_N_STANDARD = sizeof bench_standard / sizeof bench_standard[0] };

/* With no --reps: repeat until this much time is spent (at least
 * BENCH_MIN_AUTO_REPS, at most BENCH_MAX_AUTO_REPS repetitions). */
#define BENCH_AUTO_SECONDS 1.0
enum { BENCH_MIN_AUTO_REPS = 5, BENCH_MAX_AUTO_REPS = 2000 };
/* Samples shorter than this are batches of forwards (see bench_run). */
#define BENCH_MIN_SAMPLE_MS 0.02

static void bench_usage(FILE *out)
{
    fprintf(out,
            "usage: attnviz bench [--n N] [--d-model D] [--heads H] [--reps R] [--threads T]\n"
            "       attnviz bench --edits N [LESSON] [--threads T]\n"
            "\n"
            "With --edits: times N scripted edits of LESSON (default: %s) end to end, each\n"
            "one number set, the whole trace recomputed and one 1920x1080 frame drawn on the\n"
            "software renderer; prints 'edits: N p50: X ms p99: Y ms' (wall time), then\n"
            "'cpu per edit: p50: X ms p99: Y ms' (the process's CPU time, which a busy machine\n"
            "does not inflate).\n"
            "\n"
            "Without it:\n"
            "Times the full traced multi-head self-attention forward pass (Q, K, V projections\n"
            "with biases, split, scores, scaled, softmax, weighted sum per head, concat, W_O)\n"
            "on seeded random inputs, creating and destroying the trace each time.\n"
            "\n"
            "  --n N          tokens (1..8192)\n"
            "  --d-model D    model width (1..4096), a multiple of H\n"
            "  --heads H      heads (1..256); d_k = d_v = D / H\n"
            "  --reps R       timed samples (1..100000); default: as many as fit in %.0f s,\n"
            "                 at least %d, at most %d. A forward under 20 us is timed in\n"
            "                 batches of forwards, a sample being a batch's time over its size\n"
            "  --threads T    worker threads (1..64), default 1\n"
            "\n"
            "With none of --n, --d-model, --heads it runs the standard set\n"
            "(n, d_model, heads) = (5,8,2) (64,64,8) (512,512,8) (1024,512,8) (2048,512,8);\n"
            "with some of them, one configuration, the rest defaulting to 512, 512, 8.\n"
            "\n"
            "Output, one line per configuration:\n"
            "  n=N d_model=D heads=H threads=T median: X ms min: Y ms trace: A bytes data: B bytes\n"
            "X and Y are the median and the minimum over the samples of milliseconds per forward,\n"
            "with at least 4 significant digits; A is the trace's allocation, B the bytes of\n"
            "the matrices it records. Warm-up forwards (1 ms of them) run before the timed ones.\n",
            LESSON_DEFAULT_ID, BENCH_AUTO_SECONDS, BENCH_MIN_AUTO_REPS, BENCH_MAX_AUTO_REPS);
}

/* xorshift64*: small, seeded, the same sequence on every machine. */
static float bench_rand(unsigned long long *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    unsigned long long r = *s * 2685821657736338717ULL;
    return (float)((double)(r >> 40) / (double)(1ULL << 24)) * 2.0f - 1.0f; /* [-1, 1) */
}

static void bench_fill(float *x, size_t count, float scale, unsigned long long *seed)
{
    for (size_t i = 0; i < count; i++) x[i] = scale * bench_rand(seed);
}

/* Decimals that show at least 4 significant digits of ms (0.0008437,
 * 13.59, 2789.3), never in exponent form: tools/bench.sh reads [0-9.]+. */
static int bench_decimals(double ms)
{
    int d = 4;
    for (double v = ms; v > 0 && v < 1.0 && d < 9; v *= 10) d++;
    return ms >= 1000 ? 1 : ms >= 100 ? 2 : ms >= 10 ? 3 : d;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Bytes of the matrices the trace of one forward holds: inputs and weights,
 * Q, K, V, per head the split copies, scores, scaled, weights and output, then
 * concat and output. */
static double bench_trace_bytes(BenchShape s)
{
    double n = s.n, d = s.d_model, h = s.heads, dk = d / h;
    return 4.0 * (n * d + 4 * d * d + 4 * d + 3 * n * d + h * (3 * n * dk + 3 * n * n + n * dk) + 2 * n * d);
}

/* Times one configuration and prints its line. Returns an APP_* status. */
static int bench_run(BenchShape s, int reps, int threads)
{
    int n = s.n, dm = s.d_model, H = s.heads;
    /* refuse what would push a shared machine into swapping or the OOM killer:
     * the trace must fit in half of the physical memory */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double need = bench_trace_bytes(s), have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    if (have > 0 && need > have / 2)
        return app_fail(APP_RUNTIME,
                        "n=%d d_model=%d heads=%d: the trace would need %.1f GiB, more than half of "
                        "this machine's %.1f GiB of memory",
                        n, dm, H, need / 1073741824.0, have / 1073741824.0);
    size_t nx = (size_t)n * dm, nw = (size_t)dm * dm;
    float *X = malloc(sizeof(float) * nx);             /* (n, d_model) */
    float *W = malloc(sizeof(float) * nw * 4);         /* W_Q, W_K, W_V, W_O: 4 × (d_model, d_model) */
    float *b = malloc(sizeof(float) * (size_t)dm * 4); /* b_Q, b_K, b_V, b_O: 4 × (d_model) */
    int auto_reps = reps == 0;
    int cap = auto_reps ? BENCH_MAX_AUTO_REPS : reps;
    double *ms = malloc(sizeof(double) * (size_t)cap); /* (cap) per-forward times */
    if (!X || !W || !b || !ms) {
        free(X), free(W), free(b), free(ms);
        return app_fail(APP_RUNTIME, "out of memory for the inputs of n=%d d_model=%d", n, dm);
    }
    unsigned long long seed = 0x5eed0000ULL + (unsigned long long)n * 131 + (unsigned long long)dm;
    float wscale = 1.0f / sqrtf((float)dm); /* keeps the scores O(1), as trained weights are */
    bench_fill(X, nx, 1.0f, &seed);
    bench_fill(W, nw * 4, wscale, &seed);
    bench_fill(b, (size_t)dm * 4, 0.1f, &seed);

    AttnConfig cfg;
    attn_config_init(&cfg);
    cfg.n_q = cfg.n_k = n;
    cfg.d_model = dm;
    cfg.heads = H;
    cfg.d_k = cfg.d_v = dm / H;
    cfg.X = X;
    cfg.W_Q = W, cfg.W_K = W + nw, cfg.W_V = W + 2 * nw, cfg.W_O = W + 3 * nw;
    cfg.b_Q = b, cfg.b_K = b + dm, cfg.b_V = b + 2 * dm, cfg.b_O = b + 3 * dm;
    cfg.threads = threads;

    char err[256];
    int status = APP_OK;
    /* warm-up: page in the code, let the allocator settle */
    AttnTrace *t = attn_trace_create(&cfg, err, sizeof err);
    if (!t) {
        status = app_fail(APP_RUNTIME, "n=%d d_model=%d heads=%d: %s", n, dm, H, err);
        goto done;
    }
    size_t alloc_bytes = t->alloc_bytes, data_bytes = t->data_bytes;
    attn_trace_destroy(t);

    /* A forward shorter than BENCH_MIN_SAMPLE_MS is timed in batches of
     * `batch` back-to-back forwards, the sample being the batch's time over
     * its size: reading the clock costs tens of nanoseconds here, a few
     * percent of a 1 us forward. The batch size comes from the forwards that
     * fit in 1 ms (or one forward, if it is longer). */
    int batch = 1;
    {
        int count = 0;
        double c0 = 1e3 * attn_clock_seconds(), c1 = c0;
        while (c1 - c0 < 1.0) {
            t = attn_trace_create(&cfg, err, sizeof err);
            attn_trace_destroy(t);
            count++;
            c1 = 1e3 * attn_clock_seconds();
        }
        double each = (c1 - c0) / count;
        if (each < BENCH_MIN_SAMPLE_MS) batch = (int)ceil(BENCH_MIN_SAMPLE_MS / each);
    }
    int done_reps = 0;
    double start = 1e3 * attn_clock_seconds();
    while (done_reps < cap) {
        double t0 = 1e3 * attn_clock_seconds();
        for (int k = 0; k < batch && t; k++) {
            t = attn_trace_create(&cfg, err, sizeof err);
            attn_trace_destroy(t);
        }
        double t1 = 1e3 * attn_clock_seconds();
        if (!t) {
            status = app_fail(APP_RUNTIME, "n=%d d_model=%d heads=%d: %s", n, dm, H, err);
            goto done;
        }
        ms[done_reps++] = (t1 - t0) / batch;
        if (auto_reps && done_reps >= BENCH_MIN_AUTO_REPS && t1 - start >= BENCH_AUTO_SECONDS * 1e3) break;
    }
    qsort(ms, (size_t)done_reps, sizeof *ms, bench_cmp_double);
    double median = done_reps % 2 ? ms[done_reps / 2] : 0.5 * (ms[done_reps / 2 - 1] + ms[done_reps / 2]);
    printf("n=%d d_model=%d heads=%d threads=%d median: %.*f ms min: %.*f ms trace: %zu bytes data: %zu bytes\n", n, dm,
           H, threads, bench_decimals(median), median, bench_decimals(ms[0]), ms[0], alloc_bytes, data_bytes);
    app_flush_stdout();
done:
    free(X), free(W), free(b), free(ms);
    return status;
}

int cmd_bench(int argc, char **argv)
{
    enum { OPT_N = 1, OPT_D_MODEL, OPT_HEADS, OPT_REPS, OPT_THREADS, OPT_EDITS };
    static const AppOption opts[] = {{"n", 0, 1, OPT_N},
                                     {"d-model", 0, 1, OPT_D_MODEL},
                                     {"heads", 0, 1, OPT_HEADS},
                                     {"reps", 0, 1, OPT_REPS},
                                     {"threads", 0, 1, OPT_THREADS},
                                     {"edits", 0, 1, OPT_EDITS},
                                     {0}};
    BenchShape one = {512, 512, 8};
    int have_shape = 0, reps = 0, threads = 1, edits = 0;
    const char *lesson = NULL;
    AppArgs args;
    app_args_init(&args, "bench", argc, argv, opts);
    const char *val;
    for (int id; (id = app_args_next(&args, &val)) != APP_ARGS_END;) {
        int ok = 0;
        switch (id) {
        case APP_ARGS_HELP:
            bench_usage(stdout);
            return APP_OK;
        case APP_ARGS_OPERAND: /* a lesson, with --edits */
            if (lesson) return app_arg_extra(&args, "one lesson", lesson, val);
            lesson = val;
            break;
        case OPT_EDITS:
            ok = app_arg_int(&args, val, 1, 1000000, &edits);
            break;
        case OPT_N:
            ok = app_arg_int(&args, val, 1, 8192, &one.n), have_shape = 1;
            break;
        case OPT_D_MODEL:
            ok = app_arg_int(&args, val, 1, 4096, &one.d_model), have_shape = 1;
            break;
        case OPT_HEADS:
            ok = app_arg_int(&args, val, 1, 256, &one.heads), have_shape = 1;
            break;
        case OPT_REPS:
            ok = app_arg_int(&args, val, 1, 100000, &reps);
            break;
        case OPT_THREADS:
            ok = app_arg_int(&args, val, 1, 64, &threads);
            break;
        default:
            return APP_USAGE;
        }
        if (ok != 0) return APP_USAGE;
    }
    if (edits) {
        if (have_shape)
            return app_cmd_fail("bench", APP_USAGE,
                                "--edits: expected a lesson to time, found --n, --d-model or --heads beside it");
        return bench_edits(edits, lesson, threads);
    }
    if (lesson)
        return app_cmd_fail("bench", APP_USAGE, "expected an option, found '%s' (a lesson goes with --edits N)",
                            lesson);
    if (have_shape) {
        if (one.d_model % one.heads != 0)
            return app_cmd_fail("bench", APP_USAGE, "--d-model: expected a multiple of --heads (%d), found '%d'",
                                one.heads, one.d_model);
        return bench_run(one, reps, threads);
    }
    for (int i = 0; i < BENCH_N_STANDARD; i++) {
        int st = bench_run(bench_standard[i], reps, threads);
        if (st != APP_OK) return st;
    }
    return APP_OK;
}
