/* show_screen.h: how the window's frames reach the screen.
 *
 * Two paths. The default draws each frame with SDL's software renderer into
 * a surface the size of the window, exactly as `attnviz export` does, so the
 * window shows the export's pixels; it then sends the X server only the
 * rectangles that changed since the last frame (an animation touches one
 * matrix, not 1920×1080 pixels), which keeps frames fast on Xvfb and on
 * machines without a GPU. In a browser those rectangles go from the frame
 * straight to the page's canvas (show_web_put). With `--gpu` the frame is drawn by SDL's
 * accelerated renderer on the window instead (vsync when not measuring).
 *
 * Usage:
 *
 *     ShowScreen scr;
 *     if (show_screen_open(&scr, win, gpu, vsync, err, sizeof err) != 0) ...
 *     RenderCtx *rc = render_create(scr.sdl, NULL, err, sizeof err);
 *     for (;;) {
 *         int w, h;
 *         show_screen_begin(&scr, rc, &w, &h);  // follows resizes
 *         render_frame(rc, &view, w, h);
 *         show_screen_present(&scr);
 *     }
 *     render_destroy(rc);
 *     show_screen_close(&scr);
 */
#ifndef SHOW_SCREEN_H
#define SHOW_SCREEN_H

#include <stddef.h>
#include <stdint.h>

#include <SDL.h>

#include "render.h"

typedef struct ShowScreen {
    SDL_Window *win;            /* borrowed */
    int gpu;                    /* 1: an accelerated renderer on the window */
    SDL_Renderer *sdl;          /* what frames are drawn with (owned) */
    SDL_Surface *frame;         /* software path: the frame, (h, w) ARGB8888 (owned) */
    uint32_t *prev;             /* software path: the pixels last sent, (h, w) (owned) */
    int w, h;                   /* pixel size of the frame */
    int full;                   /* the next present sends everything (resize, expose) */
    unsigned long long sent_px; /* pixels sent to the window so far */
    /* the last present, for ATTNVIZ_FRAME_LOG: rectangles sent, and the time
     * spent finding what changed and in sending it (the X round trip) */
    int last_rects;
    double last_scan_ms, last_send_ms;
} ShowScreen;

/* 0, or -1 with a message in err. */
int show_screen_open(ShowScreen *s, SDL_Window *win, int gpu, int vsync, char *err, size_t errlen);
/* Call before drawing: follows the window's size (recreating the software
 * frame and moving rc to the new renderer when it changed) and gives the
 * pixel size to draw at. 0, or -1 with SDL_GetError(). */
int show_screen_begin(ShowScreen *s, RenderCtx *rc, int *w, int *h);
/* Shows the drawn frame. 0, or -1 with SDL_GetError(). */
int show_screen_present(ShowScreen *s);
/* The window was exposed or its surface lost: send everything next time. */
void show_screen_invalidate(ShowScreen *s);
void show_screen_close(ShowScreen *s);

#endif
