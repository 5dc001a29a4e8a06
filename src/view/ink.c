/* ink.c: freehand strokes kept per step (ink.h). */
#include "ink.h"

#include <stdlib.h>
#include <string.h>

/* Room for one more element of size `size` in *arr of capacity *cap. 0, or -1. */
static int grow(void **arr, int *cap, int n, size_t size)
{
    if (n < *cap) return 0;
    int c = *cap ? 2 * *cap : 8;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p) return -1;
    *arr = p;
    *cap = c;
    return 0;
}

static float clamp01(float v)
{
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

static int find_page(const Ink *ink, int mode, int step)
{
    for (int i = 0; i < ink->n; i++)
        if (ink->pages[i].mode == mode && ink->pages[i].step == step) return i;
    return -1;
}

int ink_begin(Ink *ink, int mode, int step, float x, float y)
{
    ink_end(ink);
    int at = find_page(ink, mode, step);
    if (at < 0) {
        if (grow((void **)&ink->pages, &ink->cap, ink->n, sizeof *ink->pages) != 0) return -1;
        at = ink->n++;
        ink->pages[at] = (InkPage){.mode = mode, .step = step};
    }
    InkPage *p = &ink->pages[at];
    if (grow((void **)&p->strokes, &p->cap, p->n, sizeof *p->strokes) != 0) return -1;
    InkStroke *s = &p->strokes[p->n];
    *s = (InkStroke){0};
    if (grow((void **)&s->pts, &s->cap, 0, sizeof *s->pts) != 0) return -1;
    s->pts[s->n++] = (InkPoint){clamp01(x), clamp01(y)};
    p->n++;
    ink->drawing = 1;
    ink->open_page = at;
    ink->changes++;
    return 0;
}

int ink_add(Ink *ink, float x, float y)
{
    if (!ink->drawing) return 0;
    InkPage *p = &ink->pages[ink->open_page];
    InkStroke *s = &p->strokes[p->n - 1];
    if (grow((void **)&s->pts, &s->cap, s->n, sizeof *s->pts) != 0) return -1;
    s->pts[s->n++] = (InkPoint){clamp01(x), clamp01(y)};
    ink->changes++;
    return 0;
}

void ink_end(Ink *ink)
{
    ink->drawing = 0;
}

int ink_clear(Ink *ink, int mode, int step)
{
    int at = find_page(ink, mode, step);
    if (at < 0) return 0;
    if (ink->drawing && ink->open_page == at) ink->drawing = 0;
    InkPage *p = &ink->pages[at];
    int had = p->n > 0;
    for (int i = 0; i < p->n; i++) free(p->strokes[i].pts);
    p->n = 0;
    if (had) ink->changes++;
    return had;
}

const InkPage *ink_page(const Ink *ink, int mode, int step)
{
    int at = find_page(ink, mode, step);
    return at >= 0 && ink->pages[at].n > 0 ? &ink->pages[at] : NULL;
}

void ink_free(Ink *ink)
{
    for (int i = 0; i < ink->n; i++) {
        for (int j = 0; j < ink->pages[i].n; j++) free(ink->pages[i].strokes[j].pts);
        free(ink->pages[i].strokes);
    }
    free(ink->pages);
    memset(ink, 0, sizeof *ink);
}
