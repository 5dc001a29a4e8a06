/* test_lessons.c: every lesson in lessons/ loads, traces, writes each of its
 * texts in both languages, fills every placeholder, and makes a claim that is
 * true of its own trace.
 *
 * Each claim is recomputed here from the trace's inputs (X, Y, W_*) or by
 * re-tracing the lesson with one setting changed (the fill, the scaling), never
 * compared against a copy of what the engine printed. The only literal numbers
 * are the seeds' own: seed 002's q, k, q·kᵀ and ÷√2, and its pitfall
 * matmul(q, k) = [[19,22],[43,50]]. Every trace is also compared, step by
 * step, with attn_reference_forward's at 1e-5 + 1e-4·|ref|.
 */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attn.h"
#include "lesson.h"
#include "narrate.h"
#include "test_trace.h"
#include "test_util.h"

#define LESSONS_DIR ATTNVIZ_SOURCE_DIR "/lessons"

/* A lesson and its trace, both owned. */
typedef struct Loaded {
    Lesson lesson;
    AttnTrace *trace;
} Loaded;

static void load_path(Loaded *out, const char *path)
{
    LessonError lerr;
    if (lesson_load(&out->lesson, path, &lerr) != 0) fail_msg("%s", lerr.msg);
    char err[512];
    out->trace = attn_trace_create(&out->lesson.cfg, err, sizeof err);
    if (!out->trace) fail_msg("%s: %s", path, err);
    assert_trace_matches_reference(path, out->trace, &out->lesson.cfg, TEST_ABS_TOL, TEST_REL_TOL);
}

static void load_id(Loaded *out, const char *id)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", LESSONS_DIR, id);
    load_path(out, path);
}

static void unload(Loaded *l)
{
    attn_trace_destroy(l->trace);
    lesson_free(&l->lesson);
}

/* Re-traces the lesson with a changed config (the lesson keeps its buffers). */
static AttnTrace *retrace(const AttnConfig *cfg)
{
    char err[512];
    AttnTrace *t = attn_trace_create(cfg, err, sizeof err);
    if (!t) fail_msg("retrace: %s", err);
    assert_trace_matches_reference("retrace", t, cfg, TEST_ABS_TOL, TEST_REL_TOL);
    return t;
}

static const AttnStep *step(const AttnTrace *t, const char *name)
{
    const AttnStep *s = attn_trace_find_name(t, name);
    if (!s) fail_msg("the trace has no step '%s'", name);
    return s;
}

static float at(const AttnStep *s, int i, int j)
{
    return s->data[(size_t)i * (size_t)s->cols + (size_t)j];
}

static int row_argmax(const AttnStep *s, int i)
{
    int best = 0;
    for (int j = 1; j < s->cols; j++)
        if (at(s, i, j) > at(s, i, best)) best = j;
    return best;
}

static float step_max(const AttnStep *s)
{
    float m = s->data[0];
    for (int k = 1; k < s->rows * s->cols; k++)
        if (s->data[k] > m) m = s->data[k];
    return m;
}

/* C (m×n) = A (m×k) · B (k×n), the reference product, in a new buffer. */
static float *matmul(const float *A, const float *B, int m, int k, int n)
{
    float *C = malloc(sizeof(float) * (size_t)m * (size_t)n); /* (m, n) */
    assert_non_null(C);
    attn_matmul_naive(C, A, B, NULL, m, k, n);
    return C;
}

/* Shape check with a readable failure. */
static void assert_shape(const AttnStep *s, int rows, int cols)
{
    if (s->rows != rows || s->cols != cols)
        fail_msg("%s is %d×%d, expected %d×%d", s->name, s->rows, s->cols, rows, cols);
}

/* ---- every lesson ------------------------------------------------------- */

/* Ids of the lessons the curriculum needs, in teaching order. */
static const char *const required[] = {
    "seed002-scaled-inner-product",
    "seed002-x-to-qkv",
    "seed002-embedding-two-heads",
    "self-attention-xihuan-paobu",
    "mhsa-wo-xihuan-paobu",
    "single-vs-multi-head",
    "seed001-shapes-512",
    "seed001-seq-len-1",
    "causal-mask-decoder",
    "mask-fill-values",
    "cross-attention-en-zh",
    "additive-bahdanau",
    "scaling-pitfalls",
    "seed003-mask-then-scale",
    "seed004-dk-dv-no-wo",
    "key-padding",
    "seed000-projection-biases",
    /* the attention of today's models */
    "kv-cache-xihuan-paobu",
    "mqa-xihuan-paobu",
    "sliding-window-xihuan-paobu",
};
#define N_REQUIRED ((int)(sizeof required / sizeof required[0]))

static const LessonNarration *find_narration(const Lesson *l, const char *key)
{
    for (int i = 0; i < l->n_narration; i++)
        if (strcmp(l->narration[i].key, key) == 0) return &l->narration[i];
    return NULL;
}

/* Softmax rows sum to 1 (or are all zero when flagged as fully blocked). */
static void check_softmax_rows(const AttnTrace *t, const char *id)
{
    for (int s = 0; s < t->n_steps; s++) {
        const AttnStep *w = &t->steps[s];
        if (w->kind != ATTN_STEP_SOFTMAX) continue;
        for (int i = 0; i < w->rows; i++) {
            double sum = 0;
            for (int j = 0; j < w->cols; j++) sum += at(w, i, j);
            /* a fully blocked row is all zero under -inf, uniform under a finite fill */
            int blocked = w->row_flags && (w->row_flags[i] & ATTN_ROW_ALL_BLOCKED) && isinf(t->cfg.mask_fill);
            double want = blocked ? 0.0 : 1.0;
            if (fabs(sum - want) > 1e-6) fail_msg("%s: %s row %d sums to %.9g, not %g", id, w->name, i, sum, want);
        }
    }
}

/* Characters (UTF-8 code points) in s. */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += (*s & 0xC0) != 0x80;
    return n;
}

/* In Chinese running text a token is quoted: 「喜欢」, never a bare 喜欢, which
 * reads as part of the sentence. Reports the first bare occurrence of a token
 * in a zh text, outside placeholders (which quote their tokens themselves).
 * ASCII tokens count only as whole words. Single-character tokens are checked
 * in lessons of at most 5 tokens: in a long sentence they are words such as
 * 都 and 在 that any Chinese sentence uses. */
