/* view.h: the state of the classroom view, as plain data with no SDL.
 *
 * A View walks through the trace of a lesson one step at a time: which step
 * is current, how far its animation has run, which head is selected, the
 * language, the mode (multi-head, single-head or both side by side), the
 * theme, the text size, autoplay, and what the mouse hovers or selected.
 * Drawing (src/render) is a pure function of a View and a size, so the window
 * and the PNG export produce the same pixels for the same View.
 *
 * Usage:
 *
 *     View v;
 *     char err[256];
 *     if (view_init(&v, &lesson, err, sizeof err) != 0) { puts(err); return -1; }
 *     view_goto(&v, 5);            // step 5 of the current trace, t = 0
 *     view_advance(&v, 0.016);     // the clock: 16 ms of animation
 *     view_finish(&v);             // the step's final state
 *     printf("%s\n", view_formula(&v));
 *     char text[2048];
 *     view_narration(&v, text, sizeof text);
 *     view_free(&v);
 *
 * Ownership: the lesson is borrowed and must outlive the View; both traces
 * are owned by the View and released by view_free. Every index a function
 * takes is clamped into range; nothing here asserts on user input.
 *
 * Changes: read the fields freely, change them only through the functions
 * below (and view_input.h for keys and the mouse). Each change of anything a
 * frame shows gives v->revision a new value, unique in the process, so a
 * window redraws exactly when (revision, size) differs from its last frame,
 * also after the View was replaced by a reloaded lesson.
 *
 * Two traces: `trace` is the lesson as written (heads = cfg.heads), `single`
 * the same lesson with one head of width heads·d_k (and heads·d_v) on the same
 * X and weights, so that head 1 of `single` is ordinary scaled dot-product
 * attention. VIEW_MULTI and VIEW_COMPARE step through `trace`; VIEW_SINGLE
 * steps through `single`. Compare mode shows beside each step of `trace` the
 * equivalent step of `single` (view_compare_step).
 */
#ifndef VIEW_H
#define VIEW_H

#include <stddef.h>

#include "attn.h"
#include "lesson.h"
#include "narrate.h" /* NARRATE_MAX_STEP_TEXT: the size of a narration buffer */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ViewMode { VIEW_MULTI, VIEW_SINGLE, VIEW_COMPARE, VIEW_MODE_COUNT } ViewMode;
typedef enum ViewTheme { VIEW_THEME_LIGHT, VIEW_THEME_DARK, VIEW_THEME_PROJECTOR, VIEW_THEME_COUNT } ViewTheme;
/* How attention weights map to colours. The value itself never changes:
 * numbers in cells and the hover show the true weight in every scale. */
typedef enum ViewWeightScale {
    VIEW_WEIGHTS_UNIT, /* [0, 1]: viridis(w) */
    VIEW_WEIGHTS_ROW,  /* each row divided by its largest weight: viridis(w / max_j w) */
    VIEW_WEIGHTS_LOG,  /* log10 from 1e-4 to 1: viridis((log10(max(w, 1e-4)) + 4) / 4) */
    VIEW_WEIGHTS_COUNT
} ViewWeightScale;
/* The smallest weight the log scale tells apart from 0, and its decades. */
#define VIEW_WEIGHTS_LOG_MIN     1e-4f
#define VIEW_WEIGHTS_LOG_DECADES 4.0f
/* Row notation (the default, the seeds' code): one token per row, Q = X·W_Q,
 * softmax along rows. Column notation (seed 002's text, many lectures): one
 * token per column, Q = W_Q·X, softmax down columns. Column notation is a
 * display transform: every matrix is drawn transposed and every formula and
 * shape written for columns; the traces are the same. */
typedef enum ViewNotation { VIEW_NOTATION_ROW, VIEW_NOTATION_COLUMN, VIEW_NOTATION_COUNT } ViewNotation;
/* What the mouse (or a finger) does over the frame besides hovering: draw
 * ink (src/view/ink.h), light a spotlight around itself (the rest dimmed), or
 * show a laser pointer's dot. The window draws them. */
