/* render.c: one frame of the classroom view: layout, heatmaps, animation of
 * each step, formula bar, narration, timeline, overlays.
 *
 * Every matrix is drawn as one texture with one texel per cell, stretched
 * with nearest-neighbour sampling, so a cell's pixels are exactly the colour
 * map's colour for its value and a 512×512 weight matrix costs one copy per
 * frame. Textures are cached by what they show and rebuilt only when that
 * changes (every frame only for the matrix that is animating). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                                       {0, 0, 0, 255},
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
    if (render_fonts_open(rc, opt, err, errlen) != 0) {
        free(rc);
        return NULL;
    }
    return rc;
}

static void drop_textures(RenderCtx *rc)
{
    for (int i = 0; i < RENDER_MAT_CACHE; i++) {
        if (rc->mats[i].tex) SDL_DestroyTexture(rc->mats[i].tex);
        memset(&rc->mats[i], 0, sizeof rc->mats[i]);
    }
    for (int i = 0; i < RENDER_TEXT_CACHE; i++)
        if (rc->text[i].tex) SDL_DestroyTexture(rc->text[i].tex);
    memset(rc->text, 0, sizeof rc->text);
    rc->n_text = 0;
}

void render_set_renderer(RenderCtx *rc, SDL_Renderer *sdl)
{
    if (!rc || !sdl || sdl == rc->sdl) return;
    drop_textures(rc);
    rc->sdl = sdl;
    rc->n_hitboxes = rc->n_hitmats = 0;
}

void render_destroy(RenderCtx *rc)
{
    if (!rc) return;
    render_fonts_close(rc);
    for (int i = 0; i < RENDER_MAT_CACHE; i++)
        if (rc->mats[i].tex) SDL_DestroyTexture(rc->mats[i].tex);
    free(rc->pix);
    free(rc->row_max);
    free(rc->pair_map);
    free(rc);
}

/* ---- drawing helpers ---- */

void render_fill(RenderCtx *rc, SDL_Rect r, SDL_Color c)
{
    SDL_SetRenderDrawBlendMode(rc->sdl, c.a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(rc->sdl, c.r, c.g, c.b, c.a);
    SDL_RenderFillRect(rc->sdl, &r);
}

void render_outline(RenderCtx *rc, SDL_Rect r, SDL_Color c, int thick)
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

/* A number as a cell shows it: a true minus sign, few digits; from 1e4 on
 * as a power of ten with exp_digits significant digits (−1e9, −3.5e19; one
 * digit when the second is 0). */
static void fmt_cell_digits(char *buf, size_t len, float x, int weights, int exp_digits)
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
    if (weights)
        snprintf(tmp, sizeof tmp, "%.2f", fabs(d));
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
    if (strcmp(tmp, "0.00") == 0 || strcmp(tmp, "0") == 0) {
        snprintf(buf, len, "%s", tmp);
        return;
    }
    if (d < 0)
        snprintf(buf, len, "−%.24s", tmp);
    else
        snprintf(buf, len, "%.24s", tmp);
}

static void fmt_cell(char *buf, size_t len, float x, int weights)
{
    fmt_cell_digits(buf, len, x, weights, 2);
}

/* ---- one matrix on screen ---- */

