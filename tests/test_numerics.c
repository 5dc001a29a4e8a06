/* test_numerics.c: numbers stay defined at the edges.
 *
 * No NaN and no Inf may reach the screen or a file unless the lesson asked
 * for it; the one thing a lesson can ask for is the -inf fill of blocked cells
 * in the `masked` step. Each case runs a forward pass and checks every step:
 *
 *   - logits of ±1e4 (softmax must subtract the row max: exp(1e4) overflows);
 *   - a fully blocked row, under a -inf fill and under a finite fill;
 *   - all-equal scores, and a one-token sequence;
 *   - tiny weights (1e-30: products underflow to 0) and huge ones (1e30:
 *     products overflow float32). The engine refuses a trace that would hold
 *     an overflowed value, naming the step and the cell, instead of showing
 *     inf or NaN (attn.h, "Overflow"); huge values that do not overflow are
 *     computed as they are.
 *
 * Cases go through the engine directly, and the end-to-end ones through the
 * lesson loader as well, since the loader is where a lesson's numbers enter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "lesson.h"
#include "test_trace.h"

/* ---- checking a trace ------------------------------------------------------ */

/* Is cell (i, j) blocked by the config's mask? */
static int blocked(const AttnConfig *c, const unsigned char *mask, int i, int j)
{
    switch (c->mask_kind) {
    case ATTN_MASK_NONE:
        return 0;
    case ATTN_MASK_CAUSAL:
        return j > i;
    case ATTN_MASK_PADDING:
        return mask[j] == 0;
    case ATTN_MASK_MATRIX:
        return mask[(size_t)i * (size_t)c->n_k + (size_t)j] == 0;
    }
    return 0;
}

/* Every value of every step is finite, except the -inf fill of blocked cells
 * in a masked step when the fill is -inf; blocked weights are exactly 0; a
 * softmax row sums to 1, or is all zero and flagged when every key is blocked
 * under a -inf fill. `mask` is the config's mask (the trace drops it). */
static void assert_trace_defined(const AttnTrace *t, const unsigned char *mask)
{
    const AttnConfig *c = &t->cfg;
    for (int s = 0; s < t->n_steps; s++) {
        const AttnStep *st = &t->steps[s];
        for (int i = 0; i < st->rows; i++)
            for (int j = 0; j < st->cols; j++) {
                float v = st->data[(size_t)i * st->cols + j];
                int asked = st->kind == ATTN_STEP_MASKED && c->mask_fill == -INFINITY && blocked(c, mask, i, j);
                if (asked) {
                    if (v != -INFINITY) fail_msg("%s[%d][%d] = %g, expected the -inf fill", st->name, i, j, (double)v);
                } else if (!isfinite(v)) {
                    fail_msg("%s[%d][%d] = %g: a non-finite value the lesson did not ask for", st->name, i, j,
                             (double)v);
                }
            }
        if (st->kind != ATTN_STEP_SOFTMAX) continue;
        for (int i = 0; i < st->rows; i++) {
            const float *row = st->data + (size_t)i * st->cols;
            double sum = 0;
            int any_open = 0;
            for (int j = 0; j < st->cols; j++) {
                sum += row[j];
                if (blocked(c, mask, i, j)) {
                    if (c->mask_fill == -INFINITY && row[j] != 0.0f)
                        fail_msg("%s[%d][%d] = %g: a blocked weight must be exactly 0", st->name, i, j, (double)row[j]);
                } else {
                    any_open = 1;
                }
            }
            if (!any_open && c->mask_fill == -INFINITY) {
                if (sum != 0.0) fail_msg("%s row %d: every key blocked, expected all zero, sum %g", st->name, i, sum);
                assert_true(st->row_flags[i] & ATTN_ROW_ALL_BLOCKED);
            } else if (fabs(sum - 1.0) > 1e-6) {
                fail_msg("%s row %d sums to %.9g, expected 1", st->name, i, sum);
            }
        }
    }
}

