/* test_engine.c: the engine against PyTorch, the seeds' worked examples,
 * its own reference, and invariants.
 *
 * 1. fixtures: every file in tests/fixtures/MANIFEST (written by
 *    tests/make_fixtures.py from torch) is one cmocka test: build the config,
 *    run attn_trace_create, compare every recorded step by name with torch's
 *    at 1e-5 + 1e-4·|ref|, check step order, kinds, heads, row flags, that
 *    attn_reference_forward gives the same steps (numbers at the same
 *    tolerance, inputs bit for bit) and that threads = 2 records bitwise the
 *    same trace. Rows with every key blocked are NaN in torch; there the
 *    engine must give exact zeros (b_O after W_O).
 * 2. seed 002's worked example, by hand.
 * 3. invariants on random configurations (a fixed seed, so a failure
 *    repeats), each also against attn_reference_forward at 1e-5 + 1e-4·|ref|.
 * 4. trace bookkeeping: data_bytes, alloc_bytes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

/* ---- fixtures: the file format of tests/make_fixtures.py ------------------ */

#define FIX_MAGIC   "ATVZFIX1"
#define FIX_VERSION 3u /* 2 adds mask_order (a version-1 file is read as scale_then_mask), 3 the options */

typedef struct FixTensor {
    char name[ATTN_MAX_NAME];
    char kind[24];
    int head, rows, cols;
    float *data; /* (rows, cols), owned */
} FixTensor;

/* The options of version 3, by key, with their values. */
typedef struct FixOption {
    char key[32];
    double value;
} FixOption;

typedef struct Fixture {
    char name[96];
    int attention, cross, n_q, n_k, d_model, heads, d_k, d_v, d_x, d_y, d_a, has_W_O;
    int scale_kind, mask_kind, mask_order;
    int n_options;
    FixOption options[16];
    float scale_value, divisor, mask_fill;
    uint32_t mask_len;
    unsigned char *mask; /* (mask_len), owned */
    int n_inputs, n_steps;
    FixTensor *inputs; /* (n_inputs) X, Y, weights, biases */
    FixTensor *steps;  /* (n_steps) computed steps in the engine's order */
} Fixture;

typedef struct Reader {
    const unsigned char *base, *p, *end;
    char *err;
    size_t errlen;
    int failed;
} Reader;

static void rd_fail(Reader *r, const char *fmt, ...)
{
    if (r->failed) return;
    r->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
}

static int rd_need(Reader *r, size_t n, const char *what)
{
    if (r->failed) return 0;
    if ((size_t)(r->end - r->p) < n) {
        rd_fail(r, "truncated at byte %zu reading %s (need %zu bytes, %zu left)", (size_t)(r->p - r->base), what, n,
                (size_t)(r->end - r->p));
        return 0;
    }
    return 1;
}

