/* view_explain.c: what the view says of a step: its narration (the lesson's
 * text, filled, or one written from the step) and how a hovered cell was
 * computed. */
#include "view_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- narration ---- */

/* Whether a narration text may be shown as true of the numbers on screen:
 * 1 plain, 2 under "about the lesson as loaded" (no condition, and the
 * numbers are not the ones it was written for), 0 not at all (its condition
 * does not hold). */
static int narration_truth(const View *v, const LessonText *t, const AttnTrace *trace, const AttnStep *s)
{
    if (t->when) {
        char msg[256];
        return narrate_when(t->when, v->lesson, trace, s, msg, sizeof msg) == 1;
    }
    return v->edited || v->lesson->edited_from ? 2 : 1;
}

/* Appends text's filled form to all[*at..], which has room for any text
 * `attnviz check` accepts. Returns 0 when filled, -1 when it cannot be. */
static int put_filled(const View *v, const AttnTrace *trace, const AttnStep *s, const char *text, char *all, size_t *at)
{
    int rc = narrate_fill(all + *at, NARRATE_MAX_FILLED + 1, text, v->lesson, trace, s, v->lang);
    if (rc != 0) all[*at] = '\0';
    *at += strlen(all + *at);
    return rc;
}

int view_lesson_texts_apply(const View *v, const AttnTrace *trace)
{
    if (trace != v->single) return 1;
    return v->trace->cfg.attention == ATTN_ADDITIVE || v->trace->cfg.heads == 1;
}

/* The tokens for running text: 我 喜欢 跑步 in English, 「我」「喜欢」「跑步」 in
 * Chinese; the first six, then "…". */
static size_t cat_token_list(const View *v, char *buf, size_t len, size_t at)
{
    const Lesson *l = v->lesson;
    int n = l->n_tokens < 6 ? l->n_tokens : 6;
    for (int i = 0; i < n; i++)
        at = view_cat(buf, len, at, view_string(i ? VS_TOKEN_NEXT : VS_TOKEN, v->lang), l->tokens[i]);
    if (l->n_tokens > n) at = view_cat(buf, len, at, "%s", view_string(VS_TOKENS_MORE, v->lang));
    return at;
}

void view_title(const View *v, char *buf, size_t len)
{
    if (!len) return;
    if (view_lesson_texts_apply(v, view_trace(v))) {
        lesson_text_copy(buf, len, lesson_text(&v->lesson->title, v->lang)); /* a cut ends in "…" */
        return;
    }
    /* six tokens of at most LESSON_MAX_TOKEN_BYTES, quoted, fit whole */
    char tokens[8 * (LESSON_MAX_TOKEN_BYTES + 8)] = "", whole[sizeof tokens + 256];
    cat_token_list(v, tokens, sizeof tokens, 0);
    snprintf(whole, sizeof whole, view_string(VS_SINGLE_LESSON_TITLE, v->lang), tokens, v->single->cfg.d_k);
    lesson_text_copy(buf, len, whole);
}

static size_t cat_num(char *buf, size_t len, size_t at, float x, int paren);

/* The narration written from the step itself, as it is on screen: its name,
 * its shape as drawn, what its kind is, and what its kind adds (for
 * weights, each query's largest weight). */
static void describe_step(const View *v, const AttnTrace *trace, const AttnStep *s, char *buf, size_t len)
{
    LessonLang L = v->lang;
    int col = v->notation == VIEW_NOTATION_COLUMN;
    char title[64];
    view_step_title(s, title, sizeof title);
    size_t at = view_cat(buf, len, 0, view_string(VS_DEFAULT_NARRATION, L), title, col ? s->cols : s->rows,
                         col ? s->rows : s->cols, view_kind_text(s->kind, v->notation, L));
    DescribeFn more = view_kind(s->kind)->describe;
    if (more) more(v, trace, s, buf, len, at);
}

/* Grouped K/V heads: which query heads read this K/V head's keys or values. */
size_t view_describe_kv_shared(const View *v, const AttnTrace *trace, const AttnStep *s, char *buf, size_t len,
                               size_t at)
{
    const AttnConfig *c = &trace->cfg;
    if (!view_is_kv_step(c, s)) return at;
    int G = attn_kv_heads(c), per = c->heads / G, g = s->head;
    char group[32];
    if (per == 1)
        snprintf(group, sizeof group, "%d", g);
    else
        snprintf(group, sizeof group, "%d–%d", (g - 1) * per + 1, g * per);
    return view_cat(buf, len, at, view_string(VS_KV_SHARED, v->lang), g, group, G, c->heads);
}

