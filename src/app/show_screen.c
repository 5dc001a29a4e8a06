/* show_screen.c: frames to the window; see show_screen.h. */
#include "show_screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#ifdef __EMSCRIPTEN__
#include "show.h"
#endif

static void pixel_size(SDL_Window *win, int *w, int *h)
{
    SDL_GetWindowSizeInPixels(win, w, h);
    if (*w < 1) *w = 1;
    if (*h < 1) *h = 1;
}

/* A new software frame of w × h and its renderer; the old ones stay valid
 * until the caller has moved rc over. */
static int make_frame(ShowScreen *s, int w, int h, SDL_Surface **frame, SDL_Renderer **sdl, uint32_t **prev)
{
    *frame = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    *prev = *frame ? malloc((size_t)w * (size_t)h * 4) : NULL;
    *sdl = *prev ? SDL_CreateSoftwareRenderer(*frame) : NULL;
    if (!*sdl) {
        if (!*frame || !*prev) SDL_SetError("out of memory for a %d×%d frame", w, h);
        free(*prev);
        SDL_FreeSurface(*frame);
        return -1;
    }
    (void)s;
    return 0;
}

int show_screen_open(ShowScreen *s, SDL_Window *win, int gpu, int vsync, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->win = win;
    s->gpu = gpu;
    s->full = 1;
    if (gpu) {
        s->sdl = SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED | (vsync ? SDL_RENDERER_PRESENTVSYNC : 0));
        if (!s->sdl) {
            snprintf(err, errlen, "no accelerated renderer for the window: %s (drop --gpu)", SDL_GetError());
            return -1;
        }
        SDL_GetRendererOutputSize(s->sdl, &s->w, &s->h);
        return 0;
    }
    /* On X11, SDL's window surface is by default a texture of an OpenGL
     * renderer: every present uploads the span of the changed rectangles and
     * redraws the whole window through GL (on Xvfb or without a GPU, Mesa's
     * llvmpipe: about 10 ms a present, however little changed). X11's own
     * framebuffer (MIT-SHM) sends just the rectangles, which is the point of
     * this path: 0.1 ms for a matrix. Same pixels. Only on X11: elsewhere
     * (Wayland) the texture framebuffer is the only one. SDL_SetHint does not
     * override SDL_FRAMEBUFFER_ACCELERATION set in the environment. */
    const char *drv = SDL_GetCurrentVideoDriver();
    if (drv && strcmp(drv, "x11") == 0) SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    pixel_size(win, &s->w, &s->h);
    if (make_frame(s, s->w, s->h, &s->frame, &s->sdl, &s->prev) != 0) {
        snprintf(err, errlen, "cannot draw a %d×%d frame: %s", s->w, s->h, SDL_GetError());
        return -1;
    }
    return 0;
}

int show_screen_begin(ShowScreen *s, RenderCtx *rc, int *w, int *h)
{
    if (s->gpu) {
        SDL_GetRendererOutputSize(s->sdl, &s->w, &s->h);
        *w = s->w;
        *h = s->h;
        return 0;
    }
    int nw, nh;
    pixel_size(s->win, &nw, &nh);
    if (nw != s->w || nh != s->h) {
        SDL_Surface *frame;
        SDL_Renderer *sdl;
        uint32_t *prev;
        if (make_frame(s, nw, nh, &frame, &sdl, &prev) != 0) return -1;
        if (rc) render_set_renderer(rc, sdl); /* before the old renderer goes: its textures go with it */
        SDL_DestroyRenderer(s->sdl);
        SDL_FreeSurface(s->frame);
        free(s->prev);
        s->frame = frame;
        s->sdl = sdl;
        s->prev = prev;
        s->w = nw;
        s->h = nh;
        s->full = 1;
    }
    *w = s->w;
    *h = s->h;
    return 0;
}

void show_screen_invalidate(ShowScreen *s)
{
    s->full = 1;
}

enum { MAX_RECTS = 32 };

/* The first i in [from, to) where a[i] != b[i], or to: 16 pixels at a time
 * through the equal stretch (most of a row), then one by one. */
static int first_diff(const uint32_t *a, const uint32_t *b, int from, int to)
{
    int i = from;
    while (i + 16 <= to && memcmp(a + i, b + i, 64) == 0) i += 16;
    while (i < to && a[i] == b[i]) i++;
    return i;
}

/* The last i in (lo, hi] where a[i] != b[i], or lo. */
static int last_diff(const uint32_t *a, const uint32_t *b, int lo, int hi)
{
    int i = hi;
    while (i - 16 >= lo && memcmp(a + i - 15, b + i - 15, 64) == 0) i -= 16;
    while (i > lo && a[i] == b[i]) i--;
    return i;
}

#ifndef __EMSCRIPTEN__
/* The window surface holds the frame's pixels byte for byte (XRGB8888 under
 * an ARGB8888 frame, the usual X11 visual): rows are copied, not converted
 * pixel by pixel by SDL_BlitSurface (the alpha byte is ignored there). */
static int plain_copy(const SDL_Surface *frame, const SDL_Surface *ws)
{
    const SDL_PixelFormat *a = frame->format, *b = ws->format;
    return a->BytesPerPixel == 4 && b->BytesPerPixel == 4 && a->Rmask == b->Rmask && a->Gmask == b->Gmask &&
           a->Bmask == b->Bmask && b->Amask == 0 && !SDL_MUSTLOCK(ws);
}

