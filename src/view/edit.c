/* edit.c: the working copy of a lesson, its changes and their history.
 *
 * A history entry says how to go both ways between two states of the working
 * lesson, and holds only what differs between them:
 *   - CELL: one number of a matrix or the mask (before, after);
 *   - SCALE: the scale kind and value (before, after);
 *   - DIFF: any other change (a token renamed, added or removed, the mask,
 *     a return to the lesson as loaded): for each list of tokens and each
 *     matrix, the rows between the first and the last that differ, before
 *     and after (a renamed token is one string each way, an added one a row
 *     of X one way); the mask and the scale, before and after, when they
 *     differ.
 * Every entry also records which matrices were the seed's (Lesson.generated),
 * so that a save writes out exactly the matrices that were changed. The
 * history's memory is bounded (Edit.hist_max): the oldest entries go first,
 * counted in Edit.forgotten for the window to say so.
 */
#include "edit.h"
#include "edit_diff.h"

#include "narrate.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { E_CELL, E_SCALE, E_DIFF };

struct EditEntry {
    int kind;
    unsigned gen[2]; /* Lesson.generated before, after */
    /* CELL */
    int mat;
    size_t idx;
    float val[2];
    int scrub;
    /* SCALE */
    AttnScaleKind sk[2];
    float sv[2];
    /* DIFF */
    Diff *diff;
};

