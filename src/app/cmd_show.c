/* cmd_show.c: `attnviz show [LESSON]`, the classroom window: its options,
 * the event loop and frame pacing. The state lives in a View (src/view),
 * what keys and the mouse do in view_input.h, and every frame is drawn by
 * render_frame (src/render); show.h lists the other parts. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "app.h"
#include "attn.h"
#include "export.h"
#include "lesson.h"
#include "render.h"
#include "show.h"
#include "view.h"

static void show_usage(FILE *out)
{
    fprintf(out,
            "usage: attnviz show [LESSON] [options]\n"
            "\n"
            "Opens the classroom window on LESSON (a lesson file, or the id of a lesson in the\n"
            "lessons folder; default: %s) and walks through every step of attention.\n"
            "\n"
            "  --size WxH         window size in pixels (default 1280x720, shrunk to fit the screen)\n"
            "  --lang en|zh       language of narration and labels (default en)\n"
            "  --theme light|dark|projector\n"
            "  --view multi|single|compare\n"
            "  --head H           the selected head\n"
            "  --step N           start at step N (the first step is 1, as in the window)\n"
            "  --weight-scale unit|row|log\n"
            "                     colours of attention weights: [0, 1] (default), each row\n"
            "                     divided by its largest weight, or log10 from 1e-4 to 1\n"
            "  --notation row|column  one token per row (Q = X·W_Q, default) or per column\n"
            "                     (Q = W_Q·X): every matrix and formula transposed\n"
            "  --speed X          animation speed factor (%.3g .. %g, default 1)\n"
            "  --text-scale X     text size factor (default 1)\n"
            "  --big-text         big text for the back row (U): the step's caption instead of its\n"
            "                     narration, the room to the matrices, no text under 1/30 of the height\n"
            "  --fullscreen       start in fullscreen\n"
            "  --presenter        two windows: the frame with a caption for the class (on the second\n"
            "                     display when there is one) and the presenter's: the frame small, the\n"
            "                     whole narration, the next step, the step number and a clock (0 restarts it)\n"
            "  --gpu              draw with SDL's accelerated renderer (default: the software\n"
            "                     renderer of `attnviz export`, sending only what changed)\n"
            "  --frames-dir DIR   where S saves frames (default ./%s)\n"
            "  --slides           S saves slides: the step, its formula and narration on the\n"
            "                     whole frame, without the status line and the timeline\n"
            "  --save-dir DIR     where Ctrl+S saves the edited lesson (default ./attnviz-lessons)\n"
            "  --set 'NAME[i][j]=VALUE'  change a number before showing (repeatable; NAME[i] for a vector)\n"
            "  --scale X          divide the scores by X (0.1·√d_k .. 10·√d_k); also --score-scale\n"
            "  --tokens 'a b c'   replace the tokens; new rows of X come from the lesson's seed\n"
            "  --autoplay         play the steps one after another\n"
            "  --quit-at-end      quit after the last step has been shown\n"
            "  --frame-stats      on exit print 'frames: N p50: X ms p99: Y ms max: Z ms' (vsync off)\n"
            "                     and 'first-frame: X ms' (process start to the first frame shown)\n"
            "\n"
            "Keys (? in the window lists them): → / Space / PageDown next, ← / PageUp back (the step\n"
            "plays backwards), Home / End, P play / pause, [ ] slower / faster, 1-9 head, Tab next head,\n"
            "M single / multi-head, C compare, L 中文 / English, T theme, W weight scale,\n"
            "N row / column notation, + / - text size, U big text, B or . black screen (pauses),\n"
            "I ink (drag to draw; strokes stay with their step), X clear the step's ink,\n"
            "G spotlight, Z laser pointer, 0 the presenter's clock from 0:00,\n"
            "F, F11 or F5 fullscreen (Esc leaves it), S save frame, R reload, ? help, Esc / Q quit\n"
            "(with unsaved edits: a notice first, then Q quits).\n"
            "Unsaved edits are kept in SAVE_DIR/.ID.attnviz-recovery.json; the next window on the\n"
            "lesson offers them: Y restores, D discards.\n"
            "Editing: E edit mode (arrows, Tab next matrix, type a number and Enter, Esc leaves; drag a\n"
            "cell up or down, Shift finer; F2 / Insert / Delete tokens on X), < > the scale, K the mask\n"
            "kind, Ctrl+Z / Ctrl+Y undo / redo, O back to the lesson as loaded, Ctrl+S save as.\n",
            LESSON_DEFAULT_ID, VIEW_SPEED_MIN, VIEW_SPEED_MAX, EXPORT_SAVE_DIR);
}

enum {
    OPT_AUTOPLAY = 1,
    OPT_QUIT_AT_END,
    OPT_FRAME_STATS,
    OPT_FULLSCREEN,
    OPT_GPU,
    OPT_SIZE,
    OPT_LANG,
    OPT_THEME,
    OPT_VIEW,
    OPT_HEAD,
    OPT_STEP,
    OPT_WEIGHT_SCALE,
    OPT_NOTATION,
    OPT_SPEED,
    OPT_TEXT_SCALE,
    OPT_BIG_TEXT,
    OPT_PRESENTER,
    OPT_FRAMES_DIR,
    OPT_SLIDES,
    OPT_SAVE_DIR,
};

static const AppOption show_options[] = {
    {"autoplay", 0, 0, OPT_AUTOPLAY},
    {"quit-at-end", 0, 0, OPT_QUIT_AT_END},
    {"frame-stats", 0, 0, OPT_FRAME_STATS},
    {"fullscreen", 0, 0, OPT_FULLSCREEN},
    {"gpu", 0, 0, OPT_GPU},
    {"size", 0, 1, OPT_SIZE},
    {"lang", 0, 1, OPT_LANG},
    {"theme", 0, 1, OPT_THEME},
    {"view", 0, 1, OPT_VIEW},
    {"head", 0, 1, OPT_HEAD},
    {"step", 0, 1, OPT_STEP},
    {"weight-scale", 0, 1, OPT_WEIGHT_SCALE},
    {"notation", 0, 1, OPT_NOTATION},
    {"speed", 0, 1, OPT_SPEED},
    {"text-scale", 0, 1, OPT_TEXT_SCALE},
    {"big-text", 0, 0, OPT_BIG_TEXT},
    {"presenter", 0, 0, OPT_PRESENTER},
    {"frames-dir", 0, 1, OPT_FRAMES_DIR},
    {"slides", 0, 0, OPT_SLIDES},
    {"save-dir", 0, 1, OPT_SAVE_DIR},
    APP_EDIT_OPTIONS,
    APP_EDIT_SCALE_OPTION,
    {0},
};

/* One option into o; 0, or -1 after the message. */
static int show_option(const AppArgs *a, int id, const char *val, ShowOptions *o)
{
    double d = 0;
    int ok = 0;
    switch (id) {
    case OPT_AUTOPLAY:
        o->autoplay = 1;
        return 0;
    case OPT_QUIT_AT_END:
        o->quit_at_end = 1;
        return 0;
    case OPT_FRAME_STATS:
        o->frame_stats = 1;
        return 0;
    case OPT_FULLSCREEN:
        o->fullscreen = 1;
        return 0;
    case OPT_GPU:
        o->gpu = 1;
        return 0;
    case OPT_SIZE:
        o->size_given = 1;
        return app_arg_size(a, val, &o->width, &o->height);
    case OPT_LANG:
        return app_arg_choice(a, val, lesson_lang_names, LESSON_LANG_COUNT, &o->lang);
    case OPT_THEME:
        return app_arg_choice(a, val, view_theme_names, VIEW_THEME_COUNT, &o->theme);
    case OPT_VIEW:
        return app_arg_choice(a, val, view_mode_names, VIEW_MODE_COUNT, &o->mode);
    case OPT_HEAD:
        return app_arg_int(a, val, 1, INT_MAX, &o->head); /* the lesson decides the last (show_lesson_open) */
    case OPT_STEP:                                        /* counted from 1, as the window counts steps */
        ok = app_arg_int(a, val, 1, INT_MAX, &o->step);
        o->step = view_step_index(o->step);
        return ok;
    case OPT_WEIGHT_SCALE:
        return app_arg_choice(a, val, view_weight_scale_names, VIEW_WEIGHTS_COUNT, &o->weight_scale);
    case OPT_NOTATION:
        return app_arg_choice(a, val, view_notation_names, VIEW_NOTATION_COUNT, &o->notation);
    case OPT_SPEED:
        return app_arg_number(a, val, VIEW_SPEED_MIN, VIEW_SPEED_MAX, &o->speed);
    case OPT_TEXT_SCALE:
        ok = app_arg_number(a, val, VIEW_TEXT_SCALE_MIN, VIEW_TEXT_SCALE_MAX, &d);
        o->text_scale = (float)d;
        return ok;
    case OPT_BIG_TEXT:
        o->big_text = 1;
        return 0;
    case OPT_PRESENTER:
#ifdef __EMSCRIPTEN__
        return app_cmd_fail("show", -1, "--presenter: a browser page has one window; open the page twice instead");
#else
        o->presenter = 1;
        return 0;
#endif
    case OPT_FRAMES_DIR:
        o->frames_dir = val;
        return app_check_output_path("show", "--frames-dir", "a folder", val);
    case OPT_SLIDES:
        o->slides = 1;
        return 0;
    case OPT_SAVE_DIR:
        o->save_dir = val;
        return app_check_output_path("show", "--save-dir", "a folder", val);
    default:
        return app_edit_arg(&o->edits, a, id, val) == 1 ? 0 : -1;
    }
}

