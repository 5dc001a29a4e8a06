/* edit.h: changing a lesson's numbers, mask, scale and tokens, with undo.
 *
 * An Edit holds a working copy of a lesson. Every change is made to that copy,
 * recorded in a history of bounded memory, and followed by a recompute
 * of the whole forward pass; a change the recompute refuses (a later step
 * overflows float32: the engine names the step and the cell) is taken back,
 * so the working lesson is always one the engine accepts. Pure state: no SDL,
 * no files.
 *
 * Usage:
 *
 *     Edit e;
 *     char err[512];
 *     if (edit_init(&e, &lesson, err, sizeof err) != 0) { puts(err); return -1; }
 *     if (edit_set(&e, "W_Q[1][2]=3.5") != 0) puts(e.msg);  // "W_Q[1][2]: ..."
 *     edit_set_cell_text(&e, LESSON_MAT_X, 0, 1, "2");      // the window's typed number
 *     edit_undo(&e);
 *     const AttnTrace *t = e.trace;                          // the edited lesson's trace
 *     const Lesson *L = edit_lesson(&e);                     // ready for a View or a save
 *     edit_free(&e);
 *
 * Recompute: by default the Edit runs the engine itself and keeps the trace in
 * e.trace. A window sets e.recompute (and e.user) to its own function, which
 * rebuilds the View's traces from edit_lesson(&e) and returns 0, or -1 with a
 * message, leaving its previous traces untouched; e.trace is then NULL.
 *
 * Every function returns 0, or -1 with one line in e.msg ("X[0][1]: expected
 * a number, found \"abc\""), and then the working lesson is as it was.
 *
 * Texts: a narration text without a condition is about the lesson as loaded
 * (lessons/FORMAT.md, "When a text holds"). The working copy carries each
 * such text filled from the lesson as loaded and its trace, as plain text,
 * one per step it is shown on, so that after a change it still says what
 * it said of the numbers it was written for; texts with a condition keep
 * their placeholders and are judged against the numbers as they are.
 *
 * Ownership: the lesson given to edit_init is borrowed and must outlive the
 * Edit (it is "the lesson as loaded" that edit_revert returns to); the working
 * lesson, the history and e.trace are owned and released by edit_free.
 */
#ifndef EDIT_H
#define EDIT_H

#include <stddef.h>

#include "attn.h"
#include "lesson.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The mask as an editable matrix, beside LESSON_MAT_X .. LESSON_MAT_v_a. */
#define EDIT_MASK LESSON_MAT_COUNT

/* The temperature range: the divisor of the scores, as a multiple of √d_k. */
#define EDIT_SCALE_MIN_FACTOR 0.1
#define EDIT_SCALE_MAX_FACTOR 10.0
/* Steps of `<` and `>` per factor of 10. */
#define EDIT_SCALE_STEPS_PER_DECADE 20

/* The memory the history of changes may hold. An entry holds only what
 * changed (one number, a token's name, a row of X, the mask); past this
 * bound the oldest entries are dropped, never the newest. */
#define EDIT_HISTORY_MAX_BYTES ((size_t)64 << 20)

typedef struct EditEntry EditEntry;

typedef struct Edit {
    const Lesson *orig; /* borrowed: the lesson as loaded */
    Lesson work;        /* the lesson as edited; work.cfg points into its buffers */
    int owned;          /* work holds buffers of its own; until the first change it is
                         * *orig itself, shared, so that an unedited lesson is held once */
    Lesson texts;       /* only its summary and narration: the texts the working copy carries,
                         * those without a condition filled from the lesson as loaded (edit.c) */
    int have_texts;
    AttnTrace *trace; /* owned: work's trace, when recompute is NULL */
    int (*recompute)(void *user, char *err, size_t errlen);
    void *user;

    EditEntry *hist; /* (n_hist): [0, at) are applied, [at, n_hist) can be redone */
    int n_hist, cap_hist, at;
    size_t hist_bytes; /* the memory the history holds */
    size_t hist_max;   /* its bound (EDIT_HISTORY_MAX_BYTES): past it the oldest changes are forgotten */
    int forgotten;     /* changes forgotten so, since the caller last set it to 0 (the window says so) */
    int scrub_open;    /* the last entry is a scrub that further scrubs of its cell extend */
    char msg[640];     /* the last refusal, one line */
} Edit;

/* Takes the lesson and computes its trace; the working copy is made on the
 * first change. 0, or -1 with a message (the Edit then owns nothing). */
int edit_init(Edit *e, const Lesson *orig, char *err, size_t errlen);
/* Takes the lesson without computing anything, for a caller that builds the
 * trace itself from edit_lesson(e) (a View, which also checks the lesson)
 * and sets e.recompute before the first change. edit_lesson(e) keeps its
 * address when the working copy is made. 0, or -1 with a message. */
int edit_init_copy(Edit *e, const Lesson *orig, char *err, size_t errlen);
void edit_free(Edit *e);
/* The working lesson (never NULL for an initialised Edit). */
const Lesson *edit_lesson(const Edit *e);
/* 1 when the working lesson differs from the lesson as loaded. */
int edit_modified(const Edit *e);
/* Reruns the recompute on the working lesson as it is (after e.recompute was
 * set, for instance). 0, or -1 with e.msg. */
