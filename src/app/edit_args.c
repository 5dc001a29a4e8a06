/* edit_args.c: the edit options that trace, export, show and bench share:
 * --set 'NAME[i][j]=VALUE' (repeatable), --scale / --score-scale X and
 * --tokens 'a b c', applied to a loaded lesson through src/view/edit.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "edit.h"
#include "lesson.h"

int app_edit_arg(AppEdits *e, const AppArgs *a, int id, const char *val)
{
    switch (id) {
    case APP_OPT_SET:
        if (e->n_sets == APP_MAX_SETS) {
            app_arg_bad(a, "at most 256 of them", val);
            return -1;
        }
        e->sets[e->n_sets++] = val;
        return 1;
    case APP_OPT_TOKENS:
        e->tokens = val;
        return 1;
    case APP_OPT_SCORE_SCALE: {
        /* the range is the lesson's (0.1·√d_k to 10·√d_k), checked once it is loaded */
        double d = 0;
        size_t n = lesson_read_decimal(val, &d);
        if (!n || val[n] || !isfinite(d) || d <= 0) {
            app_arg_bad(a, "a positive number (the divisor of the scores)", val);
            return -1;
        }
        e->scale = d;
        return 1;
    }
    default:
        return 0;
    }
}

int app_edit_any(const AppEdits *e)
{
    return e->n_sets > 0 || e->tokens || e->scale > 0;
}

/* The recompute of an Edit whose changes are checked together afterwards. */
static int recompute_later(void *user, char *err, size_t errlen)
{
    (void)user, (void)err, (void)errlen;
    return 0;
}

static int apply_each(const AppEdits *a, Edit *e)
{
    if (a->tokens && edit_set_tokens(e, a->tokens) != 0) return -1;
    if (a->scale > 0 && edit_set_scale(e, a->scale) != 0) return -1;
    for (int i = 0; i < a->n_sets; i++)
        if (edit_set(e, a->sets[i]) != 0) return -1;
    return 0;
}

/* The edits are applied together and the forward pass computed once; when
 * the engine refuses the result, they are applied again one at a time, each
 * computed, so that the refusal names the edit that made it. */
int app_apply_edits(const AppEdits *a, Lesson *lesson)
{
    if (!app_edit_any(a)) return 0;
    Edit e;
    char err[640];
    if (edit_init_copy(&e, lesson, err, sizeof err) != 0) {
        app_fail(APP_RUNTIME, "%s: %s", lesson->path, err);
        return -1;
    }
    e.recompute = recompute_later;
    int rc = apply_each(a, &e);
    if (rc == 0) {
        e.recompute = NULL;
        if (edit_refresh(&e) != 0) {
            char together[sizeof e.msg];
            snprintf(together, sizeof together, "%s", e.msg);
            edit_free(&e);
            if (edit_init(&e, lesson, err, sizeof err) != 0) {
                app_fail(APP_USAGE, "%s: %s", lesson->path, err);
                return -1;
            }
            if (apply_each(a, &e) == 0) snprintf(e.msg, sizeof e.msg, "%s", together);
            rc = -1;
        }
    }
    Lesson out;
    if (rc != 0) {
        app_fail(APP_USAGE, "%s: %s", lesson->path, e.msg);
    } else if (lesson_copy(&out, edit_lesson(&e)) != 0 ||
               (edit_modified(&e) && !out.edited_from && !(out.edited_from = strdup(lesson->id)))) {
        /* edited_from: the narration without a condition was written for the numbers before */
        app_fail(APP_RUNTIME, "out of memory applying the edits");
        rc = -1;
    }
    edit_free(&e);
    if (rc != 0) return -1;
    lesson_free(lesson);
    *lesson = out;
    lesson_bind(lesson);
    return 0;
}
