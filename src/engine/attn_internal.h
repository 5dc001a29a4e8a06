/* attn_internal.h: what the engine's own files share. Not installed, not
 * included outside src/engine. */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "attn.h"

/* Indices of one head's steps in the trace, -1 where absent: its queries,
 * the keys and values it reads (its K/V head's, kv, 0-based), and what it
 * computes from them. With RoPE, Qr and Kr are Q and K rotated, which the
 * scores read (decoding: Kr is -1, the cache K holding rotated keys). */
typedef struct HeadPlan {
    int Q, K, V, scores, scaled, masked, weights, out;
    int Qr, Kr;
    int tile0, tiled; /* tiled softmax: block 1's first step (block b's five from tile0 + 5·(b − 1)), and the
                       * head's tiled output; -1 without tiling */
    int kv;
} HeadPlan;

/* Decoding, token t: the indices of its steps. head[h]'s K and V are the
 * caches head h reads; kv[g] are K/V head g's rows of the token (split from
 * K@t and V@t) and its caches (kv_heads of them). */
typedef struct DecodeKvPlan {
    int K, V, Kr, K_cache, V_cache; /* Kr: K rotated (RoPE), which the cache appends; else -1 */
} DecodeKvPlan;
typedef struct DecodePlan {
    int Q, K, V, concat, output;
    HeadPlan *head;   /* (heads) */
    DecodeKvPlan *kv; /* (kv_heads) */
} DecodePlan;

/* Indices of a trace's steps, -1 where a step is absent: what
 * attn__trace_begin laid out, for the code that computes into it. */
typedef struct Plan {
    int X, Y, W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O, Q, K, V, concat, output;
    int W_a, b_a, v_a, hidden;
    int angles;         /* RoPE's angles, or -1 */
    int PE, X_pe;       /* the sinusoidal positional encoding and X + PE, or -1 */
    int x_in;           /* what the projections of X read: X, or X_PE */
    HeadPlan *head;     /* (heads): head_small, or allocated beyond 16 heads */
    int *concat_from;   /* (heads) scratch for concat's links; (n_q + 1) when decoding */
    DecodePlan *decode; /* (n_q) decoding's steps per token, one allocation with their head and kv arrays; or NULL */
    int decoded;        /* decoding's last step, or -1 */
    int kv_first;       /* K/V heads shared by query heads: their splits are made before the heads run */
    HeadPlan head_small[16];
    int concat_from_small[16];
} Plan;

/* The two ends of every forward, shared by the reference (reference.c) and
 * the fast path (attn.c). attn__trace_begin checks cfg, plans its steps into
 * *p and allocates the trace with every step named, shaped and linked, its
 * numbers not yet computed (row flags cleared); NULL with err and errno set
 * (EINVAL, ENOMEM) on failure, *p then released. attn__trace_end takes a
 * computed trace and its plan: it releases the plan, refuses the trace
 * (destroyed, NULL, errno ERANGE, err naming the first bad cell) when a
 * value is not finite, and otherwise returns it with no borrowed pointer
 * left in its config. found[] (NULL: nothing scanned yet) holds the
 * ATTN_SCAN_* bits of steps the computing code already scanned. */
AttnTrace *attn__trace_begin(const AttnConfig *cfg, Plan *p, char *err, size_t errlen);
AttnTrace *attn__trace_end(AttnTrace *t, Plan *p, const unsigned char *found, char *err, size_t errlen);

/* One spare block of memory, kept for the next request of about its size
 * (the kernel zeroes every fresh page of a large block, fault by fault). */
typedef struct AttnSpare {
    pthread_mutex_t m;
    void *block;  /* or NULL */
    size_t bytes; /* its size */
} AttnSpare;
/* The spare, when it fits want bytes (at least want, at most twice: its
 * size in *bytes), or NULL (then the spare, if any, is freed). */
void *attn__spare_take(AttnSpare *s, size_t want, size_t *bytes);
/* Keeps block (of bytes) as the spare, freeing the one before. */
void attn__spare_give(AttnSpare *s, void *block, size_t bytes);

/* The scans: what a float array holds that is not finite. found[s] holds
 * these bits for step s once the code that wrote the step has scanned it
 * (while it was still in cache); ATTN_SCAN_PENDING until then. */
