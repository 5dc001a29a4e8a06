/* test_layout.c: the layout of every step of every shipped lesson, read
 * from the boxes the renderer records (render_layout_boxes), not from
 * pixels: at 1024×768, 1280×720 and 1920×1080, in English and Chinese, in
 * the three themes, and in column notation with the row scale (projector),
 *   - no text or number is smaller than render_min_text() for that size;
 *   - every text and number stays inside its box (a number inside its cell,
 *     a label inside its panel, a line of narration inside the narration);
 *   - no text overlaps another text, a number or a matrix;
 *   - a matrix whose data is square is drawn square;
 *   - every matrix of a shipped lesson shows the number of every cell it
 *     draws: all of them, or the first and last rows and columns of an
 *     elided one (each kept end a box of at least ELIDE_KEEP rows and
 *     columns of tokens, ELIDE_KEEP_FEATURES of the other sides, as the
 *     data has them); only the lessons at the
 *     format's limits may show none, and then a note says why;
 *   - the narration and every token label are whole, never shortened with "…";
 *   - the matrices of a step span at least LAYOUT_SHARE of their panel's
 *     width or height: they fill the room the step does not otherwise need.
 * Frames are drawn onto a 1×1 surface: the layout is that of the full size,
 * the pixels are clipped away, which keeps the 8,000 frames cheap. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "render.h"
#include "render_internal.h"

#define LAYOUT_SHARE        0.6 /* of the panel's width or height, at least */
#define ELIDE_KEEP          2   /* tokens each kept end of an elided matrix has at least */
#define ELIDE_KEEP_FEATURES 1   /* the same, of a side that is not tokens (d_model's, a weight's) */
#define MAX_REPORTS         40  /* failures printed in full; all are counted */

typedef struct Size {
    int w, h;
} Size;

static const Size sizes[] = {{1024, 768}, {1280, 720}, {1920, 1080}};

static int n_fail, n_frames;

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static void report(const char *lesson, const View *v, Size sz, const char *fmt, ...)
{
    n_fail++;
    /* ATTNVIZ_LAYOUT_REPORTS=N: print the first N failures instead */
    const char *env = getenv("ATTNVIZ_LAYOUT_REPORTS");
    if (n_fail > (env ? atoi(env) : MAX_REPORTS)) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    static const char *const theme_name[] = {"light", "dark", "projector"};
    static const char *const mode_name[] = {"multi", "single", "compare"};
    fprintf(stderr, "%s %dx%d %s %s %s%s step %d (%s): %s\n", lesson, sz.w, sz.h, v->lang == LESSON_ZH ? "zh" : "en",
            theme_name[v->theme], mode_name[v->mode], v->notation == VIEW_NOTATION_COLUMN ? " column" : "", v->step,
            view_trace(v)->steps[v->step].name, msg);
}

/* The lessons at the format's limits (64 heads' concat, labels of 64 bytes):
 * their matrices may leave their numbers out, with the note that says so
 * (checked below). Every matrix of a shipped lesson shows its numbers. */
static int at_limits(const char *lesson)
{
    return strncmp(lesson, "limits-", 7) == 0;
}

static int inside(SDL_Rect a, SDL_Rect in, int tol)
{
    return a.x >= in.x - tol && a.y >= in.y - tol && a.x + a.w <= in.x + in.w + tol && a.y + a.h <= in.y + in.h + tol;
}

/* How many numbers of the frame's boxes b (n) lie inside r. */
static int numbers_inside(const LayoutBox *b, int n, SDL_Rect r)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += b[i].kind == LAYOUT_NUMBER && inside(b[i].rect, r, 0);
    return k;
}

/* Overlap deeper than tol pixels in both directions. */
static int overlap(SDL_Rect a, SDL_Rect b, int tol)
{
    int ox = (a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w) - (a.x > b.x ? a.x : b.x);
    int oy = (a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h) - (a.y > b.y ? a.y : b.y);
    return ox > tol && oy > tol;
}

static int by_x(const void *pa, const void *pb)
{
    const LayoutBox *a = *(const LayoutBox *const *)pa, *b = *(const LayoutBox *const *)pb;
    return (a->rect.x > b->rect.x) - (a->rect.x < b->rect.x);
}

