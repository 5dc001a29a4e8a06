/* test_export.c: `attnviz export` end to end (src/export/export.c and the
 * real program): every exported file is a valid PNG of the requested size
 * with its text chunks; index.json lists exactly the files; --frames writes
 * the number of frames the durations and fps imply; the sheet is A4 pages,
 * as many as the steps need; each failure (missing parent folder, a folder under a regular
 * file, /proc, an invalid size, a full disk) gives its one-line message and
 * exit status and leaves no partial file; and export's pixels equal the
 * window's for the same view state and size. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "test_util.h"

#include "export.h"
#include "export_internal.h" /* the output folder's rules: what attnviz calls its own */
#include "render_internal.h" /* the frame's text boxes */
#include "test_export_read.h"

#define LESSON_A ATTNVIZ_SOURCE_DIR "/lessons/mhsa-wo-xihuan-paobu.json"
#define LESSON_B ATTNVIZ_SOURCE_DIR "/lessons/causal-mask-decoder.json"

static char scratch[256];

static int setup(void **state)
{
    (void)state;
    return test_scratch_dir(scratch, sizeof scratch, "export");
}

static int teardown(void **state)
{
    (void)state;
    test_rm_rf(scratch);
    return 0;
}

static void load(Lesson *l, const char *path)
{
    LessonError e;
    if (lesson_load(l, path, &e) != 0) fail_msg("%s", e.msg);
}

/* Every name in dir is a complete PNG of w × h, or index.json, or the
 * journal of an export that did not finish; returns the PNG count. */
static int check_dir_pngs(const char *dir, int w, int h)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char name[512];
    int n = 0;
    while (fgets(name, sizeof name, p)) {
        name[strcspn(name, "\n")] = 0;
        if (strcmp(name, EXPORT_INDEX_NAME) == 0 || strcmp(name, "." EXPORT_INDEX_NAME EXPORT_JOURNAL_MARKER) == 0)
            continue;
        if (name[0] == '.') fail_msg("%s/%s: a temporary or hidden file was left behind", dir, name);
        size_t len = strlen(name);
        if (len < 4 || strcmp(name + len - 4, ".png") != 0) fail_msg("%s/%s: not a PNG name", dir, name);
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        TestPng png;
        if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
        if (png.width != w || png.height != h) fail_msg("%s: %dx%d, expected %dx%d", path, png.width, png.height, w, h);
        test_png_free(&png);
        n++;
    }
    pclose(p);
    return n;
}

/* ---- files and index.json ---- */

static void test_steps_files_and_index(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 480;
    opt.height = 270;
    opt.lang = LESSON_ZH;
    char dir[512], err[1024];
    snprintf(dir, sizeof dir, "%s/out", scratch); /* made by export: its parent exists */
    ExportResult res;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    View v;
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    const AttnTrace *t = view_trace(&v);
    assert_int_equal(res.files, t->n_steps);
    assert_int_equal(check_dir_pngs(dir, 480, 270), t->n_steps);

    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, EXPORT_INDEX_NAME);
    char *json = test_read_file(path, NULL);
    assert_non_null(json);
    cJSON *idx = cJSON_Parse(json);
    assert_non_null(idx);
    assert_string_equal(cJSON_GetObjectItem(idx, "format")->valuestring, EXPORT_FORMAT);
    assert_string_equal(cJSON_GetObjectItem(idx, "lang")->valuestring, "zh");
    assert_int_equal(cJSON_GetObjectItem(idx, "width")->valueint, 480);
    cJSON *files = cJSON_GetObjectItem(idx, "files");
    assert_int_equal(cJSON_GetArraySize(files), t->n_steps);
    v.lang = LESSON_ZH;
    int i = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, files)
    {
        const AttnStep *s = &t->steps[i];
        char expect[64];
        /* numbered from 1, as the window counts steps */
        snprintf(expect, sizeof expect, "%03d-%s%s", i + 1, attn_step_kind_name(s->kind), s->head ? "-h" : ".png");
        const char *file = cJSON_GetObjectItem(e, "file")->valuestring;
        if (strncmp(file, expect, strlen(expect)) != 0)
            fail_msg("index file %d is %s, expected %s...", i, file, expect);
        assert_int_equal(cJSON_GetObjectItem(e, "step")->valueint, i + 1);
        assert_string_equal(cJSON_GetObjectItem(e, "kind")->valuestring, attn_step_kind_name(s->kind));
        assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, s->name);
        assert_int_equal(cJSON_GetObjectItem(e, "head")->valueint, s->head);
        view_goto(&v, i);
        view_finish(&v);
        assert_string_equal(cJSON_GetObjectItem(e, "formula")->valuestring, view_formula(&v));
        char narr[4096];
        view_narration(&v, narr, sizeof narr);
        assert_string_equal(cJSON_GetObjectItem(e, "narration")->valuestring, narr);
        /* the PNG says the same about itself, and is what index.json recorded */
        snprintf(path, sizeof path, "%s/%s", dir, file);
        size_t bytes = 0;
        char *data = test_read_file(path, &bytes), hex[EXPORT_SHA256_HEX];
        assert_non_null(data);
        export__sha256(data, bytes, hex);
        free(data);
        assert_int_equal(cJSON_GetObjectItem(e, "bytes")->valuedouble, (double)bytes);
        assert_string_equal(cJSON_GetObjectItem(e, "sha256")->valuestring, hex);
        TestPng png;
        if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
        assert_string_equal(test_png_text(&png, "attnviz:step-kind"), attn_step_kind_name(s->kind));
        assert_string_equal(test_png_text(&png, "attnviz:step-name"), s->name);
        assert_string_equal(test_png_text(&png, "attnviz:formula"), view_formula(&v));
        assert_string_equal(test_png_text(&png, "Title"), lesson_text(&l.title, LESSON_ZH));
        assert_string_equal(test_png_text(&png, "Software"), "attnviz " ATTNVIZ_VERSION);
        assert_string_equal(test_png_text(&png, "Description"), narr);
        char head[8];
        snprintf(head, sizeof head, "%d", s->head);
        assert_string_equal(test_png_text(&png, "attnviz:head"), head);
        assert_int_equal(png.phys_x, 3780); /* 96 dpi: a layout pixel is a CSS pixel */
        test_png_free(&png);
        i++;
    }
    /* head 2's weights are named by their place in the trace, from 1 */
    const AttnStep *w2 = attn_trace_find(t, ATTN_STEP_SOFTMAX, 2);
    assert_non_null(w2);
    snprintf(path, sizeof path, "%s/%03d-softmax-h2.png", dir, attn_trace_index(t, w2) + 1);
    assert_int_equal(access(path, F_OK), 0);
    cJSON_Delete(idx);
    free(json);
    view_free(&v);
    lesson_free(&l);
}