/* ---- configs ------------------------------------------------------------------ */

/* Self-attention, n tokens, d_model = d_k = d_v = d, one head, W_Q = W_K =
 * W_V = wscale·I, scale none, no W_O: every step is easy to predict. */
typedef struct Case {
    AttnConfig cfg;
    float X[16 * 16];  /* (n, d) */
    float W[16 * 16];  /* (d, d) shared by Q, K, V */
    float WO[16 * 16]; /* (d, d) */
    unsigned char mask[16 * 16];
} Case;

static void case_identity(Case *k, int n, int d, float wscale)
{
    memset(k, 0, sizeof *k);
    attn_config_init(&k->cfg);
    k->cfg.n_q = k->cfg.n_k = n;
    k->cfg.d_model = k->cfg.d_k = k->cfg.d_v = d;
    k->cfg.scale_kind = ATTN_SCALE_NONE;
    for (int i = 0; i < d; i++) k->W[i * d + i] = wscale;
    k->cfg.X = k->X;
    k->cfg.W_Q = k->cfg.W_K = k->cfg.W_V = k->W;
}

static AttnTrace *run(const AttnConfig *cfg)
{
    char err[512];
    AttnTrace *t = attn_trace_create(cfg, err, sizeof err);
    if (!t) fail_msg("attn_trace_create: %s", err);
    assert_trace_matches_reference("numerics", t, cfg, TEST_ABS_TOL, TEST_REL_TOL);
    return t;
}

static const float *step(const AttnTrace *t, const char *name)
{
    const AttnStep *s = attn_trace_find_name(t, name);
    if (!s) fail_msg("no step %s", name);
    return s->data;
}

/* ---- the cases ------------------------------------------------------------------ */

static void test_logits_1e4(void **state)
{
    (void)state;
    Case k;
    case_identity(&k, 3, 2, 1.0f);
    const float X[] = {100, 0, -100, 0, 0, 100}; /* scores = X·Xᵀ: ±1e4 and 0 */
    memcpy(k.X, X, sizeof X);
    AttnTrace *t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    const float *s = step(t, "scaled_1"), *w = step(t, "weights_1");
    assert_true(s[0] == 1e4f && s[1] == -1e4f && s[2] == 0.0f);
    /* exp(-1e4) and exp(-2e4) are 0 in double: the winner takes exactly 1 */
    assert_true(w[0] == 1.0f && w[1] == 0.0f && w[2] == 0.0f);
    assert_true(w[4] == 1.0f);
    assert_true(w[8] == 1.0f);
    attn_trace_destroy(t);

    /* the same logits divided by √d_k: still finite, still one-hot */
    k.cfg.scale_kind = ATTN_SCALE_SQRT_DK;
    t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    assert_true(step(t, "weights_1")[0] == 1.0f);
    attn_trace_destroy(t);
}

