/* png_write.h: attnviz's PNG writer. Encodes an RGB/RGBA/RGBX pixel buffer
 * with libpng (text chunks included) into memory, and writes files so that a
 * final name never holds a half-written PNG: the bytes go to a temporary file
 * (.NAME.attnviz-XXXXXX) made in the target folder, which is renamed over the
 * final name only once every byte is written and the file is closed. On any error
 * (unwritable folder, full disk, a libpng error) the temporary file is
 * removed and the call returns -1 with one line in err.
 *
 * Usage:
 *
 *     ExportImage img = {pixels, 1280, 720, 1280 * 4, EXPORT_PIXELS_RGBX32};
 *     ExportPngText text[] = {{"Title", "我喜欢跑步"}, {"Software", "attnviz 0.1.0"}};
 *     char err[512];
 *     if (export_png_write_file("out/001-scores-h1.png", &img, text, 2, NULL, err, sizeof err) != 0)
 *         fprintf(stderr, "%s\n", err); // "out/001-scores-h1.png: No space left on device"
 *
 * Pixel layouts (bytes in memory, top row first, rows `pitch` bytes apart):
 * RGB24 = R,G,B; RGBA32 = R,G,B,A (written as an RGBA PNG); RGBX32 = R,G,B,x
 * and BGRX32 = B,G,R,x (the fourth byte is ignored; an RGB PNG is written).
 * SDL_PIXELFORMAT_RGB24, _ABGR8888, _XBGR8888 and _XRGB8888 have these four
 * layouts on a little-endian machine; SDL_PIXELFORMAT_RGBA32 and _RGBX32 name
 * the RGBA32 and RGBX32 layouts on any machine.
 *
 * Text: each key is a PNG keyword (1..79 printable Latin-1 characters).
 * ASCII values are written as tEXt chunks (what most viewers show), any other
 * UTF-8 value as an uncompressed iTXt chunk. Values are borrowed for the call.
 *
 * Compression: EXPORT_PNG_DEFAULT_LEVEL / _FILTER / _STRATEGY were chosen by
 * measuring attnviz frames at 1280×720 (tools/bench_export.py --sweep prints
 * the time and size table; the numbers are beside the defaults below).
 *
 * Thread safety: every function here may run on several threads at once
 * (a stream belongs to one thread at a time).
 */
#ifndef EXPORT_PNG_WRITE_H
#define EXPORT_PNG_WRITE_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for any one-line error of this module: two paths and a reason. A
 * path longer than PATH_MAX is refused with a message that shortens it. */
#define EXPORT_ERR_MAX (2 * PATH_MAX + 512)

typedef enum ExportPixelLayout {
    EXPORT_PIXELS_RGB24,  /* R,G,B */
    EXPORT_PIXELS_RGBA32, /* R,G,B,A */
    EXPORT_PIXELS_RGBX32, /* R,G,B,ignored */
    EXPORT_PIXELS_BGRX32  /* B,G,R,ignored: SDL_PIXELFORMAT_XRGB8888 on little-endian */
} ExportPixelLayout;

/* A borrowed view of pixels. */
typedef struct ExportImage {
    const unsigned char *pixels; /* (height, pitch) bytes */
    int width, height;           /* 1..EXPORT_PNG_MAX_WIDTH, 1..EXPORT_PNG_MAX_HEIGHT */
    size_t pitch;                /* bytes from one row to the next */
    ExportPixelLayout layout;
} ExportImage;

/* libpng's own default limits; a handout sheet can be very tall. */
#define EXPORT_PNG_MAX_WIDTH  1000000
#define EXPORT_PNG_MAX_HEIGHT 1000000

typedef struct ExportPngText {
    const char *key;  /* PNG keyword: "Title", "Software", "attnviz:formula", ... */
    const char *text; /* UTF-8 */
} ExportPngText;

/* Measured on attnviz frames (/usr/bin/python3 tools/bench_export.py --sweep:
 * the 24 steps of mhsa-wo-xihuan-paobu at 1280×720, encode CPU time per
 * frame on one thread, median of 3; the machine was shared, so rows differ
 * by about ±0.5 ms of noise: level 1 "filtered" equals level 1 "default" in
 * zlib, yet measured 5.67 against 5.13):
 *
 *     level filter strategy   encode ms  KiB/frame
 *     0     none   default       2.57     2701.9   (stored: 40× the bytes)
 *     1     none   default       5.13       67.2   <- chosen
 *     2     none   default       5.57       63.6
 *     3     none   default       5.47       59.5
 *     1     sub    default       6.18       74.1
 *     1     up     default       6.33       66.4
 *     1     paeth  default       8.94       65.9
 *     1     fast   default      11.17       65.0   (libpng picks per row)
 *     6     none   default      10.87       49.0   (zlib's default level)
 *     9     none   default      38.60       44.2
 *     1     sub    rle           6.99      153.4
 *     1     none   rle          20.66      741.9
 *
 * Frames are flat cells, flat backgrounds and text: zlib's fastest level
 * finds the repeats (a row above is 3840 bytes back, inside the window)
 * without any row filter, which here only costs time. Levels 2 and 3 are
 * within the noise of level 1 and 5-12% smaller; level 1 was the fastest in
 * both sweeps run. */
