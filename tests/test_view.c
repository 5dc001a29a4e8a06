/* test_view.c: the View's state without any display: stepping, reversing,
 * the clock, head and mode switches, clamping at the ends, formulas,
 * narration and cell explanations, on small lessons written inline; and the
 * string table: every entry in every language, and notices and
 * explanations that follow the language key. */
#include <math.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attn.h"
#include "test_trace.h"
#include "test_util.h"
#include "view.h"
#include "ink.h"
#include "view_input.h"

/* Two heads, d_model 4, 我喜欢跑步, W_O given, narration with a placeholder. */
static const char *LESSON_MHSA =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-mhsa\","
    " \"title\": {\"en\": \"View test\", \"zh\": \"视图测试\"},"
    " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 4, \"heads\": 2, \"seed\": 3,"
    " \"X\": [[1, 0, 0.5, -1], [0, 1, -0.5, 2], [1, 1, 0, 0.25]],"
    " \"narration\": {\"softmax\": {\"en\": \"rows sum to 1, d_k = {d_k}\", \"zh\": \"每行和为 1，d_k = {d_k}\"}}}";

/* Two heads and a causal mask: every kind of cell explanation. */
static const char *LESSON_CAUSAL_HEADS =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-strings\","
    " \"title\": {\"en\": \"Strings\", \"zh\": \"界面文字\"},"
    " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 4, \"heads\": 2, \"seed\": 3, \"mask\": \"causal\"}";

/* One head, causal mask: blocked cells. */
static const char *LESSON_CAUSAL =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-causal\", \"title\": {\"en\": \"Causal\"},"
    " \"tokens\": [\"a\", \"b\", \"c\"], \"d_model\": 2, \"heads\": 1, \"seed\": 5, \"W_O\": null,"
    " \"mask\": \"causal\"}";

/* Cross-attention: two query tokens, three source tokens. */
static const char *LESSON_CROSS =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-cross\", \"title\": {\"en\": \"Cross\"},"
    " \"tokens\": [\"a\", \"b\"], \"source_tokens\": [\"x\", \"y\", \"z\"], \"d_model\": 2, \"heads\": 1,"
    " \"seed\": 9, \"X\": [[1, 0], [0, 1]], \"Y\": [[1, 1], [0, 1], [1, 0]]}";

typedef struct Fixture {
    Lesson lesson;
    View view;
} Fixture;

static Fixture *fixture_make(const char *json)
{
    Fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    LessonError le;
    if (lesson_parse(&f->lesson, json, strlen(json), "inline.json", &le) != 0) fail_msg("lesson: %s", le.msg);
    char err[512];
    if (view_init(&f->view, &f->lesson, err, sizeof err) != 0) fail_msg("view_init: %s", err);
    return f;
}

static void fixture_free(Fixture *f)
{
    view_free(&f->view);
    lesson_free(&f->lesson);
    free(f);
}

static int step_of(const View *v, const char *name)
{
    const AttnStep *s = attn_trace_find_name(view_trace(v), name);
    if (!s) fail_msg("no step %s in the current trace", name);
    return attn_trace_index(view_trace(v), s);
}

static void test_init_state(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    assert_int_equal(v->step, 0);
    assert_int_equal(v->head, 1);
    assert_int_equal(v->mode, VIEW_MULTI);
    assert_int_equal(v->lang, LESSON_EN);
    assert_ptr_equal(view_trace(v), v->trace);
    assert_int_equal(view_step_count(v), v->trace->n_steps);
    assert_int_equal(view_head_count(v), 2);
    /* the single-head trace: one head of width heads·d_k on the same weights */
    assert_int_equal(v->single->cfg.heads, 1);
    assert_int_equal(v->single->cfg.d_k, 4);
    assert_int_equal(v->single->cfg.d_v, 4);
    assert_true(fabsf(v->single->divisor - 2.0f) < 1e-6f);       /* √4 */
    assert_true(fabsf(v->trace->divisor - sqrtf(2.0f)) < 1e-6f); /* √2 */
    fixture_free(f);
}

/* Head 1 of the single trace is ordinary SDPA: softmax(Q·Kᵀ/√d_model)·V
 * with the full projections, recomputed here independently. */
static void test_single_is_sdpa(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    const AttnTrace *s = f->view.single, *m = f->view.trace;
    const AttnStep *Q = attn_trace_find_name(m, "Q"), *K = attn_trace_find_name(m, "K"),
                   *V = attn_trace_find_name(m, "V");
    const AttnStep *out = attn_trace_find(s, ATTN_STEP_WEIGHTED_SUM, 1);
    assert_non_null(Q);
    assert_non_null(out);
    int n = Q->rows, d = Q->cols;
    float ref[3 * 4]; /* (n, d) */
    for (int i = 0; i < n; i++) {
        double sc[3], mx = -INFINITY, sum = 0;
        for (int j = 0; j < n; j++) {
            double dot = 0;
            for (int k = 0; k < d; k++) dot += (double)Q->data[i * d + k] * K->data[j * d + k];
            sc[j] = dot / sqrt((double)d);
            if (sc[j] > mx) mx = sc[j];
        }
        for (int j = 0; j < n; j++) sum += (sc[j] = exp(sc[j] - mx));
        for (int c = 0; c < d; c++) {
            double acc = 0;
            for (int j = 0; j < n; j++) acc += sc[j] / sum * V->data[j * d + c];
            ref[i * d + c] = (float)acc;
        }
    }
    assert_floats_close("single head_1", out->data, ref, n, d, TEST_ABS_TOL, TEST_REL_TOL);
    fixture_free(f);
}

/* Step q shown whole, then ← and half of its duration d played backwards:
 * the view is rewinding, halfway through step q. */
static void rewind_halfway(View *v, int q, double d)
{
    view_goto(v, q);
    view_finish(v);
    view_prev(v);
    view_advance(v, d / 2 / v->speed);
}

static void test_stepping_and_clamping(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    int n = view_step_count(v);
    view_prev(v); /* at 0: stays */
    assert_int_equal(v->step, 0);
    /* X has no animation: next moves straight on */
    assert_true(view_step_duration(v, 0) == 0.0);
    view_next(v);
    assert_int_equal(v->step, 1);
    assert_true(v->t == 0.0);
    /* an animated step: the first next finishes it, the second moves on */
    int q = step_of(v, "Q");
    view_goto(v, q);
    assert_true(view_step_duration(v, q) > 0.5);
    assert_true(view_progress(v) == 0.0);
    view_next(v);
    assert_int_equal(v->step, q);
    assert_true(view_progress(v) == 1.0);
    view_next(v);
    assert_int_equal(v->step, q + 1);
    assert_true(v->t == 0.0);
    /* reversing at a step's start shows the previous step's final state,
     * exactly the trace's */
    view_prev(v);
    assert_int_equal(v->step, q);
    assert_true(view_progress(v) == 1.0);
    /* within a step, ← plays its animation backwards to its start, then
     * lands on the previous step's final state */
    double d = view_step_duration(v, q);
    view_prev(v);
    assert_int_equal(v->step, q);
    assert_true(v->rewinding && view_is_busy(v));
    view_advance(v, d / 4 / v->speed);
    assert_int_equal(v->step, q);
    assert_true(fabs(view_progress(v) - 0.75) < 1e-9); /* going backwards */
    view_advance(v, d / v->speed);                     /* past the start */
    assert_int_equal(v->step, q - 1);
    assert_false(v->rewinding);
    assert_true(view_progress(v) == 1.0);
    /* ← again while rewinding lands at once; → while rewinding finishes the step */
    rewind_halfway(v, q, d);
    view_prev(v);
    assert_int_equal(v->step, q - 1);
    assert_true(view_progress(v) == 1.0);
    rewind_halfway(v, q, d);
    view_next(v);
    assert_int_equal(v->step, q);
    assert_false(v->rewinding);
    assert_true(view_progress(v) == 1.0);
    /* ← stops autoplay, so that the rewind does not turn round at its end */
    v->playing = 1;
    view_prev(v);
    assert_false(v->playing);
    view_goto(v, q + 1);
    /* the ends */
    view_end(v);
    assert_int_equal(v->step, n - 1);
    assert_true(view_progress(v) == 1.0);
    view_next(v);
    assert_int_equal(v->step, n - 1);
    assert_true(view_at_end(v));
    view_goto(v, n + 50);
    assert_int_equal(v->step, n - 1);
    view_goto(v, -7);
    assert_int_equal(v->step, 0);
    view_home(v);
    assert_int_equal(v->step, 0);
    fixture_free(f);
}

