/* reference.c: attention in plain loops. Read this first.
 *
 * attn_reference_forward computes the whole forward pass that attnviz
 * animates, top to bottom, and records every intermediate as a step of an
 * AttnTrace laid out exactly as attn_trace_create's, so the two can be
 * compared step by step. Each sum is accumulated in double and rounded once
 * to float; e^x and tanh are libm's. attn_trace_create (attn.c, kernels.c,
 * heads.c) computes the same steps with blocked, vectorised and threaded
 * code: optional speed work, not needed to follow the math.
 *
 * Every matrix is row-major float32; shapes are (rows, cols). H = heads.
 */
#include <math.h>
#include <string.h>

#include "attn.h"
#include "attn_internal.h"

/* C (m, n) = A (m, k) · B (k, n) [+ bias (n)] */
void attn_matmul_naive(float *C, const float *A, const float *B, const float *bias, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = bias ? bias[j] : 0.0;
            for (int p = 0; p < k; p++) s += (double)A[(size_t)i * k + p] * B[(size_t)p * n + j];
            C[(size_t)i * n + j] = (float)s;
        }
}

/* C (m, n) = A (m, k) · B (n, k)ᵀ: row i of A against row j of B */
void attn_matmul_nt_naive(float *C, const float *A, const float *B, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int p = 0; p < k; p++) s += (double)A[(size_t)i * k + p] * B[(size_t)j * k + p];
            C[(size_t)i * n + j] = (float)s;
        }
}

void attn_softmax_rows_reference(float *y, unsigned char *flags, const float *x, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        const float *xr = x + (size_t)i * cols; /* (cols) one query's logits */
        float *yr = y + (size_t)i * cols;       /* (cols) its weights */
        /* 1. the row's maximum; subtracted before e^x, so that e^(x - max) ≤ 1 never overflows */
        float mx = -INFINITY;
        int n_pinf = 0;
        for (int j = 0; j < cols; j++) {
            if (xr[j] > mx) mx = xr[j];
            n_pinf += xr[j] == INFINITY;
        }
        if (mx == -INFINITY) { /* every key blocked: no distribution exists; zeros (never NaN), flagged */
            memset(yr, 0, sizeof(float) * (size_t)cols);
            if (flags) flags[i] |= ATTN_ROW_ALL_BLOCKED;
            continue;
        }
        if (n_pinf > 0) { /* +inf logits (an overflowed score): softmax's limit shares the weight among them */
            for (int j = 0; j < cols; j++) yr[j] = xr[j] == INFINITY ? 1.0f / (float)n_pinf : 0.0f;
            continue;
        }
        /* 2. e^(x - max), summed; 3. each divided by the sum: weights in [0, 1] that sum to 1 */
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += exp((double)xr[j] - (double)mx);
        for (int j = 0; j < cols; j++) yr[j] = (float)(exp((double)xr[j] - (double)mx) / sum);
    }
}

/* The sinusoidal positional encoding of "Attention Is All You Need": the
 * row of position p holds sin and cos of p at d/2 frequencies
 * 1/10000^(2i/d), from one turn per 2π positions (i = 0) down to one per
 * 10000·2π, so every position gets its own pattern and a fixed offset is
 * the same linear map (a rotation of each pair) wherever it starts. */
void attn__positional(float *pe, int n, int d)
{
    for (int pos = 0; pos < n; pos++)
        for (int col = 0; col < d; col++) {
            double a = (double)pos / pow(10000.0, (double)(col - col % 2) / d); /* 2i = col rounded down to even */
            pe[(size_t)pos * d + col] = (float)(col % 2 ? cos(a) : sin(a));
        }
}

/* Rotary position embeddings (RoFormer; LLaMA's): pair i of a head's
 * features (2i, 2i+1) turns at the frequency θ_i = base^(−2i/d), so that at
 * position p it has turned by the angle p·θ_i. The first pair turns fastest
 * (1 radian per position), the last slowest. */
void attn__rope_angles(float *angles, int n, int d, float base)
{
    int half = d / 2;
    for (int pos = 0; pos < n; pos++)
        for (int i = 0; i < half; i++)
            angles[(size_t)pos * half + i] = (float)((double)pos * pow((double)base, -2.0 * i / d));
}

/* Each pair (x, y) of a row turned by its angle a: (x·cos a − y·sin a, x·sin a + y·cos a). A rotation keeps
 * lengths, and the dot product of a query turned by a and a key turned by b depends only on b − a: so the
 * scores see how far apart two tokens are, not where they are. */