typedef enum ViewTool { VIEW_TOOL_NONE, VIEW_TOOL_INK, VIEW_TOOL_SPOTLIGHT, VIEW_TOOL_LASER } ViewTool;
/* What a frame is drawn for. The screen (the window) shows everything. A
 * frame for a file (paper: a PNG, the S key's) has nobody to hover, zoom or
 * press a key: its notes leave those out, and its status line the play state
 * and the help key. A slide also leaves out the status line, the timeline and
 * the overlays; a handout's figure the narration too (its caption says it). */
typedef enum ViewOutput {
    VIEW_OUTPUT_SCREEN,
    VIEW_OUTPUT_PAPER,
    VIEW_OUTPUT_SLIDE,
    VIEW_OUTPUT_FIGURE,
    VIEW_OUTPUT_COUNT
} ViewOutput;

#define VIEW_TEXT_SCALE_MIN 0.6f
#define VIEW_TEXT_SCALE_MAX 2.5f
#define VIEW_SPEED_MIN      0.125
#define VIEW_SPEED_MAX      8.0
#define VIEW_MAX_FORMULA    320
#define VIEW_MAX_NOTICE     512

typedef struct ViewWorker ViewWorker;

typedef struct View {
    const Lesson *lesson;    /* borrowed */
    AttnTrace *trace;        /* the lesson as written (multi-head), owned */
    AttnTrace *single;       /* one head of width heads·d_k on the same X and weights, owned; NULL when
                                its numbers overflow float32: single and compare mode are then disabled */
    char single_error[256];  /* why `single` is NULL, "" otherwise */
    unsigned long id;        /* new, unique in the process, whenever `trace` or `single` is replaced
                                (view_init, view_recompute, the single-head trace built when shown):
                                what render's caches and the last frame's hit boxes key on, since a
                                new trace may reuse a freed one's address */
    unsigned long layout_id; /* like id, but kept by a recompute whose trace has the same steps of the
                                same shapes: what the layout decided once per lesson keys on, so that an
                                edited number neither moves the panels nor costs the decision again */
    unsigned long revision;  /* new, unique in the process, after every visible change (see above) */
    ViewWorker *worker;      /* the thread computing `trace` (view_init_background), owned; NULL when none */
    int ready_seen;          /* attn_trace_ready(trace) when view_poll last looked */

    int step;     /* index into view_trace(v)->steps */
    double t;     /* seconds into the current step's animation, in [0, duration] */
    double dwell; /* seconds spent on a finished step while autoplaying */
    int head;     /* 1-based selected head of `trace` */
    LessonLang lang;
    ViewMode mode;
    ViewTheme theme;
    ViewWeightScale weight_scale;
    ViewNotation notation;
    float text_scale; /* 1 = the default size for the frame height */
    double speed;     /* animation speed factor, 1 = about a second per step */
    int playing;      /* autoplay: move on after a finished step has been shown */
    int rewinding;    /* ←: the step's animation runs backwards to t = 0, then the previous
                       * step is shown in its final state */

    /* Mouse: the hovered cell, in the coordinates of the step's own matrix
     * (row, column of step->data, whatever orientation it is drawn in). */
    const AttnTrace *hover_trace; /* the trace hover_step indexes (compare mode has two), or NULL */
    int hover_step;               /* -1: nothing hovered */
    int hover_row, hover_col;
    /* The whole text of a label drawn shortened ("…") under the mouse, or
     * NULL: a token, a title; borrowed from the lesson or the view. */
    const char *hover_label;
    /* A clicked token: its row (query) and column (key) are highlighted in
     * every matrix whose axis is a token axis. -1: none. */
    int sel_query, sel_key;
    /* Zoom and pan of the result matrix (wheel and drag); zoom 1 = fit. */
    float zoom;
    float pan_x, pan_y; /* in cells, the top-left cell shown when zoomed */
    int dragging;       /* the left button is down on a zoomed result matrix */
    int drag_x, drag_y; /* in pixels, where the drag last moved the matrix */

    int unsaved;           /* the window holds edits not saved (set by the window): Esc and Q then ask first */
    int fullscreen;        /* the window is fullscreen (set by the window): Esc then leaves fullscreen */
    int black;             /* B: the window shows a black screen; autoplay waits meanwhile */
    int black_was_playing; /* autoplay was on when the screen went black: it resumes after */
    ViewTool tool;         /* I ink, G spotlight, Z laser: what the pointer does */
    int big_text;          /* U, --big-text: the projector's big text: the step's caption instead of its
                            * narration, the room to the matrices, no text under 1/30 of the height */
    int show_help;         /* the help overlay */
    int hide_heads;        /* focus: the all-heads panel hidden (A) */
    ViewOutput output;     /* what the frames are drawn for: the screen (the default), paper, a slide, a figure */
    /* A short message (frame saved, reload failed): notice_what is its entry
     * of the string table (a ViewString), whose one %s is notice_detail (a
     * path, the loader's message). It is put into words when drawn, in the
     * language of the moment (view_notice_text). */
    int notice_what;
    char notice_detail[VIEW_MAX_NOTICE];
    double notice_left; /* seconds the notice stays on screen; 0: no notice */
    int notice_is_error;

    /* After an edit (view_recompute): the current step's numbers before it,
     * (rows, cols) of step edit_step, owned; NULL once the view moves to
     * another step. The render animates from them for VIEW_EDIT_SECONDS and
     * then marks the cells that changed. */
    float *edit_before;
    int edit_step;
    int edit_rows, edit_cols; /* the shape edit_before holds */
    /* Edit mode (src/view/editor.h): the cell cursor on an editable matrix
     * of the current step or its operands, and what is being typed. */
    int edit_mode;
    int cur_mat;          /* LESSON_MAT_* or EDIT_MASK (src/view/edit.h) */
    int cur_row, cur_col; /* in that matrix's own coordinates (the mask: query, key) */
    int typing;           /* EDITOR_TYPING_*: 0 nothing typed yet */
    char typed[LESSON_MAX_TOKEN_BYTES + 1];

    int edited;       /* the lesson's numbers are not the ones it was loaded with (set by the editor): narration
                       * without a condition is then shown as being about the lesson before the change */
    int single_stale; /* `single` predates the last recompute (multi-head mode): rebuilt when shown */
    double edit_t;    /* seconds since the edit */

    char **pair_labels; /* additive: (n_q·n_k) "x_i ; y_j" token pairs, the rows of `hidden`; owned, or NULL */
    char formula[VIEW_MAX_FORMULA];       /* the current step's formula (view_formula) */
    int formula_hl_start, formula_hl_end; /* byte range of formula[] the step computes */
} View;

