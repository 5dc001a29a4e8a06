/* test_lesson.c: good lessons load into the right AttnConfig; generated
 * matrices follow the algorithm of lessons/FORMAT.md; narration and label
 * lookups; the trace JSON has the schema FORMAT.md documents; file-level
 * failures (missing, folder, too large). The bad-lesson catalogue is in
 * test_lesson_errors.c. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#include <fcntl.h>

#include <dirent.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "attn.h"
#include "lesson.h"
#include "test_util.h"

#define LESSONS ATTNVIZ_TESTS_DIR "/lessons"

static void load_ok(Lesson *L, const char *path)
{
    LessonError err;
    int rc = lesson_load(L, path, &err);
    if (rc != 0) printf("unexpected failure: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void parse_ok(Lesson *L, const char *text)
{
    LessonError err;
    int rc = lesson_parse(L, text, strlen(text), "inline.json", &err);
    if (rc != 0) printf("unexpected failure: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* Exact float comparison with the first difference printed. */
static void assert_floats(const float *got, const float *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            printf("%s[%d]: got %.9g, want %.9g\n", what, i, (double)got[i], (double)want[i]);
            fail();
        }
}

static AttnTrace *trace_of(const Lesson *L)
{
    char err[256];
    AttnTrace *t = attn_trace_create(&L->cfg, err, sizeof err);
    if (!t) printf("attn_trace_create: %s\n", err);
    assert_non_null(t);
    return t;
}

static void test_mhsa_tiny_config(void **state)
{
    (void)state;
    Lesson L;
    load_ok(&L, LESSONS "/mhsa-tiny.json");
    const AttnConfig *c = &L.cfg;
    assert_string_equal(L.id, "test-mhsa-tiny");
    assert_string_equal(L.title.text[LESSON_EN], "Two heads over 我喜欢跑步");
    assert_string_equal(L.title.text[LESSON_ZH], "两个头：我喜欢跑步");
    assert_non_null(L.summary.text[LESSON_EN]);
    assert_int_equal(L.order, 900);
    assert_int_equal(L.n_tokens, 3);
    assert_string_equal(L.tokens[1], "喜欢");
    assert_int_equal(L.n_source_tokens, 0);
    assert_true(L.seed == 7);
    assert_int_equal(c->attention, ATTN_DOT);
    assert_int_equal(c->cross, 0);
    assert_int_equal(c->n_q, 3);
    assert_int_equal(c->n_k, 3);
    assert_int_equal(c->d_model, 4);
    assert_int_equal(c->heads, 2);
    assert_int_equal(c->d_k, 2);
    assert_int_equal(c->d_v, 2);
    assert_int_equal(c->scale_kind, ATTN_SCALE_SQRT_DK);
    assert_int_equal(c->mask_kind, ATTN_MASK_CAUSAL);
    assert_true(c->mask_fill == -1e9f);
    const float X[] = {1, 0, 0.5f, -1, 0, 1, -0.5f, 2, 1, 1, 0, 0.25f};
    assert_floats(c->X, X, 12, "X");
    const float WQ[] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, -0.1f, -0.2f, -0.3f, -0.4f, 1, 0, 0, 1};
    assert_floats(c->W_Q, WQ, 16, "W_Q");
    const float bQ[] = {0, 0, 0.5f, 0.5f};
    assert_floats(c->b_Q, bQ, 4, "b_Q");
    assert_null(c->W_O); /* "W_O": null */
    assert_null(c->b_K);
    assert_null(c->Y);
    assert_non_null(c->W_K);
    assert_non_null(c->W_V);
    assert_int_equal(L.generated, (1u << LESSON_MAT_W_K) | (1u << LESSON_MAT_W_V));
    assert_int_equal(L.n_narration, 3);
    lesson_free(&L);
    assert_null(L.tokens);
    lesson_free(&L); /* twice is harmless */
}

/* The first values below were printed by the Python snippet in
 * lessons/FORMAT.md (run with /usr/bin/python3), not by this C code. */
static void test_generated_matches_python(void **state)
{
    (void)state;
    float x[3];
    lesson_random_fill(x, 3, 0, "X", 1.0);
    const float x_py[] = {-0.952695727f, 0.644516468f, -0.467984319f};
    assert_floats(x, x_py, 3, "generate(0, 'X', 2, 3)");

    float wq[2];
    lesson_random_fill(wq, 2, 0, "W_Q", 1.0 / sqrt(3.0));
    const float wq_py[] = {0.510743558f, -0.316386968f};
    assert_floats(wq, wq_py, 2, "generate(0, 'W_Q', 3, 2, fan_in=3)");

    float wo[3];
    lesson_random_fill(wo, 3, 42, "W_O", 1.0 / sqrt(4.0));
    const float wo_py[] = {-0.113050342f, -0.0485358238f, 0.450937867f};
    assert_floats(wo, wo_py, 3, "generate(42, 'W_O', 4, 3, fan_in=4)");

    /* the lesson's W_K and W_V: seed 7, fan_in d_model = 4 */
    Lesson L;
    load_ok(&L, LESSONS "/mhsa-tiny.json");
    const float wk_py[] = {-0.489636302f, 0.296424925f, -0.40667212f, -0.0870940089f};
    assert_floats(L.cfg.W_K, wk_py, 4, "mhsa-tiny W_K row 0");
    const float wv_py[] = {0.215624154f, 0.296684384f, 0.45513159f, 0.183068037f};
    assert_floats(L.cfg.W_V, wv_py, 4, "mhsa-tiny W_V row 0");
    lesson_free(&L);
    assert_true(lesson_fnv1a64("") == 0xcbf29ce484222325u); /* FNV-1a's offset basis */
}

static const char *const minimal = "{\"format\": \"attnviz-lesson/1\", \"id\": \"minimal\", \"title\": {\"en\": \"m\"},"
                                   " \"tokens\": [\"a\", \"b\", \"c\", \"d\", \"e\"], \"d_model\": 6, \"heads\": 3}";

static void test_generated_defaults(void **state)
{
    (void)state;
    Lesson a, b;
    parse_ok(&a, minimal);
    parse_ok(&b, minimal);
    const AttnConfig *c = &a.cfg;
    assert_int_equal(c->d_k, 2);
    assert_int_equal(c->d_v, 2);
    assert_int_equal(a.order, 1000);
    assert_true(a.seed == 0);
    assert_int_equal(a.generated, (1u << LESSON_MAT_X) | (1u << LESSON_MAT_W_Q) | (1u << LESSON_MAT_W_K) |
                                      (1u << LESSON_MAT_W_V) | (1u << LESSON_MAT_W_O));
    /* same file, same numbers */
    assert_memory_equal(a.X, b.X, sizeof(float) * 5 * 6);
    assert_memory_equal(a.W_O, b.W_O, sizeof(float) * 6 * 6);
    /* the bounds: X within ±1, weights within ±1/√fan_in, and they fill the range */
    float xmax = 0, wmax = 0, omax = 0;
    for (int i = 0; i < 30; i++) xmax = fmaxf(xmax, fabsf(a.X[i]));
    for (int i = 0; i < 36; i++) wmax = fmaxf(wmax, fabsf(a.W_Q[i]));
    for (int i = 0; i < 36; i++) omax = fmaxf(omax, fabsf(a.W_O[i]));
    assert_true(xmax <= 1.0f && xmax > 0.5f);
    assert_true(wmax <= (float)(1 / sqrt(6.0)) && wmax > 0.2f);
    assert_true(omax <= (float)(1 / sqrt(6.0))); /* fan_in of W_O = heads·d_v = 6 */
    /* each matrix has its own stream: W_Q and W_K differ */
    assert_true(memcmp(a.W_Q, a.W_K, sizeof(float) * 36) != 0);
    /* X matches the documented algorithm directly */
    float x[30];
    lesson_random_fill(x, 30, 0, "X", 1.0);
    assert_floats(a.X, x, 30, "X");
    lesson_free(&a);
    lesson_free(&b);

    /* another seed, other numbers */
    char other[512];
    snprintf(other, sizeof other, "%.*s, \"seed\": 1}", (int)strlen(minimal) - 1, minimal);
    parse_ok(&a, other);
    lesson_random_fill(x, 30, 1, "X", 1.0);
    assert_floats(a.X, x, 30, "X seed 1");
    lesson_free(&a);
}