static void test_fully_blocked_row(void **state)
{
    (void)state;
    Case k;
    case_identity(&k, 3, 2, 1.0f);
    const float X[] = {1, 2, 3, 4, 5, 6};
    memcpy(k.X, X, sizeof X);
    const unsigned char M[] = {1, 1, 0, 0, 0, 0, 1, 0, 1}; /* row 1: every key blocked */
    memcpy(k.mask, M, sizeof M);
    k.cfg.mask_kind = ATTN_MASK_MATRIX;
    k.cfg.mask = k.mask;

    /* -inf fill: the masked row is all -inf (asked for), its weights and its
     * output are exactly zero, and the row is flagged; never NaN */
    AttnTrace *t = run(&k.cfg);
    assert_trace_defined(t, k.mask);
    const AttnStep *w = attn_trace_find_name(t, "weights_1");
    assert_true(w->row_flags[1] & ATTN_ROW_ALL_BLOCKED);
    assert_false(w->row_flags[0] & ATTN_ROW_ALL_BLOCKED);
    const float *h = step(t, "head_1");
    assert_true(h[2] == 0.0f && h[3] == 0.0f);
    attn_trace_destroy(t);

    /* with W_O and b_O the blocked row's output is b_O: still finite */
    for (int i = 0; i < 4; i++) k.WO[i] = 1.0f;
    const float bO[] = {0.5f, -0.5f};
    k.cfg.W_O = k.WO;
    k.cfg.b_O = bO;
    t = run(&k.cfg);
    assert_trace_defined(t, k.mask);
    const float *o = step(t, "output");
    assert_true(o[2] == 0.5f && o[3] == -0.5f);
    attn_trace_destroy(t);

    /* a finite fill (the seeds' -1e9): PyTorch's answer, a uniform row */
    k.cfg.mask_fill = -1e9f;
    t = run(&k.cfg);
    assert_trace_defined(t, k.mask);
    const float *wf = step(t, "weights_1");
    for (int j = 0; j < 3; j++) assert_true(fabsf(wf[3 + j] - 1.0f / 3.0f) < 1e-7f);
    assert_true(attn_trace_find_name(t, "weights_1")->row_flags[1] & ATTN_ROW_ALL_BLOCKED);
    attn_trace_destroy(t);

    /* padding that blocks every key: every row fully blocked */
    k.cfg.mask_fill = -INFINITY;
    k.cfg.mask_kind = ATTN_MASK_PADDING;
    memset(k.mask, 0, 3);
    t = run(&k.cfg);
    assert_trace_defined(t, k.mask);
    const AttnStep *wp = attn_trace_find_name(t, "weights_1");
    for (int i = 0; i < 3; i++) assert_true(wp->row_flags[i] & ATTN_ROW_ALL_BLOCKED);
    attn_trace_destroy(t);
}

static void test_all_equal_scores(void **state)
{
    (void)state;
    Case k;
    case_identity(&k, 5, 3, 0.0f); /* W = 0: Q = K = V = 0, every score 0 */
    for (int i = 0; i < 15; i++) k.X[i] = (float)(i % 7) - 3.0f;
    k.cfg.scale_kind = ATTN_SCALE_SQRT_DK;
    AttnTrace *t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    const float *w = step(t, "weights_1");
    for (int i = 0; i < 25; i++) assert_true(w[i] == w[0]);
    assert_true(fabsf(w[0] - 0.2f) < 1e-7f);
    attn_trace_destroy(t);

    /* equal but large scores (1e4 everywhere): uniform as well */
    case_identity(&k, 4, 1, 1.0f);
    for (int i = 0; i < 4; i++) k.X[i] = 100.0f;
    t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    w = step(t, "weights_1");
    for (int i = 0; i < 16; i++) assert_true(w[i] == 0.25f);
    attn_trace_destroy(t);
}

static void test_one_token(void **state)
{
    (void)state;
    Case k;
    case_identity(&k, 1, 4, 1.0f);
    const float X[] = {3, -1, 2, 0.5f};
    memcpy(k.X, X, sizeof X);
    AttnMaskKind masks[] = {ATTN_MASK_NONE, ATTN_MASK_CAUSAL};
    for (int m = 0; m < 2; m++) {
        k.cfg.mask_kind = masks[m];
        k.cfg.heads = 2;
        k.cfg.d_k = k.cfg.d_v = 2;
        AttnTrace *t = run(&k.cfg);
        assert_trace_defined(t, NULL);
        /* the 1×1 softmax is exactly 1, in every head */
        assert_true(step(t, "weights_1")[0] == 1.0f);
        assert_true(step(t, "weights_2")[0] == 1.0f);
        attn_trace_destroy(t);
    }

    /* additive attention with one query and one key */
    AttnConfig a;
    attn_config_init(&a);
    const float x[] = {0.5f, -0.5f}, Wa[] = {1, 0, 0, 1, 1, 1, -1, 1}, va[] = {1, -1};
    a.attention = ATTN_ADDITIVE;
    a.n_q = a.n_k = 1;
    a.d_x = 2, a.d_a = 2;
    a.X = x, a.W_a = Wa, a.v_a = va;
    AttnTrace *t = run(&a);
    assert_trace_defined(t, NULL);
    assert_true(step(t, "weights")[0] == 1.0f);
    attn_trace_destroy(t);
}