enum { ST_EMPTY = 0, ST_VALUE = 1, ST_BLOCKED = 2 };

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
    ViewWeightScale wscale;
    const float *row_max; /* (s->rows) each row's largest shown weight, for VIEW_WEIGHTS_ROW; or NULL */
    float range;          /* diverging: ±range */
    int result;
    int labels, legend;                /* draw row labels, the legend */
    const char *const *rl, *const *cl; /* display row / column token labels or NULL */
    int rows, cols;                    /* displayed (after transpose and zoom) */
    int r0, c0;                        /* zoom window origin, in displayed coordinates */
    int full_rows, full_cols;
    /* layout */
    int x, y; /* cells' top-left */
    float cw, ch;
    int lab_w, leg_w, top_h;
    /* animation: display values (rows·cols of the step's own layout) */
    const float *vals;
    const unsigned char *state; /* NULL: all values */
    float blocked_mix;          /* 0..1: blocked cells fade from their value to the −∞ style */
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
 * next item asks). 0, or -1 out of memory (the item then colours by [0, 1]). */
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
    for (int r = 0; r < it->s->rows; r++) {
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

/* The colour of displayed cell (i, j) of the full matrix, as a pixel. */
static uint32_t cell_pixel(const View *v, const Theme *th, const Item *it, int i, int j)
{
    int r, c;
    full_to_step(it, i, j, &r, &c);
    SDL_Color col = cell_color(v, th, it, r, c);
    return 0xFF000000u | (uint32_t)col.r << 16 | (uint32_t)col.g << 8 | col.b;
}

/* The cells' texture at its size on screen, W × H pixels, for the displayed
 * window of cells (zoom): cell j covers pixels [lrint(W/cols·j), lrint(W/cols·(j+1)))
 * as the grid lines and render_cell_rect have it, so copying it is a plain
 * 1:1 copy every frame and each pixel is exactly its cell's colour. Cached by
 * what it shows; rebuilt only when that changes. */
static SDL_Texture *matrix_texture(RenderCtx *rc, const View *v, const Item *it, uint64_t anim_key, int W, int H)
{
    const Theme *th = render_theme(v->theme);
    if (W < 1) W = 1;
    if (H < 1) H = 1;
    uint64_t key =
        mix64(mix64(mix64((uint64_t)(uintptr_t)it->trace, (uint64_t)it->step), (uint64_t)it->transposed), anim_key);
    uint32_t rbits;
    memcpy(&rbits, &it->range, 4);
    key = mix64(mix64(key, rbits), (uint64_t)(it->weights * 2 + 1) * 131 + (uint64_t)v->theme);
    key = mix64(mix64(key, (uint64_t)it->wscale * 7 + 1), (uint64_t)(uintptr_t)it->row_map);
    key = mix64(key, (uint64_t)v->id); /* a reloaded lesson may reuse the old trace's address */
    key = mix64(mix64(key, (uint64_t)W << 32 | (uint64_t)H),
                (uint64_t)it->r0 << 40 | (uint64_t)it->c0 << 20 | (uint64_t)(it->rows * 4099 + it->cols));
    if (!key) key = 1;
    MatEntry *slot = NULL, *oldest = &rc->mats[0];
    for (int i = 0; i < RENDER_MAT_CACHE; i++) {
        MatEntry *e = &rc->mats[i];
        if (e->key == key && e->tex) {
            e->last_frame = rc->frame;
            return e->tex;
        }
        if (!e->tex && !slot) slot = e;
        if (e->last_frame < oldest->last_frame) oldest = e;
    }
    if (!slot) slot = oldest;
    if (slot->tex && (slot->w != W || slot->h != H)) {
        SDL_DestroyTexture(slot->tex);
        slot->tex = NULL;
    }
    if (!slot->tex) {
        slot->tex = SDL_CreateTexture(rc->sdl, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STATIC, W, H);
        if (!slot->tex) return NULL;
        SDL_SetTextureScaleMode(slot->tex, SDL_ScaleModeNearest);
        slot->w = W;
        slot->h = H;
    }
    /* the row scale's maxima, scanned only now that the texture is rebuilt */
    Item scaled = *it;
    item_row_max(rc, &scaled);
    it = &scaled;
    /* the pixels, one row of cell colours, then the column plan: (column,
     * first pixel, end pixel) of each column that shows, at most W */
    size_t n = (size_t)W * (size_t)H + (size_t)W + 3 * (size_t)W;
    if (n > rc->pix_cap) {
        uint32_t *p = realloc(rc->pix, n * sizeof *p);
        if (!p) return NULL;
        rc->pix = p;
        rc->pix_cap = n;
    }
    uint32_t *row = rc->pix + (size_t)W * (size_t)H; /* (W) one pixel row */
    uint32_t *plan = row + W;                        /* (n_plan, 3) */
    float cw = (float)W / (float)it->cols, ch = (float)H / (float)it->rows;
    /* Which column covers which pixels is the same for every row: worked out
     * once, not per cell (a 512×512 matrix has 262144 cells, and the columns
     * thinner than a pixel are then not even visited). */
    int n_plan = 0;
    for (int j = 0, x = 0; j < it->cols && x < W; j++) {
        int x1 = j + 1 == it->cols ? W : (int)lrintf(cw * (float)(j + 1));
        if (x1 <= x) continue; /* columns thinner than a pixel: the first one shows */
        plan[3 * n_plan] = (uint32_t)j;
        plan[3 * n_plan + 1] = (uint32_t)x;
        plan[3 * n_plan + 2] = (uint32_t)x1;
        n_plan++;
        x = x1;
    }
    int y = 0;
    for (int i = 0; i < it->rows && y < H; i++) {
        int y1 = i + 1 == it->rows ? H : (int)lrintf(ch * (float)(i + 1));
        if (y1 <= y) continue; /* rows thinner than a pixel: the first one shows */
        for (int k = 0; k < n_plan; k++) {
            const uint32_t *pk = plan + 3 * k;
            uint32_t p = cell_pixel(v, th, it, i + it->r0, (int)pk[0] + it->c0);
            for (uint32_t x = pk[1]; x < pk[2]; x++) row[x] = p;
        }
        for (; y < y1; y++) memcpy(rc->pix + (size_t)y * (size_t)W, row, (size_t)W * sizeof *row);
    }
    SDL_UpdateTexture(slot->tex, NULL, rc->pix, W * 4);
    slot->key = key;
    slot->last_frame = rc->frame;
    return slot->tex;
}

typedef struct Fonts {
    int body, small, label, formula, title, num;
} Fonts;

static int text_h(RenderCtx *rc, int size)
{
    return render_line_height(rc, size);
}

static int label_width(RenderCtx *rc, const char *const *labels, int n, int size)
{
    int w = 0;
    if (!labels) return 0;
    int step = n > 200 ? n / 200 : 1;
    for (int i = 0; i < n; i += step) w = imax(w, render_text_width(rc, labels[i], size));
    return w;
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
    fmt_cell(buf, len, top ? it->range : -it->range, 0);
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
    int w = f->body / 2 + 4 + imax(render_text_width(rc, a, f->small), render_text_width(rc, b, f->small)) + 6;
    const char *name = legend_scale_name(v, it);
    if (name) w = imax(w, render_text_width(rc, name, f->small) + 6);
    return w;
}

static void draw_legend(RenderCtx *rc, const View *v, const Item *it, const Fonts *f, int x, int y, int h)
{
    const Theme *th = render_theme(v->theme);
    int bw = imax(6, f->body / 2);
    int lh = text_h(rc, f->small);
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
    render_text(rc, a, f->small, th->dim, x + bw + 4, y - lh / 4, 0);
    render_text(rc, b, f->small, th->dim, x + bw + 4, y + h - lh * 3 / 4, 0);
    if (mid[0] && h >= 4 * lh) render_text(rc, mid, f->small, th->dim, x + bw + 4, y + h / 2 - lh / 2, 0);
    /* the scale in use, over the bar: every weights legend says it */
    const char *name = legend_scale_name(v, it);
    if (name) render_text(rc, name, f->small, th->text, x, y - lh * 5 / 4 - 2, 0);
}

/* Token labels: every k-th when rows are thinner than the text. */
static int label_stride(float cell, int lh)
{
    if (cell <= 0) return 1 << 20;
    int k = (int)ceilf((float)lh * 1.05f / cell);
    return k < 1 ? 1 : k;
}

static int sel_for_labels(const View *v, const char *const *labels)
{
    if (!labels) return -1;
    const Lesson *L = v->lesson;
    if (L->n_source_tokens && labels == (const char *const *)L->source_tokens) return v->sel_key;
    return v->sel_query;
}

static int has_cjk(const char *s)
{
    while (*s)
        if (render_is_cjk(render_utf8_next(&s))) return 1;
    return 0;
}

/* How tall a column label stands: CJK upright, one character under the
 * other (as Chinese is written vertically); anything else turned a quarter. */
static int vlabel_height(RenderCtx *rc, const char *s, int size)
{
    if (!has_cjk(s)) return render_text_width(rc, s, size);
    int n = 0;
    for (const char *p = s; *p; n++) render_utf8_next(&p);
    return n * size * 21 / 20;
}

/* Draws a vertical column label ending at y_bottom, centred on cx; returns its rect. */
static SDL_Rect draw_vlabel(RenderCtx *rc, const char *s, int size, SDL_Color col, int cx, int y_bottom)
{
    SDL_Rect box = {cx, y_bottom, 0, 0};
    if (has_cjk(s)) {
        int h = vlabel_height(rc, s, size), y = y_bottom - h, step = size * 21 / 20;
        int wmax = 0;
        for (const char *p = s; *p;) {
            const TextEntry *e = render_text_next_glyph(rc, &p, size, col);
            if (!e) continue;
            SDL_Rect d = {cx - e->w / 2, y + (step - e->h) / 2, e->w, e->h};
            SDL_RenderCopy(rc->sdl, e->tex, NULL, &d);
            wmax = imax(wmax, e->w);
            y += step;
        }
        box = (SDL_Rect){cx - wmax / 2, y_bottom - h, wmax, h};
        return box;
    }
    const TextEntry *e = render_text_get(rc, s, size, col);
    if (!e) return box;
    SDL_Rect d = {cx - e->w / 2, y_bottom - e->w / 2 - e->h / 2, e->w, e->h};
    SDL_RenderCopyEx(rc->sdl, e->tex, NULL, &d, -90.0, NULL, SDL_FLIP_NONE);
    return (SDL_Rect){cx - e->h / 2, y_bottom - e->w, e->h, e->w};
}

/* W_a: a line between the rows that multiply x_i and those that multiply
 * y_j, and the two bands named (columns when drawn transposed). */
static void draw_w_a_split(RenderCtx *rc, const View *v, const Item *it, const Fonts *f, int W, int H)
{
    const Theme *th = render_theme(v->theme);
    int dx = it->trace->cfg.d_x, tr = it->transposed, off = tr ? it->c0 : it->r0, along = tr ? it->cols : it->rows;
    float cs = tr ? it->cw : it->ch;
    int lw = imax(3, f->body / 6), lsz = f->label, llh = text_h(rc, lsz);
    int cut = (tr ? it->x : it->y) + (int)lrintf(cs * (float)(dx - off));
    if (dx - off > 0 && dx - off < along)
        render_fill(
            rc, tr ? (SDL_Rect){cut - lw / 2, it->y - 4, lw, H + 8} : (SDL_Rect){it->x - 4, cut - lw / 2, W + 8, lw},
            th->text);
    const char *band[2] = {"x_i", it->trace->cfg.cross ? "y_j" : "x_j"};
    for (int b = 0; b < 2; b++) {
        int a0 = imax(0, (b ? dx : 0) - off), a1 = imin(along, (b ? it->s->rows : dx) - off);
        if (a1 <= a0) continue;
        int mid = (int)lrintf(cs * (float)(a0 + a1) / 2.0f);
        if (tr)
            render_text(rc, band[b], lsz, th->text, it->x + mid, it->y - llh - 4, 1);
        else
            render_text(rc, band[b], lsz, th->text, it->x - 8, it->y + mid - llh / 2, 2);
    }
}

/* Head blocks (split, concat): bands of block_w of the step's columns, in
 * the heads' colours, which stand as rows when the matrix is drawn transposed. */
static void draw_head_blocks(RenderCtx *rc, const View *v, const Item *it, const Fonts *f, int W, int H)
{
    const Theme *th = render_theme(v->theme);
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
        char hn[32];
        snprintf(hn, sizeof hn, "%s %d", view_string(VS_HEAD, v->lang), b + 1);
        /* named under each block; standing as rows, the colours say it (as on the heads' outputs) */
        if (!tr && render_text_width(rc, hn, f->small) < br.w + it->cw)
            render_text(rc, hn, f->small, th->head[b % 8], br.x + br.w / 2, it->y + H + 3, 1);
    }
}