static void test_additive_cross_config(void **state)
{
    (void)state;
    Lesson L;
    load_ok(&L, LESSONS "/additive-cross.json");
    const AttnConfig *c = &L.cfg;
    assert_int_equal(c->attention, ATTN_ADDITIVE);
    assert_int_equal(c->cross, 1);
    assert_int_equal(c->n_q, 2);
    assert_int_equal(c->n_k, 3);
    assert_int_equal(c->d_x, 2);
    assert_int_equal(c->d_y, 3);
    assert_int_equal(c->d_a, 2);
    assert_int_equal(c->mask_kind, ATTN_MASK_PADDING);
    assert_int_equal(c->mask[0], 1);
    assert_int_equal(c->mask[1], 1);
    assert_int_equal(c->mask[2], 0);
    assert_true(isinf(c->mask_fill) && c->mask_fill < 0);
    assert_int_equal(L.n_source_tokens, 3);
    assert_string_equal(L.source_tokens[2], "跑步");
    const float ba[] = {0.1f, -0.1f};
    assert_floats(c->b_a, ba, 2, "b_a");
    const float va[] = {1, -1};
    assert_floats(c->v_a, va, 2, "v_a");
    assert_int_equal(L.generated, 0);
    /* hidden row 0 by hand: [0.5, -0.5, 1, 0, 0]·W_a + b_a = [0.5, -1.0] */
    AttnTrace *t = trace_of(&L);
    const AttnStep *h = attn_trace_find_name(t, "hidden");
    assert_non_null(h);
    assert_true(fabsf(h->data[0] - tanhf(0.5f)) < 1e-6f);
    assert_true(fabsf(h->data[1] - tanhf(-1.0f)) < 1e-6f);
    const AttnStep *w = attn_trace_find_name(t, "weights");
    assert_true(w->data[2] == 0.0f && w->data[5] == 0.0f); /* the padded key */
    attn_trace_destroy(t);
    lesson_free(&L);
}

/* Every other way to set the config: explicit mask matrix, scale words and
 * numbers, explicit d_k/d_v, biases, additive self-attention with sizes. */
static void test_config_variants(void **state)
{
    (void)state;
    Lesson L;
    parse_ok(&L, "{\"format\": \"attnviz-lesson/1\", \"id\": \"v\", \"title\": {\"en\": \"v\"},"
                 " \"tokens\": [\"a\", \"b\"], \"d_model\": 3, \"heads\": 2, \"d_k\": 1, \"d_v\": 4,"
                 " \"mask\": [[1, 0], [0, 1]], \"mask_fill\": \"-inf\", \"scale\": 2.5,"
                 " \"b_V\": [1, 2, 3, 4, 5, 6, 7, 8], \"b_O\": [0, 0, 1]}");
    assert_int_equal(L.cfg.d_k, 1);
    assert_int_equal(L.cfg.d_v, 4);
    assert_int_equal(L.cfg.mask_kind, ATTN_MASK_MATRIX);
    const unsigned char m[] = {1, 0, 0, 1};
    assert_memory_equal(L.cfg.mask, m, 4);
    assert_int_equal(L.cfg.scale_kind, ATTN_SCALE_VALUE);
    assert_true(L.cfg.scale_value == 2.5f);
    assert_non_null(L.cfg.b_V);
    assert_true(L.cfg.b_V[7] == 8.0f);
    assert_non_null(L.cfg.W_O);
    assert_true(L.cfg.b_O[2] == 1.0f);
    lesson_free(&L);

    /* literal braces are {{ and }}; placeholders keep their text */
    parse_ok(&L, "{\"format\": \"attnviz-lesson/1\", \"id\": \"b\", \"title\": {\"en\": \"{not a placeholder\"},"
                 " \"summary\": {\"en\": \"sets {{a, b}} and {n_q} tokens\"}, \"tokens\": [\"a\"], \"d_model\": 1,"
                 " \"narration\": {\"intro\": {\"en\": \"{{}} {max_weight_if:none|sqrt_dk}\"}}}");
    assert_string_equal(L.summary.text[LESSON_EN], "sets {{a, b}} and {n_q} tokens");
    assert_string_equal(lesson_narration_key(&L, "intro", LESSON_EN), "{{}} {max_weight_if:none|sqrt_dk}");
    lesson_free(&L);

    const char *scales[] = {"\"sqrt_dk\"", "\"sqrt_dmodel\"", "\"none\""};
    const AttnScaleKind kinds[] = {ATTN_SCALE_SQRT_DK, ATTN_SCALE_SQRT_DMODEL, ATTN_SCALE_NONE};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text, "%.*s, \"scale\": %s, \"mask_fill\": -1e20}", (int)strlen(minimal) - 1, minimal,
                 scales[i]);
        parse_ok(&L, text);
        assert_int_equal(L.cfg.scale_kind, kinds[i]);
        assert_true(L.cfg.mask_fill == -1e20f);
        lesson_free(&L);
    }

    parse_ok(
        &L, "{\"format\": \"attnviz-lesson/1\", \"id\": \"a\", \"title\": {\"en\": \"a\"}, \"attention\": \"additive\","
            " \"tokens\": [\"a\", \"b\", \"c\"], \"d_x\": 2, \"d_a\": 3, \"mask\": \"causal\","
            " \"W_a\": [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], \"v_a\": [1, 1, 1]}");
    assert_int_equal(L.cfg.attention, ATTN_ADDITIVE);
    assert_int_equal(L.cfg.cross, 0);
    assert_int_equal(L.cfg.n_k, 3);
    assert_int_equal(L.cfg.d_x, 2);
    assert_int_equal(L.cfg.d_y, 2);
    assert_int_equal(L.cfg.d_a, 3);
    assert_int_equal(L.generated, 1u << LESSON_MAT_X);
    AttnTrace *t = trace_of(&L);
    attn_trace_destroy(t);
    lesson_free(&L);
}

static void test_narration(void **state)
{
    (void)state;
    Lesson L;
    load_ok(&L, LESSONS "/mhsa-tiny.json");
    AttnTrace *t = trace_of(&L);
    const AttnStep *w2 = attn_trace_find_name(t, "weights_2");
    const AttnStep *w1 = attn_trace_find_name(t, "weights_1");
    const AttnStep *s1 = attn_trace_find_name(t, "scores_1");
    assert_non_null(w2);
    /* by name first, then by kind; Chinese falls back to English */
    assert_string_equal(lesson_narration(&L, w2, LESSON_EN), "Head 2 weights.");
    assert_string_equal(lesson_narration(&L, w2, LESSON_ZH), "Head 2 weights.");
    assert_string_equal(lesson_narration(&L, w1, LESSON_EN),
                        "Softmax turns each row into weights that sum to 1 (d_k = {d_k}).");
    assert_string_equal(lesson_narration(&L, w1, LESSON_ZH), "softmax 把每一行变成和为 1 的权重。");
    assert_null(lesson_narration(&L, s1, LESSON_EN));
    assert_string_equal(lesson_narration_key(&L, "intro", LESSON_ZH), "每个词只看它前面的词。");
    assert_null(lesson_narration_key(&L, "nothing", LESSON_EN));
    assert_string_equal(lesson_text(&L.title, LESSON_ZH), "两个头：我喜欢跑步");
    assert_string_equal(lesson_text(&L.summary, LESSON_ZH), "测试课程。");
    attn_trace_destroy(t);
    lesson_free(&L);
}

