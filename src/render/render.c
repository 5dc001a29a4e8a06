/* render.c: one frame of the classroom view: layout, heatmaps, animation of
 * each step, formula bar, narration, timeline, overlays.
 *
 * Every matrix is drawn as one texture of its size on screen, a texel per
 * pixel, so a cell's pixels are exactly the colour map's colour for its
 * value (or, where cells are thinner than a pixel, for the cell heatmap.h's
 * max-pool picks) and a 1024×1024 weight matrix costs one copy per frame.
 * Textures are cached by what they show; the animating one is redrawn only
 * where the animation changed it. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor.h"
#include "heatmap.h"
#include "render_internal.h"

/* ---- themes ---- */

static const Theme themes[VIEW_THEME_COUNT] = {
    [VIEW_THEME_LIGHT] = {.bg = {246, 246, 243, 255},
                          .panel = {255, 255, 255, 255},
                          .text = {24, 24, 28, 255},
                          .dim = {96, 98, 108, 255},
                          .accent = {196, 78, 0, 255},
                          .accent_text = {255, 255, 255, 255},
                          .hl_bg = {255, 226, 170, 255},
                          .grid = {255, 255, 255, 255},
                          .blocked = {168, 168, 168, 255},
                          .hatch = {120, 120, 120, 255},
                          .sel = {0, 0, 0, 255},
                          .tl_done = {150, 160, 180, 255},
                          .tl_future = {218, 220, 226, 255},
                          .error = {190, 20, 20, 255},
                          .head = {{230, 159, 0, 255},
                                   {0, 114, 178, 255},
                                   {0, 158, 115, 255},
                                   {204, 121, 167, 255},
                                   {86, 180, 233, 255},
                                   {213, 94, 0, 255},
                                   {120, 120, 120, 255},
                                   {240, 228, 66, 255}}},
    [VIEW_THEME_DARK] = {.bg = {22, 24, 28, 255},
                         .panel = {32, 35, 41, 255},
                         .text = {232, 233, 238, 255},
                         .dim = {152, 156, 168, 255},
                         .accent = {255, 156, 64, 255},
                         .accent_text = {20, 20, 20, 255},
                         .hl_bg = {92, 64, 20, 255},
                         .grid = {32, 35, 41, 255},
                         .blocked = {88, 88, 92, 255},
                         .hatch = {130, 130, 136, 255},
                         .sel = {255, 255, 255, 255},
                         .tl_done = {96, 104, 122, 255},
                         .tl_future = {52, 56, 64, 255},
                         .error = {255, 110, 100, 255},
                         .head = {{230, 159, 0, 255},
                                  {86, 180, 233, 255},
                                  {0, 158, 115, 255},
                                  {204, 121, 167, 255},
                                  {240, 228, 66, 255},
                                  {213, 94, 0, 255},
                                  {180, 180, 180, 255},
                                  {0, 114, 178, 255}}},
    [VIEW_THEME_PROJECTOR] = {.bg = {255, 255, 255, 255},
                              .panel = {255, 255, 255, 255},
                              .text = {0, 0, 0, 255},
                              .dim = {40, 40, 40, 255},
                              .accent = {0, 0, 0, 255},
                              .accent_text = {255, 255, 255, 255},
                              .hl_bg = {255, 221, 0, 255},
                              .grid = {255, 255, 255, 255},
                              .blocked = {150, 150, 150, 255},
                              .hatch = {60, 60, 60, 255},
                              .sel = {0, 0, 0, 255},
                              .tl_done = {90, 90, 90, 255},
                              .tl_future = {215, 215, 215, 255},
                              .error = {200, 0, 0, 255},
                              .head = {{230, 159, 0, 255},
                                       {0, 114, 178, 255},
                                       {0, 158, 115, 255},
                                       {204, 121, 167, 255},
                                       {86, 180, 233, 255},
                                       {213, 94, 0, 255},
                                       {120, 120, 120, 255}, /* not black: black is the selection */
                                       {240, 228, 66, 255}}},
};

const Theme *render_theme(ViewTheme t)
{
    return &themes[(unsigned)t < VIEW_THEME_COUNT ? t : 0];
}

/* ---- colour maps ---- */

SDL_Color render_color_seq(float t)
{
    if (!(t >= 0.0f)) t = 0.0f;
    if (t > 1.0f) t = 1.0f;
    int i = (int)lrintf(t * 255.0f);
    return (SDL_Color){render_viridis[i][0], render_viridis[i][1], render_viridis[i][2], 255};
}

SDL_Color render_color_div(float t)
{
    if (!(t >= -1.0f)) t = -1.0f;
    if (t > 1.0f) t = 1.0f;
    int i = (int)lrintf((t + 1.0f) * 127.5f);
    return (SDL_Color){render_rdbu[i][0], render_rdbu[i][1], render_rdbu[i][2], 255};
}

SDL_Color render_value_color(float value, int weights, float range)
{
    if (weights) return render_color_seq(value);
    if (!(range > 0.0f)) range = 1.0f;
    return render_color_div(value / range);
}

SDL_Color render_weight_color(ViewWeightScale scale, float w, float row_max)
{
    return render_color_seq(view_weight_position(scale, w, row_max));
}

/* ---- lifetime ---- */

RenderCtx *render_create(SDL_Renderer *sdl, const RenderOptions *opt, char *err, size_t errlen)
{
    if (!sdl) {
        snprintf(err, errlen, "render_create: no SDL renderer");
        return NULL;
    }
    RenderCtx *rc = calloc(1, sizeof *rc);
    if (!rc) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    rc->sdl = sdl;
    rc->frame = 1;
    if (text_open(&rc->text, sdl, opt, err, errlen) != 0) {
        free(rc);
        return NULL;
    }
    return rc;
}

static void mat_entry_drop(RenderCtx *rc, MatEntry *e)
{
    if (e->tex) {
        SDL_DestroyTexture(e->tex);
        rc->mat_bytes -= (size_t)e->w * (size_t)e->h * 4;
    }
    memset(e, 0, sizeof *e);
}

/* Destroys the least recently used matrix textures that the frame being
 * drawn has not used, until `need` more bytes fit in RENDER_MAT_BUDGET or
 * none is left. */
static void mat_cache_trim(RenderCtx *rc, size_t need)
{
    while (rc->mat_bytes + need > RENDER_MAT_BUDGET) {
        MatEntry *lru = NULL;
        for (int i = 0; i < RENDER_MAT_CACHE; i++) {
            MatEntry *e = &rc->mats[i];
            if (e->tex && e->last_frame != rc->frame && (!lru || e->last_frame < lru->last_frame)) lru = e;
        }
        if (!lru) return;
        mat_entry_drop(rc, lru);
    }
}

static void drop_textures(RenderCtx *rc)
{
    for (int i = 0; i < RENDER_MAT_CACHE; i++) mat_entry_drop(rc, &rc->mats[i]);
}

void render_set_renderer(RenderCtx *rc, SDL_Renderer *sdl)
{
    if (!rc || !sdl || sdl == rc->sdl) return;
    drop_textures(rc);
    text_set_renderer(&rc->text, sdl);
    rc->sdl = sdl;
    rc->n_hitboxes = rc->n_hitmats = 0;
}

void render_destroy(RenderCtx *rc)
{
    if (!rc) return;
    text_close(&rc->text);
    for (int i = 0; i < RENDER_MAT_CACHE; i++)
        if (rc->mats[i].tex) SDL_DestroyTexture(rc->mats[i].tex);
    for (int i = 0; i < rc->n_index; i++) free(rc->index_label[i]);
    free(rc->index_label);
    free(rc->boxes);
    free(rc->pix);
    free(rc->anim_vals);
    free(rc->anim_state);
    free(rc->blocked_of[0].buf);
    free(rc->blocked_of[1].buf);
    for (int i = 0; i < RENDER_PICK_MAPS; i++) free(rc->pick_maps[i].pick);
    free(rc->exps_of.buf);
    free(rc->rowsums_of.buf);
    free(rc->row_spans);
    free(rc->col_spans);
    free(rc->picks);
    free(rc->cell_key);
    free(rc->row_max);
    free(rc->pair_map);
    free(rc);
}

/* ---- the layout's boxes ---- */

void render_layout_record(RenderCtx *rc, int on)
{
    rc->record = on;
    rc->n_boxes = 0;
}

const LayoutBox *render_layout_boxes(const RenderCtx *rc, int *n)
{
    *n = rc->n_boxes;
    return rc->boxes;
}

/* The box the texts drawn next must stay inside, and what they are. */
static void render_within(RenderCtx *rc, SDL_Rect within, const char *what)
{
    rc->within = within;
    rc->within_what = what;
}

static void render_layout_add(RenderCtx *rc, LayoutBox b)
{
    if (!rc->record) return;
    if (rc->n_boxes == rc->cap_boxes) {
        int cap = rc->cap_boxes ? 2 * rc->cap_boxes : 256;
        LayoutBox *p = realloc(rc->boxes, (size_t)cap * sizeof *p);
        if (!p) return;
        rc->boxes = p;
        rc->cap_boxes = cap;
    }
    rc->boxes[rc->n_boxes++] = b;
}

/* ---- drawing helpers ---- */

/* A line of text (text_draw), its box recorded. */
static int draw_text(RenderCtx *rc, const char *s, int size, SDL_Color col, int x, int y, int align)
{
    SDL_Rect d;
    int w = text_draw(&rc->text, s, size, col, x, y, align, &d);
    if (w < 0) return 0;
    if (rc->record) {
        LayoutBox b = {.rect = d, .within = rc->within, .kind = LAYOUT_TEXT, .size = size, .what = rc->within_what};
        snprintf(b.text, sizeof b.text, "%s", s);
        render_layout_add(rc, b);
    }
    return w;
}

/* A cell's number (text_glyphs), its ink recorded. */
static int draw_glyphs(RenderCtx *rc, const char *s, int size, SDL_Color col, int cx, int cy, int maxw)
{
    SDL_Rect ink;
    int w = text_glyphs(&rc->text, s, size, col, cx, cy, maxw, &ink);
    if (w >= 0 && rc->record) {
        LayoutBox b = {.rect = ink, .within = rc->within, .kind = LAYOUT_NUMBER, .size = size, .what = rc->within_what};
        snprintf(b.text, sizeof b.text, "%s", s);
        render_layout_add(rc, b);
    }
    return w;
}

