/* export_pool.c: worker threads that encode and write frames. See export_pool.h. */
#include "export_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attn.h"

#define POOL_MAX_THREADS 16

/* A frame's PNG bytes, shared by the job that encodes them and the copy
 * jobs that write them again. Guarded by the pool's mutex, except `bytes`,
 * which is only read once state is 1 and never changes after. */
typedef struct Encoded {
    ExportBuffer bytes;
    int state; /* 0 pending, 1 ready, -1 failed */
    int refs;
} Encoded;

/* One file to write. */
typedef struct PoolJob {
    struct PoolJob *next;
    int slot;   /* the frame buffer to encode, or -1 for a copy of enc */
    char *path; /* owned */
    int n_text;
    ExportPngText *text; /* (n_text), keys and values owned */
    Encoded *enc;        /* a reference */
} PoolJob;

struct ExportPool {
    int width, height;
    size_t pitch;
    ExportPixelLayout layout;
    ExportPngOptions png;

    ExportPoolWriter write; /* NULL: export_write_owned_file */
    void *write_user;

    int n_threads;
    pthread_t threads[POOL_MAX_THREADS];
    int n_started;

    int n_slots;
    unsigned char **slots; /* (n_slots) frame buffers of (height, pitch) */
    int *free_stack;       /* (n_slots) indices of free slots; n_free of them */
    int n_free;
    PoolJob *q_head, *q_tail; /* FIFO of queued jobs */
    int q_len;
    int busy;      /* jobs a worker holds */
    Encoded *last; /* the last submitted frame's result (a reference), or NULL */

    int stop; /* destroy: workers exit once the queue is empty */
    int failed;
    char error[EXPORT_ERR_MAX]; /* the first failure */
    ExportPoolStats stats;

    pthread_mutex_t mu;
    pthread_cond_t work;  /* a job was queued, or stop */
    pthread_cond_t freed; /* a slot became free, a job ended, or a failure */
    pthread_cond_t ready; /* an Encoded became ready or failed */
};

/* CPU time of the calling thread: what encoding costs, whatever else the
 * machine is doing. */
static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Both with the mutex held. */
static void enc_unref(Encoded *e)
{
    if (e && --e->refs == 0) {
        export_buffer_free(&e->bytes);
        free(e);
    }
}

static void job_free(PoolJob *j)
{
    if (!j) return;
    free(j->path);
    for (int i = 0; i < j->n_text; i++) {
        free((char *)j->text[i].key);
        free((char *)j->text[i].text);
    }
    free(j->text);
    free(j);
}

static void fail_locked(ExportPool *p, const char *msg)
{
    if (p->failed) return;
    p->failed = 1;
    snprintf(p->error, sizeof p->error, "%s", msg);
    pthread_cond_broadcast(&p->freed);
    pthread_cond_broadcast(&p->ready);
}

static void *pool_worker(void *arg)
{
    ExportPool *p = arg;
    ExportBuffer buf = {0}; /* reused across frames: one allocation per worker */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->q_head && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (!p->q_head && p->stop) break;
        PoolJob *j = p->q_head;
        p->q_head = j->next;
        if (!p->q_head) p->q_tail = NULL;
        p->q_len--;
        p->busy++;
        int skip = p->failed;
        /* a copy waits for the frame it copies (queued before it, so held
         * by a worker or done: this cannot wait forever) */
        while (j->slot < 0 && !skip && j->enc->state == 0 && !p->failed) pthread_cond_wait(&p->ready, &p->mu);
        if (j->slot < 0 && j->enc->state != 1) skip = 1;
        pthread_mutex_unlock(&p->mu);

        char err[EXPORT_ERR_MAX] = "";
        int rc = 0;
        double c0 = thread_cpu_seconds(), c1 = c0, t1 = attn_clock_seconds(), t2 = t1;
        const ExportBuffer *out = &buf;
        if (!skip && j->slot >= 0) {
            ExportImage img = {p->slots[j->slot], p->width, p->height, p->pitch, p->layout};
            buf.len = 0;
            char msg[384];
            rc = export_png_encode(&img, j->text, j->n_text, &p->png, &buf, msg, sizeof msg);
            if (rc != 0) snprintf(err, sizeof err, "%s: %s", j->path, msg);
            c1 = thread_cpu_seconds();
            t1 = attn_clock_seconds();
        } else if (!skip) {
            out = &j->enc->bytes; /* ready, so immutable */
        }
        if (!skip && rc == 0)
            rc = p->write ? p->write(p->write_user, j->path, out->data, out->len, err, sizeof err)
                          : export_write_owned_file(j->path, out->data, out->len, err, sizeof err);
        t2 = attn_clock_seconds();
        size_t bytes = out->len;

        pthread_mutex_lock(&p->mu);
        p->busy--;
        if (j->slot >= 0) {
            /* share the bytes with copies still to come: hand over this
             * worker's buffer rather than copying it */
            if (!skip && rc == 0 && j->enc->refs > 1) {
                j->enc->bytes = buf;
                memset(&buf, 0, sizeof buf);
            }
            j->enc->state = (!skip && rc == 0) ? 1 : -1;
            pthread_cond_broadcast(&p->ready);
            p->free_stack[p->n_free++] = j->slot;
        }
        if (!skip) {
            p->stats.encode_seconds += c1 - c0;
            p->stats.write_seconds += t2 - t1;
            if (rc == 0) {
                p->stats.files++;
                p->stats.copies += j->slot < 0;
                p->stats.bytes += bytes;
            } else {
                fail_locked(p, err);
            }
        }
        enc_unref(j->enc);
        job_free(j);
        pthread_cond_broadcast(&p->freed);
    }
    pthread_mutex_unlock(&p->mu);
    export_buffer_free(&buf);
    return NULL;
}

