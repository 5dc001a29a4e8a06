/* kernels.c: matrix products and the row softmax.
 *
 * Each product has a plain `_naive` reference, accumulated in double, that is
 * obviously the definition; the fast version beside it is what the engine
 * uses, and tests/test_kernels.c compares the two on every shape they use.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"

void attn_matmul_naive(float *C, const float *A, const float *B, const float *bias, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = bias ? bias[j] : 0.0;
            for (int p = 0; p < k; p++) s += (double)A[(size_t)i * k + p] * B[(size_t)p * n + j];
            C[(size_t)i * n + j] = (float)s;
        }
}

void attn_matmul_nt_naive(float *C, const float *A, const float *B, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int p = 0; p < k; p++) s += (double)A[(size_t)i * k + p] * B[(size_t)j * k + p];
            C[(size_t)i * n + j] = (float)s;
        }
}

/* Block sizes: a KB×NB panel of B (64 KiB) stays in L2 while every row of A
 * streams past it; the innermost loop runs over contiguous j, so -O2 turns it
 * into SIMD multiply-adds. */
enum { KB = 128, NB = 128 };

void attn_matmul(float *restrict C, const float *restrict A, const float *restrict B,
                 const float *restrict bias, int m, int k, int n)
{
    /* 1. C starts as the bias (broadcast over rows) or zero */
    for (int i = 0; i < m; i++) {
        float *c = C + (size_t)i * n;
        if (bias)
            memcpy(c, bias, sizeof(float) * (size_t)n);
        else
            memset(c, 0, sizeof(float) * (size_t)n);
    }
    /* 2. accumulate A·B panel by panel: C[i, j0:j1] += A[i, p0:p1] · B[p0:p1, j0:j1] */
    for (int j0 = 0; j0 < n; j0 += NB) {
        int j1 = j0 + NB < n ? j0 + NB : n;
        for (int p0 = 0; p0 < k; p0 += KB) {
            int p1 = p0 + KB < k ? p0 + KB : k;
            for (int i = 0; i < m; i++) {
                float *restrict c = C + (size_t)i * n;
                const float *restrict a = A + (size_t)i * k;
                for (int p = p0; p < p1; p++) {
                    float ap = a[p];
                    const float *restrict b = B + (size_t)p * n;
                    for (int j = j0; j < j1; j++) c[j] += ap * b[j];
                }
            }
        }
    }
}

void attn_matmul_nt(float *restrict C, const float *restrict A, const float *restrict B, int m, int k, int n)
{
    /* A·Bᵀ as A·(Bᵀ): transposing B (n, k) once makes the inner loop contiguous. */
    float *Bt = malloc(sizeof(float) * (size_t)k * (size_t)n); /* (k, n) */
    if (!Bt) {
        attn_matmul_nt_naive(C, A, B, m, k, n);
        return;
    }
    for (int j = 0; j < n; j++)
        for (int p = 0; p < k; p++) Bt[(size_t)p * n + j] = B[(size_t)j * k + p];
    attn_matmul(C, A, Bt, NULL, m, k, n);
    free(Bt);
}

void attn_softmax_rows(float *y, unsigned char *flags, const float *x, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        const float *xr = x + (size_t)i * cols;
        float *yr = y + (size_t)i * cols;
        /* 1. the row maximum, subtracted before exp so that logits of 1e4 do
         *    not overflow: exp(x - max) ≤ 1 */
        float mx = -INFINITY;
        int n_pinf = 0;
        for (int j = 0; j < cols; j++) {
            if (xr[j] > mx) mx = xr[j];
            n_pinf += xr[j] == INFINITY;
        }
        if (mx == -INFINITY || isnan(mx)) {
            /* 2a. every key blocked: no distribution exists; the row is zero
             *     (never NaN) and flagged, so the view can say why */
            memset(yr, 0, sizeof(float) * (size_t)cols);
            if (flags) flags[i] |= ATTN_ROW_ALL_BLOCKED;
            continue;
        }
        if (n_pinf > 0) {
            /* 2b. +inf logits (an overflowed score): the limit of softmax
             *     shares the weight among them */
            for (int j = 0; j < cols; j++) yr[j] = xr[j] == INFINITY ? 1.0f / (float)n_pinf : 0.0f;
            continue;
        }
        /* 2. exponentiate and sum in double, 3. normalise */
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += exp((double)xr[j] - (double)mx);
        for (int j = 0; j < cols; j++) yr[j] = (float)(exp((double)xr[j] - (double)mx) / sum);
    }
}
