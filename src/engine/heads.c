/* heads.c: the engine's work on worker threads, when cfg.threads asks for it.
 *
 * Three kinds of work split well: the copies of the inputs into the trace,
 * the rows (or columns) of a matrix product, and the heads of dot attention,
 * in blocks of query rows (independent once Q, K and V exist: each writes
 * only its own rows of its head's steps and of its columns of concat). Each
 * is handed out as numbered tasks from one atomic counter to `threads`
 * threads, the caller's included, each task knowing which of them runs it
 * (its worker number, for the room it may use: a head block's scratch).
 * A forward is at most: the projections' weights packed; copies and
 * projections; each head's K_h and V_h packed (only when the heads are cut
 * in blocks); the blocks of every head; W_O packed; the output projection.
 * The packing goes into one block of room per forward (attn__pack_take),
 * kept between forwards as the trace's block is.
 *
 * The other threads are a pool, started the first time a forward asks for
 * more than one thread and kept, asleep, until attn_shutdown, since starting
 * a thread costs more than most phases take. A pool thread that has
 * just finished a task spins for a while before it sleeps, so that the next
 * phase of the same forward (a few microseconds later) finds it awake. One
 * forward uses the pool at a time; a second caller on another thread, while
 * the pool is busy, simply runs its tasks on its own thread.
 *
 * The results do not depend on the number of threads: an element of C is
 * the same sum, in the same order, whichever thread computes it. Work
 * too small to pay for waking a thread (PARALLEL_MIN_FLOPS) runs on the
 * caller's thread alone.
 *
 * Every task also scans what it has just written for values that are not
 * finite (attn__nonfinite_bits), while it is still in cache, instead of a
 * separate pass reading the whole trace again from memory.
 *
 * docs/performance.md has the measurements behind these choices.
 */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attn_internal.h"

/* Below this many floating-point operations waking a second thread costs
 * more than it saves: a pool thread answers within about a microsecond while
 * it spins and within tens of microseconds once asleep, and 2e5 operations
 * are a few microseconds of one thread's work. */
#define PARALLEL_MIN_FLOPS 2.0e5
/* Copies below this many bytes are not split: they take less time than a wake-up. */
#define PARALLEL_MIN_COPY_BYTES ((size_t)256 << 10)
enum { MAX_THREADS = 64, MAX_JOBS = ATTN_MAX_PHASE_JOBS };
/* How long a pool thread spins for more work before it sleeps, and how long
 * the caller spins for the pool to finish before it sleeps: long enough to
 * cover the gaps between the parallel phases of one forward, short enough
 * not to steal much from other work on a busy machine. */
#define SPIN_SECONDS 30e-6

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spins until (*v == value) == equal, returning 1, or until SPIN_SECONDS have
 * passed, returning 0. */
static int spin_until(atomic_uint *v, unsigned value, int equal)
{
    double deadline = attn_clock_seconds() + SPIN_SECONDS;
    for (int i = 1;; i++) {
        if ((atomic_load_explicit(v, memory_order_acquire) == value) == equal) return 1;
        cpu_relax();
        if (i % 64 == 0 && attn_clock_seconds() > deadline) return 0;
    }
}

/* ---- the pool ---------------------------------------------------------------- */

/* Task `task` of a queue, run by worker `worker`: 0 for the caller's
 * thread, i + 1 for the pool's thread i, so that no two tasks running at
 * once share a worker number (and what a task borrows by it). */
typedef void (*TaskFn)(void *ctx, int task, int worker);

typedef struct TaskQueue {
    TaskFn fn;
    void *ctx;
    int n_tasks;
    atomic_int next; /* the next task to take */
} TaskQueue;

static void take_tasks(TaskQueue *q, int worker)
{
    for (;;) {
        int task = atomic_fetch_add_explicit(&q->next, 1, memory_order_relaxed);
        if (task >= q->n_tasks) break;
        q->fn(q->ctx, task, worker);
    }
}

/* One per pool thread: the caller hands it a queue by storing `q`, then
 * counting `go` up; the thread takes the queue by exchanging `q` for NULL,
 * and the caller, done with every task, takes back a queue not yet taken.
 * Exactly one of the two gets it. Only the threads a run wants are handed
 * anything, so a thread never sees a queue that is not meant for it. */
typedef struct Worker {
    _Atomic(TaskQueue *) q;
    atomic_uint go;
    pthread_t tid; /* joined by attn__heads_shutdown */
} Worker;