static void test_labels(void **state)
{
    (void)state;
    Lesson L;
    load_ok(&L, LESSONS "/mhsa-tiny.json");
    AttnTrace *t = trace_of(&L);
    const char *const *q = (const char *const *)L.tokens;
    struct {
        const char *name;
        const char *const *rows, *const *cols;
    } want[] = {
        {"X", q, NULL},     {"W_Q", NULL, NULL}, {"b_Q", NULL, NULL}, {"Q", q, NULL},      {"K", q, NULL},
        {"V", q, NULL},     {"Q_2", q, NULL},    {"K_1", q, NULL},    {"scores_1", q, q},  {"scaled_2", q, q},
        {"masked_1", q, q}, {"weights_2", q, q}, {"head_1", q, NULL}, {"concat", q, NULL},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const AttnStep *s = attn_trace_find_name(t, want[i].name);
        if (!s) printf("no step %s\n", want[i].name);
        assert_non_null(s);
        assert_ptr_equal(lesson_row_labels(&L, s), want[i].rows);
        assert_ptr_equal(lesson_col_labels(&L, s), want[i].cols);
    }
    attn_trace_destroy(t);
    lesson_free(&L);

    load_ok(&L, LESSONS "/additive-cross.json");
    t = trace_of(&L);
    q = (const char *const *)L.tokens;
    const char *const *k = (const char *const *)L.source_tokens;
    struct {
        const char *name;
        const char *const *rows, *const *cols;
    } want2[] = {
        {"X", q, NULL},   {"Y", k, NULL},   {"W_a", NULL, NULL}, {"v_a", NULL, NULL},  {"hidden", NULL, NULL},
        {"scores", q, k}, {"masked", q, k}, {"weights", q, k},   {"context", q, NULL},
    };
    for (size_t i = 0; i < sizeof want2 / sizeof want2[0]; i++) {
        const AttnStep *s = attn_trace_find_name(t, want2[i].name);
        if (!s) printf("no step %s\n", want2[i].name);
        assert_non_null(s);
        assert_ptr_equal(lesson_row_labels(&L, s), want2[i].rows);
        assert_ptr_equal(lesson_col_labels(&L, s), want2[i].cols);
    }
    attn_trace_destroy(t);
    lesson_free(&L);

    /* cross dot attention: K, V and the key axis are the source tokens */
    parse_ok(&L, "{\"format\": \"attnviz-lesson/1\", \"id\": \"c\", \"title\": {\"en\": \"c\"},"
                 " \"tokens\": [\"a\", \"b\"], \"source_tokens\": [\"x\", \"y\", \"z\"], \"d_model\": 2,"
                 " \"Y\": [[1, 0], [0, 1], [1, 1]]}");
    assert_int_equal(L.cfg.cross, 1);
    assert_int_equal(L.cfg.n_k, 3);
    t = trace_of(&L);
    k = (const char *const *)L.source_tokens;
    assert_ptr_equal(lesson_row_labels(&L, attn_trace_find_name(t, "K")), k);
    assert_ptr_equal(lesson_row_labels(&L, attn_trace_find_name(t, "V_1")), k);
    assert_ptr_equal(lesson_row_labels(&L, attn_trace_find_name(t, "Y")), k);
    assert_ptr_equal(lesson_col_labels(&L, attn_trace_find_name(t, "weights_1")), k);
    assert_ptr_equal(lesson_row_labels(&L, attn_trace_find_name(t, "output")), (const char *const *)L.tokens);
    attn_trace_destroy(t);
    lesson_free(&L);
}

/* attn_trace_floats is what the trace limit is checked with: it must be
 * the engine's real size, for every kind of step. */
static void test_trace_floats_exact(void **state)
{
    (void)state;
    const char *paths[] = {LESSONS "/mhsa-tiny.json", LESSONS "/additive-cross.json"};
    const char *texts[] = {
        minimal,
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"v\", \"title\": {\"en\": \"v\"},"
        " \"tokens\": [\"a\", \"b\"], \"source_tokens\": [\"x\", \"y\", \"z\"], \"Y\": [[1,2,3],[4,5,6],[7,8,9]],"
        " \"d_model\": 3, \"heads\": 2, \"d_k\": 1, \"d_v\": 4, \"mask\": {\"padding\": [1, 0, 1]},"
        " \"b_Q\": [1, 2], \"b_K\": [1, 2], \"b_V\": [1, 2, 3, 4, 5, 6, 7, 8], \"b_O\": [0, 0, 1]}",
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"a\", \"title\": {\"en\": \"a\"}, \"attention\": \"additive\","
        " \"tokens\": [\"a\", \"b\", \"c\"], \"d_x\": 2, \"d_a\": 3,"
        " \"W_a\": [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], \"v_a\": [1, 1, 1]}",
    };
    for (int i = 0; i < 5; i++) {
        Lesson L;
        if (i < 2)
            load_ok(&L, paths[i]);
        else
            parse_ok(&L, texts[i - 2]);
        AttnTrace *t = trace_of(&L);
        double want = (double)t->data_bytes / sizeof(float);
        if ((double)attn_trace_floats(&L.cfg) != want)
            printf("lesson %d: attn_trace_floats %zu, trace %.0f\n", i, attn_trace_floats(&L.cfg), want);
        assert_true((double)attn_trace_floats(&L.cfg) == want);
        attn_trace_destroy(t);
        lesson_free(&L);
    }
}