static void check_frame(RenderCtx *rc, const char *lesson, const View *v, Size sz)
{
    int n;
    const LayoutBox *b = render_layout_boxes(rc, &n);
    int min = render_min_text(sz.w, sz.h);
    /* ATTNVIZ_LAYOUT_DUMP=STEP: every box of that step at 1024×768 on the projector theme */
    const char *dump = getenv("ATTNVIZ_LAYOUT_DUMP");
    if (dump && v->step == atoi(dump) && sz.w == 1024 && v->theme == VIEW_THEME_PROJECTOR)
        for (int i = 0; i < n; i++)
            fprintf(stderr, "box %d kind %d size %d (%d,%d %dx%d) in (%d,%d %dx%d) %s '%s'\n", i, b[i].kind, b[i].size,
                    b[i].rect.x, b[i].rect.y, b[i].rect.w, b[i].rect.h, b[i].within.x, b[i].within.y, b[i].within.w,
                    b[i].within.h, b[i].what, b[i].text);
    SDL_Rect frame = {0, 0, sz.w, sz.h};
    const LayoutBox **sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    assert_non_null(sorted);
    int ns = 0, n_text = 0, n_mat = 0;
    for (int i = 0; i < n; i++) {
        n_text += b[i].kind == LAYOUT_TEXT;
        n_mat += b[i].kind == LAYOUT_MATRIX;
        const LayoutBox *x = &b[i];
        if (x->kind == LAYOUT_TEXT || x->kind == LAYOUT_NUMBER) {
            if (x->size < min)
                report(lesson, v, sz, "%s '%s' at %d px, under the minimum %d px", x->what, x->text, x->size, min);
            if (!inside(x->rect, x->within, 1) || !inside(x->rect, frame, 0))
                report(lesson, v, sz, "%s '%s' at (%d,%d %dx%d) leaves its box (%d,%d %dx%d)", x->what, x->text,
                       x->rect.x, x->rect.y, x->rect.w, x->rect.h, x->within.x, x->within.y, x->within.w, x->within.h);
        }
        if (x->kind == LAYOUT_MATRIX && x->rows == x->cols && abs(x->rect.w - x->rect.h) > 1)
            report(lesson, v, sz, "a %d×%d matrix drawn %d×%d px, not square", x->rows, x->cols, x->rect.w, x->rect.h);
        if (x->kind != LAYOUT_AREA) sorted[ns++] = x;
    }
    if (n_text < 5 || n_mat < 1) report(lesson, v, sz, "only %d texts and %d matrices recorded", n_text, n_mat);
    /* overlaps: sweep along x */
    qsort(sorted, (size_t)ns, sizeof *sorted, by_x);
    for (int i = 0; i < ns; i++)
        for (int j = i + 1; j < ns && sorted[j]->rect.x < sorted[i]->rect.x + sorted[i]->rect.w; j++) {
            const LayoutBox *p = sorted[i], *q = sorted[j];
            if (p->kind == LAYOUT_MATRIX && q->kind == LAYOUT_MATRIX) continue;
            /* a number lies on its matrix; numbers keep to their cells (checked above) */
            if ((p->kind == LAYOUT_NUMBER) != (q->kind == LAYOUT_NUMBER) &&
                (p->kind == LAYOUT_MATRIX || q->kind == LAYOUT_MATRIX))
                continue;
            if (p->kind == LAYOUT_NUMBER && q->kind == LAYOUT_NUMBER) continue;
            if (overlap(p->rect, q->rect, 1))
                report(lesson, v, sz, "%s '%s' (%d,%d %dx%d) overlaps %s '%s' (%d,%d %dx%d)", p->what, p->text,
                       p->rect.x, p->rect.y, p->rect.w, p->rect.h, q->what, q->text, q->rect.x, q->rect.y, q->rect.w,
                       q->rect.h);
        }
    /* every cell drawn shows its number: all of a matrix, or the kept
     * corners of an elided one; but at the format's limits */
    for (int i = 0; i < n; i++) {
        if (b[i].kind != LAYOUT_MATRIX || at_limits(lesson)) continue;
        int k = numbers_inside(b, n, b[i].rect);
        if (k < b[i].vis_rows * b[i].vis_cols)
            report(lesson, v, sz, "a %d×%d %s drawn as %d×%d cells shows %d numbers", b[i].rows, b[i].cols,
                   strcmp(b[i].what, "result") == 0 ? "result" : "operand", b[i].vis_rows, b[i].vis_cols, k);
        int least_r = b[i].token_rows ? ELIDE_KEEP : ELIDE_KEEP_FEATURES;
        int least_c = b[i].token_cols ? ELIDE_KEEP : ELIDE_KEEP_FEATURES;
        if (b[i].vis_rows < imin(b[i].rows, least_r) || b[i].vis_cols < imin(b[i].cols, least_c))
            report(lesson, v, sz, "a %d×%d matrix drawn as only %d×%d cells", b[i].rows, b[i].cols, b[i].vis_rows,
                   b[i].vis_cols);
    }
    /* the narration is read aloud: never shortened (no hover, notice or
     * help is drawn here, the other wrapped texts) */
    for (int i = 0; i < n; i++)
        if (b[i].kind == LAYOUT_TEXT && b[i].what && strcmp(b[i].what, "text shortened") == 0)
            report(lesson, v, sz, "the narration is cut: '%s'", b[i].text);
    /* a token's label is whole (the format's limits allow 64-byte ones,
     * shortened to 4 em) */
    for (int i = 0; i < n && !at_limits(lesson); i++) {
        size_t len = strlen(b[i].text);
        if (b[i].kind == LAYOUT_TEXT && b[i].what && len >= 3 && strcmp(b[i].text + len - 3, "…") == 0 &&
            (strcmp(b[i].what, "matrix label") == 0 || strcmp(b[i].what, "matrix caption") == 0))
            report(lesson, v, sz, "a %s is shortened to '%s'", b[i].what, b[i].text);
    }
    /* a matrix without numbers comes with the note that says where they are */
    int silent = 0, noted = 0;
    for (int i = 0; i < n; i++) {
        if (b[i].kind == LAYOUT_TEXT && b[i].what && strcmp(b[i].what, "panel note") == 0) noted = 1;
        if (b[i].kind != LAYOUT_MATRIX) continue;
        int k = 0;
        for (int j = 0; j < n && !k; j++) k = b[j].kind == LAYOUT_NUMBER && inside(b[j].rect, b[i].rect, 0);
        silent |= !k;
    }
    if (silent && !noted) report(lesson, v, sz, "a matrix shows no numbers and nothing says why");
    /* the matrices fill their panel's width or height */
    for (int i = 0; i < n; i++) {
        if (b[i].kind != LAYOUT_AREA) continue;
        SDL_Rect a = b[i].rect;
        int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
        for (int j = 0; j < n; j++) {
            if (b[j].kind != LAYOUT_MATRIX || !inside(b[j].rect, a, 0)) continue;
            SDL_Rect r = b[j].rect;
            x0 = r.x < x0 ? r.x : x0;
            y0 = r.y < y0 ? r.y : y0;
            x1 = r.x + r.w > x1 ? r.x + r.w : x1;
            y1 = r.y + r.h > y1 ? r.y + r.h : y1;
        }
        if (x1 < 0) {
            report(lesson, v, sz, "a panel without a matrix");
            continue;
        }
        double sw = (double)(x1 - x0) / a.w, sh = (double)(y1 - y0) / a.h;
        if (sw < LAYOUT_SHARE && sh < LAYOUT_SHARE && v->mode != VIEW_COMPARE)
            report(lesson, v, sz, "the matrices span %.0f%% of the panel's width and %.0f%% of its height", 100 * sw,
                   100 * sh);
    }
    free(sorted);
    n_frames++;
}

