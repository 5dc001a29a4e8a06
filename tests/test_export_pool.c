/* test_export_pool.c: the encoding thread pool (src/export/export_pool.c).
 * Frames drawn with SDL's software renderer on a surface (no window) are
 * written by 1, 2 and 5 workers; every file must read back as the frame that
 * was drawn for it, whatever order the workers finish in. A failing write
 * stops the pool: acquire returns NULL, finish reports the first error, and
 * no partial file is left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>
#include <cmocka.h>

#include "test_util.h"

#include "export_pool.h"
#include "test_export_read.h"

static char scratch[256];

static int setup(void **state)
{
    (void)state;
    return test_scratch_dir(scratch, sizeof scratch, "pool");
}

static int teardown(void **state)
{
    (void)state;
    test_rm_rf(scratch);
    return 0;
}

/* Frame i: a background and an i-dependent grid of cells, like a heatmap. */
static void draw_frame(SDL_Renderer *r, int w, int h, int i)
{
    SDL_SetRenderDrawColor(r, 250, 250, 245, 255);
    SDL_RenderClear(r);
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 6; x++) {
            SDL_SetRenderDrawColor(r, (Uint8)(40 * x + i), (Uint8)(40 * y), (Uint8)(7 * i), 255);
            SDL_Rect cell = {20 + x * (w - 40) / 6, 20 + y * (h - 40) / 6, (w - 40) / 6 - 2, (h - 40) / 6 - 2};
            SDL_RenderFillRect(r, &cell);
        }
}

static void run_pool(int threads, int n_frames)
{
    const int w = 160, h = 90;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_XRGB8888);
    assert_non_null(surf);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(r);
    char err[512] = "";
    ExportPool *pool = export_pool_create(threads, w, h, EXPORT_PIXELS_BGRX32, NULL, err, sizeof err);
    if (!pool) fail_msg("%s", err);
    assert_int_equal(export_pool_threads(pool), threads);
    for (int i = 0; i < n_frames; i++) {
        size_t pitch;
        unsigned char *px = export_pool_acquire(pool, &pitch);
        assert_non_null(px);
        draw_frame(r, w, h, i);
        assert_int_equal(SDL_RenderReadPixels(r, NULL, SDL_PIXELFORMAT_XRGB8888, px, (int)pitch), 0);
        char path[512], idx[16];
        snprintf(path, sizeof path, "%s/t%d-%03d.png", scratch, threads, i);
        snprintf(idx, sizeof idx, "%d", i);
        ExportPngText text[] = {{"attnviz:frame", idx}};
        assert_int_equal(export_pool_submit(pool, px, path, text, 1), 0);
        /* every third frame is also held: copies of its bytes under other names */
        for (int k = 0; i % 3 == 0 && k < 3; k++) {
            snprintf(path, sizeof path, "%s/t%d-%03d-copy%d.png", scratch, threads, i, k);
            assert_int_equal(export_pool_submit_copy(pool, path), 0);
        }
    }
    if (export_pool_finish(pool, err, sizeof err) != 0) fail_msg("%s", err);
    ExportPoolStats st;
    export_pool_stats(pool, &st);
    int held = 3 * ((n_frames + 2) / 3);
    assert_int_equal(st.files, n_frames + held);
    assert_int_equal(st.copies, held);
    assert_int_equal(st.submitted, n_frames + held);
    assert_true(st.bytes > 0);
    export_pool_destroy(pool);
    /* every file is the frame drawn for its name */
    for (int i = 0; i < n_frames; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/t%d-%03d.png", scratch, threads, i);
        TestPng png;
        if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
        assert_int_equal(png.width, w);
        assert_int_equal(png.height, h);
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i);
        assert_string_equal(test_png_text(&png, "attnviz:frame"), idx);
        draw_frame(r, w, h, i);
        SDL_RenderFlush(r);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                Uint32 v = ((Uint32 *)((Uint8 *)surf->pixels + y * surf->pitch))[x];
                Uint8 rr, gg, bb;
                SDL_GetRGB(v, surf->format, &rr, &gg, &bb);
                const unsigned char *q = png.rgba + ((size_t)y * w + x) * 4;
                if (q[0] != rr || q[1] != gg || q[2] != bb)
                    fail_msg("%s (%d,%d): drawn %d,%d,%d, file %d,%d,%d", path, x, y, rr, gg, bb, q[0], q[1], q[2]);
            }
        /* a copy is the same bytes as its frame */
        for (int k = 0; i % 3 == 0 && k < 3; k++) {
            char cpath[512], cmd[1200];
            snprintf(cpath, sizeof cpath, "%s/t%d-%03d-copy%d.png", scratch, threads, i, k);
            snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", path, cpath);
            if (system(cmd) != 0) fail_msg("%s differs from %s", cpath, path);
        }
        test_png_free(&png);
    }
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
}