static int refuse(Edit *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* A refusal that puts a prefix before the message already in e->msg (the
 * engine's, or a lower check's). */
static int refuse_before(Edit *e, const char *fmt, ...)
{
    char why[sizeof e->msg], pre[300];
    lesson_text_copy(why, sizeof why, e->msg);
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(pre, sizeof pre, fmt, ap);
    va_end(ap);
    lesson_format(e->msg, sizeof e->msg, "%s%s", pre, why);
    return -1;
}

/* The longest part of the user's text a refusal quotes, in bytes. */
#define QUOTE_MAX 96

/* s[0..n) as a refusal quotes it: on one line, at most QUOTE_MAX bytes,
 * a longer one cut with "…" (lesson_quote_part). Returns out. */
static const char *quoted(char *out, size_t outlen, const char *s, size_t n)
{
    return lesson_quote_part(out, outlen, s, n, QUOTE_MAX);
}
#define QUOTED(s) quoted((char[QUOTE_MAX + 8]){0}, QUOTE_MAX + 8, (s), strlen(s))

/* ---- recompute ---- */

static int recompute(Edit *e)
{
    char err[512];
    err[0] = '\0';
    if (e->recompute) {
        if (e->recompute(e->user, err, sizeof err) == 0) return 0;
        return refuse(e, "%s", err);
    }
    AttnTrace *t = attn_trace_create(&e->work.cfg, err, sizeof err);
    if (!t) return refuse(e, "%s", err);
    attn_trace_destroy(e->trace);
    e->trace = t;
    return 0;
}

/* ---- lifetime ---- */

int edit_init_copy(Edit *e, const Lesson *orig, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    memset(e, 0, sizeof *e);
    e->work = *orig; /* shared until own_work */
    e->orig = orig;
    e->hist_max = EDIT_HISTORY_MAX_BYTES;
    return 0;
}

/* ---- the texts about the lesson as loaded ---- */

/* Does a text hold a placeholder ({{ and }} are literal braces)? */
static int has_placeholder(const char *s)
{
    for (; s && *s; s++) {
        if (s[0] == '{' && s[1] == '{') {
            s++;
            continue;
        }
        if (*s == '{') return 1;
    }
    return 0;
}

/* s with its braces doubled, so that it fills to itself; malloc'd. */
static char *literal(const char *s)
{
    size_t n = strlen(s), braces = 0;
    for (const char *p = s; *p; p++) braces += *p == '{' || *p == '}';
    char *out = malloc(n + braces + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = s; *p; p++) {
        if (*p == '{' || *p == '}') *o++ = *p;
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

/* out: the text `in` filled for step s (NULL: no step) of the lesson as
 * loaded, as plain text, in each language that fills. 1 when its English
 * does not fill (nothing to show), -1 when memory runs out. */
static int fill_text(const Lesson *L, const AttnTrace *t, const AttnStep *s, const LessonText *in, LessonText *out,
                     char *buf)
{
    memset(out, 0, sizeof *out);
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        if (!in->text[l]) continue;
        if (narrate_fill(buf, NARRATE_MAX_FILLED + 1, in->text[l], L, t, s, (LessonLang)l) != 0) {
            if (l == LESSON_EN) return 1;
            continue;
        }
        if (!(out->text[l] = literal(buf))) return -1;
    }
    return 0;
}

/* Appends a narration entry to T (which owns it then). -1 when memory runs out. */
static int add_entry(Lesson *T, const char *key, LessonText *text)
{
    LessonNarration *n = realloc(T->narration, sizeof *n * (size_t)(T->n_narration + 1));
    char *k = strdup(key);
    if (n) T->narration = n;
    if (!n || !k) {
        free(k);
        Lesson gone = {0};
        gone.summary = *text;
        lesson_free(&gone);
        return -1;
    }
    T->narration[T->n_narration++] = (LessonNarration){.key = k, .text = *text};
    return 0;
}

/* out: a copy of in. -1 when memory runs out. */
static int copy_text(const LessonText *in, LessonText *out)
{
    Lesson one = {0}, copy = {0};
    one.summary = *in;
    if (lesson_copy_texts(&copy, &one) != 0) return -1;
    *out = copy.summary;
    return 0;
}

/* out: in as the working copy carries it (see edit.h): filled for step s of
 * the lesson as loaded when it has no condition, else as written. 1 when
 * it does not fill (nothing to carry), -1 when memory runs out. */
static int carried_text(const Lesson *L, const AttnTrace *t, const AttnStep *s, const LessonText *in, LessonText *out,
                        char *buf)
{
    if (in->when) return copy_text(in, out);
    return fill_text(L, t, s, in, out, buf);
}

/* e->texts: the lesson as loaded's summary and narration as the working
 * copy carries them: the summary and the intro once, a text keyed by a
 * step's name for that step, a text keyed by a kind for each step of that
 * kind that has no text of its own, keyed by the step's name (a step of
 * that kind that a change adds is then described from what it is), and a
 * text with a condition as written. The trace of the lesson as loaded is
 * computed here, once, when some text needs it. 0, or -1 with e.msg. */
static int build_texts(Edit *e)
{
    if (e->have_texts) return 0;
    const Lesson *L = e->orig;
    Lesson *T = &e->texts;
    memset(T, 0, sizeof *T);
    int need = !L->summary.when &&
               (has_placeholder(L->summary.text[LESSON_EN]) || has_placeholder(L->summary.text[LESSON_ZH]));
    for (int i = 0; i < L->n_narration; i++) {
        const LessonText *x = &L->narration[i].text;
        need |= !x->when && (has_placeholder(x->text[LESSON_EN]) || has_placeholder(x->text[LESSON_ZH]));
    }
    if (!need) {
        if (lesson_copy_texts(T, L) != 0) return refuse(e, "out of memory copying the lesson's texts");
        e->have_texts = 1;
        return 0;
    }
    char msg[512];
    AttnTrace *t = attn_trace_create(&L->cfg, msg, sizeof msg);
    if (!t && errno == ENOMEM) return refuse(e, "out of memory: %s", msg);
    if (!t) {
        /* the lesson as loaded overflows float32 (a change may be what mends
         * it): what it says of its own numbers cannot be filled, and goes */
        int rc = 0;
        if (L->summary.text[LESSON_EN] && (L->summary.when || !has_placeholder(L->summary.text[LESSON_EN])))
            rc = copy_text(&L->summary, &T->summary);
        for (int i = 0; rc == 0 && i < L->n_narration; i++) {
            const LessonNarration *n = &L->narration[i];
            LessonText out;
            if (!n->text.when && (has_placeholder(n->text.text[LESSON_EN]) || has_placeholder(n->text.text[LESSON_ZH])))
                continue;
            rc = copy_text(&n->text, &out) != 0 ? -1 : add_entry(T, n->key, &out);
        }
        if (rc != 0) {
            lesson_free(T);
            return refuse(e, "out of memory copying the lesson's texts");
        }
        e->have_texts = 1;
        return 0;
    }
    char *buf = malloc(NARRATE_MAX_FILLED + 1);
    int rc = buf ? 0 : -1;
    if (rc == 0 && L->summary.text[LESSON_EN] && carried_text(L, t, NULL, &L->summary, &T->summary, buf) < 0) rc = -1;
    for (int i = 0; rc == 0 && i < L->n_narration; i++) {
        const LessonNarration *n = &L->narration[i];
        int kind = attn_step_kind_from_name(n->key), intro = strcmp(n->key, "intro") == 0;
        LessonText out;
        if (n->text.when || intro || kind < 0) {
            const AttnStep *s = intro ? NULL : attn_trace_find_name(t, n->key);
            if (!s && !intro && !n->text.when) continue; /* a key of no step: never shown */
            int r = carried_text(L, t, s, &n->text, &out, buf);
            rc = r < 0 ? -1 : r == 0 ? add_entry(T, n->key, &out) : 0;
            continue;
        }
        for (int k = 0; rc == 0 && k < t->n_steps; k++) {
            const AttnStep *s = &t->steps[k];
            if ((int)s->kind != kind || lesson_narration_text(L, s->name)) continue;
            int r = carried_text(L, t, s, &n->text, &out, buf);
            rc = r < 0 ? -1 : r == 0 ? add_entry(T, s->name, &out) : 0;
        }
    }
    free(buf);
    attn_trace_destroy(t);
    if (rc != 0) {
        lesson_free(T);
        return refuse(e, "out of memory filling the lesson's texts");
    }
    e->have_texts = 1;
    return 0;
}

/* Makes the working lesson, just copied from the lesson as loaded, carry
 * the texts about it (e->texts). 0, or -1 with e.msg. */
static int take_texts(Edit *e)
{
    if (build_texts(e) != 0) return -1;
    if (lesson_copy_texts(&e->work, &e->texts) != 0) return refuse(e, "out of memory copying the lesson's texts");
    return 0;
}

/* Gives the working lesson buffers of its own before its first change.
 * 0, or -1 with e.msg (the working lesson is then still the one as loaded). */
static int own_work(Edit *e)
{
    if (e->owned) return 0;
    Lesson copy;
    if (lesson_copy(&copy, e->orig) != 0) return refuse(e, "out of memory copying the lesson");
    e->work = copy;
    lesson_bind(&e->work);
    e->owned = 1;
    if (take_texts(e) != 0) {
        char why[sizeof e->msg];
        lesson_text_copy(why, sizeof why, e->msg);
        lesson_free(&e->work);
        e->work = *e->orig;
        e->owned = 0;
        return refuse(e, "%s", why);
    }
    return 0;
}

int edit_init(Edit *e, const Lesson *orig, char *err, size_t errlen)
{
    if (edit_init_copy(e, orig, err, errlen) != 0) return -1;
    if (recompute(e) != 0) {
        snprintf(err, errlen, "%s", e->msg);
        memset(e, 0, sizeof *e);
        return -1;
    }
    return 0;
}

/* The memory an entry holds. */
static size_t entry_bytes(const EditEntry *x)
{
    return sizeof *x + (x->diff ? x->diff->bytes : 0);
}

static void entry_free(Edit *e, EditEntry *x)
{
    e->hist_bytes -= entry_bytes(x);
    edit_diff_free(x->diff);
    memset(x, 0, sizeof *x);
}

/* Drops the entries that could be redone (a new change forks the history). */
static void drop_redo(Edit *e)
{
    for (int i = e->at; i < e->n_hist; i++) entry_free(e, &e->hist[i]);
    e->n_hist = e->at;
}

void edit_free(Edit *e)
{
    if (!e) return;
    e->at = 0;
    drop_redo(e);
    free(e->hist);
    if (e->owned) lesson_free(&e->work);
    lesson_free(&e->texts);
    attn_trace_destroy(e->trace);
    memset(e, 0, sizeof *e);
}

const Lesson *edit_lesson(const Edit *e)
{
    return &e->work;
}

int edit_refresh(Edit *e)
{
    return recompute(e);
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int edit_modified(const Edit *e)
{
    const Lesson *a = &e->work, *b = e->orig;
    if (a->n_tokens != b->n_tokens || a->n_source_tokens != b->n_source_tokens) return 1;
    for (int i = 0; i < a->n_tokens; i++)
        if (!same_text(a->tokens[i], b->tokens[i])) return 1;
    for (int i = 0; i < a->n_source_tokens; i++)
        if (!same_text(a->source_tokens[i], b->source_tokens[i])) return 1;
    if (a->cfg.mask_kind != b->cfg.mask_kind || attn_config_divisor(&a->cfg) != attn_config_divisor(&b->cfg) ||
        a->cfg.scale_kind != b->cfg.scale_kind)
        return 1;
    size_t mb = lesson_mask_bytes(&a->cfg);
    if (mb && memcmp(a->mask, b->mask, mb) != 0) return 1;
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        int r1, c1, r2, c2;
        const float *x = lesson_matrix(a, m, &r1, &c1), *y = lesson_matrix(b, m, &r2, &c2);
        if ((x == NULL) != (y == NULL) || r1 != r2 || c1 != c2) return 1;
        if (x && memcmp(x, y, sizeof(float) * (size_t)r1 * (size_t)c1) != 0) return 1;
    }
    return 0;
}

/* ---- the history ---- */

/* Counts a new entry, filled, into the history's memory; when that passes
 * e->hist_max, the oldest entries go (never the new one), counted in
 * e->forgotten. */
static void recorded(Edit *e, const EditEntry *x)
{
    e->hist_bytes += entry_bytes(x);
    int gone = 0;
    while (e->hist_bytes > e->hist_max && e->at - gone > 1) {
        entry_free(e, &e->hist[gone]);
        gone++;
    }
    if (!gone) return;
    memmove(e->hist, e->hist + gone, sizeof *e->hist * (size_t)(e->n_hist - gone));
    e->n_hist -= gone;
    e->at -= gone;
    e->forgotten += gone;
}

static EditEntry *push(Edit *e)
{
    drop_redo(e);
    if (e->n_hist == e->cap_hist) {
        int cap = e->cap_hist ? 2 * e->cap_hist : 64;
        EditEntry *h = realloc(e->hist, sizeof *h * (size_t)cap);
        if (!h) return NULL;
        e->hist = h;
        e->cap_hist = cap;
    }
    EditEntry *x = &e->hist[e->n_hist++];
    memset(x, 0, sizeof *x);
    e->at = e->n_hist;
    return x;
}

/* ---- cells ---- */

const char *edit_matrix_name(int mat)
{
    return mat == EDIT_MASK ? "mask" : lesson_matrix_name(mat);
}

int edit_shape(const Edit *e, int mat, int *rows, int *cols)
{
    const AttnConfig *g = &e->work.cfg;
    if (mat == EDIT_MASK) {
        *rows = g->mask_kind == ATTN_MASK_PADDING ? 1 : g->n_q;
        *cols = g->n_k;
        return g->mask_kind == ATTN_MASK_PADDING || g->mask_kind == ATTN_MASK_MATRIX ? 0 : -1;
    }
    return lesson_matrix(&e->work, mat, rows, cols) ? 0 : -1;
}

double edit_cell(const Edit *e, int mat, int r, int c)
{
    int rows, cols;
    if (edit_shape(e, mat, &rows, &cols) != 0 || r < 0 || r >= rows || c < 0 || c >= cols) return NAN;
    size_t i = (size_t)r * (size_t)cols + (size_t)c;
    if (mat == EDIT_MASK) return e->work.mask[i];
    return lesson_matrix(&e->work, mat, &rows, &cols)[i];
}

static void cell_store(Lesson *L, int mat, size_t idx, float v)
{
    if (mat == EDIT_MASK)
        L->mask[idx] = v != 0;
    else
        (*lesson_matrix_slot(L, mat))[idx] = v;
}

static unsigned gen_after_cell(const Lesson *L, int mat)
{
    return mat == EDIT_MASK ? L->generated : L->generated & ~(1u << mat);
}

/* The index check, in the words of a lesson's shape. */
static int check_index(Edit *e, int mat, int r, int c)
{
    int rows, cols;
    const char *name = edit_matrix_name(mat);
    if (mat < 0 || mat > EDIT_MASK) return refuse(e, "expected a matrix, found %d", mat);
    if (edit_shape(e, mat, &rows, &cols) != 0) {
        if (mat == EDIT_MASK)
            return refuse(e,
                          "mask: this lesson's mask is %s, which has no cells to set (toggle a cell to make it "
                          "a matrix)",
                          attn_mask_kind_name(e->work.cfg.mask_kind));
        return refuse(e, "%s: this lesson has no %s", name, name);
    }
    if (r < 0 || r >= rows)
        return refuse(e, "%s[%d][%d]: expected a row 0..%d (%s is %d×%d), found %d", name, r, c, rows - 1, name, rows,
                      cols, r);
    if (c < 0 || c >= cols)
        return refuse(e, "%s[%d][%d]: expected a column 0..%d (%s is %d×%d), found %d", name, r, c, cols - 1, name,
                      rows, cols, c);
    return 0;
}

int edit_set_cell(Edit *e, int mat, int r, int c, double value, int scrub)
{
    if (check_index(e, mat, r, c) != 0) return -1;
    const char *name = edit_matrix_name(mat);
    if (mat == EDIT_MASK && value != 0 && value != 1)
        return refuse(e, "mask[%d][%d]: expected 0 or 1 (1 = may attend, 0 = blocked), found %g", r, c, value);
    if (!isfinite(value))
        return refuse(e, "%s[%d][%d]: expected a finite number, found %s", name, r, c,
                      isnan(value) ? "NaN"
                      : value > 0  ? "+inf"
                                   : "-inf");
    if (!(fabs(value) < (double)FLT_MAX + ldexp(1.0, 103)))
        return refuse(e, "%s[%d][%d]: expected a number float32 can hold (|x| <= 3.4028235e38), found %g", name, r, c,
                      value);
    int rows, cols;
    edit_shape(e, mat, &rows, &cols);
    size_t idx = (size_t)r * (size_t)cols + (size_t)c;
    float before = (float)edit_cell(e, mat, r, c), after = (float)value;
    if (own_work(e) != 0) return -1;
    unsigned gen_before = e->work.generated;
    cell_store(&e->work, mat, idx, after);
    e->work.generated = gen_after_cell(&e->work, mat);
    if (recompute(e) != 0) {
        cell_store(&e->work, mat, idx, before);
        e->work.generated = gen_before;
        return refuse_before(e, "%s[%d][%d] = %.9g refused, the old value kept: ", name, r, c, value);
    }
    EditEntry *top = e->at > 0 && e->at == e->n_hist ? &e->hist[e->at - 1] : NULL;
    if (scrub && e->scrub_open && top && top->kind == E_CELL && top->scrub && top->mat == mat && top->idx == idx) {
        top->val[1] = after;
        top->gen[1] = e->work.generated;
        return 0;
    }
    EditEntry *x = push(e);
    if (!x) {
        cell_store(&e->work, mat, idx, before);
        e->work.generated = gen_before;
        recompute(e);
        return refuse(e, "out of memory recording the change");
    }
    x->kind = E_CELL;
    x->mat = mat;
    x->idx = idx;
    x->val[0] = before;
    x->val[1] = after;
    x->gen[0] = gen_before;
    x->gen[1] = e->work.generated;
    x->scrub = scrub;
    e->scrub_open = scrub;
    recorded(e, x);
    return 0;
}

void edit_end_scrub(Edit *e)
{
    e->scrub_open = 0;
}

/* A number as typed: all of the text a decimal number (lesson_read_decimal;
 * spaces around it allowed). */
static int parse_value(Edit *e, const char *what, const char *text, double *out)
{
    const char *s = text;
    while (*s == ' ') s++;
    errno = 0;
    double v = 0;
    const char *end = s + lesson_read_decimal(s, &v);
    while (end > s && *end == ' ') end++;
    if (end == s || *end)
        return refuse(e, "%s: expected a decimal number (such as -0.5 or 1e-3), found \"%s\"", what, QUOTED(text));
    if (isnan(v) || isinf(v) || (errno == ERANGE && fabs(v) > 1))
        return refuse(e, "%s: expected a finite number that float32 can hold, found \"%s\"", what, QUOTED(text));
    *out = v;
    return 0;
}

int edit_set_cell_text(Edit *e, int mat, int r, int c, const char *text)
{
    char what[64];
    snprintf(what, sizeof what, "%s[%d][%d]", edit_matrix_name(mat), r, c);
    double v;
    if (parse_value(e, what, text, &v) != 0) return -1;
    return edit_set_cell(e, mat, r, c, v, 0);
}

/* An index in brackets: "[12]"; advances *p past it. */
static int parse_index(const char **p, int *out)
{
    const char *s = *p;
    if (*s != '[') return -1;
    s++;
    if (*s < '0' || *s > '9') return -1;
    long v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > 1000000) return -1;
        s++;
    }
    if (*s != ']') return -1;
    *p = s + 1;
    *out = (int)v;
    return 0;
}

