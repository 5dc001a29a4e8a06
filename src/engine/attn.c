/* attn.c: the trace's layout and the fast forward pass. See attn.h for the
 * conventions.
 *
 * A trace is planned once: plan_dot or plan_additive lists its steps (kind,
 * shape, name, links); one block is allocated for all of them, sized from
 * that list, and the steps are laid out in it. Only then is anything
 * computed, step by step, into the recorded buffers.
 */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE in <sys/mman.h>, for the trace's block */
#include "attn.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "attn_internal.h"

/* What the engine knows of each kind of step: its name in the trace format,
 * narration keys, export file names and --steps, and its ATTN_KIND_* flags. */
static const struct {
    const char *name;
    unsigned flags;
} kinds[] = {
    [ATTN_STEP_INPUT] = {"input", ATTN_KIND_GIVEN},
    [ATTN_STEP_WEIGHT] = {"weight", ATTN_KIND_GIVEN},
    [ATTN_STEP_BIAS] = {"bias", ATTN_KIND_GIVEN},
    [ATTN_STEP_PROJECTION] = {"projection", 0},
    [ATTN_STEP_SPLIT] = {"split", 0},
    [ATTN_STEP_SCORES] = {"scores", 0},
    [ATTN_STEP_SCALED] = {"scaled", ATTN_KIND_KEEPS_FILL},
    [ATTN_STEP_MASKED] = {"masked", ATTN_KIND_ROW_FLAGS | ATTN_KIND_FILLS},
    [ATTN_STEP_SOFTMAX] = {"softmax", ATTN_KIND_ROW_FLAGS},
    [ATTN_STEP_WEIGHTED_SUM] = {"weighted_sum", ATTN_KIND_ROW_FLAGS},
    [ATTN_STEP_CONCAT] = {"concat", 0},
    [ATTN_STEP_OUTPUT] = {"output", 0},
    [ATTN_STEP_ADDITIVE_HIDDEN] = {"additive_hidden", 0},
    [ATTN_STEP_KV_APPEND] = {"kv_append", 0},
    [ATTN_STEP_DECODE_CHECK] = {"decode_check", 0},
    [ATTN_STEP_ROPE_ANGLES] = {"rope_angles", 0},
    [ATTN_STEP_ROPE] = {"rope", 0},
    [ATTN_STEP_POSITIONAL] = {"positional_encoding", 0},
    [ATTN_STEP_ADD_POSITIONAL] = {"add_positional", 0},
    [ATTN_STEP_TILE_SCORES] = {"tile_scores", ATTN_KIND_KEEPS_FILL},
    [ATTN_STEP_TILE_MAX] = {"tile_max", ATTN_KIND_KEEPS_FILL},
    [ATTN_STEP_TILE_RESCALE] = {"tile_rescale", 0},
    [ATTN_STEP_TILE_SUM] = {"tile_sum", 0},
    [ATTN_STEP_TILE_ACCUMULATE] = {"tile_accumulate", 0},
    [ATTN_STEP_TILE_OUTPUT] = {"tile_output", ATTN_KIND_ROW_FLAGS},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == ATTN_STEP_KIND_COUNT,
               "kinds[] must have a row for every AttnStepKind");

const char *attn_step_kind_name(AttnStepKind kind)
{
    assert(kind >= 0 && kind < ATTN_STEP_KIND_COUNT);
    return kinds[kind].name;
}

unsigned attn_step_kind_flags(AttnStepKind kind)
{
    assert(kind >= 0 && kind < ATTN_STEP_KIND_COUNT);
    return kinds[kind].flags;
}

int attn_step_kind_from_name(const char *name)
{
    for (int i = 0; i < ATTN_STEP_KIND_COUNT; i++)
        if (strcmp(kinds[i].name, name) == 0) return i;
    return -1;
}

static const char *const role_names[] = {
    [ATTN_ROLE_X] = "X",
    [ATTN_ROLE_Y] = "Y",
    [ATTN_ROLE_W_Q] = "W_Q",
    [ATTN_ROLE_B_Q] = "b_Q",
    [ATTN_ROLE_W_K] = "W_K",
    [ATTN_ROLE_B_K] = "b_K",
    [ATTN_ROLE_W_V] = "W_V",
    [ATTN_ROLE_B_V] = "b_V",
    [ATTN_ROLE_W_O] = "W_O",
    [ATTN_ROLE_B_O] = "b_O",
    [ATTN_ROLE_Q] = "Q",
    [ATTN_ROLE_K] = "K",
    [ATTN_ROLE_V] = "V",
    [ATTN_ROLE_SCORES] = "scores",
    [ATTN_ROLE_SCALED] = "scaled",
    [ATTN_ROLE_MASKED] = "masked",
    [ATTN_ROLE_WEIGHTS] = "weights",
    [ATTN_ROLE_HEAD] = "head",
    [ATTN_ROLE_CONCAT] = "concat",
    [ATTN_ROLE_OUTPUT] = "output",
    [ATTN_ROLE_W_A] = "W_a",
    [ATTN_ROLE_B_A] = "b_a",
    [ATTN_ROLE_V_A] = "v_a",
    [ATTN_ROLE_HIDDEN] = "hidden",
    [ATTN_ROLE_CONTEXT] = "context",
    [ATTN_ROLE_K_CACHE] = "K_cache",
    [ATTN_ROLE_V_CACHE] = "V_cache",
    [ATTN_ROLE_DECODED] = "decoded",
    [ATTN_ROLE_ANGLES] = "angles",
    [ATTN_ROLE_Q_ROT] = "Q_rot",
    [ATTN_ROLE_K_ROT] = "K_rot",
    [ATTN_ROLE_PE] = "PE",
    [ATTN_ROLE_X_PE] = "X_PE",
    [ATTN_ROLE_BLOCK] = "block",
    [ATTN_ROLE_RUN_MAX] = "m",
    [ATTN_ROLE_RESCALE] = "rescale",
    [ATTN_ROLE_RUN_SUM] = "l",
    [ATTN_ROLE_ACC] = "acc",
    [ATTN_ROLE_TILED] = "tiled",
};
_Static_assert(sizeof role_names / sizeof role_names[0] == ATTN_ROLE_COUNT, "role_names[] must name every AttnRole");

const char *attn_role_name(AttnRole role)
{
    assert(role >= 0 && role < ATTN_ROLE_COUNT);
    return role_names[role];
}

int attn_step_axis_size(const AttnConfig *c, AttnAxis axis, int at)
{
    if (axis == ATTN_AXIS_BLOCK && at > 0)
        return c->n_k - (at - 1) * c->tile < c->tile ? c->n_k - (at - 1) * c->tile : c->tile;
    return axis == ATTN_AXIS_PREFIX && at > 0 ? at : attn_axis_size(c, axis);
}

int attn_role_from_name(const char *name)
{
    for (int i = 0; i < ATTN_ROLE_COUNT; i++)
        if (strcmp(role_names[i], name) == 0) return i;
    return -1;
}

int attn_axis_size(const AttnConfig *c, AttnAxis axis)
{
    int dy = c->cross ? c->d_y : c->d_x;
    switch (axis) {
    case ATTN_AXIS_ONE:
        return 1;
    case ATTN_AXIS_QUERIES:
        return c->n_q;
    case ATTN_AXIS_KEYS:
        return c->n_k;
    case ATTN_AXIS_PAIRS:
        return c->n_q * c->n_k;
    case ATTN_AXIS_MODEL:
        return c->d_model;
    case ATTN_AXIS_DK:
        return c->d_k;
    case ATTN_AXIS_DV:
        return c->d_v;
    case ATTN_AXIS_HEADS_DK:
        return c->heads * c->d_k;
    case ATTN_AXIS_HEADS_DV:
        return c->heads * c->d_v;
    case ATTN_AXIS_DX:
        return c->d_x;
    case ATTN_AXIS_DY:
        return dy;
    case ATTN_AXIS_DXY:
        return c->d_x + dy;
    case ATTN_AXIS_DA:
        return c->d_a;
    case ATTN_AXIS_KV_DK:
        return attn_kv_heads(c) * c->d_k;
    case ATTN_AXIS_KV_DV:
        return attn_kv_heads(c) * c->d_v;
    case ATTN_AXIS_TOKEN:
        return 1;
    case ATTN_AXIS_PREFIX:
        return c->n_k;
    case ATTN_AXIS_DK_PAIRS:
        return c->d_k / 2;
    case ATTN_AXIS_BLOCK:
        return c->tile < c->n_k ? c->tile : c->n_k;
    case ATTN_AXIS_COUNT:
        break;
    }
    assert(!"an AttnAxis");
    return 0;
}

const char *attn_mask_kind_name(AttnMaskKind kind)
{
    static const char *const names[] = {"none", "causal", "padding", "matrix"};
    assert(kind >= 0 && kind <= ATTN_MASK_MATRIX);
    return names[kind];
}

const char *attn_scale_kind_name(AttnScaleKind kind)
{
    static const char *const names[] = {"sqrt_dk", "sqrt_dmodel", "none", "value"};
    assert(kind >= 0 && kind <= ATTN_SCALE_VALUE);
    return names[kind];
}

const char *attn_mask_order_name(AttnMaskOrder order)
{
    static const char *const names[] = {"scale_then_mask", "mask_then_scale"};
    assert(order >= 0 && order <= ATTN_MASK_THEN_SCALE);
    return names[order];
}

const char *attn_decode_name(AttnDecode decode)
{
    static const char *const names[] = {"full", "incremental"};
    assert(decode >= 0 && decode <= ATTN_DECODE_INCREMENTAL);
    return names[decode];
}

const char *attn_positional_name(AttnPositional positional)
{
    static const char *const names[] = {"none", "sinusoidal"};
    assert(positional >= 0 && positional <= ATTN_POSITIONAL_SINUSOIDAL);
    return names[positional];
}

int attn_kv_heads(const AttnConfig *cfg)
{
    return cfg->kv_heads > 0 ? cfg->kv_heads : cfg->heads;
}

int attn_kv_head(const AttnConfig *cfg, int h)
{
    int G = attn_kv_heads(cfg);
    return (h * G + cfg->heads - 1) / cfg->heads;
}

int attn_allowed(const AttnConfig *cfg, int i, int j)
{
    return attn__allowed(cfg, cfg->mask, i, j);
}

void attn_decode_macs(const AttnTrace *trace, AttnDecodeMacs *m)
{
    const AttnConfig *c = &trace->cfg;
    uint64_t H = (uint64_t)c->heads, G = (uint64_t)attn_kv_heads(c);
    uint64_t dm = (uint64_t)c->d_model, dk = (uint64_t)c->d_k, dv = (uint64_t)c->d_v;
    uint64_t qkv = dm * (H * dk + G * dk + G * dv); /* one token's rows of Q, K and V */
    uint64_t out = attn_trace_find_role(trace, ATTN_ROLE_OUTPUT, 0) ? H * dv * dm : 0; /* one token's output row */
    uint64_t pair = H * (dk + dv); /* one query and one key in every head: a score, a term of the weighted sum */
    uint64_t n = (uint64_t)c->n_q;
    m->full = n * (qkv + out) + n * n * pair;
    m->incremental = m->recompute = 0;
    for (uint64_t t = 1; t <= n; t++) {
        m->incremental += qkv + out + t * pair;         /* token t against the t keys of the cache */
        m->recompute += t * (qkv + out) + t * t * pair; /* the forward over tokens 1..t */
    }
}

void attn_config_init(AttnConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->attention = ATTN_DOT;
    cfg->heads = 1;
    cfg->scale_kind = ATTN_SCALE_SQRT_DK;
    cfg->mask_kind = ATTN_MASK_NONE;
    cfg->mask_fill = -INFINITY;
    cfg->threads = 1;
}

