/* test_render.c: frames drawn on SDL_CreateSoftwareRenderer over a surface,
 * no display: cell colours are exactly the colour map's, legends and labels
 * are drawn, Chinese is not drawn as missing-glyph boxes, the same View gives
 * the same pixels, and every theme, mode and size draws; and the line-breaking
 * rule, with fixed-pitch widths worked out by hand, at every width, and on
 * every lesson's narration with the real fonts. */
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

#include "edit.h"
#include "render.h"
#include "render_internal.h"
#include "test_util.h"

static const char *LESSON_JSON =
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-render\","
    " \"title\": {\"en\": \"Render test\", \"zh\": \"绘制测试：我喜欢跑步\"},"
    " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 4, \"heads\": 2, \"seed\": 11,"
    " \"mask\": \"causal\","
    " \"narration\": {\"softmax\": {\"en\": \"Each row sums to 1.\", \"zh\": \"每一行的和都是 1。\"}}}";

typedef struct Canvas {
    SDL_Surface *surf;
    SDL_Renderer *sdl;
    RenderCtx *rc;
    Lesson lesson;
    View view;
    int w, h;
} Canvas;

/* A lesson whose first query sees no key (padding at the front, causal):
 * with a finite fill its row of weights is uniform. FILL is spliced in. */
#define LESSON_BLIND_ROW(FILL)                                                                                         \
    "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-blind-row\", \"title\": {\"en\": \"Blind row\"},"               \
    " \"tokens\": [\"<pad>\", \"a\", \"b\", \"c\"], \"d_model\": 4, \"heads\": 1, \"d_k\": 2, \"d_v\": 2, \"W_O\": "   \
    "null,"                                                                                                            \
    " \"seed\": 4, \"mask\": [[0,0,0,0],[0,1,0,0],[0,1,1,0],[0,1,1,1]], \"mask_fill\": " FILL "}"

static Canvas *canvas_make_json(int w, int h, int bundled_only, const char *json);

static Canvas *canvas_make(int w, int h, int bundled_only)
{
    return canvas_make_json(w, h, bundled_only, LESSON_JSON);
}

static Canvas *canvas_make_json(int w, int h, int bundled_only, const char *json)
{
    Canvas *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->w = w;
    c->h = h;
    c->surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    assert_non_null(c->surf);
    c->sdl = SDL_CreateSoftwareRenderer(c->surf);
    assert_non_null(c->sdl);
    RenderOptions opt = {0};
    opt.no_system_fonts = bundled_only;
    opt.assets_dir = ATTNVIZ_TESTS_DIR "/../assets";
    char err[512];
    c->rc = render_create(c->sdl, &opt, err, sizeof err);
    if (!c->rc) fail_msg("render_create: %s", err);
    LessonError le;
    if (lesson_parse(&c->lesson, json, strlen(json), "inline.json", &le) != 0) fail_msg("%s", le.msg);
    if (view_init(&c->view, &c->lesson, err, sizeof err) != 0) fail_msg("%s", err);
    return c;
}

/* A canvas of w×h with the lesson of the file at path. */
static Canvas *canvas_make_file(int w, int h, int bundled_only, const char *path)
{
    Canvas *c = canvas_make(w, h, bundled_only);
    view_free(&c->view);
    lesson_free(&c->lesson);
    LessonError le;
    char err[256];
    if (lesson_load(&c->lesson, path, &le) != 0) fail_msg("%s", le.msg);
    if (view_init(&c->view, &c->lesson, err, sizeof err) != 0) fail_msg("%s", err);
    return c;
}

static void canvas_free(Canvas *c)
{
    render_destroy(c->rc);
    SDL_DestroyRenderer(c->sdl);
    SDL_FreeSurface(c->surf);
    view_free(&c->view);
    lesson_free(&c->lesson);
    free(c);
}

static SDL_Color pixel(const Canvas *c, int x, int y)
{
    assert_true(x >= 0 && y >= 0 && x < c->w && y < c->h);
    Uint32 p = ((const Uint32 *)c->surf->pixels)[(size_t)y * (size_t)(c->surf->pitch / 4) + (size_t)x];
    SDL_Color col;
    SDL_GetRGBA(p, c->surf->format, &col.r, &col.g, &col.b, &col.a);
    return col;
}

