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
 * - Files: S saves the frame into the page's memory, as on a desktop, and
 *   the browser downloads it; a lesson file dropped on the page or chosen
 *   with its file picker is written into memory by the page and opened as
 *   a file dropped on a desktop window is (attnviz_web_open).
 * - Threads: none (a page served without cross-origin isolation has no
 *   SharedArrayBuffer); the engine and the view compute on this one thread
 *   when no thread can be started.
 */
#include <emscripten.h>
#include <stdio.h>
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
        return;
    }
    emscripten_cancel_main_loop();
    st = show_end(s, st);
    page_ended(st);
}

void show_web_run(Show *s)
{
    emscripten_set_main_loop_arg(pass, s, 0, 1);
}

void show_web_download(const char *path)
{
    page_download(path);
}

EMSCRIPTEN_KEEPALIVE void attnviz_web_open(const char *path)
{
    SDL_Event e = {.type = SDL_DROPFILE};
    e.drop.file = SDL_strdup(path);
    if (e.drop.file && SDL_PushEvent(&e) != 1) SDL_free(e.drop.file);
}