/* A lesson loaded, its view, and a render context recording its layout on a
 * software surface of w × h (1 × 1 when only the layout is wanted). */
typedef struct Rig {
    Lesson L;
    View v;
    SDL_Surface *surf;
    SDL_Renderer *sdl;
    RenderCtx *rc;
} Rig;

static void rig_open(Rig *g, const char *path, int w, int h)
{
    LessonError le;
    char err[256];
    if (lesson_load(&g->L, path, &le) != 0) fail_msg("%s", le.msg);
    if (view_init(&g->v, &g->L, err, sizeof err) != 0) fail_msg("%s", err);
    g->surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    g->sdl = SDL_CreateSoftwareRenderer(g->surf);
    RenderOptions opt = {0};
    opt.no_system_fonts = 1;
    opt.assets_dir = ATTNVIZ_TESTS_DIR "/../assets";
    g->rc = render_create(g->sdl, &opt, err, sizeof err);
    if (!g->rc) fail_msg("render_create: %s", err);
    render_layout_record(g->rc, 1);
}

/* A rig of a shipped lesson (lessons/name) on the projector theme. */
static void rig_open_projector(Rig *g, const char *name, int w, int h)
{
    char path[512];
    snprintf(path, sizeof path, "%s/../lessons/%s", ATTNVIZ_TESTS_DIR, name);
    rig_open(g, path, w, h);
    g->v.theme = VIEW_THEME_PROJECTOR;
}

