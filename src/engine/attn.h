/* attn.h: the attnviz attention engine.
 *
 * Computes scaled dot-product attention, multi-head attention (self and
 * cross), masks and additive (Bahdanau) attention in float32, and records
 * every intermediate as a step of an AttnTrace, so that a lesson can show
 * where each number comes from. No SDL, no file I/O, no JSON: libc and libm.
 *
 * To see how attention is computed, read src/engine/reference.c first: the
 * whole forward pass in plain loops, top to bottom, with the shape of every
 * intermediate (attn_reference_forward). attn_trace_create returns the same
 * trace, computed fast (attn.c, kernels.c, heads.c); that is speed work,
 * tested against the reference step by step.
 *
 * Usage:
 *
 *     float X[2 * 3] = {1, 2, 3, 4, 5, 6};          // (n_q, d_model), row-major
 *     float WQ[3 * 2] = ..., WK[3 * 2] = ..., WV[3 * 2] = ...;
 *     AttnConfig cfg;
 *     attn_config_init(&cfg);                        // defaults: dot, 1 head, sqrt_dk
 *     cfg.n_q = cfg.n_k = 2; cfg.d_model = 3; cfg.heads = 1; cfg.d_k = cfg.d_v = 2;
 *     cfg.X = X; cfg.W_Q = WQ; cfg.W_K = WK; cfg.W_V = WV; // W_O NULL: output = concat
 *     char err[256];
 *     AttnTrace *t = attn_trace_create(&cfg, err, sizeof err);
 *     if (!t) { fprintf(stderr, "%s\n", err); return -1; }
 *     const AttnStep *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, 1); // head 1 weights
 *     ...
 *     attn_trace_destroy(t);
 *     attn_shutdown();                               // at exit: the engine's threads and spare memory
 *
 * Conventions (the seeds'): row vectors, Q = X · W_Q with W_Q of shape
 * d_model × heads·d_k; head h (1-based) uses columns [(h-1)·d_k, h·d_k) of Q
 * and K and [(h-1)·d_v, h·d_v) of V, exactly as split_heads does; softmax runs
 * along each row (one row per query). Every matrix is row-major float32.
 *
 * Masks use the seeds' convention 1 = may attend, 0 = blocked. A blocked
 * score is replaced by cfg.mask_fill (default -INFINITY) in the `masked`
 * step. With -INFINITY a blocked cell gets weight exactly 0 and a row whose
 * keys are all blocked gets all-zero weights and a zero output (never NaN);
 * such rows are flagged in AttnStep.row_flags. With a finite fill (the seeds'
 * -1e9 or -1e20) the softmax is computed as PyTorch would compute it.
 *
 * Overflow: every number a trace holds is finite, except the -INFINITY fill
 * of blocked cells in `masked` steps. When a product overflows float32
 * (|x| > 3.4e38, e.g. weights of 1e30), attn_trace_create returns NULL with a
 * message naming the first step and cell that overflowed ("scores_1[0][2] is
 * +inf: ..."), instead of a trace that would put inf or NaN on screen.
 *
 * Ownership: attn_trace_create copies nothing it does not need to: the
 * config's matrices are borrowed for the duration of the call only; the trace
 * holds its own copies of everything it records, in one allocation, and is
 * released by attn_trace_destroy (NULL is fine).
 */
#ifndef ATTN_H
#define ATTN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest step name, NUL included ("weights_1024", "K_cache_1024@65535"), with room to spare. */
#define ATTN_MAX_NAME 32
/* The most steps a trace may have (AttnStep.from holds 16-bit indices).
 * Only incremental decoding records steps per token; a config whose trace
 * would have more is refused by attn_config_check. */
#define ATTN_MAX_STEPS 65535