static void test_tiny_weights(void **state)
{
    (void)state;
    Case k;
    case_identity(&k, 3, 2, 1e-30f);
    const float X[] = {1, 2, 3, 4, 5, 6};
    memcpy(k.X, X, sizeof X);
    k.cfg.scale_kind = ATTN_SCALE_SQRT_DK;
    AttnTrace *t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    /* Q is 1e-30·X (normal floats); Q·Kᵀ ≈ 1e-59 underflows to 0: uniform */
    assert_true(step(t, "Q")[0] == 1e-30f);
    const float *w = step(t, "weights_1");
    for (int i = 0; i < 9; i++) assert_true(fabsf(w[i] - 1.0f / 3.0f) < 1e-7f);
    attn_trace_destroy(t);

    /* tiny inputs too: everything is 0 or subnormal, nothing is NaN */
    for (int i = 0; i < 6; i++) k.X[i] = 1e-30f;
    t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    attn_trace_destroy(t);

    /* a tiny divisor turns ordinary scores into huge, but finite, logits */
    case_identity(&k, 2, 2, 1.0f);
    memcpy(k.X, X, 4 * sizeof(float));
    k.cfg.scale_kind = ATTN_SCALE_VALUE;
    k.cfg.scale_value = 1e-30f;
    t = run(&k.cfg);
    assert_trace_defined(t, NULL);
    attn_trace_destroy(t);
}

/* Huge numbers that stay below float32's 3.4e38 are computed as they are. */
static void test_huge_weights_finite(void **state)
{
    (void)state;
    Case k;
    case_identity(&k, 2, 2, 1e15f);
    const float X[] = {1, -1, 0.5f, 2};
    memcpy(k.X, X, sizeof X);
    AttnTrace *t = run(&k.cfg); /* scores ≈ 1e30: finite, softmax one-hot */
    assert_trace_defined(t, NULL);
    const float *w = step(t, "weights_1");
    assert_true(w[0] == 1.0f && w[1] == 0.0f);
    attn_trace_destroy(t);

    /* additive: tanh saturates at ±1 however large W_a is, and v_a of 1e38
     * in two places sums to 2e38 < 3.4e38 */
    AttnConfig a;
    attn_config_init(&a);
    const float x[] = {1, -1}, va[] = {1e38f, 1e38f};
    const float Wa[] = {1e30f, -1e30f, 3e38f, 1}; /* (d_x + d_y, d_a) = (2, 2) */
    a.attention = ATTN_ADDITIVE;
    a.n_q = a.n_k = 2;
    a.d_x = 1, a.d_a = 2;
    a.X = x, a.W_a = Wa, a.v_a = va;
    t = run(&a);
    assert_trace_defined(t, NULL);
    attn_trace_destroy(t);
}

/* The engine refuses an overflowing trace and says where. */
static void assert_refused(const AttnConfig *cfg, const char *step_name)
{
    char err[512] = "";
    errno = 0;
    AttnTrace *t = attn_trace_create(cfg, err, sizeof err);
    if (t) {
        attn_trace_destroy(t);
        fail_msg("expected the engine to refuse an overflowing trace at %s, it computed one", step_name);
    }
    if (errno != ERANGE) fail_msg("expected errno ERANGE for an overflow, got %d (%s)", errno, err);
    if (!strstr(err, step_name) || !strstr(err, "float32"))
        fail_msg("expected a message naming %s and float32, got: %s", step_name, err);
    /* the reference refuses it alike */
    char ref_err[512] = "";
    errno = 0;
    t = attn_reference_forward(cfg, ref_err, sizeof ref_err);
    attn_trace_destroy(t);
    assert_null(t);
    assert_int_equal(errno, ERANGE);
    assert_string_equal(err, ref_err);
}