static void check_zh_quotes(const Lesson *l, const char *path, const char *where, const char *text)
{
    if (!text) return;
    int n_all = l->n_tokens + l->n_source_tokens;
    for (int t = 0; t < n_all; t++) {
        const char *tok = t < l->n_tokens ? l->tokens[t] : l->source_tokens[t - l->n_tokens];
        size_t len = strlen(tok);
        if (utf8_chars(tok) == 1 && l->n_tokens > 5) continue;
        int depth = 0, brace = 0;
        for (const char *p = text; *p; p++) {
            /* inside 「」 (a token) or “” (a quoted sentence or document) */
            if (strncmp(p, "「", 3) == 0 || strncmp(p, "“", 3) == 0) depth++;
            if ((strncmp(p, "」", 3) == 0 || strncmp(p, "”", 3) == 0) && depth > 0) depth--;
            if (*p == '{') brace = 1;
            if (*p == '}') brace = 0;
            if (depth || brace || strncmp(p, tok, len) != 0) continue;
            int ascii = (unsigned char)tok[0] < 0x80;
            char before = p > text ? p[-1] : ' ', after = p[len];
            if (ascii &&
                (isalnum((unsigned char)before) || before == '_' || isalnum((unsigned char)after) || after == '_'))
                continue;
            fail_msg("%s: %s: the token %s stands bare in the Chinese text at \"%.40s\"; write 「%s」", path, where,
                     tok, p, tok);
        }
    }
}

/* What a student reads (a title, a summary, a narration) counts from 1, as
 * the labels on screen do (the placeholders' indices are code and stay
 * 0-based), cites another lesson by its title, never by its id, and names
 * neither a file of the repository nor "seed 00N" (the documents are
 * "document 00N", 文档 00N). */
static void check_reader_text(const char *path, const char *where, const char *text, int zh)
{
    if (!text) return;
    static const char *const zh_bad[] = {"第 0", "第0", "从 0 开始", "单元 0"};
    static const char *const en_bad[] = {"column 0", "columns 0", "row 0",  "rows 0",  "head 0", "unit 0",
                                         "0-based",  "feature 0", "word 0", "seed 00", "Seed 00"};
    const char *const *bad = zh ? zh_bad : en_bad;
    size_t n_bad = zh ? sizeof zh_bad / sizeof zh_bad[0] : sizeof en_bad / sizeof en_bad[0];
    /* only the text outside placeholders: {value:X[0][1]} is code */
    char plain[8192];
    size_t at = 0;
    int brace = 0;
    for (const char *p = text; *p && at + 1 < sizeof plain; p++) {
        if (*p == '{') brace++;
        if (!brace) plain[at++] = *p;
        if (*p == '}' && brace > 0) brace--;
    }
    plain[at] = '\0';
    for (size_t i = 0; i < n_bad; i++)
        if (strstr(plain, bad[i]))
            fail_msg("%s: %s counts from 0 or says \"%s\": \"%.60s\"", path, where, bad[i], strstr(plain, bad[i]));
    for (int r = 0; r < N_REQUIRED; r++)
        if (strstr(plain, required[r]))
            fail_msg("%s: %s names the lesson %s by its id; cite its title", path, where, required[r]);
    if (strstr(plain, "tools/") || strstr(plain, "lessons/") || strstr(plain, ".py"))
        fail_msg("%s: %s names a file of the repository: \"%.60s\"", path, where, plain);
}

static void check_reader_texts(const Lesson *l, const char *path)
{
    for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
        check_reader_text(path, "title", l->title.text[lang], lang == LESSON_ZH);
        check_reader_text(path, "summary", l->summary.text[lang], lang == LESSON_ZH);
        for (int k = 0; k < l->n_narration; k++)
            check_reader_text(path, l->narration[k].key, l->narration[k].text.text[lang], lang == LESSON_ZH);
    }
}

static void test_every_lesson(void **state)
{
    (void)state;
    DIR *d = opendir(LESSONS_DIR);
    assert_non_null(d);
    int found[N_REQUIRED] = {0};
    int orders[256], n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", LESSONS_DIR, de->d_name);
        Loaded L;
        load_path(&L, path);
        const Lesson *l = &L.lesson;
        /* the file is named after its id, so `attnviz show ID` finds it */
        assert_int_equal(strlen(l->id) + 5, len);
        assert_memory_equal(l->id, de->d_name, strlen(l->id));
        for (int r = 0; r < N_REQUIRED; r++) found[r] |= strcmp(l->id, required[r]) == 0;
        assert_true(n < 256);
        orders[n++] = l->order;
        /* titles, summary and intro in both languages */
        if (!l->title.text[LESSON_ZH] || !l->summary.text[LESSON_EN] || !l->summary.text[LESSON_ZH])
            fail_msg("%s: title.zh, summary.en and summary.zh are all required of a lesson", path);
        const LessonNarration *intro = find_narration(l, "intro");
        if (!intro || !intro->text.text[LESSON_ZH]) fail_msg("%s: no intro in both languages", path);
        /* every narration is in both languages (a step with none shows the
         * narration written from the step, view_step_narration) */
        for (int k = 0; k < l->n_narration; k++)
            if (!l->narration[k].text.text[LESSON_EN] || !l->narration[k].text.text[LESSON_ZH])
                fail_msg("%s: narration.%s is not in both en and zh", path, l->narration[k].key);
        /* tokens are quoted in every Chinese text */
        check_zh_quotes(l, path, "title.zh", l->title.text[LESSON_ZH]);
        check_zh_quotes(l, path, "summary.zh", l->summary.text[LESSON_ZH]);
        for (int k = 0; k < l->n_narration; k++)
            check_zh_quotes(l, path, l->narration[k].key, l->narration[k].text.text[LESSON_ZH]);
        check_reader_texts(l, path);
        /* every placeholder of every text fills, against every step it applies to */
        char err[512];
        if (narrate_check(l, L.trace, err, sizeof err) != 0) fail_msg("%s: %s", path, err);
        check_softmax_rows(L.trace, l->id);
        unload(&L);
    }
    closedir(d);
    for (int r = 0; r < N_REQUIRED; r++)
        if (!found[r]) fail_msg("lesson %s is missing from %s", required[r], LESSONS_DIR);
    /* orders are distinct: `attnviz list` has one teaching order */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (orders[i] == orders[j]) fail_msg("two lessons share order %d", orders[i]);
}