/* What a step of the trace is. The order is the order of a forward pass. */
typedef enum AttnStepKind {
    ATTN_STEP_INPUT,           /* X, Y */
    ATTN_STEP_WEIGHT,          /* W_Q, W_K, W_V, W_O, W_a, v_a */
    ATTN_STEP_BIAS,            /* b_Q, b_K, b_V, b_O, b_a (each 1 × width) */
    ATTN_STEP_PROJECTION,      /* Q = X·W_Q + b_Q, K, V */
    ATTN_STEP_SPLIT,           /* Q_h, K_h, V_h: a head's columns */
    ATTN_STEP_SCORES,          /* Q_h · K_hᵀ (dot) or tanh(...)·v_a (additive) */
    ATTN_STEP_SCALED,          /* scores / divisor */
    ATTN_STEP_MASKED,          /* blocked cells replaced by the fill */
    ATTN_STEP_SOFTMAX,         /* attention weights, rows sum to 1 */
    ATTN_STEP_WEIGHTED_SUM,    /* weights · V_h (a head's output), or context */
    ATTN_STEP_CONCAT,          /* [head_1 | ... | head_h] */
    ATTN_STEP_OUTPUT,          /* concat · W_O + b_O */
    ATTN_STEP_ADDITIVE_HIDDEN, /* tanh([x_i ; y_j] · W_a + b_a), (n_q·n_k) × d_a */
    ATTN_STEP_KV_APPEND,       /* decoding, token t: the K (or V) cache of a K/V head with t's row appended, t rows */
    ATTN_STEP_DECODE_CHECK,    /* decoding: every token's output row, stacked, beside the whole forward's output */
    ATTN_STEP_ROPE_ANGLES,     /* RoPE: the angle p·θ_i of position p and pair i, θ_i = base^(−2i/d_k) */
    ATTN_STEP_ROPE,            /* RoPE: Q_h or K_h with each row's pairs (2i, 2i+1) rotated by its angles */
    ATTN_STEP_POSITIONAL,      /* the sinusoidal positional encoding PE, a row per position */
    ATTN_STEP_ADD_POSITIONAL,  /* X + PE: the tokens with their positions added, what Q, K, V are made from */
    ATTN_STEP_TILE_SCORES,     /* tiled softmax, key block b: the block's columns of the softmax's input */
    ATTN_STEP_TILE_MAX,        /* tiled softmax: each row's running maximum m over blocks 1..b */
    ATTN_STEP_TILE_RESCALE,    /* tiled softmax: e^(m_old − m_new), what the sums so far are multiplied by */
    ATTN_STEP_TILE_SUM,        /* tiled softmax: the running sum l of e^(s − m) */
    ATTN_STEP_TILE_ACCUMULATE, /* tiled softmax: the running weighted sum of the values, not yet divided by l */
    ATTN_STEP_TILE_OUTPUT,     /* tiled softmax: the last block's sum divided by l: the head's output again */
    ATTN_STEP_KIND_COUNT
} AttnStepKind;

/* "input", "weight", ... as the trace format spells them. */
const char *attn_step_kind_name(AttnStepKind kind);
/* The kind for a name, or -1. */
int attn_step_kind_from_name(const char *name);

/* What a kind of step is, as attn_step_kind_flags says. */
enum {
    ATTN_KIND_GIVEN = 1,      /* copied from the config as given: an input, a weight, a bias */
    ATTN_KIND_ROW_FLAGS = 2,  /* carries a flag per row (AttnStep.row_flags, ATTN_ROW_*) */
    ATTN_KIND_FILLS = 4,      /* writes the mask's fill (cfg.mask_fill, −∞ by default) into blocked cells */
    ATTN_KIND_KEEPS_FILL = 8, /* each cell from the same cell of its source alone, so a fill there stays: scaled */
};
unsigned attn_step_kind_flags(AttnStepKind kind);

/* Which matrix of the formula a step holds, heads aside. A step's name is
 * its role's (attn_role_name), followed by "_H" for a step of head H and
 * "@T" for a step of decoding's token T (AttnStep.at): role Q is the
 * projection Q (head 0), the split Q_1, Q_2, ... (heads 1, 2, ...) and,
 * decoding, token 3's query row Q@3 and its head-1 columns Q_1@3; role
 * SCORES is additive attention's `scores` and dot attention's `scores_1`,
 * ... The kind says how a step is computed, the role what it stands for. */
