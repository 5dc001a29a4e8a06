/* test_heatmap.c: heatmap.h's rules, worked out by hand: which cells each
 * pixel shows (full resolution with a pixel or more per cell, blocks of
 * uneven size when cells are thinner), the max-pool with blocked and empty
 * cells, infinities and NaN, and the pixels an animation frame changes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "heatmap.h"
#include "test_util.h"

static void assert_span(HeatmapSpan s, int c0, int c1, int p0, int p1)
{
    if (s.c0 != c0 || s.c1 != c1 || s.p0 != p0 || s.p1 != p1)
        fail_msg("span: cells [%d, %d) pixels [%d, %d), expected cells [%d, %d) pixels [%d, %d)", s.c0, s.c1, s.p0,
                 s.p1, c0, c1, p0, p1);
}

/* 3 cells over 10 pixels: 10/3 = 3.33 pixels each, rounded at the edges. */
static void test_plan_wide_cells(void **state)
{
    (void)state;
    HeatmapSpan s[3];
    assert_int_equal(heatmap_plan(3, 10, s), 3);
    assert_span(s[0], 0, 1, 0, 3);
    assert_span(s[1], 1, 2, 3, 7);
    assert_span(s[2], 2, 3, 7, 10);
}

/* With at least one pixel per cell, every span is one cell, at the pixels
 * the grid lines have (lrint(px/n · j)), at every size up to 64 × 200. */
static void test_plan_full_resolution(void **state)
{
    (void)state;
    HeatmapSpan s[200];
    for (int n = 1; n <= 64; n++)
        for (int px = n; px <= 200; px++) {
            int k = heatmap_plan(n, px, s);
            if (k != n) fail_msg("%d cells over %d pixels: %d spans", n, px, k);
            for (int j = 0; j < n; j++) {
                int p0 = (int)lrintf((float)px / (float)n * (float)j);
                int p1 = j + 1 == n ? px : (int)lrintf((float)px / (float)n * (float)(j + 1));
                if (s[j].c0 != j || s[j].c1 != j + 1 || s[j].p0 != p0 || s[j].p1 != p1 || p1 <= p0)
                    fail_msg("%d cells over %d pixels, cell %d: [%d, %d), expected [%d, %d)", n, px, j, s[j].p0,
                             s[j].p1, p0, p1);
            }
        }
}

/* 10 cells over 4 pixels (0.4 each): cells start at pixels 0 0 1 1 2 2 2 3 3
 * and 4 held to 3, so the blocks are 2, 2, 3 and 3 cells. */
static void test_plan_uneven_blocks(void **state)
{
    (void)state;
    HeatmapSpan s[4];
    assert_int_equal(heatmap_plan(10, 4, s), 4);
    assert_span(s[0], 0, 2, 0, 1);
    assert_span(s[1], 2, 4, 1, 2);
    assert_span(s[2], 4, 7, 2, 3);
    assert_span(s[3], 7, 10, 3, 4);
    /* 7 over 3: starts 0 0 1 1 2 2 and 3 held to 2 */
    HeatmapSpan t[3];
    assert_int_equal(heatmap_plan(7, 3, t), 3);
    assert_span(t[0], 0, 2, 0, 1);
    assert_span(t[1], 2, 4, 1, 2);
    assert_span(t[2], 4, 7, 2, 3);
    /* 1,024 over 300: every cell in exactly one block, every pixel one block,
     * of 3 or 4 cells (1024 / 300 = 3.41) but at the edges */
    HeatmapSpan u[300];
    int k = heatmap_plan(1024, 300, u);
    assert_int_equal(k, 300);
    for (int i = 0; i < k; i++) {
        assert_int_equal(u[i].p0, i);
        assert_int_equal(u[i].p1, i + 1);
        assert_int_equal(u[i].c0, i ? u[i - 1].c1 : 0);
        if (i > 0 && i < k - 1) assert_true(u[i].c1 - u[i].c0 >= 3 && u[i].c1 - u[i].c0 <= 4);
    }
    /* at the edges, cells 0 and 1 start on pixel 0 (0.29 · 1 rounds to 0),
     * and 1019..1023 on pixel 299 (1023 held inside the image) */
    assert_span(u[0], 0, 2, 0, 1);
    assert_span(u[k - 1], 1019, 1024, 299, 300);
}