/* Softmax: each query's largest weight, for the first six queries that see a
 * key: every key tied for it (narrate_row_winners), or "uniform". */
size_t view_describe_largest_weights(const View *v, const AttnTrace *trace, const AttnStep *s, char *buf, size_t len,
                                     size_t at)
{
    LessonLang L = v->lang;
    const char *const *rl = view_row_labels(v, trace, s), *const *cl = view_col_labels(v, trace, s);
    if (!rl || !cl) return at;
    at = view_cat(buf, len, at, "%s", view_string(VS_LARGEST_WEIGHTS, L));
    int shown = 0;
    for (int r = 0; r < s->rows && shown < 6; r++) {
        const float *row = s->data + (size_t)r * (size_t)s->cols;
        int keys[6], uniform;
        int n = narrate_row_winners(row, s->cols, keys, 6, &uniform);
        if (n == 0) continue; /* a row that sees no key */
        if (shown++) at = view_cat(buf, len, at, "%s", view_string(VS_LIST_SEP, L));
        char num[32];
        cat_num(num, sizeof num, 0, row[keys[0]], 0);
        if (uniform) {
            at = view_cat(buf, len, at, view_string(VS_LARGEST_UNIFORM, L), rl[r], num);
            continue;
        }
        char tied[6 * (LESSON_MAX_TOKEN_BYTES + 8)];
        size_t t = 0;
        tied[0] = '\0';
        for (int k = 0; k < n && k < 6; k++) {
            if (k) t = view_cat(tied, sizeof tied, t, "%s", view_string(VS_TOKEN_LIST_SEP, L));
            t = view_cat(tied, sizeof tied, t, view_string(VS_TOKEN, L), cl[keys[k]]);
        }
        if (n > 6) t = view_cat(tied, sizeof tied, t, "%s", view_string(VS_TOKENS_MORE, L));
        at = view_cat(buf, len, at, view_string(VS_LARGEST_WEIGHT, L), rl[r], tied, num);
    }
    return view_cat(buf, len, at, "%s", view_string(s->rows > shown && shown == 6 ? VS_LIST_CUT : VS_FULL_STOP, L));
}

/* Appends a text of no step (the summary, the intro) with its placeholders
 * filled, as its own paragraph, to all[at..] (NARRATE_MAX_STEP_TEXT bytes);
 * returns the new length. A text that cannot be filled is left out, never
 * shown raw (`attnviz check` refuses it). */
static size_t cat_paragraph(const View *v, const AttnTrace *trace, char *all, size_t at, const char *text)
{
    if (text && put_filled(v, trace, NULL, text, all, &at) == 0) at = view_cat(all, NARRATE_MAX_STEP_TEXT, at, "\n");
    return at;
}

/* "About the lesson before its numbers were changed:" before the first text
 * it applies to, once for the step's whole narration (*said). */
static size_t cat_about_original(const View *v, char *all, size_t at, int *said)
{
    if (*said) return at;
    *said = 1;
    return view_cat(all, NARRATE_MAX_STEP_TEXT, at, "%s", view_string(VS_ABOUT_ORIGINAL, v->lang));
}

/* A text of no step (the summary, the intro) as its own paragraph, when it
 * may be shown, under the marker (*said); returns the new length. */
static size_t cat_text_paragraph(const View *v, const AttnTrace *trace, char *all, size_t at, const LessonText *t,
                                 int *said)
{
    int truth = t && t->text[LESSON_EN] ? narration_truth(v, t, trace, NULL) : 0;
    if (!truth) return at;
    if (truth == 2) at = cat_about_original(v, all, at, said);
    return cat_paragraph(v, trace, all, at, lesson_text(t, v->lang));
}