/* Builds both traces of the lesson. 0, or -1 with a message in err (the View
 * is then zeroed and owns nothing) when the lesson's own trace cannot be
 * built; when only the single-head trace cannot, the View opens without it
 * (single == NULL, single_error says why) and stays in multi-head mode. Starts at step 0, head 1, English,
 * multi-head mode, light theme, speed 1, paused. */
int view_init(View *v, const Lesson *lesson, char *err, size_t errlen);
/* view_init for a window that shows its first frame before a large trace is
 * computed: the lesson's trace is laid out (a config the engine refuses is
 * refused here, -1 with the message) and, when large, computed on a worker
 * thread, from a copy of the lesson, that publishes its steps phase by phase;
 * the single-head trace waits until a mode shows it (single_stale).
 * view_recompute waits for the worker to finish, view_free stops it
 * (attn_trace_cancel). Draw only the steps view_step_ready allows. */
int view_init_background(View *v, const Lesson *lesson, char *err, size_t errlen);
/* Joins the worker when it has finished, and gives the view a new revision
 * when more steps became ready. Call it from the thread that owns the View,
 * before drawing. 0, or -1 with the message ("path: scores_1[0][2] is
 * +inf: ...") when the worker found the lesson's numbers overflow. */
int view_poll(View *v, char *err, size_t errlen);
/* 1 while the worker computes the trace. */
int view_preparing(const View *v);
/* 1 when step `step` of trace (one of the View's) can be drawn and
 * narrated: its numbers, and those of every step before it, are computed;
 * for a lesson with texts of its own (which may quote any step) every step. */
int view_step_ready(const View *v, const AttnTrace *trace, int step);
void view_free(View *v);