static void render_fill(RenderCtx *rc, SDL_Rect r, SDL_Color c)
{
    SDL_SetRenderDrawBlendMode(rc->sdl, c.a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(rc->sdl, c.r, c.g, c.b, c.a);
    SDL_RenderFillRect(rc->sdl, &r);
}

static void render_outline(RenderCtx *rc, SDL_Rect r, SDL_Color c, int thick)
{
    SDL_SetRenderDrawBlendMode(rc->sdl, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(rc->sdl, c.r, c.g, c.b, c.a);
    for (int i = 0; i < thick; i++) {
        SDL_Rect q = {r.x - i, r.y - i, r.w + 2 * i, r.h + 2 * i};
        SDL_RenderDrawRect(rc->sdl, &q);
    }
}

static void add_hitbox(RenderCtx *rc, SDL_Rect r, RenderHit h)
{
    if (rc->n_hitboxes < RENDER_MAX_HITBOXES) rc->hitboxes[rc->n_hitboxes++] = (HitBox){r, h};
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}
static int imin(int a, int b)
{
    return a < b ? a : b;
}
static float fclampf(float x, float lo, float hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static SDL_Color mix(SDL_Color a, SDL_Color b, float t)
{
    t = fclampf(t, 0, 1);
    return (SDL_Color){(Uint8)lrintf(a.r + (b.r - a.r) * t), (Uint8)lrintf(a.g + (b.g - a.g) * t),
                       (Uint8)lrintf(a.b + (b.b - a.b) * t), 255};
}

/* Black or white, whichever reads on a cell of colour c. */
static SDL_Color ink_on(SDL_Color c)
{
    float l = 0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b;
    return l > 140.0f ? (SDL_Color){0, 0, 0, 255} : (SDL_Color){255, 255, 255, 255};
}

/* How a matrix's cells print their numbers: two decimals for weights; whole
 * numbers without decimals in a matrix whose every value is one (X = [[2, 0,
 * 1]] prints "2", not "2.00"), one decimal in a matrix of tenths (b_O =
 * [0.1, …] prints "0.1"); otherwise a few digits by magnitude. */
enum { CELL_PLAIN, CELL_WEIGHTS, CELL_INTEGER, CELL_TENTHS };

/* A number as a cell shows it in style (CELL_*): a true minus sign, few
 * digits; from 1e4 on as a power of ten with exp_digits significant digits
 * (−1e9, −3.5e19; one digit when the second is 0). */
static void fmt_cell_digits(char *buf, size_t len, float x, int style, int exp_digits)
{
    if (isinf(x)) {
        snprintf(buf, len, x < 0 ? "−∞" : "∞");
        return;
    }
    if (isnan(x)) {
        snprintf(buf, len, "NaN");
        return;
    }
    double d = (double)x;
    char tmp[32];
    if (style == CELL_WEIGHTS)
        snprintf(tmp, sizeof tmp, "%.2f", fabs(d));
    else if (style == CELL_INTEGER && fabs(d) < 1e4)
        snprintf(tmp, sizeof tmp, "%.0f", fabs(d));
    else if (style == CELL_TENTHS && fabs(d) < 100)
        snprintf(tmp, sizeof tmp, "%.1f", fabs(d));
    else if (fabs(d) < 0.005)
        snprintf(tmp, sizeof tmp, "0.00");
    else if (fabs(d) >= 1e4) {
        int e = (int)floor(log10(fabs(d)));
        double mant = fabs(d) / pow(10.0, e);
        char m[16];
        snprintf(m, sizeof m, "%.*f", exp_digits > 1 ? exp_digits - 1 : 0, mant);
        if (strcmp(m, "10") == 0 || strcmp(m, "10.0") == 0) { /* 9.6 or 9.96 rounded up */
            snprintf(m, sizeof m, "1");
            e++;
        }
        size_t ml = strlen(m);
        if (ml > 2 && m[ml - 1] == '0' && m[ml - 2] == '.') m[ml - 2] = '\0'; /* 1.0 → 1 */
        snprintf(tmp, sizeof tmp, "%se%d", m, e);                             /* −1e9, not −1e+09 */
    } else if (fabs(d) >= 100)
        snprintf(tmp, sizeof tmp, "%.0f", fabs(d));
    else if (fabs(d) >= 10)
        snprintf(tmp, sizeof tmp, "%.1f", fabs(d));
    else
        snprintf(tmp, sizeof tmp, "%.2f", fabs(d));
    if (strcmp(tmp, "0.00") == 0 || strcmp(tmp, "0.0") == 0 || strcmp(tmp, "0") == 0) { /* never "−0.0" */
        snprintf(buf, len, "%s", tmp);
        return;
    }
    if (d < 0)
        snprintf(buf, len, "−%.24s", tmp);
    else
        snprintf(buf, len, "%.24s", tmp);
}

static void fmt_cell(char *buf, size_t len, float x, int style)
{
    fmt_cell_digits(buf, len, x, style, 2);
}

/* ---- one matrix on screen ---- */

enum { ST_EMPTY = HEATMAP_EMPTY, ST_VALUE = HEATMAP_VALUE, ST_BLOCKED = HEATMAP_BLOCKED };

typedef struct Item {
    const AttnTrace *trace;
    int step;
    const AttnStep *s;
    /* row_map: the matrix drawn has map_rows rows, row i being the step's row
     * row_map[i] (X repeated and Y tiled into additive attention's pairs);
     * NULL: the step's own rows. "Rows" below are these, before transposition. */
    const int *row_map;
    int map_rows;
    const char *map_title; /* the name drawn under a mapped matrix ("x_i"), or NULL */
    int transposed;        /* drawn transposed: displayed rows are the step's columns */
    int formula_t;         /* the formula transposes it (Kᵀ in Q·Kᵀ): its label carries ᵀ */
    int weights;           /* viridis in the view's weight scale */
    int style;             /* how its numbers print: CELL_* */
    ViewWeightScale wscale;
    const float *row_max; /* (s->rows) each row's largest shown weight, for VIEW_WEIGHTS_ROW; or NULL */
    float range;          /* diverging: ±range */
    int result;
    int labels, legend;                /* draw row labels, the legend */
    int cl_off;                        /* no column labels: the result's, drawn small beside it */
    const char *const *rl, *const *cl; /* display row / column token labels or NULL */
    int rows, cols;                    /* displayed (after transpose and zoom) */
    int r0, c0;                        /* zoom window origin, in displayed coordinates */
    int full_rows, full_cols;
    /* elided (see item_pieces): only the first and last keep_r rows (keep_c
     * columns) drawn, a ⋮ row (⋯ column) between them; 0: every one */
    int keep_r, keep_c;
    int edges;      /* a piece of an elided matrix: which of its sides (EDGE_*) it has */
    int index_cols; /* cl are the columns' numbers (X's features), not tokens */
    /* layout */
    int x, y; /* cells' top-left */
    float cw, ch;
    float shrink;   /* an operand's cells as a share of the panel's (1; less when the result comes first) */
    float min_cell; /* the smallest cell that shows its numbers and labels (item_min_cell) */
    int lab_w, leg_w;
    int nsize;     /* font size of the cells' numbers; 0: the cells are too small for them */
    int lsize;     /* font size of the token labels */
    int k_tok;     /* every k-th token label (rows and columns alike) */
    int k_col;     /* every k-th column label when they are numbers */
    int stagger;   /* column labels on two lines, alternately: too wide for one column each */
    int shared;    /* the colour scale is the result's: no legend of its own */
    SDL_Rect area; /* the panel the matrix and its labels stay inside */
    /* animation: display values (rows·cols of the step's own layout) */
    const float *vals;
    const unsigned char *state; /* NULL: all values */
    long long anim_lo, anim_hi; /* the cells changing with the clock (HeatmapFrame's lo, hi) */
    float blocked_mix;          /* 0..1: blocked cells fade from their value to the −∞ style */
    int picks_fixed;            /* every frame of this animation pools to the same cells (the mask's: only
                                   blocked_mix moves), so its picks are kept as a settled matrix's are */
    float alpha;                /* 1: opaque */
    int hl_srow, hl_scol;       /* the step's row / column lit as an operand of the cell being computed */
    int cur_r, cur_c;           /* result cell being computed (step coordinates), -1 */
    const float *rowsum;        /* (s->rows) shown at the end of each row (under each column when transposed) */
    const unsigned char *rowsum_on;
    int block_w;     /* >0: outline blocks of this many columns in head colours */
    int block_sel;   /* 1-based block to emphasise */
    int block_color; /* this item is head n's output: outline in its colour (0: none) */
    float block_gap; /* 0..1: the blocks drawn apart (split's animation) */
    int bare;        /* a moving copy (concat's slide): no shape label, no hit region */
} Item;

static float step_val(const Item *it, int r, int c)
{
    /* r, c in the step's own coordinates */
    const float *d = it->vals ? it->vals : it->s->data;
    return d[(size_t)r * (size_t)it->s->cols + (size_t)c];
}

static int step_state(const Item *it, int r, int c)
{
    return it->state ? it->state[(size_t)r * (size_t)it->s->cols + (size_t)c] : ST_VALUE;
}

/* Displayed (i, j) of the full matrix → the step's (r, c). */
static void full_to_step(const Item *it, int i, int j, int *r, int *c)
{
    *r = it->transposed ? j : i;
    *c = it->transposed ? i : j;
    if (it->row_map) *r = it->row_map[*r];
}

/* Additive attention's W_a: its first d_x rows multiply x_i, the others y_j. */
static int is_w_a(const Item *it)
{
    return it->trace->cfg.attention == ATTN_ADDITIVE && it->s->kind == ATTN_STEP_WEIGHT &&
           strcmp(it->s->name, "W_a") == 0;
}

/* Displayed (i, j) of the zoom window → the step's (r, c). */
static void disp_to_step(const Item *it, int i, int j, int *r, int *c)
{
    full_to_step(it, i + it->r0, j + it->c0, r, c);
}

static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* The colour value x of the step's cell (r, c) gets in this item. */
static SDL_Color item_color(const Item *it, int r, float x)
{
    if (it->weights) return render_weight_color(it->wscale, x, it->row_max ? it->row_max[r] : 1.0f);
    return render_value_color(x, 0, it->range);
}

/* Fills rc->row_max with each row's largest shown value and points the item
 * at it (row scale only; the buffer is the frame's scratch, valid until the
 * next item asks), for the rows on screen: zoomed, the other rows are not
 * read. 0, or -1 out of memory (the item then colours by [0, 1]). */
static int item_row_max(RenderCtx *rc, Item *it)
{
    it->row_max = NULL;
    if (!it->weights || it->wscale != VIEW_WEIGHTS_ROW) return 0;
    size_t R = (size_t)it->s->rows;
    if (R > rc->row_max_cap) {
        float *p = realloc(rc->row_max, R * sizeof *p);
        if (!p) {
            it->wscale = VIEW_WEIGHTS_UNIT;
            return -1;
        }
        rc->row_max = p;
        rc->row_max_cap = R;
    }
    /* the step's rows on screen: the displayed rows, or columns when transposed */
    int r0 = it->transposed ? it->c0 : it->r0, r1 = r0 + (it->transposed ? it->cols : it->rows);
    if (it->row_map) { /* displayed rows stand for any of the step's */
        r0 = 0;
        r1 = it->s->rows;
    }
    for (int r = r0; r < r1 && r < it->s->rows; r++) {
        float m = 0.0f;
        for (int c = 0; c < it->s->cols; c++) {
            float x = step_val(it, r, c);
            if (x > m) m = x;
        }
        rc->row_max[r] = m;
    }
    it->row_max = rc->row_max;
    return 0;
}

/* The colour of the step's cell (r, c) as drawn: empty, blocked or a value.
 * A blocked weight that softmax made nonzero (a finite fill on a row that
 * sees nothing) keeps its value's colour: it is real attention. */
static SDL_Color cell_color(const View *v, const Theme *th, const Item *it, int r, int c)
{
    int st = step_state(it, r, c);
    if (!it->state && view_cell_blocked(v, it->s, r, c)) st = ST_BLOCKED;
    if (st == ST_EMPTY) return th->panel;
    float x = step_val(it, r, c);
    if (st != ST_BLOCKED || (it->weights && x > 0.0f)) return item_color(it, r, x);
    SDL_Color from = isfinite(x) && it->blocked_mix < 1.0f ? item_color(it, r, x) : th->blocked;
    return it->blocked_mix >= 1.0f ? th->blocked : mix(from, th->blocked, it->blocked_mix);
}

/* c's buffer of `bytes` for step s of view v; *filled: it already holds
 * what was worked out for that step (1), or is to be filled (0). NULL out
 * of memory. */
static void *step_scratch(StepScratch *c, const View *v, const AttnStep *s, size_t bytes, int *filled)
{
    *filled = c->view_id == v->id && c->step == s && c->data == s->data && c->buf;
    if (*filled) return c->buf;
    if (bytes > c->cap || !c->buf) {
        void *b = realloc(c->buf, bytes ? bytes : 1);
        if (!b) return NULL;
        c->buf = b;
        c->cap = bytes;
    }
    c->view_id = v->id;
    c->step = s;
    c->data = s->data;
    return c->buf;
}

/* Step s's cells, ST_BLOCKED where the mask blocks them, else ST_VALUE:
 * kept for the step shown, so that neither an animation's frames nor a
 * hover over a 1024×1024 result ask view_cell_blocked of every cell. The
 * panel's result borrows it until the panel is drawn: only panel_animate
 * asks for it, once per panel (a third step would overwrite what a result
 * still points at). */
static const unsigned char *step_blocked(RenderCtx *rc, const View *v, const AttnStep *s)
{
    int filled;
    size_t n = (size_t)s->rows * (size_t)s->cols;
    /* two kept: a step's operand and its result (masked and softmax) */
    StepScratch *keep = &rc->blocked_of[0], *other = &rc->blocked_of[1];
    if (!(keep->view_id == v->id && keep->step == s) &&
        ((other->view_id == v->id && other->step == s) || other->last_frame < keep->last_frame)) {
        keep = other;
    }
    keep->last_frame = rc->frame;
    unsigned char *b = step_scratch(keep, v, s, n, &filled);
    if (!b || filled) return b;
    for (int r = 0; r < s->rows; r++) {
        unsigned char *row = b + (size_t)r * (size_t)s->cols;
        view_row_blocked(v, s, r, 0, s->cols, row);
        for (int c = 0; c < s->cols; c++) row[c] = row[c] ? ST_BLOCKED : ST_VALUE;
    }
    return b;
}

/* The pooling rule's key (heatmap_key) of the step's cell (r, c): its state
 * as drawn (a blocked weight that softmax made nonzero shows its value) and
 * strength. */
static uint64_t pool_key(const View *v, const Item *it, int r, int c)
{
    int st = step_state(it, r, c);
    if (!it->state && view_cell_blocked(v, it->s, r, c)) st = ST_BLOCKED;
    float x = step_val(it, r, c);
    if (st == ST_BLOCKED && it->weights && x > 0.0f) st = ST_VALUE;
    return heatmap_key((unsigned char)st,
                       heatmap_strength(x, it->weights, it->row_max != NULL, it->row_max ? it->row_max[r] : 1.0f));
}

/* Adds displayed row i's cells j0 .. j1-1 to the picks of the column spans
 * cs[0 .. n): straight along the step's row when it is drawn as it stands
 * (one cell after another in memory), else cell by cell through pool_key;
 * key is scratch for j1 - j0 cells. */
static void pool_row(const View *v, const Item *it, int i, int j0, int j1, const HeatmapSpan *cs, int n,
                     HeatmapPick *best, uint64_t *key)
{
    const AttnStep *s = it->s;
    int r = i + it->r0, c0 = j0 + it->c0;
    if (it->transposed || it->row_map || (!it->state && v->lesson->cfg.mask_kind != ATTN_MASK_NONE)) {
        for (int j = j0; j < j1; j++) {
            int sr, sc;
            disp_to_step(it, i, j, &sr, &sc);
            key[j - j0] = pool_key(v, it, sr, sc);
        }
        heatmap_pool_row(key, i, cs, n, best);
        return;
    }
    size_t at = (size_t)r * (size_t)s->cols + (size_t)c0;
    heatmap_pool_values((it->vals ? it->vals : s->data) + at, it->state ? it->state + at : NULL, it->weights,
                        it->row_max != NULL, it->row_max ? it->row_max[r] : 1.0f, i, cs, n, best);
}

/* Makes room for the scratch of a texture of W × H pixels showing rows ×
 * cols cells; 0, or -1 out of memory. */
static int texture_scratch(RenderCtx *rc, int W, int H, int rows, int cols)
{
    size_t n = (size_t)W * (size_t)H + (size_t)W;
    if (n > rc->pix_cap) {
        uint32_t *p = realloc(rc->pix, n * sizeof *p);
        if (!p) return -1;
        rc->pix = p;
        rc->pix_cap = n;
    }
    size_t spans = (size_t)imax(rows, cols) + 1, cells = (size_t)cols + 1;
    if (spans > rc->span_cap) {
        HeatmapSpan *a = realloc(rc->row_spans, spans * sizeof *a);
        if (a) rc->row_spans = a;
        HeatmapSpan *b = a ? realloc(rc->col_spans, spans * sizeof *b) : NULL;
        if (b) rc->col_spans = b;
        HeatmapPick *k = b ? realloc(rc->picks, spans * sizeof *k) : NULL;
        if (k) rc->picks = k;
        if (!k) return -1;
        rc->span_cap = spans;
    }
    if (cells > rc->cell_cap) {
        uint64_t *k = realloc(rc->cell_key, cells * sizeof *k);
        if (!k) return -1;
        rc->cell_key = k;
        rc->cell_cap = cells;
    }
    return 0;
}

/* The remembered picks of a settled matrix drawn pooled at this size and
 * window (or a free entry to fill, *hit 0): which cell each block shows
 * depends on the cells' values and states and on the weight scale, not on
 * the colours, so the same step drawn as the next step's operand (another
 * colour range) or in another theme is coloured again without reading its
 * cells. NULL out of memory. */
static PickMap *pick_map(RenderCtx *rc, const View *v, const Item *it, int W, int H, int nr, int nc, int *hit)
{
    uint64_t key = mix64(mix64((uint64_t)(uintptr_t)it->s, (uint64_t)(uintptr_t)it->s->data), (uint64_t)v->id);
    key = mix64(key, (uint64_t)it->picks_fixed); /* an animation's picks, or the settled matrix's */
    key = mix64(mix64(key, (uint64_t)W << 32 | (uint64_t)H),
                (uint64_t)it->r0 << 40 | (uint64_t)it->c0 << 20 | (uint64_t)(it->rows * 4099 + it->cols));
    key = mix64(mix64(key, (uint64_t)it->transposed << 2 | (uint64_t)it->weights << 1 | (it->row_max != NULL)),
                (uint64_t)(uintptr_t)it->row_map);
    if (!key) key = 1;
    PickMap *slot = &rc->pick_maps[0];
    for (int i = 0; i < RENDER_PICK_MAPS; i++) {
        PickMap *e = &rc->pick_maps[i];
        if (e->key == key && e->nr == nr && e->nc == nc) {
            e->last_frame = rc->frame;
            *hit = 1;
            return e;
        }
        if (e->last_frame < slot->last_frame) slot = e;
    }
    size_t n = (size_t)nr * (size_t)nc;
    if (n > slot->cap) {
        HeatmapPick *p = realloc(slot->pick, n * sizeof *p);
        if (!p) return NULL;
        slot->pick = p;
        slot->cap = n;
    }
    slot->key = key; /* the caller fills every pick */
    slot->nr = nr;
    slot->nc = nc;
    slot->last_frame = rc->frame;
    *hit = 0;
    return slot;
}

/* Draws the pixels of rect (whole spans of the plans) into the texture:
 * each pixel the colour of the cell the downsampling rule (heatmap.h)
 * picks from its block, one cell per pixel or more when zoomed in. A
 * settled matrix's picks are remembered (pick_map). */
static void texture_draw(RenderCtx *rc, const View *v, const Item *it, SDL_Texture *tex, int W, int H, HeatmapRect rect,
                         int settled)
{
    const Theme *th = render_theme(v->theme);
    HeatmapSpan *rs = rc->row_spans, *cs = rc->col_spans;
    int nr = heatmap_plan(it->rows, H, rs), nc = heatmap_plan(it->cols, W, cs);
    /* the spans inside rect */
    int k0 = 0, k1 = nr, m0 = 0, m1 = nc;
    while (k0 < nr && rs[k0].p1 <= rect.y) k0++;
    while (k1 > k0 && rs[k1 - 1].p0 >= rect.y + rect.h) k1--;
    while (m0 < nc && cs[m0].p1 <= rect.x) m0++;
    while (m1 > m0 && cs[m1 - 1].p0 >= rect.x + rect.w) m1--;
    if (k0 >= k1 || m0 >= m1) return;
    int x0 = cs[m0].p0, w = cs[m1 - 1].p1 - x0, y0 = rs[k0].p0;
    int j0 = cs[m0].c0, j1 = cs[m1 - 1].c1;
    uint32_t *row = rc->pix + (size_t)W * (size_t)H; /* (w) one pixel row */
    uint32_t *out = rc->pix;                         /* (h, w) the rect's pixels */
    HeatmapPick *best = rc->picks;
    /* (nr, nc) a settled matrix's picks, whole, when it is pooled */
    int whole = k0 == 0 && k1 == nr && m0 == 0 && m1 == nc, hit = 0;
    PickMap *pm = (settled || it->picks_fixed) && whole && (nr < it->rows || nc < it->cols)
                      ? pick_map(rc, v, it, W, H, nr, nc, &hit)
                      : NULL;
    for (int k = k0; k < k1; k++) {
        const HeatmapSpan *R = &rs[k];
        int pooled = R->c1 - R->c0 > 1 || nc < it->cols;
        if (hit) {
            best = pm->pick + (size_t)k * (size_t)nc;
            pooled = 1;
        } else if (pooled) {
            /* a block of rows or of columns per pixel: the rule picks one cell */
            heatmap_pick_reset(best + m0, m1 - m0);
            for (int i = R->c0; i < R->c1; i++) pool_row(v, it, i, j0, j1, cs + m0, m1 - m0, best + m0, rc->cell_key);
        }
        for (int m = m0; m < m1; m++) {
            int i = pooled ? best[m].row : R->c0, j = pooled ? best[m].col : cs[m].c0, r, c;
            if (pm && !hit) pm->pick[(size_t)k * (size_t)nc + (size_t)m] = (HeatmapPick){0, i, j};
            disp_to_step(it, i, j, &r, &c);
            SDL_Color col = cell_color(v, th, it, r, c);
            uint32_t px = 0xFF000000u | (uint32_t)col.r << 16 | (uint32_t)col.g << 8 | col.b;
            for (int x = cs[m].p0; x < cs[m].p1; x++) row[x - x0] = px;
        }
        for (int y = R->p0; y < R->p1; y++) memcpy(out + (size_t)(y - y0) * (size_t)w, row, (size_t)w * sizeof *row);
    }
    SDL_Rect dst = {x0, y0, w, rs[k1 - 1].p1 - y0};
    SDL_UpdateTexture(tex, &dst, out, w * 4);
}

/* The cells' texture at its size on screen, W × H pixels, for the displayed
 * window of cells (zoom): cell j covers pixels [lrint(W/cols·j), lrint(W/cols·(j+1)))
 * as the grid lines and render_cell_rect have it, so copying it is a plain
 * 1:1 copy every frame; where cells are thinner than a pixel, each pixel
 * shows the cell heatmap.h's rule picks from its block. Cached by what it
 * shows; while an animation reveals the cells, only the rows revealed since
 * the texture was last drawn are drawn again (heatmap_dirty). */
static SDL_Texture *matrix_texture(RenderCtx *rc, const View *v, const Item *it, uint64_t anim_key, int W, int H)
{
    if (W < 1) W = 1;
    if (H < 1) H = 1;
    /* what the texture shows, but for the animation's frame */
    uint64_t base = mix64(mix64((uint64_t)(uintptr_t)it->trace, (uint64_t)it->step), (uint64_t)it->transposed);
    uint32_t rbits;
    memcpy(&rbits, &it->range, 4);
    base = mix64(mix64(base, rbits), (uint64_t)(it->weights * 2 + 1) * 131 + (uint64_t)v->theme);
    base = mix64(mix64(base, (uint64_t)it->wscale * 7 + 1), (uint64_t)(uintptr_t)it->row_map);
    base = mix64(base, (uint64_t)v->id); /* a reloaded lesson may reuse the old trace's address */
    base = mix64(mix64(base, (uint64_t)W << 32 | (uint64_t)H),
                 (uint64_t)it->r0 << 40 | (uint64_t)it->c0 << 20 | (uint64_t)(it->rows * 4099 + it->cols));
    HeatmapFrame fr = {anim_key, it->anim_lo, it->anim_hi};
    /* the final state (1: with the mask's states), not a frame of an animation */
    int settled = anim_key <= 1 && fr.lo == fr.hi && fr.lo == (long long)it->s->rows * it->s->cols;
    uint64_t key = mix64(mix64(mix64(base, fr.look), (uint64_t)fr.lo), (uint64_t)fr.hi);
    if (!key) key = 1;
    MatEntry *slot = NULL, *oldest = &rc->mats[0], *same = NULL;
    for (int i = 0; i < RENDER_MAT_CACHE; i++) {
        MatEntry *e = &rc->mats[i];
        if (e->key == key && e->tex) {
            e->last_frame = rc->frame;
            return e->tex;
        }
        if (e->tex && e->base == base && !same) same = e;
        if (!e->tex && !slot) slot = e;
        if (e->last_frame < oldest->last_frame) oldest = e;
    }
    /* the row scale's maxima, scanned only now that the texture is drawn */
    Item scaled = *it;
    item_row_max(rc, &scaled);
    it = &scaled;
    if (texture_scratch(rc, W, H, it->rows, it->cols) != 0) return NULL;
    int tr = it->transposed;
    HeatmapRect rect = {0, 0, W, H};
    if (same) {
        /* the same matrix at another frame of its animation: what changed */
        slot = same;
        if (heatmap_dirty(same->frame, fr, it->s->cols, tr, tr ? it->c0 : it->r0, tr ? it->cols : it->rows, W, H,
                          &rect))
            texture_draw(rc, v, it, slot->tex, W, H, rect, settled);
    } else {
        if (!slot) slot = oldest;
        if (slot->tex && (slot->w != W || slot->h != H)) mat_entry_drop(rc, slot);
        if (!slot->tex) {
            mat_cache_trim(rc, (size_t)W * (size_t)H * 4);
            slot->tex = SDL_CreateTexture(rc->sdl, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STATIC, W, H);
            if (!slot->tex) return NULL;
            SDL_SetTextureScaleMode(slot->tex, SDL_ScaleModeNearest);
            slot->w = W;
            slot->h = H;
            rc->mat_bytes += (size_t)W * (size_t)H * 4;
        }
        texture_draw(rc, v, it, slot->tex, W, H, rect, settled);
    }
    slot->key = key;
    slot->base = base;
    slot->frame = fr;
    slot->last_frame = rc->frame;
    return slot->tex;
}

typedef struct Fonts {
    int body, small, label, formula, title, num;
    int min; /* no text of the frame is drawn smaller than this */
} Fonts;

static int text_h(RenderCtx *rc, int size)
{
    return text_line_height(&rc->text, size);
}

/* A width cached under key, or -1. */
static int width_cached(const WidthCache *c, uint64_t key)
{
    for (int i = 0; i < RENDER_NUM_WIDTHS; i++)
        if (c->e[i].key == key) return c->e[i].width;
    return -1;
}

/* Caches width under key, in place of the oldest; returns width. */
static int width_cache(WidthCache *c, uint64_t key, int width)
{
    c->e[c->next].key = key;
    c->e[c->next].width = width;
    c->next = (c->next + 1) % RENDER_NUM_WIDTHS;
    return width;
}

/* The widest of n labels at size (of every k-th, past 200 labels). */
static int label_width(RenderCtx *rc, const char *const *labels, int n, int size)
{
    if (!labels) return 0;
    int step = n > 200 ? n / 200 : 1;
    uint64_t key = attn_fnv1a64_bytes(ATTN_FNV1A64_BASIS, &size, sizeof size);
    for (int i = 0; i < n; i += step) key = attn_fnv1a64_bytes(key, labels[i], strlen(labels[i]) + 1);
    int w = width_cached(&rc->label_widths, key);
    if (w >= 0) return w;
    w = 0;
    for (int i = 0; i < n; i += step) w = imax(w, text_width(&rc->text, labels[i], size));
    return width_cache(&rc->label_widths, key, w);
}

/* Draws s at size, shortened with "…" to maxw; returns the width drawn.
 * keep: s outlives the frame (a token, the title), and when shortened it is
 * remembered, so that hovering it shows the whole text. */
static int draw_fit_as(RenderCtx *rc, const char *s, int size, int maxw, SDL_Color col, int x, int y, int align,
                       int keep)
{
    char buf[256];
    const char *t = text_fit(&rc->text, s, size, maxw, buf, sizeof buf);
    if (!t) return 0;
    int w = draw_text(rc, t, size, col, x, y, align);
    if (keep && t != s && rc->n_shorts < RENDER_MAX_SHORTS)
        rc->shorts[rc->n_shorts++] = (ShortLabel){{align == 1   ? x - w / 2
                                                   : align == 2 ? x - w
                                                                : x,
                                                   y, w, text_line_height(&rc->text, size)},
                                                  s};
    return w;
}

/* A text of this frame only (a caption, a note), shortened to maxw. */
static int draw_fit(RenderCtx *rc, const char *s, int size, int maxw, SDL_Color col, int x, int y, int align)
{
    return draw_fit_as(rc, s, size, maxw, col, x, y, align, 0);
}

/* A label that outlives the frame (a token, the lesson's title), shortened to maxw. */
static int draw_label(RenderCtx *rc, const char *s, int size, int maxw, SDL_Color col, int x, int y, int align)
{
    return draw_fit_as(rc, s, size, maxw, col, x, y, align, 1);
}

/* The whole text of the hovered shortened label, in a box below it. */
static void draw_label_tooltip(RenderCtx *rc, const View *v, int size)
{
    if (!v->hover_label) return;
    const Theme *th = render_theme(v->theme);
    for (int i = 0; i < rc->n_shorts; i++) {
        if (rc->shorts[i].full != v->hover_label) continue;
        SDL_Rect r = rc->shorts[i].rect;
        int w = text_width(&rc->text, v->hover_label, size), lh = text_line_height(&rc->text, size);
        w = w < rc->width - 8 ? w : rc->width - 8;
        SDL_Rect box = {r.x + r.w / 2 - w / 2 - 8, r.y + r.h + 4, w + 16, lh + 8};
        if (box.x + box.w > rc->width - 4) box.x = rc->width - 4 - box.w;
        if (box.x < 4) box.x = 4;
        if (box.y + box.h > rc->height - 4) box.y = r.y - box.h - 4;
        render_fill(rc, box, th->panel);
        render_outline(rc, box, th->text, 1);
        char buf[256];
        const char *t = text_fit(&rc->text, v->hover_label, size, w, buf, sizeof buf);
        if (t) draw_text(rc, t, size, th->text, box.x + 8, box.y + 4, 0);
        return;
    }
}

/* The legend's label at its top (1), bottom (0) or middle (-1; "" for none). */
static void legend_text(char *buf, size_t len, const View *v, const Item *it, int top)
{
    if (it->weights) {
        switch (it->wscale) {
        case VIEW_WEIGHTS_ROW:
            snprintf(buf, len, "%s", top == 1 ? view_weight_scale_top(v) : top == 0 ? "0" : "");
            return;
        case VIEW_WEIGHTS_LOG:
            snprintf(buf, len, "%s", top == 1 ? "1" : top == 0 ? "10⁻⁴" : "10⁻²");
            return;
        default:
            snprintf(buf, len, "%s", top == 1 ? "1" : top == 0 ? "0" : "");
            return;
        }
    }
    if (top < 0) {
        snprintf(buf, len, "0");
        return;
    }
    /* a whole-number matrix's whole-number bound prints as its cells do */
    int style = (it->style == CELL_INTEGER && it->range == floorf(it->range)) || it->style == CELL_TENTHS ? it->style
                                                                                                          : CELL_PLAIN;
    fmt_cell(buf, len, top ? it->range : -it->range, style);
}

/* The name of the weight scale, written over a weights legend. */
static const char *legend_scale_name(const View *v, const Item *it)
{
    return it->weights ? view_weight_scale_text(v) : NULL;
}

static int legend_width(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    char a[32], b[32];
    legend_text(a, sizeof a, v, it, 1);
    legend_text(b, sizeof b, v, it, 0);
    int w = f->body / 2 + 4 + imax(text_width(&rc->text, a, f->small), text_width(&rc->text, b, f->small)) + 6;
    const char *name = legend_scale_name(v, it);
    if (name) w = imax(w, text_width(&rc->text, name, f->small) + 6);
    return w;
}

static void draw_legend(RenderCtx *rc, const View *v, const Item *it, const Fonts *f, int x, int y, int h)
{
    const Theme *th = render_theme(v->theme);
    int bw = imax(6, f->body / 2);
    int lh = text_h(rc, f->small);
    /* the scale in use: every weights legend says it, at the top of the
     * matrix's height when the bar keeps room for its two ends, else over it */
    const char *name = legend_scale_name(v, it);
    int name_y = y - lh - 2;
    if (name && h >= 3 * lh + 2) {
        name_y = y;
        y += lh + 2;
        h -= lh + 2;
    }
    if (name) draw_text(rc, name, f->small, th->text, x, name_y, 0);
    /* the end values sit beside the bar's ends, inside the matrix's height */
    if (h < 2 * lh) {
        y -= (2 * lh - h) / 2;
        h = 2 * lh;
    }
    for (int i = 0; i < h; i++) {
        float t = 1.0f - (float)i / (float)(h > 1 ? h - 1 : 1);
        SDL_Color c = it->weights ? render_color_seq(t) : render_color_div(2.0f * t - 1.0f);
        SDL_SetRenderDrawBlendMode(rc->sdl, SDL_BLENDMODE_NONE);
        SDL_SetRenderDrawColor(rc->sdl, c.r, c.g, c.b, 255);
        SDL_RenderDrawLine(rc->sdl, x, y + i, x + bw - 1, y + i);
    }
    render_outline(rc, (SDL_Rect){x - 1, y - 1, bw + 2, h + 2}, th->dim, 1);
    char a[32], b[32], mid[32];
    legend_text(a, sizeof a, v, it, 1);
    legend_text(b, sizeof b, v, it, 0);
    legend_text(mid, sizeof mid, v, it, -1);
    draw_text(rc, a, f->small, th->dim, x + bw + 4, y, 0);
    draw_text(rc, b, f->small, th->dim, x + bw + 4, y + h - lh, 0);
    if (mid[0] && h >= 4 * lh) draw_text(rc, mid, f->small, th->dim, x + bw + 4, y + h / 2 - lh / 2, 0);
}

/* Token labels: every k-th when rows are thinner than the text. */
static int label_stride(float cell, int lh)
{
    if (cell <= 0) return 1 << 20;
    int k = (int)ceilf((float)lh * 1.05f / cell);
    return k < 1 ? 1 : k;
}

/* The smallest of 1, 2, 5, 10, 20, 50, … at least k: the stride of numbered columns. */
static int nice_stride(int k)
{
    int m = 1;
    for (;;) {
        if (k <= m) return m;
        if (k <= 2 * m) return 2 * m;
        if (k <= 5 * m) return 5 * m;
        m *= 10;
    }
}

static int sel_for_labels(const View *v, const char *const *labels)
{
    if (!labels) return -1;
    const Lesson *L = v->lesson;
    if (L->n_source_tokens && labels == (const char *const *)L->source_tokens) return v->sel_key;
    return v->sel_query;
}

/* "1", "2", … "n": the column labels of the inputs' features; NULL when out of memory. */
static const char *const *index_labels(RenderCtx *rc, int n)
{
    if (n <= rc->n_index) return (const char *const *)rc->index_label;
    char **lab = realloc(rc->index_label, (size_t)n * sizeof *lab);
    if (!lab) return NULL;
    rc->index_label = lab;
    for (int i = rc->n_index; i < n; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", i + 1);
        lab[i] = malloc(strlen(buf) + 1);
        if (!lab[i]) {
            rc->n_index = i;
            return NULL;
        }
        memcpy(lab[i], buf, strlen(buf) + 1);
    }
    rc->n_index = n;
    return (const char *const *)lab;
}

static int item_w(const Item *it)
{
    return imax(1, (int)lrintf(it->cw * it->cols));
}

static int item_h(const Item *it)
{
    return imax(1, (int)lrintf(it->ch * it->rows));
}

/* ---- elided matrices ----
 *
 * A matrix too wide or too tall for every number to show at the readable
 * size is drawn elided, as NumPy prints a large array: its first and last
 * ELIDE_KEEP columns (rows) at the readable size, with a column of "⋯" (a row
 * of "⋮") between them, and the kept columns' labels and numbers their true
 * ones (1 2 3 ⋯ 510 511 512). panel_layout elides only when nothing else
 * gives readable cells (the result on a row of its own, fewer legends), one
 * matrix at a time, the one with the most columns or rows first, and only a
 * side of at least ELIDE_FROM entries: elision then hides at least half of
 * it. Square data is elided both ways, so it stays square. When every
 * side that may be is elided and a matrix is still too small, the elided
 * sides keep ELIDE_KEEP_TIGHT at each end, then those not of tokens
 * ELIDE_KEEP_TIGHTEST (panel_tighten), and concat shows
 * its first and last heads only (panel_show). The matrix is
 * drawn as up to four pieces, each a window of its cells like a zoom's, so
 * every kept cell has its own colour, number and hover (its derivation with
 * its true indices); zooming the result shows any cell.
 *
 * A side of tokens longer than ELIDE_TOKENS_MAX is never elided: there the
 * lesson is the pattern across the whole sequence (a causal triangle, a
 * diagonal), drawn whole and max-pooled (heatmap.h), not six of its rows.
 * Such a matrix shows its numbers when hovered or zoomed, and says so. */
#define ELIDE_KEEP          3
#define ELIDE_KEEP_TIGHT    2
#define ELIDE_KEEP_TIGHTEST 1
#define ELIDE_FROM          12
#define ELIDE_TOKENS_MAX    16

enum { EDGE_LEFT = 1, EDGE_RIGHT = 2, EDGE_TOP = 4, EDGE_BOTTOM = 8 };

/* The rows (columns) of cells a matrix takes in the layout: all of them, or
 * an elided side's kept ones and the gap between. */
static int lay_rows(const Item *it)
{
    return it->keep_r ? 2 * it->keep_r + 1 : it->full_rows;
}

static int lay_cols(const Item *it)
{
    return it->keep_c ? 2 * it->keep_c + 1 : it->full_cols;
}

/* Sets how many entries at each end a matrix's rows and columns keep
 * (0: the side whole), and the rows and columns of cells it then takes. A
 * matrix never elided, zoomed perhaps, keeps its window. */
static void item_keep(Item *it, int keep_r, int keep_c)
{
    if (!it->keep_r && !it->keep_c && !keep_r && !keep_c) return;
    it->keep_r = keep_r;
    it->keep_c = keep_c;
    it->rows = lay_rows(it);
    it->cols = lay_cols(it);
}

/* Whether the item's rows (cols: columns) are tokens, each with its label. */
static int item_token_side(const Item *it, int cols)
{
    return cols ? it->cl && !it->index_cols : it->rl != NULL;
}

/* The row (column) of n drawn after i: the next, or past an elided side's gap. */
static int next_kept(int i, int n, int keep)
{
    return keep && i + 1 == keep ? n - keep : i + 1;
}

/* The pieces a matrix is drawn as, into pc[4]: itself, or each kept corner
 * of an elided matrix as a window of its cells at its place on screen.
 * Returns how many. */
static int item_pieces(const Item *it, Item *pc)
{
    int nr = it->keep_r ? 2 : 1, nc = it->keep_c ? 2 : 1, n = 0;
    for (int a = 0; a < nr; a++)
        for (int b = 0; b < nc; b++) {
            Item *p = &pc[n++];
            *p = *it;
            p->keep_r = p->keep_c = 0;
            p->edges = (b == 0 ? EDGE_LEFT : 0) | (b == nc - 1 ? EDGE_RIGHT : 0) | (a == 0 ? EDGE_TOP : 0) |
                       (a == nr - 1 ? EDGE_BOTTOM : 0);
            if (it->keep_r) {
                p->rows = it->keep_r;
                p->r0 = a ? it->full_rows - it->keep_r : 0;
                p->y = it->y + (a ? (int)lrintf(it->ch * (float)(it->keep_r + 1)) : 0);
            }
            if (it->keep_c) {
                p->cols = it->keep_c;
                p->c0 = b ? it->full_cols - it->keep_c : 0;
                p->x = it->x + (b ? (int)lrintf(it->cw * (float)(it->keep_c + 1)) : 0);
            }
        }
    return n;
}

/* Displayed cell (i, j) of the window on screen. */
static SDL_Rect cell_rect(const Item *it, int i, int j)
{
    int x0 = (int)lrintf(it->cw * j), y0 = (int)lrintf(it->ch * i);
    return (SDL_Rect){it->x + x0, it->y + y0, (int)lrintf(it->cw * (j + 1)) - x0, (int)lrintf(it->ch * (i + 1)) - y0};
}

/* W_a: a line between the rows that multiply x_i and those that multiply
 * y_j, and the two bands named (columns when drawn transposed). */
static void item_draw_w_a_split(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    int W = item_w(it), H = item_h(it);
    const Theme *th = render_theme(v->theme);
    int dx = it->trace->cfg.d_x, tr = it->transposed, off = tr ? it->c0 : it->r0, along = tr ? it->cols : it->rows;
    float cs = tr ? it->cw : it->ch;
    int lw = imax(3, f->body / 6), lsz = it->lsize, llh = text_h(rc, lsz);
    int cut = (tr ? it->x : it->y) + (int)lrintf(cs * (float)(dx - off));
    if (dx - off > 0 && dx - off < along)
        render_fill(
            rc, tr ? (SDL_Rect){cut - lw / 2, it->y - 4, lw, H + 8} : (SDL_Rect){it->x - 4, cut - lw / 2, W + 8, lw},
            th->text);
    const char *band[2] = {"x_i", it->trace->cfg.cross ? "y_j" : "x_j"};
    for (int b = 0; b < 2; b++) {
        int a0 = imax(0, (b ? dx : 0) - off), a1 = imin(along, (b ? it->s->rows : dx) - off);
        /* named where the band is long enough for its name */
        if (a1 <= a0 || cs * (float)(a1 - a0) < (float)(tr ? text_width(&rc->text, band[b], lsz) + 4 : llh)) continue;
        if (!(it->edges & (tr ? EDGE_TOP : EDGE_LEFT))) continue;
        int mid = (int)lrintf(cs * (float)(a0 + a1) / 2.0f);
        if (tr)
            draw_text(rc, band[b], lsz, th->text, it->x + mid, it->y - llh - 4, 1);
        else
            draw_text(rc, band[b], lsz, th->text, it->x - 8, it->y + mid - llh / 2, 2);
    }
}

/* What a settled cell shows: its state and, in num, its number ("" for none).
 * A cell still animating shows no number: never an in-between value. */
static int cell_number(const View *v, const Item *it, int r, int c, char *num, size_t len, SDL_Color *bg)
{
    const Theme *th = render_theme(v->theme);
    int st = step_state(it, r, c);
    if (!it->state && view_cell_blocked(v, it->s, r, c)) st = ST_BLOCKED;
    num[0] = '\0';
    if (st == ST_EMPTY) return st;
    float fin = it->s->data[(size_t)r * (size_t)it->s->cols + (size_t)c];
    float x = step_val(it, r, c);
    if (st == ST_BLOCKED && it->weights) {
        /* the true weight: 0 under −∞; under a finite fill what softmax gave
         * (a row that sees nothing is uniform), in its colour */
        if (memcmp(&x, &fin, sizeof x) != 0) return st; /* animating */
        if (x > 0.0f)
            fmt_cell(num, len, x, CELL_WEIGHTS);
        else
            snprintf(num, len, "0");
        *bg = cell_color(v, th, it, r, c);
        return st;
    }
    if (st == ST_BLOCKED) {
        if (it->blocked_mix <= 0.5f) return st;
        /* what the score becomes: −∞, or the finite fill (−1e9, −1e20) */
        fmt_cell(num, len, fin, CELL_PLAIN);
        *bg = th->blocked;
        return st;
    }
    if (memcmp(&x, &fin, sizeof x) != 0) return st; /* animating */
    fmt_cell(num, len, x, it->style);
    *bg = item_color(it, r, x);
    return st;
}

/* The width of the widest number the matrix shows at size: of the cells on
 * screen (zoomed, the window's; elided, the kept ones). */
static int numbers_width(RenderCtx *rc, const View *v, const Item *it, int size)
{
    const AttnStep *s = it->s;
    /* cached by the window of cells shown, not only the step: zoomed, the
     * window's numbers decide */
    uint64_t key = mix64(mix64((uint64_t)v->id, (uint64_t)(uintptr_t)s), (uint64_t)size << 2 | (uint64_t)it->style);
    key = mix64(mix64(key, (uint64_t)it->r0 << 40 | (uint64_t)it->c0 << 20 | (uint64_t)(it->rows * 4099 + it->cols)),
                (uint64_t)it->transposed << 1 ^ (uint64_t)(uintptr_t)it->row_map);
    key = mix64(key, (uint64_t)it->keep_r << 8 | (uint64_t)it->keep_c);
    int w = width_cached(&rc->num_widths, key);
    if (w >= 0) return w;
    w = 0;
    int end_r = it->keep_r ? it->full_rows : it->r0 + it->rows, end_c = it->keep_c ? it->full_cols : it->c0 + it->cols;
    for (int i = it->keep_r ? 0 : it->r0; i < end_r; i = next_kept(i, it->full_rows, it->keep_r))
        for (int j = it->keep_c ? 0 : it->c0; j < end_c; j = next_kept(j, it->full_cols, it->keep_c)) {
            char num[32];
            int r, c;
            full_to_step(it, i, j, &r, &c);
            float x = s->data[(size_t)r * (size_t)s->cols + (size_t)c];
            if (view_cell_blocked(v, s, r, c) && it->weights && !(x > 0.0f))
                snprintf(num, sizeof num, "0");
            else
                fmt_cell(num, sizeof num, x, it->style);
            w = imax(w, text_width(&rc->text, num, size));
        }
    return width_cache(&rc->num_widths, key, w);
}

/* Matrices with more cells than this show no numbers: nobody reads them. */
#define NUMBERS_MAX_CELLS 900
/* A number keeps this many pixels clear of its cell's left and right edges,
 * and its digits' ink this many of the top and bottom edges. */
#define NUMBERS_PAD  4
#define NUMBERS_VPAD 4

/* The height of a cell that holds a number at size. */
static float number_cell_h(RenderCtx *rc, int size)
{
    return (float)(text_number_height(&rc->text, size) + 2 * NUMBERS_VPAD);
}

/* The cells' texture, the grid between cells large enough to tell apart, the frame. */
static void item_draw_cells(RenderCtx *rc, const View *v, const Item *it, uint64_t anim_key)
{
    const Theme *th = render_theme(v->theme);
    int W = item_w(it), H = item_h(it);
    SDL_Texture *tex = matrix_texture(rc, v, it, anim_key, W, H);
    SDL_Rect dst = {it->x, it->y, W, H};
    if (tex) {
        SDL_SetTextureAlphaMod(tex, (Uint8)lrintf(255.0f * fclampf(it->alpha, 0, 1)));
        SDL_SetTextureBlendMode(tex, it->alpha < 1.0f ? SDL_BLENDMODE_BLEND : SDL_BLENDMODE_NONE);
        SDL_RenderCopy(rc->sdl, tex, NULL, &dst);
        SDL_SetTextureAlphaMod(tex, 255);
    }
    if (it->cw >= 10 && it->ch >= 10) {
        SDL_SetRenderDrawBlendMode(rc->sdl, SDL_BLENDMODE_NONE);
        SDL_SetRenderDrawColor(rc->sdl, th->grid.r, th->grid.g, th->grid.b, 255);
        for (int j = 1; j < it->cols; j++) {
            int x = it->x + (int)lrintf(it->cw * j);
            SDL_RenderDrawLine(rc->sdl, x, it->y, x, it->y + H - 1);
        }
        for (int i = 1; i < it->rows; i++) {
            int y = it->y + (int)lrintf(it->ch * i);
            SDL_RenderDrawLine(rc->sdl, it->x, y, it->x + W - 1, y);
        }
    }
    render_outline(rc, (SDL_Rect){it->x - 1, it->y - 1, W + 2, H + 2}, th->dim, 1);
    if (rc->record && !it->bare)
        render_layout_add(rc, (LayoutBox){.rect = dst,
                                          .within = rc->within,
                                          .kind = LAYOUT_MATRIX,
                                          .rows = it->full_rows,
                                          .cols = it->full_cols,
                                          .vis_rows = it->rows,
                                          .vis_cols = it->cols,
                                          .token_rows = item_token_side(it, 0),
                                          .token_cols = item_token_side(it, 1),
                                          .what = it->result ? "result" : "matrix"});
}

/* Blocked cells hatched; the numbers, where the cells are large enough. */
static void item_draw_numbers(RenderCtx *rc, const View *v, const Item *it)
{
    const Theme *th = render_theme(v->theme);
    int numbers = it->nsize > 0 && it->alpha >= 0.5f;
    Item scaled = *it;
    if (numbers) item_row_max(rc, &scaled); /* the ink on a cell follows its colour */
    it = &scaled;
    int maskable = it->s->kind == ATTN_STEP_MASKED || it->s->kind == ATTN_STEP_SOFTMAX;
    /* cells too small for a hatch or a number draw nothing here: a
     * 1024×1024 matrix is then not visited cell by cell */
    int hatch = it->blocked_mix > 0.5f && it->cw >= 8 && it->ch >= 8;
    if (!numbers && !((it->state || maskable) && hatch)) return;
    for (int i = 0; i < it->rows; i++)
        for (int j = 0; j < it->cols; j++) {
            int r, c;
            disp_to_step(it, i, j, &r, &c);
            SDL_Rect cell = cell_rect(it, i, j);
            char num[32];
            SDL_Color bgc = th->panel;
            int st = cell_number(v, it, r, c, num, sizeof num, &bgc);
            if (st == ST_BLOCKED && it->blocked_mix > 0.5f && it->cw >= 8 && it->ch >= 8) {
                /* hatch: two diagonals, so blocked never reads as a colour of the map */
                SDL_SetRenderDrawBlendMode(rc->sdl, SDL_BLENDMODE_NONE);
                SDL_SetRenderDrawColor(rc->sdl, th->hatch.r, th->hatch.g, th->hatch.b, 255);
                int step = imax(6, cell.w / 4);
                for (int k = -cell.h; k < cell.w; k += step) {
                    int x0 = cell.x + imax(k, 0), y0 = cell.y + imax(-k, 0);
                    int len = imin(cell.w - imax(k, 0), cell.h - imax(-k, 0));
                    if (len > 1) SDL_RenderDrawLine(rc->sdl, x0, y0, x0 + len - 1, y0 + len - 1);
                }
            }
            if (!numbers || !num[0]) continue;
            render_within(rc, cell, "cell number");
            /* a number too wide for its cell: a power of ten one digit shorter */
            SDL_Color ink = ink_on(bgc);
            int cx = cell.x + cell.w / 2, cy = cell.y + cell.h / 2;
            if (draw_glyphs(rc, num, it->nsize, ink, cx, cy, cell.w - 2) < 0 && strchr(num, 'e')) {
                float written = st == ST_BLOCKED && !it->weights
                                    ? it->s->data[(size_t)r * (size_t)it->s->cols + (size_t)c]
                                    : step_val(it, r, c);
                fmt_cell_digits(num, sizeof num, written, CELL_PLAIN, 1);
                draw_glyphs(rc, num, it->nsize, ink, cx, cy, cell.w - 2);
            }
        }
}

static RenderHit token_hit(const View *v, const Item *it, const char *const *labels, int index, int is_col)
{
    RenderHit h = {RENDER_HIT_TOKEN, it->trace, it->step, -1, -1, 0, 0, NULL};
    int source = v->lesson->n_source_tokens && labels == (const char *const *)v->lesson->source_tokens;
    if (source || (is_col && v->lesson->n_source_tokens == 0))
        h.col = index;
    else
        h.row = index;
    return h;
}

/* Token labels: left of the rows and above the columns, every k_tok-th,
 * level, shortened with "…" to their room. */
static void item_draw_labels(RenderCtx *rc, const View *v, const Item *it)
{
    const Theme *th = render_theme(v->theme);
    int lh = text_h(rc, it->lsize);
    int sel_r = sel_for_labels(v, it->rl), sel_c = sel_for_labels(v, it->cl);
    if (it->rl && it->labels && it->edges & EDGE_LEFT) {
        int k = it->k_tok;
        for (int i = 0; i < it->rows; i += k) {
            const char *lab = it->rl[i + it->r0];
            int y = it->y + (int)lrintf(it->ch * (i + 0.5f)) - lh / 2;
            SDL_Color col = i + it->r0 == sel_r ? th->accent : th->text;
            int tw = draw_label(rc, lab, it->lsize, it->lab_w - 10, col, it->x - 6, y, 2);
            if (it->rl == (const char *const *)v->pair_labels) continue; /* (query, key) pairs, not one token */
            add_hitbox(rc, (SDL_Rect){it->x - 6 - tw, y, tw + 4, lh}, token_hit(v, it, it->rl, i + it->r0, 0));
        }
    }
    if (it->cl && !it->cl_off && (it->labels || !it->row_map) &&
        it->edges & EDGE_TOP) { /* y_j beside x_i shares its pair labels */
        int k = it->index_cols ? it->k_col : it->k_tok;
        int room = (int)(it->cw * (float)(it->stagger ? 2 * k : k)) - 6;
        for (int j = 0; j < it->cols; j += k) {
            const char *lab = it->cl[j + it->c0];
            SDL_Color col = !it->index_cols && j + it->c0 == sel_c ? th->accent : it->index_cols ? th->dim : th->text;
            int cx = it->x + (int)lrintf(it->cw * (j + 0.5f));
            int y = it->y - lh - 4 - (it->stagger && (j / k) % 2 ? lh : 0);
            /* centred on its column, and inside the panel at either end */
            int fit = imin(room, 2 * imin(cx - it->area.x, it->area.x + it->area.w - cx));
            int tw = draw_label(rc, lab, it->lsize, fit, col, cx, y, 1);
            if (!tw || it->index_cols) continue;
            add_hitbox(rc, (SDL_Rect){cx - tw / 2, y, tw, lh}, token_hit(v, it, it->cl, j + it->c0, 1));
        }
    }
}

/* The selected token's row and column outlined. */
static void item_draw_selection(RenderCtx *rc, const View *v, const Item *it)
{
    const Theme *th = render_theme(v->theme);
    int W = item_w(it), H = item_h(it);
    int sel_r = sel_for_labels(v, it->rl), sel_c = it->index_cols ? -1 : sel_for_labels(v, it->cl);
    if (sel_r >= it->r0 && sel_r < it->r0 + it->rows)
        render_outline(
            rc,
            (SDL_Rect){it->x - 2, it->y + (int)lrintf(it->ch * (sel_r - it->r0)) - 2, W + 4, (int)lrintf(it->ch) + 4},
            th->sel, 2);
    if (sel_c >= it->c0 && sel_c < it->c0 + it->cols)
        render_outline(
            rc,
            (SDL_Rect){it->x + (int)lrintf(it->cw * (sel_c - it->c0)) - 2, it->y - 2, (int)lrintf(it->cw) + 4, H + 4},
            th->sel, 2);
}

/* Head blocks (split's projection, concat): bands of block_w of the step's
 * columns outlined in the heads' colours, named below; drawn transposed they
 * stand as rows, and the colours say it (as on the heads' outputs). */
static void item_draw_blocks(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    int W = item_w(it), H = item_h(it);
    if (it->block_w > 0) {
        int tr = it->transposed;
        int nb = it->s->cols / it->block_w, along = tr ? it->rows : it->cols, off = tr ? it->r0 : it->c0;
        int origin = tr ? it->y : it->x;
        float cs = tr ? it->ch : it->cw;
        if (it->block_gap > 0.0f) {
            /* the projection's columns come apart into the heads' blocks */
            int gap = imax(1, (int)lrintf(it->block_gap * fmaxf(4.0f, fminf(12.0f, cs * 0.4f))));
            for (int b = 1; b < nb; b++) {
                int cb = b * it->block_w - off;
                if (cb <= 0 || cb >= along) continue;
                int at = origin + (int)lrintf(cs * cb);
                SDL_Rect g = tr ? (SDL_Rect){it->x - 1, at - gap / 2 - 1, W + 2, gap + 2}
                                : (SDL_Rect){at - gap / 2 - 1, it->y - 1, gap + 2, H + 2};
                render_fill(rc, g, th->bg);
            }
        }
        for (int b = 0; b < nb; b++) {
            int c0 = b * it->block_w - off, c1 = c0 + it->block_w;
            if (c1 <= 0 || c0 >= along) continue;
            c0 = imax(c0, 0);
            c1 = imin(c1, along);
            int a = origin + (int)lrintf(cs * c0) + 1, len = (int)lrintf(cs * c1) - (int)lrintf(cs * c0) - 2;
            SDL_Rect br = tr ? (SDL_Rect){it->x + 1, a, W - 2, len} : (SDL_Rect){a, it->y + 1, len, H - 2};
            render_outline(rc, br, th->head[b % 8], b + 1 == it->block_sel ? 4 : 2);
            if (tr || !(it->edges & EDGE_BOTTOM)) continue;
            char hn[32];
            snprintf(hn, sizeof hn, "%s %d", view_string(VS_HEAD, v->lang), b + 1);
            if (text_width(&rc->text, hn, f->small) <= br.w)
                draw_text(rc, hn, f->small, th->head[b % 8], br.x + br.w / 2, it->y + H + 3, 1);
            else if (text_width(&rc->text, hn + strlen(hn) - (b + 1 >= 10 ? 2 : 1), f->small) <= br.w)
                draw_text(rc, hn + strlen(hn) - (b + 1 >= 10 ? 2 : 1), f->small, th->head[b % 8], br.x + br.w / 2,
                          it->y + H + 3, 1);
        }
    }
}

/* The operands' row and column, and the result's cell, of the cell being computed. */
static void item_draw_operands(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    int W = item_w(it), H = item_h(it);
    int tr = it->transposed;
    /* the step's row and column, where they are drawn */
    int thick = imax(3, f->body / 9);
    int hr = -1, hc = -1;
    if (it->hl_srow >= 0) *(tr ? &hc : &hr) = it->hl_srow - (tr ? it->c0 : it->r0);
    if (it->hl_scol >= 0) *(tr ? &hr : &hc) = it->hl_scol - (tr ? it->r0 : it->c0);
    if (hr >= 0 && hr < it->rows)
        render_outline(rc, (SDL_Rect){it->x, it->y + (int)lrintf(it->ch * hr), W, imax(2, (int)lrintf(it->ch))},
                       th->sel, thick);
    if (hc >= 0 && hc < it->cols)
        render_outline(rc, (SDL_Rect){it->x + (int)lrintf(it->cw * hc), it->y, imax(2, (int)lrintf(it->cw)), H},
                       th->sel, thick);
    if (it->cur_r >= 0) {
        int i = it->transposed ? it->cur_c : it->cur_r, j = it->transposed ? it->cur_r : it->cur_c;
        i -= it->r0;
        if (j >= 0) j -= it->c0;
        if (i >= 0 && i < it->rows) {
            SDL_Rect cr = j >= 0 ? (SDL_Rect){it->x + (int)lrintf(it->cw * j), it->y + (int)lrintf(it->ch * i),
                                              imax(2, (int)lrintf(it->cw)), imax(2, (int)lrintf(it->ch))}
                                 : (SDL_Rect){it->x, it->y + (int)lrintf(it->ch * i), W, imax(2, (int)lrintf(it->ch))};
            render_outline(rc, cr, th->sel, thick);
        }
    }
}

/* The height the sums take under a matrix drawn transposed (0: beside its rows). */
static int rowsums_below(RenderCtx *rc, const Item *it, const Fonts *f)
{
    return it->rowsum && it->transposed ? text_h(rc, f->small) + 2 : 0;
}

/* Softmax's final sums (never an in-between one): "Σ = 1" at the end of
 * each row whose softmax is done, every k_tok-th row as the labels; drawn
 * transposed, one number under each column, after a "Σ =" where the row
 * labels stand. */
static void item_draw_rowsums(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    if (!it->rowsum) return;
    const Theme *th = render_theme(v->theme);
    int lh = text_h(rc, f->small), tr = it->transposed, H = item_h(it);
    if (!(it->edges & (tr ? EDGE_BOTTOM : EDGE_RIGHT))) return; /* beside the last column, under the last row */
    int n = tr ? it->cols : it->rows, off = tr ? it->c0 : it->r0;
    int k = tr ? label_stride(it->cw, text_width(&rc->text, "0.00", f->small) + 4) : it->k_tok;
    if (tr && it->edges & EDGE_LEFT) draw_text(rc, "Σ =", f->small, th->accent, it->x - 6, it->y + H + 3, 2);
    for (int i = 0; i < n; i += k) {
        if (it->rowsum_on && !it->rowsum_on[i + off]) continue;
        char buf[48], num[32];
        float sv = it->rowsum[i + off];
        if (fabsf(sv - 1.0f) < 5e-4f)
            snprintf(num, sizeof num, "1");
        else
            fmt_cell(num, sizeof num, sv, CELL_PLAIN);
        if (tr) {
            draw_text(rc, num, f->small, th->accent, it->x + (int)lrintf(it->cw * (i + 0.5f)), it->y + H + 3, 1);
        } else {
            snprintf(buf, sizeof buf, "Σ = %s", num);
            draw_text(rc, buf, f->small, th->accent, it->x + item_w(it) + 8,
                      it->y + (int)lrintf(it->ch * (i + 0.5f)) - lh / 2, 0);
        }
    }
}

/* The shape label under the matrix, "Q₁  3×2"; the name alone, or the name
 * shortened, when the matrix is narrow. */
static void item_draw_caption(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    char title[64], shape[96];
    if (it->map_title)
        snprintf(title, sizeof title, "%s", it->map_title);
    else
        view_step_title(it->s, title, sizeof title);
    snprintf(shape, sizeof shape, "%s%s  %d×%d", title, it->formula_t ? "ᵀ" : "", it->full_rows, it->full_cols);
    int W = item_w(it), H = item_h(it);
    int sy =
        it->y + H + 6 + (it->block_w > 0 && !it->transposed ? text_h(rc, f->small) + 2 : 0) + rowsums_below(rc, it, f);
    /* centred under the cells, over the row labels' half and the legend;
     * a name wider than that (a matrix of one column) as near the centre
     * as it fits under the row labels, the cells and the legend */
    int lo = it->x - it->lab_w, hi = it->x + W + it->leg_w, cx = it->x + W / 2;
    int half = imin(cx - (it->x - it->lab_w / 2), hi - cx);
    if (text_width(&rc->text, shape, f->body) > 2 * half)
        snprintf(shape, sizeof shape, "%s%s", title, it->formula_t ? "ᵀ" : "");
    int tw = imin(text_width(&rc->text, shape, f->body), hi - lo);
    SDL_Color col = it->result ? th->text : th->dim;
    render_within(rc, it->area, "matrix caption");
    draw_fit(rc, shape, f->body, hi - lo, col, imax(lo, imin(cx - tw / 2, hi - tw)), sy, 0);
}

static void item_add_hitmat(RenderCtx *rc, const Item *it)
{
    if (rc->n_hitmats >= RENDER_MAX_HITMATS) return;
    HitMat *hm = &rc->hitmats[rc->n_hitmats++];
    hm->rect = (SDL_Rect){it->x, it->y, item_w(it), item_h(it)};
    hm->trace = it->trace;
    hm->step = it->step;
    hm->rows = it->rows;
    hm->cols = it->cols;
    hm->transposed = it->transposed;
    hm->row_map = it->row_map;
    hm->map_rows = it->map_rows;
    hm->r0 = it->r0;
    hm->c0 = it->c0;
    hm->vr = it->rows;
    hm->vc = it->cols;
    hm->zoomable = it->result;
}

/* An elided matrix's gaps: "⋯" in the gap column, "⋮" in the gap row, "⋱"
 * where they cross, and the same among the column and row labels. */
static void item_draw_gaps(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    if (!it->keep_r && !it->keep_c) return;
    const Theme *th = render_theme(v->theme);
    int size = it->nsize > 0 ? it->nsize : f->num, lh = text_h(rc, size);
    render_within(rc, it->area, "elided cells");
    for (int i = 0; i < it->rows; i++)
        for (int j = 0; j < it->cols; j++) {
            int gr = it->keep_r && i == it->keep_r, gc = it->keep_c && j == it->keep_c;
            if (!gr && !gc) continue;
            SDL_Rect cell = cell_rect(it, i, j);
            const char *mark = gr && gc ? "⋱" : gr ? "⋮" : "⋯";
            /* in cells too small for the mark, the empty cells alone */
            if (text_width(&rc->text, mark, size) > cell.w || lh > cell.h) continue;
            draw_text(rc, mark, size, th->dim, cell.x + cell.w / 2, cell.y + cell.h / 2 - lh / 2, 1);
        }
    int llh = text_h(rc, it->lsize);
    render_within(rc, it->area, "matrix label");
    if (it->keep_c && it->cl && !it->cl_off && (it->labels || !it->row_map)) {
        SDL_Rect cell = cell_rect(it, 0, it->keep_c);
        /* only where the labels either side keep to their own columns */
        int k = it->index_cols ? it->k_col : it->k_tok;
        int side = imax(text_width(&rc->text, it->cl[it->keep_c - 1], it->lsize),
                        text_width(&rc->text, it->cl[it->full_cols - it->keep_c], it->lsize));
        if (k == 1 && !it->stagger && side <= cell.w && text_width(&rc->text, "⋯", it->lsize) <= cell.w)
            draw_text(rc, "⋯", it->lsize, th->dim, cell.x + cell.w / 2, it->y - llh - 4, 1);
    }
    if (it->keep_r && it->rl && it->labels) {
        SDL_Rect cell = cell_rect(it, it->keep_r, 0);
        if (llh <= cell.h) draw_text(rc, "⋮", it->lsize, th->dim, it->x - 6, cell.y + cell.h / 2 - llh / 2, 2);
    }
}

/* One matrix with everything around it, at the place the panel's layout gave it. */
static void draw_item(RenderCtx *rc, const View *v, Item *it, const Fonts *f, uint64_t anim_key)
{
    Item pc[4];
    int np = item_pieces(it, pc);
    for (int k = 0; k < np; k++) {
        render_within(rc, it->area, "matrix");
        item_draw_cells(rc, v, &pc[k], anim_key);
        item_draw_numbers(rc, v, &pc[k]);
        render_within(rc, it->area, "matrix label");
        if (is_w_a(it)) item_draw_w_a_split(rc, v, &pc[k], f);
        item_draw_labels(rc, v, &pc[k]);
        item_draw_selection(rc, v, &pc[k]);
        item_draw_blocks(rc, v, &pc[k], f);
        item_draw_operands(rc, v, &pc[k], f);
        item_draw_rowsums(rc, v, &pc[k], f);
        if (!it->bare) item_add_hitmat(rc, &pc[k]);
    }
    item_draw_gaps(rc, v, it, f);
    if (it->block_color > 0)
        render_outline(rc, (SDL_Rect){it->x - 3, it->y - 3, item_w(it) + 6, item_h(it) + 6},
                       render_theme(v->theme)->head[(it->block_color - 1) % 8], 3);
    if (it->bare) return;
    item_draw_caption(rc, v, it, f);
    if (it->legend && !it->shared) {
        int lx = it->x + item_w(it) + 8 +
                 (it->rowsum && !it->transposed ? text_width(&rc->text, "Σ = 0.00", f->small) + 12 : 0);
        draw_legend(rc, v, it, f, lx, it->y, item_h(it));
    }
}

/* ---- the operands and result of a step, animated ---- */

/* Whether x is a number of tenths (0.1, −2.5), as near as a float holds one. */
static int is_tenths(float x)
{
    float t = x * 10.0f;
    return fabsf(t - rintf(t)) <= 1e-4f * fmaxf(1.0f, fabsf(t));
}

/* Whether every finite cell of x (n floats) is a whole number under 1e4,
 * and whether every one is a number of tenths under 100; blocked cells
 * (blocked[i] nonzero) do not count. Stops at the first cell that is
 * neither, as almost every computed step has one among its first cells. */
static void range_kinds(const float *x, size_t n, const unsigned char *blocked, int *integers, int *tenths)
{
    for (size_t i = 0; i < n && (*integers || *tenths); i++) {
        if (!isfinite(x[i]) || (blocked && blocked[i])) continue;
        if (*integers && (x[i] != floorf(x[i]) || fabsf(x[i]) >= 1e4f)) *integers = 0;
        if (*tenths && (!is_tenths(x[i]) || fabsf(x[i]) >= 100.0f)) *tenths = 0;
    }
}

/* Scans the step's unblocked finite cells into e: their max |value|, and
 * whether each is a whole number under 1e4 (or else a number of tenths
 * under 100). A step no mask touches is scanned row by row with no branch
 * in the loop, so that it runs in vectors: after an edit a 1024×1024 step
 * is scanned again for every frame's first drawing of it. */
static void range_scan(const View *v, const AttnStep *s, RangeEntry *e)
{
    float m = 0.0f;
    int integers = 1, tenths = 1;
    int maskable = s->kind == ATTN_STEP_MASKED;
    unsigned char blocked[LESSON_MAX_TOKENS]; /* (cols) which cells of a masked step's row are blocked */
    for (int r = 0; r < s->rows; r++) {
        const float *x = s->data + (size_t)r * (size_t)s->cols;
        if (!maskable) {
            /* 16 running maxima: a loop of exactly 16 runs as one vector
             * at -O2 too */
            float lanes[16] = {0};
            int c = 0;
            for (; c + 16 <= s->cols; c += 16)
                for (int l = 0; l < 16; l++) {
                    float a = fabsf(x[c + l]);
                    lanes[l] = a > lanes[l] && a <= FLT_MAX ? a : lanes[l]; /* NaN and ±inf are neither */
                }
            for (; c < s->cols; c++) {
                float a = fabsf(x[c]);
                m = a > m && a <= FLT_MAX ? a : m;
            }
            for (int l = 0; l < 16; l++) m = lanes[l] > m ? lanes[l] : m;
            range_kinds(x, (size_t)s->cols, NULL, &integers, &tenths);
            continue;
        }
        for (int c0 = 0; c0 < s->cols; c0 += LESSON_MAX_TOKENS) {
            int n = s->cols - c0 < LESSON_MAX_TOKENS ? s->cols - c0 : LESSON_MAX_TOKENS;
            view_row_blocked(v, s, r, c0, n, blocked);
            for (int c = 0; c < n; c++) {
                float a = fabsf(x[c0 + c]);
                if (!blocked[c] && a <= FLT_MAX && a > m) m = a;
            }
            range_kinds(x + c0, (size_t)n, blocked, &integers, &tenths);
        }
    }
    e->range = m > 0 ? m : 1.0f;
    e->integers = integers;
    e->tenths = tenths;
}

static const RangeEntry *range_entry(RenderCtx *rc, const View *v, const AttnStep *s)
{
    size_t h = ((uintptr_t)s >> 4) & (RENDER_RANGE_CACHE - 1);
    RangeEntry *e = &rc->ranges[h];
    if (e->step != s || e->data != s->data || e->view_id != v->id) {
        e->view_id = v->id;
        e->step = s;
        e->data = s->data;
        range_scan(v, s, e);
    }
    return e;
}

static int is_weights(const AttnStep *s)
{
    return s->kind == ATTN_STEP_SOFTMAX;
}

/* formula_t: the formula transposes this matrix (Kᵀ in Q·Kᵀ); column
 * notation then draws it the other way round, as it does every matrix. */
static void item_init(Item *it, RenderCtx *rc, const View *v, const AttnTrace *t, int step, int formula_t)
{
    memset(it, 0, sizeof *it);
    int transposed = formula_t != (v->notation == VIEW_NOTATION_COLUMN);
    it->trace = t;
    it->step = step;
    it->s = &t->steps[step];
    it->transposed = transposed;
    it->formula_t = formula_t;
    it->weights = is_weights(it->s);
    it->wscale = v->weight_scale;
    if (it->weights) { /* in [0, 1]: no scan */
        it->range = 1.0f;
        it->style = CELL_WEIGHTS;
    } else {
        const RangeEntry *re = range_entry(rc, v, it->s);
        it->range = re->range;
        it->style = re->integers ? CELL_INTEGER : re->tenths ? CELL_TENTHS : CELL_PLAIN;
    }
    it->alpha = 1.0f;
    it->hl_srow = it->hl_scol = it->cur_r = it->cur_c = -1;
    it->blocked_mix = 1.0f;
    const char *const *rl = view_row_labels(v, t, it->s), *const *cl = view_col_labels(v, t, it->s);
    it->rl = transposed ? cl : rl;
    it->cl = transposed ? rl : cl;
    it->full_rows = transposed ? it->s->cols : it->s->rows;
    it->full_cols = transposed ? it->s->rows : it->s->cols;
    it->rows = it->full_rows;
    it->cols = it->full_cols;
    it->anim_lo = it->anim_hi = (long long)it->s->rows * it->s->cols;
    it->labels = 1;
    it->legend = 1;
}

/* Draws the item as map_rows rows, row i being the step's row map[i]. */
static void item_set_row_map(Item *it, const int *map, int map_rows)
{
    it->row_map = map;
    it->map_rows = map_rows;
    *(it->transposed ? &it->full_cols : &it->full_rows) = map_rows;
    it->rows = it->full_rows;
    it->cols = it->full_cols;
}

/* Additive attention's pairs: map[p] = p / n_k (x_i, X repeated) and
 * map[n + p] = p % n_k (y_j, Y tiled), n = n_q·n_k; NULL out of memory. */
static const int *pair_map(RenderCtx *rc, int nq, int nk)
{
    if (rc->pair_map && rc->pair_nq == nq && rc->pair_nk == nk) return rc->pair_map;
    size_t n = (size_t)nq * (size_t)nk;
    int *m = realloc(rc->pair_map, 2 * n * sizeof *m);
    if (!m) return NULL;
    for (size_t p = 0; p < n; p++) {
        m[p] = (int)(p / (size_t)nk);
        m[n + p] = (int)(p % (size_t)nk);
    }
    rc->pair_map = m;
    rc->pair_nq = nq;
    rc->pair_nk = nk;
    return m;
}

/* Scratch for one panel's animation. vals and state are borrowed from the
 * RenderCtx (anim_borrow), which keeps them from frame to frame: freshly
 * allocated, a 1024×1024 step's 5 MB would be cleared by the kernel page by
 * page on every frame. */
typedef struct Anim {
    float *vals;                  /* (rows, cols) of the result */
    unsigned char *state;         /* (rows, cols) */
    unsigned char *rowsum_on;     /* (rows) */
    const unsigned char *blocked; /* (rows, cols) borrowed: ST_BLOCKED or ST_VALUE (step_blocked), or NULL */
    const float *exps;            /* (rows, cols) borrowed: softmax's exp(x − row max) (softmax_exps), or NULL */
} Anim;

/* exp(x − the row's largest) of each cell of softmax's input src, 0 in a row
 * with no finite largest: softmax's first half, kept for the step shown. */
static const float *softmax_exps(RenderCtx *rc, const View *v, const AttnStep *src)
{
    int filled;
    int R = src->rows, C = src->cols;
    float *e = step_scratch(&rc->exps_of, v, src, (size_t)R * (size_t)C * sizeof *e, &filled);
    if (!e || filled) return e;
    for (int r = 0; r < R; r++) {
        const float *x = src->data + (size_t)r * (size_t)C;
        float mx = -INFINITY;
        for (int c = 0; c < C; c++)
            if (x[c] > mx) mx = x[c];
        for (int c = 0; c < C; c++) e[(size_t)r * (size_t)C + (size_t)c] = isfinite(mx) ? expf(x[c] - mx) : 0.0f;
    }
    return e;
}

/* Points a's vals and state at the RenderCtx's scratch, grown to n cells;
 * NULL out of memory (the result is then drawn in its final state). */
static void anim_borrow(RenderCtx *rc, Anim *a, size_t n)
{
    a->vals = NULL;
    a->state = NULL;
    if (n > rc->anim_cap) {
        float *v = realloc(rc->anim_vals, n * sizeof *v);
        if (v) rc->anim_vals = v;
        unsigned char *st = v ? realloc(rc->anim_state, n) : NULL;
        if (st) rc->anim_state = st;
        if (!st) return;
        rc->anim_cap = n;
    }
    a->vals = rc->anim_vals;
    a->state = rc->anim_state;
}

static void anim_free(Anim *a)
{
    free(a->rowsum_on);
    memset(a, 0, sizeof *a);
}

/* Steps whose cells are each a row of one operand against a column of
 * another: they fill cell by cell (additive scores: hidden's row · v_a). */
static int is_product(const AttnStep *s)
{
    switch (s->kind) {
    case ATTN_STEP_PROJECTION:
    case ATTN_STEP_WEIGHTED_SUM:
    case ATTN_STEP_OUTPUT:
    case ATTN_STEP_ADDITIVE_HIDDEN:
    case ATTN_STEP_SCORES:
        return 1;
    default:
        return 0;
    }
}

static float ease(float p)
{
    return p * p * (3.0f - 2.0f * p);
}

/* Concat's animation: the heads' outputs leave their places at
 * CONCAT_SLIDE_START and land on the concat's blocks at CONCAT_SLIDE_END;
 * meanwhile the places they left are drawn at CONCAT_GHOST opacity, and
 * they come back to full by the end of the step. */
#define CONCAT_SLIDE_START 0.05
#define CONCAT_SLIDE_END   0.75
#define CONCAT_GHOST       0.3f

/* Softmax's animation: rows one after another (≤ 16 rows) or all at once,
 * each first exp(x − max), then ÷ the row sum. A row's Σ shows once the row
 * is done (rowsum_on); the sums themselves are the final ones. Returns 1
 * when one row (res->hl_srow) is changing and the others are still, else 0. */
static int animate_softmax(Item *res, const AttnStep *src, double p, Anim *a)
{
    const AttnStep *s = res->s;
    int R = s->rows, C = s->cols;
    a->rowsum_on = calloc((size_t)R, 1);
    if (!a->rowsum_on) return 0;
    int sequential = R <= 16;
    double slot = sequential ? p * R : 0;
    int cur = sequential ? (int)slot : -1;
    for (int r = 0; r < R; r++) {
        float f = sequential ? (r < cur ? 1.0f : r > cur ? 0.0f : (float)(slot - cur)) : (float)p;
        if (sequential && r > cur) {
            /* not computed yet: empty, but for blocked cells that will stay 0 */
            for (int c = 0; c < C; c++) {
                size_t i = (size_t)r * C + c;
                if (a->state[i] != ST_BLOCKED || s->data[i] > 0.0f) a->state[i] = ST_EMPTY;
            }
            continue;
        }
        const float *x = src->data + (size_t)r * (size_t)C;
        float mx = -INFINITY;
        if (!a->exps)
            for (int c = 0; c < C; c++)
                if (x[c] > mx) mx = x[c];
        float e = f < 0.5f ? 0.0f : ease((f - 0.5f) * 2.0f); /* the row's blend, from e^x to the weight */
        for (int c = 0; c < C; c++) {
            size_t i = (size_t)r * C + c;
            float ex = a->exps ? a->exps[i] : isfinite(mx) ? expf(x[c] - mx) : 0.0f;
            float shown = f < 0.5f ? ex : ex + (s->data[i] - ex) * e;
            a->vals[i] = f >= 1.0f ? s->data[i] : shown;
        }
        a->rowsum_on[r] = (unsigned char)(f >= 1.0f);
    }
    res->rowsum_on = a->rowsum_on;
    if (!sequential || cur >= R) return 0;
    res->hl_srow = cur;
    return 1;
}

/* Sets up the result's display for progress p; returns an animation key for
 * the texture cache (0: the final state). Operands get their highlights. */
static uint64_t animate(const View *v, Item *res, Item *ops, int n_ops, double p, Anim *a)
{
    const AttnStep *s = res->s;
    int R = s->rows, C = s->cols;
    size_t n = (size_t)R * (size_t)C;
    int blocked_kind = s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX;
    int any_blocked = 0;
    if (blocked_kind && v->lesson->cfg.mask_kind != ATTN_MASK_NONE) any_blocked = 1;
    if (p >= 1.0 && !any_blocked) return 0;
    if (p >= 1.0 && a->blocked) {
        /* the final state: the step's values, the mask's states */
        res->vals = s->data;
        res->state = a->blocked;
        return 1;
    }
    if (!a->state || !a->vals) return 0;
    memcpy(a->vals, s->data, n * sizeof *a->vals);
    if (a->blocked && any_blocked)
        memcpy(a->state, a->blocked, n);
    else
        for (size_t i = 0; i < n; i++)
            a->state[i] = (any_blocked && view_cell_blocked(v, s, (int)(i / (size_t)C), (int)(i % (size_t)C)))
                              ? ST_BLOCKED
                              : ST_VALUE;
    res->vals = a->vals;
    res->state = a->state;
    if (p >= 1.0) return 1;
    /* every cell changes with the clock, but for the reveals below */
    uint64_t key = 4 + (uint64_t)lrint(p * 4096.0);
    res->anim_lo = 0;
    res->anim_hi = (long long)n;
    if (is_product(s)) {
        /* cells fill in reading order: the first `shown` hold their values */
        size_t shown;
        if (n <= 64) {
            size_t k = (size_t)(p * (double)n);
            shown = k + 1 < n ? k + 1 : n;
            for (size_t i = shown; i < n; i++) a->state[i] = ST_EMPTY;
            if (k < n) {
                res->cur_r = (int)(k / (size_t)C);
                res->cur_c = (int)(k % (size_t)C);
            }
        } else {
            double rows = p * R;
            int kr = (int)rows;
            int kc = (int)((rows - kr) * C);
            shown = kr >= R ? n : (size_t)kr * (size_t)C + (size_t)kc + 1;
            for (size_t i = shown; i < n; i++) a->state[i] = ST_EMPTY;
            if (kr < R) {
                res->cur_r = kr;
                res->cur_c = C <= 64 ? kc : -1;
            }
        }
        int additive = res->trace->cfg.attention == ATTN_ADDITIVE;
        if (res->cur_r >= 0 && s->kind == ATTN_STEP_SCORES && additive && n_ops >= 1 && res->cur_c >= 0)
            ops[0].hl_srow = res->cur_r * C + res->cur_c; /* the pair's row of hidden */
        if (res->cur_r >= 0 && s->kind == ATTN_STEP_ADDITIVE_HIDDEN && n_ops >= 1) {
            /* the pair's row: of [x_i ; y_j] when X and Y stand as pairs, else x_i and y_j */
            int nk = res->trace->cfg.n_k, paired = ops[0].row_map != NULL;
            ops[0].hl_srow = paired ? res->cur_r : res->cur_r / nk;
            if (n_ops >= 2 && ops[1].s->kind == ATTN_STEP_INPUT) ops[1].hl_srow = paired ? res->cur_r : res->cur_r % nk;
        }
        /* the left operand's row and the right operand's column (K's row: Kᵀ's column) */
        if (res->cur_r >= 0 && n_ops >= 2 && s->kind != ATTN_STEP_ADDITIVE_HIDDEN &&
            !(s->kind == ATTN_STEP_SCORES && additive)) {
            ops[0].hl_srow = res->cur_r;
            if (res->cur_c >= 0) *(ops[1].formula_t ? &ops[1].hl_srow : &ops[1].hl_scol) = res->cur_c;
        }
        res->anim_lo = res->anim_hi = (long long)shown;
        return 2;
    }
    switch (s->kind) {
    case ATTN_STEP_SCALED: {
        /* the values shrink toward their scaled values, on the scores' scale */
        const AttnStep *src = n_ops ? ops[0].s : NULL;
        if (!src) break;
        float e = ease((float)p);
        for (size_t i = 0; i < n; i++) a->vals[i] = src->data[i] + (s->data[i] - src->data[i]) * e;
        res->range = ops[0].range;
    } break;
    case ATTN_STEP_MASKED: {
        const AttnStep *src = n_ops ? ops[0].s : NULL;
        if (!src) break;
        for (size_t i = 0; i < n; i++)
            if (a->state[i] == ST_BLOCKED) a->vals[i] = src->data[i];
        res->blocked_mix = ease((float)p);
        res->picks_fixed = 1; /* values and states the same in every frame */
    } break;
    case ATTN_STEP_SOFTMAX:
        if (n_ops && animate_softmax(res, ops[0].s, p, a)) {
            /* one row at a time: the rows before it are done, those after it wait */
            res->anim_lo = (long long)res->hl_srow * C;
            res->anim_hi = res->anim_lo + C;
            return 3;
        }
        break;
    case ATTN_STEP_SPLIT:
        res->alpha = (float)fclampf((float)(p * 1.6 - 0.3), 0.0f, 1.0f);
        break;
    case ATTN_STEP_CONCAT: {
        /* the heads' outputs slide over (draw_step_panel draws them moving):
         * the concat is empty until they land, then the sources come back */
        if (p < CONCAT_SLIDE_END) memset(a->state, ST_EMPTY, n);
        float ghost =
            p < CONCAT_SLIDE_END
                ? CONCAT_GHOST
                : CONCAT_GHOST + (1.0f - CONCAT_GHOST) * (float)((p - CONCAT_SLIDE_END) / (1.0 - CONCAT_SLIDE_END));
        for (int i = 0; i < n_ops; i++) ops[i].alpha = ghost;
    } break;
    default:
        break;
    }
    return key;
}

/* The operator written before the result of step s. */
static const char *op_before_result(const AttnStep *s, char *buf, size_t len, const AttnTrace *t, LessonLang lang)
{
    switch (s->kind) {
    case ATTN_STEP_SCALED:
        snprintf(buf, len, "÷ %.4g =", (double)t->divisor);
        return buf;
    case ATTN_STEP_MASKED:
        return view_string(VS_OP_MASK, lang);
    case ATTN_STEP_SOFTMAX:
        return "softmax →";
    case ATTN_STEP_SPLIT:
    case ATTN_STEP_CONCAT:
        return "→";
    case ATTN_STEP_ADDITIVE_HIDDEN:
        return "→ tanh →";
    default:
        return "=";
    }
}

/* The operator written between two operands of step s, as they stand. */
static const char *op_between(const AttnStep *s, const AttnStep *prev, const AttnStep *next, int column)
{
    if (next->kind == ATTN_STEP_BIAS) return "+";
    /* concat joins side by side in rows, and stacks in columns */
    if (s->kind == ATTN_STEP_CONCAT) return column ? ";" : "|";
    /* additive: [x_i ; y_j] · W_a, or W_a · [x_i ; y_j] */
    if (s->kind == ATTN_STEP_ADDITIVE_HIDDEN)
        return prev->kind == ATTN_STEP_WEIGHT || next->kind == ATTN_STEP_WEIGHT ? "×" : ";";
    return "×";
}

/* The order operands stand in, left to right: as the formula writes them. In
 * column notation a product turns round (Q = W_Q·X, scores = Kᵀ·Q, head =
 * V·weights), so its right-hand factor (the last operand that is not a
 * bias) comes first; a bias stays last. */
static void operand_order(const View *v, const Item *items, int n_ops, int *order)
{
    for (int i = 0; i < n_ops; i++) order[i] = i;
    if (v->notation != VIEW_NOTATION_COLUMN || n_ops < 2) return;
    if (!is_product(items[n_ops].s)) return; /* the result stands after the operands */
    int last = n_ops - 1;
    while (last > 0 && items[last].s->kind == ATTN_STEP_BIAS) last--;
    for (int i = last; i > 0; i--) order[i] = order[i - 1];
    order[0] = last;
}

#define MAX_ITEMS 20

/* Concat: each head's output, in its colour, slides from its place among
 * the operands onto its block of the concat (which animate() keeps empty
 * until they land). Both ends are laid out already; the copy moves and
 * scales between them. Not drawn when the concat is zoomed (its blocks may
 * be off screen) nor when the operands do not tile the concat's columns. */
static void draw_concat_slide(RenderCtx *rc, const View *v, const Item *ops, int n_ops, const Item *res, double p,
                              const Fonts *f)
{
    if (p < CONCAT_SLIDE_START || p >= CONCAT_SLIDE_END || n_ops < 1) return;
    if (res->rows != res->full_rows || res->cols != res->full_cols || res->keep_r || res->keep_c) return;
    int sum = 0;
    for (int i = 0; i < n_ops; i++) sum += ops[i].s->cols;
    if (sum != res->s->cols) return;
    float q = ease((float)((p - CONCAT_SLIDE_START) / (CONCAT_SLIDE_END - CONCAT_SLIDE_START)));
    int c0 = 0;
    for (int i = 0; i < n_ops; i++) {
        const Item *src = &ops[i];
        Item mv = *src;
        /* the block's cells in the concat: columns [c0, c0 + cols), drawn as rows when transposed */
        float dx = (float)res->x + (res->transposed ? 0.0f : res->cw * (float)c0);
        float dy = (float)res->y + (res->transposed ? res->ch * (float)c0 : 0.0f);
        mv.x = (int)lrintf((float)src->x + (dx - (float)src->x) * q);
        mv.y = (int)lrintf((float)src->y + (dy - (float)src->y) * q);
        mv.cw = src->cw + (res->cw - src->cw) * q;
        mv.ch = src->ch + (res->ch - src->ch) * q;
        mv.rl = mv.cl = NULL;
        mv.labels = mv.legend = 0;
        mv.alpha = 1.0f;
        mv.hl_srow = mv.hl_scol = mv.cur_r = mv.cur_c = -1;
        mv.block_color = i + 1;
        mv.bare = 1;
        draw_item(rc, v, &mv, f, 0);
        c0 += src->s->cols;
    }
}

/* Which of the panel's matrices are drawn: all of them; concat's first
 * and last heads, "⋯" between them standing for the others, as the formula
 * writes Concat(head₁, …, head₈) and as the elided concat's columns are
 * the first head's and the last's; or the result alone (compare mode). */
enum { SHOW_ALL, SHOW_END_HEADS, SHOW_RESULT };

/* A step's panel: its operands and result, laid out before anything is drawn. */
typedef struct Panel {
    Item items[MAX_ITEMS];
    int n, n_ops;
    Item *res;
    Item *all[MAX_ITEMS];   /* left to right: the operands in the formula's order, then the result */
    Item *shown[MAX_ITEMS]; /* those of them drawn (panel_show), in that order */
    char opbuf[MAX_ITEMS][48];
    const char *ops[MAX_ITEMS]; /* the operator before item i (i ≥ 1) */
    int opw[MAX_ITEMS];
    int top_h, cap_h, note_h; /* column labels above a matrix, its caption below; the panel's note line */
    int split;                /* >0: the result (and its operator) on a second row, below the operands */
    float room[2];            /* each row's height for its matrices (panel_rooms) */
    int lshape;               /* a product laid out as the textbook's L (panel_fit_l) */
    int over[2];              /* each row's pixels that are not cells: labels, legends, operators */
    int numbers_hidden;       /* some matrix is too small for its numbers */
    int one_line;             /* every token's column label fits its column: one line of them */
    int shown_as;             /* SHOW_*: which of the matrices are drawn (panel_show) */
    int ends_only;            /* elided sides not of tokens keep ELIDE_KEEP_TIGHTEST (panel_tighten) */
    Anim anim;
    uint64_t akey;
} Panel;

/* The operands and the result, with their zoom, head blocks and colour scales. */
static void panel_items(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, int step, double p)
{
    const AttnStep *s = &t->steps[step];
    Item *items = P->items;
    int n = 0;
    for (int i = 0; i < s->n_from && n < MAX_ITEMS - 1; i++) {
        int tr = (s->kind == ATTN_STEP_SCORES && t->cfg.attention == ATTN_DOT && i == 1);
        item_init(&items[n++], rc, v, t, s->from[i], tr);
    }
    P->n_ops = n;
    P->res = &items[n];
    Item *res = P->res;
    item_init(res, rc, v, t, step, 0);
    res->result = 1;
    P->n = n + 1;

    /* zoom window of the result */
    if (v->zoom > 1.0f) {
        int vr = imax(1, (int)ceilf(res->full_rows / v->zoom)), vc = imax(1, (int)ceilf(res->full_cols / v->zoom));
        res->rows = vr;
        res->cols = vc;
        res->r0 = imin(imax(0, (int)v->pan_y), res->full_rows - vr);
        res->c0 = imin(imax(0, (int)v->pan_x), res->full_cols - vc);
    }
    /* head blocks on split's projection and on concat */
    if (s->kind == ATTN_STEP_SPLIT && P->n_ops == 1 && t->cfg.heads > 1) {
        items[0].block_w = s->cols;
        items[0].block_sel = s->head;
        items[0].block_gap = (float)fmin(1.0, p * 2.0);
    }
    if (s->kind == ATTN_STEP_CONCAT && t->cfg.heads > 1) {
        res->block_w = s->cols / t->cfg.heads;
        res->block_sel = 0;
        for (int i = 0; i < P->n_ops; i++) items[i].block_color = i + 1;
    }
    if (s->kind == ATTN_STEP_SPLIT) res->block_color = t->cfg.heads > 1 ? s->head : 0;
    /* additive: the operand of W_a is [x_i ; y_j], one row per pair, so X
     * stands repeated and Y tiled, row for row beside each other, labelled
     * with the pairs as hidden's rows are */
    const int *pm = s->kind == ATTN_STEP_ADDITIVE_HIDDEN && P->n_ops >= 2 ? pair_map(rc, t->cfg.n_q, t->cfg.n_k) : NULL;
    if (pm) {
        int np = t->cfg.n_q * t->cfg.n_k;
        item_set_row_map(&items[0], pm, np);
        item_set_row_map(&items[1], pm + np, np);
        items[0].map_title = "x_i";
        items[1].map_title = t->cfg.cross ? "y_j" : "x_j";
        const char *const *pl = view_row_labels(v, t, s);
        *(items[0].transposed ? &items[0].cl : &items[0].rl) = pl;
        *(items[1].transposed ? &items[1].cl : &items[1].rl) = pl;
    }
    int ord[MAX_ITEMS];
    operand_order(v, items, P->n_ops, ord);
    ord[P->n_ops] = P->n_ops;
    for (int i = 0; i < P->n; i++) P->all[i] = P->shown[i] = &items[ord[i]];

    /* One colour scale for a step whose result holds its operand's values,
     * changed (scaled, masked) or rearranged (split, concat), or whose
     * values are averages of them (V → the weighted sum): a colour change
     * is then always a value change, and one legend says it. */
    int same = -1; /* -1: none; else the operand sharing the result's scale, or n_ops: all */
    switch (s->kind) {
    case ATTN_STEP_SCALED:
    case ATTN_STEP_MASKED:
    case ATTN_STEP_SPLIT:
        same = P->n_ops >= 1 ? 0 : -1;
        break;
    case ATTN_STEP_CONCAT:
        same = P->n_ops;
        break;
    case ATTN_STEP_WEIGHTED_SUM:
        same = P->n_ops >= 2 ? 1 : -1;
        break;
    default:
        break;
    }
    if (same >= 0 && !res->weights) {
        float r = res->range;
        for (int i = 0; i < P->n_ops; i++)
            if ((same == P->n_ops || i == same) && !items[i].weights) r = fmaxf(r, items[i].range);
        res->range = r;
        for (int i = 0; i < P->n_ops; i++)
            if ((same == P->n_ops || i == same) && !items[i].weights) {
                items[i].range = r;
                items[i].shared = 1;
            }
    }
}

/* ---- after an edit (View.edit_before) ---- */

/* The current step's cells from their numbers before the edit to the new
 * ones, over VIEW_EDIT_SECONDS, on a colour scale that covers both, held
 * until the view moves on. Returns the values to show (to be freed), or NULL
 * once the change has landed. */
static float *edit_animate(const View *v, Item *res, const float *before, uint64_t *akey)
{
    const AttnStep *s = res->s;
    size_t n = (size_t)s->rows * (size_t)s->cols;
    if (!res->weights) {
        float m = res->range;
        for (size_t i = 0; i < n; i++)
            if (isfinite(before[i]) && fabsf(before[i]) > m) m = fabsf(before[i]);
        res->range = m;
    }
    double q = view_edit_progress(v);
    if (q >= 1.0) return NULL;
    float *vals = malloc(sizeof(float) * (n ? n : 1)); /* (rows, cols) of the step */
    if (!vals) return NULL;
    float e = ease((float)q);
    for (size_t i = 0; i < n; i++) {
        float a = before[i], b = s->data[i];
        vals[i] = isfinite(a) && isfinite(b) ? a + (b - a) * e : b;
    }
    res->vals = vals;
    *akey = mix64(*akey ^ 0xed17ull, (uint64_t)(q * 1e6) + 1);
    return vals;
}

/* Marks the cells the edit changed: a ring in the accent colour, where cells
 * are large enough to carry one. */
static void draw_changed(RenderCtx *rc, const View *v, const Item *whole, const float *before)
{
    if (whole->cw < 6 || whole->ch < 6) return;
    const Theme *th = render_theme(v->theme);
    Item pc[4];
    int np = item_pieces(whole, pc);
    for (int p = 0; p < np; p++) {
        const Item *it = &pc[p];
        for (int i = 0; i < it->rows; i++)
            for (int j = 0; j < it->cols; j++) {
                int r, c;
                disp_to_step(it, i, j, &r, &c);
                size_t k = (size_t)r * (size_t)it->s->cols + (size_t)c;
                if (memcmp(&before[k], &it->s->data[k], sizeof(float)) == 0) continue;
                SDL_Rect cell = cell_rect(it, i, j);
                render_outline(rc, (SDL_Rect){cell.x + 1, cell.y + 1, cell.w - 2, cell.h - 2}, th->accent, 2);
            }
    }
}

/* Each row's sum of softmax step s (1, but for rounding), kept for the step
 * shown: a 1024×1024 step's sums are a million additions, every frame. */
static const float *softmax_rowsums(RenderCtx *rc, const View *v, const AttnStep *s)
{
    int filled;
    float *sum = step_scratch(&rc->rowsums_of, v, s, (size_t)s->rows * sizeof *sum, &filled);
    if (!sum || filled) return sum;
    for (int r = 0; r < s->rows; r++) {
        const float *x = s->data + (size_t)r * (size_t)s->cols;
        float acc = 0.0f;
        for (int c = 0; c < s->cols; c++) acc += x[c];
        sum[r] = acc;
    }
    return sum;
}

/* The result's animation at progress p; a softmax shows its final row sums. */
static void panel_animate(Panel *P, RenderCtx *rc, const View *v, double p)
{
    Item *res = P->res;
    const AttnStep *s = res->s;
    anim_borrow(rc, &P->anim, (size_t)s->rows * (size_t)s->cols);
    if ((s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX) && v->lesson->cfg.mask_kind != ATTN_MASK_NONE)
        P->anim.blocked = step_blocked(rc, v, s);
    if (s->kind == ATTN_STEP_SOFTMAX && P->n_ops && p < 1.0) P->anim.exps = softmax_exps(rc, v, P->items[0].s);
    P->akey = animate(v, res, P->items, P->n_ops, p, &P->anim);
    if (s->kind != ATTN_STEP_SOFTMAX) return;
    res->rowsum = softmax_rowsums(rc, v, s); /* for the rows animate() has finished (rowsum_on), or all */
}

/* An item's cells as a share of the panel's (Item.shrink; 1 before a
 * layout has set it). */
static float item_shrink(const Item *it)
{
    return it->shrink > 0 ? it->shrink : 1.0f;
}

/* The row item i is on: 0, or 1 for the result when the panel has two rows. */
static int row_of(const Panel *P, int i)
{
    return P->split > 0 && i >= P->split;
}

/* Each row's height for its matrices: one row, or two stacked, which
 * share the height as their cells do: evenly, or, when the operands are
 * drawn small (result-first), the result's row in proportion. */
static void panel_rooms(Panel *P, SDL_Rect area)
{
    float total = (float)(area.h - P->note_h);
    if (P->split <= 0) {
        P->room[0] = fmaxf(1.0f, total - (float)(P->top_h + P->cap_h));
        P->room[1] = 0;
        return;
    }
    float shrink = item_shrink(P->shown[0]);
    float cells = fmaxf(2.0f, total - 2.0f * (float)(P->top_h + P->cap_h));
    P->room[0] = fmaxf(1.0f, cells * shrink / (1.0f + shrink));
    P->room[1] = fmaxf(1.0f, cells - P->room[0]);
}

/* Sizes that do not depend on the cells' size: operators, legends, labels.
 * level 0: everything; 1: only the result's legend (and the others' with
 * two operands at most); 2: also no row labels repeated from the left. */
static void panel_measure(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area,
                          int level)
{
    const AttnStep *s = P->res->s;
    for (int i = 1; i < P->n; i++) {
        int column = v->notation == VIEW_NOTATION_COLUMN;
        P->ops[i] = i == P->n - 1                   ? op_before_result(s, P->opbuf[i], sizeof P->opbuf[i], t, v->lang)
                    : P->shown_as == SHOW_END_HEADS ? (column ? "; ⋯ ;" : "| ⋯ |")
                                                    : op_between(s, P->shown[i - 1]->s, P->shown[i]->s, column);
        P->opw[i] = text_width(&rc->text, P->ops[i], f->formula) + f->body / 2 + 6;
    }
    int lh = text_h(rc, f->label);
    P->top_h = text_h(rc, f->small) / 2 + 4;
    /* the longest list of feature numbers first: a longer one asked later
     * would move the list the others point into */
    int features = 0;
    for (int i = 0; i < P->n; i++)
        if (!P->shown[i]->cl && P->shown[i]->s->kind == ATTN_STEP_INPUT)
            features = imax(features, P->shown[i]->full_cols);
    if (features) index_labels(rc, features);
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        it->area = area;
        it->lsize = f->label;
        if (!it->cl && it->s->kind == ATTN_STEP_INPUT) {
            /* the inputs' features, numbered */
            it->cl = index_labels(rc, it->full_cols);
            it->index_cols = it->cl != NULL;
        }
        /* an operand drawn small beside the result (result-first) whose rows
         * or columns are the result's: the result names them, where they
         * can be read */
        int thumb = !it->result && it->shrink < 1.0f && !P->res->transposed && !it->transposed;
        /* level 2 in the L: the right factor's columns stand over the
         * result's, whose labels, between the two, name both */
        int over_result = P->lshape && level >= 2 && i == 1 && !it->result && it->s->kind != ATTN_STEP_BIAS;
        it->cl_off = (thumb || over_result) && it->cl && it->cl == P->res->cl;
        /* up to 16 tokens' columns, all labelled, may need two lines */
        if (it->cl && !it->cl_off)
            P->top_h = imax(P->top_h, (it->index_cols || lay_cols(it) > 16 || P->one_line ? 1 : 2) * lh + 8);
        /* W_a drawn transposed: its bands named above it */
        if (is_w_a(it) && it->transposed) P->top_h = imax(P->top_h, lh + 8);
        it->legend = level == 0 || it->result || (level == 1 && P->n <= 3);
        it->labels = 1;
        /* level 2: a row's labels once, when the rows stand level with the
         * same rows' to their left (the same band, the same cells) */
        for (int j = 0; j < i && level >= 2; j++)
            if (it->rl && P->shown[j]->rl == it->rl && row_of(P, j) == row_of(P, i) &&
                P->shown[j]->shrink == it->shrink)
                it->labels = 0;
        if (i > 0 && it->row_map && P->shown[i - 1]->row_map) it->labels = 0; /* y_j beside x_i: one row of pairs */
        if (thumb && it->rl && it->rl == P->res->rl) it->labels = 0;
        int lw = it->labels && it->rl ? label_width(rc, it->rl, it->full_rows, it->lsize) : 0;
        it->lab_w = lw ? imin(lw, imax(3 * f->label, area.w / 7)) + 10 : 4;
        /* W_a's bands, x_i and y_j, named left of its rows */
        if (is_w_a(it) && !it->transposed) it->lab_w = text_width(&rc->text, "y_j", it->lsize) + 12;
        it->leg_w = it->legend && !it->shared ? legend_width(rc, v, it, f) + 8 : 0;
        if (it->result && it->s->kind == ATTN_STEP_SOFTMAX && !it->transposed)
            it->leg_w += text_width(&rc->text, "Σ = 0.00", f->small) + 12;
    }
    int blocks = 0, below = 0;
    for (int i = 0; i < P->n; i++) {
        blocks |= P->shown[i]->block_w > 0 && !P->shown[i]->transposed;
        below = imax(below, rowsums_below(rc, P->shown[i], f));
    }
    /* the caption, the heads' names under split's blocks, softmax's sums under its columns */
    P->cap_h = text_h(rc, f->body) + 8 + (blocks ? text_h(rc, f->small) + 2 : 0) + below;
    P->note_h = text_h(rc, f->formula) + 4;
    P->over[0] = P->over[1] = 4;
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        P->over[row_of(P, i)] += it->lab_w + it->leg_w + (i > 0 ? P->opw[i] : 0);
    }
}

/* The cells' size of one matrix when the panel's cells are s wide and no
 * matrix may be wider than T (but as wide as its own readable cells, when
 * s gives it that) nor taller than H. Square data stays square. */
static void item_cells(Item *it, float s, float T, float H)
{
    float R = (float)lay_rows(it), C = (float)lay_cols(it);
    s *= item_shrink(it);
    T = fmaxf(T, fminf(s, it->min_cell) * C);
    if (it->full_rows == it->full_cols) {
        float side = fminf(fminf(R * s, H), T);
        it->cw = it->ch = side / R;
    } else {
        it->cw = fminf(C * s, T) / C;
        it->ch = fminf(R * s, H) / R;
    }
}

/* The panel's width with cells of s: its wider row, cells and the rest. */
static float panel_width(Panel *P, float s, float T)
{
    float w[2] = {(float)P->over[0], (float)P->over[1]};
    for (int i = 0; i < P->n; i++) {
        item_cells(P->shown[i], s, T, P->room[row_of(P, i)]);
        w[row_of(P, i)] += P->shown[i]->cw * (float)lay_cols(P->shown[i]);
    }
    return fmaxf(w[0], w[1]);
}

/* The width a token's column label needs, with its margin: the widest of
 * the matrix's, long ones counted at 4 em (they are shortened to that). */
static int col_label_span_w(RenderCtx *rc, const Item *it)
{
    return imin(label_width(rc, it->cl, it->full_cols, it->lsize), 4 * it->lsize) + 8;
}

/* The height of a row that holds a token label. */
static float label_row_h(RenderCtx *rc, const Fonts *f)
{
    return (float)text_h(rc, f->label) * 1.05f;
}

/* The smallest cell that shows a matrix's numbers and token labels: it
 * grows with the text, so it depends on the output's size. */
static float item_min_cell(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    float need = label_row_h(rc, f);
    if ((long)lay_rows(it) * lay_cols(it) > NUMBERS_MAX_CELLS) return need;
    need = fmaxf(need, (float)numbers_width(rc, v, it, f->num) + 2.0f * NUMBERS_PAD);
    return fmaxf(need, number_cell_h(rc, f->num));
}

/* Whether the matrix's cells hold its numbers at the frame's number size. */
static int item_numbers_fit(RenderCtx *rc, const View *v, const Item *it, const Fonts *f)
{
    return (long)it->rows * it->cols <= NUMBERS_MAX_CELLS && number_cell_h(rc, f->num) <= it->ch &&
           (float)numbers_width(rc, v, it, f->num) + 2.0f * NUMBERS_PAD <= it->cw;
}

/* The smallest cell that shows every matrix's numbers and labels (each
 * item's min_cell set). */
static float panel_min_cell(const Panel *P)
{
    float need = 0;
    for (int i = 0; i < P->n; i++) need = fmaxf(need, P->shown[i]->min_cell);
    return need;
}

/* The largest cell size in [0, hi] that fits the panel in avail_w with
 * widths up to T (s == 0), or the largest T in [0, hi] with cells of s. */
static float widest_fit(Panel *P, float s, float T, float hi, float avail_w)
{
    float lo = 0;
    for (int k = 0; k < 24; k++) { /* to a millionth of hi */
        float mid = (lo + hi) / 2;
        if (panel_width(P, s > 0 ? s : mid, s > 0 ? mid : T) <= avail_w)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The largest cells that fit: first one size s for every cell, as large as
 * the room allows (the matrices fill the panel's width or height); when
 * that is smaller than the readable cell, the readable size, with the
 * widest matrices squeezed to a common width T. A matrix taller than the
 * room is squeezed to its height. */
static void panel_fit(Panel *P, float avail_w, float s_min)
{
    float inf = 1e9f, s_fits = inf, s_any = 0;
    /* as large as the shortest matrix that fits its row's height allows;
     * when none fits at the readable size, the readable size (the matrices
     * that are not square are squeezed to the height, the square ones
     * shrink) */
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        float R = (float)lay_rows(it) * item_shrink(it), H = P->room[row_of(P, i)];
        s_any = fmaxf(s_any, H / R);
        if (R * s_min <= H) s_fits = fminf(s_fits, H / R);
    }
    float s_cap = s_fits < inf ? s_fits : fmaxf(s_any, s_min);
    float s = s_cap, T = inf;
    if (panel_width(P, s, inf) > avail_w) {
        s = widest_fit(P, 0, inf, s_cap, avail_w);
        if (s < s_min) {
            /* readable cells, the widest matrices squeezed; smaller cells
             * only when the narrow ones alone do not fit */
            for (float s2 = fminf(s_min, s_cap); s2 > fmaxf(s, s_min / 2); s2 *= 0.95f) {
                if (panel_width(P, s2, 3.0f * s2) > avail_w) continue; /* not even at the narrowest T */
                float t = widest_fit(P, s2, 0, avail_w, avail_w);
                if (t >= 3.0f * s2) {
                    s = s2;
                    T = t;
                    break;
                }
            }
        }
    }
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        item_cells(it, fmaxf(s, 0.05f), T, P->room[row_of(P, i)]);
        it->cw = fmaxf(it->cw, 0.05f);
        it->ch = fmaxf(it->ch, 0.05f);
        /* zoomed: the window of cells fills the matrix's room */
        it->cw *= (float)lay_cols(it) / (float)it->cols;
        it->ch *= (float)lay_rows(it) / (float)it->rows;
    }
}

/* The textbook's L for a product (Falk's scheme), when a side-by-side row
 * is too wide: the right-hand factor above the result, its columns over the
 * result's columns, a bias under it, and the left-hand factor left of the
 * result, its rows beside the result's rows. For a product of two factors
 * and a bias (last) at most, not zoomed; in column notation without a bias
 * (which there stands as a column). */
static int panel_l_fits(const Panel *P, const View *v)
{
    const Item *res = P->res;
    if (!is_product(res->s) || res->rows != lay_rows(res) || res->cols != lay_cols(res)) return 0;
    if (P->n == 4 && P->shown[2]->s->kind == ATTN_STEP_BIAS && v->notation != VIEW_NOTATION_COLUMN) return 1;
    return P->n == 3 && !P->shown[0]->row_map;
}

/* The height of item it's rows in the L: cells of s × s for square data,
 * else rows as tall as hrow (at most s). The left factor's rows stand beside
 * the result's, so both take the height either needs. */
static float l_row_h(const Panel *P, const Item *it, float s, float hrow)
{
    const Item *A = P->shown[0], *R = P->res;
    if (it == A || it == R) return A->full_rows == A->full_cols || R->full_rows == R->full_cols ? s : fminf(s, hrow);
    return it->full_rows == it->full_cols ? s : fminf(s, hrow);
}

/* The room above item it's band in the L: its column labels', or (the
 * result's band) the left factor's; a few pixels when neither has any. */
static int l_top(const Panel *P, const Item *it)
{
    return (it->cl && !it->cl_off) || (it == P->res && P->shown[0]->cl) ? P->top_h : 4;
}

/* The L's width and height with columns of s and rows of hrow: the left
 * factor and the operators' column, beside the widest of the right column
 * (the factor, the bias, the result); the right column's bands stacked. */
static void l_size(const Panel *P, float s, float hrow, float *w, float *h)
{
    const Item *A = P->shown[0];
    int opc = 0, rlab = 0;
    float right = 0, hh = (float)P->note_h;
    for (int i = 1; i < P->n; i++) {
        const Item *it = P->shown[i];
        opc = imax(opc, P->opw[i]);
        rlab = imax(rlab, it->lab_w); /* the right column's row labels share one column (panel_place_l) */
        right = fmaxf(right, (float)it->leg_w + s * (float)lay_cols(it));
        float rows = l_row_h(P, it, s, hrow) * (float)imax(lay_rows(it), it == P->res ? lay_rows(A) : 0);
        hh += (float)(l_top(P, it) + P->cap_h) + rows;
    }
    *w = (float)(A->lab_w + A->leg_w) + s * (float)lay_cols(A) + (float)opc + (float)rlab + right + 4.0f;
    *h = hh;
}

/* The largest column width with which the L fits area, its rows of data
 * that is not square h_min tall (h_min < 0: as tall as the columns are wide). */
static float l_widest(const Panel *P, SDL_Rect area, float h_min)
{
    float lo = 0, hi = (float)area.h, w, h;
    for (int k = 0; k < 40; k++) {
        float mid = (lo + hi) / 2;
        l_size(P, mid, h_min < 0 ? mid : h_min, &w, &h);
        if (w <= (float)area.w && h <= (float)area.h)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The L's cells, as large as area allows: square cells of one size when
 * that size is at least s_min (readable); else first the columns' width s
 * (the rows at least h_min tall), then the rows of data that is not square
 * as tall as the room left allows, up to s. Square data keeps square
 * cells. */
static void panel_fit_l(Panel *P, SDL_Rect area, float h_min, float s_min)
{
    /* square cells everywhere, when they are readable */
    float sq = l_widest(P, area, -1.0f), w, h;
    if (sq >= s_min) {
        for (int i = 0; i < P->n; i++) P->shown[i]->cw = P->shown[i]->ch = sq;
        return;
    }
    float s = fmaxf(l_widest(P, area, h_min), 0.05f), rlo = fminf(h_min, s), rhi = s;
    for (int k = 0; k < 30; k++) {
        float mid = (rlo + rhi) / 2;
        l_size(P, s, mid, &w, &h);
        if (h <= (float)area.h)
            rlo = mid;
        else
            rhi = mid;
    }
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        it->cw = s;
        it->ch = fmaxf(l_row_h(P, it, s, rlo), 0.05f);
    }
}

/* Places the L, centred in area. */
static void panel_place_l(Panel *P, SDL_Rect area)
{
    Item *A = P->shown[0];
    float w, h;
    l_size(P, A->cw, A->ch, &w, &h);
    int opc = 0, rlab = 0;
    for (int i = 1; i < P->n; i++) {
        opc = imax(opc, P->opw[i]);
        rlab = imax(rlab, P->shown[i]->lab_w);
    }
    int x0 = area.x + imax(0, (area.w - (int)w) / 2);
    int xr = x0 + A->lab_w + item_w(A) + A->leg_w + opc + rlab;
    int y = area.y + imax(0, (area.h - (int)h) / 2);
    for (int i = 1; i < P->n; i++) {
        Item *it = P->shown[i];
        y += l_top(P, it);
        it->x = xr;
        it->y = y;
        y += (it == P->res ? imax(item_h(it), item_h(A)) : item_h(it)) + P->cap_h;
    }
    A->x = x0 + A->lab_w;
    A->y = P->res->y;
}

/* Large cells show larger numbers: one size for every matrix of the panel
 * that shows its numbers, the largest (up to 1.5 × the body text) at which
 * each of them fits its cells with the same margins, and at most a third of
 * a cell's height. Never smaller than the frame's number size. */
static void panel_number_size(Panel *P, RenderCtx *rc, const View *v, const Fonts *f)
{
    int best = f->body * 3 / 2;
    for (int i = 0; i < P->n && best > f->num; i++) {
        const Item *it = P->shown[i];
        if (!it->nsize) continue;
        /* advances grow with the size: from the width at the frame's size */
        float w = (float)numbers_width(rc, v, it, f->num) / (float)f->num;
        int fit_w = (int)((it->cw - 2.0f * NUMBERS_PAD) / fmaxf(w, 0.01f));
        int fit_h = (int)(it->ch / 3.0f);
        best = imin(best, imin(fit_w, fit_h));
    }
    if (best <= f->num) return;
    /* the estimate checked at the size chosen (rounding in the advances) */
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        while (
            it->nsize && best > f->num &&
            ((float)numbers_width(rc, v, it, best) + 2.0f * NUMBERS_PAD > it->cw || number_cell_h(rc, best) > it->ch))
            best--;
    }
    for (int i = 0; i < P->n; i++)
        if (P->shown[i]->nsize) P->shown[i]->nsize = best;
}

/* Pixels across row `row` of a panel laid out in rows: each matrix with its
 * labels, legend and the operator before it. */
static int row_width(const Panel *P, int row)
{
    int w = 0;
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        if (row_of(P, i) == row) w += it->lab_w + item_w(it) + it->leg_w + (i > 0 ? P->opw[i] : 0);
    }
    return w;
}

/* How many columns one token's column label needs at the item's cells: 1
 * when each label fits its column. */
static int col_label_span(RenderCtx *rc, const Item *it)
{
    return imax(1, (int)ceilf((float)col_label_span_w(rc, it) / it->cw));
}

/* Numbers and label strides for the cells' sizes: numbers at the one size
 * of the frame where every cell of the matrix holds them, else none; token
 * labels every k-th, the same k for rows and columns and across the panel. */
static void panel_text(Panel *P, RenderCtx *rc, const View *v, const Fonts *f)
{
    int lh = text_h(rc, f->label);
    int k = 1;
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        if (it->rl && it->labels) k = imax(k, label_stride(it->ch, lh));
        if (it->cl && !it->cl_off && !it->index_cols) {
            int per = col_label_span(rc, it);
            if (lay_cols(it) > 16) k = imax(k, per);
            /* up to 16: all of them, on two lines when one is too narrow */
            it->stagger = lay_cols(it) <= 16 && per > 1;
        }
    }
    P->numbers_hidden = 0;
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        it->k_tok = k;
        if (it->index_cols) {
            int w = text_width(&rc->text, it->cl[it->full_cols - 1], it->lsize) + 8;
            it->k_col = nice_stride(imax(1, (int)ceilf((float)w / it->cw)));
        }
        it->nsize = 0;
        if (item_numbers_fit(rc, v, it, f))
            it->nsize = f->num;
        else if (it->alpha > 0.0f)
            P->numbers_hidden = 1;
    }
    panel_number_size(P, rc, v, f);
}

