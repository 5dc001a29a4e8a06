/* test_view_lessons.c: every lesson of lessons/ through the View, in every
 * mode: the compare view's two panes show the same kind of step on the same
 * operand, and the single-head and compare views narrate what is on screen
 * (the lesson's texts where they describe the drawn trace, a description
 * filled from the drawn numbers where they do not). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#include "view.h"

#define LESSONS_DIR ATTNVIZ_SOURCE_DIR "/lessons"

typedef struct Opened {
    Lesson lesson;
    View view;
} Opened;

typedef void (*LessonCheck)(Opened *o);

typedef struct Checking {
    LessonCheck check;
} Checking;

/* Opens the lesson at path with its View and runs the check on it. */
static void open_and_check(const char *path, void *user)
{
    Opened *o = calloc(1, sizeof *o);
    assert_non_null(o);
    LessonError le;
    if (lesson_load(&o->lesson, path, &le) != 0) fail_msg("%s", le.msg);
    char err[512];
    if (view_init(&o->view, &o->lesson, err, sizeof err) != 0) fail_msg("%s: %s", path, err);
    ((Checking *)user)->check(o);
    view_free(&o->view);
    lesson_free(&o->lesson);
    free(o);
}

/* Runs check on every lesson file of lessons/; returns how many. */
static int for_each_lesson(LessonCheck check)
{
    Checking c = {check};
    int n = test_each_json(LESSONS_DIR, open_and_check, &c);
    assert_true(n >= 0);
    return n;
}

/* "Q" of "Q_2", "scores" of "scores_2"; the whole name of a step of no head. */
static size_t base_len(const AttnStep *s)
{
    const char *us = strrchr(s->name, '_');
    return s->head > 0 && us ? (size_t)(us - s->name) : strlen(s->name);
}

static void expect_same_operand(const char *id, const AttnStep *multi, const AttnStep *single)
{
    if (multi->kind != single->kind || base_len(multi) != base_len(single) ||
        memcmp(multi->name, single->name, base_len(multi)) != 0)
        fail_msg("%s: compare view shows %s (%s) beside %s (%s)", id, single->name, attn_step_kind_name(single->kind),
                 multi->name, attn_step_kind_name(multi->kind));
}

/* Grouped K/V heads (kv_heads) have no one-head form: K is narrower than
 * Q. The single-head and compare views are then refused with the reason,
 * the lesson kept in its multi-head view; 1 for any other lesson. */
static int has_single_form(Opened *o)
{
    View *v = &o->view;
    AttnConfig one;
    if (view_single_config(&o->lesson.cfg, &one) == 0) return 1;
    for (ViewMode m = VIEW_SINGLE; m <= VIEW_COMPARE; m++) {
        view_set_mode(v, m);
        assert_int_equal(v->mode, VIEW_MULTI);
        assert_null(v->single);
        if (!strstr(v->single_error, "kv_heads"))
            fail_msg("%s: the single-head view is refused with '%s'", o->lesson.id, v->single_error);
    }
    return 0;
}

/* Every step of the multi-head trace, whichever head is selected, has its
 * counterpart of the same kind and operand in the single-head pane; and a
 * head key keeps the operand (K₁ → K₂, not Q₂). */
static void check_compare(Opened *o)
{
    View *v = &o->view;
    if (!view_can_compare(v)) return; /* one head: compare mode is refused (test_view) */
    view_set_mode(v, VIEW_COMPARE);
    if (!has_single_form(o)) return;
    assert_int_equal(v->mode, VIEW_COMPARE);
    for (int i = 0; i < v->trace->n_steps; i++) {
        view_goto(v, i);
        const AttnStep *m = &v->trace->steps[i];
        int cs = view_compare_step(v, i);
        assert_true(cs >= 0 && cs < v->single->n_steps);
        expect_same_operand(o->lesson.id, m, &v->single->steps[cs]);
        for (int h = 1; h <= view_head_count(v) && m->head > 0; h++) {
            view_goto(v, i);
            view_set_head(v, h);
            const AttnStep *now = view_current(v);
            if (now->kind != m->kind || base_len(now) != base_len(m) || memcmp(now->name, m->name, base_len(m)) != 0)
                fail_msg("%s: head %d from %s went to %s", o->lesson.id, h, m->name, now->name);
            assert_int_equal(now->head, h);
            expect_same_operand(o->lesson.id, now, &v->single->steps[view_compare_step(v, v->step)]);
        }
    }
}

static void test_compare_panes_agree(void **state)
{
    (void)state;
    assert_true(for_each_lesson(check_compare) >= 15);
}

