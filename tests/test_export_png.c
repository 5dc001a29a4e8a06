/* test_export_png.c: the PNG writer (src/export/png_write.c): pixels and text
 * chunks survive a round trip through libpng, and every way a write can fail
 * (missing folder, a path under a regular file, /dev/full, a full disk
 * simulated with RLIMIT_FSIZE, a libpng error) returns -1 with a message and
 * leaves no file under any name. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "test_util.h"

#include "png_write.h"
#include "test_export_read.h"

static char scratch[256];

static int setup(void **state)
{
    (void)state;
    return test_scratch_dir(scratch, sizeof scratch, "png");
}

static int teardown(void **state)
{
    (void)state;
    test_rm_rf(scratch);
    return 0;
}

/* A w×h pattern with distinct values per pixel, in the given layout. */
static unsigned char *make_pattern(int w, int h, ExportPixelLayout layout, size_t *pitch)
{
    size_t bpp = layout == EXPORT_PIXELS_RGB24 ? 3 : 4;
    *pitch = (size_t)w * bpp + 8; /* padded rows, as SDL surfaces may have */
    unsigned char *p = calloc((size_t)h, *pitch);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *q = p + (size_t)y * *pitch + (size_t)x * bpp;
            q[0] = (unsigned char)(x * 7 + y);
            q[1] = (unsigned char)(y * 13);
            q[2] = (unsigned char)(x ^ y);
            if (bpp == 4) q[3] = layout == EXPORT_PIXELS_RGBA32 ? (unsigned char)(255 - x) : 0x5a;
        }
    return p;
}

static void roundtrip(ExportPixelLayout layout, const char *filter)
{
    const int w = 67, h = 41;
    size_t pitch;
    unsigned char *p = make_pattern(w, h, layout, &pitch);
    ExportImage img = {p, w, h, pitch, layout};
    ExportPngText text[] = {{"Title", "Multi-head self-attention: 我喜欢跑步"},
                            {"Software", "attnviz " ATTNVIZ_VERSION},
                            {"attnviz:formula", "softmax(Q·Kᵀ / √d_k) · V"},
                            {"attnviz:head", "2"}};
    ExportPngOptions opt;
    export_png_options_init(&opt);
    opt.filters = export_png_filter_from_name(filter);
    assert_true(opt.filters > 0);
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/round-%d-%s.png", scratch, (int)layout, filter);
    int rc = export_png_write_file(path, &img, text, 4, &opt, err, sizeof err);
    if (rc != 0) fail_msg("write failed: %s", err);
    TestPng png;
    if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(png.width, w);
    assert_int_equal(png.height, h);
    assert_int_equal(png.channels, layout == EXPORT_PIXELS_RGBA32 ? 4 : 3);
    size_t bpp = layout == EXPORT_PIXELS_RGB24 ? 3 : 4;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned char *a = p + (size_t)y * pitch + (size_t)x * bpp;
            const unsigned char *b = png.rgba + ((size_t)y * w + x) * 4;
            int bgr = layout == EXPORT_PIXELS_BGRX32;
            int r = a[bgr ? 2 : 0], g = a[1], bl = a[bgr ? 0 : 2];
            int alpha = layout == EXPORT_PIXELS_RGBA32 ? a[3] : 255;
            if (r != b[0] || g != b[1] || bl != b[2] || alpha != b[3])
                fail_msg("pixel (%d,%d): wrote %d,%d,%d,%d read %d,%d,%d,%d", x, y, r, g, bl, alpha, b[0], b[1], b[2],
                         b[3]);
        }
    for (int i = 0; i < 4; i++) {
        const char *got = test_png_text(&png, text[i].key);
        if (!got || strcmp(got, text[i].text) != 0)
            fail_msg("text %s: wrote \"%s\" read \"%s\"", text[i].key, text[i].text, got ? got : "(none)");
    }
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    mode_t m = umask(022);
    umask(m);
    assert_int_equal(st.st_mode & 0777, 0666 & ~m); /* not mkstemp's 0600 */
    assert_false(png.has_phys);                     /* no DPI unless one is asked for */
    test_png_free(&png);
    free(p);
}

/* A resolution asked for is the pHYs chunk read back, the same both ways. */
static void test_phys(void **state)
{
    (void)state;
    assert_int_equal(export_png_px_per_metre(150), 5906);
    assert_int_equal(export_png_px_per_metre(96), 3780);
    assert_int_equal(export_png_px_per_metre(0), 0);
    size_t pitch;
    unsigned char *p = make_pattern(31, 17, EXPORT_PIXELS_RGB24, &pitch);
    ExportImage img = {p, 31, 17, pitch, EXPORT_PIXELS_RGB24};
    ExportPngOptions opt;
    export_png_options_init(&opt);
    opt.px_per_metre = 5906;
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/phys.png", scratch);
    if (export_png_write_file(path, &img, NULL, 0, &opt, err, sizeof err) != 0) fail_msg("%s", err);
    TestPng png;
    if (test_png_read(path, &png, err, sizeof err) != 0) fail_msg("%s", err);
    assert_true(png.has_phys);
    assert_int_equal(png.phys_x, 5906);
    assert_int_equal(png.phys_y, 5906);
    test_png_free(&png);
    free(p);
}