/* Left to right, centred: each matrix with its labels, legend and the
 * operator before it; one row, or the operands above and the result below. */
static void panel_place(Panel *P, SDL_Rect area)
{
    int bands = P->split > 0 ? 2 : 1, y = area.y;
    for (int row = 0; row < bands; row++) {
        int total_w = row_width(P, row);
        int x = area.x + imax(0, (area.w - total_w) / 2);
        int band_h = bands == 1 ? area.h - P->note_h : (int)P->room[row] + P->top_h + P->cap_h;
        int cy = y + P->top_h + (band_h - P->top_h - P->cap_h) / 2;
        y += band_h;
        for (int i = 0; i < P->n; i++) {
            Item *it = P->shown[i];
            if (row_of(P, i) != row) continue;
            if (i > 0) x += P->opw[i];
            x += it->lab_w;
            it->x = x;
            it->y = cy - item_h(it) / 2;
            x += item_w(it) + it->leg_w;
        }
    }
}

/* Whether, at the laid-out cells, some matrix of up to 16 tokens' columns
 * needs its column labels on two lines (panel_text's rule). */
static int panel_needs_two_lines(const Panel *P, RenderCtx *rc)
{
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        if (it->cl && !it->cl_off && !it->index_cols && lay_cols(it) <= 16 && col_label_span(rc, it) > 1) return 1;
    }
    return 0;
}