static void test_clock_and_autoplay(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    int q = step_of(v, "Q");
    view_goto(v, q);
    double d = view_step_duration(v, q);
    assert_true(view_is_busy(v));
    view_advance(v, d / 4);
    assert_true(fabs(view_progress(v) - 0.25) < 1e-9);
    view_set_speed(v, 2.0);
    view_advance(v, d / 4); /* twice as fast: another half */
    assert_true(fabs(view_progress(v) - 0.75) < 1e-9);
    view_advance(v, 10.0); /* clamps at the final state, does not move on when paused */
    assert_int_equal(v->step, q);
    assert_true(view_progress(v) == 1.0);
    assert_false(view_is_busy(v));
    view_advance(v, 10.0);
    assert_int_equal(v->step, q);
    /* autoplay: after the dwell the next step starts */
    v->playing = 1;
    view_set_speed(v, 1.0);
    assert_true(view_is_busy(v));
    view_advance(v, VIEW_DWELL_SECONDS / 2);
    assert_int_equal(v->step, q);
    view_advance(v, VIEW_DWELL_SECONDS / 2 + 1e-6);
    assert_int_equal(v->step, q + 1);
    assert_true(v->t == 0.0);
    /* playing to the end stops there */
    int guard = 0;
    while (!view_at_end(v) && guard++ < 100000) view_advance(v, 1.0 / 60.0);
    assert_true(view_at_end(v));
    assert_int_equal(v->step, view_step_count(v) - 1);
    assert_false(view_is_busy(v));
    /* clamps */
    view_set_speed(v, 1000);
    assert_true(v->speed == VIEW_SPEED_MAX);
    view_set_speed(v, 0);
    assert_true(v->speed == VIEW_SPEED_MIN);
    view_set_speed(v, NAN);
    assert_true(v->speed == VIEW_SPEED_MIN);
    view_set_text_scale(v, 100.0f);
    assert_true(v->text_scale == VIEW_TEXT_SCALE_MAX);
    view_set_text_scale(v, -1.0f);
    assert_true(v->text_scale == VIEW_TEXT_SCALE_MIN);
    view_advance(v, -5.0); /* time does not run backwards */
    assert_true(view_progress(v) == 1.0);
    fixture_free(f);
}

static void test_heads(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    view_goto(v, step_of(v, "weights_1"));
    assert_int_equal(v->head, 1);
    view_set_head(v, 2);
    assert_string_equal(view_current(v)->name, "weights_2");
    assert_int_equal(v->head, 2);
    assert_true(view_progress(v) == 1.0);
    view_next_head(v); /* wraps */
    assert_string_equal(view_current(v)->name, "weights_1");
    view_set_head(v, 99); /* clamps */
    assert_int_equal(v->head, 2);
    assert_string_equal(view_current(v)->name, "weights_2");
    view_set_head(v, -3);
    assert_int_equal(v->head, 1);
    /* on a step of no head, the head is only selected */
    view_goto(v, step_of(v, "Q"));
    view_set_head(v, 2);
    assert_string_equal(view_current(v)->name, "Q");
    assert_int_equal(v->head, 2);
    /* stepping into a head's pipeline selects that head */
    view_goto(v, step_of(v, "scores_1"));
    assert_int_equal(v->head, 1);
    fixture_free(f);
}

/* Grouped K/V heads: four query heads read two K/V heads. The formula
 * names the K/V head a query head reads, K_g's narration which query heads
 * share it, a K/V step keeps the query head that reads it selected, and
 * the single-head view is refused with a reason. */
static void test_kv_groups(void **state)
{
    (void)state;
    Fixture *f =
        fixture_make("{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-gqa\", \"title\": {\"en\": \"G\"},"
                     " \"tokens\": [\"a\", \"b\", \"c\"], \"d_model\": 8, \"heads\": 4, \"kv_heads\": 2,"
                     " \"seed\": 5, \"mask\": \"causal\"}");
    View *v = &f->view;
    assert_null(attn_trace_find_name(v->trace, "K_3")); /* two K/V heads: K_1 and K_2 */
    view_goto(v, step_of(v, "scores_4"));
    assert_int_equal(v->head, 4);
    assert_string_equal(view_formula(v), "head₄ = softmax(Q₄·K₂ᵀ / √d_k + M) · V₂");
    view_goto(v, step_of(v, "W_K"));
    assert_non_null(strstr(view_formula(v), "d_model × g·d_k = 8 × 4"));
    /* K_2 is read by heads 3 and 4: from head 4 it stays head 4, from head 1 it becomes head 3 */
    view_set_head(v, 4);
    view_goto(v, step_of(v, "K_2"));
    assert_int_equal(v->head, 4);
    assert_string_equal(view_formula(v), "K₂ = K[:, 2:4]   (kv_heads = 2, d_k = 2)");
    char buf[1024];
    view_narration(v, buf, sizeof buf);
    assert_non_null(strstr(buf, "K/V head 2: query heads 3–4 read it (2 K/V heads for 4 query heads)."));
    v->lang = LESSON_ZH;
    view_narration(v, buf, sizeof buf);
    assert_non_null(strstr(buf, "K/V 头 2 由查询头 3–4 共用（2 个 K/V 头供 4 个查询头使用）。"));
    v->lang = LESSON_EN;
    view_set_head(v, 1); /* head 1 reads K_1 */
    assert_string_equal(view_current(v)->name, "K_1");
    assert_int_equal(v->head, 1);
    view_goto(v, step_of(v, "K_2"));
    assert_int_equal(v->head, 3);
    view_set_head(v, 4); /* head 4 reads the same K_2: the step stays */
    assert_string_equal(view_current(v)->name, "K_2");
    /* hovering W_K names the K/V head whose column a weight feeds */
    char cell[1024];
    assert_int_equal(view_explain_cell(v, v->trace, step_of(v, "W_K"), 0, 3, cell, sizeof cell), 0);
    assert_non_null(strstr(cell, "(K/V head 2's column 2)")); /* W_K's column 4, counted from 1 */
    view_set_mode(v, VIEW_SINGLE);
    assert_int_equal(v->mode, VIEW_MULTI);
    assert_non_null(strstr(v->single_error, "kv_heads"));
    fixture_free(f);
}

static void test_modes(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    view_goto(v, step_of(v, "weights_2"));
    view_toggle_single(v);
    assert_int_equal(v->mode, VIEW_SINGLE);
    assert_ptr_equal(view_trace(v), v->single);
    assert_string_equal(view_current(v)->name, "weights_1"); /* the single trace's only head */
    assert_int_equal(v->head, 2);                            /* remembered for the way back */
    assert_int_equal(view_step_count(v), v->single->n_steps);
    view_toggle_single(v);
    assert_int_equal(v->mode, VIEW_MULTI);
    assert_string_equal(view_current(v)->name, "weights_2");
    /* steps of no head map by name */
    view_goto(v, step_of(v, "concat"));
    view_set_mode(v, VIEW_SINGLE);
    assert_string_equal(view_current(v)->name, "concat");
    /* compare steps through the multi-head trace, with the single step beside */
    view_set_mode(v, VIEW_COMPARE);
    assert_ptr_equal(view_trace(v), v->trace);
    view_goto(v, step_of(v, "scores_2"));
    int cs = view_compare_step(v, v->step);
    assert_string_equal(v->single->steps[cs].name, "scores_1");
    view_toggle_compare(v);
    assert_int_equal(v->mode, VIEW_MULTI);
    view_set_mode(v, (ViewMode)42); /* ignored */
    assert_int_equal(v->mode, VIEW_MULTI);
    assert_int_equal(view_map_step(v->trace, -1, v->single, 1), -1);
    fixture_free(f);
    /* one head: nothing to compare, and the screen would call one head "multi-head" */
    f = fixture_make(LESSON_CAUSAL);
    v = &f->view;
    view_goto(v, step_of(v, "weights_1"));
    assert_false(view_can_compare(v));
    view_key(v, 'c');
    assert_int_equal(v->mode, VIEW_MULTI);
    assert_string_equal(view_current(v)->name, "weights_1");
    char note[256];
    view_notice_text(v, note, sizeof note);
    assert_string_equal(note, "This lesson has one head: its single-head and multi-head views are the same");
    view_set_mode(v, VIEW_SINGLE); /* single mode stays: one head, as the lesson has */
    assert_int_equal(v->mode, VIEW_SINGLE);
    fixture_free(f);
}

/* The highlighted part of the formula is the part this step computes. */
static void expect_highlight(View *v, const char *step, const char *part)
{
    view_goto(v, step_of(v, step));
    int a, b;
    view_formula_highlight(v, &a, &b);
    const char *fm = view_formula(v);
    assert_true(a >= 0 && b >= a && (size_t)b <= strlen(fm));
    char got[VIEW_MAX_FORMULA];
    snprintf(got, sizeof got, "%.*s", b - a, fm + a);
    if (strcmp(got, part) != 0) fail_msg("%s: highlighted '%s' in '%s', expected '%s'", step, got, fm, part);
}