/* Pools a rows × cols matrix (row-major strengths and states) over W × H
 * pixels; picks[(y, x)] of the pixel's block, (H, W). */
static void pool(const float *strength, const unsigned char *st, int rows, int cols, int W, int H, HeatmapPick *out)
{
    uint64_t key[64];
    HeatmapSpan rs[64], cs[64];
    int nr = heatmap_plan(rows, H, rs), nc = heatmap_plan(cols, W, cs);
    for (int k = 0; k < nr; k++) {
        HeatmapPick best[64];
        heatmap_pick_reset(best, nc);
        for (int i = rs[k].c0; i < rs[k].c1; i++) {
            for (int j = 0; j < cols; j++) key[j] = heatmap_key(st[i * cols + j], strength[i * cols + j]);
            heatmap_pool_row(key, i, cs, nc, best);
        }
        for (int y = rs[k].p0; y < rs[k].p1; y++)
            for (int m = 0; m < nc; m++)
                for (int x = cs[m].p0; x < cs[m].p1; x++) out[y * W + x] = best[m];
    }
}

/* The pick is cell (row, col), in state st (the key's rank). */
static void assert_pick(HeatmapPick p, int row, int col, int st)
{
    int rank = (int)(p.key >> 32), want = st == HEATMAP_VALUE ? 2 : st == HEATMAP_BLOCKED ? 1 : 0;
    if (p.row != row || p.col != col || rank != want)
        fail_msg("picked cell (%d, %d) rank %d, expected (%d, %d) rank %d", p.row, p.col, rank, row, col, want);
}

/* Does the cell (st, s) beat the cell (st0, s0)? */
static int beats(int st, float s, int st0, float s0)
{
    return heatmap_key((unsigned char)st, s) > heatmap_key((unsigned char)st0, s0);
}

/* Signed values, 4 × 4 into 2 × 2 (cells start at 0 0 1 1): each block shows
 * its largest magnitude, sign kept; +∞ beats every number; NaN loses to
 * every number, and a block of NaNs shows its first. */
static void test_pool_signed(void **state)
{
    (void)state;
    const float x[16] = {0.1f,      -0.9f, 0.3f, 0.2f,  /* row 0 */
                         0.5f,      0.2f,  NAN,  -0.4f, /* row 1 */
                         INFINITY,  0.0f,  NAN,  NAN,   /* row 2 */
                         -INFINITY, 2.0f,  NAN,  NAN};  /* row 3 */
    float s[16];
    unsigned char st[16];
    for (int i = 0; i < 16; i++) {
        s[i] = heatmap_strength(x[i], 0, 0, 1.0f);
        st[i] = HEATMAP_VALUE;
    }
    HeatmapPick p[4];
    pool(s, st, 4, 4, 2, 2, p);
    assert_pick(p[0], 0, 1, HEATMAP_VALUE); /* −0.9 */
    assert_pick(p[1], 1, 3, HEATMAP_VALUE); /* −0.4 over 0.3, 0.2 and a NaN */
    assert_pick(p[2], 2, 0, HEATMAP_VALUE); /* +∞ first, then −∞ ties with it */
    assert_pick(p[3], 2, 2, HEATMAP_VALUE); /* all NaN: the first */
}

/* Causal weights, 4 × 4 into 2 × 2: a block shows blocked only when none
 * of its cells shows a value; the strongest weight of a block wins. */
static void test_pool_blocked_weights(void **state)
{
    (void)state;
    const float w[16] = {1.0f, 0, 0, 0, 0.6f, 0.4f, 0, 0, 0.2f, 0.3f, 0.5f, 0, 0.1f, 0.2f, 0.3f, 0.4f};
    float s[16];
    unsigned char st[16];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            s[r * 4 + c] = heatmap_strength(w[r * 4 + c], 1, 0, 1.0f);
            st[r * 4 + c] = c > r ? HEATMAP_BLOCKED : HEATMAP_VALUE;
        }
    HeatmapPick p[4];
    pool(s, st, 4, 4, 2, 2, p);
    assert_pick(p[0], 0, 0, HEATMAP_VALUE);   /* 1 */
    assert_pick(p[1], 0, 2, HEATMAP_BLOCKED); /* all blocked: the first */
    assert_pick(p[2], 2, 1, HEATMAP_VALUE);   /* 0.3 over 0.2, 0.1, 0.2 */
    assert_pick(p[3], 2, 2, HEATMAP_VALUE);   /* 0.5 beside a blocked cell */
}

