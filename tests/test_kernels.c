/* test_kernels.c: the engine's fast kernels against their references (reference.c).
 *
 * attn_matmul / attn_matmul_nt against attn_matmul_naive / attn_matmul_nt_naive
 * on many shapes: 1×1, single rows and columns, primes, sizes on both sides of
 * 128 (and of 16, 64, 256, the blocks kernels.c may use), 257×129×131. Two criteria:
 *   - signed inputs: the classic bound for a float32 sum of k+1 terms in any
 *     order, |C - C_ref| ≤ γ_{k+1}·(|bias| + |A|·|B|) + u·|C_ref|, with
 *     γ_n = n·u / (1 - n·u), u = 2⁻²⁴ (C_ref is exact to u: it is summed in
 *     double). Cancellation cannot make this flaky, and a wrong index breaks it;
 *   - non-negative inputs (no cancellation): the engine's tolerance
 *     1e-5 + 1e-4·|ref|.
 * attn_softmax_rows against attn_softmax_rows_reference (the definition, in
 * double), and both by hand: logits ±1e4, all-equal rows, -inf rows and
 * cells, +inf cells, one column.
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
#include "test_util.h"

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r)
{
    return test_splitmix64(&r->s);
}
/* uniform in [0, 1) */
static double rng_unit(Rng *r)
{
    return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

static float *random_floats(Rng *r, size_t n, int signed_values)
{
    float *p = malloc(sizeof(float) * (n ? n : 1)); /* (n) */
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = (float)(signed_values ? 2.0 * rng_unit(r) - 1.0 : rng_unit(r));
    return p;
}

static float *nan_floats(size_t n)
{
    float *p = malloc(sizeof(float) * (n ? n : 1)); /* (n): a kernel must overwrite every element */
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = NAN;
    return p;
}

typedef struct Shape {
    int m, k, n;
} Shape;

static const Shape shapes[] = {
    {1, 1, 1},
    {1, 1, 7},
    {1, 7, 1},
    {7, 1, 1},
    {1, 13, 17},
    {13, 1, 17},
    {2, 3, 5},
    {7, 11, 13},
    {17, 19, 23},
    {31, 37, 41},
    {1, 128, 1},
    {1, 129, 1},
    {3, 127, 5},
    {3, 128, 5},
    {3, 129, 5},
    {5, 5, 127},
    {5, 5, 128},
    {5, 5, 129},
    {2, 255, 257},
    {129, 128, 127},
    {12, 512, 64},
    {16, 64, 64},
    {12, 64, 12},
    {1, 300, 300},
    {257, 129, 131},
    /* around other plausible block sizes (16, 64, 256 and their neighbours), so
     * a change of blocking in kernels.c is still crossed */
    {4, 1, 81},
    {3, 255, 80},
    {5, 256, 63},
    {6, 257, 64},
    {9, 513, 65},
    {33, 16, 15},
    {65, 17, 16},
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* |got - ref| ≤ γ_{k+1}·mag + u·|ref| elementwise; mag = |bias| + |A|·|B| (m, n). */
static void assert_within_bound(const char *what, const float *got, const float *ref, const double *mag, int m, int n,
                                int k)
{
    const double u = ldexp(1.0, -24), g = (k + 1) * u / (1.0 - (k + 1) * u);
    size_t bad = 0;
    for (size_t i = 0; i < (size_t)m * n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]), allowed = g * mag[i] + u * fabs((double)ref[i]);
        if (d <= allowed) continue;
        if (bad++ < TEST_SHOW_DIFFS)
            printf("  %s[%zu,%zu]: got %.9g, reference %.9g, |diff| %.3g > bound %.3g\n", what, i / (size_t)n,
                   i % (size_t)n, (double)got[i], (double)ref[i], d, allowed);
    }
    if (bad) fail_msg("%s: %zu values outside the float32 summation bound", what, bad);
}

/* mag(i,j) = |bias_j| + Σ_p |A(i,p)|·|B(p,j)|, B read as (k, n), or as (n, k) when nt. */
static double *magnitudes(const float *A, const float *B, const float *bias, int m, int k, int n, int nt)
{
    double *mag = malloc(sizeof(double) * (size_t)m * n); /* (m, n) */
    assert_non_null(mag);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = bias ? fabs((double)bias[j]) : 0;
            for (int p = 0; p < k; p++)
                s += fabs((double)A[(size_t)i * k + p]) *
                     fabs((double)(nt ? B[(size_t)j * k + p] : B[(size_t)p * n + j]));
            mag[(size_t)i * n + j] = s;
        }
    return mag;
}