static void test_required_in_teaching_order(void **state)
{
    (void)state;
    int prev = -1000000000;
    for (int r = 0; r < N_REQUIRED; r++) {
        Loaded L;
        load_id(&L, required[r]);
        if (L.lesson.order <= prev)
            fail_msg("%s (order %d) should come after order %d", required[r], L.lesson.order, prev);
        prev = L.lesson.order;
        unload(&L);
    }
}

/* The default lesson of `attnviz show` is the two-head lesson. */
static void test_default_lesson(void **state)
{
    (void)state;
    assert_string_equal(LESSON_DEFAULT_ID, "mhsa-wo-xihuan-paobu");
    Loaded L;
    load_id(&L, LESSON_DEFAULT_ID);
    assert_int_equal(L.trace->cfg.heads, 2);
    assert_non_null(attn_trace_find_name(L.trace, "output"));
    unload(&L);
}

/* ---- 1. seed 002: q·kᵀ/√2 ----------------------------------------------- */

static void test_seed002_scaled_inner_product(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed002-scaled-inner-product");
    const AttnTrace *t = L.trace;
    /* the seed's q and k, as written in seed 002 */
    const float q[4] = {1, 2, 3, 4}, k[4] = {5, 6, 7, 8};
    assert_floats_close("X = q", step(t, "X")->data, q, 2, 2, 0, 0);
    assert_floats_close("Y = k", step(t, "Y")->data, k, 2, 2, 0, 0);
    assert_floats_close("Q = q", step(t, "Q")->data, q, 2, 2, 0, 0);
    assert_floats_close("K = k", step(t, "K")->data, k, 2, 2, 0, 0);
    assert_int_equal(t->cfg.d_k, 2);
    /* seed 002: q·kᵀ = [[17,23],[39,53]], ÷√2 = [[12.0208,16.2635],[27.5772,37.4767]] */
    const float qkT[4] = {17, 23, 39, 53};
    const float scaled[4] = {12.0208f, 16.2635f, 27.5772f, 37.4767f};
    assert_floats_close("scores_1", step(t, "scores_1")->data, qkT, 2, 2, 0, 0);
    assert_floats_close("scaled_1", step(t, "scaled_1")->data, scaled, 2, 2, 5e-5, 0);
    /* the pitfall the narration points out: matmul(q, k) without the transpose */
    const float *X = step(t, "X")->data, *Y = step(t, "Y")->data;
    float *nt = matmul(X, Y, 2, 2, 2);
    const float seed_bug[4] = {19, 22, 43, 50};
    assert_floats_close("matmul(q, k)", nt, seed_bug, 2, 2, 0, 0);
    free(nt);
    /* softmax of the scaled row, and the weighted sum of V = k */
    const AttnStep *w = step(t, "weights_1");
    for (int i = 0; i < 2; i++) {
        double e0 = exp((double)scaled[i * 2] - scaled[i * 2 + 1]);
        assert_true(fabs(at(w, i, 0) - e0 / (1 + e0)) < 1e-4);
        assert_int_equal(row_argmax(w, i), 1); /* the narration: both rows pick k2 */
    }
    float *out = matmul(w->data, step(t, "V")->data, 2, 2, 2);
    assert_floats_close("head_1 = weights·V", step(t, "head_1")->data, out, 2, 2, 1e-6, 1e-6);
    free(out);
    unload(&L);
}

/* ---- 2. seed 002's X through Q, K, V ------------------------------------ */

static void test_seed002_x_to_qkv(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed002-x-to-qkv");
    const AttnTrace *t = L.trace;
    const float x[6] = {1, 2, 3, 4, 5, 6}; /* seed 002's X */
    assert_floats_close("X", step(t, "X")->data, x, 2, 3, 0, 0);
    const char *names[3][2] = {{"Q", "W_Q"}, {"K", "W_K"}, {"V", "W_V"}};
    for (int p = 0; p < 3; p++) {
        float *ref = matmul(x, step(t, names[p][1])->data, 2, 3, 2);
        assert_floats_close(names[p][0], step(t, names[p][0])->data, ref, 2, 2, 1e-6, 1e-6);
        free(ref);
    }
    /* the narration: no token takes everything, and both rows favour x2 */
    const AttnStep *w = step(t, "weights_1");
    for (int i = 0; i < 4; i++) assert_true(w->data[i] > 0.2f && w->data[i] < 0.8f);
    assert_int_equal(row_argmax(w, 0), 1);
    assert_int_equal(row_argmax(w, 1), 1);
    unload(&L);
}

/* ---- seed 001: heads by projection, not by cutting ------------------------ */

/* Columns [(h-1)·w, h·w) of a (rows × all) matrix, as its own (rows × w) matrix. */
static float *column_block(const float *m, int rows, int all, int h, int w)
{
    if (!m) return NULL;
    float *b = malloc(sizeof(float) * (size_t)rows * (size_t)w); /* (rows, w) */
    assert_non_null(b);
    for (int r = 0; r < rows; r++)
        memcpy(b + (size_t)r * w, m + (size_t)r * all + (size_t)(h - 1) * w, sizeof(float) * w);
    return b;
}

/* Seed 001: "切分是通过线性投影实现的，而不是直接对矩阵按行或列切块". Both at
 * once: for every dot lesson and head h, attention with its own projections
 * W_h^Q, W_h^K, W_h^V (column block h of W_Q, W_K, W_V and of the biases)
 * gives the same Q_h, K_h, V_h and head_h as cutting the full projections, as
 * mhsa-wo-xihuan-paobu's narration of Q_1 says. */