int edit_set(Edit *e, const char *spec)
{
    const char *q = QUOTED(spec); /* the spec as the messages quote it */
    const char *eq = strchr(spec, '=');
    const char *br = strchr(spec, '[');
    if (!eq || !br || br > eq)
        return refuse(e, "--set '%s': expected NAME[i][j]=VALUE or NAME[i]=VALUE (NAME: X, W_Q, b_Q, mask, ...)", q);
    char name[32];
    size_t n = (size_t)(br - spec);
    if (n == 0 || n >= sizeof name)
        return refuse(e, "--set '%s': expected a matrix name before '[' (X, W_Q, b_Q, mask, ...)", q);
    memcpy(name, spec, n);
    name[n] = '\0';
    int mat = strcmp(name, "mask") == 0 ? EDIT_MASK : lesson_matrix_from_name(name);
    if (mat < 0)
        return refuse(e,
                      "--set '%s': %s: not a matrix of the lesson; expected one of X, Y, W_Q, W_K, W_V, W_O, b_Q, "
                      "b_K, b_V, b_O, W_a, b_a, v_a, mask (computed steps such as Q or weights_1 follow from these)",
                      q, name);
    const char *p = br;
    int idx[2], k = 0;
    while (*p == '[' && k < 2)
        if (parse_index(&p, &idx[k++]) != 0)
            return refuse(e, "--set '%s': expected an index [0], [1], ... after %s, found \"%s\"", q, name,
                          quoted((char[QUOTE_MAX + 8]){0}, QUOTE_MAX + 8, br, (size_t)(eq - br)));
    if (p != eq)
        return refuse(e, "--set '%s': expected '=' after %s's indices, found \"%s\"", q, name,
                      quoted((char[QUOTE_MAX + 8]){0}, QUOTE_MAX + 8, p, (size_t)(eq - p)));
    int rows, cols;
    int have = edit_shape(e, mat, &rows, &cols) == 0;
    int r = 0, c = 0;
    const AttnConfig *g = &e->work.cfg;
    if (mat == EDIT_MASK && !have && k == 2) {
        /* no mask or a causal one: the cell makes it an explicit matrix, as a toggle does */
        double v = 0;
        char what[64];
        snprintf(what, sizeof what, "mask[%d][%d]", idx[0], idx[1]);
        if (idx[0] >= g->n_q || idx[1] >= g->n_k)
            return refuse(e, "--set '%s': %s: expected a cell of the %d×%d mask (queries × keys)", q, what, g->n_q,
                          g->n_k);
        if (parse_value(e, what, eq + 1, &v) != 0) return refuse_before(e, "--set '%s': ", q);
        if (v != 0 && v != 1)
            return refuse(e, "--set '%s': %s: expected 0 or 1 (1 = may attend, 0 = blocked), found %g", q, what, v);
        int now = g->mask_kind == ATTN_MASK_CAUSAL ? idx[1] <= idx[0] : 1;
        if ((int)v == now) return 0;
        if (edit_toggle_mask(e, idx[0], idx[1]) != 0) return refuse_before(e, "--set '%s': ", q);
        return 0;
    }
    if (k == 2) {
        r = idx[0], c = idx[1];
    } else if (have && rows == 1) {
        c = idx[0];
    } else if (have && cols == 1) {
        r = idx[0];
    } else if (have) {
        return refuse(e, "--set '%s': %s is %d×%d, a matrix: expected %s[i][j]=VALUE", q, name, rows, cols, name);
    } else {
        c = idx[0];
    }
    char what[64];
    snprintf(what, sizeof what, "%s[%d][%d]", name, r, c);
    double v = 0;
    if (check_index(e, mat, r, c) != 0 || parse_value(e, what, eq + 1, &v) != 0 ||
        edit_set_cell(e, mat, r, c, v, 0) != 0)
        return refuse_before(e, "--set '%s': ", q);
    return 0;
}

