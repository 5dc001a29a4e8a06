/* export.c: headless export of a lesson to PNG files. See export.h. */
#include "export.h"

#ifdef ATTNVIZ_HAVE_CAIRO
#include <cairo-ft.h>
#include <cairo-pdf.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#endif

#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_internal.h"
#include "export_pool.h"

void export_options_init(ExportOptions *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->width = EXPORT_DEFAULT_WIDTH;
    opt->height = EXPORT_DEFAULT_HEIGHT;
    opt->scale = 1.0f;
    opt->lang = LESSON_EN;
    opt->theme = VIEW_THEME_LIGHT;
    opt->mode = VIEW_MULTI;
    opt->text_scale = 1.0f;
    opt->fps = EXPORT_DEFAULT_FPS;
    opt->dwell = VIEW_DWELL_SECONDS;
    opt->speed = 1.0;
    opt->write_steps = 1;
    export_png_options_init(&opt->png);
}

/* ---- parsing ---- */

/* Digits only, no sign or spaces; *end after them. -1 when none or too large. */
static long parse_digits(const char *s, const char **end)
{
    long v = 0;
    const char *p = s;
    *end = s; /* set on every path: the caller reads it after a too-long number too */
    while (*p >= '0' && *p <= '9') {
        if (v > 100000000) return -1;
        v = v * 10 + (*p - '0');
        p++;
    }
    *end = p;
    return p == s ? -1 : v;
}

int export_parse_size(const char *text, int *width, int *height, char *err, size_t errlen)
{
    const char *p = text ? text : "";
    const char *q;
    long w = parse_digits(p, &q), h = -1;
    if (w >= 0) {
        if (*q == 'x' || *q == 'X')
            q += 1;
        else if ((unsigned char)q[0] == 0xC3 && (unsigned char)q[1] == 0x97) /* × */
            q += 2;
        else
            q = NULL;
        if (q) {
            const char *e;
            h = parse_digits(q, &e);
            if (*e) h = -1;
        }
    }
    if (w < 0 || h < 0) {
        export__set_err(err, errlen, "--size: expected WIDTHxHEIGHT in pixels such as 1920x1080, found '%s'", p);
        return -1;
    }
    if (w < EXPORT_MIN_SIDE || h < EXPORT_MIN_SIDE || w > EXPORT_MAX_SIDE || h > EXPORT_MAX_SIDE) {
        export__set_err(err, errlen, "--size: expected sides from %d to %d pixels, found '%s'", EXPORT_MIN_SIDE,
                        EXPORT_MAX_SIDE, p);
        return -1;
    }
    *width = (int)w;
    *height = (int)h;
    return 0;
}

/* The first (or last) step an item names: an index, a step name, a kind. -1: none. */
static int find_item(const AttnTrace *t, const char *item, size_t n, int last, int head)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, item, n);
    buf[n] = 0;
    const char *e;
    long num = parse_digits(buf, &e); /* a step number, from 1 */
    if (num >= 0 && !*e) return num >= 1 && num <= t->n_steps ? view_step_index((int)num) : -1;
    int kind = attn_step_kind_from_name(buf);
    int found = -1;
    for (int i = 0; i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i];
        int match =
            strcmp(s->name, buf) == 0 || ((int)s->kind == kind && (head == 0 || s->head == 0 || s->head == head));
        if (match) {
            found = i;
            if (!last) break;
        }
    }
    return found;
}

int export_select_steps(const AttnTrace *t, const char *spec, int head, unsigned char *selected, char *err,
                        size_t errlen)
{
    int from = 0, to = t->n_steps - 1, kind_only = -1;
    if (spec && *spec) {
        const char *dash = strchr(spec, '-');
        if (!dash) {
            int kind = attn_step_kind_from_name(spec);
            if (kind >= 0) {
                kind_only = kind;
            } else {
                from = to = find_item(t, spec, strlen(spec), 0, head);
                if (from < 0) goto bad;
            }
        } else {
            if (strchr(dash + 1, '-')) goto bad;
            if (dash > spec) from = find_item(t, spec, (size_t)(dash - spec), 0, head);
            if (dash[1]) to = find_item(t, dash + 1, strlen(dash + 1), 1, head);
            if (from < 0 || to < 0 || (dash == spec && !dash[1])) goto bad;
            if (from > to) {
                export__set_err(err, errlen, "--steps \"%s\": the range is empty (step %d comes after step %d)", spec,
                                view_step_ordinal(from), view_step_ordinal(to));
                return -1;
            }
        }
    }
    int n = 0;
    for (int i = 0; i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i];
        int on = i >= from && i <= to;
        if (kind_only >= 0) on = (int)s->kind == kind_only;
        if (head > 0 && s->head > 0 && s->head != head) on = 0;
        selected[i] = (unsigned char)on;
        n += on;
    }
    if (n == 0) {
        export__set_err(err, errlen, "--steps \"%s\"%s selects no step (the trace has %d)", spec ? spec : "",
                        head > 0 ? " with --head" : "", t->n_steps);
        return -1;
    }
    return n;
bad:
    export__set_err(err, errlen,
                    "--steps: expected ITEM or FROM-TO where each is a step number (1..%d), a step name (e.g. %s) "
                    "or a kind (e.g. softmax), found \"%s\"",
                    t->n_steps, t->n_steps > 0 ? t->steps[t->n_steps - 1].name : "X", spec);
    return -1;
}

int export_step_frames(double duration, const ExportOptions *opt)
{
    double speed = opt->speed > 0 ? opt->speed : 1.0;
    double seconds = (duration + (opt->dwell > 0 ? opt->dwell : 0)) / speed;
    /* 1e-9: (1.0 + 1.0) · 30 must be 60 frames, not 61 after rounding. */
    double n = ceil(seconds * opt->fps - 1e-9);
    if (n < 1) n = 1;
    if (n > EXPORT_MAX_FRAMES) n = EXPORT_MAX_FRAMES;
    return (int)n;
}

static int step_digits(const AttnTrace *t)
{
    int d = 3;
    for (int n = 1000; t->n_steps >= n && d < 9; n *= 10) d++;
    return d;
}

void export_step_filename(const AttnTrace *t, int step, char *buf, size_t len)
{
    const AttnStep *s = &t->steps[step];
    if (s->head > 0)
        snprintf(buf, len, "%0*d-%s-h%d.png", step_digits(t), view_step_ordinal(step), attn_step_kind_name(s->kind),
                 s->head);
    else
        snprintf(buf, len, "%0*d-%s.png", step_digits(t), view_step_ordinal(step), attn_step_kind_name(s->kind));
}

/* ---- folders ---- */

static int probe_dir(const char *dir, char *err, size_t errlen);

/* dir exists as a folder afterwards (made when its parent exists), and a
 * file can be created in it. */
