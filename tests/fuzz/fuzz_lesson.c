/* fuzz_lesson.c: libFuzzer harness for the lesson loader.
 *
 * One input is one lesson file. It goes through what `attnviz check` and
 * `attnviz trace` do: lesson_parse, attn_trace_create, narrate_check (every
 * narration placeholder filled against the trace), trace_write_json (to
 * /dev/null), then lesson_free. Besides the sanitizers' own reports, it aborts when a contract
 * of lesson.h or attn.h is broken, because those are bugs as real as a crash:
 *
 *   - a rejected lesson leaves one non-empty line in err.msg, a consistent
 *     line/column, and a zeroed Lesson that owns nothing;
 *   - an accepted lesson's config is one the engine accepts (the loader
 *     validated it): attn_trace_create fails only when the lesson's numbers
 *     overflow float32, and says so; its tokens match n_q / n_k, non-empty;
 *   - no step of its trace holds NaN, and none holds ±Inf except the -inf
 *     fill of a `masked` step, which the lesson asked for ("no NaN or Inf
 *     ever reaches the screen or a file unless the lesson asked for it");
 *   - what `attnviz check` accepts, every view shows: view_init succeeds;
 *     every step's narration is its text filled whole (never raw, never
 *     cut; under the "about the lesson before" marker in a lesson saved
 *     from an edited one), or, when its condition does not hold (which
 *     check allows in such a lesson), the step described and a word that
 *     the text does not hold; in the single-head view of a lesson with
 *     several heads the step described from what is drawn; single and compare view either
 *     open, or, when the single-head trace overflows, are refused with a
 *     notice while the view stays in multi-head mode.
 *
 * Build: configure with CC=clang -DATTNVIZ_FUZZ=ON (tests/fuzz.cmake), run:
 *
 *     build-fuzz/fuzz_lesson -dict=tests/fuzz/lesson.dict -timeout=10 \
 *         NEW_DIR tests/fuzz/corpus tests/fuzz/regressions
 *
 * The same entry point is linked with replay_main.c into fuzz_lesson_replay,
 * which CTest runs over the committed corpus with any compiler (tests/robust.cmake).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "lesson.h"
#include "narrate.h"
#include "view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Traces bigger than this many float multiply-adds are parsed and validated
 * but not computed: the loader's limits allow forward passes of seconds, and
 * the fuzzer must stay at thousands of inputs per second. The checks the
 * loader makes before allocating are exercised either way. */
#define FUZZ_MAX_WORK (1u << 20)
/* Likewise traces of more numbers than this are computed and checked but not
 * written: formatting is most of the time of a big trace (%.9g per number),
 * and the writer's paths are the same for a small one. */
#define FUZZ_MAX_WRITE_FLOATS (1u << 14)

static void fuzz_fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_lesson: contract broken: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static double work_of(const AttnConfig *c)
{
    if (c->attention == ATTN_ADDITIVE) {
        double dy = c->cross ? c->d_y : c->d_x;
        return (double)c->n_q * c->n_k * (c->d_a + dy) + (double)(c->n_q + c->n_k) * (c->d_x + dy) * c->d_a;
    }
    double width = (double)c->heads * c->d_k + (double)attn_kv_heads(c) * (c->d_k + c->d_v);
    double work = (double)(c->n_q + c->n_k) * c->d_model * width                 /* projections */
                  + (double)c->heads * c->n_q * c->n_k * (c->d_k + c->d_v + 4.0) /* heads */
                  + (double)c->n_q * c->heads * c->d_v * c->d_model;             /* W_O */
    /* decoding token by token is about the whole forward again, with a step per row */
    return c->decode == ATTN_DECODE_INCREMENTAL ? 2 * work + 64.0 * c->n_q * c->heads : work;
}

static int is_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

static void check_rejected(const Lesson *lesson, const LessonError *err)
{
    size_t n = strnlen(err->msg, sizeof err->msg);
    if (n == 0) fuzz_fail("rejected lesson without a message", NULL);
    if (n == sizeof err->msg) fuzz_fail("error message not NUL-terminated", NULL);
    if (strchr(err->msg, '\n')) fuzz_fail("error message is more than one line", err->msg);
    if (err->line < 0 || err->col < 0 || (err->line == 0) != (err->col == 0))
        fuzz_fail("inconsistent line/column", err->msg);
    if (!is_zero(lesson, sizeof *lesson)) fuzz_fail("rejected lesson not zeroed", err->msg);
}