void attn__rope_rows(float *out, const float *in, const float *angles, int rows, int d)
{
    int half = d / 2;
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < half; i++) {
            double a = angles[(size_t)r * half + i], cs = cos(a), sn = sin(a);
            double x = in[(size_t)r * d + 2 * i], y = in[(size_t)r * d + 2 * i + 1];
            out[(size_t)r * d + 2 * i] = (float)(x * cs - y * sn);
            out[(size_t)r * d + 2 * i + 1] = (float)(x * sn + y * cs);
        }
}

/* May query i attend key j? (cfg.mask: 1 attend, 0 blocked) */
int attn__allowed(const AttnConfig *c, const unsigned char *mask, int i, int j)
{
    switch (c->mask_kind) {
    case ATTN_MASK_NONE:
        return 1;
    case ATTN_MASK_CAUSAL:
        return j <= i; /* no peeking at later tokens */
    case ATTN_MASK_PADDING:
        return mask[j] != 0;
    case ATTN_MASK_MATRIX:
        return mask[(size_t)i * (size_t)c->n_k + (size_t)j] != 0;
    }
    return 1;
}

void attn__apply_mask(const AttnConfig *c, const unsigned char *mask, float *out, unsigned char *flags, const float *in,
                      int r0, int r1, int nk)
{
    for (int i = r0; i < r1; i++) {
        int any = 0;
        for (int j = 0; j < nk; j++) {
            size_t at = (size_t)(i - r0) * (size_t)nk + (size_t)j;
            int ok = attn__allowed(c, mask, i, j);
            out[at] = ok ? in[at] : c->mask_fill;
            any |= ok;
        }
        if (!any && flags) flags[i - r0] |= ATTN_ROW_ALL_BLOCKED;
    }
}

/* The numbers of step `idx` of the trace; NULL when the plan has no such step (-1). */
static float *data(AttnTrace *t, int idx)
{
    return idx >= 0 ? t->steps[idx].data : NULL;
}

/* The trace records each input, weight and bias as given. */
static void record(AttnTrace *t, int idx, const float *src)
{
    if (idx >= 0) memcpy(t->steps[idx].data, src, sizeof(float) * (size_t)t->steps[idx].rows * t->steps[idx].cols);
}

/* masked (nq, nk) from the logits `pre` of queries [q0, q0 + nq) when
 * there is a mask (and it was not applied before the scaling, seed 003's
 * order), then weights (nq, nk) = softmax of each row. A row whose keys are
 * all blocked is flagged in both, and in the weighted sum (hp->out) after
 * them. */
static const float *attend(AttnTrace *t, const AttnConfig *c, const HeadPlan *hp, const float *pre, int q0, int nq,
                           int nk)
{
    AttnStep *w = &t->steps[hp->weights], *o = &t->steps[hp->out];
    if (hp->masked >= 0) {
        AttnStep *m = &t->steps[hp->masked];
        if (c->mask_order == ATTN_SCALE_THEN_MASK) {
            attn__apply_mask(c, c->mask, m->data, m->row_flags, pre, q0, q0 + nq, nk);
            pre = m->data;
        }
        memcpy(w->row_flags, m->row_flags, (size_t)nq); /* a blocked row stays flagged under a finite fill */
    }
    attn_softmax_rows_reference(w->data, w->row_flags, pre, nq, nk);
    memcpy(o->row_flags, w->row_flags, (size_t)nq);
    return w->data;
}

/* One head of dot attention, from its queries Q_h (nq, d_k), the positions
 * [q0, q0 + nq) of the sequence, and its keys K_h (nk, d_k) and values V_h
 * (nk, d_v), all already in their steps: hp's scores, scaled, masked,
 * weights and head. */
