/* test_perf_paths.c: the fast paths that `attnviz bench` times, against the
 * plain references, on the configurations it times.
 *
 * For each benchmark shape (n, d_model, heads) = (5,8,2), (64,64,8),
 * (512,512,8), and (1024,512,8), (2048,512,8) with n reduced to 160 and 200
 * (the naive references are cubic; the shapes, not n, are what the blocked
 * kernels care about), plus odd shapes that leave remainders everywhere, one
 * of them large enough to be split across threads:
 *   - the traced forward on 1 thread is recomputed step by step with the
 *     naive kernels (accumulating in double) from the trace's own recorded
 *     operands, and every step must agree within the engine's tolerance
 *     1e-5 + 1e-4·|ref|, softmax against attn_softmax_rows_reference; and
 *     the whole trace against attn_reference_forward's at the same tolerance;
 *   - the traced forward on 2 and 3 threads must equal the 1-thread trace bit
 *     for bit (a row is computed by the same code whichever thread does it);
 *   - attn_matmul / attn_matmul_nt against the naive ones on the products the
 *     forward makes, at the same tolerance.
 * And the softmax's exponential alone: softmax([0, x]) for x across [-87, 0]
 * gives e^x / (1 + e^x), within 4 float ulp of the value in double.
 * No timing here: bench measures, tests only judge correctness.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attn.h"
#include "test_trace.h"
#include "test_util.h"

typedef struct PerfShape {
    int n, d_model, heads;
} PerfShape;

static const PerfShape perf_shapes[] = {
    {5, 8, 2},     {64, 64, 8},   {512, 512, 8}, {160, 512, 8}, {200, 512, 8}, /* bench's, n reduced for the last two */
    {37, 24, 3},   {131, 96, 12}, {1, 4, 1},     {67, 130, 2},                 /* remainders of every block */
    {333, 256, 4}, /* large enough for threads (heads.c PARALLEL_MIN_FLOPS), rows not a multiple of 4 */
    {700, 128, 4}, /* heads in blocks of rows (heads.c head_block_rows: 92 of 700), V_h packed (d_v = 32) */
};
/* Blocked heads under a mask: blocks whose rows are all masked but the
 * first key (causal), at two widths of V_h (packed, and not: d_v = 8). */
static const PerfShape blocked_masked_shapes[] = {{700, 128, 4}, {300, 16, 2}};
enum { N_PERF_SHAPES = sizeof perf_shapes / sizeof perf_shapes[0] };

/* n floats uniform in [-scale, scale), malloc'd */
static float *perf_random(uint64_t *seed, size_t n, float scale)
{
    float *p = malloc(sizeof(float) * (n ? n : 1)); /* (n) */
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = scale * (float)(2.0 * (double)(test_splitmix64(seed) >> 11) / 9007199254740992.0 - 1.0);
    return p;
}

/* The inputs bench uses: X in [-1, 1), weights scaled by 1/√d_model, biases. */
typedef struct PerfInputs {
    float *X; /* (n, d_model) */
    float *W; /* 4 × (d_model, d_model): W_Q, W_K, W_V, W_O */
    float *b; /* 4 × (d_model): b_Q, b_K, b_V, b_O */
    AttnConfig cfg;
} PerfInputs;

static void perf_inputs_init(PerfInputs *in, PerfShape s, AttnMaskKind mask, int threads)
{
    uint64_t seed = 0xA77E0000u + (uint64_t)s.n * 7919u + (uint64_t)s.d_model;
    size_t dm = (size_t)s.d_model, nw = dm * dm;
    in->X = perf_random(&seed, (size_t)s.n * dm, 1.0f);
    in->W = perf_random(&seed, 4 * nw, 1.0f / sqrtf((float)dm));
    in->b = perf_random(&seed, 4 * dm, 0.1f);
    attn_config_init(&in->cfg);
    AttnConfig *c = &in->cfg;
    c->n_q = c->n_k = s.n;
    c->d_model = s.d_model;
    c->heads = s.heads;
    c->d_k = c->d_v = s.d_model / s.heads;
    c->mask_kind = mask;
    c->X = in->X;
    c->W_Q = in->W, c->W_K = in->W + nw, c->W_V = in->W + 2 * nw, c->W_O = in->W + 3 * nw;
    c->b_Q = in->b, c->b_K = in->b + dm, c->b_V = in->b + 2 * dm, c->b_O = in->b + 3 * dm;
    c->threads = threads;
}

