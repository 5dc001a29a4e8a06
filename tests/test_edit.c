/* test_edit.c: the edit model (src/view/edit.h) without a display: every
 * edit followed by its recompute gives the trace the engine gives for the
 * edited config; undo, redo and the return to the lesson as loaded; mask
 * toggles and kinds; tokens added, removed, renamed and replaced; the scale;
 * every kind of refused edit; and a View following the edits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h> /* mallinfo2: the heap in use */
#endif

#include <cmocka.h>

#include "attn.h"
#include "edit.h"
#include "editor.h"
#include "lesson.h"
#include "narrate.h"
#include "test_trace.h"
#include "test_util.h"
#include "view.h"

/* Two heads, biases, W_O given by the seed, no mask. */
static const char *LESSON_DOT = "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-edit-dot\","
                                " \"title\": {\"en\": \"Edit test\"},"
                                " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 4, \"heads\": 2, \"seed\": 3,"
                                " \"b_Q\": [0.1, 0.2, 0.3, 0.4], \"b_K\": [0, 0, 0, 0.5], \"b_V\": [1, 0, 0, 0],"
                                " \"b_O\": [0, 0, 0, 0.25]}";

/* Cross-attention with a padding mask. */
static const char *LESSON_CROSS =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-edit-cross\", \"title\": {\"en\": \"Cross\"},"
    " \"tokens\": [\"a\", \"b\"], \"source_tokens\": [\"x\", \"y\", \"z\"], \"d_model\": 2, \"seed\": 9,"
    " \"Y\": [[1, 0], [0, 1], [1, 1]], \"mask\": {\"padding\": [1, 1, 0]}}";

/* Additive attention. */
static const char *LESSON_ADDITIVE =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-edit-additive\", \"title\": {\"en\": \"Additive\"},"
    " \"attention\": \"additive\", \"tokens\": [\"a\", \"b\", \"c\"], \"d_x\": 2, \"seed\": 4,"
    " \"W_a\": [[1, 0], [0, 1], [0.5, 0.5], [-1, 1]], \"b_a\": [0.1, -0.1], \"v_a\": [1, -1]}";

/* Causal, X given, one head. */
static const char *LESSON_CAUSAL =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-edit-causal\", \"title\": {\"en\": \"Causal\"},"
    " \"tokens\": [\"a\", \"b\", \"c\"], \"d_model\": 2, \"seed\": 5, \"mask\": \"causal\","
    " \"X\": [[1, 0], [0, 1], [1, 1]]}";

static void parse(Lesson *L, const char *json)
{
    LessonError le;
    if (lesson_parse(L, json, strlen(json), "inline.json", &le) != 0) fail_msg("lesson: %s", le.msg);
}

/* The engine's own trace of a lesson. */
static AttnTrace *engine(const Lesson *L)
{
    char err[512];
    AttnTrace *t = attn_trace_create(&L->cfg, err, sizeof err);
    if (!t) fail_msg("engine: %s", err);
    return t;
}

static void assert_edit_matches(const Edit *e, const Lesson *expected)
{
    AttnTrace *t = engine(expected);
    assert_traces_identical("edit against the engine", e->trace, t);
    attn_trace_destroy(t);
}

/* Every matrix the lesson has, cell (last row, last column) set: the edit's
 * trace equals the engine's trace of a copy changed by hand. */
static void every_matrix(const char *json)
{
    Lesson L;
    parse(&L, json);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    int edited = 0;
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        int rows, cols;
        if (edit_shape(&e, m, &rows, &cols) != 0) continue;
        if (edit_set_cell(&e, m, rows - 1, cols - 1, 0.75, 0) != 0) fail_msg("%s: %s", lesson_matrix_name(m), e.msg);
        Lesson ref;
        assert_int_equal(lesson_copy(&ref, &L), 0);
        for (int k = 0; k <= m; k++) {
            int r2, c2;
            float *p = lesson_matrix(&ref, k, &r2, &c2);
            if (p) p[(size_t)r2 * (size_t)c2 - 1] = 0.75f;
        }
        assert_edit_matches(&e, &ref);
        lesson_free(&ref);
        edited++;
    }
    assert_true(edited >= 4);
    assert_true(edit_modified(&e));
    /* all the way back */
    while (edit_can_undo(&e)) assert_int_equal(edit_undo(&e), 0);
    assert_false(edit_modified(&e));
    assert_edit_matches(&e, &L);
    edit_free(&e);
    lesson_free(&L);
}

static void test_every_matrix_dot(void **state)
{
    (void)state;
    every_matrix(LESSON_DOT);
}

static void test_every_matrix_cross(void **state)
{
    (void)state;
    every_matrix(LESSON_CROSS);
}

static void test_every_matrix_additive(void **state)
{
    (void)state;
    every_matrix(LESSON_ADDITIVE);
}

/* An unedited lesson is held once: the working lesson shares the loaded
 * lesson's buffers until the first change, which copies them at the same
 * address and leaves the loaded lesson as it was; a refused change copies
 * nothing. */
static void test_copy_on_first_change(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    const Lesson *W = edit_lesson(&e);
    assert_ptr_equal(W->X, L.X);
    assert_ptr_equal(W->cfg.W_Q, L.W_Q);
    assert_int_equal(edit_set(&e, "X[0][9]=1"), -1);
    assert_ptr_equal(edit_lesson(&e)->X, L.X);
    assert_int_equal(edit_revert(&e), -1);
    assert_ptr_equal(edit_lesson(&e)->X, L.X);
    float x01 = L.X[1];
    assert_int_equal(edit_set(&e, "X[0][1]=2.5"), 0);
    assert_ptr_equal(edit_lesson(&e), W);
    assert_ptr_not_equal(W->X, L.X);
    assert_ptr_equal(W->cfg.X, W->X);
    assert_true(W->X[1] == 2.5f);
    assert_true(L.X[1] == x01);
    assert_int_equal(edit_undo(&e), 0);
    assert_true(W->X[1] == x01);
    assert_false(edit_modified(&e));
    edit_free(&e);
    assert_true(L.X[1] == x01);
    lesson_free(&L);
}

static void test_undo_redo(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_undo(&e), -1);
    assert_string_equal(e.msg, "nothing to undo");
    assert_int_equal(edit_set(&e, "X[0][1]=2.5"), 0);
    assert_int_equal(edit_set(&e, "W_Q[3][2]=-1"), 0);
    assert_int_equal(edit_set(&e, "b_O[3]=7"), 0);
    Lesson three;
    assert_int_equal(lesson_copy(&three, edit_lesson(&e)), 0);
    assert_true(edit_cell(&e, LESSON_MAT_X, 0, 1) == 2.5);
    assert_int_equal(edit_undo(&e), 0);
    assert_int_equal(edit_undo(&e), 0);
    assert_true(edit_cell(&e, LESSON_MAT_W_Q, 3, 2) == (double)L.W_Q[3 * 4 + 2]);
    assert_true(edit_cell(&e, LESSON_MAT_X, 0, 1) == 2.5);
    assert_int_equal(edit_redo(&e), 0);
    assert_int_equal(edit_redo(&e), 0);
    assert_int_equal(edit_redo(&e), -1);
    assert_edit_matches(&e, &three);
    /* a new change after an undo drops what could be redone */
    assert_int_equal(edit_undo(&e), 0);
    assert_int_equal(edit_set(&e, "b_Q[0]=3"), 0);
    assert_false(edit_can_redo(&e));
    /* the generated W_Q, once edited, is no longer the seed's */
    assert_false(edit_lesson(&e)->generated & (1u << LESSON_MAT_W_Q));
    assert_true(L.generated & (1u << LESSON_MAT_W_Q));
    lesson_free(&three);
    edit_free(&e);
    lesson_free(&L);
}

static void test_scrub_is_one_undo(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    for (int i = 1; i <= 5; i++) assert_int_equal(edit_set_cell(&e, LESSON_MAT_X, 1, 2, 0.1 * i, 1), 0);
    edit_end_scrub(&e);
    assert_int_equal(edit_set_cell(&e, LESSON_MAT_X, 1, 2, 9, 1), 0); /* a new drag: a new entry */
    assert_true(edit_cell(&e, LESSON_MAT_X, 1, 2) == 9);
    assert_int_equal(edit_undo(&e), 0);
    assert_true(edit_cell(&e, LESSON_MAT_X, 1, 2) == (double)0.5f);
    assert_int_equal(edit_undo(&e), 0);
    assert_true(edit_cell(&e, LESSON_MAT_X, 1, 2) == (double)L.X[1 * 4 + 2]);
    assert_false(edit_can_undo(&e));
    edit_free(&e);
    lesson_free(&L);
}

static void test_revert(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_CAUSAL);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_revert(&e), -1); /* nothing to return from */
    assert_int_equal(edit_set(&e, "X[2][0]=4"), 0);
    assert_int_equal(edit_add_token(&e, 0, 3, "d"), 0);
    assert_int_equal(edit_step_scale(&e, +1), 0);
    Lesson edited;
    assert_int_equal(lesson_copy(&edited, edit_lesson(&e)), 0);
    assert_int_equal(edit_revert(&e), 0);
    assert_false(edit_modified(&e));
    assert_edit_matches(&e, &L);
    assert_int_equal(edit_undo(&e), 0); /* the return itself can be undone */
    assert_edit_matches(&e, &edited);
    assert_int_equal(edit_redo(&e), 0);
    assert_edit_matches(&e, &L);
    lesson_free(&edited);
    edit_free(&e);
    lesson_free(&L);
}

