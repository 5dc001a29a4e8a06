/* render_text.c: the font chain and cached text textures.
 *
 * Text is split into runs of codepoints that the same font of the chain
 * provides (the first font that has the glyph), each run rendered with
 * TTF_RenderUTF8_Blended and the runs joined on one baseline into a texture.
 * Textures are cached by (text, size, colour) so that a frame that repeats
 * the last one renders no glyphs at all. */
#ifdef RENDER_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#define RENDER_HAVE_MMAP 1
#endif

#include "render_text.h"

static int file_exists(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int dir_exists(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "path#index" → path and index, when path alone is not a file. -1 (and
 * file empty) when the path does not fit in len bytes: never a cut path,
 * which could name another file. */
static long split_spec(const char *spec, char *file, size_t len)
{
    const char *hash = strrchr(spec, '#');
    size_t n = hash && !file_exists(spec) ? (size_t)(hash - spec) : strlen(spec);
    if (n >= len) {
        if (len) file[0] = '\0';
        return -1;
    }
    memcpy(file, spec, n);
    file[n] = '\0';
    return n < strlen(spec) ? atol(hash + 1) : 0;
}

/* Opens a font "path" or "path#index" (a face of a collection) at a size;
 * NULL when the file is not a regular file or SDL_ttf cannot read it. */
static TTF_Font *open_sized(const char *spec, int size)
{
    char file[PATH_MAX];
    long index = split_spec(spec, file, sizeof file);
    return index >= 0 && file_exists(file) ? TTF_OpenFontIndex(file, size, index) : NULL;
}

static void text_clear(RenderText *tx);

/* The font fontconfig matches for `pattern` (a family, optionally with a
 * language), as "file" or "file#index" for a face of a collection, only when
 * the matched family contains `family_has` (fontconfig always returns *some*
 * font). malloc'd or NULL. */
static char *fc_find(const char *pattern, const char *lang, const char *family_has)
{
#ifndef RENDER_HAVE_FONTCONFIG /* a build without fontconfig (the browser's): the bundled fonts alone */
    (void)pattern, (void)lang, (void)family_has;
    return NULL;
#else
    if (!FcInit()) return NULL;
    FcPattern *pat = FcNameParse((const FcChar8 *)pattern);
    if (!pat) return NULL;
    if (lang) FcPatternAddString(pat, FC_LANG, (const FcChar8 *)lang);
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *m = FcFontMatch(NULL, pat, &res);
    char *out = NULL;
    if (m) {
        FcChar8 *file = NULL, *fam = NULL;
        int index = 0;
        if (FcPatternGetString(m, FC_FILE, 0, &file) == FcResultMatch &&
            FcPatternGetString(m, FC_FAMILY, 0, &fam) == FcResultMatch && strstr((const char *)fam, family_has)) {
            if (FcPatternGetInteger(m, FC_INDEX, 0, &index) != FcResultMatch) index = 0;
            size_t n = strlen((const char *)file) + 16;
            out = malloc(n);
            if (out && index == 0)
                snprintf(out, n, "%s", (const char *)file);
            else if (out)
                snprintf(out, n, "%s#%d", (const char *)file, index);
        }
        FcPatternDestroy(m);
    }
    FcPatternDestroy(pat);
    return out;
#endif
}

/* Appends the font "path" or "path#index" to the chain, unless it is there
 * already or cannot be opened. */
static void add_font(RenderText *tx, const char *spec)
{
    if (!spec || tx->n_fonts >= RENDER_MAX_FONTS) return;
    for (int i = 0; i < tx->n_fonts; i++)
        if (strcmp(tx->font_path[i], spec) == 0) return;
    char *copy = strdup(spec);
    TTF_Font *f = copy ? open_sized(spec, 16) : NULL;
    if (!f) {
        free(copy);
        return;
    }
    tx->probe[tx->n_fonts] = f;
    tx->font_path[tx->n_fonts] = copy;
    tx->n_fonts++;
}

/* Maps each font file of the chain into memory. A font opened by path reads
 * its glyphs through stdio (a seek and a read per glyph outline: hundreds of
 * system calls for the first frame of a step with new text); from memory it
 * reads nothing. Where mapping fails the font stays opened by path. */
static void map_fonts(RenderText *tx)
{
#ifdef RENDER_HAVE_MMAP
    for (int i = 0; i < tx->n_fonts; i++) {
        char file[PATH_MAX];
        int fd = split_spec(tx->font_path[i], file, sizeof file) < 0 ? -1 : open(file, O_RDONLY);
        if (fd < 0) continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size <= INT_MAX) { /* SDL_RWFromConstMem takes an int */
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m != MAP_FAILED) {
                tx->font_map[i] = m;
                tx->font_map_len[i] = (size_t)st.st_size;
            }
        }
        close(fd);
    }
#else
    (void)tx;
#endif
}