typedef enum AttnRole {
    ATTN_ROLE_X,   /* the input: the queries' tokens (and the keys' in self-attention) */
    ATTN_ROLE_Y,   /* cross-attention: the keys' and values' tokens */
    ATTN_ROLE_W_Q, /* the projections' weights and biases */
    ATTN_ROLE_B_Q,
    ATTN_ROLE_W_K,
    ATTN_ROLE_B_K,
    ATTN_ROLE_W_V,
    ATTN_ROLE_B_V,
    ATTN_ROLE_W_O,
    ATTN_ROLE_B_O,
    ATTN_ROLE_Q,       /* the queries: the projection Q, and a head's Q_h */
    ATTN_ROLE_K,       /* the keys */
    ATTN_ROLE_V,       /* the values */
    ATTN_ROLE_SCORES,  /* how well each query matches each key */
    ATTN_ROLE_SCALED,  /* the scores divided */
    ATTN_ROLE_MASKED,  /* the scores with blocked cells filled */
    ATTN_ROLE_WEIGHTS, /* the attention weights */
    ATTN_ROLE_HEAD,    /* a head's output, weights · V_h */
    ATTN_ROLE_CONCAT,  /* the heads' outputs side by side */
    ATTN_ROLE_OUTPUT,  /* concat · W_O + b_O */
    ATTN_ROLE_W_A,     /* additive attention's weights, bias and scoring vector */
    ATTN_ROLE_B_A,
    ATTN_ROLE_V_A,
    ATTN_ROLE_HIDDEN,  /* additive: tanh([x_i ; y_j] · W_a + b_a) */
    ATTN_ROLE_CONTEXT, /* additive: weights · Y */
    ATTN_ROLE_K_CACHE, /* decoding: the keys of tokens 1..t, kept from step to step */
    ATTN_ROLE_V_CACHE, /* decoding: the values of tokens 1..t */
    ATTN_ROLE_DECODED, /* decoding: the output rows of every token, stacked */
    ATTN_ROLE_ANGLES,  /* RoPE: the rotation angle of each position and pair */
    ATTN_ROLE_Q_ROT,   /* RoPE: a head's queries rotated by their positions' angles */
    ATTN_ROLE_K_ROT,   /* RoPE: a K head's keys rotated */
    ATTN_ROLE_PE,      /* sinusoidal positional encoding: a vector per position */
    ATTN_ROLE_X_PE,    /* X + PE */
    ATTN_ROLE_BLOCK,   /* tiled softmax: one block of a head's logits */
    ATTN_ROLE_RUN_MAX, /* tiled softmax: m, the running maximum */
    ATTN_ROLE_RESCALE, /* tiled softmax: e^(m_old − m_new) */
    ATTN_ROLE_RUN_SUM, /* tiled softmax: l, the running sum */
    ATTN_ROLE_ACC,     /* tiled softmax: the running weighted sum of values */
    ATTN_ROLE_TILED,   /* tiled softmax: the head's output computed block by block */
    ATTN_ROLE_COUNT
} AttnRole;

/* "X", "W_Q", "Q", "scores", ...: a step's name without its head. */
const char *attn_role_name(AttnRole role);
/* The role of that name, or -1. */
int attn_role_from_name(const char *name);

/* What the rows or the columns of a step count. attn_axis_size says how
 * many there are for a config; attn_step_axis_size for a step, whose
 * position (AttnStep.at) sizes TOKEN and PREFIX. */