static int same_rgb(SDL_Color a, SDL_Color b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

static void draw(Canvas *c)
{
    if (render_frame(c->rc, &c->view, c->w, c->h) != 0) fail_msg("render_frame: %s", SDL_GetError());
}

static int goto_name(View *v, const char *name)
{
    const AttnStep *s = attn_trace_find_name(view_trace(v), name);
    assert_non_null(s);
    int i = attn_trace_index(view_trace(v), s);
    view_goto(v, i);
    view_finish(v);
    return i;
}

/* Every cell of the result is exactly the colour map's colour for its
 * value (tolerance 0: one texel per cell, nearest-neighbour stretch). */
static void check_cells(Canvas *c, int step, int weights)
{
    const AttnTrace *t = view_trace(&c->view);
    const AttnStep *s = &t->steps[step];
    float range = 0;
    for (int i = 0; i < s->rows * s->cols; i++)
        if (isfinite(s->data[i]) && fabsf(s->data[i]) > range) range = fabsf(s->data[i]);
    int checked = 0;
    for (int r = 0; r < s->rows; r++)
        for (int col = 0; col < s->cols; col++) {
            SDL_Rect cell;
            if (render_cell_rect(c->rc, t, step, r, col, &cell) != 0) fail_msg("%s[%d][%d] not drawn", s->name, r, col);
            if (view_cell_blocked(&c->view, s, r, col)) continue;
            float x = s->data[r * s->cols + col];
            SDL_Color want = render_value_color(x, weights, weights ? 1.0f : range);
            /* a corner pixel: the centre may carry the number */
            SDL_Color got = pixel(c, cell.x + 2, cell.y + 2);
            if (!same_rgb(got, want))
                fail_msg("%s[%d][%d] = %g: pixel (%d,%d) is %d,%d,%d, the map gives %d,%d,%d", s->name, r, col,
                         (double)x, cell.x + 2, cell.y + 2, got.r, got.g, got.b, want.r, want.g, want.b);
            checked++;
        }
    assert_true(checked > 0);
}

static void test_cell_colours(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    int w = goto_name(&c->view, "weights_1");
    draw(c);
    check_cells(c, w, 1);
    int s = goto_name(&c->view, "scores_2");
    draw(c);
    check_cells(c, s, 0);
    /* viridis ends and the diverging centre, as the sources give them */
    SDL_Color lo = render_color_seq(0), hi = render_color_seq(1), mid = render_color_div(0);
    assert_true(lo.r == 68 && lo.g == 1 && lo.b == 84);
    assert_true(hi.r == 253 && hi.g == 231 && hi.b == 37);
    assert_true(mid.r > 240 && mid.g > 240 && mid.b > 240);
    SDL_Color neg = render_color_div(-1), pos = render_color_div(1);
    assert_true(neg.b > neg.r && pos.r > pos.b);
    canvas_free(c);
}

/* Blocked cells are neither colour map's colour: grey, with −∞ written. */
static void test_blocked_cells(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    int m = goto_name(&c->view, "masked_1");
    draw(c);
    SDL_Rect cell;
    assert_int_equal(render_cell_rect(c->rc, view_trace(&c->view), m, 0, 2, &cell), 0);
    SDL_Color got = pixel(c, cell.x + 2, cell.y + cell.h / 2);
    const Theme *th = render_theme(c->view.theme);
    if (!same_rgb(got, th->blocked) && !same_rgb(got, th->hatch))
        fail_msg("blocked cell is %d,%d,%d", got.r, got.g, got.b);
    /* the −∞ label: dark ink in the middle of the cell */
    int ink = 0;
    for (int y = cell.y + cell.h / 3; y < cell.y + 2 * cell.h / 3; y++)
        for (int x = cell.x + cell.w / 3; x < cell.x + 2 * cell.w / 3; x++) {
            SDL_Color p = pixel(c, x, y);
            ink += p.r < 60 && p.g < 60 && p.b < 60;
        }
    assert_true(ink > 5);
    canvas_free(c);
}

/* The last frame's hits point into the view's traces: once those are
 * replaced (a changed number recomputes them, a reload makes a new View),
 * the old frame's pixels answer nothing until the next frame is drawn. */
static void test_hits_outlive_no_trace(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    int w = goto_name(&c->view, "weights_2");
    draw(c);
    SDL_Rect cell;
    assert_int_equal(render_cell_rect(c->rc, view_trace(&c->view), w, 1, 2, &cell), 0);
    int x = cell.x + cell.w / 2, y = cell.y + cell.h / 2;
    RenderHit hit;
    assert_int_equal(render_hit_test(c->rc, &c->view, x, y, &hit), RENDER_HIT_CELL);
    assert_ptr_equal(hit.trace, view_trace(&c->view));
    c->lesson.X[0] += 1.0f; /* as an edit does, in place */
    char err[256];
    assert_int_equal(view_recompute(&c->view, err, sizeof err), 0);
    assert_int_equal(render_hit_test(c->rc, &c->view, x, y, &hit), RENDER_HIT_NONE);
    assert_null(hit.trace);
    assert_null(hit.label);
    draw(c);
    assert_int_equal(render_hit_test(c->rc, &c->view, x, y, &hit), RENDER_HIT_CELL);
    assert_ptr_equal(hit.trace, view_trace(&c->view));
    view_free(&c->view);
    if (view_init(&c->view, &c->lesson, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(render_hit_test(c->rc, &c->view, x, y, &hit), RENDER_HIT_NONE);
    canvas_free(c);
}

/* The legend beside the result: a bar from the map's top to its bottom colour. */
static void test_legend_and_labels(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    int w = goto_name(&c->view, "weights_2");
    draw(c);
    SDL_Rect first, last;
    const AttnTrace *t = view_trace(&c->view);
    assert_int_equal(render_cell_rect(c->rc, t, w, 0, 2, &first), 0);
    assert_int_equal(render_cell_rect(c->rc, t, w, 2, 2, &last), 0);
    int right = first.x + first.w, top = first.y, bottom = last.y + last.h;
    SDL_Color hi = render_color_seq(1), lo = render_color_seq(0);
    int found_hi = 0, found_lo = 0;
    for (int x = right + 1; x < right + 260 && x < c->w; x++) {
        for (int y = top - 4; y <= top + 4; y++) found_hi |= same_rgb(pixel(c, x, y), hi);
        for (int y = bottom - 4; y <= bottom + 4; y++) found_lo |= same_rgb(pixel(c, x, y), lo);
    }
    if (!found_hi || !found_lo)
        fail_msg("legend bar: top colour %s, bottom colour %s", found_hi ? "found" : "missing",
                 found_lo ? "found" : "missing");
    /* token labels left of each row: text ink, and they answer the mouse */
    const Theme *th = render_theme(c->view.theme);
    for (int r = 0; r < 3; r++) {
        SDL_Rect cell;
        assert_int_equal(render_cell_rect(c->rc, t, w, r, 0, &cell), 0);
        int ink = 0, y = cell.y + cell.h / 2, hit_x = -1;
        for (int yy = y - 8; yy <= y + 8; yy++)
            for (int x = cell.x - 80; x < cell.x - 4; x++) {
                SDL_Color p = pixel(c, x, yy);
                if (abs(p.r - th->text.r) < 40 && abs(p.g - th->text.g) < 40 && abs(p.b - th->text.b) < 40) {
                    ink++;
                    hit_x = x;
                }
            }
        if (ink < 2) fail_msg("no label ink left of row %d", r);
        RenderHit hit;
        assert_int_equal(render_hit_test(c->rc, &c->view, hit_x, y, &hit), RENDER_HIT_TOKEN);
        assert_int_equal(hit.row, r);
    }
    /* a cell answers the mouse with its own coordinates */
    SDL_Rect cell;
    assert_int_equal(render_cell_rect(c->rc, t, w, 1, 2, &cell), 0);
    RenderHit hit;
    assert_int_equal(render_hit_test(c->rc, &c->view, cell.x + cell.w / 2, cell.y + cell.h / 2, &hit), RENDER_HIT_CELL);
    assert_int_equal(hit.step, w);
    assert_int_equal(hit.row, 1);
    assert_int_equal(hit.col, 2);
    canvas_free(c);
}

/* Rasterises one string alone at 48 px into an ink bitmap of the canvas. */
static void ink_of(Canvas *c, const char *s, unsigned char *bits /* (h, w) */)
{
    SDL_SetRenderDrawColor(c->sdl, 255, 255, 255, 255);
    SDL_RenderClear(c->sdl);
    render_text(c->rc, s, 48, (SDL_Color){0, 0, 0, 255}, 10, 10, 0);
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++) bits[y * c->w + x] = pixel(c, x, y).r < 128;
}

/* Chinese is drawn with real glyphs, not the missing-glyph box: each
 * character's ink differs from the .notdef box's and from each other's. */
static void test_chinese_glyphs(void **state)
{
    (void)state;
    for (int bundled = 1; bundled >= 0; bundled--) {
        Canvas *c = canvas_make(200, 100, bundled);
        size_t n = (size_t)c->w * (size_t)c->h;
        unsigned char *box = malloc(n), *g = malloc(n), *g2 = malloc(n);
        assert_non_null(box);
        assert_non_null(g);
        assert_non_null(g2);
        assert_int_equal(render_font_for(c->rc, 0x10FFFD), -1); /* no font has it */
        ink_of(c, "\xF4\x8F\xBF\xBD", box);                     /* U+10FFFD: .notdef */
        const char *chars[] = {"我", "喜", "欢", "跑", "步", "√", "ᵀ", "₁"};
        for (size_t i = 0; i < sizeof chars / sizeof chars[0]; i++) {
            const char *p = chars[i];
            uint32_t cp = render_utf8_next(&p);
            if (render_font_for(c->rc, cp) < 0) fail_msg("%s: no font of the chain has U+%04X", chars[i], cp);
            ink_of(c, chars[i], g);
            size_t ink = 0, diff = 0;
            for (size_t k = 0; k < n; k++) {
                ink += g[k];
                diff += g[k] != box[k];
            }
            if (ink < 20 || diff < 20)
                fail_msg("%s (%s fonts): %zu ink pixels, %zu differ from the missing-glyph box", chars[i],
                         bundled ? "bundled" : "system", ink, diff);
        }
        ink_of(c, "喜", g);
        ink_of(c, "欢", g2);
        assert_true(memcmp(g, g2, n) != 0);
        free(box);
        free(g);
        free(g2);
        canvas_free(c);
    }
}

/* A texture redrawn only where an animation changed it since the frame
 * before is the texture drawn whole: a context that drew earlier frames
 * (forwards, then backwards) and a fresh one give the same pixels, on a
 * 150-token causal lesson whose matrices are max-pooled (cells thinner than
 * a pixel), for a product (scores, filled in reading order), softmax (every
 * cell changing) and the weighted sum; and a matrix coloured again from the
 * picks kept for it. */
static void check_partial_redraw(void)
{
    char *json =
        test_tokens_json("{\"format\": \"attnviz-lesson/1\", \"id\": \"test-partial\", \"title\": {\"en\": "
                         "\"Partial\"}, \"d_model\": 8, \"heads\": 2, \"seed\": 5, \"mask\": \"causal\", \"tokens\": [",
                         150, "]}");
    assert_non_null(json);
    const char *steps[] = {"scores_1", "weights_1", "head_1"};
    const double seq[] = {0.1, 0.35, 0.6, 0.85, 0.4, 0.15};
    for (int k = 0; k < 3; k++)
        for (int e = 2; e < 6; e++) {
            Canvas *a = canvas_make_json(640, 400, 1, json), *b = canvas_make_json(640, 400, 1, json);
            int ia = goto_name(&a->view, steps[k]);
            goto_name(&b->view, steps[k]);
            for (int f = 0; f <= e; f++) {
                a->view.t = seq[f] * view_step_duration(&a->view, ia);
                draw(a);
            }
            b->view.t = a->view.t;
            draw(b);
            size_t bytes = (size_t)a->surf->pitch * (size_t)a->h;
            if (memcmp(a->surf->pixels, b->surf->pixels, bytes) != 0)
                fail_msg("%s at %.2f after %d earlier frames: the pixels differ from a fresh context's", steps[k],
                         seq[e], e);
            canvas_free(a);
            canvas_free(b);
        }
    /* the picks of a settled pooled matrix, kept: the masked scores drawn as
     * the result, then as softmax's operand (another colour range), then in
     * the dark theme, against a fresh context each time */
    Canvas *a = canvas_make_json(640, 400, 1, json);
    goto_name(&a->view, "masked_1");
    draw(a);
    for (int dark = 0; dark < 2; dark++) {
        Canvas *b = canvas_make_json(640, 400, 1, json);
        goto_name(&a->view, "weights_1");
        goto_name(&b->view, "weights_1");
        a->view.theme = b->view.theme = dark ? VIEW_THEME_DARK : VIEW_THEME_LIGHT;
        draw(a);
        draw(b);
        size_t bytes = (size_t)a->surf->pitch * (size_t)a->h;
        if (memcmp(a->surf->pixels, b->surf->pixels, bytes) != 0)
            fail_msg("weights_1 (%s) after masked_1: the pixels differ from a fresh context's",
                     dark ? "dark" : "light");
        canvas_free(b);
    }
    canvas_free(a);
    free(json);
}

/* The same View and size give the same pixels, from two separate contexts,
 * whatever frames a context drew before (check_partial_redraw). */
static void test_deterministic(void **state)
{
    (void)state;
    Canvas *a = canvas_make(800, 600, 1), *b = canvas_make(800, 600, 1);
    goto_name(&a->view, "weights_1");
    goto_name(&b->view, "weights_1");
    a->view.t = b->view.t = 0.37 * view_step_duration(&a->view, a->view.step);
    a->view.lang = b->view.lang = LESSON_ZH;
    draw(a);
    draw(a); /* a second frame from the caches */
    draw(b);
    size_t bytes = (size_t)a->surf->pitch * (size_t)a->h;
    assert_int_equal(memcmp(a->surf->pixels, b->surf->pixels, bytes), 0);
    canvas_free(a);
    canvas_free(b);
    check_partial_redraw();
}

static int follow_edit(void *user, char *err, size_t errlen)
{
    return view_recompute(user, err, errlen);
}

/* An edited number keeps the choices made once for the lesson (the heads'
 * strip, compare mode's arrangement: keyed by the view's layout_id), which
 * lay out every step and would move every panel if made again; a change of
 * the lesson's shapes (a token removed) makes them again. */
static void test_edit_keeps_lesson_choices(void **state)
{
    (void)state;
    Canvas *c = canvas_make(640, 480, 1);
    char err[512];
    Edit e;
    View v;
    assert_int_equal(edit_init_copy(&e, &c->lesson, err, sizeof err), 0);
    assert_int_equal(view_init(&v, edit_lesson(&e), err, sizeof err), 0);
    e.recompute = follow_edit;
    e.user = &v;
    unsigned long id = v.id, layout = v.layout_id;
    assert_int_equal(edit_set_cell(&e, LESSON_MAT_X, 0, 0, -1234.5, 0), 0);
    assert_true(v.id != id);            /* new numbers: every measure of them again */
    assert_true(v.layout_id == layout); /* the same shapes: the lesson's choices stay */
    assert_int_equal(edit_remove_token(&e, 0, 2), 0);
    assert_true(v.layout_id != layout);
    view_free(&v);
    edit_free(&e);
    canvas_free(c);
}

/* A lesson of n tokens "t0" .. "t<n-1>", causal, seeded matrices: its n×n
 * steps are pooled (more cells than pixels) on a small canvas. */
static Canvas *canvas_make_tokens(int w, int h, int n)
{
    char *json =
        test_tokens_json("{\"format\": \"attnviz-lesson/1\", \"id\": \"test-pooled\", \"title\": {\"en\": "
                         "\"Pooled\"}, \"d_model\": 8, \"heads\": 1, \"seed\": 5, \"mask\": \"causal\", \"tokens\": [",
                         n, "]}");
    assert_non_null(json);
    Canvas *c = canvas_make_json(w, h, 1, json);
    free(json);
    return c;
}

/* The mask's animation keeps the picks of its first pooled frame for the
 * others (only the blocked cells' colour moves): each frame is the pixels a
 * context that never drew the animation draws. */
static void test_masked_animation_picks(void **state)
{
    (void)state;
    Canvas *a = canvas_make_tokens(480, 360, 300);
    int m = goto_name(&a->view, "masked_1");
    double d = view_step_duration(&a->view, m);
    for (int k = 1; k <= 4; k++) {
        Canvas *b = canvas_make_tokens(480, 360, 300);
        goto_name(&b->view, "masked_1");
        a->view.t = b->view.t = d * k / 5.0;
        draw(a);
        draw(b);
        size_t bytes = (size_t)a->surf->pitch * (size_t)a->h;
        if (memcmp(a->surf->pixels, b->surf->pixels, bytes) != 0)
            fail_msg("masked_1 at t = %.2f: the frame differs from a new context's", a->view.t);
        canvas_free(b);
    }
    canvas_free(a);
}

/* A context that laid a matrix out keeps no stale measure of its numbers:
 * after the numbers change (here X[0][0] from wide to narrow, which lets
 * X's numbers grow), its frame is the frame of a context that never drew
 * that step with the old numbers. Both made the choices made once for the
 * lesson (the heads' strip, compare mode's arrangement) with the old
 * numbers: those stay while the lesson's shapes do, so that an edited
 * number does not move the panels (test_edit_keeps_lesson_choices). */
static void test_numbers_change(void **state)
{
    (void)state;
    const int sizes[][2] = {{480, 360}, {640, 480}, {800, 600}};
    for (int k = 0; k < 3; k++) {
        Canvas *a = canvas_make(sizes[k][0], sizes[k][1], 1), *b = canvas_make(sizes[k][0], sizes[k][1], 1);
        char err[512];
        /* the same views, both drawn at the last step and taken to step 0;
         * only a draws step 0 before the second change */
        a->lesson.X[0] = b->lesson.X[0] = -1234.5f;
        assert_int_equal(view_recompute(&a->view, err, sizeof err), 0);
        assert_int_equal(view_recompute(&b->view, err, sizeof err), 0);
        Canvas *both[2] = {a, b};
        for (int i = 0; i < 2; i++) {
            view_goto(&both[i]->view, both[i]->view.trace->n_steps - 1);
            view_finish(&both[i]->view);
            draw(both[i]);
            view_goto(&both[i]->view, 0);
            view_finish(&both[i]->view);
        }
        draw(a);
        a->lesson.X[0] = b->lesson.X[0] = 0.5f;
        assert_int_equal(view_recompute(&a->view, err, sizeof err), 0);
        assert_int_equal(view_recompute(&b->view, err, sizeof err), 0);
        view_goto(&a->view, 0);
        view_finish(&a->view);
        view_goto(&b->view, 0);
        view_finish(&b->view);
        draw(a);
        draw(b);
        size_t bytes = (size_t)a->surf->pitch * (size_t)a->h;
        if (memcmp(a->surf->pixels, b->surf->pixels, bytes) != 0)
            fail_msg("%dx%d: the frame after the change differs from a new context's", a->w, a->h);
        canvas_free(a);
        canvas_free(b);
    }
}

/* The numbers X's cells print, read from the layout: X of the lesson as
 * given, at 1280×720. */
static int x_numbers(const float *x, int n, char out[][32], int max)
{
    Canvas *c = canvas_make(1280, 720, 1);
    char err[512];
    memcpy(c->lesson.X, x, (size_t)n * sizeof *x);
    assert_int_equal(view_recompute(&c->view, err, sizeof err), 0);
    view_goto(&c->view, 1); /* moving on ends the change's animation */
    goto_name(&c->view, "X");
    render_layout_record(c->rc, 1);
    draw(c);
    int nb, k = 0;
    const LayoutBox *b = render_layout_boxes(c->rc, &nb);
    for (int i = 0; i < nb && k < max; i++)
        if (b[i].kind == LAYOUT_NUMBER) snprintf(out[k++], sizeof out[0], "%s", b[i].text);
    canvas_free(c);
    return k;
}

static int has_number(char nums[][32], int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (strcmp(nums[i], want) == 0) return 1;
    return 0;
}

/* A matrix of tenths prints one decimal (b_O = 0.1 is "0.1"), of whole
 * numbers none ("2"), anything else two ("0.25"); a tenth that is a float's
 * hair under zero is "0.0", never "−0.0". */
static void test_number_styles(void **state)
{
    (void)state;
    char nums[16][32];
    float tenths[12] = {0.1f, -2.5f, 1.0f, -1e-9f, 0.3f, 0.2f, 0.7f, 0.9f, 1.1f, 0.4f, 0.5f, 0.6f};
    int n = x_numbers(tenths, 12, nums, 16);
    assert_int_equal(n, 12);
    assert_true(has_number(nums, n, "0.1") && has_number(nums, n, "−2.5") && has_number(nums, n, "1.0"));
    assert_true(has_number(nums, n, "0.0") && !has_number(nums, n, "−0.0"));
    float whole[12] = {2, 0, -1, 3, 0, 0, 1, 1, 0, 0, 0, 4};
    n = x_numbers(whole, 12, nums, 16);
    assert_true(has_number(nums, n, "2") && has_number(nums, n, "−1") && !has_number(nums, n, "2.0"));
    float plain[12] = {0.25f, 0.1f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    n = x_numbers(plain, 12, nums, 16);
    assert_true(has_number(nums, n, "0.25") && has_number(nums, n, "0.10"));
}

/* A cell number's box is its digits' ink, centred in its cell: shorter than
 * a line of text at its size, so a number needs a cell only that tall. */
static void test_number_ink(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    goto_name(&c->view, "X");
    render_layout_record(c->rc, 1);
    draw(c);
    int nb, seen = 0;
    const LayoutBox *b = render_layout_boxes(c->rc, &nb);
    for (int i = 0; i < nb; i++) {
        if (b[i].kind != LAYOUT_NUMBER) continue;
        seen++;
        assert_int_equal(b[i].rect.h, text_number_height(&c->rc->text, b[i].size));
        assert_true(b[i].rect.h < render_line_height(c->rc, b[i].size));
        /* centred in its cell, to a pixel */
        int top = b[i].rect.y - b[i].within.y, bottom = b[i].within.y + b[i].within.h - (b[i].rect.y + b[i].rect.h);
        assert_true(abs(top - bottom) <= 1);
    }
    assert_true(seen >= 12);
    canvas_free(c);
}

/* Every step in every mode, theme, language and size draws, and the frame
 * is not blank; the animation changes the picture; hover and help draw. */
static void test_all_states_draw(void **state)
{
    (void)state;
    const int sizes[][2] = {{800, 600}, {1280, 720}, {1920, 1080}};
    for (size_t si = 0; si < 3; si++) {
        Canvas *c = canvas_make(sizes[si][0], sizes[si][1], 1);
        View *v = &c->view;
        for (int mode = 0; mode < VIEW_MODE_COUNT; mode++) {
            view_set_mode(v, (ViewMode)mode);
            v->theme = (ViewTheme)((mode + (int)si) % VIEW_THEME_COUNT);
            v->lang = (LessonLang)(mode % 2);
            for (int s = 0; s < view_step_count(v); s++) {
                view_goto(v, s);
                v->t = 0.5 * view_step_duration(v, s);
                draw(c);
                view_finish(v);
                draw(c);
                SDL_Color bg = render_theme(v->theme)->bg;
                int other = 0;
                for (int y = 0; y < c->h; y += 7)
                    for (int x = 0; x < c->w; x += 7) other += !same_rgb(pixel(c, x, y), bg);
                if (other < 100) fail_msg("step %d mode %d: the frame is almost blank", s, mode);
            }
        }
        /* the animation is visible: halfway through the scores differs from the end */
        view_set_mode(v, VIEW_MULTI);
        goto_name(v, "scores_1");
        draw(c);
        size_t bytes = (size_t)c->surf->pitch * (size_t)c->h;
        unsigned char *end = malloc(bytes);
        assert_non_null(end);
        memcpy(end, c->surf->pixels, bytes);
        v->t = 0.3 * view_step_duration(v, v->step);
        draw(c);
        assert_true(memcmp(end, c->surf->pixels, bytes) != 0);
        free(end);
        /* hover, selection, help and a notice draw */
        view_finish(v);
        v->hover_trace = v->trace;
        v->hover_step = v->step;
        v->hover_row = 1;
        v->hover_col = 0;
        view_select_token(v, 2, 2);
        view_set_notice(v, VS_NOTICE_SAVED, "attnviz-frames/x.png", 0);
        v->show_help = 1;
        v->text_scale = VIEW_TEXT_SCALE_MAX;
        draw(c);
        canvas_free(c);
    }
}

/* Zoom: the result's window of cells fills the matrix's room, so a cell is
 * bigger, and the cells outside the window are not drawn. */
static void test_zoom(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    int w = goto_name(&c->view, "weights_1");
    const AttnTrace *t = view_trace(&c->view);
    draw(c);
    SDL_Rect before, after;
    assert_int_equal(render_cell_rect(c->rc, t, w, 1, 1, &before), 0);
    c->view.zoom = 3.0f; /* 3×3 cells: a 1×1 window */
    c->view.pan_x = c->view.pan_y = 1.0f;
    draw(c);
    assert_int_equal(render_cell_rect(c->rc, t, w, 1, 1, &after), 0);
    assert_true(after.w >= 2 * before.w && after.h >= 2 * before.h);
    assert_int_equal(render_cell_rect(c->rc, t, w, 0, 0, &after), -1);
    RenderHit hit;
    assert_int_equal(render_cell_rect(c->rc, t, w, 1, 1, &after), 0);
    assert_int_equal(render_hit_test(c->rc, &c->view, after.x + after.w / 2, after.y + after.h / 2, &hit),
                     RENDER_HIT_CELL);
    assert_int_equal(hit.row, 1);
    assert_int_equal(hit.col, 1);
    assert_true(hit.zoomable);
    canvas_free(c);
}

/* Zoom on a step whose operands are elided to show their numbers: the
 * elision leaves the zoomed result's window as it is. Seed 001's scores₁
 * at 1024×768 zoomed 2×: a 6×6 window from (6, 6), so cell (11, 11) is
 * drawn and cell (0, 0) is not. */
static void test_zoom_beside_elided(void **state)
{
    (void)state;
    Canvas *c = canvas_make_file(1024, 768, 1, ATTNVIZ_TESTS_DIR "/../lessons/seed001-shapes-512.json");
    view_set_theme(&c->view, VIEW_THEME_PROJECTOR);
    int w = goto_name(&c->view, "scores_1");
    view_set_zoom(&c->view, 2.0f, 6.0f, 6.0f);
    draw(c);
    SDL_Rect r;
    const AttnTrace *t = view_trace(&c->view);
    assert_int_equal(render_cell_rect(c->rc, t, w, 11, 11, &r), 0);
    assert_int_equal(render_cell_rect(c->rc, t, w, 0, 0, &r), -1);
    canvas_free(c);
}

static float abs_max(const AttnStep *s)
{
    float m = 0;
    for (int i = 0; i < s->rows * s->cols; i++)
        if (isfinite(s->data[i]) && fabsf(s->data[i]) > m) m = fabsf(s->data[i]);
    return m;
}

/* Concat: the heads' outputs slide onto the concat's blocks. Halfway
 * through the slide (p = 0.4 of the step: it runs over 0.05..0.75, eased)
 * head 2's cell (0, 0) is drawn halfway between its own place and its
 * place in the concat, in its own colour, while the concat's cell is still
 * empty and the place it left is faded; at the end the concat is exactly
 * the trace's, cell by cell. */
static void test_concat_slide(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    const AttnTrace *t = view_trace(&c->view);
    const AttnStep *cs = attn_trace_find(t, ATTN_STEP_CONCAT, 0);
    assert_non_null(cs);
    assert_int_equal(cs->n_from, 2);
    int ci = attn_trace_index(t, cs), h2 = cs->from[1];
    const AttnStep *hs = &t->steps[h2];
    view_goto(&c->view, ci);
    c->view.t = 0.4 * view_step_duration(&c->view, ci);
    draw(c);
    SDL_Rect src, dst;
    assert_int_equal(render_cell_rect(c->rc, t, h2, 0, 0, &src), 0);
    assert_int_equal(render_cell_rect(c->rc, t, ci, 0, hs->cols, &dst), 0); /* head 2's first column in the concat */
    assert_true(abs(src.x - dst.x) > 100);
    SDL_Color want = render_value_color(hs->data[0], 0, abs_max(hs));
    int mx = (src.x + dst.x) / 2 + 6, my = (src.y + dst.y) / 2 + 6;
    SDL_Color got = pixel(c, mx, my);
    if (!same_rgb(got, want))
        fail_msg("halfway (%d,%d) is %d,%d,%d, head 2's cell (0,0) is %d,%d,%d", mx, my, got.r, got.g, got.b, want.r,
                 want.g, want.b);
    const Theme *th = render_theme(c->view.theme);
    assert_true(same_rgb(pixel(c, dst.x + 6, dst.y + 6), th->panel)); /* not landed yet */
    assert_false(same_rgb(pixel(c, src.x + 6, src.y + 6), want));     /* the place it left, faded */
    /* the end: the concat's own cells, and the heads back in place */
    view_finish(&c->view);
    draw(c);
    check_cells(c, ci, 0);
    assert_int_equal(render_cell_rect(c->rc, t, h2, 0, 0, &src), 0);
    assert_true(same_rgb(pixel(c, src.x + 6, src.y + 6), want));
    canvas_free(c);
}

/* Pixels in [x0, x1) × [y0, y1) unlike the background (text ink). */
static int ink_in(const Canvas *c, int x0, int y0, int x1, int y1)
{
    const Theme *th = render_theme(c->view.theme);
    int n = 0;
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < c->h; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < c->w; x++) {
            SDL_Color p = pixel(c, x, y);
            n += abs(p.r - th->bg.r) + abs(p.g - th->bg.g) + abs(p.b - th->bg.b) > 90;
        }
    return n;
}

/* The small multiples of the heads' weights carry the tokens on their rows
 * and columns when they are large enough: ink left of head 2's thumbnail
 * (which is not selected, so no outline there) and above it, in English and
 * in Chinese; at 800×600 with text twice the size, none (or no strip at all). */
static void test_heads_strip_labels(void **state)
{
    (void)state;
    for (int lang = 0; lang < 3; lang++) {
        Canvas *c = lang < 2 ? canvas_make(1280, 720, 1) : canvas_make(800, 600, 1);
        c->view.lang = lang == 1 ? LESSON_ZH : LESSON_EN;
        if (lang == 2) c->view.text_scale = 2.0f; /* labels would not leave the thumbnails ¾ of their side */
        goto_name(&c->view, "weights_1");
        draw(c);
        /* head 2's thumbnail: where the mouse answers "head 2" */
        int x0 = c->w, y0 = c->h, x1 = -1;
        RenderHit hit;
        for (int y = 0; y < c->h; y += 2)
            for (int x = c->w / 2; x < c->w; x += 2)
                if (render_hit_test(c->rc, &c->view, x, y, &hit) == RENDER_HIT_HEAD && hit.head == 2) {
                    x0 = x < x0 ? x : x0;
                    y0 = y < y0 ? y : y0;
                    x1 = x > x1 ? x : x1;
                }
        if (x1 <= x0 && lang == 2) { /* the strip gave its room to the step's matrices */
            canvas_free(c);
            continue;
        }
        if (x1 <= x0) fail_msg("lang %d: no thumbnail of head 2", lang);
        int side = x1 - x0 - 4;                                   /* the thumbnail is square for 3×3 weights */
        int rows = ink_in(c, x0 - 20, y0 + 4, x0 - 3, y0 + side); /* clear of the panel's divider */
        int cols = ink_in(c, x0 + 4, y0 - 28, x1 - 4, y0 - 3);
        if (lang < 2) {
            if (rows < 10 || cols < 10) fail_msg("lang %d: label ink left of head 2: %d, above: %d", lang, rows, cols);
        } else if (rows > 0) {
            fail_msg("800×600, text scale 2: %d pixels of label ink beside the thumbnails", rows);
        }
        canvas_free(c);
    }
}

/* The texts of the numbers and labels of the last frame drawn, "|"-joined. */
static void frame_texts(Canvas *c, LayoutKind kind, char *out, size_t len)
{
    int n;
    const LayoutBox *b = render_layout_boxes(c->rc, &n);
    out[0] = '\0';
    size_t at = 0;
    for (int i = 0; i < n && at + 64 < len; i++)
        if (b[i].kind == kind) at += (size_t)snprintf(out + at, len - at, "|%s|", b[i].text);
}

/* While a step animates, a cell shows its final number or none, and a row
 * shows its final Σ or none: every number drawn halfway through scaling and
 * softmax is one the finished step shows too. */
static void test_no_inbetween_numbers(void **state)
{
    (void)state;
    static const char *const steps[] = {"scaled_1", "weights_1", "masked_1"};
    Canvas *c = canvas_make(1280, 720, 1);
    render_layout_record(c->rc, 1);
    for (int k = 0; k < 3; k++) {
        static char done[65536], mid[65536];
        int i = goto_name(&c->view, steps[k]);
        draw(c);
        frame_texts(c, LAYOUT_NUMBER, done, sizeof done);
        char sums_done[4096], sums_mid[4096];
        frame_texts(c, LAYOUT_TEXT, sums_done, sizeof sums_done);
        for (double f = 0.2; f < 1.0; f += 0.2) {
            view_goto(&c->view, i);
            c->view.t = view_step_duration(&c->view, i) * f;
            draw(c);
            frame_texts(c, LAYOUT_NUMBER, mid, sizeof mid);
            for (char *p = mid; (p = strchr(p, '|')) != NULL;) {
                char *e = strchr(p + 1, '|');
                char one[64];
                snprintf(one, sizeof one, "%.*s", (int)(e - p + 1), p);
                if (!strstr(done, one))
                    fail_msg("%s at %.0f%%: the number %s is not one of the final ones", steps[k], 100 * f, one);
                p = e + 1;
            }
            frame_texts(c, LAYOUT_TEXT, sums_mid, sizeof sums_mid);
            for (char *p = strstr(sums_mid, "|Σ"); p; p = strstr(p + 1, "|Σ")) {
                char one[64];
                snprintf(one, sizeof one, "%.*s", (int)(strchr(p + 1, '|') - p + 1), p);
                if (!strstr(sums_done, one))
                    fail_msg("%s at %.0f%%: %s is not a final row sum", steps[k], 100 * f, one);
            }
        }
    }
    canvas_free(c);
}

/* A token label shortened with "…" shows its whole text when hovered. */
static void test_long_label_hover(void **state)
{
    (void)state;
    Canvas *c = canvas_make_file(1024, 768, 1, ATTNVIZ_TESTS_DIR "/layout_lessons/limits-long-tokens.json");
    goto_name(&c->view, "weights_1");
    draw(c);
    const char *full = NULL;
    RenderHit hit;
    for (int y = 100; y < c->h && !full; y += 2) /* below the title, which is shortened too */
        for (int x = 0; x < c->w / 2 && !full; x += 2)
            if (render_hit_test(c->rc, &c->view, x, y, &hit) != RENDER_HIT_NONE || hit.label) full = hit.label;
    assert_non_null(full);
    assert_true(strlen(full) > 40); /* one of the long tokens */
    assert_true(strlen(full) <= 64);
    c->view.hover_label = full;
    render_layout_record(c->rc, 1);
    draw(c);
    int n, shown = 0;
    const LayoutBox *b = render_layout_boxes(c->rc, &n);
    for (int i = 0; i < n; i++)
        shown |= b[i].kind == LAYOUT_TEXT && strcmp(b[i].what, "overlay") == 0 &&
                 strncmp(b[i].text, full, strlen(b[i].text)) == 0 && strlen(b[i].text) >= 40;
    if (!shown) fail_msg("hovering \"%s\" shows no tooltip with it", full);
    c->view.hover_label = NULL;
    canvas_free(c);
}

static int hits_of(Canvas *c, RenderHitKind kind)
{
    int n = 0;
    RenderHit hit;
    for (int y = 0; y < c->h; y += 4)
        for (int x = 0; x < c->w; x += 4) n += render_hit_test(c->rc, &c->view, x, y, &hit) == kind;
    return n;
}

/* A (focus) hides the all-heads panel; a slide has no timeline, no status
 * line and no overlays, and its narration ends near the frame's bottom. */
static void test_focus_and_slides(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    goto_name(&c->view, "weights_2");
    draw(c);
    assert_true(hits_of(c, RENDER_HIT_HEAD) > 0);
    assert_true(hits_of(c, RENDER_HIT_TIMELINE) > 0);
    view_toggle_heads(&c->view);
    draw(c);
    assert_int_equal(hits_of(c, RENDER_HIT_HEAD), 0);
    view_toggle_heads(&c->view);
    c->view.output = VIEW_OUTPUT_SLIDE;
    c->view.show_help = 1;
    render_layout_record(c->rc, 1);
    draw(c);
    assert_true(hits_of(c, RENDER_HIT_HEAD) > 0);
    assert_int_equal(hits_of(c, RENDER_HIT_TIMELINE), 0);
    int n, titles = 0, bottom = 0;
    const LayoutBox *b = render_layout_boxes(c->rc, &n);
    for (int i = 0; i < n; i++) {
        if (b[i].kind != LAYOUT_TEXT) continue;
        titles += strcmp(b[i].what, "title bar") == 0;
        if (strcmp(b[i].what, "narration") == 0)
            bottom = b[i].rect.y + b[i].rect.h > bottom ? b[i].rect.y + b[i].rect.h : bottom;
        if (strcmp(b[i].what, "overlay") == 0) fail_msg("an overlay on a slide: '%s'", b[i].text);
    }
    assert_int_equal(titles, 1); /* the lesson's title, no status line */
    assert_true(bottom > c->h - 60);
    canvas_free(c);
}

/* The texts of the title bar (the title and the status line), joined. */
static void title_bar_text(Canvas *c, char *buf, size_t len)
{
    render_layout_record(c->rc, 1);
    draw(c);
    int n;
    const LayoutBox *b = render_layout_boxes(c->rc, &n);
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        if (b[i].kind == LAYOUT_TEXT && (strcmp(b[i].what, "title bar") == 0 || strcmp(b[i].what, "edit bar") == 0))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s | ", b[i].text);
}

/* The status line names the view's mode only where there are two: a
 * lesson of one head shows the same in both, so none is named. */
static void test_status_names_a_mode_only_with_heads(void **state)
{
    (void)state;
    char text[4096];
    Canvas *c = canvas_make_file(1920, 1080, 1, ATTNVIZ_TESTS_DIR "/../lessons/self-attention-xihuan-paobu.json");
    for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
        c->view.lang = (LessonLang)lang;
        title_bar_text(c, text, sizeof text);
        if (strstr(text, view_string(VS_MODE_MULTI, c->view.lang)) || strstr(text, "多头") ||
            strstr(text, "multi-head"))
            fail_msg("a one-head lesson's status names a mode: %s", text);
        assert_non_null(strstr(text, view_string(VS_HINT, c->view.lang)));
    }
    canvas_free(c);
    c = canvas_make(1920, 1080, 1); /* two heads */
    c->view.lang = LESSON_ZH;
    title_bar_text(c, text, sizeof text);
    if (!strstr(text, "多头视图")) fail_msg("the two-head lesson's status names no mode: %s", text);
    canvas_free(c);
}

/* Pixels of cell (r, c) of step `step` that are exactly colour want. */
static int cell_pixels_of(const Canvas *c, int step, int r, int col, SDL_Color want)
{
    SDL_Rect cell;
    if (render_cell_rect(c->rc, view_trace(&c->view), step, r, col, &cell) != 0)
        fail_msg("cell %d,%d not drawn", r, col);
    int n = 0;
    for (int y = cell.y + 1; y < cell.y + cell.h - 1; y++)
        for (int x = cell.x + 1; x < cell.x + cell.w - 1; x++) n += same_rgb(pixel(c, x, y), want);
    return n;
}

static int cell_area(const Canvas *c, int step, int r, int col)
{
    SDL_Rect cell;
    assert_int_equal(render_cell_rect(c->rc, view_trace(&c->view), step, r, col, &cell), 0);
    return (cell.w - 2) * (cell.h - 2);
}

/* A row that sees no key: with −1e9 softmax makes it uniform, and its
 * blocked cells are drawn with their true weight's colour (hatched), on the
 * softmax step and as the weighted sum's operand; with −∞ they are 0 and grey.
 * A blocked cell of a row that sees a key is 0 either way: grey. */
static void test_blocked_weights_true_values(void **state)
{
    (void)state;
    for (int finite = 1; finite >= 0; finite--) {
        Canvas *c = canvas_make_json(1280, 720, 1, finite ? LESSON_BLIND_ROW("-1e9") : LESSON_BLIND_ROW("\"-inf\""));
        const Theme *th = render_theme(c->view.theme);
        const char *steps[] = {"weights_1", "head_1"};
        for (int k = 0; k < 2; k++) {
            goto_name(&c->view, steps[k]);
            draw(c);
            const AttnStep *w = attn_trace_find_name(view_trace(&c->view), "weights_1");
            int wi = attn_trace_index(view_trace(&c->view), w);
            for (int col = 0; col < 4; col++) {
                float x = w->data[col];
                if (finite && fabsf(x - 0.25f) > 1e-6f) fail_msg("weights_1[0][%d] = %g, not 0.25", col, (double)x);
                if (!finite && x != 0.0f) fail_msg("weights_1[0][%d] = %g under -inf", col, (double)x);
                SDL_Color want = finite ? render_weight_color(VIEW_WEIGHTS_UNIT, x, 1) : th->blocked;
                int got = cell_pixels_of(c, wi, 0, col, want), area = cell_area(c, wi, 0, col);
                if (got * 2 < area)
                    fail_msg("%s, fill %s: weights_1[0][%d] = %g has %d of %d pixels of its colour", steps[k],
                             finite ? "-1e9" : "-inf", col, (double)x, got, area);
            }
            /* row 1 sees key 1 only: its blocked cells are 0, grey */
            int got = cell_pixels_of(c, wi, 1, 3, th->blocked);
            if (got * 2 < cell_area(c, wi, 1, 3)) fail_msg("%s: weights_1[1][3] is not grey", steps[k]);
        }
        canvas_free(c);
    }
}

/* The three weight scales: each cell's colour is the scale's colour for
 * its true weight; the numbers and hover stay the true weights. */
static void test_weight_scales(void **state)
{
    (void)state;
    assert_true(fabsf(view_weight_position(VIEW_WEIGHTS_UNIT, 0.25f, 0.5f) - 0.25f) < 1e-6f);
    assert_true(fabsf(view_weight_position(VIEW_WEIGHTS_ROW, 0.25f, 0.5f) - 0.5f) < 1e-6f);
    assert_true(fabsf(view_weight_position(VIEW_WEIGHTS_LOG, 1e-2f, 1) - 0.5f) < 1e-5f);
    assert_true(view_weight_position(VIEW_WEIGHTS_LOG, 1e-6f, 1) == 0.0f);
    assert_true(view_weight_position(VIEW_WEIGHTS_LOG, 1.0f, 1) == 1.0f);
    assert_true(view_weight_position(VIEW_WEIGHTS_ROW, 0.0f, 0.0f) == 0.0f);
    Canvas *c = canvas_make(1280, 720, 1);
    View *v = &c->view;
    int wi = goto_name(v, "weights_2");
    const AttnStep *s = &view_trace(v)->steps[wi];
    for (int sc = 0; sc < VIEW_WEIGHTS_COUNT; sc++) {
        view_set_weight_scale(v, (ViewWeightScale)sc);
        draw(c);
        for (int r = 0; r < s->rows; r++) {
            float mx = 0;
            for (int col = 0; col < s->cols; col++) mx = fmaxf(mx, s->data[r * s->cols + col]);
            for (int col = 0; col < s->cols; col++) {
                if (view_cell_blocked(v, s, r, col)) continue;
                float x = s->data[r * s->cols + col];
                SDL_Rect cell;
                assert_int_equal(render_cell_rect(c->rc, view_trace(v), wi, r, col, &cell), 0);
                SDL_Color want = render_weight_color((ViewWeightScale)sc, x, mx),
                          got = pixel(c, cell.x + 2, cell.y + 2);
                if (!same_rgb(got, want))
                    fail_msg("scale %s: weights_2[%d][%d] = %g is %d,%d,%d, the scale gives %d,%d,%d",
                             view_weight_scale_name((ViewWeightScale)sc), r, col, (double)x, got.r, got.g, got.b,
                             want.r, want.g, want.b);
            }
        }
    }
    /* the row scale shows every row's largest weight at the top of the map */
    view_set_weight_scale(v, VIEW_WEIGHTS_ROW);
    draw(c);
    SDL_Rect cell;
    assert_int_equal(render_cell_rect(c->rc, view_trace(v), wi, 0, 0, &cell), 0);
    assert_true(same_rgb(pixel(c, cell.x + 2, cell.y + 2), render_color_seq(1))); /* row 0 sees only key 0 */
    /* the legend names the scale: its caption's ink differs from scale to scale */
    size_t bytes = (size_t)c->surf->pitch * (size_t)c->h;
    unsigned char *frames[VIEW_WEIGHTS_COUNT];
    for (int sc = 0; sc < VIEW_WEIGHTS_COUNT; sc++) {
        view_set_weight_scale(v, (ViewWeightScale)sc);
        draw(c);
        frames[sc] = malloc(bytes);
        assert_non_null(frames[sc]);
        memcpy(frames[sc], c->surf->pixels, bytes);
    }
    assert_true(memcmp(frames[0], frames[1], bytes) != 0 && memcmp(frames[1], frames[2], bytes) != 0);
    for (int sc = 0; sc < VIEW_WEIGHTS_COUNT; sc++) free(frames[sc]);
    canvas_free(c);
}

/* Column notation draws every matrix transposed without copying it: cell
 * (r, c) stands at displayed row c, column r, with the same colour; the
 * mouse answers with the step's own (r, c); W_Q stands before X (Q = W_Q·X);
 * softmax's sums stand under its columns. */
static void test_column_notation(void **state)
{
    (void)state;
    Canvas *c = canvas_make(1280, 720, 1);
    View *v = &c->view;
    const AttnTrace *t = view_trace(v);
    int wi = goto_name(v, "weights_2");
    SDL_Rect row_a;
    draw(c);
    assert_int_equal(render_cell_rect(c->rc, t, wi, 2, 0, &row_a), 0);
    view_set_notation(v, VIEW_NOTATION_COLUMN);
    draw(c);
    check_cells(c, wi, 1);
    SDL_Rect a, b;
    assert_int_equal(render_cell_rect(c->rc, t, wi, 2, 0, &a), 0); /* query 2, key 0: row 0, column 2 */
    assert_int_equal(render_cell_rect(c->rc, t, wi, 0, 2, &b), 0);
    assert_true(a.x > b.x && a.y < b.y);
    assert_true(row_a.y > a.y);
    RenderHit hit;
    assert_int_equal(render_hit_test(c->rc, &c->view, a.x + a.w / 2, a.y + a.h / 2, &hit), RENDER_HIT_CELL);
    assert_int_equal(hit.row, 2);
    assert_int_equal(hit.col, 0);
    /* Σ = 1 under each column (query): accent ink below the matrix, none right of its rows */
    const Theme *th = render_theme(v->theme);
    SDL_Rect last;
    assert_int_equal(render_cell_rect(c->rc, t, wi, 2, 2, &last), 0);
    for (int q = 0; q < 3; q++) {
        SDL_Rect cell;
        assert_int_equal(render_cell_rect(c->rc, t, wi, q, 2, &cell), 0);
        int ink = 0;
        for (int y = cell.y + cell.h + 2; y < cell.y + cell.h + 30; y++)
            for (int x = cell.x; x < cell.x + cell.w; x++) ink += same_rgb(pixel(c, x, y), th->accent);
        if (ink < 3) fail_msg("no sum under column %d", q);
    }
    int right = 0;
    for (int y = last.y; y < last.y + last.h; y++)
        for (int x = last.x + last.w + 2; x < last.x + last.w + 60; x++) right += same_rgb(pixel(c, x, y), th->accent);
    assert_int_equal(right, 0);
    /* Q = W_Q·X: the weight stands left of the input; in rows, right of it */
    int q = goto_name(v, "Q");
    int x_step = attn_trace_index(t, attn_trace_find_name(t, "X"));
    int w_step = attn_trace_index(t, attn_trace_find_name(t, "W_Q"));
    for (int col = 1; col >= 0; col--) {
        view_set_notation(v, col ? VIEW_NOTATION_COLUMN : VIEW_NOTATION_ROW);
        draw(c);
        SDL_Rect xr, wr;
        assert_int_equal(render_cell_rect(c->rc, t, x_step, 0, 0, &xr), 0);
        assert_int_equal(render_cell_rect(c->rc, t, w_step, 0, 0, &wr), 0);
        if (col ? wr.x > xr.x : wr.x < xr.x)
            fail_msg("%s notation: W_Q at x %d, X at x %d", col ? "column" : "row", wr.x, xr.x);
        check_cells(c, q, 0);
    }
    canvas_free(c);
}

/* ---- line breaking ---- */

/* A fixed-pitch advance: 1 for ASCII, 2 for anything else (as a CJK
 * character is about twice as wide as a Latin letter), so expected lines can
 * be worked out by hand. */
static int unit_advance(void *user, uint32_t cp)
{
    (void)user;
    return cp < 0x80 ? 1 : 2;
}

static int text_units(const char *s, size_t n)
{
    int w = 0;
    for (const char *p = s; p < s + n;) w += unit_advance(NULL, render_utf8_next(&p));
    return w;
}

/* Breaks s at `width` units and compares the lines with want[] (n lines). */
static void expect_lines(const char *s, int width, const char *const *want, int n)
{
    size_t starts[32], lens[32];
    int got = render_break_lines(s, width, unit_advance, NULL, starts, lens, 32);
    int same = got == n;
    for (int i = 0; same && i < n; i++) same = strlen(want[i]) == lens[i] && !memcmp(want[i], s + starts[i], lens[i]);
    if (same) return;
    fprintf(stderr, "breaking \"%s\" at width %d:\n", s, width);
    for (int i = 0; i < got || i < n; i++)
        fprintf(stderr, "  line %d: got \"%.*s\", want \"%s\"\n", i + 1, i < got ? (int)lens[i] : 0,
                i < got ? s + starts[i] : "", i < n ? want[i] : "(none)");
    fail_msg("%d lines, want %d, or a line differs", got, n);
}

/* The bytes the matrix cache says it holds, checked against its entries;
 * *frame_bytes: those the frame just drawn uses. */
static size_t mat_cache_bytes(const RenderCtx *rc, size_t *frame_bytes)
{
    size_t all = 0, frame = 0;
    for (int i = 0; i < RENDER_MAT_CACHE; i++) {
        const MatEntry *e = &rc->mats[i];
        if (!e->tex) continue;
        size_t b = (size_t)e->w * (size_t)e->h * 4;
        all += b;
        if (e->last_frame == rc->frame) frame += b;
    }
    assert_int_equal(all, rc->mat_bytes);
    *frame_bytes = frame;
    return all;
}

/* The matrices' textures stay within RENDER_MAT_BUDGET, or within what one
 * frame itself draws when that is more: every step of a 400-token lesson,
 * each with matrices of up to 400×400 cells, at 1920×1080, forwards and
 * back, while the textures made along the way come to several budgets. */
static void test_texture_budget(void **state)
{
    (void)state;
    char *json =
        test_tokens_json("{\"format\": \"attnviz-lesson/1\", \"id\": \"test-budget\", \"title\": {\"en\": "
                         "\"Budget\"}, \"d_model\": 8, \"heads\": 2, \"seed\": 3, \"mask\": \"causal\", \"tokens\": [",
                         400, "]}");
    assert_non_null(json);
    Canvas *c = canvas_make_json(1920, 1080, 1, json);
    free(json);
    const AttnTrace *t = view_trace(&c->view);
    size_t made = 0, most = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < t->n_steps; k++) {
            int step = pass ? t->n_steps - 1 - k : k;
            view_goto(&c->view, step);
            view_finish(&c->view);
            size_t before_frame;
            mat_cache_bytes(c->rc, &before_frame);
            draw(c);
            size_t frame, all = mat_cache_bytes(c->rc, &frame);
            made += frame;
            if (all > most) most = all;
            if (all > RENDER_MAT_BUDGET && all > frame)
                fail_msg("step %d: %zu bytes of matrix textures cached, over the budget %zu and this frame's %zu", step,
                         all, (size_t)RENDER_MAT_BUDGET, frame);
        }
    /* the walk needed the trimming: its frames' textures came to more than twice the budget */
    if (made <= 2 * RENDER_MAT_BUDGET)
        fail_msg("only %zu bytes of textures drawn: the walk does not test the budget", made);
    assert_true(most > RENDER_MAT_BUDGET / 2);
    canvas_free(c);
}