static void check_accepted(const Lesson *l)
{
    const AttnConfig *c = &l->cfg;
    if (l->n_tokens != c->n_q) fuzz_fail("n_tokens != cfg.n_q", l->path);
    for (int i = 0; i < l->n_tokens; i++)
        if (!l->tokens[i] || !l->tokens[i][0]) fuzz_fail("empty token accepted", l->path);
    if (c->cross) {
        if (l->n_source_tokens != c->n_k) fuzz_fail("n_source_tokens != cfg.n_k", l->path);
        for (int i = 0; i < l->n_source_tokens; i++)
            if (!l->source_tokens[i] || !l->source_tokens[i][0]) fuzz_fail("empty source token accepted", l->path);
    }
    if (!l->id || !l->title.text[LESSON_EN]) fuzz_fail("lesson without id or English title accepted", l->path);
}

/* No NaN anywhere; ±Inf only as the -inf fill of a masked step. */
static void check_finite(const AttnTrace *t)
{
    for (int s = 0; s < t->n_steps; s++) {
        const AttnStep *st = &t->steps[s];
        size_t n = (size_t)st->rows * (size_t)st->cols;
        for (size_t i = 0; i < n; i++) {
            float v = st->data[i];
            if (isfinite(v)) continue;
            if (st->kind == ATTN_STEP_MASKED && v == -INFINITY && t->cfg.mask_fill == -INFINITY) continue;
            char where[192];
            snprintf(where, sizeof where, "step %s [%zu][%zu] = %g", st->name, i / (size_t)st->cols,
                     i % (size_t)st->cols, (double)v);
            fuzz_fail("non-finite value in the trace", where);
        }
    }
}

/* How a view shows a text of the lesson (lessons/FORMAT.md, "When a text
 * holds"): 1 as it is, 2 under "about the lesson before its numbers were
 * changed" (no condition, in a lesson saved from an edited one), 0 not at
 * all (its condition does not hold for these numbers). The harness's View
 * is never edited, so only edited_from marks a text. */
static int shown_as(const View *v, const LessonText *t, const AttnTrace *trace, const AttnStep *s)
{
    char msg[512];
    if (t->when) return narrate_when(t->when, v->lesson, trace, s, msg, sizeof msg) == 1;
    return v->lesson->edited_from ? 2 : 1;
}

/* Appends a text of no step (the summary, the intro) as the view opens
 * step 0 with it: filled, after the marker (said once a step: *said), and a
 * line break; nothing when its condition does not hold. */
static void want_paragraph(char *want, size_t cap, const View *v, const AttnTrace *trace, const LessonText *t,
                           int *said)
{
    static char filled[NARRATE_MAX_FILLED + 1];
    int as = t && t->text[LESSON_EN] ? shown_as(v, t, trace, NULL) : 0;
    if (!as || narrate_fill(filled, sizeof filled, lesson_text(t, v->lang), v->lesson, trace, NULL, v->lang) != 0)
        return;
    if (as == 2 && !*said) strncat(want, view_string(VS_ABOUT_ORIGINAL, v->lang), cap - strlen(want) - 1);
    if (as == 2) *said = 1;
    strncat(want, filled, cap - strlen(want) - 1);
    strncat(want, "\n", cap - strlen(want) - 1);
}

/* The narration a view shows for step i of trace (view_step_narration):
 * where the lesson's texts apply, its text filled whole (after its marker),
 * after the summary and intro on step 0; a text whose condition does not
 * hold gives way to the step described and a word that the lesson's text
 * does not hold; elsewhere (the single-head view of a lesson with several
 * heads) the step described from what is drawn, never a raw lesson text. */
static void check_step_narration(const View *v, const AttnTrace *trace, int i)
{
    static char shown[NARRATE_MAX_STEP_TEXT], want[NARRATE_MAX_STEP_TEXT], filled[NARRATE_MAX_FILLED + 1];
    const AttnStep *s = &trace->steps[i];
    int rc = view_step_narration(v, trace, i, shown, sizeof shown);
    const LessonText *lt = lesson_narration_for(v->lesson, s);
    const char *text = lt ? lesson_text(lt, v->lang) : NULL;
    if (!view_lesson_texts_apply(v, trace)) {
        if (rc != -1 || !shown[0]) fuzz_fail("a step of the single-head view was not described", s->name);
        if (text && strchr(text, '{') && strstr(shown, text)) fuzz_fail("a lesson text shown raw", s->name);
        return;
    }
    want[0] = '\0';
    int said = 0;
    if (i == 0) {
        want_paragraph(want, sizeof want, v, trace, &v->lesson->summary, &said);
        want_paragraph(want, sizeof want, v, trace, lesson_narration_text(v->lesson, "intro"), &said);
    }
    int as = lt ? shown_as(v, lt, trace, s) : 0;
    if (!as) {
        if (rc != -1 || strncmp(shown, want, strlen(want)) != 0) fuzz_fail("summary or intro not shown whole", s->name);
        /* the word that the text does not hold, or the same naming the claim */
        const char *because = view_string(VS_TEXT_NO_LONGER_BECAUSE, v->lang);
        char prefix[256];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(strstr(because, "%s") - because), because);
        if (lt && !strstr(shown, view_string(VS_TEXT_NO_LONGER, v->lang)) && !strstr(shown, prefix))
            fuzz_fail("a text whose condition does not hold was not said to be left out", s->name);
        return;
    }
    if (narrate_fill(filled, sizeof filled, text, v->lesson, trace, s, v->lang) != 0)
        fuzz_fail("a narration check accepted does not fill in a view", s->name);
    if (rc != 0) fuzz_fail("a narration that fills was not shown", s->name);
    if (as == 2 && !said) strncat(want, view_string(VS_ABOUT_ORIGINAL, v->lang), sizeof want - strlen(want) - 1);
    strncat(want, filled, sizeof want - strlen(want) - 1);
    if (strcmp(shown, want) != 0) fuzz_fail("the view's narration is not the filled text, whole", s->name);
}

