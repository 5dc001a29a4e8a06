/* kernels.c: the fast matrix products and the fast row softmax. Optional
 * speed work: reference.c defines what they compute (attn_matmul_naive,
 * attn_matmul_nt_naive, attn_softmax_rows_reference), and
 * tests/test_kernels.c and tests/test_perf_paths.c compare each fast kernel
 * with its reference on every shape they use. docs/performance.md has the
 * measurements behind the choices below.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "attn.h"
#include "attn_internal.h"

/* ---- the fast products ----------------------------------------------------
 *
 * Every large product runs one blocked loop nest (a simplified BLIS/GotoBLAS):
 *
 *   for each block of MC rows of C                               (ib)
 *     for each panel of NR columns of C                          (jp)
 *       the panel of B: (k, nr), contiguous, zero-padded; packed whole
 *       beforehand (attn__pack_panels), or a slice of KC rows of it at a
 *       time into bp                                             (p0)
 *         for each block of MR rows in the MC                    (i)
 *           C[i:i+MR, jp:jp+nr] += A[i:i+MR, p0:p0+kc] · panel    (the micro-kernel)
 *
 * The micro-kernel keeps its MR×NR block of C in local accumulators for the
 * whole kc loop, so C is read and written once per slice instead of once per
 * multiply-add, and its innermost loop runs over NR contiguous floats of the
 * panel, which the compiler turns into SIMD multiplies and adds. The MC rows
 * of A (a few hundred KiB) stay in the core's second-level cache while every
 * panel goes by, so A is read from memory once, not once per panel; the
 * panel is read by every block of rows of the MC. For A·Bᵀ the packing reads
 * B's rows as the panel's columns, so no transposed copy of B is ever made.
 *
 * Every element of C is bias + Σ_p a_ip·b_pj summed in order of p, in float,
 * each term added by a fused multiply-add (c = a·b + c rounded once): the
 * result does not depend on the block sizes, the thread count nor on the
 * instruction set chosen. The AVX-512 and AVX2 clones below use the CPU's
 * FMA instructions; the baseline clone calls libm's fmaf, which is correctly
 * rounded too, so it computes the same bits (slowly) on a CPU without FMA.
 */

/* Block sizes. With AVX-512 (KERNEL_WIDE_REGISTERS), panels of NR_WIDE
 * columns in blocks of MR_WIDE rows: 6×64 accumulators are 24 of its 32
 * vector registers, leaving room for the panel's row and A's broadcast
 * value; a product's last rows go in blocks of MR, of 2, then one by one,
 * and NR_NARROW serves the last columns when fewer than NR_WIDE remain (a
 * head's d_v of 8 would otherwise waste 7/8 of a wide panel). Without it,
 * every panel is NR_NARROW wide, in blocks of MR_NARROW rows: 3×32
 * accumulators are 12 of AVX2's 16 registers, where a 4×64 block spilled
 * to the stack. Narrower panels than 32 columns are vectorised another way
 * by GCC, many times slower (docs/performance.md). MC rows of A: 192 of
 * d_model = 512 floats are 384 KiB, a fifth of the second-level cache. KC:
 * a slice of an unpacked panel, 64 KiB on the stack. */
enum { MR_WIDE = 6, MR = 4, MR_NARROW = 3, NR_WIDE = 64, NR_NARROW = 32, KC = 256, MC = 192 };

/* No contraction anywhere else: a fused multiply-add is written out as
 * fmaf where one is meant (KERNEL_FMA), and every other product and sum is
 * rounded on its own, in every clone alike. (GCC keeps -ffp-contract=off in
 * ISO C mode already and does not know this pragma.) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* c + a·b rounded once. GCC and Clang turn the builtin into one vector FMA
 * instruction where the clone has FMA, and into a call to libm's fmaf where
 * it has not. */
#if defined(__GNUC__)
#define KERNEL_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define KERNEL_FMA(a, b, c) fmaf((a), (b), (c))
#endif

#if defined(__GNUC__)
#define KERNEL_INLINE static inline __attribute__((always_inline))
#else
#define KERNEL_INLINE static inline
#endif

/* Runtime dispatch: the loop nest is compiled three times, for x86-64-v4
 * (AVX-512), x86-64-v3 (AVX2 and FMA) and baseline x86-64 (SSE2), and the
 * loader picks the best the CPU has (an ifunc). The source and the
 * arithmetic are the same in each. Off under
 * ThreadSanitizer, whose runtime is not up yet when the loader runs the
 * resolver, and with -DATTN_NO_TARGET_CLONES. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ATTN_NO_TARGET_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ATTN_NO_TARGET_CLONES)
#define ATTN_NO_TARGET_CLONES 1
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute) && !defined(ATTN_NO_TARGET_CLONES)
#if __has_attribute(target_clones)
#define KERNEL_DISPATCH __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifdef KERNEL_DISPATCH
/* The clone the loader picks, by the same test as its resolver. Clang 14
 * knows the levels only as their features. */
const char *attn_kernels_isa(void)
{
    __builtin_cpu_init();
#if defined(__clang__)
    int v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
    int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#else
    int v4 = __builtin_cpu_supports("x86-64-v4");
    int v3 = __builtin_cpu_supports("x86-64-v3");
#endif
    if (v4) return "x86-64-v4";
    if (v3) return "x86-64-v3";
    return "x86-64";
}
#else
const char *attn_kernels_isa(void)
{
#if defined(__AVX512F__) && defined(__FMA__)
    return "one build for x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__)
    return "one build for x86-64-v3";
#else
    return "one build";
#endif
}
#endif
/* Whether the code runs with AVX-512's 32 vector registers, for the blocks
 * (the block sizes above): in a clone, a test of the CPU, which is true
 * exactly in the AVX-512 clone (the loader picks that clone on such a CPU
 * and only there); in a build without clones, what it was built for. Both
 * blocks give the same bits. */
#ifdef KERNEL_DISPATCH
#define KERNEL_WIDE_REGISTERS() __builtin_cpu_supports("avx512f")
#elif defined(__AVX512F__)
#define KERNEL_WIDE_REGISTERS() 1
#else
#define KERNEL_WIDE_REGISTERS() 0
#endif
/* A function of its own, never inlined into its caller (the kernel blocks
 * below): noinline, and the clones where there are. Clang refuses noinline
 * beside target_clones, whose functions neither compiler inlines anyway. */
#if defined(KERNEL_DISPATCH) && defined(__clang__)
#define KERNEL_OWN_FUNCTION KERNEL_DISPATCH
#elif defined(KERNEL_DISPATCH)
#define KERNEL_OWN_FUNCTION KERNEL_DISPATCH __attribute__((noinline))
#else
#define KERNEL_OWN_FUNCTION __attribute__((noinline))
#endif
#ifndef KERNEL_DISPATCH
#define KERNEL_DISPATCH
#endif

/* The scores' second output and their scan (attn__scores): with it, a
 * product also stores C · scale into c2 (and into copy, when not NULL),
 * scale being the exact reciprocal of a divisor that is a power of two (so
 * C · scale is C / divisor to the bit), and folds every value of it into
 * check, each multiplied by 0 and added: check stays 0 while they are finite
 * and turns NaN at the first that is not (∞·0 and NaN·0 are NaN). C · scale
 * is not finite exactly where C is not or where it overflows, so that is the
 * scan of both steps, made while the sums are still in registers. NULL in
 * every other product. */
typedef struct Scaled {
    float *c2;            /* (m, n), C's row stride: C · scale */
    float *copy;          /* (m, n), C's row stride: C · scale again, or NULL */
    float scale;          /* a power of two */
    int stream;           /* C and c2 may be written past the cache (scores_block_stream) */
    float check[NR_WIDE]; /* 0, or NaN once a value was not finite */
    float *row_max;       /* (m, 16) for each row, the running maximum of c2's lanes (stream mode), or NULL */
} Scaled;

/* C[0:MR, 0:NR] = I[0:MR, 0:NR] + A[0:MR, 0:kc] · bp[0:kc, 0:NR]. a is
 * row-major with row stride lda, c with row stride ldc; bp is the (kc, NR)
 * panel. I, where the sums start, is read with row stride ldi: C itself
 * (ldi = ldc), or one row for every row (ldi = 0: the bias, or zeros), so
 * that C needs no pass of its own to be set first. SCALED: also c2 (sc->c2
 * + at, at being c's offset in C) = C · scale, into sc->copy too when it is
 * there, and folded into sc->check (otherwise sc is unused). Every loop bound is a constant, so the loops
 * unroll and acc lives in vector registers: one function for each block
 * shape, each compiled on its own (a call per block of MR·NR·kc
 * multiply-adds costs nothing), because acc must have exactly NR columns
 * and one way out, and must not share a function with other blocks: with
 * unused columns, with any condition on its loads and stores, or inlined
 * with the others into one large function, GCC keeps it on the stack, a
 * load and a store per multiply-add. */