/* A value, however small, beats a blocked score filled with −1e9 or −∞
 * (whose magnitude is far larger); blocked beats empty. */
static void test_pool_state_order(void **state)
{
    (void)state;
    HeatmapPick b;
    heatmap_pick_reset(&b, 1);
    assert_true(heatmap_key(HEATMAP_EMPTY, -INFINITY) > b.key); /* anything beats no cell */
    float inf = heatmap_strength(-INFINITY, 0, 0, 1);
    assert_true(beats(HEATMAP_VALUE, 0.01f, HEATMAP_BLOCKED, inf));
    assert_true(beats(HEATMAP_VALUE, -INFINITY, HEATMAP_BLOCKED, inf)); /* even a NaN value */
    assert_false(beats(HEATMAP_EMPTY, 5.0f, HEATMAP_BLOCKED, inf));
    assert_true(beats(HEATMAP_BLOCKED, 0.0f, HEATMAP_EMPTY, 0.0f));
    assert_false(beats(HEATMAP_BLOCKED, 1e9f, HEATMAP_VALUE, 0.01f));
    /* within a state, the key orders as the strengths do */
    const float order[] = {-INFINITY, 0.0f, 1e-30f, 0.001f, 0.5f, 1.0f, 3.0e38f, INFINITY};
    for (int i = 0; i + 1 < (int)(sizeof order / sizeof *order); i++) {
        assert_true(beats(HEATMAP_VALUE, order[i + 1], HEATMAP_VALUE, order[i]));
        assert_false(beats(HEATMAP_VALUE, order[i], HEATMAP_VALUE, order[i + 1]));
        assert_false(beats(HEATMAP_VALUE, order[i], HEATMAP_VALUE, order[i])); /* a tie: the first stays */
    }
    /* a row of 1 × 6 into 1 pixel: empty, blocked, empty, value, blocked, value */
    const float s[6] = {9, 9, 9, 0.2f, 9, 0.1f};
    const unsigned char st[6] = {HEATMAP_EMPTY, HEATMAP_BLOCKED, HEATMAP_EMPTY,
                                 HEATMAP_VALUE, HEATMAP_BLOCKED, HEATMAP_VALUE};
    HeatmapPick p;
    pool(s, st, 1, 6, 1, 1, &p);
    assert_pick(p, 0, 3, HEATMAP_VALUE);
    pool(s, st, 1, 3, 1, 1, &p);
    assert_pick(p, 0, 1, HEATMAP_BLOCKED);
    const unsigned char none[2] = {HEATMAP_EMPTY, HEATMAP_EMPTY};
    pool(s, none, 1, 2, 1, 1, &p);
    assert_pick(p, 0, 0, HEATMAP_EMPTY);
}

/* Equal strengths: the first cell in reading order, across rows too. */
static void test_pool_ties(void **state)
{
    (void)state;
    const float s[4] = {0.5f, 0.7f, 0.7f, 0.7f};
    const unsigned char st[4] = {HEATMAP_VALUE, HEATMAP_VALUE, HEATMAP_VALUE, HEATMAP_VALUE};
    HeatmapPick p;
    pool(s, st, 2, 2, 1, 1, &p);
    assert_pick(p, 0, 1, HEATMAP_VALUE);
}

/* With a pixel or more per cell, every pixel shows its own cell. */
static void test_pool_full_resolution(void **state)
{
    (void)state;
    float s[12];
    unsigned char st[12];
    for (int i = 0; i < 12; i++) {
        s[i] = (float)((i * 7) % 5);
        st[i] = i % 3 ? HEATMAP_VALUE : HEATMAP_BLOCKED;
    }
    HeatmapPick p[10 * 9];
    pool(s, st, 3, 4, 9, 10, p); /* 3 × 4 cells over 9 × 10 pixels */
    HeatmapSpan rs[3], cs[4];
    heatmap_plan(3, 10, rs);
    heatmap_plan(4, 9, cs);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int y = rs[i].p0; y < rs[i].p1; y++)
                for (int x = cs[j].p0; x < cs[j].p1; x++) assert_pick(p[y * 9 + x], i, j, st[i * 4 + j]);
}