static void heads_by_projection(const char *path, void *user)
{
    (void)user;
    Loaded L;
    load_path(&L, path);
    const AttnConfig *c = &L.lesson.cfg;
    for (int h = 1; c->attention == ATTN_DOT && h <= c->heads; h++) {
        AttnConfig one = *c;
        /* grouped K/V heads: head h's keys and values are its K/V head g's */
        int G = attn_kv_heads(c), g = attn_kv_head(c, h);
        int hk = c->heads * c->d_k, gk = G * c->d_k, gv = G * c->d_v;
        one.heads = 1;
        one.kv_heads = 0;
        one.W_Q = column_block(c->W_Q, c->d_model, hk, h, c->d_k);
        one.W_K = column_block(c->W_K, c->d_model, gk, g, c->d_k);
        one.W_V = column_block(c->W_V, c->d_model, gv, g, c->d_v);
        one.b_Q = column_block(c->b_Q, 1, hk, h, c->d_k);
        one.b_K = column_block(c->b_K, 1, gk, g, c->d_k);
        one.b_V = column_block(c->b_V, 1, gv, g, c->d_v);
        one.W_O = NULL, one.b_O = NULL;
        AttnTrace *t = retrace(&one);
        static const char *const names[] = {"Q_", "K_", "V_", "head_"};
        for (int k = 0; k < 4; k++) {
            char mine[32], cut[32];
            snprintf(mine, sizeof mine, "%s1", names[k]);
            snprintf(cut, sizeof cut, "%s%d", names[k], k == 1 || k == 2 ? g : h);
            const AttnStep *a = step(t, mine), *b = step(L.trace, cut);
            assert_shape(a, b->rows, b->cols);
            for (int i = 0; i < a->rows * a->cols; i++)
                if (fabsf(a->data[i] - b->data[i]) > 1e-5f * (1 + fabsf(b->data[i])))
                    fail_msg("%s: %s by its own projection is %.9g at %d, cut from the whole one %.9g", path, cut,
                             (double)a->data[i], i, (double)b->data[i]);
        }
        attn_trace_destroy(t);
        free((void *)one.W_Q), free((void *)one.W_K), free((void *)one.W_V);
        free((void *)one.b_Q), free((void *)one.b_K), free((void *)one.b_V);
    }
    unload(&L);
}

static void test_heads_by_projection(void **state)
{
    (void)state;
    assert_true(test_each_json(LESSONS_DIR, heads_by_projection, NULL) > 0);
}

/* Seed 002's embedding step: X is one-hot, so each row of Q, K and V is the
 * row of W_Q, W_K, W_V at the token's index (an exact copy: one term is 1·w,
 * the others 0·w). */
static void test_seed002_embedding(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed002-embedding-two-heads");
    const AttnTrace *t = L.trace;
    const AttnStep *X = step(t, "X");
    static const char *const proj[3][2] = {{"Q", "W_Q"}, {"K", "W_K"}, {"V", "W_V"}};
    for (int i = 0; i < X->rows; i++) {
        int id = -1, ones = 0;
        for (int j = 0; j < X->cols; j++) {
            assert_true(at(X, i, j) == 0.0f || at(X, i, j) == 1.0f);
            if (at(X, i, j) == 1.0f) id = j, ones++;
        }
        assert_int_equal(ones, 1); /* one-hot */
        for (int p = 0; p < 3; p++) {
            const AttnStep *P = step(t, proj[p][0]), *W = step(t, proj[p][1]);
            for (int c = 0; c < P->cols; c++) assert_true(at(P, i, c) == at(W, id, c));
        }
    }
    unload(&L);
}

/* ---- 3. one head, W = I: every word looks most at itself ------------------ */

static void test_self_attention(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "self-attention-xihuan-paobu");
    const AttnStep *w = step(L.trace, "weights_1");
    for (int i = 0; i < 3; i++) assert_int_equal(row_argmax(w, i), i);
    assert_true(at(w, 1, 2) > at(w, 1, 0));                     /* 喜欢 prefers 跑步 to 我 */
    assert_true(at(w, 2, 1) > at(w, 2, 0));                     /* 跑步 prefers 喜欢 to 我 */
    for (int k = 0; k < 9; k++) assert_true(w->data[k] > 0.0f); /* "no weight is zero" */
    unload(&L);
}

/* ---- 4. the two designed heads ---------------------------------------------- */

enum { WO = 0, XIHUAN = 1, PAOBU = 2 }; /* 我, 喜欢, 跑步 */

static void test_mhsa_head_patterns(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "mhsa-wo-xihuan-paobu");
    const AttnTrace *t = L.trace;
    assert_string_equal(L.lesson.tokens[WO], "我");
    assert_string_equal(L.lesson.tokens[XIHUAN], "喜欢");
    assert_string_equal(L.lesson.tokens[PAOBU], "跑步");
    const AttnStep *w1 = step(t, "weights_1"), *w2 = step(t, "weights_2");
    /* head 1, verb–object: 喜欢 ↔ 跑步 */
    assert_int_equal(row_argmax(w1, XIHUAN), PAOBU);
    assert_int_equal(row_argmax(w1, PAOBU), XIHUAN);
    /* head 2, subject–verb: 我 ↔ 喜欢 */
    assert_int_equal(row_argmax(w2, WO), XIHUAN);
    assert_int_equal(row_argmax(w2, XIHUAN), WO);
    /* a zero query gives a flat row: 我 in head 1, 跑步 in head 2 */
    for (int j = 1; j < 3; j++) {
        assert_true(at(w1, WO, j) == at(w1, WO, 0));
        assert_true(at(w2, PAOBU, j) == at(w2, PAOBU, 0));
    }
    /* concat: 喜欢's head-1 half is nearest to 跑步's value, its head-2 half to 我's */
    const AttnStep *cat = step(t, "concat"), *V1 = step(t, "V_1"), *V2 = step(t, "V_2");
    for (int h = 0; h < 2; h++) {
        const AttnStep *Vh = h ? V2 : V1;
        int want = h ? WO : PAOBU, best = -1;
        double best_d = 1e30;
        for (int j = 0; j < 3; j++) {
            double d2 = 0;
            for (int c = 0; c < 2; c++) {
                double diff = at(cat, XIHUAN, 2 * h + c) - at(Vh, j, c);
                d2 += diff * diff;
            }
            if (d2 < best_d) best_d = d2, best = j;
        }
        assert_int_equal(best, want);
    }
    /* output = concat · W_O */
    float *out = matmul(cat->data, step(t, "W_O")->data, 3, 4, 4);
    assert_floats_close("output", step(t, "output")->data, out, 3, 4, 1e-6, 1e-6);
    free(out);
    unload(&L);
}

/* ---- 5. one head vs two on the same weights -------------------------------- */