static void test_formula(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    expect_highlight(v, "scores_2", "Q₂·K₂ᵀ");
    expect_highlight(v, "scaled_1", " / √d_k");
    expect_highlight(v, "weights_1", "softmax(Q₁·K₁ᵀ / √d_k)");
    expect_highlight(v, "head_2", "head₂ = softmax(Q₂·K₂ᵀ / √d_k) · V₂");
    expect_highlight(v, "K", "K = X·W_K");
    expect_highlight(v, "Q_2", "Q₂ = Q[:, 2:4]");
    expect_highlight(v, "concat", "Concat(head₁, head₂)"); /* both heads named, no "…" between them */
    expect_highlight(v, "output", " · W_O");
    expect_highlight(v, "X", "X   (n × d_model = 3 × 4)");
    view_goto(v, step_of(v, "scaled_1"));
    assert_non_null(strstr(view_formula(v), "√2 = 1.414"));
    /* column notation: shapes swap and every product turns round */
    view_set_notation(v, VIEW_NOTATION_COLUMN);
    expect_highlight(v, "X", "X   (d_model × n = 4 × 3)");
    expect_highlight(v, "W_Q", "W_Q   (h·d_k × d_model = 4 × 4)");
    expect_highlight(v, "K", "K = W_K·X");
    expect_highlight(v, "Q_2", "Q₂ = Q[2:4, :]");
    expect_highlight(v, "scores_2", "K₂ᵀ·Q₂");
    expect_highlight(v, "head_2", "head₂ = V₂ · softmax(K₂ᵀ·Q₂ / √d_k)");
    expect_highlight(v, "output", "W_O · ");
    /* the row scale divides each query's weights by their largest: a column in column notation */
    view_set_weight_scale(v, VIEW_WEIGHTS_ROW);
    assert_string_equal(view_weight_scale_text(v), "÷ column max");
    assert_string_equal(view_weight_scale_top(v), "column max");
    view_toggle_notation(v);
    assert_int_equal(v->notation, VIEW_NOTATION_ROW);
    assert_string_equal(view_weight_scale_text(v), "÷ row max");
    view_next_weight_scale(v);
    assert_int_equal(v->weight_scale, VIEW_WEIGHTS_LOG);
    view_next_weight_scale(v);
    assert_int_equal(v->weight_scale, VIEW_WEIGHTS_UNIT);
    assert_int_equal(view_weight_scale_from_name("log"), VIEW_WEIGHTS_LOG);
    assert_int_equal(view_weight_scale_from_name("rows"), -1);
    assert_int_equal(view_notation_from_name("column"), VIEW_NOTATION_COLUMN);
    expect_highlight(v, "K", "K = X·W_K");
    fixture_free(f);
}

static void test_narration_and_explain(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    char buf[2048];
    view_goto(v, step_of(v, "weights_1"));
    assert_int_equal(view_narration(v, buf, sizeof buf), 0);
    assert_string_equal(buf, "rows sum to 1, d_k = 2"); /* placeholder filled */
    view_toggle_lang(v);
    assert_int_equal(view_narration(v, buf, sizeof buf), 0);
    assert_string_equal(buf, "每行和为 1，d_k = 2");
    view_toggle_lang(v);
    /* no narration: a description, and -1 */
    view_goto(v, step_of(v, "Q"));
    assert_int_equal(view_narration(v, buf, sizeof buf), -1);
    assert_non_null(strstr(buf, "Q (3 × 4)"));
    /* in Chinese with full-width punctuation */
    view_toggle_lang(v);
    view_narration(v, buf, sizeof buf);
    assert_string_equal(buf, "Q（3 × 4）：投影，即输入乘以权重矩阵。");
    view_toggle_lang(v);

    /* a score as its term-by-term dot product, with the real numbers */
    const AttnTrace *t = v->trace;
    int si = step_of(v, "scores_1");
    const AttnStep *sc = &t->steps[si];
    assert_int_equal(view_explain_cell(v, t, si, 1, 2, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "scores₁[喜欢, 跑步]"));
    assert_non_null(strstr(buf, "Q₁[喜欢] · K₁[跑步]"));
    const AttnStep *Q1 = attn_trace_find_name(t, "Q_1");
    char term[64];
    snprintf(term, sizeof term, "%.4g", fabs((double)Q1->data[1 * 2 + 0]));
    assert_non_null(strstr(buf, term));
    char val[64];
    snprintf(val, sizeof val, "%.4g", fabs((double)sc->data[1 * 3 + 2]));
    assert_non_null(strstr(buf, val));
    /* a weight as exp(x − max) / Σ */
    assert_int_equal(view_explain_cell(v, t, step_of(v, "weights_2"), 0, 0, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "exp(x − max) / Σ"));
    /* an output cell as Σ weight·value */
    assert_int_equal(view_explain_cell(v, t, step_of(v, "head_1"), 2, 1, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "Σ_j weights₁[跑步]_j · V_1[j, 2]"));
    /* a weight says where it carries a feature */
    assert_int_equal(view_explain_cell(v, t, step_of(v, "W_Q"), 1, 3, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "feature 2 of each token into Q's column 4 (head 2's column 2)"));
    /* the same in Chinese: 第 2 个 is the second, drawn under "2" */
    v->lang = LESSON_ZH;
    assert_int_equal(view_explain_cell(v, t, step_of(v, "W_Q"), 1, 3, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "与每个词元的第 2 个特征相乘，计入 Q 的第 4 列（头 2 的第 2 列）"));
    assert_int_equal(view_explain_cell(v, t, step_of(v, "K_2"), 1, 0, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "K[喜欢, 3]（头 2 的第 1 列，共 2 列）"));
    v->lang = LESSON_EN;
    /* column notation: every index in the order the transposed matrices are drawn */
    view_set_notation(v, VIEW_NOTATION_COLUMN);
    view_goto(v, step_of(v, "X"));
    assert_int_equal(view_narration(v, buf, sizeof buf), -1);
    assert_string_equal(buf, "X (4 × 3): the input, one column per token.");
    view_goto(v, step_of(v, "weights_1")); /* a lesson's text, written in rows, says so */
    assert_int_equal(view_narration(v, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, view_string(VS_TEXT_IN_ROW_NOTATION, LESSON_EN)));
    assert_non_null(strstr(buf, "rows sum to 1, d_k = 2"));
    assert_int_equal(view_explain_cell(v, t, si, 1, 2, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "scores₁[跑步, 喜欢]"));
    assert_non_null(strstr(buf, "Q₁[:, 喜欢] · K₁[:, 跑步]"));
    assert_int_equal(view_explain_cell(v, t, step_of(v, "Q"), 0, 2, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "Q[3, 我]"));
    assert_non_null(strstr(buf, "X[:, 我] · W_Q[3, :]"));
    assert_int_equal(view_explain_cell(v, t, step_of(v, "head_1"), 2, 1, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "Σ_j weights₁[:, 跑步]_j · V_1[2, j]"));
    assert_int_equal(view_explain_cell(v, t, step_of(v, "W_Q"), 1, 3, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "feature 2 of each token into Q's row 4 (head 2's row 2)"));
    assert_int_equal(view_explain_cell(v, t, step_of(v, "K_2"), 1, 0, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "K[3, 喜欢]  (head 2's row 1 of 2)"));
    view_set_notation(v, VIEW_NOTATION_ROW);
    /* out of range */
    assert_int_equal(view_explain_cell(v, t, si, 3, 0, buf, sizeof buf), -1);
    assert_int_equal(view_explain_cell(v, t, -1, 0, 0, buf, sizeof buf), -1);
    assert_int_equal(view_explain_cell(v, t, si, 0, -1, buf, sizeof buf), -1);
    fixture_free(f);
}

/* The summary, then the intro, open the first step's narration, each a
 * paragraph, with placeholders filled; later steps do not repeat them. */
static void test_summary_opens_first_step(void **state)
{
    (void)state;
    Fixture *f =
        fixture_make("{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-summary\", \"title\": {\"en\": \"S\"},"
                     " \"summary\": {\"en\": \"{n} tokens.\", \"zh\": \"{n} 个词元。\"},"
                     " \"tokens\": [\"a\", \"b\"], \"d_model\": 2, \"seed\": 1,"
                     " \"narration\": {\"intro\": {\"en\": \"Intro.\"}, \"input\": {\"en\": \"The input.\"}}}");
    View *v = &f->view;
    char buf[2048];
    view_goto(v, 0);
    assert_int_equal(view_narration(v, buf, sizeof buf), 0);
    assert_string_equal(buf, "2 tokens.\nIntro.\nThe input.");
    view_toggle_lang(v);
    view_narration(v, buf, sizeof buf);
    assert_string_equal(buf, "2 个词元。\nIntro.\nThe input."); /* zh summary, en fallbacks */
    view_goto(v, 1);
    view_narration(v, buf, sizeof buf);
    assert_null(strstr(buf, "2 个词元"));
    fixture_free(f);
}

/* A lesson need not narrate every step: a step without a text of its own
 * (by name or kind) shows the narration written from the step, in every
 * mode, and says so by returning -1. */
static void test_step_without_text(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA); /* narrates softmax only */
    View *v = &f->view;
    char buf[2048];
    view_goto(v, step_of(v, "scores_2"));
    assert_int_equal(view_narration(v, buf, sizeof buf), -1);
    assert_string_equal(buf, "scores₂ (3 × 3): the scores, how well each query matches each key.");
    view_goto(v, step_of(v, "weights_2"));
    assert_int_equal(view_narration(v, buf, sizeof buf), 0);
    assert_string_equal(buf, "rows sum to 1, d_k = 2");
    view_set_notation(v, VIEW_NOTATION_COLUMN);
    view_goto(v, step_of(v, "X"));
    assert_int_equal(view_narration(v, buf, sizeof buf), -1);
    assert_string_equal(buf, "X (4 × 3): the input, one column per token.");
    fixture_free(f);
}

/* Seed 003's order: the formula masks before it divides, and the scaled
 * step, which comes after the mask, shows its blocked cells as blocked. */