/* trace_write_json output, read back with cJSON: the schema FORMAT.md documents. */
static void check_trace_json(const char *path)
{
    Lesson L;
    load_ok(&L, path);
    AttnTrace *t = trace_of(&L);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    assert_non_null(mem);
    assert_int_equal(trace_write_json(mem, &L, t), 0);
    fclose(mem);
    cJSON *doc = cJSON_ParseWithLength(buf, len);
    if (!doc) printf("trace of %s is not JSON near: %.40s\n", path, cJSON_GetErrorPtr());
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "format")->valuestring, "attnviz-trace/1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "lesson")->valuestring, L.id);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(doc, "config");
    assert_non_null(cfg);
    const char *keys[] = {"attention", "cross", "n_q", "n_k", "d_model", "heads", "d_k", "d_v", "scale", "mask"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!cJSON_GetObjectItemCaseSensitive(cfg, keys[i])) printf("config has no %s\n", keys[i]);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(cfg, keys[i]));
    }
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cfg, "attention")->valuestring,
                        L.cfg.attention == ATTN_ADDITIVE ? "additive" : "dot");
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cfg, "cross")), L.cfg.cross);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cfg, "n_q")->valueint, L.cfg.n_q);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cfg, "n_k")->valueint, L.cfg.n_k);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cfg, "scale")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cfg, "mask")->valuestring,
                        attn_mask_kind_name(L.cfg.mask_kind));
    /* the options, each only when the lesson has it */
    const cJSON *decode = cJSON_GetObjectItemCaseSensitive(cfg, "decode");
    if (L.cfg.decode == ATTN_DECODE_INCREMENTAL) {
        AttnDecodeMacs m;
        attn_decode_macs(t, &m);
        assert_string_equal(decode->valuestring, "incremental");
        const cJSON *macs = cJSON_GetObjectItemCaseSensitive(cfg, "macs");
        assert_true(cJSON_GetObjectItemCaseSensitive(macs, "incremental")->valuedouble == (double)m.incremental);
        assert_true(cJSON_GetObjectItemCaseSensitive(macs, "full")->valuedouble == (double)m.full);
        assert_true(cJSON_GetObjectItemCaseSensitive(macs, "recompute")->valuedouble == (double)m.recompute);
        assert_true(m.incremental < m.recompute);
    } else {
        assert_null(decode);
    }
    /* grouped K/V heads: their number, and the K/V head (1-based) each query head reads */
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(cfg, "kv_heads");
    const cJSON *kv_of = cJSON_GetObjectItemCaseSensitive(cfg, "kv_head_of");
    if (L.cfg.kv_heads > 0) {
        assert_int_equal(kv->valueint, L.cfg.kv_heads);
        assert_int_equal(cJSON_GetArraySize(kv_of), L.cfg.heads);
        int per = L.cfg.heads / L.cfg.kv_heads;
        for (int h = 0; h < L.cfg.heads; h++) assert_int_equal(cJSON_GetArrayItem(kv_of, h)->valueint, h / per + 1);
    } else {
        assert_null(kv);
        assert_null(kv_of);
    }
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(doc, "steps");
    assert_int_equal(cJSON_GetArraySize(steps), t->n_steps);
    int i = 0, saw_minus_inf = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, steps)
    {
        const AttnStep *st = &t->steps[i];
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(s, "index")->valueint, i);
        const char *kind = cJSON_GetObjectItemCaseSensitive(s, "kind")->valuestring;
        assert_true(attn_step_kind_from_name(kind) >= 0);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "name")->valuestring, st->name);
        const cJSON *head = cJSON_GetObjectItemCaseSensitive(s, "head");
        if (st->head > 0)
            assert_int_equal(head->valueint, st->head);
        else
            assert_true(cJSON_IsNull(head));
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(s, "at"); /* only on a step with a position */
        if (st->at > 0)
            assert_int_equal(at->valueint, st->at);
        else
            assert_null(at);
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(s, "shape");
        assert_int_equal(cJSON_GetArrayItem(shape, 0)->valueint, st->rows);
        assert_int_equal(cJSON_GetArrayItem(shape, 1)->valueint, st->cols);
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(s, "data");
        assert_int_equal(cJSON_GetArraySize(data), st->rows);
        for (int r = 0; r < st->rows; r++) {
            const cJSON *row = cJSON_GetArrayItem(data, r);
            assert_int_equal(cJSON_GetArraySize(row), st->cols);
            for (int col = 0; col < st->cols; col++) {
                const cJSON *v = cJSON_GetArrayItem(row, col);
                float want = st->data[(size_t)r * st->cols + col];
                if (cJSON_IsString(v)) {
                    assert_string_equal(v->valuestring, "-inf");
                    assert_true(isinf(want) && want < 0);
                    saw_minus_inf = 1;
                } else {
                    assert_true((float)v->valuedouble == want); /* %.9g round-trips float32 */
                }
            }
        }
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(s, "from");
        assert_int_equal(cJSON_GetArraySize(from), st->n_from);
        for (int f = 0; f < st->n_from; f++) {
            int idx = cJSON_GetArrayItem(from, f)->valueint;
            assert_int_equal(idx, st->from[f]);
            assert_true(idx < i); /* computed from earlier steps */
        }
        i++;
    }
    /* the additive lesson masks with -inf; mhsa-tiny with -1e9 */
    assert_int_equal(saw_minus_inf, isinf(L.cfg.mask_fill) && L.cfg.mask_kind != ATTN_MASK_NONE);
    cJSON_Delete(doc);
    free(buf);
    attn_trace_destroy(t);
    lesson_free(&L);
}

static void test_trace_json(void **state)
{
    (void)state;
    check_trace_json(LESSONS "/mhsa-tiny.json");
    check_trace_json(LESSONS "/additive-cross.json");
    check_trace_json(LESSONS "/kv-cache.json");
    check_trace_json(LESSONS "/gqa-decode.json");
}

/* The options of today's models survive lesson_write_json: the lesson read
 * back has the same config and gives the same trace. */
static void test_options_round_trip(void **state)
{
    (void)state;
    static const char *const paths[] = {LESSONS "/kv-cache.json", LESSONS "/gqa-decode.json",
                                        LESSONS "/gqa-window.json"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        Lesson L, back;
        load_ok(&L, paths[i]);
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        assert_non_null(mem);
        assert_int_equal(lesson_write_json(mem, &L), 0);
        fclose(mem);
        LessonError err;
        if (lesson_parse(&back, buf, len, "written", &err) != 0) fail_msg("%s written back: %s", paths[i], err.msg);
        assert_int_equal(back.cfg.decode, L.cfg.decode);
        assert_int_equal(back.cfg.kv_heads, L.cfg.kv_heads);
        assert_int_equal(back.cfg.mask_kind, L.cfg.mask_kind); /* a window is written as its matrix */
        if (L.cfg.mask_kind == ATTN_MASK_MATRIX)
            assert_memory_equal(back.cfg.mask, L.cfg.mask, (size_t)L.cfg.n_q * (size_t)L.cfg.n_k);
        AttnTrace *a = trace_of(&L), *b = trace_of(&back);
        assert_int_equal(a->n_steps, b->n_steps);
        for (int s = 0; s < a->n_steps; s++)
            assert_memory_equal(a->steps[s].data, b->steps[s].data,
                                sizeof(float) * (size_t)a->steps[s].rows * (size_t)a->steps[s].cols);
        attn_trace_destroy(a);
        attn_trace_destroy(b);
        lesson_free(&back);
        lesson_free(&L);
        free(buf);
    }
}

/* A sliding window is loaded as the matrix it means, written from its
 * definition here: causal i − w < j ≤ i, else |i − j| < w, and the key
 * padding on top; cross-attention counts positions the same way. */
static void test_window_mask(void **state)
{
    (void)state;
    static const char *const masks[] = {
        "{\"window\": 2}",
        "{\"window\": 3, \"causal\": false}",
        "{\"window\": 1}",
        "{\"window\": 2, \"padding\": [1, 1, 0, 1, 1]}",
        "{\"window\": 2, \"causal\": false, \"padding\": [0, 1, 1, 1, 0]}",
        "{\"window\": 99, \"causal\": true}",
    };
    static const int w[] = {2, 3, 1, 2, 2, 99}, causal[] = {1, 0, 1, 1, 0, 1};
    static const int pad[][5] = {{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1},
                                 {1, 1, 0, 1, 1}, {0, 1, 1, 1, 0}, {1, 1, 1, 1, 1}};
    for (int k = 0; k < 6; k++)
        for (int cross = 0; cross < 2; cross++) {
            char text[1024];
            snprintf(
                text, sizeof text,
                "{\"format\": \"attnviz-lesson/1\", \"id\": \"w\", \"title\": {\"en\": \"w\"},"
                " \"tokens\": [\"a\", \"b\", \"c\", \"d\"%s], %s \"d_model\": 2, \"mask\": %s}",
                cross ? "" : ", \"e\"",
                cross
                    ? "\"source_tokens\": [\"v\", \"w\", \"x\", \"y\", \"z\"], \"Y\": [[1,0],[0,1],[1,1],[0,0],[2,1]],"
                    : "",
                masks[k]);
            Lesson L;
            parse_ok(&L, text);
            assert_int_equal(L.cfg.mask_kind, ATTN_MASK_MATRIX);
            for (int i = 0; i < L.cfg.n_q; i++)
                for (int j = 0; j < L.cfg.n_k; j++) {
                    int want = (causal[k] ? i - w[k] < j && j <= i : abs(i - j) < w[k]) && pad[k][j];
                    if (attn_allowed(&L.cfg, i, j) != want)
                        fail_msg("%s%s: query %d, key %d: allowed %d, expected %d", masks[k], cross ? " (cross)" : "",
                                 i, j, attn_allowed(&L.cfg, i, j), want);
                }
            /* the window is known (for the trace's config) while the matrix is still that window */
            int is_causal = -1;
            assert_int_equal(lesson_window(&L, &is_causal), w[k]);
            assert_int_equal(is_causal, causal[k]);
            Lesson copy;
            assert_int_equal(lesson_copy(&copy, &L), 0);
            assert_int_equal(lesson_window(&copy, &is_causal), w[k]);
            /* one cell changed (the last query against key 0, as a click in the window does) is no window:
             * opened outside the band, or inside it made unlike row 0's, which sees key 0 in every window */
            unsigned char *cell = &copy.mask[(size_t)(copy.cfg.n_q - 1) * (size_t)copy.cfg.n_k];
            *cell = (unsigned char)!*cell;
            assert_int_equal(lesson_window(&copy, &is_causal), 0);
            lesson_free(&copy);
            lesson_free(&L);
        }
}