static void unmap_fonts(RenderText *tx)
{
    for (int i = 0; i < RENDER_MAX_FONTS; i++) {
#ifdef RENDER_HAVE_MMAP
        if (tx->font_map[i]) munmap((void *)tx->font_map[i], tx->font_map_len[i]);
#endif
        tx->font_map[i] = NULL;
        tx->font_map_len[i] = 0;
    }
}

static const char *assets_dir(const RenderOptions *opt)
{
    if (opt && opt->assets_dir) return opt->assets_dir;
    const char *env = getenv("ATTNVIZ_ASSETS");
    if (env && *env) return env;
    if (dir_exists("assets/fonts")) return "assets";
    return ATTNVIZ_SOURCE_DIR "/assets";
}

int text_open(RenderText *tx, SDL_Renderer *sdl, const RenderOptions *opt, char *err, size_t errlen)
{
    memset(tx, 0, sizeof *tx);
    tx->sdl = sdl;
    tx->frame = 1;
    /* SDL_ttf counts its starts: each context starts it, and text_close stops it */
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "starting SDL_ttf: %s", TTF_GetError());
        return -1;
    }
    if (opt)
        for (int i = 0; i < RENDER_MAX_FONTS && opt->font_paths[i]; i++) add_font(tx, opt->font_paths[i]);
    if (!opt || !opt->no_system_fonts) {
        /* DejaVu Sans for Latin and the math symbols (ᵀ, subscripts, √), Noto
         * Sans CJK SC for Han: neither covers both. The .ttc of Noto CJK holds
         * JP, KR, SC, ...: fontconfig names the SC face's index. */
        static const char *const system_fonts[][3] = {{"DejaVu Sans", NULL, "DejaVu Sans"},
                                                      {"Noto Sans CJK SC", NULL, "CJK"},
                                                      {"WenQuanYi Micro Hei", "zh-cn", "WenQuanYi Micro Hei"}};
        for (size_t i = 0; i < sizeof system_fonts / sizeof system_fonts[0]; i++) {
            char *spec = fc_find(system_fonts[i][0], system_fonts[i][1], system_fonts[i][2]);
            add_font(tx, spec);
            free(spec);
        }
    }
    const char *dir = assets_dir(opt);
    static const char *const shipped[] = {"fonts/DejaVuSans.ttf", "fonts/NotoSansCJKsc-Subset.otf"};
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        size_t n = strlen(dir) + strlen(shipped[i]) + 2;
        char *path = malloc(n);
        if (path) snprintf(path, n, "%s/%s", dir, shipped[i]);
        add_font(tx, path);
        free(path);
    }
    map_fonts(tx);
    if (tx->n_fonts == 0) {
        snprintf(err, errlen,
                 "no usable font: fontconfig found neither DejaVu Sans nor Noto Sans CJK, and %s/fonts/ "
                 "has no DejaVuSans.ttf (set ATTNVIZ_ASSETS to the assets folder)",
                 dir);
        TTF_Quit();
        return -1;
    }
    return 0;
}

void text_close(RenderText *tx)
{
    for (int s = 0; s < RENDER_SIZE_SLOTS; s++) {
        for (int i = 0; i < tx->n_fonts; i++)
            if (tx->slots[s].font[i]) TTF_CloseFont(tx->slots[s].font[i]);
        memset(&tx->slots[s], 0, sizeof tx->slots[s]);
    }
    memset(tx->metrics, 0, sizeof tx->metrics);
    for (int i = 0; i < tx->n_fonts; i++) {
        if (tx->probe[i]) TTF_CloseFont(tx->probe[i]);
        free(tx->font_path[i]);
        tx->probe[i] = NULL;
        tx->font_path[i] = NULL;
    }
    tx->n_fonts = 0;
    unmap_fonts(tx); /* after every font that read from it is closed */
    text_clear(tx);
    TTF_Quit();
}