enum { ATTN_SCAN_PINF_NAN = 1, ATTN_SCAN_NINF = 2, ATTN_SCAN_PENDING = 0x80 };
unsigned attn__nonfinite_bits(const float *x, size_t n);
/* y = x / divisor (each a float division, as written), with the scans of x
 * and y, in one pass. */
void attn__divide_scan(float *y, const float *x, size_t n, float divisor, unsigned *bits_x, unsigned *bits_y);

/* Head h's split copy K_h, and K_hᵀ packed into pack for
 * attn__matmul_packed (values: V_h, and V_h packed unless pack is NULL),
 * for attn__compute_head_rows. */
void attn__prepare_head(AttnTrace *t, const Plan *p, int h, int values, float *pack);
/* Computes rows [r0, r1) of head h (0-based) of dot attention into its
 * recorded steps and its columns of concat (when the plan has one): all its
 * rows, K_h and V_h included, when packK is NULL; else a block of them,
 * after attn__prepare_head, with scratch room for one block's scaled,
 * weights and row maxima ((r1 - r0) · (2·n_k + 16) floats, or NULL). ORs what the scans of what it wrote
 * find into found[] (found may be NULL: no scans). */
void attn__compute_head_rows(AttnTrace *t, const Plan *p, const unsigned char *mask, int h, int r0, int r1,
                             const float *packK, const float *packV, float *scratch, unsigned char *found);
/* heads.c's part of attn_shutdown: the pool's threads and the packing's spare block. */
void attn__heads_shutdown(void);
/* Computes heads 0..heads-1, in blocks of rows, on up to `threads` threads;
 * found[] of the heads' steps must be 0 (or found NULL). pack: room for
 * attn__heads_pack_floats(&t->cfg, heads) floats (NULL: each head one
 * block, which needs none). */
void attn__run_heads(AttnTrace *t, const Plan *p, const unsigned char *mask, int heads, unsigned char *found,
                     float *pack, int threads);
size_t attn__heads_pack_floats(const AttnConfig *c, int heads);
/* Room for packing, of at least `floats` floats (in *bytes bytes), kept
 * between forwards; NULL when there is no memory (or floats is 0). Given
 * back with attn__pack_give. */
float *attn__pack_take(size_t floats, size_t *bytes);
void attn__pack_give(float *pack, size_t bytes);
/* One matrix product C (m, n) = A (m, k) · B (k, n) [+ bias (n)]. */
typedef struct AttnMatmulJob {
    float *C;
    const float *A, *B, *bias;
    int m, k, n;
} AttnMatmulJob;
/* One copy of n floats. */
typedef struct AttnCopyJob {
    float *dst;
    const float *src;
    size_t n;
} AttnCopyJob;
enum { ATTN_MAX_PHASE_JOBS = 10 };
/* B (k, n) packed whole into the product kernel's panels (B (n, k) read as
 * its transpose when transposed), in attn__packed_floats(k, n) floats: the
 * panels that start in columns [jfirst, jend), so that threads can share the
 * packing (0, n: all of it). Then rows [i0, i1) of C (m, n) = A (m, k) · B
 * [+ bias (n)] from the packed panels, the same bits as attn_matmul (or
 * attn_matmul_nt). attn__matmul_panelled says whether attn_matmul takes
 * the panels for that shape (not the paths for small products and for few
 * columns): only then does packing B first pay. */
size_t attn__packed_floats(int k, int n);
void attn__pack_panels(float *dst, const float *B, int transposed, int k, int n, int jfirst, int jend);
void attn__matmul_packed(float *C, const float *A, const float *packed, const float *bias, int m, int k, int n, int i0,
                         int i1);
int attn__matmul_panelled(int m, int k, int n);
/* Rows [i0, i1) and columns [j0, j1) of attn_matmul(C, A, B, bias, m, k, n), the same bits. */
void attn__matmul_part(float *C, const float *A, const float *B, const float *bias, int m, int k, int n, int i0, int i1,
                       int j0, int j1);