/* 0 to go on, 1 after --help, or an APP_* error status. */
static int parse_args(int argc, char **argv, ShowOptions *o)
{
    *o = (ShowOptions){.width = 1280,
                       .height = 720,
                       .lang = -1,
                       .theme = VIEW_THEME_LIGHT,
                       .mode = VIEW_MULTI,
                       .speed = 1.0,
                       .text_scale = 1.0f,
                       .step = -1};
    AppArgs args;
    app_args_init(&args, "show", argc, argv, show_options);
    const char *val;
    for (int id; (id = app_args_next(&args, &val)) != APP_ARGS_END;) {
        if (id == APP_ARGS_HELP) {
            show_usage(stdout);
            return 1;
        } else if (id == APP_ARGS_OPERAND) {
            if (o->lesson) return app_arg_extra(&args, "one lesson", o->lesson, val);
            o->lesson = val;
        } else if (id == APP_ARGS_ERROR || show_option(&args, id, val, o) != 0) {
            return APP_USAGE;
        }
    }
    return 0;
}

/* Does the next pass of the loop draw? When the View changed, the window's
 * pixels went stale, or a frame is to be saved; and every pass of an
 * animation when measuring frame times. */
static int show_needs_frame(const Show *s)
{
    const View *v = &s->cur.view;
    if (s->must_draw || s->save_request || v->revision != s->drawn_revision) return 1;
    if (s->opt.frame_stats && view_is_busy(v)) return 1;
    int w, h;
    SDL_GetWindowSizeInPixels(s->w.win, &w, &h);
    return w != s->drawn_w || h != s->drawn_h;
}