/* The window's recovery: a lesson saved from an edited one, restored into a
 * fresh edit of the lesson as loaded, is the edited lesson again, as one
 * change; a lesson of other sizes is refused and nothing changes. */
static void test_restore(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_CAUSAL);
    char err[512];
    Edit e, fresh;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_set(&e, "X[2][0]=4"), 0);
    assert_int_equal(edit_add_token(&e, 0, 3, "d"), 0);
    assert_int_equal(edit_toggle_mask(&e, 1, 0), 0);
    assert_int_equal(edit_step_scale(&e, +1), 0);
    Lesson saved;
    int dropped = 0;
    assert_int_equal(edit_saveable(&e, &saved, &dropped, err, sizeof err), 0);
    assert_int_equal(edit_init(&fresh, &L, err, sizeof err), 0);
    assert_int_equal(edit_restore(&fresh, &saved), 0);
    assert_true(edit_modified(&fresh));
    assert_edit_matches(&fresh, edit_lesson(&e));
    assert_int_equal(edit_undo(&fresh), 0); /* one change */
    assert_false(edit_modified(&fresh));
    edit_free(&fresh);
    lesson_free(&saved);
    /* other sizes: refused, the lesson kept */
    Lesson other;
    parse(&other, LESSON_DOT);
    assert_int_equal(edit_init(&fresh, &L, err, sizeof err), 0);
    assert_int_equal(edit_restore(&fresh, &other), -1);
    assert_non_null(strstr(fresh.msg, "not those of the lesson"));
    assert_false(edit_modified(&fresh));
    edit_free(&fresh);
    lesson_free(&other);
    edit_free(&e);
    lesson_free(&L);
}

static void test_mask_toggle(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_CAUSAL);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    /* a causal mask becomes the explicit matrix it stands for, one cell toggled */
    assert_int_equal(edit_toggle_mask(&e, 0, 2), 0);
    const Lesson *W = edit_lesson(&e);
    assert_int_equal(W->cfg.mask_kind, ATTN_MASK_MATRIX);
    static const unsigned char want[9] = {1, 0, 1, 1, 1, 0, 1, 1, 1};
    assert_memory_equal(W->mask, want, 9);
    Lesson ref;
    assert_int_equal(lesson_copy(&ref, &L), 0);
    ref.cfg.mask_kind = ATTN_MASK_MATRIX;
    ref.mask = malloc(9);
    memcpy(ref.mask, want, 9);
    lesson_bind(&ref);
    assert_edit_matches(&e, &ref);
    const AttnStep *w = attn_trace_find(e.trace, ATTN_STEP_SOFTMAX, 1);
    assert_true(w->data[2] > 0 && w->data[1] == 0);
    /* toggled back: the same numbers as the causal lesson */
    assert_int_equal(edit_toggle_mask(&e, 0, 2), 0);
    assert_edit_matches(&e, &L);
    assert_int_equal(edit_set(&e, "mask[1][1]=0"), 0);
    assert_int_equal(edit_lesson(&e)->cfg.mask_kind, ATTN_MASK_MATRIX);
    assert_int_equal(edit_lesson(&e)->mask[4], 0);
    assert_int_equal(edit_set(&e, "mask[1][1]=0.5"), -1);
    assert_non_null(strstr(e.msg, "expected 0 or 1"));
    assert_int_equal(edit_undo(&e), 0);
    assert_int_equal(edit_undo(&e), 0);
    assert_int_equal(edit_undo(&e), 0);
    assert_int_equal(edit_lesson(&e)->cfg.mask_kind, ATTN_MASK_CAUSAL);
    assert_edit_matches(&e, &L);
    /* --set on a causal mask: what it already is changes nothing; else the
     * mask becomes the explicit matrix with that cell */
    assert_int_equal(edit_set(&e, "mask[0][1]=0"), 0);
    assert_false(edit_can_undo(&e));
    assert_int_equal(edit_set(&e, "mask[0][1]=1"), 0);
    assert_int_equal(edit_lesson(&e)->cfg.mask_kind, ATTN_MASK_MATRIX);
    assert_int_equal(edit_lesson(&e)->mask[1], 1);
    assert_int_equal(edit_lesson(&e)->mask[2], 0);
    lesson_free(&ref);
    edit_free(&e);
    lesson_free(&L);
}

static void test_mask_padding_and_cycle(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_CROSS);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    /* padding: a toggle is the whole key */
    assert_int_equal(edit_toggle_mask(&e, 1, 2), 0);
    assert_int_equal(edit_lesson(&e)->cfg.mask_kind, ATTN_MASK_PADDING);
    assert_int_equal(edit_lesson(&e)->mask[2], 1);
    assert_int_equal(edit_toggle_mask(&e, 0, 0), 0);
    const AttnStep *w = attn_trace_find(e.trace, ATTN_STEP_SOFTMAX, 1);
    assert_true(w->data[0] == 0 && w->data[3] == 0 && w->data[2] > 0);
    assert_int_equal(edit_toggle_mask(&e, 5, 0), -1);
    edit_free(&e);
    lesson_free(&L);

    /* none → causal → padding → none, each the engine's trace of that kind */
    parse(&L, LESSON_DOT);
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_null(attn_trace_find(e.trace, ATTN_STEP_MASKED, 1));
    static const AttnMaskKind order[] = {ATTN_MASK_CAUSAL, ATTN_MASK_PADDING, ATTN_MASK_NONE};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(edit_cycle_mask(&e), 0);
        Lesson ref;
        assert_int_equal(lesson_copy(&ref, &L), 0);
        ref.cfg.mask_kind = order[i];
        if (order[i] == ATTN_MASK_PADDING) {
            ref.mask = malloc(3);
            memset(ref.mask, 1, 3);
        }
        lesson_bind(&ref);
        assert_int_equal(edit_lesson(&e)->cfg.mask_kind, order[i]);
        assert_edit_matches(&e, &ref);
        assert_true((attn_trace_find(e.trace, ATTN_STEP_MASKED, 1) != NULL) == (order[i] != ATTN_MASK_NONE));
        lesson_free(&ref);
    }
    edit_free(&e);
    lesson_free(&L);
}

static void test_tokens(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT); /* X generated from the seed */
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_add_token(&e, 0, 3, "很"), 0);
    const Lesson *W = edit_lesson(&e);
    assert_int_equal(W->n_tokens, 4);
    assert_int_equal(W->cfg.n_q, 4);
    assert_string_equal(W->tokens[3], "很");
    /* the new row is the seed's: X as the loader generates it for 4 tokens */
    float X4[16];
    lesson_random_fill(X4, 16, L.seed, "X", 1.0);
    assert_memory_equal(W->X, X4, sizeof X4);
    assert_true(W->generated & (1u << LESSON_MAT_X));
    assert_int_equal(e.trace->steps[0].rows, 4);
    /* inserted in the middle: the seed's row for that place, the rest kept */
    assert_int_equal(edit_add_token(&e, 0, 1, "也"), 0);
    W = edit_lesson(&e);
    assert_string_equal(W->tokens[1], "也");
    assert_string_equal(W->tokens[2], "喜欢");
    float X5[20];
    lesson_random_fill(X5, 20, L.seed, "X", 1.0);
    assert_memory_equal(W->X + 4, X5 + 4, 4 * sizeof(float));
    assert_memory_equal(W->X + 8, L.X + 4, 4 * sizeof(float));
    assert_false(W->generated & (1u << LESSON_MAT_X));
    assert_int_equal(edit_remove_token(&e, 0, 1), 0);
    assert_int_equal(edit_remove_token(&e, 0, 3), 0);
    assert_edit_matches(&e, &L);
    assert_true(edit_lesson(&e)->generated & (1u << LESSON_MAT_X));
    assert_int_equal(edit_rename_token(&e, 0, 0, "你"), 0);
    assert_string_equal(edit_lesson(&e)->tokens[0], "你");
    assert_edit_matches(&e, &L); /* a name changes no number */
    assert_true(edit_modified(&e));
    /* --tokens: kept rows keep their numbers */
    assert_int_equal(edit_set_tokens(&e, "a b"), 0);
    assert_int_equal(edit_lesson(&e)->n_tokens, 2);
    assert_memory_equal(edit_lesson(&e)->X, L.X, 8 * sizeof(float));
    /* refusals */
    assert_int_equal(edit_remove_token(&e, 0, 0), 0);
    assert_int_equal(edit_remove_token(&e, 0, 0), -1);
    assert_non_null(strstr(e.msg, "at least 1 token"));
    assert_int_equal(edit_add_token(&e, 0, 0, ""), -1);
    assert_non_null(strstr(e.msg, "empty"));
    assert_int_equal(edit_rename_token(&e, 0, 0, "a\nb"), -1);
    assert_non_null(strstr(e.msg, "line break"));
    /* characters not seen, or that reorder what is seen: refused, naming
     * the character, and the tokens stay as they were */
    assert_int_equal(edit_rename_token(&e, 0, 0, "b\u202ec"), -1);
    assert_non_null(
        strstr(e.msg, "tokens[0]: expected a token of visible characters, found U+202E (right-to-left override)"));
    assert_int_equal(edit_add_token(&e, 0, 1, "\u200bc"), -1);
    assert_non_null(strstr(e.msg, "found U+200B (zero width space)"));
    assert_int_equal(edit_set_tokens(&e, "x y\u2066z"), -1);
    assert_non_null(strstr(e.msg, "--tokens: token 1: expected a token of visible characters, found U+2066"));
    assert_int_equal(edit_lesson(&e)->n_tokens, 1);
    assert_string_equal(edit_lesson(&e)->tokens[0], "b");
    assert_int_equal(edit_add_token(&e, 1, 0, "x"), -1); /* no source side in self-attention */
    assert_int_equal(edit_set_tokens(&e, "   "), -1);
    edit_free(&e);
    lesson_free(&L);
}