static void perf_inputs_free(PerfInputs *in)
{
    free(in->X);
    free(in->W);
    free(in->b);
}

static const AttnStep *perf_step(const AttnTrace *t, const char *name)
{
    const AttnStep *s = attn_trace_find_name(t, name);
    if (!s) fail_msg("the trace has no step '%s'", name);
    return s;
}

/* Compares a step with a reference of its shape; fails the test naming the
 * step and shape when they differ. */
static void perf_expect_step(const char *shape, const AttnStep *s, const float *ref)
{
    size_t bad = test_compare_floats(s->name, s->data, ref, s->rows, s->cols, TEST_ABS_TOL, TEST_REL_TOL);
    if (bad)
        fail_msg("%s: step %s (%d×%d): %zu values differ from the naive reference", shape, s->name, s->rows, s->cols,
                 bad);
}

/* Every computed step of a 1-thread trace against the naive kernels applied to
 * the trace's own operands. */
static void perf_check_trace_against_naive(const char *shape, const AttnTrace *t)
{
    const AttnConfig *c = &t->cfg;
    int n = c->n_q, dm = c->d_model, H = c->heads, dk = c->d_k, dv = c->d_v;
    size_t big = (size_t)n * (size_t)(n > dm ? n : dm);
    float *ref =
        malloc(sizeof(float) * (big > (size_t)n * H * dk ? big : (size_t)n * H * dk)); /* scratch, largest step */
    assert_non_null(ref);
    const float *X = perf_step(t, "X")->data;
    static const char *const proj[3][3] = {{"Q", "W_Q", "b_Q"}, {"K", "W_K", "b_K"}, {"V", "W_V", "b_V"}};
    for (int i = 0; i < 3; i++) {
        const AttnStep *P = perf_step(t, proj[i][0]);
        attn_matmul_naive(ref, X, perf_step(t, proj[i][1])->data, perf_step(t, proj[i][2])->data, n, dm, P->cols);
        perf_expect_step(shape, P, ref);
    }
    char name[ATTN_MAX_NAME];
    for (int h = 1; h <= H; h++) {
        snprintf(name, sizeof name, "Q_%d", h);
        const float *Qh = perf_step(t, name)->data;
        snprintf(name, sizeof name, "K_%d", h);
        const float *Kh = perf_step(t, name)->data;
        snprintf(name, sizeof name, "V_%d", h);
        const float *Vh = perf_step(t, name)->data;
        snprintf(name, sizeof name, "scores_%d", h);
        const AttnStep *S = perf_step(t, name);
        attn_matmul_nt_naive(ref, Qh, Kh, n, dk, n);
        perf_expect_step(shape, S, ref);
        const AttnStep *W = attn_trace_find(t, ATTN_STEP_SOFTMAX, h);
        const AttnStep *pre = &t->steps[W->from[0]]; /* scaled or masked */
        attn_softmax_rows_reference(ref, NULL, pre->data, n, n);
        perf_expect_step(shape, W, ref);
        snprintf(name, sizeof name, "head_%d", h);
        attn_matmul_naive(ref, W->data, Vh, NULL, n, n, dv);
        perf_expect_step(shape, perf_step(t, name), ref);
    }
    const AttnStep *O = perf_step(t, "output");
    attn_matmul_naive(ref, perf_step(t, "concat")->data, perf_step(t, "W_O")->data, perf_step(t, "b_O")->data, n,
                      H * dv, dm);
    perf_expect_step(shape, O, ref);
    free(ref);
}