static struct {
    pthread_mutex_t use; /* held by the one forward using the pool */
    pthread_mutex_t m;   /* with the two conditions below */
    pthread_cond_t wake; /* some worker's `go` moved */
    pthread_cond_t done; /* pending reached 0 */
    int n_workers;       /* started so far; grows until attn__heads_shutdown; under `use` */
    atomic_uint pending; /* handed work and not finished yet */
    atomic_int stopping; /* set by attn__heads_shutdown: a worker woken with no queue returns */
    Worker worker[MAX_THREADS];
} pool = {
    .use = PTHREAD_MUTEX_INITIALIZER,
    .m = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

static void *pool_worker(void *arg)
{
    Worker *w = arg;
    unsigned seen = 0;
    for (;;) {
        /* wait for work: spin, then sleep */
        unsigned go = seen;
        if (spin_until(&w->go, seen, 0)) {
            go = atomic_load_explicit(&w->go, memory_order_acquire);
        } else {
            pthread_mutex_lock(&pool.m);
            while ((go = atomic_load_explicit(&w->go, memory_order_acquire)) == seen)
                pthread_cond_wait(&pool.wake, &pool.m);
            pthread_mutex_unlock(&pool.m);
        }
        seen = go;
        /* take the queue, unless the caller took it back (it finished every
         * task before this thread got a CPU): then there is nothing to do,
         * and the queue, on the caller's stack, may be gone */
        TaskQueue *q = atomic_exchange_explicit(&w->q, NULL, memory_order_acq_rel);
        if (!q) {
            if (atomic_load_explicit(&pool.stopping, memory_order_acquire)) break;
            continue;
        }
        take_tasks(q, (int)(w - pool.worker) + 1);
        if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.m);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.m);
        }
    }
    return NULL;
}

/* Starts pool threads until there are `n` (or as many as could be started).
 * Called with pool.use held. Returns the number there are. */
static int pool_grow(int n)
{
    while (pool.n_workers < n) {
        Worker *w = &pool.worker[pool.n_workers];
        if (pthread_create(&w->tid, NULL, pool_worker, w) != 0) break; /* fewer threads is fine */
        pool.n_workers++;
    }
    return pool.n_workers;
}

/* Runs fn(ctx, 0..n_tasks-1, worker) on up to `threads` threads, the
 * caller's included (workers 0..threads-1); returns when every task is done. */
static void run_tasks(TaskFn fn, void *ctx, int n_tasks, int threads)
{
    TaskQueue q = {.fn = fn, .ctx = ctx, .n_tasks = n_tasks};
    atomic_init(&q.next, 0);
    if (threads > n_tasks) threads = n_tasks;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads <= 1 || pthread_mutex_trylock(&pool.use) != 0) { /* alone, or the pool is busy */
        take_tasks(&q, 0);
        return;
    }
    int helpers = pool_grow(threads - 1);
    if (helpers > threads - 1) helpers = threads - 1;
    if (helpers > 0) {
        atomic_store_explicit(&pool.pending, (unsigned)helpers, memory_order_relaxed);
        for (int i = 0; i < helpers; i++) {
            /* release: a worker may take the queue by its exchange before it
             * sees `go` move (still awake from the last run), and must then
             * see the queue as written above */
            atomic_store_explicit(&pool.worker[i].q, &q, memory_order_release);
            atomic_fetch_add_explicit(&pool.worker[i].go, 1, memory_order_release);
        }
        /* under the lock, so that a worker between its last look at `go`
         * and its wait cannot miss this */
        pthread_mutex_lock(&pool.m);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.m);
    }
    take_tasks(&q, 0);
    if (helpers > 0) {
        /* Every task is taken. A helper that has not taken the queue yet
         * (asleep, or waiting for a CPU another process holds) is not waited
         * for: the queue is taken back from it, since waiting for it to wake
         * only to find nothing left is what a busy machine makes slow. */
        for (int i = 0; i < helpers; i++)
            if (atomic_exchange_explicit(&pool.worker[i].q, NULL, memory_order_acq_rel))
                atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel);
        /* the helpers that took it finish about when the caller does: spin first */
        if (!spin_until(&pool.pending, 0, 1)) {
            pthread_mutex_lock(&pool.m);
            while (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0)
                pthread_cond_wait(&pool.done, &pool.m);
            pthread_mutex_unlock(&pool.m);
        }
    }
    pthread_mutex_unlock(&pool.use);
}

