/* show_ink.c: the pointer's tools over the frame (show.h): ink drawn with
 * the mouse or a finger and kept per step (src/view/ink.h), a spotlight
 * that dims all but a circle around the pointer, and a laser pointer's dot.
 * They are drawn over the rendered frame; a frame S saves has the ink, not
 * the spotlight or the dot, which follow the hand. */
#include <math.h>

#include <SDL.h>

#include "ink.h"
#include "show.h"

/* Ink: magenta on a dark rim, which reads on the light, dark and projector
 * themes' backgrounds and on viridis and the blue–red map alike. */
static const SDL_Color INK = {235, 0, 170, 255}, INK_RIM = {20, 0, 20, 220};
static const SDL_Color LASER = {255, 30, 30, 255}, LASER_RIM = {255, 255, 255, 255}, DARK = {0, 0, 0, 255};

enum { DISC_SEGMENTS = 16, SPOT_SEGMENTS = 64 };
#define TAU 6.283185307179586

static SDL_Vertex vert(float x, float y, SDL_Color c)
{
    return (SDL_Vertex){.position = {x, y}, .color = c};
}

/* A filled disc of radius r at (x, y). */
static int disc(SDL_Renderer *r, float x, float y, float rad, SDL_Color c)
{
    SDL_Vertex v[DISC_SEGMENTS * 3];
    for (int i = 0; i < DISC_SEGMENTS; i++) {
        double a0 = TAU * i / DISC_SEGMENTS, a1 = TAU * (i + 1) / DISC_SEGMENTS;
        v[3 * i] = vert(x, y, c);
        v[3 * i + 1] = vert(x + rad * (float)cos(a0), y + rad * (float)sin(a0), c);
        v[3 * i + 2] = vert(x + rad * (float)cos(a1), y + rad * (float)sin(a1), c);
    }
    return SDL_RenderGeometry(r, NULL, v, DISC_SEGMENTS * 3, NULL, 0);
}

/* A segment of width 2·half from (x0, y0) to (x1, y1), round at both ends. */
static int segment(SDL_Renderer *r, float x0, float y0, float x1, float y1, float half, SDL_Color c)
{
    float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    if (len > 0.5f) {
        float nx = -dy / len * half, ny = dx / len * half;
        SDL_Vertex v[6] = {vert(x0 + nx, y0 + ny, c), vert(x1 + nx, y1 + ny, c), vert(x1 - nx, y1 - ny, c),
                           vert(x0 + nx, y0 + ny, c), vert(x1 - nx, y1 - ny, c), vert(x0 - nx, y0 - ny, c)};
        if (SDL_RenderGeometry(r, NULL, v, 6, NULL, 0) != 0) return -1;
    }
    return disc(r, x1, y1, half, c);
}

static int stroke(SDL_Renderer *r, const InkStroke *s, int w, int h, float half, SDL_Color c)
{
    int rc = disc(r, s->pts[0].x * (float)w, s->pts[0].y * (float)h, half, c);
    for (int i = 1; rc == 0 && i < s->n; i++)
        rc = segment(r, s->pts[i - 1].x * (float)w, s->pts[i - 1].y * (float)h, s->pts[i].x * (float)w,
                     s->pts[i].y * (float)h, half, c);
    return rc;
}

int show_ink_draw(const Ink *ink, const View *v, SDL_Renderer *r, int w, int h)
{
    const InkPage *p = ink_page(ink, v->mode, v->step);
    if (!p) return 0;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    float half = (float)h / 300.0f + 1.0f; /* 3.6 px at 768, about 5 at 1080 */
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) /* the rims first, then the ink over them */
        for (int i = 0; rc == 0 && i < p->n; i++)
            rc = stroke(r, &p->strokes[i], w, h, pass ? half : half + 2.0f, pass ? INK : INK_RIM);
    return rc;
}

int show_pointer_draw(const ShowPointer *pt, const View *v, SDL_Renderer *r, int w, int h)
{
    if (!pt->in || (v->tool != VIEW_TOOL_SPOTLIGHT && v->tool != VIEW_TOOL_LASER)) return 0;
    float x = (float)pt->x, y = (float)pt->y;
    if (v->tool == VIEW_TOOL_LASER) {
        float rad = (float)h / 60.0f + 2.0f; /* 15 px at 768 */
        return disc(r, x, y, rad + 4.0f, DARK) || disc(r, x, y, rad + 2.0f, LASER_RIM) || disc(r, x, y, rad, LASER);
    }
    /* the spotlight: everything outside a circle of a fifth of the height darkened */
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    SDL_Color dim = {0, 0, 0, 170};
    float in = (float)h / 5.0f, out = 2.0f * (float)(w + h);
    SDL_Vertex vx[SPOT_SEGMENTS * 6];
    for (int i = 0; i < SPOT_SEGMENTS; i++) {
        float c0 = (float)cos(TAU * i / SPOT_SEGMENTS), s0 = (float)sin(TAU * i / SPOT_SEGMENTS);
        float c1 = (float)cos(TAU * (i + 1) / SPOT_SEGMENTS), s1 = (float)sin(TAU * (i + 1) / SPOT_SEGMENTS);
        SDL_Vertex a = vert(x + in * c0, y + in * s0, dim), b = vert(x + out * c0, y + out * s0, dim);
        SDL_Vertex c = vert(x + out * c1, y + out * s1, dim), d = vert(x + in * c1, y + in * s1, dim);
        SDL_Vertex *q = &vx[6 * i];
        q[0] = a, q[1] = b, q[2] = c, q[3] = a, q[4] = c, q[5] = d;
    }
    return SDL_RenderGeometry(r, NULL, vx, SPOT_SEGMENTS * 6, NULL, 0);
}

int show_ink_mouse(Show *s, const SDL_Event *e, int x, int y)
{
    View *v = &s->cur.view;
    float fx = s->w.scr.w > 0 ? (float)x / (float)s->w.scr.w : 0.0f;
    float fy = s->w.scr.h > 0 ? (float)y / (float)s->w.scr.h : 0.0f;
    if (e->type == SDL_MOUSEMOTION) {
        s->pointer = (ShowPointer){1, x, y};
        if (v->tool == VIEW_TOOL_SPOTLIGHT || v->tool == VIEW_TOOL_LASER) s->must_draw = 1;
    }
    if (v->tool != VIEW_TOOL_INK) return 0;
    switch (e->type) {
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.button == SDL_BUTTON_LEFT) ink_begin(&s->ink, v->mode, v->step, fx, fy);
        break;
    case SDL_MOUSEMOTION:
        if (s->ink.drawing) ink_add(&s->ink, fx, fy);
        break;
    case SDL_MOUSEBUTTONUP:
        ink_end(&s->ink);
        break;
    default:
        return 0; /* the wheel still zooms */
    }
    s->must_draw = 1;
    return 1;
}