static uint32_t rd_u32(Reader *r, const char *what)
{
    if (!rd_need(r, 4, what)) return 0;
    uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

static int rd_i32(Reader *r, const char *what)
{
    uint32_t u = rd_u32(r, what);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

static float rd_f32(Reader *r, const char *what)
{
    uint32_t u = rd_u32(r, what);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static double rd_f64(Reader *r, const char *what)
{
    uint64_t lo = rd_u32(r, what), hi = rd_u32(r, what);
    uint64_t u = lo | hi << 32;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

static void rd_str(Reader *r, char *out, size_t cap, const char *what)
{
    uint32_t n = rd_u32(r, what);
    out[0] = 0;
    if (r->failed) return;
    if (n >= cap) {
        rd_fail(r, "byte %zu: %s is %u bytes long, at most %zu expected", (size_t)(r->p - r->base), what, n, cap - 1);
        return;
    }
    if (!rd_need(r, n, what)) return;
    memcpy(out, r->p, n);
    out[n] = 0;
    r->p += n;
}

static void rd_tensor(Reader *r, FixTensor *t)
{
    rd_str(r, t->name, sizeof t->name, "a tensor name");
    rd_str(r, t->kind, sizeof t->kind, "a tensor kind");
    t->head = rd_i32(r, "head");
    t->rows = rd_i32(r, "rows");
    t->cols = rd_i32(r, "cols");
    uint32_t enc = rd_u32(r, "encoding");
    if (r->failed) return;
    if (t->rows < 1 || t->cols < 1 || t->rows > (1 << 20) || t->cols > (1 << 20)) {
        rd_fail(r, "%s: shape must be positive, got %d×%d", t->name, t->rows, t->cols);
        return;
    }
    size_t n = (size_t)t->rows * (size_t)t->cols;
    if (enc == 0) {
        if (!rd_need(r, 4 * n, t->name)) return;
        t->data = malloc(sizeof(float) * n);
        assert_non_null(t->data);
        for (size_t i = 0; i < n; i++) t->data[i] = rd_f32(r, t->name);
    } else if (enc == 1) {
        int e = rd_i32(r, "int8 exponent");
        if (!rd_need(r, n, t->name)) return;
        t->data = malloc(sizeof(float) * n);
        assert_non_null(t->data);
        for (size_t i = 0; i < n; i++) t->data[i] = ldexpf((float)(int8_t)r->p[i], -e);
        r->p += n;
    } else {
        rd_fail(r, "%s: encoding must be 0 (float32) or 1 (int8), got %u", t->name, enc);
    }
}

static void fixture_free(Fixture *f)
{
    for (int i = 0; f->inputs && i < f->n_inputs; i++) free(f->inputs[i].data);
    for (int i = 0; f->steps && i < f->n_steps; i++) free(f->steps[i].data);
    free(f->inputs);
    free(f->steps);
    free(f->mask);
    memset(f, 0, sizeof *f);
}

/* Parses a fixture held in memory. Returns 0, or -1 with a message in err;
 * on failure f owns nothing. */
static int fixture_parse(Fixture *f, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    Reader r = {buf, buf, buf + len, err, errlen, 0};
    if (len < 8 || memcmp(buf, FIX_MAGIC, 8) != 0) {
        snprintf(err, errlen, "bad magic: expected \"%s\", found \"%.8s\"", FIX_MAGIC,
                 len >= 8 ? (const char *)buf : "");
        return -1;
    }
    r.p += 8;
    uint32_t version = rd_u32(&r, "version");
    if (!r.failed && (version < 1 || version > FIX_VERSION)) {
        snprintf(err, errlen, "version: expected 1..%u, found %u (regenerate with tests/make_fixtures.py)", FIX_VERSION,
                 version);
        return -1;
    }
    rd_str(&r, f->name, sizeof f->name, "the config name");
    f->attention = rd_i32(&r, "attention");
    f->cross = rd_i32(&r, "cross");
    f->n_q = rd_i32(&r, "n_q");
    f->n_k = rd_i32(&r, "n_k");
    f->d_model = rd_i32(&r, "d_model");
    f->heads = rd_i32(&r, "heads");
    f->d_k = rd_i32(&r, "d_k");
    f->d_v = rd_i32(&r, "d_v");
    f->d_x = rd_i32(&r, "d_x");
    f->d_y = rd_i32(&r, "d_y");
    f->d_a = rd_i32(&r, "d_a");
    f->has_W_O = rd_i32(&r, "has_W_O");
    f->scale_kind = rd_i32(&r, "scale_kind");
    f->scale_value = rd_f32(&r, "scale_value");
    f->divisor = rd_f32(&r, "divisor");
    f->mask_kind = rd_i32(&r, "mask_kind");
    f->mask_fill = rd_f32(&r, "mask_fill");
    f->mask_order = version >= 2 ? rd_i32(&r, "mask_order") : 0;
    if (!r.failed && (f->mask_order < 0 || f->mask_order > 1))
        rd_fail(&r, "mask_order must be 0 (scale then mask) or 1 (mask then scale), got %d", f->mask_order);
    f->n_options = version >= 3 ? (int)rd_u32(&r, "n_options") : 0;
    if (!r.failed && (f->n_options < 0 || f->n_options > (int)(sizeof f->options / sizeof f->options[0])))
        rd_fail(&r, "n_options must be 0..16, got %d", f->n_options);
    for (int i = 0; i < f->n_options && !r.failed; i++) {
        rd_str(&r, f->options[i].key, sizeof f->options[i].key, "an option's key");
        f->options[i].value = rd_f64(&r, f->options[i].key);
    }
    f->mask_len = rd_u32(&r, "mask_len");
    if (!r.failed && (f->scale_kind < 0 || f->scale_kind > 3 || f->mask_kind < 0 || f->mask_kind > 3))
        rd_fail(&r, "scale_kind must be 0..3 and mask_kind 0..3, got %d and %d", f->scale_kind, f->mask_kind);
    if (!r.failed && f->mask_len && rd_need(&r, f->mask_len, "the mask")) {
        f->mask = malloc(f->mask_len);
        assert_non_null(f->mask);
        memcpy(f->mask, r.p, f->mask_len);
        r.p += f->mask_len;
    }
    f->n_inputs = (int)rd_u32(&r, "n_inputs");
    if (!r.failed && (f->n_inputs < 1 || f->n_inputs > 64)) rd_fail(&r, "n_inputs must be 1..64, got %d", f->n_inputs);
    if (!r.failed) {
        f->inputs = calloc((size_t)f->n_inputs, sizeof *f->inputs);
        assert_non_null(f->inputs);
        for (int i = 0; i < f->n_inputs && !r.failed; i++) rd_tensor(&r, &f->inputs[i]);
    }
    f->n_steps = (int)rd_u32(&r, "n_steps");
    if (!r.failed && (f->n_steps < 1 || f->n_steps > 100000)) rd_fail(&r, "n_steps must be ≥ 1, got %d", f->n_steps);
    if (!r.failed) {
        f->steps = calloc((size_t)f->n_steps, sizeof *f->steps);
        assert_non_null(f->steps);
        for (int i = 0; i < f->n_steps && !r.failed; i++) rd_tensor(&r, &f->steps[i]);
    }
    if (rd_need(&r, 4, "the end marker") && memcmp(r.p, "END!", 4) != 0)
        rd_fail(&r, "byte %zu: expected the end marker \"END!\"", (size_t)(r.p - r.base));
    else if (!r.failed && r.p + 4 != r.end)
        rd_fail(&r, "%zu bytes after the end marker", (size_t)(r.end - r.p - 4));
    if (r.failed) {
        fixture_free(f);
        return -1;
    }
    return 0;
}

static const FixTensor *fixture_input(const Fixture *f, const char *name)
{
    for (int i = 0; i < f->n_inputs; i++)
        if (strcmp(f->inputs[i].name, name) == 0) return &f->inputs[i];
    return NULL;
}

static const float *input_data(const Fixture *f, const char *name)
{
    const FixTensor *t = fixture_input(f, name);
    return t ? t->data : NULL;
}

/* The engine config a fixture describes; pointers borrowed from f. An
 * option the test does not know fails the test. */
static void fixture_config(const Fixture *f, AttnConfig *c)
{
    static const AttnScaleKind scales[] = {ATTN_SCALE_SQRT_DK, ATTN_SCALE_SQRT_DMODEL, ATTN_SCALE_NONE,
                                           ATTN_SCALE_VALUE};
    static const AttnMaskKind masks[] = {ATTN_MASK_NONE, ATTN_MASK_CAUSAL, ATTN_MASK_PADDING, ATTN_MASK_MATRIX};
    attn_config_init(c);
    c->attention = f->attention ? ATTN_ADDITIVE : ATTN_DOT;
    c->cross = f->cross;
    c->n_q = f->n_q;
    c->n_k = f->n_k;
    c->d_model = f->d_model;
    c->heads = f->heads;
    c->d_k = f->d_k;
    c->d_v = f->d_v;
    c->d_x = f->d_x;
    c->d_y = f->d_y;
    c->d_a = f->d_a;
    c->scale_kind = scales[f->scale_kind];
    c->scale_value = f->scale_value;
    c->mask_kind = masks[f->mask_kind];
    c->mask = f->mask;
    c->mask_fill = f->mask_fill;
    c->mask_order = f->mask_order ? ATTN_MASK_THEN_SCALE : ATTN_SCALE_THEN_MASK;
    c->X = input_data(f, "X");
    c->Y = input_data(f, "Y");
    c->W_Q = input_data(f, "W_Q");
    c->W_K = input_data(f, "W_K");
    c->W_V = input_data(f, "W_V");
    c->W_O = input_data(f, "W_O");
    c->b_Q = input_data(f, "b_Q");
    c->b_K = input_data(f, "b_K");
    c->b_V = input_data(f, "b_V");
    c->b_O = input_data(f, "b_O");
    c->W_a = input_data(f, "W_a");
    c->b_a = input_data(f, "b_a");
    c->v_a = input_data(f, "v_a");
    c->threads = 1;
    for (int i = 0; i < f->n_options; i++) {
        const FixOption *o = &f->options[i];
        if (strcmp(o->key, "decode") == 0 && o->value == 1)
            c->decode = ATTN_DECODE_INCREMENTAL;
        else if (strcmp(o->key, "kv_heads") == 0 && o->value >= 1 && o->value <= c->heads)
            c->kv_heads = (int)o->value;
        else if (strcmp(o->key, "rope_base") == 0 && o->value > 1)
            c->rope_base = (float)o->value;
        else if (strcmp(o->key, "positional") == 0 && o->value == 1)
            c->positional = ATTN_POSITIONAL_SINUSOIDAL;
        else if (strcmp(o->key, "tile") == 0 && o->value >= 1)
            c->tile = (int)o->value;
        else
            fail_msg("%s: unknown option %s = %g (tests/make_fixtures.py, OPTIONS)", f->name, o->key, o->value);
    }
}

/* ---- what a trace is, written from its definition ---------------------------- */

/* Which fixture or random case is being checked, for failure messages. */
static char g_ctx[192];

/* May query i attend key j? Written from the mask's definition, not from the engine. */
static int allow_at(const AttnConfig *c, int i, int j)
{
    switch (c->mask_kind) {
    case ATTN_MASK_NONE:
        return 1;
    case ATTN_MASK_CAUSAL:
        return j <= i;
    case ATTN_MASK_PADDING:
        return c->mask[j] != 0;
    case ATTN_MASK_MATRIX:
        return c->mask[(size_t)i * (size_t)c->n_k + (size_t)j] != 0;
    }
    return 1;
}

static int row_dead(const AttnConfig *c, int i)
{
    for (int j = 0; j < c->n_k; j++)
        if (allow_at(c, i, j)) return 0;
    return 1;
}

/* May row r of step s attend its key column j? Is the row fully blocked?
 * A step of decoding's token t (its row the one token) is one query, t - 1,
 * against keys 0..t-1. */
static int allow_step(const AttnConfig *c, const AttnStep *s, int r, int j)
{
    return allow_at(c, s->row_axis == ATTN_AXIS_TOKEN ? s->at - 1 : r, j);
}

static int row_dead_at(const AttnConfig *c, const AttnStep *s, int r)
{
    if (s->row_axis != ATTN_AXIS_TOKEN) return row_dead(c, r);
    for (int j = 0; j < s->at; j++)
        if (allow_step(c, s, r, j)) return 0;
    return 1;
}

typedef struct ExpStep {
    char name[ATTN_MAX_NAME];
    AttnStepKind kind;
    int head, at, rows, cols;
    int n_from;
    char from[5][ATTN_MAX_NAME];
} ExpStep;

typedef struct ExpList {
    ExpStep s[8 * 1024 + 16];
    int n;
} ExpList;

/* The position of the steps exp_add lists next (decoding's token; 0: none). */
static int g_exp_at;

/* NAME, or NAME@AT for a step with a position */
static const char *at_name(char *buf, size_t cap, const char *name, int at)
{
    if (at)
        snprintf(buf, cap, "%s@%d", name, at);
    else
        snprintf(buf, cap, "%s", name);
    return buf;
}

static void exp_add(ExpList *L, AttnStepKind kind, int head, int rows, int cols, const char *name, int n_from, ...)
{
    assert_true(L->n < (int)(sizeof L->s / sizeof L->s[0]));
    ExpStep *s = &L->s[L->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = kind;
    s->head = head;
    s->at = g_exp_at;
    s->rows = rows;
    s->cols = cols;
    va_list ap;
    va_start(ap, n_from);
    for (int i = 0; i < n_from; i++) {
        const char *f = va_arg(ap, const char *);
        if (f) snprintf(s->from[s->n_from++], ATTN_MAX_NAME, "%s", f);
    }
    va_end(ap);
}

/* The steps, in order, with names, kinds, heads, shapes and sources, that
 * the trace definition lists for this config. */
static void expected_steps(const AttnConfig *c, ExpList *L)
{
    L->n = 0;
    int mask = c->mask_kind != ATTN_MASK_NONE;
    if (c->attention == ATTN_ADDITIVE) {
        int dx = c->d_x, dy = c->cross ? c->d_y : c->d_x, da = c->d_a;
        const char *src = c->cross ? "Y" : "X";
        exp_add(L, ATTN_STEP_INPUT, 0, c->n_q, dx, "X", 0);
        if (c->cross) exp_add(L, ATTN_STEP_INPUT, 0, c->n_k, dy, "Y", 0);
        exp_add(L, ATTN_STEP_WEIGHT, 0, dx + dy, da, "W_a", 0);
        if (c->b_a) exp_add(L, ATTN_STEP_BIAS, 0, 1, da, "b_a", 0);
        exp_add(L, ATTN_STEP_WEIGHT, 0, da, 1, "v_a", 0);
        exp_add(L, ATTN_STEP_ADDITIVE_HIDDEN, 0, c->n_q * c->n_k, da, "hidden", 4, "X", src, "W_a",
                c->b_a ? "b_a" : NULL);
        exp_add(L, ATTN_STEP_SCORES, 0, c->n_q, c->n_k, "scores", 2, "hidden", "v_a");
        if (mask) exp_add(L, ATTN_STEP_MASKED, 0, c->n_q, c->n_k, "masked", 1, "scores");
        exp_add(L, ATTN_STEP_SOFTMAX, 0, c->n_q, c->n_k, "weights", 1, mask ? "masked" : "scores");
        exp_add(L, ATTN_STEP_WEIGHTED_SUM, 0, c->n_q, dy, "context", 2, "weights", src);
        return;
    }
    int H = c->heads, dm = c->d_model, dk = c->d_k, dv = c->d_v, nq = c->n_q, nk = c->n_k;
    /* grouped-query attention: G K/V heads, query head h reading K/V head (h - 1)·G/H + 1, the
     * first of the group listing its split */
    int G = c->kv_heads ? c->kv_heads : H;
    const char *src = c->cross ? "Y" : "X";
    exp_add(L, ATTN_STEP_INPUT, 0, nq, dm, "X", 0);
    if (c->cross) exp_add(L, ATTN_STEP_INPUT, 0, nk, dm, "Y", 0);
    exp_add(L, ATTN_STEP_WEIGHT, 0, dm, H * dk, "W_Q", 0);
    if (c->b_Q) exp_add(L, ATTN_STEP_BIAS, 0, 1, H * dk, "b_Q", 0);
    exp_add(L, ATTN_STEP_WEIGHT, 0, dm, G * dk, "W_K", 0);
    if (c->b_K) exp_add(L, ATTN_STEP_BIAS, 0, 1, G * dk, "b_K", 0);
    exp_add(L, ATTN_STEP_WEIGHT, 0, dm, G * dv, "W_V", 0);
    if (c->b_V) exp_add(L, ATTN_STEP_BIAS, 0, 1, G * dv, "b_V", 0);
    if (c->W_O) exp_add(L, ATTN_STEP_WEIGHT, 0, H * dv, dm, "W_O", 0);
    if (c->b_O) exp_add(L, ATTN_STEP_BIAS, 0, 1, dm, "b_O", 0);
    /* the sinusoidal positional encoding: PE, then X + PE, which the projections read */
    int pe = c->positional == ATTN_POSITIONAL_SINUSOIDAL;
    const char *x_in = pe ? "X_PE" : "X";
    if (pe) exp_add(L, ATTN_STEP_POSITIONAL, 0, nq, dm, "PE", 0);
    if (pe) exp_add(L, ATTN_STEP_ADD_POSITIONAL, 0, nq, dm, "X_PE", 2, "X", "PE");
    if (!c->cross) src = x_in;
    exp_add(L, ATTN_STEP_PROJECTION, 0, nq, H * dk, "Q", 3, x_in, "W_Q", c->b_Q ? "b_Q" : NULL);
    exp_add(L, ATTN_STEP_PROJECTION, 0, nk, G * dk, "K", 3, src, "W_K", c->b_K ? "b_K" : NULL);
    exp_add(L, ATTN_STEP_PROJECTION, 0, nk, G * dv, "V", 3, src, "W_V", c->b_V ? "b_V" : NULL);
    /* RoPE: the angles, then each head's Q_h and each K/V head's K_g turned, which the scores read */
    int rope = c->rope_base != 0;
    if (rope) exp_add(L, ATTN_STEP_ROPE_ANGLES, 0, nq, dk / 2, "angles", 0);
    for (int h = 1; h <= H; h++) {
        char q[16], k[16], v[16], s[24], a[24], m[24], w[24], o[24], qr[24], kr[24];
        int g = (h - 1) * G / H + 1, first = h == 1 || (h - 2) * G / H + 1 != g;
        snprintf(q, sizeof q, "Q_%d", h);
        snprintf(k, sizeof k, "K_%d", g);
        snprintf(v, sizeof v, "V_%d", g);
        snprintf(s, sizeof s, "scores_%d", h);
        snprintf(a, sizeof a, "scaled_%d", h);
        snprintf(m, sizeof m, "masked_%d", h);
        snprintf(w, sizeof w, "weights_%d", h);
        snprintf(o, sizeof o, "head_%d", h);
        exp_add(L, ATTN_STEP_SPLIT, h, nq, dk, q, 1, "Q");
        if (first) {
            exp_add(L, ATTN_STEP_SPLIT, g, nk, dk, k, 1, "K");
            exp_add(L, ATTN_STEP_SPLIT, g, nk, dv, v, 1, "V");
        }
        snprintf(qr, sizeof qr, "Q_rot_%d", h);
        snprintf(kr, sizeof kr, "K_rot_%d", g);
        if (rope) exp_add(L, ATTN_STEP_ROPE, h, nq, dk, qr, 2, q, "angles");
        if (rope && first) exp_add(L, ATTN_STEP_ROPE, g, nk, dk, kr, 2, k, "angles");
        exp_add(L, ATTN_STEP_SCORES, h, nq, nk, s, 2, rope ? qr : q, rope ? kr : k);
        if (mask && c->mask_order == ATTN_MASK_THEN_SCALE) { /* seed 003: mask the raw scores, then divide */
            exp_add(L, ATTN_STEP_MASKED, h, nq, nk, m, 1, s);
            exp_add(L, ATTN_STEP_SCALED, h, nq, nk, a, 1, m);
            exp_add(L, ATTN_STEP_SOFTMAX, h, nq, nk, w, 1, a);
        } else {
            exp_add(L, ATTN_STEP_SCALED, h, nq, nk, a, 1, s);
            if (mask) exp_add(L, ATTN_STEP_MASKED, h, nq, nk, m, 1, a);
            exp_add(L, ATTN_STEP_SOFTMAX, h, nq, nk, w, 1, mask ? m : a);
        }
        exp_add(L, ATTN_STEP_WEIGHTED_SUM, h, nq, dv, o, 2, w, v);
        /* the tiled softmax: five steps per block of c->tile keys, then the head's output again */
        if (c->tile > 0) {
            const char *pre = mask && c->mask_order == ATTN_SCALE_THEN_MASK ? m : a;
            char blk[40], mx[40], r[40], l[40], acc[40], pm[40] = "", pl[40] = "", pacc[40] = "", name[24];
            int blocks = (nk + c->tile - 1) / c->tile;
            for (int at = 1; at <= blocks; at++) {
                int w_b = nk - (at - 1) * c->tile < c->tile ? nk - (at - 1) * c->tile : c->tile;
                g_exp_at = at;
                snprintf(name, sizeof name, "block_%d", h);
                exp_add(L, ATTN_STEP_TILE_SCORES, h, nq, w_b, at_name(blk, sizeof blk, name, at), 1, pre);
                snprintf(name, sizeof name, "m_%d", h);
                exp_add(L, ATTN_STEP_TILE_MAX, h, nq, 1, at_name(mx, sizeof mx, name, at), 2, at > 1 ? pm : NULL, blk);
                snprintf(name, sizeof name, "rescale_%d", h);
                exp_add(L, ATTN_STEP_TILE_RESCALE, h, nq, 1, at_name(r, sizeof r, name, at), 2, at > 1 ? pm : NULL, mx);
                snprintf(name, sizeof name, "l_%d", h);
                exp_add(L, ATTN_STEP_TILE_SUM, h, nq, 1, at_name(l, sizeof l, name, at), 4, at > 1 ? pl : NULL, r, blk,
                        mx);
                snprintf(name, sizeof name, "acc_%d", h);
                exp_add(L, ATTN_STEP_TILE_ACCUMULATE, h, nq, dv, at_name(acc, sizeof acc, name, at), 5,
                        at > 1 ? pacc : NULL, r, blk, mx, v);
                memcpy(pm, mx, sizeof pm), memcpy(pl, l, sizeof pl), memcpy(pacc, acc, sizeof pacc);
            }
            g_exp_at = 0;
            snprintf(name, sizeof name, "tiled_%d", h);
            exp_add(L, ATTN_STEP_TILE_OUTPUT, h, nq, dv, name, 3, pacc, pl, o);
        }
    }
    exp_add(L, ATTN_STEP_CONCAT, 0, nq, H * dv, "concat", 0); /* its sources: every head, checked below */
    if (c->W_O) exp_add(L, ATTN_STEP_OUTPUT, 0, nq, dm, "output", 3, "concat", "W_O", c->b_O ? "b_O" : NULL);
    if (c->decode != ATTN_DECODE_INCREMENTAL) return;
    /* decoding: token t's rows, each head's columns and caches, one row of attention per head */
    int row_mask = c->mask_kind != ATTN_MASK_CAUSAL; /* a cache of tokens 1..t holds no key the causal mask blocks */
    for (int at = 1; at <= nq; at++) {
        char q[40], k[40], v[40], qh[40], kh[40], vh[40], kc[40], vc[40], pk[40], pv[40], s[40], a[40], m[40], w[40],
            o[40], cat[40], out[40], b[24], qr[40], kr[40];
        g_exp_at = at;
        exp_add(L, ATTN_STEP_PROJECTION, 0, 1, H * dk, at_name(q, sizeof q, "Q", at), 3, x_in, "W_Q",
                c->b_Q ? "b_Q" : NULL);
        exp_add(L, ATTN_STEP_PROJECTION, 0, 1, G * dk, at_name(k, sizeof k, "K", at), 3, x_in, "W_K",
                c->b_K ? "b_K" : NULL);
        exp_add(L, ATTN_STEP_PROJECTION, 0, 1, G * dv, at_name(v, sizeof v, "V", at), 3, x_in, "W_V",
                c->b_V ? "b_V" : NULL);
        for (int h = 1; h <= H; h++) {
            int g = (h - 1) * G / H + 1, first = h == 1 || (h - 2) * G / H + 1 != g;
            snprintf(b, sizeof b, "Q_%d", h);
            exp_add(L, ATTN_STEP_SPLIT, h, 1, dk, at_name(qh, sizeof qh, b, at), 1, q);
            snprintf(b, sizeof b, "K_%d", g);
            at_name(kh, sizeof kh, b, at);
            snprintf(b, sizeof b, "V_%d", g);
            at_name(vh, sizeof vh, b, at);
            if (first) exp_add(L, ATTN_STEP_SPLIT, g, 1, dk, kh, 1, k);
            if (first) exp_add(L, ATTN_STEP_SPLIT, g, 1, dv, vh, 1, v);
            snprintf(b, sizeof b, "K_rot_%d", g);
            at_name(kr, sizeof kr, b, at);
            if (first && rope) exp_add(L, ATTN_STEP_ROPE, g, 1, dk, kr, 2, kh, "angles");
            snprintf(b, sizeof b, "K_cache_%d", g);
            at_name(pk, sizeof pk, b, at - 1);
            at_name(kc, sizeof kc, b, at);
            if (first) exp_add(L, ATTN_STEP_KV_APPEND, g, at, dk, kc, 2, at > 1 ? pk : NULL, rope ? kr : kh);
            snprintf(b, sizeof b, "V_cache_%d", g);
            at_name(pv, sizeof pv, b, at - 1);
            at_name(vc, sizeof vc, b, at);
            if (first) exp_add(L, ATTN_STEP_KV_APPEND, g, at, dv, vc, 2, at > 1 ? pv : NULL, vh);
            snprintf(b, sizeof b, "Q_rot_%d", h);
            at_name(qr, sizeof qr, b, at);
            if (rope) exp_add(L, ATTN_STEP_ROPE, h, 1, dk, qr, 2, qh, "angles");
            snprintf(b, sizeof b, "scores_%d", h);
            exp_add(L, ATTN_STEP_SCORES, h, 1, at, at_name(s, sizeof s, b, at), 2, rope ? qr : qh, kc);
            snprintf(b, sizeof b, "scaled_%d", h);
            at_name(a, sizeof a, b, at);
            snprintf(b, sizeof b, "masked_%d", h);
            at_name(m, sizeof m, b, at);
            snprintf(b, sizeof b, "weights_%d", h);
            at_name(w, sizeof w, b, at);
            if (row_mask && c->mask_order == ATTN_MASK_THEN_SCALE) {
                exp_add(L, ATTN_STEP_MASKED, h, 1, at, m, 1, s);
                exp_add(L, ATTN_STEP_SCALED, h, 1, at, a, 1, m);
                exp_add(L, ATTN_STEP_SOFTMAX, h, 1, at, w, 1, a);
            } else {
                exp_add(L, ATTN_STEP_SCALED, h, 1, at, a, 1, s);
                if (row_mask) exp_add(L, ATTN_STEP_MASKED, h, 1, at, m, 1, a);
                exp_add(L, ATTN_STEP_SOFTMAX, h, 1, at, w, 1, row_mask ? m : a);
            }
            snprintf(b, sizeof b, "head_%d", h);
            exp_add(L, ATTN_STEP_WEIGHTED_SUM, h, 1, dv, at_name(o, sizeof o, b, at), 2, w, vc);
        }
        exp_add(L, ATTN_STEP_CONCAT, 0, 1, H * dv, at_name(cat, sizeof cat, "concat", at), 0);
        if (c->W_O)
            exp_add(L, ATTN_STEP_OUTPUT, 0, 1, dm, at_name(out, sizeof out, "output", at), 3, cat, "W_O",
                    c->b_O ? "b_O" : NULL);
    }
    g_exp_at = 0;
    exp_add(L, ATTN_STEP_DECODE_CHECK, 0, nq, c->W_O ? dm : H * dv, "decoded", 0); /* sources checked below */
}

/* The trace's steps are exactly the expected ones: order, names, kinds,
 * heads, shapes, and `from` links that point back at the expected sources. */
static void check_structure(const AttnTrace *t, const AttnConfig *c)
{
    static ExpList L; /* large; tests run one at a time */
    expected_steps(c, &L);
    if (t->n_steps != L.n) fail_msg("%s: the trace has %d steps, its definition lists %d", g_ctx, t->n_steps, L.n);
    size_t bytes = 0;
    for (int i = 0; i < L.n; i++) {
        const AttnStep *s = &t->steps[i];
        const ExpStep *e = &L.s[i];
        if (strcmp(s->name, e->name) != 0 || s->kind != e->kind || s->head != e->head || s->at != e->at ||
            s->rows != e->rows || s->cols != e->cols)
            fail_msg("%s: step %d: got %s (%s, head %d, at %d, %d×%d), expected %s (%s, head %d, at %d, %d×%d)", g_ctx,
                     i, s->name, attn_step_kind_name(s->kind), s->head, s->at, s->rows, s->cols, e->name,
                     attn_step_kind_name(e->kind), e->head, e->at, e->rows, e->cols);
        /* its shape is what its axes count, its name its role's with "_H" for head H and "@T" for position T */
        int rows = attn_step_axis_size(c, (AttnAxis)s->row_axis, s->at);
        int cols = attn_step_axis_size(c, (AttnAxis)s->col_axis, s->at);
        if (s->rows != rows || s->cols != cols)
            fail_msg("%s: step %s is %d×%d, its axes %d and %d count %d×%d", g_ctx, s->name, s->rows, s->cols,
                     s->row_axis, s->col_axis, rows, cols);
        char named[ATTN_MAX_NAME + 32];
        int len = snprintf(named, sizeof named, "%s", attn_role_name((AttnRole)s->role));
        if (s->head) len += snprintf(named + len, sizeof named - (size_t)len, "_%d", s->head);
        if (s->at) snprintf(named + len, sizeof named - (size_t)len, "@%d", s->at);
        if (strcmp(named, s->name) != 0) fail_msg("%s: step %s has the role of %s", g_ctx, s->name, named);
        if (attn_trace_find_at(t, (AttnRole)s->role, s->head, s->at) != s)
            fail_msg("%s: step %s is not the one step of its role, head and position", g_ctx, s->name);
        if (!s->at && attn_trace_find_role(t, (AttnRole)s->role, s->head) != s)
            fail_msg("%s: attn_trace_find_role does not find step %s", g_ctx, s->name);
        assert_non_null(s->data);
        bytes += sizeof(float) * (size_t)s->rows * (size_t)s->cols;
        for (int k = 0; k < s->n_from; k++)
            if (s->from[k] >= i)
                fail_msg("%s: step %s: from[%d] = %d is not an earlier step", g_ctx, s->name, k, s->from[k]);
        if (s->kind == ATTN_STEP_CONCAT) {
            assert_int_equal(s->n_from, c->heads);
            for (int k = 0; k < s->n_from; k++) {
                char want[ATTN_MAX_NAME + 16], head[24];
                snprintf(head, sizeof head, "head_%d", k + 1);
                assert_string_equal(t->steps[s->from[k]].name, at_name(want, sizeof want, head, s->at));
            }
            continue;
        }
        if (s->kind == ATTN_STEP_DECODE_CHECK) { /* every token's last row, then the whole forward's */
            const char *last = c->W_O ? "output" : "concat";
            assert_int_equal(s->n_from, c->n_q + 1);
            for (int k = 0; k <= c->n_q; k++) {
                char want[ATTN_MAX_NAME + 16];
                assert_string_equal(t->steps[s->from[k]].name,
                                    at_name(want, sizeof want, last, k < c->n_q ? k + 1 : 0));
            }
            continue;
        }
        if (s->n_from != e->n_from)
            fail_msg("%s: step %s: %d sources, expected %d", g_ctx, s->name, s->n_from, e->n_from);
        for (int k = 0; k < e->n_from; k++) {
            int found = 0;
            for (int m = 0; m < s->n_from; m++) found |= strcmp(t->steps[s->from[m]].name, e->from[k]) == 0;
            if (!found) fail_msg("%s: step %s: not linked to its source %s", g_ctx, s->name, e->from[k]);
        }
        /* row flags exist on masked, softmax and weighted_sum steps only */
        int flagged = s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX ||
                      s->kind == ATTN_STEP_WEIGHTED_SUM || s->kind == ATTN_STEP_TILE_OUTPUT;
        if (flagged != (s->row_flags != NULL))
            fail_msg("%s: step %s: row_flags %s", g_ctx, s->name, flagged ? "missing" : "unexpected");
        if (s->row_flags)
            for (int r = 0; r < s->rows; r++)
                if (!!(s->row_flags[r] & ATTN_ROW_ALL_BLOCKED) != row_dead_at(c, s, r))
                    fail_msg("%s: step %s row %d: ATTN_ROW_ALL_BLOCKED is %s, but the row is %s", g_ctx, s->name, r,
                             (s->row_flags[r] & ATTN_ROW_ALL_BLOCKED) ? "set" : "clear",
                             row_dead_at(c, s, r) ? "fully blocked" : "not fully blocked");
    }
    if (t->data_bytes != bytes)
        fail_msg("%s: data_bytes is %zu, the steps hold rows·cols·4 = %zu", g_ctx, t->data_bytes, bytes);
    /* the outline lists the same steps, without numbers */
    int n_outline = -1;
    AttnStep *outline = attn_trace_outline(c, &n_outline);
    assert_non_null(outline);
    assert_int_equal(n_outline, t->n_steps);
    for (int i = 0; i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i], *o = &outline[i];
        /* a name in static storage is the same pointer; one with a position, the same text */
        if ((s->at ? strcmp(o->name, s->name) != 0 : o->name != s->name) || o->kind != s->kind || o->role != s->role ||
            o->head != s->head || o->at != s->at || o->rows != s->rows || o->cols != s->cols ||
            o->row_axis != s->row_axis || o->col_axis != s->col_axis || o->data || o->from || o->row_flags || o->n_from)
            fail_msg("%s: the outline's step %d (%s) is not the trace's %s", g_ctx, i, o->name, s->name);
    }
    free(outline);
    if (t->alloc_bytes < t->data_bytes)
        fail_msg("%s: alloc_bytes %zu < data_bytes %zu", g_ctx, t->alloc_bytes, t->data_bytes);
    if (attn_trace_floats(c) * sizeof(float) != t->data_bytes)
        fail_msg("%s: attn_trace_floats says %zu floats, the trace holds %zu", g_ctx, attn_trace_floats(c),
                 t->data_bytes / sizeof(float));
}

/* ---- 1. fixtures ------------------------------------------------------------- */

static int is_input_kind(AttnStepKind k)
{
    return k == ATTN_STEP_INPUT || k == ATTN_STEP_WEIGHT || k == ATTN_STEP_BIAS;
}

static void test_fixture(void **state)
{
    const char *file = *state;
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/fixtures/%s", ATTNVIZ_TESTS_DIR, file);
    size_t len = 0;
    unsigned char *buf = (unsigned char *)test_read_file(path, &len);
    if (!buf) fail_msg("%s: cannot read (run /usr/bin/python3 tests/make_fixtures.py)", path);
    Fixture f;
    int rc = fixture_parse(&f, buf, len, err, sizeof err);
    free(buf);
    if (rc != 0) fail_msg("%s: %s", path, err);

    AttnConfig c;
    fixture_config(&f, &c);
    snprintf(g_ctx, sizeof g_ctx, "%s", file);
    /* the inputs are borrowed: the engine must leave them as they were */
    float *before[64]; /* (n_inputs ≤ 64, checked by the parser) copies */
    for (int i = 0; i < f.n_inputs; i++) {
        size_t bytes = sizeof(float) * (size_t)f.inputs[i].rows * (size_t)f.inputs[i].cols;
        before[i] = malloc(bytes);
        assert_non_null(before[i]);
        memcpy(before[i], f.inputs[i].data, bytes);
    }
    AttnTrace *t = attn_trace_create(&c, err, sizeof err);
    if (!t) fail_msg("%s: attn_trace_create: %s", file, err);
    for (int i = 0; i < f.n_inputs; i++) {
        if (memcmp(before[i], f.inputs[i].data, sizeof(float) * (size_t)f.inputs[i].rows * (size_t)f.inputs[i].cols))
            fail_msg("%s: the engine wrote into its borrowed input %s", file, f.inputs[i].name);
        free(before[i]);
    }
    /* and keeps no pointer to them */
    const AttnConfig *tc = &t->cfg;
    assert_true(!tc->X && !tc->Y && !tc->W_Q && !tc->W_K && !tc->W_V && !tc->W_O && !tc->b_Q && !tc->b_K && !tc->b_V &&
                !tc->b_O && !tc->W_a && !tc->b_a && !tc->v_a && !tc->mask);
    if (fabsf(t->divisor - f.divisor) > 1e-7f * f.divisor)
        fail_msg("%s: divisor %.9g, torch divided by %.9g", file, (double)t->divisor, (double)f.divisor);
    check_structure(t, &c);

    /* every tensor of the fixture (its inputs, then its computed steps) is the
     * trace's step of that name, in the trace's order; a step the fixture
     * lacks (a kind newer than the fixture) is not compared */
    double worst_ratio = 0, max_abs = 0, max_rel = 0; /* max_rel over |ref| ≥ 1e-3 */
    const char *worst_step = "";
    int last = -1;
    for (int x = 0; x < f.n_inputs + f.n_steps; x++) {
        const FixTensor *r = x < f.n_inputs ? &f.inputs[x] : &f.steps[x - f.n_inputs];
        const AttnStep *s = attn_trace_find_name(t, r->name);
        if (!s)
            fail_msg("%s: torch has %s (%s, head %d), the engine no step of that name", file, r->name, r->kind,
                     r->head);
        int i = attn_trace_index(t, s);
        if (i <= last)
            fail_msg("%s: %s is step %d of the engine, before %s, which torch has first", file, s->name, i,
                     t->steps[last].name);
        last = i;
        if (strcmp(attn_step_kind_name(s->kind), r->kind) != 0 || s->head != r->head)
            fail_msg("%s step %d: engine %s (%s, head %d), torch %s (%s, head %d)", file, i, s->name,
                     attn_step_kind_name(s->kind), s->head, r->name, r->kind, r->head);
        if (s->rows != r->rows || s->cols != r->cols)
            fail_msg("%s %s: engine %d×%d, torch %d×%d", file, s->name, s->rows, s->cols, r->rows, r->cols);
        size_t n = (size_t)s->rows * (size_t)s->cols;
        if (is_input_kind(s->kind)) { /* recorded as given */
            if (memcmp(s->data, r->data, sizeof(float) * n) != 0)
                fail_msg("%s: %s is not the given input", file, s->name);
            continue;
        }
        /* torch's NaN rows (all keys blocked, fill -inf): the engine's exact values */
        float *want = malloc(sizeof(float) * n); /* (rows, cols) */
        assert_non_null(want);
        memcpy(want, r->data, sizeof(float) * n);
        const float *b_O = c.b_O;
        for (int row = 0; row < s->rows; row++) {
            int has_nan = 0;
            for (int col = 0; col < s->cols; col++) has_nan |= isnan(want[(size_t)row * s->cols + col]);
            if (!has_nan) continue;
            if (s->kind == ATTN_STEP_ADDITIVE_HIDDEN || !row_dead_at(&c, s, row) || c.mask_fill != -INFINITY)
                fail_msg("%s %s row %d: NaN in torch's result outside a fully blocked row", file, s->name, row);
            for (int col = 0; col < s->cols; col++) {
                float v = s->kind == ATTN_STEP_OUTPUT && b_O ? b_O[col] : 0.0f;
                float got = s->data[(size_t)row * s->cols + col];
                if (got != v) /* exactly: 0 weight, 0 output, never NaN */
                    fail_msg("%s %s[%d,%d]: fully blocked row must be exactly %g, got %.9g", file, s->name, row, col,
                             (double)v, (double)got);
                want[(size_t)row * s->cols + col] = v;
            }
        }
        char what[160];
        snprintf(what, sizeof what, "%s %s", file, s->name);
        assert_floats_close(what, s->data, want, s->rows, s->cols, TEST_ABS_TOL, TEST_REL_TOL);
        /* blocked weights are exactly 0 (a finite fill on a fully blocked row is torch's uniform row) */
        if (s->kind == ATTN_STEP_SOFTMAX)
            for (int row = 0; row < s->rows; row++)
                for (int col = 0; col < s->cols; col++)
                    if (!allow_step(&c, s, row, col) && (c.mask_fill == -INFINITY || !row_dead_at(&c, s, row)) &&
                        s->data[(size_t)row * s->cols + col] != 0.0f)
                        fail_msg("%s %s[%d,%d]: blocked weight %.9g, expected exactly 0", file, s->name, row, col,
                                 (double)s->data[(size_t)row * s->cols + col]);
        if (getenv("ATTNVIZ_TEST_VERBOSE")) { /* per step, for reports: ATTNVIZ_TEST_VERBOSE=1 ./test_engine */
            TestDiff d = test_diff_floats(s->data, want, n);
            printf("    %-12s %4d×%-4d max |diff| %.3g (at %zu, ref %.6g), max rel %.3g\n", s->name, s->rows, s->cols,
                   d.max_abs, d.max_at, (double)want[d.max_at], d.max_rel);
        }
        for (size_t k = 0; k < n; k++) {
            if (!isfinite(want[k])) continue;
            double d = fabs((double)s->data[k] - (double)want[k]);
            double ratio = d / (TEST_ABS_TOL + TEST_REL_TOL * fabs((double)want[k]));
            if (d > max_abs) max_abs = d;
            if (fabs((double)want[k]) >= 1e-3 && d / fabs((double)want[k]) > max_rel)
                max_rel = d / fabs((double)want[k]);
            if (ratio > worst_ratio) {
                worst_ratio = ratio;
                worst_step = s->name;
            }
        }
        free(want);
    }
    /* the reference (reference.c) computes the same steps */
    double ref_ratio = assert_trace_matches_reference(file, t, &c, TEST_ABS_TOL, TEST_REL_TOL);
    /* the same numbers, bitwise, on two threads */
    c.threads = 2;
    AttnTrace *t2 = attn_trace_create(&c, err, sizeof err);
    if (!t2) fail_msg("%s: threads=2: %s", file, err);
    assert_traces_identical(file, t, t2);
    printf("  %-34s %4d of %d steps  max |engine - torch| %.3g, max rel %.3g (|ref| ≥ 1e-3), worst |diff|/tol %.3f "
           "(%s); against the reference %.3f\n",
           file, f.n_inputs + f.n_steps, t->n_steps, max_abs, max_rel, worst_ratio, worst_step, ref_ratio);
    attn_trace_destroy(t2);
    attn_trace_destroy(t);
    fixture_free(&f);
}

/* A fixture with a wrong magic, version, or length fails with a clear message. */
static void test_fixture_header_errors(void **state)
{
    (void)state;
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/fixtures/self_1head.bin", ATTNVIZ_TESTS_DIR);
    size_t len = 0;
    unsigned char *buf = (unsigned char *)test_read_file(path, &len);
    assert_non_null(buf);
    Fixture f;
    assert_int_equal(fixture_parse(&f, buf, len, err, sizeof err), 0);
    fixture_free(&f);

    buf[3] = 'X';
    assert_int_equal(fixture_parse(&f, buf, len, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad magic"));
    buf[3] = 'Z';
    buf[8] = 4; /* version 4 */
    assert_int_equal(fixture_parse(&f, buf, len, err, sizeof err), -1);
    assert_non_null(strstr(err, "version: expected 1..3, found 4"));
    buf[8] = 1;
    assert_int_equal(fixture_parse(&f, buf, len - 5, err, sizeof err), -1);
    assert_non_null(strstr(err, "truncated"));
    assert_int_equal(fixture_parse(&f, buf, len - 4, err, sizeof err), -1);
    assert_non_null(strstr(err, "end marker"));
    free(buf);
}

/* ---- 2. seed 002's worked example ------------------------------------------ */

static void test_seed002_worked_example(void **state)
{
    (void)state;
    /* q = X·I and k = Y·I: the seed's q = [[1,2],[3,4]], k = [[5,6],[7,8]], d = 2 */
    const float q[4] = {1, 2, 3, 4}, k[4] = {5, 6, 7, 8}, I[4] = {1, 0, 0, 1}; /* (2, 2) each */
    AttnConfig c;
    attn_config_init(&c);
    c.cross = 1;
    c.n_q = c.n_k = 2;
    c.d_model = c.d_k = c.d_v = 2;
    c.X = q;
    c.Y = k;
    c.W_Q = c.W_K = c.W_V = I;
    char err[256];
    AttnTrace *t = attn_trace_create(&c, err, sizeof err);
    assert_non_null(t);
    const AttnStep *s = attn_trace_find_name(t, "scores_1"), *a = attn_trace_find_name(t, "scaled_1");
    assert_non_null(s);
    assert_non_null(a);
    const float qkT[4] = {17, 23, 39, 53};
    assert_memory_equal(s->data, qkT, sizeof qkT); /* small integers: exact */
    /* the seed's own code calls matmul(q, k) without transposing k */
    const float qk[4] = {19, 22, 43, 50};
    if (memcmp(s->data, qk, sizeof qk) == 0) fail_msg("scores_1 is q·k = [[19,22],[43,50]], not q·kᵀ");
    /* ÷√2, as the seed prints it to four decimals */
    const float scaled[4] = {12.0208f, 16.2635f, 27.5772f, 37.4767f};
    assert_floats_close("seed 002 scaled", a->data, scaled, 2, 2, 5e-5 + 1e-6, 0);
    assert_true(fabsf(t->divisor - sqrtf(2.0f)) == 0.0f);
    attn_trace_destroy(t);
}

/* ---- 3. invariants on random configurations ---------------------------------- */

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r)
{
    return test_splitmix64(&r->s);
}
static int rng_int(Rng *r, int lo, int hi)
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}
static float rng_unit(Rng *r)
{
    return (float)((double)(rng_next(r) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* A random config and the buffers it borrows. */
typedef struct Case {
    AttnConfig c;
    float *buf[16];
    int nbuf;
    unsigned char mask[64 * 64]; /* (n_q, n_k) or (n_k) */
} Case;

static float *case_floats(Case *k, Rng *r, int rows, int cols, float scale)
{
    float *p = malloc(sizeof(float) * (size_t)rows * (size_t)cols); /* (rows, cols) */
    assert_non_null(p);
    for (int i = 0; i < rows * cols; i++) p[i] = scale * rng_unit(r);
    assert_true(k->nbuf < 16);
    k->buf[k->nbuf++] = p;
    return p;
}

/* Names a random case in g_ctx, so that a failure says which one. */
static void case_describe(const Case *k, const char *label, int n)
{
    const AttnConfig *c = &k->c;
    if (c->attention == ATTN_ADDITIVE)
        snprintf(g_ctx, sizeof g_ctx, "%s case %d (additive %s, n_q %d n_k %d d_x %d d_y %d d_a %d, mask %s, fill %g)",
                 label, n, c->cross ? "cross" : "self", c->n_q, c->n_k, c->d_x, c->d_y, c->d_a,
                 attn_mask_kind_name(c->mask_kind), (double)c->mask_fill);
    else
        snprintf(
            g_ctx, sizeof g_ctx,
            "%s case %d (%s, n_q %d n_k %d d_model %d heads %d kv_heads %d d_k %d d_v %d, %s, mask %s, fill %g%s%s%s)",
            label, n, c->cross ? "cross" : "self", c->n_q, c->n_k, c->d_model, c->heads, c->kv_heads, c->d_k, c->d_v,
            attn_scale_kind_name(c->scale_kind), attn_mask_kind_name(c->mask_kind), (double)c->mask_fill,
            c->W_O ? ", W_O" : "", c->decode ? ", decoding" : "", c->rope_base != 0 ? ", RoPE" : "");
}

static void case_free(Case *k)
{
    for (int i = 0; i < k->nbuf; i++) free(k->buf[i]);
    k->nbuf = 0;
}

/* A random config; allow_cross 0 makes it self-attention. */
static void case_random(Case *k, Rng *r, int additive, int allow_cross)
{
    memset(k, 0, sizeof *k);
    AttnConfig *c = &k->c;
    attn_config_init(c);
    c->cross = allow_cross ? rng_int(r, 0, 1) : 0;
    c->n_q = rng_int(r, 1, 7);
    c->n_k = c->cross ? rng_int(r, 1, 7) : c->n_q;
    static const float fills[] = {-INFINITY, -INFINITY, -1e9f, -1e20f};
    c->mask_fill = fills[rng_int(r, 0, 3)];
    c->mask_kind = (AttnMaskKind)rng_int(r, 0, 3);
    if (c->mask_kind == ATTN_MASK_PADDING)
        for (int j = 0; j < c->n_k; j++) k->mask[j] = rng_int(r, 0, 3) != 0;
    if (c->mask_kind == ATTN_MASK_MATRIX)
        for (int i = 0; i < c->n_q * c->n_k; i++) k->mask[i] = rng_int(r, 0, 2) != 0;
    c->mask = k->mask;
    if (additive) {
        c->attention = ATTN_ADDITIVE;
        c->d_x = rng_int(r, 1, 6);
        c->d_y = c->cross ? rng_int(r, 1, 6) : c->d_x;
        c->d_a = rng_int(r, 1, 6);
        c->X = case_floats(k, r, c->n_q, c->d_x, 2);
        if (c->cross) c->Y = case_floats(k, r, c->n_k, c->d_y, 2);
        c->W_a = case_floats(k, r, c->d_x + c->d_y, c->d_a, 1);
        if (rng_int(r, 0, 1)) c->b_a = case_floats(k, r, 1, c->d_a, 1);
        c->v_a = case_floats(k, r, c->d_a, 1, 1);
        return;
    }
    c->heads = rng_int(r, 1, 4);
    c->d_model = rng_int(r, 1, 8);
    c->d_k = rng_int(r, 1, 5);
    c->d_v = rng_int(r, 1, 5);
    c->scale_kind = (AttnScaleKind)rng_int(r, 0, 3);
    c->scale_value = 0.5f + 3.0f * (rng_unit(r) + 1.0f);
    int H = c->heads;
    c->X = case_floats(k, r, c->n_q, c->d_model, 2);
    if (c->cross) c->Y = case_floats(k, r, c->n_k, c->d_model, 2);
    c->W_Q = case_floats(k, r, c->d_model, H * c->d_k, 1);
    c->W_K = case_floats(k, r, c->d_model, H * c->d_k, 1);
    c->W_V = case_floats(k, r, c->d_model, H * c->d_v, 1);
    if (rng_int(r, 0, 1)) c->b_Q = case_floats(k, r, 1, H * c->d_k, 1);
    if (rng_int(r, 0, 1)) c->b_K = case_floats(k, r, 1, H * c->d_k, 1);
    if (rng_int(r, 0, 1)) c->b_V = case_floats(k, r, 1, H * c->d_v, 1);
    if (rng_int(r, 0, 1)) {
        c->W_O = case_floats(k, r, H * c->d_v, c->d_model, 1);
        if (rng_int(r, 0, 1)) c->b_O = case_floats(k, r, 1, c->d_model, 1);
    }
}

/* The options of today's models on a random dot config, where they apply
 * (drawn after case_random's, so its cases stay those of its seed). */
static void case_options(Case *k, Rng *r)
{
    AttnConfig *c = &k->c;
    if (!c->cross && c->mask_kind == ATTN_MASK_CAUSAL && rng_int(r, 0, 1)) c->decode = ATTN_DECODE_INCREMENTAL;
    /* grouped K/V heads: a divisor of heads, half of the time (W_K, W_V, b_K and b_V were drawn for
     * heads, so they hold enough numbers for fewer) */
    if (c->heads > 1 && rng_int(r, 0, 1)) {
        int divisors[4], n = 0;
        for (int g = 1; g <= c->heads; g++)
            if (c->heads % g == 0) divisors[n++] = g;
        c->kv_heads = divisors[rng_int(r, 0, n - 1)];
    }
    /* RoPE on self-attention with an even d_k, a third of the time, with a base from 2 to 10000 */
    static const float bases[] = {2.0f, 100.0f, 10000.0f};
    if (!c->cross && c->d_k % 2 == 0 && rng_int(r, 0, 2) == 0) c->rope_base = bases[rng_int(r, 0, 2)];
    /* the sinusoidal positional encoding on self-attention, a third of the time */
    if (!c->cross && rng_int(r, 0, 2) == 0) c->positional = ATTN_POSITIONAL_SINUSOIDAL;
    /* the tiled softmax, a third of the time, in blocks of 1 to n_k + 1 keys */
    if (rng_int(r, 0, 2) == 0) c->tile = rng_int(r, 1, c->n_k + 1);
}

/* Grouped-query attention is ordinary multi-head attention whose K/V head g
 * is repeated for each query head of its group (torch's repeat_interleave):
 * W_K's, W_V's, b_K's and b_V's blocks of columns repeated H/G times. */
static void check_gqa_as_repeated(const AttnTrace *t, const AttnConfig *c)
{
    int H = c->heads, G = c->kv_heads, dm = c->d_model, dk = c->d_k, dv = c->d_v;
    float *wk = malloc(sizeof(float) * (size_t)dm * H * dk), *wv = malloc(sizeof(float) * (size_t)dm * H * dv);
    float *bk = malloc(sizeof(float) * (size_t)H * dk), *bv = malloc(sizeof(float) * (size_t)H * dv);
    assert_true(wk && wv && bk && bv);
    for (int h = 0; h < H; h++) {
        int g = h * G / H;
        for (int p = 0; p < dm; p++) {
            memcpy(wk + (size_t)p * H * dk + (size_t)h * dk, c->W_K + (size_t)p * G * dk + (size_t)g * dk,
                   sizeof(float) * (size_t)dk);
            memcpy(wv + (size_t)p * H * dv + (size_t)h * dv, c->W_V + (size_t)p * G * dv + (size_t)g * dv,
                   sizeof(float) * (size_t)dv);
        }
        if (c->b_K) memcpy(bk + (size_t)h * dk, c->b_K + (size_t)g * dk, sizeof(float) * (size_t)dk);
        if (c->b_V) memcpy(bv + (size_t)h * dv, c->b_V + (size_t)g * dv, sizeof(float) * (size_t)dv);
    }
    AttnConfig x = *c;
    x.kv_heads = 0;
    x.W_K = wk, x.W_V = wv;
    x.b_K = c->b_K ? bk : NULL, x.b_V = c->b_V ? bv : NULL;
    char err[256], what[320];
    AttnTrace *tx = attn_trace_create(&x, err, sizeof err);
    if (!tx) fail_msg("%s with K/V heads repeated: %s", g_ctx, err);
    /* every query head's steps, the concat and the output (K_h and V_h are numbered differently) */
    for (int i = 0; i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i];
        if (s->role == ATTN_ROLE_K || s->role == ATTN_ROLE_V || s->role == ATTN_ROLE_K_CACHE ||
            s->role == ATTN_ROLE_V_CACHE || s->role == ATTN_ROLE_K_ROT || s->role == ATTN_ROLE_W_K ||
            s->role == ATTN_ROLE_W_V || s->role == ATTN_ROLE_B_K || s->role == ATTN_ROLE_B_V)
            continue;
        const AttnStep *y = attn_trace_find_name(tx, s->name);
        if (!y || y->rows != s->rows || y->cols != s->cols)
            fail_msg("%s: no step %s of the same shape", g_ctx, s->name);
        snprintf(what, sizeof what, "%s: %s against K/V heads repeated", g_ctx, s->name);
        assert_floats_close(what, s->data, y->data, s->rows, s->cols, TEST_ABS_TOL, TEST_REL_TOL);
    }
    /* and each query head's keys are its K/V head's */
    for (int h = 1; h <= H; h++) {
        const AttnStep *k = attn_trace_find_role(t, ATTN_ROLE_K, attn_kv_head(c, h));
        const AttnStep *kx = attn_trace_find_role(tx, ATTN_ROLE_K, h);
        snprintf(what, sizeof what, "%s: K_%d against head %d's repeated keys", g_ctx, attn_kv_head(c, h), h);
        assert_floats_close(what, k->data, kx->data, k->rows, k->cols, TEST_ABS_TOL, TEST_REL_TOL);
    }
    attn_trace_destroy(tx);
    free(wk), free(wv), free(bk), free(bv);
}

/* What the options promise: decoding's rows are the whole forward's, and
 * its last caches hold every token's keys and values. */
static void check_options(const AttnTrace *t, const AttnConfig *c)
{
    char what[256];
    if (c->decode == ATTN_DECODE_INCREMENTAL) {
        const AttnStep *d = attn_trace_find_role(t, ATTN_ROLE_DECODED, 0);
        const AttnStep *o = attn_trace_find_role(t, c->W_O ? ATTN_ROLE_OUTPUT : ATTN_ROLE_CONCAT, 0);
        snprintf(what, sizeof what, "%s: decoded against the whole forward", g_ctx);
        assert_floats_close(what, d->data, o->data, d->rows, d->cols, TEST_ABS_TOL, TEST_REL_TOL);
        for (int h = 1; h <= (c->kv_heads ? c->kv_heads : c->heads); h++) {
            const AttnStep *kc = attn_trace_find_at(t, ATTN_ROLE_K_CACHE, h, c->n_q);
            const AttnStep *vc = attn_trace_find_at(t, ATTN_ROLE_V_CACHE, h, c->n_q);
            /* with RoPE the cache holds the keys turned by their positions, as K_rot does */
            snprintf(what, sizeof what, "%s: the last K cache of head %d against K%s_%d", g_ctx, h,
                     c->rope_base != 0 ? "_rot" : "", h);
            const AttnStep *keys = attn_trace_find_role(t, c->rope_base != 0 ? ATTN_ROLE_K_ROT : ATTN_ROLE_K, h);
            assert_floats_close(what, kc->data, keys->data, kc->rows, kc->cols, TEST_ABS_TOL, TEST_REL_TOL);
            snprintf(what, sizeof what, "%s: the last V cache of head %d against V_%d", g_ctx, h, h);
            assert_floats_close(what, vc->data, attn_trace_find_role(t, ATTN_ROLE_V, h)->data, vc->rows, vc->cols,
                                TEST_ABS_TOL, TEST_REL_TOL);
        }
    }
    if (c->kv_heads > 0) check_gqa_as_repeated(t, c);
    /* the tiled softmax gives each head's output again, to within float rounding of a few sums; a row
     * whose keys are all blocked is zero in both */
    for (int h = 1; c->tile > 0 && h <= c->heads; h++) {
        char name[24];
        snprintf(name, sizeof name, "tiled_%d", h);
        const AttnStep *tiled = attn_trace_find_name(t, name);
        snprintf(name, sizeof name, "head_%d", h);
        const AttnStep *plain = attn_trace_find_name(t, name);
        snprintf(what, sizeof what, "%s: %s tiled in blocks of %d against untiled", g_ctx, name, c->tile);
        assert_floats_close(what, tiled->data, plain->data, plain->rows, plain->cols, 1e-6, 1e-5);
        /* after the last block, m is each row's largest logit and l the sum of e^(s − m) of the softmax */
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = attn_trace_find_name(t, name), *pre = &t->steps[w->from[0]];
        int blocks = (c->n_k + c->tile - 1) / c->tile;
        snprintf(name, sizeof name, "m_%d@%d", h, blocks);
        const AttnStep *m = attn_trace_find_name(t, name);
        snprintf(name, sizeof name, "l_%d@%d", h, blocks);
        const AttnStep *l = attn_trace_find_name(t, name);
        assert_true(m && l);
        for (int i = 0; i < c->n_q; i++) {
            float mx = -INFINITY;
            for (int j = 0; j < c->n_k; j++) mx = fmaxf(mx, pre->data[(size_t)i * c->n_k + j]);
            if (m->data[i] != mx)
                fail_msg("%s: %s[%d] is %.9g, the row's largest logit %.9g", g_ctx, m->name, i, (double)m->data[i],
                         (double)mx);
            double sum = 0;
            for (int j = 0; mx != -INFINITY && j < c->n_k; j++)
                sum += exp((double)pre->data[(size_t)i * c->n_k + j] - mx);
            if (fabs(l->data[i] - sum) > 1e-6 + 1e-5 * sum)
                fail_msg("%s: %s[%d] is %.9g, Σ e^(s − m) is %.9g", g_ctx, l->name, i, (double)l->data[i], sum);
        }
    }
    /* RoPE turns each pair and so keeps each pair's length: a rotated row is as long as its source's */
    for (int i = 0; c->rope_base != 0 && i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i];
        if (s->kind != ATTN_STEP_ROPE) continue;
        const AttnStep *src = &t->steps[s->from[0]];
        for (int r = 0; r < s->rows; r++)
            for (int p = 0; p < s->cols / 2; p++) {
                const float *a = s->data + (size_t)r * s->cols + 2 * p, *b = src->data + (size_t)r * s->cols + 2 * p;
                double la = hypot(a[0], a[1]), lb = hypot(b[0], b[1]);
                if (fabs(la - lb) > TEST_ABS_TOL + TEST_REL_TOL * lb)
                    fail_msg("%s: %s[%d] pair %d has length %.9g, %s's %.9g", g_ctx, s->name, r, p, la, src->name, lb);
            }
    }
}

/* The sinusoidal positional encoding, from its definition: column 2i of
 * row p is sin(p·ω_i) and column 2i + 1 cos(p·ω_i), ω_i = 10000^(−2i/d); so
 * each pair of position p + k is the pair of position p turned by k·ω_i,
 * the same linear map at every p (why "Attention Is All You Need" chose it);
 * X_PE is X + PE, and Q is projected from it. An odd d ends with a sine. */
static void test_positional_encoding(void **state)
{
    (void)state;
    enum { N = 9, D = 5 };
    float X[N * D], W[D * 2];
    for (int i = 0; i < N * D; i++) X[i] = 0.1f * (float)(i % 7) - 0.3f;
    for (int i = 0; i < D * 2; i++) W[i] = 0.2f * (float)(i % 3) - 0.2f;
    AttnConfig c;
    attn_config_init(&c);
    c.n_q = c.n_k = N;
    c.d_model = D;
    c.d_k = c.d_v = 2;
    c.X = X, c.W_Q = W, c.W_K = W, c.W_V = W;
    c.positional = ATTN_POSITIONAL_SINUSOIDAL;
    char err[256];
    for (int path = 0; path < 2; path++) {
        AttnTrace *t = path ? attn_reference_forward(&c, err, sizeof err) : attn_trace_create(&c, err, sizeof err);
        if (!t) fail_msg("%s", err);
        const AttnStep *pe = attn_trace_find_name(t, "PE"), *xp = attn_trace_find_name(t, "X_PE");
        const AttnStep *q = attn_trace_find_name(t, "Q");
        assert_true(pe && xp && q);
        assert_int_equal(pe->rows, N);
        assert_int_equal(pe->cols, D);
        /* row 0 is (0, 1, 0, 1, 0); row 1 begins sin 1, cos 1; column 4 (2i = 4) is sin(p / 10000^(4/5)) */
        for (int col = 0; col < D; col++) assert_float_equal(pe->data[col], (col % 2 ? 1.0f : 0.0f), 0);
        assert_float_equal(pe->data[D], (float)sin(1.0), 1e-7);
        assert_float_equal(pe->data[D + 1], (float)cos(1.0), 1e-7);
        assert_float_equal(pe->data[7 * D + 4], (float)sin(7.0 / pow(10000.0, 0.8)), 1e-7);
        /* a shift by k turns each pair by k·ω_i, whatever p */
        for (int i = 0; 2 * i + 1 < D; i++) {
            double w = pow(10000.0, -2.0 * i / D);
            for (int p = 0; p < N; p++)
                for (int k = 0; p + k < N; k++) {
                    double s0 = pe->data[p * D + 2 * i], c0 = pe->data[p * D + 2 * i + 1];
                    double s1 = s0 * cos(k * w) + c0 * sin(k * w), c1 = c0 * cos(k * w) - s0 * sin(k * w);
                    if (fabs(s1 - pe->data[(p + k) * D + 2 * i]) > 1e-6 ||
                        fabs(c1 - pe->data[(p + k) * D + 2 * i + 1]) > 1e-6)
                        fail_msg("%s: PE row %d pair %d is not row %d's turned by %d·ω", path ? "reference" : "engine",
                                 p + k, i, p, k);
                }
        }
        for (int e = 0; e < N * D; e++) assert_float_equal(xp->data[e], X[e] + pe->data[e], 0);
        /* Q = (X + PE) · W_Q */
        for (int r = 0; r < N; r++)
            for (int j = 0; j < 2; j++) {
                double sum = 0;
                for (int k = 0; k < D; k++) sum += (double)xp->data[r * D + k] * W[k * 2 + j];
                assert_float_equal(q->data[r * 2 + j], (float)sum, 1e-6);
            }
        attn_trace_destroy(t);
    }
}

/* RoPE, from its definition: the angle of position p and pair i is
 * p·base^(−2i/d_k), and with every token the same vector the scores depend
 * only on the distance j − i between query and key, which they do not
 * without RoPE. A rotation by the wrong angle, in the wrong direction for
 * the query or the key, or of the wrong position breaks one of these. */
static void test_rope_relative_position(void **state)
{
    (void)state;
    enum { N = 6, D = 4 };
    float X[N * D], W[D * D] = {0};
    for (int i = 0; i < N; i++)
        for (int d = 0; d < D; d++) X[i * D + d] = (float)d - 1.5f; /* every token the same */
    for (int d = 0; d < D; d++) W[d * D + d] = 1.0f;                /* Q = K = V = X */
    AttnConfig c;
    attn_config_init(&c);
    c.n_q = c.n_k = N;
    c.d_model = c.d_k = c.d_v = D;
    c.X = X, c.W_Q = W, c.W_K = W, c.W_V = W;
    c.rope_base = 10000.0f;
    char err[256];
    for (int path = 0; path < 2; path++) {
        AttnTrace *t = path ? attn_reference_forward(&c, err, sizeof err) : attn_trace_create(&c, err, sizeof err);
        if (!t) fail_msg("%s", err);
        const AttnStep *a = attn_trace_find_name(t, "angles"), *s = attn_trace_find_name(t, "scores_1");
        assert_non_null(a);
        assert_int_equal(a->rows, N);
        assert_int_equal(a->cols, D / 2);
        /* θ_0 = 10000^0 = 1, θ_1 = 10000^(−2/4) = 0.01: position p turns pair 0 by p radians, pair 1 by p/100 */
        for (int p = 0; p < N; p++) {
            assert_float_equal(a->data[p * 2], (float)p, 1e-6);
            assert_float_equal(a->data[p * 2 + 1], 0.01f * (float)p, 1e-7);
        }
        /* the worked example: Q_rot_1 row 1, pair 0 is (x0·cos 1 − x1·sin 1, x0·sin 1 + x1·cos 1) */
        const AttnStep *q = attn_trace_find_name(t, "Q_rot_1");
        double x0 = X[D], x1 = X[D + 1];
        assert_float_equal(q->data[D], (float)(x0 * cos(1.0) - x1 * sin(1.0)), 1e-6);
        assert_float_equal(q->data[D + 1], (float)(x0 * sin(1.0) + x1 * cos(1.0)), 1e-6);
        double spread = 0;
        for (int i = 0; i + 1 < N; i++)
            for (int j = 0; j + 1 < N; j++) {
                float here = s->data[i * N + j], shifted = s->data[(i + 1) * N + j + 1];
                if (fabsf(here - shifted) > 1e-5f + 1e-5f * fabsf(here))
                    fail_msg("%s: scores_1[%d][%d] = %.9g but scores_1[%d][%d] = %.9g: the same distance %d",
                             path ? "reference" : "engine", i, j, (double)here, i + 1, j + 1, (double)shifted, j - i);
                spread = fmax(spread, fabs((double)s->data[i * N + j] - (double)s->data[0]));
            }
        assert_true(spread > 0.5); /* the distance matters: without RoPE every score would be the same */
        attn_trace_destroy(t);
    }
}

/* Every softmax row sums to 1 or, fully blocked under -inf, is all zero;
 * blocked weights are exactly 0. */
static void check_softmax_rows(const AttnTrace *t, const AttnConfig *c)
{
    for (int s = 0; s < t->n_steps; s++) {
        const AttnStep *w = &t->steps[s];
        if (w->kind != ATTN_STEP_SOFTMAX) continue;
        for (int i = 0; i < w->rows; i++) {
            const float *r = w->data + (size_t)i * w->cols;
            int dead = row_dead_at(c, w, i);
            if (dead && c->mask_fill == -INFINITY) {
                for (int j = 0; j < w->cols; j++)
                    if (r[j] != 0.0f)
                        fail_msg("%s: %s row %d is fully blocked, weight %d = %.9g", g_ctx, w->name, i, j,
                                 (double)r[j]);
                assert_true(w->row_flags[i] & ATTN_ROW_ALL_BLOCKED);
                continue;
            }
            double sum = 0;
            for (int j = 0; j < w->cols; j++) {
                if (!(r[j] >= 0.0f && r[j] <= 1.0f))
                    fail_msg("%s: %s[%d,%d] = %.9g is not a weight", g_ctx, w->name, i, j, (double)r[j]);
                if (!dead && !allow_step(c, w, i, j) && r[j] != 0.0f)
                    fail_msg("%s: %s[%d,%d]: blocked weight %.9g, expected exactly 0", g_ctx, w->name, i, j,
                             (double)r[j]);
                sum += r[j];
            }
            if (fabs(sum - 1.0) > 1e-5) fail_msg("%s: %s row %d sums to %.9g", g_ctx, w->name, i, sum);
        }
    }
}

/* Compares every step of b with the step of the same name in a. */
static void assert_steps_close(const char *what, const AttnTrace *a, const AttnTrace *b)
{
    for (int i = 0; i < b->n_steps; i++) {
        const AttnStep *y = &b->steps[i];
        const AttnStep *x = attn_trace_find_name(a, y->name);
        if (!x) fail_msg("%s: step %s missing", what, y->name);
        assert_int_equal(x->rows, y->rows);
        assert_int_equal(x->cols, y->cols);
        char name[256];
        snprintf(name, sizeof name, "%s %s", what, y->name);
        assert_floats_close(name, y->data, x->data, y->rows, y->cols, TEST_ABS_TOL, TEST_REL_TOL);
    }
}

enum { N_RANDOM = 300 };

static void test_random_dot_invariants(void **state)
{
    (void)state;
    Rng r = {20261121};
    char err[256];
    for (int n = 0; n < N_RANDOM; n++) {
        Case k;
        case_random(&k, &r, 0, 1);
        case_options(&k, &r);
        case_describe(&k, "dot", n);
        AttnConfig *c = &k.c;
        AttnTrace *t = attn_trace_create(c, err, sizeof err);
        if (!t) fail_msg("case %d: %s", n, err);
        check_structure(t, c);
        check_softmax_rows(t, c);
        check_options(t, c);

        /* every step equals the reference's (reference.c) ... */
        assert_trace_matches_reference(g_ctx, t, c, TEST_ABS_TOL, TEST_REL_TOL);
        /* ... and as the engine's own one-head run on that head's columns */
        if (c->heads > 1) {
            int h = rng_int(&r, 1, c->heads), H = c->heads, dm = c->d_model, dk = c->d_k, dv = c->d_v;
            int G = c->kv_heads ? c->kv_heads : H, g = (h - 1) * G / H + 1; /* the K/V head h reads */
            Case one = k;
            one.nbuf = 0;
            AttnConfig *o = &one.c;
            o->heads = 1;
            o->mask = one.mask;
            float *wq = case_floats(&one, &r, dm, dk, 0), *wk = case_floats(&one, &r, dm, dk, 0);
            float *wv = case_floats(&one, &r, dm, dv, 0);
            for (int p = 0; p < dm; p++) {
                memcpy(wq + (size_t)p * dk, c->W_Q + (size_t)p * H * dk + (size_t)(h - 1) * dk, sizeof(float) * dk);
                memcpy(wk + (size_t)p * dk, c->W_K + (size_t)p * G * dk + (size_t)(g - 1) * dk, sizeof(float) * dk);
                memcpy(wv + (size_t)p * dv, c->W_V + (size_t)p * G * dv + (size_t)(g - 1) * dv, sizeof(float) * dv);
            }
            o->W_Q = wq;
            o->W_K = wk;
            o->W_V = wv;
            o->b_Q = c->b_Q ? c->b_Q + (size_t)(h - 1) * dk : NULL;
            o->kv_heads = 0;
            o->b_K = c->b_K ? c->b_K + (size_t)(g - 1) * dk : NULL;
            o->b_V = c->b_V ? c->b_V + (size_t)(g - 1) * dv : NULL;
            o->W_O = o->b_O = NULL;
            AttnTrace *t1 = attn_trace_create(o, err, sizeof err);
            if (!t1) fail_msg("case %d one head: %s", n, err);
            char name[32];
            snprintf(name, sizeof name, "head_%d", h);
            char what[256];
            snprintf(what, sizeof what, "%s: one-head run on head %d's columns", g_ctx, h);
            assert_floats_close(what, attn_trace_find_name(t1, "head_1")->data, attn_trace_find_name(t, name)->data,
                                c->n_q, dv, TEST_ABS_TOL, TEST_REL_TOL);
            attn_trace_destroy(t1);
            case_free(&one);
        }
        /* self-attention equals cross-attention with Y = X (which does not decode) */
        if (!c->cross && c->decode == ATTN_DECODE_FULL && c->rope_base == 0 && c->positional == ATTN_POSITIONAL_NONE) {
            AttnConfig x = *c;
            x.cross = 1;
            x.Y = c->X;
            AttnTrace *tx = attn_trace_create(&x, err, sizeof err);
            if (!tx) fail_msg("case %d as cross: %s", n, err);
            char what[256];
            snprintf(what, sizeof what, "%s: self vs cross with Y = X:", g_ctx);
            assert_steps_close(what, tx, t);
            assert_non_null(attn_trace_find_name(tx, "Y"));
            attn_trace_destroy(tx);
        }
        /* threads give bitwise the same trace */
        AttnConfig th = *c;
        th.threads = rng_int(&r, 2, 5);
        AttnTrace *t2 = attn_trace_create(&th, err, sizeof err);
        if (!t2) fail_msg("case %d threads: %s", n, err);
        assert_traces_identical(g_ctx, t, t2);
        attn_trace_destroy(t2);
        attn_trace_destroy(t);
        case_free(&k);
    }
}

/* Many heads: the plan's per-head arrays and its step list outgrow their
 * room on the stack (16 heads, 128 steps, 512 links) and move to the heap.
 * The trace is still the expected one, the reference's, and the same on
 * three threads. */
static void test_many_heads(void **state)
{
    (void)state;
    static const int heads[] = {15, 16, 17, 60, 300, 1024}; /* 1024: the most, four digits in every name */
    Rng r = {31337};
    char err[256];
    for (size_t n = 0; n < sizeof heads / sizeof heads[0]; n++) {
        Case k;
        k.nbuf = 0;
        AttnConfig *c = &k.c;
        attn_config_init(c);
        c->heads = heads[n];
        c->n_q = c->n_k = 3;
        c->d_k = c->d_v = 2;
        c->d_model = 4;
        c->mask_kind = ATTN_MASK_CAUSAL;
        c->X = case_floats(&k, &r, c->n_q, c->d_model, 1);
        c->W_Q = case_floats(&k, &r, c->d_model, c->heads * c->d_k, 1);
        c->W_K = case_floats(&k, &r, c->d_model, c->heads * c->d_k, 1);
        c->W_V = case_floats(&k, &r, c->d_model, c->heads * c->d_v, 1);
        c->b_Q = case_floats(&k, &r, 1, c->heads * c->d_k, 1);
        c->W_O = case_floats(&k, &r, c->heads * c->d_v, c->d_model, 1);
        case_describe(&k, "many heads", (int)n);
        AttnTrace *t = attn_trace_create(c, err, sizeof err);
        if (!t) fail_msg("%s: %s", g_ctx, err);
        check_structure(t, c);
        check_softmax_rows(t, c);
        assert_trace_matches_reference(g_ctx, t, c, TEST_ABS_TOL, TEST_REL_TOL);
        AttnConfig th = *c;
        th.threads = 3;
        AttnTrace *t3 = attn_trace_create(&th, err, sizeof err);
        if (!t3) fail_msg("%s, 3 threads: %s", g_ctx, err);
        assert_traces_identical(g_ctx, t, t3);
        attn_trace_destroy(t3);
        attn_trace_destroy(t);
        case_free(&k);
    }
}

/* Permuting the tokens of self-attention without a mask permutes the output
 * rows and both axes of the weights. */
static void test_random_permutation(void **state)
{
    (void)state;
    Rng r = {777};
    char err[256];
    for (int n = 0; n < 100; n++) {
        Case k;
        case_random(&k, &r, n % 4 == 3, 0);
        AttnConfig *c = &k.c;
        c->mask_kind = ATTN_MASK_NONE;
        case_describe(&k, "permutation", n);
        int nq = c->n_q, dx = c->attention == ATTN_ADDITIVE ? c->d_x : c->d_model;
        int perm[8];
        for (int i = 0; i < nq; i++) perm[i] = i;
        for (int i = nq - 1; i > 0; i--) { /* Fisher–Yates */
            int j = rng_int(&r, 0, i), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        float *Xp = case_floats(&k, &r, nq, dx, 0); /* (n_q, d) X with rows permuted */
        for (int i = 0; i < nq; i++) memcpy(Xp + (size_t)i * dx, c->X + (size_t)perm[i] * dx, sizeof(float) * dx);
        AttnTrace *t = attn_trace_create(c, err, sizeof err);
        if (!t) fail_msg("case %d: %s", n, err);
        AttnConfig pc = *c;
        pc.X = Xp;
        AttnTrace *tp = attn_trace_create(&pc, err, sizeof err);
        if (!tp) fail_msg("case %d permuted: %s", n, err);
        assert_trace_matches_reference(g_ctx, t, c, TEST_ABS_TOL, TEST_REL_TOL);
        assert_trace_matches_reference(g_ctx, tp, &pc, TEST_ABS_TOL, TEST_REL_TOL);
        for (int s = 0; s < t->n_steps; s++) {
            const AttnStep *a = &t->steps[s], *b = &tp->steps[s];
            int out = a->kind == ATTN_STEP_OUTPUT || a->kind == ATTN_STEP_CONCAT || a->kind == ATTN_STEP_WEIGHTED_SUM;
            int sq = a->kind == ATTN_STEP_SOFTMAX;
            if (!out && !sq) continue;
            float *want = malloc(sizeof(float) * (size_t)a->rows * a->cols); /* (rows, cols) */
            assert_non_null(want);
            for (int i = 0; i < a->rows; i++)
                for (int j = 0; j < a->cols; j++)
                    want[(size_t)i * a->cols + j] = a->data[(size_t)perm[i] * a->cols + (sq ? perm[j] : j)];
            char name[256];
            snprintf(name, sizeof name, "%s: permuted %s", g_ctx, a->name);
            assert_floats_close(name, b->data, want, a->rows, a->cols, TEST_ABS_TOL, TEST_REL_TOL);
            free(want);
        }
        attn_trace_destroy(tp);
        attn_trace_destroy(t);
        case_free(&k);
    }
}

static void test_random_additive_invariants(void **state)
{
    (void)state;
    Rng r = {4242};
    char err[256];
    for (int n = 0; n < N_RANDOM; n++) {
        Case k;
        case_random(&k, &r, 1, 1);
        case_describe(&k, "additive", n);
        AttnConfig *c = &k.c;
        AttnTrace *t = attn_trace_create(c, err, sizeof err);
        if (!t) fail_msg("case %d: %s", n, err);
        check_structure(t, c);
        check_softmax_rows(t, c);
        assert_trace_matches_reference(g_ctx, t, c, TEST_ABS_TOL, TEST_REL_TOL);
        char what[256];
        if (!c->cross) {
            AttnConfig x = *c;
            x.cross = 1;
            x.Y = c->X;
            x.d_y = c->d_x;
            AttnTrace *tx = attn_trace_create(&x, err, sizeof err);
            if (!tx) fail_msg("case %d as cross: %s", n, err);
            snprintf(what, sizeof what, "%s: self vs cross with Y = X:", g_ctx);
            assert_steps_close(what, tx, t);
            attn_trace_destroy(tx);
        }
        attn_trace_destroy(t);
        case_free(&k);
    }
}

/* Seed 001: with seq_len = 1 and d_model = 512, 8 heads of 64, each head's
 * scores are 1 × 1, softmax gives exactly 1, so each head's output is its V_h
 * and the concat is V itself, bit for bit. */
static void test_seed001_single_token(void **state)
{
    (void)state;
    Rng r = {1001};
    Case k;
    memset(&k, 0, sizeof k);
    AttnConfig *c = &k.c;
    attn_config_init(c);
    c->n_q = c->n_k = 1;
    c->d_model = 512;
    c->heads = 8;
    c->d_k = c->d_v = 64;
    c->X = case_floats(&k, &r, 1, 512, 1);
    c->W_Q = case_floats(&k, &r, 512, 512, 0.05f);
    c->W_K = case_floats(&k, &r, 512, 512, 0.05f);
    c->W_V = case_floats(&k, &r, 512, 512, 0.05f);
    c->b_V = case_floats(&k, &r, 1, 512, 0.05f);
    c->W_O = case_floats(&k, &r, 512, 512, 0.05f);
    char err[256];
    AttnTrace *t = attn_trace_create(c, err, sizeof err);
    if (!t) fail_msg("%s", err);
    snprintf(g_ctx, sizeof g_ctx, "seed 001 seq_len = 1");
    check_structure(t, c);
    assert_trace_matches_reference(g_ctx, t, c, TEST_ABS_TOL, TEST_REL_TOL);
    for (int h = 1; h <= 8; h++) {
        const AttnStep *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, h),
                       *o = attn_trace_find(t, ATTN_STEP_WEIGHTED_SUM, h);
        char vname[16];
        snprintf(vname, sizeof vname, "V_%d", h);
        const AttnStep *v = attn_trace_find_name(t, vname);
        assert_non_null(w);
        assert_non_null(o);
        assert_non_null(v);
        assert_int_equal(w->rows * w->cols, 1);
        if (w->data[0] != 1.0f)
            fail_msg("weights_%d = %.9g, softmax of one score must be exactly 1", h, (double)w->data[0]);
        assert_int_equal(o->cols, 64);
        assert_memory_equal(o->data, v->data, sizeof(float) * 64);
    }
    assert_memory_equal(attn_trace_find_name(t, "concat")->data, attn_trace_find_name(t, "V")->data,
                        sizeof(float) * 512);
    attn_trace_destroy(t);
    case_free(&k);
}

/* ---- 4. bookkeeping on seed 001's size ----------------------------------------- */

static void test_trace_memory(void **state)
{
    (void)state;
    Rng r = {512};
    Case k;
    memset(&k, 0, sizeof k);
    AttnConfig *c = &k.c;
    attn_config_init(c);
    c->n_q = c->n_k = 12;
    c->d_model = 512;
    c->heads = 8;
    c->d_k = c->d_v = 64;
    c->mask_kind = ATTN_MASK_CAUSAL;
    c->X = case_floats(&k, &r, 12, 512, 1);
    c->W_Q = case_floats(&k, &r, 512, 512, 0.05f);
    c->W_K = case_floats(&k, &r, 512, 512, 0.05f);
    c->W_V = case_floats(&k, &r, 512, 512, 0.05f);
    c->W_O = case_floats(&k, &r, 512, 512, 0.05f);
    c->b_O = case_floats(&k, &r, 1, 512, 0.05f);
    char err[256];
    AttnTrace *t = attn_trace_create(c, err, sizeof err);
    assert_non_null(t);
    check_structure(t, c); /* data_bytes is the sum of rows·cols·4 */
    printf("  d_model 512, 8 heads, n 12: %d steps, data %zu B, allocation %zu B (%.4f×)\n", t->n_steps, t->data_bytes,
           t->alloc_bytes, (double)t->alloc_bytes / (double)t->data_bytes);
    if ((double)t->alloc_bytes > 1.5 * (double)t->data_bytes)
        fail_msg("alloc_bytes %zu > 1.5 × data_bytes %zu", t->alloc_bytes, t->data_bytes);
    attn_trace_destroy(t);
    case_free(&k);
}

/* ---- 5. a trace computed on another thread, published phase by phase ------ */

/* A causal lesson of 96 tokens and 3 heads (its trace far above the size
 * that is published phase by phase), in k. */
static void phased_case(Case *k, float scale)
{
    Rng r = {96};
    memset(k, 0, sizeof *k);
    AttnConfig *c = &k->c;
    attn_config_init(c);
    c->n_q = c->n_k = 96;
    c->d_model = 24;
    c->heads = 3;
    c->d_k = c->d_v = 8;
    c->mask_kind = ATTN_MASK_CAUSAL;
    c->X = case_floats(k, &r, 96, 24, scale);
    c->W_Q = case_floats(k, &r, 24, 24, 0.3f);
    c->W_K = case_floats(k, &r, 24, 24, 0.3f);
    c->W_V = case_floats(k, &r, 24, 24, 0.3f);
    c->W_O = case_floats(k, &r, 24, 24, 0.3f);
    c->threads = 2;
}

typedef struct Worker {
    AttnTrace *t;
    const AttnConfig *c;
    int rc, err_no;
    char err[256];
} Worker;

static void *worker_run(void *arg)
{
    Worker *w = arg;
    w->rc = attn_trace_compute(w->t, w->c, w->err, sizeof w->err);
    w->err_no = errno;
    return NULL;
}

/* While a worker computes, every step this thread sees published holds
 * the numbers of attn_trace_create's trace, bit for bit (ThreadSanitizer,
 * in CI, sees these reads against the worker's writes); the count never
 * goes back; at the end the whole trace is the same. */
static void test_published_steps(void **state)
{
    (void)state;
    Case k;
    phased_case(&k, 1.0f);
    char err[256];
    AttnTrace *whole = attn_trace_create(&k.c, err, sizeof err);
    assert_non_null(whole);
    assert_int_equal(attn_trace_ready(whole), whole->n_steps);
    AttnTrace *t = attn_trace_plan(&k.c, err, sizeof err);
    assert_non_null(t);
    assert_int_equal(attn_trace_ready(t), 0);
    assert_int_equal(t->n_steps, whole->n_steps);
    assert_null(t->cfg.X); /* nothing borrowed is kept */
    Worker w = {t, &k.c, 0, 0, ""};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker_run, &w), 0);
    int seen = 0, checked = 0;
    while (checked < t->n_steps) {
        int ready = attn_trace_ready(t);
        if (ready < seen) fail_msg("ready went back from %d to %d", seen, ready);
        seen = ready;
        for (; checked < ready; checked++) {
            const AttnStep *a = &t->steps[checked], *b = &whole->steps[checked];
            if (memcmp(a->data, b->data, sizeof(float) * (size_t)a->rows * (size_t)a->cols) != 0)
                fail_msg("step %s published with numbers that differ from attn_trace_create's", a->name);
            if (a->row_flags && memcmp(a->row_flags, b->row_flags, (size_t)a->rows) != 0)
                fail_msg("step %s published with row flags that differ", a->name);
        }
        sched_yield();
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(w.rc, 0);
    assert_traces_identical("computed on a worker", t, whole);
    attn_trace_destroy(t);
    attn_trace_destroy(whole);
    case_free(&k);
}

/* A cancel is honoured at the end of the first phase: the inputs and
 * projections are published, no head step is. */
static void test_compute_cancel(void **state)
{
    (void)state;
    Case k;
    phased_case(&k, 1.0f);
    char err[256];
    AttnTrace *t = attn_trace_plan(&k.c, err, sizeof err);
    assert_non_null(t);
    attn_trace_cancel(t);
    errno = 0;
    assert_int_equal(attn_trace_compute(t, &k.c, err, sizeof err), -1);
    assert_int_equal(errno, ECANCELED);
    const AttnStep *q1 = attn_trace_find_name(t, "Q_1");
    assert_non_null(q1);
    assert_int_equal(attn_trace_ready(t), attn_trace_index(t, q1));
    attn_trace_destroy(t);
    case_free(&k);
}

/* An overflow in a head: attn_trace_compute names the cell as
 * attn_trace_create does, and the steps before the head stay published. */
static void test_compute_overflow(void **state)
{
    (void)state;
    Case k;
    phased_case(&k, 1e21f); /* Q and K near 1e21: their products overflow float32 */
    char err1[256], err2[256];
    errno = 0;
    assert_null(attn_trace_create(&k.c, err1, sizeof err1));
    assert_int_equal(errno, ERANGE);
    AttnTrace *t = attn_trace_plan(&k.c, err2, sizeof err2);
    assert_non_null(t);
    errno = 0;
    assert_int_equal(attn_trace_compute(t, &k.c, err2, sizeof err2), -1);
    assert_int_equal(errno, ERANGE);
    assert_string_equal(err1, err2);
    assert_non_null(strstr(err2, "scores_1"));
    assert_int_equal(attn_trace_ready(t), attn_trace_index(t, attn_trace_find_name(t, "Q_1")));
    attn_trace_destroy(t);
    case_free(&k);
}

/* The kind names are the trace format's, in the enum's order, and round-trip;
 * mask names are the trace's "mask" values. */
static void test_names(void **state)
{
    (void)state;
    static const char *const kinds[] = {
        "input",           "weight",      "bias",         "projection",   "split",    "scores",
        "scaled",          "masked",      "softmax",      "weighted_sum", "concat",   "output",
        "additive_hidden", "kv_append",   "decode_check", "rope_angles",  "rope",     "positional_encoding",
        "add_positional",  "tile_scores", "tile_max",     "tile_rescale", "tile_sum", "tile_accumulate",
        "tile_output"};
    assert_int_equal(sizeof kinds / sizeof kinds[0], ATTN_STEP_KIND_COUNT);
    for (int k = 0; k < ATTN_STEP_KIND_COUNT; k++) {
        assert_string_equal(attn_step_kind_name((AttnStepKind)k), kinds[k]);
        assert_int_equal(attn_step_kind_from_name(kinds[k]), k);
    }
    assert_int_equal(attn_step_kind_from_name("Softmax"), -1);
    assert_int_equal(attn_step_kind_from_name(""), -1);
    /* every role has a name of its own, which finds it */
    for (int r = 0; r < ATTN_ROLE_COUNT; r++) {
        assert_true(attn_role_name((AttnRole)r)[0] != '\0');
        assert_int_equal(attn_role_from_name(attn_role_name((AttnRole)r)), r);
    }
    assert_int_equal(attn_role_from_name("weights_1"), -1);
    assert_int_equal(attn_role_from_name("w_q"), -1);
    assert_string_equal(attn_mask_kind_name(ATTN_MASK_NONE), "none");
    assert_string_equal(attn_mask_kind_name(ATTN_MASK_CAUSAL), "causal");
    assert_string_equal(attn_mask_kind_name(ATTN_MASK_PADDING), "padding");
    assert_string_equal(attn_mask_kind_name(ATTN_MASK_MATRIX), "matrix");
    assert_string_equal(attn_scale_kind_name(ATTN_SCALE_SQRT_DK), "sqrt_dk");
    assert_string_equal(attn_scale_kind_name(ATTN_SCALE_SQRT_DMODEL), "sqrt_dmodel");
    assert_string_equal(attn_scale_kind_name(ATTN_SCALE_NONE), "none");
    attn_trace_destroy(NULL); /* does nothing */
}

/* attn_config_check refuses what the engine cannot compute, with a message,
 * before anything is allocated. The pointers are never read by the check. */
static void test_config_errors(void **state)
{
    (void)state;
    static const float one[1] = {1};
    char err[256];
    AttnConfig c;
    attn_config_init(&c);
    c.n_q = c.n_k = 2;
    c.d_model = c.d_k = c.d_v = 1;
    c.X = c.W_Q = c.W_K = c.W_V = one;
    assert_int_equal(attn_config_check(&c, err, sizeof err), 0);

    AttnConfig b = c;
    b.n_k = 3; /* self-attention with n_k ≠ n_q */
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "n_k == n_q"));
    b = c;
    b.W_V = NULL;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "W_V"));
    b = c;
    b.scale_kind = ATTN_SCALE_VALUE;
    b.scale_value = 0;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "scale"));
    b = c;
    b.mask_fill = NAN;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    b = c;
    b.mask_kind = ATTN_MASK_MATRIX; /* without its values */
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_null(attn_trace_create(&b, err, sizeof err));

    /* additive attention's hidden step has n_q·n_k rows, counted in int:
     * 65536·65536 wraps to 0 and must be refused, not laid out */
    attn_config_init(&b);
    b.attention = ATTN_ADDITIVE;
    b.cross = 1;
    b.n_q = b.n_k = 65536;
    b.d_x = b.d_y = b.d_a = 1;
    b.X = b.Y = b.W_a = b.v_a = one;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "n_q·n_k"));
    b.n_k = 32767; /* 65536·32767 < 2^31: the size itself is fine */
    assert_int_equal(attn_config_check(&b, err, sizeof err), 0);

    /* incremental decoding: causal self-attention of dot products, its steps within a trace's */
    b = c;
    b.decode = ATTN_DECODE_INCREMENTAL;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_string_equal(err,
                        "incremental decoding needs the causal mask (a token sees no token after it), got mask 'none'");
    b.mask_kind = ATTN_MASK_CAUSAL;
    assert_int_equal(attn_config_check(&b, err, sizeof err), 0);
    b.cross = 1;
    b.Y = one;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs self-attention"));
    b = c;
    b.decode = ATTN_DECODE_INCREMENTAL;
    b.mask_kind = ATTN_MASK_CAUSAL;
    b.n_q = b.n_k = 6000; /* 17 steps, then 13 a token: 78017 */
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_string_equal(err, "incremental decoding of 6000 tokens with 1 head records 78017 steps, more than a trace "
                             "holds (65535)");
    b.n_q = b.n_k = (65535 - 17) / 13;
    assert_int_equal(attn_config_check(&b, err, sizeof err), 0);
    b.decode = (AttnDecode)2;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);

    /* RoPE: a base > 1, dot self-attention, an even d_k */
    b = c;
    b.d_k = 2;
    b.rope_base = 10000.0f;
    assert_int_equal(attn_config_check(&b, err, sizeof err), 0);
    b.rope_base = 1.0f;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_string_equal(err, "the RoPE base must be 0 (none) or a finite number > 1, got 1");
    b.rope_base = NAN;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    b.rope_base = 10000.0f;
    b.d_k = 3;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_string_equal(err, "RoPE needs an even d_k (it turns pairs of features), got d_k=3");
    b.d_k = 2;
    b.cross = 1;
    b.Y = one;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_string_equal(err, "RoPE needs self-attention (it rotates a query and a key by positions in one sequence)");

    /* the tiled softmax: B ≥ 1 keys a block, its steps within a trace's */
    b = c;
    b.tile = -1;
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_string_equal(err, "tile must be 0 (none) or the keys per block, got -1");
    b.tile = 1;
    assert_int_equal(attn_config_check(&b, err, sizeof err), 0);
    b.n_q = b.n_k = 14000; /* 14000 blocks of one key: 70000 steps and more */
    assert_int_equal(attn_config_check(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "the tiled softmax of 14000 keys in blocks of 1 with 1 head records"));
}

