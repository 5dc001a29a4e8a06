/* view_worker.c: a large trace computed on a worker thread while the window
 * shows the steps already done. */
#include "view_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the trace computed on a worker thread ---- */

/* Below this many bytes of numbers a trace is computed before the window
 * opens: a few milliseconds, which a worker would not save. */
#define VIEW_BACKGROUND_MIN_BYTES ((size_t)4 << 20)

struct ViewWorker {
    pthread_t thread;
    AttnTrace *trace; /* the View's, being computed */
    Lesson lesson;    /* a copy of the View's lesson, which edits may change meanwhile */
    atomic_int done;  /* attn_trace_compute has returned: rc and err are set */
    int joined;       /* the thread has been joined */
    int rc;
    char err[512];
};

static void *worker_main(void *arg)
{
    ViewWorker *w = arg;
    w->rc = attn_trace_compute(w->trace, &w->lesson.cfg, w->err, sizeof w->err);
    atomic_store_explicit(&w->done, 1, memory_order_release);
    return NULL;
}

/* Waits for the worker (asked to stop first when cancel: attn_trace_cancel);
 * what attn_trace_compute returned (its message in the worker). The worker
 * stays, for view_poll to report. */
int view_worker_join(View *v, int cancel)
{
    ViewWorker *w = v->worker;
    if (!w) return 0;
    if (!w->joined) {
        if (cancel) attn_trace_cancel(w->trace);
        pthread_join(w->thread, NULL);
        w->joined = 1;
    }
    return w->rc;
}

/* Stops and joins the worker, and frees it. */
void view_worker_free(View *v)
{
    if (!v->worker) return;
    view_worker_join(v, 1);
    lesson_free(&v->worker->lesson);
    free(v->worker);
    v->worker = NULL;
}

/* A lesson's texts may quote any step: then a step waits for all. */
static int lesson_has_texts(const Lesson *l)
{
    if (l->n_narration > 0) return 1;
    for (int i = 0; i < LESSON_LANG_COUNT; i++)
        if (l->summary.text[i] && l->summary.text[i][0]) return 1;
    return 0;
}

int view_step_ready(const View *v, const AttnTrace *trace, int step)
{
    if (!trace || step < 0 || step >= trace->n_steps) return 0;
    int ready = attn_trace_ready(trace);
    if (ready == trace->n_steps) return 1;
    return step < ready && !lesson_has_texts(v->lesson);
}

int view_preparing(const View *v)
{
    return v->worker && !atomic_load_explicit(&v->worker->done, memory_order_acquire);
}

int view_poll(View *v, char *err, size_t errlen)
{
    if (!v->worker) return 0;
    int ready = attn_trace_ready(v->trace);
    if (ready != v->ready_seen) {
        v->ready_seen = ready;
        view_touch(v);
    }
    if (!atomic_load_explicit(&v->worker->done, memory_order_acquire)) return 0;
    int rc = view_worker_join(v, 0);
    if (rc != 0) view_set_err(err, errlen, "%s: %s", v->lesson->path ? v->lesson->path : "lesson", v->worker->err);
    view_worker_free(v);
    view_touch(v);
    return rc;
}

int view_init_background(View *v, const Lesson *lesson, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (!lesson) {
        view_set_err(err, errlen, "no lesson");
        return -1;
    }
    const char *path = lesson->path ? lesson->path : "lesson";
    char msg[512];
    AttnTrace *t = attn_trace_plan(&lesson->cfg, msg, sizeof msg);
    if (!t) {
        view_set_err(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    ViewWorker *w = t->data_bytes >= VIEW_BACKGROUND_MIN_BYTES ? calloc(1, sizeof *w) : NULL;
    if (w && lesson_copy(&w->lesson, lesson) != 0) {
        free(w);
        w = NULL;
    }
    if (w) {
        w->trace = t;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            lesson_free(&w->lesson);
            free(w);
            w = NULL;
        }
    }
    /* small, or no thread to be had: computed here */
    if (!w && attn_trace_compute(t, &lesson->cfg, msg, sizeof msg) != 0) {
        attn_trace_destroy(t);
        view_set_err(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    v->worker = w;
    v->trace = t;
    v->single_stale = 1; /* built when a mode shows it */
    v->pair_labels = view_pair_labels(lesson);
    v->ready_seen = attn_trace_ready(t);
    view_start(v, lesson);
    return 0;
}

const char *view_worker_error(const View *v)
{
    return v->worker ? v->worker->err : "";
}