static void perf_run_shape(PerfShape s, AttnMaskKind mask)
{
    char shape[96];
    snprintf(shape, sizeof shape, "(n=%d, d_model=%d, heads=%d, mask %s)", s.n, s.d_model, s.heads,
             attn_mask_kind_name(mask));
    char err[256];
    PerfInputs in;
    perf_inputs_init(&in, s, mask, 1);
    AttnTrace *one = attn_trace_create(&in.cfg, err, sizeof err);
    if (!one) fail_msg("%s: %s", shape, err);
    perf_check_trace_against_naive(shape, one);
    assert_trace_matches_reference(shape, one, &in.cfg, TEST_ABS_TOL, TEST_REL_TOL);
    for (int threads = 2; threads <= 3; threads++) {
        in.cfg.threads = threads;
        AttnTrace *many = attn_trace_create(&in.cfg, err, sizeof err);
        if (!many) fail_msg("%s, %d threads: %s", shape, threads, err);
        char what[128];
        snprintf(what, sizeof what, "%s, 1 against %d threads", shape, threads);
        assert_traces_identical(what, one, many);
        attn_trace_destroy(many);
    }
    attn_trace_destroy(one);
    perf_inputs_free(&in);
}

static void test_bench_shapes_match_naive(void **state)
{
    (void)state;
    for (int i = 0; i < N_PERF_SHAPES; i++) perf_run_shape(perf_shapes[i], ATTN_MASK_NONE);
}

static void test_bench_shapes_causal_match_naive(void **state)
{
    (void)state;
    /* blocked cells (-inf) through the fast softmax: weights exactly 0 */
    for (int i = 0; i < N_PERF_SHAPES; i++) {
        if (perf_shapes[i].n > 256) continue; /* the unmasked pass covered the large one */
        perf_run_shape(perf_shapes[i], ATTN_MASK_CAUSAL);
    }
    for (size_t i = 0; i < sizeof blocked_masked_shapes / sizeof blocked_masked_shapes[0]; i++)
        perf_run_shape(blocked_masked_shapes[i], ATTN_MASK_CAUSAL);
    PerfInputs in;
    perf_inputs_init(&in, (PerfShape){64, 64, 8}, ATTN_MASK_CAUSAL, 1);
    char err[256];
    AttnTrace *t = attn_trace_create(&in.cfg, err, sizeof err);
    assert_non_null(t);
    const AttnStep *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, 3);
    for (int i = 0; i < w->rows; i++)
        for (int j = i + 1; j < w->cols; j++)
            if (w->data[(size_t)i * w->cols + j] != 0.0f)
                fail_msg("weights_3[%d,%d] = %g behind a causal mask, expected exactly 0", i, j,
                         (double)w->data[(size_t)i * w->cols + j]);
    attn_trace_destroy(t);
    perf_inputs_free(&in);
}

/* The products of the forward, fast against naive, with operands as the
 * forward sees them; n_q ≠ n_k shapes as cross-attention would make. */
static void test_products_match_naive(void **state)
{
    (void)state;
    static const struct {
        int m, k, n;
    } prods[] = {
        {5, 8, 8},      {5, 4, 5},      {5, 5, 4},       {64, 64, 64},   {64, 8, 64},    {64, 64, 8},  {512, 512, 512},
        {512, 64, 512}, {512, 512, 64}, {200, 512, 512}, {200, 64, 200}, {200, 200, 64}, {3, 700, 65}, {129, 1, 17},
    };
    uint64_t seed = 12345;
    for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++) {
        int m = prods[i].m, k = prods[i].k, n = prods[i].n;
        /* as in the forward: inputs O(1), B scaled by 1/√k so C stays O(1) */
        float *A = perf_random(&seed, (size_t)m * k, 1.0f);                   /* (m, k) */
        float *B = perf_random(&seed, (size_t)k * n, 1.0f / sqrtf((float)k)); /* (k, n), or (n, k) for _nt */
        float *bias = perf_random(&seed, (size_t)n, 0.1f);                    /* (n) */
        float *got = malloc(sizeof(float) * (size_t)m * n);                   /* (m, n) */
        float *ref = malloc(sizeof(float) * (size_t)m * n);                   /* (m, n) */
        assert_non_null(got);
        assert_non_null(ref);
        char what[64];
        attn_matmul(got, A, B, bias, m, k, n);
        attn_matmul_naive(ref, A, B, bias, m, k, n);
        snprintf(what, sizeof what, "matmul %dx%dx%d", m, k, n);
        if (test_compare_floats(what, got, ref, m, n, TEST_ABS_TOL, TEST_REL_TOL))
            fail_msg("%s differs from attn_matmul_naive", what);
        attn_matmul_nt(got, A, B, m, k, n);
        attn_matmul_nt_naive(ref, A, B, m, k, n);
        snprintf(what, sizeof what, "matmul_nt %dx%dx%d", m, k, n);
        if (test_compare_floats(what, got, ref, m, n, TEST_ABS_TOL, TEST_REL_TOL))
            fail_msg("%s differs from attn_matmul_nt_naive", what);
        free(A), free(B), free(bias), free(got), free(ref);
    }
}