/* Chinese, at widths where breaking before the first character that does not
 * fit would start a line with 「：」 or 「。」: the character before it moves
 * down with it. */
static void test_break_kinsoku(void **state)
{
    (void)state;
    /* naive at 4: 输入 / ：每 / 个词 / 元一 / 行。 */
    expect_lines("输入：每个词元一行。", 4, (const char *const[]){"输", "入：", "每个", "词元", "一", "行。"}, 6);
    /* naive at 10: 头 2，主语 / –动词：我把 / ... ; the comma and the colon stay up */
    expect_lines("每个头都看到全部 3 个词。", 12, (const char *const[]){"每个头都看到", "全部 3 个", "词。"}, 3);
    /* 「 never ends a line, 」 never starts one */
    expect_lines("同一个词「喜欢」在头 1 里", 10, (const char *const[]){"同一个词", "「喜欢」在", "头 1 里"}, 3);
    /* a quoted token is never split (naive at 14: 把权重给了「跑 / 步」和「喜欢」) */
    expect_lines("把权重给了「跑步」和「喜欢」", 14, (const char *const[]){"把权重给了", "「跑步」和", "「喜欢」"}, 3);
    /* a long quotation breaks inside as text does */
    expect_lines("文档说「切分是通过线性投影实现的」", 16,
                 (const char *const[]){"文档说「切分是通", "过线性投影实现", "的」"}, 3);
    /* full-width brackets around English: （ stays with "mean" */
    expect_lines("平均值（mean）是 0.5", 8, (const char *const[]){"平均值", "（mean）", "是 0.5"}, 3);
    /* ASCII brackets and commas (naive at 7: ... / "0.25 (" / "均匀)") */
    expect_lines("权重是 0.25, 0.25 (均匀)", 7, (const char *const[]){"权重是", "0.25,", "0.25", "(均匀)"}, 4);
}