/* A head's scores (rows, n_k) = Q_h (rows, d_k) · K_hᵀ, from K_h (n_k, d_k),
 * or from packK (K_h packed by attn__pack_panels, transposed; K unused), and
 * scaled = scores / divisor, each a float division as written: the same
 * bits as attn_matmul_nt then attn__divide_scan. With copy (rows, n_k),
 * scaled may also be put there, and the stores into S and scaled may go
 * past the cache; with row_max (rows, 16), each row's maximum of scaled may
 * be put there too, as the maximum of its 16 floats (*maxed says whether it
 * was: only when every value is finite). Returns where to read scaled from:
 * copy, or scaled. *bits_s and *bits_a get what the scans of the two
 * found, or ATTN_SCAN_PENDING for both when a value that is not finite is
 * somewhere in them (then check_finite scans them again to name it). */
const float *attn__scores(float *S, float *scaled, float *copy, float *row_max, int *maxed, const float *Q,
                          const float *K, const float *packK, int rows, int dk, int nk, float divisor, unsigned *bits_s,
                          unsigned *bits_a);
/* y (rows, cols) = the softmax of x's rows, as attn_softmax_rows. With copy
 * (rows, cols), y may be written past the cache (whole lines, where the
 * CPU can), its values also put in copy. With row_max (rows, 16), every
 * value of x is finite and each row's maximum is the largest of its 16
 * floats there (attn__scores). Returns where to read them: copy, or y. */
const float *attn__softmax_block(float *y, float *copy, unsigned char *flags, const float *x, const float *row_max,
                                 int rows, int cols);
/* dst = src, n floats, which do not overlap: a large copy goes past the cache. */
void attn__copy_floats(float *dst, const float *src, size_t n);
/* One phase of independent work on up to `threads` threads: up to
 * ATTN_MAX_PHASE_JOBS products (split by rows, or by columns when they have
 * few; the same bits as attn_matmul's, whatever the count) and as many
 * copies (in chunks). bits[j] gets the scan of product j's C, copy_bits[c]
 * of copy c's destination (NULL: no scans). pack: room for
 * attn__phase_pack_floats(jobs, n_jobs) floats, where the products' B are
 * packed first (NULL: each slice packs what it reads). Below
 * PARALLEL_MIN_FLOPS of products and 256 KiB of copies, all of it runs on
 * the caller's thread. */
size_t attn__phase_pack_floats(const AttnMatmulJob *jobs, int n_jobs);
void attn__phase(const AttnMatmulJob *jobs, int n_jobs, unsigned char *bits, const AttnCopyJob *copies, int n_copies,
                 unsigned char *copy_bits, float *pack, int threads);
/* The sinusoidal positional encoding: pe (n, d) = sin(p / 10000^(2i/d)) in
 * column 2i and cos(p / 10000^(2i/d)) in column 2i + 1 of row p, in double,
 * rounded once. */
void attn__positional(float *pe, int n, int d);
/* The tiled softmax of head hp: its logits S (n_q, n_k, the softmax's
 * input) and values V (n_k, d_v) into its steps block_h@b ... acc_h@b of
 * every block of cfg.tile keys, then tiled_h (its row flags from weights).
 * Sums in double, each step rounded once from the recorded steps before
 * it. The one tiling of both paths. */
void attn__tile_head(AttnTrace *t, const HeadPlan *hp, const float *S, const float *V);
/* RoPE: angles (n, d/2) = p·base^(−2i/d) for position p and pair i, each
 * computed in double and rounded once. */
void attn__rope_angles(float *angles, int n, int d, float base);
/* RoPE: out (rows, d) = in with the pair (2i, 2i+1) of row r rotated by
 * angles[r][i] (angles: rows × d/2), cos and sin in double. The one rotation
 * of both paths. */
void attn__rope_rows(float *out, const float *in, const float *angles, int rows, int d);
/* May query i attend key j (0-based), under c's mask whose values are mask? */
int attn__allowed(const AttnConfig *c, const unsigned char *mask, int i, int j);
/* masked(i,j) = allowed(i,j) ? in(i,j) : cfg->mask_fill for the queries
 * [r0, r1) and keys [0, nk) (n_k, or decoding's t), rows with no allowed
 * key flagged. out and in point at row r0 (they hold r1 - r0 rows of nk),
 * flags at its flag (NULL: none). */
void attn__apply_mask(const AttnConfig *c, const unsigned char *mask, float *out, unsigned char *flags, const float *in,
                      int r0, int r1, int nk);

#endif