static void test_mask_then_scale(void **state)
{
    (void)state;
    Fixture *f = fixture_make("{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-m3\", \"title\": {\"en\": \"M\"},"
                              " \"tokens\": [\"a\", \"b\"], \"d_model\": 2, \"seed\": 5, \"W_O\": null,"
                              " \"mask\": \"causal\", \"mask_fill\": -1e20, \"mask_order\": \"mask_then_scale\"}");
    View *v = &f->view;
    int m = step_of(v, "masked_1"), a = step_of(v, "scaled_1");
    assert_true(m < a);
    view_goto(v, m);
    assert_string_equal(view_formula(v), "head₁ = softmax((Q₁·K₁ᵀ + M) / √d_k) · V₁");
    const AttnStep *sc = &v->trace->steps[a];
    assert_true(view_cell_blocked(v, sc, 0, 1));
    assert_false(view_cell_blocked(v, sc, 1, 0));
    fixture_free(f);
    /* the usual order: the scaled step is before the mask and has no blocked cell */
    f = fixture_make(LESSON_CAUSAL);
    v = &f->view;
    assert_false(view_cell_blocked(v, &v->trace->steps[step_of(v, "scaled_1")], 0, 1));
    view_goto(v, step_of(v, "masked_1"));
    assert_non_null(strstr(view_formula(v), "softmax(Q₁·K₁ᵀ / √d_k + M)"));
    fixture_free(f);
}

static void test_mask_and_labels(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_CAUSAL);
    View *v = &f->view;
    const AttnTrace *t = v->trace;
    const AttnStep *m = attn_trace_find(t, ATTN_STEP_MASKED, 1), *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, 1);
    const AttnStep *sc = attn_trace_find(t, ATTN_STEP_SCORES, 1);
    assert_non_null(m);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            assert_int_equal(view_cell_blocked(v, m, r, c), c > r);
            assert_int_equal(view_cell_blocked(v, w, r, c), c > r);
            assert_int_equal(view_cell_blocked(v, sc, r, c), 0); /* not yet masked */
            if (c > r) assert_true(w->data[r * 3 + c] == 0.0f);
        }
    expect_highlight(v, "masked_1", " + M");
    const char *const *rl = view_row_labels(v, t, sc), *const *cl = view_col_labels(v, t, sc);
    assert_non_null(rl);
    assert_non_null(cl);
    assert_string_equal(rl[2], "c");
    assert_null(view_row_labels(v, t, attn_trace_find_name(t, "W_Q"))); /* a feature axis */
    char title[64];
    view_step_title(w, title, sizeof title);
    assert_string_equal(title, "weights₁");
    /* one head: the single trace is the same computation */
    assert_int_equal(v->single->n_steps, v->trace->n_steps);
    fixture_free(f);
}

static void test_selection_and_notice(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    view_select_token(v, 1, 1);
    assert_int_equal(v->sel_query, 1);
    view_select_token(v, 1, 1); /* again: cleared */
    assert_int_equal(v->sel_query, -1);
    assert_int_equal(v->sel_key, -1);
    view_finish(v);
    view_set_notice(v, VS_NOTICE_SAVED, "x.png", 0);
    assert_true(view_is_busy(v));
    view_advance(v, 10.0);
    char notice[VIEW_MAX_NOTICE];
    assert_int_equal(view_notice_text(v, notice, sizeof notice), 0);
    assert_false(view_is_busy(v));
    for (int i = 0; i < VIEW_THEME_COUNT; i++) view_next_theme(v);
    assert_int_equal(v->theme, VIEW_THEME_LIGHT);
    fixture_free(f);
}

/* ---- the window's words: every language, and following L ---- */

/* The conversions of a printf format ("%s%d%zu"), "%%" left out. */
static void conversions(const char *fmt, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        const char *q = p + 1;
        while (*q && !strchr("diouxXeEfFgGcsp", *q)) q++;
        for (const char *c = p; c <= q && *c && n + 1 < len; c++) out[n++] = *c;
        p = *q ? q : q - 1;
    }
    out[n] = '\0';
}

/* 1 when the UTF-8 character starting at p is Han or kana. */
static int han_at(const unsigned char *p)
{
    return p[0] >= 0xE3 && p[0] <= 0xE9 && !(p[0] == 0xE3 && p[1] < 0x81);
}

/* One text in every language: the same conversions, a translation, no
 * ASCII punctuation beside Chinese. id: a ViewString, or -1. */
static void check_translated(const char *what, int id, const char *const text[LESSON_LANG_COUNT])
{
    const char *en = text[LESSON_EN];
    char want[64];
    conversions(en, want, sizeof want);
    if (!en[0]) fail_msg("%s has no English", what);
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        const char *s = text[l];
        /* Chinese puts nothing between quoted tokens: 「我」「喜欢」 */
        if (!s[0] && !(id == VS_TOKEN_LIST_SEP && l == LESSON_ZH)) fail_msg("%s has no text in language %d", what, l);
        char got[64];
        conversions(s, got, sizeof got);
        if (strcmp(got, want) != 0)
            fail_msg("%s, language %d: conversions \"%s\", English has \"%s\"", what, l, got, want);
    }
    const char *zh = text[LESSON_ZH];
    /* only the exponent's formula reads the same in both */
    if (id != VS_EXP_PHASE && strcmp(zh, en) == 0) fail_msg("%s is not translated: \"%s\"", what, zh);
    /* a Chinese character is never followed or preceded by ASCII , : ; ( ) */
    for (const unsigned char *p = (const unsigned char *)zh; *p; p++) {
        if (!strchr(",:;()", *p) || !*p) continue;
        int before = (const char *)p >= zh + 3 && han_at(p - 3), after = han_at(p + 1);
        if (before || after) fail_msg("%s: ASCII '%c' beside Chinese in \"%s\"", what, *p, zh);
    }
}

static void test_every_entry_in_every_language(void **state)
{
    (void)state;
    char what[64];
    const char *text[LESSON_LANG_COUNT];
    for (int id = 0; id < VS_STRING_COUNT; id++) {
        for (int l = 0; l < LESSON_LANG_COUNT; l++) text[l] = view_string((ViewString)id, (LessonLang)l);
        snprintf(what, sizeof what, "string %d", id);
        check_translated(what, id, text);
    }
    /* what each kind of step is, in both notations */
    for (int k = 0; k < ATTN_STEP_KIND_COUNT; k++)
        for (int n = 0; n < VIEW_NOTATION_COUNT; n++) {
            for (int l = 0; l < LESSON_LANG_COUNT; l++)
                text[l] = view_kind_text((AttnStepKind)k, (ViewNotation)n, (LessonLang)l);
            snprintf(what, sizeof what, "the text of kind %s (notation %d)", attn_step_kind_name((AttnStepKind)k), n);
            check_translated(what, -1, text);
        }
}

static void test_default_narration_punctuation(void **state)
{
    (void)state;
    char buf[256];
    snprintf(buf, sizeof buf, view_string(VS_DEFAULT_NARRATION, LESSON_ZH), "X", 3, 4,
             view_kind_text(ATTN_STEP_INPUT, VIEW_NOTATION_ROW, LESSON_ZH));
    assert_string_equal(buf, "X（3 × 4）：输入，每个词元占一行。");
    snprintf(buf, sizeof buf, view_string(VS_DEFAULT_NARRATION, LESSON_EN), "X", 3, 4,
             view_kind_text(ATTN_STEP_INPUT, VIEW_NOTATION_ROW, LESSON_EN));
    assert_string_equal(buf, "X (3 × 4): the input, one row per token.");
}

/* The notice is put into words when it is read: L changes it. */
static void test_notice_follows_language(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_CAUSAL_HEADS);
    View *v = &f->view;
    char text[2 * VIEW_MAX_NOTICE];
    view_set_notice(v, VS_NOTICE_RELOADED, "lessons/x.json", 0);
    view_notice_text(v, text, sizeof text);
    assert_string_equal(text, "reloaded lessons/x.json");
    view_toggle_lang(v);
    view_notice_text(v, text, sizeof text);
    assert_string_equal(text, "已重新载入：lessons/x.json");
    /* a loader's error keeps its words, under a Chinese heading */
    view_set_notice(v, VS_NOTICE_RELOAD_FAILED, "x.json:3:5: d_model: expected a number", 1);
    size_t n = view_notice_text(v, text, sizeof text);
    assert_int_equal(n, strlen(text));
    assert_string_equal(text, "重新载入失败，仍使用原来的课程：x.json:3:5: d_model: expected a number");
    view_toggle_lang(v);
    view_notice_text(v, text, sizeof text);
    assert_string_equal(text, "reload failed, keeping the old lesson: x.json:3:5: d_model: expected a number");
    /* gone after its time, in either language */
    view_advance(v, 60.0);
    assert_int_equal(view_notice_text(v, text, sizeof text), 0);
    assert_string_equal(text, "");
    fixture_free(f);
}

/* The longest piece of fmt between conversions and newlines: its words. */
static void longest_literal(const char *fmt, char *out, size_t len)
{
    out[0] = '\0';
    const char *piece = fmt, *p = fmt;
    for (;; p++) {
        if (*p != '%' && *p != '\n' && *p) continue;
        size_t n = (size_t)(p - piece);
        if (n > strlen(out) && n < len) snprintf(out, len, "%.*s", (int)n, piece);
        if (!*p) return;
        if (*p == '%') /* past the conversion */
            while (p[1] && !strchr("diouxXeEfFgGcsp", *p)) p++;
        if (!*p) return;
        piece = p + 1;
    }
}