void text_set_renderer(RenderText *tx, SDL_Renderer *sdl)
{
    text_clear(tx);
    tx->sdl = sdl;
}

long text_font_file(const RenderText *tx, int i, char *file, size_t len)
{
    if (i < 0 || i >= tx->n_fonts) return -1;
    return split_spec(tx->font_path[i], file, len);
}

int text_font_for(const RenderText *tx, uint32_t cp)
{
    for (int i = 0; i < tx->n_fonts; i++)
        if (TTF_GlyphIsProvided32(tx->probe[i], cp)) return i;
    return -1;
}

uint32_t render_utf8_next(const char **sp)
{
    const unsigned char *s = (const unsigned char *)*sp;
    uint32_t c = s[0];
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) {
        *sp += 1;
        return 0xFFFD;
    }
    if (n > 0) c &= 0x3Fu >> n;
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *sp += i;
            return 0xFFFD;
        }
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    *sp += n + 1;
    return c;
}

/* The chain at a pixel size, opened on first use; slots are reused oldest first. */
static FontSlot *slot_for(RenderText *tx, int size)
{
    FontSlot *free_slot = NULL, *oldest = &tx->slots[0];
    for (int s = 0; s < RENDER_SIZE_SLOTS; s++) {
        FontSlot *fs = &tx->slots[s];
        if (fs->size == size) {
            fs->last_frame = tx->frame;
            return fs;
        }
        if (!fs->size && !free_slot) free_slot = fs;
        if (fs->last_frame < oldest->last_frame) oldest = fs;
    }
    FontSlot *fs = free_slot ? free_slot : oldest;
    for (int i = 0; i < RENDER_MAX_FONTS; i++) {
        if (fs->font[i]) TTF_CloseFont(fs->font[i]);
        fs->font[i] = NULL;
    }
    fs->size = size;
    fs->last_frame = tx->frame;
    for (int i = 0; i < tx->n_fonts; i++) {
        if (tx->font_map[i]) {
            char file[PATH_MAX];
            long index = split_spec(tx->font_path[i], file, sizeof file);
            SDL_RWops *rw = index < 0 ? NULL : SDL_RWFromConstMem(tx->font_map[i], (int)tx->font_map_len[i]);
            fs->font[i] = rw ? TTF_OpenFontIndexRW(rw, 1, size, index) : NULL;
        }
        if (!fs->font[i]) fs->font[i] = open_sized(tx->font_path[i], size);
    }
    return fs;
}

static int font_index_for(RenderText *tx, uint32_t cp)
{
    int i = text_font_for(tx, cp);
    return i < 0 ? 0 : i; /* no font has it: the first font's .notdef, visibly */
}

/* The line height and the digits' ink at a size, measured on the fonts. */
static SizeMetrics measure_size(RenderText *tx, int size)
{
    FontSlot *fs = slot_for(tx, size);
    int h = 0;
    for (int i = 0; i < tx->n_fonts; i++)
        if (fs->font[i] && TTF_FontHeight(fs->font[i]) > h) h = TTF_FontHeight(fs->font[i]);
    /* CJK fonts carry tall line gaps; the first font's height is the rhythm. */
    if (fs->font[0]) h = TTF_FontHeight(fs->font[0]) > h * 9 / 10 ? TTF_FontHeight(fs->font[0]) : h * 9 / 10;
    SizeMetrics m = {.line_h = (short)(h ? h : size)};
    int i = font_index_for(tx, '0'), minx, maxx, miny, maxy, adv;
    if (fs->font[i] && TTF_GlyphMetrics32(fs->font[i], '0', &minx, &maxx, &miny, &maxy, &adv) == 0 && maxy > 0) {
        m.ink_above = (short)maxy;
        m.ink_below = (short)(miny < 0 ? -miny : 0);
    } else {
        m.ink_above = (short)(size * 3 / 4 > 0 ? size * 3 / 4 : 1);
        m.ink_below = 0;
    }
    return m;
}

/* The metrics of a size: kept (SizeMetrics) under RENDER_METRIC_SIZES,
 * measured each time above (text that large is drawn rarely). */
static SizeMetrics size_metrics(RenderText *tx, int size)
{
    if (size <= 0 || size >= RENDER_METRIC_SIZES) return measure_size(tx, size);
    SizeMetrics *m = &tx->metrics[size];
    if (!m->line_h) *m = measure_size(tx, size);
    return *m;
}

