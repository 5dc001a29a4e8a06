/* test_render_fonts.c: every codepoint the program can show has a glyph in
 * the font chain: every entry of the string table in both languages (the
 * step-kind phrases among them) and every character of every lesson in
 * lessons/ (titles, tokens, narration). Checked against the bundled fonts
 * alone (assets/fonts, so the program works with no system fonts) and
 * against the default chain. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#include <SDL.h>
#include <SDL_ttf.h>

#include "render.h"

#define LESSONS_DIR ATTNVIZ_TESTS_DIR "/../lessons"

static RenderCtx *make_ctx(SDL_Renderer **sdl, SDL_Surface **surf, int bundled_only)
{
    *surf = SDL_CreateRGBSurfaceWithFormat(0, 16, 16, 32, SDL_PIXELFORMAT_ARGB8888);
    *sdl = SDL_CreateSoftwareRenderer(*surf);
    assert_non_null(*sdl);
    RenderOptions opt = {0};
    opt.no_system_fonts = bundled_only;
    opt.assets_dir = ATTNVIZ_TESTS_DIR "/../assets";
    char err[512];
    RenderCtx *rc = render_create(*sdl, &opt, err, sizeof err);
    if (!rc) fail_msg("render_create: %s", err);
    return rc;
}

/* Counts codepoints of s with no glyph; prints the first few. */
static int missing_in(const RenderCtx *rc, const char *what, const char *s)
{
    int missing = 0;
    const char *p = s;
    while (*p) {
        const char *at = p;
        uint32_t cp = render_utf8_next(&p);
        if (cp < 0x20 || cp == 0xFEFF) continue; /* control characters and a BOM are never drawn */
        if (render_font_for(rc, cp) < 0) {
            if (missing < 5)
                fprintf(stderr, "  %s: U+%04X '%.*s' at byte %zu has no glyph in the chain\n", what, cp, (int)(p - at),
                        at, (size_t)(at - s));
            missing++;
        }
    }
    return missing;
}

static void check_chain(int bundled_only)
{
    SDL_Renderer *sdl;
    SDL_Surface *surf;
    RenderCtx *rc = make_ctx(&sdl, &surf, bundled_only);
    int missing = 0, strings = 0;
    char what[512];
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        for (int id = 0; id < VS_STRING_COUNT; id++, strings++) {
            snprintf(what, sizeof what, "UI string %d (%s)", id, l ? "zh" : "en");
            missing += missing_in(rc, what, view_string((ViewString)id, (LessonLang)l));
        }
        for (int k = 0; k < ATTN_STEP_KIND_COUNT; k++)
            for (int n = 0; n < VIEW_NOTATION_COUNT; n++, strings++) {
                snprintf(what, sizeof what, "the text of kind %d (%s)", k, l ? "zh" : "en");
                missing += missing_in(rc, what, view_kind_text((AttnStepKind)k, (ViewNotation)n, (LessonLang)l));
            }
        char help[4096];
        view_help_text((LessonLang)l, help, sizeof help);
        snprintf(what, sizeof what, "the help's key table (%s)", l ? "zh" : "en");
        missing += missing_in(rc, what, help);
        strings++;
    }
    /* the symbols the formulas, shapes and cells draw */
    missing += missing_in(rc, "formula symbols", "softmax(Q₁·K₁ᵀ / √d_k) · V₂ head₁₂₃₄₅₆₇₈₉₀ 3×2 ÷ −∞ Σ = 1 → α_ij …");
    DIR *d = opendir(LESSONS_DIR);
    if (!d) fail_msg("cannot open %s", LESSONS_DIR);
    int lessons = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", LESSONS_DIR, e->d_name);
        char *text = test_read_file(path, NULL);
        if (!text) fail_msg("cannot read %s", path);
        /* the raw file: every character of titles, tokens and narration */
        missing += missing_in(rc, e->d_name, text);
        free(text);
        lessons++;
    }
    closedir(d);
    fprintf(stderr, "%s chain (%d fonts): %d UI strings, %d lessons, %d codepoints without a glyph\n",
            bundled_only ? "bundled" : "default", render_font_count(rc), strings, lessons, missing);
    assert_true(lessons > 0);
    assert_int_equal(missing, 0);
    render_destroy(rc);
    SDL_DestroyRenderer(sdl);
    SDL_FreeSurface(surf);
}

static void test_bundled_chain(void **state)
{
    (void)state;
    check_chain(1);
}

static void test_default_chain(void **state)
{
    (void)state;
    check_chain(0);
}

/* Neither bundled font covers both scripts: the chain needs both. */
static void test_chain_needs_both(void **state)
{
    (void)state;
    SDL_Renderer *sdl;
    SDL_Surface *surf;
    RenderCtx *rc = make_ctx(&sdl, &surf, 1);
    assert_int_equal(render_font_count(rc), 2);
    assert_non_null(strstr(render_font_path(rc, 0), "DejaVuSans.ttf"));
    assert_int_equal(render_font_for(rc, 0x1D40), 0); /* ᵀ: DejaVu */
    assert_int_equal(render_font_for(rc, 0x559C), 1); /* 喜: Noto CJK */
    render_destroy(rc);
    SDL_DestroyRenderer(sdl);
    SDL_FreeSurface(surf);
}

int main(void)
{
    if (TTF_Init() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_chain),
        cmocka_unit_test(test_default_chain),
        cmocka_unit_test(test_chain_needs_both),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    TTF_Quit();
    attn_shutdown();
    return rc;
}
