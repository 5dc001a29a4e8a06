/* png_write.c: libpng encoding into memory, and the temp-file-and-rename
 * file writer. See png_write.h. */
#include "png_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void export_png_options_init(ExportPngOptions *opt)
{
    opt->level = EXPORT_PNG_DEFAULT_LEVEL;
    opt->filters = export_png_filter_from_name(EXPORT_PNG_DEFAULT_FILTER);
    opt->strategy = export_png_strategy_from_name(EXPORT_PNG_DEFAULT_STRATEGY);
}

int export_png_filter_from_name(const char *name)
{
    static const struct {
        const char *name;
        int bits;
    } table[] = {
        {"none", PNG_FILTER_NONE}, {"sub", PNG_FILTER_SUB},          {"up", PNG_FILTER_UP},
        {"avg", PNG_FILTER_AVG},   {"paeth", PNG_FILTER_PAETH},      {"fast", PNG_FAST_FILTERS},
        {"all", PNG_ALL_FILTERS},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) return table[i].bits;
    return -1;
}

int export_png_strategy_from_name(const char *name)
{
    static const struct {
        const char *name;
        int strategy;
    } table[] = {
        {"default", Z_DEFAULT_STRATEGY}, {"filtered", Z_FILTERED}, {"rle", Z_RLE},
        {"huffman", Z_HUFFMAN_ONLY},     {"fixed", Z_FIXED},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) return table[i].strategy;
    return -1;
}

void export_buffer_free(ExportBuffer *buf)
{
    if (!buf) return;
    free(buf->data);
    memset(buf, 0, sizeof *buf);
}

/* ---- encoding ---- */

/* What the libpng callbacks share; reached through png_get_error_ptr/io_ptr. */
typedef struct PngSink {
    ExportBuffer *out;
    int oom;         /* 1 when growing the buffer failed */
    char msg[256];   /* libpng's error message */
} PngSink;

static void sink_error(png_structp png, png_const_charp msg)
{
    PngSink *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void sink_warning(png_structp png, png_const_charp msg)
{
    (void)png; /* warnings (none expected for what we write) are not errors */
    (void)msg;
}

static void sink_write(png_structp png, png_bytep data, size_t len)
{
    PngSink *s = png_get_io_ptr(png);
    ExportBuffer *b = s->out;
    if (len > SIZE_MAX - b->len) {
        s->oom = 1;
        png_error(png, "PNG larger than memory");
    }
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 64 * 1024;
        while (cap < b->len + len) cap = cap > SIZE_MAX / 2 ? b->len + len : cap * 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) {
            s->oom = 1;
            png_error(png, "out of memory");
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

static void sink_flush(png_structp png)
{
    (void)png;
}

static int is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80) return 0;
    return 1;
}

/* A PNG keyword: 1..79 printable Latin-1 characters, no leading, trailing or
 * double spaces. We only ever pass ASCII keys. */
static int valid_keyword(const char *k)
{
    size_t n = strlen(k);
    if (n < 1 || n > 79 || k[0] == ' ' || k[n - 1] == ' ') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)k[i];
        if (c < 0x20 || c > 0x7e) return 0;
        if (c == ' ' && k[i + 1] == ' ') return 0;
    }
    return 1;
}