float attn_config_divisor(const AttnConfig *cfg)
{
    if (cfg->attention == ATTN_ADDITIVE) return 1.0f;
    switch (cfg->scale_kind) {
    case ATTN_SCALE_SQRT_DK:
        return sqrtf((float)cfg->d_k);
    case ATTN_SCALE_SQRT_DMODEL:
        return sqrtf((float)cfg->d_model);
    case ATTN_SCALE_NONE:
        return 1.0f;
    case ATTN_SCALE_VALUE:
        return cfg->scale_value;
    }
    return 1.0f;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* At most this many heads: a trace then has fewer than 65536 steps, as
 * AttnStep.from's indices allow. */
enum { ATTN_MAX_HEADS = 1024 };

/* The engine's own ceiling on any one size, far above what lessons allow
 * (lesson.h sets the user-facing limits); it keeps every product of two sizes
 * well inside size_t and int. */
#define ATTN_MAX_DIM (1 << 16)

int attn_config_check(const AttnConfig *c, char *err, size_t errlen)
{
    if (c->n_q < 1 || c->n_q > ATTN_MAX_DIM)
        return fail(err, errlen, "n_q must be 1..%d, got %d", ATTN_MAX_DIM, c->n_q);
    if (c->n_k < 1 || c->n_k > ATTN_MAX_DIM)
        return fail(err, errlen, "n_k must be 1..%d, got %d", ATTN_MAX_DIM, c->n_k);
    if (!c->cross && c->n_k != c->n_q)
        return fail(err, errlen, "self-attention needs n_k == n_q, got n_q=%d n_k=%d", c->n_q, c->n_k);
    /* the score matrices and additive attention's (n_q·n_k) × d_a hidden step
     * count their rows in int: n_q·n_k must fit, or the trace would be laid
     * out for a wrapped size and written past its end */
    if ((long long)c->n_q * c->n_k > INT_MAX)
        return fail(err, errlen, "n_q·n_k must be at most %d, got %d·%d", INT_MAX, c->n_q, c->n_k);
    if (!c->X) return fail(err, errlen, "X is missing");
    if (c->cross && !c->Y) return fail(err, errlen, "cross-attention needs Y");
    if (c->mask_kind == ATTN_MASK_PADDING || c->mask_kind == ATTN_MASK_MATRIX) {
        if (!c->mask) return fail(err, errlen, "mask '%s' needs its values", attn_mask_kind_name(c->mask_kind));
    }
    if (isnan(c->mask_fill) || c->mask_fill == INFINITY) return fail(err, errlen, "mask fill must be a number or -inf");
    if (c->mask_order != ATTN_SCALE_THEN_MASK && c->mask_order != ATTN_MASK_THEN_SCALE)
        return fail(err, errlen, "mask order must be scale_then_mask or mask_then_scale, got %d", (int)c->mask_order);
    if (c->decode != ATTN_DECODE_FULL && c->decode != ATTN_DECODE_INCREMENTAL)
        return fail(err, errlen, "decode must be full or incremental, got %d", (int)c->decode);
    if (!(c->rope_base == 0 || (c->rope_base > 1 && isfinite(c->rope_base))))
        return fail(err, errlen, "the RoPE base must be 0 (none) or a finite number > 1, got %g", (double)c->rope_base);
    if (c->positional != ATTN_POSITIONAL_NONE && c->positional != ATTN_POSITIONAL_SINUSOIDAL)
        return fail(err, errlen, "positional must be none or sinusoidal, got %d", (int)c->positional);
    if (c->positional != ATTN_POSITIONAL_NONE) {
        if (c->attention != ATTN_DOT)
            return fail(err, errlen, "the sinusoidal positional encoding needs dot-product attention");
        if (c->cross)
            return fail(err, errlen,
                        "the sinusoidal positional encoding needs self-attention (it adds to X the positions of one "
                        "sequence)");
    }
    if (c->tile < 0) return fail(err, errlen, "tile must be 0 (none) or the keys per block, got %d", c->tile);
    if (c->tile > 0 && c->attention != ATTN_DOT)
        return fail(err, errlen, "the tiled softmax needs dot-product attention");
    if (c->rope_base != 0) {
        if (c->attention != ATTN_DOT) return fail(err, errlen, "RoPE needs dot-product attention");
        if (c->cross)
            return fail(err, errlen,
                        "RoPE needs self-attention (it rotates a query and a key by positions in one sequence)");
    }
    if (c->decode == ATTN_DECODE_INCREMENTAL) {
        if (c->attention != ATTN_DOT) return fail(err, errlen, "incremental decoding needs dot-product attention");
        if (c->cross)
            return fail(err, errlen,
                        "incremental decoding needs self-attention (a decoder attends to the tokens it generated)");
        if (c->mask_kind != ATTN_MASK_CAUSAL)
            return fail(err, errlen,
                        "incremental decoding needs the causal mask (a token sees no token after it), got mask '%s'",
                        attn_mask_kind_name(c->mask_kind));
    }

    if (c->attention == ATTN_ADDITIVE) {
        if (c->d_x < 1 || c->d_x > ATTN_MAX_DIM)
            return fail(err, errlen, "d_x must be 1..%d, got %d", ATTN_MAX_DIM, c->d_x);
        int dy = c->cross ? c->d_y : c->d_x;
        if (dy < 1 || dy > ATTN_MAX_DIM) return fail(err, errlen, "d_y must be 1..%d, got %d", ATTN_MAX_DIM, dy);
        if (c->d_a < 1 || c->d_a > ATTN_MAX_DIM)
            return fail(err, errlen, "d_a must be 1..%d, got %d", ATTN_MAX_DIM, c->d_a);
        if (!c->W_a) return fail(err, errlen, "additive attention needs W_a");
        if (!c->v_a) return fail(err, errlen, "additive attention needs v_a");
        return 0;
    }
    if (c->d_model < 1 || c->d_model > ATTN_MAX_DIM)
        return fail(err, errlen, "d_model must be 1..%d, got %d", ATTN_MAX_DIM, c->d_model);
    if (c->heads < 1 || c->heads > ATTN_MAX_HEADS)
        return fail(err, errlen, "heads must be 1..%d, got %d", ATTN_MAX_HEADS, c->heads);
    if (c->d_k < 1 || (long)c->d_k * c->heads > ATTN_MAX_DIM)
        return fail(err, errlen, "d_k must be ≥ 1 with heads·d_k ≤ %d, got d_k=%d", ATTN_MAX_DIM, c->d_k);
    if (c->d_v < 1 || (long)c->d_v * c->heads > ATTN_MAX_DIM)
        return fail(err, errlen, "d_v must be ≥ 1 with heads·d_v ≤ %d, got d_v=%d", ATTN_MAX_DIM, c->d_v);
    if (c->kv_heads < 0 || c->kv_heads > c->heads || (c->kv_heads > 0 && c->heads % c->kv_heads != 0))
        return fail(err, errlen, "kv_heads must be 0 or a divisor of heads = %d, got %d", c->heads, c->kv_heads);
    if (c->rope_base != 0 && c->d_k % 2 != 0)
        return fail(err, errlen, "RoPE needs an even d_k (it turns pairs of features), got d_k=%d", c->d_k);
    if (!c->W_Q || !c->W_K || !c->W_V) return fail(err, errlen, "W_Q, W_K and W_V are required");
    if (c->b_O && !c->W_O) return fail(err, errlen, "b_O needs W_O");
    if (c->scale_kind == ATTN_SCALE_VALUE && !(c->scale_value > 0 && isfinite(c->scale_value)))
        return fail(err, errlen, "scale must be a positive finite number, got %g", (double)c->scale_value);
    if (c->decode == ATTN_DECODE_INCREMENTAL || c->tile > 0) {
        long steps = attn_trace_steps(c);
        if (steps > ATTN_MAX_STEPS && c->decode == ATTN_DECODE_INCREMENTAL)
            return fail(err, errlen,
                        "incremental decoding of %d tokens with %d head%s records %ld steps, more than a trace "
                        "holds (%d)",
                        c->n_q, c->heads, c->heads == 1 ? "" : "s", steps, ATTN_MAX_STEPS);
        if (steps > ATTN_MAX_STEPS)
            return fail(err, errlen,
                        "the tiled softmax of %d keys in blocks of %d with %d head%s records %ld steps, more than a "
                        "trace holds (%d)",
                        c->n_k, c->tile, c->heads, c->heads == 1 ? "" : "s", steps, ATTN_MAX_STEPS);
    }
    return 0;
}

/* ---- planning: the trace's layout ------------------------------------------
 *
 * plan_dot and plan_additive list a trace's steps in order, each with its
 * kind, head, shape, name and the steps it was computed from, into a
 * Builder. That list is the layout: the block's size is summed from it, and
 * place_steps lays the listed steps out in the block. */

typedef struct Builder {
    AttnStep *steps;      /* (cap_steps) the steps listed so far; data, from and row_flags not yet set; a step
                           * with a position has no name yet */
    unsigned short *from; /* (cap_from) their `from` links, step after step */
    int n_steps, cap_steps;
    size_t n_from, cap_from;
    size_t n_flags, n_floats; /* row flags and floats the listed steps need */
    size_t n_name_bytes;      /* the names of the steps with a position, NUL included */
    int count_only;           /* only count steps and floats: steps and from are not written */
    int out_of_memory;        /* growing steps or from failed: the list is incomplete */
    const AttnConfig *cfg;    /* the config planned: the axes' sizes */
    AttnStep steps_small[128];
    unsigned short from_small[512];
} Builder;

static void builder_init(Builder *b)
{
    b->count_only = 0;
    b->n_name_bytes = 0;
    b->steps = b->steps_small;
    b->cap_steps = (int)(sizeof b->steps_small / sizeof b->steps_small[0]);
    b->from = b->from_small;
    b->cap_from = sizeof b->from_small / sizeof b->from_small[0];
    b->n_steps = 0;
    b->n_from = b->n_flags = b->n_floats = 0;
    b->out_of_memory = 0;
}

static void builder_free(Builder *b)
{
    if (b->steps != b->steps_small) free(b->steps);
    if (b->from != b->from_small) free(b->from);
}

/* arr (of *cap elements of size each, the first `used` in use, stored in
 * small until it outgrows it) with room for at least `need`: arr itself, or
 * a larger copy (*cap updated); NULL when memory runs out (arr unchanged). */
static void *grow(void *arr, const void *small, size_t *cap, size_t used, size_t need, size_t size)
{
    if (need <= *cap) return arr;
    size_t want = *cap * 2 > need ? *cap * 2 : need;
    void *bigger = arr == small ? malloc(want * size) : realloc(arr, want * size);
    if (!bigger) return NULL;
    if (arr == small) memcpy(bigger, small, used * size);
    *cap = want;
    return bigger;
}

/* Room in b for one more step with up to n_from links. Returns 0, or -1
 * (b->out_of_memory set) when memory runs out, or 1 when b only counts
 * (its capacity 0, so that every step comes here). */
static int builder_reserve(Builder *b, int n_from)
{
    if (b->count_only) return 1;
    size_t cap_steps = (size_t)b->cap_steps;
    AttnStep *steps =
        grow(b->steps, b->steps_small, &cap_steps, (size_t)b->n_steps, (size_t)b->n_steps + 1, sizeof *b->steps);
    if (steps) {
        b->steps = steps;
        b->cap_steps = (int)cap_steps;
    }
    unsigned short *from =
        steps ? grow(b->from, b->from_small, &b->cap_from, b->n_from, b->n_from + (size_t)n_from, sizeof *b->from)
              : NULL;
    if (from) b->from = from;
    if (!steps || !from) {
        b->out_of_memory = 1;
        return -1;
    }
    return 0;
}

static int kind_has_row_flags(AttnStepKind kind)
{
    return (kinds[kind].flags & ATTN_KIND_ROW_FLAGS) != 0;
}

/* The names of per-head steps, ROLE_H (Q_2, weights_2), in static storage
 * so that a step holds a pointer, not a copy, and no forward formats names:
 * written once for heads 1..head_names_ready, under head_names_m, and only
 * read after that. */
static char head_names[ATTN_MAX_HEADS][ATTN_ROLE_COUNT][ATTN_MAX_NAME];
static atomic_int head_names_ready;
static pthread_mutex_t head_names_m = PTHREAD_MUTEX_INITIALIZER;
_Static_assert(ATTN_MAX_HEADS <= 9999, "a head's number has at most four digits");

/* Makes sure heads 1..heads have their names. */
static void head_names_fill(int heads)
{
    if (atomic_load_explicit(&head_names_ready, memory_order_acquire) >= heads) return;
    pthread_mutex_lock(&head_names_m);
    for (int h = atomic_load_explicit(&head_names_ready, memory_order_relaxed) + 1; h <= heads; h++)
        for (int r = 0; r < ATTN_ROLE_COUNT; r++) {
            /* every role's name with "_9999" fits, whatever the head */
            assert(strlen(role_names[r]) + sizeof "_9999" <= ATTN_MAX_NAME);
            snprintf(head_names[h - 1][r], ATTN_MAX_NAME, "%s_%d", role_names[r], h);
        }
    if (atomic_load_explicit(&head_names_ready, memory_order_relaxed) < heads)
        atomic_store_explicit(&head_names_ready, heads, memory_order_release);
    pthread_mutex_unlock(&head_names_m);
}

/* The name of a step with a position: ROLE[_H]@AT, into dst (cap bytes);
 * its length. */
static int positioned_name(char *dst, size_t cap, AttnRole role, int head, int at)
{
    return head ? snprintf(dst, cap, "%s_%d@%d", role_names[role], head, at)
                : snprintf(dst, cap, "%s@%d", role_names[role], at);
}

/* Lists one step of that kind, role and head (0: none), its rows and
 * columns counting those axes; returns its index. Its name is its role's,
 * with "_H" for head H (head_names_fill first). from: n_from indices, -1
 * entries skipped. */
static inline int add_step(Builder *b, AttnStepKind kind, AttnRole role, int head, AttnAxis row_axis, AttnAxis col_axis,
                           const int *from, int n_from)
{
    int idx = b->n_steps, rc;
    if ((idx >= b->cap_steps || b->n_from + (size_t)n_from > b->cap_from) && (rc = builder_reserve(b, n_from)) != 0) {
        if (rc < 0) return -1;
        /* counting only */
        b->n_steps++;
        b->n_floats += (size_t)attn_axis_size(b->cfg, row_axis) * (size_t)attn_axis_size(b->cfg, col_axis);
        return idx;
    }
    AttnStep *s = &b->steps[idx];
    s->data = NULL;
    s->from = NULL;
    s->row_flags = NULL;
    s->n_from = 0;
    s->kind = (unsigned char)kind;
    s->role = (unsigned char)role;
    s->row_axis = (unsigned char)row_axis;
    s->col_axis = (unsigned char)col_axis;
    s->head = (unsigned short)head;
    s->at = 0;
    s->rows = attn_axis_size(b->cfg, row_axis);
    s->cols = attn_axis_size(b->cfg, col_axis);
    s->name = head ? head_names[head - 1][role] : role_names[role];
    for (int i = 0; i < n_from; i++)
        if (from[i] >= 0) b->from[b->n_from + s->n_from++] = (unsigned short)from[i];
    b->n_steps++;
    b->n_from += s->n_from;
    b->n_flags += kind_has_row_flags(kind) ? (size_t)s->rows : 0;
    b->n_floats += (size_t)s->rows * (size_t)s->cols;
    return idx;
}

/* add_step for a step at position `at` (decoding's token): its axes sized
 * for it, its name ROLE[_H]@AT written when the steps are placed. */
static int add_step_at(Builder *b, AttnStepKind kind, AttnRole role, int head, int at, AttnAxis row_axis,
                       AttnAxis col_axis, const int *from, int n_from)
{
    int idx = add_step(b, kind, role, head, row_axis, col_axis, from, n_from);
    if (idx < 0) return -1;
    int rows = attn_step_axis_size(b->cfg, row_axis, at), cols = attn_step_axis_size(b->cfg, col_axis, at);
    size_t listed = (size_t)attn_axis_size(b->cfg, row_axis) * (size_t)attn_axis_size(b->cfg, col_axis);
    b->n_floats = b->n_floats - listed + (size_t)rows * (size_t)cols;
    if (b->count_only) return idx;
    AttnStep *s = &b->steps[idx];
    if (kind_has_row_flags(kind)) b->n_flags = b->n_flags - (size_t)s->rows + (size_t)rows;
    s->rows = rows;
    s->cols = cols;
    s->at = (unsigned short)at;
    s->name = NULL;
    int len = positioned_name(NULL, 0, role, head, at);
    assert(len < ATTN_MAX_NAME);
    b->n_name_bytes += (size_t)len + 1;
    return idx;
}

/* Incremental decoding, after the whole forward: for each token t, its
 * rows of Q, K, V; per head its query columns, per K/V head its key and
 * value columns and the caches they are appended to; per head one row of
 * scores (scaled, masked, weights) and output; its rows of concat and
 * output. Then `decoded`. In count mode p->decode is NULL and the indices
 * go to stand-ins. */
static __attribute__((noinline)) void plan_decode(Builder *b, const AttnConfig *c, Plan *p)
{
    int H = c->heads, n = c->n_q;
    AttnAxis kdk = c->kv_heads ? ATTN_AXIS_KV_DK : ATTN_AXIS_HEADS_DK;
    AttnAxis kdv = c->kv_heads ? ATTN_AXIS_KV_DV : ATTN_AXIS_HEADS_DV;
    /* the causal mask alone blocks nothing in a cache of tokens 1..t */
    int has_mask = c->mask_kind != ATTN_MASK_CAUSAL;
    HeadPlan one_head;
    DecodeKvPlan one_kv;
    for (int s = 0; s < n; s++) {
        int at = s + 1;
        DecodePlan *dp = p->decode ? &p->decode[s] : NULL;
        int Q = add_step_at(b, ATTN_STEP_PROJECTION, ATTN_ROLE_Q, 0, at, ATTN_AXIS_TOKEN, ATTN_AXIS_HEADS_DK,
                            (int[]){p->x_in, p->W_Q, p->b_Q}, 3);
        int K = add_step_at(b, ATTN_STEP_PROJECTION, ATTN_ROLE_K, 0, at, ATTN_AXIS_TOKEN, kdk,
                            (int[]){p->x_in, p->W_K, p->b_K}, 3);
        int V = add_step_at(b, ATTN_STEP_PROJECTION, ATTN_ROLE_V, 0, at, ATTN_AXIS_TOKEN, kdv,
                            (int[]){p->x_in, p->W_V, p->b_V}, 3);
        for (int h = 0; h < H; h++) {
            HeadPlan *hp = dp ? &dp->head[h] : &one_head;
            int n_h = h + 1, g = p->head[h].kv; /* its K/V head, whose caches it reads */
            hp->kv = g;
            hp->Q = add_step_at(b, ATTN_STEP_SPLIT, ATTN_ROLE_Q, n_h, at, ATTN_AXIS_TOKEN, ATTN_AXIS_DK, &Q, 1);
            DecodeKvPlan *kp = dp ? &dp->kv[g] : &one_kv;
            if (h == 0 || g != p->head[h - 1].kv) { /* the group's first head: K/V head g's rows and caches */
                int prev_K = dp && s > 0 ? p->decode[s - 1].kv[g].K_cache : -1;
                int prev_V = dp && s > 0 ? p->decode[s - 1].kv[g].V_cache : -1;
                kp->K = add_step_at(b, ATTN_STEP_SPLIT, ATTN_ROLE_K, g + 1, at, ATTN_AXIS_TOKEN, ATTN_AXIS_DK, &K, 1);
                kp->V = add_step_at(b, ATTN_STEP_SPLIT, ATTN_ROLE_V, g + 1, at, ATTN_AXIS_TOKEN, ATTN_AXIS_DV, &V, 1);
                /* RoPE: the key turned by its position before it is cached, so the cache holds rotated keys */
                kp->Kr = p->angles >= 0 ? add_step_at(b, ATTN_STEP_ROPE, ATTN_ROLE_K_ROT, g + 1, at, ATTN_AXIS_TOKEN,
                                                      ATTN_AXIS_DK, (int[]){kp->K, p->angles}, 2)
                                        : -1;
                kp->K_cache = add_step_at(b, ATTN_STEP_KV_APPEND, ATTN_ROLE_K_CACHE, g + 1, at, ATTN_AXIS_PREFIX,
                                          ATTN_AXIS_DK, (int[]){prev_K, kp->Kr >= 0 ? kp->Kr : kp->K}, 2);
                kp->V_cache = add_step_at(b, ATTN_STEP_KV_APPEND, ATTN_ROLE_V_CACHE, g + 1, at, ATTN_AXIS_PREFIX,
                                          ATTN_AXIS_DV, (int[]){prev_V, kp->V}, 2);
            }
            hp->K = kp->K_cache;
            hp->V = kp->V_cache;
            hp->Kr = -1;
            hp->tile0 = hp->tiled = -1;
            hp->Qr = p->angles >= 0 ? add_step_at(b, ATTN_STEP_ROPE, ATTN_ROLE_Q_ROT, n_h, at, ATTN_AXIS_TOKEN,
                                                  ATTN_AXIS_DK, (int[]){hp->Q, p->angles}, 2)
                                    : -1;
            hp->scores = add_step_at(b, ATTN_STEP_SCORES, ATTN_ROLE_SCORES, n_h, at, ATTN_AXIS_TOKEN, ATTN_AXIS_PREFIX,
                                     (int[]){hp->Qr >= 0 ? hp->Qr : hp->Q, hp->K}, 2);
            int pre;
            if (has_mask && c->mask_order == ATTN_MASK_THEN_SCALE) {
                hp->masked = add_step_at(b, ATTN_STEP_MASKED, ATTN_ROLE_MASKED, n_h, at, ATTN_AXIS_TOKEN,
                                         ATTN_AXIS_PREFIX, &hp->scores, 1);
                hp->scaled = add_step_at(b, ATTN_STEP_SCALED, ATTN_ROLE_SCALED, n_h, at, ATTN_AXIS_TOKEN,
                                         ATTN_AXIS_PREFIX, &hp->masked, 1);
                pre = hp->scaled;
            } else {
                hp->scaled = add_step_at(b, ATTN_STEP_SCALED, ATTN_ROLE_SCALED, n_h, at, ATTN_AXIS_TOKEN,
                                         ATTN_AXIS_PREFIX, &hp->scores, 1);
                hp->masked = has_mask ? add_step_at(b, ATTN_STEP_MASKED, ATTN_ROLE_MASKED, n_h, at, ATTN_AXIS_TOKEN,
                                                    ATTN_AXIS_PREFIX, &hp->scaled, 1)
                                      : -1;
                pre = has_mask ? hp->masked : hp->scaled;
            }
            hp->weights = add_step_at(b, ATTN_STEP_SOFTMAX, ATTN_ROLE_WEIGHTS, n_h, at, ATTN_AXIS_TOKEN,
                                      ATTN_AXIS_PREFIX, &pre, 1);
            hp->out = add_step_at(b, ATTN_STEP_WEIGHTED_SUM, ATTN_ROLE_HEAD, n_h, at, ATTN_AXIS_TOKEN, ATTN_AXIS_DV,
                                  (int[]){hp->weights, hp->V}, 2);
            p->concat_from[h] = hp->out;
        }
        int concat = add_step_at(b, ATTN_STEP_CONCAT, ATTN_ROLE_CONCAT, 0, at, ATTN_AXIS_TOKEN, ATTN_AXIS_HEADS_DV,
                                 p->concat_from, H);
        int output = c->W_O ? add_step_at(b, ATTN_STEP_OUTPUT, ATTN_ROLE_OUTPUT, 0, at, ATTN_AXIS_TOKEN,
                                          ATTN_AXIS_MODEL, (int[]){concat, p->W_O, p->b_O}, 3)
                            : -1;
        if (dp) *dp = (DecodePlan){Q, K, V, concat, output, dp->head, dp->kv};
    }
    /* decoded: every token's last row, then the whole forward's result, which it equals */
    int last = p->output >= 0 ? p->output : p->concat;
    int n_from = 0;
    if (p->decode) {
        for (int s = 0; s < n; s++) p->concat_from[s] = p->output >= 0 ? p->decode[s].output : p->decode[s].concat;
        p->concat_from[n] = last;
        n_from = n + 1;
    }
    p->decoded = add_step(b, ATTN_STEP_DECODE_CHECK, ATTN_ROLE_DECODED, 0, ATTN_AXIS_QUERIES,
                          p->output >= 0 ? ATTN_AXIS_MODEL : ATTN_AXIS_HEADS_DV, p->concat_from, n_from);
}

/* The tiled softmax of head n (1-based) after its weighted sum: for each
 * block b of c->tile keys, its columns of the logits `pre`, the running
 * maximum, the rescale factor, the running sum and the running weighted sum
 * (five steps, in this order), then the head's output from the last. */
static void plan_tiles(Builder *b, const AttnConfig *c, HeadPlan *hp, int n, int pre)
{
    int blocks = (c->n_k + c->tile - 1) / c->tile, m = -1, l = -1, acc = -1;
    for (int at = 1; at <= blocks; at++) {
        int s =
            add_step_at(b, ATTN_STEP_TILE_SCORES, ATTN_ROLE_BLOCK, n, at, ATTN_AXIS_QUERIES, ATTN_AXIS_BLOCK, &pre, 1);
        if (at == 1) hp->tile0 = s;
        int m_new = add_step_at(b, ATTN_STEP_TILE_MAX, ATTN_ROLE_RUN_MAX, n, at, ATTN_AXIS_QUERIES, ATTN_AXIS_ONE,
                                (int[]){m, s}, 2);
        int r = add_step_at(b, ATTN_STEP_TILE_RESCALE, ATTN_ROLE_RESCALE, n, at, ATTN_AXIS_QUERIES, ATTN_AXIS_ONE,
                            (int[]){m, m_new}, 2);
        l = add_step_at(b, ATTN_STEP_TILE_SUM, ATTN_ROLE_RUN_SUM, n, at, ATTN_AXIS_QUERIES, ATTN_AXIS_ONE,
                        (int[]){l, r, s, m_new}, 4);
        acc = add_step_at(b, ATTN_STEP_TILE_ACCUMULATE, ATTN_ROLE_ACC, n, at, ATTN_AXIS_QUERIES, ATTN_AXIS_DV,
                          (int[]){acc, r, s, m_new, hp->V}, 5);
        m = m_new;
    }
    hp->tiled = add_step(b, ATTN_STEP_TILE_OUTPUT, ATTN_ROLE_TILED, n, ATTN_AXIS_QUERIES, ATTN_AXIS_DV,
                         (int[]){acc, l, hp->out}, 3);
}

static void plan_dot(Builder *b, const AttnConfig *c, Plan *p)
{
    int H = c->heads;
    int has_mask = c->mask_kind != ATTN_MASK_NONE;
    p->X = add_step(b, ATTN_STEP_INPUT, ATTN_ROLE_X, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_MODEL, NULL, 0);
    p->Y = c->cross ? add_step(b, ATTN_STEP_INPUT, ATTN_ROLE_Y, 0, ATTN_AXIS_KEYS, ATTN_AXIS_MODEL, NULL, 0) : -1;
    int src = c->cross ? p->Y : p->X;
    p->W_Q = add_step(b, ATTN_STEP_WEIGHT, ATTN_ROLE_W_Q, 0, ATTN_AXIS_MODEL, ATTN_AXIS_HEADS_DK, NULL, 0);
    p->b_Q = c->b_Q ? add_step(b, ATTN_STEP_BIAS, ATTN_ROLE_B_Q, 0, ATTN_AXIS_ONE, ATTN_AXIS_HEADS_DK, NULL, 0) : -1;
    /* the keys' and values' columns: every head's, or every K/V head's when they are grouped */
    AttnAxis kdk = c->kv_heads ? ATTN_AXIS_KV_DK : ATTN_AXIS_HEADS_DK;
    AttnAxis kdv = c->kv_heads ? ATTN_AXIS_KV_DV : ATTN_AXIS_HEADS_DV;
    p->W_K = add_step(b, ATTN_STEP_WEIGHT, ATTN_ROLE_W_K, 0, ATTN_AXIS_MODEL, kdk, NULL, 0);
    p->b_K = c->b_K ? add_step(b, ATTN_STEP_BIAS, ATTN_ROLE_B_K, 0, ATTN_AXIS_ONE, kdk, NULL, 0) : -1;
    p->W_V = add_step(b, ATTN_STEP_WEIGHT, ATTN_ROLE_W_V, 0, ATTN_AXIS_MODEL, kdv, NULL, 0);
    p->b_V = c->b_V ? add_step(b, ATTN_STEP_BIAS, ATTN_ROLE_B_V, 0, ATTN_AXIS_ONE, kdv, NULL, 0) : -1;
    p->W_O =
        c->W_O ? add_step(b, ATTN_STEP_WEIGHT, ATTN_ROLE_W_O, 0, ATTN_AXIS_HEADS_DV, ATTN_AXIS_MODEL, NULL, 0) : -1;
    p->b_O = c->b_O ? add_step(b, ATTN_STEP_BIAS, ATTN_ROLE_B_O, 0, ATTN_AXIS_ONE, ATTN_AXIS_MODEL, NULL, 0) : -1;
    /* the sinusoidal positional encoding, added to X: the projections read X + PE */
    int pe = c->positional == ATTN_POSITIONAL_SINUSOIDAL;
    p->PE = pe ? add_step(b, ATTN_STEP_POSITIONAL, ATTN_ROLE_PE, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_MODEL, NULL, 0) : -1;
    p->X_pe = pe ? add_step(b, ATTN_STEP_ADD_POSITIONAL, ATTN_ROLE_X_PE, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_MODEL,
                            (int[]){p->X, p->PE}, 2)
                 : -1;
    p->x_in = pe ? p->X_pe : p->X;
    if (!c->cross) src = p->x_in;

    p->Q = add_step(b, ATTN_STEP_PROJECTION, ATTN_ROLE_Q, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_HEADS_DK,
                    (int[]){p->x_in, p->W_Q, p->b_Q}, 3);
    p->K = add_step(b, ATTN_STEP_PROJECTION, ATTN_ROLE_K, 0, ATTN_AXIS_KEYS, kdk, (int[]){src, p->W_K, p->b_K}, 3);
    p->V = add_step(b, ATTN_STEP_PROJECTION, ATTN_ROLE_V, 0, ATTN_AXIS_KEYS, kdv, (int[]){src, p->W_V, p->b_V}, 3);
    /* RoPE: the angle of each position and pair, which every head's Q and K turn by */
    p->angles = c->rope_base != 0 ? add_step(b, ATTN_STEP_ROPE_ANGLES, ATTN_ROLE_ANGLES, 0, ATTN_AXIS_QUERIES,
                                             ATTN_AXIS_DK_PAIRS, NULL, 0)
                                  : -1;

    /* the query heads of one group (h·G/H the same) read one K/V head's
     * split, listed with the group's first */
    int G = attn_kv_heads(c), rope = p->angles >= 0;
    p->kv_first = G < H || rope; /* shared K/V heads, and rotated keys, are made before the heads run */
    for (int h = 0; h < H; h++) {
        HeadPlan *hp = &p->head[h];
        int n = h + 1, first = h == 0 || (G == H ? h : h * G / H) != hp[-1].kv;
        hp->kv = G == H ? h : h * G / H;
        hp->Q = add_step(b, ATTN_STEP_SPLIT, ATTN_ROLE_Q, n, ATTN_AXIS_QUERIES, ATTN_AXIS_DK, &p->Q, 1);
        if (first) {
            hp->K = add_step(b, ATTN_STEP_SPLIT, ATTN_ROLE_K, hp->kv + 1, ATTN_AXIS_KEYS, ATTN_AXIS_DK, &p->K, 1);
            hp->V = add_step(b, ATTN_STEP_SPLIT, ATTN_ROLE_V, hp->kv + 1, ATTN_AXIS_KEYS, ATTN_AXIS_DV, &p->V, 1);
        } else {
            hp->K = hp[-1].K;
            hp->V = hp[-1].V;
        }
        /* RoPE: Q_h and (once per K/V head) K_g turned by their positions' angles */
        hp->Qr = rope ? add_step(b, ATTN_STEP_ROPE, ATTN_ROLE_Q_ROT, n, ATTN_AXIS_QUERIES, ATTN_AXIS_DK,
                                 (int[]){hp->Q, p->angles}, 2)
                      : -1;
        hp->Kr = !rope   ? -1
                 : first ? add_step(b, ATTN_STEP_ROPE, ATTN_ROLE_K_ROT, hp->kv + 1, ATTN_AXIS_KEYS, ATTN_AXIS_DK,
                                    (int[]){hp->K, p->angles}, 2)
                         : hp[-1].Kr;
        hp->scores = add_step(b, ATTN_STEP_SCORES, ATTN_ROLE_SCORES, n, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS,
                              (int[]){rope ? hp->Qr : hp->Q, rope ? hp->Kr : hp->K}, 2);
        int pre;
        if (has_mask && c->mask_order == ATTN_MASK_THEN_SCALE) {
            /* seed 003: the raw scores are masked, then divided */
            hp->masked =
                add_step(b, ATTN_STEP_MASKED, ATTN_ROLE_MASKED, n, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS, &hp->scores, 1);
            hp->scaled =
                add_step(b, ATTN_STEP_SCALED, ATTN_ROLE_SCALED, n, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS, &hp->masked, 1);
            pre = hp->scaled;
        } else {
            hp->scaled =
                add_step(b, ATTN_STEP_SCALED, ATTN_ROLE_SCALED, n, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS, &hp->scores, 1);
            hp->masked = has_mask ? add_step(b, ATTN_STEP_MASKED, ATTN_ROLE_MASKED, n, ATTN_AXIS_QUERIES,
                                             ATTN_AXIS_KEYS, &hp->scaled, 1)
                                  : -1;
            pre = has_mask ? hp->masked : hp->scaled;
        }
        hp->weights = add_step(b, ATTN_STEP_SOFTMAX, ATTN_ROLE_WEIGHTS, n, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS, &pre, 1);
        hp->out = add_step(b, ATTN_STEP_WEIGHTED_SUM, ATTN_ROLE_HEAD, n, ATTN_AXIS_QUERIES, ATTN_AXIS_DV,
                           (int[]){hp->weights, hp->V}, 2);
        /* FlashAttention's tiled softmax: the same head again, block by block */
        hp->tile0 = hp->tiled = -1;
        if (c->tile > 0) plan_tiles(b, c, hp, n, pre);
    }
    /* concat depends on every head's output */
    for (int h = 0; h < H; h++) p->concat_from[h] = p->head[h].out;
    p->concat =
        add_step(b, ATTN_STEP_CONCAT, ATTN_ROLE_CONCAT, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_HEADS_DV, p->concat_from, H);
    p->output = c->W_O ? add_step(b, ATTN_STEP_OUTPUT, ATTN_ROLE_OUTPUT, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_MODEL,
                                  (int[]){p->concat, p->W_O, p->b_O}, 3)
                       : -1;
    p->decoded = -1;
    if (c->decode == ATTN_DECODE_INCREMENTAL) plan_decode(b, c, p);
}

static void plan_additive(Builder *b, const AttnConfig *c, Plan *p)
{
    int has_mask = c->mask_kind != ATTN_MASK_NONE;
    HeadPlan *hp = &p->head[0];
    p->X = add_step(b, ATTN_STEP_INPUT, ATTN_ROLE_X, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_DX, NULL, 0);
    p->Y = c->cross ? add_step(b, ATTN_STEP_INPUT, ATTN_ROLE_Y, 0, ATTN_AXIS_KEYS, ATTN_AXIS_DY, NULL, 0) : -1;
    int src = c->cross ? p->Y : p->X;
    p->W_a = add_step(b, ATTN_STEP_WEIGHT, ATTN_ROLE_W_A, 0, ATTN_AXIS_DXY, ATTN_AXIS_DA, NULL, 0);
    p->b_a = c->b_a ? add_step(b, ATTN_STEP_BIAS, ATTN_ROLE_B_A, 0, ATTN_AXIS_ONE, ATTN_AXIS_DA, NULL, 0) : -1;
    p->v_a = add_step(b, ATTN_STEP_WEIGHT, ATTN_ROLE_V_A, 0, ATTN_AXIS_DA, ATTN_AXIS_ONE, NULL, 0);
    p->hidden = add_step(b, ATTN_STEP_ADDITIVE_HIDDEN, ATTN_ROLE_HIDDEN, 0, ATTN_AXIS_PAIRS, ATTN_AXIS_DA,
                         (int[]){p->X, src, p->W_a, p->b_a}, 4);
    hp->scores = add_step(b, ATTN_STEP_SCORES, ATTN_ROLE_SCORES, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS,
                          (int[]){p->hidden, p->v_a}, 2);
    hp->scaled = -1;
    hp->kv = 0;
    hp->Qr = hp->Kr = -1;
    hp->tile0 = hp->tiled = -1;
    p->angles = p->PE = p->X_pe = -1;
    p->x_in = p->X;
    hp->masked =
        has_mask ? add_step(b, ATTN_STEP_MASKED, ATTN_ROLE_MASKED, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS, &hp->scores, 1)
                 : -1;
    int pre = has_mask ? hp->masked : hp->scores;
    hp->weights = add_step(b, ATTN_STEP_SOFTMAX, ATTN_ROLE_WEIGHTS, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_KEYS, &pre, 1);
    hp->out = add_step(b, ATTN_STEP_WEIGHTED_SUM, ATTN_ROLE_CONTEXT, 0, ATTN_AXIS_QUERIES, ATTN_AXIS_DY,
                       (int[]){hp->weights, src}, 2);
    p->decoded = -1;
}

static void plan(Builder *b, const AttnConfig *c, Plan *p)
{
    b->cfg = c;
    if (c->attention == ATTN_ADDITIVE)
        plan_additive(b, c, p);
    else
        plan_dot(b, c, p);
}

/* ---- computing ---------------------------------------------------------- */

static int check_finite(const AttnTrace *t, const unsigned char *found, int s0, int s1, char *err, size_t errlen);

static float *data_of(AttnTrace *t, int idx)
{
    return idx >= 0 ? t->steps[idx].data : NULL;
}

/* rows × w floats from src (row stride src_stride) to dst (row stride
 * dst_stride): a head's columns out of Q, K, V (split), and back into concat.
 * The usual head widths get a copy of constant size, which the compiler
 * inlines instead of calling memcpy for every short row. */
static void copy_block(float *restrict dst, size_t dst_stride, const float *restrict src, size_t src_stride, int rows,
                       int w)
{
#define COPY_ROWS(W)                                                                                                   \
    for (int i = 0; i < rows; i++)                                                                                     \
        memcpy(dst + (size_t)i * dst_stride, src + (size_t)i * src_stride, sizeof(float) * (W));                       \
    break
    switch (w) {
    case 4:
        COPY_ROWS(4);
    case 8:
        COPY_ROWS(8);
    case 16:
        COPY_ROWS(16);
    case 32:
        COPY_ROWS(32);
    case 64:
        COPY_ROWS(64);
    default:
        COPY_ROWS((size_t)w);
    }
#undef COPY_ROWS
}

/* found[idx] |= bits, from any thread (the tasks of one head each scan
 * their own rows of its steps) */
static void found_or(unsigned char *found, int idx, unsigned bits)
{
    if (found && idx >= 0 && bits) __atomic_fetch_or(&found[idx], (unsigned char)bits, __ATOMIC_RELAXED);
}

/* Head h's split copy K_h (values: V_h) of its K/V head's columns of K
 * (V). Not scanned: dot_phases gives a split step what its projection's scan
 * found, all of its columns; a bad cell there is named in the projection
 * first. */
static void split_key_or_value(AttnTrace *t, const Plan *p, int h, int values)
{
    const AttnConfig *c = &t->cfg;
    int w = values ? c->d_v : c->d_k, nk = c->n_k, g = p->head[h].kv;
    copy_block(data_of(t, values ? p->head[h].V : p->head[h].K), (size_t)w,
               data_of(t, values ? p->V : p->K) + (size_t)g * w, (size_t)attn_kv_heads(c) * w, nk, w);
}

void attn__prepare_head(AttnTrace *t, const Plan *p, int h, int values, float *pack)
{
    const AttnConfig *c = &t->cfg;
    const HeadPlan *hp = &p->head[h];
    if (!p->kv_first) split_key_or_value(t, p, h, values);
    /* scores = Q_h · K_hᵀ: B is K_h (n_k, d_k) (RoPE: rotated) read transposed; the weighted sum's B is V_h (n_k,
     * d_v) */
    if (!values)
        attn__pack_panels(pack, data_of(t, hp->Kr >= 0 ? hp->Kr : hp->K), 1, c->d_k, c->n_k, 0, c->n_k);
    else if (pack)
        attn__pack_panels(pack, data_of(t, hp->V), 0, c->n_k, c->d_v, 0, c->d_v);
}

/* Rows [r0, r1) of head h (0-based) of dot attention: split, scores, scale,
 * mask, softmax, weighted sum, and their columns of concat. With packK NULL
 * the rows are all the head's, and K_h and V_h are split here too;
 * otherwise attn__prepare_head has split them and packed K_hᵀ (and V_h
 * into packV, or packV is NULL). Writes only these rows of this head's
 * steps and columns, and ORs what their scans find into found[] (which the
 * caller cleared for the head's steps; NULL: no scans). So any two blocks may
 * run on different threads.
 *
 * A block of rows goes through every step while its scores, scaled and
 * weights (a few hundred KiB: attn__run_heads picks the rows) are still in
 * the core's cache: head by head, each n_k-wide step was written to memory
 * and read back by the next, and two threads shared that bandwidth. */
void attn__compute_head_rows(AttnTrace *t, const Plan *p, const unsigned char *mask, int h, int r0, int r1,
                             const float *packK, const float *packV, float *scratch, unsigned char *found)
{
    const AttnConfig *c = &t->cfg;
    const HeadPlan *hp = &p->head[h];
    int nk = c->n_k, dk = c->d_k, dv = c->d_v, H = c->heads, rows = r1 - r0;
    size_t ldk = (size_t)H * dk, ldv = (size_t)H * dv; /* row strides of Q, K and of V */
    float *Qh = data_of(t, hp->Q) + (size_t)r0 * dk;   /* (rows, d_k) */

    /* 1. split: head h takes columns [h·d_k, (h+1)·d_k) of Q and K, [h·d_v, (h+1)·d_v) of V */
    copy_block(Qh, (size_t)dk, data_of(t, p->Q) + (size_t)r0 * ldk + (size_t)h * dk, ldk, rows, dk);
    if (!packK && !p->kv_first) {
        split_key_or_value(t, p, h, 0);
        split_key_or_value(t, p, h, 1);
    }
    /* 1'. RoPE: the rows' queries turned by their positions' angles (the keys were turned before the heads ran) */
    if (hp->Qr >= 0) {
        float *Qr = data_of(t, hp->Qr) + (size_t)r0 * dk;
        attn__rope_rows(Qr, Qh, data_of(t, p->angles) + (size_t)r0 * (size_t)(dk / 2), rows, dk);
        Qh = Qr;
    }
    /* 2. scores = Q_h · K_hᵀ  (rows, n_k); 3. scaled = scores / divisor */
    size_t nn = (size_t)rows * (size_t)nk;
    float *S = data_of(t, hp->scores) + (size_t)r0 * nk;
    float *A = data_of(t, hp->scaled) + (size_t)r0 * nk;
    const float *Kh = data_of(t, hp->Kr >= 0 ? hp->Kr : hp->K);
    unsigned bits_s, bits_a, bits_pre;
    const float *pre = A;                               /* the rows the softmax reads */
    float *row_max = scratch ? scratch + 2 * nn : NULL; /* (rows, 16) the rows' maxima, when attn__scores gives them */
    int maxed = 0;
    AttnStep *w = &t->steps[hp->weights];
    if (hp->masked >= 0 && c->mask_order == ATTN_MASK_THEN_SCALE) {
        /* 3'. seed 003's order: masked = the raw scores with blocked cells
         *     set to the fill, then scaled = masked / divisor (a blocked
         *     cell becomes fill / divisor; -inf stays -inf) */
        if (packK)
            attn__matmul_packed(S, Qh, packK, NULL, rows, dk, nk, 0, rows);
        else
            attn_matmul_nt(S, Qh, Kh, rows, dk, nk);
        AttnStep *m = &t->steps[hp->masked];
        float *M = m->data + (size_t)r0 * nk;
        attn__apply_mask(c, mask, M, m->row_flags + r0, S, r0, r1, nk);
        unsigned bits_m;
        attn__divide_scan(A, M, nn, t->divisor, &bits_m, &bits_a);
        bits_s = attn__nonfinite_bits(S, nn);
        found_or(found, hp->scores, bits_s);
        found_or(found, hp->masked, bits_m);
        found_or(found, hp->scaled, bits_a);
        bits_pre = bits_a;
    } else {
        /* the product stores scores and scaled, and scans both, while the
         * sums are in registers (a kernel of kernels.c's); with a scratch,
         * scaled also there, where the next step reads it while it is in the
         * core's cache, and the trace's copies go past the cache */
        pre = attn__scores(S, A, scratch, hp->masked >= 0 || !scratch ? NULL : row_max, &maxed, Qh, Kh, packK, rows, dk,
                           nk, t->divisor, &bits_s, &bits_a);
        found_or(found, hp->scores, bits_s);
        found_or(found, hp->scaled, bits_a);
        /* 4. masked: blocked cells become the fill. Not scanned: its cells are
         *    scaled's, or the fill (finite, or -inf, which a masked step may
         *    hold); so it holds +inf or NaN only where scaled does. */
        bits_pre = bits_a;
        if (hp->masked >= 0) {
            AttnStep *m = &t->steps[hp->masked];
            float *M = m->data + (size_t)r0 * nk;
            attn__apply_mask(c, mask, M, m->row_flags + r0, pre, r0, r1, nk);
            bits_pre = bits_a | (c->mask_fill == -INFINITY ? ATTN_SCAN_NINF : 0);
            found_or(found, hp->masked, bits_pre);
            pre = M;
        }
    }
    /* 5. softmax along each row; 6. weighted sum of the values */
    float *W = w->data + (size_t)r0 * nk;
    const float *weights =
        attn__softmax_block(W, scratch ? scratch + nn : NULL, w->row_flags + r0, pre, maxed ? row_max : NULL, rows, nk);
    /* Weights of rows of finite and -inf logits are in [0, 1] (the reference
     * path turns blocked rows into zeros): only input holding +inf or NaN
     * (an earlier step, which is named first) needs the scan of the 16 MiB
     * a head's weights are at n = 2048. */
    if (found && (bits_pre & (ATTN_SCAN_PINF_NAN | ATTN_SCAN_PENDING)))
        found_or(found, hp->weights, attn__nonfinite_bits(W, nn));
    if (hp->masked >= 0) /* a row flagged by the mask stays flagged even under a finite fill */
        for (int i = r0; i < r1; i++) w->row_flags[i] |= t->steps[hp->masked].row_flags[i];
    AttnStep *o = &t->steps[hp->out];
    float *O = o->data + (size_t)r0 * dv; /* (rows, d_v) */
    if (packV)
        attn__matmul_packed(O, weights, packV, NULL, rows, nk, dv, 0, rows);
    else
        attn_matmul(O, weights, data_of(t, hp->V), NULL, rows, nk, dv);
    if (found) found_or(found, hp->out, attn__nonfinite_bits(O, (size_t)rows * dv));
    memcpy(o->row_flags + r0, w->row_flags + r0, (size_t)rows);
    /* 7. concat: this head's output goes to columns [h·d_v, (h+1)·d_v) */
    if (p->concat >= 0)
        copy_block(data_of(t, p->concat) + (size_t)r0 * ldv + (size_t)h * dv, ldv, O, (size_t)dv, rows, dv);
}

/* The copies of the inputs, weights and biases into their steps, as copy
 * jobs (*n_jobs of them), with at[j] the step of job j (at may be NULL).
 * idx[i] < 0: no such step (src[i] is then unused). */
static void input_copies(AttnTrace *t, const int *idx, const float *const *src, int n, AttnCopyJob *jobs, int *at,
                         int *n_jobs)
{
    assert(n <= ATTN_MAX_PHASE_JOBS);
    *n_jobs = 0;
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0) continue;
        AttnStep *s = &t->steps[idx[i]];
        if (at) at[*n_jobs] = idx[i];
        jobs[(*n_jobs)++] = (AttnCopyJob){s->data, src[i], (size_t)s->rows * (size_t)s->cols};
    }
}