/* The job a task belongs to: first_task[j] is job j's first task, and
 * first_task[n_jobs] the number of tasks. */
static int job_of(const int *first_task, int task)
{
    int j = 0;
    while (task >= first_task[j + 1]) j++;
    return j;
}

/* ---- copies and products: one phase --------------------------------------------
 *
 * A phase is a set of independent copies and matrix products, cut into tasks:
 * products first (the long tasks, so that the short ones even out the end),
 * each in slices of rows, or of columns when it has too few rows for two
 * slices per thread; then the copies, in chunks. A product that takes the
 * kernel's panels has its B (a weight matrix) packed whole first, when the
 * caller gave room for it, so that every slice of rows reads the same packed
 * panels (itself a phase of tasks of a few panels each). The inputs' copies
 * into the trace and the projections (which read the caller's inputs, not
 * the copies) are one phase: one wake-up and one wait instead of two. */

/* n floats rounded up to whole cache lines */
#define ALIGN_FLOATS(n) (((n) + 15) / 16 * 16)
/* Floats per copy task: a multiple of 64 floats, so tasks never share a
 * cache line of the destination. */
#define COPY_CHUNK_FLOATS ((size_t)64 << 10)
/* Rows per row task (and per block of a head's rows) are a multiple of this:
 * the product kernel's blocks of 6, 4 and 3 rows all divide it, so no slice
 * ends in a block of 2 or 1 rows, which runs at a fraction of the speed. */
enum { ROW_QUANTUM = 12 };
/* Rows per row task at most: the kernel's MC. Columns per column task:
 * whole wide panels of the product kernel, or narrow ones when there would
 * be fewer than two tasks per thread. Columns per packing task. */
enum { ROW_TASK_MAX = 192, COL_WIDE = 64, COL_NARROW = 32, PACK_TASK_COLS = 128 };

typedef struct PhaseTasks {
    const AttnMatmulJob *jobs;
    int n_jobs;
    int by_cols;  /* slices of columns (else of rows) */
    int per_task; /* columns or rows per task */
    const AttnCopyJob *copies;
    int n_copies;
    float *packed[MAX_JOBS];        /* product j's B packed whole, or NULL */
    int first[2 * MAX_JOBS + 1];    /* task where each product, then each copy, starts; the last is the total */
    int scan;                       /* scan what each task wrote */
    atomic_uint bits[2 * MAX_JOBS]; /* what the scans found, per product then per copy */
} PhaseTasks;

static void phase_task(void *ctx, int task, int worker)
{
    (void)worker;
    PhaseTasks *pt = ctx;
    int j = job_of(pt->first, task);
    int part = task - pt->first[j];
    unsigned found = 0;
    if (j < pt->n_jobs) {
        const AttnMatmulJob *job = &pt->jobs[j];
        if (pt->by_cols) {
            int j0 = part * pt->per_task, j1 = job->n - j0 < pt->per_task ? job->n : j0 + pt->per_task;
            attn__matmul_part(job->C, job->A, job->B, job->bias, job->m, job->k, job->n, 0, job->m, j0, j1);
            if (pt->scan)
                for (int i = 0; i < job->m; i++)
                    found |= attn__nonfinite_bits(job->C + (size_t)i * job->n + j0, (size_t)(j1 - j0));
        } else {
            /* rows r0..r1-1 of C = A·B + bias */
            int r0 = part * pt->per_task, r1 = job->m - r0 < pt->per_task ? job->m : r0 + pt->per_task;
            float *C = job->C + (size_t)r0 * job->n;
            if (pt->packed[j])
                attn__matmul_packed(job->C, job->A, pt->packed[j], job->bias, job->m, job->k, job->n, r0, r1);
            else /* a product of their own, which picks its path by its shape */
                attn_matmul(C, job->A + (size_t)r0 * job->k, job->B, job->bias, r1 - r0, job->k, job->n);
            if (pt->scan) found = attn__nonfinite_bits(C, (size_t)(r1 - r0) * (size_t)job->n);
        }
    } else {
        const AttnCopyJob *copy = &pt->copies[j - pt->n_jobs];
        size_t at = (size_t)part * COPY_CHUNK_FLOATS;
        size_t n = copy->n - at < COPY_CHUNK_FLOATS ? copy->n - at : COPY_CHUNK_FLOATS;
        attn__copy_floats(copy->dst + at, copy->src + at, n);
        if (pt->scan) found = attn__nonfinite_bits(copy->src + at, n); /* the same numbers, in cache */
    }
    if (found) atomic_fetch_or_explicit(&pt->bits[j], found, memory_order_relaxed);
}