/* Each English phrase of a hovered cell's explanation, and none of them in
 * the Chinese one: over every cell of every step of a causal two-head
 * lesson, no explanation in Chinese holds a phrase of the English table. */
static void test_explanations_follow_language(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_CAUSAL_HEADS);
    View *v = &f->view;
    static const ViewString phrases[] = {VS_EXPLAIN_SPLIT_COLUMN, VS_EXPLAIN_MASKED_BLOCKED, VS_EXPLAIN_MASKED_KEPT,
                                         VS_EXPLAIN_WEIGHT_COLUMN};
    int seen[sizeof phrases / sizeof phrases[0]] = {0};
    const AttnTrace *t = view_trace(v);
    for (int i = 0; i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i];
        for (int r = 0; r < s->rows; r++)
            for (int c = 0; c < s->cols; c++) {
                char en[2048], zh[2048];
                v->lang = LESSON_EN;
                assert_int_equal(view_explain_cell(v, t, i, r, c, en, sizeof en), 0);
                v->lang = LESSON_ZH;
                assert_int_equal(view_explain_cell(v, t, i, r, c, zh, sizeof zh), 0);
                for (size_t k = 0; k < sizeof phrases / sizeof phrases[0]; k++) {
                    char words[128];
                    longest_literal(view_string(phrases[k], LESSON_EN), words, sizeof words);
                    if (strstr(en, words)) seen[k]++;
                    if (strstr(zh, words)) fail_msg("%s[%d][%d] in Chinese has \"%s\": %s", s->name, r, c, words, zh);
                }
            }
    }
    for (size_t k = 0; k < sizeof phrases / sizeof phrases[0]; k++)
        if (!seen[k]) fail_msg("no English explanation used string %d: the check above checked nothing", phrases[k]);
    fixture_free(f);
}

/* Each head's scores fit float32 (2 × 1.69e38), the single head's (4 ×
 * 1.69e38) do not: the lesson opens in the multi-head view, and single and
 * compare view are refused with a notice naming the overflow. */
static const char *LESSON_SINGLE_OVERFLOWS =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"single-overflow\", \"title\": {\"en\": \"T\"},"
    " \"tokens\": [\"a\", \"b\"], \"d_model\": 4, \"heads\": 2, \"X\": [[1,0,0,0],[0,1,0,0]],"
    " \"W_Q\": [[1.3e19,1.3e19,1.3e19,1.3e19],[1,0,0,0],[0,1,0,0],[0,0,1,0]],"
    " \"W_K\": [[1.3e19,1.3e19,1.3e19,1.3e19],[1,0,0,0],[0,1,0,0],[0,0,1,0]]}";

static void test_single_trace_overflow(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_SINGLE_OVERFLOWS);
    View *v = &f->view;
    assert_null(v->single);
    assert_non_null(strstr(v->single_error, "overflowed float32"));
    for (int mode = VIEW_SINGLE; mode < VIEW_MODE_COUNT; mode++) {
        view_set_notice(v, VS_NOTICE_SAVED, "", 0);
        view_set_mode(v, (ViewMode)mode);
        assert_int_equal(v->mode, VIEW_MULTI);
        char notice[VIEW_MAX_NOTICE];
        view_notice_text(v, notice, sizeof notice);
        assert_non_null(strstr(notice, "single-head view unavailable: scores_1"));
        assert_non_null(strstr(notice, "overflowed float32"));
    }
    view_toggle_single(v);
    view_toggle_compare(v);
    assert_int_equal(v->mode, VIEW_MULTI);
    assert_int_equal(view_compare_step(v, 3), -1);
    view_end(v); /* the multi-head view works to the end */
    char text[NARRATE_MAX_STEP_TEXT];
    view_narration(v, text, sizeof text);
    assert_true(text[0] != 0);
    fixture_free(f);
}

/* An intro of 4095 bytes does not push step 0's own narration out; both are
 * shown whole. A buffer too small for them cuts at a character, with "…". */
static void test_long_intro_keeps_step_text(void **state)
{
    (void)state;
    char intro[4096], own[4096];
    memset(intro, 'x', 4095);
    intro[4095] = 0;
    for (int i = 0; i < 1365; i++) memcpy(own + 3 * i, "好", 3);
    own[4095] = 0;
    size_t cap = 3 * 4096 + 512;
    char *json = malloc(cap);
    assert_non_null(json);
    snprintf(json, cap,
             "{\"format\": \"attnviz-lesson/1\", \"id\": \"t\", \"title\": {\"en\": \"T\"}, \"tokens\": [\"a\"],"
             " \"d_model\": 2, \"narration\": {\"intro\": {\"en\": \"%s\"}, \"input\": {\"en\": \"%s\"}}}",
             intro, own);
    Fixture *f = fixture_make(json);
    char text[NARRATE_MAX_STEP_TEXT];
    assert_int_equal(view_narration(&f->view, text, sizeof text), 0);
    assert_int_equal(strlen(text), 4095 + 1 + 4095);
    assert_memory_equal(text, intro, 4095);
    assert_string_equal(text + 4096, own);
    char small[4096];
    assert_int_equal(view_narration(&f->view, small, sizeof small), 0);
    assert_string_equal(small + strlen(small) - 3, "…");
    fixture_free(f);
    free(json);
}

/* What check accepts the view shows whole: "The tokens: {tokens}" with 600
 * tokens fills to over 4 KB (the view's old buffer, which then showed the
 * raw placeholder) but within NARRATE_MAX_FILLED, which check allows. */
static void test_long_filled_text_shown_whole(void **state)
{
    (void)state;
    size_t cap = 64 * 1024;
    char *json = malloc(cap);
    assert_non_null(json);
    size_t at = (size_t)snprintf(
        json, cap, "{\"format\": \"attnviz-lesson/1\", \"id\": \"t\", \"title\": {\"en\": \"T\"}, \"tokens\": [");
    for (int i = 0; i < 600; i++) at += (size_t)snprintf(json + at, cap - at, "%s\"tok%07d\"", i ? ", " : "", i);
    snprintf(json + at, cap - at, "], \"d_model\": 2, \"narration\": {\"input\": {\"en\": \"The tokens: {tokens}\"}}}");
    Fixture *f = fixture_make(json);
    char err[512];
    assert_int_equal(narrate_check(&f->lesson, f->view.trace, err, sizeof err), 0);
    char text[NARRATE_MAX_STEP_TEXT];
    assert_int_equal(view_narration(&f->view, text, sizeof text), 0);
    assert_true(strlen(text) > 4096);
    assert_null(strchr(text, '{'));
    assert_int_equal(strncmp(text, "The tokens: tok0000000, tok0000001", 34), 0);
    assert_non_null(strstr(text, "tok0000599"));
    fixture_free(f);
    free(json);
}

/* Every function that changes what a frame shows gives a new revision;
 * what it does not show (the dwell) keeps it. */