/* English words and numbers are never split; mixed lines break at spaces and
 * around Chinese characters. */
static void test_break_words(void **state)
{
    (void)state;
    /* naive at 10: "the weight" / "ed sum of " / "V" */
    expect_lines("the weighted sum of V", 10, (const char *const[]){"the", "weighted", "sum of V"}, 3);
    /* a word glued to Chinese characters breaks only at their edges, and the
     * colon after "weights" does not start a line (naive at 14: "softmax 的输出" / "叫weights" / "：每行和为 1") */
    expect_lines("softmax 的输出叫weights：每行和为 1", 14,
                 (const char *const[]){"softmax 的输出", "叫weights：每", "行和为 1"}, 3);
    /* "'s" stays with the token it follows (naive at 12: "matches 跑步" / "'s key") */
    expect_lines("matches 跑步's key", 12, (const char *const[]){"matches 跑", "步's key"}, 2);
    /* a middle dot joins a pair (naive at 12: "顺序是 s1·" / "我，s2·我") */
    expect_lines("顺序是 s1·我，s2·我", 12, (const char *const[]){"顺序是", "s1·我，", "s2·我"}, 3);
    /* 0.8943 is one word */
    expect_lines("我把 0.8943 给了喜欢", 8, (const char *const[]){"我把", "0.8943", "给了喜欢"}, 3);
    /* a newline always breaks, and keeps the next line's indentation */
    expect_lines("Q · K\n  = 2.83", 20, (const char *const[]){"Q · K", "  = 2.83"}, 2);
}