/* S: draws the frame without the transient notice, saves it, and shows
 * what happened as the new notice (in the next frame, not in the file). */
static void save_frame(Show *s)
{
    View *v = &s->cur.view, clean;
    view_for_saving(v, &clean);
    /* the same pixels as `attnviz export`; --slides: S saves the state as a slide */
    clean.output = s->opt.slides ? VIEW_OUTPUT_SLIDE : VIEW_OUTPUT_PAPER;
    int pw, ph;
    char saved[PATH_MAX], err[EXPORT_ERR_MAX];
    s->save_request = 0;
    int drawn = show_screen_begin(&s->w.scr, s->w.rc, &pw, &ph) == 0 && render_frame(s->w.rc, &clean, pw, ph) == 0 &&
                show_ink_draw(&s->ink, &clean, s->w.scr.sdl, pw, ph) == 0; /* the step's ink, on the saved frame too */
    if (!drawn) {
        snprintf(err, sizeof err, "drawing the frame to save failed: %s", SDL_GetError());
        view_set_notice(v, VS_NOTICE_SAVE_FAILED, err, 1);
        app_fail(APP_OK, "%s", err);
    } else if (export_save_frame(s->w.scr.sdl, &clean, s->opt.frames_dir, saved, sizeof saved, err, sizeof err) == 0) {
        view_set_notice(v, VS_NOTICE_SAVED, saved, 0);
        app_fail(APP_OK, "saved %s", saved);
#ifdef __EMSCRIPTEN__
        show_web_download(saved);
#endif
    } else {
        view_set_notice(v, VS_NOTICE_SAVE_FAILED, err, 1);
        app_fail(APP_OK, "%s", err);
    }
}