static void rig_close(Rig *g)
{
    render_destroy(g->rc);
    SDL_DestroyRenderer(g->sdl);
    SDL_FreeSurface(g->surf);
    view_free(&g->v);
    lesson_free(&g->L);
}

/* Every step of the view's trace in its final state, drawn at sz and checked. */
static void check_steps(RenderCtx *rc, const char *name, View *v, Size sz)
{
    for (int s = 0; s < view_trace(v)->n_steps; s++) {
        view_goto(v, s);
        view_finish(v);
        if (render_frame(rc, v, sz.w, sz.h) != 0) fail_msg("%s", SDL_GetError());
        check_frame(rc, name, v, sz);
    }
}

static void check_lesson(const char *path, const char *name)
{
    Rig rig;
    rig_open(&rig, path, 1, 1);
    View *v = &rig.v;
    RenderCtx *rc = rig.rc;
    /* the single-head and side-by-side views (of two heads or more) at the smallest size */
    for (int mode = 0; mode < VIEW_MODE_COUNT; mode++)
        for (int lang = 0; lang < LESSON_LANG_COUNT && mode != VIEW_MULTI; lang++) {
            if (mode == VIEW_COMPARE && !view_can_compare(v)) continue;
            AttnConfig one; /* grouped K/V heads have no one-head form: both modes are refused (test_view_lessons) */
            if (view_single_config(&v->lesson->cfg, &one) != 0) continue;
            view_set_mode(v, (ViewMode)mode);
            v->lang = (LessonLang)lang;
            v->theme = VIEW_THEME_PROJECTOR;
            check_steps(rc, name, v, sizes[0]);
        }
    view_set_mode(v, VIEW_MULTI);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int lang = 0; lang < LESSON_LANG_COUNT; lang++)
            for (int theme = 0; theme < VIEW_THEME_COUNT; theme++) {
                v->lang = (LessonLang)lang;
                v->theme = (ViewTheme)theme;
                check_steps(rc, name, v, sizes[si]);
            }
    /* column notation (matrices transposed, sums under the columns) with
     * the row scale (its name and "row max" on the weights' legends) */
    view_set_notation(v, VIEW_NOTATION_COLUMN);
    view_set_weight_scale(v, VIEW_WEIGHTS_ROW);
    v->theme = VIEW_THEME_PROJECTOR;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
            v->lang = (LessonLang)lang;
            check_steps(rc, name, v, sizes[si]);
        }
    rig_close(&rig);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every lesson file of dir; returns how many. */
static int check_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[64];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;) {
        size_t L = strlen(e->d_name);
        if (L > 5 && strcmp(e->d_name + L - 5, ".json") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    const char *only = getenv("ATTNVIZ_LAYOUT_LESSON"); /* one lesson, while working on it */
    for (int i = 0; i < n; i++) {
        if (!only || strstr(names[i], only)) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            check_lesson(path, names[i]);
        }
        free(names[i]);
    }
    return n;
}

/* The shipped lessons, and lessons at the format's limits: tokens of 52 to
 * 64 bytes, a title of 250 characters, 64 heads. */
static void test_every_lesson(void **state)
{
    (void)state;
    assert_true(check_dir(ATTNVIZ_TESTS_DIR "/../lessons") >= 10);
    assert_true(check_dir(ATTNVIZ_TESTS_DIR "/layout_lessons") >= 2);
    fprintf(stderr, "%d frames laid out, %d failures\n", n_frames, n_fail);
    assert_int_equal(n_fail, 0);
}

