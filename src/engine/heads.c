/* heads.c: the engine's work on worker threads, when cfg.threads asks for it.
 *
 * Three kinds of work split well: the heads of dot attention (independent
 * once Q, K and V exist: each writes only its own steps), the rows of a matrix
 * product (each row of C depends only on its row of A), and the scan of every
 * step for values that are not finite. Both are handed out
 * as numbered tasks from one atomic counter to `threads` threads, the
 * caller's included; threads are started per call and joined before it
 * returns, so nothing outlives attn_trace_create.
 *
 * The results do not depend on the number of threads: a row of C is computed
 * by the same kernel, in the same order, whichever thread computes it. Work
 * too small to pay for starting a thread (PARALLEL_MIN_FLOPS) runs on the
 * caller's thread alone.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "attn_internal.h"

/* Below this many floating-point operations a second thread costs more to
 * start than it saves: pthread_create + join measured 17 us at best and
 * 100-190 us on average on the busy 2-core machine this was written on, and
 * 2e7 operations are about 100 us of one thread's work. */
#define PARALLEL_MIN_FLOPS 2.0e7
enum { MAX_THREADS = 64, MAX_JOBS = 8 };

typedef void (*TaskFn)(void *ctx, int task);

typedef struct TaskQueue {
    TaskFn fn;
    void *ctx;
    int n_tasks;
    atomic_int next; /* the next task to take */
} TaskQueue;

static void *task_worker(void *arg)
{
    TaskQueue *q = arg;
    for (;;) {
        int task = atomic_fetch_add(&q->next, 1);
        if (task >= q->n_tasks) break;
        q->fn(q->ctx, task);
    }
    return NULL;
}

/* Runs fn(ctx, 0..n_tasks-1) on up to `threads` threads, the caller's
 * included; returns when every task is done. */
static void run_tasks(TaskFn fn, void *ctx, int n_tasks, int threads)
{
    if (threads > n_tasks) threads = n_tasks;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    TaskQueue q = {.fn = fn, .ctx = ctx, .n_tasks = n_tasks};
    atomic_init(&q.next, 0);
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[started], NULL, task_worker, &q) != 0) break; /* fewer threads is fine */
        started++;
    }
    task_worker(&q);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
}

/* ---- heads ------------------------------------------------------------------ */

typedef struct HeadTasks {
    AttnTrace *t;
    const struct Plan *p;
    const unsigned char *mask;
} HeadTasks;

static void head_task(void *ctx, int h)
{
    HeadTasks *ht = ctx;
    attn__compute_head(ht->t, ht->p, ht->mask, h);
}

void attn__run_heads(AttnTrace *t, const struct Plan *p, const unsigned char *mask, int heads, int threads)
{
    const AttnConfig *c = &t->cfg;
    /* scores and weighted sum: 2·n_q·n_k·(d_k + d_v) per head */
    double flops = 2.0 * c->n_q * c->n_k * (double)(c->d_k + c->d_v) * heads;
    HeadTasks ht = {.t = t, .p = p, .mask = mask};
    if (threads <= 1 || heads == 1 || flops < PARALLEL_MIN_FLOPS) {
        for (int h = 0; h < heads; h++) attn__compute_head(t, p, mask, h);
        return;
    }
    run_tasks(head_task, &ht, heads, threads);
}

/* ---- matrix products split by rows ------------------------------------------- */

/* Rows per task are a multiple of this, the kernels' row block. */
enum { ROW_QUANTUM = 4 };

typedef struct RowTasks {
    const AttnMatmulJob *jobs;
    int n_jobs;
    int rows_per_task; /* a multiple of ROW_QUANTUM */
    int first_task[MAX_JOBS + 1]; /* (n_jobs + 1) task index where each job starts; the last is the total */
} RowTasks;

static void row_task(void *ctx, int task)
{
    RowTasks *rt = ctx;
    int j = 0;
    while (task >= rt->first_task[j + 1]) j++;
    const AttnMatmulJob *job = &rt->jobs[j];
    int r0 = (task - rt->first_task[j]) * rt->rows_per_task;
    int rows = job->m - r0 < rt->rows_per_task ? job->m - r0 : rt->rows_per_task;
    /* rows r0..r0+rows-1 of C = A·B + bias: a product of their own */
    attn_matmul(job->C + (size_t)r0 * job->n, job->A + (size_t)r0 * job->k, job->B, job->bias, rows, job->k, job->n);
}

void attn__matmul_jobs(const AttnMatmulJob *jobs, int n_jobs, int threads)
{
    assert(n_jobs >= 0 && n_jobs <= MAX_JOBS);
    double flops = 0;
    int max_m = 0;
    for (int j = 0; j < n_jobs; j++) {
        flops += 2.0 * jobs[j].m * (double)jobs[j].k * jobs[j].n;
        if (jobs[j].m > max_m) max_m = jobs[j].m;
    }
    if (threads <= 1 || flops < PARALLEL_MIN_FLOPS) {
        for (int j = 0; j < n_jobs; j++)
            attn_matmul(jobs[j].C, jobs[j].A, jobs[j].B, jobs[j].bias, jobs[j].m, jobs[j].k, jobs[j].n);
        return;
    }
    /* each job in `threads` slices of rows, so that one job alone still keeps
     * every thread busy */
    RowTasks rt = {.jobs = jobs, .n_jobs = n_jobs};
    int per = (max_m + threads - 1) / threads;
    rt.rows_per_task = (per + ROW_QUANTUM - 1) / ROW_QUANTUM * ROW_QUANTUM;
    rt.first_task[0] = 0;
    for (int j = 0; j < n_jobs; j++)
        rt.first_task[j + 1] = rt.first_task[j] + (jobs[j].m + rt.rows_per_task - 1) / rt.rows_per_task;
    run_tasks(row_task, &rt, rt.first_task[n_jobs], threads);
}

/* ---- the scan for non-finite values (attn__nonfinite_bits is in kernels.c) ---------- */

typedef struct ScanTasks {
    const AttnTrace *t;
    unsigned char *found;
} ScanTasks;

static void scan_task(void *ctx, int s)
{
    ScanTasks *st = ctx;
    const AttnStep *step = &st->t->steps[s];
    st->found[s] = (unsigned char)attn__nonfinite_bits(step->data, (size_t)step->rows * (size_t)step->cols);
}

void attn__scan_nonfinite(const AttnTrace *t, unsigned char *found, int threads)
{
    ScanTasks st = {.t = t, .found = found};
    /* a pass at memory speed: worth a thread from a few MiB */
    if (threads <= 1 || t->data_bytes < ((size_t)4 << 20)) {
        for (int s = 0; s < t->n_steps; s++) scan_task(&st, s);
        return;
    }
    run_tasks(scan_task, &st, t->n_steps, threads);
}
