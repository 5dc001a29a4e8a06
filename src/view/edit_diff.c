/* edit_diff.c: a lesson's token-shaped part copied and put back (Shape), and
 * what differs between two states of a lesson, applied either way (Diff). */
#include "edit_diff.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- shapes ---- */

void edit_shape_free(Shape *s)
{
    if (!s) return;
    lesson_tokens_free(s->tokens, s->n_tokens);
    lesson_tokens_free(s->src, s->n_src);
    free(s->X);
    free(s->Y);
    free(s->mask);
    free(s);
}

static float *dup_floats(const float *p, size_t n)
{
    if (!p) return NULL;
    float *d = malloc(sizeof(float) * (n ? n : 1));
    if (d) memcpy(d, p, sizeof(float) * n);
    return d;
}

/* The token-shaped part of a lesson, copied; NULL when memory runs out. */
Shape *edit_shape_capture(const Lesson *L)
{
    Shape *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    int r, c, fail = 0;
    s->n_tokens = L->n_tokens;
    s->n_src = L->n_source_tokens;
    s->tokens = lesson_tokens_copy(L->tokens, L->n_tokens);
    if (!s->tokens) fail = 1, s->n_tokens = 0;
    if (L->source_tokens && !(s->src = lesson_tokens_copy(L->source_tokens, L->n_source_tokens)))
        fail = 1, s->n_src = 0;
    const float *X = lesson_matrix(L, LESSON_MAT_X, &r, &c);
    if (X && !(s->X = dup_floats(X, (size_t)r * (size_t)c))) fail = 1;
    const float *Y = lesson_matrix(L, LESSON_MAT_Y, &r, &c);
    if (Y && !(s->Y = dup_floats(Y, (size_t)r * (size_t)c))) fail = 1;
    s->mask_kind = L->cfg.mask_kind;
    size_t mb = lesson_mask_bytes(&L->cfg);
    if (mb && L->mask) {
        s->mask = malloc(mb);
        if (s->mask)
            memcpy(s->mask, L->mask, mb);
        else
            fail = 1;
    }
    if (fail) {
        edit_shape_free(s);
        return NULL;
    }
    return s;
}

/* out: L with the token-shaped part of s, borrowed from both (for edit_diff_make). */
void edit_with_shape(Lesson *out, const Lesson *L, const Shape *s)
{
    *out = *L;
    out->n_tokens = s->n_tokens;
    out->n_source_tokens = s->n_src;
    out->tokens = s->tokens;
    out->source_tokens = s->src;
    out->X = s->X;
    out->Y = s->Y;
    out->mask = s->mask;
    out->cfg.mask_kind = s->mask_kind;
    out->cfg.n_q = s->n_tokens;
    out->cfg.n_k = L->cfg.cross ? s->n_src : s->n_tokens;
}

/* Makes the lesson's token-shaped part a copy of s. -1 when memory runs out
 * (the lesson is then unchanged). */
int edit_shape_apply(Lesson *L, const Shape *s)
{
    Lesson tmp = *L;
    tmp.n_tokens = s->n_tokens;
    tmp.n_source_tokens = s->n_src;
    tmp.cfg.mask_kind = s->mask_kind;
    tmp.cfg.n_q = s->n_tokens;
    tmp.cfg.n_k = L->cfg.cross ? s->n_src : s->n_tokens;
    int r, c;
    size_t nx = lesson_matrix_shape(&tmp.cfg, LESSON_MAT_X, &r, &c) == 0 ? (size_t)r * (size_t)c : 0;
    size_t ny = s->Y && lesson_matrix_shape(&tmp.cfg, LESSON_MAT_Y, &r, &c) == 0 ? (size_t)r * (size_t)c : 0;
    size_t mb = lesson_mask_bytes(&tmp.cfg);
    char **tokens = lesson_tokens_copy(s->tokens, s->n_tokens);
    char **src = s->src ? lesson_tokens_copy(s->src, s->n_src) : NULL;
    float *X = dup_floats(s->X, nx), *Y = dup_floats(s->Y, ny);
    unsigned char *mask = mb && s->mask ? malloc(mb) : NULL;
    if (!tokens || (s->src && !src) || (s->X && !X) || (s->Y && !Y) || (mb && s->mask && !mask)) {
        lesson_tokens_free(tokens, s->n_tokens);
        lesson_tokens_free(src, s->n_src);
        free(X);
        free(Y);
        free(mask);
        return -1;
    }
    if (mask) memcpy(mask, s->mask, mb);
    lesson_tokens_free(L->tokens, L->n_tokens);
    lesson_tokens_free(L->source_tokens, L->n_source_tokens);
    free(L->X);
    free(L->Y);
    free(L->mask);
    tmp.tokens = tokens;
    tmp.source_tokens = src;
    tmp.X = X;
    tmp.Y = Y;
    tmp.mask = mask;
    *L = tmp;
    lesson_bind(L);
    return 0;
}