int export_png_encode(const ExportImage *img, const ExportPngText *text, int n_text,
                      const ExportPngOptions *opt, ExportBuffer *out, char *err, size_t errlen)
{
    ExportPngOptions o; /* a copy: setjmp below must not see a changed parameter */
    if (opt)
        o = *opt;
    else
        export_png_options_init(&o);
    if (!img || !img->pixels || img->width < 1 || img->height < 1 || img->width > EXPORT_PNG_MAX_SIDE ||
        img->height > EXPORT_PNG_MAX_SIDE) {
        set_err(err, errlen, "image size must be 1..%d on each side, got %dx%d", EXPORT_PNG_MAX_SIDE,
                img ? img->width : 0, img ? img->height : 0);
        return -1;
    }
    size_t bpp = img->layout == EXPORT_PIXELS_RGB24 ? 3 : 4;
    if (img->pitch < (size_t)img->width * bpp) {
        set_err(err, errlen, "row pitch %zu is shorter than a row of %d pixels", img->pitch, img->width);
        return -1;
    }
    if (o.level < 0 || o.level > 9 || (o.filters & ~PNG_ALL_FILTERS) != 0 || o.filters == 0) {
        set_err(err, errlen, "PNG options: level must be 0..9 and filters a non-empty set, got level %d filters 0x%x",
                o.level, (unsigned)o.filters);
        return -1;
    }
    for (int i = 0; i < n_text; i++)
        if (!text[i].key || !valid_keyword(text[i].key) || !text[i].text) {
            set_err(err, errlen, "PNG text %d: the key must be 1..79 printable characters and the text non-NULL", i);
            return -1;
        }

    /* Locals that change after setjmp and are read after a longjmp are volatile. */
    PngSink sink = {.out = out, .oom = 0, .msg = ""};
    size_t len_before = out->len;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, sink_error, sink_warning);
    png_infop volatile info = NULL;
    png_textp volatile chunks = NULL;
    if (!png) {
        set_err(err, errlen, "out of memory starting the PNG encoder");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_infop i = info;
        png_destroy_write_struct(&png, i ? &i : NULL);
        free(chunks);
        out->len = len_before;
        set_err(err, errlen, "encoding PNG: %s", sink.msg[0] ? sink.msg : "libpng error");
        return -1;
    }
    info = png_create_info_struct(png);
    if (!info) png_error(png, "out of memory");
    png_set_write_fn(png, &sink, sink_write, sink_flush);

    /* 1. Header: 8-bit RGB (or RGBA when the alpha is real), no interlace. */
    int color = img->layout == EXPORT_PIXELS_RGBA32 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB;
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8, color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* 2. Compression, as measured (png_write.h). A bigger zlib buffer means
     * fewer IDAT chunks and fewer calls into the sink. */
    png_set_compression_level(png, o.level);
    png_set_compression_strategy(png, o.strategy);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, o.filters);
    png_set_compression_buffer_size(png, 256 * 1024);
    /* 3. Text chunks before the image data, so readers find them early. */
    if (n_text > 0) {
        chunks = calloc((size_t)n_text, sizeof *chunks);
        if (!chunks) png_error(png, "out of memory");
        for (int i = 0; i < n_text; i++) {
            png_textp c = &chunks[i];
            c->key = (png_charp)text[i].key;
            c->text = (png_charp)text[i].text;
            c->text_length = strlen(text[i].text);
            if (is_ascii(text[i].text)) {
                c->compression = PNG_TEXT_COMPRESSION_NONE;
            } else {
                c->compression = PNG_ITXT_COMPRESSION_NONE;
                c->itxt_length = c->text_length;
                c->text_length = 0;
                c->lang = (png_charp) "";
                c->lang_key = (png_charp) "";
            }
        }
        png_set_text(png, info, chunks, n_text);
    }
    png_write_info(png, info);
    /* 4. Rows. RGBX: libpng drops the filler byte of each pixel. */
    if (img->layout == EXPORT_PIXELS_RGBX32) png_set_filler(png, 0, PNG_FILLER_AFTER);
    for (int y = 0; y < img->height; y++) png_write_row(png, img->pixels + (size_t)y * img->pitch);
    png_write_end(png, info);
    png_infop i = info;
    png_destroy_write_struct(&png, &i);
    free(chunks);
    return 0;
}

/* ---- files ---- */

static mode_t umask_value;

static void read_umask(void)
{
    umask_value = umask(022);
    umask(umask_value);
}

/* mkstemp makes 0600 files; give ours what open(..., 0666) would. umask can
 * only be read by setting it, so that is done once. */
static mode_t file_mode(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, read_umask);
    return 0666 & ~umask_value;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len > (size_t)1 << 30 ? (size_t)1 << 30 : len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Writes straight into an existing device or pipe. */
static int write_direct(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || write_all(fd, data, len) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        set_err(err, errlen, "%s: %s", path, strerror(e));
        return -1;
    }
    if (close(fd) != 0) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int export_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !*path) {
        set_err(err, errlen, "no file name given");
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            set_err(err, errlen, "%s: is a folder, expected a file name", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) return write_direct(path, data, len, err, errlen);
    }
    /* 1. The temporary file: ".NAME.XXXXXX" beside the final name, hidden
     * so that a listing or a glob of *.png never picks it up. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dirlen;
    if (!*base) {
        set_err(err, errlen, "%s: expected a file name, not a folder", path);
        return -1;
    }
    size_t tlen = dirlen + 1 + strlen(base) + 8;
    char *tmp = malloc(tlen);
    if (!tmp) {
        set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    snprintf(tmp, tlen, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        int shown = dirlen > 1 ? (int)dirlen - 1 : (int)dirlen; /* the folder without its last '/' */
        char *dir = strndup(dirlen ? path : ".", dirlen ? (size_t)shown : 1);
        struct stat dst;
        if (dir && stat(dir, &dst) == 0 && S_ISDIR(dst.st_mode))
            set_err(err, errlen, "%s: cannot create a file in the folder %s: %s", path, dir, strerror(e));
        else if (dir && (e == ENOTDIR || stat(dir, &dst) == 0))
            set_err(err, errlen, "%s: %s is not a folder", path, dir);
        else
            set_err(err, errlen, "%s: the folder %s does not exist", path, dir ? dir : "");
        free(dir);
        free(tmp);
        return -1;
    }
    /* 2. Every byte, then close (which reports a deferred write error), then
     * the permissions, then the rename that makes it visible. No fsync: it
     * would cost more than encoding on a slow disk, and rename-over-replace
     * ordering is what ext4/xfs already guarantee on a crash. */
    int e = 0;
    if (write_all(fd, data, len) != 0) e = errno;
    if (fchmod(fd, file_mode()) != 0 && !e) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) {
        unlink(tmp);
        set_err(err, errlen, "%s: %s", path, strerror(e));
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int export_png_write_file(const char *path, const ExportImage *img, const ExportPngText *text, int n_text,
                          const ExportPngOptions *opt, char *err, size_t errlen)
{
    ExportBuffer buf = {0};
    char msg[384];
    if (export_png_encode(img, text, n_text, opt, &buf, msg, sizeof msg) != 0) {
        set_err(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    int rc = export_write_file(path, buf.data, buf.len, err, errlen);
    export_buffer_free(&buf);
    return rc;
}