/* ---- the scale ---- */

double edit_scale(const Edit *e, double *lo, double *hi)
{
    double base = sqrt((double)e->work.cfg.d_k);
    if (lo) *lo = EDIT_SCALE_MIN_FACTOR * base;
    if (hi) *hi = EDIT_SCALE_MAX_FACTOR * base;
    return attn_config_divisor(&e->work.cfg);
}

/* The kind that divides by exactly this float: the ticks keep their names. */
static void scale_kind_for(const AttnConfig *g, float d, AttnScaleKind *kind, float *value)
{
    *value = 0;
    if (d == sqrtf((float)g->d_k))
        *kind = ATTN_SCALE_SQRT_DK;
    else if (d == sqrtf((float)g->d_model))
        *kind = ATTN_SCALE_SQRT_DMODEL;
    else if (d == 1.0f)
        *kind = ATTN_SCALE_NONE;
    else
        *kind = ATTN_SCALE_VALUE, *value = d;
}

static int apply_scale(Edit *e, AttnScaleKind kind, float value)
{
    AttnConfig *g = &e->work.cfg;
    AttnScaleKind k0 = g->scale_kind;
    float v0 = g->scale_value;
    if (k0 == kind && (kind != ATTN_SCALE_VALUE || v0 == value)) return 0;
    if (own_work(e) != 0) return -1;
    g->scale_kind = kind;
    g->scale_value = value;
    if (recompute(e) != 0) {
        g->scale_kind = k0;
        g->scale_value = v0;
        return refuse_before(e, "scale refused, the old one kept: ");
    }
    EditEntry *x = push(e);
    if (!x) {
        g->scale_kind = k0;
        g->scale_value = v0;
        recompute(e);
        return refuse(e, "out of memory recording the change");
    }
    x->kind = E_SCALE;
    x->sk[0] = k0, x->sv[0] = v0;
    x->sk[1] = kind, x->sv[1] = value;
    x->gen[0] = x->gen[1] = e->work.generated;
    e->scrub_open = 0;
    recorded(e, x);
    return 0;
}

