/* narrate.c: placeholder filling for lesson narration. See narrate.h. */
#include "narrate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

#define NARRATE_MAX_NAME 64 /* longest placeholder name or argument we read */
#define NARRATE_MAX_TIED 16 /* tied keys {row_max_token} names before "…" */

/* The output being built: out[0..len) so far, cap bytes in all. */
typedef struct Sink {
    char *out;
    size_t cap, len;
    int overflow;
} Sink;

static void sink_put(Sink *s, const char *text, size_t n)
{
    if (s->overflow) return;
    if (s->len + n + 1 > s->cap) {
        s->overflow = 1;
        return;
    }
    memcpy(s->out + s->len, text, n);
    s->len += n;
    s->out[s->len] = '\0';
}

static void sink_printf(Sink *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sink_printf(Sink *s, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    sink_put(s, buf, (size_t)n);
}

/* A number as a student reads it: %.Pg, with ∞ spelled out and a true minus
 * sign (−), as on the heatmaps and in the hover. */
static void put_number(Sink *s, double v, int precision)
{
    if (isnan(v))
        sink_put(s, "NaN", 3);
    else if (isinf(v))
        sink_put(s, v < 0 ? "−∞" : "∞", v < 0 ? strlen("−∞") : strlen("∞"));
    else {
        if (v == 0) v = 0; /* no "-0" */
        char buf[64];
        snprintf(buf, sizeof buf, "%.*g", precision, v);
        /* exponents as a teacher writes them: 1e+09 -> 1e9, 5e-05 -> 5e-5 */
        char *e = strchr(buf, 'e');
        if (e) {
            char *src = e + 1, *dst = e + 1;
            if (*src == '+')
                src++;
            else if (*src == '-')
                *dst++ = *src++;
            while (*src == '0' && src[1]) src++;
            memmove(dst, src, strlen(src) + 1);
        }
        const char *digits = buf;
        if (*digits == '-') {
            sink_put(s, "−", strlen("−"));
            digits++;
        }
        sink_put(s, digits, strlen(digits));
    }
}

/* What one call needs to answer a placeholder. */
typedef struct Ctx {
    const Lesson *lesson;
    const AttnTrace *trace;
    const AttnStep *step;
    LessonLang lang;
    char *err; /* where a message goes: the caller's out buffer */
    size_t errlen;
    int checking;          /* narrate_check: also refuse what reads wrong but fills */
    int every_head;        /* the text is written for a step kind, so it is shown on every head's step */
    const char *text, *at; /* the text being filled, and the placeholder being filled in it */
} Ctx;

static int ctx_fail(Ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int ctx_fail(Ctx *c, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        lesson_vformat(msg, sizeof msg, fmt, ap);
        va_end(ap);
        /* the message quotes the author's text, which may hold a line break
         * or a tab: keep it one line */
        lesson_quote(c->err, c->errlen, msg, sizeof msg);
    }
    return -1;
}

static int is_additive(const Ctx *c)
{
    return c->trace->cfg.attention == ATTN_ADDITIVE;
}

/* Key tokens: the source sentence for cross-attention, else the query tokens. */
static const char *key_token(const Lesson *l, int j)
{
    if (l->n_source_tokens > 0) return j < l->n_source_tokens ? l->source_tokens[j] : NULL;
    return j < l->n_tokens ? l->tokens[j] : NULL;
}
static int key_count(const Lesson *l)
{
    return l->n_source_tokens > 0 ? l->n_source_tokens : l->n_tokens;
}

/* The softmax step that "the head's weights" means for this step. */
static const AttnStep *head_weights(const Ctx *c)
{
    const AttnTrace *t = c->trace;
    if (c->step && c->step->head > 0) {
        const AttnStep *w = attn_trace_find(t, ATTN_STEP_SOFTMAX, c->step->head);
        if (w) return w;
    }
    for (int i = 0; i < t->n_steps; i++)
        if (t->steps[i].kind == ATTN_STEP_SOFTMAX) return &t->steps[i];
    return NULL;
}

/* Parses a non-negative decimal index; returns the end or NULL. */
static const char *parse_index(const char *p, long *out)
{
    if (!isdigit((unsigned char)*p)) return NULL;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || v < 0 || v > 1000000) return NULL;
    *out = v;
    return end;
}

/* An optional row argument: "" means row 0. */
static int row_arg(Ctx *c, const char *name, const char *arg, int rows, int *row)
{
    long r = 0;
    if (arg) {
        const char *end = parse_index(arg, &r);
        if (!end || *end) return ctx_fail(c, "{%s:%s}: the argument must be a row number (0-based)", name, arg);
    }
    if (r >= rows) return ctx_fail(c, "{%s:%ld}: row %ld is out of range, the weights have %d rows", name, r, r, rows);
    *row = (int)r;
    return 0;
}

int narrate_row_winners(const float *row, int cols, int *keys, int max, int *uniform)
{
    *uniform = 0;
    int best = 0;
    for (int j = 1; j < cols; j++)
        if (row[j] > row[best]) best = j;
    if (cols < 1 || !(row[best] > 0.0f)) return 0;
    char top[32], here[32];
    snprintf(top, sizeof top, "%.*g", NARRATE_WEIGHT_DIGITS, (double)row[best]);
    int n = 0, above_zero = 0;
    for (int j = 0; j < cols; j++) {
        above_zero += row[j] > 0.0f;
        snprintf(here, sizeof here, "%.*g", NARRATE_WEIGHT_DIGITS, (double)row[j]);
        if (strcmp(here, top) != 0) continue;
        if (n < max) keys[n] = j;
        n++;
    }
    *uniform = n >= 2 && n == above_zero;
    return n;
}

