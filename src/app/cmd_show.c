/* cmd_show.c: `attnviz show [LESSON]`, the classroom window: an SDL2 window,
 * its event loop, keys and mouse, autoplay, frame statistics. The state lives
 * in a View (src/view) and every frame is drawn by render_frame (src/render);
 * this file only turns events into View changes. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_syswm.h>
#include <SDL_ttf.h>

#include "app.h"
#include "export.h"
#include "lesson.h"
#include "render.h"
#include "show_screen.h"
#include "view.h"

typedef struct ShowOptions {
    const char *lesson;
    int autoplay, quit_at_end, frame_stats, fullscreen, gpu;
    int width, height;
    int lang;                    /* -1: the default (English) */
    int theme, mode, head, step; /* step: a trace index, -1 for none */
    int weight_scale, notation;
    double speed;
    float text_scale;
    const char *frames_dir;
} ShowOptions;

static void show_usage(FILE *out)
{
    fprintf(out,
            "usage: attnviz show [LESSON] [options]\n"
            "\n"
            "Opens the classroom window on LESSON (a lesson file, or the id of a lesson in the\n"
            "lessons folder; default: %s) and walks through every step of attention.\n"
            "\n"
            "  --size WxH         window size in pixels (default 1280x720)\n"
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
            "  --fullscreen       start in fullscreen\n"
            "  --gpu              draw with SDL's accelerated renderer (default: the software\n"
            "                     renderer of `attnviz export`, sending only what changed)\n"
            "  --frames-dir DIR   where S saves frames (default ./%s)\n"
            "  --autoplay         play the steps one after another\n"
            "  --quit-at-end      quit after the last step has been shown\n"
            "  --frame-stats      on exit print 'frames: N p50: X ms p99: Y ms max: Z ms' (vsync off)\n"
            "                     and 'first-frame: X ms' (process start to the first frame shown)\n"
            "\n"
            "Keys: → / Space next, ← back (the step plays backwards), Home / End, P play / pause,\n"
            "[ ] slower / faster, 1-9 head, Tab next head, M single / multi-head, C compare,\n"
            "L 中文 / English, T theme, W weight scale, N row / column notation,\n"
            "+ / - text size, F or F11 fullscreen, S save frame, R reload, ? help, Esc / Q quit.\n",
            LESSON_DEFAULT_ID, VIEW_SPEED_MIN, VIEW_SPEED_MAX, EXPORT_SAVE_DIR);
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(d)) return -1;
    *out = d;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long l = strtol(s, &end, 10);
    if (errno || end == s || *end || l < -1000000 || l > 1000000) return -1;
    *out = (int)l;
    return 0;
}

