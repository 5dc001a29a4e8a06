/* show_web.c: the classroom window in a browser (Emscripten, tools/web/).
 *
 * Everything that differs from the desktop is here and in the page
 * (tools/web/index.html); the rest of attnviz is the same C.
 *
 * - The loop: a browser must get control back after every frame, so the
 *   page calls show_pass once per display frame (emscripten_set_main_loop,
 *   driven by requestAnimationFrame) instead of cmd_show's loop, which
 *   sleeps between events.
 * - The address: after every change of the View the page's URL is set to
 *   the state (?lesson=ID&lang=zh&step=N&head=H&view=compare&theme=dark),
 *   so a copied link opens the same step; the page turns those parameters
 *   back into `attnviz show` options when it loads.
 * - Files: S saves the frame and Ctrl+S the edited lesson into the page's
 *   memory, as on a desktop, and the browser downloads them; a lesson file
 *   dropped on the page or chosen with its file picker is written into
 *   memory by the page and opened as a file dropped on a desktop window is
 *   (attnviz_web_open).
 * - The window: F puts the whole page in fullscreen (the browser asks for
 *   that in answer to a key). A page is closed with its tab, so Q and Esc
 *   leave fullscreen rather than end the program, which would leave a dead
 *   canvas behind.
 * - The screen: the frame is drawn as on a desktop, and only the rectangles
 *   that changed are copied to the canvas (show_web_put), as only they are
 *   sent to an X server.
 * - Threads: none (a page served without cross-origin isolation has no
 *   SharedArrayBuffer); the engine and the view compute on this one thread
 *   when no thread can be started.
 */
#include <emscripten.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "app.h"
#include "attn.h"
#include "show.h"

/* The page's side (tools/web/index.html): functions on its Module object. */
EM_JS(void, page_state, (const char *query), {
    if (Module.attnvizState) Module.attnvizState(UTF8ToString(query));
})
EM_JS(void, page_frame_ms, (double ms), {
    if (Module.attnvizFrameMs) Module.attnvizFrameMs(ms);
})
EM_JS(void, page_pass, (double frames, int idle, int w, int h), {
    if (Module.attnvizPass) Module.attnvizPass(frames, idle, w, h);
})
/* Each rectangle of the frame's pixels (ARGB8888: B, G, R, A in memory) to
 * the canvas's (R, G, B, A), opaque. */
EM_JS(void, page_put, (const void *pixels, int pitch, const SDL_Rect *rects, int n), {
    const canvas = Module.canvas;
    if (Module.attnvizCtxOf != canvas) {
        Module.attnvizCtx = canvas.getContext('2d', {alpha : false});
        Module.attnvizCtxOf = canvas;
    }
    const ctx = Module.attnvizCtx;
    for (let i = 0; i < n; i++) {
        const r = (rects >> 2) + 4 * i;
        const x = HEAP32[r], y = HEAP32[r + 1], w = HEAP32[r + 2], h = HEAP32[r + 3];
        if (w <= 0 || h <= 0) continue;
        const img = ctx.createImageData(w, h);
        const out = new Uint32Array(img.data.buffer);
        for (let row = 0, o = 0; row < h; row++) {
            let p = (pixels + (y + row) * pitch + x * 4) >> 2;
            for (let col = 0; col < w; col++, p++, o++) {
                const v = HEAPU32[p];
                out[o] = 0xFF000000 | (v & 0xFF) << 16 | (v & 0xFF00) | (v >>> 16 & 0xFF);
            }
        }
        ctx.putImageData(img, x, y);
    }
})
EM_JS(void, page_fullscreen, (int on), {
    if (Module.attnvizFullscreen) Module.attnvizFullscreen(on);
})
EM_JS(void, page_ended, (int status), {
    if (Module.attnvizEnded) Module.attnvizEnded(status);
})
EM_JS(void, page_download, (const char *path), {
    if (Module.attnvizDownload) Module.attnvizDownload(UTF8ToString(path));
})

