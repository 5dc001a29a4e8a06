/* render.h: draws one complete frame of a View onto an SDL_Renderer.
 *
 * The frame is a pure function of the View and the size: the same View and
 * size give the same pixels on a window's renderer and on a software renderer
 * over a surface, which is how `attnviz export` writes PNGs without a display.
 * Render handles no events and writes no files; it reads fonts.
 *
 * Usage (headless, as the export and the tests do it):
 *
 *     SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, 1280, 720, 32, SDL_PIXELFORMAT_ARGB8888);
 *     SDL_Renderer *r = SDL_CreateSoftwareRenderer(s);
 *     char err[256];
 *     RenderCtx *rc = render_create(r, NULL, err, sizeof err);
 *     if (!rc) { fprintf(stderr, "%s\n", err); ... }
 *     render_frame(rc, &view, 1280, 720);   // then read s->pixels
 *     render_destroy(rc);
 *
 * What a frame shows: a title bar; the formula bar with the part the step
 * computes highlighted; the step's operands and result as heatmaps with token
 * labels, a shape label under each (`Q₁ 3×2`), numbers in cells large enough
 * to read and a colour legend beside each; in multi-head mode the attention
 * weights of every head as small multiples; the narration; and a timeline of
 * all steps grouped by phase. Compare mode draws the single-head step and the
 * multi-head step side by side. The help overlay, the hovered cell's
 * explanation and the notice are drawn over that.
 *
 * Colours: weights (softmax steps) use viridis in the view's weight scale:
 * [0, 1] (the default), each row divided by its largest weight, or log10
 * from 1e-4 to 1; the legend names the scale and the numbers are always the
 * true weights. Every other matrix uses a diverging map (RdBu) centred on 0
 * with the range ±max|value| of the matrix (blocked cells left out), fixed
 * for the whole animation of the step; the scaled scores keep the scores'
 * range, so the division shows as paler colours. Blocked scores are grey with
 * a hatch and labelled with the fill (−∞, −1e9); blocked weights keep the
 * hatch and show their true weight: 0 under −∞, and under a finite fill what
 * softmax gives (a row that sees nothing is uniform).
 *
 * Notation: in column notation (View.notation) every matrix is drawn
 * transposed, a product's right-hand operand moves to the front (W_Q·X,
 * V·weights), and a softmax's sums stand under its columns. Hit tests and
 * render_cell_rect keep speaking in the step's own (row, column).
 *
 * Fonts: a chain of fonts, chosen per codepoint (TTF_GlyphIsProvided32): by
 * default DejaVu Sans and Noto Sans CJK SC found through fontconfig, then the
 * bundled fonts in assets/fonts/ (DejaVu Sans and a subset of Noto Sans CJK
 * SC), so text renders with no system fonts at all.
 *
 * Ownership: the SDL_Renderer is borrowed and must outlive the RenderCtx;
 * textures and fonts are owned by the RenderCtx. render_destroy(NULL) is fine.
 */
#ifndef RENDER_H
#define RENDER_H

#include <stddef.h>
#include <stdint.h>

#include <SDL.h>

#include "view.h"
#include "view_input.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RENDER_MAX_FONTS 8

typedef struct RenderOptions {
    /* Font files tried in this order before anything else; NULL-terminated
     * (unused entries NULL). */
    const char *font_paths[RENDER_MAX_FONTS];
    /* 1: no fontconfig lookup, only font_paths and the bundled fonts, so that
     * frames are identical on every machine (the golden-image tests). */
    int no_system_fonts;
    /* Where assets/ is; NULL: $ATTNVIZ_ASSETS, ./assets, the source tree's. */
    const char *assets_dir;
} RenderOptions;

typedef struct RenderCtx RenderCtx;

/* Starts SDL_ttf for as long as the context lives (SDL_ttf counts its
 * starts, so a caller may have started it too). Returns NULL with a message
 * in err when no font of the chain can be opened. */
RenderCtx *render_create(SDL_Renderer *sdl, const RenderOptions *opt, char *err, size_t errlen);
void render_destroy(RenderCtx *rc);

/* Moves the context to another renderer (the window's after a resize):
 * drops every cached texture, keeps the fonts. */
void render_set_renderer(RenderCtx *rc, SDL_Renderer *sdl);

/* Draws the whole frame (width × height pixels of the renderer's output).
 * Does not present. 0, or -1 with SDL_GetError() set. */
int render_frame(RenderCtx *rc, const View *view, int width, int height);

