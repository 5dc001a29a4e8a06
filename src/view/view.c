/* view.c: a View's lifetime (its traces, built again after an edit) and
 * the setters of what it shows. Pure state over the engine's traces; no SDL. */
#include "view_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void view_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(err, errlen, fmt, ap);
    va_end(ap);
}

/* Marks a visible change: a revision no View in the process had before. */
void view_touch(View *v)
{
    static atomic_ulong next_revision = 1;
    v->revision = atomic_fetch_add(&next_revision, 1);
}

size_t view_cat(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    if (at >= len) return at;
    va_list ap;
    va_start(ap, fmt);
    int cut = lesson_vformat(buf + at, len - at, fmt, ap);
    va_end(ap);
    return cut ? len - 1 : at + strlen(buf + at);
}

/* ---- lifetime ---- */

/* The single-head trace of the lesson: one head of width heads·d_k. */
static AttnTrace *build_single(const Lesson *lesson, char *err, size_t errlen)
{
    char msg[400];
    AttnConfig one;
    if (view_single_config(&lesson->cfg, &one) != 0) {
        view_set_err(err, errlen, "grouped K/V heads (kv_heads) have no one-head form: K and V are narrower than Q");
        return NULL;
    }
    AttnTrace *s = attn_trace_create(&one, msg, sizeof msg);
    if (!s) view_set_err(err, errlen, "%s", msg);
    return s;
}

/* The lesson's traces (the single-head one only when single is not NULL:
 * when its numbers overflow where each head's do not, *single is NULL and
 * single_err says why) and, for additive lessons, the labels of the rows of
 * `hidden`. 0, or -1 with a message (nothing is then owned). */
static int build_traces(const Lesson *lesson, AttnTrace **trace, AttnTrace **single, char *single_err,
                        size_t single_errlen, char ***pair_labels, char *err, size_t errlen)
{
    char msg[512];
    AttnTrace *t = attn_trace_create(&lesson->cfg, msg, sizeof msg);
    if (!t) {
        view_set_err(err, errlen, "%s", msg);
        return -1;
    }
    if (single) *single = build_single(lesson, single_err, single_errlen);
    *trace = t;
    *pair_labels = view_pair_labels(lesson);
    return 0;
}

/* For additive lessons, the labels of the rows of `hidden`, owned (one
 * block); NULL otherwise, or when memory runs out. */
char **view_pair_labels(const Lesson *lesson)
{
    if (lesson->cfg.attention == ATTN_ADDITIVE && lesson->tokens) {
        /* the rows of `hidden` are (query, key) pairs: label them "我 ; s1" */
        int nq = lesson->cfg.n_q, nk = lesson->cfg.n_k;
        char *const *keys = lesson->n_source_tokens ? lesson->source_tokens : lesson->tokens;
        size_t n = (size_t)nq * (size_t)nk, bytes = 0;
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) bytes += strlen(lesson->tokens[i]) + strlen(keys[j]) + 4;
        char **lab = malloc(n * sizeof *lab + bytes);
        if (lab) {
            char *p = (char *)(lab + n);
            for (int i = 0; i < nq; i++)
                for (int j = 0; j < nk; j++) {
                    size_t len = strlen(lesson->tokens[i]) + strlen(keys[j]) + 4;
                    snprintf(p, len, "%s ; %s", lesson->tokens[i], keys[j]);
                    lab[(size_t)i * (size_t)nk + (size_t)j] = p;
                    p += len;
                }
        }
        return lab;
    }
    return NULL;
}

static atomic_ulong next_view_id = 1;

int view_init(View *v, const Lesson *lesson, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (!lesson) {
        view_set_err(err, errlen, "no lesson");
        return -1;
    }
    char msg[600];
    /* without the single-head trace the lesson still opens; single and
     * compare mode are then refused with single_error */
    if (build_traces(lesson, &v->trace, &v->single, v->single_error, sizeof v->single_error, &v->pair_labels, msg,
                     sizeof msg) != 0) {
        view_set_err(err, errlen, "%s: %s", lesson->path ? lesson->path : "lesson", msg);
        memset(v, 0, sizeof *v);
        return -1;
    }
    view_start(v, lesson);
    return 0;
}