static void test_select_steps(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    View v;
    char err[512];
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    const AttnTrace *t = view_trace(&v);
    unsigned char *sel = calloc((size_t)t->n_steps, 1);
    assert_int_equal(export_select_steps(t, NULL, 0, sel, err, sizeof err), t->n_steps);
    assert_int_equal(export_select_steps(t, "softmax", 0, sel, err, sizeof err), 2);
    assert_int_equal(export_select_steps(t, "softmax", 2, sel, err, sizeof err), 1);
    assert_int_equal(sel[attn_trace_index(t, attn_trace_find(t, ATTN_STEP_SOFTMAX, 2))], 1);
    assert_int_equal(export_select_steps(t, "3-5", 0, sel, err, sizeof err), 3); /* steps 3..5: indices 2..4 */
    assert_true(sel[2] && sel[3] && sel[4] && !sel[1] && !sel[5]);
    assert_int_equal(export_select_steps(t, "weights_1", 0, sel, err, sizeof err), 1);
    /* from the first scores to the last softmax: both heads' scores..softmax */
    int first = attn_trace_index(t, attn_trace_find(t, ATTN_STEP_SCORES, 1));
    int last = attn_trace_index(t, attn_trace_find(t, ATTN_STEP_SOFTMAX, 2));
    assert_int_equal(export_select_steps(t, "scores-softmax", 0, sel, err, sizeof err), last - first + 1);
    assert_int_equal(export_select_steps(t, "concat-", 0, sel, err, sizeof err),
                     t->n_steps - attn_trace_index(t, attn_trace_find(t, ATTN_STEP_CONCAT, 0)));
    assert_int_equal(export_select_steps(t, "-2", 0, sel, err, sizeof err), 2);
    assert_true(sel[0] && sel[1] && !sel[2]);
    assert_int_equal(export_select_steps(t, "0", 0, sel, err, sizeof err), -1); /* there is no step 0 */
    assert_non_null(strstr(err, "step number (1.."));
    assert_int_equal(export_select_steps(t, "bogus", 0, sel, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"bogus\""));
    assert_int_equal(export_select_steps(t, "9-3", 0, sel, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty"));
    assert_int_equal(export_select_steps(t, "1-2-3", 0, sel, err, sizeof err), -1);
    assert_int_equal(export_select_steps(t, "999", 0, sel, err, sizeof err), -1);
    free(sel);
    view_free(&v);
    lesson_free(&l);
}

static void test_parse_size(void **state)
{
    (void)state;
    int w = 0, h = 0;
    char err[256];
    assert_int_equal(export_parse_size("1280x720", &w, &h, err, sizeof err), 0);
    assert_int_equal(w, 1280);
    assert_int_equal(h, 720);
    assert_int_equal(export_parse_size("800×600", &w, &h, err, sizeof err), 0);
    assert_int_equal(w, 800);
    const char *bad[] = {"",          "1280", "1280x",  "x720",      "-5x10",        "1280x720x3",
                         "12 80x720", "0x0",  "63x720", "16385x100", "99999999999x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        if (export_parse_size(bad[i], &w, &h, err, sizeof err) != -1) fail_msg("\"%s\" was accepted", bad[i]);
        assert_non_null(strstr(err, "--size"));
    }
}

/* ---- frames ---- */

static void test_frames_count(void **state)
{
    (void)state;
    ExportOptions opt;
    export_options_init(&opt);
    /* the formula, on values worked by hand */
    opt.fps = 30;
    opt.dwell = 1.0;
    assert_int_equal(export_step_frames(1.0, &opt), 60);
    assert_int_equal(export_step_frames(0.0, &opt), 30);
    opt.dwell = 0;
    assert_int_equal(export_step_frames(0.0, &opt), 1);
    opt.fps = 10;
    opt.dwell = 0.25;
    assert_int_equal(export_step_frames(0.5, &opt), 8); /* ceil(7.5) */
    opt.speed = 2;
    assert_int_equal(export_step_frames(0.5, &opt), 4); /* ceil(3.75) */

    /* a real run: the files are exactly 000000.png .. N-1 */
    Lesson l;
    load(&l, LESSON_B);
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    opt.frames = 1;
    opt.fps = 12;
    opt.dwell = 0.25;
    opt.steps = "scores-softmax";
    View v;
    char err[1024];
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    const AttnTrace *t = view_trace(&v);
    unsigned char *sel = calloc((size_t)t->n_steps, 1);
    assert_true(export_select_steps(t, opt.steps, 0, sel, err, sizeof err) > 0);
    int expect = 0, animated = 0;
    for (int i = 0; i < t->n_steps; i++)
        if (sel[i]) {
            double d = view_step_duration(&v, i);
            animated += d > 0;
            int n = (int)ceil((d + 0.25) * 12 - 1e-9);
            expect += n < 1 ? 1 : n;
        }
    assert_true(animated > 0); /* the range includes steps that animate */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/frames", scratch);
    ExportResult res;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(res.files, expect);
    assert_int_equal(check_dir_pngs(dir, 320, 180), expect);
    for (int i = 0; i < expect; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%06d.png", dir, i);
        if (access(path, F_OK) != 0) fail_msg("%s missing", path);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, EXPORT_INDEX_NAME);
    char *json = test_read_file(path, NULL);
    cJSON *idx = cJSON_Parse(json);
    assert_int_equal(cJSON_GetObjectItem(idx, "frame_count")->valueint, expect);
    int sum = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(idx, "steps"))
    {
        assert_int_equal(cJSON_GetObjectItem(e, "first_frame")->valueint, sum);
        sum += cJSON_GetObjectItem(e, "frame_count")->valueint;
    }
    assert_int_equal(sum, expect);
    /* the first frame of an animated step differs from its last (it moves) */
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(idx, "steps"))
    {
        if (cJSON_GetObjectItem(e, "duration")->valuedouble <= 0) continue;
        int f0 = cJSON_GetObjectItem(e, "first_frame")->valueint;
        int f1 = f0 + cJSON_GetObjectItem(e, "frame_count")->valueint - 1;
        TestPng a, b;
        snprintf(path, sizeof path, "%s/%06d.png", dir, f0);
        assert_int_equal(test_png_read(path, &a, err, sizeof err), 0);
        snprintf(path, sizeof path, "%s/%06d.png", dir, f1);
        assert_int_equal(test_png_read(path, &b, err, sizeof err), 0);
        assert_true(memcmp(a.rgba, b.rgba, (size_t)a.width * a.height * 4) != 0);
        test_png_free(&a);
        test_png_free(&b);
        break;
    }
    /* the last frame of every step is its final state: the per-step PNG
     * (held frames are copies, never redrawn; they must still be right) */
    char sdir[512];
    snprintf(sdir, sizeof sdir, "%s/steps", scratch);
    opt.frames = 0;
    if (export_lesson(&l, sdir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    int checked = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(idx, "steps"))
    {
        int step = view_step_index(cJSON_GetObjectItem(e, "step")->valueint);
        int last_frame =
            cJSON_GetObjectItem(e, "first_frame")->valueint + cJSON_GetObjectItem(e, "frame_count")->valueint - 1;
        char name[64], a_path[700], b_path[700];
        export_step_filename(t, step, name, sizeof name);
        snprintf(a_path, sizeof a_path, "%s/%s", sdir, name);
        snprintf(b_path, sizeof b_path, "%s/%06d.png", dir, last_frame);
        TestPng a, b;
        if (test_png_read(a_path, &a, err, sizeof err) != 0) fail_msg("%s", err);
        if (test_png_read(b_path, &b, err, sizeof err) != 0) fail_msg("%s", err);
        if (memcmp(a.rgba, b.rgba, (size_t)a.width * a.height * 4) != 0)
            fail_msg("%s (last frame of step %d) is not the step's final state %s", b_path, step, a_path);
        assert_string_equal(test_png_text(&b, "attnviz:step-name"), t->steps[step].name);
        test_png_free(&a);
        test_png_free(&b);
        checked++;
    }
    assert_true(checked > 0);
    /* a shorter export into the same folder leaves no old frame after its
     * own last one (ffmpeg would play it), and only those are removed */
    char keep[700];
    snprintf(keep, sizeof keep, "%s/notes.txt", dir);
    fclose(fopen(keep, "w"));
    opt.steps = "scores";
    opt.frames = 1;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(res.stale_removed, expect - res.files);
    snprintf(path, sizeof path, "%s/%06d.png", dir, res.files);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/%06d.png", dir, res.files - 1);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(access(keep, F_OK), 0);
    unlink(keep);

    cJSON_Delete(idx);
    free(json);
    free(sel);
    view_free(&v);
    lesson_free(&l);
}

