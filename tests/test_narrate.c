/* test_narrate.c: narrate_fill and narrate_check (src/view/narrate.c).
 *
 * A small lesson is parsed from memory; every expected string is either
 * fixed by the lesson's sizes (d_k = 2, √2) or formatted here from the
 * trace's own numbers, so the tests say what each placeholder means.
 */
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

/* Two heads over 3 tokens, causal, with W_O: the multi-head lesson's numbers. */
#define LESSON_HEAD                                                                                                    \
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"t\", \"title\": {\"en\": \"t\"},"                                    \
    " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 4, \"heads\": 2,"                                    \
    " \"X\": [[1,0,0,0],[0,1,0,1],[0,0,1,1]],"                                                                         \
    " \"W_Q\": [[0,0,2,0],[2,0,0,2],[0,2,0,0],[0,0,0,0]],"                                                             \
    " \"W_K\": [[0,0,0,2],[0,2,2,0],[2,0,0,0],[0,0,0,0]],"                                                             \
    " \"W_V\": [[0,0,1,0],[1,0,0,1],[0,1,0,0],[0,0,0,0]],"                                                             \
    " \"W_O\": [[1,0,1,0],[0,1,0,1],[1,0,-1,0],[0,1,0,-1]]"

typedef struct Fixture {
    Lesson lesson;
    AttnTrace *trace;
} Fixture;

static void fixture_load(Fixture *f, const char *json)
{
    LessonError err;
    if (lesson_parse(&f->lesson, json, strlen(json), "test.json", &err) != 0) fail_msg("%s", err.msg);
    char msg[256];
    f->trace = attn_trace_create(&f->lesson.cfg, msg, sizeof msg);
    if (!f->trace) fail_msg("%s", msg);
}

static void fixture_free(Fixture *f)
{
    attn_trace_destroy(f->trace);
    lesson_free(&f->lesson);
}

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    fixture_load(f, LESSON_HEAD ", \"mask\": \"causal\"}");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    free(*state);
    return 0;
}

static const AttnStep *step(const Fixture *f, const char *name)
{
    const AttnStep *s = attn_trace_find_name(f->trace, name);
    if (!s) fail_msg("no step %s", name);
    return s;
}

/* Fills text for a step (NULL: no step) and asserts the result. */
static void expect_fill(const Fixture *f, const char *stepname, LessonLang lang, const char *text, const char *want)
{
    char out[1024];
    const AttnStep *s = stepname ? step(f, stepname) : NULL;
    int rc = narrate_fill(out, sizeof out, text, &f->lesson, f->trace, s, lang);
    if (rc != 0) fail_msg("'%s' failed: %s", text, out);
    if (strcmp(out, want) != 0) fail_msg("'%s' gave '%s', expected '%s'", text, out, want);
}

/* Fills text and asserts failure with a message containing `part`. */
static void expect_error(const Fixture *f, const char *stepname, const char *text, const char *part)
{
    char out[1024];
    const AttnStep *s = stepname ? step(f, stepname) : NULL;
    int rc = narrate_fill(out, sizeof out, text, &f->lesson, f->trace, s, LESSON_EN);
    if (rc != -1) fail_msg("'%s' should fail, gave '%s'", text, out);
    if (!strstr(out, part)) fail_msg("'%s': message '%s' does not mention '%s'", text, out, part);
}

static void test_plain_and_escapes(void **state)
{
    const Fixture *f = *state;
    expect_fill(f, NULL, LESSON_EN, "", "");
    expect_fill(f, NULL, LESSON_EN, "no placeholders, 中文也行", "no placeholders, 中文也行");
    expect_fill(f, NULL, LESSON_EN, "a {{b}} c {{{d_k}}}", "a {b} c {2}");
}

static void test_sizes(void **state)
{
    const Fixture *f = *state;
    expect_fill(f, NULL, LESSON_EN, "{d_model} {d_k} {d_v} {heads} {n} {n_q} {n_k}", "4 2 2 2 3 3 3");
    expect_fill(f, NULL, LESSON_EN, "{scale} {sqrt_expr} {sqrt_dk} {sqrt_dmodel}", "1.414 √2 1.414 2");
    expect_fill(f, NULL, LESSON_EN, "{mask_fill}", "−∞");
    expect_error(f, NULL, "{d_x}", "only defined for additive");
    expect_error(f, NULL, "{d_k:1}", "takes no argument");
}

/* {scale} and {sqrt_expr} follow the lesson's "scale". */
static void test_scale_kinds(void **state)
{
    (void)state;
    const char *scales[][3] = {
        {"\"sqrt_dmodel\"", "2", "√4"},
        {"\"none\"", "1", "1"},
        {"3", "3", "3"},
        {"0.5", "0.5", "0.5"},
    };
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        char json[2048];
        snprintf(json, sizeof json, LESSON_HEAD ", \"scale\": %s, \"mask_fill\": -1e9}", scales[i][0]);
        Fixture f;
        fixture_load(&f, json);
        char want[64];
        snprintf(want, sizeof want, "%s %s", scales[i][1], scales[i][2]);
        expect_fill(&f, NULL, LESSON_EN, "{scale} {sqrt_expr}", want);
        expect_fill(&f, NULL, LESSON_EN, "{mask_fill}", "−1e9");
        fixture_free(&f);
    }
}

