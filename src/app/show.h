/* show.h: the parts of `attnviz show`, the classroom window.
 *
 *   cmd_show.c     options, the event loop and frame pacing
 *   show_window.c  opening and closing SDL, the window, its screen and the
 *                  render context, on one cleanup path; waiting for events
 *   show_events.c  one handler per kind of event (keys, mouse, window, a
 *                  dropped file), each turning the event into View calls
 *                  (view_input.h holds the rules); loading and reloading
 *   show_stats.c   --frame-stats and ATTNVIZ_FRAME_LOG
 *   show_recovery.c unsaved edits kept in a recovery file, offered again
 *   show_ink.c     ink, the spotlight and the laser pointer over the frame
 *   show_presenter.c  --presenter: the teacher's window beside the class's
 *                  (the frame small, the narration, the next step, the clock)
 *   web/show_web.c in a browser (Emscripten): the page runs the loop's
 *                  passes, keeps its URL in step with the View, offers
 *                  saved frames as downloads and opens dropped files
 *
 * The View is the state. A frame is drawn when its revision or the window's
 * pixels changed (show_needs_frame); nothing here decides what a key does.
 */
#ifndef SHOW_H
#define SHOW_H

#include <stddef.h>
#include <stdio.h>

#include <SDL.h>

#include "app.h"
#include "edit.h"
#include "ink.h"
#include "lesson.h"
#include "render.h"
#include "show_edit.h"
#include "show_screen.h"
#include "view.h"

typedef struct ShowOptions {
    const char *lesson;
    int autoplay, quit_at_end, frame_stats, fullscreen, gpu;
    int slides; /* S saves slides (VIEW_OUTPUT_SLIDE) */
    int width, height;
    int size_given; /* --size: the window exactly so; else the default, shrunk to fit the display */
    int lang;       /* -1: the default (English) */
    int theme, mode;
    int head;                   /* 0: the default */
    int step;                   /* a trace index (--step counts from 1), -1: the default */
    int weight_scale, notation; /* ViewWeightScale, ViewNotation */
    double speed;
    float text_scale;
    int big_text;  /* --big-text */
    int presenter; /* --presenter: the presenter's window beside the audience's */
    const char *frames_dir;
    const char *save_dir; /* where Ctrl+S saves the edited lesson */
    AppEdits edits;       /* --set, --scale, --tokens: applied to the lesson as loaded */
} ShowOptions;

/* The lesson and its view, replaceable at run time (R, a dropped file). The
 * view shows the edit's working copy of the lesson (src/view/edit.h). */
typedef struct ShowLesson {
    Lesson *lesson; /* as loaded */
    Edit *edit;
    View view;
    char *path;
    unsigned long changes; /* changes the edit has made (each recompute), undo and redo included */
} ShowLesson;

/* Loads path into a new lesson, edit and view, with the command line's edits
 * (NULL: none; a refused one has printed its line and leaves err empty). With
 * background, a large trace is computed on the view's worker thread
 * (view_init_background: the window polls it, and a lesson whose numbers
 * overflow is reported then); without, before this returns. 0, or -1 with
 * the message in err. */
int show_lesson_load(ShowLesson *out, const char *path, const AppEdits *edits, int background, char *err,
                     size_t errlen);
/* Points the edit's recompute at the view: after the ShowLesson moved. */
void show_lesson_bind(ShowLesson *l);
void show_lesson_free(ShowLesson *l);

/* What a window is for: the frame alone (no --presenter), or with
 * --presenter the frame the class sees (on the second display when there is
 * one) and the teacher's window beside it. */
typedef enum ShowRole { SHOW_ROLE_FRAME, SHOW_ROLE_AUDIENCE, SHOW_ROLE_PRESENTER } ShowRole;

/* The window and what draws into it. */
typedef struct ShowWindow {
    ShowRole role;
    SDL_Window *win;
    ShowScreen scr;
    RenderCtx *rc;
    int xfd;         /* the X connection's descriptor, or -1 */
    int sdl, screen; /* what is open, for show_window_close */
} ShowWindow;

/* Opens the window of that role titled after the lesson, placed for its
 * role (show_window.c), and SDL when no window has opened it. An APP_*
 * status; on failure the message is printed and nothing stays open. */
int show_window_open(ShowWindow *w, ShowRole role, const ShowOptions *o, const ShowLesson *cur);
/* Closes whatever show_window_open opened, in reverse order (the window
 * that opened SDL closes it: close it last). */
void show_window_close(ShowWindow *w);
/* "attnviz — <the lesson's title in the view's language>". */
void show_window_title(ShowWindow *w, const ShowLesson *cur);
/* SDL_WaitEventTimeout (timeout_ms < 0: no limit; e NULL leaves the event
 * queued), on X11 by poll() on the connection (see show_window.c). */
