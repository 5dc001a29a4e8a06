/* attn_internal.h: what the engine's own files share. Not installed, not
 * included outside src/engine. */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include "attn.h"

/* Indices of one head's steps in the trace, -1 where absent. */
typedef struct HeadPlan {
    int Q, K, V, scores, scaled, masked, weights, out;
} HeadPlan;

struct Plan;

/* Computes head h (0-based) of dot attention into its recorded steps. */
void attn__compute_head(AttnTrace *t, const struct Plan *p, const unsigned char *mask, int h);
/* Computes heads 0..heads-1, on up to `threads` threads. */
void attn__run_heads(AttnTrace *t, const struct Plan *p, const unsigned char *mask, int heads, int threads);
/* One matrix product C (m, n) = A (m, k) · B (k, n) [+ bias (n)]. */
typedef struct AttnMatmulJob {
    float *C;
    const float *A, *B, *bias;
    int m, k, n;
} AttnMatmulJob;
/* Runs up to 8 independent products, their rows split across up to `threads`
 * threads; the results are the same as attn_matmul's, whatever the count. */
void attn__matmul_jobs(const AttnMatmulJob *jobs, int n_jobs, int threads);
/* What a scan found in a float array: +inf or NaN, -inf. */
enum { ATTN_SCAN_PINF_NAN = 1, ATTN_SCAN_NINF = 2 };
unsigned attn__nonfinite_bits(const float *x, size_t n);
/* found[s] = attn__nonfinite_bits of step s, for every step, on up to
 * `threads` threads. found has n_steps entries. */
void attn__scan_nonfinite(const AttnTrace *t, unsigned char *found, int threads);
/* masked(i,j) = allowed(i,j) ? in(i,j) : cfg->mask_fill, rows with no allowed key flagged. */
void attn__apply_mask(const AttnConfig *c, const unsigned char *mask, float *out, unsigned char *flags,
                      const float *in);

#endif