/* Task t packs the panels of columns [PACK_TASK_COLS·t', ...) of the product
 * whose packing tasks it falls in. */
static void pack_task(void *ctx, int task, int worker)
{
    (void)worker;
    PhaseTasks *pt = ctx;
    int j = job_of(pt->first, task);
    const AttnMatmulJob *job = &pt->jobs[j];
    int j0 = (task - pt->first[j]) * PACK_TASK_COLS;
    attn__pack_panels(pt->packed[j], job->B, 0, job->k, job->n, j0, j0 + PACK_TASK_COLS);
}

size_t attn__phase_pack_floats(const AttnMatmulJob *jobs, int n_jobs)
{
    size_t floats = 0;
    for (int j = 0; j < n_jobs; j++)
        if (attn__matmul_panelled(jobs[j].m, jobs[j].k, jobs[j].n))
            floats += ALIGN_FLOATS(attn__packed_floats(jobs[j].k, jobs[j].n));
    return floats;
}

void attn__phase(const AttnMatmulJob *jobs, int n_jobs, unsigned char *bits, const AttnCopyJob *copies, int n_copies,
                 unsigned char *copy_bits, float *pack, int threads)
{
    assert(n_jobs >= 0 && n_jobs <= MAX_JOBS && n_copies >= 0 && n_copies <= MAX_JOBS);
    PhaseTasks pt = {.jobs = jobs,
                     .n_jobs = n_jobs,
                     .copies = copies,
                     .n_copies = n_copies,
                     .scan = bits != NULL || copy_bits != NULL};
    double flops = 0;
    size_t bytes = 0;
    int max_m = 0, min_n = INT_MAX, panels = 0;
    for (int j = 0; j < n_jobs; j++) {
        flops += 2.0 * jobs[j].m * (double)jobs[j].k * jobs[j].n;
        if (jobs[j].m > max_m) max_m = jobs[j].m;
        if (jobs[j].n < min_n) min_n = jobs[j].n;
        panels += (jobs[j].n + COL_WIDE - 1) / COL_WIDE;
        if (pack && attn__matmul_panelled(jobs[j].m, jobs[j].k, jobs[j].n)) {
            pt.packed[j] = pack;
            pack += ALIGN_FLOATS(attn__packed_floats(jobs[j].k, jobs[j].n));
        }
    }
    for (int c = 0; c < n_copies; c++) bytes += sizeof(float) * copies[c].n;
    if (threads <= 1 || (flops < PARALLEL_MIN_FLOPS && bytes < PARALLEL_MIN_COPY_BYTES)) {
        /* on the caller's thread, each product whole, without the task
         * bookkeeping below */
        for (int j = 0; j < n_jobs; j++) {
            const AttnMatmulJob *job = &jobs[j];
            if (pt.packed[j]) {
                attn__pack_panels(pt.packed[j], job->B, 0, job->k, job->n, 0, job->n);
                attn__matmul_packed(job->C, job->A, pt.packed[j], job->bias, job->m, job->k, job->n, 0, job->m);
            } else {
                attn_matmul(job->C, job->A, job->B, job->bias, job->m, job->k, job->n);
            }
            if (bits) bits[j] = (unsigned char)attn__nonfinite_bits(job->C, (size_t)job->m * (size_t)job->n);
        }
        for (int c = 0; c < n_copies; c++) {
            attn__copy_floats(copies[c].dst, copies[c].src, copies[c].n);
            if (copy_bits) copy_bits[c] = (unsigned char)attn__nonfinite_bits(copies[c].src, copies[c].n);
        }
        return;
    }
    /* the products' slices: rows, unless too few for two per thread */
    pt.by_cols = min_n >= 2 * COL_NARROW && max_m < 2 * threads * ROW_QUANTUM;
    if (pt.by_cols) {
        pt.per_task = panels >= 2 * threads ? COL_WIDE : COL_NARROW;
        for (int j = 0; j < n_jobs; j++) pt.packed[j] = NULL; /* each task packs its own panels */
    } else {
        int per = (max_m + 2 * threads - 1) / (2 * threads);
        per = (per + ROW_QUANTUM - 1) / ROW_QUANTUM * ROW_QUANTUM; /* max_m ≥ 1: at least ROW_QUANTUM */
        pt.per_task = per < ROW_TASK_MAX ? per : ROW_TASK_MAX;
    }
    /* B packed whole first, a few panels a task */
    pt.first[0] = 0;
    for (int j = 0; j < n_jobs; j++)
        pt.first[j + 1] = pt.first[j] + (pt.packed[j] ? (jobs[j].n + PACK_TASK_COLS - 1) / PACK_TASK_COLS : 0);
    if (pt.first[n_jobs] > 0) run_tasks(pack_task, &pt, pt.first[n_jobs], threads);
    pt.first[0] = 0;
    for (int j = 0; j < n_jobs; j++) {
        int extent = pt.by_cols ? jobs[j].n : jobs[j].m;
        pt.first[j + 1] = pt.first[j] + (extent + pt.per_task - 1) / pt.per_task;
        atomic_init(&pt.bits[j], 0);
    }
    for (int c = 0; c < n_copies; c++) {
        int chunks = (int)((copies[c].n + COPY_CHUNK_FLOATS - 1) / COPY_CHUNK_FLOATS);
        pt.first[n_jobs + c + 1] = pt.first[n_jobs + c] + (chunks > 0 ? chunks : 1);
        atomic_init(&pt.bits[n_jobs + c], 0);
    }
    run_tasks(phase_task, &pt, pt.first[n_jobs + n_copies], threads);
    if (bits)
        for (int j = 0; j < n_jobs; j++) bits[j] = (unsigned char)atomic_load(&pt.bits[j]);
    if (copy_bits)
        for (int c = 0; c < n_copies; c++) copy_bits[c] = (unsigned char)atomic_load(&pt.bits[n_jobs + c]);
}