/* When no arrangement shows every matrix's numbers, the last ones tried
 * draw the operands' cells at these shares of the result's, in one row or
 * above it: the smaller shares for the steps with many operands (concat's
 * eight heads), whose result shows its numbers only beside thumbnails. */
static const float result_first[] = {0.5f, 0.33f, 0.2f};
#define N_RESULT_FIRST ((int)(sizeof result_first / sizeof result_first[0]))
#define N_ATTEMPTS     (9 + 2 * N_RESULT_FIRST)

/* Lays out attempt a of panel_arrange's: below 9, level a / 3 and
 * arrangement a % 3 (one row, the result below, the L); from 9 on, the
 * result first, level 2, one row or the result below, the operands at each
 * share of result_first in turn. 0 when that arrangement does not apply to
 * the panel. */
static int panel_try(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area,
                     int attempt)
{
    int level = imin(attempt / 3, 2), kind = attempt < 9 ? attempt % 3 : (attempt - 9) % 2;
    float shrink = attempt < 9 ? 1.0f : result_first[(attempt - 9) / 2];
    P->split = kind == 1 && P->n > 1 ? P->n - 1 : 0;
    P->lshape = kind == 2 && panel_l_fits(P, v);
    if ((kind == 1 && !P->split) || (kind == 2 && !P->lshape)) return 0;
    for (int i = 0; i < P->n; i++) P->shown[i]->shrink = P->shown[i]->result ? 1.0f : shrink;
    /* the column labels on one line when, at the cells that gives, each
     * fits its column; else on two */
    for (P->one_line = 1;; P->one_line = 0) {
        panel_measure(P, rc, v, t, f, area, level);
        for (int i = 0; i < P->n; i++) P->shown[i]->min_cell = item_min_cell(rc, v, P->shown[i], f);
        if (P->lshape)
            panel_fit_l(P, area, fmaxf(number_cell_h(rc, f->num), label_row_h(rc, f)), panel_min_cell(P));
        else {
            panel_rooms(P, area);
            panel_fit(P, (float)area.w, panel_min_cell(P));
        }
        if (!P->one_line || !panel_needs_two_lines(P, rc)) return 1;
    }
}