/* ---- what differs between two states of the lesson ---- */

static void rows_free(Rows *r, int strings)
{
    for (int s = 0; s < 2; s++) {
        if (strings && r->rows[s])
            for (int i = 0; i < r->n[s]; i++) free(((char **)r->rows[s])[i]);
        free(r->rows[s]);
    }
    memset(r, 0, sizeof *r);
}

void edit_diff_free(Diff *d)
{
    if (!d) return;
    rows_free(&d->tokens, 1);
    rows_free(&d->src, 1);
    for (int m = 0; m < LESSON_MAT_COUNT; m++) rows_free(&d->mats[m], 0);
    free(d->mask[0]);
    free(d->mask[1]);
    free(d);
}

/* r: the rows of a (na rows of `width` floats) and b (nb rows) between
 * their common first rows and their common last rows, copied. -1 when
 * memory runs out. */
static int float_rows(Rows *r, const float *a, int na, const float *b, int nb, int width, size_t *bytes)
{
    size_t w = (size_t)width, row = w * sizeof(float);
    int pre = 0, suf = 0, lim = na < nb ? na : nb;
    if (a != b) {
        while (pre < lim && memcmp(a + (size_t)pre * w, b + (size_t)pre * w, row) == 0) pre++;
        while (suf < lim - pre && memcmp(a + (size_t)(na - 1 - suf) * w, b + (size_t)(nb - 1 - suf) * w, row) == 0)
            suf++;
    } else {
        pre = lim;
    }
    *r = (Rows){.at = pre, .n = {na - pre - suf, nb - pre - suf}, .count = {na, nb}};
    const float *side[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        if (!r->n[s]) continue;
        if (!(r->rows[s] = malloc((size_t)r->n[s] * row))) return -1;
        memcpy(r->rows[s], side[s] + (size_t)pre * w, (size_t)r->n[s] * row);
        *bytes += (size_t)r->n[s] * row;
    }
    return 0;
}

/* The same for two lists of strings. */
static int string_rows(Rows *r, char *const *a, int na, char *const *b, int nb, size_t *bytes)
{
    int pre = 0, suf = 0, lim = na < nb ? na : nb;
    while (pre < lim && strcmp(a[pre], b[pre]) == 0) pre++;
    while (suf < lim - pre && strcmp(a[na - 1 - suf], b[nb - 1 - suf]) == 0) suf++;
    *r = (Rows){.at = pre, .n = {na - pre - suf, nb - pre - suf}, .count = {na, nb}};
    char *const *side[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        if (!r->n[s]) continue;
        char **out = calloc((size_t)r->n[s], sizeof *out);
        if (!(r->rows[s] = out)) return -1;
        for (int i = 0; i < r->n[s]; i++) {
            if (!(out[i] = strdup(side[s][pre + i]))) return -1;
            *bytes += strlen(out[i]) + 1 + sizeof *out;
        }
    }
    return 0;
}

static unsigned char *dup_mask(const Lesson *L)
{
    size_t n = lesson_mask_bytes(&L->cfg);
    if (!n || !L->mask) return NULL;
    unsigned char *m = malloc(n);
    if (m) memcpy(m, L->mask, n);
    return m;
}

/* What differs from a to b: a's and b's token lists, matrices (of the same
 * widths: no edit changes d_model or the heads), mask and scale. NULL when
 * memory runs out. */
Diff *edit_diff_make(const Lesson *a, const Lesson *b)
{
    Diff *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    size_t bytes = sizeof *d;
    int fail =
        string_rows(&d->tokens, a->tokens, a->n_tokens, b->tokens, b->n_tokens, &bytes) != 0 ||
        string_rows(&d->src, a->source_tokens, a->n_source_tokens, b->source_tokens, b->n_source_tokens, &bytes) != 0;
    for (int m = 0; !fail && m < LESSON_MAT_COUNT; m++) {
        int ra, ca, rb, cb;
        const float *pa = lesson_matrix(a, m, &ra, &ca), *pb = lesson_matrix(b, m, &rb, &cb);
        assert(!pa == !pb && (!pa || ca == cb)); /* edits keep every matrix and its width */
        if (pa) fail = float_rows(&d->mats[m], pa, ra, pb, rb, ca, &bytes) != 0;
    }
    size_t ma = lesson_mask_bytes(&a->cfg), mb = lesson_mask_bytes(&b->cfg);
    d->mask_differs = a->cfg.mask_kind != b->cfg.mask_kind || ma != mb || (ma && memcmp(a->mask, b->mask, ma) != 0);
    if (!fail && d->mask_differs) {
        d->mask_kind[0] = a->cfg.mask_kind, d->mask_kind[1] = b->cfg.mask_kind;
        d->mask[0] = dup_mask(a), d->mask[1] = dup_mask(b);
        fail = (ma && !d->mask[0]) || (mb && !d->mask[1]);
        bytes += ma + mb;
    }
    d->sk[0] = a->cfg.scale_kind, d->sk[1] = b->cfg.scale_kind;
    d->sv[0] = a->cfg.scale_value, d->sv[1] = b->cfg.scale_value;
    d->bytes = bytes;
    if (fail) {
        edit_diff_free(d);
        return NULL;
    }
    return d;
}