int edit_set_scale(Edit *e, double divisor)
{
    if (e->work.cfg.attention == ATTN_ADDITIVE)
        return refuse(e, "scale: additive attention has no scale (its scores are not divided)");
    double lo, hi;
    edit_scale(e, &lo, &hi);
    if (!isfinite(divisor) || divisor < lo * (1 - 1e-6) || divisor > hi * (1 + 1e-6))
        return refuse(e, "scale: expected a divisor from %.4g to %.4g (0.1·√d_k to 10·√d_k, d_k = %d), found %g", lo,
                      hi, e->work.cfg.d_k, divisor);
    AttnScaleKind kind;
    float value;
    scale_kind_for(&e->work.cfg, (float)divisor, &kind, &value);
    return apply_scale(e, kind, value);
}

int edit_step_scale(Edit *e, int dir)
{
    if (e->work.cfg.attention == ATTN_ADDITIVE)
        return refuse(e, "scale: additive attention has no scale (its scores are not divided)");
    double lo, hi, cur = edit_scale(e, &lo, &hi);
    double base = sqrt((double)e->work.cfg.d_k);
    double pos = log10(cur / base) * EDIT_SCALE_STEPS_PER_DECADE;
    double next = dir > 0 ? floor(pos + 1e-6) + 1 : ceil(pos - 1e-6) - 1;
    double target = base * pow(10.0, next / EDIT_SCALE_STEPS_PER_DECADE);
    /* stop at a tick on the way */
    const double ticks[] = {base, sqrt((double)e->work.cfg.d_model), 1.0};
    for (int i = 0; i < 3; i++) {
        double t = ticks[i];
        if (t < lo || t > hi) continue;
        if (dir > 0 && t > cur * (1 + 1e-6) && t < target * (1 - 1e-6)) target = t;
        if (dir < 0 && t < cur * (1 - 1e-6) && t > target * (1 + 1e-6)) target = t;
    }
    if (target > hi) target = hi;
    if (target < lo) target = lo;
    if (fabs(target - cur) <= cur * 1e-6)
        return refuse(e, "scale: already at its %s, %s·√d_k = %.4g", dir > 0 ? "largest" : "smallest",
                      dir > 0 ? "10" : "0.1", cur);
    return edit_set_scale(e, target);
}

/* ---- shape changes: tokens and the mask ---- */

/* Makes `after` the working lesson's shape, recomputes and records it; on a
 * refusal the lesson keeps `before`. Takes ownership of both. */
static int commit_shape(Edit *e, Shape *before, Shape *after, unsigned gen_after, const char *what)
{
    if (!before || !after) {
        edit_shape_free(before);
        edit_shape_free(after);
        return refuse(e, "%s: out of memory", what);
    }
    if (own_work(e) != 0) {
        edit_shape_free(before);
        edit_shape_free(after);
        return -1;
    }
    unsigned gen_before = e->work.generated;
    if (edit_shape_apply(&e->work, after) != 0) {
        edit_shape_free(before);
        edit_shape_free(after);
        return refuse(e, "%s: out of memory", what);
    }
    e->work.generated = gen_after;
    double floats = attn_trace_floats(&e->work.cfg);
    int too_big = floats > LESSON_MAX_TRACE_FLOATS;
    if (too_big || recompute(e) != 0) {
        char why[sizeof e->msg];
        if (too_big)
            snprintf(why, sizeof why, "expected a trace of at most %u numbers (256 MiB), found %.0f",
                     LESSON_MAX_TRACE_FLOATS, floats);
        else
            snprintf(why, sizeof why, "%s", e->msg);
        edit_shape_apply(&e->work, before);
        e->work.generated = gen_before;
        if (too_big) recompute(e);
        edit_shape_free(before);
        edit_shape_free(after);
        return refuse(e, "%s refused, the lesson kept as it was: %s", what, why);
    }
    Lesson was;
    edit_with_shape(&was, &e->work, before);
    Diff *d = edit_diff_make(&was, &e->work);
    EditEntry *x = d ? push(e) : NULL;
    if (!x) {
        edit_diff_free(d);
        edit_shape_apply(&e->work, before);
        e->work.generated = gen_before;
        recompute(e);
        edit_shape_free(before);
        edit_shape_free(after);
        return refuse(e, "%s: out of memory", what);
    }
    edit_shape_free(before);
    edit_shape_free(after);
    x->kind = E_DIFF;
    x->diff = d;
    x->gen[0] = gen_before;
    x->gen[1] = gen_after;
    e->scrub_open = 0;
    recorded(e, x);
    return 0;
}

/* The mask of the working lesson as an explicit n_q × n_k matrix (malloc'd). */
static unsigned char *effective_mask(const Lesson *L)
{
    const AttnConfig *g = &L->cfg;
    size_t n = (size_t)g->n_q * (size_t)g->n_k;
    unsigned char *m = malloc(n ? n : 1);
    if (!m) return NULL;
    for (int i = 0; i < g->n_q; i++)
        for (int j = 0; j < g->n_k; j++) {
            unsigned char v = 1;
            if (g->mask_kind == ATTN_MASK_CAUSAL) v = j <= i;
            if (g->mask_kind == ATTN_MASK_PADDING) v = L->mask[j];
            if (g->mask_kind == ATTN_MASK_MATRIX) v = L->mask[(size_t)i * (size_t)g->n_k + (size_t)j];
            m[(size_t)i * (size_t)g->n_k + (size_t)j] = v;
        }
    return m;
}

int edit_toggle_mask(Edit *e, int q, int k)
{
    const AttnConfig *g = &e->work.cfg;
    if (q < 0 || q >= g->n_q || k < 0 || k >= g->n_k)
        return refuse(e, "mask[%d][%d]: expected a cell of the %d×%d mask (queries × keys)", q, k, g->n_q, g->n_k);
    if (g->mask_kind == ATTN_MASK_PADDING) return edit_set_cell(e, EDIT_MASK, 0, k, !e->work.mask[k], 0);
    if (g->mask_kind == ATTN_MASK_MATRIX)
        return edit_set_cell(e, EDIT_MASK, q, k, !e->work.mask[(size_t)q * (size_t)g->n_k + (size_t)k], 0);
    Shape *before = edit_shape_capture(&e->work), *after = edit_shape_capture(&e->work);
    if (after) {
        free(after->mask);
        after->mask = effective_mask(&e->work);
        after->mask_kind = ATTN_MASK_MATRIX;
        if (after->mask)
            after->mask[(size_t)q * (size_t)g->n_k + (size_t)k] ^= 1;
        else
            edit_shape_free(after), after = NULL;
    }
    return commit_shape(e, before, after, e->work.generated, "mask");
}