/* How well the laid-out panel shows its numbers: each matrix whose numbers
 * fit counts, the result twice (it is what the step computes; the operands'
 * numbers are on their own steps), and the smallest share of a readable
 * cell that a matrix gets breaks ties, a fraction. */
static float panel_score(const Panel *P, RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect area)
{
    /* a row wider than the room does not count */
    if (!P->lshape)
        for (int row = 0; row < (P->split > 0 ? 2 : 1); row++)
            if (row_width(P, row) > area.w) return -1.0f;
    float score = 0, least = 1.0f;
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        if (item_numbers_fit(rc, v, it, f)) score += it->result ? (float)P->n : 1.0f;
        least = fminf(least, fminf(it->cw, it->ch) / it->min_cell);
    }
    return score + 0.99f * least;
}

/* Whether every matrix of the laid-out panel shows its numbers (and one of
 * at most 16 columns or rows every label). */
static int panel_readable(const Panel *P, RenderCtx *rc, const View *v, const Fonts *f)
{
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        if (lay_cols(it) <= 16 && it->cw < it->min_cell * 0.999f) return 0;
        if (!item_numbers_fit(rc, v, it, f)) return 0;
        /* a row per token label: rows as tall as a label */
        if (it->rl && it->labels && lay_rows(it) <= 16 && it->ch < label_row_h(rc, f) * 0.999f) return 0;
    }
    return 1;
}

