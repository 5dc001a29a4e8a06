/* editor.c: edit mode: targets on screen, the cursor, typing, keys. */
#include "editor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* The matrix a step shows, when it is one of the lesson's: X, W_Q, b_Q ... */
static int step_matrix(const Edit *e, const AttnStep *s)
{
    int m = lesson_matrix_of_step(s);
    int r, c;
    return m >= 0 && edit_shape(e, m, &r, &c) == 0 ? m : -1;
}

static void add_target(int *mats, int max, int *n, int m)
{
    for (int i = 0; i < *n; i++)
        if (mats[i] == m) return;
    if (*n < max) mats[(*n)++] = m;
}

int editor_targets(const View *v, const Edit *e, int *mats, int max)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    int n = 0;
    for (int i = 0; i < s->n_from; i++) {
        int m = step_matrix(e, &t->steps[s->from[i]]);
        if (m >= 0) add_target(mats, max, &n, m);
    }
    int m = step_matrix(e, s);
    if (m >= 0) add_target(mats, max, &n, m);
    if (s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX) add_target(mats, max, &n, EDIT_MASK);
    return n;
}

/* Rows and columns the cursor moves over: the mask is queries × keys
 * whatever its kind (a toggle makes it a matrix). */
static void target_shape(const Edit *e, int mat, int *rows, int *cols)
{
    const AttnConfig *g = &edit_lesson(e)->cfg;
    if (mat == EDIT_MASK) {
        *rows = g->n_q;
        *cols = g->n_k;
        return;
    }
    if (edit_shape(e, mat, rows, cols) != 0) *rows = *cols = 1;
}

static int is_target(const View *v, const Edit *e, int mat)
{
    int mats[16];
    int n = editor_targets(v, e, mats, 16);
    for (int i = 0; i < n; i++)
        if (mats[i] == mat) return 1;
    return 0;
}

static void clamp_cursor(View *v, const Edit *e)
{
    int rows, cols;
    target_shape(e, v->cur_mat, &rows, &cols);
    v->cur_row = clampi(v->cur_row, 0, rows - 1);
    v->cur_col = clampi(v->cur_col, 0, cols - 1);
}

static void stop_typing(View *v)
{
    v->typing = EDITOR_TYPING_NONE;
    v->typed[0] = '\0';
}

int editor_start(View *v, const Edit *e, int mat, int r, int c)
{
    int mats[16];
    int n = editor_targets(v, e, mats, 16);
    if (n == 0) {
        view_set_notice(v, VS_EDIT_NOTHING, NULL, 1);
        return -1;
    }
    v->edit_mode = 1;
    stop_typing(v);
    if (mat >= 0 && is_target(v, e, mat)) {
        v->cur_mat = mat;
        v->cur_row = r;
        v->cur_col = c;
    } else if (!is_target(v, e, v->cur_mat)) {
        v->cur_mat = mats[0];
        v->cur_row = v->cur_col = 0;
    }
    clamp_cursor(v, e);
    view_touch(v);
    return 0;
}

void editor_stop(View *v)
{
    v->edit_mode = 0;
    stop_typing(v);
    view_touch(v);
}

void editor_follow(View *v, const Edit *e)
{
    if (!v->edit_mode) return;
    int mats[16];
    int n = editor_targets(v, e, mats, 16);
    if (n == 0) {
        editor_stop(v);
        return;
    }
    if (!is_target(v, e, v->cur_mat)) {
        v->cur_mat = mats[0];
        v->cur_row = v->cur_col = 0;
        stop_typing(v);
    }
    clamp_cursor(v, e);
}

void editor_cursor_name(const View *v, char *buf, size_t len)
{
    const AttnTrace *t = view_trace(v);
    if (v->cur_mat == LESSON_MAT_COUNT) {
        /* the mask: its query and key, as the weights label them */
        const AttnStep *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, 1);
        const char *const *q = w ? view_row_labels(v, t, w) : NULL, *const *k = w ? view_col_labels(v, t, w) : NULL;
        int col = v->notation == VIEW_NOTATION_COLUMN;
        if (q && k && v->cur_row < w->rows && v->cur_col < w->cols) {
            snprintf(buf, len, "mask[%s, %s]", col ? k[v->cur_col] : q[v->cur_row],
                     col ? q[v->cur_row] : k[v->cur_col]);
            return;
        }
        snprintf(buf, len, "mask[%d, %d]", (col ? v->cur_col : v->cur_row) + 1, (col ? v->cur_row : v->cur_col) + 1);
        return;
    }
    const AttnStep *m = attn_trace_find_name(t, lesson_matrix_name(v->cur_mat));
    view_cell_name(v, t, m ? attn_trace_index(t, m) : -1, v->cur_row, v->cur_col, buf, len);
    if (!buf[0]) /* the matrix is not drawn: its numbers from 1 */
        snprintf(buf, len, "%s[%d, %d]", edit_matrix_name(v->cur_mat), v->cur_row + 1, v->cur_col + 1);
}

/* The token side of the cursor's matrix: 0 X's rows (queries), 1 Y's rows
 * (the source tokens), -1 not a token matrix. */
static int token_side(const View *v)
{
    return v->cur_mat == LESSON_MAT_X ? 0 : v->cur_mat == LESSON_MAT_Y ? 1 : -1;
}

