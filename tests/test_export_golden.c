/* test_export_golden.c: golden images. A few steps of two lessons, exported
 * at 640×360 with the bundled fonts only (assets/fonts, no fontconfig, so
 * the pixels do not depend on the machine's fonts), compared with the PNGs
 * committed in tests/golden/.
 *
 * How they are compared:
 *   - heatmap cells exactly: for every cell of the step's result matrix
 *     (render_cell_rect), the ring of pixels 2..4 px inside its edge (clear of
 *     the grid line and of the centred number) must equal the golden's, and
 *     be one uniform colour (blocked cells, hatched, are only compared);
 *   - everything else (anti-aliased text, whose edges may change with the
 *     FreeType version) with a tolerance: at most 0.5% of the pixels may
 *     differ by more than 24 levels in a channel;
 *   - not at all what follows the trace's length: the status line ("step
 *     5/24 · ...") and the timeline, whose steps a new step kind moves.
 *
 * Regenerate after an intended change to the drawing (and look at them):
 *
 *     ATTNVIZ_REGEN_GOLDEN=1 build/tests/test_export_golden
 *
 * which writes every PNG of tests/golden/ from the current code and passes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>
#include <cmocka.h>

#include "test_util.h"

#include "export.h"
#include "render_internal.h" /* the frame's layout boxes: where the status line and the timeline are */
#include "test_export_read.h"

#define GOLDEN_W      640
#define GOLDEN_H      360
#define TEXT_LEVELS   24    /* a channel may differ by this much... */
#define TEXT_FRACTION 0.005 /* ...on more than this fraction of pixels, and then it fails */

typedef struct Golden {
    const char *lesson; /* file in lessons/ */
    LessonLang lang;
    ViewTheme theme;
    ViewMode mode;
    const char *step; /* step name */
    const char *file; /* in tests/golden/ */
} Golden;

static const Golden goldens[] = {
    {"mhsa-wo-xihuan-paobu.json", LESSON_EN, VIEW_THEME_LIGHT, VIEW_MULTI, "scores_1", "mhsa-en-light-scores_1.png"},
    {"mhsa-wo-xihuan-paobu.json", LESSON_ZH, VIEW_THEME_LIGHT, VIEW_MULTI, "weights_2", "mhsa-zh-light-weights_2.png"},
    {"mhsa-wo-xihuan-paobu.json", LESSON_EN, VIEW_THEME_PROJECTOR, VIEW_MULTI, "output",
     "mhsa-en-projector-output.png"},
    {"causal-mask-decoder.json", LESSON_ZH, VIEW_THEME_DARK, VIEW_MULTI, "masked_1", "causal-zh-dark-masked_1.png"},
    {"causal-mask-decoder.json", LESSON_EN, VIEW_THEME_LIGHT, VIEW_SINGLE, "weights_1",
     "causal-en-single-weights_1.png"},
};
enum { N_GOLDEN = sizeof goldens / sizeof goldens[0] };

static char scratch[256];

static int setup(void **state)
{
    (void)state;
    return test_scratch_dir(scratch, sizeof scratch, "golden");
}

static int teardown(void **state)
{
    (void)state;
    test_rm_rf(scratch);
    return 0;
}

static RenderOptions pinned_fonts(void)
{
    RenderOptions ro;
    memset(&ro, 0, sizeof ro);
    ro.no_system_fonts = 1;
    ro.assets_dir = ATTNVIZ_SOURCE_DIR "/assets";
    return ro;
}

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    if (!a || !b) {
        if (a) fclose(a);
        if (b) fclose(b);
        return -1;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, n, b);
    fclose(a);
    return fclose(b);
}

static const unsigned char *px_at(const TestPng *p, int x, int y)
{
    return p->rgba + ((size_t)y * p->width + x) * 4;
}

/* The rectangles of the last frame rc drew (recording) that change with the
 * trace's length: the status line, which starts "step N/M", and the timeline. */
static int length_rects(const RenderCtx *rc, LessonLang lang, SDL_Rect *out, int cap)
{
    char step[64];
    snprintf(step, sizeof step, "%s ", view_string(VS_STEP, lang));
    int n_boxes = 0, n = 0;
    const LayoutBox *b = render_layout_boxes(rc, &n_boxes);
    for (int i = 0; i < n_boxes && n < cap; i++) {
        if (b[i].kind == LAYOUT_TEXT && strncmp(b[i].text, step, strlen(step)) == 0) out[n++] = b[i].rect;
        if (b[i].what && strcmp(b[i].what, "timeline") == 0 && n < cap) out[n++] = b[i].within;
    }
    return n;
}

static int in_rects(const SDL_Rect *r, int n, int x, int y)
{
    SDL_Point p = {x, y};
    for (int i = 0; i < n; i++)
        if (SDL_PointInRect(&p, &r[i])) return 1;
    return 0;
}