int edit_refresh(Edit *e);

/* ---- numbers ---- */

/* Sets cell (r, c) of matrix `mat` (LESSON_MAT_*, or EDIT_MASK with 0 or 1;
 * a bias is row 0, v_a column 0). scrub = 1 merges the change into the previous entry
 * when that was a scrub of the same cell, so that a drag undoes in one step;
 * edit_end_scrub closes it. */
int edit_set_cell(Edit *e, int mat, int r, int c, double value, int scrub);
void edit_end_scrub(Edit *e);
/* The same from text: a whole number as typed ("2", "-0.5", "1e-3"). */
int edit_set_cell_text(Edit *e, int mat, int r, int c, const char *text);
/* "NAME[i][j]=VALUE" or "NAME[i]=VALUE" (a vector, or a padding mask): the
 * headless --set. NAME is a matrix of lesson_matrix_name or "mask". */
int edit_set(Edit *e, const char *spec);
/* The current value of a cell, or NAN when the lesson has no such cell. */
double edit_cell(const Edit *e, int mat, int r, int c);
/* The shape of an editable matrix in the working lesson; -1 when the lesson
 * has none (no b_Q, no mask). */
int edit_shape(const Edit *e, int mat, int *rows, int *cols);
/* "W_Q", ..., "mask". */
const char *edit_matrix_name(int mat);

/* ---- the scale ---- */

/* Divides the scores by `divisor`, in [0.1·√d_k, 10·√d_k]. */
int edit_set_scale(Edit *e, double divisor);
/* `<` (dir -1) and `>` (dir +1): one step on a log scale of
 * EDIT_SCALE_STEPS_PER_DECADE steps per decade, stopping at √d_k, √d_model and
 * 1 on the way. */
int edit_step_scale(Edit *e, int dir);
/* The divisor now, and the range: [lo, hi]. */
double edit_scale(const Edit *e, double *lo, double *hi);

/* ---- the mask ---- */

/* Toggles whether query q may attend key k: a padding mask toggles key k for
 * every query; no mask or a causal mask becomes an explicit matrix first. */
int edit_toggle_mask(Edit *e, int q, int k);
/* none → causal → padding (every key visible) → none; an explicit matrix
 * goes to none. */
int edit_cycle_mask(Edit *e);

/* ---- tokens ---- */

/* side 0: the query tokens (`tokens`), side 1: the source tokens of
 * cross-attention. A new token's row of X (or Y) is row `at` of the matrix the
 * lesson's seed generates for the new token count (lessons/FORMAT.md,
 * "Generated matrices"); its mask entries follow the mask kind (causal:
 * causal; padding and explicit: 1, may attend). */
int edit_rename_token(Edit *e, int side, int i, const char *name);
int edit_add_token(Edit *e, int side, int at, const char *name);
int edit_remove_token(Edit *e, int side, int i);
/* Replaces the query tokens by the words of `words` (separated by spaces):
 * rows of tokens that stay keep their numbers, new ones come from the seed. */
int edit_set_tokens(Edit *e, const char *words);

/* ---- history ---- */

int edit_undo(Edit *e); /* -1 with e.msg when there is nothing to undo */
int edit_redo(Edit *e);
/* Back to the lesson as loaded, itself an entry that can be undone. */
int edit_revert(Edit *e);
/* The numbers, tokens, mask and scale of `from`, a lesson of the same sizes
 * and options (a lesson saved from this one: the window's recovery file), as
 * one change that can be undone; refused when the sizes differ. */
int edit_restore(Edit *e, const Lesson *from);
int edit_can_undo(const Edit *e);
int edit_can_redo(const Edit *e);

/* ---- saving ---- */

/* The longest id edit_saved_id makes: room is left for lesson_save_new's
 * "-2" .. "-999" when the name is taken, so that "-edited" is never cut. */
#define EDIT_SAVED_ID_MAX (LESSON_MAX_ID_BYTES - 4)
/* The id of a lesson saved from one whose id is orig: orig without what an
 * earlier save added ("-edited", "-edited-2"), then "-edited"; an id too
 * long for that keeps its start (cut where a word ends) and a hash of the
 * whole of orig: "a-long-lesson-…-9f3a61c2-edited". At most
 * EDIT_SAVED_ID_MAX bytes, written into out (len > EDIT_SAVED_ID_MAX). */
void edit_saved_id(const char *orig, char *out, size_t len);

/* The working lesson as a lesson of its own, ready for lesson_save_new: the
 * id of the lesson as loaded with "-edited" (edit_saved_id), edited_from naming it (when its
 * numbers were changed), its title and narration; a text that no longer fills
 * against the edited trace (its step is gone, an index is past the end) is
 * left out and counted in *dropped, so that `attnviz check` accepts the file.
 * 0, or -1 with err (out then owns nothing). */
int edit_saveable(const Edit *e, Lesson *out, int *dropped, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
