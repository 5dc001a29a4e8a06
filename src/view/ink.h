/* ink.h: freehand strokes drawn over the frame, kept per step, as plain data.
 *
 * A teacher with ink on (I) draws with the mouse or a finger; each stroke
 * belongs to the step on screen (its mode and step index) and comes back
 * when that step does; X clears the step's strokes. Points are fractions of
 * the frame's width and height, so strokes follow a resize. The window draws
 * them over the frame (and into a frame S saves).
 *
 * Usage:
 *
 *     Ink ink = {0};
 *     ink_begin(&ink, mode, step, 0.25f, 0.5f);   // the button goes down
 *     ink_add(&ink, 0.26f, 0.52f);                // the mouse moves
 *     ink_end(&ink);                              // the button comes up
 *     const InkPage *p = ink_page(&ink, mode, step);
 *     for (int i = 0; p && i < p->n; i++) draw(p->strokes[i].pts, p->strokes[i].n);
 *     ink_free(&ink);
 *
 * Every function is safe on a zeroed Ink; one that runs out of memory leaves
 * the strokes as they were and returns -1.
 */
#ifndef INK_H
#define INK_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct InkPoint {
    float x, y; /* fractions of the frame's width and height, [0, 1] */
} InkPoint;

typedef struct InkStroke {
    InkPoint *pts; /* (n) owned */
    int n, cap;
} InkStroke;

/* The strokes of one step of one mode. */
typedef struct InkPage {
    int mode, step;
    InkStroke *strokes; /* (n) owned */
    int n, cap;
} InkPage;

typedef struct Ink {
    InkPage *pages; /* (n) owned */
    int n, cap;
    int drawing;           /* a stroke is open (between ink_begin and ink_end) */
    int open_page;         /* the page of the open stroke */
    unsigned long changes; /* counts every change: the window redraws when it moved */
} Ink;

/* Opens a stroke on the page of (mode, step) at (x, y). 0, or -1. */
int ink_begin(Ink *ink, int mode, int step, float x, float y);
/* Adds a point to the open stroke (none open: nothing). 0, or -1. */
int ink_add(Ink *ink, float x, float y);
/* Closes the open stroke. */
void ink_end(Ink *ink);
/* Removes the strokes of (mode, step); 1 when there were some. */
int ink_clear(Ink *ink, int mode, int step);
/* The strokes of (mode, step), or NULL when it has none. */
const InkPage *ink_page(const Ink *ink, int mode, int step);
void ink_free(Ink *ink);

#ifdef __cplusplus
}
#endif
#endif
