/* trace_digest.c: a digest of every step of the fast path's traces, to
 * compare two builds of the engine.
 *
 * tests/engine.cmake builds this program three times: trace_digest with
 * the engine as attnviz ships it (its kernels chosen by the CPU when the
 * program loads: AVX-512, AVX2 or baseline x86-64, each with fused
 * multiply-adds), trace_digest_baseline with the engine built again for
 * baseline x86-64 alone with -DATTN_NO_TARGET_CLONES (its multiply-adds by
 * libm's fmaf), and trace_digest_v3 with the engine built so for x86-64-v3
 * (AVX2 and FMA; it runs only where the CPU has them). The test
 * trace_digest_builds (tests/digest/compare.cmake) runs them and requires
 * the same output: every build computes the same bits, on 1 thread and on 2.
 *
 * Output, one line per step of every trace, then a count:
 *
 *     kernels: x86-64-v4
 *     tiny threads=1 scores_1 3x3 8c1f0e2d9a7b6c54
 *     ...
 *     steps: 1234
 *
 * A step's digest is FNV-1a (attn_fnv1a64_bytes) over its shape, its numbers
 * and its row flags. Exit status 0, or 1 (with a message on stderr) when a
 * trace could not be made.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "test_util.h"

/* One configuration: dot attention (self or cross) or additive, with its
 * mask and scaling. Matrices are generated from the name. */
typedef struct DigestCase {
    const char *name;
    AttnKind attention;
    int cross;
    int n_q, n_k;
    int d_model, heads; /* dot: d_k = d_v = d_model / heads */
    int d_x, d_y, d_a;  /* additive */
    AttnMaskKind mask;
    AttnScaleKind scale;
    float mask_fill; /* 0: -INFINITY */
    int no_biases, no_wo;
    AttnDecode decode; /* the options of today's models */
    int kv_heads;
} DigestCase;