/* The smallest text a frame of that size draws, in pixels: 1/44 of the
 * height (of ¾ of the width on screens wider than 4:3), at least 12. On a
 * projected image 2.5 m wide, 17 px at 1024×768 is a DejaVu x-height of
 * about 23 mm: about 9 arcminutes seen from 9 m, the back row of a classroom. */
int render_min_text(int width, int height);

/* ---- what the mouse is over, in the last frame drawn ---- */

/* A hit is the view's ViewTarget (view_input.h), which the window hands
 * to view_pointer_press and friends as it is. */
typedef ViewTargetKind RenderHitKind;
typedef ViewTarget RenderHit;
#define RENDER_HIT_NONE     VIEW_TARGET_NONE
#define RENDER_HIT_CELL     VIEW_TARGET_CELL
#define RENDER_HIT_TOKEN    VIEW_TARGET_TOKEN
#define RENDER_HIT_TIMELINE VIEW_TARGET_TIMELINE
#define RENDER_HIT_HEAD     VIEW_TARGET_HEAD

/* Fills hit for pixel (x, y) of the last frame; returns hit->kind. The
 * last frame's boxes point into the traces and labels of the view it drew:
 * they answer only for that view with those traces (the same View.id), and
 * for any other (the view recomputed since, or replaced) the answer is
 * RENDER_HIT_NONE, so that no hit outlives what it points into. */
RenderHitKind render_hit_test(const RenderCtx *rc, const View *v, int x, int y, RenderHit *hit);
/* The rectangle cell (row, col) of step `step` of `trace` occupied in the
 * last frame (the first matrix showing that step). 0, or -1 when not drawn. */
int render_cell_rect(const RenderCtx *rc, const AttnTrace *trace, int step, int row, int col, SDL_Rect *out);

/* ---- text, for what is drawn beside a frame (the handout sheet's captions) ---- */

/* Draws one line of text with the font chain, top-left at (x, y); returns its
 * width. align: 0 left of x, 1 centred on x, 2 right of x. */
int render_text(RenderCtx *rc, const char *s, int size, SDL_Color col, int x, int y, int align);
int render_text_width(RenderCtx *rc, const char *s, int size);
/* One run of a line of text: bytes [start, start + len) of it, drawn with
 * font `font` of the chain (render_font_path) at x pixels from the line's
 * start, w pixels wide; ascent and descent are that font's at the size. */
typedef struct RenderTextRun {
    size_t start, len;
    int font;
    int x, w;
    int ascent, descent;
} RenderTextRun;
/* Splits s into the runs render_text draws it as (each a stretch of
 * codepoints the same font of the chain provides, up to max runs): the
 * runs share one baseline, *ascent pixels below the line's top. Returns the
 * number of runs. For drawing the same text elsewhere (the PDF handout). */
int render_text_runs(RenderCtx *rc, const char *s, int size, RenderTextRun *runs, int max, int *ascent);
/* The distance from one line of text to the next at a size. */
int render_line_height(RenderCtx *rc, int size);
/* Wraps s into lines of at most `width` pixels at a size: fills starts[] and
 * lens[] (byte ranges of s), returns the line count (≤ max). Lines break at
 * spaces and around CJK characters, never inside an English word, and no line
 * starts with closing punctuation or ends with an opening bracket. */
int render_wrap(RenderCtx *rc, const char *s, int size, int width, size_t *starts, size_t *lens, int max);

/* ---- colours and fonts, for tests ---- */

/* viridis at t in [0, 1] (clamped), as drawn. */
SDL_Color render_color_seq(float t);
/* The diverging map at t in [-1, 1] (clamped): 0 is the centre. */
SDL_Color render_color_div(float t);
/* The colour a value gets in a matrix of that kind and range (the rule above). */
SDL_Color render_value_color(float value, int weights, float range);
/* The colour weight w gets in a weight scale (row_max: the largest weight of
 * its row, for VIEW_WEIGHTS_ROW): viridis at view_weight_position. */
SDL_Color render_weight_color(ViewWeightScale scale, float w, float row_max);

int render_font_count(const RenderCtx *rc);
const char *render_font_path(const RenderCtx *rc, int i);
/* Font i's file into file and its face index in that file (0 unless the
 * file is a collection), or -1 when there is no font i or its path does
 * not fit in len bytes. */
long render_font_file(const RenderCtx *rc, int i, char *file, size_t len);
/* The index of the first font of the chain that has a glyph for cp, or -1. */
int render_font_for(const RenderCtx *rc, uint32_t cp);
/* Decodes one UTF-8 codepoint at *s and advances *s (invalid bytes give U+FFFD). */
uint32_t render_utf8_next(const char **s);

#ifdef __cplusplus
}
#endif
#endif