/* What + and − change in a frame: its matrices and its text. */
typedef struct FrameSizes {
    double area;            /* of the matrices, px² */
    long cells;             /* cells drawn (an elided matrix's kept ones) */
    double least_cell;      /* the smallest cell's side, px */
    int min_size, max_size; /* of its texts and numbers, px */
    double mean_size;       /* their mean size, px */
    int narration_size;     /* of the narration's text, px */
} FrameSizes;

static FrameSizes frame_measure(RenderCtx *rc)
{
    int n;
    const LayoutBox *b = render_layout_boxes(rc, &n);
    FrameSizes m = {.least_cell = 1e9, .min_size = 1 << 20};
    int texts = 0;
    for (int i = 0; i < n; i++) {
        if (b[i].kind == LAYOUT_MATRIX) {
            m.area += (double)b[i].rect.w * b[i].rect.h;
            m.cells += (long)b[i].vis_rows * b[i].vis_cols;
            double w = (double)b[i].rect.w / b[i].vis_cols, h = (double)b[i].rect.h / b[i].vis_rows;
            m.least_cell = fmin(m.least_cell, fmin(w, h));
        }
        if (b[i].kind == LAYOUT_TEXT || b[i].kind == LAYOUT_NUMBER) {
            m.mean_size += b[i].size;
            if (b[i].what && strcmp(b[i].what, "narration") == 0 && b[i].size > m.narration_size)
                m.narration_size = b[i].size;
            texts++;
            m.min_size = b[i].size < m.min_size ? b[i].size : m.min_size;
            m.max_size = b[i].size > m.max_size ? b[i].size : m.max_size;
        }
    }
    if (texts) m.mean_size /= texts;
    return m;
}

/* + (text scale × 1.1, nine times) on every third step of two lessons at two
 * sizes: each press makes text larger (the narration, the smallest or the
 * largest) and none smaller than the smallest before (a title or formula
 * too wide for the frame still shrinks to fit, the narration to stay whole,
 * and numbers too large for their cells are left to the hover),
 * the matrices giving up room as they must (they elide or stack, as at any
 * size); and − never takes text under the minimum. */
static void test_plus_always_enlarges(void **state)
{
    (void)state;
    static const char *const lessons[] = {"mhsa-wo-xihuan-paobu.json", "seed001-shapes-512.json"};
    for (int k = 0; k < 2; k++) {
        Rig rig;
        rig_open_projector(&rig, lessons[k], 1, 1);
        View *v = &rig.v;
        RenderCtx *rc = rig.rc;
        for (size_t si = 0; si < 2; si++)
            for (int s = 0; s < view_trace(v)->n_steps; s += 3) {
                view_goto(v, s);
                view_finish(v);
                FrameSizes prev = {0};
                float scale = 1.0f;
                for (int press = 0; press <= 9; press++) {
                    view_set_text_scale(v, scale);
                    if (render_frame(rc, v, sizes[si].w, sizes[si].h) != 0) fail_msg("%s", SDL_GetError());
                    FrameSizes m = frame_measure(rc);
                    int grew = m.narration_size > prev.narration_size || m.min_size > prev.min_size ||
                               m.max_size > prev.max_size;
                    if (press > 0 && (m.min_size < prev.min_size || !grew))
                        fail_msg("%s step %d at %dx%d, text ×%.2f: the text did not grow (%d..%d px, the "
                                 "narration %d; was %d..%d, %d)",
                                 lessons[k], s, sizes[si].w, sizes[si].h, (double)scale, m.min_size, m.max_size,
                                 m.narration_size, prev.min_size, prev.max_size, prev.narration_size);
                    prev = m;
                    scale *= 1.1f;
                }
                view_set_text_scale(v, 0.5f); /* − as far as it goes */
                if (render_frame(rc, v, sizes[si].w, sizes[si].h) != 0) fail_msg("%s", SDL_GetError());
                assert_true(frame_measure(rc).min_size >= render_min_text(sizes[si].w, sizes[si].h));
                view_set_text_scale(v, 1.0f);
            }
        rig_close(&rig);
    }
}

/* Big text (U, --big-text) on every step of the default lesson at 1024×768
 * and 1920×1080, both languages: no text under 1/30 of the frame's height,
 * and the text larger on average than without it. */