static void attend_head(AttnTrace *t, const AttnConfig *c, const HeadPlan *hp, int q0, int nq, int nk)
{
    /* with RoPE, the queries and keys turned by their positions (decoding's cache holds turned keys) */
    const float *Qh = data(t, hp->Qr >= 0 ? hp->Qr : hp->Q), *Kh = data(t, hp->Kr >= 0 ? hp->Kr : hp->K);
    const float *Vh = data(t, hp->V);
    /* a. scores = Q_h · K_hᵀ: query i against key j */
    float *S = data(t, hp->scores); /* (nq, nk) */
    attn_matmul_nt_naive(S, Qh, Kh, nq, c->d_k, nk);
    /* b. scaled = scores / divisor (√d_k by default, so the softmax does not saturate as d_k grows).
     *    Seed 003 masks the raw scores first: masked = scores with the blocked cells set to the
     *    fill, then scaled = masked / divisor, so a blocked cell becomes fill / divisor. */
    const float *in = S;
    if (hp->masked >= 0 && c->mask_order == ATTN_MASK_THEN_SCALE) {
        AttnStep *m = &t->steps[hp->masked];
        attn__apply_mask(c, c->mask, m->data, m->row_flags, S, q0, q0 + nq, nk);
        in = m->data;
    }
    float *A = data(t, hp->scaled); /* (nq, nk) */
    for (size_t e = 0; e < (size_t)nq * nk; e++) A[e] = in[e] / t->divisor;
    /* c. masked, d. weights = softmax along each row */
    const float *W = attend(t, c, hp, A, q0, nq, nk); /* (nq, nk) each row sums to 1 */
    /* e. head_h = weights · V_h: each query's weighted average of the values */
    attn_matmul_naive(data(t, hp->out), W, Vh, NULL, nq, nk, c->d_v); /* (nq, d_v) */
}

/* dst (rows, w) = columns [c0, c0 + w) of src (rows, stride): a head's columns */
static void columns(float *dst, const float *src, int rows, int stride, int c0, int w)
{
    for (int i = 0; i < rows; i++)
        for (int d = 0; d < w; d++) dst[(size_t)i * w + d] = src[(size_t)i * stride + c0 + d];
}

/* FlashAttention's idea (Dao et al., 2022): the softmax and the weighted
 * sum of a row, computed one block of keys at a time, never holding a whole
 * row of weights. After block b the row keeps m, the largest logit so far,
 * l = Σ e^(s_j − m) and acc = Σ e^(s_j − m)·v_j over the keys seen. A new
 * block whose maximum is larger moves m up; what was summed against the old
 * m is multiplied by e^(m_old − m_new), which makes it a sum against the new
 * one exactly (e^(s − m_old)·e^(m_old − m_new) = e^(s − m_new)). After the
 * last block, acc / l is softmax(s)·V: the same number, not an
 * approximation. */
void attn__tile_head(AttnTrace *t, const HeadPlan *hp, const float *S, const float *V)
{
    const AttnConfig *c = &t->cfg;
    int nq = c->n_q, nk = c->n_k, dv = c->d_v, B = c->tile, blocks = (nk + B - 1) / B;
    enum { CHUNK = 256 };
    double p[CHUNK]; /* e^(s_j − m) of up to CHUNK keys of the block */
    for (int blk = 0; blk < blocks; blk++) {
        int j0 = blk * B, w = nk - j0 < B ? nk - j0 : B, at = hp->tile0 + 5 * blk;
        float *blockS = t->steps[at].data, *m = t->steps[at + 1].data,
              *r = t->steps[at + 2].data;                               /* (nq, w), (nq, 1) */
        float *l = t->steps[at + 3].data, *acc = t->steps[at + 4].data; /* (nq, 1), (nq, d_v) */
        const float *m_old = blk ? t->steps[at - 4].data : NULL, *l_old = blk ? t->steps[at - 2].data : NULL;
        const float *acc_old = blk ? t->steps[at - 1].data : NULL;
        for (int i = 0; i < nq; i++) {
            /* a. the block's logits; b. the new running maximum */
            float *row = blockS + (size_t)i * w;
            memcpy(row, S + (size_t)i * nk + j0, sizeof(float) * (size_t)w);
            float mo = m_old ? m_old[i] : -INFINITY, mx = mo;
            for (int j = 0; j < w; j++)
                if (row[j] > mx) mx = row[j];
            m[i] = mx;
            /* c. the rescale factor: e^(m_old − m_new), 0 before the first key was seen (nothing is summed) */
            r[i] = mo == -INFINITY ? 0.0f : (float)exp((double)mo - (double)mx);
            /* d, e. the sums so far rescaled, plus this block's terms (a key with logit −∞ adds 0) */
            double sum = blk ? (double)r[i] * l_old[i] : 0.0;
            float *a = acc + (size_t)i * dv;
            for (int d = 0; d < dv; d++) a[d] = blk ? (float)((double)r[i] * acc_old[(size_t)i * dv + d]) : 0.0f;
            for (int c0 = 0; c0 < w; c0 += CHUNK) {
                int cw = w - c0 < CHUNK ? w - c0 : CHUNK;
                for (int j = 0; j < cw; j++) {
                    p[j] = mx == -INFINITY ? 0.0 : exp((double)row[c0 + j] - (double)mx);
                    sum += p[j];
                }
                for (int d = 0; d < dv; d++) {
                    double s = a[d];
                    for (int j = 0; j < cw; j++) s += p[j] * V[(size_t)(j0 + c0 + j) * dv + d];
                    a[d] = (float)s;
                }
            }
            l[i] = (float)sum;
        }
    }
    /* f. the output: acc / l, each row; a row whose keys are all blocked has l = 0 and gets zeros */
    const float *acc = t->steps[hp->tile0 + 5 * (blocks - 1) + 4].data,
                *l = t->steps[hp->tile0 + 5 * (blocks - 1) + 3].data;
    AttnStep *o = &t->steps[hp->tiled];
    for (int i = 0; i < nq; i++)
        for (int d = 0; d < dv; d++) o->data[(size_t)i * dv + d] = l[i] > 0 ? acc[(size_t)i * dv + d] / l[i] : 0.0f;
    memcpy(o->row_flags, t->steps[hp->weights].row_flags, (size_t)nq);
}