/* Side `to` of r's list, built from cur, which holds side 1 - to (width
 * floats a row); malloc'd, NULL when memory runs out. */
static float *float_rows_side(const float *cur, const Rows *r, int to, int width)
{
    size_t w = (size_t)width, n = (size_t)r->count[to] * w;
    float *out = malloc(sizeof(float) * (n ? n : 1));
    if (!out) return NULL;
    size_t head = (size_t)r->at * w, mid = (size_t)r->n[to] * w;
    size_t tail = (size_t)(r->count[to] - r->at - r->n[to]) * w;
    memcpy(out, cur, head * sizeof(float));
    if (mid) memcpy(out + head, r->rows[to], mid * sizeof(float));
    memcpy(out + head + mid, cur + head + (size_t)r->n[1 - to] * w, tail * sizeof(float));
    return out;
}

static char **string_rows_side(char *const *cur, const Rows *r, int to)
{
    char **out = calloc((size_t)(r->count[to] ? r->count[to] : 1), sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < r->count[to]; i++) {
        const char *s = i < r->at              ? cur[i]
                        : i < r->at + r->n[to] ? ((char **)r->rows[to])[i - r->at]
                                               : cur[i - r->n[to] + r->n[1 - to]];
        if (!(out[i] = strdup(s))) {
            lesson_tokens_free(out, i);
            return NULL;
        }
    }
    return out;
}

/* Moves L, which is at side 1 - to of d, to side `to`. -1 when memory runs
 * out (L is then unchanged). */
int edit_diff_apply(Lesson *L, const Diff *d, int to)
{
    const Rows *rt = &d->tokens, *rs = &d->src;
    int tok = rt->n[0] || rt->n[1], src = rs->n[0] || rs->n[1];
    char **tokens = tok ? string_rows_side(L->tokens, rt, to) : NULL;
    char **source = src ? string_rows_side(L->source_tokens, rs, to) : NULL;
    float *mats[LESSON_MAT_COUNT] = {0};
    int fail = (tok && !tokens) || (src && !source);
    for (int m = 0; !fail && m < LESSON_MAT_COUNT; m++) {
        const Rows *r = &d->mats[m];
        if (!r->n[0] && !r->n[1]) continue;
        int rows, cols;
        const float *cur = lesson_matrix(L, m, &rows, &cols);
        fail = !(mats[m] = float_rows_side(cur, r, to, cols));
    }
    unsigned char *mask = NULL;
    size_t mask_n = 0;
    if (!fail && d->mask_differs && d->mask[to]) {
        AttnConfig g = L->cfg;
        g.mask_kind = d->mask_kind[to];
        g.n_q = d->tokens.count[to];
        g.n_k = g.cross ? d->src.count[to] : g.n_q;
        mask_n = lesson_mask_bytes(&g);
        fail = !(mask = malloc(mask_n ? mask_n : 1));
        if (mask) memcpy(mask, d->mask[to], mask_n);
    }
    if (fail) {
        if (tokens) lesson_tokens_free(tokens, rt->count[to]);
        if (source) lesson_tokens_free(source, rs->count[to]);
        for (int m = 0; m < LESSON_MAT_COUNT; m++) free(mats[m]);
        free(mask);
        return -1;
    }
    if (tok) {
        lesson_tokens_free(L->tokens, L->n_tokens);
        L->tokens = tokens;
    }
    if (src) {
        lesson_tokens_free(L->source_tokens, L->n_source_tokens);
        L->source_tokens = source;
    }
    L->n_tokens = rt->count[to];
    L->n_source_tokens = rs->count[to];
    L->cfg.n_q = L->n_tokens;
    L->cfg.n_k = L->cfg.cross ? L->n_source_tokens : L->n_tokens;
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        if (!mats[m]) continue;
        float **slot = lesson_matrix_slot(L, m);
        free(*slot);
        *slot = mats[m];
    }
    if (d->mask_differs) {
        free(L->mask);
        L->mask = mask;
        L->cfg.mask_kind = d->mask_kind[to];
    }
    L->cfg.scale_kind = d->sk[to];
    L->cfg.scale_value = d->sv[to];
    lesson_bind(L);
    return 0;
}