static int parse_args(int argc, char **argv, ShowOptions *o)
{
    memset(o, 0, sizeof *o);
    o->width = 1280;
    o->height = 720;
    o->lang = -1;
    o->theme = VIEW_THEME_LIGHT;
    o->mode = VIEW_MULTI;
    o->speed = 1.0;
    o->text_scale = 1.0f;
    o->step = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                                                   \
    do {                                                                                                               \
        if (!val) return app_fail(APP_USAGE, "show: %s needs a value (try 'attnviz show --help')", a);                 \
        i++;                                                                                                           \
    } while (0)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            show_usage(stdout);
            return -1;
        } else if (strcmp(a, "--autoplay") == 0) {
            o->autoplay = 1;
        } else if (strcmp(a, "--quit-at-end") == 0) {
            o->quit_at_end = 1;
        } else if (strcmp(a, "--frame-stats") == 0) {
            o->frame_stats = 1;
        } else if (strcmp(a, "--fullscreen") == 0) {
            o->fullscreen = 1;
        } else if (strcmp(a, "--gpu") == 0) {
            o->gpu = 1;
        } else if (strcmp(a, "--size") == 0) {
            NEED_VALUE();
            char err[256];
            if (export_parse_size(val, &o->width, &o->height, err, sizeof err) != 0)
                return app_fail(APP_USAGE, "show: %s", err);
        } else if (strcmp(a, "--lang") == 0) {
            NEED_VALUE();
            if (strcmp(val, "en") == 0)
                o->lang = LESSON_EN;
            else if (strcmp(val, "zh") == 0)
                o->lang = LESSON_ZH;
            else
                return app_fail(APP_USAGE, "show: --lang: expected en or zh, found '%s'", val);
        } else if (strcmp(a, "--theme") == 0) {
            NEED_VALUE();
            if (strcmp(val, "light") == 0)
                o->theme = VIEW_THEME_LIGHT;
            else if (strcmp(val, "dark") == 0)
                o->theme = VIEW_THEME_DARK;
            else if (strcmp(val, "projector") == 0)
                o->theme = VIEW_THEME_PROJECTOR;
            else
                return app_fail(APP_USAGE, "show: --theme: expected light, dark or projector, found '%s'", val);
        } else if (strcmp(a, "--view") == 0) {
            NEED_VALUE();
            if (strcmp(val, "multi") == 0)
                o->mode = VIEW_MULTI;
            else if (strcmp(val, "single") == 0)
                o->mode = VIEW_SINGLE;
            else if (strcmp(val, "compare") == 0)
                o->mode = VIEW_COMPARE;
            else
                return app_fail(APP_USAGE, "show: --view: expected multi, single or compare, found '%s'", val);
        } else if (strcmp(a, "--head") == 0) {
            NEED_VALUE();
            if (parse_int(val, &o->head) != 0 || o->head < 1)
                return app_fail(APP_USAGE, "show: --head: expected a head number from 1, found '%s'", val);
        } else if (strcmp(a, "--step") == 0) {
            NEED_VALUE();
            int n;
            if (parse_int(val, &n) != 0 || n < 1)
                return app_fail(APP_USAGE, "show: --step: expected a step number from 1, found '%s'", val);
            o->step = view_step_index(n);
        } else if (strcmp(a, "--weight-scale") == 0) {
            NEED_VALUE();
            if ((o->weight_scale = view_weight_scale_from_name(val)) < 0)
                return app_fail(APP_USAGE, "show: --weight-scale: expected unit, row or log, found '%s'", val);
        } else if (strcmp(a, "--notation") == 0) {
            NEED_VALUE();
            if ((o->notation = view_notation_from_name(val)) < 0)
                return app_fail(APP_USAGE, "show: --notation: expected row or column, found '%s'", val);
        } else if (strcmp(a, "--speed") == 0) {
            NEED_VALUE();
            if (parse_double(val, &o->speed) != 0 || o->speed < VIEW_SPEED_MIN || o->speed > VIEW_SPEED_MAX)
                return app_fail(APP_USAGE, "show: --speed: expected a number from %g to %g, found '%s'", VIEW_SPEED_MIN,
                                VIEW_SPEED_MAX, val);
        } else if (strcmp(a, "--text-scale") == 0) {
            NEED_VALUE();
            double d;
            if (parse_double(val, &d) != 0 || d < VIEW_TEXT_SCALE_MIN || d > VIEW_TEXT_SCALE_MAX)
                return app_fail(APP_USAGE, "show: --text-scale: expected a number from %g to %g, found '%s'",
                                (double)VIEW_TEXT_SCALE_MIN, (double)VIEW_TEXT_SCALE_MAX, val);
            o->text_scale = (float)d;
        } else if (strcmp(a, "--frames-dir") == 0) {
            NEED_VALUE();
            o->frames_dir = val;
        } else if (a[0] == '-' && a[1]) {
            return app_fail(APP_USAGE, "show: unknown option '%s' (try 'attnviz show --help')", a);
        } else if (!o->lesson) {
            o->lesson = a;
        } else {
            return app_fail(APP_USAGE, "show: one lesson at a time; found '%s' after '%s'", a, o->lesson);
        }
#undef NEED_VALUE
    }
    return 0;
}

/* "attnviz — " and the title the frame shows (view_title: the lesson's, or
 * in the single-head view of several heads one saying what is drawn). */
static void window_title(char *buf, size_t len, const View *v)
{
    char t[480];
    view_title(v, t, sizeof t);
    snprintf(buf, len, "attnviz — %s", t);
}