/* Softmax's sums: "Σ = 1" at the end of each row; in column notation one
 * number under each column, after a "Σ =" where the row labels stand.
 * Returns the height taken under the matrix. */
static int draw_sums(RenderCtx *rc, const View *v, const Item *it, const Fonts *f, int W, int H)
{
    const Theme *th = render_theme(v->theme);
    int tr = it->transposed, sums_below = 0;
    int n = tr ? it->cols : it->rows, off = tr ? it->c0 : it->r0;
    int rsz = imin(f->small, imax(8, (int)((tr ? it->cw * 0.35f : it->ch * 0.5f))));
    int rlh = text_h(rc, rsz);
    int k = tr ? label_stride(it->cw, render_text_width(rc, "0.00", rsz) + 4) : label_stride(it->ch, rlh);
    if (tr) {
        sums_below = rlh + 2;
        render_text(rc, "Σ =", rsz, th->accent, it->x - 6, it->y + H + 3, 2);
    }
    for (int i = 0; i < n; i += k) {
        if (it->rowsum_on && !it->rowsum_on[i + off]) continue;
        char buf[48], num[32];
        float sv = it->rowsum[i + off];
        if (fabsf(sv - 1.0f) < 5e-4f)
            snprintf(num, sizeof num, "1");
        else
            fmt_cell(num, sizeof num, sv, 0);
        if (tr) {
            render_text(rc, num, rsz, th->accent, it->x + (int)lrintf(it->cw * (i + 0.5f)), it->y + H + 3, 1);
        } else {
            snprintf(buf, sizeof buf, "Σ = %s", num);
            render_text(rc, buf, rsz, th->accent, it->x + W + 8, it->y + (int)lrintf(it->ch * (i + 0.5f)) - rlh / 2, 0);
        }
    }
    return sums_below;
}