/* -1 with err and errno ECANCELED after attn_trace_cancel, else 0. */
static int cancelled(AttnTrace *t, char *err, size_t errlen)
{
    if (!atomic_load_explicit(&t->cancel, memory_order_relaxed)) return 0;
    fail(err, errlen, "cancelled");
    errno = ECANCELED;
    return -1;
}

/* The end of a phase that computed steps [ready, upto): with the scans
 * (found), those steps are checked and published; without (a small trace,
 * published whole at the end), nothing yet. Then a cancel is honoured.
 * 0, or -1 with err and errno (ERANGE, ECANCELED). */
static int phase_done(AttnTrace *t, const unsigned char *found, int upto, char *err, size_t errlen)
{
    if (found) {
        int from = atomic_load_explicit(&t->ready, memory_order_relaxed);
        if (check_finite(t, found, from, upto, err, errlen) != 0) {
            errno = ERANGE;
            return -1;
        }
        atomic_store_explicit(&t->ready, upto, memory_order_release);
    }
    return cancelled(t, err, errlen);
}

/* The products of dot attention's three phases: the projections, and W_O
 * (absent without it: m = 0). */
static void dot_products(AttnTrace *t, const AttnConfig *c, const Plan *p, AttnMatmulJob proj[3], AttnMatmulJob *out)
{
    int H = c->heads, G = attn_kv_heads(c), nq = c->n_q, nk = c->n_k, dm = c->d_model, dk = c->d_k, dv = c->d_v;
    /* with the sinusoidal positional encoding, X + PE (dot_phases computes it before the projections) */
    const float *X = p->X_pe >= 0 ? data_of(t, p->X_pe) : c->X, *src = c->cross ? c->Y : X;
    proj[0] = (AttnMatmulJob){data_of(t, p->Q), X, c->W_Q, c->b_Q, nq, dm, H * dk};
    proj[1] = (AttnMatmulJob){data_of(t, p->K), src, c->W_K, c->b_K, nk, dm, G * dk};
    proj[2] = (AttnMatmulJob){data_of(t, p->V), src, c->W_V, c->b_V, nk, dm, G * dv};
    *out = p->output >= 0 ? (AttnMatmulJob){data_of(t, p->output),
                                            data_of(t, p->concat),
                                            data_of(t, p->W_O),
                                            data_of(t, p->b_O),
                                            nq,
                                            H * dv,
                                            dm}
                          : (AttnMatmulJob){0};
}