static void test_tokens_mask_follows(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_CROSS);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    /* a new key of a padding mask may be attended; Y's new row is the seed's */
    assert_int_equal(edit_add_token(&e, 1, 3, "w"), 0);
    const Lesson *W = edit_lesson(&e);
    assert_int_equal(W->cfg.n_k, 4);
    static const unsigned char pad[4] = {1, 1, 0, 1};
    assert_memory_equal(W->mask, pad, 4);
    float Y4[8];
    lesson_random_fill(Y4, 8, L.seed, "Y", 1.0);
    assert_memory_equal(W->Y + 6, Y4 + 6, 2 * sizeof(float));
    assert_int_equal(edit_remove_token(&e, 1, 2), 0);
    static const unsigned char pad3[3] = {1, 1, 1};
    assert_memory_equal(edit_lesson(&e)->mask, pad3, 3);
    edit_free(&e);
    lesson_free(&L);

    /* causal: the new query sees every key up to itself */
    parse(&L, LESSON_CAUSAL);
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_add_token(&e, 0, 3, "d"), 0);
    const AttnStep *w = attn_trace_find(e.trace, ATTN_STEP_SOFTMAX, 1);
    assert_int_equal(w->rows, 4);
    assert_true(w->data[2 * 4 + 3] == 0 && w->data[3 * 4 + 3] > 0);
    /* an explicit matrix: new entries are 1 */
    assert_int_equal(edit_toggle_mask(&e, 0, 1), 0);
    assert_int_equal(edit_add_token(&e, 0, 4, "e"), 0);
    const unsigned char *m = edit_lesson(&e)->mask;
    for (int j = 0; j < 5; j++) assert_int_equal(m[4 * 5 + j], 1);
    for (int i = 0; i < 5; i++) assert_int_equal(m[i * 5 + 4], 1);
    assert_int_equal(m[0 * 5 + 1], 1);
    assert_int_equal(m[1 * 5 + 2], 0);
    edit_free(&e);
    lesson_free(&L);
}

/* A causal mask in cross-attention is one rule everywhere: query i sees keys
 * j <= i, whatever the two lengths (the loader, the engine, Delete, Insert
 * and --tokens agree), and the edit's trace is the engine's of the lesson
 * written out with that shape. */
static void test_causal_cross_any_lengths(void **state)
{
    (void)state;
    static const char json[] =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"cc\", \"title\": {\"en\": \"cc\"},"
        " \"tokens\": [\"a\", \"b\"], \"source_tokens\": [\"x\", \"y\", \"z\"], \"d_model\": 2, \"seed\": 9,"
        " \"Y\": [[1, 0], [0, 1], [1, 1]], \"mask\": \"causal\"}";
    Lesson L;
    parse(&L, json); /* n_q 2, n_k 3: the loader takes it */
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    if (edit_add_token(&e, 0, 2, "c") != 0) fail_msg("Insert of a query: %s", e.msg);
    if (edit_add_token(&e, 1, 3, "w") != 0) fail_msg("Insert of a key: %s", e.msg);
    assert_int_equal(edit_remove_token(&e, 1, 0), 0);
    if (edit_set_tokens(&e, "p q r s t") != 0) fail_msg("--tokens: %s", e.msg);
    const Lesson *W = edit_lesson(&e);
    assert_int_equal(W->cfg.mask_kind, ATTN_MASK_CAUSAL);
    assert_int_equal(W->cfg.n_q, 5);
    assert_int_equal(W->cfg.n_k, 3);
    const AttnStep *w = attn_trace_find(e.trace, ATTN_STEP_SOFTMAX, 1);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++)
            if ((w->data[i * 3 + j] > 0) != (j <= i))
                fail_msg("weights[%d][%d] = %g", i, j, (double)w->data[i * 3 + j]);
    Lesson ref;
    assert_int_equal(lesson_copy(&ref, W), 0);
    assert_edit_matches(&e, &ref);
    lesson_free(&ref);
    edit_free(&e);
    lesson_free(&L);
}

/* The heap in use, in bytes, where glibc says (not under a sanitizer,
 * whose allocator glibc does not see): -1 when unknown. */
static long heap_in_use(void)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    return (long)mallinfo2().uordblks;
#else
    return -1;
#endif
}

/* The history holds what changed, not the lesson: on 256 tokens of
 * d_model 256 (X is 256 KiB) with an explicit mask (64 KiB), renaming a
 * token holds its name, adding or removing one a row of X and the mask, and
 * going back to the lesson as loaded what differs from it; every step still
 * undoes and redoes exactly. */
static void test_history_holds_what_changed(void **state)
{
    (void)state;
    char *json = test_tokens_json("{\"format\": \"attnviz-lesson/1\", \"id\": \"big\", \"title\": {\"en\": \"Big\"},"
                                  " \"tokens\": [",
                                  256, "], \"d_model\": 256, \"seed\": 4, \"W_O\": null}");
    Lesson L;
    parse(&L, json);
    free(json);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_toggle_mask(&e, 3, 5), 0); /* an explicit 256×256 mask: 64 KiB */
    size_t start = e.hist_bytes;
    long heap0 = 0;
    for (int i = 0; i < 16; i++) {
        /* after the first, the engine keeps the trace before as its spare:
         * the heap is measured from there */
        if (i == 1) heap0 = heap_in_use();
        char name[16];
        snprintf(name, sizeof name, "r%d", i);
        assert_int_equal(edit_rename_token(&e, 0, 10 + i, name), 0);
    }
    long heap1 = heap_in_use();
    size_t per = (e.hist_bytes - start) / 16;
    if (per > 1024) fail_msg("a rename holds %zu bytes of history", per);
    if (heap0 >= 0 && heap1 - heap0 > 64 * 1024) fail_msg("15 renames took %ld bytes of heap", heap1 - heap0);
    size_t before = e.hist_bytes;
    assert_int_equal(edit_add_token(&e, 0, 7, "new"), 0);
    assert_int_equal(edit_remove_token(&e, 0, 200), 0);
    /* a row of X each (1 KiB), and the mask before and after each (its rows
     * and columns moved): not X whole */
    if (e.hist_bytes - before > 2 * 1024 + 4 * 257 * 257 + 4096)
        fail_msg("adding and removing a token held %zu bytes", e.hist_bytes - before);
    Lesson after;
    assert_int_equal(lesson_copy(&after, edit_lesson(&e)), 0);
    before = e.hist_bytes;
    assert_int_equal(edit_revert(&e), 0);
    /* the rows of X from the added token's to the removed one's (194 of
     * 256, moved by one), both ways, and the mask: no other matrix */
    if (e.hist_bytes - before > 2 * 194 * 1024 + 2 * 257 * 257 + 16 * 1024)
        fail_msg("going back to the lesson as loaded held %zu bytes", e.hist_bytes - before);
    assert_edit_matches(&e, &L);
    assert_int_equal(edit_undo(&e), 0); /* the revert */
    assert_edit_matches(&e, &after);
    while (edit_can_undo(&e)) assert_int_equal(edit_undo(&e), 0);
    assert_false(edit_modified(&e));
    assert_edit_matches(&e, &L);
    while (edit_can_redo(&e)) assert_int_equal(edit_redo(&e), 0);
    assert_edit_matches(&e, &L); /* the last step was the revert */
    assert_int_equal(edit_undo(&e), 0);
    assert_edit_matches(&e, &after);
    for (int i = 0; i < after.n_tokens; i++) assert_string_equal(edit_lesson(&e)->tokens[i], after.tokens[i]);
    assert_memory_equal(edit_lesson(&e)->mask, after.mask, lesson_mask_bytes(&after.cfg));
    lesson_free(&after);
    edit_free(&e);
    lesson_free(&L);
}

/* Past its bound the history lets go of its oldest changes, never the
 * newest, and says how many; what remains undoes exactly. */