/* {value:NAME[I][J]} or {value:NAME[I][J]:P} */
static int put_value(Ctx *c, Sink *s, const char *arg, const AttnTrace *trace)
{
    char name[NARRATE_MAX_NAME];
    const char *br = strchr(arg, '[');
    if (!br || br == arg || (size_t)(br - arg) >= sizeof name)
        return ctx_fail(c, "{value:%s}: expected {value:NAME[I][J]}, e.g. {value:weights_1[0][2]}", arg);
    memcpy(name, arg, (size_t)(br - arg));
    name[br - arg] = '\0';
    long i, j, prec = 4;
    const char *p = parse_index(br + 1, &i);
    if (!p || *p != ']' || p[1] != '[' || !(p = parse_index(p + 2, &j)) || *p != ']')
        return ctx_fail(c, "{value:%s}: expected {value:NAME[I][J]} with 0-based numbers I and J", arg);
    p++;
    if (*p == ':') {
        p = parse_index(p + 1, &prec);
        if (!p || *p || prec < 1 || prec > 9)
            return ctx_fail(c, "{value:%s}: the precision after ':' must be 1..9 significant digits", arg);
    } else if (*p) {
        return ctx_fail(c, "{value:%s}: unexpected '%s' after [I][J]", arg, p);
    }
    const AttnStep *st = attn_trace_find_name(trace, name);
    int role = attn_role_from_name(name);
    if (!st && role >= 0 && c->step && c->step->head > 0)
        /* a per-head name without its head ("scores", "weights") means the
         * narrated step's own head */
        st = attn_trace_find_role(trace, (AttnRole)role, c->step->head);
    if (!st)
        return ctx_fail(
            c, "{value:%s}: this lesson's trace has no step named '%s'%s", arg, name,
            c->step && c->step->head > 0
                ? ""
                : " (a name without a head number means the step's own head, and this step belongs to no head)");
    if (c->checking && c->every_head && trace == c->trace && c->step && c->step->head > 0 && st->head > 0 &&
        st->head != c->step->head)
        return ctx_fail(c,
                        "{value:%s}: quotes head %d's cells on head %d's step %s (this text is written for every "
                        "step of its kind); write {value:%s%s} for the step's own head, or key the text by the "
                        "step's name",
                        arg, st->head, c->step->head, c->step->name, attn_role_name((AttnRole)st->role), br);
    if (i >= st->rows || j >= st->cols)
        return ctx_fail(c, "{value:%s}: [%ld][%ld] is outside %s, which is %d×%d", arg, i, j, name, st->rows, st->cols);
    float v = st->data[(size_t)i * (size_t)st->cols + (size_t)j];
    /* a negative factor of a product is written in parentheses: 0.1·(-2), not 0.1·-2 */
    size_t before = (size_t)(c->at - c->text);
    int factor = (before >= 2 && memcmp(c->at - 2, "·", 2) == 0) || (before >= 2 && memcmp(c->at - 2, "×", 2) == 0);
    if (factor && v < 0) sink_put(s, "(", 1);
    put_number(s, v, (int)prec);
    if (factor && v < 0) sink_put(s, ")", 1);
    return 0;
}

/* {value_heads:H:NAME[I][J]}: a cell of the same lesson cut into H heads
 * (the same X, weights and biases; heads·d_k and heads·d_v kept), so that a
 * lesson can quote the other version of itself. */
static int put_value_heads(Ctx *c, Sink *s, const char *arg)
{
    long h;
    const char *p = arg ? parse_index(arg, &h) : NULL;
    if (!p || *p != ':' || h < 1)
        return ctx_fail(c,
                        "{value_heads:%s}: expected {value_heads:H:NAME[I][J]} with H heads, e.g. "
                        "{value_heads:2:weights_1[1][2]}",
                        arg ? arg : "");
    AttnConfig cfg = c->lesson->cfg;
    if (cfg.attention == ATTN_DOT && cfg.kv_heads > 0)
        return ctx_fail(
            c, "{value_heads:%s}: a lesson with grouped K/V heads (kv_heads) cannot be cut into other heads", arg);
    int wk = cfg.heads * cfg.d_k, wv = cfg.heads * cfg.d_v;
    if (cfg.attention != ATTN_DOT || wk % h || wv % h)
        return ctx_fail(c, "{value_heads:%s}: %ld heads must divide heads·d_k = %d and heads·d_v = %d (dot attention)",
                        arg, h, wk, wv);
    cfg.heads = (int)h, cfg.d_k = wk / (int)h, cfg.d_v = wv / (int)h;
    char err[256];
    AttnTrace *t = attn_trace_create(&cfg, err, sizeof err);
    if (!t) return ctx_fail(c, "{value_heads:%s}: %s", arg, err);
    int rc = put_value(c, s, p + 1, t);
    attn_trace_destroy(t);
    return rc;
}

/* May query i attend key j under the lesson's mask? (The trace keeps no mask.) */
static int mask_allows(const AttnConfig *cfg, int i, int j)
{
    switch (cfg->mask_kind) {
    case ATTN_MASK_NONE:
        return 1;
    case ATTN_MASK_CAUSAL:
        return j <= i;
    case ATTN_MASK_PADDING:
        return cfg->mask ? cfg->mask[j] != 0 : 1;
    case ATTN_MASK_MATRIX:
        return cfg->mask ? cfg->mask[(size_t)i * (size_t)cfg->n_k + (size_t)j] != 0 : 1;
    }
    return 1;
}

/* 1 when the mask blocks every key of query row r: the row sees nothing. */
static int row_sees_nothing(const Ctx *c, int r, int n_k)
{
    const AttnConfig *mcfg = &c->lesson->cfg;
    if (mcfg->mask_kind == ATTN_MASK_NONE) return 0;
    for (int j = 0; j < n_k; j++)
        if (mask_allows(mcfg, r, j)) return 0;
    return 1;
}

/* {max_weight_if:KIND}: the largest weight this head would have had if its
 * scores had been divided by another divisor: the same scores, mask and fill,
 * the engine's own softmax. */