/* Whether every token column label of the laid-out panel's matrices of up
 * to 16 columns fits whole over two columns (panel_text staggers them on
 * two lines); one of more than 4 em is always shortened to that. */
static int panel_labels_whole(const Panel *P, RenderCtx *rc)
{
    for (int i = 0; i < P->n; i++) {
        const Item *it = P->shown[i];
        if (item_token_side(it, 1) && !it->cl_off && (it->labels || !it->row_map) && lay_cols(it) <= 16 &&
            (float)col_label_span_w(rc, it) > 2.0f * it->cw)
            return 0;
    }
    return 1;
}

/* The smallest side of a cell of the laid-out panel. */
static float panel_least_cell(const Panel *P)
{
    float least = 1e9f;
    for (int i = 0; i < P->n; i++) least = fminf(least, fminf(P->shown[i]->cw, P->shown[i]->ch));
    return least;
}

/* A readable arrangement gives way to a later one whose smallest cells are
 * this many times larger: the room a small step leaves is filled. */
#define GROW_FOR 1.3f

/* Arranges the panel in area, the cells as large as the room allows. While
 * they are smaller than the readable size, it tries the result on a row of
 * its own below the operands, then a product as the textbook's L, then
 * sheds the operands' legends and repeated row labels (and tries the three
 * again). Returns 1 when every matrix shows its numbers (and one of at
 * most 16 columns its labels), else 0 with the try that shows the most
 * numbers laid out (panel_score). */
static int panel_arrange(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area)
{
    int best = -1, first = -1;
    float best_score = -1.0f;
    for (int attempt = 0; attempt < N_ATTEMPTS; attempt++) {
        if (!panel_try(P, rc, v, t, f, area, attempt)) continue;
        if (panel_readable(P, rc, v, f)) {
            /* readable, but a column label would be shortened: a later
             * arrangement may hold them whole */
            if (!panel_labels_whole(P, rc)) {
                if (first < 0) first = attempt;
                continue;
            }
            /* the first readable arrangement, or another with the legends
             * whose cells are at least GROW_FOR times as large */
            float cell = panel_least_cell(P);
            for (int other = attempt + 1; other < 3; other++)
                if (panel_try(P, rc, v, t, f, area, other) && panel_readable(P, rc, v, f) &&
                    panel_labels_whole(P, rc) && panel_least_cell(P) >= GROW_FOR * cell)
                    return 1;
            panel_try(P, rc, v, t, f, area, attempt);
            return 1;
        }
        float score = panel_score(P, rc, v, f, area);
        if (score > best_score) best_score = score, best = attempt;
    }
    if (first >= 0) { /* every number, some column labels shortened */
        panel_try(P, rc, v, t, f, area, first);
        return 1;
    }
    panel_try(P, rc, v, t, f, area, best >= 0 ? best : 6); /* none fits: one row without the operands' legends */
    return 0;
}

/* Elides the matrix with the most columns or rows not yet elided (columns
 * first; square data both ways), of at least ELIDE_FROM; not a zoomed one.
 * 0 when there is none. */
static int panel_elide_one(Panel *P)
{
    Item *best = NULL;
    int most = ELIDE_FROM - 1, cols = 0;
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        if (it->rows != lay_rows(it) || it->cols != lay_cols(it)) continue; /* zoomed */
        /* a long sequence's side: its pattern drawn whole (and the other
         * side elided alone would still leave every cell too small) */
        if ((item_token_side(it, 0) && it->full_rows > ELIDE_TOKENS_MAX) ||
            (item_token_side(it, 1) && it->full_cols > ELIDE_TOKENS_MAX))
            continue;
        if (!it->keep_c && it->full_cols > most) {
            best = it;
            most = it->full_cols;
            cols = 1;
        }
        if (!it->keep_r && it->full_rows > most) {
            best = it;
            most = it->full_rows;
            cols = 0;
        }
    }
    if (!best) return 0;
    int square = best->full_rows == best->full_cols;
    item_keep(best, !cols || square ? ELIDE_KEEP : best->keep_r, cols || square ? ELIDE_KEEP : best->keep_c);
    return 1;
}

/* The keeps of the panel's matrices drawn (item_keep), saved into keep. */
static void panel_save_keeps(const Panel *P, int (*keep)[2])
{
    for (int i = 0; i < P->n; i++) keep[i][0] = P->shown[i]->keep_r, keep[i][1] = P->shown[i]->keep_c;
}

/* The keeps saved by panel_save_keeps, back. */
static void panel_restore_keeps(Panel *P, const int (*keep)[2])
{
    for (int i = 0; i < P->n; i++) item_keep(P->shown[i], keep[i][0], keep[i][1]);
}

/* Elided to ELIDE_KEEP at each end and still too small: the elided sides
 * keep ELIDE_KEEP_TIGHT entries at each end instead, as NumPy's edgeitems=2;
 * and when that is still too small, the elided sides that are not tokens
 * (d_model's, a weight matrix's) keep ELIDE_KEEP_TIGHTEST, the textbook's
 * a₁₁ ⋯ a₁ₙ over aₘ₁ ⋯ aₘₙ, so that a token keeps its row or column. Square
 * data stays square. Returns whether every matrix then shows its numbers;
 * if not, the keeps are as they were. */
static int panel_tighten(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area)
{
    int saved[MAX_ITEMS][2];
    panel_save_keeps(P, saved);
    P->ends_only = 0;
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        item_keep(it, imin(it->keep_r, ELIDE_KEEP_TIGHT), imin(it->keep_c, ELIDE_KEEP_TIGHT));
    }
    if (panel_arrange(P, rc, v, t, f, area)) return 1;
    int changed = 0;
    for (int i = 0; i < P->n; i++) {
        Item *it = P->shown[i];
        int square = it->full_rows == it->full_cols;
        int r = it->keep_r && !item_token_side(it, 0), c = it->keep_c && !item_token_side(it, 1);
        if (square && r != c) continue; /* only both ways */
        if (!r && !c) continue;
        item_keep(it, r ? ELIDE_KEEP_TIGHTEST : it->keep_r, c ? ELIDE_KEEP_TIGHTEST : it->keep_c);
        changed = 1;
    }
    if (changed && panel_arrange(P, rc, v, t, f, area)) return P->ends_only = 1;
    panel_restore_keeps(P, (const int(*)[2])saved);
    panel_arrange(P, rc, v, t, f, area);
    return 0;
}

/* Draws the matrices of as (SHOW_*). Returns 0, the panel unchanged, when
 * that does not apply (SHOW_END_HEADS needs a concat of three heads or
 * more) or is already so. */
static int panel_show(Panel *P, int as)
{
    int n_all = P->n_ops + 1;
    if (as == P->shown_as || (as == SHOW_END_HEADS && (P->res->s->kind != ATTN_STEP_CONCAT || n_all < 4))) return 0;
    P->shown_as = as;
    if (as == SHOW_ALL) {
        memcpy(P->shown, P->all, sizeof P->shown);
        P->n = n_all;
    } else if (as == SHOW_END_HEADS) {
        P->shown[0] = P->all[0];
        P->shown[1] = P->all[n_all - 2];
        P->shown[2] = P->res;
        P->n = 3;
    } else {
        P->shown[0] = P->res;
        P->n = 1;
    }
    return 1;
}

/* Elides the panel's matrices one by one, then tightens them, until every
 * one shows its numbers. Returns whether they do. */
static int panel_elide(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area)
{
    int readable;
    while (!(readable = panel_arrange(P, rc, v, t, f, area)) && panel_elide_one(P)) continue;
    return readable || panel_tighten(P, rc, v, t, f, area);
}

/* Shows the matrices of as (panel_show) and elides them as needed, when
 * then every one shows its numbers; else the panel as it was, arranged
 * again. Returns whether it changed. */
static int panel_try_show(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area,
                          int as)
{
    int was = P->shown_as, keep[2] = {P->res->keep_r, P->res->keep_c};
    if (!panel_show(P, as)) return 0;
    if (as == SHOW_RESULT) item_keep(P->res, 0, 0); /* alone, it may need less elision */
    if (panel_elide(P, rc, v, t, f, area)) return 1;
    panel_show(P, was);
    item_keep(P->res, keep[0], keep[1]);
    panel_arrange(P, rc, v, t, f, area);
    return 0;
}

/* Lays the panel out in area: arranged as above, and while that leaves a
 * matrix without its numbers, with one more matrix elided, then with the
 * elided sides' ends tightened, then (concat) with the middle heads left
 * out; when even that does not give every matrix
 * readable cells, the sides of tokens whole again (unless that costs the
 * result its numbers) and the others elided, in the arrangement that shows
 * the most numbers (the note says where the others are). */
static void panel_layout(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, const Fonts *f, SDL_Rect area)
{
    int readable = panel_elide(P, rc, v, t, f, area);
    if (!readable) readable = panel_try_show(P, rc, v, t, f, area, SHOW_END_HEADS);
    if (!readable && v->mode == VIEW_COMPARE) readable = panel_try_show(P, rc, v, t, f, area, SHOW_RESULT);
    if (!readable) {
        /* still too small: the sides of tokens whole again, every token
         * with its label (the features' sides stay elided), unless only
         * their elision lets the result show its numbers */
        int keep[MAX_ITEMS][2], changed = 0;
        int result_read = item_numbers_fit(rc, v, P->res, f);
        panel_save_keeps(P, keep);
        for (int i = 0; i < P->n; i++) {
            Item *it = P->shown[i];
            int tok_r = it->keep_r && item_token_side(it, 0), tok_c = it->keep_c && item_token_side(it, 1);
            if (!tok_r && !tok_c) continue;
            /* square data whole both ways, so that it stays square */
            int square = it->full_rows == it->full_cols;
            item_keep(it, tok_r || square ? 0 : it->keep_r, tok_c || square ? 0 : it->keep_c);
            changed = 1;
        }
        if (changed && !panel_arrange(P, rc, v, t, f, area) && result_read && !item_numbers_fit(rc, v, P->res, f)) {
            panel_restore_keeps(P, (const int(*)[2])keep);
            panel_arrange(P, rc, v, t, f, area);
        }
    }
    panel_text(P, rc, v, f);
    if (P->lshape)
        panel_place_l(P, area);
    else
        panel_place(P, area);
}

/* The note line under the panel: the scaling's divisor, the softmax's
 * phase, or where to find the numbers the cells are too small for. */
static void panel_note(Panel *P, RenderCtx *rc, const View *v, const AttnTrace *t, double p, SDL_Rect area,
                       const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const Item *res = P->res;
    const AttnStep *s = res->s;
    char note[160] = "";
    if (s->kind == ATTN_STEP_SCALED && p < 1.0)
        snprintf(note, sizeof note, "÷%s = ÷%.4g",
                 t->cfg.scale_kind == ATTN_SCALE_SQRT_DMODEL ? "√d_model"
                 : t->cfg.scale_kind == ATTN_SCALE_SQRT_DK   ? "√d_k"
                                                             : "",
                 (double)t->divisor);
    else if (s->kind == ATTN_STEP_SOFTMAX && p < 1.0) {
        /* rows one after another (≤ 16 rows): the phase within the current row; else all rows at once */
        double slot = res->hl_srow >= 0 ? p * s->rows : p;
        snprintf(note, sizeof note, "%s",
                 view_string(slot - floor(slot) < 0.5 ? VS_EXP_PHASE : VS_NORM_PHASE, v->lang));
    }
    int y = area.y + area.h - text_h(rc, f->formula);
    render_within(rc, area, "panel note");
    if (note[0]) {
        int cx = imin(imax(res->x + item_w(res) / 2, area.x + area.w / 4), area.x + area.w * 3 / 4);
        draw_fit(rc, note, f->formula, area.w / 2, th->accent, cx, y, 1);
    } else if (P->shown_as == SHOW_RESULT) {
        draw_fit(rc, view_string(v->output != VIEW_OUTPUT_SCREEN ? VS_RESULT_ALONE_PAPER : VS_RESULT_ALONE, v->lang),
                 f->small, area.w, th->dim, area.x + area.w / 2, y + text_h(rc, f->formula) - text_h(rc, f->small), 1);
    } else if (P->numbers_hidden) {
        draw_fit(rc,
                 view_string(v->output != VIEW_OUTPUT_SCREEN ? VS_NUMBERS_HIDDEN_PAPER : VS_NUMBERS_HIDDEN, v->lang),
                 f->small, area.w, th->dim, area.x + area.w / 2, y + text_h(rc, f->formula) - text_h(rc, f->small), 1);
    }
}

/* Draws a step's operands and result inside area; returns the longest side
 * of its matrices on screen. */
static int draw_step_panel(RenderCtx *rc, const View *v, const AttnTrace *t, int step, double p, SDL_Rect area,
                           const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    if (!view_step_ready(v, t, step)) { /* its numbers are still being computed: say so */
        char msg[96];
        snprintf(msg, sizeof msg, view_string(VS_PREPARING, v->lang), view_step_ordinal(step));
        draw_text(rc, msg, f->body, th->dim, area.x + area.w / 2, area.y + area.h / 2 - text_h(rc, f->body) / 2, 1);
        return 0;
    }
    Panel *P = calloc(1, sizeof *P);
    if (!P) return 0;
    if (rc->record)
        render_layout_add(rc, (LayoutBox){.rect = area, .within = area, .kind = LAYOUT_AREA, .what = "panel"});
    panel_items(P, rc, v, t, step, p);
    panel_animate(P, rc, v, p);
    /* the numbers before an edit, of this step and this shape: a mode's
     * trace may give the same step index another shape */
    const float *before =
        t == view_trace(v) && step == v->step && P->res->s->rows == v->edit_rows && P->res->s->cols == v->edit_cols
            ? v->edit_before
            : NULL;
    float *edit_vals = before && !P->res->vals ? edit_animate(v, P->res, before, &P->akey) : NULL;
    panel_layout(P, rc, v, t, f, area);
    render_within(rc, area, "operator");
    for (int i = 1; i < P->n; i++) {
        const Item *it = P->shown[i];
        draw_text(rc, P->ops[i], f->formula, th->text, it->x - it->lab_w - P->opw[i] / 2,
                  it->y + item_h(it) / 2 - text_h(rc, f->formula) / 2, 1);
    }
    for (int i = 0; i < P->n; i++) draw_item(rc, v, P->shown[i], f, i == P->n - 1 ? P->akey : 0);
    if (before) draw_changed(rc, v, P->res, before);
    free(edit_vals);
    if (t->steps[step].kind == ATTN_STEP_CONCAT && P->shown_as == SHOW_ALL)
        draw_concat_slide(rc, v, P->items, P->n_ops, P->res, p, f);
    panel_note(P, rc, v, t, p, area, f);
    int side = 0;
    for (int i = 0; i < P->n; i++) side = imax(side, imax(item_w(P->shown[i]), item_h(P->shown[i])));
    anim_free(&P->anim);
    free(P);
    return side;
}

/* The grid of small multiples in area: columns, and the thumbnail's side
 * with lw pixels of row labels left of each and th of column labels above.
 * Returns the side (0: no room). */
static int heads_grid(SDL_Rect area, int top, int H, int lh, int lw, int th, int *cols)
{
    int avail_h = area.y + area.h - top;
    int best = 0;
    *cols = 1;
    for (int c = 1; c <= H; c++) {
        int r = (H + c - 1) / c;
        int sz = imin((area.w - 8 * (c + 1) - c * lw) / c, (avail_h - r * (lh + 14 + th)) / r);
        if (sz > best) {
            best = sz;
            *cols = c;
        }
    }
    return best;
}

/* Whether head h's weights have been computed at the view's step: before
 * its softmax, the panel shows the head's outline only, not the answer. */
static int head_weights_known(const View *v, const AttnTrace *t, const AttnStep *w)
{
    int i = attn_trace_index(t, w);
    if (!view_step_ready(v, t, i)) return 0;
    return i < v->step || (i == v->step && view_progress(v) >= 1.0);
}

/* One head's thumbnail: its weights once computed, else its outline; the
 * tokens every k-th on rows and columns; its name under it. */