/* softmax([0, x]) = (1, e^x) / (1 + e^x): the second weight tests the
 * kernel's exponential across its whole range, to 4 float ulp. */
static void test_softmax_exp_accuracy(void **state)
{
    (void)state;
    enum { N = 20000 };
    float *x = malloc(sizeof(float) * 2 * N); /* (N, 2) */
    float *y = malloc(sizeof(float) * 2 * N); /* (N, 2) */
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < N; i++) {
        x[2 * i] = 0.0f;
        x[2 * i + 1] = -86.9f * (float)i / (float)(N - 1); /* 0 .. -86.9 */
    }
    attn_softmax_rows(y, NULL, x, N, 2);
    double worst = 0;
    int worst_at = 0;
    for (int i = 0; i < N; i++) {
        double e = exp((double)x[2 * i + 1]);
        double w = e / (1.0 + e);
        double rel = fabs((double)y[2 * i + 1] - w) / w;
        if (rel > worst) worst = rel, worst_at = i;
        /* and the row sums to 1 */
        assert_true(fabs((double)y[2 * i] + (double)y[2 * i + 1] - 1.0) <= 2.4e-7);
    }
    printf("  softmax([0, x]) worst relative error %.3g at x = %g (%.2f ulp)\n", worst, (double)x[2 * worst_at + 1],
           worst / 5.96e-8);
    if (worst > 4 * 5.96e-8)
        fail_msg("the exponential is off by %.3g relative at x = %g", worst, (double)x[2 * worst_at + 1]);
    free(x);
    free(y);
}

/* Rows wide enough for the vector path (16-cell vectors, 64-cell blocks, a
 * tail), with blocked -inf cells and logits spread over ±40: every weight
 * against the definition in double, to 8 float ulp of the weight (the
 * exponential's 1.4, the sum's float lanes, one multiply), every row summing
 * to 1 within 4e-7. */
static void test_softmax_wide_rows_accuracy(void **state)
{
    (void)state;
    static const int widths[] = {17, 31, 32, 33, 48, 63, 64, 65, 100, 128, 200, 512, 1000, 2048, 4097};
    unsigned seed = 12345;
    double worst = 0;
    int worst_w = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        int cols = widths[wi], rows = 9;
        float *x = malloc(sizeof(float) * (size_t)rows * cols), *y = malloc(sizeof(float) * (size_t)rows * cols);
        float *z = malloc(sizeof(float) * (size_t)cols), *w = malloc(sizeof(float) * (size_t)cols); /* (cols) */
        assert_non_null(x);
        assert_non_null(y);
        assert_non_null(z);
        assert_non_null(w);
        for (int i = 0; i < rows * cols; i++) {
            seed = seed * 1103515245u + 12345u;
            double u = (double)(seed >> 8) / (double)(1u << 24);      /* [0, 1) */
            x[i] = (float)((u - 0.5) * (i % rows == 0 ? 80.0 : 6.0)); /* some rows spread wide */
            if ((seed >> 4) % 11 == 0) x[i] = -INFINITY;              /* blocked */
        }
        x[0] = 1.0f; /* row 0 keeps a finite cell */
        attn_softmax_rows(y, NULL, x, rows, cols);
        for (int i = 0; i < rows; i++) {
            const float *xr = x + (size_t)i * cols, *yr = y + (size_t)i * cols;
            float mx = -INFINITY;
            double ysum = 0;
            for (int j = 0; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;
            if (mx == -INFINITY) continue; /* every key blocked: tested elsewhere */
            /* the reference on x - max rounded to float, as every float
             * softmax (PyTorch's too) computes it: at |x| = 40 that rounding
             * alone is 4e-6 of a weight, a property of the input, not of the
             * kernel */
            for (int j = 0; j < cols; j++) z[j] = xr[j] - mx;
            attn_softmax_rows_reference(w, NULL, z, 1, cols);
            for (int j = 0; j < cols; j++) {
                ysum += yr[j];
                if (w[j] < 1e-30f) {
                    if (yr[j] > 1e-30f)
                        fail_msg("cols %d row %d col %d: %g for a weight of %g", cols, i, j, (double)yr[j],
                                 (double)w[j]);
                    continue;
                }
                double rel = fabs((double)yr[j] - (double)w[j]) / (double)w[j];
                if (rel > worst) worst = rel, worst_w = cols;
            }
            if (fabs(ysum - 1.0) > 4e-7) fail_msg("cols %d row %d sums to %.9g", cols, i, ysum);
        }
        free(x), free(y), free(z), free(w);
    }
    printf("  wide rows: worst relative error %.3g (%.2f ulp) at %d columns\n", worst, worst / 5.96e-8, worst_w);
    if (worst > 8 * 5.96e-8) fail_msg("a weight is off by %.3g relative (%d columns)", worst, worst_w);
}