#define EXPORT_PNG_DEFAULT_LEVEL    1      /* zlib level 0..9 */
#define EXPORT_PNG_DEFAULT_FILTER   "none" /* see export_png_filter_from_name */
#define EXPORT_PNG_DEFAULT_STRATEGY "default"

typedef struct ExportPngOptions {
    int level;    /* zlib level, 0..9 */
    int filters;  /* libpng PNG_FILTER_* bits (PNG_FILTER_SUB, ...) */
    int strategy; /* zlib strategy: Z_DEFAULT_STRATEGY, Z_FILTERED, Z_RLE, ... */
    /* The pHYs chunk: pixels per metre, the same both ways, which viewers,
     * word processors and printers read as the image's DPI (150 dpi is
     * 5906 px/m, see export_png_px_per_metre); 0 (the default): no pHYs. */
    unsigned px_per_metre;
} ExportPngOptions;

/* Pixels per metre for a resolution in dots per inch, rounded: 96 → 3780,
 * 150 → 5906. */
unsigned export_png_px_per_metre(double dpi);

/* Fills the measured defaults. */
void export_png_options_init(ExportPngOptions *opt);
/* "none", "sub", "up", "avg", "paeth", "fast" (none|sub|up, libpng picks per
 * row), "all": the PNG_FILTER_* bits, or -1. */
int export_png_filter_from_name(const char *name);
/* "default", "filtered", "rle", "huffman", "fixed": the zlib strategy, or -1. */
int export_png_strategy_from_name(const char *name);

/* A growable byte buffer; export_buffer_free releases it (a zeroed one is empty). */
typedef struct ExportBuffer {
    unsigned char *data; /* (cap) bytes, len of them used */
    size_t len, cap;
} ExportBuffer;
void export_buffer_free(ExportBuffer *buf);
/* Appends len bytes to buf, growing it. 0, or -1 out of memory (buf unchanged). */
int export_buffer_append(ExportBuffer *buf, const void *data, size_t len);

/* Encodes img as a PNG, appending to out (which may already hold bytes or be
 * zeroed). opt NULL: the defaults. 0, or -1 with err filled (out then holds
 * what it held before). */
int export_png_encode(const ExportImage *img, const ExportPngText *text, int n_text, const ExportPngOptions *opt,
                      ExportBuffer *out, char *err, size_t errlen);

/* Streaming: the same encoding, a band of rows at a time, so a tall image
 * (the handout sheet) never has to be in memory whole. begin returns NULL
 * with err filled; rows and end return 0, or -1 with err filled, and on
 * failure the stream is already released and out->len restored. Every
 * stream ends with exactly one successful end, a failure, or an abort. */
typedef struct ExportPngStream ExportPngStream;
ExportPngStream *export_png_stream_begin(int width, int height, ExportPixelLayout layout, const ExportPngText *text,
                                         int n_text, const ExportPngOptions *opt, ExportBuffer *out, char *err,
                                         size_t errlen);
/* n_rows rows of `pitch` bytes from pixels, top first. */
int export_png_stream_rows(ExportPngStream *s, const unsigned char *pixels, size_t pitch, int n_rows, char *err,
                           size_t errlen);
int export_png_stream_end(ExportPngStream *s, char *err, size_t errlen);
void export_png_stream_abort(ExportPngStream *s);

/* Writes len bytes to path, atomically for a regular file: through a new
 * temporary in path's folder (.NAME.attnviz-XXXXXX), renamed when complete
 * (mode 0666 & ~umask).
 * When path already exists and is a device or a pipe (/dev/stdout,
 * /dev/full), the bytes are written to it directly. A folder, and a
 * symbolic link to a regular file (export_check_not_link), are errors.
 * 0, or -1 with err = "PATH: reason" and no file left under any name. */
int export_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen);
/* -1 with err when path is a symbolic link to a regular file: writing
 * through a temporary would replace the link, writing into it the file it
 * points to; neither is attnviz's. 0 otherwise. */
int export_check_not_link(const char *path, char *err, size_t errlen);

/* The same for a file attnviz owns inside its output folder (a step PNG,
 * a frame, index.json): only ever a temporary plus rename. An existing
 * entry that is not a regular file (a FIFO, a device, a symbolic link, a
 * folder) is refused and never opened. 0, or -1 with err. */
int export_write_owned_file(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Removes every temporary file an export_write_* call is writing at this
 * moment. Async-signal-safe (atomics and unlink only): a signal handler
 * that must end the process at once calls it first, so that no temporary
 * is left behind. A temporary not yet registered when the signal comes is
 * removed by the next export into that folder (stale temporaries). */
void export_remove_temporaries(void);

/* export_png_encode + export_write_file. */
int export_png_write_file(const char *path, const ExportImage *img, const ExportPngText *text, int n_text,
                          const ExportPngOptions *opt, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