/* The config of the single-head trace: the lesson's, with one head of width
 * heads·d_k (and heads·d_v) for dot attention; additive attention as is.
 * 0, or -1 when the lesson has no such one-head form (grouped K/V heads,
 * kv_heads: its W_K and W_V are narrower than W_Q); *one is then unset. */
int view_single_config(const AttnConfig *cfg, AttnConfig *one);
/* Rebuilds both traces from the lesson, which the caller has changed in
 * place (src/view/edit.h), keeping the step (the same name, else the same
 * kind and head), the head and the mode; the step is shown in its final
 * state, and its numbers from before the change are kept in edit_before for
 * the animation. In multi-head mode the single-head trace is rebuilt only
 * when a mode that shows it is chosen (single_stale). 0, or -1 with the
 * engine's message (an overflow names the step and cell) and the View as it
 * was. */
int view_recompute(View *v, char *err, size_t errlen);
/* Marks a change made to the fields edit mode (editor.h) keeps in the View,
 * so that the window draws it. */
void view_touch(View *v);
/* How far the current step's change animation has run, in [0, 1]; 1 when
 * there is none. */
double view_edit_progress(const View *v);
#define VIEW_EDIT_SECONDS 0.6

/* The trace the current mode steps through. */
const AttnTrace *view_trace(const View *v);
/* The current step (never NULL for an initialised View). */
const AttnStep *view_current(const View *v);
int view_step_count(const View *v);
/* Seconds the step animates for at speed 1; 0 for steps shown without
 * animation (inputs, weights, biases). */
double view_step_duration(const View *v, int step);
/* The animation's progress in [0, 1]: 1 for the final state (and for steps
 * without animation). */
double view_progress(const View *v);
/* 1 when the clock has something to do (an animation running, autoplay on,
 * a notice fading): the window then redraws every frame, else it waits. */
int view_is_busy(const View *v);
/* 1 when the last step is shown in its final state (and, when playing, has
 * been shown for its dwell time): `--quit-at-end` ends there. */
int view_at_end(const View *v);

void view_goto(View *v, int step); /* jump to a step, t = 0 */
void view_finish(View *v);         /* t = duration: the step's final state */
/* Next: while a step animates, finish it; otherwise go to the next step (t = 0)
 * so that its animation plays. Clamps at the last step. */
void view_next(View *v);
/* Previous: jump to the previous step's final state (the state is always
 * exactly that of the trace). Clamps at step 0. */
void view_prev(View *v); /* ←: rewinds the step's animation, then shows the previous
                          * step's final state; at t = 0, or pressed again while
                          * rewinding, goes there at once. Stops autoplay. */
void view_home(View *v); /* step 0 */
void view_end(View *v);  /* the last step, final state */
/* The clock: runs the animation dt seconds of wall time (times speed), fades
 * the notice, and when playing moves to the next step after a dwell. */
void view_advance(View *v, double dt);
/* Seconds a finished step stays on screen during autoplay, at speed 1. */
#define VIEW_DWELL_SECONDS 1.0

/* Heads: choose head h (clamped to 1..heads). On a per-head step of the
 * multi-head trace this moves to the same kind of step of head h. */
void view_set_head(View *v, int head);
void view_next_head(View *v);       /* Tab: h+1, wrapping */
int view_head_count(const View *v); /* heads of `trace` */
/* The heads a View of this lesson has (view_head_count), without building one. */
int view_lesson_head_count(const Lesson *lesson);
/* Mode: keeps the equivalent step (same name, or same kind of the selected head).
 * Without a single-head trace, single and compare mode are refused with a
 * notice; so is compare mode for a lesson of one head (view_can_compare). */
void view_set_mode(View *v, ViewMode mode);
/* Whether compare mode has two different pipelines to show: the lesson has
 * more than one head. */
int view_can_compare(const View *v);
/* 1 with the line a command prints when asked for compare mode of a lesson
 * (at path) that cannot compare, in msg; else 0. */