int text_line_height(RenderText *tx, int size)
{
    return size_metrics(tx, size).line_h;
}

/* The advance of cp in the chain at one size (no kerning). */
typedef struct ChainAdvance {
    RenderText *tx;
    FontSlot *fs;
} ChainAdvance;

static int chain_advance(void *user, uint32_t cp)
{
    ChainAdvance *a = user;
    int fi = font_index_for(a->tx, cp), adv = 0;
    if (a->fs->font[fi] && TTF_GlyphMetrics32(a->fs->font[fi], cp, NULL, NULL, NULL, NULL, &adv) != 0) adv = 0;
    return adv;
}

int text_measure(RenderText *tx, const char *s, size_t nbytes, int size)
{
    ChainAdvance a = {tx, slot_for(tx, size)};
    const char *p = s, *end = s + nbytes;
    int w = 0;
    while (p < end && *p) w += chain_advance(&a, render_utf8_next(&p));
    return w;
}

int render_is_cjk(uint32_t cp)
{
    return (cp >= 0x2E80 && cp <= 0x9FFF)       /* radicals, CJK punctuation 、。「」, kana, Han, extension A */
           || (cp >= 0xAC00 && cp <= 0xD7AF)    /* Hangul syllables */
           || (cp >= 0xF900 && cp <= 0xFAFF)    /* compatibility ideographs */
           || (cp >= 0xFE30 && cp <= 0xFE4F)    /* compatibility forms */
           || (cp >= 0xFF00 && cp <= 0xFFEF)    /* full-width forms ，：（） */
           || (cp >= 0x20000 && cp <= 0x3FFFF); /* Han extensions B and later */
}

/* Punctuation a line must not start with, and brackets a line must not end
 * with (UTF-8). */
static const char CLOSING[] = ",.:;!?)]}%'、。，．：；！？）］｝」』》〉】〕〗…‥’”・";
static const char OPENING[] = "([{（［｛「『《〈【〔〖‘“";

/* Whether the set holds cp: a search for cp's UTF-8 bytes, which in valid
 * UTF-8 can only match a whole character. */
static int in_set(const char *set, uint32_t cp)
{
    char u[5] = {0};
    if (cp == 0 || cp > 0x10FFFF) return 0;
    if (cp < 0x80) {
        u[0] = (char)cp;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
    }
    return strstr(set, u) != NULL;
}

static int is_closing(uint32_t cp)
{
    return in_set(CLOSING, cp);
}

static int is_opening(uint32_t cp)
{
    return in_set(OPENING, cp);
}

/* A quoted token, 「喜欢」, stays on one line: where p is just past 「 or 『
 * and the matching 」 or 』 follows within QUOTE_KEPT characters, on the same
 * line, the closing mark; else NULL. A longer quotation breaks as text does. */
enum { QUOTE_KEPT = 8 };
static const char *short_quote_end(const char *p, uint32_t open)
{
    uint32_t close = open == 0x300C ? 0x300D : 0x300F;
    for (int i = 0; i <= QUOTE_KEPT && *p && *p != '\n'; i++) {
        const char *at = p;
        uint32_t cp = render_utf8_next(&p);
        if (cp == close) return at;
        if (cp == open) return NULL;
    }
    return NULL;
}

/* The start of the codepoint before p (p > s). */
static const char *utf8_prev(const char *s, const char *p)
{
    do p--;
    while (p > s && ((unsigned char)*p & 0xC0) == 0x80);
    return p;
}

/* Where a word too long for the line breaks: at `at` (the first character
 * that does not fit), moved back while that would start the next line with
 * closing punctuation or end this one with an opening bracket, but never
 * back to the line's first character. */
static const char *forced_break(const char *line, const char *first_end, const char *at)
{
    for (const char *b = at; b > first_end;) {
        const char *q = b, *before = utf8_prev(line, b);
        const char *r = before;
        uint32_t next = render_utf8_next(&q), prev = render_utf8_next(&r);
        if (!is_closing(next) && !is_opening(prev)) return b;
        b = before;
    }
    return at;
}