/* ---- the lesson and its view, replaceable at run time (R, file drop) ---- */

typedef struct Loaded {
    Lesson *lesson;
    View view;
    char *path;
} Loaded;

/* Loads path into a new lesson and view. 0, or -1 with the message in err. */
static int load_into(Loaded *out, const char *path, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    Lesson *L = calloc(1, sizeof *L);
    if (!L) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    LessonError le;
    if (lesson_load(L, path, &le) != 0) {
        snprintf(err, errlen, "%s", le.msg);
        free(L);
        return -1;
    }
    if (view_init(&out->view, L, err, errlen) != 0) {
        lesson_free(L);
        free(L);
        return -1;
    }
    out->lesson = L;
    out->path = strdup(path);
    return 0;
}

static void loaded_free(Loaded *l)
{
    view_free(&l->view);
    if (l->lesson) lesson_free(l->lesson);
    free(l->lesson);
    free(l->path);
    memset(l, 0, sizeof *l);
}

/* Replaces cur with the lesson at path, keeping the language, theme, mode,
 * sizes and, when the step still exists, the step. On failure cur stays and
 * the error is shown on screen. */
static void reload(Loaded *cur, const char *path, SDL_Window *win)
{
    Loaded next;
    char err[1200];
    if (load_into(&next, path, err, sizeof err) != 0) {
        view_set_notice(&cur->view, VS_NOTICE_RELOAD_FAILED, err, 1);
        fprintf(stderr, "attnviz: %s\n", err);
        return;
    }
    View *o = &cur->view, *n = &next.view;
    n->lang = o->lang;
    n->theme = o->theme;
    view_set_weight_scale(n, o->weight_scale);
    view_set_notation(n, o->notation);
    n->text_scale = o->text_scale;
    n->speed = o->speed;
    n->playing = o->playing;
    int same = cur->path && strcmp(cur->path, path) == 0;
    if (same) {
        view_set_mode(n, o->mode);
        n->head = o->head <= view_head_count(n) ? o->head : 1;
        const AttnStep *s = view_current(o);
        const AttnStep *m = attn_trace_find_name(view_trace(n), s->name);
        if (m) {
            view_goto(n, attn_trace_index(view_trace(n), m));
            view_finish(n);
        }
    }
    view_set_notice(n, VS_NOTICE_RELOADED, path, 0);
    loaded_free(cur);
    *cur = next;
    char title[512];
    window_title(title, sizeof title, &cur->view);
    SDL_SetWindowTitle(win, title);
}

/* ---- timing ---- */

/* Seconds since this process started: /proc/self/stat's start time (in clock
 * ticks since boot) against CLOCK_BOOTTIME; -1 when unavailable. */
static double process_age(void)
{
#ifdef CLOCK_BOOTTIME
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    char buf[2048];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    /* fields after the command: state is field 3, starttime is field 22 */
    int field = 2;
    unsigned long long start = 0;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        if (++field == 22) {
            start = strtoull(tok, NULL, 10);
            break;
        }
    }
    long hz = sysconf(_SC_CLK_TCK);
    if (!start || hz <= 0) return -1;
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    double boot = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return boot - (double)start / (double)hz;
#else
    return -1;
#endif
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, size_t n, double q)
{
    if (!n) return 0;
    size_t i = (size_t)ceil(q * (double)n) - 1;
    if (i >= n) i = n - 1;
    return sorted[i];
}

/* A digest of everything a frame shows (render_frame is a function of the
 * View and the size): equal digests, equal frames, nothing to draw. */