/* ---- the sheet ---- */

/* Whether a page has ink other than the background in rows [y0, y1). */
static int page_has_ink(const TestPng *png, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < png->width; x++) {
            const unsigned char *p = png->rgba + ((size_t)y * (size_t)png->width + (size_t)x) * 4;
            if (p[0] != 255 || p[1] != 255 || p[2] != 255) return 1;
        }
    return 0;
}

/* The handout is A4 pages at 150 dpi: the two softmax steps of a small
 * lesson fit one page, figure and caption each, with white margins. */
static void test_sheet(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 400;
    opt.height = 225;
    opt.steps = "softmax";
    char sheet[512], err[1024];
    snprintf(sheet, sizeof sheet, "%s/sheet.png", scratch);
    opt.sheet = sheet;
    opt.write_steps = 0;
    ExportResult res;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    TestPng png;
    if (test_png_read(sheet, &png, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(png.width, 1240);
    assert_int_equal(png.height, 1754);
    /* 150 dpi: the page prints at A4, 210 × 297 mm */
    assert_true(png.has_phys);
    assert_int_equal(png.phys_x, 5906);
    assert_int_equal(png.phys_y, 5906);
    assert_int_equal(lround(png.width * 1000.0 / png.phys_x), 210);
    assert_int_equal(lround(png.height * 1000.0 / png.phys_y), 297);
    assert_false(page_has_ink(&png, 0, 80));      /* the top margin */
    assert_false(page_has_ink(&png, 1700, 1754)); /* the bottom margin */
    assert_true(page_has_ink(&png, 90, 400));     /* the first figure */
    test_png_free(&png);
    assert_int_equal(test_dir_count(scratch), 1); /* one page: no sheet-2.png */
    lesson_free(&l);
}

/* Every step of a lesson: as many pages as needed, sheet.png, sheet-2.png,
 * …, each an A4 page under ImageMagick's 16,000-pixel limit. */
static void test_sheet_pages(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    char sheet[512], err[1024];
    snprintf(sheet, sizeof sheet, "%s/handout.png", scratch);
    opt.sheet = sheet;
    opt.write_steps = 0;
    ExportResult res;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    int pages = test_dir_count(scratch);
    assert_true(pages >= 3);
    assert_int_equal(res.pages, pages);
    for (int i = 1; i <= pages; i++) {
        char path[600];
        if (i == 1)
            snprintf(path, sizeof path, "%s", sheet);
        else
            snprintf(path, sizeof path, "%s/handout-%d.png", scratch, i);
        TestPng png;
        if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("page %d: %s", i, err);
        assert_int_equal(png.width, 1240);
        assert_int_equal(png.height, 1754);
        assert_int_equal(png.phys_x, 5906);
        assert_true(page_has_ink(&png, 90, 600));
        test_png_free(&png);
    }
    lesson_free(&l);
}

/* A shorter handout into the same name removes the earlier handout's later
 * pages (attnviz's PNGs only), which a printer would print on; a later
 * page's name taken by a FIFO is refused before anything is drawn. */
static void test_sheet_earlier_pages(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    char sheet[512], path[600], err[1024];
    snprintf(sheet, sizeof sheet, "%s/handout.png", scratch);
    opt.sheet = sheet;
    opt.write_steps = 0;
    ExportResult res;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    int pages = res.pages;
    assert_true(pages >= 3);
    /* someone else's file after the last page stays */
    snprintf(path, sizeof path, "%s/handout-%d.png", scratch, pages + 2);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a PNG\n", f);
    fclose(f);
    opt.steps = "1";
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(res.pages, 1);
    assert_int_equal(res.pages_removed, pages - 1);
    assert_int_equal(test_dir_count(scratch), 2); /* handout.png and the other file */
    assert_int_equal(access(path, F_OK), 0);
    /* a FIFO where page 2 would go: refused, nothing drawn or written */
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/handout.png", scratch);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/handout-2.png", scratch);
    assert_int_equal(mkfifo(path, 0600), 0);
    opt.steps = NULL;
    assert_int_equal(export_lesson(&l, NULL, &opt, &res, err, sizeof err), -1);
    assert_true(res.usage_error);
    assert_non_null(strstr(err, "handout-2.png"));
    assert_int_equal(test_dir_count(scratch), 1); /* the FIFO alone */
    assert_int_equal(unlink(path), 0);
    /* copies of a step's PNG named like later pages are not pages: kept */
    char dir[600], cmd[2048];
    snprintf(dir, sizeof dir, "%s/steps", scratch);
    opt.sheet = NULL;
    opt.write_steps = 1;
    opt.steps = "1";
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    snprintf(cmd, sizeof cmd, "cp '%s/001-input.png' '%s/notes-2.png' && cp '%s/001-input.png' '%s/notes-3.png'", dir,
             scratch, dir, scratch);
    assert_int_equal(system(cmd), 0);
    snprintf(sheet, sizeof sheet, "%s/notes.png", scratch);
    opt.sheet = sheet;
    opt.write_steps = 0;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(res.pages, 1);
    assert_int_equal(res.pages_removed, 0);
    snprintf(path, sizeof path, "%s/notes-2.png", scratch);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/notes-3.png", scratch);
    assert_int_equal(access(path, F_OK), 0);
    /* nor replaced by a longer handout: refused before anything is written */
    opt.steps = NULL;
    assert_int_equal(export_lesson(&l, NULL, &opt, &res, err, sizeof err), -1);
    assert_true(res.usage_error);
    assert_non_null(strstr(err, "notes-2.png: exists and is not a page of an attnviz handout"));
    snprintf(cmd, sizeof cmd, "cmp -s '%s/001-input.png' '%s/notes-2.png'", dir, scratch);
    assert_int_equal(system(cmd), 0);
    lesson_free(&l);
}

/* 1 when the NUL-terminated s is UTF-8 all through. */
static int is_utf8(const char *s)
{
    for (uint32_t cp; *s; s += lesson_utf8_decode(s, &cp))
        if (!lesson_utf8_decode(s, &cp)) return 0;
    return 1;
}

/* A file name is bytes; index.json and a PNG's text are UTF-8. The lesson's
 * path in index.json has U+FFFD for a byte that is not UTF-8; a handout
 * whose name is no UTF-8 (and holds a line break) records its later pages
 * in UTF-8, escaped, and a shorter handout still finds and removes them. */
static void test_names_not_utf8(void **state)
{
    (void)state;
    char lesson_path[600], dir[600], sheet[600], cmd[1400], err[1024];
    snprintf(lesson_path, sizeof lesson_path, "%s/l\xff.json", scratch);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", LESSON_A, lesson_path);
    assert_int_equal(system(cmd), 0);
    Lesson l;
    load(&l, lesson_path);
    ExportOptions opt;
    export_options_init(&opt);
    opt.steps = "1";
    snprintf(dir, sizeof dir, "%s/d", scratch);
    ExportResult res;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    char index[700];
    snprintf(index, sizeof index, "%s/index.json", dir);
    char *text = test_read_file(index, NULL);
    assert_non_null(text);
    if (!is_utf8(text)) fail_msg("index.json is not UTF-8");
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(doc, "lesson_file");
    assert_true(cJSON_IsString(file));
    char want[700];
    snprintf(want, sizeof want, "%s/l\xef\xbf\xbd.json", scratch);
    assert_string_equal(file->valuestring, want);
    cJSON_Delete(doc);
    free(text);

    snprintf(sheet, sizeof sheet, "%s/h\xfe\n.png", scratch);
    opt.sheet = sheet;
    opt.write_steps = 0;
    opt.steps = NULL;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    int pages = res.pages;
    assert_true(pages >= 3);
    TestPng png;
    if (test_png_read(sheet, &png, err, sizeof err) != 0) fail_msg("%s", err);
    const char *record = test_png_text(&png, "attnviz:handout-pages");
    assert_non_null(record);
    if (!is_utf8(record)) fail_msg("the handout's record of its pages is not UTF-8");
    assert_non_null(strstr(record, " h\\xfe\\x0a-2.png\n"));
    test_png_free(&png);
    opt.steps = "1";
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(res.pages, 1);
    assert_int_equal(res.pages_removed, pages - 1);
    assert_int_equal(test_dir_count(scratch), 3); /* the lesson, d and the handout */
    lesson_free(&l);
}

/* The text pdftotext finds in a PDF, without any whitespace (the caption's
 * line breaks and spaces are the layout's, not the text's); NULL when
 * pdftotext (poppler-utils) is not installed. malloc'd. */
static char *pdf_text_squeezed(const char *pdf)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "pdftotext -enc UTF-8 '%s' - 2>/dev/null", pdf);
    if (system("command -v pdftotext >/dev/null 2>&1") != 0) return NULL;
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    int c;
    while ((c = fgetc(p)) != EOF) {
        if (c == ' ' || c == '\n' || c == '\t' || c == '\f' || c == '\r') continue;
        if (n + 1 >= cap) out = realloc(out, cap *= 2);
        assert_non_null(out);
        out[n++] = (char)c;
    }
    out[n] = 0;
    assert_int_equal(pclose(p), 0);
    return out;
}