/* ---- heads ------------------------------------------------------------------ */

/* Query rows per head task: a block's scores, scaled and weights, each
 * (rows, n_k), are HEAD_BLOCK_FLOATS or less (256 KiB), so that the three
 * stay in the core's 2 MiB cache from the step that writes them to the one
 * that reads them. A multiple of ROW_QUANTUM. The blocks do not depend on
 * the number of threads, and no result depends on the blocks. */
#define HEAD_BLOCK_FLOATS (64 * 1024)

static int head_block_rows(int nq, int nk)
{
    long r = HEAD_BLOCK_FLOATS / nk / ROW_QUANTUM * ROW_QUANTUM;
    if (r < ROW_QUANTUM) r = ROW_QUANTUM;
    return r >= nq ? nq : (int)r;
}

typedef struct HeadTasks {
    AttnTrace *t;
    const struct Plan *p;
    const unsigned char *mask;
    unsigned char *found;
    int rows, blocks; /* rows per block, blocks per head */
    float *pack; /* per head: K_hᵀ packed (pack_k floats), then V_h (pack_v; 0: not packed); NULL: one block per head */
    size_t pack_k, pack_v;
    float *scratch; /* per worker, after the packs: one block's scaled (scratch_floats), or NULL */
    size_t scratch_floats;
} HeadTasks;

/* Task 2h: head h's K_h split and packed; 2h + 1: its V_h. */
static void prepare_task(void *ctx, int task, int worker)
{
    (void)worker;
    HeadTasks *ht = ctx;
    int h = task / 2, values = task % 2;
    float *pk = ht->pack + (size_t)h * (ht->pack_k + ht->pack_v);
    attn__prepare_head(ht->t, ht->p, h, values, !values ? pk : ht->pack_v ? pk + ht->pack_k : NULL);
}

static void head_task(void *ctx, int task, int worker)
{
    HeadTasks *ht = ctx;
    int h = task / ht->blocks, b = task % ht->blocks;
    int r0 = b * ht->rows, r1 = r0 + ht->rows < ht->t->cfg.n_q ? r0 + ht->rows : ht->t->cfg.n_q;
    const float *pk = ht->pack ? ht->pack + (size_t)h * (ht->pack_k + ht->pack_v) : NULL;
    float *scratch = ht->scratch ? ht->scratch + (size_t)worker * ht->scratch_floats : NULL;
    attn__compute_head_rows(ht->t, ht->p, ht->mask, h, r0, r1, pk, pk && ht->pack_v ? pk + ht->pack_k : NULL, scratch,
                            ht->found);
}

/* The heads' blocks and packing for config c: rows per block, blocks per
 * head, the floats of one head's packed K_hᵀ and V_h and of one worker's
 * scratch (0 when a head is one block). */