static void draw_item(RenderCtx *rc, const View *v, Item *it, const Fonts *f, uint64_t anim_key)
{
    const Theme *th = render_theme(v->theme);
    int W = (int)lrintf(it->cw * it->cols), H = (int)lrintf(it->ch * it->rows);
    if (W < 1) W = 1;
    if (H < 1) H = 1;
    SDL_Texture *tex = matrix_texture(rc, v, it, anim_key, W, H);
    SDL_Rect dst = {it->x, it->y, W, H};
    if (tex) {
        SDL_SetTextureAlphaMod(tex, (Uint8)lrintf(255.0f * fclampf(it->alpha, 0, 1)));
        SDL_SetTextureBlendMode(tex, it->alpha < 1.0f ? SDL_BLENDMODE_BLEND : SDL_BLENDMODE_NONE);
        SDL_RenderCopy(rc->sdl, tex, NULL, &dst);
        SDL_SetTextureAlphaMod(tex, 255);
    }
    /* grid lines between cells large enough to tell apart */
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

    if (is_w_a(it)) draw_w_a_split(rc, v, it, f, W, H);

    /* cells: numbers, blocked marks */
    int many = it->rows * it->cols > 900;
    int nsize = (int)fminf(fminf((float)f->body, it->ch * 0.4f), it->cw / 3.8f);
    int numbers = !many && nsize >= 9 && it->alpha >= 0.5f;
    if (numbers) item_row_max(rc, it); /* the ink on a cell follows its colour */
    int maskable = it->s->kind == ATTN_STEP_MASKED || it->s->kind == ATTN_STEP_SOFTMAX;
    for (int i = 0; i < it->rows && (numbers || it->state || maskable); i++)
        for (int j = 0; j < it->cols; j++) {
            int r, c;
            disp_to_step(it, i, j, &r, &c);
            int st = step_state(it, r, c);
            if (!it->state && view_cell_blocked(v, it->s, r, c)) st = ST_BLOCKED;
            SDL_Rect cell = {it->x + (int)lrintf(it->cw * j), it->y + (int)lrintf(it->ch * i),
                             (int)lrintf(it->cw * (j + 1)) - (int)lrintf(it->cw * j),
                             (int)lrintf(it->ch * (i + 1)) - (int)lrintf(it->ch * i)};
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
            if (!numbers) continue;
            char num[32];
            SDL_Color bgc;
            if (st == ST_EMPTY) continue;
            float x = step_val(it, r, c);
            float written = x; /* the number the cell shows */
            if (st == ST_BLOCKED && it->weights) {
                /* the true weight: 0 under −∞; under a finite fill what softmax gave */
                if (x > 0.0f)
                    fmt_cell(num, sizeof num, x, 1);
                else
                    snprintf(num, sizeof num, "0");
                bgc = cell_color(v, th, it, r, c);
            } else if (st == ST_BLOCKED) {
                if (it->blocked_mix <= 0.5f) continue;
                /* what the score becomes: −∞, or the finite fill (−1e9, −1e20) */
                written = it->s->data[(size_t)r * (size_t)it->s->cols + (size_t)c];
                fmt_cell(num, sizeof num, written, 0);
                bgc = th->blocked;
            } else {
                fmt_cell(num, sizeof num, x, it->weights);
                bgc = item_color(it, r, x);
            }
            /* a number too wide for its cell: smaller, then (a power of ten) one digit shorter */
            SDL_Color ink = ink_on(bgc);
            int cx = cell.x + cell.w / 2, cy = cell.y + cell.h / 2;
            if (render_text_glyphs(rc, num, nsize, ink, cx, cy, cell.w - 2) < 0 &&
                render_text_glyphs(rc, num, nsize * 4 / 5, ink, cx, cy, cell.w - 2) < 0 && strchr(num, 'e')) {
                fmt_cell_digits(num, sizeof num, written, 0, 1);
                render_text_glyphs(rc, num, nsize, ink, cx, cy, cell.w - 2);
            }
        }

    /* token labels */
    int lsize = imin(f->label, imax(f->small * 3 / 4, (int)(it->ch * 0.8f)));
    int lh = text_h(rc, lsize);
    int sel_r = sel_for_labels(v, it->rl), sel_c = sel_for_labels(v, it->cl);
    if (it->rl && it->labels) {
        int k = label_stride(it->ch, lh);
        for (int i = 0; i < it->rows; i += k) {
            const char *lab = it->rl[i + it->r0];
            int y = it->y + (int)lrintf(it->ch * (i + 0.5f)) - lh / 2;
            int tw = render_text(rc, lab, lsize, i + it->r0 == sel_r ? th->accent : th->text, it->x - 6, y, 2);
            if (it->rl == (const char *const *)v->pair_labels) continue; /* (query, key) pairs, not one token */
            SDL_Rect hb = {it->x - 6 - tw, y, tw + 4, lh};
            RenderHit h = {RENDER_HIT_TOKEN, it->trace, it->step, -1, -1, 0, 0};
            if (it->rl == (const char *const *)v->lesson->source_tokens && v->lesson->n_source_tokens)
                h.col = i + it->r0;
            else
                h.row = i + it->r0;
            add_hitbox(rc, hb, h);
        }
    }
    if (it->cl && (it->labels || !it->row_map)) { /* y_j beside x_i shares its pair labels */
        int wmax = 0;
        for (int j = 0; j < it->cols; j++) wmax = imax(wmax, render_text_width(rc, it->cl[j + it->c0], lsize));
        int vertical = wmax > it->cw - 4;
        int k = vertical ? label_stride(it->cw, lh) : 1;
        for (int j = 0; j < it->cols; j += k) {
            const char *lab = it->cl[j + it->c0];
            SDL_Color col = j + it->c0 == sel_c ? th->accent : th->text;
            int cx = it->x + (int)lrintf(it->cw * (j + 0.5f));
            SDL_Rect hb;
            if (!vertical) {
                const TextEntry *e = render_text_get(rc, lab, lsize, col);
                if (!e) continue;
                SDL_Rect d = {cx - e->w / 2, it->y - e->h - 4, e->w, e->h};
                SDL_RenderCopy(rc->sdl, e->tex, NULL, &d);
                hb = d;
            } else {
                hb = draw_vlabel(rc, lab, lsize, col, cx, it->y - 6);
            }
            RenderHit h = {RENDER_HIT_TOKEN, it->trace, it->step, -1, -1, 0, 0};
            if (it->cl == (const char *const *)v->lesson->source_tokens && v->lesson->n_source_tokens)
                h.col = j + it->c0;
            else if (v->lesson->n_source_tokens == 0)
                h.col = j + it->c0;
            else
                h.row = j + it->c0;
            add_hitbox(rc, hb, h);
        }
    }
    /* selected token: its row and column outlined */
    SDL_Color selc = th->sel;
    if (sel_r >= it->r0 && sel_r < it->r0 + it->rows)
        render_outline(
            rc,
            (SDL_Rect){it->x - 2, it->y + (int)lrintf(it->ch * (sel_r - it->r0)) - 2, W + 4, (int)lrintf(it->ch) + 4},
            selc, 2);
    if (sel_c >= it->c0 && sel_c < it->c0 + it->cols)
        render_outline(
            rc,
            (SDL_Rect){it->x + (int)lrintf(it->cw * (sel_c - it->c0)) - 2, it->y - 2, (int)lrintf(it->cw) + 4, H + 4},
            selc, 2);

    int tr = it->transposed;
    if (it->block_w > 0) draw_head_blocks(rc, v, it, f, W, H);
    if (it->block_color > 0)
        render_outline(rc, (SDL_Rect){it->x - 3, it->y - 3, W + 6, H + 6}, th->head[(it->block_color - 1) % 8], 3);

    /* operands of the cell being computed: the step's row and column, where they are drawn */
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

    int sums_below = it->rowsum ? draw_sums(rc, v, it, f, W, H) : 0;

    if (it->bare) return;

    /* shape label: "Q₁ 3×2" */
    char title[64], shape[96];
    if (it->map_title)
        snprintf(title, sizeof title, "%s", it->map_title);
    else
        view_step_title(it->s, title, sizeof title);
    snprintf(shape, sizeof shape, "%s%s  %d×%d", title, it->formula_t ? "ᵀ" : "", it->full_rows, it->full_cols);
    int sy = it->y + H + 6 + (it->block_w > 0 && !tr ? text_h(rc, f->small) + 2 : 0) + sums_below;
    /* the label may be wider than a narrow matrix: then the name alone, smaller, or nothing */
    int room = W + it->leg_w + it->lab_w / 2;
    int ssize = f->body;
    if (render_text_width(rc, shape, ssize) > room)
        snprintf(shape, sizeof shape, "%s%s", title, it->formula_t ? "ᵀ" : "");
    while (render_text_width(rc, shape, ssize) > room && ssize > f->small * 3 / 4) ssize = ssize * 9 / 10;
    if (render_text_width(rc, shape, ssize) <= room)
        render_text(rc, shape, ssize, it->result ? th->text : th->dim, it->x + W / 2, sy, 1);

    if (it->legend) {
        int lx = it->x + W + 8 + (it->rowsum && !tr ? render_text_width(rc, "Σ = 0.00", f->small) + 12 : 0);
        draw_legend(rc, v, it, f, lx, it->y, H);
    }

    /* hit region for hover */
    if (rc->n_hitmats < RENDER_MAX_HITMATS) {
        HitMat *hm = &rc->hitmats[rc->n_hitmats++];
        hm->rect = dst;
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
}

/* ---- the operands and result of a step, animated ---- */

static float range_scan(const View *v, const AttnStep *s)
{
    float m = 0.0f;
    size_t n = (size_t)s->rows * (size_t)s->cols;
    int maskable = s->kind == ATTN_STEP_MASKED;
    for (size_t i = 0; i < n; i++) {
        float x = s->data[i];
        if (!isfinite(x)) continue;
        if (maskable && view_cell_blocked(v, s, (int)(i / (size_t)s->cols), (int)(i % (size_t)s->cols))) continue;
        if (fabsf(x) > m) m = fabsf(x);
    }
    return m > 0 ? m : 1.0f;
}

static float range_of(RenderCtx *rc, const View *v, const AttnStep *s)
{
    size_t h = ((uintptr_t)s >> 4) & (RENDER_RANGE_CACHE - 1);
    RangeEntry *e = &rc->ranges[h];
    if (e->step != s || e->data != s->data || e->view_id != v->id) {
        e->view_id = v->id;
        e->step = s;
        e->data = s->data;
        e->range = range_scan(v, s);
    }
    return e->range;
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
    it->range = it->weights ? 1.0f : range_of(rc, v, it->s);
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

/* Scratch for one panel's animation. */
typedef struct Anim {
    float *vals;              /* (rows, cols) of the result */
    unsigned char *state;     /* (rows, cols) */
    float *rowsum;            /* (rows) */
    unsigned char *rowsum_on; /* (rows) */
} Anim;

static void anim_free(Anim *a)
{
    free(a->vals);
    free(a->state);
    free(a->rowsum);
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
    a->state = calloc(n, 1);
    a->vals = malloc(n * sizeof *a->vals);
    if (!a->state || !a->vals) return 0;
    memcpy(a->vals, s->data, n * sizeof *a->vals);
    for (size_t i = 0; i < n; i++)
        a->state[i] = (any_blocked && view_cell_blocked(v, s, (int)(i / (size_t)C), (int)(i % (size_t)C))) ? ST_BLOCKED
                                                                                                           : ST_VALUE;
    res->vals = a->vals;
    res->state = a->state;
    if (p >= 1.0) return 1;
    uint64_t key = 2 + (uint64_t)lrint(p * 4096.0);
    if (is_product(s)) {
        if (n <= 64) {
            size_t k = (size_t)(p * (double)n);
            for (size_t i = 0; i < n; i++)
                if (i > k) a->state[i] = ST_EMPTY;
            if (k < n) {
                res->cur_r = (int)(k / (size_t)C);
                res->cur_c = (int)(k % (size_t)C);
            }
        } else {
            double rows = p * R;
            int kr = (int)rows;
            int kc = (int)((rows - kr) * C);
            for (size_t i = 0; i < n; i++) {
                int r = (int)(i / (size_t)C), c = (int)(i % (size_t)C);
                if (r > kr || (r == kr && c > kc)) a->state[i] = ST_EMPTY;
            }
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
        return key;
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
    } break;
    case ATTN_STEP_SOFTMAX: {
        const AttnStep *src = n_ops ? ops[0].s : NULL;
        if (!src) break;
        a->rowsum = calloc((size_t)R, sizeof *a->rowsum);
        a->rowsum_on = calloc((size_t)R, 1);
        if (!a->rowsum || !a->rowsum_on) break;
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
            for (int c = 0; c < C; c++)
                if (x[c] > mx) mx = x[c];
            float sum = 0;
            for (int c = 0; c < C; c++) {
                size_t i = (size_t)r * C + c;
                float ex = isfinite(mx) ? expf(x[c] - mx) : 0.0f;
                /* first half: exp(x − max); second half: ÷ the row sum */
                float shown = f < 0.5f ? ex : ex + (s->data[i] - ex) * ease((f - 0.5f) * 2.0f);
                if (f >= 1.0f) shown = s->data[i];
                a->vals[i] = shown;
                sum += shown;
            }
            a->rowsum[r] = sum;
            a->rowsum_on[r] = 1;
        }
        if (sequential && cur < R) res->hl_srow = cur;
        res->rowsum = a->rowsum;
        res->rowsum_on = a->rowsum_on;
    } break;
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
    if (res->rows != res->full_rows || res->cols != res->full_cols) return;
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

/* Draws a step's operands and result inside area. */
static void draw_step_panel(RenderCtx *rc, const View *v, const AttnTrace *t, int step, double p, SDL_Rect area,
                            const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const AttnStep *s = &t->steps[step];
    Item items[MAX_ITEMS];
    int n = 0;
    int has_ops = s->n_from > 0;
    if (has_ops) {
        int nf = s->n_from;
        for (int i = 0; i < nf && n < MAX_ITEMS - 1; i++) {
            int tr = (s->kind == ATTN_STEP_SCORES && t->cfg.attention == ATTN_DOT && i == 1);
            item_init(&items[n++], rc, v, t, s->from[i], tr);
        }
    }
    Item *res = &items[n];
    item_init(res, rc, v, t, step, 0);
    res->result = 1;
    int n_ops = n;
    n++;

    /* zoom window of the result */
    if (v->zoom > 1.0f) {
        int vr = imax(1, (int)ceilf(res->full_rows / v->zoom)), vc = imax(1, (int)ceilf(res->full_cols / v->zoom));
        res->rows = vr;
        res->cols = vc;
        res->r0 = imin(imax(0, (int)v->pan_y), res->full_rows - vr);
        res->c0 = imin(imax(0, (int)v->pan_x), res->full_cols - vc);
    }
    /* head blocks on split's projection and on concat */
    if (s->kind == ATTN_STEP_SPLIT && n_ops == 1 && t->cfg.heads > 1) {
        items[0].block_w = s->cols;
        items[0].block_sel = s->head;
        items[0].block_gap = (float)fmin(1.0, p * 2.0);
    }
    if (s->kind == ATTN_STEP_CONCAT && t->cfg.heads > 1) {
        res->block_w = s->cols / t->cfg.heads;
        res->block_sel = 0;
        for (int i = 0; i < n_ops; i++) items[i].block_color = i + 1;
    }
    if (s->kind == ATTN_STEP_SPLIT) res->block_color = t->cfg.heads > 1 ? s->head : 0;
    /* additive: the operand of W_a is [x_i ; y_j], one row per pair, so X
     * stands repeated and Y tiled, row for row beside each other, labelled
     * with the pairs as hidden's rows are */
    const int *pm = s->kind == ATTN_STEP_ADDITIVE_HIDDEN && n_ops >= 2 ? pair_map(rc, t->cfg.n_q, t->cfg.n_k) : NULL;
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

    /* scaling keeps the scores' colour scale, during and after: the values
     * visibly shrink, and nothing jumps when the animation ends */
    if (s->kind == ATTN_STEP_SCALED && n_ops >= 1 && !items[0].weights) res->range = items[0].range;
    Anim anim = {0};
    uint64_t akey = animate(v, res, items, n_ops, p, &anim);
    if (s->kind == ATTN_STEP_SOFTMAX && !res->rowsum) {
        /* the final state keeps its row sums: every row Σ = 1 (0 when all blocked) */
        anim.rowsum = calloc((size_t)s->rows, sizeof *anim.rowsum);
        if (anim.rowsum) {
            for (int r = 0; r < s->rows; r++)
                for (int c = 0; c < s->cols; c++) anim.rowsum[r] += s->data[(size_t)r * (size_t)s->cols + (size_t)c];
            res->rowsum = anim.rowsum;
        }
    }

    /* left to right: the operands in the formula's order, then the result */
    int ord[MAX_ITEMS];
    operand_order(v, items, n_ops, ord);
    ord[n_ops] = n_ops;
    Item *shown[MAX_ITEMS];
    for (int i = 0; i < n; i++) shown[i] = &items[ord[i]];

    /* layout: try with every legend and label, then shed them until it fits */
    char opbuf[48];
    const char *ops[MAX_ITEMS];
    int opw[MAX_ITEMS];
    for (int i = 1; i < n; i++) {
        ops[i] = i == n - 1 ? op_before_result(s, opbuf, sizeof opbuf, t, v->lang)
                            : op_between(s, shown[i - 1]->s, shown[i]->s, v->notation == VIEW_NOTATION_COLUMN);
        opw[i] = render_text_width(rc, ops[i], f->formula) + f->body;
    }
    int lh_s = text_h(rc, f->small);
    int top_h = lh_s + 8;
    for (int i = 0; i < n; i++)
        if (items[i].cl) top_h = imax(top_h, lh_s + 10);
    int bottom_h = text_h(rc, f->body) + 10 + lh_s;
    float cap = 4.6f * (float)f->body;
    float s0 = 0;
    int level;
    for (level = 0; level < 3; level++) {
        int over = 0, sum_cols = 0, max_rows = 1;
        for (int i = 0; i < n; i++) {
            Item *it = shown[i];
            it->legend = level == 0 || it->result || (level == 1 && n <= 3);
            it->labels = level < 2 || i == 0 || it->result || it->rl != shown[i - 1]->rl;
            if (i > 0 && it->row_map && shown[i - 1]->row_map) it->labels = 0; /* y_j beside x_i: one row of pairs */
            it->lab_w = it->labels && it->rl ? label_width(rc, it->rl, it->full_rows, f->label) + 10 : 4;
            if (is_w_a(it) && !it->transposed) it->lab_w = render_text_width(rc, "y_j", f->label) + 12;
            it->leg_w = it->legend ? legend_width(rc, v, it, f) + 8 : 0;
            if (it->result && it->s->kind == ATTN_STEP_SOFTMAX && !it->transposed)
                it->leg_w += render_text_width(rc, "Σ = 0.00", f->small) + 12;
            over += it->lab_w + it->leg_w + (i > 0 ? opw[i] : 0);
            sum_cols += it->full_cols; /* a zoomed matrix keeps the room it had */
            max_rows = imax(max_rows, it->full_rows);
        }
        float sw = (float)(area.w - over - f->body) / (float)sum_cols;
        float sh = (float)(area.h - top_h - bottom_h) / (float)max_rows;
        s0 = fminf(fminf(sw, sh), cap);
        if (sw >= fminf(4.0f, cap) || level == 2) break;
    }
    if (s0 < 0.05f) s0 = 0.05f;
    /* long columns of labels (tokens) get rows tall enough to read */
    int avail_h = area.h - top_h - bottom_h;
    int total_w = 0;
    for (int i = 0; i < n; i++) {
        Item *it = shown[i];
        it->cw = s0;
        float want = it->rl ? fminf(1.3f * (float)f->label, (float)avail_h / (float)it->full_rows) : s0;
        it->ch = fmaxf(s0, want);
        if (it->ch * it->full_rows > avail_h) it->ch = (float)avail_h / (float)it->full_rows;
        /* zoomed: the window of cells fills the matrix's room */
        it->cw *= (float)it->full_cols / (float)it->cols;
        it->ch *= (float)it->full_rows / (float)it->rows;
        total_w += it->lab_w + (int)lrintf(it->cw * it->cols) + it->leg_w + (i > 0 ? opw[i] : 0);
    }
    /* column labels that must stand vertically need room above */
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (!it->cl) continue;
        int wmax = 0;
        int lsize = imin(f->label, imax(f->small * 3 / 4, (int)(it->ch * 0.8f)));
        for (int j = 0; j < it->cols; j++) wmax = imax(wmax, render_text_width(rc, it->cl[j + it->c0], lsize));
        if (wmax > it->cw - 4) {
            int hmax = 0;
            for (int j = 0; j < it->cols; j++) hmax = imax(hmax, vlabel_height(rc, it->cl[j + it->c0], lsize));
            top_h = imax(top_h, hmax + 12);
        }
    }
    avail_h = area.h - top_h - bottom_h;
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (it->ch * it->rows > avail_h) it->ch = fmaxf(0.05f, (float)avail_h / (float)it->rows);
    }
    int x = area.x + imax(0, (area.w - total_w) / 2);
    int cy = area.y + top_h + avail_h / 2;
    for (int i = 0; i < n; i++) {
        Item *it = shown[i];
        if (i > 0) {
            render_text(rc, ops[i], f->formula, th->text, x + opw[i] / 2, cy - text_h(rc, f->formula) / 2, 1);
            x += opw[i];
        }
        x += it->lab_w;
        it->x = x;
        int hh = (int)lrintf(it->ch * it->rows);
        it->y = cy - hh / 2;
        x += (int)lrintf(it->cw * it->cols) + it->leg_w;
    }
    for (int i = 0; i < n; i++) draw_item(rc, v, &items[i], f, i == n - 1 ? akey : 0);
    if (s->kind == ATTN_STEP_CONCAT) draw_concat_slide(rc, v, items, n_ops, res, p, f);

    /* the scale note under the scaling step */
    if (s->kind == ATTN_STEP_SCALED && p < 1.0) {
        char note[96];
        snprintf(note, sizeof note, "÷%s = ÷%.4g",
                 t->cfg.scale_kind == ATTN_SCALE_SQRT_DMODEL ? "√d_model"
                 : t->cfg.scale_kind == ATTN_SCALE_SQRT_DK   ? "√d_k"
                                                             : "",
                 (double)t->divisor);
        int ny = res->y + (int)lrintf(res->ch * res->rows) + 10 + text_h(rc, f->body);
        if (ny + text_h(rc, f->formula) > area.y + area.h) ny = area.y + area.h - text_h(rc, f->formula);
        render_text(rc, note, f->formula, th->accent, res->x + (int)(res->cw * res->cols) / 2, ny, 1);
    }
    if (s->kind == ATTN_STEP_SOFTMAX && p < 1.0) {
        /* rows one after another (≤ 16 rows): the phase within the current row; else all rows at once */
        double slot = res->hl_srow >= 0 ? p * s->rows : p;
        const char *ph = view_string(slot - floor(slot) < 0.5 ? VS_EXP_PHASE : VS_NORM_PHASE, v->lang);
        int ny = res->y + (int)lrintf(res->ch * res->rows) + 10 + text_h(rc, f->body);
        if (ny + text_h(rc, f->formula) > area.y + area.h) ny = area.y + area.h - text_h(rc, f->formula);
        render_text(rc, ph, f->formula, th->accent, res->x + (int)(res->cw * res->cols) / 2, ny, 1);
    }
    anim_free(&anim);
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

/* The small multiples: every head's attention weights, with the tokens on
 * rows (queries) and columns (keys) when the thumbnails leave room to read
 * them: thinned out as on the main heatmaps (every k-th, k ≤ 3), else none. */
static void draw_heads_strip(RenderCtx *rc, const View *v, SDL_Rect area, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const AttnTrace *t = v->trace;
    int H = t->cfg.heads;
    int lh = text_h(rc, f->small);
    /* the panel's title and the weight scale: one line, or two when narrow
     * (smaller when even that is too wide: large text) */
    const char *title = view_string(VS_ALL_HEADS, v->lang);
    const char *scale = view_weight_scale_text(v);
    char line[160];
    snprintf(line, sizeof line, "%s  ·  %s", title, scale);
    int tsize = f->small, two = render_text_width(rc, line, tsize) > area.w;
    while (tsize > 8 && render_text_width(rc, two ? title : line, tsize) > area.w) tsize--;
    render_text(rc, two ? title : line, tsize, th->dim, area.x + area.w / 2, area.y, 1);
    if (two) render_text(rc, scale, tsize, th->dim, area.x + area.w / 2, area.y + lh, 1);
    /* in column notation the thumbnails stand transposed: keys down, queries across */
    int by_col = v->notation == VIEW_NOTATION_COLUMN;
    int top = area.y + lh * (1 + two) + 12;
    const AttnStep *w1 = attn_trace_find(t, ATTN_STEP_SOFTMAX, 1);
    if (!w1) return;
    int nq = by_col ? w1->cols : w1->rows, nk = by_col ? w1->rows : w1->cols; /* displayed rows, columns */
    int best_c = 1;
    int best = heads_grid(area, top, H, lh, 0, 0, &best_c);
    if (best < 8) return;

    /* labels: try them beside and above every thumbnail; keep them if the
     * thumbnails stay large enough and every third label or more fits */
    const char *const *rl = view_row_labels(v, t, w1), *const *cl = view_col_labels(v, t, w1);
    if (by_col) {
        const char *const *tmp = rl;
        rl = cl;
        cl = tmp;
    }
    int lsize = imax(9, f->small * 9 / 10), llh = text_h(rc, lsize);
    int lab_rows = 0, lab_cols = 0, vertical = 0, lw = 0, tth = 0;
    if (rl && cl) {
        int rw = label_width(rc, rl, nq, lsize), cw = label_width(rc, cl, nk, lsize);
        int vh = 0;
        for (int j = 0; j < nk; j++) vh = imax(vh, vlabel_height(rc, cl[j], lsize));
        for (int attempt = 0; attempt < 2 && !lab_rows; attempt++) {
            /* first with the column labels level, then standing; clear of
             * the selected head's outline, 5 px out */
            int l = rw + 11, h = attempt == 0 ? llh + 9 : vh + 11, c;
            int sz = heads_grid(area, top, H, lh, l, h, &c);
            float cell = fminf((float)sz / nq, (float)sz / nk);
            if (attempt == 0 && cw > cell - 2) continue;
            if (sz < 48 || sz * 4 < best * 3 || label_stride(cell, llh) > 3) continue; /* keep ¾ of the side */
            lab_rows = lab_cols = 1;
            vertical = attempt == 1;
            lw = l;
            tth = h;
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
        Item it;
        item_init(&it, rc, v, t, attn_trace_index(t, w), 0);
        it.cw = it.ch = cell;
        it.x = gx + j * (best + lw + 8) + (best - (int)(cell * nk)) / 2;
        it.y = top + tth + i * (best + lh + 14 + tth);
        SDL_Rect dst = {it.x, it.y, (int)lrintf(cell * nk), (int)lrintf(cell * nq)};
        SDL_Texture *tex = matrix_texture(rc, v, &it, 0, dst.w, dst.h);
        if (tex) {
            SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_NONE);
            SDL_RenderCopy(rc->sdl, tex, NULL, &dst);
        }
        int sel = h == v->head;
        render_outline(rc, (SDL_Rect){dst.x - 2, dst.y - 2, dst.w + 4, dst.h + 4}, th->head[(h - 1) % 8], 2);
        if (sel) render_outline(rc, (SDL_Rect){dst.x - 5, dst.y - 5, dst.w + 10, dst.h + 10}, th->text, 3);
        const char *const *hrl = it.rl, *const *hcl = it.cl;
        if (lab_rows && hrl) {
            int k = label_stride(cell, llh), sr = sel_for_labels(v, hrl);
            for (int r = 0; r < nq; r += k)
                render_text(rc, hrl[r], lsize, r == sr ? th->accent : th->dim, dst.x - 10,
                            dst.y + (int)lrintf(cell * (r + 0.5f)) - llh / 2, 2);
        }
        if (lab_cols && hcl) {
            int k = vertical ? label_stride(cell, llh) : 1, sc = sel_for_labels(v, hcl);
            for (int c = 0; c < nk; c += k) {
                SDL_Color col = c == sc ? th->accent : th->dim;
                int cx = dst.x + (int)lrintf(cell * (c + 0.5f));
                if (vertical)
                    draw_vlabel(rc, hcl[c], lsize, col, cx, dst.y - 10);
                else
                    render_text(rc, hcl[c], lsize, col, cx, dst.y - 9 - llh, 1);
            }
        }
        char lab[32];
        snprintf(lab, sizeof lab, "%s %d", view_string(VS_HEAD, v->lang), h);
        /* under the selection's outline (5 px out), not on it */
        render_text(rc, lab, f->small, sel ? th->text : th->dim, dst.x + dst.w / 2, dst.y + dst.h + 7, 1);
        RenderHit hit = {RENDER_HIT_HEAD, t, -1, -1, -1, h, 0};
        add_hitbox(rc, (SDL_Rect){dst.x - 2, dst.y - 2, dst.w + 4, dst.h + lh + 11}, hit);
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
        total = render_text_width(rc, pre, size) + render_text_width(rc, mid, size) +
                render_text_width(rc, post, size) + 16;
        if (total <= bar.w - 20 || size <= 10) break;
        size = size * 9 / 10;
    }
    int lh = text_h(rc, size);
    int x = bar.x + (bar.w - total) / 2, y = bar.y + (bar.h - lh) / 2;
    x += render_text(rc, pre, size, th->dim, x, y, 0);
    if (mid[0]) {
        int w = render_text_width(rc, mid, size);
        render_fill(rc, (SDL_Rect){x + 2, y - 2, w + 12, lh + 4}, th->hl_bg);
        render_text(rc, mid, size, th->text, x + 8, y, 0);
        x += w + 16;
    }
    render_text(rc, post, size, th->dim, x, y, 0);
}

static void draw_timeline(RenderCtx *rc, const View *v, SDL_Rect bar, const Fonts *f)
{
    const Theme *th = render_theme(v->theme);
    const AttnTrace *t = view_trace(v);
    int n = t->n_steps;
    int lh = text_h(rc, f->small);
    int seg_y = bar.y + lh + 4, seg_h = bar.h - lh - 6;
    /* phases are separated by a gap */
    int groups = 1;
    for (int i = 1; i < n; i++) groups += view_phase(t, i) != view_phase(t, i - 1);
    int gap = imax(4, f->body / 3);
    float w = (float)(bar.w - gap * (groups - 1)) / (float)n;
    float x = (float)bar.x;
    int gstart_x = bar.x, gstart = 0;
    for (int i = 0; i <= n; i++) {
        if (i == n || (i > 0 && view_phase(t, i) != view_phase(t, i - 1))) {
            char lab[64];
            view_phase_label(v, t, gstart, lab, sizeof lab);
            int gw = (int)x - gstart_x;
            int cur_in = v->step >= gstart && v->step < i;
            if (render_text_width(rc, lab, f->small) <= gw)
                render_text(rc, lab, f->small, cur_in ? th->text : th->dim, gstart_x + gw / 2, bar.y, 1);
            else if (cur_in || gw > f->small) {
                /* too narrow for the label: its number at least ("1", "2" for heads) */
                int p = view_phase(t, gstart);
                char shortlab[16];
                if (p >= 10)
                    snprintf(shortlab, sizeof shortlab, "%d", p - 10);
                else {
                    const char *cut = strstr(lab, " &");
                    if (!cut) cut = strstr(lab, "与");
                    snprintf(shortlab, sizeof shortlab, "%.*s", cut ? (int)(cut - lab) : 0, lab);
                }
                if (shortlab[0] && render_text_width(rc, shortlab, f->small) <= gw)
                    render_text(rc, shortlab, f->small, cur_in ? th->text : th->dim, gstart_x + gw / 2, bar.y, 1);
            }
            if (i == n) break;
            x += gap;
            gstart_x = (int)x;
            gstart = i;
        }
        SDL_Rect seg = {(int)lrintf(x), seg_y, imax(1, (int)lrintf(x + w) - (int)lrintf(x) - (w > 4 ? 1 : 0)), seg_h};
        SDL_Color c = i < v->step ? th->tl_done : i == v->step ? th->accent : th->tl_future;
        render_fill(rc, seg, c);
        if (i == v->step) {
            /* the animation's progress inside the current step */
            double pr = view_progress(v);
            SDL_Rect pbar = {seg.x, seg.y + seg.h - imax(2, seg.h / 5), (int)lrint(seg.w * pr), imax(2, seg.h / 5)};
            render_fill(rc, pbar, th->text);
        }
        RenderHit hit = {RENDER_HIT_TIMELINE, t, i, -1, -1, 0, 0};
        add_hitbox(rc, (SDL_Rect){seg.x, bar.y, seg.w + 1, bar.h}, hit);
        x += w;
    }
}

static void draw_wrapped(RenderCtx *rc, const char *text, int size, SDL_Color col, SDL_Rect box, int max_lines)
{
    size_t starts[64], lens[64];
    int n = render_wrap(rc, text, size, box.w, starts, lens, max_lines < 64 ? max_lines : 64);
    int lh = text_h(rc, size);
    for (int i = 0; i < n; i++) {
        char line[1024];
        size_t L = lens[i] < sizeof line - 4 ? lens[i] : sizeof line - 4;
        memcpy(line, text + starts[i], L);
        line[L] = '\0';
        if (i == n - 1 && starts[i] + lens[i] < strlen(text) - 1 && n == max_lines) strcat(line, "…");
        render_text(rc, line, size, col, box.x, box.y + i * lh, 0);
    }
}

static int wrapped_lines(RenderCtx *rc, const char *text, int size, int width)
{
    size_t starts[64], lens[64];
    return render_wrap(rc, text, size, width, starts, lens, 64);
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
    int n = render_wrap(rc, text, size, maxw, starts, lens, 24);
    int lh = text_h(rc, size), w = 0;
    for (int i = 0; i < n; i++) w = imax(w, render_measure(rc, text + starts[i], lens[i], size));
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
            render_text(rc, view_string(VS_HELP_TITLE, v->lang), size, th->accent, x0 + size, y0 + 10, 0);
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
                w1 = imax(w1, render_text_width(rc, line, size) * (second ? 1 : 0));
                if (second)
                    w2 = imax(w2, render_text_width(rc, second, size));
                else
                    w2 = imax(w2, render_text_width(rc, line, size) - w1);
            } else {
                render_text(rc, line, size, th->text, x0, y0, 0);
                if (second) render_text(rc, second, size, th->text, x0 + w1 + 2 * size, y0, 0);
                y0 += lh;
            }
            p += L;
            if (*p == '\n') p++;
        }
    }
}