static void test_step_fields(void **state)
{
    const Fixture *f = *state;
    expect_fill(f, "Q_2", LESSON_EN, "{head} {step} {rows}×{cols} [{col_from}, {col_to})", "2 Q_2 3×2 [2, 4)");
    expect_fill(f, "V_1", LESSON_EN, "[{col_from}, {col_to})", "[0, 2)");
    expect_fill(f, "W_O", LESSON_EN, "{step} {rows}×{cols}", "W_O 4×4");
    expect_error(f, "X", "{head}", "belongs to no head");
    expect_error(f, "concat", "{col_from}", "belongs to no head");
    expect_error(f, NULL, "{rows}", "needs a step");
}

/* Grouped K/V heads: {kv_heads}, and which K/V head a step is or reads, with its query heads. */
static void test_kv_groups(void **state)
{
    (void)state;
    Fixture f;
    fixture_load(&f, "{\"format\": \"attnviz-lesson/1\", \"id\": \"t\", \"title\": {\"en\": \"t\"},"
                     " \"tokens\": [\"a\", \"b\"], \"d_model\": 8, \"heads\": 4, \"kv_heads\": 2}");
    expect_fill(&f, NULL, LESSON_EN, "{heads} {kv_heads}", "4 2");
    expect_fill(&f, "K_2", LESSON_EN, "{head} {kv_head} {kv_group}", "2 2 3–4");
    expect_fill(&f, "V_1", LESSON_EN, "{kv_head} {kv_group}", "1 1–2");
    expect_fill(&f, "scores_3", LESSON_EN, "{head} {kv_head} {kv_group}", "3 2 3–4");
    expect_fill(&f, "weights_2", LESSON_EN, "{kv_head}", "1");
    expect_error(&f, "K", "{kv_head}", "belongs to no head");
    expect_error(&f, NULL, "{kv_group}", "needs a step");
    expect_error(&f, NULL, "{value_heads:2:weights_1[0][0]}", "grouped K/V heads");
    fixture_free(&f);
    /* without kv_heads every head has its own */
    fixture_load(&f, LESSON_HEAD "}");
    expect_fill(&f, "scores_2", LESSON_EN, "{kv_heads} {kv_head} {kv_group}", "2 2 2");
    fixture_free(&f);
}

/* Incremental decoding's multiply-adds, as attn_decode_macs counts them. */
static void test_macs(void **state)
{
    const Fixture *f = *state;
    expect_error(f, NULL, "{macs:full}", "does not decode token by token");
    Fixture d;
    fixture_load(&d, LESSON_HEAD ", \"mask\": \"causal\", \"decode\": \"incremental\"}");
    AttnDecodeMacs m;
    attn_decode_macs(d.trace, &m);
    char want[96];
    snprintf(want, sizeof want, "%llu %llu %llu", (unsigned long long)m.incremental, (unsigned long long)m.full,
             (unsigned long long)m.recompute);
    expect_fill(&d, NULL, LESSON_EN, "{macs:incremental} {macs:full} {macs:recompute}", want);
    /* 3 tokens, d_model 4, two heads of 2, W_O: Q, K, V 3·4·12 = 144, scores and sums 2·9·4 = 72, W_O 3·4·4 = 48 */
    expect_fill(&d, NULL, LESSON_EN, "{macs:full}", "264");
    expect_error(&d, NULL, "{macs:all}", "expected {macs:incremental}");
    expect_error(&d, NULL, "{macs}", "expected {macs:incremental}");
    fixture_free(&d);
}

static void test_tokens(void **state)
{
    const Fixture *f = *state;
    expect_fill(f, NULL, LESSON_EN, "{tokens}", "我, 喜欢, 跑步");
    /* in Chinese running text a token is quoted, so that 我 reads as the token */
    /* quoted items in a row take no 、 between them (GB/T 15834) */
    expect_fill(f, NULL, LESSON_ZH, "{tokens}", "「我」「喜欢」「跑步」");
    expect_fill(f, NULL, LESSON_ZH, "{token:1}把权重给了{key_token:2}", "「喜欢」把权重给了「跑步」");
    expect_fill(f, NULL, LESSON_EN, "{key_tokens}", "我, 喜欢, 跑步");
    expect_fill(f, NULL, LESSON_EN, "{token:1} {key_token:2}", "喜欢 跑步");
    expect_error(f, NULL, "{token:3}", "only 3 tokens");
    expect_error(f, NULL, "{token}", "0-based token number");
}