static void test_history_bound(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    e.hist_max = 1024; /* room for a few cell changes */
    for (int i = 0; i < 40; i++) assert_int_equal(edit_set_cell(&e, LESSON_MAT_X, i % 3, i % 4, 0.5 + i, 0), 0);
    assert_true(e.forgotten > 0);
    assert_true(e.hist_bytes <= e.hist_max);
    assert_int_equal(e.n_hist + e.forgotten, 40);
    assert_int_equal(e.at, e.n_hist);
    int kept = 0;
    while (edit_can_undo(&e)) assert_int_equal(edit_undo(&e), 0), kept++;
    assert_int_equal(kept, e.n_hist);
    assert_true(edit_modified(&e)); /* the forgotten changes stay */
    assert_true(edit_cell(&e, LESSON_MAT_X, 0, 0) != L.X[0]);
    /* one change larger than the bound is kept all the same */
    assert_int_equal(edit_set_cell(&e, LESSON_MAT_X, 0, 0, 2, 0), 0);
    e.hist_max = 1;
    assert_int_equal(edit_add_token(&e, 0, 1, "大"), 0);
    assert_int_equal(e.n_hist, 1);
    assert_int_equal(edit_undo(&e), 0);
    assert_int_equal(edit_lesson(&e)->n_tokens, 3);
    edit_free(&e);
    lesson_free(&L);
}

/* A saved lesson's id: readable, "-edited" never cut, and unique to the id
 * it came from however long, also when a name is taken and numbered. */
static void test_saved_ids(void **state)
{
    (void)state;
    char id[LESSON_MAX_ID_BYTES + 1];
    static const char *const same[][2] = {
        {"mhsa", "mhsa-edited"},     {"mhsa-edited", "mhsa-edited"}, {"mhsa-edited-3", "mhsa-edited"},
        {"seed-2", "seed-2-edited"}, {"edited", "edited-edited"},    {"x-edited-y", "x-edited-y-edited"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        edit_saved_id(same[i][0], id, sizeof id);
        assert_string_equal(id, same[i][1]);
    }
    /* 64 bytes, the longest id; the two differ in their last characters only */
    static const char a[] = "scaled-dot-product-attention-over-a-long-sentence-of-tokens-ab-1";
    static const char b[] = "scaled-dot-product-attention-over-a-long-sentence-of-tokens-ab-2";
    assert_int_equal(strlen(a), LESSON_MAX_ID_BYTES);
    char ib[LESSON_MAX_ID_BYTES + 1];
    edit_saved_id(a, id, sizeof id);
    edit_saved_id(b, ib, sizeof ib);
    assert_string_not_equal(id, ib);
    for (const char *s = id;; s = ib) {
        assert_true(strlen(s) <= EDIT_SAVED_ID_MAX);
        assert_string_equal(s + strlen(s) - 7, "-edited");
        assert_null(strstr(s, "--"));
        assert_int_equal(strncmp(s, "scaled-dot-product-attention", 28), 0);
        if (s == ib) break;
    }
    /* saved twice: the second is numbered after "-edited", which stays whole */
    char *json = test_tokens_json("{\"format\": \"attnviz-lesson/1\", \"id\": \"scaled-dot-product-attention-over-a-"
                                  "long-sentence-of-tokens-ab-1\", \"title\": {\"en\": \"Long\"}, \"tokens\": [",
                                  2, "], \"d_model\": 2}");
    Lesson L;
    parse(&L, json);
    free(json);
    char err[512], dir[64], path[2][4096];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_set(&e, "X[0][0]=1"), 0);
    assert_int_equal(test_scratch_dir(dir, sizeof dir, "ids"), 0);
    for (int k = 0; k < 2; k++) {
        Lesson out;
        int dropped;
        assert_int_equal(edit_saveable(&e, &out, &dropped, err, sizeof err), 0);
        if (lesson_save_new(&out, dir, path[k], sizeof path[k], err, sizeof err) != 0) fail_msg("%s", err);
        assert_true(strlen(out.id) <= LESSON_MAX_ID_BYTES);
        assert_non_null(strstr(out.id, k ? "-edited-2" : "-edited"));
        Lesson back;
        LessonError le;
        if (lesson_load(&back, path[k], &le) != 0) fail_msg("%s", le.msg);
        lesson_free(&back);
        lesson_free(&out);
    }
    unlink(path[0]);
    unlink(path[1]);
    rmdir(dir);
    edit_free(&e);
    lesson_free(&L);
}

static void test_token_limit(void **state)
{
    (void)state;
    /* 1024 tokens: the loader's limit; one more is refused */
    size_t cap = 16 + 8 * LESSON_MAX_TOKENS + 256;
    char *json = malloc(cap);
    size_t at = (size_t)snprintf(json, cap,
                                 "{\"format\": \"attnviz-lesson/1\", \"id\": \"full\", \"title\": {\"en\": \"Full\"},"
                                 " \"d_model\": 1, \"tokens\": [");
    for (int i = 0; i < LESSON_MAX_TOKENS; i++) at += (size_t)snprintf(json + at, cap - at, "%s\"t\"", i ? "," : "");
    snprintf(json + at, cap - at, "]}");
    Lesson L;
    parse(&L, json);
    free(json);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_add_token(&e, 0, 0, "u"), -1);
    assert_non_null(strstr(e.msg, "at most 1024 tokens"));
    assert_int_equal(edit_lesson(&e)->n_tokens, LESSON_MAX_TOKENS);
    assert_int_equal(edit_remove_token(&e, 0, 5), 0);
    assert_int_equal(edit_add_token(&e, 0, 0, "u"), 0);
    edit_free(&e);
    lesson_free(&L);
}

static void test_scale(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT); /* d_k = 2, d_model = 4 */
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    double lo, hi, cur = edit_scale(&e, &lo, &hi);
    assert_true(fabs(cur - sqrt(2.0)) < 1e-6);
    assert_true(fabs(lo - 0.1 * sqrt(2.0)) < 1e-9 && fabs(hi - 10 * sqrt(2.0)) < 1e-9);
    /* up from √2, the first tick on the way is √d_model = 2 */
    int steps = 0;
    while (edit_scale(&e, NULL, NULL) < 2.0 - 1e-6) {
        assert_int_equal(edit_step_scale(&e, +1), 0);
        steps++;
    }
    assert_true(edit_scale(&e, NULL, NULL) == 2.0);
    assert_int_equal(edit_lesson(&e)->cfg.scale_kind, ATTN_SCALE_SQRT_DMODEL);
    assert_int_equal(steps, 4); /* 20 steps a decade: √2·10^(3/20) = 1.998 < 2 < √2·10^(4/20) */
    /* a divisor: the engine's trace of that scale */
    assert_int_equal(edit_set_scale(&e, 0.5), 0);
    Lesson ref;
    assert_int_equal(lesson_copy(&ref, &L), 0);
    ref.cfg.scale_kind = ATTN_SCALE_VALUE;
    ref.cfg.scale_value = 0.5f;
    assert_edit_matches(&e, &ref);
    assert_true(e.trace->divisor == 0.5f);
    /* √d_k is the lesson's own kind again */
    assert_int_equal(edit_set_scale(&e, sqrt(2.0)), 0);
    assert_int_equal(edit_lesson(&e)->cfg.scale_kind, ATTN_SCALE_SQRT_DK);
    assert_edit_matches(&e, &L);
    /* the ends */
    assert_int_equal(edit_set_scale(&e, 0.1), -1);
    assert_non_null(strstr(e.msg, "expected a divisor from 0.1414 to 14.14"));
    assert_int_equal(edit_set_scale(&e, hi), 0);
    assert_int_equal(edit_step_scale(&e, +1), -1);
    assert_non_null(strstr(e.msg, "largest"));
    assert_int_equal(edit_set_scale(&e, lo), 0);
    assert_int_equal(edit_step_scale(&e, -1), -1);
    /* undo walks the scale back */
    while (edit_can_undo(&e)) assert_int_equal(edit_undo(&e), 0);
    assert_edit_matches(&e, &L);
    lesson_free(&ref);
    edit_free(&e);
    lesson_free(&L);

    parse(&L, LESSON_ADDITIVE);
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_step_scale(&e, +1), -1);
    assert_non_null(strstr(e.msg, "additive attention has no scale"));
    edit_free(&e);
    lesson_free(&L);
}