static int put_max_weight_if(Ctx *c, Sink *s, const char *arg)
{
    const AttnConfig *cfg = &c->trace->cfg;
    if (!arg || is_additive(c))
        return ctx_fail(c, "{max_weight_if:%s}: needs dot attention and a scaling (none, sqrt_dk, sqrt_dmodel)",
                        arg ? arg : "");
    float div;
    if (strcmp(arg, "none") == 0)
        div = 1.0f;
    else if (strcmp(arg, "sqrt_dk") == 0)
        div = sqrtf((float)cfg->d_k);
    else if (strcmp(arg, "sqrt_dmodel") == 0)
        div = sqrtf((float)cfg->d_model);
    else
        return ctx_fail(c, "{max_weight_if:%s}: expected none, sqrt_dk or sqrt_dmodel", arg);
    const AttnStep *w = head_weights(c);
    const AttnStep *sc = w ? attn_trace_find(c->trace, ATTN_STEP_SCORES, w->head) : NULL;
    if (!sc) return ctx_fail(c, "{max_weight_if:%s}: this lesson's trace has no scores", arg);
    size_t n = (size_t)sc->rows * (size_t)sc->cols;
    float *x = malloc(sizeof(float) * n); /* (n_q, n_k) re-scaled, masked scores */
    float *y = malloc(sizeof(float) * n); /* (n_q, n_k) their softmax */
    if (!x || !y) {
        free(x);
        free(y);
        return ctx_fail(c, "{max_weight_if:%s}: out of memory", arg);
    }
    /* The lesson's config still holds the mask (the trace's copy does not). */
    const AttnConfig *mcfg = &c->lesson->cfg;
    for (int i = 0; i < sc->rows; i++)
        for (int j = 0; j < sc->cols; j++) {
            size_t at = (size_t)i * (size_t)sc->cols + (size_t)j;
            /* seed 003's order divides the fill too */
            float fill = cfg->mask_order == ATTN_MASK_THEN_SCALE ? cfg->mask_fill / div : cfg->mask_fill;
            x[at] = mask_allows(mcfg, i, j) ? sc->data[at] / div : fill;
        }
    attn_softmax_rows(y, NULL, x, sc->rows, sc->cols);
    float m = y[0];
    for (size_t k = 1; k < n; k++)
        if (y[k] > m) m = y[k];
    free(x);
    free(y);
    put_number(s, m, 4);
    return 0;
}

/* A token in running text: bare in English, 「喜欢」 in Chinese. */
static void put_token(Ctx *c, Sink *s, const char *tok)
{
    sink_printf(s, view_string(VS_TOKEN, c->lang), tok);
}

static void put_token_list(Ctx *c, Sink *s, char *const *tokens, int n)
{
    const char *sep = view_string(VS_TOKEN_LIST_SEP, c->lang);
    for (int i = 0; i < n; i++) {
        if (i) sink_put(s, sep, strlen(sep));
        put_token(c, s, tokens[i]);
    }
}

static int need_step(Ctx *c, const char *name)
{
    if (c->step) return 0;
    return ctx_fail(c, "{%s} needs a step, and this text (intro or summary) belongs to none", name);
}

/* ---- the placeholders ---- */

typedef struct Placeholder Placeholder;
/* Writes placeholder p's value for c into s (arg: what follows ':' in
 * {name:arg}, or NULL). 0, or -1 with the message in c->err. */
typedef int (*PutFn)(Ctx *c, Sink *s, const Placeholder *p, const char *arg);

enum {
    PH_NO_ARG = 1,         /* refuses an argument */
    PH_DOT = 2,            /* defined for dot attention only */
    PH_ADDITIVE = 4,       /* defined for additive attention only */
    PH_SIZE = 8,           /* a size of the config (additive attention's are d_x, d_y, d_a) */
    PH_STEP = 16,          /* needs a step: not in the intro or the summary */
    PH_TOKEN = 32,         /* writes a token, which Chinese quotes 「」 */
    PH_KEYS = 64,          /* tokens: the key tokens, not the query tokens */
    PH_MIN = 128,          /* weights: the smallest, not the largest */
    PH_FIRST_COLUMN = 256, /* columns: the first, not the one past the last */
    PH_COLUMNS = 512,      /* the step's columns, not its rows */
    PH_GROUP = 1024,       /* kv_head: the query heads that read the K/V head, not its number */
};

struct Placeholder {
    const char *name;
    PutFn put;
    unsigned flags; /* PH_* */
    int axis;       /* a size: the AttnAxis it counts (sqrt_dk, sqrt_dmodel: under the root) */
};

static int put_size(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    sink_printf(s, "%d", attn_axis_size(&c->trace->cfg, (AttnAxis)p->axis));
    return 0;
}

static int put_heads(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    sink_printf(s, "%d", c->trace->cfg.heads);
    return 0;
}

static int put_scale(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    put_number(s, c->trace->divisor, 4);
    return 0;
}

static int put_sqrt_expr(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    const AttnConfig *cfg = &c->trace->cfg;
    if (is_additive(c) || cfg->scale_kind == ATTN_SCALE_NONE)
        sink_put(s, "1", 1);
    else if (cfg->scale_kind == ATTN_SCALE_SQRT_DK)
        sink_printf(s, "√%d", cfg->d_k);
    else if (cfg->scale_kind == ATTN_SCALE_SQRT_DMODEL)
        sink_printf(s, "√%d", cfg->d_model);
    else
        put_number(s, cfg->scale_value, 4);
    return 0;
}

static int put_sqrt(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    put_number(s, sqrtf((float)attn_axis_size(&c->trace->cfg, (AttnAxis)p->axis)), 4);
    return 0;
}

static int put_mask_fill(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    put_number(s, c->trace->cfg.mask_fill, 4);
    return 0;
}

static int put_head(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    if (c->step->head < 1) return ctx_fail(c, "{head}: step '%s' belongs to no head", c->step->name);
    sink_printf(s, "%d", c->step->head);
    return 0;
}

static int put_kv_heads(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    sink_printf(s, "%d", attn_kv_heads(&c->trace->cfg));
    return 0;
}

/* The K/V head of the narrated step (a K/V step's own, a query head's the
 * one it reads), or the query heads that read it: "3–4", or "3" alone. */
static int put_kv_head(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    const AttnConfig *cfg = &c->trace->cfg;
    if (c->step->head < 1 || is_additive(c))
        return ctx_fail(c, "{%s}: step '%s' belongs to no head of dot attention", p->name, c->step->name);
    AttnRole r = (AttnRole)c->step->role;
    int kv = r == ATTN_ROLE_K || r == ATTN_ROLE_V || r == ATTN_ROLE_K_CACHE || r == ATTN_ROLE_V_CACHE;
    int g = kv ? c->step->head : attn_kv_head(cfg, c->step->head), per = cfg->heads / attn_kv_heads(cfg);
    if (!(p->flags & PH_GROUP) || per == 1)
        sink_printf(s, "%d", g);
    else
        sink_printf(s, "%d–%d", (g - 1) * per + 1, g * per);
    return 0;
}