static int ensure_dir(const char *dir, int *usage, char *err, size_t errlen)
{
    /* a folder too long for the journal's path (the longest attnviz makes
     * there) is refused (bad input) before it is made */
    char *journal = export__journal_path(dir, EXPORT_INDEX_NAME);
    if (!journal) {
        export__set_err(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    int too_long = export__check_length(journal, err, errlen) != 0;
    free(journal);
    if (too_long) {
        *usage = 1;
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) { /* a bad argument (exit 2), as a dangling link is */
            export__set_err(err, errlen, "%s: expected a folder, found %s", dir, lesson_file_kind(st.st_mode));
            *usage = 1;
            return -1;
        }
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        int e = errno;
        char *parent = strdup(dir);
        if (!parent) {
            export__set_err(err, errlen, "%s: out of memory", dir);
            return -1;
        }
        size_t n = strlen(parent);
        while (n > 1 && parent[n - 1] == '/') parent[--n] = 0;
        char *slash = strrchr(parent, '/');
        if (slash == parent)
            slash[1] = 0;
        else if (slash)
            *slash = 0;
        else
            strcpy(parent, ".");
        struct stat pst;
        int parent_is_dir = stat(parent, &pst) == 0 && S_ISDIR(pst.st_mode);
        if (e == ENOENT && !parent_is_dir)
            export__set_err(err, errlen, "%s: cannot create the folder: its parent %s does not exist", dir, parent);
        else if (e == ENOTDIR) { /* a path through a file: a bad argument too */
            export__set_err(err, errlen, "%s: cannot create the folder: %s is not a folder", dir, parent);
            *usage = 1;
        } else
            export__set_err(err, errlen, "%s: cannot create the folder: %s", dir, strerror(e));
        free(parent);
        return -1;
    }
    return probe_dir(dir, err, errlen);
}

/* Fails now, with one clear line, rather than after drawing, when no file
 * can be created in dir. */
static int probe_dir(const char *dir, char *err, size_t errlen)
{
    char *name = export__path_join(dir, EXPORT_PROBE_NAME);
    char *probe = name ? export__temporary_path(name) : NULL;
    free(name);
    if (!probe) {
        export__set_err(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    int slot = -1, fd = export__open_temporary(probe, &slot);
    if (fd < 0) {
        export__set_err(err, errlen, "%s: cannot write files in this folder: %s", dir, strerror(errno));
        free(probe);
        return -1;
    }
    close(fd);
    unlink(probe);
    export__temporary_done(slot);
    free(probe);
    return 0;
}

/* ---- what each PNG says about itself ---- */

enum {
    TEXT_TITLE,
    TEXT_SOFTWARE,
    TEXT_DESCRIPTION,
    TEXT_LESSON,
    TEXT_LANG,
    TEXT_STEP,
    TEXT_NAME,
    TEXT_KIND,
    TEXT_HEAD,
    TEXT_FORMULA,
    TEXT_COUNT
};

/* The text chunk every step's PNG and frame carries, and a handout's page never. */
#define STEP_KEY_STEP "attnviz:step"

typedef struct StepText {
    char step[16], head[16], software[64];
    char narration[NARRATE_MAX_STEP_TEXT];
    char title[64]; /* "weights₂" */
    ExportPngText chunks[TEXT_COUNT];
} StepText;

/* The text chunks for the view's current step. Strings point into st, the
 * view and the lesson. */
static void step_text_fill(StepText *st, const View *v)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    const Lesson *l = v->lesson;
    snprintf(st->step, sizeof st->step, "%d", view_step_ordinal(attn_trace_index(t, s)));
    snprintf(st->head, sizeof st->head, "%d", s->head);
    snprintf(st->software, sizeof st->software, "attnviz %s", ATTNVIZ_VERSION);
    view_narration(v, st->narration, sizeof st->narration);
    view_step_title(s, st->title, sizeof st->title);
    const char *title = lesson_text(&l->title, v->lang);
    static const char *const keys[TEXT_COUNT] = {
        "Title",       "Software",          "Description",       "attnviz:lesson", "attnviz:lang",
        STEP_KEY_STEP, "attnviz:step-name", "attnviz:step-kind", "attnviz:head",   "attnviz:formula"};
    const char *vals[TEXT_COUNT] = {title ? title : "",
                                    st->software,
                                    st->narration,
                                    l->id ? l->id : "",
                                    lesson_lang_names[v->lang],
                                    st->step,
                                    s->name,
                                    attn_step_kind_name(s->kind),
                                    st->head,
                                    view_formula(v)};
    for (int i = 0; i < TEXT_COUNT; i++) {
        st->chunks[i].key = keys[i];
        st->chunks[i].text = vals[i] ? vals[i] : "";
    }
}

/* ---- drawing ---- */

int export_draw_view(RenderCtx *rc, SDL_Renderer *sdl, const View *view, int width, int height, unsigned char *pixels,
                     size_t pitch, char *err, size_t errlen)
{
    if (render_frame(rc, view, width, height) != 0) {
        export__set_err(err, errlen, "drawing step %d: %s", view_step_ordinal(view->step), SDL_GetError());
        return -1;
    }
    /* ReadPixels flushes SDL's command batch; same format: a plain copy. */
    SDL_Rect all = {0, 0, width, height};
    if (SDL_RenderReadPixels(sdl, &all, SDL_PIXELFORMAT_XRGB8888, pixels, (int)pitch) != 0) {
        export__set_err(err, errlen, "reading the frame's pixels: %s", SDL_GetError());
        return -1;
    }
    return 0;
}

/* The drawing side of an export: a surface, a software renderer on it, and
 * the render context. No window. */
typedef struct Headless {
    SDL_Surface *surface;
    SDL_Renderer *sdl;
    RenderCtx *rc;
} Headless;

static void headless_free(Headless *h)
{
    render_destroy(h->rc);
    if (h->sdl) SDL_DestroyRenderer(h->sdl);
    if (h->surface) SDL_FreeSurface(h->surface);
    memset(h, 0, sizeof *h);
}

static int headless_init(Headless *h, int width, int height, const ExportOptions *opt, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    /* XRGB8888: what X11 window surfaces use, so blending rounds the same. */
    h->surface = SDL_CreateRGBSurfaceWithFormat(0, width, height, 32, SDL_PIXELFORMAT_XRGB8888);
    if (h->surface) h->sdl = SDL_CreateSoftwareRenderer(h->surface);
    if (!h->surface || !h->sdl) {
        export__set_err(err, errlen, "creating a %dx%d software renderer: %s", width, height, SDL_GetError());
        headless_free(h);
        return -1;
    }
    char msg[512];
    h->rc = render_create(h->sdl, opt->use_render_options ? &opt->render : NULL, msg, sizeof msg);
    if (!h->rc) {
        export__set_err(err, errlen, "%s", msg);
        headless_free(h);
        return -1;
    }
    return 0;
}

/* ---- the handout sheet's captions ---- */

/* A caption line: a byte range of a text, drawn at one size. */
typedef struct CaptionLine {
    const char *text;
    size_t len;
    int size;
    int x, y; /* its top-left, pixels from the caption's */
} CaptionLine;

typedef struct Caption {
    char header[256]; /* "7 · weights₂ · softmax · head 2" */
    char formula[VIEW_MAX_FORMULA];
    char narration[NARRATE_MAX_STEP_TEXT];
    CaptionLine *lines; /* (n_lines) of room for cap_lines, owned */
    int n_lines, cap_lines;
    int pad;    /* around the text: pixels */
    int rule;   /* the rule across its top: pixels high */
    int height; /* pixels, padding included */
} Caption;

static void caption_free(Caption *c)
{
    free(c->lines);
    c->lines = NULL;
    c->n_lines = c->cap_lines = 0;
}

/* The caption's two text sizes, in pixels. */
typedef struct CaptionSizes {
    int header, body;
} CaptionSizes;

/* The distance from one caption line to the next: the render chain's line
 * height with a little leading, as CJK text needs room between lines. */
static int caption_line_skip(RenderCtx *rc, int size)
{
    return render_line_height(rc, size) + size / 4;
}

/* Appends text's lines, wrapped to width, however many. 0, or -1 when
 * memory runs out. */
static int caption_add(Caption *c, RenderCtx *rc, int size, const char *text, int width)
{
    for (int room = 64;; room *= 2) {
        size_t *starts = malloc(sizeof *starts * (size_t)room), *lens = malloc(sizeof *lens * (size_t)room);
        int n = starts && lens ? render_wrap(rc, text, size, width, starts, lens, room) : -1;
        if (n >= 0 && n < room && c->n_lines + n > c->cap_lines) {
            CaptionLine *grown = realloc(c->lines, sizeof *grown * (size_t)(c->n_lines + n));
            if (grown) {
                c->lines = grown;
                c->cap_lines = c->n_lines + n;
            } else {
                n = -1;
            }
        }
        if (n >= 0 && n < room)
            for (int i = 0; i < n; i++) c->lines[c->n_lines++] = (CaptionLine){text + starts[i], lens[i], size, 0, 0};
        free(starts);
        free(lens);
        if (n < 0) return -1;
        if (n < room) return 0; /* room to spare: every line was wrapped */
    }
}

static int caption_layout(Caption *c, const View *v, RenderCtx *rc, CaptionSizes cs, int width)
{
    const AttnStep *s = view_current(v);
    char title[64];
    view_step_title(s, title, sizeof title);
    int idx = attn_trace_index(view_trace(v), s);
    char phase[128];
    view_phase_label(v, view_trace(v), idx, phase, sizeof phase);
    snprintf(c->header, sizeof c->header, "%d · %s · %s", view_step_ordinal(idx), title, phase);
    snprintf(c->formula, sizeof c->formula, "%s", view_formula(v));
    view_narration(v, c->narration, sizeof c->narration);
    int pad = c->pad = cs.body;
    c->n_lines = 0;
    if (caption_add(c, rc, cs.header, c->header, width - 2 * pad) != 0 ||
        (c->formula[0] && caption_add(c, rc, cs.body, c->formula, width - 2 * pad) != 0) ||
        caption_add(c, rc, cs.body, c->narration, width - 2 * pad) != 0)
        return -1;
    c->rule = cs.body / 8 > 1 ? cs.body / 8 : 1;
    int y = pad;
    for (int i = 0; i < c->n_lines; i++) {
        c->lines[i].x = pad;
        c->lines[i].y = y;
        y += caption_line_skip(rc, c->lines[i].size);
    }
    c->height = y + pad + pad / 2;
    return 0;
}

/* A caption too long for the rest of a page is continued on the next: its
 * lines [a, b) are caption rows [caption_top(a), caption_bottom(b)), the
 * first with the rule and the padding above the text, the last with the
 * padding below it, a continuation with half a padding above. */
static int caption_top(const Caption *c, int a)
{
    return a == 0 ? 0 : c->lines[a].y - c->pad / 2;
}

static int caption_bottom(const Caption *c, int b)
{
    return b >= c->n_lines ? c->height : c->lines[b].y;
}

/* The caption's text colour on a background. */
static SDL_Color caption_ink(SDL_Color bg)
{
    int lum = (bg.r * 299 + bg.g * 587 + bg.b * 114) / 1000;
    return lum > 128 ? (SDL_Color){25, 25, 30, 255} : (SDL_Color){235, 235, 240, 255};
}

/* Draws rows [y0, y0 + the renderer's height) of the caption's lines [a, b)
 * (and its rule with the first) at the top of the renderer, on the
 * background bg. */
static void caption_draw(const Caption *c, RenderCtx *rc, SDL_Renderer *sdl, int width, int y0, SDL_Color bg, int a,
                         int b)
{
    SDL_RenderSetClipRect(sdl, NULL);
    SDL_SetRenderDrawBlendMode(sdl, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(sdl, bg.r, bg.g, bg.b, 255);
    SDL_RenderClear(sdl);
    SDL_Color fg = caption_ink(bg);
    /* a rule above the caption separates it from the frame */
    SDL_Rect rule = {0, -y0, width, c->rule};
    SDL_SetRenderDrawColor(sdl, fg.r, fg.g, fg.b, 255);
    if (a == 0) SDL_RenderFillRect(sdl, &rule);
    for (int i = a; i < b; i++) {
        const CaptionLine *ln = &c->lines[i];
        char text[sizeof c->narration];
        snprintf(text, sizeof text, "%.*s", (int)ln->len, ln->text);
        render_text(rc, text, ln->size, fg, ln->x, ln->y - y0, 0);
    }
}

/* ---- the export ---- */

/* A file as written: its size and SHA-256, for index.json. */
typedef struct FileHash {
    long long bytes;
    char sha256[EXPORT_SHA256_HEX];
} FileHash;

typedef struct Run {
    const Lesson *lesson;
    const ExportOptions *opt;
    View view;
    int view_ok;
    Headless hl;
    int width, height; /* pixels */
    const AttnTrace *trace;
    unsigned char *selected; /* (trace->n_steps) */
    int n_selected;
    double t0;               /* start of the export */
    struct timespec started; /* the same, on the wall clock: older temporaries are stale */
    double part_t0;          /* start of the current part (files, sheet) */
    const char *what;        /* the current part, for progress */
    ExportResult *res;
    /* the folder part: what each file written holds, by step index (one
     * PNG per step) or frame number, and the journal that lists them */
    FileHash *hashes; /* (n_steps or frames_total) */
    ExportJournal journal;
} Run;

/* Tells the caller how far the export is: frames_done < 0 means "ask the pool". */
static void report(Run *r, ExportPool *pool, int steps_done, int frames_done, int frames_total)
{
    if (!r->opt->progress) return;
    if (frames_done < 0) {
        ExportPoolStats st = {0};
        export_pool_stats(pool, &st);
        frames_done = st.files;
    }
    ExportProgress p;
    p.what = r->what;
    p.steps_done = steps_done;
    p.steps_total = r->n_selected;
    p.frames_done = frames_done;
    p.frames_total = frames_total;
    p.elapsed = attn_clock_seconds() - r->part_t0;
    p.fps = p.elapsed > 0 ? p.frames_done / p.elapsed : 0;
    p.eta = p.frames_done > 0 ? p.elapsed / p.frames_done * (frames_total - p.frames_done) : -1;
    r->opt->progress(r->opt->progress_user, &p);
}

/* ---- one PNG per step, or every frame ---- */

/* The name this run gives file number k (a step index, or a frame number). */
static void files_name(const Run *r, int k, char *name, size_t len)
{
    if (r->opt->frames)
        snprintf(name, len, "%06d.png", k);
    else
        export_step_filename(r->trace, k, name, len);
}

/* The frames this run writes (1 per step, or export_step_frames per step),
 * and what the earlier export into dir recorded (its index.json and the
 * journal of an export that did not finish) into prev. Before anything is
 * drawn or touched, a refusal when a name this run writes is taken by
 * something it does not replace: anything but a regular file (a FIFO, a
 * device, a link: never opened), a file that is not attnviz's, or an
 * index.json of anything else; or when a name is too long. */
static int files_plan(Run *r, const char *dir, const char *journal, int *frames_total, ExportRecords *prev, char *err,
                      size_t errlen)
{
    const ExportOptions *opt = r->opt;
    const AttnTrace *t = r->trace;
    int total = 0;
    for (int i = 0; i < t->n_steps; i++)
        if (r->selected[i]) {
            total += opt->frames ? export_step_frames(view_step_duration(&r->view, i), opt) : 1;
            if (total > EXPORT_MAX_FRAMES) {
                export__set_err(err, errlen, "%s: more than %d frames; lower --fps or select fewer --steps", dir,
                                EXPORT_MAX_FRAMES);
                r->res->usage_error = 1;
                return -1;
            }
        }
    *frames_total = total;
    int rc = export__check_entry(dir, EXPORT_INDEX_NAME, err, errlen);
    if (rc == 0) rc = export__check_journal(journal, err, errlen);
    if (rc == 0 && export__previous_read(dir, prev) < 0) {
        export__set_err(err, errlen,
                        "%s/%s: exists and is not the index of an attnviz export; attnviz replaces only its own files",
                        dir, EXPORT_INDEX_NAME);
        rc = -1;
    }
    if (rc == 0) export__journal_read(journal, prev, export__accept_own_name, NULL);
    char name[64];
    for (int i = 0; rc == 0 && i < (opt->frames ? total : t->n_steps); i++) {
        if (!opt->frames && !r->selected[i]) continue;
        files_name(r, i, name, sizeof name);
        char *path = export__path_join(dir, name);
        if (!path) export__set_err(err, errlen, "out of memory");
        if (!path || export__check_length(path, err, errlen) != 0 ||
            export__check_replaceable(dir, name, NULL, "a PNG attnviz wrote", err, errlen) != 0)
            rc = -1;
        free(path);
    }
    if (rc != 0) r->res->usage_error = 1;
    return rc;
}

/* Was `name` (one an earlier export recorded) written again by this run? */
static int files_written_now(const Run *r, const char *name, int frames)
{
    int k;
    if (export__is_frame_name(name, &k)) return r->opt->frames && k < frames;
    if (r->opt->frames) return 0;
    int i = view_step_index(atoi(name)); /* file names count steps from 1 */
    if (i < 0 || i >= r->trace->n_steps || !r->selected[i]) return 0;
    char mine[64];
    export_step_filename(r->trace, i, mine, sizeof mine);
    return strcmp(mine, name) == 0;
}

static int names_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Before this run writes a file: the journal lists what is there of what
 * the earlier export recorded, its index.json goes, and so do its files,
 * each only while it is exactly what was recorded (export__remove_recorded);
 * the folder then holds no export but this one's files as they are
 * written. Files recorded but changed since (and those an older attnviz
 * listed without a size and hash) stay, and are counted. Then a killed
 * export's temporaries go. */
static int files_begin(Run *r, const char *dir, const char *journal, const ExportRecords *prev, int frames, char *err,
                       size_t errlen)
{
    /* what is there of what was recorded: in the journal before it goes */
    ExportRecords there = {0};
    struct stat st;
    int rc = 0;
    for (int i = 0; rc == 0 && i < prev->n; i++) {
        char *path = export__path_join(dir, prev->rec[i].name);
        if (!path)
            rc = -1;
        else if (prev->rec[i].bytes >= 0 && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            rc = export__records_add(&there, prev->rec[i].name, prev->rec[i].bytes, prev->rec[i].sha256);
        free(path);
    }
    const char **names = prev->n ? malloc(sizeof *names * (size_t)prev->n) : NULL;
    char *index = export__path_join(dir, EXPORT_INDEX_NAME);
    if (rc != 0 || (prev->n && !names) || !index) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) rc = export__journal_begin(&r->journal, journal, &there, err, errlen);
    /* files_plan read it as attnviz's index; it describes files about to go */
    if (rc == 0 && lstat(index, &st) == 0 && S_ISREG(st.st_mode) && unlink(index) != 0) {
        export__set_err(err, errlen, "%s: %s", index, strerror(errno));
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < there.n; i++)
        if (export__remove_recorded(dir, &there.rec[i], NULL, NULL))
            r->res->stale_removed += !files_written_now(r, there.rec[i].name, frames);
    /* what is still there of what was recorded, whatever it is now (a file
     * changed since, one listed without a size and hash, a link, a folder),
     * each name once, and not one this run writes again */
    int left = 0;
    for (int i = 0; rc == 0 && i < prev->n; i++) names[i] = prev->rec[i].name;
    if (rc == 0 && prev->n) qsort(names, (size_t)prev->n, sizeof *names, names_cmp);
    for (int i = 0; rc == 0 && i < prev->n; i++) {
        if ((i > 0 && strcmp(names[i], names[i - 1]) == 0) || files_written_now(r, names[i], frames)) continue;
        char *path = export__path_join(dir, names[i]);
        left += path && lstat(path, &st) == 0;
        free(path);
    }
    r->res->earlier_left = left;
    if (rc == 0)
        r->res->temps_removed = export__remove_stale_temporaries(dir, &r->started, export__accept_folder_name, NULL);
    free(names);
    free(index);
    export__records_free(&there);
    return rc;
}

/* The pool's writer: the file's size and hash, recorded in the journal
 * before the file appears, then the file. */
static int files_write(void *user, const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    Run *r = user;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int k = -1;
    if (!r->opt->frames)
        k = view_step_index(atoi(name));
    else
        export__is_frame_name(name, &k);
    assert(k >= 0); /* a name this run made */
    FileHash *h = &r->hashes[k];
    h->bytes = (long long)len;
    export__sha256(data, len, h->sha256);
    if (export__journal_add(&r->journal, name, len, h->sha256, err, errlen) != 0) return -1;
    return export_write_owned_file(path, data, len, err, errlen);
}

/* The index.json entry of step i. */
static void files_index_entry(Run *r, cJSON *list, int i, const StepText *st, int first_frame, int n, double d)
{
    const AttnTrace *t = r->trace;
    char name[64];
    export_step_filename(t, i, name, sizeof name);
    cJSON *e = cJSON_CreateObject();
    if (!r->opt->frames) cJSON_AddStringToObject(e, "file", name);
    cJSON_AddNumberToObject(e, "step", view_step_ordinal(i));
    cJSON_AddStringToObject(e, "kind", attn_step_kind_name(t->steps[i].kind));
    cJSON_AddStringToObject(e, "name", t->steps[i].name);
    cJSON_AddNumberToObject(e, "head", t->steps[i].head);
    cJSON_AddStringToObject(e, "title", st->title);
    cJSON_AddStringToObject(e, "formula", view_formula(&r->view));
    cJSON_AddStringToObject(e, "narration", st->narration);
    if (r->opt->frames) {
        cJSON_AddNumberToObject(e, "first_frame", first_frame);
        cJSON_AddNumberToObject(e, "frame_count", n);
        cJSON_AddNumberToObject(e, "duration", d);
    }
    cJSON_AddItemToArray(list, e);
}

/* Draws frame f (of n) of step i, whose animation lasts d seconds, and
 * queues it as `name`; a held final state is queued as a copy of the frame
 * before. 0, 1 when the pool failed (its finish has the message), or -1
 * with err. */
static int files_one_frame(Run *r, ExportPool *pool, const char *dir, const char *name, int f, double d,
                           const StepText *st, char *err, size_t errlen)
{
    const ExportOptions *opt = r->opt;
    View *v = &r->view;
    if (opt->frames) {
        double tt = f * opt->speed / opt->fps;
        v->t = tt < d ? tt : d;
        /* The final state held (t clamped at d): the View is the one just
         * drawn, and drawing is a pure function of the View, so the PNG is
         * the same bytes: copy, do not redraw. */
        if (f > 0 && tt >= d && (f - 1) * opt->speed / opt->fps >= d && !(opt->cancel && *opt->cancel)) {
            char *path = export__path_join(dir, name);
            if (!path) {
                export__set_err(err, errlen, "out of memory");
                return -1;
            }
            int crc = export_pool_submit_copy(pool, path);
            free(path);
            return crc != 0;
        }
    }
    size_t pitch;
    unsigned char *px = export_pool_acquire(pool, &pitch);
    if (!px) return 1;
    double t0 = attn_clock_seconds();
    int rc = export_draw_view(r->hl.rc, r->hl.sdl, v, r->width, r->height, px, pitch, err, errlen);
    r->res->draw_seconds += attn_clock_seconds() - t0;
    char *path = export__path_join(dir, name);
    if (rc == 0 && !path) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc != 0) {
        export_pool_release(pool, px); /* hand the buffer back without writing anything */
        free(path);
        return -1;
    }
    rc = export_pool_submit(pool, px, path, st->chunks, TEXT_COUNT) != 0;
    free(path);
    return rc;
}

/* Every selected step through the pool, its entries into list. Returns 0,
 * or -1 with err (drawing, memory, an interruption); *frames counts the
 * files queued. A worker's failure stops the loop and is the pool's to
 * report. */
static int files_draw(Run *r, ExportPool *pool, const char *dir, cJSON *list, StepText *st, int frames_total,
                      int *frames, char *err, size_t errlen)
{
    const ExportOptions *opt = r->opt;
    View *v = &r->view;
    const AttnTrace *t = r->trace;
    int steps_done = 0, frame = 0, rc = 0;
    for (int i = 0; rc == 0 && i < t->n_steps; i++) {
        if (!r->selected[i]) continue;
        view_goto(v, i);
        double d = view_step_duration(v, i);
        int n = opt->frames ? export_step_frames(d, opt) : 1;
        view_finish(v);
        step_text_fill(st, v);
        files_index_entry(r, list, i, st, frame, n, d);
        for (int f = 0; f < n && rc == 0; f++) {
            if (opt->cancel && *opt->cancel) {
                export__set_err(err, errlen, "%s: interrupted after %d of %d files", dir, frame, frames_total);
                rc = -1;
                break;
            }
            char name[64];
            if (opt->frames)
                snprintf(name, sizeof name, "%06d.png", frame);
            else
                export_step_filename(t, i, name, sizeof name);
            int frc = files_one_frame(r, pool, dir, name, f, d, st, err, errlen);
            if (frc > 0) goto pool_failed;
            rc = frc;
            if (rc == 0) {
                frame++;
                report(r, pool, steps_done, -1, frames_total);
            }
        }
        steps_done++;
    }
pool_failed:
    r->res->steps = steps_done;
    *frames = frame;
    return rc;
}

/* What each file written holds, into index.json: "bytes" and "sha256" in
 * each of "files", or, for frames, "frame_files": runs of consecutive
 * frames of the same bytes (a held final state), each its first frame,
 * count, bytes and SHA-256. */
static void files_index_hashes(Run *r, cJSON *index, cJSON *list, int frames)
{
    if (!r->opt->frames) {
        const cJSON *e;
        cJSON_ArrayForEach(e, list)
        {
            const FileHash *h = &r->hashes[view_step_index(cJSON_GetObjectItem(e, "step")->valueint)];
            cJSON_AddNumberToObject((cJSON *)e, "bytes", (double)h->bytes);
            cJSON_AddStringToObject((cJSON *)e, "sha256", h->sha256);
        }
        return;
    }
    cJSON *runs = cJSON_AddArrayToObject(index, "frame_files");
    for (int k = 0; k < frames;) {
        const FileHash *h = &r->hashes[k];
        int n = 1;
        while (k + n < frames && r->hashes[k + n].bytes == h->bytes && strcmp(r->hashes[k + n].sha256, h->sha256) == 0)
            n++;
        cJSON *run = cJSON_CreateObject();
        cJSON_AddNumberToObject(run, "first", k);
        cJSON_AddNumberToObject(run, "count", n);
        cJSON_AddNumberToObject(run, "bytes", (double)h->bytes);
        cJSON_AddStringToObject(run, "sha256", h->sha256);
        cJSON_AddItemToArray(runs, run);
        k += n;
    }
}

/* index.json, last: it lists exactly the files written, with their sizes
 * and hashes. list is taken over. */
static int files_write_index(Run *r, const char *dir, cJSON *list, int frames, const StepText *st, char *err,
                             size_t errlen)
{
    const ExportOptions *opt = r->opt;
    const Lesson *l = r->lesson;
    cJSON *index = cJSON_CreateObject();
    const char *title = lesson_text(&l->title, opt->lang);
    cJSON_AddStringToObject(index, "format", EXPORT_FORMAT);
    cJSON_AddStringToObject(index, "software", st->software);
    cJSON_AddStringToObject(index, "lesson", l->id ? l->id : "");
    char *lesson_file = lesson_utf8_valid(l->path ? l->path : ""); /* JSON is UTF-8, a path bytes */
    cJSON_AddStringToObject(index, "lesson_file", lesson_file ? lesson_file : "");
    free(lesson_file);
    cJSON_AddStringToObject(index, "title", title ? title : "");
    cJSON_AddStringToObject(index, "lang", lesson_lang_names[opt->lang]);
    cJSON_AddStringToObject(index, "theme", view_theme_names[opt->theme]);
    cJSON_AddStringToObject(index, "view", view_mode_names[opt->mode]);
    cJSON_AddStringToObject(index, "weight_scale", view_weight_scale_names[opt->weight_scale]);
    cJSON_AddStringToObject(index, "notation", view_notation_names[opt->notation]);
    cJSON_AddNumberToObject(index, "width", r->width);
    cJSON_AddNumberToObject(index, "height", r->height);
    cJSON_AddNumberToObject(index, "scale", opt->scale);
    if (opt->frames) {
        cJSON_AddNumberToObject(index, "fps", opt->fps);
        cJSON_AddNumberToObject(index, "dwell", opt->dwell);
        cJSON_AddNumberToObject(index, "speed", opt->speed);
        cJSON_AddNumberToObject(index, "frame_count", frames);
        cJSON_AddStringToObject(index, "frame_pattern", "%06d.png");
    }
    files_index_hashes(r, index, list, frames);
    cJSON_AddItemToObject(index, opt->frames ? "steps" : "files", list);
    char *json = cJSON_Print(index);
    char *path = export__path_join(dir, EXPORT_INDEX_NAME);
    int rc;
    if (!json || !path) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    } else {
        size_t n = strlen(json);
        json[n] = '\n'; /* a final newline: overwrite the NUL, write n + 1 bytes */
        rc = export_write_owned_file(path, json, n + 1, err, errlen);
    }
    free(json);
    free(path);
    cJSON_Delete(index);
    return rc;
}

/* One PNG per step, or every frame, into dir, which this process holds
 * alone meanwhile: what an earlier export recorded goes first (with its
 * index.json), then each file is recorded in the journal and written
 * through the pool, then index.json is written and the journal removed.
 * Stopped part-way (a failure, an interruption, a kill), the folder holds
 * no index.json and the journal lists every file this export wrote; the
 * next export into dir removes them. */
static int export_files(Run *r, const char *dir, char *err, size_t errlen)
{
    const ExportOptions *opt = r->opt;
    int lock = export__lock_folder(dir, err, errlen);
    if (lock < 0) return -1;
    char *journal = export__journal_path(dir, EXPORT_INDEX_NAME);
    ExportRecords prev = {0};
    int frames_total = 0, rc = 0;
    if (!journal) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) rc = files_plan(r, dir, journal, &frames_total, &prev, err, errlen);
    if (rc == 0) report(r, NULL, 0, 0, frames_total); /* how much there is to do, from the start */
    if (rc == 0) {
        r->hashes = calloc((size_t)(opt->frames ? frames_total : r->trace->n_steps), sizeof *r->hashes);
        if (!r->hashes) {
            export__set_err(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0) rc = files_begin(r, dir, journal, &prev, frames_total, err, errlen);
    export__records_free(&prev);
    free(journal);
    ExportPool *pool = NULL;
    if (rc == 0) {
        /* Screen images: the DPI a screen's layout pixel is taken for, times
         * --scale, so a document places a --scale 2 PNG at the size of the
         * --scale 1 one, with twice the detail. */
        ExportPngOptions png = opt->png;
        if (!png.px_per_metre) png.px_per_metre = export_png_px_per_metre(EXPORT_SCREEN_DPI * opt->scale);
        pool = export_pool_create(opt->threads, r->width, r->height, EXPORT_PIXELS_BGRX32, &png, err, errlen);
        if (!pool) rc = -1;
    }
    if (rc != 0) {
        export__journal_end(&r->journal, 0);
        close(lock);
        return -1;
    }
    export_pool_set_writer(pool, files_write, r);
    r->res->threads = export_pool_threads(pool);
    cJSON *list = cJSON_CreateArray();
    StepText *st = malloc(sizeof *st);
    int frames = 0;
    if (!list || !st) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) rc = files_draw(r, pool, dir, list, st, frames_total, &frames, err, errlen);
    /* A drawing failure is the first error; else a worker's, if any. */
    char perr[EXPORT_ERR_MAX] = "";
    int prc = export_pool_finish(pool, perr, sizeof perr);
    if (rc == 0 && prc != 0) {
        export__set_err(err, errlen, "%s", perr);
        rc = -1;
    }
    ExportPoolStats ps;
    export_pool_stats(pool, &ps);
    r->res->files = ps.files;
    r->res->encode_seconds = ps.encode_seconds;
    r->res->write_seconds = ps.write_seconds;
    r->res->bytes += ps.bytes;
    export_pool_destroy(pool);
    if (rc == 0) report(r, NULL, r->res->steps, ps.files, frames_total);
    if (rc == 0) {
        rc = files_write_index(r, dir, list, frames, st, err, errlen);
        list = NULL;
    }
    export__journal_end(&r->journal, rc == 0);
    close(lock);
    cJSON_Delete(list);
    free(st);
    return rc;
}

/* The handout's pages: A4 portrait at SHEET_DPI, each step's figure (the
 * frame without status line, timeline or narration, at the --size's aspect
 * ratio and the page's text width) with its caption (where it is, the
 * formula, the narration: once) below it, as many to a page as fit. */
#define SHEET_DPI    150
#define SHEET_PAGE_W 1240 /* 210 mm at 150 dpi */
#define SHEET_PAGE_H 1754 /* 297 mm */
#define SHEET_MARGIN 90   /* 15 mm */
#define SHEET_GAP    40   /* between one step's caption and the next figure */

/* Whether the handout is to be a PDF: its name ends in ".pdf". */
static int sheet_is_pdf(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".pdf") == 0;
}

