/* view_internal.h: what the files of src/view share and nothing outside
 * them uses: the table of what the view knows of each kind of step, the
 * functions its rows point to, and small helpers. */
#ifndef VIEW_INTERNAL_H
#define VIEW_INTERNAL_H

#include "narrate.h"
#include "view.h"

/* Writes a message into err (when not NULL), cut at a character with "…". */
void view_set_err(char *err, size_t errlen, const char *fmt, ...);

/* Appends to a fixed buffer, always NUL-terminated; returns the new
 * length, or len - 1 once the buffer is full (the text then ends in "…",
 * cut at a character, and nothing more is appended). */
size_t view_cat(char *buf, size_t len, size_t at, const char *fmt, ...);

/* Appends the decimal digits of n as Unicode subscripts (₀ is U+2080). */
size_t view_cat_subscript(char *buf, size_t len, size_t at, int n);

static inline int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* ---- what the view knows of each kind of step ---- */

typedef struct FormulaBuilder FormulaBuilder;
/* Writes step s's formula of dot attention, the part it computes highlighted
 * (col: in column notation). */
typedef void (*FormulaFn)(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
/* Appends to buf at `at` the lines that say how cell (r, c) of step s of t
 * was computed; returns the new length. */
typedef size_t (*ExplainFn)(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at);
/* Appends to buf at `at` what the narration written from step s says after
 * its first sentence; returns the new length. */
typedef size_t (*DescribeFn)(const View *v, const AttnTrace *t, const AttnStep *s, char *buf, size_t len, size_t at);

/* Which group of the timeline a kind of step joins. */
typedef enum KindPhase {
    PHASE_HEAD,        /* its head's (additive attention: weights and context) */
    PHASE_INPUTS,      /* inputs and weights */
    PHASE_PROJECTIONS, /* Q, K, V */
    PHASE_SCORING,     /* additive attention's scores (dot attention: its head's) */
    PHASE_OUTPUT,      /* concat and output */
} KindPhase;

/* The part of its formula a kind of step computes, highlighted in the bar. */
typedef enum FormulaPart {
    PART_NONE,
    PART_SCORES,  /* Q·Kᵀ; additive: e_ij */
    PART_SCALED,  /* ÷ the scale, with the divisor written out */
    PART_MASKED,  /* + M */
    PART_WEIGHTS, /* softmax(...) */
    PART_HEAD,    /* softmax(...) · V; additive: the context */
    PART_HIDDEN,  /* additive: tanh(...) */
    PART_CONCAT,  /* Concat(head₁, ...) */
    PART_OUTPUT,  /* · W_O + b_O */
} FormulaPart;

/* Whether a kind's cells show the mask (are drawn blocked where it blocks). */
typedef enum KindMask {
    MASK_NOT_SHOWN,
    MASK_SHOWN,
    MASK_SHOWN_AFTER_MASKING, /* when the lesson masks before this step (seed 003's order) */
} KindMask;

typedef struct ViewKind {
    double seconds;                             /* its animation; 0: shown at once */
    KindPhase phase;                            /* its group on the timeline */
    const char *text[LESSON_LANG_COUNT];        /* what it is, in the narration written from the step */
    const char *text_column[LESSON_LANG_COUNT]; /* the same in column notation where it differs; NULL: text */
    FormulaFn formula;                          /* its formula in dot attention; NULL: its name */
    FormulaPart part;                           /* what it computes of its formula */
    ExplainFn explain;                          /* how a cell was computed; NULL: its value alone */
    DescribeFn describe;                        /* what the narration written from it adds; NULL: nothing */
    KindMask mask;
} ViewKind;

/* The row of a kind (of the first kind when out of range). */
const ViewKind *view_kind(int kind);

/* What the rows point to: formulas (view_formula.c), explanations of a cell
 * and additions to the narration written from a step (view_explain.c). */
void view_formula_operand(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
void view_formula_projection(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
void view_formula_split(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
void view_formula_head(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
void view_formula_multihead(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
void view_formula_position(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
void view_formula_tile(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
size_t view_explain_product(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at);
size_t view_explain_split(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                          size_t at);
size_t view_explain_scores(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at);
size_t view_explain_scaled(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at);
size_t view_explain_masked(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at);
size_t view_explain_softmax(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at);
size_t view_explain_position(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at);
size_t view_explain_tile(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                         size_t at);
size_t view_explain_weighted_sum(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf,
                                 size_t len, size_t at);
size_t view_explain_concat(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at);
size_t view_explain_weight(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                           size_t at);
size_t view_explain_additive_hidden(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf,
                                    size_t len, size_t at);
size_t view_describe_kv_shared(const View *v, const AttnTrace *t, const AttnStep *s, char *buf, size_t len, size_t at);
size_t view_describe_largest_weights(const View *v, const AttnTrace *t, const AttnStep *s, char *buf, size_t len,
                                     size_t at);

/* ---- shared between the View's files ---- */

/* A step numbered by K/V head rather than query head: the keys and values
 * of grouped K/V heads (kv_heads), which several query heads read
 * (view_timeline.c). */
int view_is_kv_step(const AttnConfig *c, const AttnStep *s);

/* The state every new View starts in, its traces set (view.c). */
void view_start(View *v, const Lesson *lesson);
/* For additive lessons, the labels of the rows of `hidden`, owned (one
 * block); NULL otherwise, or when memory runs out (view.c). */
char **view_pair_labels(const Lesson *lesson);
/* Builds the single-head trace when a recompute in multi-head mode left it
 * stale. 0, or -1 (view.c). */
int view_ensure_single(View *v);
/* Writes the current step's formula into v->formula (view_formula.c). */
void view_update_formula(View *v);
/* Waits for the worker (asked to stop first when cancel); what
 * attn_trace_compute returned, its message in the worker, which stays for
 * view_poll to report (view_worker.c). */
int view_worker_join(View *v, int cancel);
/* Stops and joins the worker, and frees it (view_worker.c). */
void view_worker_free(View *v);
/* The worker's message, after view_worker_join returned non-zero. */
const char *view_worker_error(const View *v);

#endif