/* 10. Incremental decoding: the forward again, one token at a time, as a
 *     decoder generates text. At token t only t's own rows of Q, K and V
 *     are computed. Each head keeps the keys and values of tokens 1..t-1 in
 *     a cache and appends t's: the cache is all a query may see (the causal
 *     mask, by construction), so one row of scores, weights and output per
 *     head is all that is new. */
static void forward_decode(AttnTrace *t, const AttnConfig *c, const Plan *p)
{
    int H = c->heads, G = attn_kv_heads(c), n = c->n_q, dm = c->d_model, dk = c->d_k, dv = c->d_v;
    const float *X = data(t, p->x_in); /* (n, d_model) the tokens' inputs (with their positions added) */
    for (int s = 0; s < n; s++) {      /* token t = s + 1, at position s */
        const DecodePlan *dp = &p->decode[s];
        const float *x = X + (size_t)s * dm; /* (1, d_model) */
        /* RoPE: the angles of position s, (1, d_k/2) */
        const float *angles = p->angles >= 0 ? data(t, p->angles) + (size_t)s * (size_t)(dk / 2) : NULL;
        /* 10a. the token's query, key and value rows */
        float *q = data(t, dp->Q); /* (1, H·d_k) */
        float *k = data(t, dp->K); /* (1, G·d_k) */
        float *v = data(t, dp->V); /* (1, G·d_v) */
        attn_matmul_naive(q, x, c->W_Q, c->b_Q, 1, dm, H * dk);
        attn_matmul_naive(k, x, c->W_K, c->b_K, 1, dm, G * dk);
        attn_matmul_naive(v, x, c->W_V, c->b_V, 1, dm, G * dv);
        for (int g = 0; g < G; g++) {
            const DecodeKvPlan *kp = &dp->kv[g];
            /* 10b. each K/V head's columns of the rows */
            columns(data(t, kp->K), k, 1, G * dk, g * dk, dk); /* (1, d_k) */
            columns(data(t, kp->V), v, 1, G * dv, g * dv, dv); /* (1, d_v) */
            /* RoPE: the key turned by its position once, when it comes; the cache keeps it turned */
            if (kp->Kr >= 0) attn__rope_rows(data(t, kp->Kr), data(t, kp->K), angles, 1, dk); /* (1, d_k) */
            const float *key = data(t, kp->Kr >= 0 ? kp->Kr : kp->K);
            /* 10c. its caches: tokens 1..t-1 as they were, then t's row */
            float *Kc = data(t, kp->K_cache); /* (t, d_k) */
            float *Vc = data(t, kp->V_cache); /* (t, d_v) */
            if (s > 0) {
                memcpy(Kc, data(t, p->decode[s - 1].kv[g].K_cache), sizeof(float) * (size_t)s * dk);
                memcpy(Vc, data(t, p->decode[s - 1].kv[g].V_cache), sizeof(float) * (size_t)s * dv);
            }
            memcpy(Kc + (size_t)s * dk, key, sizeof(float) * (size_t)dk);
            memcpy(Vc + (size_t)s * dv, data(t, kp->V), sizeof(float) * (size_t)dv);
        }
        for (int h = 0; h < H; h++) {
            const HeadPlan *hp = &dp->head[h];
            /* 10d. the head's query columns; one row of scores, weights and output, against the t keys
             *      and values its K/V head has cached */
            columns(data(t, hp->Q), q, 1, H * dk, h * dk, dk); /* (1, d_k) */
            if (hp->Qr >= 0) attn__rope_rows(data(t, hp->Qr), data(t, hp->Q), angles, 1, dk);
            attend_head(t, c, hp, s, 1, s + 1);
            /* 10e. its columns of the concat row */
            memcpy(data(t, dp->concat) + (size_t)h * dv, data(t, hp->out), sizeof(float) * (size_t)dv);
        }
        /* 10f. the output row */
        if (dp->output >= 0) attn_matmul_naive(data(t, dp->output), data(t, dp->concat), c->W_O, c->b_O, 1, H * dv, dm);
    }
    /* 11. decoded: the tokens' rows stacked, to set beside the whole forward's */
    const AttnStep *d = &t->steps[p->decoded];
    for (int s = 0; s < n; s++)
        memcpy(d->data + (size_t)s * d->cols, data(t, p->output >= 0 ? p->decode[s].output : p->decode[s].concat),
               sizeof(float) * (size_t)d->cols);
}