int edit_cycle_mask(Edit *e)
{
    const AttnConfig *g = &e->work.cfg;
    Shape *before = edit_shape_capture(&e->work), *after = edit_shape_capture(&e->work);
    if (after) {
        free(after->mask);
        after->mask = NULL;
        switch (g->mask_kind) {
        case ATTN_MASK_NONE:
            after->mask_kind = ATTN_MASK_CAUSAL;
            break;
        case ATTN_MASK_CAUSAL:
            after->mask_kind = ATTN_MASK_PADDING;
            after->mask = malloc((size_t)g->n_k);
            if (after->mask)
                memset(after->mask, 1, (size_t)g->n_k);
            else
                edit_shape_free(after), after = NULL;
            break;
        default:
            after->mask_kind = ATTN_MASK_NONE;
            break;
        }
    }
    return commit_shape(e, before, after, e->work.generated, "mask");
}

static int check_side(Edit *e, int side)
{
    if (side == 1 && !e->work.cfg.cross)
        return refuse(e, "source_tokens: this lesson is self-attention; its keys are its tokens");
    if (side != 0 && side != 1) return refuse(e, "expected the query side (0) or the source side (1), found %d", side);
    return 0;
}

/* Row `at` of the matrix the seed generates for `name` with `rows` rows
 * (the generator fills row by row, so row `at` starts at value at·cols). */
static void seeded_row(const Lesson *L, const char *name, int at, int cols, float *out)
{
    /* The stream is sequential: generate through the row and keep the last one. */
    size_t n = (size_t)(at + 1) * (size_t)cols;
    float *tmp = malloc(sizeof(float) * n);
    if (!tmp) {
        memset(out, 0, sizeof(float) * (size_t)cols);
        return;
    }
    lesson_random_fill(tmp, n, L->seed, name, 1.0);
    memcpy(out, tmp + (size_t)at * (size_t)cols, sizeof(float) * (size_t)cols);
    free(tmp);
}

/* Is X (or Y) the one the seed generates for its shape? */
static int is_seeded(const Lesson *L, int mat, const float *M, int rows, int cols)
{
    size_t n = (size_t)rows * (size_t)cols;
    float *tmp = malloc(sizeof(float) * (n ? n : 1));
    if (!tmp) return 0;
    lesson_random_fill(tmp, n, L->seed, lesson_matrix_name(mat), 1.0);
    int same = memcmp(tmp, M, sizeof(float) * n) == 0;
    free(tmp);
    return same;
}

/* Builds the shape with the side's tokens replaced: new_n tokens, where
 * token i comes from old token keep[i] (its name and row), or, when keep[i]
 * is -1, is names[i] with the seed's row i. */
static Shape *reshape(Edit *e, int side, int new_n, const int *keep, char *const *names)
{
    const Lesson *L = &e->work;
    const AttnConfig *g = &L->cfg;
    Shape *s = edit_shape_capture(L);
    if (!s) return NULL;
    int mat = side == 0 ? LESSON_MAT_X : LESSON_MAT_Y;
    int rows, cols;
    const float *M = lesson_matrix(L, mat, &rows, &cols);
    char **tok = calloc((size_t)new_n, sizeof *tok);
    float *nm = malloc(sizeof(float) * (size_t)new_n * (size_t)cols);
    int fail = !tok || !nm;
    for (int i = 0; !fail && i < new_n; i++) {
        const char *src = keep[i] >= 0 ? (side == 0 ? L->tokens : L->source_tokens)[keep[i]] : names[i];
        if (!(tok[i] = strdup(src))) fail = 1;
        float *row = nm + (size_t)i * (size_t)cols;
        if (keep[i] >= 0)
            memcpy(row, M + (size_t)keep[i] * (size_t)cols, sizeof(float) * (size_t)cols);
        else
            seeded_row(L, lesson_matrix_name(mat), i, cols, row);
    }
    /* the mask: kept entries stay, new ones follow the kind */
    int nq = side == 0 ? new_n : g->n_q, nk = (side == 1 || !g->cross) ? new_n : g->n_k;
    unsigned char *mask = NULL;
    if (!fail && g->mask_kind == ATTN_MASK_PADDING && (side == 1 || !g->cross)) {
        mask = malloc((size_t)nk);
        if (!mask) fail = 1;
        for (int j = 0; mask && j < nk; j++) mask[j] = keep[j] >= 0 ? L->mask[keep[j]] : 1;
    } else if (!fail && g->mask_kind == ATTN_MASK_MATRIX) {
        mask = malloc((size_t)nq * (size_t)nk);
        if (!mask) fail = 1;
        for (int i = 0; mask && i < nq; i++)
            for (int j = 0; j < nk; j++) {
                int oi = side == 0 ? keep[i] : i, oj = (side == 1 || !g->cross) ? keep[j] : j;
                mask[(size_t)i * (size_t)nk + (size_t)j] =
                    oi >= 0 && oj >= 0 ? L->mask[(size_t)oi * (size_t)g->n_k + (size_t)oj] : 1;
            }
    }
    if (fail) {
        if (tok)
            for (int i = 0; i < new_n; i++) free(tok[i]);
        free(tok);
        free(nm);
        free(mask);
        edit_shape_free(s);
        return NULL;
    }
    if (side == 0) {
        lesson_tokens_free(s->tokens, s->n_tokens);
        s->tokens = tok, s->n_tokens = new_n;
        free(s->X);
        s->X = nm;
    } else {
        lesson_tokens_free(s->src, s->n_src);
        s->src = tok, s->n_src = new_n;
        free(s->Y);
        s->Y = nm;
    }
    if (mask) {
        free(s->mask);
        s->mask = mask;
    }
    return s;
}

/* Commits a reshape; X (or Y), when the lesson as loaded left it to the seed,
 * stays marked as the seed's while it is still what the seed generates. */
static int commit_tokens(Edit *e, int side, Shape *after, const char *what)
{
    unsigned gen = e->work.generated;
    int mat = side == 0 ? LESSON_MAT_X : LESSON_MAT_Y;
    if (after && (e->orig->generated & (1u << mat))) {
        int rows, cols;
        lesson_matrix(&e->work, mat, &rows, &cols);
        gen &= ~(1u << mat);
        if (is_seeded(&e->work, mat, side == 0 ? after->X : after->Y, side == 0 ? after->n_tokens : after->n_src, cols))
            gen |= 1u << mat;
    }
    return commit_shape(e, edit_shape_capture(&e->work), after, gen, what);
}

static int side_count(const Edit *e, int side)
{
    return side == 0 ? e->work.n_tokens : e->work.n_source_tokens;
}