/* s without its whitespace, into buf. */
static void squeeze(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    for (; *s && n + 1 < len; s++)
        if (!strchr(" \n\t", *s)) buf[n++] = *s;
    buf[n] = 0;
}

/* With cairo, --sheet FILE.pdf is the same pages as the PNG handout in one
 * A4 PDF: as many pages, each 595×842 points, figures and captions as
 * images, a bookmark for each step, and each step's caption (title,
 * formula, narration) also as text a reader can select and search:
 * pdftotext finds every step's narration in it. */
static void test_sheet_pdf(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.write_steps = 0;
    opt.lang = LESSON_ZH;
    char pdf[512], png[512], err[1024];
    snprintf(pdf, sizeof pdf, "%s/handout.pdf", scratch);
    snprintf(png, sizeof png, "%s/png", scratch);
    assert_int_equal(mkdir(png, 0755), 0);
    snprintf(png + strlen(png), sizeof png - strlen(png), "/handout.png");
    ExportResult res;
    opt.sheet = pdf;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) {
        if (strstr(err, "without cairo")) {
            lesson_free(&l);
            skip();
        }
        fail_msg("%s", err);
    }
    opt.sheet = png;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/png", scratch);
    int pages = test_dir_count(dir);
    assert_int_equal(res.pages, pages);
    struct stat st;
    assert_int_equal(stat(pdf, &st), 0);
    size_t len = (size_t)st.st_size;
    char *data = test_read_file(pdf, NULL);
    assert_non_null(data);
    assert_true(len > 8 && memcmp(data, "%PDF-", 5) == 0);
    int n_pages = 0, n_boxes = 0, n_images = 0, n_marks = 0;
    for (size_t i = 0; i + 32 < len; i++) {
        if (!memcmp(data + i, "/Type /Page", 11) && data[i + 11] != 's') n_pages++;
        if (!memcmp(data + i, "/MediaBox [ 0 0 595", 19)) n_boxes++;
        if (!memcmp(data + i, "/Subtype /Image", 15)) n_images++;
        if (!memcmp(data + i, "/Dest [", 7)) n_marks++;
    }
    free(data);
    assert_int_equal(n_pages, pages);
    assert_int_equal(n_boxes, pages);
    View v;
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    v.lang = LESSON_ZH;
    const AttnTrace *t = view_trace(&v);
    /* a step's figure and its caption, each its own picture: no page-sized one */
    assert_true(n_images >= 2 * t->n_steps && n_images <= 4 * t->n_steps);
    assert_int_equal(n_marks, t->n_steps); /* a bookmark a step */
    char *text = pdf_text_squeezed(pdf);
    if (!text) {
        view_free(&v);
        lesson_free(&l);
        print_message("pdftotext (poppler-utils) is not installed: the PDF's text is not checked\n");
        skip();
    }
    for (int i = 0; i < t->n_steps; i++) {
        view_goto(&v, i);
        view_finish(&v);
        char narr[4096], want[4096];
        view_narration(&v, narr, sizeof narr);
        squeeze(narr, want, sizeof want);
        if (!strstr(text, want)) fail_msg("step %d's narration is not in the PDF's text: %s", i + 1, narr);
    }
    free(text);
    view_free(&v);
    lesson_free(&l);
}