static void test_roundtrip_layouts_and_filters(void **state)
{
    (void)state;
    const char *filters[] = {"none", "sub", "up", "avg", "paeth", "fast", "all"};
    for (int f = 0; f < 7; f++) {
        roundtrip(EXPORT_PIXELS_RGBX32, filters[f]);
        roundtrip(EXPORT_PIXELS_RGB24, filters[f]);
        roundtrip(EXPORT_PIXELS_RGBA32, filters[f]);
        roundtrip(EXPORT_PIXELS_BGRX32, filters[f]);
    }
    /* only the final names, no temporary files */
    assert_int_equal(test_dir_count(scratch), 28);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    unsigned char px[16] = {0};
    ExportBuffer buf = {0};
    char err[256] = "";
    ExportImage zero = {px, 0, 1, 4, EXPORT_PIXELS_RGBX32};
    assert_int_equal(export_png_encode(&zero, NULL, 0, NULL, &buf, err, sizeof err), -1);
    assert_non_null(strstr(err, "0x1"));
    ExportImage huge = {px, EXPORT_PNG_MAX_WIDTH + 1, 1, 4, EXPORT_PIXELS_RGBX32};
    assert_int_equal(export_png_encode(&huge, NULL, 0, NULL, &buf, err, sizeof err), -1);
    ExportImage shortpitch = {px, 2, 2, 7, EXPORT_PIXELS_RGBX32};
    assert_int_equal(export_png_encode(&shortpitch, NULL, 0, NULL, &buf, err, sizeof err), -1);
    assert_non_null(strstr(err, "pitch"));
    ExportImage ok = {px, 2, 2, 8, EXPORT_PIXELS_RGBX32};
    ExportPngText badkey[] = {{"", "x"}};
    assert_int_equal(export_png_encode(&ok, badkey, 1, NULL, &buf, err, sizeof err), -1);
    assert_int_equal(buf.len, 0);
    assert_int_equal(export_png_filter_from_name("bogus"), -1);
    assert_int_equal(export_png_strategy_from_name("bogus"), -1);
    assert_int_equal(export_png_strategy_from_name("rle"), Z_RLE);
}

/* A libpng error (here zlib refusing an unknown strategy, reported through
 * png_error and longjmp) leaves the buffer as it was and no file. */
static void test_libpng_error(void **state)
{
    (void)state;
    size_t pitch;
    unsigned char *p = make_pattern(32, 32, EXPORT_PIXELS_RGBX32, &pitch);
    ExportImage img = {p, 32, 32, pitch, EXPORT_PIXELS_RGBX32};
    ExportPngOptions opt;
    export_png_options_init(&opt);
    opt.strategy = 99;
    ExportBuffer buf = {0};
    memcpy(&buf, &(ExportBuffer){0}, sizeof buf);
    char err[512] = "";
    assert_int_equal(export_png_encode(&img, NULL, 0, &opt, &buf, err, sizeof err), -1);
    assert_non_null(strstr(err, "encoding PNG"));
    assert_int_equal(buf.len, 0);
    export_buffer_free(&buf);
    char path[512];
    snprintf(path, sizeof path, "%s/libpng-error.png", scratch);
    assert_int_equal(export_png_write_file(path, &img, NULL, 0, &opt, err, sizeof err), -1);
    assert_non_null(strstr(err, "libpng-error.png: encoding PNG"));
    assert_int_equal(test_dir_count(scratch), 0);
    free(p);
}

static void expect_write_fails(const char *path, const char *needle)
{
    char err[512] = "";
    const char data[] = "not really a png";
    int rc = export_write_file(path, data, sizeof data, err, sizeof err);
    if (rc != -1) fail_msg("writing %s succeeded, expected an error containing \"%s\"", path, needle);
    if (!strstr(err, needle)) fail_msg("writing %s: message \"%s\" lacks \"%s\"", path, err, needle);
    if (strncmp(err, path, strlen(path)) != 0) fail_msg("message \"%s\" does not start with the path", err);
    if (strchr(err, '\n')) fail_msg("message \"%s\" is more than one line", err);
}

static void test_write_failures(void **state)
{
    (void)state;
    char path[512], file[512];
    /* missing folder */
    snprintf(path, sizeof path, "%s/missing/x.png", scratch);
    expect_write_fails(path, "does not exist");
    /* a path under a regular file: fails even for root */
    snprintf(file, sizeof file, "%s/regular", scratch);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/regular/x.png", scratch);
    expect_write_fails(path, "regular is not a folder");
    /* a folder where the file should be */
    expect_write_fails(scratch, "is a folder");
    /* /proc refuses new files even for root */
    expect_write_fails("/proc/attnviz-test.png", "cannot create a file");
    /* /dev/full: the device says the disk is full */
    expect_write_fails("/dev/full", strerror(ENOSPC));
    assert_int_equal(test_dir_count(scratch), 1); /* just "regular" */
}