#define DEFINE_KERNEL_BLOCK(MR_, NR_, SCALED)                                                                          \
    KERNEL_OWN_FUNCTION static void kernel_##MR_##x##NR_##_##SCALED(                                                   \
        int kc, const float *restrict a, size_t lda, const float *restrict bp, float *c, size_t ldc,                   \
        const float *init, size_t ldi, Scaled *sc, size_t at)                                                          \
    {                                                                                                                  \
        float acc[MR_][NR_]; /* (MR, NR) block of C */                                                                 \
        /* The lines of the next block of rows' C asked for now, to be owned                                           \
         * by the time that block stores its sums: a trace's steps are cold,                                           \
         * and a store that misses waits. (Past the last row the addresses,                                            \
         * computed as integers, are C's neighbours or nothing; a prefetch                                             \
         * never faults.) */                                                                                           \
        for (int r = 0; r < MR_; r++)                                                                                  \
            for (int j = 0; j < NR_; j += 16) {                                                                        \
                __builtin_prefetch((const void *)((uintptr_t)c + sizeof(float) * ((size_t)(MR_ + r) * ldc + j)), 1,    \
                                   3);                                                                                 \
                if (SCALED)                                                                                            \
                    __builtin_prefetch(                                                                                \
                        (const void *)((uintptr_t)(sc->c2 + at) + sizeof(float) * ((size_t)(MR_ + r) * ldc + j)), 1,   \
                        3);                                                                                            \
            }                                                                                                          \
        for (int r = 0; r < MR_; r++)                                                                                  \
            for (int j = 0; j < NR_; j++) acc[r][j] = init[(size_t)r * ldi + j];                                       \
        for (int p = 0; p < kc; p++) {                                                                                 \
            const float *restrict b = bp + (size_t)p * NR_; /* (NR) row p of the panel */                              \
            for (int r = 0; r < MR_; r++) {                                                                            \
                float ar = a[(size_t)r * lda + p];                                                                     \
                for (int j = 0; j < NR_; j++) acc[r][j] = KERNEL_FMA(ar, b[j], acc[r][j]);                             \
            }                                                                                                          \
        }                                                                                                              \
        if (!(SCALED)) {                                                                                               \
            (void)sc, (void)at;                                                                                        \
            for (int r = 0; r < MR_; r++)                                                                              \
                for (int j = 0; j < NR_; j++) c[(size_t)r * ldc + j] = acc[r][j];                                      \
        } else {                                                                                                       \
            float *restrict c2 = sc->c2 + at, check[NR_], scale = sc->scale;                                           \
            for (int j = 0; j < NR_; j++) check[j] = sc->check[j];                                                     \
            for (int r = 0; r < MR_; r++)                                                                              \
                for (int j = 0; j < NR_; j++) {                                                                        \
                    float w = acc[r][j] * scale;                                                                       \
                    c[(size_t)r * ldc + j] = acc[r][j];                                                                \
                    c2[(size_t)r * ldc + j] = w;                                                                       \
                    check[j] = KERNEL_FMA(w, 0.0f, check[j]);                                                          \
                }                                                                                                      \
            for (int j = 0; j < NR_; j++) sc->check[j] = check[j];                                                     \
            if (sc->copy)                                                                                              \
                for (int r = 0; r < MR_; r++)                                                                          \
                    memcpy(sc->copy + at + (size_t)r * ldc, c2 + (size_t)r * ldc, sizeof(float) * NR_);                \
        }                                                                                                              \
    }
/* every block shape gemm_panels uses: MR_WIDE, MR, 2 and 1 rows of a wide
 * panel; those and MR_NARROW rows of a narrow one; each with and without sc */
