/* test_export_read.h: reading PNGs back in the export tests (libpng), so a
 * test checks what a user's viewer would see: size, pixels and text chunks. */
#ifndef TEST_EXPORT_READ_H
#define TEST_EXPORT_READ_H

#include <stddef.h>

typedef struct TestPng {
    int width, height;
    int channels;        /* 3 (RGB) or 4 (RGBA) as stored in the file */
    unsigned char *rgba; /* (height, width, 4), alpha 255 when the file has none */
    int n_text;
    char **keys, **texts;    /* (n_text) */
    int has_phys;            /* 1 when the file has a pHYs chunk in metres */
    unsigned phys_x, phys_y; /* its pixels per metre */
} TestPng;

/* 0 and *png filled, or -1 with a message in err (not a PNG, truncated, ...). */
int test_png_read(const char *path, TestPng *png, char *err, size_t errlen);
void test_png_free(TestPng *png);
/* The text of a chunk with that key, or NULL. */
const char *test_png_text(const TestPng *png, const char *key);
/* Number of entries in a folder other than . and .. (hidden ones included). */
int test_dir_count(const char *dir);
/* rm -r of a test's scratch folder (only files and folders it made). */
void test_rm_rf(const char *path);

#endif