typedef enum AttnAxis {
    ATTN_AXIS_ONE,      /* one: a bias's single row, v_a's single column */
    ATTN_AXIS_QUERIES,  /* the query tokens, n_q */
    ATTN_AXIS_KEYS,     /* the key (and value) tokens, n_k */
    ATTN_AXIS_PAIRS,    /* (query i, key j) pairs, row i·n_k + j: n_q·n_k */
    ATTN_AXIS_MODEL,    /* a token's features, d_model */
    ATTN_AXIS_DK,       /* one head's query and key features, d_k */
    ATTN_AXIS_DV,       /* one head's value features, d_v */
    ATTN_AXIS_HEADS_DK, /* every head's query and key features side by side, heads·d_k */
    ATTN_AXIS_HEADS_DV, /* every head's value features side by side, heads·d_v */
    ATTN_AXIS_DX,       /* additive: a query's features, d_x */
    ATTN_AXIS_DY,       /* additive: a key's features, d_y (d_x in self-attention) */
    ATTN_AXIS_DXY,      /* additive: a query's and a key's features joined, d_x + d_y */
    ATTN_AXIS_DA,       /* additive: the hidden layer's units, d_a */
    ATTN_AXIS_KV_DK,    /* grouped K/V heads (kv_heads): every K head's features side by side, kv_heads·d_k */
    ATTN_AXIS_KV_DV,    /* grouped K/V heads: every V head's features side by side, kv_heads·d_v */
    ATTN_AXIS_TOKEN,    /* decoding: the one token t being decoded (the step's at), 1 */
    ATTN_AXIS_PREFIX,   /* decoding: the tokens 1..t decoded so far (the step's at), t; n_k for a config */
    ATTN_AXIS_DK_PAIRS, /* RoPE: one head's pairs of features (2i, 2i+1) that turn together, d_k/2 */
    ATTN_AXIS_BLOCK,    /* tiled softmax: the keys of block b (the step's at), min(tile, n_k − (b−1)·tile) */
    ATTN_AXIS_COUNT
} AttnAxis;

typedef enum AttnKind { ATTN_DOT, ATTN_ADDITIVE } AttnKind;

typedef enum AttnMaskKind {
    ATTN_MASK_NONE,
    ATTN_MASK_CAUSAL,  /* query i may attend key j iff j <= i */
    ATTN_MASK_PADDING, /* cfg.mask has n_k entries, one per key */
    ATTN_MASK_MATRIX   /* cfg.mask has n_q × n_k entries */
} AttnMaskKind;
const char *attn_mask_kind_name(AttnMaskKind kind); /* "none", "causal", ... */

typedef enum AttnScaleKind {
    ATTN_SCALE_SQRT_DK,     /* divide by √d_k (the default, the paper's) */
    ATTN_SCALE_SQRT_DMODEL, /* divide by √d_model (seed 003's pitfall) */
    ATTN_SCALE_NONE,        /* divide by 1 */
    ATTN_SCALE_VALUE        /* divide by cfg.scale_value (> 0) */
} AttnScaleKind;
const char *attn_scale_kind_name(AttnScaleKind kind); /* "sqrt_dk", ... */

/* The order of the `scaled` and `masked` steps. The paper and seed 000 scale,
 * then mask, so a blocked score is exactly the fill. Seed 003 masks the raw
 * scores, then divides: softmax(energy.masked_fill(mask == 0, -1e20) / √d),
 * so a blocked score ends up as fill / divisor. */
typedef enum AttnMaskOrder {
    ATTN_SCALE_THEN_MASK, /* scores → scaled → masked → softmax (the default) */
    ATTN_MASK_THEN_SCALE  /* scores → masked → scaled → softmax (seed 003) */
} AttnMaskOrder;
const char *attn_mask_order_name(AttnMaskOrder order); /* "scale_then_mask", "mask_then_scale" */

/* How the forward runs. ATTN_DECODE_INCREMENTAL (causal self-attention
 * only) records the whole causal forward, then the same forward token by
 * token, as a decoder generates: at token t only t's rows of Q, K and V
 * are computed (Q@t, K@t, V@t), each K/V head's keys and values are
 * appended to its cache (K_cache_G@t, V_cache_G@t, t rows), and head h
 * computes one row of scores, weights and output against the cache
 * (scores_h@t ... head_h@t, then concat@t, output@t). The last step,
 * `decoded`, stacks every token's output row beside the whole forward's
 * output: the two are equal (within float rounding). */
typedef enum AttnDecode {
    ATTN_DECODE_FULL,       /* the whole sequence at once (the default) */
    ATTN_DECODE_INCREMENTAL /* then token by token, with a K/V cache */
} AttnDecode;
const char *attn_decode_name(AttnDecode decode); /* "full", "incremental" */

/* Where the positions come from, besides RoPE. ATTN_POSITIONAL_SINUSOIDAL
 * (Vaswani et al., 2017) adds to X, before the projections, the vector of
 * its position p (0-based): PE[p][2i] = sin(p / 10000^(2i/d_model)),
 * PE[p][2i+1] = cos(p / 10000^(2i/d_model)); steps `PE` and `X_PE` = X + PE,
 * which Q, K and V are projected from. Dot self-attention. */
