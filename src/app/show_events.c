/* show_events.c: the window's events, one handler per kind, each turning
 * an SDL event into View calls (show.h; the rules are in view_input.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "app.h"
#include "editor.h"
#include "show.h"
#include "view_input.h"

/* ---- the lesson, replaceable at run time ---- */

/* After an edit: the view's traces follow, and the cursor stays on the step. */
static int follow_edit(void *user, char *err, size_t errlen)
{
    ShowLesson *l = user;
    if (view_recompute(&l->view, err, errlen) != 0) return -1;
    l->changes++;
    l->view.edited = edit_modified(l->edit);
    editor_follow(&l->view, l->edit);
    return 0;
}

void show_lesson_bind(ShowLesson *l)
{
    l->edit->recompute = follow_edit;
    l->edit->user = l;
}

int show_lesson_load(ShowLesson *out, const char *path, const AppEdits *edits, int background, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    Lesson *L = calloc(1, sizeof *L);
    char *copy = strdup(path);
    if (!L || !copy) {
        free(L);
        free(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    LessonError le;
    if (lesson_load(L, path, &le) != 0) {
        snprintf(err, errlen, "%s", le.msg);
        free(L);
        free(copy);
        return -1;
    }
    Edit *ed = calloc(1, sizeof *ed);
    if (!ed || (edits && app_apply_edits(edits, L) != 0) || edit_init_copy(ed, L, err, errlen) != 0) {
        if (!ed) snprintf(err, errlen, "out of memory"); /* a refused edit has printed its own line */
        free(ed);
        lesson_free(L);
        free(L);
        free(copy);
        return -1;
    }
    if ((background ? view_init_background : view_init)(&out->view, edit_lesson(ed), err, errlen) != 0) {
        edit_free(ed);
        free(ed);
        lesson_free(L);
        free(L);
        free(copy);
        return -1;
    }
    out->lesson = L;
    out->edit = ed;
    out->path = copy;
    show_lesson_bind(out);
    return 0;
}

int show_lesson_open(Show *s)
{
    const ShowOptions *o = &s->opt;
    char *path = app_resolve_lesson(o->lesson ? o->lesson : LESSON_DEFAULT_ID);
    if (!path) return APP_USAGE;
    char err[1200] = "";
    int rc = show_lesson_load(&s->cur, path, &o->edits, 1, err, sizeof err);
    free(path);
    if (rc != 0) {
        if (err[0]) app_print_line(stderr, err);
        return APP_USAGE;
    }
    s->se.edit = s->cur.edit;
    s->se.save_dir = o->save_dir ? o->save_dir : "attnviz-lessons";
    clock_gettime(CLOCK_REALTIME, &s->se.started);
    View *v = &s->cur.view;
    if (o->mode == VIEW_COMPARE && view_compare_refused(v, s->cur.path, err, sizeof err))
        return app_cmd_fail("show", APP_USAGE, "%s", err);
    if (o->lang >= 0) view_set_lang(v, (LessonLang)o->lang);
    view_set_theme(v, (ViewTheme)o->theme);
    view_set_speed(v, o->speed);
    view_set_text_scale(v, o->text_scale);
    view_set_big_text(v, o->big_text || o->presenter); /* the class reads the caption, the presenter the rest */
    view_set_mode(v, (ViewMode)o->mode);
    view_set_weight_scale(v, (ViewWeightScale)o->weight_scale);
    view_set_notation(v, (ViewNotation)o->notation);
    if (o->head > view_head_count(v))
        return app_refuse_range("show", "--head", "a head", 1, view_head_count(v), o->head);
    if (o->step >= view_step_count(v))
        return app_refuse_range("show", "--step", "a step", 1, view_step_count(v), view_step_ordinal(o->step));
    if (o->head) view_set_head(v, o->head);
    if (o->step >= 0) view_goto(v, o->step);
    if (!o->autoplay) view_finish(v);
    view_set_playing(v, o->autoplay);
    view_set_fullscreen(v, o->fullscreen);
    show_recovery_open(s);
    return APP_OK;
}

void show_lesson_free(ShowLesson *l)
{
    view_free(&l->view);
    edit_free(l->edit);
    free(l->edit);
    if (l->lesson) lesson_free(l->lesson);
    free(l->lesson);
    free(l->path);
    memset(l, 0, sizeof *l);
}

/* Replaces the lesson with the one at path, keeping the language, theme,
 * sizes, speed and autoplay, and for the same file the mode, head and step.
 * On failure the old lesson stays and the error is shown on screen. */
static void reload(Show *s, const char *path)
{
    ShowLesson next;
    char err[1200] = "";
    View *o = &s->cur.view;
    /* computed before the old lesson goes: one whose numbers overflow is
     * refused with a notice, and the old one stays */
    if (show_lesson_load(&next, path, NULL, 0, err, sizeof err) != 0) {
        view_set_notice(o, VS_NOTICE_RELOAD_FAILED, err, 1);
        app_fail(APP_OK, "%s", err);
        return;
    }
    View *n = &next.view;
    view_set_lang(n, o->lang);
    view_set_theme(n, o->theme);
    view_set_weight_scale(n, o->weight_scale);
    view_set_notation(n, o->notation);
    view_set_text_scale(n, o->text_scale);
    view_set_big_text(n, o->big_text);
    view_set_speed(n, o->speed);
    view_set_playing(n, o->playing);
    view_set_fullscreen(n, o->fullscreen);
    if (s->cur.path && strcmp(s->cur.path, path) == 0) {
        view_set_mode(n, o->mode);
        view_set_head(n, o->head <= view_head_count(n) ? o->head : 1);
        const AttnStep *m = attn_trace_find_name(view_trace(n), view_current(o)->name);
        if (m) {
            view_goto(n, attn_trace_index(view_trace(n), m));
            view_finish(n);
        }
    }
    view_set_notice(n, VS_NOTICE_RELOADED, path, 0);
    show_lesson_free(&s->cur);
    s->cur = next;
    show_lesson_bind(&s->cur);
    s->se.edit = s->cur.edit;
    show_window_title(&s->w, &s->cur);
    if (s->pres.w.win) show_window_title(&s->pres.w, &s->cur);
    /* the edits of the lesson before stay in its recovery file, if unsaved */
    show_recovery_open(s);
}

/* ---- keys ---- */

/* The View's name for a key (view_input.h): a character, or a ViewKey. */
static int view_key_of(const SDL_Keysym *k)
{
    switch (k->sym) {
    case SDLK_RIGHT:
        return VIEW_KEY_RIGHT;
    case SDLK_LEFT:
        return VIEW_KEY_LEFT;
    case SDLK_UP:
        return VIEW_KEY_UP;
    case SDLK_DOWN:
        return VIEW_KEY_DOWN;
    case SDLK_PAGEUP:
        return VIEW_KEY_PAGE_UP;
    case SDLK_PAGEDOWN:
        return VIEW_KEY_PAGE_DOWN;
    case SDLK_HOME:
        return VIEW_KEY_HOME;
    case SDLK_END:
        return VIEW_KEY_END;
    case SDLK_BACKSPACE:
        return VIEW_KEY_BACKSPACE;
    case SDLK_TAB:
        return VIEW_KEY_TAB;
    case SDLK_ESCAPE:
        return VIEW_KEY_ESCAPE;
    case SDLK_F1:
        return VIEW_KEY_F1;
    case SDLK_F11:
        return VIEW_KEY_F11;
    case SDLK_F5:
        return VIEW_KEY_F5;
    case SDLK_KP_PLUS:
        return '+';
    case SDLK_KP_MINUS:
        return '-';
    case SDLK_SLASH:
        return (k->mod & KMOD_SHIFT) ? '?' : '/';
    default:
        if (k->sym >= SDLK_KP_1 && k->sym <= SDLK_KP_9) return '1' + (int)(k->sym - SDLK_KP_1);
        /* SDL's keycode of a printable key is its character */
        if (k->sym >= ' ' && k->sym < 0x7F) return (int)k->sym;
        return VIEW_KEY_NONE;
    }
}

/* The View knows whether the window is fullscreen (Esc then leaves it). */
static void follow_fullscreen(Show *s)
{
    view_set_fullscreen(&s->cur.view, (SDL_GetWindowFlags(s->w.win) & SDL_WINDOW_FULLSCREEN) != 0);
}

static void on_key(Show *s, const SDL_KeyboardEvent *e)
{
    if (show_recovery_key(s, e)) return;                /* Y or D: the edits of last time */
    if (show_edit_key(&s->se, &s->cur.view, e)) return; /* edit mode, and the edit keys (show_edit.h) */
    unsigned req = view_key(&s->cur.view, view_key_of(&e->keysym));
    if (req & VIEW_REQ_SAVE) s->save_request = 1;
    if (req & VIEW_REQ_TITLE) {
        show_window_title(&s->w, &s->cur);
        if (s->pres.w.win) show_window_title(&s->pres.w, &s->cur);
    }
    if (req & VIEW_REQ_CLOCK) show_presenter_clock_reset(&s->pres);
#ifdef __EMSCRIPTEN__
    /* in a browser the page is the window: it goes fullscreen, and its tab,
     * not Q or Esc, closes it (src/app/web/show_web.c) */
    if (req & VIEW_REQ_QUIT) show_web_fullscreen(0);
    if (req & VIEW_REQ_FULLSCREEN) show_web_fullscreen(-1);
#else
    if (req & VIEW_REQ_QUIT) s->running = 0;
    if (req & VIEW_REQ_FULLSCREEN) {
        Uint32 fl = SDL_GetWindowFlags(s->w.win);
        SDL_SetWindowFullscreen(s->w.win, (fl & SDL_WINDOW_FULLSCREEN_DESKTOP) ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
        follow_fullscreen(s);
    }
#endif
    if (req & VIEW_REQ_RELOAD) reload(s, s->cur.path);
    if ((req & VIEW_REQ_INK_CLEAR) && ink_clear(&s->ink, s->cur.view.mode, s->cur.view.step)) s->must_draw = 1;
}

/* ---- the mouse ---- */

/* What is under point (x, y) of window `win`: the point in the frame's
 * pixels (high-DPI) and the hit there. The presenter's window shows the
 * frame small: a point over it is that point of the frame. 0 when the
 * point is over no frame (the presenter's narration, its next step). */
static int target_at(Show *s, Uint32 win, int *x, int *y, ViewTarget *hit)
{
    memset(hit, 0, sizeof *hit);
    hit->kind = VIEW_TARGET_NONE;
    if (show_presenter_window(&s->pres, win)) {
        if (!show_presenter_point(&s->pres, &s->w.scr, x, y)) return 0;
    } else {
        int ww, wh;
        SDL_GetWindowSize(s->w.win, &ww, &wh);
        if (ww > 0 && wh > 0) {
            *x = (int)((long)*x * s->w.scr.w / ww);
            *y = (int)((long)*y * s->w.scr.h / wh);
        }
    }
    render_hit_test(s->w.rc, &s->cur.view, *x, *y, hit);
    return 1;
}

static void on_mouse(Show *s, const SDL_Event *e)
{
    View *v = &s->cur.view;
    ViewTarget hit;
    int x, y;
    switch (e->type) {
    case SDL_MOUSEMOTION:
        x = e->motion.x, y = e->motion.y;
        if (!target_at(s, e->motion.windowID, &x, &y, &hit)) {
            if (s->pointer.in) s->must_draw = 1; /* the laser's dot leaves the frame with the pointer */
            s->pointer.in = 0;
            break;
        }
        if (show_ink_mouse(s, e, x, y)) break;
        if (show_edit_mouse_motion(&s->se, v, y, (SDL_GetModState() & KMOD_SHIFT) != 0)) break;
        /* a drag pans by whole cells of the size render draws at 720 pixels: 40 */
        view_pointer_move(v, &hit, x, y, 40.0f * (float)s->w.scr.h / 720.0f);
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.button != SDL_BUTTON_LEFT) break;
        x = e->button.x, y = e->button.y;
        if (!target_at(s, e->button.windowID, &x, &y, &hit)) break;
        if (show_ink_mouse(s, e, x, y)) break;
        if (e->button.which == SDL_TOUCH_MOUSEID) s->tap = (ShowTap){1, e->button.x, e->button.y, e->button.timestamp};
        if (show_edit_mouse_down(&s->se, v, &hit, e->button.clicks, y)) break;
        view_pointer_press(v, &hit, x, y);
        break;
    case SDL_MOUSEBUTTONUP: /* wherever it is: a drag ends */
        x = e->button.x, y = e->button.y;
        target_at(s, e->button.windowID, &x, &y, &hit);
        if (show_ink_mouse(s, e, x, y)) break;
        show_edit_mouse_up(&s->se, v);
        view_pointer_release(v);
        /* a tap on a touch screen: on a cell it has shown the cell's
         * derivation (the touch moved the pointer there), on a label, the
         * timeline or a head it has done what a click does; anywhere else
         * it steps forward, as → does */
        if (e->button.which == SDL_TOUCH_MOUSEID && s->tap.down) {
            x = e->button.x, y = e->button.y;
            int still = abs(x - s->tap.x) < 16 && abs(y - s->tap.y) < 16 && e->button.timestamp - s->tap.ms < 500;
            s->tap.down = 0;
            target_at(s, e->button.windowID, &x, &y, &hit);
            if (still && hit.kind == VIEW_TARGET_NONE) view_key(v, VIEW_KEY_RIGHT);
        }
        break;
    case SDL_MOUSEWHEEL:
        SDL_GetMouseState(&x, &y);
        if (target_at(s, e->wheel.windowID, &x, &y, &hit)) view_wheel(v, &hit, e->wheel.y);
        break;
    default:
        break;
    }
}

/* ---- the window ---- */

static void on_window(Show *s, const SDL_WindowEvent *e)
{
    int presenter = show_presenter_window(&s->pres, e->windowID);
    switch (e->event) {
    case SDL_WINDOWEVENT_EXPOSED:
    case SDL_WINDOWEVENT_SHOWN:
    case SDL_WINDOWEVENT_SIZE_CHANGED:
    case SDL_WINDOWEVENT_RESTORED:
    case SDL_WINDOWEVENT_MAXIMIZED:
        /* the window's pixels are gone or stale: draw and send everything */
        if (presenter) {
            show_screen_invalidate(&s->pres.w.scr);
            s->pres.must_draw = 1;
            break;
        }
        show_screen_invalidate(&s->w.scr);
        s->must_draw = 1;
        follow_fullscreen(s);
        break;
    case SDL_WINDOWEVENT_LEAVE: /* the spotlight and the laser follow the pointer out */
        s->pointer.in = 0;
        s->must_draw = 1;
        break;
    case SDL_WINDOWEVENT_CLOSE: /* either window's */
        /* with unsaved edits the first close says so, and the second quits
         * (SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE is off: a signal's SDL_QUIT
         * still quits at once, the edits being in the recovery file) */
        if (s->cur.view.unsaved && !view_quit_confirmed(&s->cur.view))
            view_set_notice(&s->cur.view, VS_NOTICE_UNSAVED_CLOSE, NULL, 1);
        else
            s->running = 0;
        break;
    default:
        break;
    }
}

static void on_drop(Show *s, SDL_DropEvent *e)
{
    if (e->file) reload(s, e->file);
    SDL_free(e->file);
}

void show_on_event(Show *s, SDL_Event *e)
{
    switch (e->type) {
    case SDL_QUIT:
        s->running = 0;
        break;
    case SDL_WINDOWEVENT:
        on_window(s, &e->window);
        break;
    case SDL_DROPFILE:
        on_drop(s, &e->drop);
        break;
    case SDL_KEYDOWN:
        on_key(s, &e->key);
        break;
    case SDL_TEXTINPUT: /* numbers and token names typed in edit mode */
        show_edit_text(&s->se, &s->cur.view, e->text.text);
        break;
    case SDL_MOUSEMOTION:
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
    case SDL_MOUSEWHEEL:
        on_mouse(s, e);
        break;
    default:
        break;
    }
}