/* 0, or -1 from phase_done. proj, out: dot_products'. pack: room for
 * packing the weights of either product phase and the heads' K_h and V_h
 * (NULL: no packing ahead). */
static int dot_phases(AttnTrace *t, const AttnConfig *c, const Plan *p, const AttnMatmulJob proj[3],
                      const AttnMatmulJob *out, unsigned char *found, float *pack, char *err, size_t errlen)
{
    int H = c->heads;
    /* 1. one phase: the inputs' copies into the trace, and the projections,
     *    bias included: Q (n_q, H·d_k), K (n_k, H·d_k), V (n_k, H·d_v). The
     *    projections read the caller's inputs (the same numbers as their
     *    copies), so neither waits for the other. */
    AttnCopyJob copies[ATTN_MAX_PHASE_JOBS];
    int copy_at[ATTN_MAX_PHASE_JOBS], n_copies;
    input_copies(t, (const int[]){p->X, p->Y, p->W_Q, p->b_Q, p->W_K, p->b_K, p->W_V, p->b_V, p->W_O, p->b_O},
                 (const float *const[]){c->X, c->Y, c->W_Q, c->b_Q, c->W_K, c->b_K, c->W_V, c->b_V, c->W_O, c->b_O}, 10,
                 copies, copy_at, &n_copies);
    unsigned char bits[3], copy_bits[ATTN_MAX_PHASE_JOBS];
    /* the sinusoidal positional encoding and X + PE, which the projections read (not scanned here:
     * check_finite scans them) */
    if (p->PE >= 0) {
        float *PE = data_of(t, p->PE), *Xp = data_of(t, p->X_pe);
        attn__positional(PE, c->n_q, c->d_model);
        for (size_t e = 0; e < (size_t)c->n_q * (size_t)c->d_model; e++) Xp[e] = c->X[e] + PE[e];
    }
    attn__phase(proj, 3, found ? bits : NULL, copies, n_copies, found ? copy_bits : NULL, pack, c->threads);
    /* RoPE's angles (not scanned here: check_finite scans them) */
    if (p->angles >= 0) attn__rope_angles(data_of(t, p->angles), c->n_q, c->d_k, c->rope_base);
    if (found) {
        found[p->Q] = bits[0];
        found[p->K] = bits[1];
        found[p->V] = bits[2];
        for (int j = 0; j < n_copies; j++) found[copy_at[j]] = copy_bits[j];
    }
    if (phase_done(t, found, p->head[0].Q, err, errlen) != 0) return -1;

    /* 2. every head, each writing its own columns of concat, in blocks of
     *    rows that OR what their scans find into found[]. The split steps
     *    are exact copies of their projection's columns: what its scan
     *    found, they may hold (a bad cell in one is named in the projection,
     *    an earlier step, first). */
    if (found)
        for (int h = 0; h < H; h++) {
            const HeadPlan *hp = &p->head[h];
            const int steps[] = {hp->scores, hp->scaled, hp->masked, hp->weights, hp->out};
            for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
                if (steps[i] >= 0) found[steps[i]] = 0;
            found[hp->Q] = found[p->Q];
            found[hp->K] = found[p->K];
            found[hp->V] = found[p->V];
        }
    /* K/V heads shared by query heads are split once, before any head reads them; with RoPE their keys are
     * turned then too (the rotated keys not scanned here: check_finite scans them) */
    if (p->kv_first)
        for (int h = 0; h < H; h++)
            if (h == 0 || p->head[h].kv != p->head[h - 1].kv) {
                split_key_or_value(t, p, h, 0);
                split_key_or_value(t, p, h, 1);
                if (p->head[h].Kr >= 0)
                    attn__rope_rows(data_of(t, p->head[h].Kr), data_of(t, p->head[h].K), data_of(t, p->angles), c->n_k,
                                    c->d_k);
            }
    attn__run_heads(t, p, c->mask, H, found, pack, c->threads);
    if (cancelled(t, err, errlen) != 0) return -1; /* the heads may have stopped part way: nothing to publish */
    /* the tiled softmax, head by head, from the softmax's input (its steps not scanned here: check_finite
     * scans them) */
    for (int h = 0; h < H; h++) {
        const HeadPlan *hp = &p->head[h];
        int pre = hp->masked >= 0 && c->mask_order == ATTN_SCALE_THEN_MASK ? hp->masked : hp->scaled;
        if (hp->tile0 >= 0) attn__tile_head(t, hp, data_of(t, pre), data_of(t, hp->V));
    }
    /* concat holds exact copies of the heads' outputs: what their scans found */
    if (found) {
        found[p->concat] = 0;
        for (int h = 0; h < H; h++) found[p->concat] |= found[p->head[h].out];
    }
    if (phase_done(t, found, p->concat + 1, err, errlen) != 0) return -1;

    /* 3. the output projection */
    if (p->output >= 0) {
        attn__phase(out, 1, found ? bits : NULL, NULL, 0, NULL, pack, c->threads);
        if (found) found[p->output] = bits[0];
    }
    return 0;
}

