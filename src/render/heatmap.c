/* heatmap.c: the cells each pixel shows and the pixels a frame changes
 * (the rules are in heatmap.h). */
#include "heatmap.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

int heatmap_cell_px(int n, int px, int j)
{
    assert(n >= 1 && px >= 1 && j >= 0 && j <= n);
    if (j == n) return px;
    /* the same float arithmetic as the grid lines between cells */
    int p = (int)lrintf((float)px / (float)n * (float)j);
    return p < px - 1 ? p : px - 1;
}

int heatmap_plan(int n, int px, HeatmapSpan *out)
{
    int k = 0;
    for (int j = 0; j < n;) {
        int p0 = heatmap_cell_px(n, px, j), j1 = j + 1;
        while (j1 < n && heatmap_cell_px(n, px, j1) == p0) j1++;
        out[k++] = (HeatmapSpan){j, j1, p0, heatmap_cell_px(n, px, j1)};
        j = j1;
    }
    return k;
}

void heatmap_pick_reset(HeatmapPick *best, int n)
{
    for (int i = 0; i < n; i++) best[i] = (HeatmapPick){0, -1, -1};
}

void heatmap_pool_row(const uint64_t *key, int row, const HeatmapSpan *cols, int n, HeatmapPick *best)
{
    if (n < 1) return;
    int base = cols[0].c0;
    for (int k = 0; k < n; k++) {
        uint64_t bk = best[k].key;
        int bj = -1;
        for (int j = cols[k].c0; j < cols[k].c1; j++)
            if (key[j - base] > bk) {
                bk = key[j - base];
                bj = j;
            }
        if (bj >= 0) best[k] = (HeatmapPick){bk, row, bj};
    }
}

/* heatmap_pool_values's loop; called with constant flags below, so that
 * each colouring gets its own copy with nothing decided per cell. */
static inline void pool_values(const float *x, const unsigned char *st, int weights, int row_scale, float row_max,
                               int row, const HeatmapSpan *cols, int n, HeatmapPick *best)
{
    int base = cols[0].c0;
    for (int k = 0; k < n; k++) {
        uint64_t bk = best[k].key;
        int bj = -1;
        for (int j = cols[k].c0; j < cols[k].c1; j++) {
            float v = x[j - base];
            unsigned char s = st ? st[j - base] : HEATMAP_VALUE;
            s = weights && s == HEATMAP_BLOCKED && v > 0.0f ? HEATMAP_VALUE : s;
            uint64_t key = heatmap_key(s, heatmap_strength(v, weights, row_scale, row_max));
            /* selects, not a branch: which cell wins is data, and unpredictable */
            int better = key > bk;
            bk = better ? key : bk;
            bj = better ? j : bj;
        }
        if (bj >= 0) best[k] = (HeatmapPick){bk, row, bj};
    }
}

void heatmap_pool_values(const float *x, const unsigned char *st, int weights, int row_scale, float row_max, int row,
                         const HeatmapSpan *cols, int n, HeatmapPick *best)
{
    if (n < 1) return;
    if (!weights) {
        if (st)
            pool_values(x, st, 0, 0, row_max, row, cols, n, best);
        else
            pool_values(x, NULL, 0, 0, row_max, row, cols, n, best);
    } else if (!row_scale) {
        if (st)
            pool_values(x, st, 1, 0, row_max, row, cols, n, best);
        else
            pool_values(x, NULL, 1, 0, row_max, row, cols, n, best);
    } else {
        if (st)
            pool_values(x, st, 1, 1, row_max, row, cols, n, best);
        else
            pool_values(x, NULL, 1, 1, row_max, row, cols, n, best);
    }
}

int heatmap_dirty(HeatmapFrame a, HeatmapFrame b, int cols, int transposed, int first, int n_disp, int W, int H,
                  HeatmapRect *out)
{
    assert(cols >= 1 && n_disp >= 1 && W >= 1 && H >= 1);
    if (a.look != b.look) {
        *out = (HeatmapRect){0, 0, W, H};
        return 1;
    }
    long long lo = a.lo < b.lo ? a.lo : b.lo, hi = a.hi > b.hi ? a.hi : b.hi;
    if (hi <= lo) return 0;
    /* the step's rows holding cells [lo, hi), in the window */
    long long r0 = lo / cols - first, r1 = (hi - 1) / cols + 1 - first;
    if (r0 < 0) r0 = 0;
    if (r1 > n_disp) r1 = n_disp;
    if (r1 <= r0) return 0;
    int px = transposed ? W : H;
    /* whole blocks: from the start of r0's block to the end of r1 - 1's */
    int p0 = heatmap_cell_px(n_disp, px, (int)r0), last = heatmap_cell_px(n_disp, px, (int)r1 - 1);
    int p1 = heatmap_cell_px(n_disp, px, (int)r1);
    if (p1 <= last) p1 = last + 1; /* row r1 - 1 shares its pixel with the next rows */
    *out = transposed ? (HeatmapRect){p0, 0, p1 - p0, H} : (HeatmapRect){0, p0, W, p1 - p0};
    return 1;
}
