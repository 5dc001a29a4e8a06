/* render_internal.h: what the files of src/render share. Not a public API. */
#ifndef RENDER_INTERNAL_H
#define RENDER_INTERNAL_H

#include <stdint.h>

#include <SDL.h>
#include "heatmap.h"
#include "render.h"
#include "render_text.h"

extern const unsigned char render_viridis[256][3]; /* (256, rgb) */
extern const unsigned char render_rdbu[256][3];    /* (256, rgb), index 127.5 is 0 */

typedef struct Theme {
    SDL_Color bg, panel, text, dim, accent, accent_text, hl_bg, grid, blocked, hatch, sel, tl_done, tl_future, error;
    SDL_Color head[8]; /* the heads' block colours (split, concat) */
} Theme;
const Theme *render_theme(ViewTheme t);

typedef struct HitMat {
    SDL_Rect rect; /* the cells' area on screen */
    const AttnTrace *trace;
    int step;
    int rows, cols;     /* as displayed */
    int transposed;     /* displayed rows are the step's columns */
    const int *row_map; /* (rows before transposition) the step row each stands for, or NULL: itself */
    int map_rows;       /* rows of row_map */
    int r0, c0, vr, vc; /* the displayed window of cells (zoom) */
    int zoomable;
} HitMat;

typedef struct HitBox {
    SDL_Rect rect;
    RenderHit hit;
} HitBox;

/* A label drawn shortened with "…": where, and its whole text (borrowed
 * from the lesson or the view, which outlive the frame). */
typedef struct ShortLabel {
    SDL_Rect rect;
    const char *full;
} ShortLabel;

#define RENDER_MAX_SHORTS   256
#define RENDER_NUM_WIDTHS   64 /* entries of a WidthCache (num_widths, label_widths) */
#define RENDER_MAX_HITMATS  96
#define RENDER_MAX_HITBOXES 1024
#define RENDER_MAT_CACHE    64
/* The cached matrices' textures are trimmed beyond this many bytes, sparing
 * those the frame being drawn uses: a texture the size of a 1920×1080
 * window is 8 MB. */
#define RENDER_MAT_BUDGET ((size_t)32 << 20)

typedef struct MatEntry {
    uint64_t key;       /* 0: empty */
    uint64_t base;      /* what it shows but for the animation's frame */
    HeatmapFrame frame; /* the animation's frame it shows */
    SDL_Texture *tex;
    int w, h;
    unsigned last_frame;
} MatEntry;

/* ---- the frame's layout, as boxes ----
 *
 * With layout recording on, every text, number and matrix drawn is also
 * written down as a box: where it is, at what font size, and the box it must
 * stay inside. The layout test reads them back to check sizes, overlaps and
 * proportions without looking at pixels. */
typedef enum LayoutKind {
    LAYOUT_TEXT,   /* a label, caption or line of text */
    LAYOUT_NUMBER, /* a number inside a heatmap cell */
    LAYOUT_MATRIX, /* a heatmap's cells */
    LAYOUT_AREA    /* a step panel: the room its matrices may fill */
} LayoutKind;

typedef struct LayoutBox {
    SDL_Rect rect;
    SDL_Rect within; /* the box it must stay inside */
    LayoutKind kind;
    int size;       /* text and numbers: font size in pixels */
    int rows, cols; /* matrix: the data's shape (full, not zoomed) */
    int vis_rows;   /* matrix: the rows and columns of cells drawn in the box (the */
    int vis_cols;   /* window of a zoom, one kept end of an elided matrix) */
    int token_rows; /* matrix: its rows (columns) are tokens */
    int token_cols;
    const char *what; /* static: what the box is, for messages */
    char text[96];    /* the start of the text, for messages */
} LayoutBox;

/* Starts (1) or stops (0) recording the boxes of the frames drawn; each
 * frame replaces the last one's boxes. */
void render_layout_record(RenderCtx *rc, int on);
/* The boxes of the last frame drawn with recording on. */
const LayoutBox *render_layout_boxes(const RenderCtx *rc, int *n);

/* A buffer worked out from one step of one view (render.c's step_blocked,
 * softmax_exps, softmax_rowsums), kept while that step is shown. */
typedef struct StepScratch {
    unsigned long view_id;
    const AttnStep *step;
    const float *data; /* with the step, so a new trace at the same address misses */
    void *buf;
    size_t cap; /* bytes */
    unsigned last_frame;
} StepScratch;

/* Which cell each block of a settled, max-pooled matrix shows (render.c's
 * pick_map), by what decides it: the step, its values and states, the size
 * and window drawn, the weight scale; not the colours. */