/* B: the whole window black, nothing on it. 0, or -1 with SDL_GetError(). */
static int draw_black(SDL_Renderer *r)
{
    if (SDL_SetRenderDrawColor(r, 0, 0, 0, 255) != 0) return -1;
    return SDL_RenderClear(r);
}

/* Draws and shows one frame begun at t. An APP_* status. */
static int draw_frame(Show *s, double t)
{
    show_stats_begin(&s->stats);
    if (s->save_request) save_frame(s);
    View *v = &s->cur.view;
    int pw, ph;
    if (show_screen_begin(&s->w.scr, s->w.rc, &pw, &ph) != 0 ||
        (v->black ? draw_black(s->w.scr.sdl)
                  : render_frame(s->w.rc, v, pw, ph) || show_ink_draw(&s->ink, v, s->w.scr.sdl, pw, ph) ||
                        show_pointer_draw(&s->pointer, v, s->w.scr.sdl, pw, ph)) != 0)
        return app_fail(APP_RUNTIME, "drawing failed: %s", SDL_GetError());
    if (show_presenter_capture(&s->pres, &s->w.scr) != 0)
        return app_fail(APP_RUNTIME, "drawing failed: %s", SDL_GetError());
    double t_drawn = attn_clock_seconds();
    unsigned long long sent0 = s->w.scr.sent_px;
    if (show_screen_present(&s->w.scr) != 0)
        return app_fail(APP_RUNTIME, "showing the frame failed: %s", SDL_GetError());
    show_stats_frame(&s->stats, &s->w, v, t, t_drawn, s->w.scr.sent_px - sent0);
    s->must_draw = 0;
    s->frames_drawn++;
    s->drawn_revision = v->revision;
    SDL_GetWindowSizeInPixels(s->w.win, &s->drawn_w, &s->drawn_h);
    return APP_OK;
}

/* Frame pacing: without vsync (software renderers, Xvfb) an animation runs
 * at 60 frames a second; when measuring, as fast as it can. */
static void pace(const Show *s, double t)
{
    double spent = attn_clock_seconds() - t;
    if (!s->opt.frame_stats && spent < 1.0 / 60.0 && view_is_busy(&s->cur.view))
        SDL_Delay((Uint32)((1.0 / 60.0 - spent) * 1000.0));
}

int show_idle(const Show *s)
{
    return !show_needs_frame(s) && !show_presenter_due(s) && !view_is_busy(&s->cur.view) &&
           !view_preparing(&s->cur.view);
}

/* How long an idle loop may sleep: for ever, but 20 ms while the trace is
 * computed and until the presenter's clock shows its next second. */