/* The state every new View starts in, its traces set. */
void view_start(View *v, const Lesson *lesson)
{
    v->lesson = lesson;
    v->id = atomic_fetch_add(&next_view_id, 1);
    v->layout_id = v->id;
    v->head = 1;
    v->lang = LESSON_EN;
    v->mode = VIEW_MULTI;
    v->theme = VIEW_THEME_LIGHT;
    v->text_scale = 1.0f;
    v->speed = 1.0;
    v->hover_step = -1;
    v->hover_row = v->hover_col = -1;
    v->sel_query = v->sel_key = -1;
    v->zoom = 1.0f;
    view_goto(v, 0);
}

void view_free(View *v)
{
    if (!v) return;
    view_worker_free(v);
    attn_trace_destroy(v->trace);
    attn_trace_destroy(v->single);
    free(v->pair_labels);
    free(v->edit_before);
    memset(v, 0, sizeof *v);
}

/* After a recompute in multi-head mode the single-head trace is built when
 * a mode that shows it is chosen. 0, or -1 with a notice. */
int view_ensure_single(View *v)
{
    if (!v->single_stale) return 0;
    /* NULL when its numbers overflow: view_set_mode then says so (single_error) */
    AttnTrace *s = build_single(v->lesson, v->single_error, sizeof v->single_error);
    if (v->hover_trace == v->single) v->hover_trace = NULL, v->hover_step = -1;
    attn_trace_destroy(v->single);
    v->single = s;
    v->single_stale = 0;
    v->id = atomic_fetch_add(&next_view_id, 1); /* what pointed into the old trace (hit boxes, caches) goes */
    return 0;
}

int view_recompute(View *v, char *err, size_t errlen)
{
    AttnTrace *t, *single = NULL;
    char **labels;
    /* the worker finishes the trace this one replaces, so that a refused
     * change leaves the View as it was (a failure of the worker stays for
     * view_poll to report, and refuses the change) */
    if (view_worker_join(v, 0) != 0) {
        view_set_err(err, errlen, "%s", view_worker_error(v));
        return -1;
    }
    view_worker_free(v);
    /* in multi-head mode the single-head trace waits until it is shown */
    int lazy = v->mode == VIEW_MULTI;
    char single_err[sizeof v->single_error];
    if (build_traces(v->lesson, &t, lazy ? NULL : &single, single_err, sizeof single_err, &labels, err, errlen) != 0)
        return -1;
    if (!lazy && !single) { /* shown now, so it must compute */
        attn_trace_destroy(t);
        free(labels);
        view_set_err(err, errlen, "the single-head trace: %s", single_err);
        return -1;
    }
    if (lazy) single = v->single;
    const AttnStep *cur = view_current(v);
    size_t n = (size_t)cur->rows * (size_t)cur->cols;
    float *before = malloc(sizeof(float) * (n ? n : 1)); /* (rows, cols) of the current step, before the change */
    if (before) memcpy(before, cur->data, sizeof(float) * n);
    int rows = cur->rows, cols = cur->cols, step = v->step, head = v->head;
    const AttnStep *same = attn_trace_find_role(v->mode == VIEW_SINGLE ? single : t, (AttnRole)cur->role, cur->head);
    if (!same) same = attn_trace_find(v->mode == VIEW_SINGLE ? single : t, cur->kind, cur->head);
    /* the hovered cell is in one of the old traces: the same cell of the new one */
    const AttnTrace *hov = v->hover_trace == v->trace ? t : v->hover_trace == v->single ? single : NULL;
    if (!hov || v->hover_step >= hov->n_steps || v->hover_row >= hov->steps[v->hover_step].rows ||
        v->hover_col >= hov->steps[v->hover_step].cols) {
        hov = NULL;
        v->hover_step = -1;
    }
    v->hover_trace = hov;
    v->hover_label = NULL; /* it pointed into the lesson's tokens or the pair labels, which the change replaced */
    if (v->sel_query >= t->cfg.n_q) v->sel_query = -1; /* a removed token */
    if (v->sel_key >= t->cfg.n_k) v->sel_key = -1;
    int same_shape = t->n_steps == v->trace->n_steps;
    for (int s = 0; same_shape && s < t->n_steps; s++)
        same_shape = t->steps[s].rows == v->trace->steps[s].rows && t->steps[s].cols == v->trace->steps[s].cols;
    /* the single-head trace goes first, so that the engine keeps the larger
     * block as its spare for the next recompute */
    if (!lazy) attn_trace_destroy(v->single);
    v->single_stale = lazy;
    attn_trace_destroy(v->trace);
    free(v->pair_labels);
    v->trace = t;
    v->single = single;
    v->pair_labels = labels;
    v->id = atomic_fetch_add(&next_view_id, 1);
    if (!same_shape) v->layout_id = v->id;
    const AttnTrace *now = view_trace(v);
    int to = same ? attn_trace_index(now, same) : clampi(step, 0, now->n_steps - 1);
    if (to != step) view_goto(v, to);
    v->step = to;
    v->t = view_step_duration(v, to);
    v->rewinding = 0;
    if (v->mode != VIEW_SINGLE) v->head = clampi(head, 1, view_head_count(v));
    view_update_formula(v);
    free(v->edit_before);
    v->edit_before = NULL;
    const AttnStep *s = view_current(v);
    if (before && s->rows == rows && s->cols == cols) {
        v->edit_before = before;
        v->edit_step = to;
        v->edit_rows = rows;
        v->edit_cols = cols;
        v->edit_t = 0.0;
    } else {
        free(before);
    }
    view_touch(v);
    return 0;
}