int view_step_narration(const View *v, const AttnTrace *trace, int step, char *buf, size_t len)
{
    if (!len) return -1;
    buf[0] = '\0';
    if (!trace || step < 0 || step >= trace->n_steps) return -1;
    const AttnStep *s = &trace->steps[step];
    /* the lesson's texts are about its own trace: in the single-head mode of
     * a lesson with several heads, the step is described from what is drawn */
    if (!view_lesson_texts_apply(v, trace)) {
        describe_step(v, trace, s, buf, len);
        return -1;
    }
    const LessonText *lt = lesson_narration_for(v->lesson, s);
    int truth = lt ? narration_truth(v, lt, trace, s) : 0;
    const char *text = truth ? lesson_text(lt, v->lang) : NULL;
    /* built whole, then copied into buf, cut at a character with "…" when
     * buf is smaller: nothing is ever dropped silently */
    char *all = malloc(NARRATE_MAX_STEP_TEXT);
    if (!all) return -1;
    size_t at = 0;
    int about_said = 0;
    all[0] = '\0';
    if (text && v->notation == VIEW_NOTATION_COLUMN) /* lesson texts count rows and columns as in row notation */
        at = view_cat(all, NARRATE_MAX_STEP_TEXT, at, "%s\n", view_string(VS_TEXT_IN_ROW_NOTATION, v->lang));
    if (step == 0) {
        /* the lesson's summary, then its introduction, open its first step,
         * each as its own paragraph */
        at = cat_text_paragraph(v, trace, all, at, &v->lesson->summary, &about_said);
        at = cat_text_paragraph(v, trace, all, at, lesson_narration_text(v->lesson, "intro"), &about_said);
    }
    int rc = 0;
    if (text && truth == 2) at = cat_about_original(v, all, at, &about_said);
    size_t before_text = at;
    if (!text || put_filled(v, trace, s, text, all, &at) != 0) {
        at = before_text;
        all[at] = '\0';
        describe_step(v, trace, s, all + at, NARRATE_MAX_STEP_TEXT - at);
        if (lt) {
            /* which claim no longer holds, where its condition says */
            char claim[1024];
            if (!truth && narrate_when_claim(lt->when, v->lesson, trace, s, v->lang, claim, sizeof claim))
                view_cat(all, NARRATE_MAX_STEP_TEXT, strlen(all), view_string(VS_TEXT_NO_LONGER_BECAUSE, v->lang),
                         claim);
            else
                view_cat(all, NARRATE_MAX_STEP_TEXT, strlen(all), "%s", view_string(VS_TEXT_NO_LONGER, v->lang));
        }
        rc = -1;
    }
    lesson_text_copy(buf, len, all);
    free(all);
    return rc;
}

void view_compare_caption(const View *v, int multi, char *buf, size_t len)
{
    if (multi)
        snprintf(buf, len, view_string(VS_COMPARE_MULTI, v->lang), v->trace->cfg.heads, v->trace->cfg.d_k);
    else
        snprintf(buf, len, view_string(VS_COMPARE_SINGLE, v->lang), v->single ? v->single->cfg.d_k : 0);
}

/* Compare mode: each pane's narration under the pane's caption, in the
 * order they are drawn (the single head first). */
static int compare_narration(const View *v, char *buf, size_t len)
{
    char *all = malloc(NARRATE_MAX_STEP_TEXT), *one = malloc(NARRATE_MAX_STEP_TEXT);
    if (!all || !one) {
        free(all);
        free(one);
        return view_step_narration(v, v->trace, v->step, buf, len);
    }
    char cap[128];
    const char *sep = view_string(VS_PANE_SEP, v->lang);
    int ss = view_compare_step(v, v->step);
    view_compare_caption(v, 0, cap, sizeof cap);
    size_t at = view_cat(all, NARRATE_MAX_STEP_TEXT, 0, "%s%s", cap, sep);
    if (ss >= 0 && view_step_ready(v, v->single, ss)) {
        view_step_narration(v, v->single, ss, one, NARRATE_MAX_STEP_TEXT);
        at = view_cat(all, NARRATE_MAX_STEP_TEXT, at, "%s", one);
    } else {
        at = view_cat(all, NARRATE_MAX_STEP_TEXT, at, view_string(VS_PREPARING, v->lang), view_step_ordinal(v->step));
    }
    view_compare_caption(v, 1, cap, sizeof cap);
    at = view_cat(all, NARRATE_MAX_STEP_TEXT, at, "\n%s%s", cap, sep);
    int rc = view_step_narration(v, v->trace, v->step, one, NARRATE_MAX_STEP_TEXT);
    view_cat(all, NARRATE_MAX_STEP_TEXT, at, "%s", one);
    lesson_text_copy(buf, len, all);
    free(all);
    free(one);
    return rc;
}

