/* png_write.c: libpng encoding into memory, and the temp-file-and-rename
 * file writer. See png_write.h. */
#include "png_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "export_internal.h"
#include "lesson.h" /* lesson_file_kind, lesson_vformat */

void export__set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(err, errlen, fmt, ap); /* cut at a character, with "…" */
    va_end(ap);
}

void export_png_options_init(ExportPngOptions *opt)
{
    opt->level = EXPORT_PNG_DEFAULT_LEVEL;
    opt->filters = export_png_filter_from_name(EXPORT_PNG_DEFAULT_FILTER);
    opt->strategy = export_png_strategy_from_name(EXPORT_PNG_DEFAULT_STRATEGY);
    opt->px_per_metre = 0;
}

unsigned export_png_px_per_metre(double dpi)
{
    return dpi > 0 ? (unsigned)lround(dpi / 0.0254) : 0;
}

int export_png_filter_from_name(const char *name)
{
    static const struct {
        const char *name;
        int bits;
    } table[] = {
        {"none", PNG_FILTER_NONE},   {"sub", PNG_FILTER_SUB},    {"up", PNG_FILTER_UP},    {"avg", PNG_FILTER_AVG},
        {"paeth", PNG_FILTER_PAETH}, {"fast", PNG_FAST_FILTERS}, {"all", PNG_ALL_FILTERS},
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

int export_buffer_append(ExportBuffer *b, const void *data, size_t len)
{
    if (len > SIZE_MAX - b->len) return -1;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 64 * 1024;
        while (cap < b->len + len) cap = cap > SIZE_MAX / 2 ? b->len + len : cap * 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) return -1;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

/* ---- encoding ---- */

/* What the libpng callbacks share; reached through png_get_error_ptr/io_ptr. */
typedef struct PngSink {
    ExportBuffer *out;
    int oom;       /* 1 when growing the buffer failed */
    char msg[256]; /* libpng's error message */
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
    if (export_buffer_append(s->out, data, len) != 0) {
        s->oom = 1;
        png_error(png, "out of memory");
    }
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

struct ExportPngStream {
    png_structp png;
    png_infop info;
    png_textp chunks; /* (n_text), libpng copies them in png_set_text */
    PngSink sink;
    size_t len_before; /* out->len when the stream began, restored on failure */
    int width, height, rows_done;
    ExportPixelLayout layout;
    unsigned char *row; /* (width, 3): an RGBX/BGRX row made RGB */
};

static void stream_free(ExportPngStream *s, int failed)
{
    if (!s) return;
    png_destroy_write_struct(&s->png, s->info ? &s->info : NULL);
    free(s->chunks);
    free(s->row);
    if (failed) s->sink.out->len = s->len_before;
    free(s);
}

/* The message after a longjmp, and the stream released. */
static void stream_fail(ExportPngStream *s, char *err, size_t errlen)
{
    export__set_err(err, errlen, "encoding PNG: %s", s->sink.msg[0] ? s->sink.msg : "libpng error");
    stream_free(s, 1);
}

static size_t layout_bpp(ExportPixelLayout layout)
{
    return layout == EXPORT_PIXELS_RGB24 ? 3 : 4;
}

ExportPngStream *export_png_stream_begin(int width, int height, ExportPixelLayout layout, const ExportPngText *text,
                                         int n_text, const ExportPngOptions *opt, ExportBuffer *out, char *err,
                                         size_t errlen)
{
    ExportPngOptions o;
    if (opt)
        o = *opt;
    else
        export_png_options_init(&o);
    if (width < 1 || height < 1 || width > EXPORT_PNG_MAX_WIDTH || height > EXPORT_PNG_MAX_HEIGHT) {
        export__set_err(err, errlen, "image size must be 1..%d wide and 1..%d high, got %dx%d", EXPORT_PNG_MAX_WIDTH,
                        EXPORT_PNG_MAX_HEIGHT, width, height);
        return NULL;
    }
    if (o.level < 0 || o.level > 9 || (o.filters & ~PNG_ALL_FILTERS) != 0 || o.filters == 0) {
        export__set_err(err, errlen,
                        "PNG options: level must be 0..9 and filters a non-empty set, got level %d filters 0x%x",
                        o.level, (unsigned)o.filters);
        return NULL;
    }
    for (int i = 0; i < n_text; i++)
        if (!text[i].key || !valid_keyword(text[i].key) || !text[i].text) {
            export__set_err(err, errlen,
                            "PNG text %d: the key must be 1..79 printable characters and the text non-NULL", i);
            return NULL;
        }
    ExportPngStream *s = calloc(1, sizeof *s);
    if (!s) {
        export__set_err(err, errlen, "out of memory starting the PNG encoder");
        return NULL;
    }
    s->sink.out = out;
    s->len_before = out->len;
    s->width = width;
    s->height = height;
    s->layout = layout;
    s->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s->sink, sink_error, sink_warning);
    if (!s->png) {
        free(s);
        export__set_err(err, errlen, "out of memory starting the PNG encoder");
        return NULL;
    }
    /* Only s's fields change after setjmp, and s lives on the heap. */
    if (setjmp(png_jmpbuf(s->png))) {
        stream_fail(s, err, errlen);
        return NULL;
    }
    s->info = png_create_info_struct(s->png);
    if (!s->info) png_error(s->png, "out of memory");
    png_set_write_fn(s->png, &s->sink, sink_write, sink_flush);
    png_set_user_limits(s->png, EXPORT_PNG_MAX_WIDTH, EXPORT_PNG_MAX_HEIGHT);

    /* 1. Header: 8-bit RGB (or RGBA when the alpha is real), no interlace. */
    int color = layout == EXPORT_PIXELS_RGBA32 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB;
    png_set_IHDR(s->png, s->info, (png_uint_32)width, (png_uint_32)height, 8, color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* 2. Compression, as measured (png_write.h). A bigger zlib buffer means
     * fewer IDAT chunks and fewer calls into the sink. */
    png_set_compression_level(s->png, o.level);
    png_set_compression_strategy(s->png, o.strategy);
    png_set_filter(s->png, PNG_FILTER_TYPE_BASE, o.filters);
    png_set_compression_buffer_size(s->png, 256 * 1024);
    if (o.px_per_metre > 0) png_set_pHYs(s->png, s->info, o.px_per_metre, o.px_per_metre, PNG_RESOLUTION_METER);
    /* 3. Text chunks before the image data, so readers find them early. */
    if (n_text > 0) {
        s->chunks = calloc((size_t)n_text, sizeof *s->chunks);
        if (!s->chunks) png_error(s->png, "out of memory");
        for (int i = 0; i < n_text; i++) {
            png_textp c = &s->chunks[i];
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
        png_set_text(s->png, s->info, s->chunks, n_text);
    }
    png_write_info(s->png, s->info);
    /* 4. RGBX/BGRX rows are made RGB here, one row at a time: a plain loop
     * costs a third of libpng's filler and bgr transforms (0.34 against
     * 0.95 ms for a 1280×720 frame, measured). */
    if (layout == EXPORT_PIXELS_RGBX32 || layout == EXPORT_PIXELS_BGRX32) {
        s->row = malloc((size_t)width * 3);
        if (!s->row) png_error(s->png, "out of memory");
    }
    return s;
}

int export_png_stream_rows(ExportPngStream *s, const unsigned char *pixels, size_t pitch, int n_rows, char *err,
                           size_t errlen)
{
    if (pitch < (size_t)s->width * layout_bpp(s->layout) || n_rows < 0 || n_rows > s->height - s->rows_done) {
        export__set_err(err, errlen, "PNG rows: pitch %zu for %d pixels, %d rows with %d of %d left", pitch, s->width,
                        n_rows, s->height - s->rows_done, s->height);
        stream_free(s, 1);
        return -1;
    }
    if (setjmp(png_jmpbuf(s->png))) {
        stream_fail(s, err, errlen);
        return -1;
    }
    for (int y = 0; y < n_rows; y++) {
        const unsigned char *src = pixels + (size_t)y * pitch;
        if (s->row) {
            unsigned char *d = s->row;
            int r = s->layout == EXPORT_PIXELS_BGRX32 ? 2 : 0, b = 2 - r;
            for (int x = 0; x < s->width; x++, src += 4, d += 3) {
                d[0] = src[r];
                d[1] = src[1];
                d[2] = src[b];
            }
            src = s->row;
        }
        png_write_row(s->png, src);
    }
    s->rows_done += n_rows;
    return 0;
}

int export_png_stream_end(ExportPngStream *s, char *err, size_t errlen)
{
    if (s->rows_done != s->height) {
        export__set_err(err, errlen, "PNG ended after %d of %d rows", s->rows_done, s->height);
        stream_free(s, 1);
        return -1;
    }
    if (setjmp(png_jmpbuf(s->png))) {
        stream_fail(s, err, errlen);
        return -1;
    }
    png_write_end(s->png, s->info);
    stream_free(s, 0);
    return 0;
}

void export_png_stream_abort(ExportPngStream *s)
{
    stream_free(s, 1);
}

int export_png_encode(const ExportImage *img, const ExportPngText *text, int n_text, const ExportPngOptions *opt,
                      ExportBuffer *out, char *err, size_t errlen)
{
    if (!img || !img->pixels) {
        export__set_err(err, errlen, "no pixels to encode");
        return -1;
    }
    if (img->width >= 1 && img->pitch < (size_t)img->width * layout_bpp(img->layout)) {
        export__set_err(err, errlen, "row pitch %zu is shorter than a row of %d pixels", img->pitch, img->width);
        return -1;
    }
    ExportPngStream *s =
        export_png_stream_begin(img->width, img->height, img->layout, text, n_text, opt, out, err, errlen);
    if (!s) return -1;
    if (export_png_stream_rows(s, img->pixels, img->pitch, img->height, err, errlen) != 0) return -1;
    return export_png_stream_end(s, err, errlen);
}

/* ---- files ---- */

static mode_t umask_value;

static void read_umask(void)
{
    umask_value = umask(022);
    umask(umask_value);
}

/* Temporaries are made 0600; give ours what open(..., 0666) would. umask can
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

/* Writes straight into an existing device or pipe the user named. A FIFO
 * is opened without blocking (no reader: ENXIO, an error, not a hang); the
 * writes then block as any pipe's do. */
static int write_direct(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (fd < 0 && errno == ENXIO) {
        export__set_err(err, errlen, "%s: a FIFO with no reader", path);
        return -1;
    }
    if (fd < 0 || write_all(fd, data, len) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        export__set_err(err, errlen, "%s: %s", path, strerror(e));
        return -1;
    }
    if (close(fd) != 0) {
        export__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the temporaries being written, for a signal handler ---- */

/* Each slot holds the path of one temporary file while it exists: state 0
 * free, 1 taken (being filled), 2 a path a signal handler may unlink. Only
 * lock-free atomics and unlink are used on the handler's side. */
#define TEMP_SLOTS 64
static char temp_paths[TEMP_SLOTS][PATH_MAX]; /* a longer path is never opened (ENAMETOOLONG) */
static atomic_int temp_state[TEMP_SLOTS];
static atomic_int temp_closing; /* set by export_remove_temporaries: the process is ending */

/* Takes a slot for a temporary's path (the name before the file exists, so
 * that no moment has a file a signal handler does not know of). -1 when the
 * path is too long or every slot is taken: that file is then left to the
 * next export's clean-up of stale temporaries. */
static int temp_register(const char *path)
{
    size_t n = strlen(path);
    if (n >= PATH_MAX) return -1;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&temp_state[i], &expect, 1)) {
            memcpy(temp_paths[i], path, n + 1);
            atomic_store(&temp_state[i], 2);
            return i;
        }
    }
    return -1;
}

static void temp_unregister(int slot)
{
    if (slot >= 0) atomic_store(&temp_state[slot], 0);
}

static void temp_sweep(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (atomic_load(&temp_state[i]) == 2) unlink(temp_paths[i]);
}

void export_remove_temporaries(void)
{
    atomic_store(&temp_closing, 1);
    temp_sweep();
    /* A thread inside open() when the first sweep ran finishes creating its
     * file: a second sweep, a moment later, removes it too. */
    struct timespec moment = {0, 20 * 1000 * 1000};
    nanosleep(&moment, NULL);
    temp_sweep();
}

/* Replaces the trailing XXXXXX of tmpl with a fresh name and creates that
 * file: O_CREAT | O_EXCL | O_NOFOLLOW, so it is always a new regular file,
 * never an existing entry or the target of a symbolic link. The descriptor,
 * or -1 with errno. */
static int open_new_temporary(char *tmpl, int *slot)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint counter;
    char *x = tmpl + strlen(tmpl) - 6;
    for (int attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t v =
            (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^ atomic_fetch_add(&counter, 1) * 40503u;
        for (int i = 0; i < 6; i++, v /= 62) x[i] = digits[v % 62];
        *slot = temp_register(tmpl);
        int fd = open(tmpl, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 && atomic_load(&temp_closing)) { /* a signal handler has already swept */
            close(fd);
            unlink(tmpl);
            errno = EINTR;
            fd = -1;
        }
        int e = errno;
        if (fd >= 0) return fd;
        temp_unregister(*slot);
        *slot = -1;
        errno = e;
        if (e != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

char *export__temporary_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + 1 + sizeof EXPORT_TEMP_MARKER - 1 + 6 + 1;
    char *tmp = malloc(n);
    if (tmp) snprintf(tmp, n, "%.*s.%s" EXPORT_TEMP_MARKER "XXXXXX", (int)dirlen, path, path + dirlen);
    return tmp;
}

int export__open_temporary(char *tmp, int *slot)
{
    return open_new_temporary(tmp, slot);
}

void export__temporary_done(int slot)
{
    temp_unregister(slot);
}

/* Writes through a temporary beside path (export__temporary_path, created
 * with O_EXCL and O_NOFOLLOW: a new file, never an existing one), renamed
 * over path when every byte is written. */
static int write_via_temporary(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    /* 1. The temporary file: ".NAME.attnviz-XXXXXX" beside the final name,
     * hidden so that a listing or a glob of *.png never picks it up. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dirlen;
    if (!*base) {
        export__set_err(err, errlen, "%s: expected a file name, not a folder", path);
        return -1;
    }
    char *tmp = export__temporary_path(path);
    if (!tmp) {
        export__set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int slot = -1;
    int fd = open_new_temporary(tmp, &slot);
    if (fd < 0) {
        int e = errno;
        int shown = dirlen > 1 ? (int)dirlen - 1 : (int)dirlen; /* the folder without its last '/' */
        char *dir = strndup(dirlen ? path : ".", dirlen ? (size_t)shown : 1);
        struct stat dst;
        if (dir && stat(dir, &dst) == 0 && S_ISDIR(dst.st_mode))
            export__set_err(err, errlen, "%s: cannot create a file in the folder %s: %s", path, dir, strerror(e));
        else if (dir && (e == ENOTDIR || stat(dir, &dst) == 0))
            export__set_err(err, errlen, "%s: %s is not a folder", path, dir);
        else
            export__set_err(err, errlen, "%s: the folder %s does not exist", path, dir ? dir : "");
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
    if (e) unlink(tmp);
    temp_unregister(slot);
    if (e) {
        export__set_err(err, errlen, "%s: %s", path, strerror(e));
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int export_check_not_link(const char *path, char *err, size_t errlen)
{
    struct stat lst, st;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        export__set_err(err, errlen,
                        "%s: is a symbolic link to a file; attnviz replaces neither the link nor the file it "
                        "points to (name the file itself)",
                        path);
        return -1;
    }
    return 0;
}

int export_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !*path) {
        export__set_err(err, errlen, "no file name given");
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            export__set_err(err, errlen, "%s: is a folder, expected a file name", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) return write_direct(path, data, len, err, errlen);
        if (export_check_not_link(path, err, errlen) != 0) return -1;
    }
    return write_via_temporary(path, data, len, err, errlen);
}

int export_write_owned_file(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !*path) {
        export__set_err(err, errlen, "no file name given");
        return -1;
    }
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        export__set_err(err, errlen, "%s: exists and is %s, not a regular file; attnviz replaces only its own files",
                        path, lesson_file_kind(st.st_mode));
        return -1;
    }
    return write_via_temporary(path, data, len, err, errlen);
}

int export_png_write_file(const char *path, const ExportImage *img, const ExportPngText *text, int n_text,
                          const ExportPngOptions *opt, char *err, size_t errlen)
{
    ExportBuffer buf = {0};
    char msg[384];
    if (export_png_encode(img, text, n_text, opt, &buf, msg, sizeof msg) != 0) {
        export_buffer_free(&buf);
        export__set_err(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    int rc = export_write_file(path, buf.data, buf.len, err, errlen);
    export_buffer_free(&buf);
    return rc;
}
