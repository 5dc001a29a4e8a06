/* editor.h: edit mode in the window, as plain state: which matrices of the
 * step on screen can be edited, the cell cursor on one of them, what is being
 * typed, and what each edit-mode key does. The changes themselves go through
 * an Edit (edit.h); the View shows them (View.edit_mode, cur_*, typed). No
 * SDL: the window turns its keys into EditorKey values.
 *
 * Usage:
 *
 *     if (editor_start(&view, &edit) != 0) ... // E: the notice says why not
 *     editor_key(&view, &edit, EDITOR_DOWN);   // the cursor moves
 *     editor_type(&view, "2.5");               // typed text, shown in the cell
 *     editor_key(&view, &edit, EDITOR_ENTER);  // sets the cell; a refusal is the notice
 *
 * Targets: the current step when it is an input, weight or bias, and those of
 * its operands that are (Q's operands X, W_Q, b_Q); on a masked or softmax
 * step the mask, whose cells are the (query, key) cells of the scores.
 */
#ifndef EDITOR_H
#define EDITOR_H

#include "edit.h"
#include "view.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    EDITOR_TYPING_NONE,
    EDITOR_TYPING_NUMBER, /* a new value for the cell */
    EDITOR_TYPING_RENAME, /* a new name for the cursor row's token */
    EDITOR_TYPING_ADD     /* the name of a token added after the cursor row */
};

typedef enum EditorKey {
    EDITOR_UP,
    EDITOR_DOWN,
    EDITOR_LEFT,
    EDITOR_RIGHT,
    EDITOR_NEXT_MATRIX, /* Tab */
    EDITOR_ENTER,       /* set the typed value, finish a name, or toggle a mask cell */
    EDITOR_ESCAPE,      /* drop what is typed, else leave edit mode */
    EDITOR_BACKSPACE,
    EDITOR_RENAME,      /* F2: rename the cursor row's token */
    EDITOR_ADD_TOKEN,   /* Insert: add a token after the cursor row */
    EDITOR_REMOVE_TOKEN /* Delete: remove the cursor row's token */
} EditorKey;

/* The editable matrices on screen: up to max LESSON_MAT_* / EDIT_MASK ids,
 * operands first. Returns how many. */
int editor_targets(const View *v, const Edit *e, int *mats, int max);
/* E: edit mode on, the cursor on the first target (or on `mat` (r, c) when
 * that is a target, mat -1: none). 0, or -1 with a notice when nothing on
 * this step can be edited. */
int editor_start(View *v, const Edit *e, int mat, int r, int c);
void editor_stop(View *v);
/* After the step or the lesson changed: leaves edit mode when nothing on
 * the step can be edited, else keeps the cursor on a target and in range. */
void editor_follow(View *v, const Edit *e);
/* Handles one key in edit mode; 1 when it was used. */
int editor_key(View *v, Edit *e, EditorKey key);
/* Typed text (UTF-8): digits, '.', '-', '+', 'e' for a number (starting one
 * when nothing is typed), anything printable for a token's name. 1 when used. */
int editor_type(View *v, const char *text);
/* Mouse drag on the cursor's cell: dy pixels up (negative: down) change it by
 * dy·step (step 0.01, fine 0.001), merged into one undo step until
 * edit_end_scrub. */
int editor_scrub(View *v, Edit *e, int dy, int fine);
/* The cursor's cell as a person reads it, into buf: as the hover names it,
 * its labels or its numbers from 1 ("X[喜欢, 3]", "W_Q[2, 3]", "mask[我, 跑步]"),
 * where --set counts from 0 (X[1][2]). */
void editor_cursor_name(const View *v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