int view_narration(const View *v, char *buf, size_t len)
{
    if (!view_step_ready(v, view_trace(v), v->step)) {
        if (len) snprintf(buf, len, view_string(VS_PREPARING, v->lang), view_step_ordinal(v->step));
        return -1;
    }
    if (v->mode == VIEW_COMPARE && v->single && view_can_compare(v)) return compare_narration(v, buf, len);
    return view_step_narration(v, view_trace(v), v->step, buf, len);
}

/* ---- how a cell was computed ----
 *
 * What a person reads counts from 1, as the drawn labels do: W_Q[:, 3] is
 * the column drawn under "3", hidden[5] the fifth row. Code (--set, the
 * placeholders, the trace's JSON) counts from 0. */

/* A number as a teacher writes it: 4 significant digits, a true minus sign,
 * negative terms in parentheses when asked. */
static size_t cat_num(char *buf, size_t len, size_t at, float x, int paren)
{
    if (isinf(x)) return view_cat(buf, len, at, x < 0 ? "−∞" : "∞");
    if (isnan(x)) return view_cat(buf, len, at, "NaN");
    double d = (double)x;
    if (d == 0.0) d = 0.0; /* no −0 */
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.4g", fabs(d));
    if (d < 0) return view_cat(buf, len, at, paren ? "(−%s)" : "−%s", tmp);
    return view_cat(buf, len, at, "%s", tmp);
}

static size_t cat_cellref(const View *v, const AttnTrace *t, char *buf, size_t len, size_t at, const AttnStep *s, int r,
                          int c)
{
    char title[64];
    view_step_title(s, title, sizeof title);
    const char *const *rl = view_row_labels(v, t, s);
    const char *const *cl = view_col_labels(v, t, s);
    at = view_cat(buf, len, at, "%s[", title);
    /* column notation writes the transpose: the step's row r is column r */
    int col = v->notation == VIEW_NOTATION_COLUMN;
    if (col && c < 0) at = view_cat(buf, len, at, ":, ");
    for (int k = 0; k < 2; k++) {
        int row_part = k == col; /* which index comes first */
        /* a row or column without token labels is numbered from 1, as drawn */
        if (row_part && r >= 0) at = rl ? view_cat(buf, len, at, "%s", rl[r]) : view_cat(buf, len, at, "%d", r + 1);
        if (!row_part && c >= 0) at = cl ? view_cat(buf, len, at, "%s", cl[c]) : view_cat(buf, len, at, "%d", c + 1);
        if (k == 0 && r >= 0 && c >= 0) at = view_cat(buf, len, at, ", ");
    }
    if (col && r < 0) at = view_cat(buf, len, at, ", :");
    return view_cat(buf, len, at, "]");
}

void view_cell_name(const View *v, const AttnTrace *trace, int step, int r, int c, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = '\0';
    if (!trace || step < 0 || step >= trace->n_steps) return;
    const AttnStep *s = &trace->steps[step];
    if (r >= 0 && c >= 0 && r < s->rows && c < s->cols) cat_cellref(v, trace, buf, len, 0, s, r, c);
}

#define EXPLAIN_TERMS 6

/* " = a0·b0 + a1·b1 + … (n terms)": a(i) = A[ra + i·sa], b(i) = B[rb + i·sb]. */
static size_t cat_dot(char *buf, size_t len, size_t at, const float *A, size_t ia, size_t sa, const float *B, size_t ib,
                      size_t sb, int n, LessonLang lang)
{
    at = view_cat(buf, len, at, " = ");
    for (int i = 0; i < n && i < EXPLAIN_TERMS; i++) {
        if (i) at = view_cat(buf, len, at, " + ");
        at = cat_num(buf, len, at, A[ia + (size_t)i * sa], i > 0);
        at = view_cat(buf, len, at, "·");
        at = cat_num(buf, len, at, B[ib + (size_t)i * sb], 1);
    }
    if (n > EXPLAIN_TERMS) at = view_cat(buf, len, at, view_string(VS_EXPLAIN_MORE_TERMS, lang), n);
    return at;
}

static const AttnStep *from_kind(const AttnTrace *t, const AttnStep *s, AttnStepKind kind, int nth)
{
    for (int i = 0; i < s->n_from; i++) {
        const AttnStep *f = &t->steps[s->from[i]];
        if (f->kind == kind && nth-- == 0) return f;
    }
    return NULL;
}

static const AttnStep *from_not_kind(const AttnTrace *t, const AttnStep *s, AttnStepKind not_kind, int nth)
{
    for (int i = 0; i < s->n_from; i++) {
        const AttnStep *f = &t->steps[s->from[i]];
        if (f->kind != not_kind && nth-- == 0) return f;
    }
    return NULL;
}