static void test_single_vs_multi(void **state)
{
    (void)state;
    Loaded one, two;
    load_id(&one, "single-vs-multi-head");
    load_id(&two, "mhsa-wo-xihuan-paobu");
    const char *same[] = {"X", "W_Q", "W_K", "W_V", "W_O", "Q", "K", "V"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        const AttnStep *a = step(one.trace, same[i]), *b = step(two.trace, same[i]);
        assert_shape(a, b->rows, b->cols);
        assert_floats_close(same[i], a->data, b->data, a->rows, a->cols, 0, 0);
    }
    assert_int_equal(one.trace->cfg.heads, 1);
    assert_int_equal(one.trace->cfg.d_k, one.trace->cfg.d_model);
    /* one head's raw scores = head 1's + head 2's */
    const AttnStep *s = step(one.trace, "scores_1"), *s1 = step(two.trace, "scores_1"),
                   *s2 = step(two.trace, "scores_2");
    float sum[9];
    for (int k = 0; k < 9; k++) sum[k] = s1->data[k] + s2->data[k];
    assert_floats_close("scores (1 head) = scores_1 + scores_2", s->data, sum, 3, 3, 1e-6, 0);
    /* the row of 喜欢 blends: each partner gets less than in its own head */
    const AttnStep *w = step(one.trace, "weights_1"), *w1 = step(two.trace, "weights_1"),
                   *w2 = step(two.trace, "weights_2");
    assert_true(at(w, XIHUAN, WO) < at(w2, XIHUAN, WO));
    assert_true(at(w, XIHUAN, PAOBU) < at(w1, XIHUAN, PAOBU));
    /* "each head gave its partner about 0.89" */
    assert_true(fabs(at(w1, XIHUAN, PAOBU) - 0.89) < 0.01 && fabs(at(w2, XIHUAN, WO) - 0.89) < 0.01);
    /* (that one head of width d_model is ordinary SDPA, softmax(QKᵀ/√d_k)·V,
     * load_id checked: it compares every trace with attn_reference_forward) */
    unload(&one);
    unload(&two);
}

/* ---- 6, 7. seed 001's shapes ------------------------------------------------ */

static void test_seed001_shapes(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed001-shapes-512");
    const AttnTrace *t = L.trace;
    int n = t->cfg.n_q;
    assert_int_equal(n, 12);
    assert_int_equal(t->cfg.d_model, 512);
    assert_int_equal(t->cfg.heads, 8);
    assert_int_equal(t->cfg.d_k, 64);
    assert_int_equal(t->cfg.d_v, 64);
    assert_true(t->divisor == 8.0f);
    assert_shape(step(t, "Q"), n, 512);
    assert_shape(step(t, "W_O"), 512, 512);
    char name[32];
    for (int h = 1; h <= 8; h++) {
        snprintf(name, sizeof name, "Q_%d", h);
        assert_shape(step(t, name), n, 64);
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = step(t, name);
        assert_shape(w, n, n);
        /* "fairly flat": with untrained weights no weight reaches twice uniform */
        assert_true(step_max(w) < 2.0f / (float)n);
        snprintf(name, sizeof name, "head_%d", h);
        assert_shape(step(t, name), n, 64);
    }
    assert_shape(step(t, "concat"), n, 512);
    assert_shape(step(t, "output"), n, 512);
    unload(&L);
}

static void test_seed001_seq_len_1(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed001-seq-len-1");
    const AttnTrace *t = L.trace;
    assert_int_equal(t->cfg.n_q, 1);
    assert_int_equal(t->cfg.heads, 8);
    char name[32];
    for (int h = 1; h <= 8; h++) {
        snprintf(name, sizeof name, "scores_%d", h);
        assert_shape(step(t, name), 1, 1);
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = step(t, name);
        assert_shape(w, 1, 1);
        if (w->data[0] != 1.0f) fail_msg("%s = %.9g, not exactly 1", name, (double)w->data[0]);
        /* head_h = 1 · V_h, exactly */
        snprintf(name, sizeof name, "V_%d", h);
        const AttnStep *v = step(t, name);
        snprintf(name, sizeof name, "head_%d", h);
        assert_shape(v, 1, 64);
        assert_floats_close(name, step(t, name)->data, v->data, 1, 64, 0, 0);
    }
    assert_floats_close("concat = V", step(t, "concat")->data, step(t, "V")->data, 1, 512, 0, 0);
    assert_shape(step(t, "output"), 1, 512);
    /* attention reduces to X·W_V·W_O */
    float *v = matmul(step(t, "X")->data, step(t, "W_V")->data, 1, 512, 512);
    float *o = matmul(v, step(t, "W_O")->data, 1, 512, 512);
    assert_floats_close("output = X·W_V·W_O", step(t, "output")->data, o, 1, 512, 1e-5, 1e-4);
    free(v);
    free(o);
    unload(&L);
}

/* ---- 8. causal mask ----------------------------------------------------------- */

static void test_causal(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "causal-mask-decoder");
    const AttnTrace *t = L.trace;
    const AttnStep *sc = step(t, "scaled_1"), *m = step(t, "masked_1"), *w = step(t, "weights_1");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(row_argmax(sc, i), PAOBU); /* unmasked, everyone would look at 跑步 */
        for (int j = 0; j < 3; j++) {
            if (j > i) {
                assert_true(isinf(at(m, i, j)) && at(m, i, j) < 0);
                if (at(w, i, j) != 0.0f) fail_msg("weights_1[%d][%d] = %.9g, not exactly 0", i, j, (double)at(w, i, j));
            } else {
                assert_true(at(m, i, j) == at(sc, i, j));
                assert_true(at(w, i, j) > 0.0f);
            }
        }
    }
    assert_true(at(w, 0, 0) == 1.0f);
    /* 我's output is exactly its own value */
    assert_floats_close("head_1[0] = V[0]", step(t, "head_1")->data, step(t, "V")->data, 1, 2, 0, 0);
    unload(&L);
}

/* ---- 9. mask fill: -1e9, -1e20, -inf on a fully blocked row -------------------- */

static void test_mask_fill(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "mask-fill-values");
    const AttnTrace *t = L.trace;
    assert_true(t->cfg.mask_fill == -1e9f);
    const AttnStep *w = step(t, "weights_1");
    int n = w->cols;
    /* row <pad> is fully blocked: uniform 1/n under a finite fill */
    for (int j = 0; j < n; j++) assert_true(fabsf(at(w, 0, j) - 1.0f / (float)n) < 1e-7f);
    assert_true(w->row_flags && (w->row_flags[0] & ATTN_ROW_ALL_BLOCKED));
    /* its output is the plain average of the values */
    const AttnStep *V = step(t, "V"), *o = step(t, "head_1");
    for (int c = 0; c < V->cols; c++) {
        double mean = 0;
        for (int j = 0; j < n; j++) mean += at(V, j, c) / n;
        assert_true(fabs(at(o, 0, c) - mean) < 1e-6);
    }
    /* the other rows: blocked weights exactly 0 */
    for (int i = 1; i < n; i++)
        for (int j = 0; j < n; j++)
            if (L.lesson.mask[i * n + j] == 0) assert_true(at(w, i, j) == 0.0f);
    /* -1e20 (seed 003): bit for bit the same weights */
    AttnConfig cfg = L.lesson.cfg;
    cfg.mask_fill = -1e20f;
    AttnTrace *t20 = retrace(&cfg);
    assert_memory_equal(step(t20, "weights_1")->data, w->data, sizeof(float) * (size_t)(n * n));
    /* -inf: the rows with something to see are bit for bit the same; row <pad> is all zero */
    cfg.mask_fill = -INFINITY;
    AttnTrace *tinf = retrace(&cfg);
    const AttnStep *wi = step(tinf, "weights_1");
    assert_memory_equal(wi->data + n, w->data + n, sizeof(float) * (size_t)((n - 1) * n));
    for (int j = 0; j < n; j++) assert_true(at(wi, 0, j) == 0.0f);
    for (int c = 0; c < V->cols; c++) assert_true(at(step(tinf, "head_1"), 0, c) == 0.0f);
    assert_true(wi->row_flags[0] & ATTN_ROW_ALL_BLOCKED);
    attn_trace_destroy(t20);
    attn_trace_destroy(tinf);
    unload(&L);
}

