/* show_edit.c: the window's edit keys and mouse: turns SDL events into calls
 * of the edit model (src/view/edit.h) and of edit mode (src/view/editor.h).
 * What a key does lives there; this file only decides which key is which,
 * and saves (Ctrl+S). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "app.h"
#include "edit.h"
#include "editor.h"
#include "lesson.h"
#include "render.h"
#include "show.h"
#include "show_edit.h"
#include "view.h"

/* The matrix a drawn step is, for the cursor: the lesson's own matrices,
 * and the mask on masked and softmax steps; -1 for computed steps. */
static int hit_matrix(const AttnTrace *t, int step)
{
    const AttnStep *s = &t->steps[step];
    if (s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX) return EDIT_MASK;
    return lesson_matrix_of_step(s);
}

static void note_refusal(View *v, const Edit *e)
{
    view_set_notice(v, VS_NOTICE_REFUSED, e->msg, 1);
}

void show_edit_save(ShowEdit *se, View *v)
{
    Lesson out;
    int dropped = 0;
    char err[1024], path[4096];
    if (edit_saveable(se->edit, &out, &dropped, err, sizeof err) != 0 ||
        lesson_save_new(&out, se->save_dir, path, sizeof path, err, sizeof err) != 0) {
        if (out.id) lesson_free(&out);
        view_set_notice(v, VS_NOTICE_REFUSED, err, 1);
        app_fail(APP_OK, "save as: %s", err); /* escaped: the folder's name is the user's */
        return;
    }
    se->saves++;
    view_set_notice(v, dropped ? VS_SAVED_DROPPED : VS_SAVED_AS, path, 0);
    fputs("attnviz: saved as ", stdout);
    app_print_line(stdout, path);
    /* what a save killed part-way left beside it */
    int swept = lesson_remove_stale_saves(se->save_dir, &se->started);
    if (swept) {
        printf("attnviz: removed %d temporar%s of a save that did not finish from ", swept, swept == 1 ? "y" : "ies");
        app_print_line(stdout, se->save_dir);
    }
    fflush(stdout);
#ifdef __EMSCRIPTEN__
    show_web_download(path); /* the page's memory is gone with the page */
#endif
    lesson_free(&out);
}

int show_edit_key(ShowEdit *se, View *v, const SDL_KeyboardEvent *ev)
{
    SDL_Keycode k = ev->keysym.sym;
    Uint16 mod = ev->keysym.mod;
    int ctrl = (mod & KMOD_CTRL) != 0, shift = (mod & KMOD_SHIFT) != 0;
    Edit *e = se->edit;
    if (ctrl && (k == SDLK_z || k == SDLK_y)) {
        int redo = k == SDLK_y || shift;
        if ((redo ? edit_redo(e) : edit_undo(e)) != 0) note_refusal(v, e);
        editor_follow(v, e);
        return 1;
    }
    if (ctrl && k == SDLK_s) {
        show_edit_save(se, v);
        return 1;
    }
    if (ctrl) return 0;
    /* typing a token's name: every key is text */
    if (v->edit_mode && (v->typing == EDITOR_TYPING_RENAME || v->typing == EDITOR_TYPING_ADD)) {
        if (k == SDLK_RETURN || k == SDLK_KP_ENTER) editor_key(v, e, EDITOR_ENTER);
        if (k == SDLK_ESCAPE) editor_key(v, e, EDITOR_ESCAPE);
        if (k == SDLK_BACKSPACE) editor_key(v, e, EDITOR_BACKSPACE);
        return 1;
    }
    if (k == SDLK_LESS || k == SDLK_GREATER || (shift && (k == SDLK_COMMA || k == SDLK_PERIOD))) {
        int up = k == SDLK_GREATER || k == SDLK_PERIOD;
        if (edit_step_scale(e, up ? +1 : -1) != 0) note_refusal(v, e);
        se->swallow_text = 1; /* the '<' or '>' that follows as text */
        return 1;
    }
    if (k == SDLK_k) {
        static const int said[] = {[ATTN_MASK_NONE] = VS_NOTICE_MASK_NONE,
                                   [ATTN_MASK_CAUSAL] = VS_NOTICE_MASK_CAUSAL,
                                   [ATTN_MASK_PADDING] = VS_NOTICE_MASK_PADDING,
                                   [ATTN_MASK_MATRIX] = VS_NOTICE_MASK_NONE};
        if (edit_cycle_mask(e) != 0)
            note_refusal(v, e);
        else
            view_set_notice(v, said[edit_lesson(e)->cfg.mask_kind], NULL, 0);
        editor_follow(v, e);
        se->swallow_text = 1;
        return 1;
    }
    if (k == SDLK_o) {
        if (edit_revert(e) != 0) note_refusal(v, e);
        editor_follow(v, e);
        se->swallow_text = 1;
        return 1;
    }
    if (!v->edit_mode) {
        if (k != SDLK_e) return 0;
        int mat = -1;
        if (v->hover_step >= 0 && v->hover_trace == view_trace(v)) mat = hit_matrix(v->hover_trace, v->hover_step);
        editor_start(v, e, mat, v->hover_row, v->hover_col);
        se->swallow_text = 1; /* the 'e' that follows as text is not a number */
        return 1;
    }
    static const struct {
        SDL_Keycode k;
        EditorKey ek;
    } keys[] = {
        {SDLK_UP, EDITOR_UP},          {SDLK_DOWN, EDITOR_DOWN},        {SDLK_LEFT, EDITOR_LEFT},
        {SDLK_RIGHT, EDITOR_RIGHT},    {SDLK_TAB, EDITOR_NEXT_MATRIX},  {SDLK_RETURN, EDITOR_ENTER},
        {SDLK_KP_ENTER, EDITOR_ENTER}, {SDLK_ESCAPE, EDITOR_ESCAPE},    {SDLK_BACKSPACE, EDITOR_BACKSPACE},
        {SDLK_F2, EDITOR_RENAME},      {SDLK_INSERT, EDITOR_ADD_TOKEN}, {SDLK_DELETE, EDITOR_REMOVE_TOKEN},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].k == k) {
            editor_key(v, e, keys[i].ek);
            return 1;
        }
    /* F11, F1 and ? keep working; every other key is text in edit mode
     * (digits are not heads, '-' is not the text size) */
    return !(k == SDLK_F11 || k == SDLK_F5 || k == SDLK_F1 || k == SDLK_QUESTION || (k == SDLK_SLASH && shift));
}