/* Each explain_* appends to buf at `at` the lines that say how cell (r, c)
 * of step s of t was computed, and returns the new length. */

/* A projection or the output: a row of the input times a column of the weight, plus the bias. */
size_t view_explain_product(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at)
{
    const AttnStep *A = from_not_kind(t, s, ATTN_STEP_BIAS, 0), *W = from_not_kind(t, s, ATTN_STEP_BIAS, 1);
    const AttnStep *bias = from_kind(t, s, ATTN_STEP_BIAS, 0);
    if (!A || !W) return at;
    at = view_cat(buf, len, at, "\n= ");
    at = cat_cellref(v, t, buf, len, at, A, r, -1);
    at = view_cat(buf, len, at, " · ");
    char wt[64];
    view_step_title(W, wt, sizeof wt);
    at = view_cat(buf, len, at, v->notation == VIEW_NOTATION_COLUMN ? "%s[%d, :]" : "%s[:, %d]", wt, c + 1);
    if (bias) at = view_cat(buf, len, at, " + %s[%d]", bias->name, c + 1);
    at = view_cat(buf, len, at, "\n");
    at = cat_dot(buf, len, at, A->data, (size_t)r * (size_t)A->cols, 1, W->data, (size_t)c, (size_t)W->cols, A->cols,
                 v->lang);
    if (bias) {
        at = view_cat(buf, len, at, " + ");
        at = cat_num(buf, len, at, bias->data[c], 1);
    }
    return at;
}

/* A head's columns: which column of the projection the cell is. */
size_t view_explain_split(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                          size_t at)
{
    const AttnStep *P = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
    if (!P) return at;
    if (v->notation == VIEW_NOTATION_COLUMN) {
        /* Q[2, 我]: the transposed projection's row */
        at = view_cat(buf, len, at, "\n= ");
        at = cat_cellref(v, t, buf, len, at, P, r, (s->head - 1) * s->cols + c);
        return view_cat(buf, len, at, view_string(VS_EXPLAIN_SPLIT_ROW, v->lang), s->head, c + 1, s->cols);
    }
    at = view_cat(buf, len, at, "\n= %s[", P->name);
    const char *const *rl = view_row_labels(v, t, P);
    at = rl ? view_cat(buf, len, at, "%s", rl[r]) : view_cat(buf, len, at, "%d", r + 1);
    at = view_cat(buf, len, at, view_string(VS_EXPLAIN_SPLIT_COLUMN, v->lang), (s->head - 1) * s->cols + c + 1, s->head,
                  c + 1, s->cols);
    return at;
}

/* Scores: the dot product of a query and a key (dot), or hidden · v_a (additive). */
size_t view_explain_scores(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at)
{
    if (t->cfg.attention == ATTN_DOT) {
        const AttnStep *Q = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0),
                       *K = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 1);
        if (!Q || !K) return at;
        at = view_cat(buf, len, at, "\n= ");
        at = cat_cellref(v, t, buf, len, at, Q, r, -1);
        at = view_cat(buf, len, at, " · ");
        at = cat_cellref(v, t, buf, len, at, K, c, -1);
        at = view_cat(buf, len, at, "\n");
        at = cat_dot(buf, len, at, Q->data, (size_t)r * (size_t)Q->cols, 1, K->data, (size_t)c * (size_t)K->cols, 1,
                     Q->cols, v->lang);
    } else {
        const AttnStep *Hd = from_kind(t, s, ATTN_STEP_ADDITIVE_HIDDEN, 0), *va = from_kind(t, s, ATTN_STEP_WEIGHT, 0);
        if (!Hd || !va) return at;
        size_t hr = (size_t)r * (size_t)s->cols + (size_t)c;
        at = view_cat(buf, len, at, view_string(VS_EXPLAIN_ADDITIVE_ROW, v->lang), hr + 1, r + 1, c + 1);
        at = cat_dot(buf, len, at, Hd->data, hr * (size_t)Hd->cols, 1, va->data, 0, 1, Hd->cols, v->lang);
    }
    return at;
}

/* Scaled: the score over the divisor. */
size_t view_explain_scaled(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at)
{
    (void)v;
    const AttnStep *S = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
    if (!S) return at;
    at = view_cat(buf, len, at, "\n= ");
    at = cat_num(buf, len, at, S->data[(size_t)r * (size_t)S->cols + (size_t)c], 0);
    at = view_cat(buf, len, at, " ÷ %.4g", (double)t->divisor);
    return at;
}