/* What {row_max_token} {row_max_weight} fill to for a row, worked out here:
 * the keys equal to the largest weight as %.4g prints them, or "every key
 * alike (uniform)" when they are all the keys weighted above 0. */
static void expected_winners(const float *row, int n, char *const *tokens, char *want, size_t len)
{
    char top[32], here[32], names[256] = "";
    float mx = row[0];
    for (int j = 1; j < n; j++)
        if (row[j] > mx) mx = row[j];
    snprintf(top, sizeof top, "%.4g", (double)mx);
    int tied = 0, positive = 0;
    for (int j = 0; j < n; j++) {
        positive += row[j] > 0;
        snprintf(here, sizeof here, "%.4g", (double)row[j]);
        if (strcmp(here, top) != 0) continue;
        size_t at = strlen(names);
        snprintf(names + at, sizeof names - at, "%s%s", tied++ ? ", " : "", tokens[j]);
    }
    snprintf(want, len, "%s %s", tied > 1 && tied == positive ? "every key alike (uniform)" : names, top);
}

/* The head's weights: computed here from the trace, formatted %.4g. */
static void test_weights(void **state)
{
    const Fixture *f = *state;
    for (int h = 1; h <= 2; h++) {
        char name[32], text[64], want[256];
        snprintf(name, sizeof name, "weights_%d", h);
        const AttnStep *w = step(f, name);
        for (int r = 0; r < 3; r++) {
            snprintf(text, sizeof text, "{row_max_token:%d} {row_max_weight:%d}", r, r);
            expected_winners(w->data + r * 3, 3, f->lesson.tokens, want, sizeof want);
            expect_fill(f, name, LESSON_EN, text, want);
            /* any step of the same head means the same weights */
            snprintf(name, sizeof name, "scores_%d", h);
            expect_fill(f, name, LESSON_EN, text, want);
            snprintf(name, sizeof name, "weights_%d", h);
        }
        float mx = w->data[0], mn = w->data[0];
        for (int k = 1; k < 9; k++) {
            if (w->data[k] > mx) mx = w->data[k];
            if (w->data[k] < mn) mn = w->data[k];
        }
        snprintf(want, sizeof want, "%.4g %.4g", (double)mx, (double)mn);
        expect_fill(f, name, LESSON_EN, "{max_weight} {min_weight}", want);
        /* causal: the smallest weight is an exact zero */
        assert_true(mn == 0.0f);
    }
    /* a step of no head: the first softmax (head 1); {row_max_token} alone is row 0 */
    const AttnStep *w1 = step(f, "weights_1");
    char want[64];
    snprintf(want, sizeof want, "%.4g", (double)w1->data[0]);
    expect_fill(f, "X", LESSON_EN, "{row_max_weight}", want);
    expect_fill(f, "X", LESSON_EN, "{row_max_token}", "我"); /* causal: row 0 sees only 我 */
    expect_error(f, "X", "{row_max_token:3}", "out of range");
    expect_error(f, "X", "{row_max_token:x}", "row number");
}

/* {max_weight_if:...}: the same scores and mask under another divisor. */
static void test_max_weight_if(void **state)
{
    const Fixture *f = *state;
    const AttnStep *sc = step(f, "scores_2");
    double best[3] = {0, 0, 0}, div[3] = {1.0, sqrt(2.0), 2.0};
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 3; i++) {
            double m = -1e30, z = 0;
            for (int j = 0; j <= i; j++) m = fmax(m, sc->data[i * 3 + j] / div[d]);
            for (int j = 0; j <= i; j++) z += exp(sc->data[i * 3 + j] / div[d] - m);
            for (int j = 0; j <= i; j++) best[d] = fmax(best[d], exp(sc->data[i * 3 + j] / div[d] - m) / z);
        }
    char want[128];
    snprintf(want, sizeof want, "%.4g %.4g %.4g", best[0], best[1], best[2]);
    expect_fill(f, "weights_2", LESSON_EN, "{max_weight_if:none} {max_weight_if:sqrt_dk} {max_weight_if:sqrt_dmodel}",
                want);
    /* sqrt_dk is this lesson's own scaling: it must agree with {max_weight} */
    char a[64], b[64];
    const AttnStep *w = step(f, "weights_2");
    assert_int_equal(narrate_fill(a, sizeof a, "{max_weight_if:sqrt_dk}", &f->lesson, f->trace, w, LESSON_EN), 0);
    assert_int_equal(narrate_fill(b, sizeof b, "{max_weight}", &f->lesson, f->trace, w, LESSON_EN), 0);
    assert_string_equal(a, b);
    expect_error(f, "weights_2", "{max_weight_if:sqrt_d}", "expected none, sqrt_dk or sqrt_dmodel");
}