int edit_rename_token(Edit *e, int side, int i, const char *name)
{
    if (check_side(e, side) != 0) return -1;
    const char *field = side == 0 ? "tokens" : "source_tokens";
    int n = side_count(e, side);
    if (i < 0 || i >= n) return refuse(e, "%s[%d]: expected a token 0..%d, found %d", field, i, n - 1, i);
    char why[200];
    if (lesson_check_token(name, why, sizeof why) != 0) return refuse(e, "%s[%d]: %s", field, i, why);
    int *keep = malloc(sizeof(int) * (size_t)n);
    char **names = calloc((size_t)n, sizeof *names);
    if (!keep || !names) {
        free(keep);
        free(names);
        return refuse(e, "%s: out of memory", field);
    }
    for (int j = 0; j < n; j++) keep[j] = j;
    Shape *after = reshape(e, side, n, keep, names);
    free(keep);
    free(names);
    if (after) {
        char **t = side == 0 ? after->tokens : after->src;
        char *d = strdup(name);
        if (d) {
            free(t[i]);
            t[i] = d;
        } else {
            edit_shape_free(after), after = NULL;
        }
    }
    char what[96];
    snprintf(what, sizeof what, "%s[%d]", field, i);
    return commit_tokens(e, side, after, what);
}

int edit_add_token(Edit *e, int side, int at, const char *name)
{
    if (check_side(e, side) != 0) return -1;
    const char *field = side == 0 ? "tokens" : "source_tokens";
    int n = side_count(e, side);
    if (at < 0 || at > n) return refuse(e, "%s: expected a place 0..%d for the new token, found %d", field, n, at);
    if (n >= LESSON_MAX_TOKENS)
        return refuse(e, "%s: expected at most %d tokens, found %d already; the new one is refused", field,
                      LESSON_MAX_TOKENS, n);
    char why[200];
    if (lesson_check_token(name, why, sizeof why) != 0) return refuse(e, "%s[%d]: %s", field, at, why);
    int *keep = malloc(sizeof(int) * (size_t)(n + 1));
    char **names = calloc((size_t)(n + 1), sizeof *names);
    if (!keep || !names) {
        free(keep);
        free(names);
        return refuse(e, "%s: out of memory", field);
    }
    for (int j = 0; j <= n; j++) keep[j] = j < at ? j : j == at ? -1 : j - 1;
    names[at] = (char *)name;
    Shape *after = reshape(e, side, n + 1, keep, names);
    free(keep);
    free(names);
    char what[96];
    snprintf(what, sizeof what, "adding %s[%d]", field, at);
    return commit_tokens(e, side, after, what);
}

int edit_remove_token(Edit *e, int side, int i)
{
    if (check_side(e, side) != 0) return -1;
    const char *field = side == 0 ? "tokens" : "source_tokens";
    int n = side_count(e, side);
    if (i < 0 || i >= n) return refuse(e, "%s[%d]: expected a token 0..%d, found %d", field, i, n - 1, i);
    if (n <= 1) return refuse(e, "%s: expected at least 1 token; the last one stays", field);
    int *keep = malloc(sizeof(int) * (size_t)n);
    if (!keep) return refuse(e, "%s: out of memory", field);
    for (int j = 0; j < n - 1; j++) keep[j] = j < i ? j : j + 1;
    Shape *after = reshape(e, side, n - 1, keep, NULL);
    free(keep);
    char what[96];
    snprintf(what, sizeof what, "removing %s[%d]", field, i);
    return commit_tokens(e, side, after, what);
}

int edit_set_tokens(Edit *e, const char *words)
{
    /* split on spaces into at most LESSON_MAX_TOKENS + 1 words */
    size_t len = strlen(words);
    char *buf = malloc(len + 1);
    char **names = calloc(LESSON_MAX_TOKENS + 1, sizeof *names);
    int *keep = calloc(LESSON_MAX_TOKENS + 1, sizeof(int));
    if (!buf || !names || !keep) {
        free(buf);
        free(names);
        free(keep);
        return refuse(e, "--tokens: out of memory");
    }
    memcpy(buf, words, len + 1);
    int n = 0;
    for (char *tok = strtok(buf, " "); tok && n <= LESSON_MAX_TOKENS; tok = strtok(NULL, " ")) names[n++] = tok;
    int rc = 0;
    char why[200];
    if (n == 0)
        rc = refuse(e, "--tokens '%s': expected at least 1 token, found none", QUOTED(words));
    else if (n > LESSON_MAX_TOKENS)
        rc = refuse(e, "--tokens: expected at most %d tokens, found more", LESSON_MAX_TOKENS);
    for (int i = 0; rc == 0 && i < n; i++)
        if (lesson_check_token(names[i], why, sizeof why) != 0) rc = refuse(e, "--tokens: token %d: %s", i, why);
    if (rc == 0) {
        for (int i = 0; i < n; i++) keep[i] = i < e->work.n_tokens ? i : -1;
        Shape *after = reshape(e, 0, n, keep, names);
        if (after)
            for (int i = 0; i < n; i++) {
                char *d = strdup(names[i]);
                if (!d) {
                    edit_shape_free(after), after = NULL;
                    break;
                }
                free(after->tokens[i]);
                after->tokens[i] = d;
            }
        rc = commit_tokens(e, 0, after, "--tokens");
    }
    free(buf);
    free(names);
    free(keep);
    return rc;
}

/* ---- undo, redo, revert ---- */

/* Moves the working lesson to side `to` (0 before, 1 after) of entry x. */
static int entry_apply(Edit *e, EditEntry *x, int to)
{
    if (own_work(e) != 0) return -1;
    switch (x->kind) {
    case E_CELL:
        cell_store(&e->work, x->mat, x->idx, x->val[to]);
        break;
    case E_SCALE:
        e->work.cfg.scale_kind = x->sk[to];
        e->work.cfg.scale_value = x->sv[to];
        break;
    case E_DIFF:
        if (edit_diff_apply(&e->work, x->diff, to) != 0) return refuse(e, "out of memory");
        break;
    }
    e->work.generated = x->gen[to];
    return recompute(e);
}

int edit_can_undo(const Edit *e)
{
    return e->at > 0;
}

int edit_can_redo(const Edit *e)
{
    return e->at < e->n_hist;
}

int edit_undo(Edit *e)
{
    e->scrub_open = 0;
    if (!edit_can_undo(e)) return refuse(e, "nothing to undo");
    if (entry_apply(e, &e->hist[e->at - 1], 0) != 0) return -1;
    e->at--;
    return 0;
}

int edit_redo(Edit *e)
{
    e->scrub_open = 0;
    if (!edit_can_redo(e)) return refuse(e, "nothing to redo");
    if (entry_apply(e, &e->hist[e->at], 1) != 0) return -1;
    e->at++;
    return 0;
}

/* Makes the working lesson's numbers, tokens, mask and scale those of `to`
 * (of the same shapes but for the tokens), as one change that can be undone. */