static int wait_ms(const Show *s)
{
    int ms = view_preparing(&s->cur.view) ? 20 : -1, clock = show_presenter_wait_ms(&s->pres);
    return clock >= 0 && (ms < 0 || clock < ms) ? clock : ms;
}

int show_pass(Show *s, int may_wait)
{
    View *v = &s->cur.view;
    SDL_Event e;
    int idle = !show_needs_frame(s) && !show_presenter_due(s) && !view_is_busy(v);
    /* nothing moves: sleep until something happens, or, while the trace is
     * computed, look at it every 20 ms */
    int have = idle && may_wait ? show_wait_event(&s->w, &e, wait_ms(s)) : SDL_PollEvent(&e);
    if (idle) s->last_t = attn_clock_seconds(); /* an animation that starts now starts from 0 */
    for (; have && s->running; have = SDL_PollEvent(&e)) show_on_event(s, &e);
    if (!s->running) return APP_OK;
    show_edit_flush(&s->se, v); /* a drag's motion since the last frame, as one change */
    show_edit_tell(&s->se, v);
    show_recovery_follow(s);
    char err[1200];
    if (view_poll(v, err, sizeof err) != 0) return app_fail(APP_USAGE, "%s", err);

    double t = attn_clock_seconds();
    double dt = t - s->last_t > 0.25 ? 0.25 : t - s->last_t; /* after a stall, do not skip whole steps */
    s->last_t = t;
    if (view_is_busy(v)) view_advance(v, dt);
    int frame = show_needs_frame(s);
    if (!frame && !show_presenter_due(s)) {
        if (s->opt.quit_at_end && view_at_end(v)) s->running = 0; /* the end has been shown */
        /* autoplay's dwell changes nothing on screen: wait instead of
         * drawing the same frame again (and wake for input at once) */
        else if (may_wait && view_is_busy(v))
            show_wait_event(&s->w, NULL, 20);
        return APP_OK;
    }
    int st = frame ? draw_frame(s, t) : APP_OK;
    /* after the audience's frame, which the presenter's shows */
    if (st == APP_OK && show_presenter_due(s)) st = show_presenter_draw(s);
    if (st == APP_OK && may_wait) pace(s, t);
    return st;
}

int show_end(Show *s, int status)
{
    show_stats_close(&s->stats, s->running || status == APP_OK);
    show_presenter_close(&s->pres);
    show_window_close(&s->w);
    show_lesson_free(&s->cur);
    ink_free(&s->ink);
    free(s);
    return status;
}

int cmd_show(int argc, char **argv)
{
    Show *s = calloc(1, sizeof *s); /* on the heap: in a browser the loop outlives this call */
    if (!s) return app_fail(APP_RUNTIME, "out of memory");
    double t_start = attn_clock_seconds();
    int st = parse_args(argc, argv, &s->opt);
    if (st != 0) {
        free(s);
        return st == 1 ? APP_OK : st;
    }
    show_stats_open(&s->stats, s->opt.frame_stats, t_start);
    show_stats_mark(&s->stats, "options read");
    st = show_lesson_open(s);
    show_stats_mark(&s->stats, "lesson open");
    if (st == APP_OK)
        st = show_window_open(&s->w, s->opt.presenter ? SHOW_ROLE_AUDIENCE : SHOW_ROLE_FRAME, &s->opt, &s->cur);
    if (st == APP_OK && s->opt.presenter) st = show_presenter_open(s);
    show_stats_mark(&s->stats, "window open");
    if (st == APP_OK) {
        s->running = 1;
        s->must_draw = 1;
        s->last_t = attn_clock_seconds();
#ifdef __EMSCRIPTEN__
        show_web_run(s); /* does not return: the browser runs the passes (src/app/web/show_web.c) */
#endif
        while (s->running && st == APP_OK) st = show_pass(s, 1);
    }
    return show_end(s, st);
}