double view_edit_progress(const View *v)
{
    if (!v->edit_before || v->edit_step != v->step) return 1.0;
    double p = v->edit_t / VIEW_EDIT_SECONDS;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

int view_single_config(const AttnConfig *cfg, AttnConfig *one)
{
    if (cfg->attention == ATTN_DOT && attn_kv_heads(cfg) != cfg->heads) return -1;
    *one = *cfg;
    if (one->attention == ATTN_DOT) {
        one->d_k = one->heads * one->d_k;
        one->d_v = one->heads * one->d_v;
        one->heads = 1;
        one->kv_heads = 0;
    }
    return 0;
}

/* ---- what the view shows: every change marks a new revision ---- */

void view_set_speed(View *v, double speed)
{
    if (!(speed >= VIEW_SPEED_MIN)) speed = VIEW_SPEED_MIN;
    if (speed > VIEW_SPEED_MAX) speed = VIEW_SPEED_MAX;
    v->speed = speed;
    view_touch(v);
}

void view_set_text_scale(View *v, float scale)
{
    if (!(scale >= VIEW_TEXT_SCALE_MIN)) scale = VIEW_TEXT_SCALE_MIN;
    if (scale > VIEW_TEXT_SCALE_MAX) scale = VIEW_TEXT_SCALE_MAX;
    v->text_scale = scale;
    view_touch(v);
}

void view_set_lang(View *v, LessonLang lang)
{
    v->lang = (int)lang >= 0 && lang < LESSON_LANG_COUNT ? lang : LESSON_EN;
    view_update_formula(v);
    view_touch(v);
}

void view_toggle_heads(View *v)
{
    v->hide_heads = !v->hide_heads;
    view_touch(v);
}

void view_toggle_lang(View *v)
{
    view_set_lang(v, v->lang == LESSON_EN ? LESSON_ZH : LESSON_EN);
}

void view_set_theme(View *v, ViewTheme theme)
{
    v->theme = (int)theme >= 0 && theme < VIEW_THEME_COUNT ? theme : VIEW_THEME_LIGHT;
    view_touch(v);
}

void view_next_theme(View *v)
{
    view_set_theme(v, (ViewTheme)((v->theme + 1) % VIEW_THEME_COUNT));
}

void view_set_playing(View *v, int playing)
{
    if (playing && !v->playing && view_at_end(v)) view_home(v);
    v->playing = playing != 0;
    if (v->playing && v->rewinding) view_finish(v); /* play runs forwards */
    v->dwell = 0;
    view_touch(v);
}

void view_toggle_play(View *v)
{
    view_set_playing(v, !v->playing);
}

void view_set_help(View *v, int shown)
{
    v->show_help = shown != 0;
    view_touch(v);
}

void view_set_black(View *v, int black)
{
    black = black != 0;
    if (black == v->black) return;
    if (black) {
        v->black_was_playing = v->playing;
        if (v->playing) view_set_playing(v, 0);
    } else if (v->black_was_playing) {
        view_set_playing(v, 1);
    }
    v->black = black;
    view_touch(v);
}

void view_set_big_text(View *v, int on)
{
    v->big_text = on != 0;
    view_touch(v);
}

int view_big_text_min(int height)
{
    return (height + 29) / 30;
}

void view_toggle_tool(View *v, ViewTool tool)
{
    static const int said[] = {[VIEW_TOOL_NONE] = VS_NOTICE_TOOL_OFF,
                               [VIEW_TOOL_INK] = VS_NOTICE_INK,
                               [VIEW_TOOL_SPOTLIGHT] = VS_NOTICE_SPOTLIGHT,
                               [VIEW_TOOL_LASER] = VS_NOTICE_LASER};
    v->tool = v->tool == tool ? VIEW_TOOL_NONE : tool;
    view_set_notice(v, said[v->tool], NULL, 0);
}

void view_set_unsaved(View *v, int unsaved)
{
    v->unsaved = unsaved != 0; /* nothing on screen changes */
}

void view_set_fullscreen(View *v, int fullscreen)
{
    v->fullscreen = fullscreen != 0;
}

int view_quit_confirmed(const View *v)
{
    return v->notice_left > 0 && (v->notice_what == VS_NOTICE_UNSAVED || v->notice_what == VS_NOTICE_UNSAVED_CLOSE);
}

void view_set_hover_label(View *v, const char *label)
{
    if (label == v->hover_label) return;
    v->hover_label = label;
    view_touch(v);
}

void view_set_hover(View *v, const AttnTrace *trace, int step, int row, int col)
{
    if (!trace || step < 0) trace = NULL, step = row = col = -1;
    if (trace == v->hover_trace && step == v->hover_step && row == v->hover_row && col == v->hover_col) return;
    v->hover_trace = trace;
    v->hover_step = step;
    v->hover_row = row;
    v->hover_col = col;
    view_touch(v);
}

void view_set_zoom(View *v, float zoom, float pan_x, float pan_y)
{
    if (!(zoom >= 1.0f)) zoom = 1.0f;
    if (zoom > VIEW_ZOOM_MAX) zoom = VIEW_ZOOM_MAX;
    v->zoom = zoom;
    v->pan_x = zoom > 1.0f && pan_x > 0 ? pan_x : 0.0f;
    v->pan_y = zoom > 1.0f && pan_y > 0 ? pan_y : 0.0f;
    view_touch(v);
}

void view_set_weight_scale(View *v, ViewWeightScale scale)
{
    v->weight_scale = (unsigned)scale < VIEW_WEIGHTS_COUNT ? scale : VIEW_WEIGHTS_UNIT;
    view_touch(v);
}

void view_next_weight_scale(View *v)
{
    view_set_weight_scale(v, (ViewWeightScale)((v->weight_scale + 1) % VIEW_WEIGHTS_COUNT));
}

void view_set_notation(View *v, ViewNotation notation)
{
    v->notation = (unsigned)notation < VIEW_NOTATION_COUNT ? notation : VIEW_NOTATION_ROW;
    view_update_formula(v);
    view_touch(v);
}

void view_toggle_notation(View *v)
{
    view_set_notation(v, v->notation == VIEW_NOTATION_ROW ? VIEW_NOTATION_COLUMN : VIEW_NOTATION_ROW);
}

float view_weight_position(ViewWeightScale scale, float w, float row_max)
{
    if (!(w > 0.0f)) return 0.0f; /* 0, a blocked −∞ row's weight, NaN */
    float t;
    switch (scale) {
    case VIEW_WEIGHTS_ROW:
        t = row_max > 0.0f ? w / row_max : 0.0f;
        break;
    case VIEW_WEIGHTS_LOG:
        t = (log10f(w > VIEW_WEIGHTS_LOG_MIN ? w : VIEW_WEIGHTS_LOG_MIN) + VIEW_WEIGHTS_LOG_DECADES) /
            VIEW_WEIGHTS_LOG_DECADES;
        break;
    default:
        t = w;
        break;
    }
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

void view_select_token(View *v, int q, int k)
{
    if (q == v->sel_query && k == v->sel_key) q = k = -1;
    v->sel_query = q;
    v->sel_key = k;
    view_touch(v);
}

void view_set_notice(View *v, int what, const char *detail, int is_error)
{
    v->notice_what = what;
    lesson_text_copy(v->notice_detail, sizeof v->notice_detail, detail);
    v->notice_is_error = is_error;
    v->notice_left = is_error ? 15.0 : 3.0;
    view_touch(v);
}

size_t view_notice_text(const View *v, char *buf, size_t len)
{
    if (!len) return 0;
    buf[0] = '\0';
    if (v->notice_left <= 0) return 0;
    return view_cat(buf, len, 0, view_string((ViewString)v->notice_what, v->lang), v->notice_detail);
}

void view_for_saving(const View *v, View *out)
{
    *out = *v;
    out->notice_detail[0] = '\0';
    out->notice_left = 0;
    out->notice_is_error = 0;
}