/* Masked: the scaled score, or the fill value where the mask blocks. */
size_t view_explain_masked(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at)
{
    if (view_cell_blocked(v, s, r, c))
        at = view_cat(buf, len, at, view_string(VS_EXPLAIN_MASKED_BLOCKED, v->lang), view_string(VS_BLOCKED, v->lang));
    else
        at = view_cat(
            buf, len, at, "%s",
            view_string(t->cfg.mask_order == ATTN_MASK_THEN_SCALE ? VS_EXPLAIN_MASKED_KEPT_RAW : VS_EXPLAIN_MASKED_KEPT,
                        v->lang));
    return at;
}

/* Softmax: the cell's exp(x − max) over its row's sum. */
size_t view_explain_softmax(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at)
{
    const AttnStep *X = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
    if (!X) return at;
    const float *row = X->data + (size_t)r * (size_t)X->cols;
    float mx = -INFINITY;
    for (int j = 0; j < X->cols; j++)
        if (row[j] > mx) mx = row[j];
    if (isinf(mx) && mx < 0) {
        at = view_cat(buf, len, at, view_string(VS_EXPLAIN_ROW_BLOCKED, v->lang));
        return at;
    }
    double sum = 0;
    for (int j = 0; j < X->cols; j++) sum += exp((double)row[j] - (double)mx);
    at = view_cat(buf, len, at, "\n= exp(x − max) / Σ exp(x − max)\n= exp(");
    at = cat_num(buf, len, at, row[c], 0);
    at = view_cat(buf, len, at, " − ");
    at = cat_num(buf, len, at, mx, 1);
    at = view_cat(buf, len, at, ") / %.4g = %.4g / %.4g", sum, exp((double)row[c] - (double)mx), sum);
    return at;
}

/* Weighted sum: the row's weights times a column of the values. */
size_t view_explain_weighted_sum(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf,
                                 size_t len, size_t at)
{
    const AttnStep *W = from_kind(t, s, ATTN_STEP_SOFTMAX, 0);
    const AttnStep *V = from_not_kind(t, s, ATTN_STEP_SOFTMAX, 0);
    if (!W || !V) return at;
    at = view_cat(buf, len, at, "\n= Σ_j ");
    at = cat_cellref(v, t, buf, len, at, W, r, -1);
    at = view_cat(buf, len, at, v->notation == VIEW_NOTATION_COLUMN ? "_j · %s[%d, j]\n" : "_j · %s[j, %d]\n", V->name,
                  c + 1);
    at = cat_dot(buf, len, at, W->data, (size_t)r * (size_t)W->cols, 1, V->data, (size_t)c, (size_t)V->cols, W->cols,
                 v->lang);
    return at;
}

/* Where the positions enter, with the cell's numbers: RoPE's angle and
 * rotation, the sinusoidal encoding and X + PE. A step of decoding's token
 * t has position t − 1. */
size_t view_explain_position(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at)
{
    (void)v;
    const AttnConfig *cfg = &t->cfg;
    int pos = s->row_axis == ATTN_AXIS_TOKEN ? s->at - 1 : r;
    switch (s->kind) {
    case ATTN_STEP_ROPE_ANGLES:
        return view_cat(buf, len, at, "\n= %d · %g^(−%d/%d)", pos, (double)cfg->rope_base, 2 * c, cfg->d_k);
    case ATTN_STEP_POSITIONAL:
        return view_cat(buf, len, at, "\n= %s(%d / 10000^(%d/%d))", c % 2 ? "cos" : "sin", pos, c - c % 2,
                        cfg->d_model);
    case ATTN_STEP_ADD_POSITIONAL: {
        const AttnStep *X = from_kind(t, s, ATTN_STEP_INPUT, 0), *P = from_kind(t, s, ATTN_STEP_POSITIONAL, 0);
        if (!X || !P) return at;
        size_t i = (size_t)r * (size_t)s->cols + (size_t)c;
        at = view_cat(buf, len, at, "\n= ");
        at = cat_num(buf, len, at, X->data[i], 0);
        at = view_cat(buf, len, at, " + ");
        return cat_num(buf, len, at, P->data[i], 1);
    }
    default: { /* RoPE: the pair of the cell turned by its position's angle */
        const AttnStep *src = from_not_kind(t, s, ATTN_STEP_ROPE_ANGLES, 0),
                       *A = from_kind(t, s, ATTN_STEP_ROPE_ANGLES, 0);
        if (!src || !A || pos < 0 || pos >= A->rows) return at;
        int i = c / 2;
        float x = src->data[(size_t)r * (size_t)src->cols + 2 * (size_t)i];
        float y = src->data[(size_t)r * (size_t)src->cols + 2 * (size_t)i + 1];
        float a = A->data[(size_t)pos * (size_t)A->cols + (size_t)i];
        at = view_cat(buf, len, at, "\n= ");
        at = cat_num(buf, len, at, x, 0);
        at = view_cat(buf, len, at, c % 2 ? "·sin " : "·cos ");
        at = cat_num(buf, len, at, a, 1);
        at = view_cat(buf, len, at, c % 2 ? " + " : " − ");
        at = cat_num(buf, len, at, y, 1);
        at = view_cat(buf, len, at, c % 2 ? "·cos " : "·sin ");
        return cat_num(buf, len, at, a, 1);
    }
    }
}