/* One head's row of decoding, for query position q (its only row) against
 * the nk keys and values of its caches: scores, scaled, masked, weights,
 * head (the untiled head's computation on one row, unblocked). */
static void decode_head_row(AttnTrace *t, const AttnConfig *c, const unsigned char *mask, const HeadPlan *hp, int q,
                            int nk)
{
    float *S = data_of(t, hp->scores), *A = data_of(t, hp->scaled); /* (1, nk) */
    unsigned bits_x, bits_y;
    attn_matmul_nt(S, data_of(t, hp->Qr >= 0 ? hp->Qr : hp->Q), data_of(t, hp->K), 1, c->d_k, nk);
    const float *pre = A;
    if (hp->masked >= 0) {
        AttnStep *m = &t->steps[hp->masked];
        if (c->mask_order == ATTN_MASK_THEN_SCALE) {
            attn__apply_mask(c, mask, m->data, m->row_flags, S, q, q + 1, nk);
            attn__divide_scan(A, m->data, (size_t)nk, t->divisor, &bits_x, &bits_y);
        } else {
            attn__divide_scan(A, S, (size_t)nk, t->divisor, &bits_x, &bits_y);
            attn__apply_mask(c, mask, m->data, m->row_flags, A, q, q + 1, nk);
            pre = m->data;
        }
    } else {
        attn__divide_scan(A, S, (size_t)nk, t->divisor, &bits_x, &bits_y);
    }
    AttnStep *w = &t->steps[hp->weights], *o = &t->steps[hp->out];
    attn_softmax_rows(w->data, w->row_flags, pre, 1, nk);
    if (hp->masked >= 0) w->row_flags[0] |= t->steps[hp->masked].row_flags[0];
    attn_matmul(o->data, w->data, data_of(t, hp->V), NULL, 1, nk, c->d_v);
    o->row_flags[0] = w->row_flags[0];
}