/* ---- main: the fixed tests, then one test per fixture in MANIFEST ---------------- */

static char **read_manifest(int *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/fixtures/MANIFEST", ATTNVIZ_TESTS_DIR);
    FILE *fp = fopen(path, "r");
    if (!fp) return NULL;
    char **names = NULL, line[512];
    *n = 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == 0 || line[0] == '#') continue;
        char **nn = realloc(names, sizeof *names * (size_t)(*n + 1));
        if (!nn) break;
        names = nn;
        names[*n] = strdup(line);
        if (!names[*n]) break;
        (*n)++;
    }
    fclose(fp);
    return names;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_header_errors),
        cmocka_unit_test(test_seed002_worked_example),
        cmocka_unit_test(test_seed001_single_token),
        cmocka_unit_test(test_random_dot_invariants),
        cmocka_unit_test(test_random_permutation),
        cmocka_unit_test(test_random_additive_invariants),
        cmocka_unit_test(test_many_heads),
        cmocka_unit_test(test_trace_memory),
        cmocka_unit_test(test_published_steps),
        cmocka_unit_test(test_compute_cancel),
        cmocka_unit_test(test_compute_overflow),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_rope_relative_position),
        cmocka_unit_test(test_positional_encoding),
    };
    int failed = cmocka_run_group_tests_name("engine", tests, NULL, NULL);

    int n = 0;
    char **names = read_manifest(&n);
    if (!names || n == 0) {
        fprintf(stderr, "%s/fixtures/MANIFEST: missing or empty (run /usr/bin/python3 tests/make_fixtures.py)\n",
                ATTNVIZ_TESTS_DIR);
        return 1;
    }
    struct CMUnitTest *fx = calloc((size_t)n, sizeof *fx);
    if (!fx) return 1;
    for (int i = 0; i < n; i++) {
        fx[i].name = names[i];
        fx[i].test_func = test_fixture;
        fx[i].initial_state = names[i];
    }
    failed += _cmocka_run_group_tests("torch fixtures", fx, (size_t)n, NULL, NULL);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(fx);
    attn_shutdown();
    return failed ? 1 : 0;
}