static void test_matmul_shapes(void **state)
{
    (void)state;
    Rng r = {1};
    for (int s = 0; s < N_SHAPES; s++)
        for (int sign = 0; sign <= 1; sign++)
            for (int with_bias = 0; with_bias <= 1; with_bias++) {
                int m = shapes[s].m, k = shapes[s].k, n = shapes[s].n;
                float *A = random_floats(&r, (size_t)m * k, sign);                    /* (m, k) */
                float *B = random_floats(&r, (size_t)k * n, sign);                    /* (k, n) */
                float *bias = with_bias ? random_floats(&r, (size_t)n, sign) : NULL;  /* (n) */
                float *C = nan_floats((size_t)m * n), *R = nan_floats((size_t)m * n); /* (m, n) */
                attn_matmul(C, A, B, bias, m, k, n);
                attn_matmul_naive(R, A, B, bias, m, k, n);
                char what[96];
                snprintf(what, sizeof what, "matmul %d×%d·%d×%d%s%s", m, k, k, n, bias ? " + bias" : "",
                         sign ? " signed" : "");
                if (sign) {
                    double *mag = magnitudes(A, B, bias, m, k, n, 0);
                    assert_within_bound(what, C, R, mag, m, n, k);
                    free(mag);
                } else {
                    assert_floats_close(what, C, R, m, n, TEST_ABS_TOL, TEST_REL_TOL);
                }
                free(A);
                free(B);
                free(bias);
                free(C);
                free(R);
            }
}

static void test_matmul_nt_shapes(void **state)
{
    (void)state;
    Rng r = {2};
    for (int s = 0; s < N_SHAPES; s++)
        for (int sign = 0; sign <= 1; sign++) {
            int m = shapes[s].m, k = shapes[s].k, n = shapes[s].n;
            float *A = random_floats(&r, (size_t)m * k, sign);                    /* (m, k) */
            float *B = random_floats(&r, (size_t)n * k, sign);                    /* (n, k) */
            float *C = nan_floats((size_t)m * n), *R = nan_floats((size_t)m * n); /* (m, n) */
            attn_matmul_nt(C, A, B, m, k, n);
            attn_matmul_nt_naive(R, A, B, m, k, n);
            char what[96];
            snprintf(what, sizeof what, "matmul_nt %d×%d·(%d×%d)ᵀ%s", m, k, n, k, sign ? " signed" : "");
            if (sign) {
                double *mag = magnitudes(A, B, NULL, m, k, n, 1);
                assert_within_bound(what, C, R, mag, m, n, k);
                free(mag);
            } else {
                assert_floats_close(what, C, R, m, n, TEST_ABS_TOL, TEST_REL_TOL);
            }
            free(A);
            free(B);
            free(C);
            free(R);
        }
}

/* The naive references themselves, on numbers small enough to check by hand. */
static void test_matmul_naive_by_hand(void **state)
{
    (void)state;
    const float A[6] = {1, 2, 3, 4, 5, 6};     /* (2, 3) */
    const float B[6] = {7, 8, 9, 10, 11, 12};  /* (3, 2) */
    const float Bt[6] = {7, 9, 11, 8, 10, 12}; /* (2, 3) = Bᵀ */
    const float bias[2] = {0.5f, -1};          /* (2) */
    const float want[4] = {58, 64, 139, 154};  /* A·B */
    const float want_b[4] = {58.5f, 63, 139.5f, 153};
    float C[4]; /* (2, 2) */
    attn_matmul_naive(C, A, B, NULL, 2, 3, 2);
    assert_memory_equal(C, want, sizeof want);
    attn_matmul_naive(C, A, B, bias, 2, 3, 2);
    assert_memory_equal(C, want_b, sizeof want_b);
    attn_matmul_nt_naive(C, A, Bt, 2, 3, 2);
    assert_memory_equal(C, want, sizeof want);
    attn_matmul(C, A, B, bias, 2, 3, 2);
    assert_memory_equal(C, want_b, sizeof want_b);
    attn_matmul_nt(C, A, Bt, 2, 3, 2);
    assert_memory_equal(C, want, sizeof want);
}