/* Incremental decoding's multiply-adds: with the cache, one whole forward,
 * without a cache. */
static int put_macs(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p;
    if (c->trace->cfg.decode != ATTN_DECODE_INCREMENTAL)
        return ctx_fail(c, "{macs:%s}: the lesson does not decode token by token (\"decode\": \"incremental\")",
                        arg ? arg : "");
    AttnDecodeMacs m;
    attn_decode_macs(c->trace, &m);
    if (arg && strcmp(arg, "incremental") == 0)
        sink_printf(s, "%llu", (unsigned long long)m.incremental);
    else if (arg && strcmp(arg, "full") == 0)
        sink_printf(s, "%llu", (unsigned long long)m.full);
    else if (arg && strcmp(arg, "recompute") == 0)
        sink_printf(s, "%llu", (unsigned long long)m.recompute);
    else
        return ctx_fail(c, "{macs:%s}: expected {macs:incremental}, {macs:full} or {macs:recompute}", arg ? arg : "");
    return 0;
}

/* The columns of the projection (or of concat) that this head's step
 * covers: d_v wide for a step of values, d_k for the others. */
static int put_column(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    const AttnConfig *cfg = &c->trace->cfg;
    if (c->step->head < 1 || is_additive(c))
        return ctx_fail(c, "{%s}: step '%s' belongs to no head of dot attention", p->name, c->step->name);
    int width = c->step->col_axis == ATTN_AXIS_DV ? cfg->d_v : cfg->d_k;
    sink_printf(s, "%d", (c->step->head - (p->flags & PH_FIRST_COLUMN ? 1 : 0)) * width);
    return 0;
}

static int put_step(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p, (void)arg;
    sink_put(s, c->step->name, strlen(c->step->name));
    return 0;
}

static int put_step_size(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    sink_printf(s, "%d", p->flags & PH_COLUMNS ? c->step->cols : c->step->rows);
    return 0;
}

static int put_tokens(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    const Lesson *l = c->lesson;
    if (p->flags & PH_KEYS && l->n_source_tokens > 0)
        put_token_list(c, s, l->source_tokens, l->n_source_tokens);
    else
        put_token_list(c, s, l->tokens, l->n_tokens);
    return 0;
}

static int put_one_token(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    const Lesson *l = c->lesson;
    int keys = (p->flags & PH_KEYS) != 0;
    long i;
    const char *end = arg ? parse_index(arg, &i) : NULL;
    if (!end || *end) return ctx_fail(c, "{%s:I}: I must be a 0-based token number", p->name);
    int n = keys ? key_count(l) : l->n_tokens;
    if (i >= n) return ctx_fail(c, "{%s:%ld}: there are only %d tokens", p->name, i, n);
    put_token(c, s, keys ? key_token(l, (int)i) : l->tokens[i]);
    return 0;
}

/* Row arg of the head's weights: its largest weight, or every key token
 * tied for it (narrate_row_winners), "uniform" for an even row, no token
 * when the mask blocks the whole row. */
static int put_row_max(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    const AttnStep *w = head_weights(c);
    if (!w) return ctx_fail(c, "{%s}: this lesson's trace has no softmax", p->name);
    int r = 0;
    if (row_arg(c, p->name, arg, w->rows, &r)) return -1;
    const float *row = w->data + (size_t)r * (size_t)w->cols;
    int keys[NARRATE_MAX_TIED], uniform;
    int n = narrate_row_winners(row, w->cols, keys, NARRATE_MAX_TIED, &uniform);
    if (!(p->flags & PH_TOKEN)) {
        put_number(s, n ? row[keys[0]] : 0.0f, NARRATE_WEIGHT_DIGITS);
    } else if (n == 0 || row_sees_nothing(c, r, w->cols)) {
        /* every key of the row is masked: no token is "the most attended" */
        const char *none = view_string(VS_ROW_SEES_NOTHING, c->lang);
        sink_put(s, none, strlen(none));
    } else if (uniform) {
        const char *even = view_string(VS_ROW_UNIFORM, c->lang);
        sink_put(s, even, strlen(even));
    } else {
        /* every key tied for the largest weight, in order: 我, 跑步 */
        const char *sep = view_string(VS_TOKEN_LIST_SEP, c->lang);
        for (int k = 0; k < n && k < NARRATE_MAX_TIED; k++) {
            const char *tok = key_token(c->lesson, keys[k]);
            if (!tok) return ctx_fail(c, "{%s}: key %d has no token", p->name, keys[k]);
            if (k) sink_put(s, sep, strlen(sep));
            put_token(c, s, tok);
        }
        if (n > NARRATE_MAX_TIED) sink_put(s, "…", strlen("…"));
    }
    return 0;
}

/* The head's largest (or smallest) weight. */
static int put_extreme_weight(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)arg;
    const AttnStep *w = head_weights(c);
    if (!w) return ctx_fail(c, "{%s}: this lesson's trace has no softmax", p->name);
    int want_max = !(p->flags & PH_MIN);
    float m = w->data[0];
    for (size_t k = 1; k < (size_t)w->rows * (size_t)w->cols; k++)
        if (want_max ? w->data[k] > m : w->data[k] < m) m = w->data[k];
    put_number(s, m, 4);
    return 0;
}

static int put_max_weight_if_arg(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p;
    return put_max_weight_if(c, s, arg);
}

static int put_value_arg(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p;
    if (!arg) return ctx_fail(c, "{value} needs a cell: {value:NAME[I][J]}");
    return put_value(c, s, arg, c->trace);
}

static int put_value_heads_arg(Ctx *c, Sink *s, const Placeholder *p, const char *arg)
{
    (void)p;
    return put_value_heads(c, s, arg);
}