/* ---- 10. cross-attention -------------------------------------------------------- */

static void test_cross(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "cross-attention-en-zh");
    const AttnTrace *t = L.trace;
    assert_true(t->cfg.cross);
    assert_true(t->cfg.n_q != t->cfg.n_k);
    const AttnStep *w = step(t, "weights_1");
    assert_shape(w, 4, 3);
    /* the shifted decoder input: each position looks at the source word of the
     * word it is about to produce, <s>→我 (I), I→喜欢 (like), like→跑步
     * (running); running, followed by the end of the sentence, is uniform */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(row_argmax(w, i), i);
        assert_true(at(w, i, i) > 0.5f);
    }
    for (int j = 1; j < 3; j++) assert_true(at(w, 3, j) == at(w, 3, 0));
    /* K and V come from Y */
    float *K = matmul(step(t, "Y")->data, step(t, "W_K")->data, 3, 4, 3);
    assert_floats_close("K = Y·W_K", step(t, "K")->data, K, 3, 3, 0, 0);
    free(K);
    assert_shape(step(t, "concat"), 4, 4);
    unload(&L);
}

/* ---- 11. additive ----------------------------------------------------------------- */

static void test_additive(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "additive-bahdanau");
    const AttnTrace *t = L.trace;
    const AttnConfig *c = &t->cfg;
    assert_int_equal(c->attention, ATTN_ADDITIVE);
    assert_true(c->d_x != c->d_y);
    assert_null(attn_trace_find(t, ATTN_STEP_SCALED, 0));
    /* hidden = tanh([x_i ; y_j]·W_a), scores = hidden·v_a: load_id compared
     * every step with attn_reference_forward */
    const float *Y = step(t, "Y")->data;
    const AttnStep *w = step(t, "weights");
    assert_int_equal(row_argmax(w, 0), XIHUAN); /* s1 → 喜欢 */
    assert_int_equal(row_argmax(w, 1), PAOBU);  /* s2 → 跑步 */
    float *ctx = matmul(w->data, Y, c->n_q, c->n_k, c->d_y);
    assert_floats_close("context = weights·Y", step(t, "context")->data, ctx, c->n_q, c->d_y, 1e-6, 1e-6);
    free(ctx);
    unload(&L);
}

/* ---- 12. scaling pitfalls ------------------------------------------------------------ */

static void test_scaling(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "scaling-pitfalls");
    const AttnTrace *t = L.trace;
    assert_int_equal(t->cfg.scale_kind, ATTN_SCALE_SQRT_DMODEL);
    assert_true(t->divisor == sqrtf((float)t->cfg.d_model));
    AttnConfig cfg = L.lesson.cfg;
    cfg.scale_kind = ATTN_SCALE_SQRT_DK;
    AttnTrace *tk = retrace(&cfg);
    cfg.scale_kind = ATTN_SCALE_NONE;
    AttnTrace *tn = retrace(&cfg);
    char name[32];
    for (int h = 1; h <= t->cfg.heads; h++) {
        snprintf(name, sizeof name, "weights_%d", h);
        float m_model = step_max(step(t, name)), m_dk = step_max(step(tk, name)), m_none = step_max(step(tn, name));
        if (!(m_model < m_dk && m_dk < m_none))
            fail_msg("head %d: max weight √d_model %.6g, √d_k %.6g, none %.6g: not flatter → sharper", h,
                     (double)m_model, (double)m_dk, (double)m_none);
        /* and the narration's {max_weight_if:...} says the same numbers */
        char got[64], want[64];
        const AttnStep *ws = step(t, name);
        assert_int_equal(narrate_fill(got, sizeof got, "{max_weight_if:sqrt_dk}", &L.lesson, t, ws, LESSON_EN), 0);
        snprintf(want, sizeof want, "%.4g", (double)m_dk);
        assert_string_equal(got, want);
        assert_int_equal(narrate_fill(got, sizeof got, "{max_weight_if:none}", &L.lesson, t, ws, LESSON_EN), 0);
        snprintf(want, sizeof want, "%.4g", (double)m_none);
        assert_string_equal(got, want);
    }
    attn_trace_destroy(tk);
    attn_trace_destroy(tn);
    unload(&L);
}

/* ---- 13. seed 004: d_k ≠ d_v, no W_O ----------------------------------------------------- */

/* Seed 003's order: the raw scores are masked with -1e20, then divided, so
 * a blocked score is -1e20/√d_model; the weights are those of the usual order. */
