/* heatmap.h: which cells each pixel of a heatmap shows, and which pixels an
 * animation frame changes. Pure functions on numbers, no SDL, so that the
 * rules below are unit-tested (tests/test_heatmap.c); render.c's
 * matrix_texture() draws with them in the window and in every export.
 *
 * Along each axis, n cells are drawn over px pixels. Cell j starts at pixel
 * heatmap_cell_px(n, px, j) = lrint(px/n · j), held inside the image; cell
 * n "starts" at px. A cell at least one pixel wide covers the pixels up to
 * the next cell's start, so with at least one pixel per cell every pixel is
 * exactly one cell (full resolution when zoomed in). When cells are thinner
 * than a pixel, several start on the same pixel, and that pixel stands for
 * all of them: a block of cells. Blocks differ by a cell at most, but at the
 * edges: 1,024 cells over 300 pixels make blocks of 3 or 4 cells, with 2 in
 * the first (cell 1 starts at 0.29, pixel 0) and 5 in the last.
 *
 * The downsampling rule (max-pool). A pixel covering a block of cells shows
 * one cell of the block, the one that stands out most:
 *   1. a cell showing a value beats a blocked (masked) cell, which beats an
 *      empty one (not yet computed in an animation): a block is drawn as
 *      blocked only when none of its cells shows a value, so a masked region
 *      stays grey and its edge (the causal diagonal) keeps its values;
 *   2. among cells of the same state, the larger `strength` wins: for
 *      attention weights the weight itself (in the row scale, the weight
 *      over its row's largest), so a single strong weight among a thousand
 *      never vanishes; for signed values |value| with the sign kept, so the
 *      extreme of the block shows. ±∞ is the largest magnitude; NaN loses to
 *      every number (a block of NaNs shows its first NaN);
 *   3. on a tie the first cell in reading order (top row, then left) wins.
 * The pixel then has exactly that cell's colour. An exact mean per block was
 * not chosen: a softmax row over 1,024 keys averages to 1/1,024, so a mean
 * would paint the attention a pupil is looking for (one key taking most of
 * the weight) as dark as the rest, and a mean of a blocked −∞ and a value
 * has no colour at all.
 *
 * Usage:
 *
 *     HeatmapSpan rows[H], cols[W];          // at most min(n, px) each
 *     int nr = heatmap_plan(n_rows, H, rows), nc = heatmap_plan(n_cols, W, cols);
 *     for (int k = 0; k < nr; k++) {
 *         HeatmapPick best[nc];
 *         heatmap_pick_reset(best, nc);
 *         for (int i = rows[k].c0; i < rows[k].c1; i++) {
 *             // key[j] = heatmap_key(state, heatmap_strength(x, ...)) of row i's cells
 *             heatmap_pool_row(key, i, cols, nc, best);
 *         }
 *         // pixels rows[k].p0 .. p1-1, cols[m].p0 .. p1-1: cell best[m]
 *     }
 */
#ifndef HEATMAP_H
#define HEATMAP_H

#include <math.h>
#include <stdint.h>

/* A cell's state (the rule ranks VALUE over BLOCKED over EMPTY). */
typedef enum HeatmapState {
    HEATMAP_EMPTY = 0,   /* not shown yet: drawn in the panel's colour */
    HEATMAP_VALUE = 1,   /* its value's colour */
    HEATMAP_BLOCKED = 2, /* masked: grey, hatched when large enough */
} HeatmapState;

/* Cells [c0, c1) drawn over pixels [p0, p1): one cell over one pixel or
 * more, or a block of cells in one pixel. */
typedef struct HeatmapSpan {
    int c0, c1;
    int p0, p1;
} HeatmapSpan;

/* The first pixel of cell j (0 ≤ j ≤ n) of n cells over px pixels (n, px ≥ 1). */
int heatmap_cell_px(int n, int px, int j);

/* The spans of n cells over px pixels into out (room for min(n, px)), in
 * order, covering every cell and every pixel once; returns their number. */
int heatmap_plan(int n, int px, HeatmapSpan *out);