typedef enum AttnPositional {
    ATTN_POSITIONAL_NONE,      /* X as given (the default) */
    ATTN_POSITIONAL_SINUSOIDAL /* X + PE */
} AttnPositional;
const char *attn_positional_name(AttnPositional positional); /* "none", "sinusoidal" */

/* Everything one forward pass needs. Pointers are borrowed, row-major. */
typedef struct AttnConfig {
    AttnKind attention;
    int cross;    /* 1: K and V come from Y (n_k rows), 0: from X */
    int n_q, n_k; /* query and key counts (n_k == n_q when !cross) */
    int d_model;  /* width of X and Y for dot attention */
    int heads;    /* ≥ 1 */
    int d_k, d_v; /* per-head widths */
    int kv_heads; /* grouped-query attention: G K/V heads, 1 ≤ G ≤ heads, G dividing heads; 0: heads (each query
                   * head its own). Consecutive query heads share one: head h (1-based) reads K/V head
                   * ⌈h·G/heads⌉ (attn_kv_head). W_K, b_K are d_model × G·d_k and G·d_k wide, W_V, b_V G·d_v,
                   * and the steps of roles K, V, K_CACHE and V_CACHE are numbered by K/V head 1..G. G = 1
                   * is multi-query attention. */
    AttnScaleKind scale_kind;
    float scale_value; /* the divisor when scale_kind == ATTN_SCALE_VALUE */
    AttnMaskKind mask_kind;
    const unsigned char *mask; /* (n_k) for PADDING, (n_q, n_k) for MATRIX: 1 attend, 0 blocked */
    float mask_fill;           /* what a blocked score becomes; default -INFINITY */
    AttnMaskOrder mask_order;  /* with a mask: scale then mask (default), or mask then scale */

    const float *X;   /* (n_q, d_model), or (n_q, d_x) for additive */
    const float *Y;   /* (n_k, d_model), or (n_k, d_y); NULL unless cross */
    const float *W_Q; /* (d_model, heads·d_k) */
    const float *W_K; /* (d_model, G·d_k), G = kv_heads or heads */
    const float *W_V; /* (d_model, G·d_v) */
    const float *W_O; /* (heads·d_v, d_model), NULL: no output projection */
    const float *b_Q; /* (heads·d_k) or NULL */
    const float *b_K; /* (G·d_k) or NULL */
    const float *b_V; /* (G·d_v) or NULL */
    const float *b_O; /* (d_model) or NULL; only with W_O */

    /* additive attention */
    int d_x, d_y, d_a;
    const float *W_a; /* (d_x + d_y, d_a) */
    const float *b_a; /* (d_a) or NULL */
    const float *v_a; /* (d_a) */

    AttnDecode decode; /* ATTN_DECODE_INCREMENTAL: then token by token with a K/V cache (dot, self, causal) */
    float rope_base;   /* rotary position embeddings (RoFormer, LLaMA): 0 none; else the base (10000 usually), > 1.
                        * After the split, the pair (2i, 2i+1) of each row p (0-based position) of Q_h and K_h is
                        * rotated by the angle p·base^(−2i/d_k) (steps `angles`, Q_rot_h, K_rot_g), so that a
                        * score depends on the two positions only through their distance. Dot self-attention,
                        * d_k even. */
    AttnPositional positional; /* ATTN_POSITIONAL_SINUSOIDAL: X + PE before the projections (dot, self) */
    int tile; /* FlashAttention's tiled softmax: 0 none; else B ≥ 1, the keys per block. After each head's
               * weighted sum, its softmax and weighted sum again over blocks of B keys, with a running maximum m,
               * sum l and rescaled weighted sum (steps block_h@b, m_h@b, rescale_h@b, l_h@b, acc_h@b for
               * block b), then tiled_h = acc / l, which equals head_h. Dot attention; the whole forward only
               * (decoding's rows are not tiled). */

    int threads; /* worker threads for the heads and the projections' rows; ≤ 1: the caller's thread only.
                  * The trace is the same, bit for bit, whatever the count. */
} AttnConfig;

/* How many rows or columns of that axis a trace of cfg has (PREFIX: n_k,
 * the most it counts; TOKEN: 1), and a step at position `at` (its
 * AttnStep.at: PREFIX counts at). */