/* The tiled softmax: each block's running maximum, rescale factor, sums
 * and output, from the step before it. */
size_t view_explain_tile(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                         size_t at)
{
    (void)v;
    int base = attn_trace_index(t, s);
    /* the block's five steps: tile_scores, tile_max, tile_rescale, tile_sum, tile_accumulate */
    int first = base - (s->kind - ATTN_STEP_TILE_SCORES);
    const AttnStep *blk = s->kind == ATTN_STEP_TILE_OUTPUT ? NULL : &t->steps[first];
    const AttnStep *m = blk ? &t->steps[first + 1] : NULL, *rs = blk ? &t->steps[first + 2] : NULL;
    const AttnStep *m_old = blk && s->at > 1 ? &t->steps[first - 4] : NULL;
    const AttnStep *l_old = blk && s->at > 1 ? &t->steps[first - 2] : NULL;
    const AttnStep *acc_old = blk && s->at > 1 ? &t->steps[first - 1] : NULL;
    switch (s->kind) {
    case ATTN_STEP_TILE_SCORES: {
        const AttnStep *pre = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
        if (!pre) return at;
        return view_cat(buf, len, at, "\n= %s[%d, %d]", pre->name, r, (s->at - 1) * t->cfg.tile + c);
    }
    case ATTN_STEP_TILE_MAX: {
        float bm = -INFINITY;
        for (int j = 0; j < blk->cols; j++) bm = fmaxf(bm, blk->data[(size_t)r * (size_t)blk->cols + (size_t)j]);
        at = view_cat(buf, len, at, "\n= max(");
        at = cat_num(buf, len, at, m_old ? m_old->data[r] : -INFINITY, 0);
        at = view_cat(buf, len, at, ", ");
        at = cat_num(buf, len, at, bm, 0);
        return view_cat(buf, len, at, ")");
    }
    case ATTN_STEP_TILE_RESCALE:
        if (!m_old || m_old->data[r] == -INFINITY) return view_cat(buf, len, at, "\n= 0   (m_old = −∞)");
        at = view_cat(buf, len, at, "\n= e^(");
        at = cat_num(buf, len, at, m_old->data[r], 0);
        at = view_cat(buf, len, at, " − ");
        at = cat_num(buf, len, at, m->data[r], 1);
        return view_cat(buf, len, at, ")");
    case ATTN_STEP_TILE_SUM:
    case ATTN_STEP_TILE_ACCUMULATE: {
        const AttnStep *old = s->kind == ATTN_STEP_TILE_SUM ? l_old : acc_old;
        at = view_cat(buf, len, at, "\n= ");
        at = cat_num(buf, len, at, rs->data[r], 0);
        at = view_cat(buf, len, at, "·");
        at = cat_num(buf, len, at, old ? old->data[(size_t)r * (size_t)s->cols + (size_t)c] : 0.0f, 1);
        at = view_cat(buf, len, at, s->kind == ATTN_STEP_TILE_SUM ? " + Σ_j e^(s_j − " : " + Σ_j e^(s_j − ");
        at = cat_num(buf, len, at, m->data[r], 0);
        return view_cat(buf, len, at, s->kind == ATTN_STEP_TILE_SUM ? ")" : ")·v_j[%d]", c);
    }
    default: { /* the output: acc / l of the last block */
        const AttnStep *acc = from_kind(t, s, ATTN_STEP_TILE_ACCUMULATE, 0),
                       *l = from_kind(t, s, ATTN_STEP_TILE_SUM, 0);
        if (!acc || !l) return at;
        at = view_cat(buf, len, at, "\n= ");
        at = cat_num(buf, len, at, acc->data[(size_t)r * (size_t)acc->cols + (size_t)c], 0);
        at = view_cat(buf, len, at, " / ");
        return cat_num(buf, len, at, l->data[r], 1);
    }
    }
}