/* A caption longer than the page (128 lines of zh narration, a lesson
 * check accepts) is continued on the next pages: every line is in the
 * PDF's text, and no PNG page has ink in its margins. */
static void test_sheet_long_caption(void **state)
{
    (void)state;
    char path[600], err[EXPORT_ERR_MAX] = "";
    snprintf(path, sizeof path, "%s/long.json", scratch);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": \"attnviz-lesson/1\", \"id\": \"long-caption\", \"title\": {\"en\": \"L\", \"zh\": \"长\"},"
          " \"tokens\": [\"我\", \"喜欢\", \"跑步\"], \"d_model\": 4, \"seed\": 7,"
          " \"narration\": {\"input\": {\"en\": \"x\", \"zh\": \"",
          f);
    for (int i = 1; i <= 128; i++) fprintf(f, "%s行%03d注意力权重", i > 1 ? "\\n" : "", i);
    fputs("\"}}}\n", f);
    fclose(f);
    Lesson l;
    load(&l, path);
    ExportOptions opt;
    export_options_init(&opt);
    opt.write_steps = 0;
    opt.lang = LESSON_ZH;
    opt.steps = "1";
    opt.width = 640;
    opt.height = 360;
    char sheet[600];
    snprintf(sheet, sizeof sheet, "%s/long.png", scratch);
    opt.sheet = sheet;
    ExportResult res;
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_true(res.pages >= 2);
    for (int k = 1; k <= res.pages; k++) {
        char page[640];
        if (k == 1)
            snprintf(page, sizeof page, "%s", sheet);
        else
            snprintf(page, sizeof page, "%s/long-%d.png", scratch, k);
        TestPng png;
        if (test_png_read(page, &png, err, sizeof err) != 0) fail_msg("%s", err);
        if (page_has_ink(&png, 0, 85) || page_has_ink(&png, png.height - 85, png.height))
            fail_msg("%s: ink in the top or bottom margin", page);
        test_png_free(&png);
    }
    snprintf(sheet, sizeof sheet, "%s/long.pdf", scratch);
    if (export_lesson(&l, NULL, &opt, &res, err, sizeof err) != 0) {
        if (strstr(err, "without cairo")) {
            lesson_free(&l);
            skip();
        }
        fail_msg("%s", err);
    }
    char *text = pdf_text_squeezed(sheet);
    if (text) {
        for (int i = 1; i <= 128; i++) {
            char line[64];
            snprintf(line, sizeof line, "行%03d注意力权重", i);
            if (!strstr(text, line)) fail_msg("%s: line %d of the narration is not in the PDF's text", sheet, i);
        }
        free(text);
    }
    lesson_free(&l);
}

/* ---- failures ---- */