static void draw_head_thumb(RenderCtx *rc, const View *v, const AttnStep *w, int h, SDL_Rect dst, float cell, int lsize,
                            int k, int right, int row_start, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const AttnTrace *t = v->trace;
    int llh = text_h(rc, lsize);
    if (head_weights_known(v, t, w)) {
        Item it;
        item_init(&it, rc, v, t, attn_trace_index(t, w), 0);
        it.cw = it.ch = cell;
        SDL_Texture *tex = matrix_texture(rc, v, &it, 0, dst.w, dst.h);
        if (tex) {
            SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_NONE);
            SDL_RenderCopy(rc->sdl, tex, NULL, &dst);
        }
    } else
        render_fill(rc, dst, th->panel);
    int sel = h == v->head;
    render_outline(rc, (SDL_Rect){dst.x - 2, dst.y - 2, dst.w + 4, dst.h + 4}, th->head[(h - 1) % 8], 2);
    if (sel) render_outline(rc, (SDL_Rect){dst.x - 5, dst.y - 5, dst.w + 10, dst.h + 10}, th->sel, 3);
    Item shape;
    item_init(&shape, rc, v, t, attn_trace_index(t, w), 0);
    const char *const *hrl = shape.rl, *const *hcl = shape.cl;
    if (k > 0 && hrl && hcl) {
        int sr = sel_for_labels(v, hrl), sc = sel_for_labels(v, hcl);
        for (int r = 0; r < shape.full_rows; r += k)
            draw_label(rc, hrl[r], lsize, 3 * lsize, r == sr ? th->accent : th->dim, dst.x - 8,
                       dst.y + (int)lrintf(cell * (r + 0.5f)) - llh / 2, 2);
        for (int c = 0; c < shape.full_cols; c += k) {
            int cx = dst.x + (int)lrintf(cell * (c + 0.5f));
            draw_label(rc, hcl[c], lsize, imin((int)(cell * (float)k) - 4, 2 * (right - cx)),
                       c == sc ? th->accent : th->dim, cx, dst.y - 8 - llh, 1);
        }
    }
    /* its name under the selection's outline (5 px out), or its number alone
     * when narrow, or only at the start of each row of the grid when even
     * the numbers would run together */
    char lab[32];
    snprintf(lab, sizeof lab, "%s %d", view_string(VS_HEAD, v->lang), h);
    const char *name = text_width(&rc->text, lab, f->small) <= dst.w + 4 ? lab : strrchr(lab, ' ') + 1;
    if (text_width(&rc->text, name, f->small) <= dst.w + 4 || row_start)
        draw_text(rc, name, f->small, sel ? th->text : th->dim, dst.x + dst.w / 2, dst.y + dst.h + 7, 1);
    RenderHit hit = {RENDER_HIT_HEAD, t, -1, -1, -1, h, 0, NULL};
    add_hitbox(rc, (SDL_Rect){dst.x - 2, dst.y - 2, dst.w + 4, dst.h + text_h(rc, f->small) + 11}, hit);
}

/* The small multiples: every head's attention weights, never larger than
 * the main matrices (max_side), with the tokens on rows (queries) and
 * columns (keys) when the thumbnails leave room to read them, every k-th
 * (k ≤ 3), else none. */
static void draw_heads_strip(RenderCtx *rc, const View *v, SDL_Rect area, int max_side, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const AttnTrace *t = v->trace;
    int H = t->cfg.heads;
    int lh = text_h(rc, f->small);
    render_within(rc, area, "all heads");
    /* the panel's title and the weight scale: one line, or two when narrow
     * (shortened when even that is too wide: large text) */
    const char *title = view_string(VS_ALL_HEADS, v->lang);
    const char *scale = view_weight_scale_text(v);
    char line[160];
    snprintf(line, sizeof line, "%s  ·  %s", title, scale);
    int two = text_width(&rc->text, line, f->small) > area.w;
    draw_fit(rc, two ? title : line, f->small, area.w, th->dim, area.x + area.w / 2, area.y, 1);
    if (two) draw_fit(rc, scale, f->small, area.w, th->dim, area.x + area.w / 2, area.y + lh, 1);
    /* in column notation the thumbnails stand transposed: keys down, queries across */
    int by_col = v->notation == VIEW_NOTATION_COLUMN;
    int top = area.y + lh * (1 + two) + 12;
    const AttnStep *w1 = attn_trace_find(t, ATTN_STEP_SOFTMAX, 1);
    if (!w1) return;
    int nq = by_col ? w1->cols : w1->rows, nk = by_col ? w1->rows : w1->cols; /* displayed rows, columns */
    int best_c = 1;
    int best = imin(heads_grid(area, top, H, lh, 0, 0, &best_c), max_side);
    if (best < 8) return;

    /* labels: try them beside and above every thumbnail; keep them if the
     * thumbnails stay large enough and every third label or more fits */
    const char *const *rl = view_row_labels(v, t, w1), *const *cl = view_col_labels(v, t, w1);
    if (by_col) {
        const char *const *tmp = rl;
        rl = cl;
        cl = tmp;
    }
    int lsize = f->small, llh = text_h(rc, lsize);
    int k = 0, lw = 0, tth = 0;
    if (rl && cl) {
        int rw = imin(label_width(rc, rl, nq, lsize), 3 * lsize);
        int l = rw + 9, hh = llh + 9, c;
        int sz = imin(heads_grid(area, top, H, lh, l, hh, &c), max_side);
        float cell = fminf((float)sz / nq, (float)sz / nk);
        int kk = label_stride(cell, llh);
        int cw = label_width(rc, cl, nk, lsize);
        if (nk <= 16 && cw > cell - 4) kk = imax(kk, (int)ceilf((float)(imin(cw, 3 * lsize) + 4) / cell));
        if (sz >= 48 && sz * 4 >= best * 3 && kk <= 3) {
            k = kk;
            lw = l;
            tth = hh;
            best = sz;
            best_c = c;
        }
    }
    int gx = area.x + (area.w - best_c * (best + lw) - (best_c - 1) * 8) / 2 + lw;
    for (int h = 1; h <= H; h++) {
        const AttnStep *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, h);
        if (!w) continue;
        int i = (h - 1) / best_c, j = (h - 1) % best_c;
        nq = by_col ? w->cols : w->rows;
        nk = by_col ? w->rows : w->cols;
        float cell = fminf((float)best / nq, (float)best / nk);
        SDL_Rect dst = {gx + j * (best + lw + 8) + (best - (int)(cell * nk)) / 2,
                        top + tth + i * (best + lh + 14 + tth), (int)lrintf(cell * nk), (int)lrintf(cell * nq)};
        draw_head_thumb(rc, v, w, h, dst, cell, lsize, k, area.x + area.w, j == 0, f);
    }
}

/* ---- bars ---- */

static void draw_formula(RenderCtx *rc, const View *v, SDL_Rect bar, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const char *fm = view_formula(v);
    int a, b;
    view_formula_highlight(v, &a, &b);
    size_t len = strlen(fm);
    if (a < 0 || b > (int)len || a > b) a = b = 0;
    char pre[VIEW_MAX_FORMULA], mid[VIEW_MAX_FORMULA], post[VIEW_MAX_FORMULA];
    snprintf(pre, sizeof pre, "%.*s", a, fm);
    snprintf(mid, sizeof mid, "%.*s", b - a, fm + a);
    snprintf(post, sizeof post, "%s", fm + b);
    int size = f->formula;
    int total;
    for (;;) {
        total = text_width(&rc->text, pre, size) + text_width(&rc->text, mid, size) +
                text_width(&rc->text, post, size) + 16;
        if (total <= bar.w - 20 || size <= 10) break;
        size = size * 9 / 10;
    }
    int lh = text_h(rc, size);
    int x = bar.x + (bar.w - total) / 2, y = bar.y + (bar.h - lh) / 2;
    x += draw_text(rc, pre, size, th->dim, x, y, 0);
    if (mid[0]) {
        int w = text_width(&rc->text, mid, size);
        render_fill(rc, (SDL_Rect){x + 2, y - 2, w + 12, lh + 4}, th->hl_bg);
        draw_text(rc, mid, size, th->text, x + 8, y, 0);
        x += w + 16;
    }
    draw_text(rc, post, size, th->dim, x, y, 0);
}

/* A phase of the timeline: its steps and its label. */
typedef struct TlGroup {
    int start, n;
    char lab[64];
    int lw;     /* the label's width, 0 when it is left out */
    float x, w; /* where the group's segments go */
} TlGroup;

/* The label of a phase, short ("1" for head 1, "concat" for "concat & output") when shorten. */
static void tl_label(RenderCtx *rc, const View *v, const AttnTrace *t, TlGroup *g, int shorten, const Fonts *f)
{
    view_phase_label(v, t, g->start, g->lab, sizeof g->lab);
    if (shorten) {
        int p = view_phase(t, g->start);
        if (p >= 10)
            snprintf(g->lab, sizeof g->lab, "%d", p - 10);
        else {
            char *cut = strstr(g->lab, " &");
            if (!cut) cut = strstr(g->lab, "与");
            if (cut) *cut = '\0';
        }
    }
    g->lw = text_width(&rc->text, g->lab, f->small);
}

/* Widths for the phases: each as wide as its steps at w pixels a step, or
 * as its label; w as large as fits. */
static void tl_widths(TlGroup *g, int ng, float avail, int pad)
{
    float lo = 0, hi = avail;
    for (int it = 0; it < 40; it++) {
        float w = (lo + hi) / 2, sum = 0;
        for (int i = 0; i < ng; i++) sum += fmaxf((float)g[i].n * w, (float)(g[i].lw ? g[i].lw + pad : 0));
        if (sum <= avail)
            lo = w;
        else
            hi = w;
    }
    for (int i = 0; i < ng; i++) g[i].w = fmaxf((float)g[i].n * lo, (float)(g[i].lw ? g[i].lw + pad : 0));
}

static void draw_timeline(RenderCtx *rc, const View *v, SDL_Rect bar, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const AttnTrace *t = view_trace(v);
    int n = t->n_steps;
    int lh = text_h(rc, f->small);
    int seg_y = bar.y + lh + 4, seg_h = bar.h - lh - 6;
    TlGroup *g = calloc((size_t)n, sizeof *g);
    if (!g) return;
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || view_phase(t, i) != view_phase(t, i - 1)) g[ng++].start = i;
        g[ng - 1].n++;
    }
    /* phases are separated by a gap; every label whole if they fit, else
     * short, else only the current phase's */
    int gap = imax(4, f->body / 3), pad = f->small / 2;
    float avail = (float)(bar.w - gap * (ng - 1));
    for (int pass = 0; pass < 3; pass++) {
        float need = 0;
        for (int i = 0; i < ng; i++) {
            tl_label(rc, v, t, &g[i], pass > 0, f);
            int cur = v->step >= g[i].start && v->step < g[i].start + g[i].n;
            if (pass == 2 && !cur) g[i].lw = 0;
            need += (float)(g[i].lw ? g[i].lw + pad : 0);
        }
        if (need <= avail * 0.9f) break;
    }
    tl_widths(g, ng, avail, pad);
    float x = (float)bar.x;
    for (int k = 0; k < ng; k++) {
        int cur_in = v->step >= g[k].start && v->step < g[k].start + g[k].n;
        if (g[k].lw && g[k].lw <= (int)g[k].w)
            draw_text(rc, g[k].lab, f->small, cur_in ? th->text : th->dim, (int)lrintf(x + g[k].w / 2), bar.y, 1);
        float w = g[k].w / (float)g[k].n;
        for (int i = g[k].start; i < g[k].start + g[k].n; i++) {
            float sx = x + w * (float)(i - g[k].start);
            SDL_Rect seg = {(int)lrintf(sx), seg_y, imax(1, (int)lrintf(sx + w) - (int)lrintf(sx) - (w > 4 ? 1 : 0)),
                            seg_h};
            SDL_Color c = i < v->step ? th->tl_done : i == v->step ? th->accent : th->tl_future;
            render_fill(rc, seg, c);
            if (i == v->step) {
                /* the animation's progress inside the current step */
                double pr = view_progress(v);
                SDL_Rect pbar = {seg.x, seg.y + seg.h - imax(2, seg.h / 5), (int)lrint(seg.w * pr), imax(2, seg.h / 5)};
                render_fill(rc, pbar, th->text);
            }
            RenderHit hit = {RENDER_HIT_TIMELINE, t, i, -1, -1, 0, 0, NULL};
            add_hitbox(rc, (SDL_Rect){seg.x, bar.y, seg.w + 1, bar.h}, hit);
        }
        x += g[k].w + (float)gap;
    }
    free(g);
}

static void draw_wrapped(RenderCtx *rc, const char *text, int size, SDL_Color col, SDL_Rect box, int max_lines)
{
    size_t starts[64], lens[64];
    int n = text_wrap(&rc->text, text, size, box.w, starts, lens, max_lines < 64 ? max_lines : 64);
    int lh = text_h(rc, size);
    for (int i = 0; i < n; i++) {
        char line[1024];
        size_t L = lens[i] < sizeof line - 4 ? lens[i] : sizeof line - 4;
        memcpy(line, text + starts[i], L);
        line[L] = '\0';
        if (i == n - 1 && n == max_lines && text[starts[i] + lens[i]] && text[starts[i] + lens[i] + 1]) {
            /* more text than lines: the last line ends with "…", within the width */
            char cut[1024];
            const char *fit = text_fit(&rc->text, text + starts[i], size, box.w, cut, sizeof cut);
            if (fit && fit != text + starts[i]) snprintf(line, sizeof line, "%s", fit);
            render_within(rc, rc->within, "text shortened");
        }
        draw_text(rc, line, size, col, box.x, box.y + i * lh, 0);
    }
}

static int wrapped_lines(RenderCtx *rc, const char *text, int size, int width)
{
    size_t starts[64], lens[64];
    return text_wrap(&rc->text, text, size, width, starts, lens, 64);
}

static void draw_tooltip(RenderCtx *rc, const View *v, const Fonts *f)
{
    if (v->hover_step < 0 || !v->hover_trace) return;
    const Theme *th = render_theme(v->theme);
    SDL_Rect cell;
    if (render_cell_rect(rc, v->hover_trace, v->hover_step, v->hover_row, v->hover_col, &cell) != 0) return;
    render_outline(rc, cell, th->sel, 3);
    char text[2048];
    if (view_explain_cell(v, v->hover_trace, v->hover_step, v->hover_row, v->hover_col, text, sizeof text) != 0) return;
    int size = f->small;
    int maxw = imin(rc->width * 2 / 3, 60 * size);
    size_t starts[24], lens[24];
    int n = text_wrap(&rc->text, text, size, maxw, starts, lens, 24);
    int lh = text_h(rc, size), w = 0;
    for (int i = 0; i < n; i++) w = imax(w, text_measure(&rc->text, text + starts[i], lens[i], size));
    SDL_Rect box = {cell.x + cell.w + 10, cell.y + cell.h + 6, w + 20, n * lh + 14};
    if (box.x + box.w > rc->width - 4) box.x = imax(4, cell.x - box.w - 10);
    if (box.y + box.h > rc->height - 4) box.y = imax(4, cell.y - box.h - 6);
    SDL_Color bgc = th->panel;
    bgc.a = 245;
    render_fill(rc, box, bgc);
    render_outline(rc, box, th->text, 1);
    draw_wrapped(rc, text, size, th->text, (SDL_Rect){box.x + 10, box.y + 7, maxw, box.h}, 24);
}

static void draw_help(RenderCtx *rc, const View *v, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    char body[4096];
    view_help_text(v->lang, body, sizeof body);
    int size = f->body;
    int lh = text_h(rc, size);
    int lines = 1;
    for (const char *p = body; *p; p++) lines += *p == '\n';
    while ((lines + 3) * lh > rc->height - 40 && size > 9) {
        size = size * 9 / 10;
        lh = text_h(rc, size);
    }
    /* two columns per line, split at the first run of three spaces */
    int w1 = 0, w2 = 0;
    char line[512];
    const char *p = body;
    for (int pass = 0; pass < 2; pass++) {
        p = body;
        int y0 = 0, x0 = 0;
        if (pass == 1) {
            int bw = w1 + w2 + 4 * size, bh = (lines + 2) * lh + 20; /* a margin, the gap, a margin */
            while (bw > rc->width - 20 && size > 9) {
                size = size * 9 / 10;
                lh = text_h(rc, size);
                bw = bw * 9 / 10;
                bh = (lines + 2) * lh + 20;
            }
            x0 = (rc->width - bw) / 2;
            y0 = (rc->height - bh) / 2;
            SDL_Color bg = th->panel;
            bg.a = 250;
            render_fill(rc, (SDL_Rect){0, 0, rc->width, rc->height}, (SDL_Color){0, 0, 0, 110});
            render_fill(rc, (SDL_Rect){x0, y0, bw, bh}, bg);
            render_outline(rc, (SDL_Rect){x0, y0, bw, bh}, th->text, 2);
            draw_text(rc, view_string(VS_HELP_TITLE, v->lang), size, th->accent, x0 + size, y0 + 10, 0);
            y0 += 10 + lh * 3 / 2;
            x0 += size;
        }
        while (*p) {
            const char *e = strchr(p, '\n');
            size_t L = e ? (size_t)(e - p) : strlen(p);
            snprintf(line, sizeof line, "%.*s", (int)L, p);
            char *split = strstr(line, "   ");
            char *second = NULL;
            if (split) {
                *split = '\0';
                second = split + 3;
                while (*second == ' ') second++;
            }
            if (pass == 0) {
                w1 = imax(w1, text_width(&rc->text, line, size) * (second ? 1 : 0));
                if (second)
                    w2 = imax(w2, text_width(&rc->text, second, size));
                else
                    w2 = imax(w2, text_width(&rc->text, line, size) - w1);
            } else {
                draw_text(rc, line, size, th->text, x0, y0, 0);
                if (second) draw_text(rc, second, size, th->text, x0 + w1 + 2 * size, y0, 0);
                y0 += lh;
            }
            p += L;
            if (*p == '\n') p++;
        }
    }
}

int render_min_text(int width, int height)
{
    int m = (int)lrintf(fminf((float)height, (float)width * 0.75f) / 44.0f);
    return m < 12 ? 12 : m;
}

/* The frame's font sizes at text scale `scale`: none under the output's minimum. */
static Fonts fonts_for(const View *v, int width, int height, float scale)
{
    float base = (float)imin(height, width * 9 / 16 + height / 8) / 42.0f;
    if (v->theme == VIEW_THEME_PROJECTOR) base *= 1.12f;
    base *= scale;
    Fonts f;
    f.min = render_min_text(width, height);
    if (v->big_text) f.min = imax(f.min, view_big_text_min(height)); /* the back row's floor */
    f.body = imax(f.min, (int)lrintf(base));
    f.small = imax(f.min, (int)lrintf(base * 0.78f));
    f.label = imax(f.min, (int)lrintf(base * 0.9f));
    f.formula = imax(f.min, (int)lrintf(base * 1.2f));
    f.title = imax(f.min, (int)lrintf(base * 1.05f));
    f.num = imax(f.min, (int)lrintf(base * 0.8f));
    return f;
}

/* The status line at the right of the title bar, as much of it as fits in maxw. */
static int status_text(const View *v, RenderCtx *rc, int size, int maxw, char *buf, size_t len)
{
    const AttnTrace *t = view_trace(v);
    int nh = view_head_count(v);
    const char *mode = view_string(v->mode == VIEW_MULTI    ? VS_MODE_MULTI
                                   : v->mode == VIEW_SINGLE ? VS_MODE_SINGLE
                                                            : VS_MODE_COMPARE,
                                   v->lang);
    char headpart[64] = "";
    if (nh > 1 && v->mode != VIEW_SINGLE)
        snprintf(headpart, sizeof headpart, "  ·  %s %d/%d", view_string(VS_HEAD, v->lang), v->head, nh);
    char modepart[96] = "";
    /* one head: the single-head and multi-head views are the same, so no mode is named */
    if (t->cfg.attention == ATTN_DOT && v->trace->cfg.heads > 1) snprintf(modepart, sizeof modepart, "  ·  %s", mode);
    if (v->notation == VIEW_NOTATION_COLUMN)
        snprintf(modepart + strlen(modepart), sizeof modepart - strlen(modepart), "  ·  %s",
                 view_string(VS_NOTATION_COLUMN, v->lang));
    char play[96];
    snprintf(play, sizeof play, "  ·  %s ×%g",
             view_string(v->rewinding ? VS_REWINDING
                         : v->playing ? VS_PLAYING
                                      : VS_PAUSED,
                         v->lang),
             v->speed);
    char hint[96];
    snprintf(hint, sizeof hint, "  ·  %s", view_string(VS_HINT, v->lang));
    /* on paper there are no keys and nothing plays: step, head and mode only */
    if (v->output != VIEW_OUTPUT_SCREEN) play[0] = hint[0] = '\0';
    /* the least needed parts go first: the hint, the mode, the play state */
    for (int drop = 0; drop < 4; drop++) {
        snprintf(buf, len, "%s %d/%d%s%s%s%s", view_string(VS_STEP, v->lang), view_step_ordinal(v->step), t->n_steps,
                 headpart, drop < 2 ? modepart : "", drop < 3 ? play : "", drop < 1 ? hint : "");
        if (text_width(&rc->text, buf, size) <= maxw) break;
    }
    return text_width(&rc->text, buf, size);
}

/* How much of a laid-out panel shows its numbers: nothing, the result's
 * beside operands too small for theirs, the result's drawn alone (compare
 * mode), every matrix's with the sides not of tokens elided to their first
 * and last entry (Panel.ends_only), every matrix's. */
enum { READ_NONE, READ_RESULT, READ_RESULT_ALONE, READ_ENDS, READ_ALL };

/* Step `step` of trace t laid out in area, not drawn: the area of its
 * matrices on screen; *readable (when not NULL): how much shows its
 * numbers (READ_*). */
static double panel_probe_step(RenderCtx *rc, const View *v, const AttnTrace *t, int step, const Fonts *f,
                               SDL_Rect area, int *readable)
{
    if (readable) *readable = READ_RESULT;
    if (!view_step_ready(v, t, step)) return 0;
    Panel *P = calloc(1, sizeof *P);
    if (!P) return 0;
    int record = rc->record;
    rc->record = 0;
    panel_items(P, rc, v, t, step, 1.0);
    panel_layout(P, rc, v, t, f, area);
    rc->record = record;
    double a = 0;
    for (int i = 0; i < P->n; i++) a += (double)item_w(P->shown[i]) * (double)item_h(P->shown[i]);
    if (readable)
        *readable = P->numbers_hidden            ? (P->res->nsize > 0 ? READ_RESULT : READ_NONE)
                    : P->shown_as == SHOW_RESULT ? READ_RESULT_ALONE
                    : P->ends_only               ? READ_ENDS
                                                 : READ_ALL;
    free(P);
    return a;
}

/* The current step's panel, as above. */
static double panel_probe(RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect area, int *readable)
{
    return panel_probe_step(rc, v, view_trace(v), v->step, f, area, readable);
}

/* How much of both pipelines of compare mode shows its numbers, each laid
 * out in area: the sum of their panel_probe_step readability (READ_*); the
 * area of their matrices in *matrices (may be NULL). */
static int compare_readable(RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect area, double *matrices)
{
    int single, multi;
    double a = panel_probe_step(rc, v, v->single, view_compare_step(v, v->step), f, area, &single) +
               panel_probe_step(rc, v, v->trace, v->step, f, area, &multi);
    if (matrices) *matrices = a;
    return single + multi;
}

/* The key of a choice made once for the lesson (RenderChoices): its
 * traces' shapes (the view's layout_id, which an edited number keeps),
 * `size` (the sizes it was made for), and what
 * lays a step out differently: the language, the projector's larger text,
 * the notation and the weight scale. */
static uint64_t lesson_choice_key(const View *v, uint64_t size)
{
    return mix64(mix64((uint64_t)v->layout_id, size), (uint64_t)v->big_text << 20 | (uint64_t)v->lang << 12 |
                                                          (uint64_t)(v->theme == VIEW_THEME_PROJECTOR) << 8 |
                                                          (uint64_t)v->notation << 4 | (uint64_t)v->weight_scale << 16);
}

/* 1 with the choice made under key in *value, else 0. */
static int choice_find(const RenderChoices *c, uint64_t key, int *value)
{
    for (int i = 0; i < RENDER_STRIP_CACHE; i++)
        if (c->e[i].key == key) {
            *value = c->e[i].value;
            return 1;
        }
    return 0;
}

/* Keeps the choice under key, in place of the oldest one; returns it. */
static int choice_put(RenderChoices *c, uint64_t key, int value)
{
    unsigned i = c->next++ % RENDER_STRIP_CACHE;
    c->e[i].key = key;
    c->e[i].value = value;
    return value;
}

/* v at each of its steps in their final state, unzoomed, for deciding on
 * the whole lesson: set .step. */
static View view_for_lesson_choice(const View *v)
{
    View w = *v;
    w.zoom = 1.0f;
    w.pan_x = w.pan_y = 0.0f;
    w.t = 1e9;
    return w;
}

/* Whether compare mode stands the two pipelines side by side (areas sb)
 * rather than stacked (st) on the steps where both show as many numbers:
 * decided once for the lesson at this size and text scale, as the strip is,
 * so the screen does not jump from one step to the next. Side by side when
 * its matrices, summed over the steps, are GROW_FOR times the stacked
 * ones'. While the traces are still being computed, stacked. */
static int compare_side_by_side(RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect st, SDL_Rect sb)
{
    const AttnTrace *t = view_trace(v);
    uint64_t key =
        mix64(lesson_choice_key(v, mix64((uint64_t)st.w << 32 | (uint64_t)st.h, (uint64_t)sb.w << 32 | (uint64_t)sb.h)),
              (uint64_t)lrintf(v->text_scale * 1000));
    int side;
    if (choice_find(&rc->side, key, &side)) return side;
    for (int s = 0; s < t->n_steps; s++)
        if (!view_step_ready(v, t, s) || !view_step_ready(v, v->single, view_compare_step(v, s))) return 0;
    View w = view_for_lesson_choice(v);
    double a_st = 0, a_sb = 0;
    for (int s = 0; s < t->n_steps; s++) {
        double a;
        w.step = s;
        compare_readable(rc, &w, f, st, &a);
        a_st += a;
        compare_readable(rc, &w, f, sb, &a);
        a_sb += a;
    }
    return choice_put(&rc->side, key, a_sb >= GROW_FOR * a_st);
}

