/* render_text.h: the text layer of render: a chain of fonts, chosen per
 * codepoint, that measures, wraps and draws lines of text, with every line
 * drawn kept as a texture. Render's own; the public entry points are
 * render.h's render_text*, which take the RenderCtx.
 *
 * Usage (render.c does this once per context, then once per frame):
 *
 *     RenderText tx;
 *     if (text_open(&tx, sdl, &opt, err, sizeof err) != 0) return NULL;
 *     text_begin_frame(&tx);                       // drops texts unused for two frames
 *     int w = text_width(&tx, "Q·Kᵀ", 24);         // measuring opens no texture
 *     SDL_Rect drawn;
 *     text_draw(&tx, "Q·Kᵀ", 24, ink, x, y, 0, &drawn);
 *     text_close(&tx);
 *
 * Fonts: by default DejaVu Sans and Noto Sans CJK SC found through
 * fontconfig, then the bundled fonts in assets/fonts/, so text renders with
 * no system fonts at all. The text context knows nothing of frames' layout:
 * what it draws it returns as a rectangle, for its caller to record.
 *
 * Ownership: the SDL_Renderer is borrowed and must outlive the context; the
 * fonts, their files mapped into memory and the textures are owned. */
#ifndef RENDER_TEXT_H
#define RENDER_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "render.h" /* RenderOptions, RenderTextRun, RENDER_MAX_FONTS */

#define RENDER_SIZE_SLOTS   24
#define RENDER_METRIC_SIZES 512  /* text sizes whose metrics are kept (SizeMetrics) */
#define RENDER_TEXT_CACHE   4096 /* a power of two */
/* The cached texts' textures are trimmed beyond this many bytes, as beyond
 * 3/4 of the entries: a line of narration across a 1920-pixel frame is
 * 200 KB, and every step has its own. */
#define RENDER_TEXT_BUDGET ((size_t)8 << 20)

typedef struct TextEntry {
    uint64_t key; /* 0: empty */
    SDL_Texture *tex;
    int w, h, ascent;
    unsigned last_frame;
} TextEntry;

typedef struct FontSlot {
    int size; /* 0: free */
    TTF_Font *font[RENDER_MAX_FONTS];
    unsigned last_frame;
} FontSlot;

/* What the layout asks of a text size, again and again: the line height
 * (text_line_height) and the digits' ink (text_number_height). Kept per
 * size for sizes under RENDER_METRIC_SIZES, so that asking does not open
 * the fonts at that size again once their slot has gone to another size
 * (a layout tries many sizes). line_h 0: not yet measured. */
typedef struct SizeMetrics {
    short line_h, ink_above, ink_below;
} SizeMetrics;

typedef struct RenderText {
    SDL_Renderer *sdl; /* borrowed */
    unsigned frame;    /* counts text_begin_frame: the caches' clock */
    int n_fonts;
    char *font_path[RENDER_MAX_FONTS];
    TTF_Font *probe[RENDER_MAX_FONTS]; /* each font at one size, for glyph coverage */
    /* each font file mapped into memory (NULL: opened by path), which the
     * fonts at every size read their glyphs from */
    const void *font_map[RENDER_MAX_FONTS];
    size_t font_map_len[RENDER_MAX_FONTS];
    FontSlot slots[RENDER_SIZE_SLOTS];
    SizeMetrics metrics[RENDER_METRIC_SIZES];
    TextEntry text[RENDER_TEXT_CACHE];
    int n_text;
    size_t text_bytes;      /* the pixels of the cached texts' textures, 4 bytes each */
    size_t text_trim_bytes; /* text_begin_frame trims when text_bytes passes this (0: RENDER_TEXT_BUDGET) */
} RenderText;

/* Starts SDL_ttf (it counts its starts) and opens the chain: opt's fonts,
 * the system's (unless opt->no_system_fonts), the bundled ones. 0, or -1
 * with a message in err when no font of the chain can be opened. */