/* Incremental decoding, token by token (reference.c's pass 10 says what
 * each step is), then `decoded`. Rows of a few dozen numbers: on the
 * caller's thread, each product by the kernels. */
static void compute_decode(AttnTrace *t, const AttnConfig *c, const unsigned char *mask, const Plan *p)
{
    int H = c->heads, G = attn_kv_heads(c), n = c->n_q, dm = c->d_model, dk = c->d_k, dv = c->d_v;
    const float *X = data_of(t, p->x_in); /* (n, d_model) X, or X + PE */
    for (int s = 0; s < n; s++) {
        const DecodePlan *dp = &p->decode[s];
        const float *angles = p->angles >= 0 ? data_of(t, p->angles) + (size_t)s * (size_t)(dk / 2) : NULL;
        const float *x = X + (size_t)s * dm;
        float *q = data_of(t, dp->Q), *k = data_of(t, dp->K), *v = data_of(t, dp->V);
        attn_matmul(q, x, data_of(t, p->W_Q), data_of(t, p->b_Q), 1, dm, H * dk);
        attn_matmul(k, x, data_of(t, p->W_K), data_of(t, p->b_K), 1, dm, G * dk);
        attn_matmul(v, x, data_of(t, p->W_V), data_of(t, p->b_V), 1, dm, G * dv);
        for (int g = 0; g < G; g++) {
            const DecodeKvPlan *kp = &dp->kv[g];
            memcpy(data_of(t, kp->K), k + (size_t)g * dk, sizeof(float) * (size_t)dk);
            memcpy(data_of(t, kp->V), v + (size_t)g * dv, sizeof(float) * (size_t)dv);
            if (kp->Kr >= 0) attn__rope_rows(data_of(t, kp->Kr), data_of(t, kp->K), angles, 1, dk);
            float *Kc = data_of(t, kp->K_cache), *Vc = data_of(t, kp->V_cache);
            if (s > 0) {
                memcpy(Kc, data_of(t, p->decode[s - 1].kv[g].K_cache), sizeof(float) * (size_t)s * dk);
                memcpy(Vc, data_of(t, p->decode[s - 1].kv[g].V_cache), sizeof(float) * (size_t)s * dv);
            }
            memcpy(Kc + (size_t)s * dk, data_of(t, kp->Kr >= 0 ? kp->Kr : kp->K), sizeof(float) * (size_t)dk);
            memcpy(Vc + (size_t)s * dv, data_of(t, kp->V), sizeof(float) * (size_t)dv);
        }
        for (int h = 0; h < H; h++) {
            const HeadPlan *hp = &dp->head[h];
            memcpy(data_of(t, hp->Q), q + (size_t)h * dk, sizeof(float) * (size_t)dk);
            if (hp->Qr >= 0) attn__rope_rows(data_of(t, hp->Qr), data_of(t, hp->Q), angles, 1, dk);
            decode_head_row(t, c, mask, hp, s, s + 1);
            memcpy(data_of(t, dp->concat) + (size_t)h * dv, data_of(t, hp->out), sizeof(float) * (size_t)dv);
        }
        if (dp->output >= 0)
            attn_matmul(data_of(t, dp->output), data_of(t, dp->concat), data_of(t, p->W_O), data_of(t, p->b_O), 1,
                        H * dv, dm);
    }
    const AttnStep *d = &t->steps[p->decoded];
    for (int s = 0; s < n; s++)
        memcpy(d->data + (size_t)s * d->cols, data_of(t, p->output >= 0 ? p->decode[s].output : p->decode[s].concat),
               sizeof(float) * (size_t)d->cols);
}