/* Every placeholder a text may hold (lessons/FORMAT.md lists them). */
static const Placeholder placeholders[] = {
    {"d_model", put_size, PH_NO_ARG | PH_DOT | PH_SIZE, ATTN_AXIS_MODEL},
    {"d_k", put_size, PH_NO_ARG | PH_DOT | PH_SIZE, ATTN_AXIS_DK},
    {"d_v", put_size, PH_NO_ARG | PH_DOT | PH_SIZE, ATTN_AXIS_DV},
    {"heads", put_heads, PH_NO_ARG | PH_DOT | PH_SIZE, 0},
    {"n", put_size, PH_NO_ARG, ATTN_AXIS_QUERIES},
    {"n_q", put_size, PH_NO_ARG, ATTN_AXIS_QUERIES},
    {"n_k", put_size, PH_NO_ARG, ATTN_AXIS_KEYS},
    {"d_x", put_size, PH_NO_ARG | PH_ADDITIVE, ATTN_AXIS_DX},
    {"d_y", put_size, PH_NO_ARG | PH_ADDITIVE, ATTN_AXIS_DY},
    {"d_a", put_size, PH_NO_ARG | PH_ADDITIVE, ATTN_AXIS_DA},
    {"scale", put_scale, 0, 0},
    {"sqrt_expr", put_sqrt_expr, 0, 0},
    {"sqrt_dk", put_sqrt, PH_DOT, ATTN_AXIS_DK},
    {"sqrt_dmodel", put_sqrt, PH_DOT, ATTN_AXIS_MODEL},
    {"mask_fill", put_mask_fill, 0, 0},
    {"head", put_head, PH_STEP, 0},
    {"kv_heads", put_kv_heads, PH_NO_ARG | PH_DOT, 0},
    {"kv_head", put_kv_head, PH_STEP, 0},
    {"kv_group", put_kv_head, PH_STEP | PH_GROUP, 0},
    {"macs", put_macs, 0, 0},
    {"col_from", put_column, PH_STEP | PH_FIRST_COLUMN, 0},
    {"col_to", put_column, PH_STEP, 0},
    {"step", put_step, PH_STEP, 0},
    {"rows", put_step_size, PH_STEP, 0},
    {"cols", put_step_size, PH_STEP | PH_COLUMNS, 0},
    {"tokens", put_tokens, PH_TOKEN, 0},
    {"key_tokens", put_tokens, PH_TOKEN | PH_KEYS, 0},
    {"token", put_one_token, PH_TOKEN, 0},
    {"key_token", put_one_token, PH_TOKEN | PH_KEYS, 0},
    {"row_max_token", put_row_max, PH_TOKEN, 0},
    {"row_max_weight", put_row_max, 0, 0},
    {"max_weight", put_extreme_weight, PH_NO_ARG, 0},
    {"min_weight", put_extreme_weight, PH_NO_ARG | PH_MIN, 0},
    {"max_weight_if", put_max_weight_if_arg, 0, 0},
    {"value", put_value_arg, 0, 0},
    {"value_heads", put_value_heads_arg, 0, 0},
};

static const Placeholder *placeholder(const char *name)
{
    for (size_t i = 0; i < sizeof placeholders / sizeof placeholders[0]; i++)
        if (strcmp(name, placeholders[i].name) == 0) return &placeholders[i];
    return NULL;
}

/* One placeholder: name and optional argument (after ':'). */
static int put_placeholder(Ctx *c, Sink *s, const char *name, const char *arg)
{
    const Placeholder *p = placeholder(name);
    if (!p)
        return ctx_fail(c, "unknown placeholder {%s%s%s} (lessons/FORMAT.md lists the placeholders)", name,
                        arg ? ":" : "", arg ? arg : "");
    if (p->flags & PH_NO_ARG && arg) return ctx_fail(c, "{%s} takes no argument, found ':%s'", name, arg);
    if (p->flags & PH_DOT && is_additive(c))
        return ctx_fail(c, "{%s} is not defined for additive attention%s", name,
                        p->flags & PH_SIZE ? " (use {d_x}, {d_y}, {d_a})" : "");
    if (p->flags & PH_ADDITIVE && !is_additive(c))
        return ctx_fail(c, "{%s} is only defined for additive attention", name);
    if (p->flags & PH_STEP && need_step(c, name)) return -1;
    return p->put(c, s, p, arg);
}

/* Does this placeholder write a token (quoted 「」 in Chinese)? */
static int is_token_placeholder(const char *name)
{
    const Placeholder *p = placeholder(name);
    return p && p->flags & PH_TOKEN;
}

/* narrate_fill, with the context's flags; on failure *fail_at is the byte of
 * the text where the problem is (the placeholder's '{', or a lone brace). */
static int fill(char *out, size_t outlen, Ctx *c, size_t *fail_at)
{
    /* Messages are built in c->err and copied to out at the end, since out
     * also holds the text being built. */
    Sink s = {out, outlen, 0, 0};
    const char *text = c->text ? c->text : "";
    const char *p = text;
    int rc = 0;
    *fail_at = 0;
    while (*p && rc == 0) {
        if (p[0] == '{' && p[1] == '{') {
            sink_put(&s, "{", 1);
            p += 2;
        } else if (p[0] == '}' && p[1] == '}') {
            sink_put(&s, "}", 1);
            p += 2;
        } else if (*p == '}') {
            *fail_at = (size_t)(p - text);
            rc = ctx_fail(c, "a lone '}' (write }} for a literal brace)");
        } else if (*p == '{') {
            *fail_at = (size_t)(p - text);
            const char *close = strchr(p, '}');
            if (!close) {
                rc = ctx_fail(c, "this '{' is never closed (write {{ for a literal brace)");
                break;
            }
            size_t len = (size_t)(close - p - 1);
            char inner[2 * NARRATE_MAX_NAME];
            if (len == 0 || len >= sizeof inner) {
                rc = ctx_fail(c, "this placeholder is %s", len ? "too long" : "empty");
                break;
            }
            memcpy(inner, p + 1, len);
            inner[len] = '\0';
            char *colon = strchr(inner, ':');
            if (colon) *colon = '\0';
            c->at = p;
            if (c->checking && c->lang == LESSON_ZH && is_token_placeholder(inner) && p - text >= 3 &&
                memcmp(p - 3, "「", 3) == 0 && strncmp(close + 1, "」", 3) == 0)
                rc = ctx_fail(c, "{%s%s%s} already quotes its token 「」 in Chinese; remove the 「」 around it", inner,
                              colon ? ":" : "", colon ? colon + 1 : "");
            else
                rc = put_placeholder(c, &s, inner, colon ? colon + 1 : NULL);
            p = close + 1;
        } else {
            const char *next = p;
            while (*next && *next != '{' && *next != '}') next++;
            sink_put(&s, p, (size_t)(next - p));
            p = next;
        }
    }
    if (rc == 0 && s.overflow) rc = ctx_fail(c, "the filled text is longer than %zu bytes", outlen - 1);
    return rc;
}