/* heatmap_pool_values, straight from values and states, picks what the
 * keys do, on seeded random rows with blocked, empty, NaN and ±∞ cells, in
 * both colourings and the row scale; a blocked weight above 0 counts as a
 * value. */
static void test_pool_values(void **state)
{
    (void)state;
    uint64_t seed = 17;
    const float special[4] = {NAN, INFINITY, -INFINITY, 0.0f};
    for (int trial = 0; trial < 300; trial++) {
        enum { N = 37 };
        float x[N];
        unsigned char st[N];
        uint64_t key[N];
        int weights = trial % 2, row_scale = weights && trial % 3 == 0, with_state = trial % 5 != 0;
        float row_max = 0.75f;
        for (int j = 0; j < N; j++) {
            uint64_t z = test_splitmix64(&seed);
            x[j] = z % 11 == 0 ? special[z % 4] : (float)((int)(z >> 20) % 2001 - (weights ? 0 : 1000)) / 1000.0f;
            st[j] = (unsigned char)(z % 7 == 0 ? HEATMAP_BLOCKED : z % 13 == 0 ? HEATMAP_EMPTY : HEATMAP_VALUE);
            unsigned char shown = with_state ? st[j] : HEATMAP_VALUE;
            if (shown == HEATMAP_BLOCKED && weights && x[j] > 0.0f) shown = HEATMAP_VALUE;
            key[j] = heatmap_key(shown, heatmap_strength(x[j], weights, row_scale, row_max));
        }
        HeatmapSpan cs[N];
        int W = 1 + trial % N, nc = heatmap_plan(N, W, cs);
        HeatmapPick a[N], b[N];
        heatmap_pick_reset(a, nc);
        heatmap_pick_reset(b, nc);
        heatmap_pool_row(key, 3, cs, nc, a);
        heatmap_pool_values(x, with_state ? st : NULL, weights, row_scale, row_max, 3, cs, nc, b);
        for (int m = 0; m < nc; m++)
            if (a[m].key != b[m].key || a[m].row != b[m].row || a[m].col != b[m].col)
                fail_msg("trial %d, block %d: keys pick (%d, %d), values pick (%d, %d)", trial, m, a[m].row, a[m].col,
                         b[m].row, b[m].col);
    }
    /* a weight of 1/4 blocked under a finite fill beats an unblocked 0.2 */
    const float w[2] = {0.2f, 0.25f};
    const unsigned char s2[2] = {HEATMAP_VALUE, HEATMAP_BLOCKED};
    HeatmapSpan one;
    heatmap_plan(2, 1, &one);
    HeatmapPick p;
    heatmap_pick_reset(&p, 1);
    heatmap_pool_values(w, s2, 1, 0, 1.0f, 0, &one, 1, &p);
    assert_pick(p, 0, 1, HEATMAP_VALUE);
}

/* The strength compared: weights as their position on the scale, signed
 * values as their magnitude, NaN below everything. */
static void test_strength(void **state)
{
    (void)state;
    assert_true(heatmap_strength(0.25f, 1, 0, 1.0f) == 0.25f);
    assert_true(heatmap_strength(0.2f, 1, 1, 0.4f) == 0.5f); /* row scale: w / the row's largest */
    assert_true(heatmap_strength(0.0f, 1, 1, 0.0f) == 0.0f);
    assert_true(heatmap_strength(-0.0f, 1, 0, 1.0f) == 0.0f);
    assert_true(heatmap_strength(-3.0f, 0, 0, 1.0f) == 3.0f);
    assert_true(heatmap_strength(-INFINITY, 0, 0, 1.0f) == INFINITY);
    assert_true(heatmap_strength(NAN, 0, 0, 1.0f) == -INFINITY);
    assert_true(heatmap_strength(NAN, 1, 1, 0.5f) == -INFINITY);
}

static void assert_rect(int got, HeatmapRect r, int x, int y, int w, int h)
{
    if (!got) fail_msg("nothing to update, expected (%d, %d) %d × %d", x, y, w, h);
    if (r.x != x || r.y != y || r.w != w || r.h != h)
        fail_msg("update (%d, %d) %d × %d, expected (%d, %d) %d × %d", r.x, r.y, r.w, r.h, x, y, w, h);
}