int attn_axis_size(const AttnConfig *cfg, AttnAxis axis);
int attn_step_axis_size(const AttnConfig *cfg, AttnAxis axis, int at);

/* The K/V heads of cfg: kv_heads, or heads when it is 0. */
int attn_kv_heads(const AttnConfig *cfg);
/* The K/V head (1-based) that query head h (1-based) reads: ⌈h·G/heads⌉. */
int attn_kv_head(const AttnConfig *cfg, int h);

/* Fills the defaults: dot, self, one head, sqrt_dk, no mask, fill -INFINITY. */
void attn_config_init(AttnConfig *cfg);
/* Checks sizes and pointers. Returns 0, or -1 with a message in err. */
int attn_config_check(const AttnConfig *cfg, char *err, size_t errlen);
/* The divisor the `scaled` step uses, for this config. */
float attn_config_divisor(const AttnConfig *cfg);
/* May query i (0-based) attend key j under cfg's mask? cfg->mask must hold
 * the mask's values when its kind has any (a lesson's config does; a
 * trace's copy keeps none). */
int attn_allowed(const AttnConfig *cfg, int i, int j);

/* Row flags of masked, softmax and weighted_sum steps. */
enum { ATTN_ROW_ALL_BLOCKED = 1 };

/* 56 bytes: at a lesson's size (5 tokens, 28 steps) the steps' own fields
 * weigh about as much as the numbers they describe. */
typedef struct AttnStep {
    float *data;                /* (rows, cols), owned by the trace */
    const char *name;           /* "X", "W_Q", "Q", "Q_2", "scores_2", "weights_2", "head_2", "concat", "output":
                                 * static storage, valid for the life of the process (at most ATTN_MAX_NAME bytes);
                                 * a step with a position ("scores_2@3") is named in its trace's block (or its
                                 * outline's), valid as long as that */
    const unsigned short *from; /* indices of the steps this one was computed from (a trace has < 65536 steps) */
    unsigned char *row_flags;   /* (rows) ATTN_ROW_* bits, or NULL when the step has none */
    int rows, cols;
    unsigned short head; /* 1-based head, 0 when the step is not per-head */
    unsigned short at;   /* the step's 1-based position (its name ends "@at"): decoding's token t, or the tiled
                          * softmax's key block b; 0: none */
    unsigned short n_from;
    unsigned char kind;     /* AttnStepKind: how it is computed */
    unsigned char role;     /* AttnRole: what it stands for */
    unsigned char row_axis; /* AttnAxis: what its rows count (rows = attn_axis_size of it) */
    unsigned char col_axis; /* AttnAxis: what its columns count */
} AttnStep;

typedef struct AttnTrace {
    AttnConfig cfg; /* a copy, with every borrowed pointer set to NULL */
    float divisor;  /* what `scaled` divides by */
    int n_steps;
    AttnStep *steps;    /* (n_steps) */
    size_t data_bytes;  /* bytes of all step data: the intermediates themselves */
    size_t alloc_bytes; /* bytes of the single allocation that holds the trace */
    atomic_int ready;   /* steps [0, ready) are computed and checked: read it with attn_trace_ready */
    atomic_int cancel;  /* set by attn_trace_cancel */
} AttnTrace;

/* Multiply-adds of the matrix products of incremental decoding, for a
 * narration that counts what the K/V cache saves. A forward over t tokens
 * costs t·d_model·(heads·d_k + G·d_k + G·d_v) for Q, K, V (G = the K/V heads),
 * heads·t·t·(d_k + d_v) for the scores and the weighted sums (every cell,
 * the blocked ones too, as the trace computes them) and, with W_O,
 * t·heads·d_v·d_model for the output. Filled by attn_decode_macs from a
 * trace's config and steps (its output step says whether there is a W_O);
 * for any trace of dot attention, decoding or not. */
typedef struct AttnDecodeMacs {
    uint64_t incremental; /* Σ over tokens t of the steps @t: one row of Q, K, V; per head a row of t scores and the
                           * weighted sum over t values; one output row */
    uint64_t full;        /* one forward over all n tokens: the trace's first part */
    uint64_t recompute;   /* without a cache: at each token t the forward over tokens 1..t again, Σ_t full(t) */
} AttnDecodeMacs;
void attn_decode_macs(const AttnTrace *trace, AttnDecodeMacs *macs);