/* The single-head view: a lesson with several heads has texts written for
 * its heads, so each step is described from the single-head trace itself
 * (each query's largest weight, as drawn); a lesson with one head is the
 * same computation, and its texts are shown. The title follows the same rule.
 * The compare view narrates both panes, each under its caption. */
static void check_narration(Opened *o)
{
    View *v = &o->view;
    if (!has_single_form(o)) return;
    const char *id = o->lesson.id;
    int own = v->trace->cfg.heads == 1 || v->trace->cfg.attention == ATTN_ADDITIVE;
    assert_int_equal(view_lesson_texts_apply(v, v->single), own);
    for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
        v->lang = (LessonLang)lang;
        view_set_mode(v, VIEW_SINGLE);
        char title[512];
        view_title(v, title, sizeof title);
        const char *lt = lesson_text(&o->lesson.title, v->lang);
        if (own)
            assert_string_equal(title, lt);
        else if (strcmp(title, lt) == 0 || !strstr(title, "h = 1"))
            fail_msg("%s: the single-head view is titled '%s'", id, title);
        for (int i = 0; i < v->single->n_steps; i++) {
            view_goto(v, i);
            const AttnStep *s = view_current(v);
            char text[4096];
            int rc = view_narration(v, text, sizeof text);
            const char *lesson_text_for = lesson_narration(&o->lesson, s, v->lang);
            if (!own) {
                if (rc != -1) fail_msg("%s: single-head step %s is narrated with a text of the lesson", id, s->name);
                if (lesson_text_for && strncmp(text, lesson_text_for, 24) == 0)
                    fail_msg("%s: single-head %s shows the lesson's text '%s'", id, s->name, text);
                if (i == 0 && strchr(text, '\n')) fail_msg("%s: the multi-head intro opens the single-head view", id);
            }
            if (s->kind == ATTN_STEP_SOFTMAX && !own) {
                /* each query's largest weight, from the drawn trace */
                const char *const *q = view_row_labels(v, v->single, s), *const *k = view_col_labels(v, v->single, s);
                for (int r = 0; r < s->rows && r < 6; r++) {
                    /* every key equal to the largest weight as %.4g prints it */
                    const float *row = s->data + r * s->cols;
                    float mx = row[0];
                    for (int c = 1; c < s->cols; c++)
                        if (row[c] > mx) mx = row[c];
                    if (!(mx > 0)) continue;
                    char top[32], here[32], keys[512] = "", want[1024];
                    snprintf(top, sizeof top, "%.4g", (double)mx);
                    int tied = 0, positive = 0;
                    for (int c = 0; c < s->cols; c++) {
                        positive += row[c] > 0;
                        snprintf(here, sizeof here, "%.4g", (double)row[c]);
                        if (strcmp(here, top) != 0 || tied++ >= 6) continue;
                        size_t at = strlen(keys);
                        snprintf(keys + at, sizeof keys - at, lang == LESSON_ZH ? "「%s」" : "%s%s",
                                 lang == LESSON_ZH ? k[c]
                                 : tied > 1        ? ", "
                                                   : "",
                                 k[c]);
                    }
                    if (tied > 1 && tied == positive)
                        snprintf(want, sizeof want,
                                 lang == LESSON_ZH ? "「%s」：均匀分布，各 %s" : "%s: uniform, %s each", q[r], top);
                    else
                        snprintf(want, sizeof want, lang == LESSON_ZH ? "「%s」→%s（%s）" : "%s → %s (%s)", q[r], keys,
                                 top);
                    if (!strstr(text, want)) fail_msg("%s: %s says '%s', not '%s'", id, s->name, text, want);
                }
            }
            if (own) {
                /* the same computation: the multi-head view's text for the same step */
                char multi[4096];
                view_set_mode(v, VIEW_MULTI);
                view_goto(v, i);
                view_narration(v, multi, sizeof multi);
                assert_string_equal(text, multi);
                view_set_mode(v, VIEW_SINGLE);
            }
        }
        /* compare: each pane's text under its caption, the single head's first, as drawn */
        view_set_mode(v, VIEW_COMPARE);
        for (int i = 0; i < v->trace->n_steps && view_can_compare(v); i++) {
            char cmp[8192], single[4096], multi[4096], cap[128], want[8192];
            view_goto(v, i);
            view_narration(v, cmp, sizeof cmp);
            view_step_narration(v, v->single, view_compare_step(v, i), single, sizeof single);
            view_step_narration(v, v->trace, i, multi, sizeof multi);
            const char *sep = lang == LESSON_ZH ? "：" : ": ";
            view_compare_caption(v, 0, cap, sizeof cap);
            size_t at = (size_t)snprintf(want, sizeof want, "%s%s%s\n", cap, sep, single);
            view_compare_caption(v, 1, cap, sizeof cap);
            snprintf(want + at, sizeof want - at, "%s%s%s", cap, sep, multi);
            assert_string_equal(cmp, want);
            if (!strstr(cmp, lang == LESSON_ZH ? "单头视图（h = 1，d_k = " : "single head (h = 1, d_k = ") ||
                !strstr(cmp, lang == LESSON_ZH ? "多头视图（h = " : "multi-head (h = "))
                fail_msg("%s: compare step %d does not name both panes: %s", id, i + 1, cmp);
        }
        view_set_mode(v, VIEW_MULTI);
    }
}