static void heads_layout(const AttnConfig *c, HeadTasks *ht)
{
    ht->rows = head_block_rows(c->n_q, c->n_k);
    ht->blocks = (c->n_q + ht->rows - 1) / ht->rows;
    ht->pack_k = ht->pack_v = ht->scratch_floats = 0;
    if (ht->blocks > 1) {
        /* V_h is packed when it fills at least a narrow panel; a narrower
         * one goes through attn_matmul's paths for few columns */
        ht->pack_k = attn__packed_floats(c->d_k, c->n_k);
        ht->pack_v = c->d_v >= COL_NARROW ? attn__packed_floats(c->n_k, c->d_v) : 0;
        ht->scratch_floats = ALIGN_FLOATS((size_t)ht->rows * (2 * (size_t)c->n_k + 16));
    }
}

/* Workers a run on `threads` threads uses. */
static int workers_of(int threads)
{
    return threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
}

size_t attn__heads_pack_floats(const AttnConfig *c, int heads)
{
    HeadTasks ht;
    heads_layout(c, &ht);
    return (size_t)heads * (ht.pack_k + ht.pack_v) + (size_t)workers_of(c->threads) * ht.scratch_floats;
}

void attn__run_heads(AttnTrace *t, const Plan *p, const unsigned char *mask, int heads, unsigned char *found,
                     float *pack, int threads)
{
    const AttnConfig *c = &t->cfg;
    HeadTasks ht = {.t = t, .p = p, .mask = mask, .found = found};
    heads_layout(c, &ht);
    if (ht.blocks > 1) {
        ht.pack = pack;
        if (ht.pack)
            ht.scratch = pack + (size_t)heads * (ht.pack_k + ht.pack_v);
        else
            ht.rows = c->n_q, ht.blocks = 1; /* no memory: each head whole, as it always works */
    }
    int n_tasks = heads * ht.blocks;
    /* scores and weighted sum: 2·n_q·n_k·(d_k + d_v) per head */
    double flops = 2.0 * c->n_q * c->n_k * (double)(c->d_k + c->d_v) * heads;
    int alone = threads <= 1 || n_tasks == 1 || flops < PARALLEL_MIN_FLOPS;
    if (ht.pack) {
        if (alone)
            for (int task = 0; task < 2 * heads; task++) prepare_task(&ht, task, 0);
        else
            run_tasks(prepare_task, &ht, 2 * heads, threads);
    }
    if (alone) /* a cancelled trace (attn_trace_cancel) stops at the next block */
        for (int task = 0; task < n_tasks && !atomic_load_explicit(&t->cancel, memory_order_relaxed); task++)
            head_task(&ht, task, 0);
    else
        run_tasks(head_task, &ht, n_tasks, threads);
}

/* The packed weights and heads of the last forward that needed them, kept
 * for the next (as the trace's block is, attn.c): 8 MiB at n = 2048, which
 * the kernel would otherwise zero page by page on every forward. */
static AttnSpare pack_spare = {.m = PTHREAD_MUTEX_INITIALIZER};

float *attn__pack_take(size_t floats, size_t *bytes)
{
    size_t want = (floats * sizeof(float) + 63) / 64 * 64;
    *bytes = 0;
    if (want == 0) return NULL;
    float *b = attn__spare_take(&pack_spare, want, bytes);
    if (b) return b;
    *bytes = want;
    return aligned_alloc(64, want);
}

void attn__pack_give(float *pack, size_t bytes)
{
    if (pack) attn__spare_give(&pack_spare, pack, bytes);
}

/* Stops and joins the pool's threads (waiting for a forward that is using
 * them), and frees the heads' spare block. The pool starts again on the
 * next forward that asks for threads. */
void attn__heads_shutdown(void)
{
    pthread_mutex_lock(&pool.use); /* no queue is handed out while this is held */
    atomic_store_explicit(&pool.stopping, 1, memory_order_release);
    for (int i = 0; i < pool.n_workers; i++) atomic_fetch_add_explicit(&pool.worker[i].go, 1, memory_order_release);
    pthread_mutex_lock(&pool.m);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.m);
    for (int i = 0; i < pool.n_workers; i++) {
        pthread_join(pool.worker[i].tid, NULL);
        atomic_store_explicit(&pool.worker[i].go, 0, memory_order_relaxed); /* a new thread starts from 0 */
    }
    pool.n_workers = 0;
    atomic_store_explicit(&pool.stopping, 0, memory_order_relaxed);
    pthread_mutex_unlock(&pool.use);
    attn__spare_give(&pack_spare, NULL, 0);
}