static uint64_t visible_key(const View *v, int w, int h)
{
    uint64_t k = LESSON_FNV1A64_BASIS;
#define MIX(x) k = lesson_fnv1a64_bytes(k, &(uint64_t){(uint64_t)(x)}, sizeof(uint64_t))
    uint64_t tb;
    memcpy(&tb, &v->t, sizeof tb);
    MIX(v->step);
    MIX(tb);
    MIX(v->mode);
    MIX(v->head);
    MIX(v->lang);
    MIX(v->theme);
    MIX(v->weight_scale);
    MIX(v->notation);
    MIX((int)(v->text_scale * 1000));
    MIX((int)(v->speed * 1000));
    MIX(v->playing);
    MIX(v->rewinding);
    MIX((uintptr_t)v->hover_trace);
    MIX(v->hover_step);
    MIX(v->hover_row);
    MIX(v->hover_col);
    MIX(v->sel_query);
    MIX(v->sel_key);
    MIX((int)(v->zoom * 1000));
    MIX((int)v->pan_x);
    MIX((int)v->pan_y);
    MIX(v->show_help);
    MIX(v->notice_is_error);
    MIX(v->notice_what);
    MIX(v->notice_left > 0);
    for (const char *p = v->notice_detail; *p; p++) MIX((unsigned char)*p);
    MIX(w);
    MIX(h);
#undef MIX
    return k;
}

/* ---- waiting for events ---- */

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

/* SDL_WaitEventTimeout (timeout_ms -1: no limit; e may be NULL to leave the
 * event queued), but on X11 by poll() on the connection. SDL 2's own wait
 * wakes itself for each event that arrives with an XSendEvent to the window
 * over a second connection; after Q the window is destroyed at once on the
 * first, and when a busy X server reads the wake-up only after that, it
 * fails with BadWindow, which Xlib turns into exit(1) in SDL_Quit. Polling
 * sends nothing. SDL_PollEvent reads everything the connection has, so the
 * descriptor is readable again exactly when there is more. */
static int wait_event(SDL_Event *e, int timeout_ms, int xfd)
{
    if (xfd < 0) return timeout_ms < 0 ? SDL_WaitEvent(e) : SDL_WaitEventTimeout(e, timeout_ms);
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
        struct pollfd p = {.fd = xfd, .events = POLLIN};
        poll(&p, 1, slice);
    }
}

/* ---- the window ---- */