/* Every bad edit: one line, the old value kept, the trace unchanged. */
static void test_bad_edits(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"X[0][1]=abc",
         "--set 'X[0][1]=abc': X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"abc\""},
        {"X[0][1]=", "--set 'X[0][1]=': X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"\""},
        {"X[0][1]=nan", "X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"nan\""},
        {"X[0][1]=inf", "X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"inf\""},
        {"X[0][1]=-Infinity", "found \"-Infinity\""},
        /* decimal only: strtod's hexadecimal forms are refused */
        {"X[0][1]=0x1p3",
         "--set 'X[0][1]=0x1p3': X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"0x1p3\""},
        {"X[0][1]=-0X10", "X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"-0X10\""},
        {"X[0][1]=1e", "X[0][1]: expected a decimal number (such as -0.5 or 1e-3), found \"1e\""},
        {"X[0][1]=1e39", "X[0][1]: expected a number float32 can hold (|x| <= 3.4028235e38), found 1e+39"},
        {"X[0][1]=1e400", "expected a finite number that float32 can hold, found \"1e400\""},
        {"X[0][1]=2 3", "expected a decimal number (such as -0.5 or 1e-3), found \"2 3\""},
        {"X[3][0]=1", "X[3][0]: expected a row 0..2 (X is 3×4), found 3"},
        {"X[0][4]=1", "X[0][4]: expected a column 0..3 (X is 3×4), found 4"},
        {"W_q[0][0]=1", "W_q: not a matrix of the lesson; expected one of X, Y, W_Q"},
        {"Y[0][0]=1", "Y: this lesson has no Y"},
        {"W_a[0][0]=1", "W_a: this lesson has no W_a"},
        {"mask[0][0]=2", "mask[0][0]: expected 0 or 1 (1 = may attend, 0 = blocked), found 2"},
        {"mask[3][0]=0", "mask[3][0]: expected a cell of the 3×3 mask"},
        {"mask[0]=0", "mask: this lesson's mask is none"},
        {"X[0]=1", "X is 3×4, a matrix: expected X[i][j]=VALUE"},
        {"b_Q[9]=1", "b_Q[0][9]: expected a column 0..3 (b_Q is 1×4), found 9"},
        {"X[-1][0]=1", "expected an index [0], [1], ... after X"},
        {"X[0][0][0]=1", "expected '=' after X's indices"},
        {"X=1", "expected NAME[i][j]=VALUE or NAME[i]=VALUE"},
        {"[0][0]=1", "expected a matrix name before '['"},
        /* a value every number can hold, but whose products overflow float32:
         * the engine names the step and the cell */
        {"X[0][0]=3e38", "X[0][0] = 3e+38 refused, the old value kept: scores_1[0][0] is "},
    };
    AttnTrace *before = engine(&L);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(edit_set(&e, bad[i].spec), -1);
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("%s: got \"%s\", expected it to contain \"%s\"", bad[i].spec, e.msg, bad[i].msg);
        assert_null(strchr(e.msg, '\n'));
        assert_true(edit_cell(&e, LESSON_MAT_X, 0, 0) == (double)L.X[0]);
        assert_true(edit_cell(&e, LESSON_MAT_X, 0, 1) == (double)L.X[1]);
        assert_false(edit_can_undo(&e));
        assert_traces_identical("after a refused edit", e.trace, before);
    }
    /* a value of 400 characters: quoted in part, cut at a character with "…",
     * the whole line valid UTF-8 with nothing replaced; "9喜喜" is 7 bytes, so
     * the quotes' byte limits fall inside a 喜 */
    char spec[1300] = "X[0][0]=";
    for (int i = 0; i < 400; i++) strcat(spec, i % 3 ? "喜" : "9");
    assert_int_equal(edit_set(&e, spec), -1);
    assert_null(strchr(e.msg, '?'));
    assert_non_null(strstr(e.msg, "…': X[0][0]: expected a decimal number (such as -0.5 or 1e-3), found \"9喜"));
    assert_true(strlen(e.msg) < 400);
    for (const char *p = e.msg; *p;) {
        uint32_t cp;
        int k = lesson_utf8_decode(p, &cp);
        if (!k) fail_msg("a character cut in \"%s\"", e.msg);
        p += k;
    }
    /* typed text in the window */
    assert_int_equal(edit_set_cell_text(&e, LESSON_MAT_W_K, 0, 0, "1,5"), -1);
    assert_string_equal(e.msg, "W_K[0][0]: expected a decimal number (such as -0.5 or 1e-3), found \"1,5\"");
    assert_int_equal(edit_set_cell_text(&e, LESSON_MAT_W_K, 0, 0, "0x1p-1"), -1);
    assert_string_equal(e.msg, "W_K[0][0]: expected a decimal number (such as -0.5 or 1e-3), found \"0x1p-1\"");
    assert_int_equal(edit_set_cell_text(&e, LESSON_MAT_W_K, 0, 0, " -2.5e-1 "), 0);
    assert_true(edit_cell(&e, LESSON_MAT_W_K, 0, 0) == -0.25);
    assert_int_equal(edit_set_cell(&e, LESSON_MAT_W_K, 0, 0, NAN, 0), -1);
    assert_int_equal(edit_set_cell(&e, LESSON_MAT_W_K, 0, 0, -INFINITY, 0), -1);
    assert_non_null(strstr(e.msg, "-inf"));
    attn_trace_destroy(before);
    edit_free(&e);
    lesson_free(&L);
}

/* A View that follows an Edit through its recompute hook. */
typedef struct Pair {
    Edit e;
    View v;
} Pair;

static int follow(void *user, char *err, size_t errlen)
{
    Pair *p = user;
    if (view_recompute(&p->v, err, errlen) != 0) return -1;
    p->v.edited = edit_modified(&p->e);
    return 0;
}

static Pair *pair_make(const Lesson *L)
{
    char err[512];
    Pair *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_int_equal(edit_init(&p->e, L, err, sizeof err), 0);
    assert_int_equal(view_init(&p->v, edit_lesson(&p->e), err, sizeof err), 0);
    p->e.recompute = follow;
    p->e.user = p;
    attn_trace_destroy(p->e.trace);
    p->e.trace = NULL;
    return p;
}

static void pair_free(Pair *p)
{
    view_free(&p->v);
    edit_free(&p->e);
    free(p);
}

static void test_view_follows(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    char err[512];
    Pair *p = pair_make(&L);
    const AttnStep *q = attn_trace_find_name(p->v.trace, "Q");
    view_goto(&p->v, attn_trace_index(p->v.trace, q));
    view_set_head(&p->v, 2);
    float q00 = q->data[0];
    p->v.hover_trace = p->v.trace; /* the mouse over Q[2][3] */
    p->v.hover_step = attn_trace_index(p->v.trace, q);
    p->v.hover_row = 2, p->v.hover_col = 3;
    assert_int_equal(edit_set(&p->e, "X[0][0]=5"), 0);
    assert_ptr_equal(p->v.hover_trace, p->v.trace); /* the new trace, not the freed one */
    assert_int_equal(p->v.hover_row, 2);
    /* the same step, in its final state, with the old numbers kept for the animation */
    assert_string_equal(view_current(&p->v)->name, "Q");
    assert_non_null(p->v.edit_before);
    assert_true(p->v.edit_before[0] == q00);
    assert_true(view_current(&p->v)->data[0] != q00);
    assert_true(view_edit_progress(&p->v) == 0.0);
    assert_true(view_is_busy(&p->v));
    view_advance(&p->v, VIEW_EDIT_SECONDS / 2);
    assert_true(fabs(view_edit_progress(&p->v) - 0.5) < 1e-9);
    view_advance(&p->v, VIEW_EDIT_SECONDS);
    assert_true(view_edit_progress(&p->v) == 1.0);
    assert_non_null(p->v.edit_before); /* the marks stay ... */
    view_next(&p->v);
    assert_null(p->v.edit_before); /* ... until the next step */
    assert_int_equal(p->v.head, 2);
    /* a mask appears: the step count changes, the view keeps its step by name */
    const AttnStep *w2 = attn_trace_find(p->v.trace, ATTN_STEP_SOFTMAX, 2);
    view_goto(&p->v, attn_trace_index(p->v.trace, w2));
    int n0 = view_step_count(&p->v);
    assert_int_equal(edit_cycle_mask(&p->e), 0);
    assert_int_equal(view_step_count(&p->v), n0 + 2);
    assert_string_equal(view_current(&p->v)->name, "weights_2");
    /* the single-head trace follows when it is shown */
    assert_true(p->v.single_stale);
    view_set_mode(&p->v, VIEW_COMPARE);
    assert_false(p->v.single_stale);
    View fresh;
    assert_int_equal(view_init(&fresh, edit_lesson(&p->e), err, sizeof err), 0);
    assert_traces_identical("single after edits", p->v.single, fresh.single);
    assert_traces_identical("multi after edits", p->v.trace, fresh.trace);
    view_free(&fresh);
    assert_int_equal(edit_set(&p->e, "X[1][1]=-2"), 0); /* compare mode: both at once */
    assert_false(p->v.single_stale);
    assert_int_equal(view_init(&fresh, edit_lesson(&p->e), err, sizeof err), 0);
    assert_traces_identical("single in compare mode", p->v.single, fresh.single);
    view_free(&fresh);
    view_set_mode(&p->v, VIEW_MULTI);
    /* a refused edit leaves the view as it was */
    const AttnTrace *t = p->v.trace;
    assert_int_equal(edit_set(&p->e, "X[0][0]=3e38"), -1);
    assert_ptr_equal(p->v.trace, t);
    pair_free(p);
    lesson_free(&L);
}

static void goto_name(View *v, const char *name)
{
    const AttnStep *s = attn_trace_find_name(view_trace(v), name);
    assert_non_null(s);
    view_goto(v, attn_trace_index(view_trace(v), s));
}

/* The default lesson's narration: a text with a condition is shown only
 * while it holds; one without is shown as being about the lesson before the
 * change. */