static int become(Edit *e, const Lesson *to)
{
    if (own_work(e) != 0) return -1;
    /* a change like any other: what differs from `to`, both ways */
    Diff *d = edit_diff_make(&e->work, to);
    if (!d || edit_diff_apply(&e->work, d, 1) != 0) {
        edit_diff_free(d);
        return refuse(e, "out of memory");
    }
    unsigned gen_before = e->work.generated;
    e->work.generated = to->generated;
    if (recompute(e) != 0) { /* the lesson as loaded was computed once; only memory can fail here */
        char why[sizeof e->msg];
        lesson_text_copy(why, sizeof why, e->msg);
        if (edit_diff_apply(&e->work, d, 0) == 0) e->work.generated = gen_before;
        recompute(e);
        edit_diff_free(d);
        return refuse(e, "%s", why);
    }
    EditEntry *x = push(e);
    if (!x) {
        edit_diff_free(d);
        return refuse(e, "out of memory recording the change");
    }
    x->kind = E_DIFF;
    x->diff = d;
    x->gen[0] = gen_before;
    x->gen[1] = to->generated;
    recorded(e, x);
    return 0;
}

int edit_revert(Edit *e)
{
    e->scrub_open = 0;
    if (!edit_modified(e)) return refuse(e, "the lesson is as loaded already");
    return become(e, e->orig);
}

int edit_restore(Edit *e, const Lesson *from)
{
    e->scrub_open = 0;
    const AttnConfig *a = &e->orig->cfg, *b = &from->cfg;
    if (a->attention != b->attention || a->cross != b->cross || a->d_model != b->d_model || a->heads != b->heads ||
        a->d_k != b->d_k || a->d_v != b->d_v || a->d_x != b->d_x || a->d_y != b->d_y || a->d_a != b->d_a ||
        a->decode != b->decode || a->mask_order != b->mask_order || a->mask_fill != b->mask_fill ||
        a->rope_base != b->rope_base || a->positional != b->positional || a->tile != b->tile)
        return refuse(e, "%s: its sizes or options are not those of the lesson %s", from->id, e->orig->id);
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        int ra, ca, rb, cb;
        const float *pa = lesson_matrix(e->orig, m, &ra, &ca), *pb = lesson_matrix(from, m, &rb, &cb);
        int token_rows = m == LESSON_MAT_X || m == LESSON_MAT_Y;
        if (!pa != !pb || (pa && (ca != cb || (!token_rows && ra != rb))))
            return refuse(e, "%s: its matrix %s is not of the lesson %s's shape", from->id, lesson_matrix_name(m),
                          e->orig->id);
    }
    return become(e, from);
}

/* ---- the lesson to save ---- */

void edit_saved_id(const char *orig, char *out, size_t len)
{
    static const char suffix[] = "-edited";
    const size_t sl = sizeof suffix - 1, max = EDIT_SAVED_ID_MAX;
    /* what an earlier save added goes: abc-edited and abc-edited-3 are abc's */
    size_t n = strlen(orig), k = n;
    while (k > 0 && orig[k - 1] >= '0' && orig[k - 1] <= '9') k--;
    if (k < n && k > sl + 1 && orig[k - 1] == '-' && memcmp(orig + k - 1 - sl, suffix, sl) == 0) n = k - 1;
    if (n > sl && memcmp(orig + n - sl, suffix, sl) == 0) n -= sl;
    if (n + sl <= max) {
        lesson_format(out, len, "%.*s%s", (int)n, orig, suffix);
        return;
    }
    /* too long: a readable start, cut after a word where one ends late
     * enough, then a hash of the whole id, so that two ids that differ
     * only past the cut still save apart */
    uint32_t h = (uint32_t)lesson_fnv1a64(orig);
    size_t keep = max - sl - 9; /* "-" and 8 hex digits */
    size_t cut = keep;
    while (cut > keep / 2 && orig[cut] != '-') cut--;
    if (orig[cut] != '-') cut = keep;
    while (cut > 0 && orig[cut - 1] == '-') cut--;
    lesson_format(out, len, "%.*s-%08x%s", (int)cut, orig, (unsigned)h, suffix);
}

/* Does this part of the lesson (its narration, or its summary) fill against
 * the trace, and fit the format's limit as written (a text filled from
 * the lesson as loaded may be longer than the placeholders it replaced)? */
static int texts_hold(const Lesson *L, const LessonNarration *entry, const LessonText *summary, const AttnTrace *t)
{
    const LessonText *x = entry ? &entry->text : summary;
    for (int l = 0; l < LESSON_LANG_COUNT; l++)
        if (x->text[l] && strlen(x->text[l]) > LESSON_MAX_TEXT_BYTES) return 0;
    Lesson one = *L;
    one.narration = (LessonNarration *)entry;
    one.n_narration = entry ? 1 : 0;
    one.summary = summary ? *summary : (LessonText){0};
    char err[512];
    return narrate_check(&one, t, err, sizeof err) == 0;
}

int edit_saveable(const Edit *e, Lesson *out, int *dropped, char *err, size_t errlen)
{
    *dropped = 0;
    if (lesson_copy(out, &e->work) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char id[LESSON_MAX_ID_BYTES + 1];
    edit_saved_id(e->orig->id, id, sizeof id);
    const char *from = e->orig->edited_from ? e->orig->edited_from : edit_modified(e) ? e->orig->id : NULL;
    char *nid = strdup(id), *nfrom = from ? strdup(from) : NULL;
    if (!nid || (from && !nfrom)) {
        free(nid);
        free(nfrom);
        lesson_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    free(out->id);
    free(out->edited_from);
    out->id = nid;
    out->edited_from = nfrom;
    /* texts that no longer fill (a step that is gone, a token index past the
     * end) are left out, so that the saved lesson passes attnviz check */
    char msg[512];
    AttnTrace *t = attn_trace_create(&out->cfg, msg, sizeof msg);
    if (!t) {
        lesson_free(out);
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    if (out->summary.text[LESSON_EN] && !texts_hold(out, NULL, &out->summary, t)) {
        LessonText gone = out->summary;
        memset(&out->summary, 0, sizeof out->summary);
        Lesson tmp = {0};
        tmp.summary = gone;
        lesson_free(&tmp);
        (*dropped)++;
    }
    int kept = 0;
    for (int i = 0; i < out->n_narration; i++) {
        if (texts_hold(out, &out->narration[i], NULL, t)) {
            out->narration[kept++] = out->narration[i];
            continue;
        }
        Lesson tmp = {0};
        tmp.narration = malloc(sizeof *tmp.narration);
        if (tmp.narration) {
            tmp.narration[0] = out->narration[i];
            tmp.n_narration = 1;
        }
        lesson_free(&tmp);
        (*dropped)++;
    }
    out->n_narration = kept;
    attn_trace_destroy(t);
    return 0;
}