static void toggle_fullscreen(SDL_Window *win)
{
    Uint32 fl = SDL_GetWindowFlags(win);
    SDL_SetWindowFullscreen(win, (fl & SDL_WINDOW_FULLSCREEN_DESKTOP) ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
}

/* Window coordinates → frame pixels (high-DPI). */
static void to_pixels(SDL_Window *win, const ShowScreen *scr, int *x, int *y)
{
    int ww, wh;
    SDL_GetWindowSize(win, &ww, &wh);
    if (ww <= 0 || wh <= 0) return;
    *x = (int)((long)*x * scr->w / ww);
    *y = (int)((long)*y * scr->h / wh);
}

int cmd_show(int argc, char **argv)
{
    double t_start = attn_clock_seconds();
    double age0 = process_age();
    ShowOptions o;
    int pr = parse_args(argc, argv, &o);
    if (pr != 0) return pr < 0 ? APP_OK : pr;

    char *path = app_resolve_lesson(o.lesson ? o.lesson : LESSON_DEFAULT_ID);
    if (!path) return APP_USAGE;
    Loaded cur;
    char err[1200];
    if (load_into(&cur, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        free(path);
        return APP_USAGE;
    }
    free(path);
    View *v = &cur.view;
    if (o.lang >= 0) v->lang = (LessonLang)o.lang;
    v->theme = (ViewTheme)o.theme;
    view_set_speed(v, o.speed);
    view_set_text_scale(v, o.text_scale);
    view_set_mode(v, (ViewMode)o.mode);
    view_set_weight_scale(v, (ViewWeightScale)o.weight_scale);
    view_set_notation(v, (ViewNotation)o.notation);
    if (o.head) view_set_head(v, o.head);
    if (o.step >= 0) {
        view_goto(v, o.step);
        if (!o.autoplay) view_finish(v);
    } else if (!o.autoplay) {
        view_finish(v);
    }
    v->playing = o.autoplay;

    SDL_SetHint(SDL_HINT_VIDEO_ALLOW_SCREENSAVER, "1");
    const char *drv = NULL;
    const char *asked = getenv("SDL_VIDEODRIVER");
    for (int attempt = 1;; attempt++) {
        if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
            int st = app_fail(APP_RUNTIME, "cannot open a window: %s (is there a display? `attnviz export` needs none)",
                              SDL_GetError());
            loaded_free(&cur);
            return st;
        }
        drv = SDL_GetCurrentVideoDriver();
        int fell_back =
            drv && (strcmp(drv, "offscreen") == 0 || strcmp(drv, "dummy") == 0) && !(asked && strcmp(asked, drv) == 0);
        /* An X server can refuse a connection made just after another one
         * closed (Xvfb here: 1 in 5 of back-to-back XOpenDisplay calls, and
         * SDL makes three), and SDL then falls back to an invisible driver:
         * try again before calling the display unusable. */
        if (!fell_back || !getenv("DISPLAY") || attempt == 5) break;
        SDL_Quit();
        SDL_Delay(20);
    }
    if (drv && (strcmp(drv, "offscreen") == 0 || strcmp(drv, "dummy") == 0) && !(asked && strcmp(asked, drv) == 0)) {
        /* SDL falls back to an invisible window when there is no display:
         * a window nobody can see is a failure, unless asked for by name
         * (SDL_VIDEODRIVER=offscreen measures drawing without an X server) */
        SDL_Quit();
        loaded_free(&cur);
        return app_fail(APP_RUNTIME, "cannot open a window: no display (DISPLAY is %s); `attnviz export` needs none",
                        getenv("DISPLAY") ? "set but unusable" : "not set");
    }
    if (TTF_Init() != 0) {
        int st = app_fail(APP_RUNTIME, "SDL_ttf: %s", TTF_GetError());
        SDL_Quit();
        loaded_free(&cur);
        return st;
    }
    char title[512];
    window_title(title, sizeof title, v);
    Uint32 wflags =
        SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI | (o.fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
    SDL_Window *win =
        SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, o.width, o.height, wflags);
    ShowScreen scr;
    /* vsync off when measuring, so frame times are the work, not the display's pace */
    if (!win || show_screen_open(&scr, win, o.gpu, !o.frame_stats, err, sizeof err) != 0) {
        int st = app_fail(APP_RUNTIME, "cannot open a window: %s", win ? err : SDL_GetError());
        if (win) SDL_DestroyWindow(win);
        TTF_Quit();
        SDL_Quit();
        loaded_free(&cur);
        return st;
    }
    SDL_SetWindowMinimumSize(win, 640, 480);
    RenderCtx *rc = render_create(scr.sdl, NULL, err, sizeof err);
    if (!rc) {
        int st = app_fail(APP_RUNTIME, "%s", err);
        show_screen_close(&scr);
        SDL_DestroyWindow(win);
        TTF_Quit();
        SDL_Quit();
        loaded_free(&cur);
        return st;
    }
    SDL_EventState(SDL_DROPFILE, SDL_ENABLE);
    int xfd = x_connection(win);
    if (render_font_count(rc) > 0 && strstr(render_font_path(rc, 0), "/fonts/DejaVuSans.ttf") &&
        strstr(render_font_path(rc, 0), "assets"))
        fprintf(stderr,
                "attnviz: fontconfig found neither DejaVu Sans nor Noto Sans CJK; using the bundled fonts in %s\n",
                render_font_path(rc, 0));

    size_t n_frames = 0, cap_frames = 0;
    double *frame_start = NULL;
    double first_frame = -1;
    /* ATTNVIZ_FRAME_LOG=FILE: one line per frame (start, draw and present
     * times, the step), to find what a slow frame was doing */
    FILE *frame_log = NULL;
    const char *log_path = getenv("ATTNVIZ_FRAME_LOG");
    if (log_path && *log_path) frame_log = fopen(log_path, "w");
    int running = 1, dirty = 1, save_request = 0, dragging = 0;
    uint64_t drawn_key = 0;
    int must_draw = 1; /* draw even when the View did not change (expose, map, resize) */
    int drag_x = 0, drag_y = 0;
    double last = attn_clock_seconds();
    int status = APP_OK;

    while (running) {
        SDL_Event e;
        int have = 0;
        if (!dirty && !view_is_busy(v) && !save_request) {
            /* nothing moves: sleep until something happens (no CPU) */
            have = wait_event(&e, -1, xfd);
            last = attn_clock_seconds();
        } else {
            have = SDL_PollEvent(&e);
        }
        while (have) {
            switch (e.type) {
            case SDL_QUIT:
                running = 0;
                break;
            case SDL_WINDOWEVENT:
                switch (e.window.event) {
                case SDL_WINDOWEVENT_EXPOSED:
                case SDL_WINDOWEVENT_SHOWN:
                case SDL_WINDOWEVENT_SIZE_CHANGED:
                case SDL_WINDOWEVENT_RESTORED:
                case SDL_WINDOWEVENT_MAXIMIZED:
                    /* the window's pixels are gone or stale: draw and send everything */
                    show_screen_invalidate(&scr);
                    must_draw = 1;
                    break;
                default:
                    break;
                }
                dirty = 1;
                break;
            case SDL_DROPFILE:
                reload(&cur, e.drop.file, win);
                v = &cur.view;
                SDL_free(e.drop.file);
                dirty = 1;
                break;
            case SDL_KEYDOWN: {
                SDL_Keycode k = e.key.keysym.sym;
                Uint16 mod = e.key.keysym.mod;
                dirty = 1;
                if ((k == SDLK_SLASH && (mod & KMOD_SHIFT)) || k == SDLK_QUESTION || k == SDLK_F1 || k == SDLK_h) {
                    v->show_help = !v->show_help;
                    break;
                }
                if (v->show_help && k == SDLK_ESCAPE) {
                    v->show_help = 0;
                    break;
                }
                switch (k) {
                case SDLK_ESCAPE:
                case SDLK_q:
                    running = 0;
                    break;
                case SDLK_RIGHT:
                case SDLK_SPACE:
                case SDLK_PAGEDOWN:
                case SDLK_DOWN:
                    view_next(v);
                    break;
                case SDLK_LEFT:
                case SDLK_PAGEUP:
                case SDLK_UP:
                case SDLK_BACKSPACE:
                    view_prev(v);
                    break;
                case SDLK_HOME:
                    view_home(v);
                    break;
                case SDLK_END:
                    view_end(v);
                    break;
                case SDLK_p:
                    if (!v->playing && view_at_end(v)) view_home(v);
                    v->playing = !v->playing;
                    if (v->playing && v->rewinding) view_finish(v); /* play runs forwards */
                    v->dwell = 0;
                    break;
                case SDLK_LEFTBRACKET:
                    view_set_speed(v, v->speed / 1.4142135623730951);
                    break;
                case SDLK_RIGHTBRACKET:
                    view_set_speed(v, v->speed * 1.4142135623730951);
                    break;
                case SDLK_TAB:
                    view_next_head(v);
                    break;
                case SDLK_m:
                case SDLK_c:
                case SDLK_l:
                    if (k == SDLK_m)
                        view_toggle_single(v);
                    else if (k == SDLK_c)
                        view_toggle_compare(v);
                    else
                        view_toggle_lang(v);
                    window_title(title, sizeof title, v);
                    SDL_SetWindowTitle(win, title);
                    break;
                case SDLK_t:
                    view_next_theme(v);
                    break;
                case SDLK_w:
                    view_next_weight_scale(v);
                    break;
                case SDLK_n:
                    view_toggle_notation(v);
                    break;
                case SDLK_PLUS:
                case SDLK_EQUALS:
                case SDLK_KP_PLUS:
                    view_set_text_scale(v, v->text_scale * 1.1f);
                    break;
                case SDLK_MINUS:
                case SDLK_KP_MINUS:
                    view_set_text_scale(v, v->text_scale / 1.1f);
                    break;
                case SDLK_f:
                case SDLK_F11:
                    toggle_fullscreen(win);
                    break;
                case SDLK_s:
                    save_request = 1;
                    break;
                case SDLK_r:
                    reload(&cur, cur.path, win);
                    v = &cur.view;
                    break;
                default:
                    if (k >= SDLK_1 && k <= SDLK_9)
                        view_set_head(v, (int)(k - SDLK_0));
                    else if (k >= SDLK_KP_1 && k <= SDLK_KP_9)
                        view_set_head(v, (int)(k - SDLK_KP_1) + 1);
                    break;
                }
            } break;
            case SDL_MOUSEMOTION: {
                int x = e.motion.x, y = e.motion.y;
                to_pixels(win, &scr, &x, &y);
                if (dragging && v->zoom > 1.0f) {
                    int dx = x - drag_x, dy = y - drag_y;
                    float cells = 40.0f * (float)scr.h / 720.0f;
                    if (abs(dx) >= cells || abs(dy) >= cells) {
                        v->pan_x -= (float)(dx / (int)cells);
                        v->pan_y -= (float)(dy / (int)cells);
                        if (v->pan_x < 0) v->pan_x = 0;
                        if (v->pan_y < 0) v->pan_y = 0;
                        drag_x = x;
                        drag_y = y;
                        dirty = 1;
                    }
                    break;
                }
                RenderHit hit;
                render_hit_test(rc, x, y, &hit);
                const AttnTrace *ht = hit.kind == RENDER_HIT_CELL ? hit.trace : NULL;
                int hs = hit.kind == RENDER_HIT_CELL ? hit.step : -1;
                if (ht != v->hover_trace || hs != v->hover_step || hit.row != v->hover_row || hit.col != v->hover_col) {
                    v->hover_trace = ht;
                    v->hover_step = hs;
                    v->hover_row = hit.row;
                    v->hover_col = hit.col;
                    dirty = 1;
                }
            } break;
            case SDL_MOUSEBUTTONDOWN: {
                int x = e.button.x, y = e.button.y;
                to_pixels(win, &scr, &x, &y);
                RenderHit hit;
                render_hit_test(rc, x, y, &hit);
                dirty = 1;
                if (e.button.button != SDL_BUTTON_LEFT) break;
                if (v->show_help) {
                    v->show_help = 0;
                    break;
                }
                switch (hit.kind) {
                case RENDER_HIT_TIMELINE:
                    view_goto(v, hit.step);
                    view_finish(v);
                    break;
                case RENDER_HIT_HEAD:
                    view_set_head(v, hit.head);
                    break;
                case RENDER_HIT_TOKEN:
                    if (cur.lesson->n_source_tokens == 0) {
                        int i = hit.row >= 0 ? hit.row : hit.col;
                        view_select_token(v, i, i);
                    } else {
                        view_select_token(v, hit.row, hit.col);
                    }
                    break;
                case RENDER_HIT_CELL:
                    if (hit.zoomable && v->zoom > 1.0f) {
                        dragging = 1;
                        drag_x = x;
                        drag_y = y;
                    }
                    break;
                default:
                    break;
                }
            } break;
            case SDL_MOUSEBUTTONUP:
                dragging = 0;
                break;
            case SDL_MOUSEWHEEL: {
                int x, y;
                SDL_GetMouseState(&x, &y);
                to_pixels(win, &scr, &x, &y);
                RenderHit hit;
                render_hit_test(rc, x, y, &hit);
                if (hit.kind != RENDER_HIT_CELL || !hit.zoomable) break;
                float z = v->zoom * (e.wheel.y > 0 ? 1.25f : 0.8f);
                if (z < 1.0f) z = 1.0f;
                if (z > 64.0f) z = 64.0f;
                const AttnStep *s = &hit.trace->steps[hit.step];
                /* keep the cell under the mouse in view */
                float vr = s->rows / z, vc = s->cols / z;
                v->zoom = z;
                v->pan_y = fmaxf(0.0f, (float)hit.row - vr / 2.0f);
                v->pan_x = fmaxf(0.0f, (float)hit.col - vc / 2.0f);
                if (z == 1.0f) v->pan_x = v->pan_y = 0;
                dirty = 1;
            } break;
            default:
                break;
            }
            have = SDL_PollEvent(&e);
        }
        if (!running) break;

        double t = attn_clock_seconds();
        double dt = t - last;
        last = t;
        if (dt > 0.25) dt = 0.25; /* after a stall, do not skip whole steps */
        int busy = view_is_busy(v);
        if (busy) view_advance(v, dt);
        if (!busy && !dirty && !save_request) continue;
        if (!o.frame_stats && !save_request && !must_draw) {
            /* autoplay's dwell changes nothing on screen: sleep instead of
             * drawing the same frame again (wake for input at once) */
            int ww, wh;
            SDL_GetWindowSizeInPixels(win, &ww, &wh);
            if (visible_key(v, ww, wh) == drawn_key) {
                dirty = 0;
                wait_event(NULL, 20, xfd);
                continue;
            }
        }

        if (o.frame_stats) {
            if (n_frames == cap_frames) {
                size_t nc = cap_frames ? cap_frames * 2 : 4096;
                double *p = realloc(frame_start, nc * sizeof *p);
                if (p) {
                    frame_start = p;
                    cap_frames = nc;
                }
            }
            if (n_frames < cap_frames) frame_start[n_frames++] = t;
        }
        int pw, ph;
        if (show_screen_begin(&scr, rc, &pw, &ph) != 0 || render_frame(rc, v, pw, ph) != 0) {
            status = app_fail(APP_RUNTIME, "drawing failed: %s", SDL_GetError());
            break;
        }
        if (save_request) {
            char saved[1024];
            if (export_save_frame(scr.sdl, v, o.frames_dir, saved, sizeof saved, err, sizeof err) == 0) {
                view_set_notice(v, VS_NOTICE_SAVED, saved, 0);
                fprintf(stderr, "attnviz: saved %s\n", saved);
            } else {
                view_set_notice(v, VS_NOTICE_SAVE_FAILED, err, 1);
                fprintf(stderr, "attnviz: %s\n", err);
            }
            save_request = 0;
            dirty = 1; /* draw again to show the notice (not in the saved frame) */
            show_screen_present(&scr);
            continue;
        }
        double t_drawn = attn_clock_seconds();
        unsigned long long sent0 = scr.sent_px;
        if (show_screen_present(&scr) != 0) {
            status = app_fail(APP_RUNTIME, "showing the frame failed: %s", SDL_GetError());
            break;
        }
        if (frame_log)
            fprintf(
                frame_log,
                "%.3f draw %.2f ms present %.2f ms sent %llu px step %d %s t %.3f rects %d scan %.2f ms send %.2f ms\n",
                (t - t_start) * 1000.0, (t_drawn - t) * 1000.0, (attn_clock_seconds() - t_drawn) * 1000.0,
                scr.sent_px - sent0, v->step, view_current(v)->name, v->t, scr.last_rects, scr.last_scan_ms,
                scr.last_send_ms);
        dirty = 0;
        must_draw = 0;
        drawn_key = visible_key(v, pw, ph);
        if (first_frame < 0) first_frame = attn_clock_seconds() - t_start + (age0 > 0 ? age0 : 0);
        if (o.quit_at_end && view_at_end(v)) running = 0;
        if (!o.frame_stats) {
            /* without vsync (software renderers, Xvfb) pace to 60 frames a second */
            double spent = attn_clock_seconds() - t;
            if (spent < 1.0 / 60.0 && view_is_busy(v)) SDL_Delay((Uint32)((1.0 / 60.0 - spent) * 1000.0));
        }
    }

    if (o.frame_stats) {
        size_t n = n_frames > 1 ? n_frames - 1 : 0;
        double *d = n ? malloc(n * sizeof *d) : NULL;
        if (d) {
            for (size_t i = 0; i < n; i++) d[i] = (frame_start[i + 1] - frame_start[i]) * 1000.0;
            qsort(d, n, sizeof *d, cmp_double);
        }
        printf("frames: %zu p50: %.2f ms p99: %.2f ms max: %.2f ms\n", n_frames, d ? percentile(d, n, 0.5) : 0.0,
               d ? percentile(d, n, 0.99) : 0.0, d ? d[n - 1] : 0.0);
        printf("first-frame: %.1f ms\n", first_frame * 1000.0);
        fflush(stdout);
        free(d);
    }
    free(frame_start);
    if (frame_log) fclose(frame_log);
    render_destroy(rc);
    show_screen_close(&scr);
    SDL_DestroyWindow(win);
    loaded_free(&cur);
    TTF_Quit();
    SDL_Quit();
    return status;
}