/* Runs the real program; returns its exit status and its stderr in out. */
static int run_attnviz(char *out, size_t outlen, const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s export %s 2>&1 >/dev/null", ATTNVIZ_BIN, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void expect_cli(int status, const char *needle, const char *fmt, const char *arg)
{
    char out[4096];
    int st = run_attnviz(out, sizeof out, fmt, arg);
    if (st != status) fail_msg("attnviz export %s: status %d, expected %d (%s)", arg, st, status, out);
    if (!strstr(out, needle)) fail_msg("attnviz export %s: \"%s\" lacks \"%s\"", arg, out, needle);
    /* one line from attnviz (a sanitizer build may add its own report after it) */
    if (strncmp(out, "attnviz export: ", 16) != 0 || strstr(out, "\nattnviz") || !strchr(out, '\n'))
        fail_msg("attnviz export %s: not one line: \"%s\"", arg, out);
}

static void test_failures(void **state)
{
    (void)state;
    char a[1024], file[600];
    const char *L = LESSON_A " --size 320x180 ";
    /* missing parent folder */
    snprintf(a, sizeof a, "%s -o %s/no/such", L, scratch);
    expect_cli(1, "its parent", "%s", a);
    /* a folder under a regular file (fails even for root) */
    snprintf(file, sizeof file, "%s/regular", scratch);
    fclose(fopen(file, "w"));
    snprintf(a, sizeof a, "%s -o %s/sub", L, file);
    expect_cli(2, "regular is not a folder", "%s", a);
    /* -o naming a file is a bad argument (exit 2), as any other */
    snprintf(a, sizeof a, "%s -o %s", L, file);
    expect_cli(2, "regular: expected a folder, found a regular file", "%s", a);
    /* /proc takes no new folders, even from root */
    snprintf(a, sizeof a, "%s -o /proc/attnviz-test", L);
    expect_cli(1, "/proc/attnviz-test: cannot create the folder", "%s", a);
    /* invalid sizes are usage errors */
    snprintf(a, sizeof a, "%s -o %s/x --size 12x7", LESSON_A, scratch);
    expect_cli(2, "--size: expected sides from", "%s", a);
    snprintf(a, sizeof a, "%s -o %s/x --size big", LESSON_A, scratch);
    expect_cli(2, "--size: expected WIDTHxHEIGHT", "%s", a);
    snprintf(a, sizeof a, "%s -o %s/x --size 10000x10000 --scale 2", LESSON_A, scratch);
    expect_cli(2, "--scale", "%s", a);
    /* colour scales and notations by name; steps counted from 1 */
    snprintf(a, sizeof a, "%s -o %s/x --weight-scale rows", LESSON_A, scratch);
    expect_cli(2, "--weight-scale", "%s", a);
    snprintf(a, sizeof a, "%s -o %s/x --notation col", LESSON_A, scratch);
    expect_cli(2, "--notation", "%s", a);
    snprintf(a, sizeof a, "%s -o %s/x --steps 0", LESSON_A, scratch);
    expect_cli(2, "step number (1..", "%s", a);
    /* a full disk: /dev/full for the sheet */
    snprintf(a, sizeof a, "%s --sheet /dev/full --steps 1", L);
    expect_cli(1, strerror(ENOSPC), "%s", a);
    /* a full disk in the folder: a file-size limit makes write() fail
     * part-way through a PNG, as ENOSPC would */
    snprintf(a, sizeof a, "%s -o %s/full", L, scratch);
    char out[4096], cmd[4096];
    snprintf(cmd, sizeof cmd, "ulimit -f 8; %s export %s 2>&1 >/dev/null", ATTNVIZ_BIN, a);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 1 || !strstr(out, strerror(EFBIG)))
        fail_msg("full disk: status %d, \"%s\"", WEXITSTATUS(st), out);
    snprintf(file, sizeof file, "%s/full", scratch);
    check_dir_pngs(file, 320, 180); /* whatever is there is complete; no temporary file */
    snprintf(file, sizeof file, "%s/full/%s", scratch, EXPORT_INDEX_NAME);
    assert_int_not_equal(access(file, F_OK), 0); /* no index of a failed export */
    /* nothing else was created: regular, full */
    assert_int_equal(test_dir_count(scratch), 2);
}

/* Progress goes to stderr only when it is a terminal: silent into a pipe,
 * a "step N/M" line under a pseudo-terminal (script(1)). */
static void test_progress_only_on_a_terminal(void **state)
{
    (void)state;
    char out[8192], a[1024];
    snprintf(a, sizeof a, "%s --size 320x180 --steps 1-6 -o %s/quiet", LESSON_A, scratch);
    int st = run_attnviz(out, sizeof out, "%s", a);
    assert_int_equal(st, 0);
    if (out[0]) fail_msg("stderr into a pipe was not empty: \"%s\"", out);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "script -qec \"%s export %s --size 320x180 --frames --fps 5 -o %s/tty\" /dev/null",
             ATTNVIZ_BIN, LESSON_A, scratch);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    st = pclose(p);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (!strstr(out, "export: step ") || !strstr(out, "files/s"))
        fail_msg("no progress line on a terminal: \"%s\"", out);
}

/* The library, not the program: a full disk mid-export in-process. */
static void test_full_disk_library(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    char dir[512], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/lib", scratch);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 6000; /* some frames fit, most do not */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ExportResult res;
    int rc = export_lesson(&l, dir, &opt, &res, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, -1);
    assert_int_equal(res.usage_error, 0);
    assert_non_null(strstr(err, strerror(EFBIG)));
    assert_int_equal(check_dir_pngs(dir, 320, 180), res.files);
    lesson_free(&l);
}

/* Cancelling (Ctrl-C in the program) part-way: the export stops with
 * "interrupted", the files written are complete, no temporary file stays. */
static volatile sig_atomic_t cancel_flag;

/* Called as the frames begin, then once per frame queued: cancel after the
 * tenth frame (counting calls, not files done, so that a slow machine
 * cannot finish first). */
static void cancel_after_ten(void *user, const ExportProgress *p)
{
    int *calls = user;
    (void)p;
    if (++*calls >= 1 + 10) cancel_flag = 1;
}

static void test_cancel(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    opt.frames = 1;
    opt.cancel = &cancel_flag;
    opt.progress = cancel_after_ten;
    int calls = 0;
    opt.progress_user = &calls;
    cancel_flag = 0;
    char dir[512], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/cancel", scratch);
    ExportResult res;
    assert_int_equal(export_lesson(&l, dir, &opt, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "interrupted"));
    assert_true(res.files >= 10); /* every queued file is finished */
    assert_true(res.files < 100); /* and then it stopped (the lesson has over 400 frames) */
    assert_int_equal(check_dir_pngs(dir, 320, 180), res.files);
    lesson_free(&l);
}

/* ---- export pixels == window pixels ---- */