/* ---- softmax ------------------------------------------------------------------ */

/* Both softmaxes: the tests by hand hold for each; the fast one is also
 * compared with the reference. */
typedef void (*SoftmaxFn)(float *y, unsigned char *flags, const float *x, int rows, int cols);
static const struct {
    const char *name;
    SoftmaxFn fn;
} softmaxes[] = {{"attn_softmax_rows", attn_softmax_rows},
                 {"attn_softmax_rows_reference", attn_softmax_rows_reference}};
enum { N_SOFTMAXES = sizeof softmaxes / sizeof softmaxes[0] };

static void assert_row_sums_to_one(const float *y, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        double s = 0;
        for (int j = 0; j < cols; j++) {
            float v = y[(size_t)i * cols + j];
            if (!(v >= 0.0f && v <= 1.0f)) fail_msg("softmax[%d,%d] = %.9g is not a weight", i, j, (double)v);
            s += v;
        }
        if (fabs(s - 1.0) > 1e-5) fail_msg("softmax row %d sums to %.9g", i, s);
    }
}

static void test_softmax_large_logits(void **state)
{
    (void)state;
    /* (4, 5): exp(1e4) overflows float and double; the row max must come off first */
    const float x[20] = {1e4f,  -1e4f,     0,         1e4f - 1, 9999.5f,   /* */
                         -1e4f, -1e4f + 1, -1e4f + 2, -1e4f,    -9999.75f, /* */
                         1e4f,  1e4f,      1e4f,      1e4f,     1e4f,      /* */
                         -1e4f, 1e4f,      -1e4f,     -1e4f,    -1e4f};
    float y[20], want[20];
    attn_softmax_rows_reference(want, NULL, x, 4, 5);
    for (int f = 0; f < N_SOFTMAXES; f++) {
        unsigned char flags[4] = {0, 0, 0, 0};
        softmaxes[f].fn(y, flags, x, 4, 5);
        for (int i = 0; i < 20; i++)
            if (!isfinite(y[i])) fail_msg("%s: softmax[%d] = %g: overflowed", softmaxes[f].name, i, (double)y[i]);
        assert_floats_close("softmax ±1e4 against the reference", y, want, 4, 5, 1e-7, 1e-6);
        assert_row_sums_to_one(y, 4, 5);
        assert_memory_equal(flags, ((unsigned char[4]){0, 0, 0, 0}), 4);
        /* by hand: row 3 is one-hot, and exp(-1e4) underflows to exactly 0 */
        assert_true(y[15] == 0.0f && y[16] == 1.0f && y[17] == 0.0f);
        assert_true(y[1] == 0.0f && y[2] == 0.0f);
        /* row 2 is all equal: 1/5 each */
        for (int j = 10; j < 15; j++) assert_true(fabsf(y[j] - 0.2f) <= 2.4e-7f * 0.2f);
    }
}

static void test_softmax_all_equal(void **state)
{
    (void)state;
    for (int n = 1; n <= 300; n += (n < 10 ? 1 : 37)) {
        float *x = malloc(sizeof(float) * (size_t)n), *y = nan_floats((size_t)n); /* (1, n) */
        assert_non_null(x);
        for (int j = 0; j < n; j++) x[j] = 3.7f;
        for (int f = 0; f < N_SOFTMAXES; f++) {
            softmaxes[f].fn(y, NULL, x, 1, n);
            float u = (float)(1.0 / n);
            for (int j = 0; j < n; j++)
                if (fabsf(y[j] - u) > 2.4e-7f * u)
                    fail_msg("%s, n=%d: weight %d = %.9g, expected 1/n = %.9g", softmaxes[f].name, n, j, (double)y[j],
                             (double)u);
        }
        free(x);
        free(y);
    }
}