static void test_value(void **state)
{
    const Fixture *f = *state;
    const AttnStep *s = step(f, "scaled_1");
    char want[64];
    snprintf(want, sizeof want, "%.4g", (double)s->data[1 * 3 + 2]);
    expect_fill(f, NULL, LESSON_EN, "{value:scaled_1[1][2]}", want);
    snprintf(want, sizeof want, "%.7g", (double)s->data[1 * 3 + 2]);
    expect_fill(f, NULL, LESSON_EN, "{value:scaled_1[1][2]:7}", want);
    expect_fill(f, NULL, LESSON_EN, "{value:W_O[2][2]}", "−1");
    /* a negative factor of a product gets parentheses */
    expect_fill(f, NULL, LESSON_EN, "2·{value:W_O[2][2]} 2×{value:W_O[2][2]} {value:W_O[2][2]}·2 2·{value:W_O[0][0]}",
                "2·(−1) 2×(−1) −1·2 2·1");
    expect_fill(f, NULL, LESSON_EN, "{value:masked_1[0][2]}", "−∞");
    expect_fill(f, NULL, LESSON_EN, "{value:weights_1[0][2]}", "0");
    expect_error(f, NULL, "{value:nope[0][0]}", "no step named 'nope'");
    expect_error(f, NULL, "{value:scores_1[3][0]}", "outside scores_1, which is 3×3");
    expect_error(f, NULL, "{value:scores_1[0]}", "NAME[I][J]");
    expect_error(f, NULL, "{value:scores_1[0][0]:0}", "precision");
    expect_error(f, NULL, "{value}", "needs a cell");
}

/* {value_heads:H:...}: the same lesson cut into H heads, traced here too. */
static void test_value_heads(void **state)
{
    const Fixture *f = *state;
    AttnConfig one = f->lesson.cfg;
    one.d_k *= one.heads, one.d_v *= one.heads, one.heads = 1;
    char msg[256], want[64];
    AttnTrace *t = attn_trace_create(&one, msg, sizeof msg);
    if (!t) fail_msg("%s", msg);
    const AttnStep *w = attn_trace_find_name(t, "weights_1");
    assert_non_null(w);
    snprintf(want, sizeof want, "%.4g", (double)w->data[1 * 3 + 2]);
    expect_fill(f, "X", LESSON_EN, "{value_heads:1:weights_1[1][2]}", want);
    attn_trace_destroy(t);
    expect_fill(f, "X", LESSON_EN, "{value_heads:2:W_O[2][2]}", "−1");
    expect_error(f, "X", "{value_heads:3:weights_1[0][0]}", "must divide");
    expect_error(f, "X", "{value_heads:1:weights_2[0][0]}", "no step named 'weights_2'");
    expect_error(f, "X", "{value_heads:weights_1[0][0]}", "expected {value_heads:H:NAME[I][J]}");
}

/* A per-head name without its head means the narrated step's own head, so
 * one text for a step kind quotes each head's own cells. */
static void test_value_own_head(void **state)
{
    const Fixture *f = *state;
    for (int h = 1; h <= 2; h++) {
        char name[32], want[64];
        snprintf(name, sizeof name, "scores_%d", h);
        const AttnStep *s = step(f, name);
        snprintf(want, sizeof want, "%.4g %.4g", (double)s->data[1 * 3 + 0], (double)step(f, "W_O")->data[0]);
        /* from the head's own steps and from another step of the same head */
        expect_fill(f, name, LESSON_EN, "{value:scores[1][0]} {value:W_O[0][0]}", want);
        snprintf(name, sizeof name, "weights_%d", h);
        expect_fill(f, name, LESSON_EN, "{value:scores[1][0]} {value:W_O[0][0]}", want);
    }
    expect_error(f, "concat", "{value:scores[0][0]}", "belongs to no head");
    expect_error(f, NULL, "{value:weights[0][0]}", "no step named 'weights'");
}

/* Exponents as a teacher writes them: no '+', no leading zeros. */
static void test_exponents(void **state)
{
    (void)state;
    Fixture f;
    fixture_load(&f,
                 "{\"format\": \"attnviz-lesson/1\", \"id\": \"e\", \"title\": {\"en\": \"e\"},"
                 " \"tokens\": [\"a\"], \"d_model\": 2, \"X\": [[0.00005, 25000000000]],"
                 " \"W_Q\": [[1, 0], [0, 1]], \"W_K\": [[1, 0], [0, 1]], \"W_V\": [[1, 0], [0, 1]], \"W_O\": null}");
    expect_fill(&f, NULL, LESSON_EN, "{value:X[0][0]} {value:X[0][1]} {value:X[0][1]:2}", "5e-5 2.5e10 2.5e10");
    fixture_free(&f);
}