static void check_golden(const Golden *g)
{
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/lessons/%s", ATTNVIZ_SOURCE_DIR, g->lesson);
    Lesson l;
    LessonError le;
    if (lesson_load(&l, path, &le) != 0) fail_msg("%s", le.msg);

    /* 1. Export the one step. */
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = GOLDEN_W;
    opt.height = GOLDEN_H;
    opt.lang = g->lang;
    opt.theme = g->theme;
    opt.mode = g->mode;
    opt.steps = g->step;
    opt.render = pinned_fonts();
    opt.use_render_options = 1;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s.d", scratch, g->file);
    ExportResult res;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(res.files, 1);

    View v;
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    view_set_mode(&v, g->mode);
    v.lang = g->lang;
    v.theme = g->theme;
    const AttnTrace *t = view_trace(&v);
    const AttnStep *s = attn_trace_find_name(t, g->step);
    assert_non_null(s);
    int idx = attn_trace_index(t, s);
    char name[64], got_path[1200], want_path[1200];
    export_step_filename(t, idx, name, sizeof name);
    snprintf(got_path, sizeof got_path, "%s/%s", dir, name);
    snprintf(want_path, sizeof want_path, "%s/golden/%s", ATTNVIZ_TESTS_DIR, g->file);

    const char *regen = getenv("ATTNVIZ_REGEN_GOLDEN");
    if (regen && *regen && strcmp(regen, "0") != 0) {
        if (copy_file(got_path, want_path) != 0) fail_msg("cannot write %s", want_path);
        print_message("wrote %s\n", want_path);
        view_free(&v);
        lesson_free(&l);
        return;
    }

    TestPng got, want;
    if (test_png_read(got_path, &got, err, sizeof err) != 0) fail_msg("%s", err);
    if (test_png_read(want_path, &want, err, sizeof err) != 0)
        fail_msg("%s (regenerate with ATTNVIZ_REGEN_GOLDEN=1, see the top of this file)", err);
    assert_int_equal(got.width, want.width);
    assert_int_equal(got.height, want.height);

    /* 2. The cells, exactly: draw the same view to learn where they are. */
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, GOLDEN_W, GOLDEN_H, 32, SDL_PIXELFORMAT_XRGB8888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    RenderOptions ro = pinned_fonts();
    RenderCtx *rc = render_create(r, &ro, err, sizeof err);
    if (!rc) fail_msg("%s", err);
    view_goto(&v, idx);
    view_finish(&v);
    render_layout_record(rc, 1);
    assert_int_equal(render_frame(rc, &v, GOLDEN_W, GOLDEN_H), 0);
    SDL_Rect skip[64];
    int n_skip = length_rects(rc, g->lang, skip, 64);
    if (n_skip < 2) fail_msg("%s: the status line or the timeline was not found among the frame's boxes", g->file);
    int cells = 0;
    for (int row = 0; row < s->rows; row++)
        for (int col = 0; col < s->cols; col++) {
            SDL_Rect cr;
            if (render_cell_rect(rc, t, idx, row, col, &cr) != 0) continue;
            if (cr.w < 12 || cr.h < 12) continue; /* too small for a ring clear of the number */
            cells++;
            int blocked = view_cell_blocked(&v, s, row, col);
            const unsigned char *ref = px_at(&got, cr.x + 2, cr.y + 2);
            for (int y = cr.y + 2; y < cr.y + cr.h - 2; y++)
                for (int x = cr.x + 2; x < cr.x + cr.w - 2; x++) {
                    int ring = x < cr.x + 5 || x >= cr.x + cr.w - 5 || y < cr.y + 5 || y >= cr.y + cr.h - 5;
                    if (!ring) continue;
                    const unsigned char *a = px_at(&got, x, y), *b = px_at(&want, x, y);
                    if (memcmp(a, b, 3) != 0)
                        fail_msg("%s: cell (%d,%d) of %s at pixel (%d,%d): %d,%d,%d, golden %d,%d,%d", g->file, row,
                                 col, g->step, x, y, a[0], a[1], a[2], b[0], b[1], b[2]);
                    /* blocked cells are hatched: exact, but not one colour */
                    if (!blocked && memcmp(a, ref, 3) != 0)
                        fail_msg("%s: cell (%d,%d) of %s is not one colour at (%d,%d)", g->file, row, col, g->step, x,
                                 y);
                }
        }
    if (cells == 0) fail_msg("%s: no cell of %s was drawn large enough to check", g->file, g->step);

    /* 3. Everything, with the text tolerance. */
    long over = 0;
    int maxd = 0, fx = -1, fy = -1;
    for (int y = 0; y < got.height; y++)
        for (int x = 0; x < got.width; x++) {
            if (in_rects(skip, n_skip, x, y)) continue;
            const unsigned char *a = px_at(&got, x, y), *b = px_at(&want, x, y);
            int d = 0;
            for (int c = 0; c < 3; c++) {
                int e = abs((int)a[c] - (int)b[c]);
                if (e > d) d = e;
            }
            if (d > maxd) maxd = d;
            if (d > TEXT_LEVELS) {
                if (fx < 0) fx = x, fy = y;
                over++;
            }
        }
    double frac = (double)over / ((double)got.width * got.height);
    if (frac > TEXT_FRACTION)
        fail_msg("%s: %ld pixels (%.2f%%) differ by more than %d (max %d, first at (%d,%d)); allowed %.2f%%. "
                 "Compare %s with %s",
                 g->file, over, 100 * frac, TEXT_LEVELS, maxd, fx, fy, 100 * TEXT_FRACTION, got_path, want_path);
    print_message("%s: %d cells exact, %ld pixels over tolerance, max channel difference %d\n", g->file, cells, over,
                  maxd);
    render_destroy(rc);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    test_png_free(&got);
    test_png_free(&want);
    view_free(&v);
    lesson_free(&l);
}

static void test_goldens(void **state)
{
    (void)state;
    assert_int_equal(TTF_Init(), 0);
    for (int i = 0; i < N_GOLDEN; i++) check_golden(&goldens[i]);
    TTF_Quit();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_goldens, setup, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
