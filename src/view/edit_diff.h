/* edit_diff.h: two states of a lesson and the way between them, for the
 * edit history (edit.c). A Shape is a copy of the part of a lesson that token
 * and mask changes touch; a Diff holds only what differs between two states,
 * and moves a lesson either way. Pure data over the lesson; no Edit. */
#ifndef EDIT_DIFF_H
#define EDIT_DIFF_H

#include "lesson.h"

#include <stddef.h>

/* What token and mask changes touch. */
typedef struct Shape {
    int n_tokens, n_src;
    char **tokens, **src;
    float *X, *Y;
    AttnMaskKind mask_kind;
    unsigned char *mask;
} Shape;

/* Rows [at, at + n[0]) of a list before became rows [at, at + n[1]) after;
 * the rows before `at` and after those are the same both ways. */
typedef struct Rows {
    int at, n[2];
    int count[2];  /* rows in all, before and after */
    void *rows[2]; /* (n[s] × width) the changed rows of each side: floats, or strings (char *) */
} Rows;

/* What differs between two states of the lesson (DIFF). */
typedef struct Diff {
    Rows tokens, src;            /* char * rows */
    Rows mats[LESSON_MAT_COUNT]; /* float rows; count[0] == count[1] == 0 when the matrix is absent */
    int mask_differs;            /* then: */
    AttnMaskKind mask_kind[2];   /* before, after */
    unsigned char *mask[2];      /* (lesson_mask_bytes) before, after; NULL for none and causal */
    AttnScaleKind sk[2];
    float sv[2];
    size_t bytes; /* what the diff holds, for the history's bound */
} Diff;

/* Frees s and what it holds; NULL does nothing. */
void edit_shape_free(Shape *s);

/* The token-shaped part of a lesson, copied; NULL when memory runs out. */
Shape *edit_shape_capture(const Lesson *L);

/* out: L with the token-shaped part of s, borrowed from both (for edit_diff_make). */
void edit_with_shape(Lesson *out, const Lesson *L, const Shape *s);

/* Makes the lesson's token-shaped part a copy of s. -1 when memory runs out
 * (the lesson is then unchanged). */
int edit_shape_apply(Lesson *L, const Shape *s);

/* Frees d and what it holds; NULL does nothing. */
void edit_diff_free(Diff *d);

/* What differs from a to b: a's and b's token lists, matrices (of the same
 * widths: no edit changes d_model or the heads), mask and scale. NULL when
 * memory runs out. */
Diff *edit_diff_make(const Lesson *a, const Lesson *b);

/* Moves L, which is at side 1 - to of d, to side `to`. -1 when memory runs
 * out (L is then unchanged). */
int edit_diff_apply(Lesson *L, const Diff *d, int to);

#endif
