/* show_window.c: opening and closing the classroom window (show.h). */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>
#include <SDL_syswm.h>

#include "app.h"
#include "attn.h"
#include "show.h"

static int is_invisible(const char *drv)
{
    return drv && (strcmp(drv, "offscreen") == 0 || strcmp(drv, "dummy") == 0);
}

/* SDL_Init with the video driver SDL picks. An APP_* status. */
static int open_sdl(ShowWindow *w)
{
    SDL_SetHint(SDL_HINT_VIDEO_ALLOW_SCREENSAVER, "1");
    /* closing the window is an event the window answers (unsaved edits ask first) */
    SDL_SetHint(SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE, "0");
    const char *drv = NULL;
    const char *asked = getenv("SDL_VIDEODRIVER");
    for (int attempt = 1;; attempt++) {
        /* An X server can refuse a connection made just after another one
         * closed (Xvfb here: 1 in 5 of back-to-back XOpenDisplay calls, and
         * SDL makes three): SDL then falls back to an invisible driver, or,
         * with SDL_VIDEODRIVER=x11, fails. Try again before calling the
         * display unusable. */
        int again = getenv("DISPLAY") && attempt < 5;
        if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
            if (again) {
                SDL_Delay(20);
                continue;
            }
            return app_fail(APP_RUNTIME, "cannot open a window: %s (is there a display? `attnviz export` needs none)",
                            SDL_GetError());
        }
        w->sdl = 1;
        drv = SDL_GetCurrentVideoDriver();
        int fell_back = is_invisible(drv) && !(asked && strcmp(asked, drv) == 0);
        if (!fell_back || !again) break;
        SDL_Quit();
        w->sdl = 0;
        SDL_Delay(20);
    }
    if (is_invisible(drv) && !(asked && strcmp(asked, drv) == 0)) {
        /* SDL falls back to an invisible window when there is no display:
         * a window nobody can see is a failure, unless asked for by name
         * (SDL_VIDEODRIVER=offscreen measures drawing without an X server) */
        return app_fail(APP_RUNTIME, "cannot open a window: no display (DISPLAY is %s); `attnviz export` needs none",
                        getenv("DISPLAY") ? "set but unusable" : "not set");
    }
    return APP_OK;
}

/* The X connection's file descriptor, or -1 (another video driver). */
static int x_connection(SDL_Window *win)
{
#ifdef SDL_VIDEO_DRIVER_X11
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (SDL_GetWindowWMInfo(win, &info) && info.subsystem == SDL_SYSWM_X11 && info.info.x11.display)
        return ConnectionNumber(info.info.x11.display);
#else
    (void)win;
#endif
    return -1;
}

/* "attnviz — " (the presenter's: "attnviz presenter — ", "attnviz 演讲者视图 — ")
 * and the frame's own title (view_title: the lesson's, or in the
 * single-head view of several heads one saying what is drawn); a long one
 * is cut at a character boundary, with "…". */
static void show_window_title_of(ShowRole role, const ShowLesson *cur, char *title, size_t len)
{
    char t[480];
    view_title(&cur->view, t, sizeof t);
    const char *who = role != SHOW_ROLE_PRESENTER   ? "attnviz — "
                      : cur->view.lang == LESSON_ZH ? "attnviz 演讲者视图 — "
                                                    : "attnviz presenter — ";
    int n = snprintf(title, len, "%s", who);
    if (n > 0 && (size_t)n < len) lesson_text_copy(title + n, len - (size_t)n, t);
}

/* Where a window of that role opens, and its size: the frame's alone on the
 * first display, centred; beside a presenter's, the audience's goes on the
 * second display when there is one (the projector), the presenter's on the
 * first, filling it. When they share one display, the audience's is at its
 * top left and the presenter's at its bottom right. The default size is
 * shrunk to the display's usable area, so that on a 1024×768 projector the
 * whole frame is on the screen; --size is the frame's, exactly. */
static void place_window(ShowRole role, const ShowOptions *o, int *x, int *y, int *width, int *height)
{
    int two = SDL_GetNumVideoDisplays() > 1;
    int display = role == SHOW_ROLE_AUDIENCE && two ? 1 : 0;
    *width = o->width, *height = o->height;
    *x = *y = (int)SDL_WINDOWPOS_CENTERED_DISPLAY(display);
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(display, &usable) != 0 || usable.w <= 0 || usable.h <= 0) return;
    if (role == SHOW_ROLE_PRESENTER && two) {
        *x = usable.x, *y = usable.y;
        *width = usable.w, *height = usable.h;
        return;
    }
    if (role == SHOW_ROLE_PRESENTER || !o->size_given) {
        *width = *width < usable.w ? *width : usable.w;
        *height = *height < usable.h ? *height : usable.h;
    }
    if (two || role == SHOW_ROLE_FRAME) return;
    if (role == SHOW_ROLE_AUDIENCE) {
        *x = usable.x, *y = usable.y;
    } else {
        *x = usable.x + usable.w - *width, *y = usable.y + usable.h - *height;
    }
}

