/* heads.c: running the heads of dot attention, on worker threads when asked.
 * Heads are independent once Q, K and V exist: each writes only its own steps. */
#include <pthread.h>
#include <stdatomic.h>

#include "attn_internal.h"

typedef struct HeadJob {
    AttnTrace *t;
    const struct Plan *p;
    const unsigned char *mask;
    int heads;
    atomic_int next; /* the next head to take */
} HeadJob;

static void *head_worker(void *arg)
{
    HeadJob *job = arg;
    for (;;) {
        int h = atomic_fetch_add(&job->next, 1);
        if (h >= job->heads) break;
        attn__compute_head(job->t, job->p, job->mask, h);
    }
    return NULL;
}

void attn__run_heads(AttnTrace *t, const struct Plan *p, const unsigned char *mask, int heads, int threads)
{
    if (threads > heads) threads = heads;
    if (threads > 64) threads = 64;
    HeadJob job = {.t = t, .p = p, .mask = mask, .heads = heads};
    atomic_init(&job.next, 0);
    pthread_t tid[64];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[started], NULL, head_worker, &job) != 0) break; /* fewer threads is fine */
        started++;
    }
    head_worker(&job); /* the caller's thread works too */
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
}