int narrate_fill(char *out, size_t outlen, const char *text, const Lesson *lesson, const AttnTrace *trace,
                 const AttnStep *step, LessonLang lang)
{
    if (!out || outlen == 0) return -1;
    out[0] = '\0';
    char msg[512] = "";
    Ctx c = {lesson, trace, step, lang, msg, sizeof msg, 0, 0, text, NULL};
    size_t at;
    if (fill(out, outlen, &c, &at) != 0) {
        lesson_text_copy(out, outlen, msg);
        return -1;
    }
    return 0;
}

/* ---- conditions ---------------------------------------------------------------- *
 *
 * A condition is parsed as written, before anything is filled: the "&&"
 * between comparisons and each comparison's operator are found outside the
 * placeholders, so that nothing a placeholder fills in (a token such as
 * "x!=y&&喜欢") can change what is compared. Then each side becomes a value:
 *   - a side that is one placeholder is that placeholder's value: a token
 *     placeholder's is text, any other's is the number it prints (as a
 *     student reads it: 4 significant digits unless asked for more, a true
 *     minus sign, ∞), or text when it prints none ({step}, {sqrt_expr});
 *   - a side of plain text is a number when it reads as one (-1, −1, 1e-9,
 *     −∞), else text;
 *   - a side mixing text and placeholders is the text they fill.
 * Two numbers compare as numbers; otherwise == and != compare the texts and
 * the other operators are an error. */

/* The longest part of a condition a message quotes, in bytes. */
#define WHEN_QUOTE_MAX 120

/* The first `what` in [s, end) outside placeholders, or NULL. An unclosed
 * '{' hides the rest (filling the side then says it is never closed). */
static const char *find_outside(const char *s, const char *end, const char *what)
{
    size_t n = strlen(what);
    for (const char *p = s; p < end;) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            p += 2;
        } else if (*p == '{') {
            const char *close = strchr(p, '}');
            if (!close || close >= end) return NULL;
            p = close + 1;
        } else if ((size_t)(end - p) >= n && memcmp(p, what, n) == 0) {
            return p;
        } else {
            p++;
        }
    }
    return NULL;
}

/* All of s as a number, in the forms put_number prints and an author
 * writes: an optional sign ('-' or the true minus '−'), then decimal digits
 * with an optional fraction and exponent, or ∞. 1 when it is one. */
static int read_number(const char *s, double *out)
{
    int neg = 0;
    if (strncmp(s, "−", strlen("−")) == 0)
        neg = 1, s += strlen("−");
    else if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    double v;
    if (strcmp(s, "∞") == 0) {
        v = INFINITY;
    } else {
        /* decimal only, its sign read above */
        if (*s == '+' || *s == '-') return 0;
        size_t n = lesson_read_decimal(s, &v);
        if (!n || s[n]) return 0;
    }
    *out = neg ? -v : v;
    return 1;
}

/* One side of a comparison as a value. */
typedef struct Operand {
    char text[NARRATE_MAX_FILLED + 1]; /* the side filled */
    int number;                        /* 1: compared as num */
    double num;
} Operand;

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* The side [s, end) of a comparison (spaces around it dropped) as a value,
 * filled for c's step. 0, or -1 with the message in c->err. */
static int side_value(Ctx *c, const char *s, const char *end, Operand *o)
{
    while (s < end && is_space(*s)) s++;
    while (end > s && is_space(end[-1])) end--;
    size_t n = (size_t)(end - s);
    char *side = malloc(n + 1);
    if (!side) return ctx_fail(c, "out of memory");
    memcpy(side, s, n);
    side[n] = '\0';
    c->text = side;
    size_t at;
    o->text[0] = '\0';
    int rc = fill(o->text, sizeof o->text, c, &at);
    if (rc == 0) {
        const char *close = side[0] == '{' && side[1] != '{' ? strchr(side, '}') : NULL;
        if (close && close == side + n - 1) { /* one placeholder: its value */
            char name[NARRATE_MAX_NAME];
            size_t k = strcspn(side + 1, ":}");
            lesson_format(name, sizeof name, "%.*s", (int)k, side + 1);
            o->number = !is_token_placeholder(name) && read_number(o->text, &o->num);
        } else { /* plain text is a number when it reads as one; text mixed with placeholders is text */
            o->number = !strchr(side, '{') && read_number(o->text, &o->num);
        }
    }
    c->text = NULL;
    free(side);
    return rc;
}

/* One comparison [s, end) of a condition. 1, 0, or -1 with the message in c->err. */
static int compare_one(Ctx *c, const char *s, const char *end)
{
    static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
    char q[WHEN_QUOTE_MAX + 8];
    lesson_quote_part(q, sizeof q, s, (size_t)(end - s), WHEN_QUOTE_MAX); /* the comparison as messages quote it */
    const char *at = NULL;
    int op = -1;
    for (int i = 0; i < 6 && !at; i++)
        if ((at = find_outside(s, end, ops[i]))) op = i;
    if (!at) return ctx_fail(c, "expected LEFT OP RIGHT with OP one of == != < <= > >=, found \"%s\"", q);
    const char *right = at + strlen(ops[op]);
    Operand *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    int rc = -1;
    if (!a || !b)
        rc = ctx_fail(c, "out of memory");
    else if (side_value(c, s, at, a) == 0 && side_value(c, right, end, b) == 0) {
        if (!a->text[0] || !b->text[0])
            rc = ctx_fail(c, "expected a value on each side of %s, found \"%s\"", ops[op], q);
        else if (a->number && b->number)
            rc = op == 0   ? a->num == b->num
                 : op == 1 ? a->num != b->num
                 : op == 2 ? a->num <= b->num
                 : op == 3 ? a->num >= b->num
                 : op == 4 ? a->num < b->num
                           : a->num > b->num;
        else if (op <= 1)
            rc = (strcmp(a->text, b->text) == 0) == (op == 0);
        else {
            char qa[64], qb[64];
            rc = ctx_fail(c, "%s needs numbers on both sides, found \"%s\" and \"%s\"", ops[op],
                          lesson_quote(qa, sizeof qa, a->text, 48), lesson_quote(qb, sizeof qb, b->text, 48));
        }
    }
    free(a);
    free(b);
    return rc;
}