static void test_seed003_mask_then_scale(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed003-mask-then-scale");
    const AttnTrace *t = L.trace;
    assert_int_equal(t->cfg.mask_order, ATTN_MASK_THEN_SCALE);
    assert_true(t->cfg.mask_fill == -1e20f);
    assert_int_equal(t->cfg.scale_kind, ATTN_SCALE_SQRT_DMODEL);
    AttnConfig cfg = L.lesson.cfg;
    cfg.mask_order = ATTN_SCALE_THEN_MASK;
    AttnTrace *usual = retrace(&cfg);
    for (int h = 1; h <= t->cfg.heads; h++) {
        char name[32];
        snprintf(name, sizeof name, "masked_%d", h);
        const AttnStep *m = step(t, name), *sc;
        snprintf(name, sizeof name, "scores_%d", h);
        sc = step(t, name);
        snprintf(name, sizeof name, "scaled_%d", h);
        const AttnStep *a = step(t, name);
        /* masked comes before scaled, and scaled is computed from it */
        assert_true(attn_trace_index(t, m) < attn_trace_index(t, a));
        for (int i = 0; i < m->rows; i++)
            for (int j = 0; j < m->cols; j++) {
                int blocked = j > i; /* causal */
                assert_true(at(m, i, j) == (blocked ? -1e20f : at(sc, i, j)));
                assert_true(at(a, i, j) == at(m, i, j) / t->divisor);
            }
        /* the effective fill is still far below every score: the same weights as scaling first */
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = step(t, name), *wu = step(usual, name);
        for (int k = 0; k < w->rows * w->cols; k++)
            if (fabsf(w->data[k] - wu->data[k]) > 1e-7f)
                fail_msg("head %d: weight %d is %.9g masked first, %.9g scaled first", h, k, (double)w->data[k],
                         (double)wu->data[k]);
    }
    attn_trace_destroy(usual);
    unload(&L);
}

static void test_seed004(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed004-dk-dv-no-wo");
    const AttnTrace *t = L.trace;
    const AttnConfig *c = &t->cfg;
    assert_true(c->d_k != c->d_v);
    assert_null(attn_trace_find_name(t, "output"));
    assert_null(attn_trace_find(t, ATTN_STEP_BIAS, 0));
    assert_true(t->divisor == sqrtf((float)c->d_k));
    assert_shape(step(t, "Q_1"), c->n_q, c->d_k);
    assert_shape(step(t, "V_2"), c->n_q, c->d_v);
    assert_shape(step(t, "head_2"), c->n_q, c->d_v);
    const AttnStep *cat = step(t, "concat");
    assert_shape(cat, c->n_q, c->heads * c->d_v);
    assert_true(cat->cols != c->d_model);
    unload(&L);
}

/* ---- 14. key padding ------------------------------------------------------------------- */

static void test_key_padding(void **state)
{
    (void)state;
    Loaded L, ref;
    load_id(&L, "key-padding");
    load_id(&ref, "mhsa-wo-xihuan-paobu");
    const AttnTrace *t = L.trace;
    int n = t->cfg.n_k, real = ref.trace->cfg.n_q;
    assert_int_equal(t->cfg.mask_kind, ATTN_MASK_PADDING);
    /* the narration: unmasked, a <pad> key would score like 我 in 喜欢's row of head 1 */
    const AttnStep *s1 = step(t, "scores_1");
    for (int j = real; j < n; j++) assert_true(at(s1, XIHUAN, j) == at(s1, XIHUAN, WO));
    char name[32];
    for (int h = 1; h <= t->cfg.heads; h++) {
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = step(t, name), *wr = step(ref.trace, name);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (!L.lesson.mask[j] && at(w, i, j) != 0.0f)
                    fail_msg("%s[%d][%d] = %.9g on a padded key, not exactly 0", name, i, j, (double)at(w, i, j));
        /* the real rows, over the real keys, equal the unpadded lesson */
        for (int i = 0; i < real; i++)
            for (int j = 0; j < real; j++) assert_true(fabsf(at(w, i, j) - at(wr, i, j)) < 1e-7f);
    }
    const AttnStep *o = step(t, "output"), *orf = step(ref.trace, "output");
    assert_floats_close("output (real rows)", o->data, orf->data, real, o->cols, 1e-6, 1e-6);
    unload(&L);
    unload(&ref);
}

/* ---- 15. seed 000's projection biases -------------------------------------------------- */

static void test_biases(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "seed000-projection-biases");
    const AttnTrace *t = L.trace;
    assert_non_null(L.lesson.cfg.b_Q);
    assert_non_null(L.lesson.cfg.b_K);
    assert_non_null(L.lesson.cfg.b_V);
    char name[32];
    /* b_K changes the scores but no weight */
    AttnConfig cfg = L.lesson.cfg;
    cfg.b_K = NULL;
    AttnTrace *nok = retrace(&cfg);
    /* without b_Q, the zero-query rows (我 in head 1, 跑步 in head 2) are flat again */
    cfg = L.lesson.cfg;
    cfg.b_Q = NULL;
    AttnTrace *noq = retrace(&cfg);
    /* without b_V every head's output is exactly b_V less */
    cfg = L.lesson.cfg;
    cfg.b_V = NULL;
    AttnTrace *nov = retrace(&cfg);
    for (int h = 1; h <= 2; h++) {
        snprintf(name, sizeof name, "scores_%d", h);
        assert_true(fabsf(step(t, name)->data[0] - step(nok, name)->data[0]) > 0.1f);
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = step(t, name);
        assert_floats_close("weights without b_K", step(nok, name)->data, w->data, 3, 3, 1e-6, 1e-5);
        int zero_row = h == 1 ? WO : PAOBU;
        const AttnStep *wq = step(noq, name);
        for (int j = 1; j < 3; j++) assert_true(at(wq, zero_row, j) == at(wq, zero_row, 0));
        assert_true(step_max(w) > 0.0f && fabsf(at(w, zero_row, 0) - at(w, zero_row, 2)) > 0.1f);
        snprintf(name, sizeof name, "head_%d", h);
        const AttnStep *o = step(t, name), *ov = step(nov, name);
        for (int k = 0; k < o->rows * o->cols; k++)
            assert_true(fabsf(o->data[k] - (ov->data[k] + L.lesson.cfg.b_V[(h - 1) * 2 + k % 2])) < 1e-6f);
    }
    attn_trace_destroy(nok);
    attn_trace_destroy(noq);
    attn_trace_destroy(nov);
    unload(&L);
}

/* ---- today's models: the K/V cache ------------------------------------------------------- */

/* The causal lesson's numbers decoded token by token: each token's weights
 * are the first t of row t of the whole forward's, the last caches are K_1
 * and V_1, the stacked rows are the concat, and the counts the narration
 * quotes order as it says (with the cache fewer than one forward, which
 * also scores the blocked pairs; without a cache more). */