/* 0, or -1 from phase_done. */
static int compute_dot(AttnTrace *t, const AttnConfig *c, const Plan *p, unsigned char *found, char *err, size_t errlen)
{
    /* one block of room for the packing, the largest any phase asks */
    AttnMatmulJob proj[3], out;
    dot_products(t, c, p, proj, &out);
    size_t floats = attn__phase_pack_floats(proj, 3), f;
    if ((f = attn__phase_pack_floats(&out, out.m > 0)) > floats) floats = f;
    if ((f = attn__heads_pack_floats(c, c->heads)) > floats) floats = f;
    size_t bytes;
    float *pack = attn__pack_take(floats, &bytes);
    int rc = dot_phases(t, c, p, proj, &out, found, pack, err, errlen);
    attn__pack_give(pack, bytes);
    if (rc == 0 && p->decode) compute_decode(t, c, c->mask, p);
    return rc;
}

static void compute_additive(AttnTrace *t, const AttnConfig *c, const Plan *p)
{
    int nq = c->n_q, nk = c->n_k, dx = c->d_x, dy = c->cross ? c->d_y : c->d_x, da = c->d_a;
    const HeadPlan *hp = &p->head[0];
    AttnCopyJob copies[5];
    int n_copies;
    input_copies(t, (const int[]){p->X, p->Y, p->W_a, p->b_a, p->v_a},
                 (const float *const[]){c->X, c->Y, c->W_a, c->b_a, c->v_a}, 5, copies, NULL, &n_copies);
    attn__phase(NULL, 0, NULL, copies, n_copies, NULL, NULL, 1);
    const float *X = data_of(t, p->X), *Y = c->cross ? data_of(t, p->Y) : X;
    const float *Wa = data_of(t, p->W_a), *ba = data_of(t, p->b_a), *va = data_of(t, p->v_a);

    /* 1. hidden[(i·n_k + j), :] = tanh([x_i ; y_j] · W_a + b_a). The product
     *    splits as x_i · W_a[0:d_x] + y_j · W_a[d_x:], so each half is
     *    computed once per token and the pairs only add. */
    float *xa = malloc(sizeof(float) * (size_t)nq * da); /* (n_q, d_a) */
    float *ya = malloc(sizeof(float) * (size_t)nk * da); /* (n_k, d_a) */
    float *H = data_of(t, p->hidden);
    if (xa && ya) {
        attn_matmul(xa, X, Wa, ba, nq, dx, da);
        attn_matmul(ya, Y, Wa + (size_t)dx * da, NULL, nk, dy, da);
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) {
                float *hrow = H + ((size_t)i * nk + j) * da;
                for (int a = 0; a < da; a++) hrow[a] = tanhf(xa[(size_t)i * da + a] + ya[(size_t)j * da + a]);
            }
    } else { /* no scratch: the plain definition, one pair at a time */
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) {
                float *hrow = H + ((size_t)i * nk + j) * da;
                for (int a = 0; a < da; a++) {
                    double s = ba ? ba[a] : 0.0;
                    for (int q = 0; q < dx; q++) s += (double)X[(size_t)i * dx + q] * Wa[(size_t)q * da + a];
                    for (int q = 0; q < dy; q++) s += (double)Y[(size_t)j * dy + q] * Wa[(size_t)(dx + q) * da + a];
                    hrow[a] = tanhf((float)s);
                }
            }
    }
    free(xa);
    free(ya);
    /* 2. scores(i, j) = hidden[(i·n_k + j), :] · v_a */
    float *S = data_of(t, hp->scores);
    attn_matmul(S, H, va, NULL, nq * nk, da, 1);
    /* 3. mask, softmax over j, context = weights · Y */
    const float *pre = S;
    if (hp->masked >= 0) {
        AttnStep *m = &t->steps[hp->masked];
        attn__apply_mask(c, c->mask, m->data, m->row_flags, S, 0, nq, nk);
        pre = m->data;
    }
    AttnStep *w = &t->steps[hp->weights];
    attn_softmax_rows(w->data, w->row_flags, pre, nq, nk);
    if (hp->masked >= 0)
        for (int i = 0; i < nq; i++) w->row_flags[i] |= t->steps[hp->masked].row_flags[i];
    AttnStep *o = &t->steps[hp->out];
    attn_matmul(o->data, w->data, Y, NULL, nq, nk, dy);
    memcpy(o->row_flags, w->row_flags, (size_t)nq);
}

/* Whether step s may hold the mask's fill: it writes the fill (masked), or
 * keeps its source's cells' values where its source may hold it (the
 * scaled step that divides a masked one, in seed 003's order). */
static int may_hold_fill(const AttnTrace *t, const AttnStep *s)
{
    if (kinds[s->kind].flags & ATTN_KIND_FILLS) return 1;
    if (!(kinds[s->kind].flags & ATTN_KIND_KEEPS_FILL)) return 0;
    for (int i = 0; i < s->n_from; i++)
        if (may_hold_fill(t, &t->steps[s->from[i]])) return 1;
    return 0;
}

/* No NaN or Inf reaches the screen or a file unless the lesson asked
 * for it, and the only one a lesson can ask for is the -inf fill of blocked
 * cells in a `masked` step. The loader lets in only finite float32 numbers,
 * so anything else here is float32 overflow (|x| > 3.4e38), or NaN from an
 * inf - inf after one. The steps are in the order they were computed, so the
 * first bad cell of steps [s0, s1) is where it began (when none before s0
 * had one). Returns 0, or -1 naming step and cell. */
static int check_finite(const AttnTrace *t, const unsigned char *found, int s0, int s1, char *err, size_t errlen)
{
    /* found[] holds what the code that wrote each step saw when it scanned it
     * (branch-free and vectorised, in cache); a step nothing scanned is
     * scanned here. Without found[] (a small trace, or the reference's),
     * the floats, one run in the block, are scanned in one call, and only
     * when that finds something are they looked at step by step. The search
     * below runs only in a step with something to name. */
    if (!found && s0 == 0 && s1 == t->n_steps &&
        attn__nonfinite_bits(t->steps[0].data, t->data_bytes / sizeof(float)) == 0)
        return 0;
    for (int s = s0; s < s1; s++) {
        const AttnStep *st = &t->steps[s];
        size_t n = (size_t)st->rows * (size_t)st->cols;
        unsigned bits = !found || found[s] & ATTN_SCAN_PENDING ? attn__nonfinite_bits(st->data, n) : found[s];
        int ninf_allowed = t->cfg.mask_fill == -INFINITY && may_hold_fill(t, st);
        if (!(bits & ATTN_SCAN_PINF_NAN) && (!(bits & ATTN_SCAN_NINF) || ninf_allowed)) continue;
        for (size_t i = 0; i < n; i++) {
            float v = st->data[i];
            if (isfinite(v) || (ninf_allowed && v == -INFINITY)) continue;
            const char *what = isnan(v) ? "nan" : v > 0 ? "+inf" : "-inf";
            size_t r = i / (size_t)st->cols, col = i % (size_t)st->cols;
            if (kinds[st->kind].flags & ATTN_KIND_GIVEN)
                return fail(err, errlen, "%s[%zu][%zu] is %s: every input must be a finite float32 number", st->name, r,
                            col, what);
            return fail(err, errlen,
                        "%s[%zu][%zu] is %s: computing %s overflowed float32 (|x| > 3.4e38); "
                        "the lesson's numbers are too large, scale X or the weights down",
                        st->name, r, col, what, st->name);
        }
    }
    return 0;
}

/* ---- the trace's block, and one spare ------------------------------------
 *
 * A small trace is malloc'd (aligned_alloc's split chunks cost glibc more on
 * every small forward). A large one is 64-byte aligned (cache lines, vector
 * loads) and asks for 2 MiB pages. glibc maps a large block on its own and
 * unmaps it on free, so each new large trace would start on fresh pages
 * that the kernel zeroes fault by fault. So the block of the last large
 * trace destroyed is kept as a spare, and the next trace that fits it (at
 * most twice its size) takes it: a re-trace, every forward of `attnviz
 * bench`. One spare, never more; a spare that does not fit is freed before
 * the new block is allocated, so the peak stays one block; attn_shutdown
 * frees it. docs/performance.md has the measurements. */
#define SPARE_MIN_BYTES   ((size_t)4 << 20)
#define BLOCK_SMALL_BYTES ((size_t)64 << 10) /* below: plain malloc */
#define ALIGN_UP(x, a)    (((x) + ((a)-1)) & ~(size_t)((a)-1))

static AttnSpare spare = {.m = PTHREAD_MUTEX_INITIALIZER};

void *attn__spare_take(AttnSpare *s, size_t want, size_t *bytes)
{
    pthread_mutex_lock(&s->m);
    void *b = s->block;
    size_t have = s->bytes;
    s->block = NULL;
    pthread_mutex_unlock(&s->m);
    if (b && have >= want && have / 2 <= want) {
        *bytes = have;
        return b;
    }
    free(b); /* too small or too large: gone before the new one comes */
    return NULL;
}

void attn__spare_give(AttnSpare *s, void *block, size_t bytes)
{
    pthread_mutex_lock(&s->m);
    void *old = s->block;
    s->block = block;
    s->bytes = bytes;
    pthread_mutex_unlock(&s->m);
    free(old);
}

double attn_clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t attn_fnv1a64_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3u;
    }
    return h;
}

void attn_shutdown(void)
{
    attn__heads_shutdown();
    attn__spare_give(&spare, NULL, 0);
}

/* A block of at least `total` bytes; its size in *bytes. NULL when memory
 * runs out. */