int view_compare_refused(const View *v, const char *path, char *msg, size_t len);
void view_toggle_single(View *v);  /* M: single ↔ multi (compare goes to single) */
void view_toggle_compare(View *v); /* C: compare ↔ multi */
/* The step of `single` equivalent to `step` of `trace` (compare mode's left side); -1 without `single`. */
int view_compare_step(const View *v, int step);
/* The step of `to` equivalent to step `step` of `from`, or -1. */
int view_map_step(const AttnTrace *from, int step, const AttnTrace *to, int head);

void view_set_speed(View *v, double speed);     /* clamped to [VIEW_SPEED_MIN, VIEW_SPEED_MAX] */
void view_set_text_scale(View *v, float scale); /* clamped */
void view_set_lang(View *v, LessonLang lang);
void view_toggle_lang(View *v);
/* Focus mode: hides or shows the all-heads panel of the multi-head view. */
void view_toggle_heads(View *v);
void view_set_theme(View *v, ViewTheme theme);
void view_next_theme(View *v);
/* Autoplay on or off. Playing starts from step 0 when the last step is
 * shown, and runs forwards: a rewind in progress jumps to the step's end. */
void view_set_playing(View *v, int playing);
void view_toggle_play(View *v); /* P */
void view_set_help(View *v, int shown);
/* What the window tells the View: it holds edits not yet saved; it is fullscreen. */
void view_set_unsaved(View *v, int unsaved);
void view_set_fullscreen(View *v, int fullscreen);
/* B (or a clicker's "blank screen" button): the screen goes black, or comes
 * back as it was; autoplay pauses while it is black and resumes after. */
void view_set_black(View *v, int black);
/* Big text for the back row (U, --big-text): on or off. */
void view_set_big_text(View *v, int on);
/* What big text shows instead of the narration: the step's caption, the
 * first sentence of its narration, shortened when long (src/view/caption.h).
 * Returns its length. */
size_t view_big_text_caption(const View *v, char *buf, size_t len);
/* The smallest text big text draws in a frame `height` pixels high: 1/30 of it. */
int view_big_text_min(int height);
/* The pointer's tool: the same tool again turns it off. */
void view_toggle_tool(View *v, ViewTool tool);
/* 1 while the unsaved-changes notice is on screen: a second Q (or close) then quits. */
int view_quit_confirmed(const View *v);
/* The hovered cell: step `step` of trace (cell row, col), or none with trace
 * NULL or step < 0. */
/* The whole text of the shortened label under the mouse (borrowed), or NULL. */
void view_set_hover_label(View *v, const char *label);
void view_set_hover(View *v, const AttnTrace *trace, int step, int row, int col);
/* Zoom factor (clamped to 1..VIEW_ZOOM_MAX) and the top-left cell shown
 * (clamped to ≥ 0; 0, 0 at zoom 1). */
void view_set_zoom(View *v, float zoom, float pan_x, float pan_y);
#define VIEW_ZOOM_MAX 64.0f
void view_set_weight_scale(View *v, ViewWeightScale scale); /* out of range: unit */
void view_next_weight_scale(View *v);                       /* unit → row → log → unit */
void view_set_notation(View *v, ViewNotation notation);     /* out of range: row */
void view_toggle_notation(View *v);                         /* row ↔ column */
/* The colour-map position in [0, 1] of weight w in the view's scale, where
 * row_max is the largest weight of w's row (used by the row scale only). */
float view_weight_position(ViewWeightScale scale, float w, float row_max);
/* The weight scale as the legend names it, in v's language: "linear 0–1",
 * "÷ row max" ("÷ column max" in column notation, where a query's weights
 * stand in a column), "log₁₀"; and the row scale's top: "row max" or
 * "column max". */
const char *view_weight_scale_text(const View *v);
const char *view_weight_scale_top(const View *v);
/* Names as the command line spells them ("unit", "row", "log"; "row",
 * "column"), and back (-1 for an unknown name). */
const char *view_weight_scale_name(ViewWeightScale scale);
int view_weight_scale_from_name(const char *name);
const char *view_notation_name(ViewNotation notation);
int view_notation_from_name(const char *name);

/* Steps as a person counts them: the first step is 1 (the window, `--step`,
 * exported file names and captions); trace indices stay 0-based. */
static inline int view_step_ordinal(int index)
{
    return index + 1;
}
static inline int view_step_index(int ordinal)
{
    return ordinal - 1;
}

