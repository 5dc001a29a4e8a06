/* export_pool.c: worker threads that encode and write frames. See export_pool.h. */
#include "export_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POOL_MAX_THREADS 16

/* One frame buffer and what to do with it once it is queued. */
typedef struct PoolSlot {
    unsigned char *pixels; /* (height, pitch) */
    char *path;            /* owned, set on submit */
    int n_text;
    ExportPngText *text;   /* (n_text), keys and values owned */
} PoolSlot;

struct ExportPool {
    int width, height;
    size_t pitch;
    ExportPixelLayout layout;
    ExportPngOptions png;

    int n_threads;
    pthread_t threads[POOL_MAX_THREADS];
    int n_started;

    int n_slots;
    PoolSlot *slots;  /* (n_slots) */
    int *free_stack;  /* (n_slots) indices of free slots; n_free of them */
    int n_free;
    int *queue;       /* (n_slots) ring of queued slot indices */
    int q_head, q_len;
    int busy;         /* slots a worker is encoding */

    int stop;         /* destroy: workers exit once the queue is empty */
    int failed;
    char error[512];  /* the first failure */
    ExportPoolStats stats;

    pthread_mutex_t mu;
    pthread_cond_t work;  /* a slot was queued, or stop */
    pthread_cond_t freed; /* a slot became free, or a failure */
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread: what encoding costs, whatever else the
 * machine is doing. */
static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void slot_clear(PoolSlot *s)
{
    free(s->path);
    s->path = NULL;
    for (int i = 0; i < s->n_text; i++) {
        free((char *)s->text[i].key);
        free((char *)s->text[i].text);
    }
    free(s->text);
    s->text = NULL;
    s->n_text = 0;
}

static void *pool_worker(void *arg)
{
    ExportPool *p = arg;
    ExportBuffer buf = {0}; /* reused across frames: one allocation per worker */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->q_len == 0 && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (p->q_len == 0 && p->stop) break;
        int idx = p->queue[p->q_head];
        p->q_head = (p->q_head + 1) % p->n_slots;
        p->q_len--;
        p->busy++;
        int skip = p->failed;
        pthread_mutex_unlock(&p->mu);

        PoolSlot *s = &p->slots[idx];
        char err[512] = "";
        int rc = 0;
        double c0 = thread_cpu_seconds(), c1 = c0, t1 = now_seconds(), t2 = t1;
        if (!skip) {
            ExportImage img = {s->pixels, p->width, p->height, p->pitch, p->layout};
            buf.len = 0;
            char msg[384];
            rc = export_png_encode(&img, s->text, s->n_text, &p->png, &buf, msg, sizeof msg);
            if (rc != 0) snprintf(err, sizeof err, "%s: %s", s->path, msg);
            c1 = thread_cpu_seconds();
            t1 = now_seconds();
            if (rc == 0) rc = export_write_file(s->path, buf.data, buf.len, err, sizeof err);
            t2 = now_seconds();
        }
        size_t bytes = buf.len;
        slot_clear(s);

        pthread_mutex_lock(&p->mu);
        p->busy--;
        if (!skip) {
            p->stats.encode_seconds += c1 - c0;
            p->stats.write_seconds += t2 - t1;
            if (rc == 0) {
                p->stats.files++;
                p->stats.bytes += bytes;
            } else if (!p->failed) {
                p->failed = 1;
                snprintf(p->error, sizeof p->error, "%s", err);
            }
        }
        p->free_stack[p->n_free++] = idx;
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
    p->n_threads = threads;
    /* 1. Buffers: one per worker, one being drawn, one spare so that the
     * drawing thread rarely waits. */
    p->n_slots = threads + 2;
    p->slots = calloc((size_t)p->n_slots, sizeof *p->slots);
    p->free_stack = calloc((size_t)p->n_slots, sizeof *p->free_stack);
    p->queue = calloc((size_t)p->n_slots, sizeof *p->queue);
    if (!p->slots || !p->free_stack || !p->queue) goto oom;
    for (int i = 0; i < p->n_slots; i++) {
        p->slots[i].pixels = malloc(p->pitch * (size_t)height);
        if (!p->slots[i].pixels) goto oom;
        p->free_stack[p->n_free++] = i;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->freed, NULL);
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
oom:
    if (p) {
        for (int i = 0; p->slots && i < p->n_slots; i++) free(p->slots[i].pixels);
        free(p->slots);
        free(p->free_stack);
        free(p->queue);
        free(p);
    }
    snprintf(err, errlen, "out of memory for %d frame buffers of %dx%d", threads + 2, width, height);
    return NULL;
}

int export_pool_threads(const ExportPool *pool)
{
    return pool->n_threads;
}

unsigned char *export_pool_acquire(ExportPool *p, size_t *pitch)
{
    pthread_mutex_lock(&p->mu);
    while (p->n_free == 0 && !p->failed) pthread_cond_wait(&p->freed, &p->mu);
    unsigned char *px = NULL;
    if (!p->failed) {
        int idx = p->free_stack[--p->n_free];
        px = p->slots[idx].pixels;
    }
    pthread_mutex_unlock(&p->mu);
    *pitch = p->pitch;
    return px;
}

static int slot_of(const ExportPool *p, const unsigned char *buffer)
{
    for (int i = 0; i < p->n_slots; i++)
        if (p->slots[i].pixels == buffer) return i;
    return -1;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int export_pool_submit(ExportPool *p, unsigned char *buffer, const char *path, const ExportPngText *text, int n_text)
{
    int idx = slot_of(p, buffer);
    if (idx < 0) {
        fprintf(stderr, "%s:%d: export_pool_submit: not a buffer of this pool\n", __FILE__, __LINE__);
        abort(); /* a programmer error */
    }
    PoolSlot *s = &p->slots[idx];
    int oom = 0;
    s->path = dup_str(path);
    s->text = n_text > 0 ? calloc((size_t)n_text, sizeof *s->text) : NULL;
    if (!s->path || (n_text > 0 && !s->text)) oom = 1;
    for (int i = 0; !oom && i < n_text; i++) {
        s->text[i].key = dup_str(text[i].key);
        s->text[i].text = dup_str(text[i].text);
        s->n_text = i + 1;
        if (!s->text[i].key || !s->text[i].text) oom = 1;
    }
    pthread_mutex_lock(&p->mu);
    p->stats.submitted++;
    if (oom && !p->failed) {
        p->failed = 1;
        snprintf(p->error, sizeof p->error, "%s: out of memory", path);
    }
    if (p->failed) {
        slot_clear(s);
        p->free_stack[p->n_free++] = idx;
        pthread_cond_broadcast(&p->freed);
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    p->queue[(p->q_head + p->q_len) % p->n_slots] = idx;
    p->q_len++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void export_pool_release(ExportPool *p, unsigned char *buffer)
{
    int idx = slot_of(p, buffer);
    if (idx < 0) {
        fprintf(stderr, "%s:%d: export_pool_release: not a buffer of this pool\n", __FILE__, __LINE__);
        abort();
    }
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
    for (int i = 0; i < p->n_slots; i++) {
        slot_clear(&p->slots[i]);
        free(p->slots[i].pixels);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->freed);
    free(p->slots);
    free(p->free_stack);
    free(p->queue);
    free(p);
}
