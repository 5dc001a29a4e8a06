/* export_pool.h: encoding and writing PNG files on a pool of threads, so
 * that the next frame is drawn while earlier ones are compressed. The
 * caller fills frame buffers the pool owns and hands each back with the
 * file name; workers encode it (png_write.h) and write it atomically.
 *
 * Usage:
 *
 *     ExportPool *pool = export_pool_create(0, 1280, 720, EXPORT_PIXELS_BGRX32, NULL, err, sizeof err);
 *     for (int i = 0; i < n; i++) {
 *         size_t pitch;
 *         unsigned char *px = export_pool_acquire(pool, &pitch); // waits for a free buffer
 *         if (!px) break;                                        // a worker failed: stop drawing
 *         draw_frame(px, pitch, i);
 *         export_pool_submit(pool, px, path_of(i), text, n_text); // path and text are copied
 *     }
 *     int rc = export_pool_finish(pool, err, sizeof err);       // waits; the first error, if any
 *     export_pool_destroy(pool);
 *
 * A frame identical to the last one submitted (a held final state in a
 * video) need not be drawn or encoded again: export_pool_submit_copy writes
 * the last frame's PNG bytes under another name.
 *
 * Memory: threads + 2 frame buffers of height × pitch bytes, but no more
 * than EXPORT_POOL_MAX_BYTES of them (at least 2 buffers), with at most one
 * worker fewer than buffers; each worker also holds the PNG bytes of the
 * frame it encodes (at most about a frame's size, at --png-level 0). So the
 * pool's peak is about 2 × max(EXPORT_POOL_MAX_BYTES, 2 frames) whatever
 * the thread count. After the first failure no further file is written
 * (the failed one leaves no file, see export_write_file); files written
 * before it are complete.
 */
#ifndef EXPORT_POOL_H
#define EXPORT_POOL_H

#include <stddef.h>

#include "png_write.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The frame buffers' memory budget (see "Memory" above). */
#define EXPORT_POOL_MAX_BYTES ((size_t)1 << 30)

typedef struct ExportPool ExportPool;

/* What the pool has done so far (export_pool_stats). */
typedef struct ExportPoolStats {
    int files;  /* written completely */
    int copies; /* of them, written by export_pool_submit_copy */
    int submitted;
    double encode_seconds; /* CPU seconds of encoding, summed over workers */
    double write_seconds;  /* summed over workers: writing and renaming */
    size_t bytes;          /* PNG bytes written */
} ExportPoolStats;

/* threads ≤ 0: one per online CPU (at most 16), and fewer when the frames
 * are too large for EXPORT_POOL_MAX_BYTES. opt NULL: the PNG defaults.
 * NULL with err filled when memory or threads run out. */
ExportPool *export_pool_create(int threads, int width, int height, ExportPixelLayout layout,
                               const ExportPngOptions *opt, char *err, size_t errlen);
/* The number of worker threads. */
int export_pool_threads(const ExportPool *pool);
/* What writes a file's PNG bytes: export_write_owned_file unless set (call
 * before the first submit). A writer runs on the workers, several at once,
 * and returns 0, or -1 with err. */
typedef int (*ExportPoolWriter)(void *user, const char *path, const void *data, size_t len, char *err, size_t errlen);
void export_pool_set_writer(ExportPool *pool, ExportPoolWriter write, void *user);
/* A free buffer of (height, *pitch) bytes, waiting for one if all are
 * queued; NULL once a worker has failed. */
unsigned char *export_pool_acquire(ExportPool *pool, size_t *pitch);
/* Queues buffer (from acquire) to be written to path with the text chunks
 * (both copied). Returns 0, or -1 once a worker has failed (the buffer is
 * taken back either way). */
int export_pool_submit(ExportPool *pool, unsigned char *buffer, const char *path, const ExportPngText *text,
                       int n_text);
/* Queues a file with exactly the bytes of the last export_pool_submit'ed
 * frame (same pixels, same text). 0, or -1 when there is no such frame or
 * once a worker has failed. */
int export_pool_submit_copy(ExportPool *pool, const char *path);
/* Gives an acquired buffer back unwritten (the frame could not be drawn). */
void export_pool_release(ExportPool *pool, unsigned char *buffer);
/* Waits for every queued file. 0, or -1 with the first failure's message. */
int export_pool_finish(ExportPool *pool, char *err, size_t errlen);
void export_pool_stats(ExportPool *pool, ExportPoolStats *stats);
/* Stops the workers (finishing queued files first) and frees everything; NULL is fine. */
void export_pool_destroy(ExportPool *pool);

#ifdef __cplusplus
}
#endif
#endif
