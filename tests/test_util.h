/* test_util.h: comparing float arrays in cmocka tests, the way STYLE.md asks:
 * |got - ref| ≤ abs_tol + rel_tol·|ref| elementwise, and on failure the first
 * differing values with their indices, how many differ and the largest
 * difference, then the cmocka test fails.
 *
 * Usage (after the cmocka includes):
 *
 *     #include "test_util.h"
 *     assert_floats_close("weights_1", step->data, ref, rows, cols,
 *                         TEST_ABS_TOL, TEST_REL_TOL);
 *     TestDiff d = test_diff_floats(got, ref, n);   // just measure: max abs / rel
 *
 * Also the tests' shared file helpers: test_read_file (a whole file, NUL
 * terminated) and test_scratch_dir (a fresh folder under /tmp); and
 * test_tokens_json, a lesson's text with many tokens.
 *
 * Special values: NaN matches only NaN, an infinity only the same infinity;
 * anything else against a NaN or an infinity differs. Header-only: every
 * function is static inline, so including it in several tests is fine.
 */
#ifndef ATTNVIZ_TEST_UTIL_H
#define ATTNVIZ_TEST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: the tests' seeded generator, the same numbers on every machine. */
static inline uint64_t test_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The engine's tolerance against PyTorch. */
#define TEST_ABS_TOL 1e-5
#define TEST_REL_TOL 1e-4

/* How many differing elements are printed before the summary. */
#define TEST_SHOW_DIFFS 5

typedef struct TestDiff {
    double max_abs;   /* largest |got - ref| over finite pairs */
    double max_rel;   /* largest |got - ref| / |ref| over finite pairs with ref ≠ 0 */
    size_t max_at;    /* index of max_abs */
    size_t n_special; /* NaN / infinity positions that do not match */
} TestDiff;

/* Do got and ref agree at this element? */
static inline int test_float_close(float got, float ref, double abs_tol, double rel_tol)
{
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got)) return got == ref;
    return fabs((double)got - (double)ref) <= abs_tol + rel_tol * fabs((double)ref);
}

/* Measures without judging: max abs and rel difference of got against ref (n). */
static inline TestDiff test_diff_floats(const float *got, const float *ref, size_t n)
{
    TestDiff d = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i]) || !isfinite(ref[i])) {
            d.n_special += !test_float_close(got[i], ref[i], 0, 0);
            continue;
        }
        double a = fabs((double)got[i] - (double)ref[i]);
        if (a > d.max_abs) {
            d.max_abs = a;
            d.max_at = i;
        }
        if (ref[i] != 0.0f && a / fabs((double)ref[i]) > d.max_rel) d.max_rel = a / fabs((double)ref[i]);
    }
    return d;
}

/* Compares got and ref, each n = rows·cols floats (cols ≥ 1 only shapes the
 * printed indices). Prints the first differences as what[row,col] and a
 * summary; returns the number of differing elements (0: all close). */
static inline size_t test_compare_floats(const char *what, const float *got, const float *ref, int rows, int cols,
                                         double abs_tol, double rel_tol)
{
    size_t n = (size_t)rows * (size_t)(cols > 0 ? cols : 1), bad = 0;
    int c = cols > 0 ? cols : 1;
    double worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < n; i++) {
        if (test_float_close(got[i], ref[i], abs_tol, rel_tol)) continue;
        if (bad < TEST_SHOW_DIFFS)
            printf("  %s[%zu,%zu]: got %.9g, expected %.9g (|diff| %.3g, allowed %.3g)\n", what, i / (size_t)c,
                   i % (size_t)c, (double)got[i], (double)ref[i], fabs((double)got[i] - (double)ref[i]),
                   abs_tol + rel_tol * fabs((double)ref[i]));
        double a = fabs((double)got[i] - (double)ref[i]);
        if (!(a <= worst)) { /* NaN and inf differences count as the worst */
            worst = a;
            worst_at = i;
        }
        bad++;
    }
    if (bad)
        printf("  %s: %zu of %zu values differ; max |diff| %.9g at [%zu,%zu] (tolerance %g + %g·|ref|)\n", what, bad, n,
               worst, worst_at / (size_t)c, worst_at % (size_t)c, abs_tol, rel_tol);
    return bad;
}

/* Fails the current cmocka test when got and ref (rows × cols) differ. */
#define assert_floats_close(what, got, ref, rows, cols, abs_tol, rel_tol)                                              \
    do {                                                                                                               \
        if (test_compare_floats((what), (got), (ref), (rows), (cols), (abs_tol), (rel_tol)) != 0)                      \
            fail_msg("%s differs from its reference", (what));                                                         \
    } while (0)

/* The whole file at path, NUL-terminated (so text can be used as a string),
 * its length in *len when len is not NULL. Malloc'd, the caller frees; NULL
 * when it cannot be opened or read. */
static inline char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* A lesson's JSON text: before, then the n tokens "t0", "t1", ...
 * "t<n-1>" separated by ", ", then after (before ends where a token list
 * starts, after closes it). Malloc'd, the caller frees; NULL without
 * memory. */
static inline char *test_tokens_json(const char *before, int n, const char *after)
{
    size_t cap = strlen(before) + strlen(after) + (size_t)n * 16 + 1, at;
    char *json = malloc(cap);
    if (!json) return NULL;
    at = (size_t)snprintf(json, cap, "%s", before);
    for (int i = 0; i < n; i++) at += (size_t)snprintf(json + at, cap - at, "%s\"t%d\"", i ? ", " : "", i);
    snprintf(json + at, cap - at, "%s", after);
    return json;
}

/* Makes a new folder /tmp/attnviz-test-TAG-XXXXXX and writes its path into
 * buf (len bytes). 0, or -1 when it cannot be made. */
static inline int test_scratch_dir(char *buf, size_t len, const char *tag)
{
    snprintf(buf, len, "/tmp/attnviz-test-%s-XXXXXX", tag);
    return mkdtemp(buf) ? 0 : -1;
}

/* Calls each(path, user) for every NAME.json directly in dir, in the order
 * the folder lists them. Returns how many, or -1 when dir cannot be opened. */
static inline int test_each_json(const char *dir, void (*each)(const char *path, void *user), void *user)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        each(path, user);
        n++;
    }
    closedir(d);
    return n;
}

#endif