/* Page `page` (1-based) of the handout whose first page is path: path
 * itself, then path with "-2", "-3", … before its ".png". malloc'd; NULL
 * when memory runs out. */
static char *sheet_page_path(const char *path, int page)
{
    if (page == 1) return strdup(path);
    size_t n = strlen(path);
    size_t stem = n >= 4 && strcasecmp(path + n - 4, ".png") == 0 ? n - 4 : n;
    size_t len = n + 16;
    char *out = malloc(len);
    if (out) snprintf(out, len, "%.*s-%d%s", (int)stem, path, page, path + stem);
    return out;
}

/* Whether the regular file at path is a PDF attnviz wrote: "%PDF-" first,
 * and the document information cairo writes near the end naming attnviz as
 * its Creator (sheet_open). */
#define SHEET_PDF_TAIL_BYTES 65536
static int sheet_pdf_is_ours(const char *path)
{
    static const char creator[] = "/Creator (attnviz ";
    const size_t m = sizeof creator - 1;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return 0;
    struct stat st;
    char head[5];
    int ours = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
        memcmp(head, "%PDF-", sizeof head) == 0) {
        off_t tail = st.st_size < SHEET_PDF_TAIL_BYTES ? st.st_size : SHEET_PDF_TAIL_BYTES;
        char *buf = malloc((size_t)tail);
        ssize_t got = buf ? pread(fd, buf, (size_t)tail, st.st_size - tail) : -1;
        for (ssize_t i = 0; !ours && got >= (ssize_t)m && i <= got - (ssize_t)m; i++)
            ours = memcmp(buf + i, creator, m) == 0;
        free(buf);
    }
    close(fd);
    return ours;
}