static void test_narration_stays_true(void **state)
{
    (void)state;
    Lesson L;
    LessonError le;
    if (lesson_load(&L, ATTNVIZ_TESTS_DIR "/../lessons/" LESSON_DEFAULT_ID ".json", &le) != 0) fail_msg("%s", le.msg);
    Pair *p = pair_make(&L);
    char buf[4096];
    const char *about = view_string(VS_ABOUT_ORIGINAL, LESSON_EN);
    const char *no_longer = view_string(VS_TEXT_NO_LONGER, LESSON_EN);
    goto_name(&p->v, "weights_1");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "Head 1, verb–object: 喜欢 puts"));
    goto_name(&p->v, "W_Q");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_null(strstr(buf, about));
    /* 喜欢 without its word feature: head 1 no longer links it to 跑步 */
    assert_int_equal(edit_set(&p->e, "X[1][1]=0"), 0);
    assert_true(p->v.edited);
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_ptr_equal(strstr(buf, about), buf); /* W_Q's text: about the numbers before */
    goto_name(&p->v, "weights_1");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), -1);
    assert_null(strstr(buf, "verb–object"));
    /* the hint says which claim of the text no longer holds, and what holds now */
    assert_null(strstr(buf, no_longer));
    /* 喜欢's query in head 1 is now 0: its row is even */
    assert_non_null(strstr(buf, "(The lesson's text for this step does not hold for these numbers: it says 喜欢's "
                                "largest weight goes to 跑步; now it goes to every key alike (uniform).)"));
    p->v.lang = LESSON_ZH;
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), -1);
    assert_non_null(strstr(buf, "。（课程对这一步的讲解不适用于现在的数字：讲解说「喜欢」最大的注意力权重给了「跑步」，"
                                "现在给了每个键（均匀分布）。）"));
    p->v.lang = LESSON_EN;
    goto_name(&p->v, "Q_2"); /* "always": placeholders only */
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_null(strstr(buf, about));
    /* the scale moved off √d_k: the text naming √d_k goes */
    goto_name(&p->v, "scaled_1");
    assert_int_equal(edit_undo(&p->e), 0);
    assert_false(p->v.edited);
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "Divide by √d_k"));
    assert_int_equal(edit_step_scale(&p->e, +1), 0);
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), -1);
    assert_null(strstr(buf, "Divide by √d_k"));
    /* a renamed token: texts that name the tokens go too */
    assert_int_equal(edit_undo(&p->e), 0);
    assert_int_equal(edit_rename_token(&p->e, 0, 2, "游泳"), 0);
    goto_name(&p->v, "weights_2");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), -1);
    assert_non_null(strstr(buf, "it is written for token 3 being 跑步; it is now 游泳."));
    pair_free(p);
    lesson_free(&L);
}

/* After an edit, "About the lesson before its numbers were changed:" opens
 * the first step's narration once, not each of its summary, intro and text. */
static void test_about_the_lesson_before_said_once(void **state)
{
    (void)state;
    static const char json[] =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"once\", \"title\": {\"en\": \"Once\"},"
        " \"tokens\": [\"我\", \"喜欢\"], \"d_model\": 2, \"W_O\": null,"
        " \"X\": [[1, 0], [0, 1]], \"W_Q\": [[1, 0], [2, 0]], \"W_K\": [[1, 0], [0, 1]], \"W_V\": [[1, 0], [0, 1]],"
        " \"summary\": {\"en\": \"The summary.\", \"zh\": \"摘要。\"},"
        " \"narration\": {\"intro\": {\"en\": \"The intro.\", \"zh\": \"引言。\"},"
        " \"X\": {\"en\": \"X's text.\", \"zh\": \"X 的讲解。\"}}}";
    Lesson L;
    parse(&L, json);
    Pair *p = pair_make(&L);
    char buf[4096];
    assert_int_equal(edit_set(&p->e, "W_Q[1][0]=9"), 0);
    goto_name(&p->v, "X");
    for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
        p->v.lang = (LessonLang)lang;
        const char *about = view_string(VS_ABOUT_ORIGINAL, (LessonLang)lang);
        assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
        assert_ptr_equal(strstr(buf, about), buf);
        assert_null(strstr(buf + strlen(about), about));
        assert_non_null(strstr(buf, lang == LESSON_ZH ? "X 的讲解。" : "X's text."));
    }
    pair_free(p);
    lesson_free(&L);
}

/* A text shown as being about the lesson before its numbers were changed
 * says what it said of that lesson: its placeholders are filled from the
 * lesson as loaded, not from the edited numbers; a text with a condition is
 * filled from the numbers as they are. Through the window's edits, through
 * Save as and through --set's path (an Edit, copied). */
static void test_texts_about_the_lesson_before(void **state)
{
    (void)state;
    static const char json[] =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"before\", \"title\": {\"en\": \"Before\"},"
        " \"tokens\": [\"我\", \"喜欢\"], \"d_model\": 2, \"W_O\": null,"
        " \"X\": [[1, 0], [0, 1]], \"W_Q\": [[1, 0], [2, 0]], \"W_K\": [[1, 0], [0, 1]], \"W_V\": [[1, 0], [0, 1]],"
        " \"summary\": {\"en\": \"Q[1][0] is {value:Q[1][0]}.\"},"
        " \"narration\": {\"Q\": {\"en\": \"{token:1} asks [{value:Q[1][0]}, {value:Q[1][1]}] {{sic}}\","
        " \"zh\": \"{token:1} 问 [{value:Q[1][0]}]\"},"
        " \"scores\": {\"en\": \"scores of head {head}: {value:scores[1][0]}\"},"
        " \"K\": {\"when\": \"always\", \"en\": \"Q[1][0] is now {value:Q[1][0]}\"}}}";
    Lesson L;
    parse(&L, json);
    Pair *p = pair_make(&L);
    char buf[4096];
    const char *about = view_string(VS_ABOUT_ORIGINAL, LESSON_EN);
    goto_name(&p->v, "Q");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_string_equal(buf, "喜欢 asks [2, 0] {sic}");
    assert_int_equal(edit_set(&p->e, "W_Q[1][0]=9"), 0); /* Q[1][0] becomes 9 */
    assert_true(p->v.edited);
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    char want[512];
    snprintf(want, sizeof want, "%s喜欢 asks [2, 0] {sic}", about);
    assert_string_equal(buf, want);
    p->v.lang = LESSON_ZH;
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "「喜欢」 问 [2]"));
    p->v.lang = LESSON_EN;
    goto_name(&p->v, "scores_1");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "scores of head 1: 2")); /* Q[1]·K[0] as loaded: 2·1 */
    goto_name(&p->v, "K");                               /* a condition: the numbers as they are */
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_string_equal(buf, "Q[1][0] is now 9");
    goto_name(&p->v, "X"); /* step 0 opens with the summary */
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), -1);
    snprintf(want, sizeof want, "%sQ[1][0] is 2.", about);
    assert_ptr_equal(strstr(buf, want), buf);
    /* a renamed token: the text still names the token it was written about */
    assert_int_equal(edit_rename_token(&p->e, 0, 1, "跑步"), 0);
    goto_name(&p->v, "Q");
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "喜欢 asks [2, 0]"));
    /* undone to the numbers as loaded: no marker, the same words */
    while (edit_can_undo(&p->e)) assert_int_equal(edit_undo(&p->e), 0);
    assert_false(p->v.edited);
    assert_int_equal(view_narration(&p->v, buf, sizeof buf), 0);
    assert_string_equal(buf, "喜欢 asks [2, 0] {sic}");
    /* Save as: the saved lesson says the same of its numbers, and check accepts it */
    assert_int_equal(edit_set(&p->e, "W_Q[1][0]=9"), 0);
    Lesson out;
    int dropped = -1;
    char err[512];
    assert_int_equal(edit_saveable(&p->e, &out, &dropped, err, sizeof err), 0);
    assert_int_equal(dropped, 0);
    assert_string_equal(lesson_narration_key(&out, "Q", LESSON_EN), "喜欢 asks [2, 0] {{sic}}");
    AttnTrace *t = engine(&out);
    assert_int_equal(narrate_check(&out, t, err, sizeof err), 0);
    View sv;
    assert_int_equal(view_init(&sv, &out, err, sizeof err), 0);
    goto_name(&sv, "Q");
    assert_int_equal(view_narration(&sv, buf, sizeof buf), 0);
    snprintf(want, sizeof want, "%s喜欢 asks [2, 0] {sic}", about);
    assert_string_equal(buf, want);
    view_free(&sv);
    attn_trace_destroy(t);
    lesson_free(&out);
    pair_free(p);
    lesson_free(&L);
}

static int recompute_later(void *user, char *err, size_t errlen)
{
    (void)user, (void)err, (void)errlen;
    return 0;
}

/* A lesson whose numbers overflow float32 can be mended by a change (as
 * --set does): its texts about its own numbers cannot be filled and are
 * left out; the others stay. */
static void test_mend_an_overflow(void **state)
{
    (void)state;
    static const char json[] =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"over\", \"title\": {\"en\": \"Over\"},"
        " \"tokens\": [\"a\", \"b\"], \"d_model\": 2, \"X\": [[1, 1], [1, 2]],"
        " \"W_Q\": [[1e30, 0], [0, 1e30]], \"W_K\": [[1e30, 0], [0, 1e30]],"
        " \"narration\": {\"Q\": {\"en\": \"Q[0][0] is {value:Q[0][0]}\"}, \"K\": {\"en\": \"plain\"},"
        " \"V\": {\"when\": \"always\", \"en\": \"V[0][0] is {value:V[0][0]}\"}}}";
    Lesson L;
    parse(&L, json);
    char err[512];
    Edit e;
    /* as --set: the changes are made together, then computed once */
    assert_int_equal(edit_init_copy(&e, &L, err, sizeof err), 0);
    e.recompute = recompute_later;
    if (edit_set(&e, "W_Q[0][0]=1") != 0 || edit_set(&e, "W_Q[1][1]=1") != 0) fail_msg("%s", e.msg);
    e.recompute = NULL;
    if (edit_refresh(&e) != 0) fail_msg("%s", e.msg);
    const Lesson *W = edit_lesson(&e);
    assert_null(lesson_narration_text(W, "Q"));
    assert_string_equal(lesson_narration_key(W, "K", LESSON_EN), "plain");
    assert_string_equal(lesson_narration_key(W, "V", LESSON_EN), "V[0][0] is {value:V[0][0]}");
    edit_free(&e);
    lesson_free(&L);
}