/* Only a word wider than the line is broken inside, at a codepoint
 * boundary, and not before its closing punctuation. */
static void test_break_long_word(void **state)
{
    (void)state;
    expect_lines("Concat(head₁,head₂)·W_O", 6, (const char *const[]){"Concat", "(head", "₁,hea", "d₂)·", "W_O"}, 5);
    expect_lines("abcdefg,hij", 7, (const char *const[]){"abcdef", "g,hij"}, 2);
    expect_lines("see supercalifragilistic", 8, (const char *const[]){"see", "supercal", "ifragili", "stic"}, 4);
}

static int is_word_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int has_prefix_of(const char *s, size_t n, const char *const *set)
{
    for (int i = 0; set[i]; i++)
        if (n >= strlen(set[i]) && !memcmp(s, set[i], strlen(set[i]))) return 1;
    return 0;
}

static int has_suffix_of(const char *s, size_t n, const char *const *set)
{
    for (int i = 0; set[i]; i++)
        if (n >= strlen(set[i]) && !memcmp(s + n - strlen(set[i]), set[i], strlen(set[i]))) return 1;
    return 0;
}

/* The rule at every width, on mixed narration: no text is lost, each line
 * fits, no line starts with closing punctuation or ends with an opening
 * bracket, no English word is cut, and every line is whole UTF-8. */