int text_open(RenderText *tx, SDL_Renderer *sdl, const RenderOptions *opt, char *err, size_t errlen);
/* Closes every font and texture and stops SDL_ttf once. */
void text_close(RenderText *tx);
/* Moves the context to another renderer: drops every cached texture. */
void text_set_renderer(RenderText *tx, SDL_Renderer *sdl);
/* Between frames: drops the cached texts the last two frames did not use,
 * once the cache holds 3/4 of its entries or more bytes than its budget. */
void text_begin_frame(RenderText *tx);

/* ---- measuring ---- */
/* The distance from one line of text to the next at a size. */
int text_line_height(RenderText *tx, int size);
/* The height of the digits' ink at size (above the baseline and the
 * overshoot below it): what a cell number needs, less than a line. */
int text_number_height(RenderText *tx, int size);
/* Width of s[0, nbytes) by glyph advances (fast; for wrapping). */
int text_measure(RenderText *tx, const char *s, size_t nbytes, int size);
int text_width(RenderText *tx, const char *s, int size);
/* s shortened with "…" at a character boundary so that it is at most maxw
 * pixels wide at size, into buf; s itself when it fits. NULL when not even
 * "…" fits. */
const char *text_fit(RenderText *tx, const char *s, int size, int maxw, char *buf, size_t len);
/* render_wrap's rule (render_break_lines) with the chain's advances. */
int text_wrap(RenderText *tx, const char *s, int size, int width, size_t *starts, size_t *lens, int max);
/* render_text_runs, on this context. */
int text_runs(RenderText *tx, const char *s, int size, RenderTextRun *runs, int max, int *ascent);
/* The index of the first font of the chain that has a glyph for cp, or -1. */
int text_font_for(const RenderText *tx, uint32_t cp);
/* Font i's file into file and its face index (render_font_file). */
long text_font_file(const RenderText *tx, int i, char *file, size_t len);

/* ---- drawing ---- */
/* One line of text, top-left at (x, y) (align 0), centred on x (1) or
 * ending at x (2); returns its width, or -1 when nothing is drawn (""; a
 * texture that cannot be made). *drawn (may be NULL): the rectangle drawn,
 * no taller than a line. */
int text_draw(RenderText *tx, const char *s, int size, SDL_Color col, int x, int y, int align, SDL_Rect *drawn);
/* A short string (a number) from cached one-character textures, its digits'
 * ink centred on (cx, cy); returns its width, or -1 (nothing drawn) when
 * wider than maxw. *ink (may be NULL): the digits' ink drawn. */
int text_glyphs(RenderText *tx, const char *s, int size, SDL_Color col, int cx, int cy, int maxw, SDL_Rect *ink);

/* ---- the line-breaking rule, on any measure of width ---- */

/* 1 for a codepoint of Chinese, Japanese or Korean writing: Han, kana,
 * Hangul, and the CJK and full-width punctuation. Such text is drawn upright
 * in a vertical label, and a line may break before or after any of it. */
int render_is_cjk(uint32_t cp);
/* The width of one codepoint, in whatever unit the width of the line is. */
typedef int (*RenderAdvanceFn)(void *user, uint32_t cp);
/* The line-breaking rule, for every text that wraps. Splits s into lines of
 * at most `width` (advances summed through `advance`) and fills starts[] and
 * lens[] (byte ranges of s, spaces at the break left out); returns the line
 * count (≤ max). A newline always breaks. Otherwise a line breaks at a space
 * or before or after a CJK character (but not at a middle dot: s1·我), never
 * inside an English word or number, and never so that a line starts with closing punctuation
 * (，。、：；！？」』）》】… , . : ; ! ? ) ] ' %) or ends with an opening bracket
 * (「『（《【 ( [): the character before such a break moves to the next line
 * with it. A short quotation (at most 8 characters between 「 and 」, a
 * quoted token such as 「跑步」) is not broken inside. Only a word wider than
 * the whole line is broken inside, at a codepoint boundary, with the same
 * punctuation rule where the word allows. */
int render_break_lines(const char *s, int width, RenderAdvanceFn advance, void *user, size_t *starts, size_t *lens,
                       int max);

#endif