/* In its own folder attnviz replaces only regular files: a FIFO (opening it
 * for writing would block this test forever), a symbolic link and a folder
 * are refused and left as they were. A FIFO named by the user (a --sheet)
 * with no reader is an error, not a hang. */
static void test_owned_file_refuses_special_entries(void **state)
{
    (void)state;
    char fifo[512], link[512], target[512], dir[512];
    const char data[] = "png bytes";
    char err[512];
    snprintf(fifo, sizeof fifo, "%s/000-input.png", scratch);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(export_write_owned_file(fifo, data, sizeof data, err, sizeof err), -1);
    assert_non_null(strstr(err, "exists and is a FIFO (named pipe), not a regular file"));
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(export_write_file(fifo, data, sizeof data, err, sizeof err), -1);
    assert_non_null(strstr(err, "a FIFO with no reader"));

    snprintf(target, sizeof target, "%s/target", scratch);
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("theirs", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/001-weight.png", scratch);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(export_write_owned_file(link, data, sizeof data, err, sizeof err), -1);
    assert_non_null(strstr(err, "a symbolic link"));
    assert_int_equal(lstat(target, &st), 0);
    assert_int_equal((int)st.st_size, 6);

    snprintf(dir, sizeof dir, "%s/002-weight.png", scratch);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(export_write_owned_file(dir, data, sizeof data, err, sizeof err), -1);
    assert_non_null(strstr(err, "a folder"));
    /* a regular file is replaced, through a temporary: no hidden file left */
    assert_int_equal(export_write_owned_file(target, data, sizeof data, err, sizeof err), 0);
    assert_int_equal(lstat(target, &st), 0);
    assert_int_equal((int)st.st_size, (int)sizeof data);
    assert_int_equal(test_dir_count(scratch), 4);
}

/* A full disk in the middle of a file: RLIMIT_FSIZE makes write() fail with
 * EFBIG after 4 KiB, as ENOSPC would. The old file under the final name must
 * survive untouched and the temporary file must be gone. */
static void test_full_disk_keeps_old_file(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/frame.png", scratch);
    assert_int_equal(export_write_file(path, "old", 3, err, sizeof err), 0);
    size_t n = 64 * 1024;
    unsigned char *big = malloc(n);
    memset(big, 0xab, n);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = export_write_file(path, big, n, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, strerror(EFBIG)));
    assert_int_equal(test_dir_count(scratch), 1);
    FILE *f = fopen(path, "rb");
    char got[8] = "";
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof got, f), 3);
    fclose(f);
    assert_memory_equal(got, "old", 3);
    free(big);
}

/* The streaming encoder in uneven bands gives the same bytes as one call,
 * and a stream that ends early is an error that leaves the buffer as it was. */
static void test_stream_bands(void **state)
{
    (void)state;
    const int w = 50, h = 97;
    size_t pitch;
    unsigned char *p = make_pattern(w, h, EXPORT_PIXELS_BGRX32, &pitch);
    ExportImage img = {p, w, h, pitch, EXPORT_PIXELS_BGRX32};
    ExportPngText text[] = {{"Title", "跑步"}};
    ExportBuffer whole = {0}, bands = {0};
    char err[256] = "";
    assert_int_equal(export_png_encode(&img, text, 1, NULL, &whole, err, sizeof err), 0);
    ExportPngStream *s = export_png_stream_begin(w, h, EXPORT_PIXELS_BGRX32, text, 1, NULL, &bands, err, sizeof err);
    assert_non_null(s);
    int y = 0, band = 1;
    while (y < h) {
        int n = band < h - y ? band : h - y;
        assert_int_equal(export_png_stream_rows(s, p + (size_t)y * pitch, pitch, n, err, sizeof err), 0);
        y += n;
        band += 7;
    }
    assert_int_equal(export_png_stream_end(s, err, sizeof err), 0);
    assert_int_equal(whole.len, bands.len);
    assert_memory_equal(whole.data, bands.data, whole.len);
    size_t before = bands.len;
    s = export_png_stream_begin(w, h, EXPORT_PIXELS_BGRX32, NULL, 0, NULL, &bands, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(export_png_stream_rows(s, p, pitch, 10, err, sizeof err), 0);
    assert_int_equal(export_png_stream_end(s, err, sizeof err), -1);
    assert_non_null(strstr(err, "10 of 97"));
    assert_int_equal(bands.len, before);
    s = export_png_stream_begin(w, h, EXPORT_PIXELS_BGRX32, NULL, 0, NULL, &bands, err, sizeof err);
    assert_int_equal(export_png_stream_rows(s, p, pitch, h + 1, err, sizeof err), -1);
    assert_int_equal(bands.len, before);
    s = export_png_stream_begin(w, h, EXPORT_PIXELS_BGRX32, NULL, 0, NULL, &bands, err, sizeof err);
    export_png_stream_abort(s);
    assert_int_equal(bands.len, before);
    export_buffer_free(&whole);
    export_buffer_free(&bands);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip_layouts_and_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_phys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_bands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_libpng_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owned_file_refuses_special_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_keeps_old_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