static void test_when_conditions(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    AttnTrace *t = engine(&L);
    char msg[256];
    assert_int_equal(narrate_when(NULL, &L, t, NULL, msg, sizeof msg), 1);
    assert_int_equal(narrate_when("always", &L, t, NULL, msg, sizeof msg), 1);
    assert_int_equal(narrate_when("{d_k} == 2 && {heads} >= 2 && {d_model} < 5", &L, t, NULL, msg, sizeof msg), 1);
    assert_int_equal(narrate_when("{d_k} == 2 && {heads} > 2", &L, t, NULL, msg, sizeof msg), 0);
    assert_int_equal(narrate_when("{token:1} == 喜欢", &L, t, NULL, msg, sizeof msg), 1);
    assert_int_equal(narrate_when("{token:1} != 喜欢", &L, t, NULL, msg, sizeof msg), 0);
    assert_int_equal(narrate_when("{value:b_Q[0][1]} == 0.2", &L, t, NULL, msg, sizeof msg), 1);
    assert_int_equal(narrate_when("{token:1} < 我", &L, t, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "needs numbers on both sides"));
    assert_int_equal(narrate_when("{d_k}", &L, t, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "expected LEFT OP RIGHT"));
    assert_int_equal(narrate_when("{d_kk} == 2", &L, t, NULL, msg, sizeof msg), -1);
    attn_trace_destroy(t);
    lesson_free(&L);

    /* check: a condition false for the lesson's own numbers is an error,
     * unless the lesson was saved from an edited one */
    static const char *const json[] = {
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"w\", \"title\": {\"en\": \"W\"}, \"tokens\": [\"a\", \"b\"],"
        " \"d_model\": 2, \"narration\": {\"softmax\": {\"when\": \"{d_k} == 3\", \"en\": \"x\"}}}",
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"w\", \"edited_from\": \"v\", \"title\": {\"en\": \"W\"},"
        " \"tokens\": [\"a\", \"b\"], \"d_model\": 2, \"narration\": {\"softmax\": {\"when\": \"{d_k} == 3\", \"en\": "
        "\"x\"}}}",
    };
    for (int i = 0; i < 2; i++) {
        parse(&L, json[i]);
        t = engine(&L);
        char err[512];
        int bad = narrate_check(&L, t, err, sizeof err);
        if (i == 0) {
            assert_int_equal(bad, 1);
            assert_string_equal(
                err, "inline.json:1:135: narration.softmax.when (step weights_1): the condition \"{d_k} == 3\" "
                     "is false for the lesson's own numbers");
        } else {
            assert_int_equal(bad, 0);
        }
        attn_trace_destroy(t);
        lesson_free(&L);
    }
}

/* Save as: load, edit, save, load again: the same trace, bit for bit; the
 * narration kept; attnviz check's test passes; the original untouched. */