/* The title the frame shows: the lesson's, or in the single-head mode of a
 * lesson with several heads (whose title describes its heads) one that says
 * what is on screen: one head of width h·d_k on the lesson's input and weights. */
void view_title(const View *v, char *buf, size_t len);
/* 1 when the lesson's own texts (narration, intro, summary, title) describe
 * `trace`: always for the lesson's trace, and for the single-head trace only
 * when it is the same computation (one head, or additive attention). */
int view_lesson_texts_apply(const View *v, const AttnTrace *trace);
/* Click a token: query index q and/or key index k (-1: none). Clicking the
 * selected token again clears the selection. */
void view_select_token(View *v, int q, int k);
/* Shows a message for a few seconds (is_error: until the next one, styled as an error). */
/* what: a ViewString with one %s, which detail fills (a path, an error from
 * a lower layer; it stays as given). */
void view_set_notice(View *v, int what, const char *detail, int is_error);
/* The notice in v->lang, into buf; returns its length, 0 when there is none. */
size_t view_notice_text(const View *v, char *buf, size_t len);
/* What the S key saves: a copy of v without the transient notice (a shallow
 * copy borrowing v's traces and lesson: never view_free it). */
void view_for_saving(const View *v, View *out);

/* ---- names, as the command line, file names and index.json spell them ----
 * (the languages': lesson_lang_names, lesson.h) */

extern const char *const view_mode_names[VIEW_MODE_COUNT];            /* "multi", "single", "compare" */
extern const char *const view_theme_names[VIEW_THEME_COUNT];          /* "light", "dark", "projector" */
extern const char *const view_weight_scale_names[VIEW_WEIGHTS_COUNT]; /* "unit", "row", "log" */
extern const char *const view_notation_names[VIEW_NOTATION_COUNT];    /* "row", "column" */
/* The index of name in names[count], or -1. */
int view_name_index(const char *const *names, int count, const char *name);

/* The UTF-8 formula of the current step, e.g. "softmax(Q·Kᵀ / √d_k) · V";
 * the part this step computes is formula[start, end) (view_formula_highlight). */
const char *view_formula(const View *v);
void view_formula_highlight(const View *v, int *start, int *end);

/* The narration of the current step in v->lang with its placeholders filled;
 * when the lesson has none (or its text cannot be filled from this trace),
 * or its texts do not describe the trace on screen (view_lesson_texts_apply:
 * the single-head view of a lesson with several heads), a description
 * written from the step itself: its shape as drawn, what it is, and for
 * weights each query's largest weight. In column notation a lesson's text is
 * preceded by a line saying it counts in rows. A text whose condition
 * ("when") does not hold for the numbers is not shown (the description is,
 * saying so); a text without one is shown under "about the lesson before its
 * numbers were changed" once they have been (v->edited, or a lesson saved
 * with edited_from). A buffer of NARRATE_MAX_STEP_TEXT bytes holds any
 * narration `attnviz check` accepts; a smaller one gets it cut at a
 * character boundary, ending in "…". Returns 0, or -1 when no text of the
 * lesson is shown (buf holds the description). */
int view_narration(const View *v, char *buf, size_t len);
/* The same for any step of any of the View's traces. In compare mode,
 * view_narration gives each pane's text under the pane's caption. */
int view_step_narration(const View *v, const AttnTrace *trace, int step, char *buf, size_t len);
/* Compare mode's caption of a pane: the single head (multi 0) or the
 * lesson's heads (1): "single head (h = 1, d_k = 4)". */
void view_compare_caption(const View *v, int multi, char *buf, size_t len);

/* How cell (r, c) of step `step` of `trace` was computed, with the actual
 * numbers, one line per '\n': "scores₁[我, 喜欢] = Q₁[我]·K₁[喜欢] = 1·5 + 2·6 = 17".
 * Returns 0, or -1 for an index out of range. */
int view_explain_cell(const View *v, const AttnTrace *trace, int step, int r, int c, char *buf, size_t len);
/* Cell (r, c) of a step as a person reads it, the way the hover names it:
 * its labels, or its numbers from 1 as drawn, in the notation's order:
 * "X[喜欢, 3]", "W_Q[2, 4]"; "" when out of range. */