/* The state in the page's address, as `attnviz show` options would give it. */
static void state_query(const Show *s, char *out, size_t len)
{
    const View *v = &s->cur.view;
    const char *dir = app_lessons_dir();
    size_t n = strlen(dir);
    const Lesson *l = s->cur.lesson;
    /* a lesson of the lessons folder by its id; a dropped file cannot be linked to */
    int shipped = s->cur.path && strncmp(s->cur.path, dir, n) == 0 && s->cur.path[n] == '/' && l && l->id;
    snprintf(out, len, "%s%s%slang=%s&step=%d&head=%d&view=%s&theme=%s", shipped ? "lesson=" : "", shipped ? l->id : "",
             shipped ? "&" : "", lesson_lang_names[v->lang], view_step_ordinal(v->step), v->head,
             view_mode_names[v->mode], view_theme_names[v->theme]);
}

static unsigned long shown_revision = (unsigned long)-1;
static Show *shown; /* the window the page shows */

static void sync_address(const Show *s)
{
    if (s->cur.view.revision == shown_revision) return;
    shown_revision = s->cur.view.revision;
    char q[512];
    state_query(s, q, sizeof q);
    page_state(q);
}

static void pass(void *arg)
{
    Show *s = arg;
    unsigned long drawn = s->frames_drawn;
    double t0 = attn_clock_seconds();
    int st = show_pass(s, 0);
    if (st == APP_OK && s->running) {
        /* the time a pass that showed a frame took, for the page's frame budget */
        if (s->frames_drawn != drawn) page_frame_ms((attn_clock_seconds() - t0) * 1000.0);
        sync_address(s);
        /* the frames shown so far, whether the one on screen is final, and its size */
        page_pass((double)s->frames_drawn, show_idle(s), s->drawn_w, s->drawn_h);
        return;
    }
    emscripten_cancel_main_loop();
    shown = NULL;
    st = show_end(s, st);
    page_ended(st);
}

void show_web_run(Show *s)
{
    /* Emscripten's C library starts with a umask of 0777 (a page has no
     * parent process to inherit one from), under which every file attnviz
     * writes, given the mode open(..., 0666) would give, would have none:
     * the page reads its files back to download them. A new process's usual
     * umask instead. */
    umask(022);
    shown = s;
    emscripten_set_main_loop_arg(pass, s, 0, 1);
}

void show_web_download(const char *path)
{
    page_download(path);
}

int show_web_put(const void *pixels, int pitch, const SDL_Rect *rects, int n)
{
    page_put(pixels, pitch, rects, n);
    return 0;
}

void show_web_fullscreen(int on)
{
    page_fullscreen(on);
}

/* Called by the page when the browser window was resized. SDL then sets the
 * canvas's size, which clears it, but tells attnviz only when the size
 * changed: the frame is drawn again whole in any case. */
EMSCRIPTEN_KEEPALIVE void attnviz_web_exposed(void)
{
    SDL_Event e = {.type = SDL_WINDOWEVENT};
    e.window.event = SDL_WINDOWEVENT_EXPOSED;
    SDL_PushEvent(&e);
}

EMSCRIPTEN_KEEPALIVE void attnviz_web_open(const char *path)
{
    SDL_Event e = {.type = SDL_DROPFILE};
    e.drop.file = SDL_strdup(path);
    if (e.drop.file && SDL_PushEvent(&e) != 1) SDL_free(e.drop.file);
}

/* What the frame on screen has where, for the page's test (tools/web/test.cjs
 * taps a cell and a place where nothing is, found from the frame's own
 * layout): the ViewTargetKind at canvas pixel (x, y). */
EMSCRIPTEN_KEEPALIVE int attnviz_web_hit(int x, int y)
{
    ViewTarget hit;
    if (!shown) return VIEW_TARGET_NONE;
    return (int)render_hit_test(shown->w.rc, &shown->cur.view, x, y, &hit);
}

/* The rectangle "x y w h" in canvas pixels of cell (row, col) of the step on
 * screen, or "" when the frame does not draw it. */
EMSCRIPTEN_KEEPALIVE const char *attnviz_web_cell(int row, int col)
{
    static char out[64];
    SDL_Rect r;
    out[0] = '\0';
    if (shown) {
        const View *v = &shown->cur.view;
        if (render_cell_rect(shown->w.rc, view_trace(v), v->step, row, col, &r) == 0)
            snprintf(out, sizeof out, "%d %d %d %d", r.x, r.y, r.w, r.h);
    }
    return out;
}