int render_break_lines(const char *s, int width, RenderAdvanceFn advance, void *user, size_t *starts, size_t *lens,
                       int max)
{
    int n = 0;
    const char *line = s;
    while (*line && n < max) {
        const char *p = line, *end = NULL, *next = NULL;
        const char *brk_end = NULL, *brk_next = NULL; /* the last allowed break on the line */
        const char *spaces = NULL;                    /* the first of the spaces before p */
        const char *first_end = NULL;                 /* after the line's first non-space character */
        const char *quote_end = NULL;                 /* the 」 of the short quote p is inside */
        uint32_t prev = 0;                            /* the last non-space character on the line */
        int w = 0;
        for (;;) {
            if (*p == '\0' || *p == '\n') {
                end = p;
                next = *p ? p + 1 : p;
                break;
            }
            const char *at = p;
            uint32_t cp = render_utf8_next(&p);
            if (cp == ' ') {
                /* spaces may hang past the width: a break drops them */
                if (!spaces) spaces = at;
                w += advance(user, cp);
                continue;
            }
            /* a middle dot joins what it stands between (Q·K, s1·我) */
            int cjk_edge = (render_is_cjk(prev) || render_is_cjk(cp)) && prev != 0xB7 && cp != 0xB7;
            int in_quote = quote_end && at < quote_end;
            if (prev && !in_quote && !is_closing(cp) && !is_opening(prev) && (spaces || cjk_edge)) {
                brk_end = spaces ? spaces : at;
                brk_next = at;
            }
            int adv = advance(user, cp);
            if (prev && w + adv > width) {
                if (brk_end) {
                    end = brk_end;
                    next = brk_next;
                } else {
                    end = next = forced_break(line, first_end, at);
                    while (*next == ' ') next++;
                }
                break;
            }
            w += adv;
            if (cp == 0x300C || cp == 0x300E) quote_end = short_quote_end(p, cp);
            prev = cp;
            spaces = NULL;
            if (!first_end) first_end = p;
        }
        while (end > line && end[-1] == ' ') end--;
        starts[n] = (size_t)(line - s);
        lens[n] = (size_t)(end - line);
        n++;
        line = next;
    }
    return n;
}

int text_wrap(RenderText *tx, const char *s, int size, int width, size_t *starts, size_t *lens, int max)
{
    ChainAdvance a = {tx, slot_for(tx, size)};
    return render_break_lines(s, width, chain_advance, &a, starts, lens, max);
}

static uint64_t text_key(const char *s, int size, SDL_Color c)
{
    uint64_t h = attn_fnv1a64_bytes(ATTN_FNV1A64_BASIS, s, strlen(s));
    h = attn_fnv1a64_bytes(h, &size, sizeof size);
    h = attn_fnv1a64_bytes(h, &c, sizeof c);
    return h ? h : 1;
}

int text_runs(RenderText *tx, const char *s, int size, RenderTextRun *runs, int max, int *ascent)
{
    FontSlot *fs = slot_for(tx, size);
    int nr = 0, asc = 0, x = 0;
    const char *p = s;
    char buf[4096];
    while (*p && nr < max) {
        const char *start = p;
        uint32_t cp = render_utf8_next(&p);
        int fi = font_index_for(tx, cp);
        const char *q = p;
        while (*q) {
            const char *before = q;
            uint32_t c2 = render_utf8_next(&q);
            /* spaces and ASCII punctuation stay with the run they are in */
            int f2 = (c2 == ' ') ? fi : font_index_for(tx, c2);
            if (f2 != fi) {
                q = before;
                break;
            }
        }
        size_t n = (size_t)(q - start);
        if (n >= sizeof buf) n = sizeof buf - 1;
        p = q;
        TTF_Font *f = fs->font[fi];
        if (!f) continue;
        RenderTextRun *r = &runs[nr];
        memcpy(buf, start, n);
        buf[n] = '\0';
        r->start = (size_t)(start - s);
        r->len = n;
        r->font = fi;
        r->x = x;
        int w = 0;
        if (TTF_SizeUTF8(f, buf, &w, NULL) != 0) w = 0;
        r->w = w;
        r->ascent = TTF_FontAscent(f);
        r->descent = -TTF_FontDescent(f);
        x += w;
        if (r->ascent > asc) asc = r->ascent;
        nr++;
    }
    *ascent = asc;
    return nr;
}

/* Renders s with per-codepoint font fallback into one ARGB surface: its
 * runs (text_runs) side by side on one baseline. */