static void test_pool_threads(void **state)
{
    (void)state;
    run_pool(1, 7);
    run_pool(2, 23);
    run_pool(5, 12);
    assert_int_equal(test_dir_count(scratch), 7 + 3 * 3 + 23 + 3 * 8 + 12 + 3 * 4);
}

/* Memory, not the thread count, bounds the pool: 16384×16384 frames are
 * 1 GiB each, so 16 threads get 2 buffers and one worker. (The buffers are
 * allocated, not touched: this costs address space, not memory.) */
static void test_pool_memory_bound(void **state)
{
    (void)state;
    char err[256];
    ExportPool *p = export_pool_create(16, 16384, 16384, EXPORT_PIXELS_BGRX32, NULL, err, sizeof err);
    if (!p) skip(); /* no 2 GiB of address space here */
    assert_int_equal(export_pool_threads(p), 1);
    export_pool_destroy(p);
    /* small frames: the threads asked for */
    p = export_pool_create(16, 640, 360, EXPORT_PIXELS_BGRX32, NULL, err, sizeof err);
    assert_non_null(p);
    assert_int_equal(export_pool_threads(p), 16);
    export_pool_destroy(p);
    /* frames of a quarter of the budget: 4 buffers, 3 workers */
    p = export_pool_create(16, 8192, 8192, EXPORT_PIXELS_BGRX32, NULL, err, sizeof err);
    if (!p) skip();
    assert_int_equal(export_pool_threads(p), 3);
    export_pool_destroy(p);
}

static void test_pool_failure(void **state)
{
    (void)state;
    const int w = 64, h = 32;
    char err[512] = "";
    ExportPool *pool = export_pool_create(2, w, h, EXPORT_PIXELS_BGRX32, NULL, err, sizeof err);
    assert_non_null(pool);
    assert_int_equal(export_pool_submit_copy(pool, "/nonexistent/x.png"), -1); /* nothing to copy yet */
    int failed_at = -1;
    /* keep submitting until the pool reports the failure (at most ~10 s, so
     * that a loaded machine cannot make this flaky) */
    for (int i = 0; i < 5000; i++) {
        size_t pitch;
        unsigned char *px = export_pool_acquire(pool, &pitch);
        if (!px) {
            failed_at = i;
            break;
        }
        memset(px, i, pitch * (size_t)h);
        char path[512];
        /* frame 3 goes to a folder that does not exist */
        if (i == 3)
            snprintf(path, sizeof path, "%s/missing/%03d.png", scratch, i);
        else
            snprintf(path, sizeof path, "%s/%03d.png", scratch, i);
        if (export_pool_submit(pool, px, path, NULL, 0) != 0) {
            failed_at = i;
            break;
        }
        nanosleep(&(struct timespec){0, 2000000}, NULL); /* let the workers catch up, so that the failure is seen */
    }
    assert_true(failed_at > 3);
    assert_int_equal(export_pool_finish(pool, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing/003.png"));
    assert_non_null(strstr(err, "does not exist"));
    ExportPoolStats st;
    export_pool_stats(pool, &st);
    export_pool_destroy(pool);
    /* the files written are complete PNGs, and there is nothing else */
    assert_int_equal(test_dir_count(scratch), st.files);
    for (int i = 0; i < 5000; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%03d.png", scratch, i);
        if (access(path, F_OK) != 0) continue;
        TestPng png;
        if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
        test_png_free(&png);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pool_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_failure, setup, teardown),
        cmocka_unit_test(test_pool_memory_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