/* A matrix of 100 rows × 10 columns revealed row by row, drawn 30 × 50
 * pixels (rows start at pixels 0 0 1 2 2 2 3 4 ...: half a pixel each). */
static void test_dirty_reveal(void **state)
{
    (void)state;
    HeatmapRect r;
    HeatmapFrame a = {2, 25, 25}, b = {2, 47, 47}; /* row 2 col 5 → row 4 col 7 */
    /* rows 2..4: row 2 alone on pixel 1, rows 3, 4, 5 on pixel 2 */
    assert_rect(heatmap_dirty(a, b, 10, 0, 0, 100, 30, 50, &r), r, 0, 1, 30, 2);
    /* backwards, the same band */
    assert_rect(heatmap_dirty(b, a, 10, 0, 0, 100, 30, 50, &r), r, 0, 1, 30, 2);
    /* the same frame: nothing */
    assert_int_equal(heatmap_dirty(a, a, 10, 0, 0, 100, 30, 50, &r), 0);
    /* another look (a new step, the final state): everything */
    HeatmapFrame fin = {0, 1000, 1000};
    assert_rect(heatmap_dirty(a, fin, 10, 0, 0, 100, 30, 50, &r), r, 0, 0, 30, 50);
    /* every cell changing (scaling, softmax all at once): everything */
    HeatmapFrame all1 = {9, 0, 1000}, all2 = {9, 0, 1000};
    assert_rect(heatmap_dirty(all1, all2, 10, 0, 0, 100, 30, 50, &r), r, 0, 0, 30, 50);
    /* the last row: its block ends at the image's edge */
    HeatmapFrame c = {2, 989, 989}, d = {2, 1000, 1000};
    assert_rect(heatmap_dirty(c, d, 10, 0, 0, 100, 30, 50, &r), r, 0, 49, 30, 1);
}

/* At full resolution (10 rows over 100 pixels), drawn transposed, and one
 * row at a time (softmax: row 2 changing, then row 3). */
static void test_dirty_shapes(void **state)
{
    (void)state;
    HeatmapRect r;
    HeatmapFrame a = {3, 20, 30}, b = {3, 30, 40};
    assert_rect(heatmap_dirty(a, b, 10, 0, 0, 10, 40, 100, &r), r, 0, 20, 40, 20);
    /* transposed: the step's rows are the image's columns */
    assert_rect(heatmap_dirty(a, b, 10, 1, 0, 10, 100, 40, &r), r, 20, 0, 20, 40);
    /* a reveal inside one row: only that row */
    HeatmapFrame e = {2, 31, 31}, f = {2, 36, 36};
    assert_rect(heatmap_dirty(e, f, 10, 0, 0, 10, 40, 100, &r), r, 0, 30, 40, 10);
}

/* Zoomed: the window shows rows 10..29 of 100 over 40 pixels (2 each). */
static void test_dirty_window(void **state)
{
    (void)state;
    HeatmapRect r;
    HeatmapFrame a = {2, 50, 50}, b = {2, 85, 85}; /* rows 5..8: above the window */
    assert_int_equal(heatmap_dirty(a, b, 10, 0, 10, 20, 30, 40, &r), 0);
    HeatmapFrame c = {2, 285, 285}, d = {2, 355, 355}; /* rows 28..35: 28 and 29 show */
    assert_rect(heatmap_dirty(c, d, 10, 0, 10, 20, 30, 40, &r), r, 0, 36, 30, 4);
    HeatmapFrame e = {2, 95, 95}, f = {2, 105, 105}; /* rows 9..10: row 10 shows */
    assert_rect(heatmap_dirty(e, f, 10, 0, 10, 20, 30, 40, &r), r, 0, 0, 30, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_wide_cells),
        cmocka_unit_test(test_plan_full_resolution),
        cmocka_unit_test(test_plan_uneven_blocks),
        cmocka_unit_test(test_pool_signed),
        cmocka_unit_test(test_pool_blocked_weights),
        cmocka_unit_test(test_pool_state_order),
        cmocka_unit_test(test_pool_ties),
        cmocka_unit_test(test_pool_full_resolution),
        cmocka_unit_test(test_pool_values),
        cmocka_unit_test(test_strength),
        cmocka_unit_test(test_dirty_reveal),
        cmocka_unit_test(test_dirty_shapes),
        cmocka_unit_test(test_dirty_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