static void test_huge_weights_overflow(void **state)
{
    (void)state;
    Case k;
    /* Q = K = 1e30·X stay finite, Q·Kᵀ ≈ 1e60 does not */
    case_identity(&k, 2, 2, 1e30f);
    const float X[] = {1, 1, 1, 2};
    memcpy(k.X, X, sizeof X);
    assert_refused(&k.cfg, "scores_1[0][0]");

    /* X of 1e30 times weights of 1e30 already overflows the projection */
    for (int i = 0; i < 4; i++) k.X[i] = 1e30f;
    assert_refused(&k.cfg, "Q[0][0]");

    /* scores that overflow to -inf are refused even where a mask would
     * block them anyway: the scores step itself is shown */
    case_identity(&k, 2, 2, 1e30f);
    const float Xn[] = {1, 0, -1, 0}; /* scores = ±1e60 */
    memcpy(k.X, Xn, sizeof Xn);
    k.cfg.mask_kind = ATTN_MASK_CAUSAL;
    assert_refused(&k.cfg, "scores_1[0][0]");

    /* the output projection can overflow on its own: W_Q = 0 keeps the
     * scores at 0, V = 1e20·X is finite, concat·W_O ≈ 2e50 is not */
    case_identity(&k, 2, 2, 1e20f);
    const float Xo[] = {1, 1, 1, 1}, zero[4] = {0};
    memcpy(k.X, Xo, sizeof Xo);
    for (int i = 0; i < 4; i++) k.WO[i] = 1e30f;
    k.cfg.W_Q = zero;
    k.cfg.W_O = k.WO;
    assert_refused(&k.cfg, "output[0][0]");

    /* additive: v_a of 3e38 in two places sums beyond float32 */
    AttnConfig a;
    attn_config_init(&a);
    const float x[] = {1, 1}, Wa[] = {1, 1, 1, 1}, va[] = {3e38f, 3e38f};
    a.attention = ATTN_ADDITIVE;
    a.n_q = a.n_k = 2;
    a.d_x = 1, a.d_a = 2;
    a.X = x, a.W_a = Wa, a.v_a = va;
    assert_refused(&a, "scores[0][0]");
}

/* A trace over 1 MiB is scanned step by step as it is computed, by the
 * threads that compute it (attn_internal.h), not in one pass at the end: the
 * same refusals, the same first cell named, on 1 thread and on 2. */
