/* view_timeline.c: the steps in order, the animation clock, the heads and
 * the modes (multi-head, single head, both side by side). */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- the timeline ---- */

const AttnTrace *view_trace(const View *v)
{
    return v->mode == VIEW_SINGLE ? v->single : v->trace;
}

const AttnStep *view_current(const View *v)
{
    const AttnTrace *t = view_trace(v);
    return &t->steps[clampi(v->step, 0, t->n_steps - 1)];
}

int view_step_count(const View *v)
{
    return view_trace(v)->n_steps;
}

double view_step_duration(const View *v, int step)
{
    const AttnTrace *t = view_trace(v);
    if (step < 0 || step >= t->n_steps) return 0.0;
    return view_kind(t->steps[step].kind)->seconds;
}

double view_progress(const View *v)
{
    double d = view_step_duration(v, v->step);
    if (d <= 0.0) return 1.0;
    double p = v->t / d;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

int view_at_end(const View *v)
{
    if (v->step < view_step_count(v) - 1) return 0;
    if (v->t < view_step_duration(v, v->step)) return 0;
    return !v->playing || v->dwell >= VIEW_DWELL_SECONDS;
}

int view_is_busy(const View *v)
{
    /* a step still being computed holds its animation and autoplay */
    if (!view_step_ready(v, view_trace(v), v->step)) return v->notice_left > 0 || view_edit_progress(v) < 1.0;
    if (v->rewinding) return 1;
    if (view_edit_progress(v) < 1.0) return 1;
    if (v->t < view_step_duration(v, v->step)) return 1;
    if (v->playing && !view_at_end(v)) return 1;
    return v->notice_left > 0;
}

/* A step numbered by K/V head rather than query head: the keys and values
 * of grouped K/V heads (kv_heads), which several query heads read. */
int view_is_kv_step(const AttnConfig *c, const AttnStep *s)
{
    AttnRole r = (AttnRole)s->role;
    return c->attention == ATTN_DOT && c->kv_heads > 0 && s->head > 0 &&
           (r == ATTN_ROLE_K || r == ATTN_ROLE_V || r == ATTN_ROLE_K_CACHE || r == ATTN_ROLE_V_CACHE);
}

void view_goto(View *v, int step)
{
    const AttnTrace *t = view_trace(v);
    int from = v->step;
    v->step = clampi(step, 0, t->n_steps - 1);
    if (v->step != from) {
        free(v->edit_before); /* changed cells are marked until the next step */
        v->edit_before = NULL;
    }
    v->t = 0.0;
    v->dwell = 0.0;
    v->rewinding = 0;
    const AttnStep *s = &t->steps[v->step];
    /* a grouped K/V head's step keeps the selected query head when it reads it, else selects its first */
    if (s->head > 0 && t == v->trace)
        v->head = !view_is_kv_step(&t->cfg, s) ? s->head
                  : attn_kv_head(&t->cfg, v->head) == s->head
                      ? v->head
                      : (s->head - 1) * (t->cfg.heads / attn_kv_heads(&t->cfg)) + 1;
    v->zoom = 1.0f;
    v->pan_x = v->pan_y = 0.0f;
    v->dragging = 0;
    v->hover_step = -1;
    view_update_formula(v);
    view_touch(v);
}

void view_finish(View *v)
{
    v->t = view_step_duration(v, v->step);
    v->dwell = 0.0;
    v->rewinding = 0;
    view_touch(v);
}

void view_next(View *v)
{
    if (v->t < view_step_duration(v, v->step)) {
        view_finish(v);
        return;
    }
    if (v->step + 1 < view_step_count(v)) view_goto(v, v->step + 1);
}

/* The previous step in its final state (the first step stays, at t = 0). */
static void land_on_previous(View *v)
{
    if (v->step > 0) {
        view_goto(v, v->step - 1);
        view_finish(v);
    } else {
        view_goto(v, 0);
    }
}

void view_prev(View *v)
{
    v->playing = 0; /* going back: autoplay would turn round at the end of the rewind */
    view_touch(v);
    if (!v->rewinding && v->t > 0 && view_step_duration(v, v->step) > 0) {
        v->rewinding = 1; /* view_advance runs the animation backwards */
        return;
    }
    land_on_previous(v); /* at the step's start, or ← again while rewinding */
}

void view_home(View *v)
{
    view_goto(v, 0);
}

void view_end(View *v)
{
    view_goto(v, view_step_count(v) - 1);
    view_finish(v);
}

void view_advance(View *v, double dt)
{
    if (dt < 0) dt = 0;
    if (v->edit_before && v->edit_t < VIEW_EDIT_SECONDS) {
        v->edit_t += dt;
        view_touch(v);
    }
    if (v->notice_left > 0) {
        v->notice_left -= dt;
        if (v->notice_left <= 0) {
            v->notice_left = 0;
            v->notice_detail[0] = '\0';
            v->notice_is_error = 0;
            view_touch(v);
        }
    }
    if (!view_step_ready(v, view_trace(v), v->step)) return; /* held until it is computed */
    if (v->rewinding) {
        v->t -= dt * v->speed;
        view_touch(v);
        if (v->t <= 0) land_on_previous(v);
        return;
    }
    double d = view_step_duration(v, v->step);
    if (v->t < d) {
        v->t += dt * v->speed;
        if (v->t > d) v->t = d;
        view_touch(v);
        return;
    }
    if (!v->playing) return;
    if (v->dwell < VIEW_DWELL_SECONDS) v->dwell += dt * v->speed;
    if (v->dwell >= VIEW_DWELL_SECONDS) {
        if (v->step + 1 < view_step_count(v))
            view_goto(v, v->step + 1);
        else
            v->dwell = VIEW_DWELL_SECONDS;
    }
}

/* ---- heads and modes ---- */

int view_head_count(const View *v)
{
    return view_lesson_head_count(v->lesson);
}

int view_lesson_head_count(const Lesson *lesson)
{
    return lesson->cfg.attention == ATTN_DOT ? lesson->cfg.heads : 1;
}

void view_set_head(View *v, int head)
{
    v->head = clampi(head, 1, view_head_count(v));
    view_touch(v);
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    int mine = view_is_kv_step(&t->cfg, s) ? attn_kv_head(&t->cfg, v->head) : v->head; /* the head's own step */
    if (t == v->trace && s->head > 0 && s->head != mine) {
        int to = view_map_step(t, v->step, t, v->head);
        if (to >= 0) {
            view_goto(v, to);
            view_finish(v);
        }
    }
}

void view_next_head(View *v)
{
    int n = view_head_count(v);
    view_set_head(v, v->head % n + 1);
}

int view_map_step(const AttnTrace *from, int step, const AttnTrace *to, int head)
{
    if (!from || !to || step < 0 || step >= from->n_steps) return -1;
    const AttnStep *s = &from->steps[step];
    /* the step of the same role, of that head when it is a head's (of the K/V head it reads when
     * the step is a grouped K/V head's) */
    int h = s->head == 0 ? 0 : clampi(head, 1, to->cfg.heads > 0 ? to->cfg.heads : 1);
    if (h > 0 && view_is_kv_step(&to->cfg, s)) h = attn_kv_head(&to->cfg, h);
    const AttnStep *m = attn_trace_find_role(to, (AttnRole)s->role, h);
    return m ? attn_trace_index(to, m) : -1;
}

int view_compare_step(const View *v, int step)
{
    if (!v->single) return -1;
    int m = view_map_step(v->trace, step, v->single, 1);
    if (m < 0) m = clampi(step, 0, v->single->n_steps - 1);
    return m;
}

int view_can_compare(const View *v)
{
    return v->trace->cfg.heads > 1;
}

int view_compare_refused(const View *v, const char *path, char *msg, size_t len)
{
    if (view_can_compare(v)) return 0;
    snprintf(msg, len,
             "--view compare: %s has one head (heads = 1), so its single-head and multi-head views are the same; "
             "compare needs a lesson of two heads or more",
             path ? path : "the lesson");
    return 1;
}

void view_set_mode(View *v, ViewMode mode)
{
    if ((int)mode < 0 || mode >= VIEW_MODE_COUNT || mode == v->mode) return;
    if (mode == VIEW_COMPARE && !view_can_compare(v)) {
        view_set_notice(v, VS_NOTICE_COMPARE_ONE_HEAD, "", 1);
        return;
    }
    if (mode != VIEW_MULTI && view_ensure_single(v) != 0) return;
    if (mode != VIEW_MULTI && !v->single) {
        view_set_notice(v, VS_NOTICE_SINGLE_UNAVAILABLE, v->single_error, 1);
        return;
    }
    const AttnTrace *from = view_trace(v);
    int step = v->step;
    v->mode = mode;
    const AttnTrace *to = view_trace(v);
    int m = from == to ? step : view_map_step(from, step, to, v->head);
    if (m < 0) m = clampi(step, 0, to->n_steps - 1);
    int keep_head = v->head;
    view_goto(v, m);
    if (to == v->single) v->head = keep_head; /* the selected head survives a visit to single */
    view_finish(v);
}

void view_toggle_single(View *v)
{
    view_set_mode(v, v->mode == VIEW_SINGLE ? VIEW_MULTI : VIEW_SINGLE);
}
void view_toggle_compare(View *v)
{
    view_set_mode(v, v->mode == VIEW_COMPARE ? VIEW_MULTI : VIEW_COMPARE);
}

int view_phase(const AttnTrace *trace, int step)
{
    if (step < 0 || step >= trace->n_steps) return -1;
    const AttnStep *s = &trace->steps[step];
    int additive = trace->cfg.attention == ATTN_ADDITIVE;
    switch (view_kind(s->kind)->phase) {
    case PHASE_INPUTS:
        return 0;
    case PHASE_PROJECTIONS:
        return 1;
    case PHASE_OUTPUT:
        return 2;
    case PHASE_SCORING:
        if (additive) return 3;
        break;
    case PHASE_HEAD:
        break;
    }
    /* additive attention has no heads: its scores, then its weights and context */
    return additive ? 4 : 10 + s->head;
}

void view_phase_label(const View *v, const AttnTrace *trace, int step, char *buf, size_t len)
{
    int p = view_phase(trace, step);
    LessonLang L = v->lang;
    switch (p) {
    case 0:
        snprintf(buf, len, "%s", view_string(VS_PHASE_INPUTS, L));
        break;
    case 1:
        snprintf(buf, len, "%s", view_string(VS_PHASE_PROJ, L));
        break;
    case 2:
        snprintf(buf, len, "%s", view_string(VS_PHASE_OUT, L));
        break;
    case 3:
        snprintf(buf, len, "%s", view_string(VS_PHASE_SCORE, L));
        break;
    case 4:
        snprintf(buf, len, "%s", view_string(VS_PHASE_ATTEND, L));
        break;
    default:
        snprintf(buf, len, "%s %d", view_string(VS_PHASE_HEAD, L), p - 10);
        break;
    }
}