static void test_break_every_width(void **state)
{
    (void)state;
    static const char *const closing[] = {"，", "。", "、", "：", "；", "！", "？", "」", "』", "）", "》",
                                          "】", "…",  ",",  ".",  ":",  ";",  "!",  "?",  ")",  "]",  NULL};
    static const char *const opening[] = {"「", "『", "（", "《", "【", "(", "[", NULL};
    const char *text = "头 2，主语–动词：我把 0.8943 给了「喜欢」，「喜欢」把 0.8943 给了「我」。"
                       "Each row of weights₂ (3 × 3) sums to 1: softmax keeps the order. "
                       "缩放点积注意力（scaled dot-product attention）除以 √d_k，再做 softmax。";
    size_t len = strlen(text);
    for (int width = 12; width <= 80; width++) {
        size_t starts[128], lens[128];
        int n = render_break_lines(text, width, unit_advance, NULL, starts, lens, 128);
        assert_true(n < 128);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            const char *ln = text + starts[i];
            /* only spaces were dropped between lines */
            for (; at < starts[i]; at++)
                if (text[at] != ' ')
                    fail_msg("width %d: byte %zu '%c' lost before line %d", width, at, text[at], i + 1);
            at = starts[i] + lens[i];
            assert_true(lens[i] > 0);
            if ((((unsigned char)ln[0]) & 0xC0) == 0x80 || (at < len && (((unsigned char)text[at]) & 0xC0) == 0x80))
                fail_msg("width %d: line %d is cut inside a UTF-8 sequence", width, i + 1);
            if (text_units(ln, lens[i]) > width)
                fail_msg("width %d: line %d \"%.*s\" is wider", width, i + 1, (int)lens[i], ln);
            if (i > 0 && has_prefix_of(ln, lens[i], closing))
                fail_msg("width %d: line %d starts with punctuation: \"%.*s\"", width, i + 1, (int)lens[i], ln);
            if (i < n - 1 && has_suffix_of(ln, lens[i], opening))
                fail_msg("width %d: line %d ends with an opening bracket: \"%.*s\"", width, i + 1, (int)lens[i], ln);
            /* the longest words here, "dot-product" and "attention）", are 11 units */
            if (i < n - 1 && is_word_byte(ln[lens[i] - 1]) && is_word_byte(text[at]))
                fail_msg("width %d: a word is cut after line %d \"%.*s\"", width, i + 1, (int)lens[i], ln);
        }
        assert_int_equal(at, len);
    }
}