/* A handout's first page, or its PDF, replaces only a handout attnviz
 * wrote: a page of one (never a step's PNG or a frame, which carry
 * STEP_KEY_STEP), or a PDF whose Creator is attnviz. A FIFO or a device
 * is written through. */
static int sheet_check_first(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    int pdf = sheet_is_pdf(path);
    if (pdf ? sheet_pdf_is_ours(path) : export__png_is_ours(path, STEP_KEY_STEP)) return 0;
    export__set_err(err, errlen, "%s: exists and is not %s; attnviz replaces only its own files", path,
                    pdf ? "a PDF handout attnviz wrote" : "a page of an attnviz handout");
    return -1;
}

/* Page `page` (≥ 2) of the handout at path as its folder and its name in
 * it, both malloc'd. 0, or -1 when memory runs out. */
static int sheet_page_entry(const char *path, int page, char **dir, char **name)
{
    char *file = sheet_page_path(path, page);
    const char *slash = file ? strrchr(file, '/') : NULL;
    *dir = !file ? NULL : !slash ? strdup(".") : strndup(file, slash == file ? 1 : (size_t)(slash - file));
    *name = file ? strdup(slash ? slash + 1 : file) : NULL;
    free(file);
    if (*dir && *name) return 0;
    free(*dir);
    free(*name);
    *dir = *name = NULL;
    return -1;
}