int show_wait_event(ShowWindow *w, SDL_Event *e, int timeout_ms);

/* Frame times for --frame-stats, and ATTNVIZ_FRAME_LOG. */
typedef struct ShowStats {
    int enabled;          /* --frame-stats */
    double t_start, age0; /* when cmd_show started; the process's age then (-1 unknown) */
    double *frame_start;  /* (n_frames) start time of each frame, seconds */
    size_t n_frames, cap_frames;
    double first_frame; /* seconds from the process's start to the first frame shown, -1 before */
    FILE *log;          /* ATTNVIZ_FRAME_LOG, or NULL */
    double cpu_begun;   /* this thread's CPU time when the frame being drawn began, seconds */
} ShowStats;

void show_stats_open(ShowStats *st, int enabled, double t_start);
/* A frame begins (its CPU time is counted from here). */
void show_stats_begin(ShowStats *st);
/* A frame started at t was shown; drawn at t_drawn, presented now. */
void show_stats_frame(ShowStats *st, const ShowWindow *w, const View *v, double t, double t_drawn,
                      unsigned long long sent);
/* A moment of start-up ("window open"), logged with its time since the
 * process started (nothing without ATTNVIZ_FRAME_LOG). */
void show_stats_mark(ShowStats *st, const char *what);
/* Prints the two --frame-stats lines (when enabled and report) and closes the log. */
void show_stats_close(ShowStats *st, int report);

/* A finger on a touch screen, from its touch to its lift (show_events.c). */
typedef struct ShowTap {
    int down;
    int x, y;  /* where it touched, window coordinates */
    Uint32 ms; /* when, SDL's milliseconds */
} ShowTap;

/* The recovery file of edits not saved (show_recovery.c). */
typedef struct ShowRecovery {
    char path[4096];                        /* SAVE_DIR/.ID.attnviz-recovery.json */
    int offered;                            /* one from last time waits for Y (restore) or D (discard) */
    int owned;                              /* the file at path, if any, is this window's to replace and remove */
    char blocked[8192];                     /* why no edits can be kept there (a file not ours), or "" */
    int failed;                             /* the last write failed, and the window said so */
    unsigned long changes_seen, saves_seen; /* ShowLesson.changes and ShowEdit.saves when last looked at */
} ShowRecovery;

/* Where the pointer is, in frame pixels, for the spotlight and the laser. */
typedef struct ShowPointer {
    int in; /* over the window */
    int x, y;
} ShowPointer;

/* The presenter's window (show_presenter.c): the audience's frame small
 * (the pointer, ink and a black screen as the class sees them), the full
 * narration, the next step, the answer to the step's question, the step's
 * number and the time since the window opened. */
typedef struct ShowPresenter {
    ShowWindow w;                /* w.win NULL: no presenter */
    SDL_Surface *now;            /* the audience's last frame, (h, w) ARGB8888, owned */
    SDL_Surface *next;           /* the next step's frame at the audience's size, owned */
    SDL_Renderer *next_sdl;      /* draws into next, owned */
    RenderCtx *next_rc;          /* owned */
    unsigned long long next_key; /* what next shows (a hash of the View's state), 0: nothing */
    double clock0;               /* when the clock started: the window opened, or 0 was pressed */
    long shown_second;           /* the clock's second on screen, -1: none yet */
    SDL_Rect now_box;            /* where the frame is drawn in the presenter's pixels; 0 wide: nowhere */
    int must_draw;               /* exposed, resized, or the audience's frame changed */
    unsigned long drawn_revision;
    int drawn_w, drawn_h;
} ShowPresenter;

/* Everything the window's loop holds. */
typedef struct Show {
    ShowOptions opt;
    ShowLesson cur;
    ShowWindow w; /* the frame: the only window, or with --presenter the audience's */
    ShowPresenter pres;
    ShowStats stats;
    ShowEdit se; /* the edit keys and mouse */
    int running;
    int must_draw;    /* the window's pixels are stale (expose, resize): draw even if the View did not change */
    int save_request; /* S: save the next frame */
    unsigned long drawn_revision;
    int drawn_w, drawn_h;
    double last_t;              /* when the last pass advanced the animation */
    unsigned long frames_drawn; /* frames shown so far */
    ShowTap tap;
    ShowRecovery rec;
    Ink ink; /* the strokes drawn with I on, per step */
    ShowPointer pointer;
    unsigned long saved_changes; /* cur.changes when Ctrl+S last saved (or the lesson was loaded) */
} Show;