ExportPool *export_pool_create(int threads, int width, int height, ExportPixelLayout layout,
                               const ExportPngOptions *opt, char *err, size_t errlen)
{
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > POOL_MAX_THREADS) threads = POOL_MAX_THREADS;
    if (width < 1 || height < 1) {
        snprintf(err, errlen, "frame size must be positive, got %dx%d", width, height);
        return NULL;
    }
    ExportPool *p = calloc(1, sizeof *p);
    if (!p) goto oom;
    p->width = width;
    p->height = height;
    p->layout = layout;
    p->pitch = (size_t)width * (layout == EXPORT_PIXELS_RGB24 ? 3 : 4);
    if (opt)
        p->png = *opt;
    else
        export_png_options_init(&p->png);
    /* 1. Buffers: one per worker, one being drawn, one spare so that the
     * drawing thread rarely waits; but no more than EXPORT_POOL_MAX_BYTES of
     * them (at least two), and no more workers than buffers to keep busy:
     * a 16384×16384 frame is 1 GiB, and memory, not the CPU count, then
     * decides how many are encoded at once. */
    size_t frame_bytes = p->pitch * (size_t)height;
    size_t fit = frame_bytes ? EXPORT_POOL_MAX_BYTES / frame_bytes : 0;
    p->n_slots = threads + 2;
    if ((size_t)p->n_slots > fit) p->n_slots = fit > 2 ? (int)fit : 2;
    if (threads > p->n_slots - 1) threads = p->n_slots - 1;
    p->n_threads = threads;
    p->slots = calloc((size_t)p->n_slots, sizeof *p->slots);
    p->free_stack = calloc((size_t)p->n_slots, sizeof *p->free_stack);
    if (!p->slots || !p->free_stack) goto oom;
    for (int i = 0; i < p->n_slots; i++) {
        p->slots[i] = malloc(p->pitch * (size_t)height);
        if (!p->slots[i]) goto oom;
        p->free_stack[p->n_free++] = i;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->freed, NULL);
    pthread_cond_init(&p->ready, NULL);
    /* 2. Workers. */
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, pool_worker, p) != 0) {
            export_pool_destroy(p);
            snprintf(err, errlen, "cannot start %d encoding threads", threads);
            return NULL;
        }
        p->n_started++;
    }
    return p;
oom:;
    int wanted = p ? p->n_slots : threads + 2;
    if (p) {
        for (int i = 0; p->slots && i < p->n_slots; i++) free(p->slots[i]);
        free(p->slots);
        free(p->free_stack);
        free(p);
    }
    snprintf(err, errlen, "out of memory for %d frame buffers of %dx%d", wanted, width, height);
    return NULL;
}

int export_pool_threads(const ExportPool *pool)
{
    return pool->n_threads;
}

void export_pool_set_writer(ExportPool *p, ExportPoolWriter write, void *user)
{
    p->write = write;
    p->write_user = user;
}