/* The page number of name as a later page of the handout whose first page
 * is named first ("notes.png": "notes-2.png" is 2), or 0. */
static int sheet_page_number(const char *first, const char *name)
{
    size_t n = strlen(first);
    size_t stem = n >= 4 && strcasecmp(first + n - 4, ".png") == 0 ? n - 4 : n;
    if (strncmp(name, first, stem) != 0 || name[stem] != '-' || name[stem + 1] < '1' || name[stem + 1] > '9') return 0;
    const char *end;
    long k = parse_digits(name + stem + 1, &end);
    return k >= 2 && k <= EXPORT_MAX_FRAMES && strcmp(end, first + stem) == 0 ? (int)k : 0;
}

/* For records: a page of the handout whose first page is named *user (the
 * first page included). */
static int sheet_accept_page(const char *name, void *user)
{
    return strcmp(name, user) == 0 || sheet_page_number(user, name) > 0;
}

/* For temporaries: a page, or the journal, of that handout. */
static int sheet_accept_name(const char *name, void *user)
{
    size_t n = strlen(user);
    return sheet_accept_page(name, user) ||
           (name[0] == '.' && strncmp(name + 1, user, n) == 0 && strcmp(name + 1 + n, EXPORT_JOURNAL_MARKER) == 0);
}

/* Before drawing: a refusal when a page's name, or its temporary's, is
 * too long for the file system, or when a later page's name or the
 * handout's journal is taken by something that is not a regular file (a
 * FIFO, a device, a link), which is never opened or replaced. The pages
 * checked are one a step; a caption continued on the next pages makes
 * more, whose names are never too long when the journal's is not: the
 * journal's name (".NAME.attnviz-journal", written through its own
 * temporary) takes as many bytes as page 9999999999999999's. */
static int sheet_check_pages(Run *r, const char *path, char *err, size_t errlen)
{
    int pages = sheet_is_pdf(path) ? 1 : r->n_selected;
    for (int page = 1; page <= pages; page++) {
        char *file = sheet_page_path(path, page), *dir = NULL, *name = NULL;
        int rc = -1;
        if (!file || sheet_page_entry(path, page, &dir, &name) != 0)
            export__set_err(err, errlen, "out of memory");
        else if (export__check_length(file, err, errlen) == 0)
            rc = 0;
        if (rc == 0 && page == 1) rc = export_check_not_link(path, err, errlen);
        if (rc == 0 && page == 1) rc = sheet_check_first(path, err, errlen);
        if (rc == 0 && page > 1) rc = export__check_entry(dir, name, err, errlen);
        if (rc == 0 && page == 1 && !sheet_is_pdf(path)) { /* the journal, the longest name of all */
            char *journal = export__journal_path(dir, name), *msg = malloc(EXPORT_ERR_MAX);
            if (!journal || !msg) {
                export__set_err(err, errlen, "out of memory");
                rc = -1;
            } else if (export__check_length(journal, msg, EXPORT_ERR_MAX) != 0) {
                export__set_err(err, errlen,
                                "%s: too long a name for a PNG handout, which keeps a journal beside it: %s", path,
                                msg);
                rc = -1;
            } else {
                rc = export__check_journal(journal, err, errlen);
            }
            free(journal);
            free(msg);
        }
        free(file);
        free(dir);
        free(name);
        if (rc != 0) {
            r->res->usage_error = 1;
            return -1;
        }
    }
    return 0;
}

/* Copies rows × w pixels from src into the page at (x, y), clipped to it. */
static void sheet_blit(unsigned char *page, const unsigned char *src, size_t src_pitch, int w, int rows, int x, int y)
{
    size_t pitch = (size_t)SHEET_PAGE_W * 4;
    for (int i = 0; i < rows && y + i < SHEET_PAGE_H; i++)
        if (y + i >= 0)
            memcpy(page + (size_t)(y + i) * pitch + (size_t)x * 4, src + (size_t)i * src_pitch, (size_t)w * 4);
}

static void sheet_clear(unsigned char *page, SDL_Color bg)
{
    for (size_t i = 0; i < (size_t)SHEET_PAGE_W * SHEET_PAGE_H; i++) {
        page[4 * i] = bg.b;
        page[4 * i + 1] = bg.g;
        page[4 * i + 2] = bg.r;
        page[4 * i + 3] = 255;
    }
}

/* The text chunks every PNG page carries: what it is, and its number
 * (SHEET_KEY_PAGE), by which a page is told from a step's PNG; the first
 * page also lists the later pages as written (SHEET_KEY_PAGES: a line
 * "BYTES SHA256 NAME" each), the record by which an export removes them
 * once a shorter handout replaces them. */
#define SHEET_KEY_PAGE  "attnviz:handout-page"
#define SHEET_KEY_PAGES "attnviz:handout-pages"

/* Encodes page `page` (px, the whole page) into out, its first page's
 * record of the later pages `pages_record` (NULL on later pages). */
static int sheet_encode_page(Run *r, const char *path, int page, const unsigned char *px, const char *pages_record,
                             ExportBuffer *out, char *err, size_t errlen)
{
    char title[LESSON_MAX_TEXT_BYTES + 1], software[64], number[16], msg[384];
    lesson_text_copy(title, sizeof title, lesson_text(&r->lesson->title, r->opt->lang));
    snprintf(software, sizeof software, "attnviz %s", ATTNVIZ_VERSION);
    snprintf(number, sizeof number, "%d", page);
    /* Software and the page's markers first: export_dir.c looks for them
     * in a page's first bytes */
    ExportPngText text[6];
    int n_text = 0;
    text[n_text++] = (ExportPngText){"Software", software};
    text[n_text++] = (ExportPngText){SHEET_KEY_PAGE, number};
    if (pages_record) text[n_text++] = (ExportPngText){SHEET_KEY_PAGES, pages_record};
    text[n_text++] = (ExportPngText){"Title", title};
    text[n_text++] = (ExportPngText){"attnviz:lesson", r->lesson->id ? r->lesson->id : ""};
    text[n_text++] = (ExportPngText){"attnviz:lang", lesson_lang_names[r->opt->lang]};
    ExportPngOptions png = r->opt->png; /* printed at A4: the page's DPI */
    png.px_per_metre = export_png_px_per_metre(SHEET_DPI);
    ExportPngStream *s = export_png_stream_begin(SHEET_PAGE_W, SHEET_PAGE_H, EXPORT_PIXELS_BGRX32, text, n_text, &png,
                                                 out, msg, sizeof msg);
    if (!s || export_png_stream_rows(s, px, (size_t)SHEET_PAGE_W * 4, SHEET_PAGE_H, msg, sizeof msg) != 0 ||
        export_png_stream_end(s, msg, sizeof msg) != 0) {
        char *file = sheet_page_path(path, page);
        export__set_err(err, errlen, "%s: %s", file ? file : path, msg);
        free(file);
        return -1;
    }
    return 0;
}

/* The handout being written. PNG pages: each page's pixels, figures and
 * captions alike. A PDF: the same pixels at the same places (export_sheet
 * lays a page out once for both), as images, with each caption's text
 * under its image in the fonts render draws it with, so a reader selects,
 * searches and copies the narration. */
typedef struct Sheet {
    Run *r;
    const char *path;
    RenderCtx *rc; /* the figure's renderer: its font chain and text runs */
    SDL_Renderer *sdl;
    unsigned char *page;  /* (SHEET_PAGE_H, SHEET_PAGE_W · 4) BGRX, PNG pages only */
    unsigned char *first; /* the same of the first page, encoded last (it lists the others) */
    ExportBuffer *later;  /* (pages - 1) the later PNG pages, encoded */
    int pages;            /* pages finished */
    SDL_Color bg;
    int pdf;
#ifdef ATTNVIZ_HAVE_CAIRO
    cairo_surface_t *surface;
    cairo_t *cr;
    cairo_font_face_t *faces[RENDER_MAX_FONTS]; /* the chain's fonts, opened by cairo on first use */
    ExportBuffer out;
#endif
} Sheet;