static Fonts fonts_for(const View *v, int width, int height, float shrink)
{
    float base = (float)imin(height, width * 9 / 16 + height / 8) / 42.0f;
    if (v->theme == VIEW_THEME_PROJECTOR) base *= 1.12f;
    base *= v->text_scale * shrink;
    Fonts f;
    f.body = imax(11, (int)lrintf(base));
    f.small = imax(10, (int)lrintf(base * 0.78f));
    f.label = imax(10, (int)lrintf(base * 0.9f));
    f.formula = imax(12, (int)lrintf(base * 1.2f));
    f.title = imax(12, (int)lrintf(base * 1.05f));
    f.num = imax(9, (int)lrintf(base * 0.8f));
    return f;
}

int render_frame(RenderCtx *rc, const View *v, int width, int height)
{
    if (!rc || !v || !v->trace || width <= 0 || height <= 0) return SDL_SetError("render_frame: nothing to draw");
    rc->frame++;
    render_text_trim(rc);
    rc->n_hitboxes = rc->n_hitmats = 0;
    rc->width = width;
    rc->height = height;
    const Theme *th = render_theme(v->theme);
    /* Text as large as asked, as long as the bars around the matrices leave
     * them at least 55% of the height: + and − never squeeze them away. */
    int max_lines = height >= 700 ? 4 : 3;
    Fonts f = fonts_for(v, width, height, 1.0f);
    for (float shrink = 0.9f; shrink > 0.2f; shrink *= 0.9f) {
        int mm = imax(8, f.body * 2 / 3);
        /* line heights estimated (1.25 × size) so that no font is opened at sizes never drawn */
        int chrome =
            (f.title + f.formula + max_lines * f.body + f.small) * 5 / 4 + imax(12, f.body * 3 / 4) + 6 + 5 * mm;
        if (chrome <= height * 45 / 100) break;
        f = fonts_for(v, width, height, shrink);
    }
    SDL_Rect all = {0, 0, width, height};
    SDL_RenderSetViewport(rc->sdl, NULL);
    SDL_RenderSetClipRect(rc->sdl, NULL);
    render_fill(rc, all, th->bg);
    int m = imax(8, f.body * 2 / 3);

    /* title bar: the lesson, where we are */
    int title_h = text_h(rc, f.title) + m;
    char title[1024];
    view_title(v, title, sizeof title);
    char status[320];
    const AttnTrace *t = view_trace(v);
    int nh = view_head_count(v);
    const char *mode = view_string(v->mode == VIEW_MULTI    ? VS_MODE_MULTI
                                   : v->mode == VIEW_SINGLE ? VS_MODE_SINGLE
                                                            : VS_MODE_COMPARE,
                                   v->lang);
    char headpart[64] = "";
    if (nh > 1 && v->mode != VIEW_SINGLE)
        snprintf(headpart, sizeof headpart, "%s %d/%d  ·  ", view_string(VS_HEAD, v->lang), v->head, nh);
    char modepart[96] = "";
    if (t->cfg.attention == ATTN_DOT) snprintf(modepart, sizeof modepart, "%s  ·  ", mode);
    if (v->notation == VIEW_NOTATION_COLUMN)
        snprintf(modepart + strlen(modepart), sizeof modepart - strlen(modepart), "%s  ·  ",
                 view_string(VS_NOTATION_COLUMN, v->lang));
    snprintf(status, sizeof status, "%s %d/%d  ·  %s%s%s ×%g  ·  %s", view_string(VS_STEP, v->lang),
             view_step_ordinal(v->step), t->n_steps, headpart, modepart,
             view_string(v->rewinding ? VS_REWINDING
                         : v->playing ? VS_PLAYING
                                      : VS_PAUSED,
                         v->lang),
             v->speed, view_string(VS_HINT, v->lang));
    int ssize = f.small;
    while (render_text_width(rc, status, ssize) > width * 45 / 100 && ssize > 9) ssize = ssize * 9 / 10;
    int sw = render_text_width(rc, status, ssize);
    int stw = width - 3 * m - sw;
    int tsize = f.title;
    while (render_text_width(rc, title, tsize) > stw && tsize > 10) tsize = tsize * 9 / 10;
    render_text(rc, title, tsize, th->text, m, m / 2, 0);
    render_text(rc, status, ssize, th->dim, width - m, m / 2 + (text_h(rc, f.title) - text_h(rc, ssize)) / 2, 2);

    /* formula bar */
    int fbar_h = text_h(rc, f.formula) + m;
    SDL_Rect fbar = {m, title_h, width - 2 * m, fbar_h};
    render_fill(rc, fbar, th->panel);
    draw_formula(rc, v, fbar, &f);

    /* bottom: timeline, narration */
    int tl_h = text_h(rc, f.small) + imax(12, f.body * 3 / 4) + 6;
    SDL_Rect tl = {m, height - m / 2 - tl_h, width - 2 * m, tl_h};
    char narr[NARRATE_MAX_STEP_TEXT];
    view_narration(v, narr, sizeof narr);
    int nsize = f.body, nw = width - 4 * m;
    while (wrapped_lines(rc, narr, nsize, nw) > max_lines && nsize > f.small) nsize--;
    int nl = imin(max_lines, imax(2, wrapped_lines(rc, narr, nsize, nw)));
    int narr_h = nl * text_h(rc, nsize) + m;
    SDL_Rect nbox = {m, tl.y - m / 2 - narr_h, width - 2 * m, narr_h};
    render_fill(rc, nbox, th->panel);
    draw_wrapped(rc, narr, nsize, th->text, (SDL_Rect){nbox.x + m, nbox.y + m / 2, nw, narr_h}, max_lines);
    draw_timeline(rc, v, tl, &f);

    /* the main area */
    SDL_Rect main = {m, fbar.y + fbar_h + m / 2, width - 2 * m, nbox.y - (fbar.y + fbar_h) - m};
    double p = view_progress(v);
    if (v->mode == VIEW_COMPARE) {
        /* the operands run left to right, so on a wide screen the two
         * pipelines stack, each with the full width; else side by side */
        int stacked = main.w * 2 >= main.h * 3;
        int lh = text_h(rc, f.body);
        char cap1[128], cap2[128];
        snprintf(cap1, sizeof cap1, "%s  (h = 1, d_k = %d)", view_string(VS_MODE_SINGLE, v->lang), v->single->cfg.d_k);
        snprintf(cap2, sizeof cap2, "%s  (h = %d, d_k = %d)", view_string(VS_MULTI_TITLE, v->lang), v->trace->cfg.heads,
                 v->trace->cfg.d_k);
        SDL_Rect left, right;
        SDL_SetRenderDrawBlendMode(rc->sdl, SDL_BLENDMODE_NONE);
        SDL_SetRenderDrawColor(rc->sdl, th->dim.r, th->dim.g, th->dim.b, 255);
        if (stacked) {
            int half = main.h / 2;
            left = (SDL_Rect){main.x, main.y + lh + 2, main.w, half - lh - 6};
            right = (SDL_Rect){main.x, main.y + half + lh + 4, main.w, main.h - half - lh - 4};
            render_text(rc, cap1, f.body, th->text, main.x, main.y, 0);
            render_text(rc, cap2, f.body, th->text, main.x, main.y + half + 2, 0);
            SDL_RenderDrawLine(rc->sdl, main.x, main.y + half, main.x + main.w, main.y + half);
        } else {
            int half = main.w / 2;
            render_text(rc, cap1, f.body, th->text, main.x + half / 2, main.y, 1);
            render_text(rc, cap2, f.body, th->text, main.x + half + half / 2, main.y, 1);
            SDL_RenderDrawLine(rc->sdl, main.x + half, main.y, main.x + half, main.y + main.h);
            left = (SDL_Rect){main.x, main.y + lh + 4, half - m / 2, main.h - lh - 4};
            right = (SDL_Rect){main.x + half + m / 2, main.y + lh + 4, half - m / 2, main.h - lh - 4};
        }
        draw_step_panel(rc, v, v->single, view_compare_step(v, v->step), p, left, &f);
        draw_step_panel(rc, v, v->trace, v->step, p, right, &f);
    } else if (v->mode == VIEW_MULTI && nh > 1) {
        int strip_w = imax(120, imin(width / 5, 460));
        SDL_Rect strip = {main.x + main.w - strip_w, main.y, strip_w, main.h};
        SDL_Rect panel = {main.x, main.y, main.w - strip_w - m, main.h};
        draw_step_panel(rc, v, t, v->step, p, panel, &f);
        SDL_SetRenderDrawColor(rc->sdl, th->tl_future.r, th->tl_future.g, th->tl_future.b, 255);
        SDL_RenderDrawLine(rc->sdl, strip.x - m / 2, strip.y, strip.x - m / 2, strip.y + strip.h);
        draw_heads_strip(rc, v, strip, &f);
    } else {
        draw_step_panel(rc, v, t, v->step, p, main, &f);
    }

    draw_tooltip(rc, v, &f);

    /* notice (saved frame, reload error) */
    char notice[2 * VIEW_MAX_NOTICE];
    if (view_notice_text(v, notice, sizeof notice)) {
        int size = f.body;
        int w = imin(width - 4 * m, render_text_width(rc, notice, size) + 2 * m);
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

RenderHitKind render_hit_test(const RenderCtx *rc, int x, int y, RenderHit *hit)
{
    memset(hit, 0, sizeof *hit);
    hit->step = hit->row = hit->col = -1;
    SDL_Point pt = {x, y};
    for (int i = rc->n_hitboxes - 1; i >= 0; i--)
        if (SDL_PointInRect(&pt, &rc->hitboxes[i].rect)) {
            *hit = rc->hitboxes[i].hit;
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