/* Runs the forward pass and records it, the fast way: the same steps as
 * attn_reference_forward, each number within float rounding of it (the
 * recorded inputs, weights and biases bit for bit). Returns NULL with a message in err
 * and errno set: EINVAL when the config is invalid, ENOMEM when memory runs
 * out, ERANGE when a value overflowed float32 (see "Overflow" above). EINVAL
 * and ERANGE are the lesson's fault (exit status 2), ENOMEM the machine's. */
AttnTrace *attn_trace_create(const AttnConfig *cfg, char *err, size_t errlen);
void attn_trace_destroy(AttnTrace *trace);

/* attn_trace_create in two halves, so that a window can show the first
 * steps of a large trace while the others are computed on another thread:
 *
 *     AttnTrace *t = attn_trace_plan(&cfg, err, sizeof err); // laid out, nothing computed
 *     // on a worker thread:  attn_trace_compute(t, &cfg, err2, sizeof err2);
 *     // meanwhile, anywhere: steps [0, attn_trace_ready(t)) may be read
 *
 * attn_trace_plan checks cfg and allocates the trace with every step named,
 * shaped and linked and its config copied (borrowed pointers NULL), but no
 * number computed: attn_trace_ready(t) is 0. NULL with err and errno set
 * (EINVAL, ENOMEM) as attn_trace_create.
 *
 * attn_trace_compute computes t from cfg (the config t was planned from,
 * whose matrices must stay valid and unchanged until it returns), phase by
 * phase: the inputs and projections, then the heads, then the output. After
 * each phase the phase's steps are checked for overflow and published:
 * attn_trace_ready(t) grows, with release order, so a thread that reads it
 * may read those steps' numbers and row flags; the steps at and beyond it are
 * being written. Returns 0 (attn_trace_ready(t) == n_steps), or -1 with err
 * and errno set: ERANGE with the message attn_trace_create gives (the steps
 * before the bad one stay published), ECANCELED after attn_trace_cancel,
 * ENOMEM. Either way the caller still owns t, and destroys it only after
 * attn_trace_compute has returned. The numbers are those of
 * attn_trace_create, bit for bit. */
AttnTrace *attn_trace_plan(const AttnConfig *cfg, char *err, size_t errlen);
int attn_trace_compute(AttnTrace *t, const AttnConfig *cfg, char *err, size_t errlen);
/* How many leading steps of t are computed (acquire order): n_steps for a
 * trace attn_trace_create or attn_reference_forward returned. Any thread. */
int attn_trace_ready(const AttnTrace *t);
/* Asks a running attn_trace_compute to stop at the end of its phase (any
 * thread; it then returns -1 with ECANCELED). */
void attn_trace_cancel(AttnTrace *t);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), for timing: only the
 * difference of two readings means anything. The one clock of the program. */
double attn_clock_seconds(void);

/* FNV-1a, 64-bit: h (ATTN_FNV1A64_BASIS to start) folded with the n bytes
 * at p. The program's one hash: the lessons' per-matrix random streams,
 * render's text cache key, and the tests' digests of traces. */
#define ATTN_FNV1A64_BASIS 0xcbf29ce484222325u
uint64_t attn_fnv1a64_bytes(uint64_t h, const void *p, size_t n);

/* Releases what the engine keeps for the whole process between forwards:
 * the spare blocks of the last large trace and of the heads' packed K and V,
 * and the worker threads (stopped and joined). Call it at exit, once no
 * forward is running on any thread, so that leak checkers see nothing left.
 * Traces still alive stay valid (step names are in static storage), and the
 * engine keeps working: the next forward starts from nothing. */
void attn_shutdown(void);

/* The steps a trace of cfg has, in order, as attn_trace_plan would lay them
 * out but without numbers: data, from and row_flags NULL, n_from 0. An
 * array of *n_steps steps for the caller to free(); NULL when memory runs
 * out. cfg as for attn_trace_floats. */