static void expect_fail(const char *path, const char *want_suffix)
{
    Lesson L;
    LessonError err;
    memset(&L, 0xAB, sizeof L);
    assert_int_equal(lesson_load(&L, path, &err), -1);
    char want[1024];
    snprintf(want, sizeof want, "%s: %s", path, want_suffix);
    if (strcmp(err.msg, want) != 0) printf("want %s\ngot  %s\n", want, err.msg);
    assert_string_equal(err.msg, want);
    Lesson zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&L, &zero, sizeof L);
}

static void test_file_errors(void **state)
{
    (void)state;
    expect_fail(ATTNVIZ_TESTS_DIR "/lessons/no-such-lesson.json", "expected a lesson file, found no such file");
    expect_fail(ATTNVIZ_TESTS_DIR "/lessons", "expected a lesson file (.json), found a folder");
    /* too large: a sparse file one byte over the limit, refused before reading */
    char path[] = "/tmp/attnviz-test-lesson-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)LESSON_MAX_FILE_BYTES + 1), 0);
    close(fd);
    expect_fail(path, "expected a lesson of at most 16777216 bytes (16 MiB), found 16777217 bytes");
    unlink(path);
    /* the same limit from memory, without reading the text */
    Lesson L;
    LessonError err;
    assert_int_equal(lesson_parse(&L, "", (size_t)LESSON_MAX_FILE_BYTES + 1, "big.json", &err), -1);
    assert_string_equal(err.msg,
                        "big.json: expected a lesson of at most 16777216 bytes (16 MiB), found 16777217 bytes");
}

/* A FIFO, a device and a pipe are refused with "not a regular file" and never
 * opened for reading: opening this FIFO for reading would block the test
 * forever, since nothing ever opens it for writing. */
static void test_not_regular_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-test-fifo-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/b.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_fail(fifo, "not a regular file: expected a lesson file (.json), found a FIFO (named pipe)");
    expect_fail("/dev/zero", "not a regular file: expected a lesson file (.json), found a character device");
    int p[2];
    assert_int_equal(pipe(p), 0);
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", p[0]);
    expect_fail(self, "not a regular file: expected a lesson file (.json), found a FIFO (named pipe)");
    close(p[0]);
    close(p[1]);
    unlink(fifo);
    rmdir(dir);
}

/* Names in dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* lesson_save_new writes a new file whole under the name it reports, or
 * nothing: a path that does not fit the caller's buffer is refused before
 * anything is written, never saved under a shortened name. The file has
 * the mode every file attnviz writes has (0666 less the umask), and a
 * save folder that is not one is named for what it is. */
static void test_save_new_files(void **state)
{
    (void)state;
    char dir[64], err[512], path[4096];
    assert_int_equal(test_scratch_dir(dir, sizeof dir, "save"), 0);
    Lesson L;
    load_ok(&L, LESSONS "/mhsa-tiny.json");
    /* the path needs strlen(dir) + 16 bytes and more: 24 is too few */
    char small[24];
    assert_int_equal(lesson_save_new(&L, dir, small, sizeof small, err, sizeof err), -1);
    if (!strstr(err, "too long")) fail_msg("expected \"too long\", found \"%s\"", err);
    assert_int_equal(entries(dir), 0);
    mode_t old = umask(002);
    assert_int_equal(lesson_save_new(&L, dir, path, sizeof path, err, sizeof err), 0);
    umask(old);
    assert_int_equal(entries(dir), 1);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0664);
    Lesson back;
    load_ok(&back, path);
    lesson_free(&back);
    unlink(path);
    /* a FIFO as the folder */
    char fifo[96];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(lesson_save_new(&L, fifo, path, sizeof path, err, sizeof err), -1);
    if (!strstr(err, "expected a folder to save lessons in, found a FIFO (named pipe)"))
        fail_msg("a FIFO as the folder: \"%s\"", err);
    unlink(fifo);
    /* a symbolic link to nothing as the folder is named for what it is */
    char link_path[96];
    snprintf(link_path, sizeof link_path, "%s/gone", dir);
    assert_int_equal(symlink("nowhere/at/all", link_path), 0);
    assert_int_equal(lesson_save_new(&L, link_path, path, sizeof path, err, sizeof err), -1);
    if (!strstr(err, "/gone: expected a folder to save lessons in, found a symbolic link to a missing target "
                     "('nowhere/at/all')"))
        fail_msg("a dangling link as the folder: \"%s\"", err);
    unlink(link_path);
    assert_int_equal(entries(dir), 0);
    /* a folder's name longer than a path may be: the message ends with its
     * reason, the name cut with "…" */
    char *huge = malloc(PATH_MAX + 200);
    assert_non_null(huge);
    snprintf(huge, PATH_MAX + 200, "%s/", dir);
    while (strlen(huge) < PATH_MAX + 100) strcat(huge, "abcdefghi/");
    assert_int_equal(lesson_save_new(&L, huge, path, sizeof path, err, sizeof err), -1);
    static const char reason[] = "…: cannot create the folder: File name too long";
    if (strlen(err) < sizeof reason || strcmp(err + strlen(err) - (sizeof reason - 1), reason) != 0)
        fail_msg("a folder's name too long: \"%s\"", err);
    free(huge);
    lesson_free(&L);
    assert_int_equal(rmdir(dir), 0);
}

/* What a save killed part-way left goes, and only that: a hidden file of a
 * save's temporary name, older than the run, holding nothing or the start
 * of a lesson as attnviz writes one. */
static void test_remove_stale_saves(void **state)
{
    (void)state;
    char dir[64], path[160];
    assert_int_equal(test_scratch_dir(dir, sizeof dir, "stale"), 0);
    static const struct {
        const char *name, *bytes;
        int old, goes;
    } files[] = {
        {".t.json.attnviz-Ab12Cd", "{\n  \"format\": \"attnviz-lesson/1\",\n  \"id\": \"t\",\n  \"ti", 1, 1},
        {".t.json.attnviz-Qw3rTy", "", 1, 1},
        {".t.json.attnviz-Zz9Zz9", "{\n  \"form", 1, 1},
        {".t.json.attnviz-My0wn1", "my notes\n", 1, 0},                            /* the user's bytes */
        {".u.json.attnviz-Ab12Cd", "{\n  \"format\": \"attnviz-lesson/1\"", 0, 0}, /* being written now */
        {".t.json.attnviz-Ab12C", "", 1, 0},                                       /* not mkstemp's six */
        {".t.json.attnviz-Ab12C!", "", 1, 0},
        {"t.json.attnviz-Ab12Cd", "", 1, 0}, /* not hidden */
        {".t.json.backup-Ab12Cd", "", 1, 0},
        {"t.json", "{\n  \"format\": \"attnviz-lesson/1\",\n  \"id\": \"t\"", 1, 0},
    };
    const size_t n = sizeof files / sizeof files[0];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[i].bytes, f);
        fclose(f);
        if (files[i].old) {
            struct timespec t[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
            assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
        }
    }
    /* a link under such a name, to an old empty file: neither goes */
    snprintf(path, sizeof path, "%s/.l.json.attnviz-Ln1k00", dir);
    assert_int_equal(symlink(".t.json.attnviz-Ab12C", path), 0);
    struct timespec before;
    clock_gettime(CLOCK_REALTIME, &before);
    before.tv_sec -= 60; /* the run began a minute ago; .u... was written since */
    assert_int_equal(lesson_remove_stale_saves(dir, &before), 3);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        if ((access(path, F_OK) != 0) != files[i].goes)
            fail_msg("%s: %s", files[i].name, files[i].goes ? "kept" : "removed");
    }
    snprintf(path, sizeof path, "%s/.l.json.attnviz-Ln1k00", dir);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(lesson_remove_stale_saves(dir, &before), 0);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A cut is at a character boundary and marked with "…"; a text that fits is
 * copied whole. */