/* Looks for the recovery file of s->cur's lesson in the save folder and,
 * when there is one from last time, offers it (a notice: Y restores, D
 * discards). */
void show_recovery_open(Show *s);
/* Y or D while a recovery is offered: 1 when the key answered it. */
int show_recovery_key(Show *s, const SDL_KeyboardEvent *e);
/* After each pass's events: tells the View whether edits are unsaved, and
 * writes or removes the recovery file when the edits changed. */
void show_recovery_follow(Show *s);

/* The pointer's tools (show_ink.c). A mouse event at frame pixel (x, y):
 * 1 when the tool took it (ink on: the left button draws). */
int show_ink_mouse(Show *s, const SDL_Event *e, int x, int y);
/* Draws the strokes of v's step over a w × h frame; 0, or -1 with SDL_GetError(). */
int show_ink_draw(const Ink *ink, const View *v, SDL_Renderer *r, int w, int h);
/* Draws the spotlight or the laser's dot at the pointer, when on. */
int show_pointer_draw(const ShowPointer *pt, const View *v, SDL_Renderer *r, int w, int h);

/* --presenter (show_presenter.c). Opens the presenter's window after the
 * audience's: an APP_* status, the message printed. */
int show_presenter_open(Show *s);
/* Closes it (before the audience's window, which closes SDL). */
void show_presenter_close(ShowPresenter *p);
/* After the audience's frame is drawn, before it is shown: keeps its
 * pixels for the presenter's window. 0, or -1 with SDL_GetError(). */
int show_presenter_capture(ShowPresenter *p, ShowScreen *aud);
/* 1 when the presenter's window is to be drawn: it is stale, the View
 * changed, or the clock's second did. 0 without a presenter. */
int show_presenter_due(const Show *s);
/* Milliseconds until the clock shows its next second; -1 without a presenter. */
int show_presenter_wait_ms(const ShowPresenter *p);
/* Draws and shows the presenter's window. An APP_* status. */
int show_presenter_draw(Show *s);
/* 0: the clock starts again from 0:00. */
void show_presenter_clock_reset(ShowPresenter *p);
/* A point of the presenter's window, in window coordinates: the point of
 * the audience's frame (scr's pixels) it shows there. 1 when it is over the
 * frame, else 0. */
int show_presenter_point(const ShowPresenter *p, const ShowScreen *scr, int *x, int *y);
/* 1 when window id is the presenter's window. */
int show_presenter_window(const ShowPresenter *p, Uint32 id);

/* One event, whatever its kind, to its handler. */
void show_on_event(Show *s, SDL_Event *e);
/* Loads s->opt.lesson (or the default lesson) into s->cur and applies the
 * options to its View; --head and --step beyond the lesson are refused.
 * An APP_* status, the message printed. */
int show_lesson_open(Show *s);
/* One pass of the window's loop: the events, the animation, a frame when
 * one is due. may_wait: when nothing moves, sleep until an event comes (a
 * browser calls one pass per display frame instead, and never waits).
 * APP_OK with s->running 0 when the window is to close, or an APP_* error. */
int show_pass(Show *s, int may_wait);
/* Nothing is left to do until the next event: the frame on screen is the
 * View as it is, no animation or notice runs and no step is being computed. */
int show_idle(const Show *s);
/* Closes the window, frees the lesson and s itself (cmd_show allocated it);
 * returns status. */
int show_end(Show *s, int status);

#ifdef __EMSCRIPTEN__
/* Hands the loop to the browser (emscripten_set_main_loop): never returns. */
void show_web_run(Show *s);
/* Offers the file at path (in the page's memory) to the user as a download. */
void show_web_download(const char *path);
/* Copies rectangles rects[0..n) of an ARGB8888 frame (pitch bytes a row) to
 * the page's canvas. 0. */
int show_web_put(const void *pixels, int pitch, const SDL_Rect *rects, int n);
/* F: the page in fullscreen (on 1), out of it (0), or the other way round (-1). */
void show_web_fullscreen(int on);
/* Called by the page with the path of a lesson file it wrote into memory:
 * opened as a file dropped on the window is. */
void attnviz_web_open(const char *path);
/* Called by the page after the browser window was resized (the canvas
 * cleared): the next pass draws the whole frame. */
void attnviz_web_exposed(void);
/* What the frame on screen has at canvas pixel (x, y): a ViewTargetKind. */
int attnviz_web_hit(int x, int y);
/* Where the frame on screen draws cell (row, col) of the step shown: "x y w h"
 * in canvas pixels, or "" when it does not. */
const char *attnviz_web_cell(int row, int col);
#endif

#endif