AttnStep *attn_trace_outline(const AttnConfig *cfg, int *n_steps);

/* How many floats a trace of cfg records (data_bytes / 4), counted from the
 * same plan attn_trace_create lays out, without allocating the trace or
 * computing anything; SIZE_MAX when memory runs out. cfg's sizes must be in
 * attn_config_check's ranges; its matrices need not be there: only which
 * optional ones are present (b_Q, b_K, b_V, W_O, b_O, b_a) and mask_kind
 * matter. */
size_t attn_trace_floats(const AttnConfig *cfg);
/* How many steps a trace of cfg has (may exceed ATTN_MAX_STEPS, which
 * attn_config_check refuses), from the same plan, allocating nothing. cfg as
 * for attn_trace_floats. */
long attn_trace_steps(const AttnConfig *cfg);

/* The first step of that kind and head (0: not per-head), or NULL. */
const AttnStep *attn_trace_find(const AttnTrace *trace, AttnStepKind kind, int head);
/* The step of that role and head (0: not per-head) with no position, or NULL. */
const AttnStep *attn_trace_find_role(const AttnTrace *trace, AttnRole role, int head);
/* The step of that role, head and position (AttnStep.at, 0: none), or NULL. */
const AttnStep *attn_trace_find_at(const AttnTrace *trace, AttnRole role, int head, int at);
/* The step with that name, or NULL. */
const AttnStep *attn_trace_find_name(const AttnTrace *trace, const char *name);
/* Index of a step in trace->steps. */
int attn_trace_index(const AttnTrace *trace, const AttnStep *step);

/* ---- reference path: read this first (reference.c) ---------------------- */

/* The whole forward pass in plain loops, sums in double: the same trace as
 * attn_trace_create (same steps, shapes, names, links and row flags, the
 * numbers within float rounding), the same errors. cfg.threads is ignored.
 * The tests compare the two step by step. */
AttnTrace *attn_reference_forward(const AttnConfig *cfg, char *err, size_t errlen);
/* C(m,n) = A(m,k) · B(k,n) [+ bias(n)], accumulated in double. */
void attn_matmul_naive(float *C, const float *A, const float *B, const float *bias, int m, int k, int n);
/* C(m,n) = A(m,k) · B(n,k)ᵀ, accumulated in double. */
void attn_matmul_nt_naive(float *C, const float *A, const float *B, int m, int k, int n);
/* Row-wise softmax of x (rows, cols) into y, in double, max subtracted
 * first. A row that is all -INFINITY becomes all zero and gets
 * ATTN_ROW_ALL_BLOCKED in flags (flags may be NULL); a row holding +INFINITY
 * shares the weight among those cells (softmax's limit). */
void attn_softmax_rows_reference(float *y, unsigned char *flags, const float *x, int rows, int cols);

/* ---- fast path: optional speed work (kernels.c) ---------------------------- */

/* The same products as the naive ones, blocked and vectorised, summed in
 * float in order, each term by a fused multiply-add: within rounding of
 * them, and bit for bit the same whatever the block sizes, instruction set
 * or thread count. */
void attn_matmul(float *C, const float *A, const float *B, const float *bias, int m, int k, int n);
void attn_matmul_nt(float *C, const float *A, const float *B, int m, int k, int n);
/* The same softmax as attn_softmax_rows_reference, vectorised, e^x by a
 * polynomial (within 2 ulp): each weight within 1e-7 + 1e-5·|w| of the
 * reference's (tests/test_kernels.c). */
void attn_softmax_rows(float *y, unsigned char *flags, const float *x, int rows, int cols);
/* Which build of the fast kernels runs here, chosen by the CPU when the
 * program loads: "x86-64-v4" (AVX-512 and FMA), "x86-64-v3" (AVX2 and FMA)
 * or "x86-64" (SSE2, FMA by libm's fmaf); "one build" where the engine was
 * compiled without runtime dispatch (another architecture, ThreadSanitizer,
 * -DATTN_NO_TARGET_CLONES), "one build for x86-64-v3" (or v4) when that
 * build was compiled for AVX2 and FMA (or AVX-512). Every build gives the
 * same bits. */
const char *attn_kernels_isa(void);

#ifdef __cplusplus
}
#endif
#endif