static void test_text_copy(void **state)
{
    (void)state;
    char buf[8];
    assert_int_equal(lesson_text_copy(buf, sizeof buf, "abcdefg"), 0);
    assert_string_equal(buf, "abcdefg");
    assert_int_equal(lesson_text_copy(buf, sizeof buf, "abcdefgh"), 1);
    assert_string_equal(buf, "abcd…"); /* 4 bytes, the 3-byte mark, the NUL */
    /* 好 is 3 bytes: 好好 is 6, which does not fit before the mark */
    assert_int_equal(lesson_text_copy(buf, sizeof buf, "好好好"), 1);
    assert_string_equal(buf, "好…");
    char big[4097];
    char src[5000];
    for (int i = 0; i < 1666; i++) memcpy(src + 3 * i, "好", 3);
    src[4998] = 0;
    assert_int_equal(lesson_text_copy(big, sizeof big, src), 1);
    size_t n = strlen(big);
    assert_true(n <= 4096);
    assert_string_equal(big + n - 3, "…");
    assert_int_equal((n - 3) % 3, 0); /* whole characters before the mark */
    assert_int_equal(lesson_text_copy(buf, 3, "abc"), 1);
    assert_string_equal(buf, ""); /* not even the mark fits */
}

/* Messages bounded by a buffer are cut as texts are: at a character, "…". */
static void test_format_and_quote(void **state)
{
    (void)state;
    char buf[12];
    assert_int_equal(lesson_format(buf, sizeof buf, "%s=%d", "ab", 5), 0);
    assert_string_equal(buf, "ab=5");
    assert_int_equal(lesson_format(buf, sizeof buf, "--set '%s'", "喜欢喜欢"), 1);
    assert_string_equal(buf, "--set '…"); /* 喜 would be cut: it goes whole */
    assert_int_equal(lesson_format(buf, sizeof buf, "x%sy", "好好好好"), 1);
    assert_string_equal(buf, "x好好…");
    /* quoting a user's text: control characters, characters not seen or
     * reordering the line and bytes that are not UTF-8 escaped as
     * app_escape prints them, on one line, at most max bytes then "…" */
    char q[64];
    assert_string_equal(lesson_quote(q, sizeof q, "a\nb\tc\033[31m\xc2\x85\xc2\x9b\x7f\xff中", 100),
                        "a\\nb\\tc\\x1b[31m\\u0085\\u009b\\x7f\\xff中");
    assert_string_equal(lesson_quote(q, sizeof q, "ab\u202ecd\u200b", 100), "ab\\u202ecd\\u200b");
    assert_string_equal(lesson_quote(q, sizeof q, "喜欢跑步", 7), "喜欢…");
    assert_string_equal(lesson_quote(q, 8, "abcdefghij", 100), "abcd…");
    assert_string_equal(lesson_quote(q, sizeof q, "\xe5\x96", 100), "\\xe5\\x96"); /* a character cut short */
    assert_string_equal(lesson_quote(q, 10, "ab\033\033cd", 100), "ab\\x1b…");     /* an escape is never cut */
    /* a part of a text: no escape where the limit falls inside a character */
    assert_string_equal(lesson_quote_part(q, sizeof q, "x=喜喜喜喜", 14, 9), "x=喜喜…");
    assert_string_equal(lesson_quote_part(q, sizeof q, "x=喜喜喜喜", 8, 100), "x=喜喜");
}

/* Tokens are UTF-8 of printable characters, from a file and from anywhere else. */
static void test_check_token(void **state)
{
    (void)state;
    static const struct {
        const char *token, *why;
    } bad[] = {
        {"a\xff", "expected UTF-8 text, found the byte 0xff, which is not UTF-8"},
        {"\xc0\x80", "expected UTF-8 text, found the byte 0xc0, which is not UTF-8"},     /* an overlong NUL */
        {"\xed\xa0\x80", "expected UTF-8 text, found the byte 0xed, which is not UTF-8"}, /* a surrogate */
        {"\xe5\x96", "expected UTF-8 text, found the byte 0xe5, which is not UTF-8"},     /* cut short */
        {"a\xc2\x85", "expected a token of printable characters, found the control character U+0085"},
        {"\xc2\x9b[31m", "expected a token of printable characters, found the control character U+009B"},
        {"a\x7f", "expected a token of printable characters, found the control character U+007F"},
        {"a\033[31m", "expected a token on one line, found the control character 0x1b (escape)"},
        {"a\nb", "expected a token on one line, found the control character 0x0a (a line break)"},
        {"a\u202eb", "expected a token of visible characters, found U+202E (right-to-left override), which "
                     "reorders the text around it on screen"},
        {"\u2066a", "expected a token of visible characters, found U+2066 (left-to-right isolate), which reorders "
                    "the text around it on screen"},
        {"a\u200b", "expected a token of visible characters, found U+200B (zero width space), which is not seen on "
                    "screen"},
        {"\ufeffa", "expected a token of visible characters, found U+FEFF (zero width no-break space, a byte order "
                    "mark), which is not seen on screen"},
        {"a\u2028b", "expected a token of visible characters, found U+2028 (line separator), which breaks the line "
                     "in some programs and not in others"},
    };
    char why[200];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(lesson_check_token(bad[i].token, why, sizeof why), -1);
        assert_string_equal(why, bad[i].why);
    }
    assert_int_equal(lesson_check_token("喜欢", why, sizeof why), 0);
    assert_int_equal(lesson_check_token("\xc2\xa0x", why, sizeof why), 0); /* U+00A0 is printable */
    /* each character not seen or reordering what is, and its neighbours */
    static const uint32_t hidden[] = {0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A,
                                      0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0xFEFF};
    static const uint32_t shown[] = {0x061B, 0x200A, 0x2010, 0x2027, 0x202F, 0x2065, 0x206A, 0xFEFE, 0xFF01};
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0] + sizeof shown / sizeof shown[0]; i++) {
        int refused = i < sizeof hidden / sizeof hidden[0];
        uint32_t cp = refused ? hidden[i] : shown[i - sizeof hidden / sizeof hidden[0]];
        char token[8] = "x", want[32];
        if (cp < 0x800)
            token[1] = (char)(0xC0 | cp >> 6), token[2] = (char)(0x80 | (cp & 0x3F));
        else
            token[1] = (char)(0xE0 | cp >> 12), token[2] = (char)(0x80 | ((cp >> 6) & 0x3F)),
            token[3] = (char)(0x80 | (cp & 0x3F));
        snprintf(want, sizeof want, "found U+%04X (", (unsigned)cp);
        assert_int_equal(lesson_check_token(token, why, sizeof why), refused ? -1 : 0);
        if (refused && !strstr(why, want)) fail_msg("U+%04X: %s", (unsigned)cp, why);
    }
}