static void test_revision(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    unsigned long r = v->revision;
#define CHANGES(call)                                                                                                  \
    do {                                                                                                               \
        call;                                                                                                          \
        if (v->revision == r) fail_msg("%s left the revision as it was", #call);                                       \
        r = v->revision;                                                                                               \
    } while (0)
    CHANGES(view_goto(v, step_of(v, "Q")));
    CHANGES(view_advance(v, 0.1));
    CHANGES(view_finish(v));
    CHANGES(view_next(v));
    CHANGES(view_prev(v));
    CHANGES(view_home(v));
    CHANGES(view_end(v));
    CHANGES(view_set_head(v, 2));
    CHANGES(view_set_mode(v, VIEW_SINGLE));
    CHANGES(view_set_speed(v, 2.0));
    CHANGES(view_set_text_scale(v, 1.5f));
    CHANGES(view_set_lang(v, LESSON_ZH));
    CHANGES(view_toggle_lang(v));
    CHANGES(view_set_theme(v, VIEW_THEME_DARK));
    CHANGES(view_next_theme(v));
    CHANGES(view_set_help(v, 1));
    CHANGES(view_set_weight_scale(v, VIEW_WEIGHTS_LOG));
    CHANGES(view_set_notation(v, VIEW_NOTATION_COLUMN));
    CHANGES(view_select_token(v, 1, 1));
    CHANGES(view_set_hover(v, v->trace, 2, 0, 0));
    view_set_hover(v, v->trace, 2, 0, 0); /* the same cell again changes nothing */
    assert_true(v->revision == r);
    CHANGES(view_set_zoom(v, 2.0f, 1, 1));
    CHANGES(view_set_notice(v, VS_NOTICE_SAVED, "x.png", 0));
    CHANGES(view_advance(v, 10.0)); /* the notice went away */
    CHANGES(view_set_playing(v, 1));
    /* autoplay's dwell on a finished step shows nothing new */
    view_goto(v, 0);
    view_finish(v);
    r = v->revision;
    view_advance(v, VIEW_DWELL_SECONDS / 4);
    assert_true(v->revision == r);
#undef CHANGES
    /* a new View (a reloaded lesson) never has a revision an old one had */
    Fixture *g = fixture_make(LESSON_MHSA);
    assert_true(g->view.revision != v->revision);
    assert_true(g->view.revision > v->revision);
    fixture_free(g);
    fixture_free(f);
}

/* The key table: each key runs its action, and every action is in the table. */
static void test_keys(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    int n = 0;
    const ViewBinding *b = view_bindings(&n);
    int seen[VIEW_ACTION_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        seen[b[i].action]++;
        for (int k = 0; k < VIEW_BINDING_MAX_KEYS && b[i].keys[k]; k++)
            if (view_key_action(b[i].keys[k]) != b[i].action) fail_msg("key %d of row %d runs another action", k, i);
    }
    for (int a = VIEW_ACT_NONE + 1; a < VIEW_ACTION_COUNT; a++)
        if (seen[a] != 1) fail_msg("action %d is in the key table %d times", a, seen[a]);
    assert_int_equal(view_key_action('j'), VIEW_ACT_NONE);
    assert_int_equal(view_key_action('P'), VIEW_ACT_PLAY); /* upper case is the same key */
    assert_int_equal(view_key(v, '0'), VIEW_REQ_CLOCK);    /* the presenter's clock: the window's */

    /* stepping */
    view_finish(v);
    assert_int_equal(view_key(v, VIEW_KEY_RIGHT), VIEW_REQ_NONE);
    assert_int_equal(v->step, 1);
    view_key(v, ' '); /* finishes the step's animation */
    assert_true(view_progress(v) == 1.0);
    view_key(v, VIEW_KEY_END);
    assert_true(view_at_end(v));
    view_key(v, VIEW_KEY_HOME);
    assert_int_equal(v->step, 0);
    /* P at the end plays from the start */
    view_key(v, VIEW_KEY_END);
    view_key(v, 'p');
    assert_true(v->playing);
    assert_int_equal(v->step, 0);
    view_key(v, 'p');
    assert_false(v->playing);
    /* P while rewinding plays forwards from the step's end */
    view_goto(v, step_of(v, "Q"));
    view_advance(v, 0.2);
    view_key(v, VIEW_KEY_LEFT);
    assert_true(v->rewinding);
    view_key(v, 'p');
    assert_false(v->rewinding);
    assert_true(view_progress(v) == 1.0);
    view_key(v, 'p');
    /* speed: two presses of [ halve it, ] doubles it back */
    view_set_speed(v, 1.0);
    view_key(v, '[');
    view_key(v, '[');
    assert_true(fabs(v->speed - 0.5) < 1e-12);
    view_key(v, ']');
    view_key(v, ']');
    assert_true(fabs(v->speed - 1.0) < 1e-12);
    /* heads: the digit is the head, clamped to the lesson's */
    view_key(v, '2');
    assert_int_equal(v->head, 2);
    view_key(v, '9');
    assert_int_equal(v->head, 2);
    view_key(v, VIEW_KEY_TAB);
    assert_int_equal(v->head, 1);
    /* modes, theme, text */
    view_key(v, 'm');
    assert_int_equal(v->mode, VIEW_SINGLE);
    view_key(v, 'c');
    assert_int_equal(v->mode, VIEW_COMPARE);
    view_key(v, 't');
    assert_int_equal(v->theme, VIEW_THEME_DARK);
    float ts = v->text_scale;
    view_key(v, '+');
    assert_true(v->text_scale > ts);
    char said[64];
    view_notice_text(v, said, sizeof said);
    assert_string_equal(said, "text 110%"); /* brief feedback of the size */
    view_key(v, '-');
    assert_true(fabsf(v->text_scale - ts) < 1e-5f);
    view_notice_text(v, said, sizeof said);
    assert_string_equal(said, "text 100%");
    /* what the window does */
    assert_int_equal(view_key(v, 'l'), VIEW_REQ_TITLE);
    assert_int_equal(v->lang, LESSON_ZH);
    assert_int_equal(view_key(v, 's'), VIEW_REQ_SAVE);
    assert_int_equal(view_key(v, 'f'), VIEW_REQ_FULLSCREEN);
    assert_int_equal(view_key(v, VIEW_KEY_F11), VIEW_REQ_FULLSCREEN);
    assert_int_equal(view_key(v, 'r'), VIEW_REQ_RELOAD);
    /* help: ? opens it, Esc closes it without quitting, then Esc quits; Q quits over the help */
    view_key(v, '?');
    assert_true(v->show_help);
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_NONE);
    assert_false(v->show_help);
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_QUIT);
    view_key(v, VIEW_KEY_F1);
    assert_true(v->show_help);
    assert_int_equal(view_key(v, 'q'), VIEW_REQ_QUIT);
    fixture_free(f);
}

/* Keys pressed by reflex lose nothing: with unsaved edits Esc and Q first
 * show a notice, and Q (not Esc) while it shows quits; fullscreen, Esc leaves
 * fullscreen instead of quitting; F5 (a clicker's button) is fullscreen. */
static void test_reflex_keys(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    view_set_unsaved(v, 1);
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_NONE);
    assert_int_equal(v->notice_what, VS_NOTICE_UNSAVED);
    assert_true(view_quit_confirmed(v));
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_NONE); /* a second Esc: still only the notice */
    assert_int_equal(view_key(v, 'q'), VIEW_REQ_QUIT);             /* Q again quits */
    /* once the notice is gone, Q asks again */
    view_advance(v, 60.0);
    assert_false(view_quit_confirmed(v));
    assert_int_equal(view_key(v, 'q'), VIEW_REQ_NONE);
    assert_int_equal(view_key(v, 'Q'), VIEW_REQ_QUIT);
    char text[256];
    view_set_lang(v, LESSON_ZH);
    view_notice_text(v, text, sizeof text);
    assert_string_equal(text, "修改尚未保存：按 Ctrl+S 保存，再按 Q 退出");
    /* saved: Esc quits */
    view_set_unsaved(v, 0);
    view_advance(v, 60.0);
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_QUIT);
    /* fullscreen: Esc leaves it, with or without edits; F5 toggles it */
    view_set_fullscreen(v, 1);
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_FULLSCREEN);
    view_set_unsaved(v, 1);
    assert_int_equal(view_key(v, VIEW_KEY_ESCAPE), VIEW_REQ_FULLSCREEN);
    assert_int_equal(view_key(v, VIEW_KEY_F5), VIEW_REQ_FULLSCREEN);
    /* Q in fullscreen with unsaved edits: the notice first */
    assert_int_equal(view_key(v, 'q'), VIEW_REQ_NONE);
    assert_int_equal(view_key(v, 'q'), VIEW_REQ_QUIT);
    fixture_free(f);
}

/* B and '.' (a clicker's blank-screen button) black the screen and pause
 * autoplay; B again, or a clicker's next or back, brings it back where it
 * was and autoplay resumes. */
static void test_black_screen(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    view_goto(v, 3);
    view_finish(v);
    view_set_playing(v, 1);
    unsigned long rev = v->revision;
    assert_int_equal(view_key(v, 'b'), VIEW_REQ_NONE);
    assert_true(v->black);
    assert_false(v->playing);
    assert_true(v->revision != rev);
    view_advance(v, 30.0);
    assert_int_equal(v->step, 3);    /* nothing moves while black */
    view_key(v, VIEW_KEY_PAGE_DOWN); /* a clicker's next: the screen comes back, on the same step */
    assert_false(v->black);
    assert_true(v->playing);
    assert_int_equal(v->step, 3);
    view_set_playing(v, 0);
    view_key(v, '.');
    assert_true(v->black);
    view_key(v, VIEW_KEY_PAGE_UP);
    assert_false(v->black);
    assert_false(v->playing);
    assert_int_equal(v->step, 3);
    view_key(v, VIEW_KEY_PAGE_DOWN); /* and then steps as usual */
    assert_int_equal(v->step, 4);
    fixture_free(f);
}

/* Ink: strokes stay with the step (and mode) they were drawn on and come
 * back with it; X clears only that step's; I, G and Z choose the pointer's
 * tool, the same key again turning it off. */
