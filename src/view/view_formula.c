/* view_formula.c: the formula bar: a step's formula, the part the step
 * computes highlighted, in row or column notation. */
#include "view_internal.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- formulas ---- */

struct FormulaBuilder {
    char *buf;
    size_t len, at;
    int hl_start, hl_end;
};

static void fb_add(FormulaBuilder *b, int highlight, const char *fmt, ...)
{
    if (b->at >= b->len) return;
    size_t start = b->at;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->buf + b->at, b->len - b->at, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    b->at += (size_t)n;
    if (b->at >= b->len) b->at = b->len - 1;
    if (highlight) {
        if (b->hl_start < 0) b->hl_start = (int)start;
        b->hl_end = (int)b->at;
    }
}

static void fb_sub(FormulaBuilder *b, int highlight, int n)
{
    char s[24] = "";
    view_cat_subscript(s, sizeof s, 0, n);
    fb_add(b, highlight, "%s", s);
}

/* Additive attention: one formula for every step past the inputs, with the
 * part the step computes highlighted. */
static void formula_additive(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    const char *y = t->cfg.cross ? "y" : "x";
    const char *ba = attn_trace_find_role(t, ATTN_ROLE_B_A, 0) ? " + b_a" : "";
    if (attn_step_kind_flags((AttnStepKind)s->kind) & ATTN_KIND_GIVEN) {
        fb_add(b, 1, "%s   (%d × %d)", s->name, col ? s->cols : s->rows, col ? s->rows : s->cols);
        return;
    }
    FormulaPart part = view_kind(s->kind)->part;
    int sc = part == PART_SCORES, hid = part == PART_HIDDEN;
    fb_add(b, sc, "e_ij = v_aᵀ · ");
    if (col)
        fb_add(b, sc || hid, "tanh(W_a · [x_i ; %s_j]%s)", y, ba);
    else
        fb_add(b, sc || hid, "tanh([x_i ; %s_j] · W_a%s)", y, ba);
    if (part == PART_MASKED) fb_add(b, 1, ",  e_ij = −∞ where blocked");
    fb_add(b, 0, "     ");
    fb_add(b, part == PART_WEIGHTS, "α_i = softmax(e_i)");
    fb_add(b, 0, "     ");
    fb_add(b, part == PART_HEAD, "c_i = Σ_j α_ij · %s_j", y);
}

/* What an axis counts, as the formulas write it; n for the tokens of
 * self-attention, whose queries are its keys. */
static const char *axis_symbol(const AttnTrace *t, int axis)
{
    static const char *const symbols[] = {
        [ATTN_AXIS_ONE] = "1",         [ATTN_AXIS_QUERIES] = "n_q",    [ATTN_AXIS_KEYS] = "n_k",
        [ATTN_AXIS_PAIRS] = "n_q·n_k", [ATTN_AXIS_MODEL] = "d_model",  [ATTN_AXIS_DK] = "d_k",
        [ATTN_AXIS_DV] = "d_v",        [ATTN_AXIS_HEADS_DK] = "h·d_k", [ATTN_AXIS_HEADS_DV] = "h·d_v",
        [ATTN_AXIS_DX] = "d_x",        [ATTN_AXIS_DY] = "d_y",         [ATTN_AXIS_DXY] = "d_x + d_y",
        [ATTN_AXIS_DA] = "d_a",        [ATTN_AXIS_TOKEN] = "1",        [ATTN_AXIS_PREFIX] = "t",
        [ATTN_AXIS_KV_DK] = "g·d_k",   [ATTN_AXIS_KV_DV] = "g·d_v",    [ATTN_AXIS_DK_PAIRS] = "d_k/2",
        [ATTN_AXIS_BLOCK] = "B",
    };
    _Static_assert(sizeof symbols / sizeof symbols[0] == ATTN_AXIS_COUNT, "symbols[] must name every AttnAxis");
    if (!t->cfg.cross && (axis == ATTN_AXIS_QUERIES || axis == ATTN_AXIS_KEYS)) return "n";
    return symbols[axis];
}

/* An input, a weight or a bias: its name and shape, with what the sides are. */
void view_formula_operand(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    int R = col ? s->cols : s->rows, C = col ? s->rows : s->cols;
    if (s->kind == ATTN_STEP_BIAS && col)
        fb_add(b, 1, "%s   (%d × 1, added to every column)", s->name, R);
    else if (s->kind == ATTN_STEP_BIAS)
        fb_add(b, 1, "%s   (1 × %d, added to every row)", s->name, C);
    else
        fb_add(b, 1, "%s   (%s × %s = %d × %d)", s->name, axis_symbol(t, col ? s->col_axis : s->row_axis),
               axis_symbol(t, col ? s->row_axis : s->col_axis), R, C);
}