/* What a person reads counts from 1, as the labels are drawn: no hover of
 * any lesson, in either language or notation, says 第 0 or counts a row,
 * column, feature or head from 0; a head's column of the projection is the
 * one drawn under the same number. */
static void check_hover_ordinals(Opened *o)
{
    View *v = &o->view;
    const AttnTrace *t = v->trace;
    for (int n = 0; n < VIEW_NOTATION_COUNT; n++)
        for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
            v->lang = (LessonLang)lang;
            view_set_notation(v, (ViewNotation)n);
            for (int i = 0; i < t->n_steps; i++) {
                const AttnStep *s = &t->steps[i];
                for (int r = 0; r < s->rows && r < 6; r++)
                    for (int c = 0; c < s->cols && c < 6; c++) {
                        char buf[2048];
                        if (view_explain_cell(v, t, i, r, c, buf, sizeof buf) != 0) continue;
                        static const char *const bad[] = {"第 0 ",    "第 0·", "0…",   "of 0", "feature 0", "row 0",
                                                          "column 0", "[0]",   "[0, ", ", 0]", "x_0",       "y_0"};
                        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
                            if (strstr(buf, bad[k]))
                                fail_msg("%s: %s[%d][%d] (notation %d, lang %d) counts from 0: %s", o->lesson.id,
                                         s->name, r, c, n, lang, buf);
                        if (s->kind != ATTN_STEP_SPLIT || n != VIEW_NOTATION_ROW || lang != LESSON_EN) continue;
                        /* Q_2[我, 1] = Q[我, 3]: head 2's first column is drawn under "3" in Q */
                        char want[64];
                        snprintf(want, sizeof want, ", %d]  (head %d's column %d of %d)",
                                 (s->head - 1) * s->cols + c + 1, s->head, c + 1, s->cols);
                        if (!strstr(buf, want))
                            fail_msg("%s: %s[%d][%d] says '%s', not '%s'", o->lesson.id, s->name, r, c, buf, want);
                    }
            }
        }
    view_set_notation(v, VIEW_NOTATION_ROW);
}

static void test_hovers_count_from_1(void **state)
{
    (void)state;
    for_each_lesson(check_hover_ordinals);
}

static void test_single_and_compare_narrate_what_is_drawn(void **state)
{
    (void)state;
    for_each_lesson(check_narration);
}

/* Formula labels name the right sizes: Y has the keys' count, the queries'
 * X theirs; two heads are concatenated as Concat(head₁, head₂). */
static void check_labels(Opened *o)
{
    View *v = &o->view;
    const AttnConfig *c = &v->trace->cfg;
    if (c->attention != ATTN_DOT) return;
    for (int i = 0; i < v->trace->n_steps; i++) {
        const AttnStep *s = &v->trace->steps[i];
        view_goto(v, i);
        const char *fm = view_formula(v);
        if (s->kind == ATTN_STEP_INPUT) {
            const char *want = !c->cross                   ? "(n × d_model"
                               : strcmp(s->name, "Y") == 0 ? "(n_k × d_model"
                                                           : "(n_q × d_model";
            if (!strstr(fm, want)) fail_msg("%s: %s is labelled '%s'", o->lesson.id, s->name, fm);
        }
        if (s->kind == ATTN_STEP_CONCAT && c->heads == 2 && !strstr(fm, "Concat(head₁, head₂)"))
            fail_msg("%s: two heads are written '%s'", o->lesson.id, fm);
        if (s->kind == ATTN_STEP_CONCAT && c->heads > 3 && !strstr(fm, "Concat(head₁, …, head"))
            fail_msg("%s: %d heads are written '%s'", o->lesson.id, c->heads, fm);
    }
}

static void test_formula_labels(void **state)
{
    (void)state;
    for_each_lesson(check_labels);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_panes_agree),
        cmocka_unit_test(test_single_and_compare_narrate_what_is_drawn),
        cmocka_unit_test(test_hovers_count_from_1),
        cmocka_unit_test(test_formula_labels),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