int show_edit_text(ShowEdit *se, View *v, const char *text)
{
    if (se->swallow_text) {
        se->swallow_text = 0;
        return 1;
    }
    return editor_type(v, text);
}

int show_edit_mouse_down(ShowEdit *se, View *v, const RenderHit *hit, int clicks, int y)
{
    if (hit->kind != RENDER_HIT_CELL || hit->trace != view_trace(v)) return 0;
    int mat = hit_matrix(hit->trace, hit->step);
    if (mat < 0) return 0;
    if (!v->edit_mode) {
        if (clicks < 2) return 0;
        return editor_start(v, se->edit, mat, hit->row, hit->col) == 0;
    }
    int mats[16], n = editor_targets(v, se->edit, mats, 16), ok = 0;
    for (int i = 0; i < n; i++) ok |= mats[i] == mat;
    if (!ok) return 0;
    v->cur_mat = mat;
    v->cur_row = hit->row;
    v->cur_col = hit->col;
    view_touch(v);
    if (mat == EDIT_MASK) {
        editor_key(v, se->edit, EDITOR_ENTER); /* a click toggles a mask cell */
        return 1;
    }
    se->scrubbing = 1;
    se->scrub_y = y;
    return 1;
}

int show_edit_mouse_motion(ShowEdit *se, View *v, int y, int fine)
{
    (void)v;
    if (!se->scrubbing) return 0;
    se->pending_dy += se->scrub_y - y; /* up: larger */
    se->pending_fine = fine;
    se->scrub_y = y;
    return 1;
}

int show_edit_flush(ShowEdit *se, View *v)
{
    if (!se->pending_dy) return 0;
    editor_scrub(v, se->edit, se->pending_dy, se->pending_fine);
    se->pending_dy = 0;
    return 1;
}

void show_edit_tell(ShowEdit *se, View *v)
{
    Edit *e = se->edit;
    if (!e->forgotten) return;
    char n[16];
    snprintf(n, sizeof n, "%d", e->forgotten);
    view_set_notice(v, VS_NOTICE_HISTORY_FULL, n, 0);
    e->forgotten = 0;
}

int show_edit_mouse_up(ShowEdit *se, View *v)
{
    if (!se->scrubbing) return 0;
    show_edit_flush(se, v);
    se->scrubbing = 0;
    edit_end_scrub(se->edit);
    return 1;
}