/* The three projections, the step's own highlighted. */
void view_formula_projection(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    static const AttnRole roles[3] = {ATTN_ROLE_Q, ATTN_ROLE_K, ATTN_ROLE_V};
    static const AttnRole biases[3] = {ATTN_ROLE_B_Q, ATTN_ROLE_B_K, ATTN_ROLE_B_V};
    for (int i = 0; i < 3; i++) {
        const char *name = attn_role_name(roles[i]);
        int on = s->role == roles[i];
        const char *src = (i > 0 && t->cfg.cross)                           ? "Y"
                          : t->cfg.positional == ATTN_POSITIONAL_SINUSOIDAL ? "(X + PE)"
                                                                            : "X";
        int bias = attn_trace_find_role(t, biases[i], 0) != NULL;
        if (i) fb_add(b, 0, "     ");
        if (col)
            fb_add(b, on, "%s = W_%s·%s%s%s", name, name, src, bias ? " + b_" : "", bias ? name : "");
        else
            fb_add(b, on, "%s = %s·W_%s%s%s", name, src, name, bias ? " + b_" : "", bias ? name : "");
    }
}

/* Where the positions enter: the sinusoidal encoding added to X, or RoPE's
 * angles and rotation of a head's queries and keys. */
void view_formula_position(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    (void)col;
    const AttnConfig *c = &t->cfg;
    switch (s->kind) {
    case ATTN_STEP_POSITIONAL:
        fb_add(b, 1, "PE[p, 2i] = sin(p / 10000^(2i/d_model)),  PE[p, 2i+1] = cos(p / 10000^(2i/d_model))");
        fb_add(b, 0, "   (d_model = %d)", c->d_model);
        break;
    case ATTN_STEP_ADD_POSITIONAL:
        fb_add(b, 1, "X_PE = X + PE");
        fb_add(b, 0, "     Q = X_PE·W_Q,  K = X_PE·W_K,  V = X_PE·W_V");
        break;
    case ATTN_STEP_ROPE_ANGLES:
        fb_add(b, 1, "angle[p, i] = p·θ_i,  θ_i = %g^(−2i/d_k)", (double)c->rope_base);
        fb_add(b, 0, "   (d_k = %d, i = 0 … %d)", c->d_k, c->d_k / 2 - 1);
        break;
    default: {
        /* each pair (x, y) = (row[2i], row[2i+1]) of row p turned by its angle */
        fb_add(b, 1, "(x, y) → (x·cos a − y·sin a, x·sin a + y·cos a)");
        fb_add(b, 0, "   a = angle[p, i]");
        break;
    }
    }
}

/* FlashAttention's tiled softmax: the recurrence over key blocks, the
 * step's part highlighted. */
void view_formula_tile(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    (void)col;
    int k = s->kind;
    /* block b holds keys (b − 1)·B + 1 … min(b·B, n_k), counted from 1 as on screen */
    int first = (s->at > 0 ? s->at - 1 : 0) * t->cfg.tile + 1, last = first - 1 + t->cfg.tile;
    if (last > t->cfg.n_k) last = t->cfg.n_k;
    if (s->kind == ATTN_STEP_TILE_OUTPUT)
        fb_add(b, 0, "blocks of %d keys: s_j", t->cfg.tile);
    else if (first == last)
        fb_add(b, k == ATTN_STEP_TILE_SCORES, "block %d: s_j, key %d", s->at, first);
    else
        fb_add(b, k == ATTN_STEP_TILE_SCORES, "block %d: s_j, keys %d–%d", s->at, first, last);
    fb_add(b, 0, "   ");
    fb_add(b, k == ATTN_STEP_TILE_MAX, "m = max(m_old, max_j s_j)");
    fb_add(b, 0, "   ");
    fb_add(b, k == ATTN_STEP_TILE_RESCALE, "r = e^(m_old − m)");
    fb_add(b, 0, "   ");
    fb_add(b, k == ATTN_STEP_TILE_SUM, "l = r·l_old + Σ_j e^(s_j − m)");
    fb_add(b, 0, "   ");
    fb_add(b, k == ATTN_STEP_TILE_ACCUMULATE, "acc = r·acc_old + Σ_j e^(s_j − m)·v_j");
    fb_add(b, 0, "   ");
    fb_add(b, k == ATTN_STEP_TILE_OUTPUT, "out = acc / l");
}

/* A head's slice of a projection. */
void view_formula_split(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    int w = s->cols, h = s->head;
    const char *name = attn_role_name((AttnRole)s->role);
    fb_add(b, 1, "%s", name);
    fb_sub(b, 1, h);
    if (col)
        fb_add(b, 1, " = %s[%d:%d, :]", name, (h - 1) * w, h * w);
    else
        fb_add(b, 1, " = %s[:, %d:%d]", name, (h - 1) * w, h * w);
    if (view_is_kv_step(&t->cfg, s))
        fb_add(b, 0, "   (kv_heads = %d, %s = %d)", attn_kv_heads(&t->cfg), axis_symbol(t, s->col_axis), w);
    else
        fb_add(b, 0, "   (h = %d, %s = %d)", t->cfg.heads, axis_symbol(t, s->col_axis), w);
}

/* One head: head = softmax(Q·Kᵀ / scale + M) · V, the step's part highlighted;
 * the scaled step adds what the divisor is. */