static const DigestCase digest_cases[] = {
    {.name = "tiny", .n_q = 3, .n_k = 3, .d_model = 4, .heads = 2},
    {.name = "lesson-5", .n_q = 5, .n_k = 5, .d_model = 8, .heads = 2, .mask = ATTN_MASK_CAUSAL},
    {.name = "(64,64,8)", .n_q = 64, .n_k = 64, .d_model = 64, .heads = 8},
    {.name = "(64,64,8)-causal", .n_q = 64, .n_k = 64, .d_model = 64, .heads = 8, .mask = ATTN_MASK_CAUSAL},
    /* heads in blocks of rows, V_h not packed (d_v = 8), and packed (d_v = 32) */
    {.name = "(300,16,2)-blocked-causal", .n_q = 300, .n_k = 300, .d_model = 16, .heads = 2, .mask = ATTN_MASK_CAUSAL},
    {.name = "(300,64,2)-blocked-padding",
     .n_q = 300,
     .n_k = 300,
     .d_model = 64,
     .heads = 2,
     .mask = ATTN_MASK_PADDING},
    /* d_k = 64: the scores' product scales and scans them itself (√d_k a
     * power of two); with AVX-512, in blocks of rows whose scores and
     * scaled are written past the cache and whose rows' maxima the softmax
     * starts from (n_k a multiple of 64, 204 rows a block, then 116), and
     * a block's weights likewise; masked; and n_k of no whole cache line */
    {.name = "(320,128,2)-blocked-streamed", .n_q = 320, .n_k = 320, .d_model = 128, .heads = 2},
    {.name = "(320,128,2)-blocked-streamed-causal",
     .n_q = 320,
     .n_k = 320,
     .d_model = 128,
     .heads = 2,
     .mask = ATTN_MASK_CAUSAL},
    {.name = "(330,128,2)-blocked-unaligned", .n_q = 330, .n_k = 330, .d_model = 128, .heads = 2},
    /* remainders of every block; a matrix mask with the seeds' finite fill */
    {.name = "(131,96,12)-matrix-fill",
     .n_q = 131,
     .n_k = 131,
     .d_model = 96,
     .heads = 12,
     .mask = ATTN_MASK_MATRIX,
     .mask_fill = -1e9f,
     .scale = ATTN_SCALE_SQRT_DMODEL},
    {.name = "(67,130,2)-no-wo", .n_q = 67, .n_k = 67, .d_model = 130, .heads = 2, .no_wo = 1, .no_biases = 1},
    /* rows in blocks of 6 (AVX-512), then of 2 and 1; of 3 elsewhere */
    {.name = "(99,64,4)", .n_q = 99, .n_k = 99, .d_model = 64, .heads = 4},
    {.name = "cross-(7,37)", .cross = 1, .n_q = 7, .n_k = 37, .d_model = 24, .heads = 3, .scale = ATTN_SCALE_NONE},
    {.name = "cross-(65,130)", .cross = 1, .n_q = 65, .n_k = 130, .d_model = 64, .heads = 4},
    {.name = "additive-cross",
     .attention = ATTN_ADDITIVE,
     .cross = 1,
     .n_q = 4,
     .n_k = 6,
     .d_x = 5,
     .d_y = 7,
     .d_a = 8,
     .mask = ATTN_MASK_PADDING},
    {.name = "additive-(40,48,32)", .attention = ATTN_ADDITIVE, .n_q = 40, .n_k = 40, .d_x = 48, .d_a = 32},
    /* the options: decoding token by token */
    {.name = "decode-(9,16,2)",
     .n_q = 9,
     .n_k = 9,
     .d_model = 16,
     .heads = 2,
     .mask = ATTN_MASK_CAUSAL,
     .decode = ATTN_DECODE_INCREMENTAL},
    /* grouped K/V heads (W_K and W_V are generated d_model wide; the first kv_heads·d_k columns are read) */
    {.name = "gqa-(24,64,8,2)", .n_q = 24, .n_k = 24, .d_model = 64, .heads = 8, .kv_heads = 2},
    {.name = "mqa-decode-(7,16,4,1)",
     .n_q = 7,
     .n_k = 7,
     .d_model = 16,
     .heads = 4,
     .kv_heads = 1,
     .mask = ATTN_MASK_CAUSAL,
     .decode = ATTN_DECODE_INCREMENTAL},
};
enum { N_DIGEST_CASES = sizeof digest_cases / sizeof digest_cases[0] };

