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

/* The scans: what a float array holds that is not finite. found[s] holds
 * these bits for step s once the code that wrote the step has scanned it
 * (while it was still in cache); ATTN_SCAN_PENDING until then. */
enum { ATTN_SCAN_PINF_NAN = 1, ATTN_SCAN_NINF = 2, ATTN_SCAN_PENDING = 0x80 };
unsigned attn__nonfinite_bits(const float *x, size_t n);
/* y = x / divisor (each a float division, as written), with the scans of x
 * and y, in one pass. */
void attn__divide_scan(float *y, const float *x, size_t n, float divisor, unsigned *bits_x, unsigned *bits_y);

/* Computes head h (0-based) of dot attention into its recorded steps and its
 * columns of concat (when the plan has one), filling found[] for its steps
 * (found may be NULL: no scans). */
void attn__compute_head(AttnTrace *t, const struct Plan *p, const unsigned char *mask, int h, unsigned char *found);
/* Computes heads 0..heads-1, on up to `threads` threads. */
void attn__run_heads(AttnTrace *t, const struct Plan *p, const unsigned char *mask, int heads, unsigned char *found,
                     int threads);
/* One matrix product C (m, n) = A (m, k) · B (k, n) [+ bias (n)]. */
typedef struct AttnMatmulJob {
    float *C;
    const float *A, *B, *bias;
    int m, k, n;
} AttnMatmulJob;
/* Runs up to ATTN_MAX_COPY_JOBS independent products, their rows split across up to `threads`
 * threads; the results are the same as attn_matmul's, whatever the count.
 * bits[j] gets the scan of job j's C (bits may be NULL: no scans). */
void attn__matmul_jobs(const AttnMatmulJob *jobs, int n_jobs, unsigned char *bits, int threads);
/* One copy of n floats; up to ATTN_MAX_COPY_JOBS of them are split across up to `threads`
 * threads, and bits[j] gets the scan of job j's copy (bits may be NULL). */
enum { ATTN_MAX_COPY_JOBS = 10 };
typedef struct AttnCopyJob {
    float *dst;
    const float *src;
    size_t n;
} AttnCopyJob;
void attn__copy_jobs(const AttnCopyJob *jobs, int n_jobs, unsigned char *bits, int threads);
/* masked(i,j) = allowed(i,j) ? in(i,j) : cfg->mask_fill, rows with no allowed key flagged. */
void attn__apply_mask(const AttnConfig *c, const unsigned char *mask, float *out, unsigned char *flags,
                      const float *in);

#endif