void view_cell_name(const View *v, const AttnTrace *trace, int step, int r, int c, char *buf, size_t len);

/* Display name of a step with subscript head digits: "Q₁", "weights₂", "concat". */
void view_step_title(const AttnStep *step, char *buf, size_t len);
/* Token labels of a step's rows and columns, or NULL for a feature axis. */
const char *const *view_row_labels(const View *v, const AttnTrace *trace, const AttnStep *step);
const char *const *view_col_labels(const View *v, const AttnTrace *trace, const AttnStep *step);
/* 1 when cell (r, c) of the step is blocked by the lesson's mask (shown as −∞). */
int view_cell_blocked(const View *v, const AttnStep *step, int r, int c);
/* out[i] = view_cell_blocked(v, step, r, c0 + i) for i < n: a row's at once. */
void view_row_blocked(const View *v, const AttnStep *step, int r, int c0, int n, unsigned char *out);

/* Phases of the timeline: inputs, projections, one per head, concat & output. */
int view_phase(const AttnTrace *trace, int step); /* a small id; equal ids are one group */
void view_phase_label(const View *v, const AttnTrace *trace, int step, char *buf, size_t len);

/* Every text the window shows that is not the lesson's own or mathematics:
 * one table, each entry in every language. An entry that is a printf format
 * has the same conversions, in the same order, in every language. */