/* n floats uniform in [-scale, scale) from the generator state *seed */
static float *digest_random(uint64_t *seed, size_t n, float scale)
{
    float *p = malloc(sizeof(float) * (n ? n : 1)); /* (n) */
    if (!p) {
        fprintf(stderr, "trace_digest: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = scale * (float)(2.0 * (double)(test_splitmix64(seed) >> 11) / 9007199254740992.0 - 1.0);
    return p;
}

/* Prints the digest of every step of the fast path's trace of case dc on
 * `threads` threads; returns the number of steps. */
static int digest_case(const DigestCase *dc, int threads)
{
    uint64_t seed = attn_fnv1a64_bytes(ATTN_FNV1A64_BASIS, dc->name, strlen(dc->name));
    float *own[12] = {0}; /* every matrix generated below, freed at the end */
    int n_own = 0;
#define GEN(rows, cols, scale) (own[n_own++] = digest_random(&seed, (size_t)(rows) * (size_t)(cols), (scale)))
    AttnConfig c;
    attn_config_init(&c);
    c.attention = dc->attention;
    c.cross = dc->cross;
    c.n_q = dc->n_q;
    c.n_k = dc->n_k;
    c.mask_kind = dc->mask;
    c.scale_kind = dc->scale;
    if (dc->mask_fill != 0.0f) c.mask_fill = dc->mask_fill;
    c.decode = dc->decode;
    c.kv_heads = dc->kv_heads;
    c.threads = threads;
    unsigned char *mask = NULL;
    if (dc->mask == ATTN_MASK_PADDING || dc->mask == ATTN_MASK_MATRIX) {
        size_t n = dc->mask == ATTN_MASK_PADDING ? (size_t)dc->n_k : (size_t)dc->n_q * (size_t)dc->n_k;
        mask = malloc(n); /* (n_k) or (n_q, n_k): 1 attend, 0 blocked */
        if (!mask) exit(1);
        for (size_t i = 0; i < n; i++) mask[i] = (unsigned char)(i % 7 != 3 || i == 0);
        if (dc->mask == ATTN_MASK_MATRIX)
            for (int j = 0; j < dc->n_k; j++) mask[(size_t)1 * dc->n_k + j] = 0; /* query 1 sees nothing */
        c.mask = mask;
    }
    if (dc->attention == ATTN_DOT) {
        int dm = dc->d_model, w = dm; /* heads·d_k = heads·d_v = d_model */
        float ws = 1.0f / sqrtf((float)dm);
        c.d_model = dm;
        c.heads = dc->heads;
        c.d_k = c.d_v = dm / dc->heads;
        c.X = GEN(dc->n_q, dm, 1.0f);
        if (dc->cross) c.Y = GEN(dc->n_k, dm, 1.0f);
        c.W_Q = GEN(dm, w, ws), c.W_K = GEN(dm, w, ws), c.W_V = GEN(dm, w, ws);
        if (!dc->no_wo) c.W_O = GEN(w, dm, ws);
        if (!dc->no_biases) {
            c.b_Q = GEN(1, w, 0.1f), c.b_K = GEN(1, w, 0.1f), c.b_V = GEN(1, w, 0.1f);
            if (!dc->no_wo) c.b_O = GEN(1, dm, 0.1f);
        }
    } else {
        int dy = dc->cross ? dc->d_y : dc->d_x;
        c.d_x = dc->d_x;
        c.d_y = dc->d_y;
        c.d_a = dc->d_a;
        c.X = GEN(dc->n_q, dc->d_x, 1.0f);
        if (dc->cross) c.Y = GEN(dc->n_k, dy, 1.0f);
        c.W_a = GEN(dc->d_x + dy, dc->d_a, 1.0f / sqrtf((float)(dc->d_x + dy)));
        c.b_a = GEN(1, dc->d_a, 0.1f);
        c.v_a = GEN(1, dc->d_a, 1.0f / sqrtf((float)dc->d_a));
    }
#undef GEN
    char err[256];
    AttnTrace *t = attn_trace_create(&c, err, sizeof err);
    if (!t) {
        fprintf(stderr, "trace_digest: %s, %d threads: %s\n", dc->name, threads, err);
        exit(1);
    }
    for (int s = 0; s < t->n_steps; s++) {
        const AttnStep *st = &t->steps[s];
        uint64_t h = attn_fnv1a64_bytes(ATTN_FNV1A64_BASIS, &st->rows, sizeof st->rows);
        h = attn_fnv1a64_bytes(h, &st->cols, sizeof st->cols);
        h = attn_fnv1a64_bytes(h, st->data, sizeof(float) * (size_t)st->rows * (size_t)st->cols);
        if (st->row_flags) h = attn_fnv1a64_bytes(h, st->row_flags, (size_t)st->rows);
        printf("%s threads=%d %s %dx%d %016" PRIx64 "\n", dc->name, threads, st->name, st->rows, st->cols, h);
    }
    int steps = t->n_steps;
    attn_trace_destroy(t);
    for (int i = 0; i < n_own; i++) free(own[i]);
    free(mask);
    return steps;
}

int main(void)
{
#ifdef DIGEST_NEEDS_CPU
    /* an engine built for DIGEST_NEEDS_CPU ("x86-64-v3") runs only where the CPU has it */
    __builtin_cpu_init();
    if (!__builtin_cpu_supports(DIGEST_NEEDS_CPU)) {
        printf("kernels: skipped (this CPU is not %s)\n", DIGEST_NEEDS_CPU);
        return 0;
    }
#endif
    printf("kernels: %s\n", attn_kernels_isa());
    int steps = 0;
    for (int i = 0; i < N_DIGEST_CASES; i++)
        for (int threads = 1; threads <= 2; threads++) steps += digest_case(&digest_cases[i], threads);
    printf("steps: %d\n", steps);
    attn_shutdown();
    return 0;
}
