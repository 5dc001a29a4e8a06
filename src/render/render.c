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

/* A number as a cell shows it: a true minus sign, few digits. */
static void fmt_cell(char *buf, size_t len, float x, int weights)
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
        if (mant >= 9.5) {
            mant /= 10.0;
            e++;
        }
        snprintf(tmp, sizeof tmp, "%.0fe%d", mant, e); /* −1e9, not −1e+09 */
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

/* ---- one matrix on screen ---- */

enum { ST_EMPTY = 0, ST_VALUE = 1, ST_BLOCKED = 2 };

typedef struct Item {
    const AttnTrace *trace;
    int step;
    const AttnStep *s;
    int transposed;
    int weights; /* viridis on [0, 1] */
    float range; /* diverging: ±range */
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
    int hl_row, hl_col;         /* displayed row / column lit as an operand of the cell being computed */
    int cur_r, cur_c;           /* result cell being computed (step coordinates), -1 */
    const float *rowsum;        /* (rows) shown at the right end of each row, or NULL */
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

/* Displayed (i, j) → the step's (r, c). */
static void disp_to_step(const Item *it, int i, int j, int *r, int *c)
{
    i += it->r0;
    j += it->c0;
    if (it->transposed) {
        *r = j;
        *c = i;
    } else {
        *r = i;
        *c = j;
    }
}

static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* The cells' texture (full matrix, displayed orientation), cached by content. */
/* The colour of displayed cell (i, j) of the full matrix. */
static uint32_t cell_pixel(const View *v, const Theme *th, const Item *it, int i, int j)
{
    int r = it->transposed ? j : i, c = it->transposed ? i : j; /* displayed (i, j) of the full matrix */
    int st = step_state(it, r, c);
    if (!it->state && view_cell_blocked(v, it->s, r, c)) st = ST_BLOCKED;
    SDL_Color col;
    if (st == ST_EMPTY)
        col = th->panel;
    else if (st == ST_BLOCKED) {
        float x = step_val(it, r, c);
        SDL_Color from =
            isfinite(x) && it->blocked_mix < 1.0f ? render_value_color(x, it->weights, it->range) : th->blocked;
        col = it->blocked_mix >= 1.0f ? th->blocked : mix(from, th->blocked, it->blocked_mix);
    } else
        col = render_value_color(step_val(it, r, c), it->weights, it->range);
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

static void legend_text(char *buf, size_t len, const Item *it, int top)
{
    if (it->weights) {
        snprintf(buf, len, top ? "1" : "0");
        return;
    }
    char tmp[32];
    fmt_cell(tmp, sizeof tmp, top ? it->range : -it->range, 0);
    snprintf(buf, len, "%s", tmp);
}

static int legend_width(RenderCtx *rc, const Item *it, const Fonts *f)
{
    char a[32], b[32];
    legend_text(a, sizeof a, it, 1);
    legend_text(b, sizeof b, it, 0);
    return f->body / 2 + 4 + imax(render_text_width(rc, a, f->small), render_text_width(rc, b, f->small)) + 6;
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
    char a[32], b[32];
    legend_text(a, sizeof a, it, 1);
    legend_text(b, sizeof b, it, 0);
    render_text(rc, a, f->small, th->dim, x + bw + 4, y - lh / 4, 0);
    render_text(rc, b, f->small, th->dim, x + bw + 4, y + h - lh * 3 / 4, 0);
    if (!it->weights && h >= 4 * lh) render_text(rc, "0", f->small, th->dim, x + bw + 4, y + h / 2 - lh / 2, 0);
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

    /* cells: numbers, blocked marks */
    int many = it->rows * it->cols > 900;
    int nsize = (int)fminf(fminf((float)f->body, it->ch * 0.4f), it->cw / 3.8f);
    int numbers = !many && nsize >= 9 && it->alpha >= 0.5f;
    int maskable = it->s->kind == ATTN_STEP_MASKED || it->s->kind == ATTN_STEP_SOFTMAX;
    /* cells too small for a hatch or a number draw nothing here: a
     * 1024×1024 matrix is then not visited cell by cell */
    int hatch = it->blocked_mix > 0.5f && it->cw >= 8 && it->ch >= 8;
    for (int i = 0; i < it->rows && (numbers || ((it->state || maskable) && hatch)); i++)
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
            if (st == ST_BLOCKED) {
                if (it->blocked_mix <= 0.5f) continue;
                /* what the cell becomes: −∞, or the finite fill (−1e9, −1e20), or weight 0 */
                float fill = it->s->data[(size_t)r * (size_t)it->s->cols + (size_t)c];
                if (it->weights)
                    snprintf(num, sizeof num, "0");
                else
                    fmt_cell(num, sizeof num, fill, 0);
                bgc = th->blocked;
            } else {
                fmt_cell(num, sizeof num, x, it->weights);
                bgc = render_value_color(x, it->weights, it->range);
            }
            render_text_glyphs(rc, num, nsize, ink_on(bgc), cell.x + cell.w / 2, cell.y + cell.h / 2, cell.w - 2);
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
    if (it->cl) {
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

    /* head blocks (split, concat) */
    if (it->block_w > 0 && !it->transposed) {
        int nb = it->full_cols / it->block_w;
        if (it->block_gap > 0.0f) {
            /* the projection's columns come apart into the heads' blocks */
            int gap = imax(1, (int)lrintf(it->block_gap * fmaxf(4.0f, fminf(12.0f, it->cw * 0.4f))));
            for (int b = 1; b < nb; b++) {
                int cb = b * it->block_w - it->c0;
                if (cb <= 0 || cb >= it->cols) continue;
                int x = it->x + (int)lrintf(it->cw * cb);
                render_fill(rc, (SDL_Rect){x - gap / 2 - 1, it->y - 1, gap + 2, H + 2}, render_theme(v->theme)->bg);
            }
        }
        for (int b = 0; b < nb; b++) {
            int c0 = b * it->block_w - it->c0, c1 = c0 + it->block_w;
            if (c1 <= 0 || c0 >= it->cols) continue;
            c0 = imax(c0, 0);
            c1 = imin(c1, it->cols);
            SDL_Rect br = {it->x + (int)lrintf(it->cw * c0) + 1, it->y + 1,
                           (int)lrintf(it->cw * c1) - (int)lrintf(it->cw * c0) - 2, H - 2};
            render_outline(rc, br, th->head[b % 8], b + 1 == it->block_sel ? 4 : 2);
            char hn[32];
            snprintf(hn, sizeof hn, "%s %d", view_string(VS_HEAD, v->lang), b + 1);
            if (render_text_width(rc, hn, f->small) < br.w + it->cw)
                render_text(rc, hn, f->small, th->head[b % 8], br.x + br.w / 2, it->y + H + 3, 1);
        }
    }
    if (it->block_color > 0)
        render_outline(rc, (SDL_Rect){it->x - 3, it->y - 3, W + 6, H + 6}, th->head[(it->block_color - 1) % 8], 3);

    /* operands of the cell being computed */
    int thick = imax(3, f->body / 9);
    if (it->hl_row >= 0 && it->hl_row < it->rows)
        render_outline(rc, (SDL_Rect){it->x, it->y + (int)lrintf(it->ch * it->hl_row), W, imax(2, (int)lrintf(it->ch))},
                       th->sel, thick);
    if (it->hl_col >= 0 && it->hl_col < it->cols)
        render_outline(rc, (SDL_Rect){it->x + (int)lrintf(it->cw * it->hl_col), it->y, imax(2, (int)lrintf(it->cw)), H},
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

    /* row sums at the end of each row (softmax) */
    if (it->rowsum) {
        int rsz = imin(f->small, imax(8, (int)(it->ch * 0.5f)));
        int k = label_stride(it->ch, text_h(rc, rsz));
        for (int i = 0; i < it->rows; i += k) {
            if (it->rowsum_on && !it->rowsum_on[i + it->r0]) continue;
            char buf[48], num[32];
            float sv = it->rowsum[i + it->r0];
            if (fabsf(sv - 1.0f) < 5e-4f)
                snprintf(buf, sizeof buf, "Σ = 1");
            else {
                fmt_cell(num, sizeof num, sv, 0);
                snprintf(buf, sizeof buf, "Σ = %s", num);
            }
            render_text(rc, buf, rsz, th->accent, it->x + W + 8,
                        it->y + (int)lrintf(it->ch * (i + 0.5f)) - text_h(rc, rsz) / 2, 0);
        }
    }

    if (it->bare) return;

    /* shape label: "Q₁ 3×2" */
    char title[64], shape[96];
    view_step_title(it->s, title, sizeof title);
    snprintf(shape, sizeof shape, "%s%s  %d×%d", title, it->transposed ? "ᵀ" : "",
             it->transposed ? it->s->cols : it->s->rows, it->transposed ? it->s->rows : it->s->cols);
    int sy = it->y + H + 6 + (it->block_w > 0 ? text_h(rc, f->small) + 2 : 0);
    /* the label may be wider than a narrow matrix: then the name alone, smaller, or nothing */
    int room = W + it->leg_w + it->lab_w / 2;
    int ssize = f->body;
    if (render_text_width(rc, shape, ssize) > room)
        snprintf(shape, sizeof shape, "%s%s", title, it->transposed ? "ᵀ" : "");
    while (render_text_width(rc, shape, ssize) > room && ssize > f->small * 3 / 4) ssize = ssize * 9 / 10;
    if (render_text_width(rc, shape, ssize) <= room)
        render_text(rc, shape, ssize, it->result ? th->text : th->dim, it->x + W / 2, sy, 1);

    if (it->legend) {
        int lx = it->x + W + 8 + (it->rowsum ? render_text_width(rc, "Σ = 0.00", f->small) + 12 : 0);
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

static void item_init(Item *it, RenderCtx *rc, const View *v, const AttnTrace *t, int step, int transposed)
{
    memset(it, 0, sizeof *it);
    it->trace = t;
    it->step = step;
    it->s = &t->steps[step];
    it->transposed = transposed;
    it->weights = is_weights(it->s);
    it->range = it->weights ? 1.0f : range_of(rc, v, it->s);
    it->alpha = 1.0f;
    it->hl_row = it->hl_col = it->cur_r = it->cur_c = -1;
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
        if (res->cur_r >= 0 && s->kind == ATTN_STEP_SCORES && res->trace->cfg.attention == ATTN_ADDITIVE &&
            n_ops >= 1 && res->cur_c >= 0)
            ops[0].hl_row = res->cur_r * C + res->cur_c - ops[0].r0; /* the pair's row of hidden */
        if (res->cur_r >= 0 && s->kind == ATTN_STEP_ADDITIVE_HIDDEN && n_ops >= 1) {
            int nk = res->trace->cfg.n_k;
            ops[0].hl_row = res->cur_r / nk - ops[0].r0;                                                      /* x_i */
            if (n_ops >= 2 && ops[1].s->kind == ATTN_STEP_INPUT) ops[1].hl_row = res->cur_r % nk - ops[1].r0; /* y_j */
        }
        /* the left operand's row and the right operand's column */
        if (res->cur_r >= 0 && n_ops >= 2 && s->kind != ATTN_STEP_ADDITIVE_HIDDEN &&
            !(s->kind == ATTN_STEP_SCORES && res->trace->cfg.attention == ATTN_ADDITIVE)) {
            ops[0].hl_row = res->cur_r - ops[0].r0;
            if (res->cur_c >= 0) ops[1].hl_col = res->cur_c - ops[1].c0;
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
                for (int c = 0; c < C; c++)
                    if (a->state[(size_t)r * C + c] != ST_BLOCKED) a->state[(size_t)r * C + c] = ST_EMPTY;
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
        if (sequential && cur < R) res->hl_row = cur - res->r0;
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

/* The operator written between operand i-1 and i, and before the result. */
static const char *op_between(const AttnStep *s, const AttnStep *next, int before_result, char *buf, size_t len,
                              const AttnTrace *t, LessonLang lang)
{
    /* s is the result step; next the operand after the operator (NULL before the result) */
    if (before_result) {
        switch (s->kind) {
        case ATTN_STEP_SCALED:
            snprintf(buf, len, "÷ %.4g =", (double)t->divisor);
            return buf;
        case ATTN_STEP_MASKED:
            snprintf(buf, len, "%s", view_string(VS_OP_MASK, lang));
            return buf;
        case ATTN_STEP_SOFTMAX:
            snprintf(buf, len, "softmax →");
            return buf;
        case ATTN_STEP_SPLIT:
            snprintf(buf, len, "→");
            return buf;
        case ATTN_STEP_CONCAT:
            snprintf(buf, len, "→");
            return buf;
        case ATTN_STEP_ADDITIVE_HIDDEN:
            snprintf(buf, len, "→ tanh →");
            return buf;
        default:
            snprintf(buf, len, "=");
            return buf;
        }
    }
    (void)lang;
    if (next && next->kind == ATTN_STEP_BIAS) return "+";
    if (s->kind == ATTN_STEP_CONCAT) return "|";
    if (s->kind == ATTN_STEP_ADDITIVE_HIDDEN) return next && next->kind == ATTN_STEP_WEIGHT ? "×" : ";";
    return "×";
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
        /* the block's cells in the concat: columns [c0, c0 + cols) */
        float dx = (float)res->x + res->cw * (float)c0, dy = (float)res->y;
        mv.x = (int)lrintf((float)src->x + (dx - (float)src->x) * q);
        mv.y = (int)lrintf((float)src->y + (dy - (float)src->y) * q);
        mv.cw = src->cw + (res->cw - src->cw) * q;
        mv.ch = src->ch + (res->ch - src->ch) * q;
        mv.rl = mv.cl = NULL;
        mv.labels = mv.legend = 0;
        mv.alpha = 1.0f;
        mv.hl_row = mv.hl_col = mv.cur_r = mv.cur_c = -1;
        mv.block_color = i + 1;
        mv.bare = 1;
        draw_item(rc, v, &mv, f, 0);
        c0 += src->s->cols;
    }
}

/* Draws a step's operands and result inside area. */
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
static void draw_changed(RenderCtx *rc, const View *v, const Item *it, const float *before)
{
    if (it->cw < 6 || it->ch < 6) return;
    const Theme *th = render_theme(v->theme);
    for (int i = 0; i < it->rows; i++)
        for (int j = 0; j < it->cols; j++) {
            int r, c;
            disp_to_step(it, i, j, &r, &c);
            size_t k = (size_t)r * (size_t)it->s->cols + (size_t)c;
            if (memcmp(&before[k], &it->s->data[k], sizeof(float)) == 0) continue;
            SDL_Rect cell = {it->x + (int)lrintf(it->cw * j), it->y + (int)lrintf(it->ch * i),
                             (int)lrintf(it->cw * (j + 1)) - (int)lrintf(it->cw * j),
                             (int)lrintf(it->ch * (i + 1)) - (int)lrintf(it->ch * i)};
            render_outline(rc, (SDL_Rect){cell.x + 1, cell.y + 1, cell.w - 2, cell.h - 2}, th->accent, 2);
        }
}

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

    /* scaling keeps the scores' colour scale, during and after: the values
     * visibly shrink, and nothing jumps when the animation ends */
    if (s->kind == ATTN_STEP_SCALED && n_ops >= 1 && !items[0].weights) res->range = items[0].range;
    Anim anim = {0};
    uint64_t akey = animate(v, res, items, n_ops, p, &anim);
    const float *before = t == view_trace(v) && step == v->step ? v->edit_before : NULL;
    float *edit_vals = before && !res->vals ? edit_animate(v, res, before, &akey) : NULL;
    if (s->kind == ATTN_STEP_SOFTMAX && !res->rowsum) {
        /* the final state keeps its row sums: every row Σ = 1 (0 when all blocked) */
        anim.rowsum = calloc((size_t)s->rows, sizeof *anim.rowsum);
        if (anim.rowsum) {
            for (int r = 0; r < s->rows; r++)
                for (int c = 0; c < s->cols; c++) anim.rowsum[r] += s->data[(size_t)r * (size_t)s->cols + (size_t)c];
            res->rowsum = anim.rowsum;
        }
    }

    /* layout: try with every legend and label, then shed them until it fits */
    char opbuf[MAX_ITEMS][48];
    const char *ops[MAX_ITEMS];
    int opw[MAX_ITEMS];
    for (int i = 1; i < n; i++) {
        ops[i] = op_between(s, i < n - 1 ? items[i].s : NULL, i == n - 1, opbuf[i], sizeof opbuf[i], t, v->lang);
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
            Item *it = &items[i];
            it->legend = level == 0 || it->result || (level == 1 && n <= 3);
            it->labels = level < 2 || i == 0 || it->result || it->rl != items[i - 1].rl;
            it->lab_w = it->labels && it->rl ? label_width(rc, it->rl, it->full_rows, f->label) + 10 : 4;
            it->leg_w = it->legend ? legend_width(rc, it, f) + 8 : 0;
            if (it->result && it->s->kind == ATTN_STEP_SOFTMAX)
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
        Item *it = &items[i];
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
        Item *it = &items[i];
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
    if (before) draw_changed(rc, v, res, before);
    free(edit_vals);
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
        double slot = res->hl_row >= 0 ? p * s->rows : p;
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
    /* the panel's title, smaller when the panel is narrow (large text) */
    const char *title = view_string(VS_ALL_HEADS, v->lang);
    int tsize = f->small;
    while (tsize > 8 && render_text_width(rc, title, tsize) > area.w) tsize--;
    render_text(rc, title, tsize, th->dim, area.x + area.w / 2, area.y, 1);
    int top = area.y + lh + 12;
    const AttnStep *w1 = attn_trace_find(t, ATTN_STEP_SOFTMAX, 1);
    if (!w1) return;
    int nq = w1->rows, nk = w1->cols;
    int best_c = 1;
    int best = heads_grid(area, top, H, lh, 0, 0, &best_c);
    if (best < 8) return;

    /* labels: try them beside and above every thumbnail; keep them if the
     * thumbnails stay large enough and every third label or more fits */
    const char *const *rl = view_row_labels(v, t, w1), *const *cl = view_col_labels(v, t, w1);
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
        nq = w->rows;
        nk = w->cols;
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
        const char *const *hrl = view_row_labels(v, t, w), *const *hcl = view_col_labels(v, t, w);
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
        if (abs(x - last_x) > render_text_width(rc, ticks[i].label, f->small)) {
            render_text(rc, ticks[i].label, f->small, th->dim, x, y + lh / 2 + 1, 1);
            last_x = x;
        }
    }
    double d = fmin(fmax((double)t->divisor, lo), hi);
    int kx = x0 + (int)lrint((x1 - x0) * (log10(d / lo) / 2.0));
    render_fill(rc, (SDL_Rect){kx - 4, y - lh / 2 - 2, 9, lh + 4}, th->accent);
    char label[64];
    snprintf(label, sizeof label, "÷ %.4g", (double)t->divisor);
    render_text(rc, label, f->small, th->text, x1 + f->small / 2, y - lh / 2, 0);
    render_text(rc, "< >", f->small, th->dim, box.x + f->small / 2, y - lh / 2, 0);
}

static void draw_editing(RenderCtx *rc, const View *v, const Fonts *f, SDL_Rect main)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    int scale_step = t->cfg.attention == ATTN_DOT &&
                     (s->kind == ATTN_STEP_SCALED ||
                      (v->edit_mode && (s->kind == ATTN_STEP_MASKED || s->kind == ATTN_STEP_SOFTMAX)));
    int lh = text_h(rc, f->small);
    if (v->mode == VIEW_MULTI && view_head_count(v) > 1) /* clear of the heads' strip, as render_frame lays it out */
        main.w -= imax(120, imin(rc->width / 5, 460)) + f->small;
    if (scale_step) {
        int w = imin(main.w / 2, f->small * 30);
        draw_scale_slider(rc, v, f, (SDL_Rect){main.x + main.w - w, main.y, w, lh * 2 + lh / 2 + 4});
    }
    if (!v->edit_mode) return;
    const Theme *th = render_theme(v->theme);
    /* the cursor */
    int st = cursor_step(v);
    SDL_Rect cell;
    char name[64], line[256];
    snprintf(name, sizeof name, "%s[%d][%d]", v->cur_mat == LESSON_MAT_COUNT ? "mask" : lesson_matrix_name(v->cur_mat),
             v->cur_row, v->cur_col);
    if (v->cur_mat == LESSON_MAT_COUNT)
        snprintf(line, sizeof line, "%s  %s = %d", view_string(VS_EDIT_MODE, v->lang), name,
                 mask_entry(v->lesson, v->cur_row, v->cur_col));
    else if (st >= 0 && v->cur_row < t->steps[st].rows && v->cur_col < t->steps[st].cols)
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
            int tw = render_text_width(rc, typed, f->body) + 8, tth = text_h(rc, f->body) + 4;
            SDL_Rect tb = {cell.x + cell.w / 2 - tw / 2, cell.y + cell.h + 4, tw, tth};
            render_fill(rc, tb, th->accent);
            render_text(rc, typed, f->body, th->accent_text, tb.x + 4, tb.y + 2, 0);
        }
    }
    /* the mode's line: where the cursor is, its value, the keys */
    const char *hint = view_string(v->cur_mat == LESSON_MAT_COUNT ? VS_EDIT_HINT_MASK : VS_EDIT_HINT, v->lang);
    char full[512];
    if (v->cur_mat == LESSON_MAT_X || v->cur_mat == LESSON_MAT_Y)
        snprintf(full, sizeof full, "%s  ·  %s  ·  %s", line, hint, view_string(VS_EDIT_HINT_TOKENS, v->lang));
    else
        snprintf(full, sizeof full, "%s  ·  %s", line, hint);
    if (render_text_width(rc, full, f->small) + 16 > main.w) /* the token keys go first */
        snprintf(full, sizeof full, "%s  ·  %s", line, hint);
    int fsize = f->small;
    while (render_text_width(rc, full, fsize) + 16 > main.w && fsize > 9) fsize--;
    int w = imin(main.w, render_text_width(rc, full, fsize) + 16);
    SDL_Rect bar = {main.x, main.y + main.h - lh - 6, w, lh + 6};
    render_fill(rc, bar, th->accent);
    render_text(rc, full, fsize, th->accent_text, bar.x + 8, bar.y + 3 + (lh - text_h(rc, fsize)) / 2, 0);
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
    const char *title = lesson_text(&v->lesson->title, v->lang);
    char edited_title[600];
    if (title && (v->edited || v->lesson->edited_from)) {
        /* a title may state a fact about the numbers as written */
        snprintf(edited_title, sizeof edited_title, "%s%s", title, view_string(VS_TITLE_EDITED, v->lang));
        title = edited_title;
    }
    char status[256];
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
    snprintf(status, sizeof status, "%s %d/%d  ·  %s%s%s ×%g  ·  %s", view_string(VS_STEP, v->lang), v->step + 1,
             t->n_steps, headpart, modepart,
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
    while (title && render_text_width(rc, title, tsize) > stw && tsize > 10) tsize = tsize * 9 / 10;
    render_text(rc, title ? title : "", tsize, th->text, m, m / 2, 0);
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

    draw_editing(rc, v, &f, main);
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
        int di = (m->transposed ? col : row) - m->r0, dj = (m->transposed ? row : col) - m->c0;
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