static void test_errors(void **state)
{
    const Fixture *f = *state;
    expect_error(f, NULL, "the {dk} of it", "unknown placeholder {dk}");
    expect_error(f, NULL, "{d_k", "never closed");
    expect_error(f, NULL, "d_k}", "lone '}'");
    expect_error(f, NULL, "{}", "empty");
    /* too long for the buffer: an error, and out still holds a terminated message */
    char small[48];
    memset(small, 'x', sizeof small);
    int rc = narrate_fill(small, sizeof small, "0123456789012345678901234567890123456789012345678901234567890123",
                          &f->lesson, f->trace, NULL, LESSON_EN);
    assert_int_equal(rc, -1);
    assert_non_null(memchr(small, '\0', sizeof small));
    assert_non_null(strstr(small, "longer than"));
}

/* narrate_when: 1, 0, or -1 (the message then in msg), asserted. */
static void expect_when(const Fixture *f, const char *stepname, const char *cond, int want)
{
    char msg[512] = "";
    const AttnStep *s = stepname ? step(f, stepname) : NULL;
    int got = narrate_when(cond, &f->lesson, f->trace, s, msg, sizeof msg);
    if (got != want) fail_msg("when \"%s\" gave %d, expected %d (%s)", cond, got, want, msg);
}

/* Conditions compare values: a placeholder's number, whatever sign it
 * prints, and a token as text, which never becomes part of the expression. */
static void test_when_values(void **state)
{
    (void)state;
    Fixture f;
    fixture_load(&f, "{\"format\": \"attnviz-lesson/1\", \"id\": \"w\", \"title\": {\"en\": \"w\"},"
                     " \"tokens\": [\"我\", \"x!=y&&喜欢\", \"1e0\"], \"d_model\": 2,"
                     " \"X\": [[-1, 2.5], [0, 1], [1, -0.125]], \"mask\": \"causal\", \"mask_fill\": -1e9}");
    /* negative numbers: placeholders print a true minus sign (−1) */
    expect_when(&f, NULL, "{value:X[0][0]} < 0", 1);
    expect_when(&f, NULL, "{value:X[0][0]} != -1", 0);
    expect_when(&f, NULL, "{value:X[0][0]} == -1", 1);
    expect_when(&f, NULL, "{value:X[0][0]} == −1", 1);
    expect_when(&f, NULL, "{value:X[2][1]} >= -0.125 && {value:X[2][1]} > -1", 1);
    expect_when(&f, NULL, "{mask_fill} < 0", 1);
    expect_when(&f, NULL, "{mask_fill} == -1e9", 1);
    expect_when(&f, "masked_1", "{value:masked_1[0][1]} < -1e8", 1);
    /* a token is text, spliced into nothing: "x!=y&&喜欢" is not "x" != "y" and 喜欢 */
    expect_when(&f, NULL, "{token:1} == 喜欢", 0);
    expect_when(&f, NULL, "{token:1} != 喜欢", 1);
    expect_when(&f, NULL, "{token:0} == 我 && {token:1} != 我", 1);
    /* a token that reads like a number is still a token: text "1e0", not 1 */
    expect_when(&f, NULL, "{token:2} == 1", 0);
    expect_when(&f, NULL, "{token:2} == 1e0", 1);
    expect_when(&f, NULL, "{token:2} < 2", -1);
    /* spaces, tabs and line breaks around a side are not part of it */
    expect_when(&f, NULL, "{n} == 3\n", 1);
    expect_when(&f, NULL, "\t{n}\t==\t3 ", 1);
    /* each side needs a value, and the operator stands outside placeholders */
    expect_when(&f, NULL, "== 3", -1);
    expect_when(&f, NULL, "{n} ==", -1);
    expect_when(&f, NULL, "{value:X[0][0]}", -1);
    fixture_free(&f);
}

/* A long condition that cannot be evaluated: one line, cut at a character
 * with "…", never in the middle of a UTF-8 sequence. */
static void test_when_messages(void **state)
{
    const Fixture *f = *state;
    char cond[1200] = "{d_kk} == ";
    for (int i = 0; i < 100; i++) strcat(cond, "喜欢");
    strcat(cond, "\n");
    char msg[160];
    assert_int_equal(narrate_when(cond, &f->lesson, f->trace, NULL, msg, sizeof msg), -1);
    assert_null(strchr(msg, '\n'));
    assert_true(strlen(msg) < sizeof msg);
    assert_non_null(strstr(msg, "…"));
    /* valid UTF-8 all through: every lead byte has its continuation bytes */
    for (const unsigned char *p = (const unsigned char *)msg; *p;) {
        int k = *p < 0x80 ? 1 : *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : 2;
        for (int j = 1; j < k; j++)
            if ((p[j] & 0xC0) != 0x80) fail_msg("a character cut in \"%s\"", msg);
        p += k;
    }
    /* a comparison without an operator, quoted in part: its byte limit (120)
     * falls inside the 喜 at bytes 119-121, which is left out whole, not
     * shown as '?' */
    char none[400] = "ab";
    for (int i = 0; i < 100; i++) strcat(none, "喜");
    char long_msg[1024];
    assert_int_equal(narrate_when(none, &f->lesson, f->trace, NULL, long_msg, sizeof long_msg), -1);
    assert_non_null(strstr(long_msg, "found \"ab喜喜"));
    assert_null(strchr(long_msg, '?'));
    /* a line break in a condition is quoted as messages print one: \n */
    assert_int_equal(narrate_when("{d_k} <\n\033", &f->lesson, f->trace, NULL, msg, sizeof msg), -1);
    if (!strstr(msg, "(in \"{d_k} <\\n\\x1b\" as written)")) fail_msg("the condition is not quoted escaped: %s", msg);
}