int show_window_open(ShowWindow *w, ShowRole role, const ShowOptions *o, const ShowLesson *cur)
{
    memset(w, 0, sizeof *w);
    w->xfd = -1;
    w->role = role;
    int st = SDL_WasInit(SDL_INIT_VIDEO) ? APP_OK : open_sdl(w); /* the first window opens SDL */
    if (st != APP_OK) goto fail;
    int full = o->fullscreen && role != SHOW_ROLE_PRESENTER; /* --fullscreen: the frame the class sees */
    Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI | (full ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
    char title[512];
    show_window_title_of(role, cur, title, sizeof title);
    int x, y, width, height;
    place_window(role, o, &x, &y, &width, &height);
    w->win = SDL_CreateWindow(title, x, y, width, height, flags);
    if (!w->win) {
        st = app_fail(APP_RUNTIME, "cannot open a window: %s", SDL_GetError());
        goto fail;
    }
    char err[512];
    /* vsync off when measuring, so frame times are the work, not the display's pace */
    if (show_screen_open(&w->scr, w->win, o->gpu, !o->frame_stats, err, sizeof err) != 0) {
        st = app_fail(APP_RUNTIME, "cannot open a window: %s", err);
        goto fail;
    }
    w->screen = 1;
    SDL_SetWindowMinimumSize(w->win, 640, 480);
    w->rc = render_create(w->scr.sdl, NULL, err, sizeof err);
    if (!w->rc) {
        st = app_fail(APP_RUNTIME, "%s", err);
        goto fail;
    }
    SDL_EventState(SDL_DROPFILE, SDL_ENABLE);
    SDL_StartTextInput(); /* numbers and token names typed in edit mode */
    w->xfd = x_connection(w->win);
    const char *font = render_font_count(w->rc) > 0 ? render_font_path(w->rc, 0) : "";
    if (w->sdl && strstr(font, "/fonts/DejaVuSans.ttf") &&
        strncmp(font, app_assets_dir(), strlen(app_assets_dir())) == 0)
        app_fail(APP_OK, "fontconfig found neither DejaVu Sans nor Noto Sans CJK; using the bundled fonts in %s", font);
    return APP_OK;
fail:
    show_window_close(w);
    return st;
}

void show_window_close(ShowWindow *w)
{
    render_destroy(w->rc);
    if (w->screen) show_screen_close(&w->scr);
    if (w->win) SDL_DestroyWindow(w->win);
    if (w->sdl) SDL_Quit();
    memset(w, 0, sizeof *w);
    w->xfd = -1;
}

void show_window_title(ShowWindow *w, const ShowLesson *cur)
{
    char title[512];
    show_window_title_of(w->role, cur, title, sizeof title);
    SDL_SetWindowTitle(w->win, title);
}

/* SDL 2's own wait wakes itself for each event that arrives with an
 * XSendEvent to the window over a second connection; after Q the window is
 * destroyed at once on the first, and when a busy X server reads the
 * wake-up only after that, it fails with BadWindow, which Xlib turns into
 * exit(1) in SDL_Quit. Polling the connection sends nothing. SDL_PollEvent
 * reads everything the connection has, so the descriptor is readable again
 * exactly when there is more. */
int show_wait_event(ShowWindow *w, SDL_Event *e, int timeout_ms)
{
    if (w->xfd < 0) return timeout_ms < 0 ? SDL_WaitEvent(e) : SDL_WaitEventTimeout(e, timeout_ms);
    double end = attn_clock_seconds() + timeout_ms / 1000.0;
    for (;;) {
        if (SDL_PollEvent(e)) return 1;
        int left = -1;
        if (timeout_ms >= 0) {
            left = (int)ceil((end - attn_clock_seconds()) * 1000.0);
            if (left <= 0) return 0;
        }
        /* A signal (Ctrl-C, SIGTERM: SDL's handler queues SDL_QUIT) interrupts
         * poll(); one that lands between SDL_PollEvent and poll() does not, and
         * nothing would come on the X connection to end the wait: so the wait
         * is cut in slices of half a second (two wake-ups a second, no
         * measurable CPU). */
        int slice = left < 0 || left > 500 ? 500 : left;
        struct pollfd p = {.fd = w->xfd, .events = POLLIN};
        poll(&p, 1, slice);
    }
}