static void forward_dot(AttnTrace *t, const AttnConfig *c, const Plan *p)
{
    int H = c->heads, nq = c->n_q, nk = c->n_k, dm = c->d_model, dk = c->d_k, dv = c->d_v;
    const float *src = c->cross ? c->Y : c->X; /* (n_k, d_model) what the keys and values are made from */
    record(t, p->X, c->X);
    record(t, p->Y, c->Y);
    record(t, p->W_Q, c->W_Q), record(t, p->b_Q, c->b_Q);
    record(t, p->W_K, c->W_K), record(t, p->b_K, c->b_K);
    record(t, p->W_V, c->W_V), record(t, p->b_V, c->b_V);
    record(t, p->W_O, c->W_O), record(t, p->b_O, c->b_O);

    /* 0. the sinusoidal positional encoding: X + PE, which the projections read instead of X */
    const float *X = c->X;
    if (p->PE >= 0) {
        float *PE = data(t, p->PE), *Xp = data(t, p->X_pe); /* (n_q, d_model) */
        attn__positional(PE, nq, dm);
        for (size_t e = 0; e < (size_t)nq * dm; e++) Xp[e] = c->X[e] + PE[e];
        X = Xp;
        if (!c->cross) src = Xp;
    }

    /* 1. projections: every token's query, key and value, all heads side by side
     *    (G = H; with grouped-query attention, fewer K/V heads, each read by H/G query heads) */
    int G = attn_kv_heads(c);
    float *Q = data(t, p->Q); /* (n_q, H·d_k) = X · W_Q + b_Q */
    float *K = data(t, p->K); /* (n_k, G·d_k) = src · W_K + b_K */
    float *V = data(t, p->V); /* (n_k, G·d_v) = src · W_V + b_V */
    attn_matmul_naive(Q, X, c->W_Q, c->b_Q, nq, dm, H * dk);
    attn_matmul_naive(K, src, c->W_K, c->b_K, nk, dm, G * dk);
    attn_matmul_naive(V, src, c->W_V, c->b_V, nk, dm, G * dv);
    /* 1'. RoPE: the angle by which each position p turns each pair i of a head's features */
    if (p->angles >= 0) attn__rope_angles(data(t, p->angles), nq, dk, c->rope_base); /* (n, d_k/2) */

    float *concat = data(t, p->concat); /* (n_q, H·d_v) */
    for (int h = 0; h < H; h++) {
        const HeadPlan *hp = &p->head[h];
        /* 2. split: head h takes columns [h·d_k, (h+1)·d_k) of Q; K/V head g = h·G/H (h itself when
         *    G = H) columns [g·d_k, (g+1)·d_k) of K and [g·d_v, (g+1)·d_v) of V, split once for its group */
        int g = hp->kv;
        columns(data(t, hp->Q), Q, nq, H * dk, h * dk, dk); /* (n_q, d_k) */
        if (h == 0 || g != p->head[h - 1].kv) {
            columns(data(t, hp->K), K, nk, G * dk, g * dk, dk); /* (n_k, d_k) */
            columns(data(t, hp->V), V, nk, G * dv, g * dv, dv); /* (n_k, d_v) */
            /* RoPE: each key turned by its position's angles */
            if (hp->Kr >= 0) attn__rope_rows(data(t, hp->Kr), data(t, hp->K), data(t, p->angles), nk, dk);
        }
        /* RoPE: each query turned by its position's angles */
        if (hp->Qr >= 0) attn__rope_rows(data(t, hp->Qr), data(t, hp->Q), data(t, p->angles), nq, dk);
        /* 3-7. scores, scaled, masked, weights and head_h (attend_head) */
        attend_head(t, c, hp, 0, nq, nk);
        /* 7'. the tiled softmax: weights and head_h again, one block of keys at a time, from the logits */
        if (hp->tile0 >= 0) {
            int pre = hp->masked >= 0 && c->mask_order == ATTN_SCALE_THEN_MASK ? hp->masked : hp->scaled;
            attn__tile_head(t, hp, data(t, pre), data(t, hp->V));
        }
        /* 8. concat: head h's output into columns [h·d_v, (h+1)·d_v) */
        const float *O = data(t, hp->out); /* (n_q, d_v) */
        for (int i = 0; i < nq; i++)
            for (int d = 0; d < dv; d++) concat[(size_t)i * H * dv + h * dv + d] = O[(size_t)i * dv + d];
    }
    /* 9. output = concat · W_O + b_O: the heads mixed back to d_model columns */
    if (p->output >= 0)
        attn_matmul_naive(data(t, p->output), concat, c->W_O, c->b_O, nq, H * dv, dm); /* (n_q, d_model) */
    /* 10, 11: token by token */
    if (p->decode) forward_decode(t, c, p);
}

