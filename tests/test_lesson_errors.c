/* test_lesson_errors.c: the catalogue of bad lessons.
 *
 * Each tests/bad_lessons/NAME.json is paired with NAME.expected, the exact
 * message after "PATH:" ("LINE:COL: FIELD: expected ..., found ..."). For
 * every pair: lesson_load fails with exactly that one line, the Lesson is left
 * zeroed, and lesson_parse of the same bytes says the same under another name.
 * Every mismatch is printed, not only the first. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#include "lesson.h"

#define BAD_DIR ATTNVIZ_TESTS_DIR "/bad_lessons"

static int is_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "{trace_floats}" in an .expected file stands for the number of floats the
 * engine's plan counts for the sizes the message quotes ("(n_q=..., n_k=...,
 * d_model=..., heads=..., d_k=..., d_v=...)"), with the optional matrices the
 * lesson names (a mask, W_O unless "W_O": null, the biases), as the loader
 * counts before reading them: worked out here, so that a new step kind does
 * not change the file. Replaced in expected (of cap bytes); -1 when the
 * message quotes no sizes. */
static int put_trace_floats(char *expected, size_t cap, const char *lesson_text)
{
    char *at = strstr(expected, "{trace_floats}");
    if (!at) return 0;
    AttnConfig c;
    attn_config_init(&c);
    const char *sizes = strstr(expected, "(n_q=");
    if (!sizes || sscanf(sizes, "(n_q=%d, n_k=%d, d_model=%d, heads=%d, d_k=%d, d_v=%d)", &c.n_q, &c.n_k, &c.d_model,
                         &c.heads, &c.d_k, &c.d_v) != 6)
        return -1;
    static const float present = 0;
    c.cross = c.n_q != c.n_k;
    c.mask_kind = strstr(lesson_text, "\"mask\"") ? ATTN_MASK_MATRIX : ATTN_MASK_NONE;
    c.W_O = strstr(lesson_text, "\"W_O\": null") ? NULL : &present;
    c.b_Q = strstr(lesson_text, "\"b_Q\"") ? &present : NULL;
    c.b_K = strstr(lesson_text, "\"b_K\"") ? &present : NULL;
    c.b_V = strstr(lesson_text, "\"b_V\"") ? &present : NULL;
    c.b_O = strstr(lesson_text, "\"b_O\"") ? &present : NULL;
    char rest[1024], num[32];
    snprintf(rest, sizeof rest, "%s", at + strlen("{trace_floats}"));
    snprintf(num, sizeof num, "%zu", attn_trace_floats(&c));
    snprintf(at, cap - (size_t)(at - expected), "%s%s", num, rest);
    return 0;
}

static void test_catalogue(void **state)
{
    (void)state;
    DIR *d = opendir(BAD_DIR);
    assert_non_null(d);
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0) names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    /* the catalogue has at least these entries; a lost file must fail the test */
    assert_true(n >= 64);
    int failures = 0;
    for (int i = 0; i < n; i++) {
        char path[512], exp_path[512];
        snprintf(path, sizeof path, "%s/%s", BAD_DIR, names[i]);
        snprintf(exp_path, sizeof exp_path, "%s/%.*s.expected", BAD_DIR, (int)(strlen(names[i]) - 5), names[i]);
        size_t elen = 0;
        char *expected = test_read_file(exp_path, &elen);
        if (!expected) {
            printf("MISSING %s\n", exp_path);
            failures++;
            continue;
        }
        while (elen && (expected[elen - 1] == '\n' || expected[elen - 1] == '\r')) expected[--elen] = 0;
        size_t len = 0;
        char *text = test_read_file(path, &len);
        assert_non_null(text);
        char *grown = realloc(expected, elen + 64);
        assert_non_null(grown);
        expected = grown;
        if (put_trace_floats(expected, elen + 64, text) != 0) {
            printf("FAIL %s: {trace_floats} without the sizes it is counted from\n", names[i]);
            failures++;
        }
        char want[2048];
        snprintf(want, sizeof want, "%s:%s", path, expected);

        Lesson L;
        LessonError err;
        int rc = lesson_load(&L, path, &err);
        if (rc != -1 || strcmp(err.msg, want) != 0 || strchr(err.msg, '\n') || !is_zero(&L, sizeof L)) {
            printf("FAIL %s\n  rc   %d\n  want %s\n  got  %s\n  lesson zeroed: %s\n", names[i], rc, want, err.msg,
                   is_zero(&L, sizeof L) ? "yes" : "NO");
            failures++;
            if (rc == 0) lesson_free(&L);
        }
        /* the same bytes from memory give the same message under the given name */
        snprintf(want, sizeof want, "mem.json:%s", expected);
        rc = lesson_parse(&L, text, len, "mem.json", &err);
        if (rc != -1 || strcmp(err.msg, want) != 0 || !is_zero(&L, sizeof L)) {
            printf("FAIL (parse) %s\n  want %s\n  got  %s\n", names[i], want, err.msg);
            failures++;
            if (rc == 0) lesson_free(&L);
        }
        /* line and column agree with the message */
        if (err.line > 0) {
            char lc[32];
            snprintf(lc, sizeof lc, "mem.json:%d:%d: ", err.line, err.col);
            if (strncmp(err.msg, lc, strlen(lc)) != 0) {
                printf("FAIL (line/col) %s: err.line=%d err.col=%d but the message is %s\n", names[i], err.line,
                       err.col, err.msg);
                failures++;
            }
        }
        free(text);
        free(expected);
    }
    printf("%d bad lessons checked, %d failures\n", n, failures);
    for (int i = 0; i < n; i++) free(names[i]);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    attn_shutdown();
    return failed;
}