static void test_save_round_trip(void **state)
{
    (void)state;
    const char *orig_path = ATTNVIZ_TESTS_DIR "/../lessons/" LESSON_DEFAULT_ID ".json";
    char *orig_bytes = test_read_file(orig_path, NULL);
    assert_non_null(orig_bytes);
    Lesson L;
    LessonError le;
    if (lesson_load(&L, orig_path, &le) != 0) fail_msg("%s", le.msg);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_set(&e, "X[0][1]=0.5"), 0);
    assert_int_equal(edit_set(&e, "W_Q[3][2]=-1.25"), 0);
    assert_int_equal(edit_toggle_mask(&e, 2, 0), 0);
    assert_int_equal(edit_step_scale(&e, -1), 0);
    assert_int_equal(edit_add_token(&e, 0, 3, "很"), 0);
    char dir[64];
    assert_int_equal(test_scratch_dir(dir, sizeof dir, "save"), 0);
    char sub[96];
    snprintf(sub, sizeof sub, "%s/lessons", dir); /* created by the save */
    Lesson out;
    int dropped = -1;
    assert_int_equal(edit_saveable(&e, &out, &dropped, err, sizeof err), 0);
    char path[4096];
    if (lesson_save_new(&out, sub, path, sizeof path, err, sizeof err) != 0) fail_msg("%s", err);
    char want[256];
    snprintf(want, sizeof want, "%s/%s-edited.json", sub, LESSON_DEFAULT_ID);
    assert_string_equal(path, want);
    Lesson back;
    if (lesson_load(&back, path, &le) != 0) fail_msg("%s", le.msg);
    assert_string_equal(back.id, LESSON_DEFAULT_ID "-edited");
    assert_string_equal(back.edited_from, LESSON_DEFAULT_ID);
    assert_string_equal(lesson_text(&back.title, LESSON_ZH), lesson_text(&L.title, LESSON_ZH));
    /* texts without a condition are carried filled from the lesson as
     * loaded (no placeholder left); those with one keep their key, or were
     * left out and counted */
    int missing = 0;
    for (int i = 0; i < back.n_narration; i++)
        if (!back.narration[i].text.when) assert_null(strchr(back.narration[i].text.text[LESSON_EN], '{'));
    for (int i = 0; i < L.n_narration; i++)
        if (L.narration[i].text.when) missing += !lesson_narration_text(&back, L.narration[i].key);
    assert_true(missing <= dropped);
    AttnTrace *t = engine(&back);
    assert_traces_identical("saved and loaded again", t, e.trace);
    assert_int_equal(narrate_check(&back, t, err, sizeof err), 0);
    attn_trace_destroy(t);
    /* the first step's text survives with its condition */
    const LessonText *w1 = lesson_narration_text(&back, "weights_1");
    assert_non_null(w1);
    assert_non_null(w1->when);
    /* again: a new name, never the same file */
    Lesson again;
    assert_int_equal(edit_saveable(&e, &again, &dropped, err, sizeof err), 0);
    char path2[4096];
    assert_int_equal(lesson_save_new(&again, sub, path2, sizeof path2, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/%s-edited-2.json", sub, LESSON_DEFAULT_ID);
    assert_string_equal(path2, want);
    assert_string_equal(again.id, LESSON_DEFAULT_ID "-edited-2");
    /* the lesson as loaded is untouched */
    char *now = test_read_file(orig_path, NULL);
    assert_string_equal(now, orig_bytes);
    free(now);
    free(orig_bytes);
    unlink(path);
    unlink(path2);
    rmdir(sub);
    rmdir(dir);
    lesson_free(&again);
    lesson_free(&back);
    lesson_free(&out);
    edit_free(&e);
    lesson_free(&L);
}

/* Matrices the seed generated stay the seed's in the file until edited; a
 * text whose step is gone is left out. */
static void test_save_generated_and_dropped(void **state)
{
    (void)state;
    static const char *json =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"gen\", \"title\": {\"en\": \"Gen\"}, \"tokens\": [\"a\", \"b\"],"
        " \"d_model\": 2, \"seed\": 11, \"mask\": \"causal\", \"narration\": {\"masked\": {\"en\": \"blocked: "
        "{mask_fill}\"},"
        " \"weights_1\": {\"when\": \"always\", \"en\": \"w {value:weights_1[1][1]}\"}}}";
    Lesson L;
    parse(&L, json);
    char err[512];
    Edit e;
    assert_int_equal(edit_init(&e, &L, err, sizeof err), 0);
    assert_int_equal(edit_set(&e, "W_K[1][0]=0.5"), 0);
    assert_int_equal(edit_cycle_mask(&e), 0);         /* causal → padding */
    assert_int_equal(edit_cycle_mask(&e), 0);         /* → none: the masked step is gone */
    assert_int_equal(edit_remove_token(&e, 0, 1), 0); /* weights_1[1][1] is gone */
    Lesson out;
    int dropped = 0;
    assert_int_equal(edit_saveable(&e, &out, &dropped, err, sizeof err), 0);
    assert_int_equal(dropped, 2);
    assert_int_equal(out.n_narration, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(lesson_write_json(f, &out), 0);
    fclose(f);
    assert_null(strstr(buf, "\"W_Q\""));
    assert_non_null(strstr(buf, "\"W_K\""));
    assert_null(strstr(buf, "\"X\"")); /* the first row of the seed's X is the seed's X for one token */
    Lesson back;
    LessonError le;
    if (lesson_parse(&back, buf, len, "saved.json", &le) != 0) fail_msg("%s\n%s", le.msg, buf);
    AttnTrace *t = engine(&back);
    assert_traces_identical("written and parsed again", t, e.trace);
    attn_trace_destroy(t);
    free(buf);
    lesson_free(&back);
    lesson_free(&out);
    edit_free(&e);
    lesson_free(&L);
}

/* Edit mode's keys, as the window sends them. */
static void test_editor_keys(void **state)
{
    (void)state;
    Lesson L;
    parse(&L, LESSON_DOT);
    Pair *p = pair_make(&L);
    View *v = &p->v;
    Edit *e = &p->e;
    goto_name(v, "scores_1");
    assert_int_equal(editor_start(v, e, -1, 0, 0), -1); /* computed numbers only */
    assert_false(v->edit_mode);
    assert_int_equal(v->notice_what, VS_EDIT_NOTHING);
    goto_name(v, "Q");
    int mats[8];
    assert_int_equal(editor_targets(v, e, mats, 8), 3);
    assert_int_equal(mats[0], LESSON_MAT_X);
    assert_int_equal(mats[1], LESSON_MAT_W_Q);
    assert_int_equal(mats[2], LESSON_MAT_b_Q);
    assert_int_equal(editor_start(v, e, -1, 0, 0), 0);
    assert_int_equal(v->cur_mat, LESSON_MAT_X);
    editor_key(v, e, EDITOR_DOWN);
    editor_key(v, e, EDITOR_RIGHT);
    editor_key(v, e, EDITOR_RIGHT);
    for (int i = 0; i < 9; i++) editor_key(v, e, EDITOR_DOWN); /* clamped at the last row */
    assert_int_equal(v->cur_row, 2);
    assert_int_equal(v->cur_col, 2);
    char name[64];
    editor_cursor_name(v, name, sizeof name);
    assert_string_equal(name, "X[跑步, 3]"); /* as drawn: row 跑步, the column labelled 3 */
    /* typing a number, Enter */
    assert_int_equal(editor_type(v, "q"), 0); /* not part of a number */
    assert_int_equal(editor_type(v, "-"), 1);
    assert_int_equal(editor_type(v, "2.5"), 1);
    assert_int_equal(v->typing, EDITOR_TYPING_NUMBER);
    assert_int_equal(editor_key(v, e, EDITOR_ENTER), 1);
    assert_true(edit_cell(e, LESSON_MAT_X, 2, 2) == -2.5);
    assert_int_equal(v->typing, EDITOR_TYPING_NONE);
    assert_string_equal(view_current(v)->name, "Q");
    assert_non_null(v->edit_before); /* Q animates from its old numbers */
    /* a refused value: the notice says why, the text stays to be corrected */
    editor_type(v, "1e");
    assert_int_equal(editor_key(v, e, EDITOR_ENTER), 1);
    assert_true(v->notice_is_error);
    assert_string_equal(v->typed, "1e");
    editor_key(v, e, EDITOR_BACKSPACE);
    editor_key(v, e, EDITOR_ENTER);
    assert_true(edit_cell(e, LESSON_MAT_X, 2, 2) == 1);
    /* Esc drops the typed text, then leaves edit mode */
    editor_type(v, "7");
    editor_key(v, e, EDITOR_ESCAPE);
    assert_true(v->edit_mode);
    assert_string_equal(v->typed, "");
    /* Tab: the next matrix */
    editor_key(v, e, EDITOR_NEXT_MATRIX);
    assert_int_equal(v->cur_mat, LESSON_MAT_W_Q);
    editor_key(v, e, EDITOR_NEXT_MATRIX);
    editor_key(v, e, EDITOR_NEXT_MATRIX);
    assert_int_equal(v->cur_mat, LESSON_MAT_X);
    /* a drag: one undo step */
    v->cur_row = 0, v->cur_col = 0;
    double x0 = edit_cell(e, LESSON_MAT_X, 0, 0);
    for (int i = 0; i < 10; i++) assert_int_equal(editor_scrub(v, e, 3, 0), 1);
    assert_true(fabs(edit_cell(e, LESSON_MAT_X, 0, 0) - (x0 + 0.3)) < 0.011);
    assert_int_equal(editor_scrub(v, e, -1, 1), 1); /* Shift: fine */
    edit_end_scrub(e);
    assert_int_equal(edit_undo(e), 0);
    assert_true(edit_cell(e, LESSON_MAT_X, 0, 0) == x0);
    /* tokens on X */
    v->cur_row = 2;
    editor_key(v, e, EDITOR_ADD_TOKEN);
    assert_int_equal(v->typing, EDITOR_TYPING_ADD);
    editor_type(v, "很");
    editor_key(v, e, EDITOR_ENTER);
    assert_int_equal(edit_lesson(e)->n_tokens, 4);
    assert_string_equal(edit_lesson(e)->tokens[3], "很");
    assert_int_equal(v->cur_row, 3);
    editor_key(v, e, EDITOR_RENAME);
    assert_string_equal(v->typed, "很");
    editor_key(v, e, EDITOR_BACKSPACE);
    editor_type(v, "真");
    editor_key(v, e, EDITOR_ENTER);
    assert_string_equal(edit_lesson(e)->tokens[3], "真");
    editor_key(v, e, EDITOR_REMOVE_TOKEN);
    assert_int_equal(edit_lesson(e)->n_tokens, 3);
    assert_int_equal(v->cur_row, 2);
    /* the mask on a softmax step: Enter toggles */
    goto_name(v, "weights_1");
    editor_follow(v, e);
    assert_int_equal(v->cur_mat, EDIT_MASK);
    v->cur_row = 0, v->cur_col = 2;
    editor_key(v, e, EDITOR_ENTER);
    assert_int_equal(edit_lesson(e)->cfg.mask_kind, ATTN_MASK_MATRIX);
    assert_true(view_current(v)->data[2] == 0);
    assert_string_equal(view_current(v)->name, "weights_1");
    editor_key(v, e, EDITOR_ADD_TOKEN); /* not a token matrix */
    assert_int_equal(v->notice_what, VS_EDIT_TOKENS_WHERE);
    editor_key(v, e, EDITOR_ESCAPE);
    assert_false(v->edit_mode);
    assert_int_equal(editor_key(v, e, EDITOR_DOWN), 0);
    pair_free(p);
    lesson_free(&L);
}

/* Every field that shapes the trace survives the writer: mask order and
 * fill, padding, scale by value, cross-attention, biases, no W_O. */
static void test_write_read_fields(void **state)
{
    (void)state;
    const char *const lessons[] = {
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"w1\", \"title\": {\"en\": \"W\", \"zh\": \"写\"},"
        " \"tokens\": [\"a\", \"b\", \"c\"], \"d_model\": 4, \"heads\": 2, \"seed\": 8, \"mask\": \"causal\","
        " \"mask_order\": \"mask_then_scale\", \"mask_fill\": -1e20, \"scale\": \"sqrt_dmodel\", \"W_O\": null,"
        " \"b_K\": [0.5, 0, 0, -1]}",
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"w2\", \"title\": {\"en\": \"W\"}, \"order\": 7,"
        " \"summary\": {\"en\": \"s \\\"q\\\"\"}, \"tokens\": [\"x\"], \"source_tokens\": [\"p\", \"q\"], \"d_model\": "
        "2,"
        " \"Y\": [[1, 2], [3, 4]], \"mask\": {\"padding\": [1, 0]}, \"scale\": 0.75}",
        LESSON_ADDITIVE,
        LESSON_CROSS,
    };
    for (size_t i = 0; i < sizeof lessons / sizeof lessons[0]; i++) {
        Lesson L;
        parse(&L, lessons[i]);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_int_equal(lesson_write_json(f, &L), 0);
        fclose(f);
        Lesson back;
        LessonError le;
        if (lesson_parse(&back, buf, len, "written.json", &le) != 0) fail_msg("%s\n%s", le.msg, buf);
        AttnTrace *a = engine(&L), *b = engine(&back);
        assert_traces_identical("written and read", a, b);
        assert_int_equal(back.order, L.order);
        assert_string_equal(lesson_text(&back.title, LESSON_ZH), lesson_text(&L.title, LESSON_ZH));
        if (L.summary.text[LESSON_EN]) assert_string_equal(back.summary.text[LESSON_EN], L.summary.text[LESSON_EN]);
        attn_trace_destroy(a);
        attn_trace_destroy(b);
        free(buf);
        lesson_free(&back);
        lesson_free(&L);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_matrix_dot),
        cmocka_unit_test(test_every_matrix_cross),
        cmocka_unit_test(test_every_matrix_additive),
        cmocka_unit_test(test_copy_on_first_change),
        cmocka_unit_test(test_undo_redo),
        cmocka_unit_test(test_scrub_is_one_undo),
        cmocka_unit_test(test_revert),
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_mask_toggle),
        cmocka_unit_test(test_mask_padding_and_cycle),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_tokens_mask_follows),
        cmocka_unit_test(test_token_limit),
        cmocka_unit_test(test_causal_cross_any_lengths),
        cmocka_unit_test(test_history_holds_what_changed),
        cmocka_unit_test(test_history_bound),
        cmocka_unit_test(test_saved_ids),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_bad_edits),
        cmocka_unit_test(test_view_follows),
        cmocka_unit_test(test_narration_stays_true),
        cmocka_unit_test(test_when_conditions),
        cmocka_unit_test(test_texts_about_the_lesson_before),
        cmocka_unit_test(test_about_the_lesson_before_said_once),
        cmocka_unit_test(test_mend_an_overflow),
        cmocka_unit_test(test_save_round_trip),
        cmocka_unit_test(test_write_read_fields),
        cmocka_unit_test(test_editor_keys),
        cmocka_unit_test(test_save_generated_and_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