static void forward_additive(AttnTrace *t, const AttnConfig *c, const Plan *p)
{
    int nq = c->n_q, nk = c->n_k, dx = c->d_x, dy = c->cross ? c->d_y : c->d_x, da = c->d_a;
    const float *X = c->X, *Y = c->cross ? c->Y : c->X; /* (n_q, d_x) the queries, (n_k, d_y) the keys */
    const HeadPlan *hp = &p->head[0];
    record(t, p->X, c->X);
    record(t, p->Y, c->Y);
    record(t, p->W_a, c->W_a), record(t, p->b_a, c->b_a), record(t, p->v_a, c->v_a);

    /* 1. hidden[(i·n_k + j), :] = tanh([x_i ; y_j] · W_a + b_a): one row per pair of query and key */
    float *hidden = data(t, p->hidden); /* (n_q·n_k, d_a) */
    for (int i = 0; i < nq; i++)
        for (int j = 0; j < nk; j++)
            for (int a = 0; a < da; a++) {
                double s = c->b_a ? c->b_a[a] : 0.0;
                for (int q = 0; q < dx; q++) s += (double)X[(size_t)i * dx + q] * c->W_a[(size_t)q * da + a];
                for (int q = 0; q < dy; q++) s += (double)Y[(size_t)j * dy + q] * c->W_a[(size_t)(dx + q) * da + a];
                hidden[((size_t)i * nk + j) * da + a] = (float)tanh(s);
            }
    /* 2. scores(i, j) = hidden[(i·n_k + j), :] · v_a */
    float *S = data(t, hp->scores); /* (n_q, n_k) */
    attn_matmul_naive(S, hidden, c->v_a, NULL, nq * nk, da, 1);
    /* 3. masked, 4. weights = softmax along each row (no scaling step) */
    const float *W = attend(t, c, hp, S, 0, nq, nk); /* (n_q, n_k) */
    /* 5. context = weights · Y */
    attn_matmul_naive(data(t, hp->out), W, Y, NULL, nq, nk, dy); /* (n_q, d_y) */
}

AttnTrace *attn_reference_forward(const AttnConfig *cfg, char *err, size_t errlen)
{
    Plan p;
    AttnTrace *t = attn__trace_begin(cfg, &p, err, errlen); /* the steps laid out, not yet computed */
    if (!t) return NULL;
    if (cfg->attention == ATTN_DOT)
        forward_dot(t, cfg, &p);
    else
        forward_additive(t, cfg, &p);
    return attn__trace_end(t, &p, NULL, err, errlen); /* refused if a value overflowed float32 */
}