static unsigned char *block_alloc(size_t total, size_t *bytes)
{
    if (total < BLOCK_SMALL_BYTES) {
        *bytes = total;
        return malloc(total);
    }
    size_t want = ALIGN_UP(total, 64);
    if (want >= SPARE_MIN_BYTES) {
        unsigned char *b = attn__spare_take(&spare, want, bytes);
        if (b) return b;
    }
    unsigned char *block = aligned_alloc(64, want);
    *bytes = want;
#if defined(MADV_HUGEPAGE)
    /* A large trace is touched once, page by page, as it is computed: in 2 MiB
     * pages that is a few faults instead of one per 4 KiB. Only advice:
     * ignored where transparent huge pages are off. */
    if (block && want >= SPARE_MIN_BYTES) {
        uintptr_t lo = ((uintptr_t)block + 4095) & ~(uintptr_t)4095, hi = ((uintptr_t)block + want) & ~(uintptr_t)4095;
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return block;
}

/* Frees a block of block_alloc's, or keeps it as the spare. */
static void block_free(void *block, size_t bytes)
{
    if (block && bytes >= SPARE_MIN_BYTES)
        attn__spare_give(&spare, block, bytes);
    else
        free(block);
}

/* Frees the plan's per-head arrays unless they are its own small ones. */
static void plan_free(Plan *p)
{
    if (p->head != p->head_small) free(p->head);
    if (p->concat_from != p->concat_from_small) free(p->concat_from);
    if (p->decode) free(p->decode);
    p->head = NULL;
    p->concat_from = NULL;
    p->decode = NULL;
}

/* The names of the steps b listed with a position, written into names
 * (b->n_name_bytes), each step of dst (a copy of b's) pointing at its own. */
static void name_steps(AttnStep *dst, const Builder *b, char *names)
{
    if (b->n_name_bytes == 0) return;
    for (int i = 0; i < b->n_steps; i++)
        if (dst[i].at) {
            dst[i].name = names;
            names += positioned_name(names, ATTN_MAX_NAME, (AttnRole)dst[i].role, dst[i].head, dst[i].at) + 1;
        }
}

/* Lays the steps b listed out in the block: the `from` links at from, the
 * row flags (cleared) at flags, the names of steps with a position at
 * names, the numbers at floats, in the listed order. */
static void place_steps(AttnTrace *t, const Builder *b, unsigned short *from, unsigned char *flags, char *names,
                        float *floats)
{
    memcpy(from, b->from, sizeof(unsigned short) * b->n_from);
    for (int i = 0; i < b->n_steps; i++) {
        AttnStep *s = &t->steps[i];
        *s = b->steps[i];
        s->data = floats;
        floats += (size_t)s->rows * (size_t)s->cols;
        s->from = from;
        from += s->n_from;
        if (kind_has_row_flags(s->kind)) {
            s->row_flags = flags;
            memset(flags, 0, (size_t)s->rows);
            flags += s->rows;
        }
    }
    name_steps(t->steps, b, names);
}

/* Lists the steps of cfg's trace into b (builder_init'd) and their indices
 * into *p. Returns 0, or -1 when memory runs out (then b and *p are
 * released). cfg's sizes must be in attn_config_check's ranges; of its
 * matrices, only which optional ones are present is read. */
static int plan_trace(const AttnConfig *cfg, Plan *p, Builder *b)
{
    memset(p, 0, offsetof(Plan, head_small));
    int heads = cfg->attention == ATTN_ADDITIVE ? 1 : cfg->heads;
    int decoding = cfg->attention == ATTN_DOT && cfg->decode == ATTN_DECODE_INCREMENTAL;
    int n_from = decoding && cfg->n_q + 1 > heads ? cfg->n_q + 1 : heads; /* concat's links, or decoded's */
    p->head = p->head_small;
    p->concat_from = p->concat_from_small;
    if (heads > (int)(sizeof p->head_small / sizeof p->head_small[0])) p->head = calloc((size_t)heads, sizeof *p->head);
    if (n_from > (int)(sizeof p->concat_from_small / sizeof p->concat_from_small[0]))
        p->concat_from = calloc((size_t)n_from, sizeof *p->concat_from);
    int ok = p->head && p->concat_from;
    if (ok && decoding && !b->count_only) {
        /* one block: the tokens' plans, then every token's heads, then its K/V heads */
        size_t n = (size_t)cfg->n_q, per = (size_t)heads, G = (size_t)attn_kv_heads(cfg);
        p->decode = malloc(n * (sizeof(DecodePlan) + per * sizeof(HeadPlan) + G * sizeof(DecodeKvPlan)));
        ok = p->decode != NULL;
        for (size_t s = 0; ok && s < n; s++) {
            HeadPlan *hp = (HeadPlan *)(p->decode + n) + s * per;
            DecodeKvPlan *kv = (DecodeKvPlan *)((HeadPlan *)(p->decode + n) + n * per) + s * G;
            p->decode[s] = (DecodePlan){-1, -1, -1, -1, -1, hp, kv};
        }
    }
    if (ok) {
        if (cfg->attention == ATTN_DOT && !b->count_only) head_names_fill(cfg->heads);
        plan(b, cfg, p);
    }
    if (!ok || b->out_of_memory) {
        builder_free(b);
        plan_free(p);
        return -1;
    }
    return 0;
}

/* The steps and floats of a trace of cfg, counted from its plan (nothing
 * listed). -1 when memory runs out. */
static int count_trace(const AttnConfig *cfg, long *steps, size_t *floats)
{
    assert(cfg->n_q >= 1 && cfg->n_k >= 1 && cfg->heads >= 1 && cfg->heads <= ATTN_MAX_HEADS);
    Plan p;
    Builder b;
    builder_init(&b);
    b.count_only = 1;
    b.cap_steps = 0; /* every step to builder_reserve, which counts */
    if (plan_trace(cfg, &p, &b) != 0) return -1;
    *steps = b.n_steps;
    *floats = b.n_floats;
    builder_free(&b);
    plan_free(&p);
    return 0;
}

size_t attn_trace_floats(const AttnConfig *cfg)
{
    long steps;
    size_t floats;
    return count_trace(cfg, &steps, &floats) == 0 ? floats : SIZE_MAX;
}

long attn_trace_steps(const AttnConfig *cfg)
{
    long steps;
    size_t floats;
    return count_trace(cfg, &steps, &floats) == 0 ? steps : LONG_MAX;
}

AttnStep *attn_trace_outline(const AttnConfig *cfg, int *n_steps)
{
    assert(cfg->n_q >= 1 && cfg->n_k >= 1 && cfg->heads >= 1 && cfg->heads <= ATTN_MAX_HEADS);
    Plan p;
    Builder b;
    builder_init(&b);
    if (plan_trace(cfg, &p, &b) != 0) return NULL;
    /* the steps, then the names of those with a position */
    AttnStep *steps = malloc(sizeof *steps * (size_t)b.n_steps + b.n_name_bytes);
    for (int i = 0; steps && i < b.n_steps; i++) {
        steps[i] = b.steps[i];
        steps[i].n_from = 0;
    }
    if (steps) {
        name_steps(steps, &b, (char *)(steps + b.n_steps));
        *n_steps = b.n_steps;
    }
    builder_free(&b);
    plan_free(&p);
    return steps;
}

AttnTrace *attn__trace_begin(const AttnConfig *cfg, Plan *p, char *err, size_t errlen)
{
    memset(p, 0, offsetof(Plan, head_small));
    if (attn_config_check(cfg, err, errlen) != 0) {
        errno = EINVAL;
        return NULL;
    }
    Builder b;
    builder_init(&b);
    if (plan_trace(cfg, p, &b) != 0) {
        fail(err, errlen, "out of memory planning %d heads", cfg->attention == ATTN_ADDITIVE ? 1 : cfg->heads);
        errno = ENOMEM;
        return NULL;
    }

    /* one block: [AttnTrace][steps][from][flags][names][pad][floats] */
    /* (the floats on a cache line; in a block under 64 KiB, which malloc
     * aligns to 16 bytes only, on 16 bytes) */
    size_t off_steps = ALIGN_UP(sizeof(AttnTrace), _Alignof(AttnStep));
    size_t off_from = off_steps + sizeof(AttnStep) * (size_t)b.n_steps;
    size_t off_flags = off_from + sizeof(unsigned short) * b.n_from;
    size_t off_names = off_flags + b.n_flags;
    size_t off_floats = ALIGN_UP(off_names + b.n_name_bytes, 64);
    if (b.n_floats < (SIZE_MAX - off_floats) / sizeof(float) &&
        off_floats + sizeof(float) * b.n_floats < BLOCK_SMALL_BYTES)
        off_floats = ALIGN_UP(off_names + b.n_name_bytes, 16);
    size_t total = off_floats + sizeof(float) * b.n_floats;
    size_t block_bytes = 0;
    unsigned char *block =
        b.n_floats > (SIZE_MAX - off_floats) / sizeof(float) ? NULL : block_alloc(total, &block_bytes);
    if (!block) {
        if (b.n_floats > (SIZE_MAX - off_floats) / sizeof(float))
            fail(err, errlen, "the trace would need more memory than can be addressed");
        else
            fail(err, errlen, "out of memory: the trace needs %zu bytes", total);
        builder_free(&b);
        plan_free(p);
        errno = ENOMEM;
        return NULL;
    }
    AttnTrace *t = (AttnTrace *)block;
    t->cfg = *cfg;
    t->divisor = attn_config_divisor(cfg);
    t->n_steps = b.n_steps;
    t->steps = (AttnStep *)(block + off_steps);
    t->data_bytes = sizeof(float) * b.n_floats;
    t->alloc_bytes = block_bytes;
    atomic_init(&t->ready, 0);
    atomic_init(&t->cancel, 0);
    place_steps(t, &b, (unsigned short *)(block + off_from), block + off_flags, (char *)(block + off_names),
                (float *)(block + off_floats));
    builder_free(&b);
    return t;
}

/* The trace keeps no borrowed pointer: what it records is in its steps. */
static void forget_borrowed(AttnTrace *t)
{
    t->cfg.X = t->cfg.Y = t->cfg.W_Q = t->cfg.W_K = t->cfg.W_V = t->cfg.W_O = NULL;
    t->cfg.b_Q = t->cfg.b_K = t->cfg.b_V = t->cfg.b_O = NULL;
    t->cfg.W_a = t->cfg.b_a = t->cfg.v_a = NULL;
    t->cfg.mask = NULL;
}

AttnTrace *attn__trace_end(AttnTrace *t, Plan *p, const unsigned char *found, char *err, size_t errlen)
{
    plan_free(p);
    /* a trace holding an overflowed value is refused, never shown */
    if (check_finite(t, found, 0, t->n_steps, err, errlen) != 0) {
        attn_trace_destroy(t);
        errno = ERANGE;
        return NULL;
    }
    forget_borrowed(t);
    atomic_store_explicit(&t->ready, t->n_steps, memory_order_release);
    return t;
}

AttnTrace *attn_trace_plan(const AttnConfig *cfg, char *err, size_t errlen)
{
    Plan p;
    AttnTrace *t = attn__trace_begin(cfg, &p, err, errlen);
    if (!t) return NULL;
    plan_free(&p);
    forget_borrowed(t);
    return t;
}

int attn_trace_compute(AttnTrace *t, const AttnConfig *cfg, char *err, size_t errlen)
{
    /* the plan again: the same steps attn_trace_plan laid out, from the same
     * config (a list of indices, cheap beside any computing) */
    Plan p;
    Builder b;
    builder_init(&b);
    if (plan_trace(cfg, &p, &b) != 0) {
        fail(err, errlen, "out of memory planning %d heads", cfg->heads);
        errno = ENOMEM;
        return -1;
    }
    assert(b.n_steps == t->n_steps && b.n_floats * sizeof(float) == t->data_bytes);
    builder_free(&b);
    /* what the scans of each step found (attn_internal.h); on the stack for
     * a lesson-sized trace */
    unsigned char found_small[256];
    unsigned char *found = t->n_steps <= (int)sizeof found_small ? found_small : malloc((size_t)t->n_steps);
    if (!found) {
        plan_free(&p);
        fail(err, errlen, "out of memory: %d steps", t->n_steps);
        errno = ENOMEM;
        return -1;
    }
    memset(found, ATTN_SCAN_PENDING, (size_t)t->n_steps);
    /* A dot-attention trace larger than this is scanned step by step as it
     * is computed (attn_internal.h): each step while it is in L1, and the
     * weights, in [0, 1] by construction, not at all; and it is published
     * phase by phase. A smaller one is scanned in one pass at the end, where
     * a call per step would cost more than the few KiB of a lesson's trace,
     * and published whole. (Additive attention, only in small lessons, is
     * always scanned at the end.) */
    int scan_inline = cfg->attention == ATTN_DOT && t->data_bytes > ((size_t)1 << 17);
    int rc = 0;
    if (cfg->attention == ATTN_ADDITIVE)
        compute_additive(t, cfg, &p);
    else
        rc = compute_dot(t, cfg, &p, scan_inline ? found : NULL, err, errlen);
    plan_free(&p);
    if (rc == 0) {
        int from = atomic_load_explicit(&t->ready, memory_order_relaxed);
        if (check_finite(t, scan_inline ? found : NULL, from, t->n_steps, err, errlen) != 0) {
            errno = ERANGE;
            rc = -1;
        } else {
            atomic_store_explicit(&t->ready, t->n_steps, memory_order_release);
        }
    }
    if (found != found_small) free(found);
    return rc;
}

int attn_trace_ready(const AttnTrace *t)
{
    return atomic_load_explicit(&((AttnTrace *)t)->ready, memory_order_acquire);
}

void attn_trace_cancel(AttnTrace *t)
{
    atomic_store_explicit(&t->cancel, 1, memory_order_relaxed);
}

AttnTrace *attn_trace_create(const AttnConfig *cfg, char *err, size_t errlen)
{
    AttnTrace *t = attn_trace_plan(cfg, err, errlen);
    if (t && attn_trace_compute(t, cfg, err, errlen) != 0) {
        int e = errno;
        attn_trace_destroy(t);
        errno = e;
        return NULL;
    }
    return t;
}

void attn_trace_destroy(AttnTrace *trace)
{
    if (trace) block_free(trace, trace->alloc_bytes);
}

const AttnStep *attn_trace_find(const AttnTrace *t, AttnStepKind kind, int head)
{
    for (int i = 0; i < t->n_steps; i++)
        if (t->steps[i].kind == kind && t->steps[i].head == head) return &t->steps[i];
    return NULL;
}

const AttnStep *attn_trace_find_role(const AttnTrace *t, AttnRole role, int head)
{
    return attn_trace_find_at(t, role, head, 0);
}

const AttnStep *attn_trace_find_at(const AttnTrace *t, AttnRole role, int head, int at)
{
    for (int i = 0; i < t->n_steps; i++)
        if (t->steps[i].role == role && t->steps[i].head == head && t->steps[i].at == at) return &t->steps[i];
    return NULL;
}

const AttnStep *attn_trace_find_name(const AttnTrace *t, const char *name)
{
    for (int i = 0; i < t->n_steps; i++)
        if (strcmp(t->steps[i].name, name) == 0) return &t->steps[i];
    return NULL;
}

int attn_trace_index(const AttnTrace *t, const AttnStep *s)
{
    assert(s >= t->steps && s < t->steps + t->n_steps);
    return (int)(s - t->steps);
}