#define RENDER_PICK_MAPS 8
typedef struct PickMap {
    uint64_t key; /* 0: empty */
    int nr, nc;
    HeatmapPick *pick; /* (nr, nc) displayed row and column of the cell each block shows; (cap) */
    size_t cap;
    unsigned last_frame;
} PickMap;

#define RENDER_RANGE_CACHE 256 /* a power of two */
#define RENDER_STRIP_CACHE 8

/* Choices made once for a whole lesson, for one size, text scale,
 * language and theme (render.c): whether it shows the heads' strip
 * (strip_for_lesson), whether compare mode stands its pipelines side by
 * side (compare_side_by_side). The last RENDER_STRIP_CACHE asked for, each
 * under its key (0: empty). */
typedef struct RenderChoices {
    struct {
        uint64_t key;
        int value;
    } e[RENDER_STRIP_CACHE];
    unsigned next;
} RenderChoices;

/* Widths measured once and asked for again and again, by key: a ring of
 * RENDER_NUM_WIDTHS, the oldest replaced first. */
typedef struct WidthCache {
    struct {
        uint64_t key;
        int width;
    } e[RENDER_NUM_WIDTHS];
    int next;
} WidthCache;

/* max |value| of a step's unblocked cells, and whether every finite value
 * is a whole number (or a number of tenths), kept: a 4096×4096 weight takes
 * 16M reads to scan, too many for every frame */
typedef struct RangeEntry {
    unsigned long view_id;
    const AttnStep *step;
    const float *data; /* with the step, so a new trace at the same address misses */
    float range;
    int integers;
    int tenths; /* else every one a number of tenths under 100 */
} RangeEntry;

struct RenderCtx {
    SDL_Renderer *sdl;
    RenderText text; /* fonts, measuring, the texts' textures (render_text.h) */
    RangeEntry ranges[RENDER_RANGE_CACHE];
    MatEntry mats[RENDER_MAT_CACHE];
    size_t mat_bytes; /* the pixels of the cached matrices' textures, 4 bytes each */
    unsigned frame;
    uint32_t *pix; /* (pix_cap) scratch pixels for matrix textures */
    size_t pix_cap;
    /* scratch for a texture's downsampling (heatmap.h): the plans of its
     * rows and columns and a pick per column span, (span_cap) each; one row
     * of cells' keys (heatmap_key), (cell_cap) */
    HeatmapSpan *row_spans, *col_spans;
    HeatmapPick *picks;
    size_t span_cap;
    uint64_t *cell_key;
    size_t cell_cap;
    /* a panel's animated result, reused from frame to frame: (anim_cap) each */
    float *anim_vals;
    unsigned char *anim_state;
    size_t anim_cap;
    StepScratch blocked_of[2], exps_of, rowsums_of;
    PickMap pick_maps[RENDER_PICK_MAPS];
    float *row_max; /* (row_max_cap) scratch: each row's largest weight, for the row scale */
    size_t row_max_cap;
    /* additive attention's [x_i ; y_j]: (2, n_q·n_k) the row of X, then of Y,
     * that pair p stands for (p / n_k, p % n_k); kept for the hit tests */
    int *pair_map;
    int pair_nq, pair_nk;

    int n_hitmats;
    HitMat hitmats[RENDER_MAX_HITMATS];
    int n_hitboxes;
    HitBox hitboxes[RENDER_MAX_HITBOXES];
    unsigned long hits_view; /* the View.id of the frame the hit boxes, hit matrices and shortened labels are of */
    int n_shorts;
    ShortLabel shorts[RENDER_MAX_SHORTS];
    int width, height; /* of the last frame */
    char title[1024];  /* the frame's title (view_title), which a hovered shortened title points into */

    int record;       /* write the boxes of each frame down */
    LayoutBox *boxes; /* (cap_boxes) the last frame's boxes */
    int n_boxes, cap_boxes;
    SDL_Rect within; /* where the texts drawn now belong */
    const char *within_what;
    RenderChoices strip, side;
    /* the widest number of a matrix at a size, which laying a panel out asks
     * for again and again: keyed on the view (its id changes with the
     * trace's numbers), the step's matrix, weights or not, and the size */
    WidthCache num_widths;
    /* the widest of a list of labels at a size, asked for at every
     * arrangement tried: keyed on the labels' text and the size */
    WidthCache label_widths;
    char **index_label; /* (n_index) "1", "2", …: the inputs' feature columns */
    int n_index;
};

#endif