#ifdef ATTNVIZ_HAVE_CAIRO
static cairo_status_t pdf_write(void *closure, const unsigned char *data, unsigned int len)
{
    return export_buffer_append(closure, data, len) == 0 ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* Font i of render's chain as a cairo face: the same file and face index. */
static cairo_font_face_t *pdf_face(Sheet *sh, int i)
{
    if (i < 0 || i >= RENDER_MAX_FONTS) return NULL;
    if (sh->faces[i]) return sh->faces[i];
    char file[PATH_MAX];
    long index = render_font_file(sh->rc, i, file, sizeof file);
    FcPattern *pat = index < 0 ? NULL : FcPatternCreate();
    if (!pat) return NULL;
    FcPatternAddString(pat, FC_FILE, (const FcChar8 *)file);
    FcPatternAddInteger(pat, FC_INDEX, (int)index);
    cairo_font_face_t *face = cairo_ft_font_face_create_for_pattern(pat);
    FcPatternDestroy(pat);
    if (cairo_font_face_status(face) != CAIRO_STATUS_SUCCESS) {
        /* the text stays in the PDF, in fontconfig's sans-serif */
        cairo_font_face_destroy(face);
        face = cairo_toy_font_face_create("sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    }
    return sh->faces[i] = face;
}

/* One figure's pixels as an image at (x, y), in page pixels. */
static void pdf_figure(Sheet *sh, unsigned char *px, size_t pitch, int w, int h, int x, int y)
{
    cairo_surface_t *img = cairo_image_surface_create_for_data(px, CAIRO_FORMAT_RGB24, w, h, (int)pitch);
    cairo_save(sh->cr);
    cairo_set_source_surface(sh->cr, img, x, y);
    cairo_paint(sh->cr);
    cairo_restore(sh->cr);
    /* the PDF keeps the pixels from here: the buffer is drawn into next */
    cairo_surface_finish(img);
    cairo_surface_destroy(img);
}

/* The text of the caption's lines [a, b) with the caption's top at (x, y),
 * under the caption's pixels, which
 * sheet_caption paints over it: each line run by run with the font render
 * uses for it, on render's baseline and at its x, so a reader selects and
 * searches the words where they are seen. Hidden rather than shown: in
 * cairo 1.16's subset of Noto Sans CJK SC, as poppler (pdftoppm, Evince)
 * draws it, some glyphs are blank (如, U+5982), and a handout must not
 * print with holes. */
static void pdf_caption_text(Sheet *sh, const Caption *c, int a, int b, int x, int y)
{
    cairo_t *cr = sh->cr;
    cairo_save(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    for (int i = a; i < b; i++) {
        const CaptionLine *ln = &c->lines[i];
        char text[sizeof c->narration];
        snprintf(text, sizeof text, "%.*s", (int)ln->len, ln->text);
        RenderTextRun runs[64];
        int asc = 0, n = render_text_runs(sh->rc, text, ln->size, runs, 64, &asc);
        for (int k = 0; k < n; k++) {
            cairo_font_face_t *face = pdf_face(sh, runs[k].font);
            if (!face) continue;
            cairo_set_font_face(cr, face);
            cairo_set_font_size(cr, ln->size);
            char run[sizeof text];
            snprintf(run, sizeof run, "%.*s", (int)runs[k].len, text + runs[k].start);
            cairo_move_to(cr, x + ln->x + runs[k].x, y + ln->y + asc);
            cairo_show_text(cr, run);
        }
    }
    cairo_restore(cr);
}
#endif

/* Starts the handout: the page buffer, or the PDF. */
/* A blank page to draw the next steps on, in sh->page. */
static int sheet_new_page(Sheet *sh, char *err, size_t errlen)
{
    sh->page = malloc((size_t)SHEET_PAGE_W * SHEET_PAGE_H * 4);
    if (!sh->page) {
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    sheet_clear(sh->page, sh->bg);
    return 0;
}

static int sheet_open(Sheet *sh, Run *r, const char *path, RenderCtx *rc, SDL_Renderer *sdl, char *err, size_t errlen)
{
    memset(sh, 0, sizeof *sh);
    sh->r = r;
    sh->path = path;
    sh->rc = rc;
    sh->sdl = sdl;
    sh->bg = (SDL_Color){255, 255, 255, 255};
    sh->pdf = sheet_is_pdf(path);
#ifdef ATTNVIZ_HAVE_CAIRO
    if (sh->pdf) {
        sh->surface = cairo_pdf_surface_create_for_stream(pdf_write, &sh->out, SHEET_PAGE_W * 72.0 / SHEET_DPI,
                                                          SHEET_PAGE_H * 72.0 / SHEET_DPI);
        char title[LESSON_MAX_TEXT_BYTES + 1], software[64];
        lesson_text_copy(title, sizeof title, lesson_text(&r->lesson->title, r->opt->lang));
        snprintf(software, sizeof software, "attnviz %s", ATTNVIZ_VERSION);
        cairo_pdf_surface_set_metadata(sh->surface, CAIRO_PDF_METADATA_TITLE, title);
        cairo_pdf_surface_set_metadata(sh->surface, CAIRO_PDF_METADATA_CREATOR, software);
        sh->cr = cairo_create(sh->surface);
        /* page pixels as the unit: SHEET_DPI of them to the inch */
        cairo_scale(sh->cr, 72.0 / SHEET_DPI, 72.0 / SHEET_DPI);
        if (cairo_status(sh->cr) != CAIRO_STATUS_SUCCESS) {
            export__set_err(err, errlen, "%s: %s", path, cairo_status_to_string(cairo_status(sh->cr)));
            return -1;
        }
        return 0;
    }
#else
    if (sh->pdf) {
        export__set_err(err, errlen, "%s: this attnviz was built without cairo, which writes PDFs; use FILE.png", path);
        r->res->usage_error = 1;
        return -1;
    }
#endif
    return sheet_new_page(sh, err, errlen);
}

/* A step's entry in the PDF's outline (its bookmarks), pointing at (x, y)
 * of the current page: what the caption's first line says. PNG pages have
 * no outline. */
static void sheet_mark(Sheet *sh, const char *title, int x, int y)
{
#ifdef ATTNVIZ_HAVE_CAIRO
    if (sh->pdf) {
        char dest[96];
        snprintf(dest, sizeof dest, "page=%d pos=[%.1f %.1f]", sh->pages + 1, x * 72.0 / SHEET_DPI,
                 y * 72.0 / SHEET_DPI);
        cairo_pdf_surface_add_outline(sh->surface, CAIRO_PDF_OUTLINE_ROOT, title, dest, 0);
    }
#else
    (void)sh;
    (void)title;
    (void)x;
    (void)y;
#endif
}

/* A step's figure, fw × fh pixels at px, at (x, y) of the page. */
static void sheet_figure(Sheet *sh, unsigned char *px, size_t pitch, int fw, int fh, int x, int y)
{
#ifdef ATTNVIZ_HAVE_CAIRO
    if (sh->pdf) {
        pdf_figure(sh, px, pitch, fw, fh, x, y);
        return;
    }
#endif
    sheet_blit(sh->page, px, pitch, fw, fh, x, y);
}

/* The caption's lines [a, b) at (x, y) of the page (caption_top(a) there),
 * drawn a band of px's rows (fh of them) at a time; in the PDF over their
 * text. */
static int sheet_caption(Sheet *sh, const Caption *cap, int a, int b, unsigned char *px, size_t pitch, int fw, int fh,
                         int x, int y, char *err, size_t errlen)
{
    int top = caption_top(cap, a), bottom = caption_bottom(cap, b);
#ifdef ATTNVIZ_HAVE_CAIRO
    if (sh->pdf) pdf_caption_text(sh, cap, a, b, x, y - top);
#endif
    for (int y0 = top; y0 < bottom; y0 += fh) {
        int rows = bottom - y0 < fh ? bottom - y0 : fh;
        caption_draw(cap, sh->rc, sh->sdl, fw, y0, sh->bg, a, b);
        SDL_Rect area = {0, 0, fw, rows};
        if (SDL_RenderReadPixels(sh->sdl, &area, SDL_PIXELFORMAT_XRGB8888, px, (int)pitch) != 0) {
            export__set_err(err, errlen, "reading a caption's pixels: %s", SDL_GetError());
            return -1;
        }
        sheet_figure(sh, px, pitch, fw, rows, x, y + y0 - top);
    }
    return 0;
}

/* Finishes the current page: the next PNG page, kept in memory until the
 * handout is whole, or the next page of the PDF. */
static int sheet_page_done(Sheet *sh, char *err, size_t errlen)
{
    sh->pages++;
#ifdef ATTNVIZ_HAVE_CAIRO
    if (sh->pdf) {
        cairo_show_page(sh->cr);
        if (cairo_status(sh->cr) != CAIRO_STATUS_SUCCESS) {
            export__set_err(err, errlen, "%s: %s", sh->path, cairo_status_to_string(cairo_status(sh->cr)));
            return -1;
        }
        return 0;
    }
#endif
    if (sh->pages == 1) { /* its pixels kept: it is encoded last */
        sh->first = sh->page;
        return sheet_new_page(sh, err, errlen);
    }
    ExportBuffer *grown = realloc(sh->later, sizeof *grown * (size_t)(sh->pages - 1));
    if (!grown) {
        sh->pages--;
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    sh->later = grown;
    memset(&sh->later[sh->pages - 2], 0, sizeof *grown);
    int rc = sheet_encode_page(sh->r, sh->path, sh->pages, sh->page, NULL, &sh->later[sh->pages - 2], err, errlen);
    sheet_clear(sh->page, sh->bg);
    return rc;
}

/* Writes the PNG handout, whole, over the earlier one at the same name: its
 * later pages, then the first page with its record of them; then what the
 * earlier handout's record (or the journal of one that was not finished)
 * lists after them goes, each page only while it is exactly what was
 * recorded and carries its page number. Nothing is written before the
 * handout is drawn whole; while it is written, the folder is this
 * process's alone and the journal (.NAME.attnviz-journal) lists every page
 * of both handouts, so that the next export finishes what a killed one
 * began. */
static int sheet_commit(Sheet *sh, char *err, size_t errlen)
{
    Run *r = sh->r;
    const char *path = sh->path;
    int pages = sh->pages;
    ExportBuffer first = {0};
    struct stat st;
    /* a device or a FIFO the user named takes one page, written directly */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (pages > 1) {
            export__set_err(err, errlen, "%s: is %s, which takes one page; this handout has %d, give FILE.png", path,
                            lesson_file_kind(st.st_mode), pages);
            r->res->usage_error = 1;
            return -1;
        }
        int rc = sheet_encode_page(r, path, 1, sh->first, "", &first, err, errlen);
        if (rc == 0) rc = export_write_file(path, first.data, first.len, err, errlen);
        if (rc == 0) r->res->bytes += first.len;
        export_buffer_free(&first);
        return rc;
    }
    char *dir = NULL, *name = NULL, *journal = NULL, *record = NULL;
    const char *slash = strrchr(path, '/');
    dir = !slash ? strdup(".") : strndup(path, slash == path ? 1 : (size_t)(slash - path));
    name = strdup(slash ? slash + 1 : path);
    journal = dir && name ? export__journal_path(dir, name) : NULL;
    if (!journal) {
        free(dir);
        free(name);
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    int lock = export__lock_folder(dir, err, errlen), rc = lock < 0 ? -1 : 0;
    ExportRecords earlier = {0}, now = {0};
    if (rc == 0) {
        record = export__png_text_of(path, SHEET_KEY_PAGES);
        if (record) export__records_parse(record, &earlier, sheet_accept_page, name);
        export__journal_read(journal, &earlier, sheet_accept_page, name);
    }
    /* 1. A later page's name taken by anything but a page of attnviz's: refused. */
    for (int k = 2; rc == 0 && k <= pages; k++) {
        char *pdir, *pname;
        rc = sheet_page_entry(path, k, &pdir, &pname);
        if (rc == 0) {
            char hex[EXPORT_SHA256_HEX];
            export__sha256(sh->later[k - 2].data, sh->later[k - 2].len, hex);
            rc = export__records_add(&now, pname, (long long)sh->later[k - 2].len, hex);
            if (rc != 0) export__set_err(err, errlen, "out of memory");
            /* a page of attnviz's (an older attnviz's too): not a step's PNG or a frame */
            if (rc == 0 &&
                export__check_replaceable(pdir, pname, STEP_KEY_STEP, "a page of an attnviz handout", err, errlen) != 0)
                r->res->usage_error = 1, rc = -1;
            free(pdir);
            free(pname);
        } else {
            export__set_err(err, errlen, "out of memory");
        }
    }
    /* 2. The journal: both handouts' pages. */
    ExportJournal j = {0};
    int journaled = 0;
    if (rc == 0) {
        ExportRecords all = {0};
        for (int i = 0; rc == 0 && i < earlier.n + now.n; i++) {
            const ExportRecord *e = i < earlier.n ? &earlier.rec[i] : &now.rec[i - earlier.n];
            rc = export__records_add(&all, e->name, e->bytes, e->sha256);
        }
        if (rc != 0) export__set_err(err, errlen, "out of memory");
        if (rc == 0) rc = export__journal_begin(&j, journal, &all, err, errlen);
        journaled = rc == 0;
        export__records_free(&all);
    }
    /* 3. The later pages, then the first with its record of them. */
    for (int k = 2; rc == 0 && k <= pages; k++) {
        char *file = sheet_page_path(path, k);
        rc = file ? export_write_owned_file(file, sh->later[k - 2].data, sh->later[k - 2].len, err, errlen) : -1;
        if (!file) export__set_err(err, errlen, "out of memory");
        if (rc == 0) r->res->bytes += sh->later[k - 2].len;
        free(file);
    }
    char *listing = rc == 0 ? export__records_text(&now, NULL) : NULL;
    if (rc == 0 && !listing) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) rc = sheet_encode_page(r, path, 1, sh->first, listing, &first, err, errlen);
    if (rc == 0) rc = export_write_file(path, first.data, first.len, err, errlen);
    if (rc == 0) r->res->bytes += first.len;
    /* 4. What the earlier handout had after these pages. */
    for (int i = 0; rc == 0 && i < earlier.n; i++) {
        int k = sheet_page_number(name, earlier.rec[i].name);
        char number[16];
        snprintf(number, sizeof number, "%d", k);
        if (k > pages && export__remove_recorded(dir, &earlier.rec[i], SHEET_KEY_PAGE, number)) r->res->pages_removed++;
    }
    if (rc == 0) export__remove_stale_temporaries(dir, &r->started, sheet_accept_name, name);
    if (journaled) export__journal_end(&j, rc == 0);
    if (lock >= 0) close(lock);
    export__records_free(&earlier);
    export__records_free(&now);
    export_buffer_free(&first);
    free(listing);
    free(record);
    free(journal);
    free(dir);
    free(name);
    return rc;
}

/* Ends the handout: with ok, the PDF or the PNG pages are written; either
 * way everything is released. */
static int sheet_close(Sheet *sh, int ok, char *err, size_t errlen)
{
    int rc = ok ? 0 : -1;
#ifdef ATTNVIZ_HAVE_CAIRO
    if (sh->cr) cairo_destroy(sh->cr);
    if (sh->surface) {
        cairo_surface_finish(sh->surface);
        if (rc == 0 && cairo_surface_status(sh->surface) != CAIRO_STATUS_SUCCESS) {
            export__set_err(err, errlen, "%s: %s", sh->path, cairo_status_to_string(cairo_surface_status(sh->surface)));
            rc = -1;
        }
        if (rc == 0) rc = export_write_file(sh->path, sh->out.data, sh->out.len, err, errlen);
        if (rc == 0) sh->r->res->bytes += sh->out.len;
        cairo_surface_destroy(sh->surface);
    }
    for (int i = 0; i < RENDER_MAX_FONTS; i++)
        if (sh->faces[i]) cairo_font_face_destroy(sh->faces[i]);
    export_buffer_free(&sh->out);
#else
    (void)err;
    (void)errlen;
#endif
    if (rc == 0 && !sh->pdf && sh->pages > 0) rc = sheet_commit(sh, err, errlen);
    for (int i = 0; i < sh->pages - 1 && sh->later; i++) export_buffer_free(&sh->later[i]);
    free(sh->later);
    free(sh->first);
    free(sh->page);
    memset(sh, 0, sizeof *sh);
    return rc;
}

/* Whether a page of the handout at path (in the export's folder dir) has
 * a name the export into dir writes itself: 0, or -1 with err set. */
static int sheet_names_clash(Run *r, const char *path, const char *dir, char *err, size_t errlen)
{
    int pages = sheet_is_pdf(path) ? 1 : r->n_selected;
    for (int page = 1; page <= pages; page++) {
        char *pdir = NULL, *name = NULL;
        int clash = -1;
        if (page == 1) {
            const char *slash = strrchr(path, '/');
            name = strdup(slash ? slash + 1 : path);
        } else if (sheet_page_entry(path, page, &pdir, &name) != 0) {
            name = NULL;
        }
        if (name) clash = export__accept_folder_name(name, NULL);
        if (clash < 0)
            export__set_err(err, errlen, "out of memory");
        else if (clash > 0)
            export__set_err(err, errlen,
                            "%s: page %d of the handout would be %s, a name the export into %s writes itself; "
                            "give the handout another name",
                            path, page, name, dir);
        free(pdir);
        free(name);
        if (clash != 0) return -1;
    }
    return 0;
}

static int export_sheet(Run *r, const char *path, char *err, size_t errlen)
{
    if (sheet_check_pages(r, path, err, errlen) != 0) return -1;
    const AttnTrace *t = r->trace;
    View *v = &r->view;
    int fw = SHEET_PAGE_W - 2 * SHEET_MARGIN;
    int fh = (int)((long)fw * r->opt->height / r->opt->width);
    if (fh > SHEET_PAGE_H / 2) fh = SHEET_PAGE_H / 2;
    /* the caption at the sizes of 10 and 8 points */
    CaptionSizes cs = {10 * SHEET_DPI / 72, 8 * SHEET_DPI / 72};
    Headless fr = {0};
    Sheet sh = {0};
    int opened = 0;
    Caption *cap = calloc(1, sizeof *cap);
    size_t pitch = (size_t)fw * 4;
    unsigned char *px = malloc(pitch * (size_t)fh);
    int rc = 0;
    if (!cap || !px) {
        export__set_err(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) rc = headless_init(&fr, fw, fh, r->opt, err, errlen);
    if (rc == 0) {
        rc = sheet_open(&sh, r, path, fr.rc, fr.sdl, err, errlen);
        opened = 1;
    }
    int y = SHEET_MARGIN, on_page = 0, done_steps = 0;
    ViewOutput output = v->output;
    v->output = VIEW_OUTPUT_FIGURE;
    if (rc == 0) report(r, NULL, 0, 0, r->n_selected);
    for (int i = 0; i < t->n_steps && rc == 0; i++) {
        if (!r->selected[i]) continue;
        if (r->opt->cancel && *r->opt->cancel) {
            export__set_err(err, errlen, "%s: interrupted after %d of %d steps", path, done_steps, r->n_selected);
            rc = -1;
            break;
        }
        view_goto(v, i);
        view_finish(v);
        if (caption_layout(cap, v, fr.rc, cs, fw) != 0) {
            export__set_err(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        /* a step starts a new page unless it fits whole on this one */
        const int bottom = SHEET_PAGE_H - SHEET_MARGIN;
        if (on_page && y + fh + cap->height > bottom) {
            if (sheet_page_done(&sh, err, errlen) != 0) {
                rc = -1;
                break;
            }
            y = SHEET_MARGIN;
            on_page = 0;
        }
        double t0 = attn_clock_seconds();
        rc = export_draw_view(fr.rc, fr.sdl, v, fw, fh, px, pitch, err, errlen);
        r->res->draw_seconds += attn_clock_seconds() - t0;
        if (rc != 0) break;
        sheet_mark(&sh, cap->header, SHEET_MARGIN, y);
        sheet_figure(&sh, px, pitch, fw, fh, SHEET_MARGIN, y);
        y += fh;
        /* the caption, as many lines as the page takes, the rest continued
         * at the top of the next pages */
        for (int a = 0; rc == 0;) {
            int b = a;
            while (b < cap->n_lines && y + caption_bottom(cap, b + 1) - caption_top(cap, a) <= bottom) b++;
            if (b == a) b = a + 1; /* a line taller than what is left: drawn, clipped */
            rc = sheet_caption(&sh, cap, a, b, px, pitch, fw, fh, SHEET_MARGIN, y, err, errlen);
            y += caption_bottom(cap, b) - caption_top(cap, a);
            if (b >= cap->n_lines || rc != 0) break;
            if (sheet_page_done(&sh, err, errlen) != 0) rc = -1;
            y = SHEET_MARGIN;
            a = b;
        }
        if (rc != 0) break;
        y += SHEET_GAP;
        on_page++;
        done_steps++;
        report(r, NULL, done_steps, done_steps, r->n_selected);
    }
    if (rc == 0 && on_page) rc = sheet_page_done(&sh, err, errlen);
    if (rc == 0) {
        r->res->pages = sh.pages;
        if (!r->res->steps) r->res->steps = done_steps;
    }
    if (opened) rc = sheet_close(&sh, rc == 0, err, errlen);
    v->output = output;
    headless_free(&fr);
    free(px);
    if (cap) caption_free(cap);
    free(cap);
    return rc;
}

int export_lesson(const Lesson *lesson, const char *dir, const ExportOptions *opt, ExportResult *res, char *err,
                  size_t errlen)
{
    ExportResult local;
    if (!res) res = &local;
    memset(res, 0, sizeof *res);
    Run r;
    memset(&r, 0, sizeof r);
    r.lesson = lesson;
    r.opt = opt;
    r.res = res;
    r.t0 = attn_clock_seconds();
    clock_gettime(CLOCK_REALTIME, &r.started);
    res->usage_error = 1; /* until the options are checked */

    /* 1. Options. */
    if (opt->width < EXPORT_MIN_SIDE || opt->height < EXPORT_MIN_SIDE || opt->width > EXPORT_MAX_SIDE ||
        opt->height > EXPORT_MAX_SIDE) {
        export__set_err(err, errlen, "--size: each side must be %d..%d pixels, found %dx%d", EXPORT_MIN_SIDE,
                        EXPORT_MAX_SIDE, opt->width, opt->height);
        return -1;
    }
    if (!(opt->scale >= 0.25f && opt->scale <= 8.0f)) {
        export__set_err(err, errlen, "--scale: expected a number from 0.25 to 8, found %g", (double)opt->scale);
        return -1;
    }
    r.width = (int)lround(opt->width * (double)opt->scale);
    r.height = (int)lround(opt->height * (double)opt->scale);
    if (r.width < EXPORT_MIN_SIDE || r.height < EXPORT_MIN_SIDE || r.width > EXPORT_MAX_SIDE ||
        r.height > EXPORT_MAX_SIDE) {
        export__set_err(err, errlen, "--size × --scale: each side must be %d..%d pixels, found %dx%d", EXPORT_MIN_SIDE,
                        EXPORT_MAX_SIDE, r.width, r.height);
        return -1;
    }
    if (opt->frames && !(opt->fps > 0 && opt->fps <= 240)) {
        export__set_err(err, errlen, "--fps: expected a number of frames per second from 1 to 240, found %g", opt->fps);
        return -1;
    }
    if (opt->frames && !(opt->speed >= VIEW_SPEED_MIN && opt->speed <= VIEW_SPEED_MAX)) {
        export__set_err(err, errlen, "--speed: expected %g..%g, found %g", VIEW_SPEED_MIN, VIEW_SPEED_MAX, opt->speed);
        return -1;
    }
    if (opt->frames && !(opt->dwell >= 0 && opt->dwell <= 60)) {
        export__set_err(err, errlen, "--dwell: expected 0..60 seconds, found %g", opt->dwell);
        return -1;
    }
    if ((unsigned)opt->lang >= LESSON_LANG_COUNT || (unsigned)opt->theme >= VIEW_THEME_COUNT ||
        (unsigned)opt->mode >= VIEW_MODE_COUNT) {
        export__set_err(err, errlen, "export options: language, theme or view out of range");
        return -1;
    }
    int write_files = opt->write_steps && dir;
    if (!write_files && !opt->sheet) {
        export__set_err(err, errlen, "nothing to export: give an output folder (-o DIR) or --sheet FILE.png");
        return -1;
    }

    /* 2. The view: both traces of the lesson, the language, theme, mode, head. */
    char msg[512];
    if (view_init(&r.view, lesson, msg, sizeof msg) != 0) { /* msg names the lesson's file already */
        export__set_err(err, errlen, "%s", msg);
        return -1;
    }
    r.view_ok = 1;
    int rc = -1;
    r.view.lang = opt->lang;
    r.view.theme = opt->theme;
    if (opt->mode == VIEW_COMPARE && view_compare_refused(&r.view, lesson->path, msg, sizeof msg)) {
        export__set_err(err, errlen, "%s", msg);
        goto out;
    }
    view_set_mode(&r.view, opt->mode);
    if (r.view.mode != opt->mode) { /* no single-head trace: its numbers overflow */
        export__set_err(err, errlen, "--view %s: the single-head view of %s is unavailable: %s",
                        opt->mode == VIEW_SINGLE ? "single" : "compare", lesson->path ? lesson->path : "the lesson",
                        r.view.single_error);
        goto out;
    }
    view_set_text_scale(&r.view, opt->text_scale);
    view_set_big_text(&r.view, opt->big_text);
    r.view.output = opt->slides ? VIEW_OUTPUT_SLIDE : VIEW_OUTPUT_PAPER;
    view_set_weight_scale(&r.view, opt->weight_scale);
    view_set_notation(&r.view, opt->notation);
    if (opt->head > view_head_count(&r.view)) {
        export__set_err(err, errlen, "--head: the lesson has %d head%s, found %d", view_head_count(&r.view),
                        view_head_count(&r.view) == 1 ? "" : "s", opt->head);
        goto out;
    }
    if (opt->head > 0) view_set_head(&r.view, opt->head);
    r.trace = view_trace(&r.view);
    r.selected = calloc((size_t)r.trace->n_steps, 1);
    if (!r.selected) {
        export__set_err(err, errlen, "out of memory");
        res->usage_error = 0;
        goto out;
    }
    /* --head applies to the multi-head trace; single mode has one head */
    r.n_selected =
        export_select_steps(r.trace, opt->steps, opt->mode == VIEW_SINGLE ? 0 : opt->head, r.selected, err, errlen);
    if (r.n_selected < 0) goto out;

    /* 3. Where the files go: the folder (made when its parent exists). */
    res->usage_error = 0;
    if (write_files && ensure_dir(dir, &res->usage_error, err, errlen) != 0) goto out;
    res->usage_error = 0;

    /* The sheet's folder must exist already (it is not created) and take
     * files; a device such as /dev/full or /dev/stdout is written directly. */
    if (opt->sheet) {
        struct stat st;
        int exists = stat(opt->sheet, &st) == 0;
        if (exists && S_ISDIR(st.st_mode)) {
            export__set_err(err, errlen, "%s: is a folder, expected a file name for --sheet", opt->sheet);
            goto out;
        }
        if (!exists || S_ISREG(st.st_mode)) {
            char *folder = strdup(opt->sheet);
            if (!folder) {
                export__set_err(err, errlen, "out of memory");
                goto out;
            }
            char *slash = strrchr(folder, '/');
            if (slash == folder)
                slash[1] = 0;
            else if (slash)
                *slash = 0;
            else
                strcpy(folder, ".");
            struct stat fst, dst;
            int ok = stat(folder, &fst) == 0 && S_ISDIR(fst.st_mode);
            if (!ok) export__set_err(err, errlen, "%s: the folder %s does not exist", opt->sheet, folder);
            int prc = ok ? probe_dir(folder, err, errlen) : -1;
            free(folder);
            if (prc != 0) goto out;
            /* in the export's own folder, no page may take a name the
             * export writes (a step's PNG, a frame, index.json, its journal) */
            if (write_files && stat(dir, &dst) == 0 && dst.st_dev == fst.st_dev && dst.st_ino == fst.st_ino &&
                sheet_names_clash(&r, opt->sheet, dir, err, errlen) != 0) {
                res->usage_error = 1;
                goto out;
            }
        }
    }

    /* 4. Draw and write. */
    res->width = r.width;
    res->height = r.height;
    if (headless_init(&r.hl, r.width, r.height, opt, err, errlen) != 0) goto out;
    r.what = opt->frames ? "frames" : "steps";
    r.part_t0 = attn_clock_seconds();
    if (write_files && export_files(&r, dir, err, errlen) != 0) goto out;
    r.what = "sheet";
    r.part_t0 = attn_clock_seconds();
    if (opt->sheet && export_sheet(&r, opt->sheet, err, errlen) != 0) goto out;
    rc = 0;
out:
    headless_free(&r.hl);
    free(r.hashes);
    free(r.selected);
    if (r.view_ok) view_free(&r.view);
    res->seconds = attn_clock_seconds() - r.t0;
    return rc;
}

/* ---- the window's S key ---- */

int export_save_image(const ExportImage *img, const View *view, double dpi, const char *dir, char *path_out,
                      size_t path_len, char *err, size_t errlen)
{
    if (!dir) dir = EXPORT_SAVE_DIR;
    int usage = 0;
    if (ensure_dir(dir, &usage, err, errlen) != 0) return -1;
    const AttnTrace *t = view_trace(view);
    char name[64];
    export_step_filename(t, view->step, name, sizeof name);
    name[strlen(name) - 4] = 0; /* without ".png" */
    const char *id = view->lesson && view->lesson->id ? view->lesson->id : "attnviz";
    size_t file_len = strlen(id) + strlen(name) + 32;
    char *file = malloc(file_len), *path = NULL;
    if (!file) {
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    /* the first free name: ID-NNN-kind[-hH].png, then -2, -3, ... */
    for (int k = 1; k < 10000; k++) {
        if (k == 1)
            snprintf(file, file_len, "%s-%s.png", id, name);
        else
            snprintf(file, file_len, "%s-%s-%d.png", id, name, k);
        free(path);
        path = export__path_join(dir, file);
        if (!path) {
            free(file);
            export__set_err(err, errlen, "out of memory");
            return -1;
        }
        struct stat st;
        if (lstat(path, &st) != 0) break; /* a name nothing, not even a dangling link, holds */
    }
    free(file);
    /* refused rather than written under a name the caller cannot be told */
    if (export__check_length(path, err, errlen) != 0 || (path_out && strlen(path) >= path_len)) {
        if (path_out && strlen(path) >= path_len)
            export__set_err(err, errlen, "%s: the path is too long to report (%zu bytes, at most %zu)", dir,
                            strlen(path), path_len - 1);
        free(path);
        return -1;
    }
    StepText *st = malloc(sizeof *st);
    if (!st) {
        free(path);
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    step_text_fill(st, view);
    ExportPngOptions png;
    export_png_options_init(&png);
    png.px_per_metre = export_png_px_per_metre(dpi);
    int rc = export_png_write_file(path, img, st->chunks, TEXT_COUNT, &png, err, errlen);
    if (rc == 0 && path_out) snprintf(path_out, path_len, "%s", path);
    free(st);
    free(path);
    return rc;
}

int export_save_frame(SDL_Renderer *sdl, const View *view, const char *dir, char *path_out, size_t path_len, char *err,
                      size_t errlen)
{
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(sdl, &w, &h) != 0 || w < 1 || h < 1) {
        export__set_err(err, errlen, "saving the frame: no output size: %s", SDL_GetError());
        return -1;
    }
    size_t pitch = (size_t)w * 4;
    unsigned char *px = malloc(pitch * (size_t)h);
    if (!px) {
        export__set_err(err, errlen, "saving the frame: out of memory for %dx%d pixels", w, h);
        return -1;
    }
    if (SDL_RenderReadPixels(sdl, NULL, SDL_PIXELFORMAT_XRGB8888, px, (int)pitch) != 0) {
        export__set_err(err, errlen, "saving the frame: reading pixels: %s", SDL_GetError());
        free(px);
        return -1;
    }
    /* a high-DPI window's pixels per point, as --scale: EXPORT_SCREEN_DPI × it */
    int ww = 0, wh = 0;
    SDL_Window *win = SDL_RenderGetWindow(sdl);
    if (win) SDL_GetWindowSize(win, &ww, &wh);
    double scale = ww > 0 ? (double)w / ww : 1.0;
    ExportImage img = {px, w, h, pitch, EXPORT_PIXELS_BGRX32};
    int rc = export_save_image(&img, view, EXPORT_SCREEN_DPI * scale, dir, path_out, path_len, err, errlen);
    free(px);
    return rc;
}