/* The scan for overflowed values runs on the threads too (from 4 MiB of
 * trace): it must name the same first bad cell as on one thread, and as the
 * reference. */
static void test_overflow_named_alike_on_threads(void **state)
{
    (void)state;
    PerfInputs in;
    perf_inputs_init(&in, (PerfShape){256, 512, 8}, ATTN_MASK_NONE, 1);
    for (int j = 0; j < in.cfg.d_model; j++) in.W[(size_t)17 * in.cfg.d_model + j] = 3e38f; /* row 17 of W_Q */
    in.X[(size_t)5 * in.cfg.d_model + 17] = 3e38f;                                          /* X[5][17] */
    char err1[256] = "", err2[256] = "";
    AttnTrace *t1 = attn_trace_create(&in.cfg, err1, sizeof err1);
    in.cfg.threads = 2;
    AttnTrace *t2 = attn_trace_create(&in.cfg, err2, sizeof err2);
    assert_null(t1);
    assert_null(t2);
    printf("  1 thread: %s\n  2 threads: %s\n", err1, err2);
    assert_string_equal(err1, err2);
    assert_non_null(strstr(err1, "Q[5]"));
    /* and as the reference names it */
    char err3[256] = "";
    assert_null(attn_reference_forward(&in.cfg, err3, sizeof err3));
    assert_string_equal(err1, err3);
    perf_inputs_free(&in);
}

/* Q and K finite, their product not: the scores' own epilogue finds it
 * (in blocks of rows, d_k = 64, written past the cache where the CPU can),
 * and the error names the same cell as the reference, on 1 and 2 threads. */
static void test_scores_overflow_named(void **state)
{
    (void)state;
    PerfInputs in;
    perf_inputs_init(&in, (PerfShape){512, 64, 1}, ATTN_MASK_NONE, 1);
    size_t dm = (size_t)in.cfg.d_model;
    for (size_t j = 0; j < dm; j++) in.X[300 * dm + j] = 2e19f; /* X[300] */
    /* W_K = W_Q and b_K = b_Q: Q[300] = K[300], so every term of
     * scores[300][300] is positive and its sums overflow to +inf in float
     * as in the reference's double */
    memcpy(in.W + dm * dm, in.W, sizeof(float) * dm * dm);
    memcpy(in.b + dm, in.b, sizeof(float) * dm);
    char err1[256] = "", err2[256] = "", err3[256] = "";
    assert_null(attn_trace_create(&in.cfg, err1, sizeof err1));
    in.cfg.threads = 2;
    assert_null(attn_trace_create(&in.cfg, err2, sizeof err2));
    assert_null(attn_reference_forward(&in.cfg, err3, sizeof err3));
    printf("  1 thread: %s\n  2 threads: %s\n  reference: %s\n", err1, err2, err3);
    assert_string_equal(err1, err3);
    assert_string_equal(err2, err3);
    assert_non_null(strstr(err1, "scores_1[300][300]"));
    perf_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products_match_naive),
        cmocka_unit_test(test_softmax_exp_accuracy),
        cmocka_unit_test(test_softmax_wide_rows_accuracy),
        cmocka_unit_test(test_bench_shapes_match_naive),
        cmocka_unit_test(test_bench_shapes_causal_match_naive),
        cmocka_unit_test(test_overflow_named_alike_on_threads),
        cmocka_unit_test(test_scores_overflow_named),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