static void test_large_trace_overflow(void **state)
{
    (void)state;
    enum { N = 320, D = 16 }; /* three 320×320 steps alone are 1.2 MB */
    float *X = calloc((size_t)N * D, sizeof *X), *W = calloc((size_t)D * D, sizeof *W);
    float *WO = calloc((size_t)D * D, sizeof *WO), *zero = calloc((size_t)D * D, sizeof *zero);
    assert_non_null(X), assert_non_null(W), assert_non_null(WO), assert_non_null(zero);
    for (int threads = 1; threads <= 2; threads++) {
        AttnConfig c;
        attn_config_init(&c);
        c.n_q = c.n_k = N;
        c.d_model = c.d_k = c.d_v = D;
        c.scale_kind = ATTN_SCALE_NONE;
        c.threads = threads;
        c.X = X;
        c.W_Q = c.W_K = c.W_V = W;
        /* Q = K = 1e20·X: token 200's own score is 1e40, every other is ≤ 1e37 */
        for (int i = 0; i < D; i++) W[i * D + i] = 1e20f;
        for (int i = 0; i < N * D; i++) X[i] = 1e-3f;
        for (int j = 0; j < D; j++) X[200 * D + j] = 1.0f / D;
        X[200 * D] = 1.0f;
        assert_refused(&c, "scores_1[200][200]");

        /* a causal mask's -inf fill is what a masked step may hold: accepted,
         * in every one of its 51 040 blocked cells */
        for (int i = 0; i < N * D; i++) X[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < D; i++) W[i * D + i] = 1.0f;
        c.mask_kind = ATTN_MASK_CAUSAL;
        AttnTrace *t = run(&c);
        assert_true(t->data_bytes > ((size_t)1 << 20)); /* the step-by-step scans ran */
        assert_trace_defined(t, NULL);
        attn_trace_destroy(t);
        /* and a finite fill is a number like any other */
        c.mask_fill = -1e9f;
        t = run(&c);
        assert_trace_defined(t, NULL);
        attn_trace_destroy(t);

        /* the output projection overflowing on its own, after every head was
         * clean: W_Q = 0 keeps the scores 0, concat·W_O of 1e38 is not finite */
        c.mask_kind = ATTN_MASK_NONE;
        c.mask_fill = -INFINITY;
        c.W_Q = zero;
        for (int i = 0; i < N * D; i++) X[i] = 1.0f;
        for (int i = 0; i < D * D; i++) WO[i] = 1e38f;
        c.W_O = WO;
        assert_refused(&c, "output[0][0]");
    }
    free(X), free(W), free(WO), free(zero);
}

/* The block of a large trace is kept for the next one (attn.c, "one
 * spare"): a trace made in a reused block is the same, bit for bit, as the
 * one made in a fresh block, whatever the block held before, including a
 * trace of another layout (a masked step more). */