void view_formula_head(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    const AttnConfig *c = &t->cfg;
    FormulaPart part = view_kind(s->kind)->part;
    int h = s->head, g = attn_kv_head(c, h); /* g: the K/V head it reads, h itself unless grouped */
    /* a part holds the parts inside it: the weighted sum all of them, softmax its argument */
    int ws = part == PART_HEAD, sm = ws || part == PART_WEIGHTS, qk = sm || part == PART_SCORES;
    int mk = sm || part == PART_MASKED;
    fb_add(b, ws, "head");
    fb_sub(b, ws, h);
    fb_add(b, ws, " = ");
    if (col) {
        fb_add(b, ws, "V");
        fb_sub(b, ws, g);
        fb_add(b, ws, " · ");
    }
    /* seed 003's order masks the raw scores: softmax((Q·Kᵀ + M) / √d) */
    int mask_first = c->mask_kind != ATTN_MASK_NONE && c->mask_order == ATTN_MASK_THEN_SCALE;
    fb_add(b, sm, "softmax(");
    if (mask_first) fb_add(b, mk, "(");
    /* Q·Kᵀ in rows; Kᵀ·Q in columns, one column per query; with RoPE the rotated Q_rot and K_rot */
    const char *rot = c->rope_base != 0 ? "_rot" : "";
    fb_add(b, qk, col ? "K%s" : "Q%s", rot);
    fb_sub(b, qk, col ? g : h);
    fb_add(b, qk, col ? "ᵀ·Q%s" : "·K%s", rot);
    fb_sub(b, qk, col ? h : g);
    if (!col) fb_add(b, qk, "ᵀ");
    if (mask_first) fb_add(b, mk, " + M)");
    int sc = sm || part == PART_SCALED;
    switch (c->scale_kind) {
    case ATTN_SCALE_SQRT_DK:
        fb_add(b, sc, " / √d_k");
        break;
    case ATTN_SCALE_SQRT_DMODEL:
        fb_add(b, sc, " / √d_model");
        break;
    case ATTN_SCALE_NONE:
        fb_add(b, sc, " / 1");
        break;
    case ATTN_SCALE_VALUE:
        fb_add(b, sc, " / %g", (double)c->scale_value);
        break;
    }
    if (c->mask_kind != ATTN_MASK_NONE && !mask_first) fb_add(b, mk, " + M");
    fb_add(b, sm, ")");
    if (!col) {
        fb_add(b, ws, " · V");
        fb_sub(b, ws, g);
    }
    if (part != PART_SCALED) return;
    /* the divisor the step really uses */
    double d = (double)t->divisor;
    if (c->scale_kind == ATTN_SCALE_NONE || c->scale_kind == ATTN_SCALE_VALUE)
        fb_add(b, 0, "      ÷%.4g", d);
    else
        fb_add(b, 0, "      %s = √%.0f = %.4g", c->scale_kind == ATTN_SCALE_SQRT_DMODEL ? "√d_model" : "√d_k", d * d,
               d);
}

/* MultiHead = Concat(head₁, …) · W_O + b_O, concat or the output highlighted. */
void view_formula_multihead(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    int heads = t->cfg.heads;
    int out = view_kind(s->kind)->part == PART_OUTPUT, wo = attn_trace_find_role(t, ATTN_ROLE_W_O, 0) != NULL;
    fb_add(b, 0, "MultiHead = ");
    if (col && wo) fb_add(b, out, "W_O · ");
    /* every head up to three (Concat(head₁, head₂)), else the first and the last */
    fb_add(b, !out, "Concat(head");
    fb_sub(b, !out, 1);
    for (int i = 2; i <= heads; i++) {
        if (heads > 3 && i < heads) continue;
        fb_add(b, !out, heads > 3 ? ", …, head" : ", head");
        fb_sub(b, !out, i);
    }
    fb_add(b, !out, ")");
    if (!col && wo) fb_add(b, out, " · W_O");
    if (attn_trace_find_role(t, ATTN_ROLE_B_O, 0)) fb_add(b, out, " + b_O");
}

void view_update_formula(View *v)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    FormulaBuilder b = {v->formula, sizeof v->formula, 0, -1, -1};
    v->formula[0] = '\0';
    /* column notation: every matrix is the transpose of row notation's, so
     * shapes swap and products turn round (Q = W_Q·X, head = V·softmax(Kᵀ·Q)) */
    int col = v->notation == VIEW_NOTATION_COLUMN;
    FormulaFn f = view_kind(s->kind)->formula;
    if (t->cfg.attention == ATTN_ADDITIVE)
        formula_additive(&b, t, s, col);
    else if (f)
        f(&b, t, s, col);
    else
        fb_add(&b, 1, "%s", s->name);
    v->formula_hl_start = b.hl_start < 0 ? 0 : b.hl_start;
    v->formula_hl_end = b.hl_end < 0 ? 0 : b.hl_end;
}

const char *view_formula(const View *v)
{
    return v->formula;
}

void view_formula_highlight(const View *v, int *start, int *end)
{
    *start = v->formula_hl_start;
    *end = v->formula_hl_end;
}