/* A refusal from the Edit, as the notice. */
static int refused(View *v, const Edit *e)
{
    view_set_notice(v, VS_NOTICE_REFUSED, e->msg, 1);
    return 1;
}

static int commit_typed(View *v, Edit *e)
{
    int rc = 0, side = token_side(v);
    switch (v->typing) {
    case EDITOR_TYPING_NUMBER:
        rc = edit_set_cell_text(e, v->cur_mat, v->cur_row, v->cur_col, v->typed);
        break;
    case EDITOR_TYPING_RENAME:
        rc = edit_rename_token(e, side, v->cur_row, v->typed);
        break;
    case EDITOR_TYPING_ADD:
        rc = edit_add_token(e, side, v->cur_row + 1, v->typed);
        if (rc == 0) v->cur_row++;
        break;
    default:
        return 1;
    }
    if (rc != 0) return refused(v, e); /* the text stays, to be corrected */
    stop_typing(v);
    editor_follow(v, e);
    return 1;
}

static int editor_key_(View *v, Edit *e, EditorKey key);

int editor_key(View *v, Edit *e, EditorKey key)
{
    int used = editor_key_(v, e, key);
    if (used) view_touch(v);
    return used;
}

static int editor_key_(View *v, Edit *e, EditorKey key)
{
    if (!v->edit_mode) return 0;
    int mats[16];
    int n = editor_targets(v, e, mats, 16);
    int side = token_side(v);
    switch (key) {
    case EDITOR_UP:
    case EDITOR_DOWN:
    case EDITOR_LEFT:
    case EDITOR_RIGHT:
        if (v->typing) return 1; /* finish or drop the typed text first */
        v->cur_row += key == EDITOR_UP ? -1 : key == EDITOR_DOWN ? 1 : 0;
        v->cur_col += key == EDITOR_LEFT ? -1 : key == EDITOR_RIGHT ? 1 : 0;
        clamp_cursor(v, e);
        return 1;
    case EDITOR_NEXT_MATRIX:
        if (v->typing || n == 0) return 1;
        for (int i = 0; i < n; i++)
            if (mats[i] == v->cur_mat) {
                v->cur_mat = mats[(i + 1) % n];
                break;
            }
        clamp_cursor(v, e);
        return 1;
    case EDITOR_ENTER:
        if (v->typing) return commit_typed(v, e);
        if (v->cur_mat == EDIT_MASK) {
            if (edit_toggle_mask(e, v->cur_row, v->cur_col) != 0) return refused(v, e);
            editor_follow(v, e);
        }
        return 1;
    case EDITOR_ESCAPE:
        if (v->typing)
            stop_typing(v);
        else
            editor_stop(v);
        return 1;
    case EDITOR_BACKSPACE: {
        size_t len = strlen(v->typed);
        while (len > 0 && ((unsigned char)v->typed[len - 1] & 0xC0) == 0x80) len--; /* a whole character */
        if (len > 0) len--;
        v->typed[len] = '\0';
        if (len == 0 && v->typing == EDITOR_TYPING_NUMBER) v->typing = EDITOR_TYPING_NONE;
        return 1;
    }
    case EDITOR_RENAME:
    case EDITOR_ADD_TOKEN:
        if (side < 0) {
            view_set_notice(v, VS_EDIT_TOKENS_WHERE, NULL, 1);
            return 1;
        }
        v->typing = key == EDITOR_RENAME ? EDITOR_TYPING_RENAME : EDITOR_TYPING_ADD;
        v->typed[0] = '\0';
        if (key == EDITOR_RENAME) {
            const Lesson *L = edit_lesson(e);
            snprintf(v->typed, sizeof v->typed, "%s", (side == 0 ? L->tokens : L->source_tokens)[v->cur_row]);
        }
        return 1;
    case EDITOR_REMOVE_TOKEN:
        if (side < 0) {
            view_set_notice(v, VS_EDIT_TOKENS_WHERE, NULL, 1);
            return 1;
        }
        if (edit_remove_token(e, side, v->cur_row) != 0) return refused(v, e);
        editor_follow(v, e);
        return 1;
    }
    return 0;
}

int editor_type(View *v, const char *text)
{
    if (!v->edit_mode || !text) return 0;
    if (v->typing == EDITOR_TYPING_NONE || v->typing == EDITOR_TYPING_NUMBER) {
        if (v->cur_mat == EDIT_MASK) return 0;
        for (const char *p = text; *p; p++)
            if (!strchr("0123456789.-+eE", *p)) return 0;
        v->typing = EDITOR_TYPING_NUMBER;
    }
    size_t at = strlen(v->typed), add = strlen(text);
    if (at + add >= sizeof v->typed) return 1;
    memcpy(v->typed + at, text, add + 1);
    view_touch(v);
    return 1;
}

int editor_scrub(View *v, Edit *e, int dy, int fine)
{
    if (!v->edit_mode || v->cur_mat == EDIT_MASK || dy == 0) return 0;
    double now = edit_cell(e, v->cur_mat, v->cur_row, v->cur_col);
    if (isnan(now)) return 0;
    double step = fine ? 0.001 : 0.01;
    /* rounded to the step, so that a drag lands on readable numbers */
    double next = round((now + dy * step) / step) * step;
    if (edit_set_cell(e, v->cur_mat, v->cur_row, v->cur_col, next, 1) != 0) return refused(v, e);
    return 1;
}