typedef enum ViewString {
    VS_STEP,
    VS_OF,
    VS_HEAD,
    VS_MODE_MULTI,
    VS_MODE_SINGLE,
    VS_MODE_COMPARE,
    VS_PLAYING,
    VS_PAUSED,
    VS_REWINDING,
    VS_SPEED,
    VS_PHASE_INPUTS,
    VS_PHASE_PROJ,
    VS_PHASE_HEAD,
    VS_PHASE_OUT,
    VS_PHASE_SCORE,
    VS_PHASE_ATTEND,
    VS_ROW_SUM,
    VS_BLOCKED,
    VS_ALL_HEADS,
    VS_HELP_TITLE,
    VS_HELP_MOUSE,
    VS_HINT,
    VS_SCALE_BY,
    VS_SPLIT_INTO,
    VS_CONCAT_HEADS,
    VS_EXP_PHASE,
    VS_NORM_PHASE,
    VS_NO_NARRATION,
    VS_WEIGHTS_UNIT,
    VS_WEIGHTS_ROW,
    VS_WEIGHTS_LOG,
    VS_ROW_MAX,
    VS_WEIGHTS_COLUMN,
    VS_COLUMN_MAX,
    VS_NOTATION_ROW,
    VS_NOTATION_COLUMN,
    VS_SINGLE_LESSON_TITLE,
    VS_TEXT_IN_ROW_NOTATION,
    VS_EDIT_NOTHING,
    VS_EDIT_TOKENS_WHERE,
    VS_EDIT_MODE,
    VS_EDIT_HINT,
    VS_EDIT_HINT_MASK,
    VS_EDIT_HINT_TOKENS,
    VS_SAVED_AS,
    VS_NOTICE_REFUSED,
    VS_NOTICE_MASK_NONE,
    VS_NOTICE_MASK_CAUSAL,
    VS_NOTICE_MASK_PADDING,
    VS_TITLE_EDITED,
    VS_SAVED_DROPPED,
    VS_ABOUT_ORIGINAL,
    VS_TEXT_NO_LONGER,
    VS_TEXT_NO_LONGER_BECAUSE, /* %s: the claim that no longer holds (narrate_when_claim) */
    VS_CLAIM_ROW_MAX,          /* %s: the query, the key the text names, the keys that have its largest weight now */
    VS_CLAIM_TOKEN,            /* %d: the token's number from 1; %s: the token the text names, the token now */
    VS_NOTICE_HISTORY_FULL,    /* %s: how many of the oldest changes can no longer be undone */
    /* the notices: one %s each */
    VS_NOTICE_RELOAD_FAILED,
    VS_NOTICE_SAVED,
    VS_NOTICE_SAVE_FAILED,
    VS_NOTICE_RELOADED,
    VS_NOTICE_SINGLE_UNAVAILABLE,
    VS_NOTICE_COMPARE_ONE_HEAD,
    /* compare mode's panes: %d d_k; %d heads, %d d_k; between a pane's name and its text */
    VS_COMPARE_SINGLE,
    VS_COMPARE_MULTI,
    VS_PANE_SEP,
    /* the operator between a masked step's operands and its result */
    VS_OP_MASK,
    /* the default narration of a step: its title, rows, cols, kind text */
    VS_DEFAULT_NARRATION,
    /* the hovered cell's explanation (view_explain_cell) */
    VS_EXPLAIN_MORE_TERMS,
    VS_EXPLAIN_SPLIT_COLUMN,
    VS_EXPLAIN_ADDITIVE_ROW,
    VS_EXPLAIN_MASKED_BLOCKED,
    VS_EXPLAIN_MASKED_KEPT,
    VS_EXPLAIN_MASKED_KEPT_RAW, /* the same, masked before the scaling (seed 003's order) */
    VS_EXPLAIN_ROW_BLOCKED,
    VS_EXPLAIN_WEIGHT_COLUMN,
    VS_EXPLAIN_SPLIT_ROW,
    VS_EXPLAIN_WEIGHT_ROW,
    /* the same two for W_K and W_V of grouped K/V heads (kv_heads), whose columns are K/V heads' */
    VS_EXPLAIN_WEIGHT_KV_COLUMN,
    VS_EXPLAIN_WEIGHT_KV_ROW,
    /* grouped K/V heads: which query heads read a K/V head's keys or values */
    VS_KV_SHARED,
    /* a token in running text: bare, or 「喜欢」 in Chinese, where a bare 我
     * would read as part of the sentence; then a list of tokens */
    VS_TOKEN,
    /* {row_max_token} of a row whose every key is masked */
    VS_ROW_SEES_NOTHING,
    /* {row_max_token} of a row whose keys all share its largest weight */
    VS_ROW_UNIFORM,
    VS_TOKEN_LIST_SEP,
    /* the narration written from a step (the tokens, the largest weights) */
    VS_TOKEN_NEXT,
    VS_TOKENS_MORE,
    VS_LARGEST_WEIGHTS,
    VS_LARGEST_WEIGHT,  /* %s: the query, the keys tied for its largest weight, the weight */
    VS_LARGEST_UNIFORM, /* %s: the query, the weight every key gets */
    VS_LIST_SEP,
    VS_LIST_CUT,
    VS_FULL_STOP,
    /* under a panel whose cells are too small for their numbers */
    VS_NUMBERS_HIDDEN,
    VS_NUMBERS_HIDDEN_PAPER,
    VS_RESULT_ALONE,
    VS_RESULT_ALONE_PAPER,
    /* a step whose numbers are still being computed: its 1-based number */
    VS_PREPARING,
    VS_NOTICE_UNSAVED,        /* Esc or Q with unsaved edits: Q again quits */
    VS_NOTICE_UNSAVED_CLOSE,  /* the window closed with unsaved edits: closing again quits */
    VS_NOTICE_RECOVERY_OFFER, /* %s: the recovery file */
    VS_NOTICE_RECOVERED,      /* %s: the recovery file */
    VS_NOTICE_RECOVERY_DISCARDED,
    VS_NOTICE_RECOVERY_FAILED,  /* %s: why the edits could not be kept on disk */
    VS_NOTICE_RECOVERY_REFUSED, /* %s: why the recovery file cannot be restored */
    VS_NOTICE_INK,
    VS_NOTICE_SPOTLIGHT,
    VS_NOTICE_LASER,
    VS_NOTICE_TOOL_OFF,
    VS_NOTICE_TEXT_SIZE, /* %s: the text's size, "125%" */
    VS_STRING_COUNT
} ViewString;
const char *view_string(ViewString id, LessonLang lang);
/* What a kind of step is, one phrase per language, as the narration written
 * from a step says it in that notation ("" for no kind). */
const char *view_kind_text(AttnStepKind kind, ViewNotation notation, LessonLang lang);

#ifdef __cplusplus
}
#endif
#endif