/* The trace's JSON is JSON whatever a lesson built in memory holds: control
 * characters escaped (C1 too), bytes that are not UTF-8 as U+FFFD. */
static void test_trace_json_escapes(void **state)
{
    (void)state;
    Lesson L;
    static const char json[] = "{\"format\": \"attnviz-lesson/1\", \"id\": \"esc\", \"title\": {\"en\": \"e\"},"
                               " \"tokens\": [\"a\", \"b\"], \"d_model\": 2}";
    LessonError le;
    if (lesson_parse(&L, json, strlen(json), "esc.json", &le) != 0) fail_msg("%s", le.msg);
    free(L.tokens[0]);
    L.tokens[0] = strdup("x\xc2\x9b[31m\033\x7f\xff\"\n中");
    AttnTrace *t = trace_of(&L);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    assert_non_null(mem);
    assert_int_equal(trace_write_json(mem, &L, t), 0);
    fclose(mem);
    assert_non_null(strstr(buf, "\"x\\u009b[31m\\u001b\\u007f\\ufffd\\\"\\n中\""));
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch == 0x1B || ch == 0x7F || ch == 0xFF) fail_msg("a raw 0x%02x in the trace", ch);
        if (ch == 0xC2 && i + 1 < len && (unsigned char)buf[i + 1] < 0xA0) fail_msg("a raw C1 control in the trace");
    }
    cJSON *doc = cJSON_ParseWithLength(buf, len);
    assert_non_null(doc);
    cJSON_Delete(doc);
    free(buf);
    attn_trace_destroy(t);
    lesson_free(&L);
}

/* Every size limit of FORMAT.md is reachable alone: at that limit, with the
 * other sizes small, the lesson loads (the trace limit does not refuse it). */
static void test_each_limit_reachable(void **state)
{
    (void)state;
    char text[1024];
    Lesson L;
    const char *head =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"l\", \"title\": {\"en\": \"l\"}, \"tokens\": [\"a\"]";
    /* d_model at its limit, one head, with W_O */
    snprintf(text, sizeof text, "%s, \"d_model\": %d}", head, LESSON_MAX_D_MODEL);
    parse_ok(&L, text);
    assert_non_null(L.cfg.W_O);
    assert_true(attn_trace_floats(&L.cfg) <= LESSON_MAX_TRACE_FLOATS);
    lesson_free(&L);
    /* heads·d_k and heads·d_v at their limit */
    snprintf(text, sizeof text, "%s, \"d_model\": 1, \"heads\": %d, \"d_k\": %d, \"d_v\": %d}", head, LESSON_MAX_HEADS,
             LESSON_MAX_D_MODEL / LESSON_MAX_HEADS, LESSON_MAX_D_MODEL / LESSON_MAX_HEADS);
    parse_ok(&L, text);
    lesson_free(&L);
    /* additive attention's widths at their limit (W_a is required, so the
     * config is built here rather than written out: 2 × 2048² numbers) */
    AttnConfig add;
    attn_config_init(&add); /* one head, as attn_trace_floats asserts */
    add.attention = ATTN_ADDITIVE;
    add.n_q = add.n_k = 1;
    add.d_x = add.d_a = LESSON_MAX_D_MODEL;
    assert_true(attn_trace_floats(&add) <= LESSON_MAX_TRACE_FLOATS);
    add.cross = 1;
    add.d_y = LESSON_MAX_D_MODEL;
    assert_true(attn_trace_floats(&add) <= LESSON_MAX_TRACE_FLOATS);
    Lesson A;
    LessonError err;
    /* one over the limit is refused by that limit, not another */
    snprintf(text, sizeof text, "%s, \"d_model\": %d}", head, LESSON_MAX_D_MODEL + 1);
    assert_int_equal(lesson_parse(&A, text, strlen(text), "o.json", &err), -1);
    assert_non_null(strstr(err.msg, "d_model: expected"));
}

/* Columns count characters: a Chinese character is one column. A BOM is
 * skipped and takes no column. */
static void test_positions(void **state)
{
    (void)state;
    Lesson L;
    LessonError err;
    const char *text =
        "\xEF\xBB\xBF{\"format\": \"attnviz-lesson/1\", \"id\": \"x\", \"title\": {\"en\": \"我喜欢\"},\n"
        "  \"tokens\": [\"我\", \"喜欢\", \"\"], \"d_model\": 2}";
    assert_int_equal(lesson_parse(&L, text, strlen(text), "p.json", &err), -1);
    assert_string_equal(err.msg, "p.json:2:25: tokens[2]: expected a token, found an empty string");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.col, 25);
    /* a BOM, then a lesson that is fine */
    char ok[512];
    snprintf(ok, sizeof ok, "\xEF\xBB\xBF%s", minimal);
    parse_ok(&L, ok);
    lesson_free(&L);
}

/* At the limits the lesson still loads: 1024 tokens, 64 heads, 64-byte tokens. */
static void test_limits_accepted(void **state)
{
    (void)state;
    char *text = test_tokens_json(
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"big\", \"title\": {\"en\": \"b\"}, \"tokens\": [",
        LESSON_MAX_TOKENS, "], \"d_model\": 2}");
    assert_non_null(text);
    Lesson L;
    parse_ok(&L, text);
    assert_int_equal(L.n_tokens, LESSON_MAX_TOKENS);
    lesson_free(&L);
    free(text);
    /* 1024 tokens and 64 heads together are over the trace limit (64 heads ×
     * 3 n_q×n_k steps alone are 201M numbers): refused, not attempted */
    const char *many = "{\"format\": \"attnviz-lesson/1\", \"id\": \"h\", \"title\": {\"en\": \"h\"},"
                       " \"tokens\": [\"a\", \"b\", \"c\"], \"d_model\": 64, \"heads\": 64, \"W_O\": null}";
    parse_ok(&L, many);
    assert_int_equal(L.cfg.heads, LESSON_MAX_HEADS);
    assert_int_equal(L.cfg.d_k, 1);
    lesson_free(&L);

    char tok[LESSON_MAX_TOKEN_BYTES + 1];
    memset(tok, 'a', LESSON_MAX_TOKEN_BYTES);
    tok[LESSON_MAX_TOKEN_BYTES] = 0;
    char small[512];
    snprintf(small, sizeof small,
             "{\"format\": \"attnviz-lesson/1\", \"id\": \"t\", \"title\": {\"en\": \"t\"},"
             " \"tokens\": [\"%s\"], \"d_model\": 1}",
             tok);
    parse_ok(&L, small);
    assert_int_equal((int)strlen(L.tokens[0]), LESSON_MAX_TOKEN_BYTES);
    lesson_free(&L);
}

/* float32's edge: 3.4028235e38 (FLT_MAX as printed) rounds to FLT_MAX and
 * loads; 3.4028236e38 is past the rounding midpoint and is refused (bad
 * lesson 69). */
static void test_float32_edge(void **state)
{
    (void)state;
    Lesson L;
    parse_ok(
        &L,
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"f\", \"title\": {\"en\": \"f\"},"
        " \"tokens\": [\"a\"], \"d_model\": 2, \"X\": [[3.4028235e38, -3.4028235e38]], \"mask_fill\": -3.4028235e38}");
    assert_true(L.cfg.X[0] == FLT_MAX && L.cfg.X[1] == -FLT_MAX);
    assert_true(L.cfg.mask_fill == -FLT_MAX);
    lesson_free(&L);
}

/* Duplicate keys are found however many keys come first: a 64-head lesson
 * may narrate all 64 heads' weights and repeat one at the end. */