/* Every view of a lesson that `attnviz check` accepts. */
static void check_views(const Lesson *lesson)
{
    View v;
    char err[512];
    if (view_init(&v, lesson, err, sizeof err) != 0) fuzz_fail("check accepts, view_init refuses", err);
    AttnConfig one;
    if (view_single_config(&lesson->cfg, &one) != 0) { /* no one-head form (grouped K/V heads): none to show */
        if (v.single) fuzz_fail("a single-head trace of a lesson with no one-head form", NULL);
    } else {
        AttnTrace *single = attn_trace_create(&one, err, sizeof err);
        if (!single != !v.single) fuzz_fail("the single-head trace builds in check but not in the view, or back", err);
        if (!single && !strstr(err, "overflowed float32"))
            fuzz_fail("the single-head trace failed for another reason", err);
        attn_trace_destroy(single);
    }
    for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
        v.lang = (LessonLang)lang;
        for (int i = 0; i < v.trace->n_steps; i++) check_step_narration(&v, v.trace, i);
        for (int mode = VIEW_SINGLE; mode < VIEW_MODE_COUNT; mode++) {
            view_set_mode(&v, (ViewMode)mode);
            if (mode == VIEW_COMPARE && !view_can_compare(&v)) {
                if (v.mode != VIEW_MULTI || v.notice_what != VS_NOTICE_COMPARE_ONE_HEAD)
                    fuzz_fail("compare mode of a lesson of one head was not refused", NULL);
                continue;
            }
            if (!v.single) {
                if (v.mode != VIEW_MULTI || v.notice_what != VS_NOTICE_SINGLE_UNAVAILABLE)
                    fuzz_fail("a view without its trace was not refused", NULL);
                continue;
            }
            if (v.mode != (ViewMode)mode) fuzz_fail("view_set_mode did not switch", NULL);
            for (int i = 0; i < v.single->n_steps; i++) check_step_narration(&v, v.single, i);
            for (int i = 0; i < v.trace->n_steps; i++)
                if (view_compare_step(&v, i) < 0 || view_compare_step(&v, i) >= v.single->n_steps)
                    fuzz_fail("compare view has no single-head step for a step", v.trace->steps[i].name);
            view_set_mode(&v, VIEW_MULTI);
        }
    }
    view_free(&v);
}

static FILE *devnull(void)
{
    static FILE *f;
    static char buf[1 << 16];
    if (!f) {
        f = fopen("/dev/null", "w");
        if (!f) fuzz_fail("cannot open /dev/null", NULL);
        setvbuf(f, buf, _IOFBF, sizeof buf);
    }
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Lesson lesson;
    LessonError err;
    if (lesson_parse(&lesson, (const char *)data, size, "fuzz.json", &err) != 0) {
        check_rejected(&lesson, &err);
        return 0;
    }
    check_accepted(&lesson);
    if (work_of(&lesson.cfg) <= FUZZ_MAX_WORK) {
        char msg[512];
        AttnTrace *t = attn_trace_create(&lesson.cfg, msg, sizeof msg);
        if (t) {
            check_finite(t);
            char nerr[512];
            int nbad = narrate_check(&lesson, t, nerr, sizeof nerr);
            if (nbad != 0 && (!nerr[0] || strchr(nerr, '\n')))
                fuzz_fail("narrate_check failed without a one-line message", nerr);
            if (nbad == 0 && 2 * work_of(&lesson.cfg) <= FUZZ_MAX_WORK) check_views(&lesson);
            if (t->data_bytes / sizeof(float) <= FUZZ_MAX_WRITE_FLOATS && trace_write_json(devnull(), &lesson, t) != 0)
                fuzz_fail("trace_write_json failed", NULL);
            attn_trace_destroy(t);
        } else if (!strstr(msg, "overflowed float32")) {
            /* the engine refuses only numbers too large for float32 (attn.h, "Overflow") */
            fuzz_fail("the loader accepted a config the engine rejects", msg);
        }
    }
    lesson_free(&lesson);
    return 0;
}