/* narrate_check: every narration in both languages, and keys that match nothing. */
static void test_check(void **state)
{
    (void)state;
    Fixture f;
    fixture_load(&f, LESSON_HEAD ", \"narration\": {\"intro\": {\"en\": \"{n} tokens\", \"zh\": \"{n} 个词\"},"
                                 " \"softmax\": {\"en\": \"head {head}: {row_max_token:1}\", \"zh\": \"头 {head}\"},"
                                 " \"weights_2\": {\"en\": \"{value:weights_2[2][2]}\"}}}");
    char err[512];
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 0);
    fixture_free(&f);

    fixture_load(&f, LESSON_HEAD ", \"narration\": {\"softmax\": {\"en\": \"fine {d_k}\", \"zh\": \"坏 {oops}\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 2); /* weights_1 and weights_2 */
    assert_non_null(strstr(err, "narration.softmax.zh (step weights_1): unknown placeholder {oops}"));
    fixture_free(&f);

    /* {head} in the intro: no step */ /* {head} in the intro: no step */
    fixture_load(&f, LESSON_HEAD ", \"narration\": {\"intro\": {\"en\": \"head {head}\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1);
    assert_non_null(strstr(err, "narration.intro.en: "));
    fixture_free(&f);

    /* the summary is checked too */
    fixture_load(&f, LESSON_HEAD ", \"summary\": {\"en\": \"{d_kk}\"}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1);
    assert_non_null(strstr(err, "summary.en: "));
    fixture_free(&f);

    /* a mask-step narration in a lesson without a mask applies to nothing */
    fixture_load(&f, LESSON_HEAD ", \"narration\": {\"masked\": {\"en\": \"blocked\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1);
    assert_non_null(strstr(err, "no step of that kind or name"));
    fixture_free(&f);
}

/* "LINE:COL" of the first `needle` in json, counting characters as editors do. */
static void where_in(const char *json, const char *needle, char *out, size_t outlen)
{
    const char *hit = strstr(json, needle);
    if (!hit) fail_msg("no '%s' in the test lesson", needle);
    int line = 1, col = 1;
    for (const char *p = json; p < hit; p++) {
        if (*p == '\n')
            line++, col = 1;
        else if ((*p & 0xC0) != 0x80)
            col++;
    }
    snprintf(out, outlen, "test.json:%d:%d: ", line, col);
}

/* narrate_check names the file, line and column of the placeholder, through
 * multi-byte characters and JSON escapes (\\n is one character of the text and
 * two columns of the file; \\u559c one and six). */
static void test_check_position(void **state)
{
    (void)state;
    const char *texts[] = {
        "\"坏 {oops}\"",
        "\"a\\nb\\u559c\\u00e9 {oops}\"",
        "\"\\ud83d\\ude00 {oops}\"",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char json[2048], want[64], err[1024];
        snprintf(json, sizeof json, LESSON_HEAD ",\n  \"narration\": {\"softmax\": {\"en\": \"ok\", \"zh\": %s}}}",
                 texts[i]);
        Fixture f;
        fixture_load(&f, json);
        assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 2);
        where_in(json, "{oops}", want, sizeof want);
        if (strncmp(err, want, strlen(want)) != 0) fail_msg("'%s' does not start with '%s'", err, want);
        fixture_free(&f);
    }
}

/* A text written for a step kind is shown on every head's step: check refuses
 * one that quotes a single head's cells, and Chinese tokens quoted twice. */
static void test_check_refusals(void **state)
{
    (void)state;
    char err[1024];
    Fixture f;
    fixture_load(&f, LESSON_HEAD ", \"narration\": {\"scores\": {\"en\": \"{value:scores_1[1][2]}\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1); /* on scores_2, not on scores_1 */
    assert_non_null(strstr(err, "(step scores_2): {value:scores_1[1][2]}: quotes head 1's cells on head 2's step"));
    assert_non_null(strstr(err, "write {value:scores[1][2]}"));
    fixture_free(&f);

    /* the same cell keyed by the step's name, or the own-head spelling: fine */
    fixture_load(&f, LESSON_HEAD ", \"narration\": {\"scores_2\": {\"en\": \"{value:scores_1[1][2]}\"},"
                                 " \"scores\": {\"en\": \"{value:scores[1][2]} {value:X[0][0]}\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 0);
    fixture_free(&f);

    fixture_load(&f,
                 LESSON_HEAD ", \"narration\": {\"softmax\": {\"en\": \"x\", \"zh\": \"给了「{row_max_token}」\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 2);
    assert_non_null(strstr(err, "{row_max_token} already quotes its token"));
    fixture_free(&f);
}

/* Additive lessons have their own sizes and no √. */
static void test_additive(void **state)
{
    (void)state;
    Fixture f;
    fixture_load(&f, "{\"format\": \"attnviz-lesson/1\", \"id\": \"a\", \"title\": {\"en\": \"a\"},"
                     " \"attention\": \"additive\", \"tokens\": [\"s\"], \"source_tokens\": [\"x\", \"y\"],"
                     " \"X\": [[1, 0, 0]], \"Y\": [[1, 0], [0, 1]],"
                     " \"W_a\": [[1, 0], [0, 1], [1, 1], [1, 0], [0, 1]], \"v_a\": [1, -1]}");
    expect_fill(&f, NULL, LESSON_EN, "{d_x} {d_y} {d_a} {n_q} {n_k} {scale} {sqrt_expr}", "3 2 2 1 2 1 1");
    expect_fill(&f, NULL, LESSON_EN, "{key_tokens}", "x, y");
    const AttnStep *w = step(&f, "weights");
    char want[64];
    int best = w->data[1] > w->data[0];
    snprintf(want, sizeof want, "%s %.4g", best ? "y" : "x", (double)w->data[best]);
    expect_fill(&f, "context", LESSON_EN, "{row_max_token} {row_max_weight}", want);
    expect_error(&f, NULL, "{d_k}", "not defined for additive");
    expect_error(&f, "weights", "{max_weight_if:none}", "needs dot attention");
    fixture_free(&f);
}

/* A row whose every key is masked sees nothing: {row_max_token} names no
 * token and says so, in both languages, whatever the fill. */
static void test_row_sees_nothing(void **state)
{
    (void)state;
    const char *fills[] = {"\"-inf\"", "-1e9"};
    for (int k = 0; k < 2; k++) {
        char json[2048];
        snprintf(json, sizeof json, LESSON_HEAD ", \"mask\": [[0,0,0],[1,1,0],[1,1,1]], \"mask_fill\": %s}", fills[k]);
        Fixture f;
        fixture_load(&f, json);
        expect_fill(&f, "weights_1", LESSON_EN, "{row_max_token:0}",
                    "no token (the row is fully masked and sees nothing)");
        expect_fill(&f, "weights_1", LESSON_ZH, "{row_max_token:0}", "无（这一行被完全屏蔽，看不到任何词元）");
        expect_fill(&f, "weights_1", LESSON_EN, "{row_max_token}",
                    "no token (the row is fully masked and sees nothing)");
        /* a row that sees something still names its key */
        const AttnStep *w = step(&f, "weights_1");
        char want[256];
        expected_winners(w->data + 3, 3, f.lesson.tokens, want, sizeof want);
        expect_fill(&f, "weights_1", LESSON_EN, "{row_max_token:1} {row_max_weight:1}", want);
        fixture_free(&f);
    }
}

/* Ties: one head over a, b, c, d with Q = K = X. a's query meets equal
 * keys a and c, so a's row ties them; d's query is 0, so its row is even. */
#define TIE_LESSON                                                                                                     \
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"t\", \"title\": {\"en\": \"t\"},"                                    \
    " \"tokens\": [\"a\", \"b\", \"c\", \"d\"], \"d_model\": 2, \"heads\": 1,"                                         \
    " \"X\": [[1,0],[0,1],[1,0],[0,0]], \"W_Q\": [[1,0],[0,1]], \"W_K\": [[1,0],[0,1]], \"W_V\": [[1,0],[0,1]]"

static void test_ties(void **state)
{
    (void)state;
    Fixture f;
    fixture_load(&f, TIE_LESSON "}");
    const AttnStep *w = NULL;
    for (int i = 0; i < f.trace->n_steps; i++)
        if (f.trace->steps[i].kind == ATTN_STEP_SOFTMAX) w = &f.trace->steps[i];
    assert_non_null(w);
    /* the numbers the test rests on: a ties a and c, d is even */
    assert_true(w->data[0] == w->data[2] && w->data[0] > w->data[1]);
    for (int j = 1; j < 4; j++) assert_true(w->data[12 + j] == w->data[12]);
    char want[128];
    snprintf(want, sizeof want, "a → a, c (%.4g)", (double)w->data[0]);
    expect_fill(&f, w->name, LESSON_EN, "a → {row_max_token:0} ({row_max_weight:0})", want);
    expect_fill(&f, w->name, LESSON_ZH, "{row_max_token:0}", "「a」「c」");
    expect_fill(&f, w->name, LESSON_EN, "{row_max_token:1}", "b");
    expect_fill(&f, w->name, LESSON_EN, "{row_max_token:3}", "every key alike (uniform)");
    expect_fill(&f, w->name, LESSON_ZH, "{row_max_token:3}", "每个键（均匀分布）");
    /* a condition naming one winner of a tie does not hold */
    char msg[256];
    assert_int_equal(narrate_when("{row_max_token:0} == c", &f.lesson, f.trace, w, msg, sizeof msg), 0);
    assert_int_equal(narrate_when("{row_max_token:1} == b", &f.lesson, f.trace, w, msg, sizeof msg), 1);
    /* a tie within the printed digits is a tie */
    int keys[4], uniform;
    const float close[] = {0.46831f, 0.0634f, 0.46834f};
    assert_int_equal(narrate_row_winners(close, 3, keys, 4, &uniform), 2);
    assert_int_equal(keys[1], 2);
    assert_int_equal(uniform, 0);
    const float causal[] = {0.5f, 0.5f, 0.0f};
    assert_int_equal(narrate_row_winners(causal, 3, keys, 4, &uniform), 2);
    assert_int_equal(uniform, 1);
    fixture_free(&f);

    /* check: the placeholders name every tied key, and are accepted */
    char err[512];
    fixture_load(&f,
                 TIE_LESSON ", \"narration\": {\"softmax\": {\"en\": \"a → {row_max_token:0} ({row_max_weight:0})\","
                            " \"zh\": \"「a」→{row_max_token:0}（{row_max_weight:0}）\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 0);
    fixture_free(&f);
    /* a text naming c alone where a and c tie is refused, naming file, field and step */
    fixture_load(&f, TIE_LESSON ", \"narration\": {\"softmax\": {\"en\": \"a → c ({row_max_weight:0}).\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1);
    if (!strstr(err, "test.json:") || !strstr(err, "narration.softmax.en (step ") || !strstr(err, "a, c"))
        fail_msg("unexpected message: %s", err);
    fixture_free(&f);
    fixture_load(&f, TIE_LESSON
                 ", \"narration\": {\"softmax\": {\"en\": \"a\", \"zh\": \"「a」→「c」（{row_max_weight:0}）\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1);
    assert_non_null(strstr(err, "narration.softmax.zh"));
    fixture_free(&f);
    /* its weight printed without its keys named by the placeholder */
    fixture_load(&f, TIE_LESSON ", \"narration\": {\"softmax\": {\"en\": \"a gives {row_max_weight:0} to c.\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 1);
    assert_non_null(strstr(err, "{row_max_token:0}"));
    fixture_free(&f);
    /* a cell named by its pair is not a claim of a winner */
    fixture_load(&f, TIE_LESSON ", \"narration\": {\"softmax\": {\"en\": \"a → c = {value:weights[0][2]}\"}}}");
    assert_int_equal(narrate_check(&f.lesson, f.trace, err, sizeof err), 0);
    fixture_free(&f);
}

/* What check accepts fits every view: a text filling to more than
 * NARRATE_MAX_FILLED bytes is refused by check, one byte less is not. */
static void test_filled_limit(void **state)
{
    (void)state;
    /* {tokens} fills to "我, 喜欢, 跑步": 17 bytes */
    size_t per = strlen("我, 喜欢, 跑步");
    int reps = (int)(NARRATE_MAX_FILLED / per) + 1;
    size_t cap = (size_t)reps * 8 + 1024;
    char *json = malloc(cap), *text = malloc((size_t)reps * 8 + 1);
    assert_non_null(json);
    assert_non_null(text);
    for (int fits = 0; fits < 2; fits++) {
        int n = fits ? reps - 1 : reps;
        text[0] = 0;
        for (int i = 0; i < n; i++) strcat(text, "{tokens}");
        snprintf(json, cap, LESSON_HEAD ", \"narration\": {\"intro\": {\"en\": \"%s\"}}}", text);
        Fixture f;
        fixture_load(&f, json);
        char err[512];
        int bad = narrate_check(&f.lesson, f.trace, err, sizeof err);
        if (fits)
            assert_int_equal(bad, 0);
        else
            assert_non_null(strstr(err, "the filled text is longer than 8192 bytes"));
        fixture_free(&f);
    }
    free(json);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_and_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
        cmocka_unit_test(test_scale_kinds),
        cmocka_unit_test_setup_teardown(test_step_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test(test_kv_groups),
        cmocka_unit_test_setup_teardown(test_macs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_weights, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_weight_if, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value, setup, teardown),
        cmocka_unit_test(test_exponents),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_check_position),
        cmocka_unit_test(test_check_refusals),
        cmocka_unit_test_setup_teardown(test_value_own_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_heads, setup, teardown),
        cmocka_unit_test(test_additive),
        cmocka_unit_test(test_row_sees_nothing),
        cmocka_unit_test(test_ties),
        cmocka_unit_test(test_filled_limit),
        cmocka_unit_test(test_when_values),
        cmocka_unit_test_setup_teardown(test_when_messages, setup, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