static void test_duplicate_after_many_keys(void **state)
{
    (void)state;
    char text[8192];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "{\"format\": \"attnviz-lesson/1\", \"id\": \"d\", \"title\": {\"en\": \"d\"},"
                                 " \"tokens\": [\"a\"], \"d_model\": 64, \"heads\": 64, \"narration\": {");
    for (int h = 1; h <= 64; h++)
        at += (size_t)snprintf(text + at, sizeof text - at, "\"weights_%d\": {\"en\": \"w\"}, ", h);
    snprintf(text + at, sizeof text - at, "\"weights_3\": {\"en\": \"again\"}}}");
    Lesson L;
    LessonError err;
    assert_int_equal(lesson_parse(&L, text, strlen(text), "d.json", &err), -1);
    const char *want = "weights_3: expected each key once, found it a second time (first at line 1, column ";
    if (!strstr(err.msg, want)) printf("got %s\n", err.msg);
    assert_non_null(strstr(err.msg, want));
    /* and without the repeat it loads, with all 64 */
    snprintf(text + at - 2, sizeof text - at + 2, "}}");
    parse_ok(&L, text);
    assert_int_equal(L.n_narration, 64);
    lesson_free(&L);
}

/* Each step a lesson gives (X, Y, the weights, the biases) is the lesson
 * matrix of its name; a computed step is none. */
static void test_matrix_of_step(void **state)
{
    (void)state;
    static const char *const lessons[] = {
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"mats\", \"title\": {\"en\": \"M\"},"
        " \"tokens\": [\"a\", \"b\"], \"source_tokens\": [\"x\", \"y\", \"z\"], \"d_model\": 4, \"heads\": 2,"
        " \"seed\": 1, \"Y\": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],"
        " \"b_Q\": [1, 2, 3, 4], \"b_K\": [1, 2, 3, 4], \"b_V\": [1, 2, 3, 4], \"b_O\": [1, 2, 3, 4]}",
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"mats-add\", \"title\": {\"en\": \"M\"},"
        " \"attention\": \"additive\", \"tokens\": [\"a\", \"b\"], \"d_x\": 2, \"d_a\": 3, \"seed\": 1,"
        " \"W_a\": [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], \"b_a\": [1, 2, 3], \"v_a\": [1, 2, 3]}",
    };
    for (size_t k = 0; k < sizeof lessons / sizeof lessons[0]; k++) {
        Lesson L;
        parse_ok(&L, lessons[k]);
        char err[256];
        AttnTrace *t = attn_trace_create(&L.cfg, err, sizeof err);
        assert_non_null(t);
        int given = 0;
        for (int i = 0; i < t->n_steps; i++) {
            const AttnStep *s = &t->steps[i];
            int m = lesson_matrix_of_step(s);
            if (attn_step_kind_flags((AttnStepKind)s->kind) & ATTN_KIND_GIVEN) {
                given++;
                assert_string_equal(lesson_matrix_name(m), s->name);
            } else {
                assert_int_equal(m, -1);
            }
        }
        assert_int_equal(given, k == 0 ? 10 : 4); /* X Y W_Q b_Q W_K b_K W_V b_V W_O b_O; X W_a b_a v_a */
        attn_trace_destroy(t);
        lesson_free(&L);
    }
}

/* What cJSON reads and what the locator checks (src/lesson/lesson_json.h):
 * escapes and surrogate pairs come out as cJSON decodes them, numbers as its
 * strtod reads them, keys are compared decoded (so "h\u0065ads" repeats
 * "heads"), and messages keep the locator's positions and decoded paths. */
static void test_values_from_cjson(void **state)
{
    (void)state;
    Lesson L;
    LessonError err;
    parse_ok(&L, "{\"format\": \"attnviz-lesson/1\", \"id\": \"e\", \"title\": {\"en\": \"a\\/b \\u6211\", "
                 "\"\\u007ah\": \"\\ud83d\\ude00\"}, \"summary\": {\"en\": \"x\\ny\\tz\"},"
                 " \"tokens\": [\"\\u6211\", \"\\u00e9t\\u00C9\"], \"d_model\": 1,"
                 " \"X\": [[0.1000000000000000055511151231257827021181583404541015625],"
                 " [-12345678901234567890123456789012345678901234567890123456789012345678901234567890e-80]]}");
    assert_string_equal(L.title.text[LESSON_EN], "a/b 我");
    assert_string_equal(L.summary.text[LESSON_EN], "x\ny\tz");
    assert_string_equal(L.title.text[LESSON_ZH], "😀");
    assert_string_equal(L.tokens[0], "我");
    assert_string_equal(L.tokens[1], "étÉ");
    assert_true(L.cfg.X[0] == 0.1f);
    assert_true(L.cfg.X[1] == (float)-1.2345678901234567890e-1);
    lesson_free(&L);

    const char *dup = "{\"format\": \"attnviz-lesson/1\", \"heads\": 1, \"h\\u0065ads\": 1}";
    assert_int_equal(lesson_parse(&L, dup, strlen(dup), "dup.json", &err), -1);
    assert_string_equal(
        err.msg, "dup.json:1:44: heads: expected each key once, found it a second time (first at line 1, column 32)");

    /* an error inside a value whose key is escaped: the path is decoded */
    const char *nul = "{\"format\": \"attnviz-lesson/1\", \"ti\\u0074le\": {\"en\": \"a\\u0000\"}}";
    assert_int_equal(lesson_parse(&L, nul, strlen(nul), "nul.json", &err), -1);
    assert_string_equal(err.msg,
                        "nul.json:1:55: title.en: expected text, found \\u0000 (a NUL character is not allowed)");

    /* numbers of up to 127 characters are read; longer ones are refused */
    char num[512];
    for (int n = 127; n <= 128; n++) {
        char digits[160];
        memset(digits, '7', sizeof digits);
        digits[0] = '0', digits[1] = '.';
        digits[n] = 0;
        snprintf(num, sizeof num,
                 "{\"format\": \"attnviz-lesson/1\", \"id\": \"n\", \"title\": {\"en\": \"n\"},"
                 " \"tokens\": [\"a\"], \"d_model\": 1, \"X\": [[%s]]}",
                 digits);
        if (n == 127) {
            parse_ok(&L, num);
            assert_true(L.cfg.X[0] == (float)strtod(digits, NULL));
            lesson_free(&L);
        } else {
            assert_int_equal(lesson_parse(&L, num, strlen(num), "num.json", &err), -1);
            assert_string_equal(err.msg,
                                "num.json:1:103: X[0][0]: expected a number of at most 127 characters, found 128");
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mhsa_tiny_config),
        cmocka_unit_test(test_generated_matches_python),
        cmocka_unit_test(test_generated_defaults),
        cmocka_unit_test(test_additive_cross_config),
        cmocka_unit_test(test_config_variants),
        cmocka_unit_test(test_options_round_trip),
        cmocka_unit_test(test_window_mask),
        cmocka_unit_test(test_narration),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_trace_floats_exact),
        cmocka_unit_test(test_trace_json),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_not_regular_files),
        cmocka_unit_test(test_save_new_files),
        cmocka_unit_test(test_remove_stale_saves),
        cmocka_unit_test(test_text_copy),
        cmocka_unit_test(test_each_limit_reachable),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_format_and_quote),
        cmocka_unit_test(test_check_token),
        cmocka_unit_test(test_trace_json_escapes),
        cmocka_unit_test(test_limits_accepted),
        cmocka_unit_test(test_float32_edge),
        cmocka_unit_test(test_duplicate_after_many_keys),
        cmocka_unit_test(test_values_from_cjson),
        cmocka_unit_test(test_matrix_of_step),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