static void test_big_text(void **state)
{
    (void)state;
    static const Size big[] = {{1024, 768}, {1920, 1080}};
    Rig rig;
    rig_open_projector(&rig, "mhsa-wo-xihuan-paobu.json", 1, 1);
    View *v = &rig.v;
    for (size_t si = 0; si < 2; si++)
        for (int l = 0; l < LESSON_LANG_COUNT; l++)
            for (int s = 0; s < view_trace(v)->n_steps; s++) {
                view_set_lang(v, (LessonLang)l);
                view_goto(v, s);
                view_finish(v);
                view_set_big_text(v, 0);
                if (render_frame(rig.rc, v, big[si].w, big[si].h) != 0) fail_msg("%s", SDL_GetError());
                FrameSizes plain = frame_measure(rig.rc);
                view_set_big_text(v, 1);
                if (render_frame(rig.rc, v, big[si].w, big[si].h) != 0) fail_msg("%s", SDL_GetError());
                FrameSizes m = frame_measure(rig.rc);
                if (m.min_size * 30 < big[si].h)
                    fail_msg("step %d at %dx%d (%d): big text draws text of %d px, under 1/30 of the height", s,
                             big[si].w, big[si].h, l, m.min_size);
                if (m.mean_size <= plain.mean_size)
                    fail_msg("step %d at %dx%d (%d): big text's text (mean %.2f px) is no larger than without it "
                             "(%.2f px)",
                             s, big[si].w, big[si].h, l, m.mean_size, plain.mean_size);
            }
    view_set_big_text(v, 0);
    rig_close(&rig);
}

/* An elided matrix (seed 001's X, 12×512, at 1024×768): its last kept
 * column is the true column 511, in its true colour, with its number, and
 * the mouse over it names row 0, column 511; the columns between the kept
 * ends are not drawn. */
static void test_elided_cells_are_true(void **state)
{
    (void)state;
    Rig rig;
    rig_open_projector(&rig, "seed001-shapes-512.json", 1024, 768);
    View *v = &rig.v;
    RenderCtx *rc = rig.rc;
    SDL_Surface *surf = rig.surf;
    const AttnTrace *t = view_trace(v);
    const AttnStep *X = attn_trace_find_name(t, "X");
    assert_non_null(X);
    int step = attn_trace_index(t, X);
    view_goto(v, step);
    view_finish(v);
    assert_int_equal(render_frame(rc, v, 1024, 768), 0);
    SDL_Rect cell, mid;
    assert_int_equal(render_cell_rect(rc, t, step, 0, 511, &cell), 0);
    assert_int_equal(render_cell_rect(rc, t, step, 0, 256, &mid), -1);
    /* the mouse over it */
    RenderHit hit;
    assert_int_equal(render_hit_test(rc, v, cell.x + cell.w / 2, cell.y + 2, &hit), RENDER_HIT_CELL);
    assert_int_equal(hit.step, step);
    assert_int_equal(hit.row, 0);
    assert_int_equal(hit.col, 511);
    /* its colour, on X's scale (±max|X|), away from the number */
    float range = 0;
    for (int i = 0; i < X->rows * X->cols; i++) range = fabsf(X->data[i]) > range ? fabsf(X->data[i]) : range;
    SDL_Color want = render_value_color(X->data[511], 0, range);
    Uint32 px = ((Uint32 *)surf->pixels)[(cell.y + 2) * (surf->pitch / 4) + cell.x + 2];
    Uint8 r, g, b;
    SDL_GetRGB(px, surf->format, &r, &g, &b);
    assert_true(abs(r - want.r) <= 1 && abs(g - want.g) <= 1 && abs(b - want.b) <= 1);
    /* and its number */
    int n;
    const LayoutBox *bx = render_layout_boxes(rc, &n);
    assert_int_equal(numbers_inside(bx, n, cell), 1);
    rig_close(&rig);
}

/* Seed 001's W_O (512×512) beside the concat in column notation at
 * 1024×768: elided to its four corners, the textbook's w₁₁ ⋯ w₁ₙ over
 * wₙ₁ ⋯ wₙₙ, each a cell with its true number under the mouse, while the
 * result's sides of tokens keep 2 + 2 with their labels. */