/* render_wrap applies the rule with the real fonts' advances: at every pixel
 * width, no line of this narration starts with 「，」「：」 or 「。」. */
static void test_wrap_fonts(void **state)
{
    (void)state;
    Canvas *c = canvas_make(64, 64, 1);
    const char *text =
        "头 2，主语–动词：我把 0.8943 给了喜欢，喜欢把 0.8943 给了我。同一个词「喜欢」，在头 1 里看跑步。";
    int lines_seen = 0;
    for (int width = 60; width <= 500; width++) {
        size_t starts[64], lens[64];
        int n = render_wrap(c->rc, text, 16, width, starts, lens, 64);
        lines_seen += n;
        for (int i = 0; i < n; i++) {
            const char *ln = text + starts[i];
            assert_true(text_measure(&c->rc->text, ln, lens[i], 16) <= width);
            if (i > 0 &&
                (!strncmp(ln, "，", 3) || !strncmp(ln, "：", 3) || !strncmp(ln, "。", 3) || !strncmp(ln, "」", 3)))
                fail_msg("width %d px: line %d starts with punctuation: \"%.*s\"", width, i + 1, (int)lens[i], ln);
        }
    }
    assert_true(lines_seen > 441 * 2); /* it did wrap */
    canvas_free(c);
}

/* Additive attention's hidden step: W_a multiplies [x_i ; y_j], so X stands
 * repeated and Y tiled, one row per pair: drawn row p of them is X's row
 * p / n_k and Y's row p % n_k (colour and mouse both), and a line in the
 * text colour separates W_a's d_x rows for x_i from its rows for y_j. */