int narrate_when(const char *cond, const Lesson *lesson, const AttnTrace *trace, const AttnStep *step, char *msg,
                 size_t msglen)
{
    if (!cond || strcmp(cond, "always") == 0) return 1;
    char why[512] = "";
    Ctx c = {lesson, trace, step, LESSON_EN, why, sizeof why, 0, 0, NULL, NULL};
    const char *end = cond + strlen(cond);
    int holds = 1;
    for (const char *part = cond;;) {
        const char *amp = find_outside(part, end, "&&");
        int r = compare_one(&c, part, amp ? amp : end);
        if (r < 0) {
            char q[WHEN_QUOTE_MAX + 8];
            lesson_format(msg, msglen, "%s (in \"%s\" as written)", why,
                          lesson_quote(q, sizeof q, cond, WHEN_QUOTE_MAX));
            return -1;
        }
        holds = holds && r;
        if (!amp) break;
        part = amp + 2;
    }
    return holds;
}

/* The claim a false comparison [s, end) stood for, as a student reads it,
 * when it compares a token placeholder with a token: "{row_max_token:1} ==
 * 跑步" says 喜欢's largest weight goes to 跑步. 1 with the claim in out, else 0. */
static int describe_claim(Ctx *c, const char *s, const char *end, LessonLang lang, char *out, size_t outlen)
{
    const char *eq = find_outside(s, end, "==");
    if (!eq) return 0;
    while (s < eq && is_space(*s)) s++;
    const char *lend = eq, *r = eq + 2, *rend = end;
    while (lend > s && is_space(lend[-1])) lend--;
    while (r < rend && is_space(*r)) r++;
    while (rend > r && is_space(rend[-1])) rend--;
    char left[NARRATE_MAX_NAME * 2], right[LESSON_MAX_TOKEN_BYTES + 1], name[NARRATE_MAX_NAME] = "";
    if (lend - s < 3 || (size_t)(lend - s) >= sizeof left || *s != '{' || lend[-1] != '}' || rend <= r ||
        (size_t)(rend - r) >= sizeof right || memchr(r, '{', (size_t)(rend - r)))
        return 0;
    lesson_format(left, sizeof left, "%.*s", (int)(lend - s), s);
    lesson_format(right, sizeof right, "%.*s", (int)(rend - r), r);
    size_t k = strcspn(left + 1, ":}");
    lesson_format(name, sizeof name, "%.*s", (int)k, left + 1);
    long i = 0;
    if (left[1 + k] == ':' && !parse_index(left + 2 + k, &i)) return 0;
    int row_max = strcmp(name, "row_max_token") == 0;
    if (!row_max && strcmp(name, "token") != 0 && strcmp(name, "key_token") != 0) return 0;
    if (row_max && i >= c->lesson->n_tokens) return 0;
    /* what the placeholder says now, in the reader's language */
    char now[512];
    Ctx f = *c;
    f.lang = lang;
    f.text = left;
    size_t at;
    if (fill(now, sizeof now, &f, &at) != 0) return 0;
    char want[LESSON_MAX_TOKEN_BYTES + 8];
    snprintf(want, sizeof want, view_string(VS_TOKEN, lang), right);
    if (row_max) {
        char query[LESSON_MAX_TOKEN_BYTES + 8];
        snprintf(query, sizeof query, view_string(VS_TOKEN, lang), c->lesson->tokens[i]);
        lesson_format(out, outlen, view_string(VS_CLAIM_ROW_MAX, lang), query, want, now);
    } else {
        lesson_format(out, outlen, view_string(VS_CLAIM_TOKEN, lang), (int)i + 1, want, now);
    }
    return 1;
}

int narrate_when_claim(const char *cond, const Lesson *lesson, const AttnTrace *trace, const AttnStep *step,
                       LessonLang lang, char *out, size_t outlen)
{
    if (!out || !outlen) return 0;
    out[0] = '\0';
    if (!cond || strcmp(cond, "always") == 0) return 0;
    char why[512] = "";
    Ctx c = {lesson, trace, step, LESSON_EN, why, sizeof why, 0, 0, NULL, NULL};
    const char *end = cond + strlen(cond);
    for (const char *part = cond;;) {
        const char *amp = find_outside(part, end, "&&");
        int r = compare_one(&c, part, amp ? amp : end);
        if (r < 0) return 0;
        if (r == 0) return describe_claim(&c, part, amp ? amp : end, lang, out, outlen);
        if (!amp) return 0;
        part = amp + 2;
    }
}

/* ---- narrate_check --------------------------------------------------------- */

typedef struct CheckState {
    int failures;
    char *err;
    size_t errlen;
} CheckState;

/* A text that names one key as a row's largest weight where the lesson's
 * own numbers tie: it prints {row_max_weight:I} without {row_max_token:I}
 * (so it names the key in words), or it writes "Q → K" (「Q」→「K」) with
 * one tied key K alone before the weight in brackets. 0, or -1 with the message in c->err and *where the
 * byte of the text it points at. */