unsigned char *export_pool_acquire(ExportPool *p, size_t *pitch)
{
    pthread_mutex_lock(&p->mu);
    while (p->n_free == 0 && !p->failed) pthread_cond_wait(&p->freed, &p->mu);
    unsigned char *px = NULL;
    if (!p->failed) px = p->slots[p->free_stack[--p->n_free]];
    pthread_mutex_unlock(&p->mu);
    *pitch = p->pitch;
    return px;
}

static int slot_of(const ExportPool *p, const unsigned char *buffer, const char *who)
{
    for (int i = 0; i < p->n_slots; i++)
        if (p->slots[i] == buffer) return i;
    fprintf(stderr, "%s:%d: %s: not a buffer of this pool\n", __FILE__, __LINE__, who);
    abort(); /* a programmer error */
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* A job with its path and text copied, or NULL when memory runs out. */
static PoolJob *job_new(int slot, const char *path, const ExportPngText *text, int n_text)
{
    PoolJob *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->slot = slot;
    j->path = dup_str(path);
    j->text = n_text > 0 ? calloc((size_t)n_text, sizeof *j->text) : NULL;
    if (!j->path || (n_text > 0 && !j->text)) goto oom;
    for (int i = 0; i < n_text; i++) {
        j->text[i].key = dup_str(text[i].key);
        j->text[i].text = dup_str(text[i].text);
        j->n_text = i + 1;
        if (!j->text[i].key || !j->text[i].text) goto oom;
    }
    return j;
oom:
    job_free(j);
    return NULL;
}

/* With the mutex held. */
static void enqueue(ExportPool *p, PoolJob *j)
{
    if (p->q_tail)
        p->q_tail->next = j;
    else
        p->q_head = j;
    p->q_tail = j;
    p->q_len++;
    p->stats.submitted++;
    pthread_cond_signal(&p->work);
}

int export_pool_submit(ExportPool *p, unsigned char *buffer, const char *path, const ExportPngText *text, int n_text)
{
    int idx = slot_of(p, buffer, "export_pool_submit");
    PoolJob *j = job_new(idx, path, text, n_text);
    Encoded *e = calloc(1, sizeof *e);
    pthread_mutex_lock(&p->mu);
    if ((!j || !e) && !p->failed) {
        char msg[EXPORT_ERR_MAX];
        snprintf(msg, sizeof msg, "%s: out of memory", path);
        fail_locked(p, msg);
    }
    if (p->failed) {
        job_free(j);
        free(e);
        p->free_stack[p->n_free++] = idx;
        pthread_cond_broadcast(&p->freed);
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    e->refs = 2; /* the job's, and p->last's */
    j->enc = e;
    enc_unref(p->last);
    p->last = e;
    enqueue(p, j);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

int export_pool_submit_copy(ExportPool *p, const char *path)
{
    PoolJob *j = job_new(-1, path, NULL, 0);
    pthread_mutex_lock(&p->mu);
    if (!p->last || !j || p->failed) {
        if (!j && !p->failed) fail_locked(p, "out of memory");
        pthread_mutex_unlock(&p->mu);
        job_free(j);
        return -1;
    }
    j->enc = p->last;
    p->last->refs++;
    enqueue(p, j);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void export_pool_release(ExportPool *p, unsigned char *buffer)
{
    int idx = slot_of(p, buffer, "export_pool_release");
    pthread_mutex_lock(&p->mu);
    p->free_stack[p->n_free++] = idx;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

int export_pool_finish(ExportPool *p, char *err, size_t errlen)
{
    pthread_mutex_lock(&p->mu);
    while (p->q_len > 0 || p->busy > 0) pthread_cond_wait(&p->freed, &p->mu);
    int rc = p->failed ? -1 : 0;
    if (rc) snprintf(err, errlen, "%s", p->error);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void export_pool_stats(ExportPool *p, ExportPoolStats *stats)
{
    pthread_mutex_lock(&p->mu);
    *stats = p->stats;
    pthread_mutex_unlock(&p->mu);
}

void export_pool_destroy(ExportPool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_started; i++) pthread_join(p->threads[i], NULL);
    /* the workers have drained the queue; only p->last may remain */
    enc_unref(p->last);
    for (int i = 0; i < p->n_slots; i++) free(p->slots[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->freed);
    pthread_cond_destroy(&p->ready);
    free(p->slots);
    free(p->free_stack);
    free(p);
}