static void test_ink_per_step(void **state)
{
    (void)state;
    Ink ink = {0};
    assert_null(ink_page(&ink, VIEW_MULTI, 3));
    assert_int_equal(ink_begin(&ink, VIEW_MULTI, 3, 0.1f, 0.2f), 0);
    assert_int_equal(ink_add(&ink, 0.3f, 0.4f), 0);
    assert_int_equal(ink_add(&ink, 1.5f, -0.5f), 0); /* outside the frame: clamped to its edge */
    ink_end(&ink);
    assert_int_equal(ink_add(&ink, 0.9f, 0.9f), 0); /* no stroke open: nothing */
    assert_int_equal(ink_begin(&ink, VIEW_MULTI, 3, 0.5f, 0.5f), 0);
    ink_end(&ink);
    assert_int_equal(ink_begin(&ink, VIEW_MULTI, 4, 0.6f, 0.6f), 0);
    ink_end(&ink);
    assert_int_equal(ink_begin(&ink, VIEW_SINGLE, 3, 0.7f, 0.7f), 0);
    ink_end(&ink);
    const InkPage *p = ink_page(&ink, VIEW_MULTI, 3);
    assert_non_null(p);
    assert_int_equal(p->n, 2);
    assert_int_equal(p->strokes[0].n, 3);
    assert_true(p->strokes[0].pts[1].x == 0.3f && p->strokes[0].pts[1].y == 0.4f);
    assert_true(p->strokes[0].pts[2].x == 1.0f && p->strokes[0].pts[2].y == 0.0f);
    assert_int_equal(ink_page(&ink, VIEW_MULTI, 4)->n, 1);
    assert_int_equal(ink_page(&ink, VIEW_SINGLE, 3)->n, 1);
    unsigned long changes = ink.changes;
    assert_int_equal(ink_clear(&ink, VIEW_MULTI, 3), 1);
    assert_true(ink.changes != changes);
    assert_null(ink_page(&ink, VIEW_MULTI, 3));
    assert_int_equal(ink_clear(&ink, VIEW_MULTI, 3), 0);
    assert_int_equal(ink_page(&ink, VIEW_MULTI, 4)->n, 1); /* other steps keep theirs */
    assert_int_equal(ink_page(&ink, VIEW_SINGLE, 3)->n, 1);
    ink_free(&ink);
    assert_null(ink_page(&ink, VIEW_MULTI, 4));

    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    assert_int_equal(v->tool, VIEW_TOOL_NONE);
    view_key(v, 'i');
    assert_int_equal(v->tool, VIEW_TOOL_INK);
    assert_int_equal(v->notice_what, VS_NOTICE_INK);
    assert_int_equal(view_key(v, 'x'), VIEW_REQ_INK_CLEAR);
    view_key(v, 'g');
    assert_int_equal(v->tool, VIEW_TOOL_SPOTLIGHT);
    view_key(v, 'z');
    assert_int_equal(v->tool, VIEW_TOOL_LASER);
    view_key(v, 'z');
    assert_int_equal(v->tool, VIEW_TOOL_NONE);
    fixture_free(f);
}

/* Big text's caption: the narration's first sentence, cut after its full
 * stop and never inside a number; U toggles big text. */
static void test_big_text_caption(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    char narr[NARRATE_MAX_STEP_TEXT], cap[NARRATE_MAX_STEP_TEXT];
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        view_set_lang(v, (LessonLang)l);
        for (int s = 0; s < view_step_count(v); s++) {
            view_goto(v, s);
            view_narration(v, narr, sizeof narr);
            size_t n = view_big_text_caption(v, cap, sizeof cap);
            assert_int_equal(n, strlen(cap));
            assert_true(n > 0);
            assert_memory_equal(narr, cap, n); /* the narration's start */
            int ends = n == strlen(narr) || cap[n - 1] == '.' || cap[n - 1] == '!' || cap[n - 1] == '?' ||
                       (n >= 3 && (strcmp(cap + n - 3, "。") == 0 || strcmp(cap + n - 3, "！") == 0 ||
                                   strcmp(cap + n - 3, "？") == 0));
            if (!ends) fail_msg("step %d (%d): the caption \"%s\" does not end a sentence", s, l, cap);
            if (n >= 2 && cap[n - 1] == '.')
                assert_false(cap[n - 2] >= '0' && cap[n - 2] <= '9' && narr[n] != ' ' && narr[n]);
        }
    }
    assert_int_equal(view_big_text_min(768), 26);
    assert_int_equal(view_big_text_min(1080), 36);
    unsigned long rev = v->revision;
    view_key(v, 'u');
    assert_true(v->big_text);
    assert_true(v->revision != rev);
    view_key(v, 'U');
    assert_false(v->big_text);
    fixture_free(f);
}

/* The help lists every row of the key table, two to a line, then the mouse. */
static void test_help_text(void **state)
{
    (void)state;
    int n = 0;
    const ViewBinding *b = view_bindings(&n);
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        char help[4096];
        size_t len = view_help_text((LessonLang)l, help, sizeof help);
        assert_int_equal(len, strlen(help));
        for (int i = 0; i < n; i++) {
            char entry[256];
            snprintf(entry, sizeof entry, "%s  %s", b[i].label[l], b[i].description[l]);
            if (!strstr(help, entry)) fail_msg("the help (%d) lacks \"%s\"", l, entry);
        }
        /* the first line holds the first two rows, split by three spaces */
        char first[512];
        snprintf(first, sizeof first, "%s  %s   %s  %s\n", b[0].label[l], b[0].description[l], b[1].label[l],
                 b[1].description[l]);
        assert_memory_equal(help, first, strlen(first));
        assert_non_null(strstr(help, view_string(VS_HELP_MOUSE, (LessonLang)l)));
        /* too small a buffer: cut at a whole line, terminated */
        char small[100];
        size_t cut = view_help_text((LessonLang)l, small, sizeof small);
        assert_int_equal(cut, strlen(small));
        assert_true(cut > 0 && cut < sizeof small);
        assert_memory_equal(small, help, cut);
        assert_true(help[cut] == '\n');
    }
}

/* The mouse: hover, clicks on the timeline, heads and tokens, the wheel and a drag. */
static void test_pointer(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    int sm = step_of(v, "weights_1");
    ViewTarget cell = {VIEW_TARGET_CELL, v->trace, sm, 1, 2, 0, 1, NULL};
    view_pointer_move(v, &cell, 10, 10, 40);
    assert_ptr_equal(v->hover_trace, v->trace);
    assert_int_equal(v->hover_step, sm);
    assert_int_equal(v->hover_row, 1);
    assert_int_equal(v->hover_col, 2);
    ViewTarget none = {VIEW_TARGET_NONE, NULL, -1, -1, -1, 0, 0, NULL};
    view_pointer_move(v, &none, 0, 0, 40);
    assert_int_equal(v->hover_step, -1);
    /* the timeline jumps to a step's final state */
    ViewTarget tl = {VIEW_TARGET_TIMELINE, v->trace, sm, -1, -1, 0, 0, NULL};
    view_pointer_press(v, &tl, 0, 0);
    assert_int_equal(v->step, sm);
    assert_true(view_progress(v) == 1.0);
    /* a head's small multiple selects the head (and its step) */
    ViewTarget hd = {VIEW_TARGET_HEAD, v->trace, -1, -1, -1, 2, 0, NULL};
    view_pointer_press(v, &hd, 0, 0);
    assert_int_equal(v->head, 2);
    assert_int_equal(v->step, step_of(v, "weights_2"));
    /* self-attention: a token is the query and the key, whichever label */
    ViewTarget tok = {VIEW_TARGET_TOKEN, v->trace, sm, -1, 2, 0, 0, NULL};
    view_pointer_press(v, &tok, 0, 0);
    assert_int_equal(v->sel_query, 2);
    assert_int_equal(v->sel_key, 2);
    view_pointer_press(v, &tok, 0, 0); /* again: cleared */
    assert_int_equal(v->sel_query, -1);
    /* an open help is closed by a click, which does nothing else */
    view_set_help(v, 1);
    view_pointer_press(v, &tl, 0, 0);
    assert_false(v->show_help);
    assert_int_equal(v->step, step_of(v, "weights_2"));
    /* the wheel zooms on a zoomable cell only, 1.25 a notch, 1 to 64 */
    ViewTarget flat = cell;
    flat.zoomable = 0;
    view_wheel(v, &flat, 1);
    assert_true(v->zoom == 1.0f);
    cell.step = v->step;
    view_wheel(v, &cell, 1);
    assert_true(fabsf(v->zoom - 1.25f) < 1e-6f);
    for (int i = 0; i < 40; i++) view_wheel(v, &cell, 1);
    assert_true(v->zoom == VIEW_ZOOM_MAX);
    /* a drag by two and a half cells pans by two; less than a cell, not at all */
    view_set_zoom(v, 4.0f, 2.0f, 2.0f);
    view_pointer_press(v, &cell, 100, 100);
    assert_true(v->dragging);
    view_pointer_move(v, &cell, 120, 100, 40);
    assert_true(v->pan_x == 2.0f);
    view_pointer_move(v, &cell, 100 - 100, 100, 40); /* 100 px left: 2 cells, the view moves right */
    assert_true(v->pan_x == 4.0f);
    view_pointer_move(v, &cell, 0 + 200, 100, 40); /* 200 px right: 5 cells, clamped at 0 */
    assert_true(v->pan_x == 0.0f);
    view_pointer_release(v);
    assert_false(v->dragging);
    for (int i = 0; i < 40; i++) view_wheel(v, &cell, -1);
    assert_true(v->zoom == 1.0f && v->pan_x == 0.0f && v->pan_y == 0.0f);
    fixture_free(f);

    /* cross-attention: a query label selects a query, a source label a key */
    f = fixture_make(LESSON_CROSS);
    v = &f->view;
    ViewTarget q = {VIEW_TARGET_TOKEN, v->trace, 0, 1, -1, 0, 0, NULL};
    view_pointer_press(v, &q, 0, 0);
    assert_int_equal(v->sel_query, 1);
    assert_int_equal(v->sel_key, -1);
    ViewTarget k = {VIEW_TARGET_TOKEN, v->trace, 0, -1, 2, 0, 0, NULL};
    view_pointer_press(v, &k, 0, 0);
    assert_int_equal(v->sel_query, -1);
    assert_int_equal(v->sel_key, 2);
    fixture_free(f);
}

/* S saves the frame without the transient notice; the names the command
 * line and files use. */