static SDL_Surface *text_surface(RenderText *tx, const char *s, int size, SDL_Color col, int *ascent_out)
{
    FontSlot *fs = slot_for(tx, size);
    enum { MAX_RUNS = 64 };
    RenderTextRun runs[MAX_RUNS];
    SDL_Surface *img[MAX_RUNS];
    int asc = 0, desc = 0, w = 0, nr = text_runs(tx, s, size, runs, MAX_RUNS, &asc);
    int ni = 0;
    char buf[4096];
    for (int i = 0; i < nr; i++) {
        memcpy(buf, s + runs[i].start, runs[i].len);
        buf[runs[i].len] = '\0';
        img[ni] = TTF_RenderUTF8_Blended(fs->font[runs[i].font], buf, col);
        if (!img[ni]) continue;
        runs[ni] = runs[i];
        runs[ni].x = w; /* the rendered widths, as the glyphs are placed */
        w += img[ni]->w;
        if (runs[ni].descent > desc) desc = runs[ni].descent;
        ni++;
    }
    if (!ni) return NULL;
    /* a little room below the descent: underscores sit on it and would be cut */
    desc += 1 + size / 12;
    SDL_Surface *out = SDL_CreateRGBSurfaceWithFormat(0, w, asc + desc, 32, SDL_PIXELFORMAT_ARGB8888);
    if (out) {
        SDL_FillRect(out, NULL, SDL_MapRGBA(out->format, col.r, col.g, col.b, 0));
        for (int i = 0; i < ni; i++) {
            SDL_SetSurfaceBlendMode(img[i], SDL_BLENDMODE_NONE);
            SDL_Rect d = {runs[i].x, asc - runs[i].ascent, img[i]->w, img[i]->h};
            SDL_BlitSurface(img[i], NULL, out, &d);
        }
    }
    for (int i = 0; i < ni; i++) SDL_FreeSurface(img[i]);
    *ascent_out = asc;
    return out;
}

/* Drops every cached text. */
static void text_clear(RenderText *tx)
{
    for (int i = 0; i < RENDER_TEXT_CACHE; i++)
        if (tx->text[i].tex) SDL_DestroyTexture(tx->text[i].tex);
    memset(tx->text, 0, sizeof tx->text);
    tx->n_text = 0;
    tx->text_bytes = 0;
}

void text_begin_frame(RenderText *tx)
{
    tx->frame++;
    size_t budget = tx->text_trim_bytes ? tx->text_trim_bytes : RENDER_TEXT_BUDGET;
    if (tx->n_text < RENDER_TEXT_CACHE * 3 / 4 && tx->text_bytes <= budget) return;
    /* Keep what the last two frames used; rebuild the table. */
    TextEntry *old = malloc(sizeof tx->text);
    if (!old) return;
    memcpy(old, tx->text, sizeof tx->text);
    memset(tx->text, 0, sizeof tx->text);
    tx->n_text = 0;
    tx->text_bytes = 0;
    for (int i = 0; i < RENDER_TEXT_CACHE; i++) {
        if (!old[i].key) continue;
        if (old[i].last_frame + 2 < tx->frame) {
            SDL_DestroyTexture(old[i].tex);
            continue;
        }
        size_t j = old[i].key & (RENDER_TEXT_CACHE - 1);
        while (tx->text[j].key) j = (j + 1) & (RENDER_TEXT_CACHE - 1);
        tx->text[j] = old[i];
        tx->n_text++;
        tx->text_bytes += (size_t)old[i].w * (size_t)old[i].h * 4;
    }
    free(old);
    /* when two frames' own texts fill most of the budget, the next trim
     * waits until they have doubled, not the next frame */
    tx->text_trim_bytes = tx->text_bytes * 2 > RENDER_TEXT_BUDGET ? tx->text_bytes * 2 : 0;
}