static void test_first_and_last_entries(void **state)
{
    (void)state;
    Rig rig;
    rig_open_projector(&rig, "seed001-shapes-512.json", 1024, 768);
    View *v = &rig.v;
    RenderCtx *rc = rig.rc;
    view_set_notation(v, VIEW_NOTATION_COLUMN);
    const AttnTrace *t = view_trace(v);
    int wo = attn_trace_index(t, attn_trace_find_name(t, "W_O"));
    int out = attn_trace_index(t, attn_trace_find_name(t, "output"));
    view_goto(v, out);
    view_finish(v);
    assert_int_equal(render_frame(rc, v, 1024, 768), 0);
    static const int corner[4][2] = {{0, 0}, {0, 511}, {511, 0}, {511, 511}};
    int n;
    const LayoutBox *bx = render_layout_boxes(rc, &n);
    for (int k = 0; k < 4; k++) {
        SDL_Rect cell;
        assert_int_equal(render_cell_rect(rc, t, wo, corner[k][0], corner[k][1], &cell), 0);
        RenderHit hit;
        assert_int_equal(render_hit_test(rc, v, cell.x + cell.w / 2, cell.y + 2, &hit), RENDER_HIT_CELL);
        assert_int_equal(hit.step, wo);
        assert_int_equal(hit.row, corner[k][0]);
        assert_int_equal(hit.col, corner[k][1]);
        assert_int_equal(numbers_inside(bx, n, cell), 1);
    }
    SDL_Rect cell;
    assert_int_equal(render_cell_rect(rc, t, wo, 1, 0, &cell), -1);
    assert_int_equal(render_cell_rect(rc, t, wo, 0, 1, &cell), -1);
    /* output (12×512), drawn 512×12: the first and last feature, the first two and last two tokens */
    assert_int_equal(render_cell_rect(rc, t, out, 1, 0, &cell), 0);
    assert_int_equal(render_cell_rect(rc, t, out, 10, 511, &cell), 0);
    assert_int_equal(render_cell_rect(rc, t, out, 2, 0, &cell), -1);
    assert_int_equal(render_cell_rect(rc, t, out, 0, 1, &cell), -1);
    rig_close(&rig);
}

/* A shipped lesson's opening (the summary, the intro and the first step's
 * text) takes at most four lines of narration at 1024×768 on the projector,
 * in every language, at the body size: the class is not met by a wall of text. */
static void test_openings_fit(void **state)
{
    (void)state;
    DIR *d = opendir(ATTNVIZ_TESTS_DIR "/../lessons");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t L = strlen(e->d_name);
        if (L <= 5 || strcmp(e->d_name + L - 5, ".json") != 0) continue;
        Rig rig;
        rig_open_projector(&rig, e->d_name, 1024, 768);
        for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
            rig.v.lang = (LessonLang)lang;
            view_goto(&rig.v, 0);
            view_finish(&rig.v);
            if (render_frame(rig.rc, &rig.v, 1024, 768) != 0) fail_msg("%s", SDL_GetError());
            int nb, lines = 0, size = 0;
            const LayoutBox *b = render_layout_boxes(rig.rc, &nb);
            for (int i = 0; i < nb; i++)
                if (b[i].kind == LAYOUT_TEXT && b[i].what && strcmp(b[i].what, "narration") == 0) {
                    lines++;
                    size = b[i].size;
                }
            /* the body size at 1024×768 on the projector (render.c, fonts_for) */
            if (lines == 0 || lines > 4 || size < 18)
                fail_msg("%s (%s): the opening takes %d lines at %d px; at most 4 at 18 px", e->d_name,
                         lesson_lang_names[lang], lines, size);
        }
        rig_close(&rig);
        n++;
    }
    closedir(d);
    assert_true(n >= 10);
}

int main(void)
{
    if (SDL_Init(0) != 0 || TTF_Init() != 0) {
        fprintf(stderr, "SDL or SDL_ttf: %s\n", SDL_GetError());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson),
        cmocka_unit_test(test_plus_always_enlarges),
        cmocka_unit_test(test_big_text),
        cmocka_unit_test(test_elided_cells_are_true),
        cmocka_unit_test(test_first_and_last_entries),
        cmocka_unit_test(test_openings_fit),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    TTF_Quit();
    SDL_Quit();
    return rc;
}