static void test_saving_and_names(void **state)
{
    (void)state;
    Fixture *f = fixture_make(LESSON_MHSA);
    View *v = &f->view;
    view_set_notice(v, VS_NOTICE_SAVED, "attnviz-frames/x.png", 0);
    View clean;
    view_for_saving(v, &clean);
    char text[VIEW_MAX_NOTICE];
    assert_int_equal(view_notice_text(&clean, text, sizeof text), 0);
    assert_string_equal(text, "");
    assert_true(view_notice_text(v, text, sizeof text) > 0); /* the window keeps it */
    assert_non_null(strstr(text, "attnviz-frames/x.png"));
    assert_ptr_equal(clean.trace, v->trace);
    assert_int_equal(clean.step, v->step);
    for (int i = 0; i < VIEW_THEME_COUNT; i++)
        assert_int_equal(view_name_index(view_theme_names, VIEW_THEME_COUNT, view_theme_names[i]), i);
    assert_int_equal(view_name_index(view_mode_names, VIEW_MODE_COUNT, "compare"), VIEW_COMPARE);
    assert_int_equal(view_name_index(lesson_lang_names, LESSON_LANG_COUNT, "zh"), LESSON_ZH);
    assert_int_equal(view_name_index(lesson_lang_names, LESSON_LANG_COUNT, "fr"), -1);
    assert_int_equal(view_lesson_head_count(&f->lesson), view_head_count(v));
    fixture_free(f);
}

/* ---- a trace computed on the view's worker thread ---- */

/* A lesson of n tokens, 4 heads, causal, its numbers from its seed; with a
 * narration text when texts (which may quote any step), into *L. */
static void large_lesson(Lesson *L, int n, int texts)
{
    char before[512];
    snprintf(before, sizeof before,
             "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-view-large\", \"title\": {\"en\": \"Large\"},"
             " \"d_model\": 16, \"heads\": 4, \"seed\": 7, \"mask\": \"causal\",%s \"tokens\": [",
             texts ? " \"narration\": {\"input\": {\"en\": \"X, {value:weights_4[1][0]}\"}}," : "");
    char *json = test_tokens_json(before, n, "]}");
    assert_non_null(json);
    LessonError le;
    if (lesson_parse(L, json, strlen(json), "large.json", &le) != 0) fail_msg("lesson: %s", le.msg);
    free(json);
}

/* view_init_background on a trace of several MiB: while the worker runs,
 * the steps the view calls ready are exactly those published; at the end
 * the trace is view_init's, bit for bit, and every step is ready. */
static void test_background_trace(void **state)
{
    (void)state;
    Lesson L;
    large_lesson(&L, 320, 0);
    char err[512];
    View a, b;
    assert_int_equal(view_init(&a, &L, err, sizeof err), 0);
    assert_int_equal(view_init_background(&b, &L, err, sizeof err), 0);
    assert_true(b.trace->data_bytes > ((size_t)4 << 20)); /* large enough for the worker */
    assert_null(b.single);
    assert_true(b.single_stale);
    while (view_preparing(&b)) {
        assert_int_equal(view_poll(&b, err, sizeof err), 0);
        int ready = b.ready_seen;
        for (int i = 0; i < b.trace->n_steps; i++)
            if (i < ready && !view_step_ready(&b, b.trace, i)) fail_msg("step %d published, not ready", i);
        sched_yield();
    }
    assert_int_equal(view_poll(&b, err, sizeof err), 0); /* joins the worker */
    assert_null(b.worker);
    assert_traces_identical("computed on the view's worker", b.trace, a.trace);
    for (int i = 0; i < b.trace->n_steps; i++) assert_true(view_step_ready(&b, b.trace, i));
    view_set_mode(&b, VIEW_SINGLE); /* the single-head trace, built now */
    assert_non_null(b.single);
    assert_traces_identical("single-head", b.single, a.single);
    view_free(&a);
    view_free(&b);
    lesson_free(&L);
}

/* view_free and view_recompute while the worker may still run: the one
 * stops it, the other waits for it; nothing leaks or hangs. */
static void test_background_stop(void **state)
{
    (void)state;
    Lesson L;
    large_lesson(&L, 320, 0);
    char err[512];
    View v;
    assert_int_equal(view_init_background(&v, &L, err, sizeof err), 0);
    view_free(&v);
    assert_int_equal(view_init_background(&v, &L, err, sizeof err), 0);
    L.X[0] += 1.0f; /* an edit: the worker computes from its own copy */
    assert_int_equal(view_recompute(&v, err, sizeof err), 0);
    assert_null(v.worker);
    assert_int_equal(attn_trace_ready(v.trace), v.trace->n_steps);
    assert_true(v.trace->steps[0].data[0] == L.X[0]);
    view_free(&v);
    lesson_free(&L);
}

/* A lesson whose numbers overflow only in a head: the background view
 * opens, and view_poll reports the overflow, naming the file and the step,
 * once the worker reaches it. */
static void test_background_overflow(void **state)
{
    (void)state;
    Lesson L;
    large_lesson(&L, 320, 0);
    for (int i = 0; i < L.cfg.n_q * L.cfg.d_model; i++) L.X[i] *= 1e21f; /* Q·Kᵀ beyond float32 */
    char err[512] = "";
    View v;
    assert_int_equal(view_init_background(&v, &L, err, sizeof err), 0);
    int rc;
    while ((rc = view_poll(&v, err, sizeof err)) == 0 && view_preparing(&v)) sched_yield();
    if (rc == 0) rc = view_poll(&v, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "large.json: scores_1["));
    assert_non_null(strstr(err, "overflowed float32"));
    assert_null(v.worker);
    view_free(&v);
    lesson_free(&L);
}

/* A step not yet computed: not ready, narrated as being computed in both
 * languages, held by autoplay; the steps before it ready, unless the lesson
 * has texts of its own. The partial trace is one whose computing stopped at
 * the end of its first phase (the inputs and projections). */
static void test_step_not_ready(void **state)
{
    (void)state;
    for (int texts = 0; texts <= 1; texts++) {
        Lesson L;
        large_lesson(&L, 40, texts);
        char err[512];
        View v;
        assert_int_equal(view_init(&v, &L, err, sizeof err), 0);
        AttnTrace *part = attn_trace_plan(&L.cfg, err, sizeof err), *whole = v.trace;
        assert_non_null(part);
        attn_trace_cancel(part);
        assert_int_equal(attn_trace_compute(part, &L.cfg, err, sizeof err), -1);
        v.trace = part;
        int q1 = attn_trace_index(part, attn_trace_find_name(part, "Q_1"));
        assert_int_equal(attn_trace_ready(part), q1);
        assert_int_equal(view_step_ready(&v, part, q1 - 1), !texts);
        assert_false(view_step_ready(&v, part, q1));
        view_goto(&v, q1);
        char text[NARRATE_MAX_STEP_TEXT], want[64];
        view_narration(&v, text, sizeof text);
        snprintf(want, sizeof want, "Computing step %d…", q1 + 1);
        assert_string_equal(text, want);
        view_set_lang(&v, LESSON_ZH);
        view_narration(&v, text, sizeof text);
        snprintf(want, sizeof want, "正在计算第 %d 步……", q1 + 1);
        assert_string_equal(text, want);
        view_set_playing(&v, 1);
        assert_false(view_is_busy(&v));
        view_advance(&v, 10.0);
        assert_int_equal(v.step, q1);
        assert_true(v.t == 0.0);
        v.trace = whole; /* computed: the step plays */
        assert_true(view_is_busy(&v));
        view_advance(&v, 0.1);
        assert_true(v.t > 0.0);
        attn_trace_destroy(part);
        view_free(&v);
        lesson_free(&L);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_state),
        cmocka_unit_test(test_single_trace_overflow),
        cmocka_unit_test(test_long_intro_keeps_step_text),
        cmocka_unit_test(test_long_filled_text_shown_whole),
        cmocka_unit_test(test_single_is_sdpa),
        cmocka_unit_test(test_stepping_and_clamping),
        cmocka_unit_test(test_clock_and_autoplay),
        cmocka_unit_test(test_heads),
        cmocka_unit_test(test_kv_groups),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_formula),
        cmocka_unit_test(test_narration_and_explain),
        cmocka_unit_test(test_summary_opens_first_step),
        cmocka_unit_test(test_step_without_text),
        cmocka_unit_test(test_mask_and_labels),
        cmocka_unit_test(test_mask_then_scale),
        cmocka_unit_test(test_selection_and_notice),
        cmocka_unit_test(test_revision),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_reflex_keys),
        cmocka_unit_test(test_black_screen),
        cmocka_unit_test(test_ink_per_step),
        cmocka_unit_test(test_big_text_caption),
        cmocka_unit_test(test_help_text),
        cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_saving_and_names),
        cmocka_unit_test(test_every_entry_in_every_language),
        cmocka_unit_test(test_default_narration_punctuation),
        cmocka_unit_test(test_notice_follows_language),
        cmocka_unit_test(test_explanations_follow_language),
        cmocka_unit_test(test_background_trace),
        cmocka_unit_test(test_background_stop),
        cmocka_unit_test(test_background_overflow),
        cmocka_unit_test(test_step_not_ready),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
