/* bench_edits.c: `attnviz bench --edits N [LESSON]`, the latency of an edit
 * end to end, as the window lives it: set one number (src/view/edit.h),
 * recompute both of the View's traces, and draw one 1920×1080 frame on the
 * software renderer that `attnviz show` and `attnviz export` use.
 *
 * The edits are scripted and seeded, the same on every run: edit k sets a cell
 * of the k-th editable matrix in turn (X, W_Q, W_K, ... as the lesson has
 * them) to its value as loaded plus a small step, so that numbers stay in
 * their range. The View shows the first head's attention weights, the step
 * every edit changes. Two lines: wall time per edit, then the process's CPU
 * time per edit (what a busy machine's other processes do not add to):
 *
 *   edits: N p50: X ms p99: Y ms
 *   cpu per edit: p50: X ms p99: Y ms
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "app.h"
#include "edit.h"
#include "lesson.h"
#include "render.h"
#include "view.h"

enum { BENCH_EDIT_W = 1920, BENCH_EDIT_H = 1080 };

typedef struct BenchEdit {
    Edit edit;
    View view;
} BenchEdit;

static int bench_follow(void *user, char *err, size_t errlen)
{
    return view_recompute(&((BenchEdit *)user)->view, err, errlen);
}

static double clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted values (nearest rank). */
static double quantile(const double *v, int n, double q)
{
    int k = (int)ceil(q * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

int bench_edits(int n, const char *lesson_arg, int threads)
{
    Lesson lesson;
    if (app_load_lesson(lesson_arg ? lesson_arg : LESSON_DEFAULT_ID, &lesson) != 0) return APP_USAGE;
    lesson.cfg.threads = threads;
    BenchEdit *b = calloc(1, sizeof *b);
    double *ms = malloc(sizeof(double) * (size_t)n);  /* (n) per-edit wall times */
    double *cpu = malloc(sizeof(double) * (size_t)n); /* (n) per-edit CPU times of the process */
    SDL_Surface *surface = NULL;
    SDL_Renderer *sdl = NULL;
    RenderCtx *rc = NULL;
    int status = APP_OK, ttf = 0;
    char err[640];
    if (!b || !ms || !cpu) {
        status = app_fail(APP_RUNTIME, "out of memory");
        goto done;
    }
    if (edit_init_copy(&b->edit, &lesson, err, sizeof err) != 0 ||
        view_init(&b->view, edit_lesson(&b->edit), err, sizeof err) != 0) {
        status = app_fail(APP_USAGE, "%s: %s", lesson.path, err);
        goto done;
    }
    b->edit.recompute = bench_follow;
    b->edit.user = b;
    const AttnStep *w = attn_trace_find(b->view.trace, ATTN_STEP_SOFTMAX, b->view.trace->cfg.attention == ATTN_DOT);
    if (w) view_goto(&b->view, attn_trace_index(b->view.trace, w));
    view_finish(&b->view);

    if (!TTF_WasInit()) {
        if (TTF_Init() != 0) {
            status = app_fail(APP_RUNTIME, "starting SDL_ttf: %s", TTF_GetError());
            goto done;
        }
        ttf = 1;
    }
    surface = SDL_CreateRGBSurfaceWithFormat(0, BENCH_EDIT_W, BENCH_EDIT_H, 32, SDL_PIXELFORMAT_XRGB8888);
    if (surface) sdl = SDL_CreateSoftwareRenderer(surface);
    if (sdl) rc = render_create(sdl, NULL, err, sizeof err);
    if (!rc) {
        status = app_fail(APP_RUNTIME, "the software renderer: %s", sdl ? err : SDL_GetError());
        goto done;
    }
    render_frame(rc, &b->view, BENCH_EDIT_W, BENCH_EDIT_H); /* warm-up: fonts, glyph caches */

    int mats[LESSON_MAT_COUNT], n_mats = 0;
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        int r, c;
        if (edit_shape(&b->edit, m, &r, &c) == 0) mats[n_mats++] = m;
    }
    unsigned long long seed = 0x5eed;
    for (int k = 0; k < n; k++) {
        int m = mats[k % n_mats], rows, cols;
        edit_shape(&b->edit, m, &rows, &cols);
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int r = (int)((seed >> 33) % (unsigned long long)rows), c = (int)((seed >> 13) % (unsigned long long)cols);
        int cr, cc;
        double v =
            (double)lesson_matrix(&lesson, m, &cr, &cc)[(size_t)r * (size_t)cols + (size_t)c] + 0.05 * (k % 7 - 3);
        double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (edit_set_cell(&b->edit, m, r, c, v, 0) != 0) {
            status = app_fail(APP_RUNTIME, "edit %d: %s", k, b->edit.msg);
            goto done;
        }
        render_frame(rc, &b->view, BENCH_EDIT_W, BENCH_EDIT_H);
        ms[k] = clock_ms(CLOCK_MONOTONIC) - t0;
        cpu[k] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    qsort(cpu, (size_t)n, sizeof *cpu, cmp_double);
    printf("edits: %d p50: %.3f ms p99: %.3f ms\n", n, quantile(ms, n, 0.5), quantile(ms, n, 0.99));
    /* CPU time is what a busy machine's other processes do not add to */
    printf("cpu per edit: p50: %.3f ms p99: %.3f ms\n", quantile(cpu, n, 0.5), quantile(cpu, n, 0.99));
    app_flush_stdout();
done:
    render_destroy(rc);
    if (sdl) SDL_DestroyRenderer(sdl);
    if (surface) SDL_FreeSurface(surface);
    if (ttf) TTF_Quit();
    if (b) {
        view_free(&b->view);
        edit_free(&b->edit);
    }
    free(b);
    free(ms);
    free(cpu);
    lesson_free(&lesson);
    return status;
}