static void test_window_pixels(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    const int w = 640, h = 360;
    assert_int_equal(SDL_Init(SDL_INIT_VIDEO), 0);
    assert_int_equal(TTF_Init(), 0);
    SDL_Window *win = SDL_CreateWindow("attnviz test", 0, 0, w, h, SDL_WINDOW_HIDDEN);
    if (!win) fail_msg("window: %s", SDL_GetError());
    SDL_Renderer *r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    if (!r) fail_msg("renderer: %s", SDL_GetError());
    char err[1024];
    RenderCtx *rc = render_create(r, NULL, err, sizeof err);
    if (!rc) fail_msg("%s", err);
    View v;
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    v.output = VIEW_OUTPUT_PAPER; /* the window as the S key draws it for saving */
    v.lang = LESSON_ZH;
    v.theme = VIEW_THEME_PROJECTOR;

    char dir[512];
    snprintf(dir, sizeof dir, "%s/win", scratch);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = w;
    opt.height = h;
    opt.lang = LESSON_ZH;
    opt.theme = VIEW_THEME_PROJECTOR;
    opt.steps = "scores-softmax";
    opt.head = 2;
    ExportResult res;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);

    const AttnTrace *t = view_trace(&v);
    const int steps[] = {attn_trace_index(t, attn_trace_find(t, ATTN_STEP_SCORES, 2)),
                         attn_trace_index(t, attn_trace_find(t, ATTN_STEP_SOFTMAX, 2))};
    unsigned char *px = malloc((size_t)w * h * 4);
    for (int k = 0; k < 2; k++) {
        view_set_head(&v, 2);
        view_goto(&v, steps[k]);
        view_finish(&v);
        assert_int_equal(render_frame(rc, &v, w, h), 0);
        assert_int_equal(SDL_RenderReadPixels(r, NULL, SDL_PIXELFORMAT_ABGR8888, px, w * 4), 0);
        char name[64], path[700];
        export_step_filename(t, steps[k], name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        TestPng png;
        if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
        int diff = 0, first = -1;
        for (int i = 0; i < w * h; i++)
            if (memcmp(px + 4 * i, png.rgba + 4 * i, 3) != 0) {
                if (first < 0) first = i;
                diff++;
            }
        if (diff)
            fail_msg("%s: %d pixels differ from the window's, first at (%d,%d): window %d,%d,%d, export %d,%d,%d", path,
                     diff, first % w, first / w, px[4 * first], px[4 * first + 1], px[4 * first + 2],
                     png.rgba[4 * first], png.rgba[4 * first + 1], png.rgba[4 * first + 2]);
        /* and the S key saves those same pixels */
        char saved[700];
        if (export_save_frame(r, &v, dir, saved, sizeof saved, err, sizeof err) != 0) fail_msg("%s", err);
        TestPng s;
        if (test_png_read(saved, &s, err, sizeof err) != 0) fail_msg("%s", err);
        assert_int_equal(s.width, w);
        assert_memory_equal(s.rgba, png.rgba, (size_t)w * h * 4);
        assert_string_equal(test_png_text(&s, "attnviz:step-name"), t->steps[steps[k]].name);
        assert_true(s.has_phys); /* a window of one pixel per point: 96 dpi, as export's frames */
        assert_int_equal(s.phys_x, 3780);
        assert_non_null(strstr(saved, "mhsa-wo-xihuan-paobu-0"));
        test_png_free(&s);
        test_png_free(&png);
    }
    /* saving the same step twice does not overwrite the first */
    char p1[700], p2[700];
    assert_int_equal(export_save_frame(r, &v, dir, p1, sizeof p1, err, sizeof err), 0);
    assert_int_equal(export_save_frame(r, &v, dir, p2, sizeof p2, err, sizeof err), 0);
    assert_string_not_equal(p1, p2);
    /* a path the caller's buffer cannot take: refused before writing,
     * never reported cut */
    int before = test_dir_count(dir);
    char small[16];
    assert_int_equal(export_save_frame(r, &v, dir, small, sizeof small, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
    assert_int_equal(test_dir_count(dir), before);
    free(px);
    view_free(&v);
    render_destroy(rc);
    SDL_DestroyRenderer(r);
    SDL_DestroyWindow(win);
    TTF_Quit();
    SDL_Quit();
    lesson_free(&l);
}

/* Whether the last frame drew a text box containing needle. */
static int drew_text(const RenderCtx *rc, const char *needle)
{
    int n;
    const LayoutBox *b = render_layout_boxes(rc, &n);
    for (int i = 0; i < n; i++)
        if (b[i].kind != LAYOUT_NUMBER && b[i].kind != LAYOUT_MATRIX && strstr(b[i].text, needle)) return 1;
    return 0;
}

/* The window's status line names the play state and the help key; on paper
 * (export, slides, the S key) nothing plays and there are no keys, so only
 * the step, the head and the mode remain. */
static void test_status_on_paper(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    assert_int_equal(SDL_Init(SDL_INIT_VIDEO), 0);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 720, 32, SDL_PIXELFORMAT_XRGB8888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!r) fail_msg("software renderer: %s", SDL_GetError());
    char err[1024];
    RenderCtx *rc = render_create(r, NULL, err, sizeof err);
    if (!rc) fail_msg("%s", err);
    render_layout_record(rc, 1);
    View v;
    assert_int_equal(view_init(&v, &l, err, sizeof err), 0);
    for (int lang = 0; lang < 2; lang++) {
        v.lang = lang ? LESSON_ZH : LESSON_EN;
        const char *step = lang ? "步骤" : "step", *paused = lang ? "暂停" : "paused", *help = lang ? "帮助" : "help";
        for (int paper = 0; paper < 2; paper++) {
            v.output = paper ? VIEW_OUTPUT_PAPER : VIEW_OUTPUT_SCREEN;
            assert_int_equal(render_frame(rc, &v, 1280, 720), 0);
            assert_true(drew_text(rc, step));
            assert_int_equal(drew_text(rc, paused), !paper);
            assert_int_equal(drew_text(rc, help), !paper);
        }
    }
    view_free(&v);
    render_destroy(rc);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    SDL_Quit();
    lesson_free(&l);
}

/* --scale 2 draws the same layout at twice the pixels. */
static void test_scale(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    opt.scale = 2;
    opt.steps = "1";
    char dir[512], err[1024];
    snprintf(dir, sizeof dir, "%s/hidpi", scratch);
    ExportResult res;
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(check_dir_pngs(dir, 640, 360), 1);
    /* 192 dpi: placed in a document, it has the size of the --scale 1 PNG */
    char path[600];
    snprintf(path, sizeof path, "%s/001-input.png", dir);
    TestPng png;
    if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
    assert_true(png.has_phys);
    assert_int_equal(png.phys_x, 7559);
    assert_int_equal(png.phys_y, 7559);
    test_png_free(&png);
    lesson_free(&l);
}

/* SHA-256 against FIPS 180-4's examples and a million 'a's. */
static void test_sha256(void **state)
{
    (void)state;
    char hex[EXPORT_SHA256_HEX];
    export__sha256("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    export__sha256("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 448 bits: two blocks */
    export__sha256(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    export__sha256(a, 1000000, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* ---- an export's folder describes exactly one export ---- */

/* Names in dir, sorted, one string "a b c " (hidden ones too). */
static void dir_listing(const char *dir, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | LC_ALL=C sort | tr '\\n' ' '", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = 0;
    pclose(p);
}

/* The lesson id the PNG at dir/name says it shows. */
static char *png_lesson(const char *dir, const char *name)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    TestPng png;
    if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
    char *id = strdup(test_png_text(&png, "attnviz:lesson"));
    test_png_free(&png);
    return id;
}

/* Every PNG in dir is lesson id's and is listed, with its size and hash, in
 * the journal dir/.index.json.attnviz-journal; nothing else is in dir. */
static void expect_journal_describes(const char *dir, const char *id)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/.%s" EXPORT_JOURNAL_MARKER, dir, EXPORT_INDEX_NAME);
    char *journal = test_read_file(path, NULL);
    if (!journal) fail_msg("%s: no journal of the export that did not finish", path);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int pngs = 0;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(path + strlen(dir) + 1, name) == 0) continue;
        if (!export__is_own_name(name)) fail_msg("%s/%s: neither a PNG of the export nor its journal", dir, name);
        char *lesson = png_lesson(dir, name);
        if (strcmp(lesson, id) != 0) fail_msg("%s/%s: shows %s, the export was of %s", dir, name, lesson, id);
        free(lesson);
        char file[1024], hex[EXPORT_SHA256_HEX], line[1200];
        snprintf(file, sizeof file, "%s/%s", dir, name);
        size_t bytes = 0;
        char *data = test_read_file(file, &bytes);
        export__sha256(data, bytes, hex);
        free(data);
        snprintf(line, sizeof line, "\n%zu %s %s\n", bytes, hex, name);
        if (!strstr(journal, line)) fail_msg("%s: the journal does not list %s as written", path, name);
        pngs++;
    }
    closedir(d);
    assert_true(pngs > 0);
    free(journal);
}

/* An interrupted export into a folder that held another lesson's export:
 * no index.json is left to describe the earlier lesson, the PNGs are the
 * new export's alone, and the journal lists each of them; the next export
 * (of two steps) removes them, and the folder then holds exactly what its
 * index.json lists. */
static void test_interrupted_folder(void **state)
{
    (void)state;
    Lesson a, b;
    load(&a, LESSON_A);
    load(&b, LESSON_B);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    char dir[512], err[EXPORT_ERR_MAX] = "", listing[4096];
    snprintf(dir, sizeof dir, "%s/two", scratch);
    ExportResult res;
    if (export_lesson(&b, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    int calls = 0;
    cancel_flag = 0;
    opt.cancel = &cancel_flag;
    opt.progress = cancel_after_ten;
    opt.progress_user = &calls;
    assert_int_equal(export_lesson(&a, dir, &opt, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "interrupted"));
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, EXPORT_INDEX_NAME);
    if (access(path, F_OK) == 0) fail_msg("%s: an index.json is left beside an export that did not finish", path);
    expect_journal_describes(dir, a.id);
    /* the next export finishes the clean-up */
    opt.cancel = NULL;
    opt.progress = NULL;
    opt.steps = "1-2";
    if (export_lesson(&a, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    dir_listing(dir, listing, sizeof listing);
    assert_string_equal(listing, "001-input.png 002-weight.png index.json ");
    lesson_free(&a);
    lesson_free(&b);
}

/* An interrupted handout leaves the earlier handout as it was, every page;
 * a finished one replaces it whole. */
static void test_interrupted_sheet(void **state)
{
    (void)state;
    Lesson a, b;
    load(&a, LESSON_A);
    load(&b, LESSON_B);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    opt.write_steps = 0;
    char sheet[512], err[EXPORT_ERR_MAX] = "", before[4096], after[4096];
    snprintf(sheet, sizeof sheet, "%s/handout.png", scratch);
    opt.sheet = sheet;
    ExportResult res;
    if (export_lesson(&a, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    int pages = res.pages;
    assert_true(pages >= 3);
    char sums[1024];
    snprintf(sums, sizeof sums, "cd '%s' && ls -A | LC_ALL=C sort | xargs sha256sum | tr '\\n' ' '", scratch);
    FILE *p = popen(sums, "r");
    before[fread(before, 1, sizeof before - 1, p)] = 0;
    pclose(p);
    int calls = 0;
    cancel_flag = 0;
    opt.cancel = &cancel_flag;
    opt.progress = cancel_after_ten;
    opt.progress_user = &calls;
    assert_int_equal(export_lesson(&b, NULL, &opt, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "interrupted"));
    p = popen(sums, "r");
    after[fread(after, 1, sizeof after - 1, p)] = 0;
    pclose(p);
    assert_string_equal(after, before);
    /* finished: the pages are all of lesson b */
    opt.cancel = NULL;
    opt.progress = NULL;
    if (export_lesson(&b, NULL, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(test_dir_count(scratch), res.pages);
    for (int k = 1; k <= res.pages; k++) {
        char name[64];
        if (k == 1)
            snprintf(name, sizeof name, "handout.png");
        else
            snprintf(name, sizeof name, "handout-%d.png", k);
        char *id = png_lesson(scratch, name);
        assert_string_equal(id, b.id);
        free(id);
    }
    lesson_free(&a);
    lesson_free(&b);
}

/* Two exports into one folder at once: the second is refused while the
 * first holds it. */
static void test_folder_locked(void **state)
{
    (void)state;
    Lesson l;
    load(&l, LESSON_A);
    ExportOptions opt;
    export_options_init(&opt);
    opt.width = 320;
    opt.height = 180;
    opt.steps = "1";
    char dir[512], err[EXPORT_ERR_MAX] = "";
    snprintf(dir, sizeof dir, "%s/locked", scratch);
    assert_int_equal(mkdir(dir, 0777), 0);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    ExportResult res;
    assert_int_equal(export_lesson(&l, dir, &opt, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "another attnviz export is writing into this folder"));
    assert_int_equal(test_dir_count(dir), 0);
    close(fd);
    if (export_lesson(&l, dir, &opt, &res, err, sizeof err) != 0) fail_msg("%s", err);
    lesson_free(&l);
}

/* attnviz's own file names, the only ones it removes from a folder even
 * when an edited index.json lists others. */
static void test_own_names(void **state)
{
    (void)state;
    const char *own[] = {"000-input.png", "007-softmax-h2.png", "1234-weighted_sum-h64.png", "000000.png",
                         "999999.png"};
    const char *not_own[] = {"00-input.png",     "007-softmax-h.png", "007-my-own.png", "007-.png",
                             "../000-input.png", "000000.PNG",        "0000000.png",    "notes.png",
                             "007-Softmax.png",  "index.json"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (!export__is_own_name(own[i])) fail_msg("%s is attnviz's own name", own[i]);
    for (size_t i = 0; i < sizeof not_own / sizeof not_own[0]; i++)
        if (export__is_own_name(not_own[i])) fail_msg("%s is not attnviz's own name", not_own[i]);
    int k = -1;
    assert_true(export__is_frame_name("000042.png", &k));
    assert_int_equal(k, 42);
    assert_false(export__is_frame_name("042-input.png", &k));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_select_steps),
        cmocka_unit_test(test_own_names),
        cmocka_unit_test(test_sha256),
        cmocka_unit_test_setup_teardown(test_steps_files_and_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frames_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sheet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sheet_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sheet_earlier_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_not_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sheet_pdf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sheet_long_caption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress_only_on_a_terminal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_sheet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_locked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_pixels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_on_paper, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