static void test_additive_pairs(void **state)
{
    (void)state;
    static const char *json =
        "{\"format\": \"attnviz-lesson/1\", \"id\": \"test-additive\", \"title\": {\"en\": \"Additive\"},"
        " \"attention\": \"additive\", \"tokens\": [\"s1\", \"s2\"], \"source_tokens\": [\"a\", \"b\", \"c\"],"
        " \"X\": [[0.1, 0.9, 0.2], [0.1, 0.2, 0.9]], \"Y\": [[1, 0, 0, 0.5], [0, 1, 0, 0.5], [0, 0, 1, 0.5]],"
        " \"W_a\": [[0, -2, -2], [-2, 0, -2], [-2, -2, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]],"
        " \"v_a\": [1, 1, 1]}";
    for (int col = 0; col < 2; col++) {
        Canvas *c = canvas_make_json(1280, 720, 1, json);
        View *v = &c->view;
        view_set_notation(v, col ? VIEW_NOTATION_COLUMN : VIEW_NOTATION_ROW);
        const AttnTrace *t = view_trace(v);
        goto_name(v, "hidden");
        draw(c);
        const AttnStep *X = attn_trace_find_name(t, "X"), *Y = attn_trace_find_name(t, "Y");
        int xi = attn_trace_index(t, X), yi = attn_trace_index(t, Y);
        SDL_Rect x0, x1, y0, y1;
        /* the first drawn row standing for X's row 1 is pair 3 (s2 ; a); Y's row 1 is pair 1 (s1 ; b) */
        assert_int_equal(render_cell_rect(c->rc, t, xi, 0, 0, &x0), 0);
        assert_int_equal(render_cell_rect(c->rc, t, xi, 1, 0, &x1), 0);
        assert_int_equal(render_cell_rect(c->rc, t, yi, 0, 0, &y0), 0);
        assert_int_equal(render_cell_rect(c->rc, t, yi, 1, 0, &y1), 0);
        /* (cells are a pixel more or less as their edges round) */
        if (!col) {
            assert_true(abs(x1.y - x0.y - 3 * x0.h) <= 2 && abs(y1.y - y0.y - y0.h) <= 1);
        } else {
            assert_true(abs(x1.x - x0.x - 3 * x0.w) <= 2 && abs(y1.x - y0.x - y0.w) <= 1);
        }
        /* pair 4 (s2 ; b): X's row 1 and Y's row 1, by colour and by mouse;
         * for X the drawn row after pair 3's (x1), for Y the fourth after
         * pair 0's (whole cells do not add up to the rounded edges) */
        SDL_Rect px = x1, py = y0;
        if (!col) {
            px.y += x1.h;
            py.y += 4 * y0.h;
        } else {
            px.x += x1.w;
            py.x += 4 * y0.w;
        }
        RenderHit hit;
        assert_int_equal(render_hit_test(c->rc, &c->view, px.x + px.w / 2, px.y + px.h / 2, &hit), RENDER_HIT_CELL);
        assert_int_equal(hit.step, xi);
        assert_int_equal(hit.row, 1);
        assert_int_equal(hit.col, 0);
        assert_int_equal(render_hit_test(c->rc, &c->view, py.x + py.w / 2, py.y + py.h / 2, &hit), RENDER_HIT_CELL);
        assert_int_equal(hit.step, yi);
        assert_int_equal(hit.row, 1);
        /* (a corner of the cell, clear of its number) */
        assert_true(same_rgb(pixel(c, px.x + 3, px.y + 3), render_value_color(X->data[1 * 3 + 0], 0, 0.9f)));
        /* W_a: the text-coloured line between row 2 (x_i's last) and row 3 (y_j's first) */
        int wi = attn_trace_index(t, attn_trace_find_name(t, "W_a"));
        SDL_Rect w2, w3;
        assert_int_equal(render_cell_rect(c->rc, t, wi, 2, 0, &w2), 0);
        assert_int_equal(render_cell_rect(c->rc, t, wi, 3, 0, &w3), 0);
        const Theme *th = render_theme(v->theme);
        int lx = col ? w3.x : w3.x + w3.w / 2, ly = col ? w3.y + w3.h / 2 : w3.y;
        if (!same_rgb(pixel(c, lx, ly), th->text))
            fail_msg("%s notation: no line between W_a's x_i and y_j rows at (%d, %d)", col ? "column" : "row", lx, ly);
        canvas_free(c);
    }
}

/* Why the line break that ends a line at text[end] and starts the next at
 * text[next] breaks the rule, or NULL: not before closing punctuation, not
 * after an opening bracket, and not inside a word (a run of characters that
 * are neither spaces nor CJK) unless the word, with the closing punctuation
 * after it, is wider than the line. */
static const char *wrap_fault(RenderCtx *rc, const char *text, size_t end, size_t next, int size, int width)
{
    static const char *const closing[] = {"，", "。", "、", "：", "；", "！", "？", "」", "』", "）", "》",
                                          "】", "…",  ",",  ".",  ":",  ";",  "!",  "?",  ")",  "]",  NULL};
    static const char *const opening[] = {"「", "『", "（", "《", "【", "(", "[", NULL};
    if (has_prefix_of(text + next, strlen(text + next), closing)) return "a line starts with closing punctuation";
    if (has_suffix_of(text, end, opening)) return "a line ends with an opening bracket";
    if (end != next || !end) return NULL; /* broke at spaces */
    const char *a = text + end, *p = a;
    const char *before = a;
    do before--;
    while (before > text && ((unsigned char)*before & 0xC0) == 0x80);
    const char *q = before;
    uint32_t prev = render_utf8_next(&q), cur = render_utf8_next(&p);
    if (render_is_cjk(prev) || render_is_cjk(cur) || prev == '\n') return NULL;
    /* inside a word: the whole word must be wider than the line */
    const char *w0 = before, *w1 = a;
    while (w0 > text) {
        const char *b = w0;
        do b--;
        while (b > text && ((unsigned char)*b & 0xC0) == 0x80);
        const char *t = b;
        uint32_t c = render_utf8_next(&t);
        if (c == ' ' || c == '\n' || render_is_cjk(c)) break;
        w0 = b;
    }
    for (const char *t = w1; *t;) {
        uint32_t c = render_utf8_next(&t);
        if (c == ' ' || c == '\n' || render_is_cjk(c)) break;
        w1 = t;
    }
    /* closing punctuation after it goes with it: 「k。」 cannot be parted */
    while (has_prefix_of(w1, strlen(w1), closing)) render_utf8_next(&w1);
    if (text_measure(&rc->text, w0, (size_t)(w1 - w0), size) > width) return NULL;
    return "a word is cut";
}

/* Every narration of every lesson, in both languages, wrapped at three
 * widths with the bundled fonts, breaks only where the rule allows. */
static void test_wrap_lessons(void **state)
{
    (void)state;
    Canvas *c = canvas_make(64, 64, 1);
    static const char *const lessons[] = {"mhsa-wo-xihuan-paobu.json", "causal-mask-decoder.json",
                                          "mask-fill-values.json",     "cross-attention-en-zh.json",
                                          "additive-bahdanau.json",    "scaling-pitfalls.json",
                                          "key-padding.json",          "seed000-projection-biases.json",
                                          "seed002-x-to-qkv.json",     "single-vs-multi-head.json"};
    int checked = 0;
    for (size_t k = 0; k < sizeof lessons / sizeof lessons[0]; k++) {
        char path[512], err[512];
        snprintf(path, sizeof path, "%s/../lessons/%s", ATTNVIZ_TESTS_DIR, lessons[k]);
        Lesson l;
        LessonError le;
        if (lesson_load(&l, path, &le) != 0) fail_msg("%s", le.msg);
        View v;
        if (view_init(&v, &l, err, sizeof err) != 0) fail_msg("%s", err);
        const AttnTrace *t = view_trace(&v);
        for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
            v.lang = (LessonLang)lang;
            for (int i = 0; i < t->n_steps; i++) {
                static char text[8192];
                view_step_narration(&v, t, i, text, sizeof text);
                for (int width = 150; width <= 560; width += 137) {
                    size_t starts[128], lens[128];
                    int n = render_wrap(c->rc, text, 15, width, starts, lens, 128);
                    for (int j = 0; j + 1 < n; j++) {
                        const char *fault = wrap_fault(c->rc, text, starts[j] + lens[j], starts[j + 1], 15, width);
                        if (fault)
                            fail_msg("%s, step %d (%s), %d px: %s: \"%.*s\" / \"%.*s\"", lessons[k], i,
                                     lang ? "zh" : "en", width, fault, (int)lens[j], text + starts[j], (int)lens[j + 1],
                                     text + starts[j + 1]);
                        checked++;
                    }
                }
            }
        }
        view_free(&v);
        lesson_free(&l);
    }
    assert_true(checked > 1000);
    canvas_free(c);
}

/* The bundled fonts found through an assets folder named by a path of
 * over 1,024 bytes ("/." steps): looked for under the whole path, never a
 * cut one. */
static void test_long_assets_path(void **state)
{
    (void)state;
    size_t n = strlen(ATTNVIZ_TESTS_DIR) + 2 * 700 + sizeof "/../assets";
    char *dir = malloc(n), err[512];
    assert_non_null(dir);
    strcpy(dir, ATTNVIZ_TESTS_DIR);
    for (int i = 0; i < 700; i++) strcat(dir, "/.");
    strcat(dir, "/../assets");
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 64, 64, 32, SDL_PIXELFORMAT_ARGB8888);
    assert_non_null(surf);
    SDL_Renderer *sdl = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(sdl);
    RenderOptions opt = {0};
    opt.no_system_fonts = 1;
    opt.assets_dir = dir;
    RenderCtx *rc = render_create(sdl, &opt, err, sizeof err);
    if (!rc) fail_msg("render_create with a %zu-byte assets path: %s", strlen(dir), err);
    assert_int_equal(render_font_count(rc), 2);
    render_destroy(rc);
    SDL_DestroyRenderer(sdl);
    SDL_FreeSurface(surf);
    free(dir);
}

int main(void)
{
    SDL_SetHint(SDL_HINT_RENDER_DRIVER, "software");
    if (TTF_Init() != 0) {
        fprintf(stderr, "TTF_Init: %s\n", TTF_GetError());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell_colours),
        cmocka_unit_test(test_blocked_cells),
        cmocka_unit_test(test_legend_and_labels),
        cmocka_unit_test(test_hits_outlive_no_trace),
        cmocka_unit_test(test_chinese_glyphs),
        cmocka_unit_test(test_long_assets_path),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_numbers_change),
        cmocka_unit_test(test_edit_keeps_lesson_choices),
        cmocka_unit_test(test_masked_animation_picks),
        cmocka_unit_test(test_number_styles),
        cmocka_unit_test(test_number_ink),
        cmocka_unit_test(test_all_states_draw),
        cmocka_unit_test(test_zoom),
        cmocka_unit_test(test_zoom_beside_elided),
        cmocka_unit_test(test_concat_slide),
        cmocka_unit_test(test_heads_strip_labels),
        cmocka_unit_test(test_focus_and_slides),
        cmocka_unit_test(test_status_names_a_mode_only_with_heads),
        cmocka_unit_test(test_no_inbetween_numbers),
        cmocka_unit_test(test_long_label_hover),
        cmocka_unit_test(test_blocked_weights_true_values),
        cmocka_unit_test(test_weight_scales),
        cmocka_unit_test(test_column_notation),
        cmocka_unit_test(test_additive_pairs),
        cmocka_unit_test(test_break_kinsoku),
        cmocka_unit_test(test_break_words),
        cmocka_unit_test(test_break_long_word),
        cmocka_unit_test(test_break_every_width),
        cmocka_unit_test(test_wrap_fonts),
        cmocka_unit_test(test_wrap_lessons),
        cmocka_unit_test(test_texture_budget),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    TTF_Quit();
    attn_shutdown();
    return rc;
}