/* Copies rectangle r of the frame to the window surface. 0, or -1. */
static int copy_rect(ShowScreen *s, SDL_Surface *ws, SDL_Rect r)
{
    if (!plain_copy(s->frame, ws)) {
        SDL_Rect d = r;
        return SDL_BlitSurface(s->frame, &r, ws, &d);
    }
    if (r.x < 0 || r.y < 0 || r.x + r.w > ws->w || r.y + r.h > ws->h) return 0; /* a resize under way */
    for (int y = r.y; y < r.y + r.h; y++)
        memcpy((uint8_t *)ws->pixels + (size_t)y * (size_t)ws->pitch + (size_t)r.x * 4,
               (const uint8_t *)s->frame->pixels + (size_t)y * (size_t)s->frame->pitch + (size_t)r.x * 4,
               (size_t)r.w * 4);
    return 0;
}
#endif

int show_screen_present(ShowScreen *s)
{
    if (s->gpu) {
        SDL_RenderPresent(s->sdl);
        s->sent_px += (unsigned long long)s->w * (unsigned long long)s->h;
        return 0;
    }
    double t0 = 1e3 * attn_clock_seconds();
    s->last_rects = 0;
    s->last_scan_ms = s->last_send_ms = 0;
#ifndef __EMSCRIPTEN__
    SDL_Surface *ws = SDL_GetWindowSurface(s->win);
    if (!ws) return -1;
    if (ws->w != s->w || ws->h != s->h) s->full = 1; /* a resize under way: the next begin follows it */
    SDL_SetSurfaceBlendMode(s->frame, SDL_BLENDMODE_NONE);
#endif
    const uint32_t *px = s->frame->pixels;
    size_t pitch = (size_t)s->frame->pitch / 4, w = (size_t)s->w;
    if (s->full) {
#ifndef __EMSCRIPTEN__
        if (SDL_BlitSurface(s->frame, NULL, ws, NULL) != 0) return -1; /* clips when ws is not (yet) the frame's size */
#endif
        for (int y = 0; y < s->h; y++) memcpy(s->prev + (size_t)y * w, px + (size_t)y * pitch, w * 4);
        s->full = 0;
        s->sent_px += (unsigned long long)s->w * (unsigned long long)s->h;
        double t1 = 1e3 * attn_clock_seconds();
#ifdef __EMSCRIPTEN__
        SDL_Rect all = {0, 0, s->w, s->h};
        int st = show_web_put(s->frame->pixels, s->frame->pitch, &all, 1);
#else
        int st = SDL_UpdateWindowSurface(s->win);
#endif
        s->last_rects = 1;
        s->last_scan_ms = t1 - t0;
        s->last_send_ms = 1e3 * attn_clock_seconds() - t1;
        return st;
    }
    /* Bands of changed rows, each with the span of columns that changed;
     * bands closer than 16 rows merge, so a frame sends a few rectangles. */
    SDL_Rect rects[MAX_RECTS];
    int n = 0;
    int y = 0;
    while (y < s->h) {
        const uint32_t *a = px + (size_t)y * pitch, *b = s->prev + (size_t)y * w;
        if (memcmp(a, b, w * 4) == 0) {
            y++;
            continue;
        }
        int y0 = y, y1 = y, x0 = s->w, x1 = -1, clean = 0;
        for (; y < s->h && clean < 16; y++) {
            a = px + (size_t)y * pitch;
            b = s->prev + (size_t)y * w;
            if (memcmp(a, b, w * 4) == 0) {
                clean++;
                continue;
            }
            clean = 0;
            y1 = y;
            int l = first_diff(a, b, 0, x0), r = last_diff(a, b, x1, s->w - 1);
            if (l < x0) x0 = l;
            if (r > x1) x1 = r;
        }
        if (x1 < x0) continue;
        if (n == MAX_RECTS) { /* too many: one more band swallows the rest */
            rects[n - 1].h = y1 + 1 - rects[n - 1].y;
            rects[n - 1].x = 0;
            rects[n - 1].w = s->w;
            continue;
        }
        rects[n++] = (SDL_Rect){x0, y0, x1 + 1 - x0, y1 + 1 - y0};
    }
    s->last_scan_ms = 1e3 * attn_clock_seconds() - t0;
    if (!n) return 0;
    for (int i = 0; i < n; i++) {
        SDL_Rect r = rects[i];
#ifndef __EMSCRIPTEN__
        if (copy_rect(s, ws, r) != 0) return -1;
#endif
        for (int yy = r.y; yy < r.y + r.h; yy++)
            memcpy(s->prev + (size_t)yy * w + (size_t)r.x, px + (size_t)yy * pitch + (size_t)r.x, (size_t)r.w * 4);
        s->sent_px += (unsigned long long)r.w * (unsigned long long)r.h;
    }
    double t1 = 1e3 * attn_clock_seconds();
#ifdef __EMSCRIPTEN__
    int st = show_web_put(s->frame->pixels, s->frame->pitch, rects, n);
#else
    int st = SDL_UpdateWindowSurfaceRects(s->win, rects, n);
#endif
    s->last_rects = n;
    s->last_send_ms = 1e3 * attn_clock_seconds() - t1;
    return st;
}

void show_screen_close(ShowScreen *s)
{
    if (s->sdl) SDL_DestroyRenderer(s->sdl);
    SDL_FreeSurface(s->frame);
    free(s->prev);
    memset(s, 0, sizeof *s);
}