static int check_named_winner(Ctx *c, const char *text, const char *filled, size_t *where)
{
    const AttnStep *w = head_weights(c);
    const Lesson *l = c->lesson;
    if (!w) return 0;
    for (int r = 0; r < w->rows && r < l->n_tokens; r++) {
        int keys[NARRATE_MAX_TIED], uniform;
        int n = narrate_row_winners(w->data + (size_t)r * (size_t)w->cols, w->cols, keys, NARRATE_MAX_TIED, &uniform);
        if (n < 2 || row_sees_nothing(c, r, w->cols)) continue;
        char weight[32], token[32], tied[256] = "";
        snprintf(weight, sizeof weight, "{row_max_weight:%d}", r);
        snprintf(token, sizeof token, "{row_max_token:%d}", r);
        for (int k = 0, at = 0; k < n && k < NARRATE_MAX_TIED && at < (int)sizeof tied; k++)
            at += snprintf(tied + at, sizeof tied - (size_t)at, "%s%s", k ? ", " : "", key_token(l, keys[k]));
        const char *used = strstr(text, weight);
        if (!used && r == 0) used = strstr(text, "{row_max_weight}");
        if (used && !strstr(text, token) && !(r == 0 && strstr(text, "{row_max_token}"))) {
            *where = (size_t)(used - text);
            return ctx_fail(c,
                            "%s is %s's largest weight, which %s share at %d digits, but the text does not name "
                            "them with %s: it names one winner where the numbers tie",
                            weight, l->tokens[r], tied, NARRATE_WEIGHT_DIGITS, token);
        }
        for (int k = 0; k < n && k < NARRATE_MAX_TIED; k++) {
            char pair[2 * LESSON_MAX_TOKEN_BYTES + 32];
            const char *key = key_token(l, keys[k]);
            snprintf(pair, sizeof pair, c->lang == LESSON_ZH ? "「%s」→「%s」" : "%s → %s", l->tokens[r], key);
            for (const char *p = strstr(filled, pair); p; p = strstr(p + 1, pair)) {
                /* the form of a claim, "Q → K (weight)"; "Q → K = score" names a cell */
                const char *after = p + strlen(pair);
                if (strncmp(after, c->lang == LESSON_ZH ? "（" : " (", strlen(c->lang == LESSON_ZH ? "（" : " (")))
                    continue;
                *where = 0;
                return ctx_fail(c, "\"%s\" names %s alone as %s's largest weight, but %s share it at %d digits", pair,
                                key, l->tokens[r], tied, NARRATE_WEIGHT_DIGITS);
            }
        }
    }
    return 0;
}

/* The first failure becomes the one line `attnviz check` prints:
 * "PATH:LINE:COL: narration.KEY.LANG (step NAME): message". */
static void check_one(CheckState *st, const Lesson *lesson, const AttnTrace *trace, const AttnStep *step,
                      const char *field, int every_head, const LessonText *text)
{
    for (int lang = 0; lang < LESSON_LANG_COUNT; lang++) {
        if (!text->text[lang]) continue;
        char buf[NARRATE_MAX_FILLED + 1];
        char msg[512] = "";
        Ctx c = {lesson, trace, step, (LessonLang)lang, msg, sizeof msg, 1, every_head, text->text[lang], NULL};
        size_t at;
        int rc = fill(buf, sizeof buf, &c, &at);
        /* a text hidden for these numbers (its condition fails) claims nothing of them */
        if (rc == 0 && (!text->when || narrate_when(text->when, lesson, trace, step, msg, sizeof msg) == 1))
            rc = check_named_winner(&c, text->text[lang], buf, &at);
        if (rc == 0) continue;
        if (st->failures++ == 0 && st->err && st->errlen) {
            int line, col;
            lesson_text_where(text, (LessonLang)lang, at, &line, &col);
            char where[64] = "", which[64] = "";
            if (line > 0) snprintf(where, sizeof where, ":%d:%d", line, col);
            if (step) snprintf(which, sizeof which, " (step %s)", step->name);
            lesson_format(st->err, st->errlen, "%s%s: %s.%s%s: %s", lesson->path ? lesson->path : "lesson", where,
                          field, lesson_lang_names[lang], which, msg);
        }
    }
    if (text->when) {
        char msg[512];
        int r = narrate_when(text->when, lesson, trace, step, msg, sizeof msg);
        /* a lesson saved from an edited one may carry texts its numbers no
         * longer bear out: those are hidden when shown, not wrong */
        if (r == 0 && !lesson->edited_from) {
            char q[WHEN_QUOTE_MAX + 8];
            lesson_format(msg, sizeof msg, "the condition \"%s\" is false for the lesson's own numbers",
                          lesson_quote(q, sizeof q, text->when, WHEN_QUOTE_MAX));
        }
        if ((r < 0 || (r == 0 && !lesson->edited_from)) && st->failures++ == 0 && st->err && st->errlen) {
            char which[64] = "", where[64] = "";
            if (step) snprintf(which, sizeof which, " (step %s)", step->name);
            if (text->when_line > 0) snprintf(where, sizeof where, ":%d:%d", text->when_line, text->when_col);
            lesson_format(st->err, st->errlen, "%s%s: %s.when%s: %s", lesson->path ? lesson->path : "lesson", where,
                          field, which, msg);
        }
    }
}

int narrate_check(const Lesson *lesson, const AttnTrace *trace, char *err, size_t errlen)
{
    CheckState st = {0, err, errlen};
    if (err && errlen) err[0] = '\0';
    check_one(&st, lesson, trace, NULL, "summary", 0, &lesson->summary);
    for (int k = 0; k < lesson->n_narration; k++) {
        const LessonNarration *n = &lesson->narration[k];
        char field[96];
        snprintf(field, sizeof field, "narration.%s", n->key);
        if (strcmp(n->key, "intro") == 0) {
            check_one(&st, lesson, trace, NULL, field, 0, &n->text);
            continue;
        }
        int kind = attn_step_kind_from_name(n->key);
        int used = 0;
        for (int i = 0; i < trace->n_steps; i++) {
            const AttnStep *s = &trace->steps[i];
            if ((kind >= 0 && (int)s->kind == kind) || strcmp(s->name, n->key) == 0) {
                used = 1;
                check_one(&st, lesson, trace, s, field, kind >= 0, &n->text);
            }
        }
        if (!used && st.failures++ == 0 && err && errlen) {
            char where[64] = "";
            if (n->line > 0) snprintf(where, sizeof where, ":%d:%d", n->line, n->col);
            lesson_format(err, errlen, "%s%s: %s: this lesson's trace has no step of that kind or name",
                          lesson->path ? lesson->path : "lesson", where, field);
        }
    }
    return st.failures;
}