/* Which parts a frame has: all of them (the screen's, paper's), a slide's
 * (no status line, timeline or overlays), a figure's (no narration either). */
enum { FRAME_WHOLE, FRAME_SLIDE, FRAME_FIGURE };

static int frame_parts(const View *v)
{
    return v->output == VIEW_OUTPUT_FIGURE ? FRAME_FIGURE : v->output == VIEW_OUTPUT_SLIDE ? FRAME_SLIDE : FRAME_WHOLE;
}

/* Where the frame's parts go, for one set of font sizes. */
typedef struct Frame {
    Fonts f;
    int m;                          /* the margin */
    int max_lines, nsize;           /* the narration's lines and size */
    SDL_Rect title, fbar, nbox, tl; /* title bar, formula bar, narration, timeline */
    SDL_Rect main, panel, strip;    /* the steps' room; in multi-head mode the panel and the heads' strip */
} Frame;

static int strip_for_lesson(RenderCtx *rc, const View *v, int width, int height);

/* The text under the step: its narration, or in big text its caption. */
static void frame_text(const View *v, char *buf, size_t len)
{
    if (v->big_text)
        view_big_text_caption(v, buf, len);
    else
        view_narration(v, buf, len);
}

/* The heads' strip at the right of the main area, the step's panel left of it. */
static void frame_strip(Frame *F, int width)
{
    int strip_w = imax(120, imin(width / 6, 400));
    F->strip = (SDL_Rect){F->main.x + F->main.w - strip_w, F->main.y, strip_w, F->main.h};
    F->panel = (SDL_Rect){F->main.x, F->main.y, F->main.w - strip_w - F->m, F->main.h};
}

/* Lays the frame out; with_strip 0: without deciding on the heads' strip. */
static void frame_place(RenderCtx *rc, const View *v, int width, int height, float scale, const char *narr, Frame *F,
                        int with_strip)
{
    Fonts f = fonts_for(v, width, height, scale);
    F->f = f;
    int m = F->m = imax(8, f.body * 2 / 3);
    F->max_lines = height >= 700 ? 4 : 3;
    F->title = (SDL_Rect){0, 0, width, text_h(rc, f.title) + m};
    F->fbar = (SDL_Rect){m, F->title.h, width - 2 * m, text_h(rc, f.formula) + m};
    /* slides have no timeline: the narration sits at the bottom */
    int tl_h = frame_parts(v) != FRAME_WHOLE ? 0 : text_h(rc, f.small) + imax(12, f.body * 3 / 4) + 6;
    F->tl = (SDL_Rect){m, height - m / 2 - tl_h, width - 2 * m, tl_h};
    int nsize = f.body, nw = width - 4 * m;
    while (wrapped_lines(rc, narr, nsize, nw) > F->max_lines && nsize > f.small) nsize--;
    /* the narration is read aloud: it gets every line it needs, and the
     * matrices the room that is left */
    F->max_lines = imax(F->max_lines, wrapped_lines(rc, narr, nsize, nw));
    F->nsize = nsize;
    int nl = imin(F->max_lines, imax(2, wrapped_lines(rc, narr, nsize, nw)));
    int narr_h =
        frame_parts(v) == FRAME_FIGURE ? 0 : nl * text_h(rc, nsize) + m; /* a handout's figure: the caption says it */
    F->nbox = (SDL_Rect){m, F->tl.y - m / 2 - narr_h, width - 2 * m, narr_h};
    F->main = (SDL_Rect){m, F->fbar.y + F->fbar.h + m / 2, width - 2 * m, F->nbox.y - (F->fbar.y + F->fbar.h) - m};
    F->panel = F->main;
    F->strip = (SDL_Rect){0, 0, 0, 0};
    if (with_strip && v->mode == VIEW_MULTI && view_head_count(v) > 1 && !v->hide_heads &&
        strip_for_lesson(rc, v, width, height))
        frame_strip(F, width);
}

static void frame_layout(RenderCtx *rc, const View *v, int width, int height, float scale, const char *narr, Frame *F)
{
    frame_place(rc, v, width, height, scale, narr, F, 1);
}

/* Whether the lesson, at this size, shows the heads' strip: decided once
 * for all its steps and text scales (at scale 1), so the screen does not
 * jump from one step to the next, nor at +. The strip stays unless it takes
 * the room that some step needs to show its numbers (more of them readable
 * without the strip than with it, READ_*: every matrix's, or with less
 * elision, or the result's). Kept
 * for the last few view states asked (the light and dark themes lay out
 * alike, the projector's text is larger); while the trace is still being
 * computed, the strip stays. */
static int strip_for_lesson(RenderCtx *rc, const View *v, int width, int height)
{
    uint64_t key = mix64(lesson_choice_key(v, (uint64_t)width << 32 | (uint64_t)height), (uint64_t)frame_parts(v));
    int kept;
    if (choice_find(&rc->strip, key, &kept)) return kept;
    View w = view_for_lesson_choice(v);
    kept = 1;
    char narr[NARRATE_MAX_STEP_TEXT];
    for (int s = 0; s < view_trace(v)->n_steps; s++)
        if (!view_step_ready(v, view_trace(v), s)) return 1; /* decided once the trace is whole */
    for (int s = 0; s < view_trace(v)->n_steps && kept; s++) {
        w.step = s;
        frame_text(&w, narr, sizeof narr);
        Frame F;
        frame_place(rc, &w, width, height, 1.0f, narr, &F, 0);
        SDL_Rect main = F.main;
        frame_strip(&F, width);
        int with = 0, without = 0;
        panel_probe(rc, &w, &F.f, F.panel, &with);
        if (with < READ_ALL) panel_probe(rc, &w, &F.f, main, &without);
        kept = with >= without;
    }
    return choice_put(&rc->strip, key, kept);
}

/* ---- edit mode: the cursor, what is typed, the scale ---- */

/* The step whose cells are the cursor's matrix, on this screen; -1: none. */
static int cursor_step(const View *v)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    if (v->cur_mat != LESSON_MAT_COUNT) { /* a matrix of the lesson: its own step */
        const AttnStep *m = attn_trace_find_name(t, lesson_matrix_name(v->cur_mat));
        return m ? attn_trace_index(t, m) : -1;
    }
    /* the mask: the masked scores when they are drawn, else the weights */
    if (s->kind == ATTN_STEP_SOFTMAX)
        for (int i = 0; i < s->n_from; i++)
            if (t->steps[s->from[i]].kind == ATTN_STEP_MASKED) return s->from[i];
    return v->step;
}

/* The mask's entry for (q, k) as the lesson has it: 1 may attend, 0 blocked. */
static int mask_entry(const Lesson *L, int q, int k)
{
    const AttnConfig *g = &L->cfg;
    switch (g->mask_kind) {
    case ATTN_MASK_CAUSAL:
        return k <= q;
    case ATTN_MASK_PADDING:
        return L->mask[k] != 0;
    case ATTN_MASK_MATRIX:
        return L->mask[(size_t)q * (size_t)g->n_k + (size_t)k] != 0;
    default:
        return 1;
    }
}

/* The divisor's slider, log scale from 0.1·√d_k to 10·√d_k, with ticks at
 * √d_k, √d_model and 1, in box. */
static void draw_scale_slider(RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect box)
{
    const Theme *th = render_theme(v->theme);
    const AttnTrace *t = view_trace(v);
    double base = sqrt((double)t->cfg.d_k), lo = 0.1 * base, hi = 10.0 * base;
    int lh = text_h(rc, f->small);
    int x0 = box.x + f->small * 3, x1 = box.x + box.w - f->small * 5, y = box.y + lh;
    render_fill(rc, box, th->panel);
    render_fill(rc, (SDL_Rect){x0, y - 1, x1 - x0, 3}, th->dim);
    const struct {
        double at;
        const char *label;
    } ticks[] = {{base, "√d_k"}, {sqrt((double)t->cfg.d_model), "√d_model"}, {1.0, "1"}};
    int last_x = -1000;
    for (int i = 0; i < 3; i++) {
        if (ticks[i].at < lo || ticks[i].at > hi || (i == 1 && ticks[1].at == base)) continue;
        int x = x0 + (int)lrint((x1 - x0) * (log10(ticks[i].at / lo) / 2.0));
        render_fill(rc, (SDL_Rect){x - 1, y - lh / 2, 2, lh}, th->text);
        if (abs(x - last_x) > text_width(&rc->text, ticks[i].label, f->small)) {
            draw_text(rc, ticks[i].label, f->small, th->dim, x, y + lh / 2 + 1, 1);
            last_x = x;
        }
    }
    double d = fmin(fmax((double)t->divisor, lo), hi);
    int kx = x0 + (int)lrint((x1 - x0) * (log10(d / lo) / 2.0));
    render_fill(rc, (SDL_Rect){kx - 4, y - lh / 2 - 2, 9, lh + 4}, th->accent);
    char label[64];
    snprintf(label, sizeof label, "÷ %.4g", (double)t->divisor);
    draw_text(rc, label, f->small, th->text, x1 + f->small / 2, y - lh / 2, 0);
    draw_text(rc, "< >", f->small, th->dim, box.x + f->small / 2, y - lh / 2, 0);
}

/* main: the step's panel, clear of the heads' strip when the frame has one. */
static void draw_editing(RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect main)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    /* the divisor's slider, in edit mode, where < and > move it */
    int scale_step = v->edit_mode && t->cfg.attention == ATTN_DOT &&
                     (s->kind == ATTN_STEP_SCALED || s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX);
    int lh = text_h(rc, f->small);
    if (scale_step) {
        int w = imin(main.w / 2, f->small * 30);
        draw_scale_slider(rc, v, f, (SDL_Rect){main.x + main.w - w, main.y, w, lh * 2 + lh / 2 + 4});
    }
    if (!v->edit_mode) return;
    const Theme *th = render_theme(v->theme);
    /* the cursor */
    int st = cursor_step(v);
    SDL_Rect cell;
    char name[2 * LESSON_MAX_TOKEN_BYTES + 32], line[sizeof name + 96];
    editor_cursor_name(v, name, sizeof name);
    if (v->cur_mat == LESSON_MAT_COUNT)
        snprintf(line, sizeof line, "%s  %s = %d", view_string(VS_EDIT_MODE, v->lang), name,
                 mask_entry(v->lesson, v->cur_row, v->cur_col));
    else if (st >= 0 && view_step_ready(v, t, st) && v->cur_row < t->steps[st].rows && v->cur_col < t->steps[st].cols)
        snprintf(line, sizeof line, "%s  %s = %.6g", view_string(VS_EDIT_MODE, v->lang), name,
                 (double)t->steps[st].data[(size_t)v->cur_row * (size_t)t->steps[st].cols + (size_t)v->cur_col]);
    else
        snprintf(line, sizeof line, "%s  %s", view_string(VS_EDIT_MODE, v->lang), name);
    if (v->typing) {
        size_t at = strlen(line);
        snprintf(line + at, sizeof line - at, "  →  %s▏", v->typed);
    }
    if (st >= 0 && render_cell_rect(rc, t, st, v->cur_row, v->cur_col, &cell) == 0) {
        render_outline(rc, (SDL_Rect){cell.x - 2, cell.y - 2, cell.w + 4, cell.h + 4}, th->accent, 3);
        render_outline(rc, (SDL_Rect){cell.x - 4, cell.y - 4, cell.w + 8, cell.h + 8}, th->text, 1);
        if (v->typing) {
            char typed[80];
            snprintf(typed, sizeof typed, "%s▏", v->typed);
            int tw = text_width(&rc->text, typed, f->body) + 8, tth = text_h(rc, f->body) + 4;
            SDL_Rect tb = {cell.x + cell.w / 2 - tw / 2, cell.y + cell.h + 4, tw, tth};
            render_fill(rc, tb, th->accent);
            draw_text(rc, typed, f->body, th->accent_text, tb.x + 4, tb.y + 2, 0);
        }
    }
    /* the mode's line: where the cursor is, its value, the keys */
    const char *hint = view_string(v->cur_mat == LESSON_MAT_COUNT ? VS_EDIT_HINT_MASK : VS_EDIT_HINT, v->lang);
    char full[512];
    if (v->cur_mat == LESSON_MAT_X || v->cur_mat == LESSON_MAT_Y)
        snprintf(full, sizeof full, "%s  ·  %s  ·  %s", line, hint, view_string(VS_EDIT_HINT_TOKENS, v->lang));
    else
        snprintf(full, sizeof full, "%s  ·  %s", line, hint);
    if (text_width(&rc->text, full, f->small) + 16 > main.w) /* the token keys go first */
        snprintf(full, sizeof full, "%s  ·  %s", line, hint);
    int fsize = f->small;
    while (text_width(&rc->text, full, fsize) + 16 > main.w && fsize > 9) fsize--;
    int w = imin(main.w, text_width(&rc->text, full, fsize) + 16);
    SDL_Rect bar = {main.x, main.y + main.h - lh - 6, w, lh + 6};
    render_fill(rc, bar, th->accent);
    draw_text(rc, full, fsize, th->accent_text, bar.x + 8, bar.y + 3 + (lh - text_h(rc, fsize)) / 2, 0);
}

int render_frame(RenderCtx *rc, const View *v, int width, int height)
{
    if (!rc || !v || !v->trace || width <= 0 || height <= 0) return SDL_SetError("render_frame: nothing to draw");
    rc->frame++;
    text_begin_frame(&rc->text);
    rc->n_hitboxes = rc->n_hitmats = rc->n_shorts = 0;
    rc->hits_view = v->id;
    rc->width = width;
    rc->height = height;
    const Theme *th = render_theme(v->theme);
    char narr[NARRATE_MAX_STEP_TEXT];
    frame_text(v, narr, sizeof narr);
    Frame F;
    int record = rc->record;
    rc->record = 0; /* trial layouts are not the frame's */
    frame_layout(rc, v, width, height, v->text_scale, narr, &F);
    rc->record = record;
    rc->n_boxes = 0;
    Fonts f = F.f;
    int m = F.m;
    SDL_Rect all = {0, 0, width, height};
    SDL_RenderSetViewport(rc->sdl, NULL);
    SDL_RenderSetClipRect(rc->sdl, NULL);
    render_fill(rc, all, th->bg);

    /* title bar: the lesson, where we are */
    /* kept in the context: a shortened title is shown whole when hovered */
    view_title(v, rc->title, sizeof rc->title);
    if (v->edited || v->lesson->edited_from) {
        /* a title may state a fact about the numbers as written */
        size_t at = strlen(rc->title);
        snprintf(rc->title + at, sizeof rc->title - at, "%s", view_string(VS_TITLE_EDITED, v->lang));
    }
    const char *title = rc->title;
    const AttnTrace *t = view_trace(v);
    render_within(rc, F.title, "title bar");
    /* the title first: the status line gives up its least needed parts
     * (status_text) while the title, at the smallest size it may shrink to
     * (nine tenths of the body text, which grows with +), does not fit
     * beside it; then the title is shrunk to fit, and at that size shortened */
    int tfloor = imax(f.min, f.body * 9 / 10);
    int smax = imin(width * 45 / 100, width - 3 * m - text_width(&rc->text, title, tfloor));
    char status[320] = "";
    int sw = frame_parts(v) != FRAME_WHOLE ? 0 : status_text(v, rc, f.small, smax, status, sizeof status);
    int stw = width - 3 * m - sw;
    int tsize = f.title;
    while (text_width(&rc->text, title, tsize) > stw && tsize * 9 / 10 >= tfloor) tsize = tsize * 9 / 10;
    draw_label(rc, title, tsize, stw, th->text, m, m / 2, 0);
    if (status[0])
        draw_text(rc, status, f.small, th->dim, width - m, m / 2 + (text_h(rc, f.title) - text_h(rc, f.small)) / 2, 2);

    /* formula bar */
    render_fill(rc, F.fbar, th->panel);
    render_within(rc, F.fbar, "formula");
    draw_formula(rc, v, F.fbar, &f);

    /* bottom: narration, timeline */
    SDL_Rect nbox = F.nbox;
    if (nbox.h > 0) render_fill(rc, nbox, th->panel);
    render_within(rc, nbox, "narration");
    if (nbox.h > 0)
        draw_wrapped(rc, narr, F.nsize, th->text, (SDL_Rect){nbox.x + m, nbox.y + m / 2, width - 4 * m, nbox.h},
                     F.max_lines);
    render_within(rc, F.tl, "timeline");
    if (frame_parts(v) == FRAME_WHOLE) draw_timeline(rc, v, F.tl, &f);

    /* the main area */
    SDL_Rect main = F.main;
    double p = view_progress(v);
    if (v->mode == VIEW_COMPARE) {
        /* the operands run left to right, so on a wide screen the two
         * pipelines stack, each with the full width; else, or when side by
         * side shows more numbers than stacked halves (every matrix's, the
         * result's drawn alone, or the result's, of each pipeline: READ_*),
         * or as many, in larger matrices over the lesson
         * (compare_side_by_side), side by side */
        int stacked = main.w * 2 >= main.h * 3;
        int lh = text_h(rc, f.body);
        if (stacked) {
            int half = main.h / 2;
            SDL_Rect st = {main.x, main.y, main.w, half - lh - 6},
                     sb = {main.x, main.y, main.w / 2 - m / 2, main.h - lh - 4};
            int k_st = compare_readable(rc, v, &f, st, NULL), k_sb = compare_readable(rc, v, &f, sb, NULL);
            stacked = k_st > k_sb || (k_st == k_sb && !compare_side_by_side(rc, v, &f, st, sb));
        }
        char cap1[128], cap2[128];
        view_compare_caption(v, 0, cap1, sizeof cap1);
        view_compare_caption(v, 1, cap2, sizeof cap2);
        SDL_Rect left, right;
        render_within(rc, main, "compare caption");
        SDL_SetRenderDrawBlendMode(rc->sdl, SDL_BLENDMODE_NONE);
        SDL_SetRenderDrawColor(rc->sdl, th->dim.r, th->dim.g, th->dim.b, 255);
        if (stacked) {
            int half = main.h / 2;
            left = (SDL_Rect){main.x, main.y + lh + 2, main.w, half - lh - 6};
            right = (SDL_Rect){main.x, main.y + half + lh + 4, main.w, main.h - half - lh - 4};
            draw_text(rc, cap1, f.body, th->text, main.x, main.y, 0);
            draw_text(rc, cap2, f.body, th->text, main.x, main.y + half + 2, 0);
            SDL_RenderDrawLine(rc->sdl, main.x, main.y + half, main.x + main.w, main.y + half);
        } else {
            int half = main.w / 2;
            draw_text(rc, cap1, f.body, th->text, main.x + half / 2, main.y, 1);
            draw_text(rc, cap2, f.body, th->text, main.x + half + half / 2, main.y, 1);
            SDL_RenderDrawLine(rc->sdl, main.x + half, main.y, main.x + half, main.y + main.h);
            left = (SDL_Rect){main.x, main.y + lh + 4, half - m / 2, main.h - lh - 4};
            right = (SDL_Rect){main.x + half + m / 2, main.y + lh + 4, half - m / 2, main.h - lh - 4};
        }
        draw_step_panel(rc, v, v->single, view_compare_step(v, v->step), p, left, &f);
        draw_step_panel(rc, v, v->trace, v->step, p, right, &f);
    } else if (F.strip.w > 0) {
        SDL_Rect strip = F.strip, panel = F.panel;
        int side = draw_step_panel(rc, v, t, v->step, p, panel, &f);
        SDL_SetRenderDrawColor(rc->sdl, th->tl_future.r, th->tl_future.g, th->tl_future.b, 255);
        SDL_RenderDrawLine(rc->sdl, strip.x - m / 2, strip.y, strip.x - m / 2, strip.y + strip.h);
        draw_heads_strip(rc, v, strip, side, &f);
    } else {
        draw_step_panel(rc, v, t, v->step, p, main, &f);
    }

    if (frame_parts(v) != FRAME_WHOLE) return 0; /* no hover, notice or help on a slide */
    render_within(rc, all, "overlay");
    draw_editing(rc, v, &f, F.strip.w > 0 ? F.panel : main);
    draw_tooltip(rc, v, &f);
    draw_label_tooltip(rc, v, f.small);

    /* notice (saved frame, reload error) */
    char notice[2 * VIEW_MAX_NOTICE];
    if (view_notice_text(v, notice, sizeof notice)) {
        int size = f.body;
        int w = imin(width - 4 * m, text_width(&rc->text, notice, size) + 2 * m);
        int lines = wrapped_lines(rc, notice, size, w - 2 * m);
        int h = lines * text_h(rc, size) + m;
        SDL_Rect box = {(width - w) / 2, nbox.y - h - m / 2, w, h};
        SDL_Color bg = v->notice_is_error ? th->error : th->text;
        render_fill(rc, box, bg);
        draw_wrapped(rc, notice, size, th->bg, (SDL_Rect){box.x + m, box.y + m / 2, w - 2 * m, h}, 6);
    }
    if (v->show_help) draw_help(rc, v, &f);
    return 0;
}

RenderHitKind render_hit_test(const RenderCtx *rc, const View *v, int x, int y, RenderHit *hit)
{
    memset(hit, 0, sizeof *hit);
    hit->step = hit->row = hit->col = -1;
    if (!v || v->id != rc->hits_view) return RENDER_HIT_NONE;
    SDL_Point pt = {x, y};
    for (int i = 0; i < rc->n_shorts; i++)
        if (SDL_PointInRect(&pt, &rc->shorts[i].rect)) hit->label = rc->shorts[i].full;
    for (int i = rc->n_hitboxes - 1; i >= 0; i--)
        if (SDL_PointInRect(&pt, &rc->hitboxes[i].rect)) {
            const char *label = hit->label;
            *hit = rc->hitboxes[i].hit;
            hit->label = label;
            return hit->kind;
        }
    for (int i = rc->n_hitmats - 1; i >= 0; i--) {
        const HitMat *m = &rc->hitmats[i];
        if (!SDL_PointInRect(&pt, &m->rect)) continue;
        int di = (int)((float)(y - m->rect.y) * m->rows / m->rect.h) + m->r0;
        int dj = (int)((float)(x - m->rect.x) * m->cols / m->rect.w) + m->c0;
        hit->kind = RENDER_HIT_CELL;
        hit->trace = m->trace;
        hit->step = m->step;
        hit->row = m->transposed ? dj : di;
        hit->col = m->transposed ? di : dj;
        if (m->row_map) hit->row = m->row_map[hit->row];
        hit->zoomable = m->zoomable;
        return hit->kind;
    }
    return RENDER_HIT_NONE;
}

int render_cell_rect(const RenderCtx *rc, const AttnTrace *trace, int step, int row, int col, SDL_Rect *out)
{
    for (int i = 0; i < rc->n_hitmats; i++) {
        const HitMat *m = &rc->hitmats[i];
        if (m->trace != trace || m->step != step) continue;
        int vr = row; /* the first drawn row that stands for the step's row */
        if (m->row_map) {
            for (vr = 0; vr < m->map_rows && m->row_map[vr] != row; vr++) continue;
            if (vr == m->map_rows) continue;
        }
        int di = (m->transposed ? col : vr) - m->r0, dj = (m->transposed ? vr : col) - m->c0;
        if (di < 0 || dj < 0 || di >= m->rows || dj >= m->cols) continue;
        float cw = (float)m->rect.w / m->cols, ch = (float)m->rect.h / m->rows;
        out->x = m->rect.x + (int)lrintf(cw * dj);
        out->y = m->rect.y + (int)lrintf(ch * di);
        out->w = (int)lrintf(cw * (dj + 1)) - (int)lrintf(cw * dj);
        out->h = (int)lrintf(ch * (di + 1)) - (int)lrintf(ch * di);
        return 0;
    }
    return -1;
}

/* ---- text, for what is drawn beside a frame ---- */

int render_text(RenderCtx *rc, const char *s, int size, SDL_Color col, int x, int y, int align)
{
    return draw_text(rc, s, size, col, x, y, align);
}

int render_text_width(RenderCtx *rc, const char *s, int size)
{
    return text_width(&rc->text, s, size);
}

int render_text_runs(RenderCtx *rc, const char *s, int size, RenderTextRun *runs, int max, int *ascent)
{
    return text_runs(&rc->text, s, size, runs, max, ascent);
}

int render_line_height(RenderCtx *rc, int size)
{
    return text_line_height(&rc->text, size);
}

int render_wrap(RenderCtx *rc, const char *s, int size, int width, size_t *starts, size_t *lens, int max)
{
    return text_wrap(&rc->text, s, size, width, starts, lens, max);
}

int render_font_count(const RenderCtx *rc)
{
    return rc ? rc->text.n_fonts : 0;
}

const char *render_font_path(const RenderCtx *rc, int i)
{
    return rc && i >= 0 && i < rc->text.n_fonts ? rc->text.font_path[i] : NULL;
}

long render_font_file(const RenderCtx *rc, int i, char *file, size_t len)
{
    return rc ? text_font_file(&rc->text, i, file, len) : -1;
}

int render_font_for(const RenderCtx *rc, uint32_t cp)
{
    return text_font_for(&rc->text, cp);
}