static void test_softmax_blocked(void **state)
{
    (void)state;
    const float ninf = -INFINITY;
    /* (3, 4): a normal row, a fully blocked row, a partly blocked row */
    const float x[12] = {0.5f, -1, 2, 0, ninf, ninf, ninf, ninf, 1, ninf, 3, ninf};
    float y[12], want[12];
    attn_softmax_rows_reference(want, NULL, x, 3, 4);
    for (int f = 0; f < N_SOFTMAXES; f++) {
        unsigned char flags[3] = {0, 0, 0};
        softmaxes[f].fn(y, flags, x, 3, 4);
        assert_floats_close("softmax with -inf against the reference", y, want, 3, 4, 1e-7, 1e-6);
        for (int j = 0; j < 4; j++) assert_true(y[4 + j] == 0.0f); /* zero, never NaN */
        assert_true(y[9] == 0.0f && y[11] == 0.0f);                /* blocked cells: exactly 0 */
        assert_int_equal(flags[0], 0);
        assert_int_equal(flags[1], ATTN_ROW_ALL_BLOCKED);
        assert_int_equal(flags[2], 0);
        assert_row_sums_to_one(y, 1, 4);
        assert_row_sums_to_one(y + 8, 1, 4);
        /* flags may be NULL */
        float y2[12];
        softmaxes[f].fn(y2, NULL, x, 3, 4);
        assert_memory_equal(y, y2, sizeof y);
    }
}

static void test_softmax_single_column(void **state)
{
    (void)state;
    /* (5, 1): seed 001's seq_len = 1 case, softmax of one score is 1 whatever the score */
    const float x[5] = {0, -3.5f, 1e4f, -1e20f, -INFINITY};
    for (int f = 0; f < N_SOFTMAXES; f++) {
        float y[5];
        unsigned char flags[5] = {0};
        softmaxes[f].fn(y, flags, x, 5, 1);
        for (int i = 0; i < 4; i++) {
            assert_true(y[i] == 1.0f);
            assert_int_equal(flags[i], 0);
        }
        assert_true(y[4] == 0.0f);
        assert_int_equal(flags[4], ATTN_ROW_ALL_BLOCKED);
    }
}

/* +inf logits (an overflowed score): both share the weight among them, softmax's limit. */
static void test_softmax_pinf(void **state)
{
    (void)state;
    const float x[8] = {INFINITY, 1,        INFINITY, -INFINITY, /* */
                        0,        INFINITY, 2,        3};
    const float want[8] = {0.5f, 0, 0.5f, 0, 0, 1, 0, 0};
    for (int f = 0; f < N_SOFTMAXES; f++) {
        float y[8];
        unsigned char flags[2] = {0, 0};
        softmaxes[f].fn(y, flags, x, 2, 4);
        assert_floats_close(softmaxes[f].name, y, want, 2, 4, 0, 0);
        assert_memory_equal(flags, ((unsigned char[2]){0, 0}), 2);
    }
}

static void test_softmax_random(void **state)
{
    (void)state;
    Rng r = {3};
    const int shapes_rc[][2] = {{1, 1}, {3, 2}, {7, 13}, {16, 16}, {12, 129}, {2, 300}};
    for (size_t s = 0; s < sizeof shapes_rc / sizeof shapes_rc[0]; s++) {
        int rows = shapes_rc[s][0], cols = shapes_rc[s][1];
        float *x = random_floats(&r, (size_t)rows * cols, 1); /* (rows, cols) */
        for (int i = 0; i < rows * cols; i++) x[i] *= 20.0f;
        float *y = nan_floats((size_t)rows * cols), *want = nan_floats((size_t)rows * cols);
        attn_softmax_rows(y, NULL, x, rows, cols);
        attn_softmax_rows_reference(want, NULL, x, rows, cols);
        assert_floats_close("softmax random", y, want, rows, cols, 1e-7, 1e-5);
        assert_row_sums_to_one(y, rows, cols);
        free(x);
        free(y);
        free(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_naive_by_hand),  cmocka_unit_test(test_matmul_shapes),
        cmocka_unit_test(test_matmul_nt_shapes),      cmocka_unit_test(test_softmax_large_logits),
        cmocka_unit_test(test_softmax_all_equal),     cmocka_unit_test(test_softmax_blocked),
        cmocka_unit_test(test_softmax_single_column), cmocka_unit_test(test_softmax_random),
        cmocka_unit_test(test_softmax_pinf),
    };
    int failed = cmocka_run_group_tests_name("kernels", tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
