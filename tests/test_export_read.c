/* test_export_read.c: see test_export_read.h. */
#include "test_export_read.h"

#include <dirent.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ReadErr {
    char msg[256];
} ReadErr;

static void read_error(png_structp png, png_const_charp msg)
{
    ReadErr *e = png_get_error_ptr(png);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void read_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

int test_png_read(const char *path, TestPng *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    ReadErr re = {""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &re, read_error, read_warning);
    png_infop info = png_create_info_struct(png);
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(f);
        free(pixels);
        free(rows);
        snprintf(err, errlen, "%s: %s", path, re.msg);
        return -1;
    }
    png_init_io(png, f);
    png_read_info(png, info);
    int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
    int ct = png_get_color_type(png, info);
    out->channels = png_get_channels(png, info);
    png_uint_32 px = 0, py = 0;
    int unit = 0;
    if (png_get_pHYs(png, info, &px, &py, &unit) && unit == PNG_RESOLUTION_METER) {
        out->has_phys = 1;
        out->phys_x = px;
        out->phys_y = py;
    }
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    if (!(ct & PNG_COLOR_MASK_ALPHA)) png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    png_read_update_info(png, info);
    pixels = malloc((size_t)w * h * 4);
    rows = malloc(sizeof(png_bytep) * (size_t)h);
    for (int y = 0; y < h; y++) rows[y] = pixels + (size_t)y * w * 4;
    png_read_image(png, rows);
    png_read_end(png, info);
    png_textp text = NULL;
    int n = 0;
    png_get_text(png, info, &text, &n);
    out->n_text = n;
    out->keys = calloc((size_t)n + 1, sizeof(char *));
    out->texts = calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++) {
        out->keys[i] = strdup(text[i].key);
        out->texts[i] = strdup(text[i].text ? text[i].text : "");
    }
    out->width = w;
    out->height = h;
    out->rgba = pixels;
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    fclose(f);
    return 0;
}

void test_png_free(TestPng *png)
{
    for (int i = 0; i < png->n_text; i++) {
        free(png->keys[i]);
        free(png->texts[i]);
    }
    free(png->keys);
    free(png->texts);
    free(png->rgba);
    memset(png, 0, sizeof *png);
}

const char *test_png_text(const TestPng *png, const char *key)
{
    for (int i = 0; i < png->n_text; i++)
        if (strcmp(png->keys[i], key) == 0) return png->texts[i];
    return NULL;
}

int test_dir_count(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

void test_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            test_rm_rf(sub);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}