static void test_kv_cache(void **state)
{
    (void)state;
    Loaded L, C;
    load_id(&L, "kv-cache-xihuan-paobu");
    load_id(&C, "causal-mask-decoder");
    const AttnTrace *t = L.trace;
    int n = L.lesson.cfg.n_q;
    assert_int_equal(L.lesson.cfg.decode, ATTN_DECODE_INCREMENTAL);
    /* the same numbers as the lesson it cites */
    assert_floats_close("concat as the causal lesson's", step(t, "concat")->data, step(C.trace, "concat")->data, n, 2,
                        0, 0);
    const AttnStep *w = step(t, "weights_1");
    for (int at_t = 1; at_t <= n; at_t++) {
        const AttnStep *wt = attn_trace_find_at(t, ATTN_ROLE_WEIGHTS, 1, at_t);
        assert_non_null(wt);
        assert_int_equal(wt->cols, at_t);
        for (int j = 0; j < at_t; j++) assert_float_equal(at(wt, 0, j), at(w, at_t - 1, j), 1e-6);
        const AttnStep *kc = attn_trace_find_at(t, ATTN_ROLE_K_CACHE, 1, at_t);
        assert_int_equal(kc->rows, at_t);
    }
    assert_floats_close("the last K cache", attn_trace_find_at(t, ATTN_ROLE_K_CACHE, 1, n)->data, step(t, "K_1")->data,
                        n, 2, 0, 0);
    assert_floats_close("decoded", step(t, "decoded")->data, step(t, "concat")->data, n, 2, 1e-6, 1e-6);
    AttnDecodeMacs m;
    attn_decode_macs(t, &m);
    assert_true(m.incremental < m.full && m.full < m.recompute);
    unload(&C);
    unload(&L);
}

/* ---- today's models: multi-query attention ---------------------------------------------- */

/* Two query heads read one K and one V, and still find the two relations of
 * the two-head lesson; K is half as wide as Q, and the lesson equals
 * ordinary two-head attention with its one K/V head repeated. */
static void test_mqa(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "mqa-xihuan-paobu");
    const AttnTrace *t = L.trace;
    const AttnConfig *c = &L.lesson.cfg;
    assert_int_equal(c->heads, 2);
    assert_int_equal(c->kv_heads, 1);
    assert_string_equal(L.lesson.tokens[WO], "我");
    assert_string_equal(L.lesson.tokens[XIHUAN], "喜欢");
    assert_string_equal(L.lesson.tokens[PAOBU], "跑步");
    /* the K/V cache a decoder keeps: kv_heads/heads of the width */
    assert_int_equal(step(t, "K")->cols * c->heads, step(t, "Q")->cols * c->kv_heads);
    assert_int_equal(step(t, "V")->cols, c->d_v);
    assert_null(attn_trace_find_name(t, "K_2"));
    const AttnStep *w1 = step(t, "weights_1"), *w2 = step(t, "weights_2");
    assert_int_equal(row_argmax(w1, XIHUAN), PAOBU); /* head 1, verb–object */
    assert_int_equal(row_argmax(w1, PAOBU), XIHUAN);
    assert_int_equal(row_argmax(w2, WO), XIHUAN); /* head 2, subject–verb */
    assert_int_equal(row_argmax(w2, XIHUAN), WO);
    /* both heads' scores use K_1 */
    const AttnStep *s2 = step(t, "scores_2");
    assert_string_equal(t->steps[s2->from[1]].name, "K_1");
    /* ordinary attention with W_K and W_V repeated for both heads gives the same */
    int dm = c->d_model, dk = c->d_k, dv = c->d_v;
    float *wk = malloc(sizeof(float) * (size_t)dm * 2 * dk), *wv = malloc(sizeof(float) * (size_t)dm * 2 * dv);
    assert_true(wk && wv);
    for (int p = 0; p < dm; p++)
        for (int h = 0; h < 2; h++) {
            memcpy(wk + (size_t)p * 2 * dk + (size_t)h * dk, c->W_K + (size_t)p * dk, sizeof(float) * (size_t)dk);
            memcpy(wv + (size_t)p * 2 * dv + (size_t)h * dv, c->W_V + (size_t)p * dv, sizeof(float) * (size_t)dv);
        }
    AttnConfig rep = *c;
    rep.kv_heads = 0;
    rep.W_K = wk;
    rep.W_V = wv;
    AttnTrace *r = retrace(&rep);
    assert_floats_close("concat against K/V repeated", step(r, "concat")->data, step(t, "concat")->data, 3, 2 * dv,
                        1e-6, 1e-6);
    attn_trace_destroy(r);
    free(wk);
    free(wv);
    unload(&L);
}

/* ---- today's models: a sliding window ---------------------------------------------------- */

/* Each query sees itself and the two keys before it: exactly those scores
 * survive the mask, 15 of the 36 (21 under a causal mask), and 跑步's
 * weights are on 在, 公园 and itself, as the narration says. */
static void test_sliding_window(void **state)
{
    (void)state;
    Loaded L;
    load_id(&L, "sliding-window-xihuan-paobu");
    const AttnTrace *t = L.trace;
    const AttnStep *m = step(t, "masked_1"), *w = step(t, "weights_1");
    int n = L.lesson.cfg.n_q, kept = 0;
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int in = i - 3 < j && j <= i;
            assert_int_equal(!isinf(at(m, i, j)), in);
            if (!in) assert_true(at(w, i, j) == 0.0f);
            kept += in;
        }
    assert_int_equal(kept, 15);
    assert_int_equal(n * (n + 1) / 2, 21);
    assert_string_equal(L.lesson.tokens[5], "跑步");
    assert_string_equal(L.lesson.tokens[3], "在");
    assert_float_equal(at(w, 5, 3) + at(w, 5, 4) + at(w, 5, 5), 1.0, 1e-6);
    unload(&L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson),
        cmocka_unit_test(test_required_in_teaching_order),
        cmocka_unit_test(test_default_lesson),
        cmocka_unit_test(test_heads_by_projection),
        cmocka_unit_test(test_seed002_scaled_inner_product),
        cmocka_unit_test(test_seed002_x_to_qkv),
        cmocka_unit_test(test_seed002_embedding),
        cmocka_unit_test(test_self_attention),
        cmocka_unit_test(test_mhsa_head_patterns),
        cmocka_unit_test(test_single_vs_multi),
        cmocka_unit_test(test_seed001_shapes),
        cmocka_unit_test(test_seed001_seq_len_1),
        cmocka_unit_test(test_causal),
        cmocka_unit_test(test_mask_fill),
        cmocka_unit_test(test_cross),
        cmocka_unit_test(test_additive),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_seed003_mask_then_scale),
        cmocka_unit_test(test_seed004),
        cmocka_unit_test(test_key_padding),
        cmocka_unit_test(test_biases),
        cmocka_unit_test(test_kv_cache),
        cmocka_unit_test(test_mqa),
        cmocka_unit_test(test_sliding_window),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