/* Concat: the head's cell it was copied from. */
size_t view_explain_concat(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at)
{
    int col = c;
    for (int i = 0; i < s->n_from; i++) {
        const AttnStep *Hd = &t->steps[s->from[i]];
        if (col < Hd->cols) {
            at = view_cat(buf, len, at, "\n= ");
            at = cat_cellref(v, t, buf, len, at, Hd, r, col);
            return at;
        }
        col -= Hd->cols;
    }
    return at;
}

/* The projection computed from weight w: Q from W_Q. */
static const AttnStep *product_of(const AttnTrace *t, const AttnStep *w)
{
    int wi = attn_trace_index(t, w);
    for (int i = wi + 1; i < t->n_steps; i++)
        for (int k = 0; t->steps[i].kind == ATTN_STEP_PROJECTION && k < t->steps[i].n_from; k++)
            if (t->steps[i].from[k] == wi) return &t->steps[i];
    return NULL;
}

/* A projection weight of dot attention: which feature goes to which head's column. */
size_t view_explain_weight(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at)
{
    /* W_Q, W_K and W_V: their columns are every head's, side by side */
    int a = s->col_axis, kv = a == ATTN_AXIS_KV_DK || a == ATTN_AXIS_KV_DV; /* kv: grouped K/V heads' columns */
    int dk = a == ATTN_AXIS_HEADS_DK || a == ATTN_AXIS_KV_DK   ? t->cfg.d_k
             : a == ATTN_AXIS_HEADS_DV || a == ATTN_AXIS_KV_DV ? t->cfg.d_v
                                                               : 0;
    const AttnStep *P = product_of(t, s);
    /* in column notation Q's features are its rows */
    int col = v->notation == VIEW_NOTATION_COLUMN;
    ViewString how = kv ? (col ? VS_EXPLAIN_WEIGHT_KV_ROW : VS_EXPLAIN_WEIGHT_KV_COLUMN)
                        : (col ? VS_EXPLAIN_WEIGHT_ROW : VS_EXPLAIN_WEIGHT_COLUMN);
    if (dk > 0 && P)
        at = view_cat(buf, len, at, view_string(how, v->lang), r + 1, P->name, c + 1, c / dk + 1, c % dk + 1);
    return at;
}

/* Additive attention's hidden layer: tanh of the joined query and key times W_a. */
size_t view_explain_additive_hidden(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf,
                                    size_t len, size_t at)
{
    int nk = t->cfg.n_k;
    const char *y = t->cfg.cross ? "y" : "x", *ba = from_kind(t, s, ATTN_STEP_BIAS, 0) ? " + b_a" : "";
    if (v->notation == VIEW_NOTATION_COLUMN)
        return view_cat(buf, len, at, "\n= tanh(W_a[%d, :] · [x_%d ; %s_%d]%s)", c + 1, r / nk + 1, y, r % nk + 1, ba);
    return view_cat(buf, len, at, "\n= tanh([x_%d ; %s_%d] · W_a[:, %d]%s)", r / nk + 1, y, r % nk + 1, c + 1, ba);
}

int view_explain_cell(const View *v, const AttnTrace *t, int step, int r, int c, char *buf, size_t len)
{
    if (!len) return -1;
    buf[0] = '\0';
    if (!t || step < 0 || step >= t->n_steps) return -1;
    const AttnStep *s = &t->steps[step];
    if (r < 0 || c < 0 || r >= s->rows || c >= s->cols) return -1;
    size_t at = cat_cellref(v, t, buf, len, 0, s, r, c);
    float val = s->data[(size_t)r * (size_t)s->cols + (size_t)c];
    at = view_cat(buf, len, at, " = ");
    at = cat_num(buf, len, at, val, 0);
    ExplainFn explain = view_kind(s->kind)->explain;
    if (explain) explain(v, t, s, r, c, buf, len, at);
    return 0;
}