static void test_reused_block(void **state)
{
    (void)state;
    enum { N = 640, D = 16 }; /* 4.9 MB of scores, scaled and weights: a large trace */
    float *X1 = malloc(sizeof(float) * N * D), *X2 = malloc(sizeof(float) * N * D), *W = calloc(D * D, sizeof *W);
    assert_non_null(X1), assert_non_null(X2), assert_non_null(W);
    for (int i = 0; i < N * D; i++) {
        X1[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        X2[i] = (float)((i * 5) % 11) / 3.0f - 1.5f;
    }
    for (int i = 0; i < D; i++) W[i * D + i] = 1.0f;
    AttnConfig c;
    attn_config_init(&c);
    c.n_q = c.n_k = N;
    c.d_model = c.d_k = c.d_v = D;
    c.W_Q = c.W_K = c.W_V = W;
    c.X = X1;
    AttnTrace *first = run(&c);                           /* kept: its block is not the spare */
    assert_true(first->alloc_bytes >= ((size_t)4 << 20)); /* large enough to be kept */
    c.X = X2;
    c.mask_kind = ATTN_MASK_CAUSAL; /* another layout: one step more per head */
    AttnTrace *t = run(&c);
    attn_trace_destroy(t); /* now the spare, full of X2's numbers */
    c.X = X1;
    c.mask_kind = ATTN_MASK_NONE;
    const void *previous = NULL;
    for (int round = 0; round < 2; round++) {
        t = run(&c);
        if (round == 1) assert_ptr_equal(t, previous); /* the first round's block, reused */
        previous = t;
        assert_traces_identical(round ? "a reused block, again" : "a reused block", first, t);
        attn_trace_destroy(t);
    }
    attn_trace_destroy(first);
    free(X1), free(X2), free(W);
}

/* End to end: what a lesson file with such numbers does. */
static const char *lesson_with(const char *fields, char *buf, size_t len)
{
    snprintf(buf, len,
             "{\"format\": \"attnviz-lesson/1\", \"id\": \"numerics\", \"title\": {\"en\": \"numerics\"},\n"
             " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 2, %s}",
             fields);
    return buf;
}

static void test_lessons_end_to_end(void **state)
{
    (void)state;
    static const struct {
        const char *fields;
        const char *refused_at; /* NULL: the trace must be defined */
    } cases[] = {
        {"\"X\": [[100, 0], [-100, 0], [0, 100]], \"W_Q\": [[1, 0], [0, 1]], \"W_K\": [[1, 0], [0, 1]], \"scale\": "
         "\"none\"",
         NULL},
        {"\"mask\": [[1, 0, 0], [0, 0, 0], [1, 1, 1]]", NULL},
        {"\"mask\": [[1, 0, 0], [0, 0, 0], [1, 1, 1]], \"mask_fill\": -1e9", NULL},
        {"\"mask\": {\"padding\": [0, 0, 0]}, \"mask_fill\": \"-inf\"", NULL},
        {"\"W_Q\": [[0, 0], [0, 0]], \"mask\": \"causal\"", NULL},
        {"\"W_Q\": [[1e-30, 0], [0, 1e-30]], \"W_K\": [[1e-30, 0], [0, 1e-30]], \"W_V\": [[1e-30, 0], [0, 1e-30]]",
         NULL},
        {"\"X\": [[1, 1], [1, 2], [2, 1]], \"W_Q\": [[1e30, 0], [0, 1e30]], \"W_K\": [[1e30, 0], [0, 1e30]]",
         "scores_1[0][0]"},
        {"\"X\": [[3e38, 3e38], [1, 2], [2, 1]], \"W_Q\": [[0.1, 0], [0, 0.1]], \"W_K\": [[0.1, 0], [0, 0.1]], "
         "\"W_V\": [[1, 0], [1, 0]]",
         "V[0][0]"},
        {"\"scale\": 1e-45", "scaled_1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        Lesson L;
        LessonError err;
        lesson_with(cases[i].fields, text, sizeof text);
        if (lesson_parse(&L, text, strlen(text), "numerics.json", &err) != 0)
            fail_msg("case %zu: the loader refused it: %s", i, err.msg);
        char msg[512] = "";
        AttnTrace *t = attn_trace_create(&L.cfg, msg, sizeof msg);
        if (cases[i].refused_at) {
            if (t) fail_msg("case %zu: expected a refusal at %s, got a trace", i, cases[i].refused_at);
            if (!strstr(msg, cases[i].refused_at) || !strstr(msg, "float32"))
                fail_msg("case %zu: expected a message naming %s and float32, got: %s", i, cases[i].refused_at, msg);
        } else {
            if (!t) fail_msg("case %zu: %s", i, msg);
            assert_trace_matches_reference("numerics lesson", t, &L.cfg, TEST_ABS_TOL, TEST_REL_TOL);
            assert_trace_defined(t, L.cfg.mask);
            /* and the trace file holds no nan or inf but the asked-for fill */
            char *doc = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&doc, &len);
            assert_non_null(mem);
            assert_int_equal(trace_write_json(mem, &L, t), 0);
            fclose(mem);
            const char *steps = strstr(doc, "\"steps\""); /* the config names the fill even without a mask */
            assert_non_null(steps);
            assert_null(strstr(steps, "nan"));
            assert_null(strstr(steps, "\"inf\""));
            if (L.cfg.mask_fill != -INFINITY || L.cfg.mask_kind == ATTN_MASK_NONE) assert_null(strstr(steps, "-inf\""));
            free(doc);
        }
        attn_trace_destroy(t);
        lesson_free(&L);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logits_1e4),
        cmocka_unit_test(test_fully_blocked_row),
        cmocka_unit_test(test_all_equal_scores),
        cmocka_unit_test(test_one_token),
        cmocka_unit_test(test_tiny_weights),
        cmocka_unit_test(test_huge_weights_finite),
        cmocka_unit_test(test_huge_weights_overflow),
        cmocka_unit_test(test_large_trace_overflow),
        cmocka_unit_test(test_reused_block),
        cmocka_unit_test(test_lessons_end_to_end),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