#define DEFINE_KERNEL_BLOCKS(SCALED)                                                                                   \
    DEFINE_KERNEL_BLOCK(6, 64, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(4, 64, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(2, 64, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(1, 64, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(6, 32, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(4, 32, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(3, 32, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(2, 32, SCALED)                                                                                 \
    DEFINE_KERNEL_BLOCK(1, 32, SCALED)
DEFINE_KERNEL_BLOCKS(0)
DEFINE_KERNEL_BLOCKS(1)
_Static_assert(MR_WIDE == 6 && MR == 4 && MR_NARROW == 3 && NR_WIDE == 64 && NR_NARROW == 32,
               "the kernel blocks defined above must match the block sizes");

/* ---- the scores past the cache (AVX-512) ----------------------------------
 *
 * A large trace is written once and hardly read back during the forward:
 * the scores not at all, scaled only by the next step, which reads the
 * scratch copy. An ordinary store that misses the cache first reads the
 * line from memory, so writing the trace costs twice its size in memory
 * traffic; a non-temporal store writes whole lines without reading them.
 * At n = 2048 a head's scores and scaled are 32 MiB. So on a CPU with
 * AVX-512, the block of MR_WIDE × NR_WIDE scores streams both to the trace,
 * the same arithmetic as kernel_6x64_1 in the same order: the same bits. It
 * is written with the instructions themselves (immintrin.h), which only a
 * function built for AVX-512 may use, and called only where the CPU has
 * them (the wide blocks run only there). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_STREAMS 1
__attribute__((target("avx512f"), noinline)) static void scores_block_stream(int kc, const float *restrict a,
                                                                             size_t lda, const float *restrict bp,
                                                                             float *c, size_t ldc, const float *init,
                                                                             size_t ldi, Scaled *sc, size_t at)
{
    __m512 acc[MR_WIDE][NR_WIDE / 16]; /* (6, 64) block of C */
    for (int r = 0; r < MR_WIDE; r++)
        for (int v = 0; v < NR_WIDE / 16; v++) acc[r][v] = _mm512_loadu_ps(init + (size_t)r * ldi + 16 * v);
    for (int p = 0; p < kc; p++) {
        const float *b = bp + (size_t)p * NR_WIDE; /* (64) row p of the panel */
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), b2 = _mm512_loadu_ps(b + 32),
               b3 = _mm512_loadu_ps(b + 48);
        for (int r = 0; r < MR_WIDE; r++) {
            __m512 ar = _mm512_set1_ps(a[(size_t)r * lda + p]);
            acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(ar, b2, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(ar, b3, acc[r][3]);
        }
    }
    const __m512 scale = _mm512_set1_ps(sc->scale), zero = _mm512_setzero_ps();
    float *c2 = sc->c2 + at, *copy = sc->copy ? sc->copy + at : NULL;
    __m512 check[NR_WIDE / 16];
    for (int v = 0; v < NR_WIDE / 16; v++) check[v] = _mm512_loadu_ps(sc->check + 16 * v);
    float *row_max = sc->row_max ? sc->row_max + 16 * (at / ldc) : NULL; /* the block's first row is at / ldc */
    for (int r = 0; r < MR_WIDE; r++) {
        __m512 w[NR_WIDE / 16];
        for (int v = 0; v < NR_WIDE / 16; v++) {
            size_t o = (size_t)r * ldc + 16 * (size_t)v;
            w[v] = _mm512_mul_ps(acc[r][v], scale);
            _mm512_stream_ps(c + o, acc[r][v]);
            _mm512_stream_ps(c2 + o, w[v]);
            if (copy) _mm512_storeu_ps(copy + o, w[v]);
            check[v] = _mm512_fmadd_ps(w[v], zero, check[v]);
        }
        if (row_max) {
            __m512 m = _mm512_max_ps(_mm512_max_ps(w[0], w[1]), _mm512_max_ps(w[2], w[3]));
            _mm512_storeu_ps(row_max + 16 * r, _mm512_max_ps(_mm512_loadu_ps(row_max + 16 * r), m));
        }
    }
    for (int v = 0; v < NR_WIDE / 16; v++) _mm512_storeu_ps(sc->check + 16 * v, check[v]);
}
#endif

/* The kernel block for mr rows of a panel of nr columns (both constants at
 * every call, so this folds to one call), with or without sc. */
KERNEL_INLINE void kernel_block(const int mr, const int nr, int kc, const float *restrict a, size_t lda,
                                const float *restrict bp, float *c, size_t ldc, const float *init, size_t ldi,
                                Scaled *sc, size_t at)
{
#if KERNEL_STREAMS
    if (mr == MR_WIDE && nr == NR_WIDE && sc && sc->stream) {
        scores_block_stream(kc, a, lda, bp, c, ldc, init, ldi, sc, at);
        return;
    }
#endif
#define KERNEL_CASE(MR_, NR_)                                                                                          \
    if (mr == MR_ && nr == NR_) {                                                                                      \
        if (sc)                                                                                                        \
            kernel_##MR_##x##NR_##_1(kc, a, lda, bp, c, ldc, init, ldi, sc, at);                                       \
        else                                                                                                           \
            kernel_##MR_##x##NR_##_0(kc, a, lda, bp, c, ldc, init, ldi, NULL, 0);                                      \
        return;                                                                                                        \
    }
    KERNEL_CASE(6, 64)
    KERNEL_CASE(4, 64)
    KERNEL_CASE(2, 64)
    KERNEL_CASE(1, 64)
    KERNEL_CASE(6, 32)
    KERNEL_CASE(4, 32)
    KERNEL_CASE(3, 32)
    KERNEL_CASE(2, 32)
    KERNEL_CASE(1, 32)
#undef KERNEL_CASE
    assert(0 && "no kernel block of that shape");
}

/* The same for a panel with only ncols < nr columns in C: through a
 * zero-padded (mr, nr) copy, so that kernel_block stays branch-free; the
 * scores' second output and check (sc) as kernel_block makes them, for the
 * ncols columns. */
KERNEL_INLINE void kernel_block_partial(const int mr, const int nr, int kc, const float *restrict a, size_t lda,
                                        const float *restrict bp, float *c, size_t ldc, const float *init, size_t ldi,
                                        int ncols, Scaled *sc, size_t at)
{
    float tile[MR_WIDE * NR_WIDE]; /* (mr, nr) C's block, padded */
    for (int r = 0; r < mr; r++) {
        memcpy(tile + r * nr, init + (size_t)r * ldi, sizeof(float) * (size_t)ncols);
        memset(tile + r * nr + ncols, 0, sizeof(float) * (size_t)(nr - ncols));
    }
    kernel_block(mr, nr, kc, a, lda, bp, tile, (size_t)nr, tile, (size_t)nr, NULL, 0);
    for (int r = 0; r < mr; r++) memcpy(c + (size_t)r * ldc, tile + r * nr, sizeof(float) * (size_t)ncols);
    if (!sc) return;
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < ncols; j++) {
            float w = tile[r * nr + j] * sc->scale;
            sc->c2[at + (size_t)r * ldc + j] = w;
            if (sc->copy) sc->copy[at + (size_t)r * ldc + j] = w;
            sc->check[j] = KERNEL_FMA(w, 0.0f, sc->check[j]);
        }
}

/* One block of mr rows: kernel_block, or kernel_block_partial for a
 * panel with ncols < nr columns. */
KERNEL_INLINE void kernel_rows(const int mr, const int nr, int kc, const float *restrict a, size_t lda,
                               const float *restrict bp, float *c, size_t ldc, const float *init, size_t ldi, int ncols,
                               Scaled *sc, size_t at)
{
    if (ncols == nr)
        kernel_block(mr, nr, kc, a, lda, bp, c, ldc, init, ldi, sc, at);
    else
        kernel_block_partial(mr, nr, kc, a, lda, bp, c, ldc, init, ldi, ncols, sc, at);
}

/* Packs the (kc, ncols) block of B at (p0, j0) into bp (kc, nr), zero-padding
 * columns ncols..nr-1. B is (k, n) row-major, or (n, k) when transposed (then
 * the block's column j is B's row j0+j). */
KERNEL_INLINE void pack_panel(float *restrict bp, const float *restrict B, int transposed, int k, int n, int p0, int kc,
                              int j0, int ncols, int nr)
{
    if (!transposed) {
        for (int p = 0; p < kc; p++) {
            float *dst = bp + (size_t)p * nr;
            memcpy(dst, B + (size_t)(p0 + p) * n + j0, sizeof(float) * (size_t)ncols);
            for (int j = ncols; j < nr; j++) dst[j] = 0.0f;
        }
    } else {
        /* row by row of the panel: its stores contiguous, the reads a stride
         * of k apart in B (a head's K_h, a few KiB, in L1), rather than
         * column by column, where every store goes to another cache line */
        const float *src = B + (size_t)j0 * k + p0; /* column 0 of the block: B's row j0 */
        for (int p = 0; p < kc; p++) {
            float *dst = bp + (size_t)p * nr;
            for (int j = 0; j < ncols; j++) dst[j] = src[(size_t)j * k + p];
            for (int j = ncols; j < nr; j++) dst[j] = 0.0f;
        }
    }
}

/* Where the packed (k, nr) panel of columns jp.. is in B packed whole
 * (attn__pack_panels): the panels before it hold jp columns of k rows each. */
static inline size_t packed_at(int jp, int k)
{
    return (size_t)jp * (size_t)k;
}

/* Where C's sums start, for the columns [j0, j0 + width) of C (m, n): the
 * bias (n) broadcast over the rows, zeros (bias NULL), or C itself
 * (C_ACCUMULATE, a pointer never dereferenced). */
static const float c_accumulate_tag;
#define C_ACCUMULATE (&c_accumulate_tag)
static const float zero_row[NR_WIDE];

/* Rows [ib, ie) and the panels of nr columns from ja to jb (the last one
 * partial) of C (m, n) = bias + A (m, k) · B (C += when bias is
 * C_ACCUMULATE; bias as above): each panel read from `packed`, B packed
 * whole (then B is unused), or packed a slice at a time into bp. The first
 * slice of the shared dimension starts its sums from the bias (or zeros, or
 * C), the next ones from C; sc goes with the last slice. */
KERNEL_INLINE void gemm_panels(float *restrict C, const float *restrict A, const float *restrict B, const float *bias,
                               int transposed, int k, int n, int ib, int ie, int ja, int jb, const int nr,
                               float *restrict bp, const float *restrict packed, Scaled *sc)
{
    const int wide = KERNEL_WIDE_REGISTERS();
    for (int jp = ja; jp < jb; jp += nr) {
        int ncols = jb - jp < nr ? jb - jp : nr;
        for (int p0 = 0, kc; p0 < k; p0 += kc) {
            const float *panel = bp; /* (kc, nr) */
            if (packed) {
                kc = k; /* the panel lies contiguous over all of k */
                panel = packed + packed_at(jp, k);
            } else {
                kc = k - p0 < KC ? k - p0 : KC;
                pack_panel(bp, B, transposed, k, n, p0, kc, jp, ncols, nr);
            }
            const float *init = C + jp; /* with row stride ldi */
            size_t ldi = (size_t)n;
            if (p0 == 0 && bias != C_ACCUMULATE) {
                init = bias ? bias + jp : zero_row;
                ldi = 0;
            }
            Scaled *last = p0 + kc == k ? sc : NULL;
            /* rows i.. of the slice: blocks of R rows */
#define ROWS(R)                                                                                                        \
    kernel_rows(R, nr, kc, A + (size_t)i * k + p0, (size_t)k, panel, C + (size_t)i * n + jp, (size_t)n,                \
                init + (size_t)i * ldi, ldi, ncols, last, (size_t)i * n + jp)
            int i = ib;
            if (wide) {
                for (; i + MR_WIDE <= ie; i += MR_WIDE) ROWS(MR_WIDE);
                for (; i + MR <= ie; i += MR) ROWS(MR);
            } else {
                for (; i + MR_NARROW <= ie; i += MR_NARROW) ROWS(MR_NARROW);
            }
            for (; i + 2 <= ie; i += 2) ROWS(2);
            for (; i < ie; i++) ROWS(1);
#undef ROWS
        }
    }
}

/* Rows [i0, i1) and columns [j0, j1) of C (m, n) = bias + A (m, k) · B
 * (k, n), or · Bᵀ with B (n, k) when transposed (bias as gemm_panels takes
 * it), in blocks of MC rows: with AVX-512 in wide panels from j0, the rest
 * in narrow ones (all of them narrow without). B is read from `packed`
 * (attn__pack_panels; then j0 = 0 and j1 = n, the panels cut as it cut
 * them), or packed a slice of a panel at a time. */
KERNEL_INLINE void gemm_block(float *restrict C, const float *restrict A, const float *restrict B, const float *bias,
                              int transposed, int k, int n, int i0, int i1, int j0, int j1,
                              const float *restrict packed, Scaled *sc)
{
    assert(k > 0);                       /* k = 0 takes the small path (gemm_is_small) */
    _Alignas(64) float bp[KC * NR_WIDE]; /* (KC, nr) a slice of a panel, when B is not packed: 64 KiB */
    int wide_end = KERNEL_WIDE_REGISTERS() ? j0 + (j1 - j0) / NR_WIDE * NR_WIDE : j0;
    for (int ib = i0; ib < i1; ib += MC) {
        int ie = i1 - ib < MC ? i1 : ib + MC;
        gemm_panels(C, A, B, bias, transposed, k, n, ib, ie, j0, wide_end, NR_WIDE, bp, packed, sc);
        gemm_panels(C, A, B, bias, transposed, k, n, ib, ie, wide_end, j1, NR_NARROW, bp, packed, sc);
    }
}

/* Below this many multiply-adds, and with at most SMALL_KMAX of the shared
 * dimension, a product takes the small path (the lessons' 5×8 products, and
 * the whole forward of a 5-token lesson): 8 columns of C at a time in one
 * 8-lane accumulator, over a zero-padded (k, 8) copy of those columns of B,
 * or over B itself when B is exactly 8 columns wide. No per-row calls, no
 * remainder loops; the same order of sums as every other path. */
enum { GEMM_SMALL = 4096, SMALL_LANES = 8, SMALL_KMAX = 512 };

/* Also a product of any height with at most two vectors' width of columns,
 * such as a head's weights · V_h with d_v = 8 (64×64 · 64×8): the path's
 * 8-lane accumulators fit it exactly, where the wide kernel would first
 * transpose the weights. */
static int gemm_is_small(int m, int k, int n)
{
    return k <= SMALL_KMAX && ((size_t)m * (size_t)k * (size_t)n <= GEMM_SMALL || n <= 2 * SMALL_LANES);
}

#if defined(__GNUC__)
/* 8 floats in a vector register (GCC/Clang vector extensions): as an array
 * of 8 floats GCC keeps the accumulator on the stack, a load and a store
 * per multiply-add. */
typedef float small_vec __attribute__((vector_size(SMALL_LANES * sizeof(float))));
#define SMALL_VEC_ZERO ((small_vec){0})
#else
typedef struct {
    float v[SMALL_LANES];
} small_vec;
#define SMALL_VEC_ZERO ((small_vec){{0}})
#endif

/* acc += a · b, lane by lane, each lane a fused multiply-add (one vector
 * instruction where the clone has FMA). A macro: a function taking or
 * returning a vector type changes the ABI between the clones. */
#if defined(__GNUC__)
#define SMALL_MADD(acc, a, b)                                                                                          \
    do {                                                                                                               \
        for (int j_ = 0; j_ < SMALL_LANES; j_++) (acc)[j_] = KERNEL_FMA((a), (b)[j_], (acc)[j_]);                      \
    } while (0)
#else
#define SMALL_MADD(acc, a, b)                                                                                          \
    do {                                                                                                               \
        for (int j_ = 0; j_ < SMALL_LANES; j_++) (acc).v[j_] = KERNEL_FMA((a), (b).v[j_], (acc).v[j_]);                \
    } while (0)
#endif

/* C (m, n) = [bias +] A (m, k) · B (k, n), or · Bᵀ with B (n, k) when
 * transposed; with accumulate, C += instead (bias unused). */
KERNEL_DISPATCH static void gemm_small(float *restrict C, const float *restrict A, const float *restrict B,
                                       const float *restrict bias, int accumulate, int transposed, int m, int k, int n)
{
    _Alignas(64) float panel[SMALL_KMAX * SMALL_LANES]; /* (k, 8) columns j0.. of B, zero-padded */
    /* acc = C's row r, columns j0..j0+w-1, before the product: C itself
     * (accumulate), the bias, or zero; padded with zeros to 8 lanes */
#define SMALL_LOAD(acc, r)                                                                                             \
    do {                                                                                                               \
        const float *init_ = accumulate ? C + (size_t)(r)*n + j0 : bias ? bias + j0 : NULL;                            \
        (acc) = SMALL_VEC_ZERO;                                                                                        \
        if (init_ && w == SMALL_LANES) {                                                                               \
            memcpy(&(acc), init_, sizeof(acc));                                                                        \
        } else if (init_) {                                                                                            \
            float t_[SMALL_LANES] = {0};                                                                               \
            for (int j_ = 0; j_ < w; j_++) t_[j_] = init_[j_];                                                         \
            memcpy(&(acc), t_, sizeof(acc));                                                                           \
        }                                                                                                              \
    } while (0)
    /* C's row r, columns j0..j0+w-1 = the first w lanes of acc */
#define SMALL_STORE(acc, r)                                                                                            \
    do {                                                                                                               \
        float *c_ = C + (size_t)(r)*n + j0;                                                                            \
        if (w == SMALL_LANES) {                                                                                        \
            memcpy(c_, &(acc), sizeof(acc));                                                                           \
        } else {                                                                                                       \
            float t_[SMALL_LANES];                                                                                     \
            memcpy(t_, &(acc), sizeof(acc));                                                                           \
            for (int j_ = 0; j_ < w; j_++) c_[j_] = t_[j_];                                                            \
        }                                                                                                              \
    } while (0)
    for (int j0 = 0; j0 < n; j0 += SMALL_LANES) {
        int w = n - j0 < SMALL_LANES ? n - j0 : SMALL_LANES;
        const float *bp = panel; /* (k, 8) */
        if (!transposed && n == SMALL_LANES) {
            bp = B; /* already (k, 8) and contiguous */
        } else {
            for (int p = 0; p < k; p++)
                for (int j = 0; j < SMALL_LANES; j++)
                    panel[p * SMALL_LANES + j] = j >= w       ? 0.0f
                                                 : transposed ? B[(size_t)(j0 + j) * k + p]
                                                              : B[(size_t)p * n + j0 + j];
        }
        /* rows four at a time: four independent chains of adds, where one
         * row alone waits on each add's latency */
        int i = 0;
        for (; i + 4 <= m; i += 4) {
            small_vec acc0, acc1, acc2, acc3;
            SMALL_LOAD(acc0, i);
            SMALL_LOAD(acc1, i + 1);
            SMALL_LOAD(acc2, i + 2);
            SMALL_LOAD(acc3, i + 3);
            const float *restrict a = A + (size_t)i * k; /* (4, k) */
            for (int p = 0; p < k; p++) {
                small_vec b;
                memcpy(&b, bp + (size_t)p * SMALL_LANES, sizeof b);
                SMALL_MADD(acc0, a[p], b);
                SMALL_MADD(acc1, a[k + p], b);
                SMALL_MADD(acc2, a[2 * k + p], b);
                SMALL_MADD(acc3, a[3 * k + p], b);
            }
            SMALL_STORE(acc0, i);
            SMALL_STORE(acc1, i + 1);
            SMALL_STORE(acc2, i + 2);
            SMALL_STORE(acc3, i + 3);
        }
        for (; i < m; i++) {
            small_vec acc;
            SMALL_LOAD(acc, i);
            const float *restrict a = A + (size_t)i * k; /* (k) */
            for (int p = 0; p < k; p++) {
                small_vec b;
                memcpy(&b, bp + (size_t)p * SMALL_LANES, sizeof b);
                SMALL_MADD(acc, a[p], b);
            }
            SMALL_STORE(acc, i);
        }
    }
#undef SMALL_LOAD
#undef SMALL_STORE
}

/* C (m, n) = bias + A (m, k) · B (k, n), or · Bᵀ with B (n, k) when
 * transposed; bias NULL: zeros, C_ACCUMULATE: C += A · B. */
KERNEL_DISPATCH static void gemm_product(float *restrict C, const float *restrict A, const float *restrict B,
                                         const float *bias, int transposed, int m, int k, int n)
{
    if (gemm_is_small(m, k, n)) {
        int accumulate = bias == C_ACCUMULATE;
        gemm_small(C, A, B, accumulate ? NULL : bias, accumulate, transposed, m, k, n);
        return;
    }
    gemm_block(C, A, B, bias, transposed, k, n, 0, m, 0, n, NULL, NULL);
}

/* A product with few columns and many rows (a head's weights · V_h with
 * d_v = 8) would fill a quarter of even a narrow panel. Computed transposed,
 * Cᵀ (n, m) = Bᵀ (n, k) · Aᵀ, A's rows become the panel's columns: the
 * products and the order of each sum are unchanged, so are the bits. Returns
 * 0, or -1 (nothing written) when there is no memory for the two transposes. */
static int matmul_transposed(float *restrict C, const float *restrict A, const float *restrict B,
                             const float *restrict bias, int m, int k, int n)
{
    float *bt = calloc((size_t)n * ((size_t)k + (size_t)m), sizeof(float)); /* Bᵀ (n, k), then Cᵀ (n, m) */
    if (!bt) return -1;
    float *ct = bt + (size_t)n * k;
    for (int p = 0; p < k; p++)
        for (int d = 0; d < n; d++) bt[(size_t)d * k + p] = B[(size_t)p * n + d];
    for (int d = 0; d < n; d++)
        for (int i = 0; i < m; i++) ct[(size_t)d * m + i] = bias ? bias[d] : 0.0f;
    gemm_product(ct, bt, A, C_ACCUMULATE, 1, n, k, m); /* Cᵀ += Bᵀ · Aᵀ, A read as (m, k) rows */
    for (int i = 0; i < m; i++)
        for (int d = 0; d < n; d++) C[(size_t)i * n + d] = ct[(size_t)d * m + i];
    free(bt);
    return 0;
}

/* attn_matmul's path for few columns and many rows (matmul_transposed). */
static int matmul_goes_transposed(int m, int k, int n)
{
    return n < NR_NARROW && m >= NR_WIDE && (size_t)m * (size_t)k * (size_t)n > GEMM_SMALL;
}

void attn_matmul(float *restrict C, const float *restrict A, const float *restrict B, const float *restrict bias, int m,
                 int k, int n)
{
    if (gemm_is_small(m, k, n)) {
        gemm_small(C, A, B, bias, 0, 0, m, k, n);
        return;
    }
    if (matmul_goes_transposed(m, k, n) && matmul_transposed(C, A, B, bias, m, k, n) == 0) return;
    gemm_product(C, A, B, bias, 0, m, k, n);
}

void attn_matmul_nt(float *restrict C, const float *restrict A, const float *restrict B, int m, int k, int n)
{
    if (gemm_is_small(m, k, n)) {
        gemm_small(C, A, B, NULL, 0, 1, m, k, n);
        return;
    }
    gemm_product(C, A, B, NULL, 1, m, k, n);
}

int attn__matmul_panelled(int m, int k, int n)
{
    return !gemm_is_small(m, k, n) && !matmul_goes_transposed(m, k, n);
}

/* Rows [i0, i1) and columns [j0, j1) of attn_matmul(C, A, B, bias, m, k, n):
 * the same sums in the same order, so the same bits. Threads splitting a
 * product by columns each pack only their own panels of B. */
KERNEL_DISPATCH static void gemm_part(float *restrict C, const float *restrict A, const float *restrict B,
                                      const float *restrict bias, int k, int n, int i0, int i1, int j0, int j1)
{
    gemm_block(C, A, B, bias, 0, k, n, i0, i1, j0, j1, NULL, NULL);
}

void attn__matmul_part(float *C, const float *A, const float *B, const float *bias, int m, int k, int n, int i0, int i1,
                       int j0, int j1)
{
    assert(0 <= i0 && i0 <= i1 && i1 <= m && 0 <= j0 && j0 <= j1 && j1 <= n);
    (void)m;
    if (i0 < i1 && j0 < j1) gemm_part(C, A, B, bias, k, n, i0, i1, j0, j1);
}

/* ---- B packed once, for many products ---------------------------------------
 *
 * A head's blocks of rows all multiply by the same K_hᵀ and V_h, and every
 * block of MC rows of a projection by the same weights: B packed whole once
 * instead of once per block of rows. */

/* (The same count when every panel is narrow: n rounded up to NR_NARROW.) */
size_t attn__packed_floats(int k, int n)
{
    int wide = n - n % NR_WIDE, narrow = (n - wide + NR_NARROW - 1) / NR_NARROW * NR_NARROW;
    return (size_t)(wide + narrow) * (size_t)k;
}

/* Panels [jfirst, jend) of B packed whole: those that start there, cut as
 * gemm_block cuts them (wide ones, then narrow; all narrow without AVX-512). */
KERNEL_DISPATCH static void pack_panels(float *restrict dst, const float *restrict B, int transposed, int k, int n,
                                        int jfirst, int jend)
{
    int wide = KERNEL_WIDE_REGISTERS() ? n - n % NR_WIDE : 0;
    for (int jp = 0; jp < n && jp < jend;) {
        int nr = jp < wide ? NR_WIDE : NR_NARROW, ncols = n - jp < nr ? n - jp : nr;
        if (jp >= jfirst) pack_panel(dst + packed_at(jp, k), B, transposed, k, n, 0, k, jp, ncols, nr);
        jp += nr;
    }
}

void attn__pack_panels(float *dst, const float *B, int transposed, int k, int n, int jfirst, int jend)
{
    pack_panels(dst, B, transposed, k, n, jfirst, jend);
}

KERNEL_DISPATCH static void gemm_packed(float *restrict C, const float *restrict A, const float *restrict packed,
                                        const float *bias, int k, int n, int i0, int i1)
{
    gemm_block(C, A, NULL, bias, 0, k, n, i0, i1, 0, n, packed, NULL);
}

void attn__matmul_packed(float *C, const float *A, const float *packed, const float *bias, int m, int k, int n, int i0,
                         int i1)
{
    assert(0 <= i0 && i0 <= i1 && i1 <= m);
    (void)m;
    if (i0 < i1) gemm_packed(C, A, packed, bias, k, n, i0, i1);
}

/* S (rows, nk) = Q (rows, dk) · Kᵀ, K (nk, dk) read transposed, or from
 * packK (K packed by attn__pack_panels; then K is unused), with sc (or
 * NULL). */
KERNEL_DISPATCH static void gemm_scores(float *restrict S, const float *restrict Q, const float *restrict K,
                                        const float *restrict packK, int dk, int nk, int rows, Scaled *sc)
{
    gemm_block(S, Q, K, NULL, 1, dk, nk, 0, rows, 0, nk, packK, sc);
}

const float *attn__scores(float *S, float *scaled, float *copy, float *row_max, int *maxed, const float *Q,
                          const float *K, const float *packK, int rows, int dk, int nk, float divisor, unsigned *bits_s,
                          unsigned *bits_a)
{
    *maxed = 0;
    /* a divisor of 2^(e-1) (frexpf's mantissa 1/2), whose reciprocal 2^(1-e)
     * is a float: x · 2^(1-e) and x / 2^(e-1) are the same real number, so
     * they round to the same float */
    int e = 0;
    int exact = divisor >= 0x1p-126f && divisor <= 0x1p126f && frexpf(divisor, &e) == 0.5f;
    if (!exact || (!packK && gemm_is_small(rows, dk, nk))) {
        if (packK)
            gemm_scores(S, Q, K, packK, dk, nk, rows, NULL);
        else
            attn_matmul_nt(S, Q, K, rows, dk, nk);
        attn__divide_scan(scaled, S, (size_t)rows * (size_t)nk, divisor, bits_s, bits_a);
        return scaled;
    }
    Scaled sc = {.c2 = scaled, .copy = copy, .scale = ldexpf(1.0f, 1 - e)};
#if KERNEL_STREAMS
    /* whole cache lines: every block's rows start on one (64-byte steps,
     * rows of a whole number of lines), and no one reads them here but
     * from copy */
    sc.stream = copy && (uintptr_t)S % 64 == 0 && (uintptr_t)scaled % 64 == 0 && nk % 16 == 0;
    /* the rows' maxima, where every block is a streamed one (whole blocks
     * of rows and of columns, and AVX-512: wide panels) */
    if (sc.stream && row_max && rows % MR_WIDE == 0 && nk % NR_WIDE == 0 && KERNEL_WIDE_REGISTERS()) {
        for (size_t i = 0; i < 16 * (size_t)rows; i++) row_max[i] = -INFINITY;
        sc.row_max = row_max;
    }
#else
    (void)row_max; /* without streamed stores the softmax finds the rows' maxima itself */
#endif
    gemm_scores(S, Q, K, packK, dk, nk, rows, &sc);
#if KERNEL_STREAMS
    /* non-temporal stores are ordered by nothing else: before anyone may
     * read them (the trace is published to other threads later) */
    if (sc.stream) _mm_sfence();
#endif
    int finite = 1;
    for (int j = 0; j < NR_WIDE; j++) finite &= sc.check[j] == 0.0f;
    *bits_s = *bits_a = finite ? 0u : ATTN_SCAN_PENDING;
    *maxed = sc.row_max && finite;
    return copy ? copy : scaled;
}

/* ---- the row softmax -------------------------------------------------------
 *
 * Rows of ordinary numbers (finite, or -inf for blocked cells) take the fast
 * path: a lane-wise maximum, e^(x - max) by exp_nonpositive_v below (within
 * 2 ulp of e^x), a sum over float lanes, one multiply per cell. Rows
 * holding +inf or NaN, which only an overflowed score produces, and rows
 * whose keys are all blocked go through attn_softmax_rows_reference. */

/* Below this e^x is under 1.7e-38, where float turns subnormal; such a weight
 * is set to exactly 0, as a blocked cell's (-inf) is. */
#define EXP_LOWEST (-87.0f)

/* 16 floats: GCC/Clang vector extensions, one AVX-512 register in that
 * clone, two or four narrower ones in the others (the same arithmetic, lane
 * by lane, so the same bits). Written out rather than left to the
 * auto-vectoriser, whose version of the loops over lane arrays keeps the
 * horizontal reductions in scalar registers. */
typedef float vf16 __attribute__((vector_size(16 * sizeof(float))));
/* (Compilers warn that passing such a vector by value changes the ABI where
 * AVX-512 is off, as in the baseline clone: every function taking one is
 * always_inline, so no call, and no ABI, is ever involved. Clang obeys the
 * pragma below, wherever the file is built (tests/fuzz.cmake builds it
 * too); GCC, which prints a note even so, gets -Wno-psabi from
 * src/engine/CMakeLists.txt.) */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#endif
typedef int32_t vi16 __attribute__((vector_size(16 * sizeof(int32_t))));

KERNEL_INLINE vf16 vf16_load(const float *p)
{
    vf16 v;
    memcpy(&v, p, sizeof v);
    return v;
}
KERNEL_INLINE void vf16_store(float *p, vf16 v)
{
    memcpy(p, &v, sizeof v);
}
/* The sign bit set in the lanes that hold a NaN (|x|'s bits above +inf's),
 * clear elsewhere. Arithmetic on the bits, since GCC 12 turns a vector
 * comparison whose result is kept (x != x) into a scalar one per lane in
 * the AVX-512F clone. */
KERNEL_INLINE vi16 nan_sign_v(vf16 x)
{
    return ~(((vi16)x & 0x7fffffff) - 0x7f800001);
}
KERNEL_INLINE vf16 vf16_splat(float x)
{
    return (vf16){0} + x;
}
/* a > b, lane by lane: all bits set where true. GCC 12 compares vectors of
 * 16 floats one lane at a time, with branches, where the clone's registers
 * hold 8 (AVX2: softmax took 2.7 ns per cell instead of 1.2); there, the
 * two halves are compared as vectors of 8. `wide`: KERNEL_WIDE_REGISTERS(),
 * a constant in each of softmax_rows's two copies of the code below. */
typedef float vf8 __attribute__((vector_size(8 * sizeof(float))));
typedef int32_t vi8 __attribute__((vector_size(8 * sizeof(int32_t))));
#define VF8_LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define VF8_HI(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
KERNEL_INLINE vi16 vf16_gt(vf16 a, vf16 b, const int wide)
{
    if (wide) return a > b;
    vi8 g0 = VF8_LO(a) > VF8_LO(b), g1 = VF8_HI(a) > VF8_HI(b);
    return __builtin_shufflevector(g0, g1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
/* a > b ? a : b, lane by lane */
KERNEL_INLINE vf16 vf16_max(vf16 a, vf16 b, const int wide)
{
    vi16 gt = vf16_gt(a, b, wide);
    return (vf16)((gt & (vi16)a) | (~gt & (vi16)b));
}

/* The 16 lanes of a folded into one by halves: lane l with lane l + 8,
 * then l + 4, l + 2, l + 1, by fold (the sum, or the maximum as vf16_max
 * takes it). Without AVX-512, on vectors of 8 from the first step, as GCC
 * 12 moves the lanes of a 16-float shuffle one by one there; the same
 * operations, in the same order, either way. */
KERNEL_INLINE vf8 vf8_max(vf8 a, vf8 b)
{
    vi8 gt = a > b;
    return (vf8)((gt & (vi8)a) | (~gt & (vi8)b));
}
KERNEL_INLINE float vf16_fold_sum(vf16 a, const int wide)
{
    if (wide) {
        a += __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
        a += __builtin_shufflevector(a, a, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
        a += __builtin_shufflevector(a, a, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
        a += __builtin_shufflevector(a, a, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
        return a[0];
    }
    vf8 h = VF8_LO(a) + VF8_HI(a);
    h += __builtin_shufflevector(h, h, 4, 5, 6, 7, 0, 1, 2, 3);
    h += __builtin_shufflevector(h, h, 2, 3, 0, 1, 2, 3, 0, 1);
    h += __builtin_shufflevector(h, h, 1, 0, 1, 0, 1, 0, 1, 0);
    return h[0];
}
KERNEL_INLINE float vf16_fold_max(vf16 m, const int wide)
{
    if (wide) {
        m = vf16_max(m, __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7), wide);
        m = vf16_max(m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3), wide);
        m = vf16_max(m, __builtin_shufflevector(m, m, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1), wide);
        m = vf16_max(m, __builtin_shufflevector(m, m, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0), wide);
        return m[0];
    }
    vf8 h = vf8_max(VF8_LO(m), VF8_HI(m));
    h = vf8_max(h, __builtin_shufflevector(h, h, 4, 5, 6, 7, 0, 1, 2, 3));
    h = vf8_max(h, __builtin_shufflevector(h, h, 2, 3, 0, 1, 2, 3, 0, 1));
    h = vf8_max(h, __builtin_shufflevector(h, h, 1, 0, 1, 0, 1, 0, 1, 0));
    return h[0];
}

/* e^x for EXP_LOWEST ≤ x ≤ 0 on 16 lanes, and 0 for x == EXP_LOWEST (the
 * caller clamps to it). The Cephes method: x = n·ln2 + r with |r| ≤ ln2/2
 * (ln2 split in a high part exact in float and a low part), e^r by its
 * degree-7 minimax polynomial in fused multiply-adds, 2^n built in the
 * exponent bits. Within 2 ulp of exp() in double over [-87, 0]
 * (tests/test_perf_paths.c checks it). Written as a loop over the lanes,
 * not on the vector: GCC vectorises fmaf only in a loop, into the clone's
 * FMA instructions (in the baseline clone, libm's fmaf: the same bits), and
 * only a loop without the clamp in it. */
KERNEL_INLINE vf16 exp_nonpositive_v(vf16 x)
{
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    float in[16], out[16];
    memcpy(in, &x, sizeof in);
    for (int l = 0; l < 16; l++) {
        float d = in[l];
        int32_t n = (int32_t)(d * log2e - 0.5f); /* rounded to nearest (d ≤ 0): n ∈ [-126, 0] */
        float nf = (float)n;
        float r = KERNEL_FMA(nf, -ln2_hi, d);
        r = KERNEL_FMA(nf, -ln2_lo, r);
        float p = 1.9875691500e-4f;
        p = KERNEL_FMA(p, r, 1.3981999507e-3f);
        p = KERNEL_FMA(p, r, 8.3334519073e-3f);
        p = KERNEL_FMA(p, r, 4.1665795894e-2f);
        p = KERNEL_FMA(p, r, 1.6666665459e-1f);
        p = KERNEL_FMA(p, r, 5.0000001201e-1f);
        p = KERNEL_FMA(p, r * r, r) + 1.0f;
        int32_t bits = EXP_LOWEST < d ? (n + 127) << 23 : 0; /* 2^n, or 0 at the clamp */
        float two_n;
        memcpy(&two_n, &bits, sizeof two_n);
        out[l] = p * two_n;
    }
    vf16 y;
    memcpy(&y, out, sizeof y);
    return y;
}

/* Softmax of an ordinary row (only finite and -inf values, at least one
 * finite) in two halves, so that softmax_rows can run each half over a block
 * of rows: one row's work is a chain of dependent steps (maximum, e^, sum,
 * 1/sum, scaling) about 200 cycles long at 64 cells, and rows taken one after
 * the other waited on it; a block's rows are independent, so the core
 * overlaps them.
 *
 * softmax_row_exp: yr = e^(x - mx), x - mx clamped at EXP_LOWEST (blocked
 * -inf cells included) and 0 at the clamp; the maximum is subtracted first so
 * that logits of 1e4 do not overflow: e^(x - mx) ≤ 1. Puts in *lanes the partial
 * sums of the whole 16-cell vectors, in 64 float lanes (lane l takes the
 * cells j ≡ l mod 64, or mod 16 past the last whole 64) added down to 16, as
 * PyTorch sums them, rather than in double cell by cell, a conversion per
 * cell. */
KERNEL_INLINE void softmax_row_exp(float *restrict yr, const float *restrict xr, int cols, float mx, vf16 *lanes,
                                   const int wide)
{
    const vf16 vmx = vf16_splat(mx), lowest = vf16_splat(EXP_LOWEST);
    vf16 acc[4] = {{0}, {0}, {0}, {0}};
    int j = 0;
    for (; j + 64 <= cols; j += 64) {
        vf16 e[4];
        for (int k = 0; k < 4; k++) e[k] = exp_nonpositive_v(vf16_max(vf16_load(xr + j + 16 * k) - vmx, lowest, wide));
        for (int k = 0; k < 4; k++) {
            vf16_store(yr + j + 16 * k, e[k]);
            acc[k] += e[k];
        }
    }
    for (; j + 16 <= cols; j += 16) {
        vf16 e = exp_nonpositive_v(vf16_max(vf16_load(xr + j) - vmx, lowest, wide));
        vf16_store(yr + j, e);
        acc[0] += e;
    }
    if (j < cols) { /* the last cols - j < 16 cells, through a padded vector */
        float tail[16];
        for (int l = 0; l < 16; l++) tail[l] = j + l < cols ? xr[j + l] : mx; /* padding: e^0, dropped */
        vf16_store(tail, exp_nonpositive_v(vf16_max(vf16_load(tail) - vmx, lowest, wide)));
        for (int l = 0; j + l < cols; l++) yr[j + l] = tail[l];
    }
    *lanes = (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* The sum of yr from the lanes softmax_row_exp put in *lanes: folded in halves,
 * then the last cols % 16 cells one by one, in double. A loop of its own
 * over the rows of a block: the folds are a chain of dependent steps, which
 * at the end of each row's e^x loop the core could not overlap with
 * anything. */
KERNEL_INLINE double softmax_row_sum(const vf16 *lanes, const float *restrict yr, int cols, const int wide)
{
    double sum = (double)vf16_fold_sum(*lanes, wide);
    for (int j = cols - cols % 16; j < cols; j++) sum += (double)yr[j];
    return sum;
}

/* softmax_row_scale: yr *= f, 1/sum rounded to float: one multiply per
 * cell, within 1 ulp of yr / sum. */
KERNEL_INLINE void softmax_row_scale(float *restrict yr, int cols, float f)
{
    const vf16 vf = vf16_splat(f);
    int j = 0;
    for (; j + 16 <= cols; j += 16) vf16_store(yr + j, vf16_load(yr + j) * vf);
    for (; j < cols; j++) yr[j] = yr[j] * f;
}

/* The row's maximum, and whether the row is ordinary (the fast path's case,
 * softmax_row_exp's): no NaN, no +inf, at least one finite cell (-inf cells are blocked
 * ones). With no NaN the maximum says the rest: +inf, or -inf for a row of
 * only -inf, is not finite. One pass. */
KERNEL_INLINE int row_max_ordinary(const float *restrict xr, int cols, float *mx_out, const int wide)
{
    float mx = -INFINITY;
    int j = 0, nan = 0;
    if (cols >= 16) {
        vf16 m = vf16_splat(-INFINITY), m1 = m, m2 = m, m3 = m; /* four chains */
        vi16 bad = {0};
        for (; j + 64 <= cols; j += 64) {
            vf16 a = vf16_load(xr + j), b = vf16_load(xr + j + 16), c = vf16_load(xr + j + 32),
                 d = vf16_load(xr + j + 48);
            m = vf16_max(a, m, wide);
            m1 = vf16_max(b, m1, wide);
            m2 = vf16_max(c, m2, wide);
            m3 = vf16_max(d, m3, wide);
            bad |= nan_sign_v(a) | nan_sign_v(b) | nan_sign_v(c) | nan_sign_v(d);
        }
        for (; j + 16 <= cols; j += 16) {
            vf16 x = vf16_load(xr + j);
            m = vf16_max(x, m, wide);
            bad |= nan_sign_v(x);
        }
        mx = vf16_fold_max(vf16_max(vf16_max(m, m1, wide), vf16_max(m2, m3, wide), wide), wide);
        vi8 bad8 = VF8_LO(bad) | VF8_HI(bad); /* a NaN's lane has its sign bit set */
        for (int l = 0; l < 8; l++) nan |= bad8[l] < 0;
    }
    for (; j < cols; j++) {
        mx = xr[j] > mx ? xr[j] : mx;
        nan |= xr[j] != xr[j];
    }
    *mx_out = mx;
    return !nan && isfinite(mx);
}

/* Rows of at most SMALL_ROW cells (a lesson's 5 tokens) are too short for
 * the vector loops of softmax_row_ordinary, whose remainder loops then do
 * all the work one cell at a time. They go in blocks of SMALL_BLOCK rows:
 * per row the maximum and x - max (clamped); then e^x over the whole block
 * in 16-lane chunks; then per row the sum, in order as above, and the
 * normalisation. The same operations on each cell: the same bits. */
enum { SMALL_ROW = 16, SMALL_BLOCK = 64, EXP_CHUNK = 16 };

/* e^x in place on n floats, n rounded up to whole chunks (the caller's
 * buffer has room), so that the loop vectorises at -O2 too. */
KERNEL_INLINE void exp_chunks(float *restrict z, size_t n)
{
    for (size_t c = 0; c < (n + EXP_CHUNK - 1) / EXP_CHUNK; c++)
        vf16_store(z + c * EXP_CHUNK, exp_nonpositive_v(vf16_load(z + c * EXP_CHUNK)));
}

/* One block of rows of at most SMALL_ROW cells. Rows that are not ordinary
 * (+inf or NaN, or every cell blocked) are left for the caller, which
 * computes them with attn_softmax_rows_reference; ordinary[i] says which are. */
KERNEL_INLINE void softmax_block_small(float *restrict y, const float *restrict x, int rows, int cols,
                                       unsigned char *restrict ordinary, const int wide)
{
    _Alignas(64) float z[SMALL_BLOCK * SMALL_ROW + EXP_CHUNK]; /* (rows, cols) x - max, then e^ of it */
    int nz = rows * cols;
    for (int i = 0; i < rows; i++) {
        const float *xr = x + (size_t)i * cols;
        float mx;
        ordinary[i] = (unsigned char)row_max_ordinary(xr, cols, &mx, wide);
        for (int j = 0; j < cols; j++) {
            float d = xr[j] - mx; /* NaN in a row that is not ordinary: redone by the caller */
            z[i * cols + j] = d > EXP_LOWEST ? d : EXP_LOWEST;
        }
    }
    for (int q = nz; q < nz + EXP_CHUNK; q++) z[q] = EXP_LOWEST; /* the last chunk's padding */
    exp_chunks(z, (size_t)nz);
    for (int i = 0; i < rows; i++) {
        if (!ordinary[i]) continue;
        const float *e = z + i * cols;
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += (double)e[j];
        double inv = 1.0 / sum; /* sum ≥ 1: the maximum's own term is e^0 */
        float *yr = y + (size_t)i * cols;
        for (int j = 0; j < cols; j++) yr[j] = (float)((double)e[j] * inv);
    }
}

/* The last pass over a row in the stream mode of softmax_rows_for: w *= f
 * (as softmax_row_scale), and the row written to y past the cache. y on 64
 * bytes, cols a multiple of 16. */
#if KERNEL_STREAMS
__attribute__((target("avx512f"), noinline)) static void softmax_row_scale_stream(float *restrict y, float *restrict w,
                                                                                  int cols, float f)
{
    const __m512 vf = _mm512_set1_ps(f);
    for (int j = 0; j < cols; j += 16) {
        __m512 v = _mm512_mul_ps(_mm512_loadu_ps(w + j), vf);
        _mm512_storeu_ps(w + j, v);
        _mm512_stream_ps(y + j, v);
    }
}
#endif

/* y = softmax of x's rows. With copy (stream mode, AVX-512 only: y on 64
 * bytes, cols a multiple of 16), each block of rows is worked out in copy
 * and written to y past the cache as its last pass makes it, copy keeping
 * the values for whoever reads them next. */
KERNEL_INLINE void softmax_rows_for(float *restrict y, float *restrict copy, unsigned char *restrict flags,
                                    const float *restrict x, const float *restrict row_max, int rows, int cols,
                                    const int wide)
{
    if (cols <= SMALL_ROW) {
        unsigned char ordinary[SMALL_BLOCK];
        for (int i0 = 0; i0 < rows; i0 += SMALL_BLOCK) {
            int n = rows - i0 < SMALL_BLOCK ? rows - i0 : SMALL_BLOCK;
            softmax_block_small(y + (size_t)i0 * cols, x + (size_t)i0 * cols, n, cols, ordinary, wide);
            for (int i = 0; i < n; i++)
                if (!ordinary[i])
                    attn_softmax_rows_reference(y + (size_t)(i0 + i) * cols, flags ? flags + i0 + i : NULL,
                                                x + (size_t)(i0 + i) * cols, 1, cols);
        }
        return;
    }
    /* blocks of rows of at most ROW_BLOCK_FLOATS cells (L1-resident), each
     * half of the work done for every row of the block in turn */
    enum { ROW_BLOCK_FLOATS = 4096, ROW_BLOCK_MAX = ROW_BLOCK_FLOATS / (SMALL_ROW + 1) };
    int block = cols >= ROW_BLOCK_FLOATS / 2 ? 1 : ROW_BLOCK_FLOATS / cols;
    float mx[ROW_BLOCK_MAX], inv[ROW_BLOCK_MAX];
    vf16 lanes[ROW_BLOCK_MAX];
    unsigned char ordinary[ROW_BLOCK_MAX];
    for (int i0 = 0; i0 < rows; i0 += block) {
        int n = rows - i0 < block ? rows - i0 : block;
        const float *xb = x + (size_t)i0 * cols; /* (n, cols) */
        float *yb = y + (size_t)i0 * cols;
        float *wb = copy ? copy + (size_t)i0 * cols : yb; /* where the block is worked out */
        for (int i = 0; i < n; i++) {
            if (row_max) { /* every value finite: every row ordinary */
                mx[i] = vf16_fold_max(vf16_load(row_max + 16 * (size_t)(i0 + i)), wide);
                ordinary[i] = 1;
            } else {
                ordinary[i] = (unsigned char)row_max_ordinary(xb + (size_t)i * cols, cols, &mx[i], wide);
            }
        }
        for (int i = 0; i < n; i++)
            if (ordinary[i])
                softmax_row_exp(wb + (size_t)i * cols, xb + (size_t)i * cols, cols, mx[i], &lanes[i], wide);
        for (int i = 0; i < n; i++)
            if (ordinary[i]) inv[i] = (float)(1.0 / softmax_row_sum(&lanes[i], wb + (size_t)i * cols, cols, wide));
        for (int i = 0; i < n; i++) {
            float *yr = yb + (size_t)i * cols, *wr = wb + (size_t)i * cols;
            if (!ordinary[i]) {
                attn_softmax_rows_reference(yr, flags ? flags + i0 + i : NULL, xb + (size_t)i * cols, 1, cols);
                if (copy) memcpy(wr, yr, sizeof(float) * (size_t)cols);
                continue;
            }
            /* sum ≥ 1: the maximum's own e^0 */
#if KERNEL_STREAMS
            if (copy) {
                softmax_row_scale_stream(yr, wr, cols, inv[i]);
                continue;
            }
#endif
            softmax_row_scale(yr, cols, inv[i]);
        }
    }
}

/* The rows' softmax, compiled once for each value of `wide`, so that neither
 * tests it in its loops. */
KERNEL_DISPATCH static void softmax_rows(float *restrict y, float *restrict copy, unsigned char *restrict flags,
                                         const float *restrict x, const float *restrict row_max, int rows, int cols)
{
    if (KERNEL_WIDE_REGISTERS())
        softmax_rows_for(y, copy, flags, x, row_max, rows, cols, 1);
    else
        softmax_rows_for(y, copy, flags, x, row_max, rows, cols, 0);
}

void attn_softmax_rows(float *y, unsigned char *flags, const float *x, int rows, int cols)
{
    softmax_rows(y, NULL, flags, x, NULL, rows, cols);
}

const float *attn__softmax_block(float *y, float *copy, unsigned char *flags, const float *x, const float *row_max,
                                 int rows, int cols)
{
    if (cols <= SMALL_ROW) row_max = NULL; /* those rows take another path */
#if KERNEL_STREAMS
    /* the wide blocks run exactly where the CPU has AVX-512 */
    if (copy && KERNEL_WIDE_REGISTERS() && (uintptr_t)y % 64 == 0 && cols % 16 == 0 && cols > SMALL_ROW) {
        softmax_rows(y, copy, flags, x, row_max, rows, cols);
        _mm_sfence(); /* the stores past the cache, before anyone may read them */
        return copy;
    }
#endif
    (void)copy;
    softmax_rows(y, NULL, flags, x, row_max, rows, cols);
    return y;
}

/* ---- copies into the trace ---------------------------------------------------- */

/* Copies of at least this many floats (256 KiB) go past the cache: the
 * forward does not read them back (it reads the caller's inputs), and an
 * ordinary store that misses first reads its line from memory. */
#define COPY_STREAM_FLOATS ((size_t)64 << 10)

void attn__copy_floats(float *restrict dst, const float *restrict src, size_t n)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (n >= COPY_STREAM_FLOATS) {
        /* SSE2's non-temporal stores, which every x86-64 CPU has, on 16
         * bytes at a time: the CPU merges the four of each line */
        size_t i = 0;
        for (; i < n && (uintptr_t)(dst + i) % 16 != 0; i++) dst[i] = src[i];
        for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
        for (; i < n; i++) dst[i] = src[i];
        _mm_sfence(); /* before anyone may read them */
        return;
    }
#endif
    memcpy(dst, src, sizeof(float) * n);
}

/* ---- the scan for non-finite values ------------------------------------------ */

/* Branch-free, so that it vectorises (and in the clones, 16 floats at a time):
 * attn_trace_create's check reads the whole trace with it. */
/* The ATTN_SCAN_* bits for what a scan saw. */
static unsigned scan_bits(int any_pinf_nan, int any_ninf)
{
    return (any_pinf_nan ? ATTN_SCAN_PINF_NAN : 0u) | (any_ninf ? ATTN_SCAN_NINF : 0u);
}

KERNEL_DISPATCH static unsigned nonfinite_bits(const float *restrict x, size_t n)
{
    int any_pinf_nan = 0, any_ninf = 0;
    for (size_t i = 0; i < n; i++) {
        any_pinf_nan |= !(x[i] < INFINITY);
        any_ninf |= x[i] == -INFINITY;
    }
    return scan_bits(any_pinf_nan, any_ninf);
}

unsigned attn__nonfinite_bits(const float *x, size_t n)
{
    return nonfinite_bits(x, n);
}

/* y = x / divisor, and the scans of x and of y, in one pass: at n = 2048 a
 * head's scores are 16 MiB, and three separate passes (the division and two
 * scans) read them from memory three times. */
KERNEL_DISPATCH static void divide_scan(float *restrict y, const float *restrict x, size_t n, float divisor,
                                        unsigned *bits_x, unsigned *bits_y)
{
    int x_pinf_nan = 0, x_ninf = 0, y_pinf_nan = 0, y_ninf = 0;
    for (size_t i = 0; i < n; i++) {
        float v = x[i], w = v / divisor;
        y[i] = w;
        x_pinf_nan |= !(v < INFINITY);
        x_ninf |= v == -INFINITY;
        y_pinf_nan |= !(w < INFINITY);
        y_ninf |= w == -INFINITY;
    }
    *bits_x = scan_bits(x_pinf_nan, x_ninf);
    *bits_y = scan_bits(y_pinf_nan, y_ninf);
}

void attn__divide_scan(float *y, const float *x, size_t n, float divisor, unsigned *bits_x, unsigned *bits_y)
{
    divide_scan(y, x, n, divisor, bits_x, bits_y);
}