/* The cell a block shows so far: (row, col) and what the rule compares. */
/* The strength the rule compares: a weight's position on its colour scale
 * (w itself in [0, 1] or log scale, which order the same; w / row_max in
 * the row scale), or |x| for signed values. NaN becomes −∞. */
static inline float heatmap_strength(float x, int weights, int row_scale, float row_max)
{
    if (isnan(x)) return -INFINITY;
    if (!weights) return fabsf(x);
    if (!(x > 0.0f)) return 0.0f;
    if (row_scale) return row_max > 0.0f ? x / row_max : 0.0f;
    return x;
}

/* The rule as one number, so that a block's pick is a plain maximum: a cell
 * of state st (HeatmapState) and strength s (not NaN) beats another when its
 * key is larger. The state's rank (VALUE 2, BLOCKED 1, EMPTY 0) above, s's
 * bits below, turned so that they order as the floats do; every key is > 0.
 * Inline: it is asked of every cell. */
static inline uint64_t heatmap_key(unsigned char st, float s)
{
    union {
        float f;
        uint32_t u;
    } b = {s};
    uint32_t ord = b.u & 0x80000000u ? ~b.u : b.u | 0x80000000u;
    uint64_t rank = (uint64_t)(st == HEATMAP_VALUE) * 2 + (uint64_t)(st == HEATMAP_BLOCKED);
    return rank << 32 | ord;
}

/* The cell a block shows so far. */
typedef struct HeatmapPick {
    uint64_t key; /* heatmap_key; 0: no cell seen yet */
    int row, col; /* -1: no cell seen yet */
} HeatmapPick;

/* Empties n picks before a block's first row. */
void heatmap_pick_reset(HeatmapPick *best, int n);

/* Adds row `row`'s cells to the picks of the column spans: key[j] (from
 * heatmap_key) for j = cols[0].c0 .. cols[n-1].c1 - 1, indexed from
 * cols[0].c0 (the first column of the window drawn). A cell replaces the
 * pick only with a larger key: on a tie the first in reading order stays. */
void heatmap_pool_row(const uint64_t *key, int row, const HeatmapSpan *cols, int n, HeatmapPick *best);

/* heatmap_pool_row on the keys of a row of cells as they are stored: x[j]
 * their values and st[j] their states (NULL: all VALUE), indexed like
 * heatmap_pool_row's keys; a blocked weight above 0 counts as a value (a
 * finite fill on a row that sees nothing: softmax gave it weight, and it
 * is drawn in its value's colour). weights, row_scale and row_max as for
 * heatmap_strength. One pass, no keys stored: what a 1024×1024 matrix
 * redrawn on every frame of its animation needs. */
void heatmap_pool_values(const float *x, const unsigned char *st, int weights, int row_scale, float row_max, int row,
                         const HeatmapSpan *cols, int n, HeatmapPick *best);

/* ---- what an animation frame changes ----
 *
 * One frame of a matrix, as its texture was drawn: `look` is everything that
 * colours its cells apart from how far a reveal has got (0: the final
 * state); in the step's own reading order (row by row, rows·cols cells),
 * cells before `lo` are final, those from `hi` on are not shown yet, and
 * those in [lo, hi) change with the clock. A step whose every cell changes
 * has lo = 0, hi = rows·cols; a settled one lo = hi = rows·cols. */
typedef struct HeatmapFrame {
    uint64_t look;
    long long lo, hi;
} HeatmapFrame;

typedef struct HeatmapRect {
    int x, y, w, h;
} HeatmapRect;

/* The pixels to draw again when a texture showing frame a is to show frame
 * b. The matrix has `cols` columns in the step's layout; drawn transposed,
 * its rows are the image's columns. The image, W × H, shows `n_disp` of
 * the step's rows from row `first` (the zoom window) along its height (its
 * width when transposed), and all of what it shows of the other axis.
 * Returns 0 (nothing changes) or 1 with the rect in *out: the whole image
 * when the look changes, else the band of pixels of the rows from a's or
 * b's first changing cell to the last, whole blocks, clipped to the window. */
int heatmap_dirty(HeatmapFrame a, HeatmapFrame b, int cols, int transposed, int first, int n_disp, int W, int H,
                  HeatmapRect *out);

#endif