/* A text texture from the cache (rendered on first use). NULL for "". */
static const TextEntry *text_get(RenderText *tx, const char *s, int size, SDL_Color col)
{
    if (!s || !*s) return NULL;
    if (size < 4) size = 4;
    uint64_t key = text_key(s, size, col);
    size_t j = key & (RENDER_TEXT_CACHE - 1);
    while (tx->text[j].key) {
        if (tx->text[j].key == key) {
            tx->text[j].last_frame = tx->frame;
            return &tx->text[j];
        }
        j = (j + 1) & (RENDER_TEXT_CACHE - 1);
    }
    if (tx->n_text >= RENDER_TEXT_CACHE - 1) return NULL; /* full within one frame: draw nothing more */
    int asc = 0;
    SDL_Surface *surf = text_surface(tx, s, size, col, &asc);
    if (!surf) return NULL;
    SDL_Texture *tex = SDL_CreateTextureFromSurface(tx->sdl, surf);
    TextEntry *e = &tx->text[j];
    e->key = key;
    e->tex = tex;
    e->w = surf->w;
    e->h = surf->h;
    e->ascent = asc;
    e->last_frame = tx->frame;
    SDL_FreeSurface(surf);
    if (!tex) {
        e->key = 0;
        return NULL;
    }
    tx->text_bytes += (size_t)e->w * (size_t)e->h * 4;
    SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_BLEND);
    tx->n_text++;
    return e;
}

int text_draw(RenderText *tx, const char *s, int size, SDL_Color col, int x, int y, int align, SDL_Rect *drawn)
{
    const TextEntry *e = text_get(tx, s, size, col);
    if (!e) return -1;
    SDL_Rect d = {x, y, e->w, e->h};
    if (align == 1) d.x -= e->w / 2;
    if (align == 2) d.x -= e->w;
    SDL_RenderCopy(tx->sdl, e->tex, NULL, &d);
    if (drawn) {
        int lh = text_line_height(tx, size);
        *drawn = (SDL_Rect){d.x, d.y, d.w, d.h < lh ? d.h : lh};
    }
    return e->w;
}

int text_width(RenderText *tx, const char *s, int size)
{
    return s ? text_measure(tx, s, strlen(s), size) : 0;
}

const char *text_fit(RenderText *tx, const char *s, int size, int maxw, char *buf, size_t len)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    if (text_measure(tx, s, n, size) <= maxw) return s;
    int ell = text_width(tx, "…", size);
    if (ell > maxw || len < 4) return NULL;
    /* the longest prefix of whole characters that leaves room for "…" */
    size_t best = 0;
    for (const char *p = s; *p;) {
        render_utf8_next(&p);
        size_t at = (size_t)(p - s);
        if (at + 4 > len || text_measure(tx, s, at, size) + ell > maxw) break;
        best = at;
    }
    memcpy(buf, s, best);
    memcpy(buf + best, "…", 4); /* 3 bytes and the terminator */
    return buf;
}

/* The cached text of the one character at *p, which moves past it; NULL
 * when it cannot be drawn. */
static const TextEntry *next_glyph(RenderText *tx, const char **p, int size, SDL_Color col)
{
    const char *start = *p;
    render_utf8_next(p);
    char ch[8];
    snprintf(ch, sizeof ch, "%.*s", (int)(*p - start), start);
    return text_get(tx, ch, size, col);
}

int text_number_height(RenderText *tx, int size)
{
    SizeMetrics m = size_metrics(tx, size);
    return m.ink_above + m.ink_below;
}

int text_glyphs(RenderText *tx, const char *s, int size, SDL_Color col, int cx, int cy, int maxw, SDL_Rect *ink)
{
    /* Numbers change every step and every animation frame; their few
     * distinct characters are cached one by one, so a new number costs
     * blits, not a rasterisation. */
    const TextEntry *g[32];
    int n = 0, w = 0;
    for (const char *p = s; *p && n < 32;) {
        const TextEntry *e = next_glyph(tx, &p, size, col);
        if (!e) continue;
        g[n++] = e;
        w += e->w;
    }
    if (!n || w > maxw) return -1;
    /* the digits' ink, not the line's box, is centred on (cx, cy): a number
     * needs only its digits' height (text_number_height) */
    SizeMetrics m = size_metrics(tx, size);
    int above = m.ink_above, below = m.ink_below;
    int x = cx - w / 2, baseline = cy + (above - below) / 2;
    if (ink) *ink = (SDL_Rect){x, baseline - above, w, above + below};
    for (int i = 0; i < n; i++) {
        SDL_Rect d = {x, baseline - g[i]->ascent, g[i]->w, g[i]->h};
        SDL_RenderCopy(tx->sdl, g[i]->tex, NULL, &d);
        x += g[i]->w;
    }
    return w;
}
