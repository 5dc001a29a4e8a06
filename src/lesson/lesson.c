/* lesson.c: the lesson loader: "attnviz-lesson/1" JSON into an engine config.
 *
 * The order of work, so that the first problem found is the one reported and
 * nothing big is allocated for a file that is wrong:
 *   1. size of the file, then JSON syntax and UTF-8, checked by the locator
 *      in lesson_json.c, which then has cJSON parse the text and ties every
 *      cJSON item to its position; every value below is cJSON's;
 *   2. the top-level keys: unknown (with the nearest known one) or duplicated;
 *   3. the scalar fields (format, id, title, tokens, sizes), each with its
 *      limit, then the size of the whole trace, all before any matrix is read;
 *   4. the matrices, read or generated, their shapes named with where the
 *      expected shape comes from; mask, scale, narration.
 * Every failure is one line, "NAME:LINE:COL: FIELD: ...", and leaves the
 * Lesson zeroed. The format is documented in lessons/FORMAT.md.
 */
#include "lesson.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lesson_json.h" /* cJSON parses; the locator says where */

/* ---- the top-level keys ------------------------------------------------- */

enum {
    F_FORMAT,
    F_ID,
    F_TITLE,
    F_SUMMARY,
    F_ORDER,
    F_COMMENT,
    F_TOKENS,
    F_SOURCE_TOKENS,
    F_SEED,
    F_ATTENTION,
    F_D_MODEL,
    F_HEADS,
    F_D_K,
    F_D_V,
    F_X,
    F_Y,
    F_W_Q,
    F_W_K,
    F_W_V,
    F_W_O,
    F_B_Q,
    F_B_K,
    F_B_V,
    F_B_O,
    F_D_X,
    F_D_Y,
    F_D_A,
    F_W_A,
    F_B_A,
    F_V_A,
    F_MASK,
    F_MASK_FILL,
    F_MASK_ORDER,
    F_SCALE,
    F_NARRATION,
    F_EDITED_FROM,
    F_DECODE,
    F_KV_HEADS,
    F_ROPE,
    F_POSITIONAL,
    F_TILE,
    F_COUNT
};
static const char *const field_names[F_COUNT] = {
    "format",    "id",       "title", "summary",    "order",     "comment",    "tokens", "source_tokens", "seed",
    "attention", "d_model",  "heads", "d_k",        "d_v",       "X",          "Y",      "W_Q",           "W_K",
    "W_V",       "W_O",      "b_Q",   "b_K",        "b_V",       "b_O",        "d_x",    "d_y",           "d_a",
    "W_a",       "b_a",      "v_a",   "mask",       "mask_fill", "mask_order", "scale",  "narration",     "edited_from",
    "decode",    "kv_heads", "rope",  "positional", "tile",
};

typedef struct Ctx {
    const char *name; /* the path or name for messages */
    const char *text;
    size_t len;
    JsonDoc doc;
    LessonError *err;
    Lesson *L;
    const JsonNode *root;
    const JsonNode *val[F_COUNT]; /* the value of each top-level key, NULL when absent */
    const JsonNode *key[F_COUNT]; /* its key, for pointing at the field itself */
} Ctx;

/* ---- messages -------------------------------------------------------------- */

/* The one line: "NAME:LINE:COL: text", or "NAME: text" without a node. */
static int lesson_fail(Ctx *c, const JsonNode *at, const char *fmt, ...)
{
    char body[768];
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(body, sizeof body, fmt, ap);
    va_end(ap);
    if (at) {
        json_line_col(c->text, c->len, at->off, &c->err->line, &c->err->col);
        lesson_format(c->err->msg, sizeof c->err->msg, "%s:%d:%d: %s", c->name, c->err->line, c->err->col, body);
    } else {
        c->err->line = c->err->col = 0;
        lesson_format(c->err->msg, sizeof c->err->msg, "%s: %s", c->name, body);
    }
    return -1;
}

/* What a value is, for "found ...": 1e39, "abc", an array of 3, an object. */
static void found(const Ctx *c, const JsonNode *n, char *out, size_t outlen)
{
    char tmp[96];
    switch ((JsonType)n->type) {
    case JSON_NUMBER: {
        size_t e = n->off;
        while (e < c->len && e - n->off < 40 && strchr("+-0123456789.eE", c->text[e])) e++;
        snprintf(out, outlen, "%.*s", (int)(e - n->off), c->text + n->off);
        break;
    }
    case JSON_STRING:
        lesson_quote(tmp, sizeof tmp, json_str(n), 40);
        snprintf(out, outlen, "the string \"%s\"", tmp);
        break;
    case JSON_ARRAY:
        if (n->n == 0)
            snprintf(out, outlen, "an empty array");
        else
            snprintf(out, outlen, "an array of %u", (unsigned)n->n);
        break;
    case JSON_OBJECT:
        snprintf(out, outlen, "an object");
        break;
    default:
        snprintf(out, outlen, "%s", json_type_phrase((JsonType)n->type));
        break;
    }
}

static int fail_type(Ctx *c, const JsonNode *n, const char *path, const char *want)
{
    char f[128];
    found(c, n, f, sizeof f);
    return lesson_fail(c, n, "%s: expected %s, found %s", path, want, f);
}

/* ---- suggestions ------------------------------------------------------------ */

static int lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* Edit distance (insert, delete, substitute, swap two neighbours), ignoring
 * case; capped at 9 for long strings. */
static int edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 40 || m > 40) return 9;
    int d[41][41];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = lower(a[i - 1]) != lower(b[j - 1]);
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]) &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The known word nearest to s, or NULL when none is close enough to guess. */
static const char *nearest(const char *s, const char *const *known, int n_known)
{
    const char *best = NULL;
    int best_d = 1000;
    for (int i = 0; i < n_known; i++) {
        int dist = edit_distance(s, known[i]);
        if (dist < best_d) best_d = dist, best = known[i];
    }
    size_t len = strlen(s);
    int limit = len <= 3 ? 1 : len <= 8 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}

/* "unknown key" with a suggestion, for a key at path prefix. */
static int fail_unknown(Ctx *c, const JsonNode *key, const char *prefix, const char *what, const char *const *known,
                        int n_known)
{
    char k[96];
    const char *s = json_str(key);
    lesson_quote(k, sizeof k, s, 48);
    const char *near = nearest(s, known, n_known);
    if (near) return lesson_fail(c, key, "%s%s: unknown %s; did you mean \"%s\"?", prefix, k, what, near);
    return lesson_fail(c, key, "%s%s: unknown %s (lessons/FORMAT.md lists them)", prefix, k, what);
}

/* ---- reading values ----------------------------------------------------------- */

/* Looks up a member of an object; counts nodes in order (objects are small). */
static const JsonNode *member(const JsonNode *obj, const char *name, const JsonNode **key_out)
{
    const JsonNode *k = json_first(obj);
    for (uint32_t i = 0; i < obj->n; i++) {
        const JsonNode *v = json_skip(k);
        if (strcmp(json_str(k), name) == 0) {
            if (key_out) *key_out = k;
            return v;
        }
        k = json_skip(v);
    }
    return NULL;
}

/* Checks an object's keys against a list: unknown or duplicate keys fail. */
static int check_keys(Ctx *c, const JsonNode *obj, const char *prefix, const char *const *known, int n_known)
{
    /* Every key before this one is known and distinct, so an object is
     * checked in at most n_known² comparisons, however long it is. */
    const JsonNode *k = json_first(obj);
    for (uint32_t i = 0; i < obj->n; i++) {
        const char *s = json_str(k);
        int ok = 0;
        for (int j = 0; j < n_known && !ok; j++) ok = strcmp(s, known[j]) == 0;
        if (!ok) return fail_unknown(c, k, prefix, "key", known, n_known);
        const JsonNode *e = json_first(obj);
        for (uint32_t j = 0; j < i; j++, e = json_skip(json_skip(e)))
            if (strcmp(json_str(e), s) == 0) {
                int l, col;
                json_line_col(c->text, c->len, e->off, &l, &col);
                return lesson_fail(c, k,
                                   "%s%s: expected each key once, found it a second time (first at line %d, column %d)",
                                   prefix, s, l, col);
            }
        k = json_skip(json_skip(k));
    }
    return 0;
}

/* An integer in [lo, hi]. */
static int read_int(Ctx *c, const JsonNode *n, const char *path, double lo, double hi, const char *what, double *out)
{
    char want[160];
    snprintf(want, sizeof want, "%s, an integer %.17g..%.17g", what, lo, hi);
    if (!cJSON_IsNumber(n->item)) return fail_type(c, n, path, want);
    double v = n->item->valuedouble;
    if (!(v >= lo && v <= hi) || v != floor(v)) return fail_type(c, n, path, want);
    *out = v;
    return 0;
}

static int field_int(Ctx *c, int f, double lo, double hi, const char *what, int dflt, int *out)
{
    if (!c->val[f]) {
        *out = dflt;
        return 0;
    }
    double v = 0;
    if (read_int(c, c->val[f], field_names[f], lo, hi, what, &v) != 0) return -1;
    *out = (int)v;
    return 0;
}

/* Does v round to a finite float32? Everything below FLT_MAX + half an ulp
 * (2^103) does; at that midpoint and above it rounds to infinity. Checked
 * before the cast, which C leaves undefined out of range. */
static int fits_f32(double v)
{
    return isfinite(v) && fabs(v) < (double)FLT_MAX + ldexp(1.0, 103);
}

/* A finite number that float32 can hold. */
static int read_f32(Ctx *c, const JsonNode *n, const char *path, float *out)
{
    if (!cJSON_IsNumber(n->item)) return fail_type(c, n, path, "a number");
    double v = n->item->valuedouble;
    if (!fits_f32(v)) {
        char fs[64];
        found(c, n, fs, sizeof fs);
        return lesson_fail(c, n, "%s: expected a number float32 can hold (|x| <= 3.4028235e38), found %s", path, fs);
    }
    *out = (float)v;
    return 0;
}

/* A string of at most max bytes, as cJSON decoded it (UTF-8 and free of NUL,
 * which the scanner checked); copied. */
static int read_string(Ctx *c, const JsonNode *n, const char *path, size_t max, int allow_empty, char **out)
{
    if (!cJSON_IsString(n->item)) return fail_type(c, n, path, "a string");
    const char *s = json_str(n);
    size_t len = strlen(s);
    if (len == 0 && !allow_empty) return lesson_fail(c, n, "%s: expected text, found an empty string", path);
    if (len > max) return lesson_fail(c, n, "%s: expected at most %zu bytes of text, found %zu", path, max, len);
    *out = malloc(len + 1);
    if (!*out) return lesson_fail(c, n, "%s: out of memory", path);
    memcpy(*out, s, len + 1);
    return 0;
}

/* The one line at a position inside a text: "NAME:LINE:COL: text". */
static int text_fail(Ctx *c, const LessonText *t, int lang, size_t byte, const char *fmt, ...)
{
    char body[768];
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(body, sizeof body, fmt, ap);
    va_end(ap);
    lesson_text_where(t, (LessonLang)lang, byte, &c->err->line, &c->err->col);
    lesson_format(c->err->msg, sizeof c->err->msg, "%s:%d:%d: %s", c->name, c->err->line, c->err->col, body);
    return -1;
}

/* Narration placeholders are {name}: every '{' closes before the next one
 * opens; "{{" and "}}" outside a placeholder are literal braces (as
 * src/view/narrate.c reads them). A problem is reported at the brace. */
static int check_braces(Ctx *c, const LessonText *t, int lang, const char *path)
{
    const char *s = t->text[lang];
    int open = 0;
    size_t open_at = 0;
    for (const char *p = s; *p; p++) {
        if (!open && ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}'))) {
            p++;
            continue;
        }
        if (*p == '{') {
            if (open)
                return text_fail(c, t, lang, (size_t)(p - s),
                                 "%s: expected '}' before the next '{' (placeholders are {name}, a literal brace is "
                                 "{{), found '{'",
                                 path);
            open = 1, open_at = (size_t)(p - s);
        } else if (*p == '}') {
            if (!open)
                return text_fail(c, t, lang, (size_t)(p - s),
                                 "%s: expected '{' before '}' (placeholders are {name}, a literal brace is }}), "
                                 "found a lone '}'",
                                 path);
            open = 0;
        }
    }
    if (open)
        return text_fail(c, t, lang, open_at, "%s: expected '}' to close this '{', found the end of the text", path);
    return 0;
}

/* Text a lesson may hold: UTF-8 without control characters or characters
 * that are not seen or reorder what is (lesson_invisible_name); `lines`
 * allows line breaks and tabs (narration). 0, or -1 with *at the byte of
 * the first character that is not allowed and what it is in why: "expected
 * ..., found ...", the expectation named by `what` ("a token", "text"). */
static int check_chars(const char *s, const char *what, int lines, size_t *at, char *why, size_t whylen)
{
    for (const char *p = s; *p;) {
        uint32_t cp;
        int k = lesson_utf8_decode(p, &cp);
        *at = (size_t)(p - s);
        if (!k) {
            lesson_format(why, whylen, "expected UTF-8 text, found the byte 0x%02x, which is not UTF-8",
                          (unsigned char)*p);
            return -1;
        }
        if (lesson_is_control(cp) && !(lines && (cp == '\n' || cp == '\t'))) {
            if (cp >= 0x7F) /* DEL and C1 */
                lesson_format(why, whylen, "expected %s of printable characters, found the control character U+%04X",
                              what, (unsigned)cp);
            else
                lesson_format(why, whylen, "expected %s %s, found the control character 0x%02x%s", what,
                              lines ? "without control characters (line breaks and tabs are allowed)" : "on one line",
                              (unsigned)cp,
                              cp == '\n'   ? " (a line break)"
                              : cp == '\t' ? " (a tab)"
                              : cp == 0x1B ? " (escape)"
                                           : "");
            return -1;
        }
        const char *name = lesson_invisible_name(cp);
        if (name) {
            const char *does = lesson_is_bidi_control(cp)     ? "reorders the text around it on screen"
                               : cp == 0x2028 || cp == 0x2029 ? "breaks the line in some programs and not in others"
                                                              : "is not seen on screen";
            lesson_format(why, whylen, "expected %s of visible characters, found U+%04X (%s), which %s", what,
                          (unsigned)cp, name, does);
            return -1;
        }
        p += k;
    }
    return 0;
}

const char *const lesson_lang_names[LESSON_LANG_COUNT] = {"en", "zh"};

/* {"en": ..., "zh": ...}, en required; narration (braces) may also have
 * "when", the condition under which it is true. */
static int read_text(Ctx *c, const JsonNode *n, const char *path, int braces, LessonText *out)
{
    static const char *const langs[] = {"en", "zh", "when"}; /* lesson_lang_names, then "when" */
    if (!cJSON_IsObject(n->item)) return fail_type(c, n, path, "an object {\"en\": ..., \"zh\": ...}");
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s.", path);
    if (check_keys(c, n, prefix, langs, braces ? 3 : 2) != 0) return -1;
    const JsonNode *w = braces ? member(n, "when", NULL) : NULL;
    if (w) {
        char sub[160];
        snprintf(sub, sizeof sub, "%s.when", path);
        /* its placeholders are checked where they are filled (attnviz check) */
        if (read_string(c, w, sub, LESSON_MAX_TEXT_BYTES, 0, &out->when) != 0) return -1;
        json_line_col(c->text, c->len, w->off, &out->when_line, &out->when_col);
        size_t at;
        char why[200];
        if (check_chars(out->when, "a condition", 1, &at, why, sizeof why) != 0)
            return lesson_fail(c, w, "%s: %s", sub, why);
    }
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        const JsonNode *v = member(n, langs[l], NULL);
        char sub[160];
        snprintf(sub, sizeof sub, "%s.%s", path, langs[l]);
        if (!v) {
            if (l == LESSON_EN)
                return lesson_fail(c, n, "%s: missing; expected the English text (\"en\" is required)", sub);
            continue;
        }
        if (read_string(c, v, sub, LESSON_MAX_TEXT_BYTES, 0, &out->text[l]) != 0) return -1;
        /* the string as written, for lesson_text_where: from after its
         * opening quote to the closing one (the scanner has validated it) */
        size_t from = (size_t)v->off + 1, to = from;
        while (to < c->len && c->text[to] != '"') to += c->text[to] == '\\' ? 2 : 1;
        out->source[l] = malloc(to - from + 1);
        if (!out->source[l]) return lesson_fail(c, v, "%s: out of memory", sub);
        memcpy(out->source[l], c->text + from, to - from);
        out->source[l][to - from] = '\0';
        json_line_col(c->text, c->len, v->off, &out->line[l], &out->col[l]);
        /* a title is one line; narration and the summary may have several */
        size_t at;
        char why[200];
        if (check_chars(out->text[l], "text", braces, &at, why, sizeof why) != 0)
            return text_fail(c, out, l, at, "%s: %s", sub, why);
        if (braces && check_braces(c, out, l, sub) != 0) return -1;
    }
    return 0;
}

static void text_free(LessonText *t)
{
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        free(t->text[l]);
        free(t->source[l]);
    }
    free(t->when);
    memset(t, 0, sizeof *t);
}

/* Bytes of the UTF-8 encoding of code point cp. */
static size_t utf8_bytes(unsigned long cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

void lesson_text_where(const LessonText *t, LessonLang lang, size_t byte, int *line, int *col)
{
    *line = *col = 0;
    if ((int)lang < 0 || lang >= LESSON_LANG_COUNT || !t->source[lang] || t->line[lang] < 1) return;
    /* JSON strings hold no raw line break: the line is the quote's. Each
     * character of the source is a column; walk it, decoding escapes, until
     * `byte` bytes of the decoded text lie behind. */
    const char *p = t->source[lang];
    size_t decoded = 0;
    int c = t->col[lang] + 1;
    while (*p && decoded < byte) {
        if (p[0] == '\\' && p[1] == 'u') {
            unsigned long cp = strtoul((char[5]){p[2], p[3], p[4], p[5], 0}, NULL, 16);
            size_t n = 6;
            if (cp >= 0xD800 && cp < 0xDC00 && p[6] == '\\' && p[7] == 'u') n = 12, cp = 0x10000;
            decoded += utf8_bytes(cp), c += (int)n, p += n;
        } else if (p[0] == '\\' && p[1]) {
            decoded += 1, c += 2, p += 2;
        } else {
            size_t k = 1;
            while ((p[k] & 0xC0) == 0x80) k++;
            decoded += k, c += 1, p += k;
        }
    }
    *line = t->line[lang];
    *col = c;
}

int lesson_check_token(const char *s, char *why, size_t whylen)
{
    size_t bytes = strlen(s), at;
    if (bytes == 0) {
        lesson_format(why, whylen, "expected a token, found an empty string");
        return -1;
    }
    if (bytes > LESSON_MAX_TOKEN_BYTES) {
        lesson_format(why, whylen, "expected a token of at most %d bytes, found %u", LESSON_MAX_TOKEN_BYTES,
                      (unsigned)bytes);
        return -1;
    }
    return check_chars(s, "a token", 0, &at, why, whylen);
}

/* tokens / source_tokens: 1..LESSON_MAX_TOKENS non-empty strings. */
static int read_tokens(Ctx *c, int f, char ***out, int *n_out)
{
    const JsonNode *n = c->val[f];
    const char *name = field_names[f];
    if (!cJSON_IsArray(n->item)) return fail_type(c, n, name, "an array of token strings");
    if (n->n < 1) return lesson_fail(c, n, "%s: expected at least 1 token, found an empty array", name);
    if (n->n > LESSON_MAX_TOKENS)
        return lesson_fail(c, n, "%s: expected at most %d tokens, found %u", name, LESSON_MAX_TOKENS, (unsigned)n->n);
    /* check everything before allocating */
    const JsonNode *e = json_first(n);
    for (uint32_t i = 0; i < n->n; i++, e = json_skip(e)) {
        char path[64], why[160];
        snprintf(path, sizeof path, "%s[%u]", name, (unsigned)i);
        if (!cJSON_IsString(e->item)) return fail_type(c, e, path, "a token string");
        if (lesson_check_token(json_str(e), why, sizeof why) != 0) return lesson_fail(c, e, "%s: %s", path, why);
    }
    *out = calloc(n->n, sizeof **out);
    if (!*out) return lesson_fail(c, n, "%s: out of memory", name);
    *n_out = (int)n->n;
    e = json_first(n);
    for (uint32_t i = 0; i < n->n; i++, e = json_skip(e))
        if (read_string(c, e, name, LESSON_MAX_TOKEN_BYTES, 0, &(*out)[i]) != 0) return -1;
    return 0;
}

/* ---- matrices ------------------------------------------------------------------ */

/* The column count of a matrix's first row, or -1 when it has none. Used to
 * infer additive sizes from X and Y. */
static int first_row_len(const JsonNode *n)
{
    if (!n || !cJSON_IsArray(n->item) || n->n == 0) return -1;
    const JsonNode *r = json_first(n);
    return cJSON_IsArray(r->item) ? (int)r->n : -1;
}

/* A matrix of rows × cols numbers as an array of rows; `why` says where the
 * expected shape comes from ("d_model × heads·d_k = 4 × 2·2"). The buffer is
 * allocated only after the whole shape has been checked. */
static int read_matrix(Ctx *c, const JsonNode *n, const char *name, int rows, int cols, const char *why, float **out)
{
    char want[256];
    snprintf(want, sizeof want, "a %d×%d matrix (%s) as an array of %d rows", rows, cols, why, rows);
    if (!cJSON_IsArray(n->item)) return fail_type(c, n, name, want);
    /* 1. every entry is a row, and the rows agree with the first */
    const JsonNode *r = json_first(n);
    uint32_t width = 0;
    for (uint32_t i = 0; i < n->n; i++, r = json_skip(r)) {
        char path[64];
        snprintf(path, sizeof path, "%s[%u]", name, (unsigned)i);
        if (!cJSON_IsArray(r->item)) {
            char w2[96];
            snprintf(w2, sizeof w2, "a row (an array of %d numbers)", cols);
            return fail_type(c, r, path, w2);
        }
        if (i == 0)
            width = r->n;
        else if (r->n != width)
            return lesson_fail(c, r, "%s: expected %u numbers like %s[0] (rows must have equal length), found %u", path,
                               (unsigned)width, name, (unsigned)r->n);
    }
    /* 2. the shape */
    if ((int)n->n != rows || (int)width != cols)
        return lesson_fail(c, n, "%s: expected %d×%d (%s), found %u×%u", name, rows, cols, why, (unsigned)n->n,
                           (unsigned)width);
    /* 3. the numbers */
    r = json_first(n);
    for (uint32_t i = 0; i < n->n; i++, r = json_skip(r)) {
        const JsonNode *e = json_first(r);
        for (uint32_t j = 0; j < r->n; j++, e = json_skip(e))
            if (!cJSON_IsNumber(e->item) || !fits_f32(e->item->valuedouble)) {
                char path[64];
                snprintf(path, sizeof path, "%s[%u][%u]", name, (unsigned)i, (unsigned)j);
                float dummy;
                return read_f32(c, e, path, &dummy);
            }
    }
    float *m = malloc(sizeof(float) * (size_t)rows * (size_t)cols); /* (rows, cols) */
    if (!m) return lesson_fail(c, n, "%s: out of memory", name);
    r = json_first(n);
    size_t at = 0;
    for (uint32_t i = 0; i < n->n; i++, r = json_skip(r)) {
        const JsonNode *e = json_first(r);
        for (uint32_t j = 0; j < r->n; j++, e = json_skip(e)) m[at++] = (float)e->item->valuedouble;
    }
    *out = m;
    return 0;
}

/* A vector of n numbers (a bias, v_a). */
static int read_vector(Ctx *c, const JsonNode *n, const char *name, int len, const char *why, float **out)
{
    char want[192];
    snprintf(want, sizeof want, "an array of %d numbers (%s)", len, why);
    if (!cJSON_IsArray(n->item)) return fail_type(c, n, name, want);
    if ((int)n->n != len)
        return lesson_fail(c, n, "%s: expected %d numbers (%s), found %u", name, len, why, (unsigned)n->n);
    const JsonNode *e = json_first(n);
    for (uint32_t i = 0; i < n->n; i++, e = json_skip(e))
        if (!cJSON_IsNumber(e->item) || !fits_f32(e->item->valuedouble)) {
            char path[64];
            snprintf(path, sizeof path, "%s[%u]", name, (unsigned)i);
            float dummy;
            return read_f32(c, e, path, &dummy);
        }
    float *v = malloc(sizeof(float) * (size_t)len); /* (len) */
    if (!v) return lesson_fail(c, n, "%s: out of memory", name);
    e = json_first(n);
    for (int i = 0; i < len; i++, e = json_skip(e)) v[i] = (float)e->item->valuedouble;
    *out = v;
    return 0;
}

/* ---- the seeded initialiser ----------------------------------------------------- */

uint64_t lesson_fnv1a64(const char *name)
{
    return attn_fnv1a64_bytes(ATTN_FNV1A64_BASIS, name, strlen(name));
}

void lesson_random_fill(float *out, size_t count, uint64_t seed, const char *name, double bound)
{
    uint64_t state = seed ^ lesson_fnv1a64(name);
    for (size_t i = 0; i < count; i++) {
        /* splitmix64 */
        state += 0x9E3779B97F4A7C15u;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
        z ^= z >> 31;
        double u = (double)(z >> 40) / 16777216.0; /* [0, 1), 24 bits: exact */
        out[i] = (float)((2.0 * u - 1.0) * bound);
    }
}

/* A matrix the lesson gives (read) or leaves out (generated, and marked so). */
static int matrix_or_random(Ctx *c, int f, int mat, int rows, int cols, const char *why, double bound, float **out)
{
    const char *name = field_names[f];
    if (c->val[f]) return read_matrix(c, c->val[f], name, rows, cols, why, out);
    float *m = malloc(sizeof(float) * (size_t)rows * (size_t)cols); /* (rows, cols) */
    if (!m) return lesson_fail(c, NULL, "%s: out of memory", name);
    lesson_random_fill(m, (size_t)rows * (size_t)cols, c->L->seed, name, bound);
    c->L->generated |= 1u << mat;
    *out = m;
    return 0;
}

/* ---- the fields ------------------------------------------------------------------- */

static int required(Ctx *c, int f, const char *what)
{
    if (c->val[f]) return 0;
    return lesson_fail(c, c->root, "%s: missing; expected %s", field_names[f], what);
}

/* A field that only the other kind of attention uses. */
static int refuse_fields(Ctx *c, const int *fields, int n, const char *why)
{
    for (int i = 0; i < n; i++)
        if (c->val[fields[i]])
            return lesson_fail(c, c->key[fields[i]], "%s: not used here; %s", field_names[fields[i]], why);
    return 0;
}

static int read_id(Ctx *c, int field, char **out)
{
    const JsonNode *n = c->val[field];
    if (read_string(c, n, field_names[field], LESSON_MAX_ID_BYTES, 0, out) != 0) return -1;
    for (const char *p = *out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
            char f[128];
            found(c, n, f, sizeof f);
            return lesson_fail(c, n,
                               "%s: expected lowercase letters, digits and dashes (like \"mhsa-basics\"), found %s",
                               field_names[field], f);
        }
    return 0;
}

/* A string field that must be one of a few words. */
static int read_word(Ctx *c, const JsonNode *n, const char *path, const char *const *words, int n_words,
                     const char *want, int *out)
{
    if (cJSON_IsString(n->item)) {
        const char *s = json_str(n);
        for (int i = 0; i < n_words; i++)
            if (strcmp(s, words[i]) == 0) {
                *out = i;
                return 0;
            }
        const char *near = nearest(s, words, n_words);
        if (near) {
            char f[128];
            found(c, n, f, sizeof f);
            return lesson_fail(c, n, "%s: expected %s, found %s; did you mean \"%s\"?", path, want, f, near);
        }
    }
    return fail_type(c, n, path, want);
}

/* mask.padding's entries, each 0 or 1, n_k of them. */
static int check_padding(Ctx *c, const JsonNode *p)
{
    const AttnConfig *cfg = &c->L->cfg;
    char why[96];
    snprintf(why, sizeof why, "one per key: n_k = %d, the %s", cfg->n_k, cfg->cross ? "source_tokens" : "tokens");
    if (!cJSON_IsArray(p->item)) return fail_type(c, p, "mask.padding", "an array of 0 and 1, one per key");
    if ((int)p->n != cfg->n_k)
        return lesson_fail(c, p, "mask.padding: expected %d entries (%s), found %u", cfg->n_k, why, (unsigned)p->n);
    const JsonNode *e = json_first(p);
    for (uint32_t j = 0; j < p->n; j++, e = json_skip(e))
        if (!cJSON_IsNumber(e->item) || (e->item->valuedouble != 0 && e->item->valuedouble != 1)) {
            char path[64];
            snprintf(path, sizeof path, "mask.padding[%u]", (unsigned)j);
            return fail_type(c, e, path, "0 or 1 (1 = may attend, 0 = blocked)");
        }
    return 0;
}

/* A sliding window, {"window": w} or {"window": w, "causal": false}, with
 * key padding when "padding" is there too: query i may attend key j exactly
 * when i − w < j ≤ i (causal, the default) or |i − j| < w, and the padding
 * lets it. The lesson keeps it as the n_q × n_k matrix it means. */
static int read_window(Ctx *c, const JsonNode *n, const JsonNode *win, const JsonNode *causal, const JsonNode *pad)
{
    Lesson *L = c->L;
    AttnConfig *cfg = &L->cfg;
    if (!win)
        return lesson_fail(c, causal,
                           "mask.causal: expected it only with \"window\" ({\"window\": 2, \"causal\": false}), "
                           "found it without");
    double w = 0;
    if (read_int(c, win, "mask.window", 1, 1000000, "the keys a query sees, counting itself", &w) != 0) return -1;
    int is_causal = 1;
    if (causal) {
        if (!cJSON_IsBool(causal->item))
            return fail_type(c, causal, "mask.causal", "true (keys up to the query) or false (keys on both sides)");
        is_causal = cJSON_IsTrue(causal->item);
    }
    if (pad && check_padding(c, pad) != 0) return -1;
    L->mask = malloc((size_t)cfg->n_q * (size_t)cfg->n_k); /* (n_q, n_k) */
    if (!L->mask) return lesson_fail(c, n, "mask: out of memory");
    const JsonNode *e = pad ? json_first(pad) : NULL;
    for (int j = 0; j < cfg->n_k; j++, e = e ? json_skip(e) : NULL) {
        int open = !e || e->item->valuedouble != 0; /* key j is not padding */
        for (int i = 0; i < cfg->n_q; i++) {
            int in = is_causal ? i - (int)w < j && j <= i : abs(i - j) < (int)w;
            L->mask[(size_t)i * (size_t)cfg->n_k + (size_t)j] = (unsigned char)(in && open);
        }
    }
    cfg->mask_kind = ATTN_MASK_MATRIX;
    L->window = (int)w;
    L->window_causal = is_causal;
    return 0;
}

int lesson_window(const Lesson *L, int *causal)
{
    const AttnConfig *g = &L->cfg;
    if (L->window <= 0 || g->mask_kind != ATTN_MASK_MATRIX || !L->mask) return 0;
    /* the band, each key of it open in every row or (padding) in none */
    for (int j = 0; j < g->n_k; j++) {
        int open = -1; /* key j's value in the band: 1 open, 0 padding, -1 not met yet */
        for (int i = 0; i < g->n_q; i++) {
            int in = L->window_causal ? i - L->window < j && j <= i : abs(i - j) < L->window;
            int v = L->mask[(size_t)i * (size_t)g->n_k + (size_t)j] != 0;
            if (!in && v) return 0;
            if (in && open >= 0 && v != open) return 0;
            if (in) open = v;
        }
    }
    *causal = L->window_causal;
    return L->window;
}

static int read_mask(Ctx *c)
{
    Lesson *L = c->L;
    AttnConfig *cfg = &L->cfg;
    const JsonNode *n = c->val[F_MASK];
    const char *kt = cfg->cross ? "source_tokens" : "tokens";
    if (!n) return 0;
    if (!cJSON_IsArray(n->item) && !cJSON_IsObject(n->item)) { /* a string, number, true, false or null */
        static const char *const words[] = {"none", "causal"};
        int w;
        if (read_word(c, n, "mask", words, 2,
                      "\"none\", \"causal\", {\"padding\": [1, 1, 0]} or an n_q×n_k matrix of 0 and 1", &w) != 0)
            return -1;
        cfg->mask_kind = w == 0 ? ATTN_MASK_NONE : ATTN_MASK_CAUSAL;
        return 0;
    }
    if (cJSON_IsObject(n->item)) {
        static const char *const keys[] = {"padding", "window", "causal"};
        if (check_keys(c, n, "mask.", keys, 3) != 0) return -1;
        const JsonNode *p = member(n, "padding", NULL), *win = member(n, "window", NULL);
        const JsonNode *causal = member(n, "causal", NULL);
        if (win || causal) return read_window(c, n, win, causal, p);
        if (!p)
            return lesson_fail(c, n,
                               "mask: expected {\"padding\": [1, 1, 0]} (one 0 or 1 per key) or {\"window\": 2}, found "
                               "an object without \"padding\" or \"window\"");
        if (check_padding(c, p) != 0) return -1;
        L->mask = malloc((size_t)cfg->n_k); /* (n_k) */
        if (!L->mask) return lesson_fail(c, p, "mask: out of memory");
        const JsonNode *e = json_first(p);
        for (int j = 0; j < cfg->n_k; j++, e = json_skip(e)) L->mask[j] = e->item->valuedouble != 0;
        cfg->mask_kind = ATTN_MASK_PADDING;
        return 0;
    }
    /* an n_q × n_k matrix */
    char why[128];
    snprintf(why, sizeof why, "tokens × %s = n_q × n_k = %d × %d", kt, cfg->n_q, cfg->n_k);
    const JsonNode *r = json_first(n);
    uint32_t width = 0;
    for (uint32_t i = 0; i < n->n; i++, r = json_skip(r)) {
        char path[64];
        snprintf(path, sizeof path, "mask[%u]", (unsigned)i);
        if (!cJSON_IsArray(r->item)) return fail_type(c, r, path, "a row of 0 and 1 (one per key)");
        if (i == 0)
            width = r->n;
        else if (r->n != width)
            return lesson_fail(c, r, "%s: expected %u entries like mask[0] (rows must have equal length), found %u",
                               path, (unsigned)width, (unsigned)r->n);
    }
    if ((int)n->n != cfg->n_q || (int)width != cfg->n_k)
        return lesson_fail(c, n, "mask: expected %d×%d (%s), found %u×%u", cfg->n_q, cfg->n_k, why, (unsigned)n->n,
                           (unsigned)width);
    r = json_first(n);
    for (uint32_t i = 0; i < n->n; i++, r = json_skip(r)) {
        const JsonNode *e = json_first(r);
        for (uint32_t j = 0; j < r->n; j++, e = json_skip(e))
            if (!cJSON_IsNumber(e->item) || (e->item->valuedouble != 0 && e->item->valuedouble != 1)) {
                char path[64];
                snprintf(path, sizeof path, "mask[%u][%u]", (unsigned)i, (unsigned)j);
                return fail_type(c, e, path, "0 or 1 (1 = may attend, 0 = blocked)");
            }
    }
    L->mask = malloc((size_t)cfg->n_q * (size_t)cfg->n_k); /* (n_q, n_k) */
    if (!L->mask) return lesson_fail(c, n, "mask: out of memory");
    r = json_first(n);
    size_t at = 0;
    for (uint32_t i = 0; i < n->n; i++, r = json_skip(r)) {
        const JsonNode *e = json_first(r);
        for (uint32_t j = 0; j < r->n; j++, e = json_skip(e)) L->mask[at++] = e->item->valuedouble != 0;
    }
    cfg->mask_kind = ATTN_MASK_MATRIX;
    return 0;
}

static int read_mask_fill(Ctx *c)
{
    const JsonNode *n = c->val[F_MASK_FILL];
    if (!n) return 0;
    const char *want = "\"-inf\" or a number such as -1e9";
    if (cJSON_IsString(n->item)) {
        static const char *const words[] = {"-inf"};
        int w;
        if (read_word(c, n, "mask_fill", words, 1, want, &w) != 0) return -1;
        c->L->cfg.mask_fill = -INFINITY;
        return 0;
    }
    if (!cJSON_IsNumber(n->item)) return fail_type(c, n, "mask_fill", want);
    return read_f32(c, n, "mask_fill", &c->L->cfg.mask_fill);
}

/* mask_order: "scale_then_mask" (the default) or "mask_then_scale" (seed 003),
 * which needs a mask to order. */
static int read_mask_order(Ctx *c)
{
    const JsonNode *n = c->val[F_MASK_ORDER];
    if (!n) return 0;
    static const char *const words[] = {"scale_then_mask", "mask_then_scale"};
    int w = 0;
    if (read_word(c, n, "mask_order", words, 2, "\"scale_then_mask\" or \"mask_then_scale\"", &w) != 0) return -1;
    if (c->L->cfg.mask_kind == ATTN_MASK_NONE)
        return lesson_fail(c, c->key[F_MASK_ORDER],
                           "mask_order: expected a mask for it to order (\"mask\": \"causal\", ...), found none");
    c->L->cfg.mask_order = w ? ATTN_MASK_THEN_SCALE : ATTN_SCALE_THEN_MASK;
    return 0;
}

static int read_scale(Ctx *c)
{
    const JsonNode *n = c->val[F_SCALE];
    AttnConfig *cfg = &c->L->cfg;
    if (!n) return 0;
    const char *want = "\"sqrt_dk\", \"sqrt_dmodel\", \"none\" or a positive number";
    if (cJSON_IsNumber(n->item)) {
        float v;
        if (read_f32(c, n, "scale", &v) != 0) return -1;
        if (!(v > 0)) return fail_type(c, n, "scale", "a positive number (the divisor of the scores)");
        cfg->scale_kind = ATTN_SCALE_VALUE;
        cfg->scale_value = v;
        return 0;
    }
    static const char *const words[] = {"sqrt_dk", "sqrt_dmodel", "none"};
    static const AttnScaleKind kinds[] = {ATTN_SCALE_SQRT_DK, ATTN_SCALE_SQRT_DMODEL, ATTN_SCALE_NONE};
    int w = 0;
    if (read_word(c, n, "scale", words, 3, want, &w) != 0) return -1;
    cfg->scale_kind = kinds[w];
    return 0;
}

/* The names a narration key may take in this lesson: "intro", the step kinds,
 * and every step name its configuration can produce: the steps of its plan
 * with every optional matrix present (Y, the biases, W_O, a mask), those of
 * no head first, then each head's. */
static char **narration_keys(const AttnConfig *cfg, int *n_out)
{
    static const float present = 0;
    AttnConfig all = *cfg;
    all.cross = 1;
    all.Y = all.b_Q = all.b_K = all.b_V = all.W_O = all.b_O = all.b_a = &present;
    all.mask_kind = ATTN_MASK_MATRIX;
    int n_steps = 0;
    AttnStep *steps = attn_trace_outline(&all, &n_steps);
    char **keys = steps ? calloc((size_t)(1 + ATTN_STEP_KIND_COUNT + n_steps), sizeof *keys) : NULL;
    if (!keys) {
        free(steps);
        return NULL;
    }
    int at = 0;
    keys[at++] = strdup("intro");
    for (int k = 0; k < ATTN_STEP_KIND_COUNT; k++) keys[at++] = strdup(attn_step_kind_name((AttnStepKind)k));
    for (int per_head = 0; per_head < 2; per_head++)
        for (int i = 0; i < n_steps; i++)
            if ((steps[i].head > 0) == per_head) keys[at++] = strdup(steps[i].name);
    free(steps);
    for (int i = 0; i < at; i++)
        if (!keys[i]) {
            for (int j = 0; j < at; j++) free(keys[j]);
            free(keys);
            return NULL;
        }
    *n_out = at;
    return keys;
}

static int read_narration(Ctx *c)
{
    Lesson *L = c->L;
    const JsonNode *n = c->val[F_NARRATION];
    if (!n) return 0;
    if (!cJSON_IsObject(n->item))
        return fail_type(c, n, "narration", "an object of {\"en\": ..., \"zh\": ...} texts keyed by step kind or name");
    int n_keys = 0;
    char **keys = narration_keys(&L->cfg, &n_keys);
    if (!keys) return lesson_fail(c, n, "narration: out of memory");
    int rc = check_keys(c, n, "narration.", (const char *const *)keys, n_keys);
    for (int i = 0; i < n_keys; i++) free(keys[i]);
    free(keys);
    if (rc != 0) return -1;
    if (n->n == 0) return 0;
    L->narration = calloc(n->n, sizeof *L->narration);
    if (!L->narration) return lesson_fail(c, n, "narration: out of memory");
    const JsonNode *k = json_first(n);
    for (uint32_t i = 0; i < n->n; i++) {
        const JsonNode *v = json_skip(k);
        LessonNarration *dst = &L->narration[L->n_narration++];
        char path[96];
        snprintf(path, sizeof path, "narration.%s", json_str(k));
        dst->key = strdup(json_str(k));
        if (!dst->key) return lesson_fail(c, k, "narration: out of memory");
        json_line_col(c->text, c->len, k->off, &dst->line, &dst->col);
        if (read_text(c, v, path, 1, &dst->text) != 0) return -1;
        k = json_skip(v);
    }
    return 0;
}

/* The trace limits, checked before any matrix is allocated: the config has
 * no buffers yet, so stand-ins mark what the lesson will have (a mask other
 * than "causal" counts as a matrix when the field is there at all: an upper
 * bound). */
static int check_trace_size(Ctx *c)
{
    static const float present = 0;
    AttnConfig g = c->L->cfg;
    int no_wo = c->val[F_W_O] && cJSON_IsNull(c->val[F_W_O]->item);
    const JsonNode *mask = c->val[F_MASK];
    g.W_O = no_wo ? NULL : &present;
    g.b_Q = c->val[F_B_Q] ? &present : NULL;
    g.b_K = c->val[F_B_K] ? &present : NULL;
    g.b_V = c->val[F_B_V] ? &present : NULL;
    g.b_O = c->val[F_B_O] ? &present : NULL;
    g.b_a = c->val[F_B_A] ? &present : NULL;
    g.mask_kind = !mask                                                                 ? ATTN_MASK_NONE
                  : cJSON_IsString(mask->item) && strcmp(json_str(mask), "causal") == 0 ? ATTN_MASK_CAUSAL
                                                                                        : ATTN_MASK_MATRIX;
    if (g.decode == ATTN_DECODE_INCREMENTAL) {
        long steps = attn_trace_steps(&g);
        if (steps > ATTN_MAX_STEPS)
            return lesson_fail(c, c->val[F_DECODE],
                               "decode: expected a trace of at most %d steps, found %ld (incremental decoding records "
                               "steps for each of the %d tokens in each of the %d heads)",
                               ATTN_MAX_STEPS, steps, g.n_q, g.heads);
    }
    if (g.tile > 0) {
        long steps = attn_trace_steps(&g);
        if (steps > ATTN_MAX_STEPS)
            return lesson_fail(c, c->val[F_TILE],
                               "tile: expected a trace of at most %d steps, found %ld (the tiled softmax records 5 "
                               "steps for each block of %d of the %d keys in each of the %d heads)",
                               ATTN_MAX_STEPS, steps, g.tile, g.n_k, g.heads);
    }
    double floats = (double)attn_trace_floats(&g);
    if (floats <= LESSON_MAX_TRACE_FLOATS) return 0;
    if (g.attention == ATTN_ADDITIVE)
        return lesson_fail(c, c->root,
                           "lesson: expected a trace of at most %u numbers (256 MiB), found %.0f (n_q=%d, n_k=%d, "
                           "d_x=%d, d_y=%d, d_a=%d)",
                           LESSON_MAX_TRACE_FLOATS, floats, g.n_q, g.n_k, g.d_x, g.d_y, g.d_a);
    return lesson_fail(c, c->root,
                       "lesson: expected a trace of at most %u numbers (256 MiB), found %.0f (n_q=%d, n_k=%d, "
                       "d_model=%d, heads=%d, d_k=%d, d_v=%d)",
                       LESSON_MAX_TRACE_FLOATS, floats, g.n_q, g.n_k, g.d_model, g.heads, g.d_k, g.d_v);
}

/* kv_heads: grouped-query attention's K/V heads, a divisor of heads (1:
 * multi-query attention). */
static int read_kv_heads(Ctx *c)
{
    AttnConfig *g = &c->L->cfg;
    const JsonNode *n = c->val[F_KV_HEADS];
    if (!n) return 0;
    char what[96];
    snprintf(what, sizeof what, "the number of K/V heads, a divisor of heads = %d", g->heads);
    double v = 0;
    if (read_int(c, n, "kv_heads", 1, g->heads, what, &v) != 0) return -1;
    if (g->heads % (int)v != 0)
        return lesson_fail(c, n,
                           "kv_heads: expected a divisor of heads = %d (each K/V head serves heads / kv_heads query "
                           "heads), found %d",
                           g->heads, (int)v);
    g->kv_heads = (int)v;
    return 0;
}

/* decode: "full" (the default) or "incremental", which generates the
 * sequence token by token and so needs self-attention; its causal mask is
 * checked once the mask is read (check_decode). */
static int read_decode(Ctx *c)
{
    const JsonNode *n = c->val[F_DECODE];
    if (!n) return 0;
    static const char *const words[] = {"full", "incremental"};
    int w = 0;
    if (read_word(c, n, "decode", words, 2, "\"full\" or \"incremental\"", &w) != 0) return -1;
    c->L->cfg.decode = w ? ATTN_DECODE_INCREMENTAL : ATTN_DECODE_FULL;
    if (w && c->L->cfg.cross)
        return lesson_fail(c, n,
                           "decode: expected a lesson of self-attention for \"incremental\" (a decoder attends to the "
                           "tokens it generated itself), found source_tokens and Y");
    return 0;
}

/* rope: {"base": b} (b > 1, 10000 when left out): rotary position
 * embeddings, which turn each head's queries and keys by their positions;
 * self-attention with an even d_k. */
static int read_rope(Ctx *c)
{
    AttnConfig *g = &c->L->cfg;
    const JsonNode *n = c->val[F_ROPE];
    if (!n) return 0;
    if (!cJSON_IsObject(n->item)) return fail_type(c, n, "rope", "an object such as {\"base\": 10000}");
    static const char *const keys[] = {"base"};
    if (check_keys(c, n, "rope.", keys, 1) != 0) return -1;
    const JsonNode *b = member(n, "base", NULL);
    float base = 10000.0f;
    if (b) {
        if (!cJSON_IsNumber(b->item))
            return fail_type(c, b, "rope.base", "a number > 1 (RoPE's base, 10000 in RoFormer and LLaMA)");
        if (read_f32(c, b, "rope.base", &base) != 0) return -1;
        if (!(base > 1.0f)) {
            char fs[64];
            found(c, b, fs, sizeof fs);
            return lesson_fail(
                c, b, "rope.base: expected a number > 1 (RoPE's base, 10000 in RoFormer and LLaMA), found %s", fs);
        }
    }
    if (g->cross)
        return lesson_fail(c, n,
                           "rope: expected a lesson of self-attention (RoPE turns a query and a key by their positions "
                           "in one sequence), found source_tokens and Y");
    if (g->d_k % 2 != 0)
        return lesson_fail(c, n, "rope: expected an even d_k (RoPE turns pairs of features), found d_k = %d", g->d_k);
    g->rope_base = base;
    return 0;
}

/* positional: "none" (the default) or "sinusoidal", which adds the
 * positional encoding of "Attention Is All You Need" to X; self-attention. */
static int read_positional(Ctx *c)
{
    const JsonNode *n = c->val[F_POSITIONAL];
    if (!n) return 0;
    static const char *const words[] = {"none", "sinusoidal"};
    int w = 0;
    if (read_word(c, n, "positional", words, 2, "\"none\" or \"sinusoidal\"", &w) != 0) return -1;
    if (w && c->L->cfg.cross)
        return lesson_fail(c, n,
                           "positional: expected a lesson of self-attention for \"sinusoidal\" (it adds to X the "
                           "positions of its tokens), found source_tokens and Y");
    c->L->cfg.positional = w ? ATTN_POSITIONAL_SINUSOIDAL : ATTN_POSITIONAL_NONE;
    return 0;
}

/* tile: B, the keys per block of FlashAttention's tiled softmax. */
static int read_tile(Ctx *c)
{
    const JsonNode *n = c->val[F_TILE];
    if (!n) return 0;
    double v = 0;
    if (read_int(c, n, "tile", 1, LESSON_MAX_TOKENS, "the keys per block of the tiled softmax", &v) != 0) return -1;
    c->L->cfg.tile = (int)v;
    return 0;
}

/* What a lesson's mask is, for messages: "no mask", "a padding mask", ... */
static const char *mask_phrase(const AttnConfig *g)
{
    switch (g->mask_kind) {
    case ATTN_MASK_NONE:
        return "no mask";
    case ATTN_MASK_CAUSAL:
        return "\"causal\"";
    case ATTN_MASK_PADDING:
        return "a padding mask";
    case ATTN_MASK_MATRIX:
        return "a 0/1 matrix";
    }
    return "a mask";
}

static int check_decode(Ctx *c)
{
    const AttnConfig *g = &c->L->cfg;
    if (g->decode != ATTN_DECODE_INCREMENTAL || g->mask_kind == ATTN_MASK_CAUSAL) return 0;
    return lesson_fail(c, c->val[F_DECODE],
                       "decode: \"incremental\" needs \"mask\": \"causal\" (a token sees no token after it, as when "
                       "it is generated), found %s",
                       mask_phrase(g));
}

static int load_dot(Ctx *c)
{
    Lesson *L = c->L;
    AttnConfig *g = &L->cfg;
    static const int additive_only[] = {F_D_X, F_D_Y, F_D_A, F_W_A, F_B_A, F_V_A};
    if (refuse_fields(c, additive_only, 6, "it belongs to additive attention (\"attention\": \"additive\")") != 0)
        return -1;
    char what[64];
    snprintf(what, sizeof what, "the width of each token vector, an integer 1..%d", LESSON_MAX_D_MODEL);
    if (required(c, F_D_MODEL, what) != 0) return -1;
    if (field_int(c, F_D_MODEL, 1, LESSON_MAX_D_MODEL, "the width of each token vector", 0, &g->d_model) != 0)
        return -1;
    if (field_int(c, F_HEADS, 1, LESSON_MAX_HEADS, "the number of heads", 1, &g->heads) != 0) return -1;
    for (int f = F_D_K; f <= F_D_V; f++) {
        int *dst = f == F_D_K ? &g->d_k : &g->d_v;
        if (c->val[f]) {
            if (field_int(c, f, 1, LESSON_MAX_D_MODEL, "the width of each head", 0, dst) != 0) return -1;
            if ((long)*dst * g->heads > LESSON_MAX_D_MODEL)
                return lesson_fail(c, c->val[f], "%s: expected heads·%s <= %d, found %d·%d = %ld", field_names[f],
                                   field_names[f], LESSON_MAX_D_MODEL, g->heads, *dst, (long)*dst * g->heads);
        } else if (g->d_model % g->heads != 0) {
            return lesson_fail(c, c->val[F_HEADS],
                               "heads: expected a divisor of d_model = %d (%s defaults to d_model / heads), found %d; "
                               "change heads or give d_k and d_v",
                               g->d_model, field_names[f], g->heads);
        } else {
            *dst = g->d_model / g->heads;
        }
    }
    if (read_kv_heads(c) != 0 || read_decode(c) != 0 || read_rope(c) != 0 || read_positional(c) != 0 ||
        read_tile(c) != 0 || check_trace_size(c) != 0)
        return -1;

    char why[128];
    int H = g->heads, dm = g->d_model;
    /* the keys' and values' widths: every head's, or every K/V head's (kv_heads) */
    int G = attn_kv_heads(g);
    const char *kv = g->kv_heads ? "kv_heads" : "heads";
    snprintf(why, sizeof why, "tokens × d_model = %d × %d", g->n_q, dm);
    if (matrix_or_random(c, F_X, LESSON_MAT_X, g->n_q, dm, why, 1.0, &L->X) != 0) return -1;
    if (g->cross) {
        snprintf(why, sizeof why, "source_tokens × d_model = %d × %d", g->n_k, dm);
        if (read_matrix(c, c->val[F_Y], "Y", g->n_k, dm, why, &L->Y) != 0) return -1;
    }
    double wb = 1.0 / sqrt((double)dm);
    snprintf(why, sizeof why, "d_model × heads·d_k = %d × %d·%d", dm, H, g->d_k);
    if (matrix_or_random(c, F_W_Q, LESSON_MAT_W_Q, dm, H * g->d_k, why, wb, &L->W_Q) != 0) return -1;
    snprintf(why, sizeof why, "d_model × %s·d_k = %d × %d·%d", kv, dm, G, g->d_k);
    if (matrix_or_random(c, F_W_K, LESSON_MAT_W_K, dm, G * g->d_k, why, wb, &L->W_K) != 0) return -1;
    snprintf(why, sizeof why, "d_model × %s·d_v = %d × %d·%d", kv, dm, G, g->d_v);
    if (matrix_or_random(c, F_W_V, LESSON_MAT_W_V, dm, G * g->d_v, why, wb, &L->W_V) != 0) return -1;
    if (c->val[F_W_O] && cJSON_IsNull(c->val[F_W_O]->item)) {
        if (c->val[F_B_O])
            return lesson_fail(c, c->key[F_B_O],
                               "b_O: expected no b_O when W_O is null (there is no output projection), found one");
    } else {
        snprintf(why, sizeof why, "heads·d_v × d_model = %d·%d × %d", H, g->d_v, dm);
        if (matrix_or_random(c, F_W_O, LESSON_MAT_W_O, H * g->d_v, dm, why, 1.0 / sqrt((double)H * g->d_v), &L->W_O) !=
            0)
            return -1;
    }
    snprintf(why, sizeof why, "heads·d_k = %d·%d", H, g->d_k);
    if (c->val[F_B_Q] && read_vector(c, c->val[F_B_Q], "b_Q", H * g->d_k, why, &L->b_Q) != 0) return -1;
    snprintf(why, sizeof why, "%s·d_k = %d·%d", kv, G, g->d_k);
    if (c->val[F_B_K] && read_vector(c, c->val[F_B_K], "b_K", G * g->d_k, why, &L->b_K) != 0) return -1;
    snprintf(why, sizeof why, "%s·d_v = %d·%d", kv, G, g->d_v);
    if (c->val[F_B_V] && read_vector(c, c->val[F_B_V], "b_V", G * g->d_v, why, &L->b_V) != 0) return -1;
    snprintf(why, sizeof why, "d_model = %d", dm);
    if (c->val[F_B_O] && read_vector(c, c->val[F_B_O], "b_O", dm, why, &L->b_O) != 0) return -1;
    return read_scale(c);
}

static int load_additive(Ctx *c)
{
    Lesson *L = c->L;
    AttnConfig *g = &L->cfg;
    static const int dot_only[] = {F_HEADS, F_D_K, F_D_V, F_W_Q, F_W_K,   F_W_V,       F_W_O,
                                   F_B_Q,   F_B_K, F_B_V, F_B_O, F_SCALE, F_MASK_ORDER};
    if (refuse_fields(c, dot_only, 13, "additive attention uses W_a, b_a and v_a, one head and no scaling") != 0)
        return -1;
    static const int dot_options[] = {F_DECODE, F_KV_HEADS, F_ROPE, F_POSITIONAL, F_TILE};
    if (refuse_fields(c, dot_options, 5, "it is an option of dot-product attention") != 0) return -1;
    if (required(c, F_W_A, "W_a, the (d_x + d_y) × d_a matrix of additive attention") != 0) return -1;
    if (required(c, F_V_A, "v_a, the d_a vector that turns tanh(...) into a score") != 0) return -1;
    int dm = 0;
    if (field_int(c, F_D_MODEL, 1, LESSON_MAX_D_MODEL, "the default width of X and Y", 0, &dm) != 0) return -1;
    /* d_x: the field, else X's width, else d_model */
    int xw = first_row_len(c->val[F_X]);
    if (c->val[F_D_X]) {
        if (field_int(c, F_D_X, 1, LESSON_MAX_D_MODEL, "the width of X", 0, &g->d_x) != 0) return -1;
    } else if (xw > 0) {
        g->d_x = xw;
    } else if (dm > 0) {
        g->d_x = dm;
    } else {
        return lesson_fail(c, c->root, "d_x: missing; expected d_x, d_model or X (n_q × d_x) to give the width of X");
    }
    if (g->d_x > LESSON_MAX_D_MODEL)
        return lesson_fail(c, c->val[F_X], "X: expected rows of at most %d numbers, found %d", LESSON_MAX_D_MODEL,
                           g->d_x);
    if (g->cross) {
        int yw = first_row_len(c->val[F_Y]);
        if (c->val[F_D_Y]) {
            if (field_int(c, F_D_Y, 1, LESSON_MAX_D_MODEL, "the width of Y", 0, &g->d_y) != 0) return -1;
        } else if (yw > 0) {
            g->d_y = yw;
        } else {
            g->d_y = dm > 0 ? dm : g->d_x;
        }
        if (g->d_y > LESSON_MAX_D_MODEL)
            return lesson_fail(c, c->val[F_Y], "Y: expected rows of at most %d numbers, found %d", LESSON_MAX_D_MODEL,
                               g->d_y);
    } else {
        g->d_y = g->d_x;
        if (c->val[F_D_Y]) {
            int dy;
            if (field_int(c, F_D_Y, 1, LESSON_MAX_D_MODEL, "the width of Y", 0, &dy) != 0) return -1;
            if (dy != g->d_x)
                return lesson_fail(c, c->val[F_D_Y],
                                   "d_y: expected d_x = %d (without Y the keys are X itself), found %d", g->d_x, dy);
        }
    }
    /* d_a: the field, else the length of v_a */
    const JsonNode *va = c->val[F_V_A];
    if (c->val[F_D_A]) {
        if (field_int(c, F_D_A, 1, LESSON_MAX_D_MODEL, "the width of the hidden layer", 0, &g->d_a) != 0) return -1;
    } else {
        if (!cJSON_IsArray(va->item) || va->n == 0)
            return fail_type(c, va, "v_a", "an array of d_a numbers (at least one)");
        if (va->n > LESSON_MAX_D_MODEL)
            return lesson_fail(c, va, "v_a: expected at most %d numbers, found %u", LESSON_MAX_D_MODEL,
                               (unsigned)va->n);
        g->d_a = (int)va->n;
    }
    if (check_trace_size(c) != 0) return -1;
    char why[128];
    snprintf(why, sizeof why, "tokens × d_x = %d × %d", g->n_q, g->d_x);
    if (matrix_or_random(c, F_X, LESSON_MAT_X, g->n_q, g->d_x, why, 1.0, &L->X) != 0) return -1;
    if (g->cross) {
        snprintf(why, sizeof why, "source_tokens × d_y = %d × %d", g->n_k, g->d_y);
        if (read_matrix(c, c->val[F_Y], "Y", g->n_k, g->d_y, why, &L->Y) != 0) return -1;
    }
    snprintf(why, sizeof why, "(d_x + d_y) × d_a = (%d + %d) × %d", g->d_x, g->d_y, g->d_a);
    if (read_matrix(c, c->val[F_W_A], "W_a", g->d_x + g->d_y, g->d_a, why, &L->W_a) != 0) return -1;
    snprintf(why, sizeof why, "d_a = %d", g->d_a);
    if (c->val[F_B_A] && read_vector(c, c->val[F_B_A], "b_a", g->d_a, why, &L->b_a) != 0) return -1;
    if (read_vector(c, va, "v_a", g->d_a, why, &L->v_a) != 0) return -1;
    return 0;
}

static int load(Ctx *c)
{
    Lesson *L = c->L;
    AttnConfig *g = &L->cfg;
    const JsonNode *root = c->root;
    if (!cJSON_IsObject(root->item))
        return fail_type(c, root, "lesson", "a JSON object {\"format\": \"attnviz-lesson/1\", ...}");

    /* 1. keys: unknown, duplicated */
    if (check_keys(c, root, "", field_names, F_COUNT) != 0) return -1;
    for (int f = 0; f < F_COUNT; f++) c->val[f] = member(root, field_names[f], &c->key[f]);

    /* 2. format first: a different format's mistakes are not ours to list */
    if (required(c, F_FORMAT, "\"" LESSON_FORMAT "\"") != 0) return -1;
    const JsonNode *fmt = c->val[F_FORMAT];
    if (!cJSON_IsString(fmt->item) || strcmp(json_str(fmt), LESSON_FORMAT) != 0)
        return fail_type(c, fmt, "format", "\"" LESSON_FORMAT "\"");

    /* 3. the scalars */
    if (required(c, F_ID, "an id of lowercase letters, digits and dashes") != 0 || read_id(c, F_ID, &L->id) != 0)
        return -1;
    if (c->val[F_EDITED_FROM] && read_id(c, F_EDITED_FROM, &L->edited_from) != 0) return -1;
    if (required(c, F_TITLE, "a title {\"en\": ..., \"zh\": ...}") != 0) return -1;
    if (read_text(c, c->val[F_TITLE], "title", 0, &L->title) != 0) return -1;
    if (c->val[F_SUMMARY] && read_text(c, c->val[F_SUMMARY], "summary", 1, &L->summary) != 0) return -1;
    if (field_int(c, F_ORDER, -1000000, 1000000, "the teaching order", 1000, &L->order) != 0) return -1;
    if (c->val[F_COMMENT] && !cJSON_IsString(c->val[F_COMMENT]->item))
        return fail_type(c, c->val[F_COMMENT], "comment", "a string (a note for whoever edits the file)");
    if (c->val[F_SEED]) {
        double s = 0;
        if (read_int(c, c->val[F_SEED], "seed", 0, LESSON_MAX_SEED, "the seed for generated matrices", &s) != 0)
            return -1;
        L->seed = (uint64_t)s;
    }
    attn_config_init(g);
    if (c->val[F_ATTENTION]) {
        static const char *const words[] = {"dot", "additive"};
        int w;
        if (read_word(c, c->val[F_ATTENTION], "attention", words, 2, "\"dot\" or \"additive\"", &w) != 0) return -1;
        g->attention = w ? ATTN_ADDITIVE : ATTN_DOT;
    }
    if (required(c, F_TOKENS, "the query tokens, an array of strings like [\"我\", \"喜欢\", \"跑步\"]") != 0)
        return -1;
    if (read_tokens(c, F_TOKENS, &L->tokens, &L->n_tokens) != 0) return -1;
    g->n_q = g->n_k = L->n_tokens;
    /* cross-attention: both source_tokens and Y, or neither */
    if (c->val[F_SOURCE_TOKENS] && !c->val[F_Y])
        return lesson_fail(c, c->key[F_SOURCE_TOKENS],
                           "source_tokens: expected Y beside it (cross-attention needs the source vectors Y, one row "
                           "per source token), found no Y");
    if (c->val[F_Y] && !c->val[F_SOURCE_TOKENS])
        return lesson_fail(
            c, c->key[F_Y],
            "Y: expected source_tokens beside it (cross-attention needs a token per row of Y), found no source_tokens");
    if (c->val[F_SOURCE_TOKENS]) {
        if (read_tokens(c, F_SOURCE_TOKENS, &L->source_tokens, &L->n_source_tokens) != 0) return -1;
        g->cross = 1;
        g->n_k = L->n_source_tokens;
    }

    /* 4. sizes, the trace limit, then the matrices */
    if ((g->attention == ATTN_ADDITIVE ? load_additive(c) : load_dot(c)) != 0) return -1;
    if (read_mask(c) != 0 || read_mask_fill(c) != 0 || read_mask_order(c) != 0 || check_decode(c) != 0) return -1;
    if (read_narration(c) != 0) return -1;

    lesson_bind(L);
    char err[256];
    if (attn_config_check(g, err, sizeof err) != 0) /* the checks above should make this impossible */
        return lesson_fail(c, c->root, "lesson: %s", err);
    return 0;
}

int lesson_parse(Lesson *out, const char *text, size_t len, const char *name, LessonError *err)
{
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    Ctx c = {.name = name ? name : "(lesson)", .text = text, .len = len, .err = err, .L = out};
    out->order = 1000;
    if (len > LESSON_MAX_FILE_BYTES)
        return lesson_fail(&c, NULL, "expected a lesson of at most %u bytes (16 MiB), found %zu bytes",
                           LESSON_MAX_FILE_BYTES, len);
    /* a lesson is an object: say so before the parser meets whatever else it is */
    size_t first = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (first < len && strchr(" \t\r\n", text[first])) first++;
    if (first < len && text[first] != '{' && text[first] != '/') {
        JsonNode where = {.off = (uint32_t)first};
        char what[64];
        unsigned char b = (unsigned char)text[first];
        if (b == '[')
            snprintf(what, sizeof what, "an array");
        else if (b == '"')
            snprintf(what, sizeof what, "a string");
        else if (b >= 0x20 && b < 0x7F)
            snprintf(what, sizeof what, "'%c'", b);
        else
            snprintf(what, sizeof what, "the byte 0x%02x", b);
        lesson_fail(&c, &where, "lesson: expected a JSON object {\"format\": \"" LESSON_FORMAT "\", ...}, found %s",
                    what);
        memset(out, 0, sizeof *out);
        return -1;
    }
    char msg[512];
    size_t at = 0;
    if (json_parse(&c.doc, text, len, LESSON_MAX_DEPTH, msg, sizeof msg, &at) != 0) {
        JsonNode where = {.off = (uint32_t)at};
        lesson_fail(&c, &where, "%s", msg);
        memset(out, 0, sizeof *out);
        return -1;
    }
    c.root = json_root(&c.doc);
    out->path = strdup(c.name);
    int rc = out->path ? load(&c) : lesson_fail(&c, NULL, "out of memory");
    json_free(&c.doc);
    if (rc != 0) {
        lesson_free(out);
        return -1;
    }
    return 0;
}

const char *lesson_file_kind(mode_t mode)
{
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

/* Opens path for reading only when it is a regular file: a FIFO, a device
 * or a folder is refused without being opened for reading (opening a FIFO
 * blocks until a writer comes). O_NONBLOCK keeps the open itself from
 * blocking if the entry is swapped for a FIFO between the stat and the open;
 * the fstat of the opened descriptor then sees what was really opened.
 * Returns the descriptor, or -1 with the failure in c. */
static int open_regular(Ctx *c, const char *path, off_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return lesson_fail(c, NULL, "expected a lesson file, found %s",
                           errno == ENOENT ? "no such file" : strerror(errno));
    if (S_ISDIR(st.st_mode)) return lesson_fail(c, NULL, "expected a lesson file (.json), found a folder");
    if (!S_ISREG(st.st_mode))
        return lesson_fail(c, NULL, "not a regular file: expected a lesson file (.json), found %s",
                           lesson_file_kind(st.st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return lesson_fail(c, NULL, "cannot open the lesson: %s", strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        if (S_ISREG(st.st_mode)) return lesson_fail(c, NULL, "cannot read the lesson: %s", strerror(e));
        return lesson_fail(c, NULL, "not a regular file: expected a lesson file (.json), found %s",
                           lesson_file_kind(st.st_mode));
    }
    /* reads of a regular file never block; the flag only guarded the open */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    *size = st.st_size;
    return fd;
}

int lesson_load(Lesson *out, const char *path, LessonError *err)
{
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    Ctx c = {.name = path, .err = err, .L = out};
    off_t size = 0;
    int fd = open_regular(&c, path, &size);
    if (fd < 0) return -1;
    if (size > (off_t)LESSON_MAX_FILE_BYTES) {
        close(fd);
        return lesson_fail(&c, NULL, "expected a lesson of at most %u bytes (16 MiB), found %lld bytes",
                           LESSON_MAX_FILE_BYTES, (long long)size);
    }
    /* the size fstat gave and one byte more, growing up to one byte past the
     * limit for a file that grows while it is read (or claims size 0, as in /proc) */
    size_t cap = (size_t)size + 1, len = 0;
    char *buf = malloc(cap);
    int read_errno = 0;
    while (buf) {
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) read_errno = errno;
        if (got <= 0) break;
        len += (size_t)got;
        if (len > LESSON_MAX_FILE_BYTES) break;
        if (len == cap) {
            size_t ncap = cap * 2 > (size_t)LESSON_MAX_FILE_BYTES + 1 ? (size_t)LESSON_MAX_FILE_BYTES + 1 : cap * 2;
            char *grown = realloc(buf, ncap);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap = ncap;
        }
    }
    close(fd);
    if (!buf) return lesson_fail(&c, NULL, "out of memory reading the lesson");
    if (read_errno) {
        free(buf);
        return lesson_fail(&c, NULL, "cannot read the lesson: %s", strerror(read_errno));
    }
    if (len > LESSON_MAX_FILE_BYTES) {
        free(buf);
        return lesson_fail(&c, NULL, "expected a lesson of at most %u bytes (16 MiB), found more",
                           LESSON_MAX_FILE_BYTES);
    }
    int rc = lesson_parse(out, buf, len, path, err);
    free(buf);
    return rc;
}

/* The summary and narration of L, freed. */
static void texts_free(Lesson *L)
{
    text_free(&L->summary);
    for (int i = 0; i < L->n_narration; i++) {
        free(L->narration[i].key);
        text_free(&L->narration[i].text);
    }
    free(L->narration);
    L->narration = NULL;
    L->n_narration = 0;
}

void lesson_free(Lesson *L)
{
    if (!L) return;
    free(L->path);
    free(L->id);
    free(L->edited_from);
    text_free(&L->title);
    for (int i = 0; i < L->n_tokens; i++) free(L->tokens ? L->tokens[i] : NULL);
    free(L->tokens);
    for (int i = 0; i < L->n_source_tokens; i++) free(L->source_tokens ? L->source_tokens[i] : NULL);
    free(L->source_tokens);
    float *bufs[] = {L->X,   L->Y,   L->W_Q, L->W_K, L->W_V, L->W_O, L->b_Q,
                     L->b_K, L->b_V, L->b_O, L->W_a, L->b_a, L->v_a};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(L->mask);
    texts_free(L);
    memset(L, 0, sizeof *L);
}

/* ---- copies and matrices by name ---------------------------------------------------- */

void lesson_bind(Lesson *L)
{
    AttnConfig *g = &L->cfg;
    g->X = L->X;
    g->Y = L->Y;
    g->W_Q = L->W_Q, g->W_K = L->W_K, g->W_V = L->W_V, g->W_O = L->W_O;
    g->b_Q = L->b_Q, g->b_K = L->b_K, g->b_V = L->b_V, g->b_O = L->b_O;
    g->W_a = L->W_a, g->b_a = L->b_a, g->v_a = L->v_a;
    g->mask = L->mask;
    g->n_q = L->n_tokens;
    g->n_k = g->cross ? L->n_source_tokens : L->n_tokens;
}

static char *dup_or_null(const char *s, int *fail)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *fail = 1;
    return d;
}

static void *dup_bytes(const void *p, size_t n, int *fail)
{
    if (!p) return NULL;
    void *d = malloc(n ? n : 1);
    if (!d) {
        *fail = 1;
        return NULL;
    }
    memcpy(d, p, n);
    return d;
}

static void text_copy(LessonText *dst, const LessonText *src, int *fail)
{
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        dst->text[l] = dup_or_null(src->text[l], fail);
        dst->source[l] = dup_or_null(src->source[l], fail);
        dst->line[l] = src->line[l];
        dst->col[l] = src->col[l];
    }
    dst->when = dup_or_null(src->when, fail);
    dst->when_line = src->when_line;
    dst->when_col = src->when_col;
}

char **lesson_tokens_copy(char *const *tokens, int n)
{
    char **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < n; i++)
        if (!(out[i] = strdup(tokens[i]))) {
            lesson_tokens_free(out, i);
            return NULL;
        }
    return out;
}

void lesson_tokens_free(char **tokens, int n)
{
    for (int i = 0; tokens && i < n; i++) free(tokens[i]);
    free(tokens);
}

/* dst's narration (empty) becomes a copy of src's. */
static void narration_copy(Lesson *dst, const Lesson *src, int *fail)
{
    if (!src->n_narration) return;
    dst->narration = calloc((size_t)src->n_narration, sizeof *dst->narration);
    if (!dst->narration) *fail = 1;
    for (int i = 0; dst->narration && i < src->n_narration; i++) {
        dst->narration[i].key = dup_or_null(src->narration[i].key, fail);
        text_copy(&dst->narration[i].text, &src->narration[i].text, fail);
        dst->n_narration = i + 1;
    }
}

int lesson_copy_texts(Lesson *dst, const Lesson *src)
{
    Lesson tmp = {0};
    int fail = 0;
    text_copy(&tmp.summary, &src->summary, &fail);
    narration_copy(&tmp, src, &fail);
    if (fail) {
        texts_free(&tmp);
        return -1;
    }
    texts_free(dst);
    dst->summary = tmp.summary;
    dst->narration = tmp.narration;
    dst->n_narration = tmp.n_narration;
    return 0;
}

int lesson_copy(Lesson *dst, const Lesson *src)
{
    memset(dst, 0, sizeof *dst);
    int fail = 0;
    dst->path = dup_or_null(src->path, &fail);
    dst->id = dup_or_null(src->id, &fail);
    dst->edited_from = dup_or_null(src->edited_from, &fail);
    text_copy(&dst->title, &src->title, &fail);
    text_copy(&dst->summary, &src->summary, &fail);
    dst->order = src->order;
    dst->seed = src->seed;
    dst->generated = src->generated;
    dst->cfg = src->cfg;
    dst->n_tokens = src->n_tokens;
    if (src->tokens && !(dst->tokens = lesson_tokens_copy(src->tokens, src->n_tokens))) fail = 1, dst->n_tokens = 0;
    dst->n_source_tokens = src->n_source_tokens;
    if (src->source_tokens && !(dst->source_tokens = lesson_tokens_copy(src->source_tokens, src->n_source_tokens)))
        fail = 1, dst->n_source_tokens = 0;
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        int rows, cols;
        const float *p = lesson_matrix(src, m, &rows, &cols);
        float **d = lesson_matrix_slot(dst, m);
        *d = dup_bytes(p, sizeof(float) * (size_t)rows * (size_t)cols, &fail);
    }
    dst->mask = dup_bytes(src->mask, lesson_mask_bytes(&src->cfg), &fail);
    dst->window = src->window;
    dst->window_causal = src->window_causal;
    narration_copy(dst, src, &fail);
    lesson_bind(dst);
    if (fail) {
        lesson_free(dst);
        return -1;
    }
    return 0;
}

size_t lesson_mask_bytes(const AttnConfig *cfg)
{
    switch (cfg->mask_kind) {
    case ATTN_MASK_PADDING:
        return (size_t)cfg->n_k;
    case ATTN_MASK_MATRIX:
        return (size_t)cfg->n_q * (size_t)cfg->n_k;
    default:
        return 0;
    }
}

static const int matrix_field[LESSON_MAT_COUNT] = {
    [LESSON_MAT_X] = F_X,     [LESSON_MAT_Y] = F_Y,     [LESSON_MAT_W_Q] = F_W_Q, [LESSON_MAT_W_K] = F_W_K,
    [LESSON_MAT_W_V] = F_W_V, [LESSON_MAT_W_O] = F_W_O, [LESSON_MAT_b_Q] = F_B_Q, [LESSON_MAT_b_K] = F_B_K,
    [LESSON_MAT_b_V] = F_B_V, [LESSON_MAT_b_O] = F_B_O, [LESSON_MAT_W_a] = F_W_A, [LESSON_MAT_b_a] = F_B_A,
    [LESSON_MAT_v_a] = F_V_A,
};

const char *lesson_matrix_name(int mat)
{
    return mat >= 0 && mat < LESSON_MAT_COUNT ? field_names[matrix_field[mat]] : "";
}

int lesson_matrix_from_name(const char *name)
{
    for (int m = 0; m < LESSON_MAT_COUNT; m++)
        if (strcmp(name, lesson_matrix_name(m)) == 0) return m;
    return -1;
}

int lesson_matrix_of_step(const AttnStep *step)
{
    static const AttnRole roles[LESSON_MAT_COUNT] = {
        [LESSON_MAT_X] = ATTN_ROLE_X,     [LESSON_MAT_Y] = ATTN_ROLE_Y,     [LESSON_MAT_W_Q] = ATTN_ROLE_W_Q,
        [LESSON_MAT_W_K] = ATTN_ROLE_W_K, [LESSON_MAT_W_V] = ATTN_ROLE_W_V, [LESSON_MAT_W_O] = ATTN_ROLE_W_O,
        [LESSON_MAT_b_Q] = ATTN_ROLE_B_Q, [LESSON_MAT_b_K] = ATTN_ROLE_B_K, [LESSON_MAT_b_V] = ATTN_ROLE_B_V,
        [LESSON_MAT_b_O] = ATTN_ROLE_B_O, [LESSON_MAT_W_a] = ATTN_ROLE_W_A, [LESSON_MAT_b_a] = ATTN_ROLE_B_A,
        [LESSON_MAT_v_a] = ATTN_ROLE_V_A,
    };
    if (!(attn_step_kind_flags((AttnStepKind)step->kind) & ATTN_KIND_GIVEN)) return -1;
    for (int m = 0; m < LESSON_MAT_COUNT; m++)
        if (roles[m] == step->role) return m;
    return -1;
}

float **lesson_matrix_slot(Lesson *L, int mat)
{
    float **slots[LESSON_MAT_COUNT] = {&L->X,   &L->Y,   &L->W_Q, &L->W_K, &L->W_V, &L->W_O, &L->b_Q,
                                       &L->b_K, &L->b_V, &L->b_O, &L->W_a, &L->b_a, &L->v_a};
    return mat >= 0 && mat < LESSON_MAT_COUNT ? slots[mat] : NULL;
}

int lesson_matrix_shape(const AttnConfig *g, int mat, int *rows, int *cols)
{
    int add = g->attention == ATTN_ADDITIVE, dm = g->d_model, hk = g->heads * g->d_k, hv = g->heads * g->d_v;
    int gk = attn_kv_heads(g) * g->d_k, gv = attn_kv_heads(g) * g->d_v; /* K and V: every K/V head's */
    int r = 1, c = 0;
    switch (mat) {
    case LESSON_MAT_X:
        r = g->n_q, c = add ? g->d_x : dm;
        break;
    case LESSON_MAT_Y:
        r = g->n_k, c = add ? g->d_y : dm;
        break;
    case LESSON_MAT_W_Q:
        r = dm, c = hk;
        break;
    case LESSON_MAT_W_K:
        r = dm, c = gk;
        break;
    case LESSON_MAT_W_V:
        r = dm, c = gv;
        break;
    case LESSON_MAT_W_O:
        r = hv, c = dm;
        break;
    case LESSON_MAT_b_Q:
        c = hk;
        break;
    case LESSON_MAT_b_K:
        c = gk;
        break;
    case LESSON_MAT_b_V:
        c = gv;
        break;
    case LESSON_MAT_b_O:
        c = dm;
        break;
    case LESSON_MAT_W_a:
        r = g->d_x + g->d_y, c = g->d_a;
        break;
    case LESSON_MAT_b_a:
        c = g->d_a;
        break;
    case LESSON_MAT_v_a: /* a column, as the trace shows it */
        r = g->d_a, c = 1;
        break;
    default:
        r = c = 0;
        break;
    }
    *rows = r;
    *cols = c;
    return r > 0 && c > 0 ? 0 : -1;
}

float *lesson_matrix(const Lesson *L, int mat, int *rows, int *cols)
{
    float *p = mat >= 0 && mat < LESSON_MAT_COUNT ? *lesson_matrix_slot((Lesson *)L, mat) : NULL;
    if (!p || lesson_matrix_shape(&L->cfg, mat, rows, cols) != 0) {
        *rows = *cols = 0;
        return NULL;
    }
    return p;
}

/* ---- lookups for the view ---------------------------------------------------------- */

const char *lesson_text(const LessonText *text, LessonLang lang)
{
    if (lang >= 0 && lang < LESSON_LANG_COUNT && text->text[lang]) return text->text[lang];
    return text->text[LESSON_EN];
}

/* ---- bounded text ---------------------------------------------------------- */

static const char ellipsis[] = "…";

/* dst holds the first dstlen - 1 bytes of a longer text: cuts it at a
 * character boundary (the byte at the cut is the start of a character,
 * which goes) so that "…" and the NUL fit after it. */
static void cut_with_ellipsis(char *dst, size_t dstlen)
{
    if (dstlen < sizeof ellipsis) { /* not even the mark fits */
        dst[0] = '\0';
        return;
    }
    size_t n = dstlen - sizeof ellipsis; /* bytes kept, the mark and the NUL after them */
    while (n > 0 && ((unsigned char)dst[n] & 0xC0) == 0x80) n--;
    memcpy(dst + n, ellipsis, sizeof ellipsis);
}

int lesson_text_copy(char *dst, size_t dstlen, const char *src)
{
    if (!dst || dstlen == 0) return src && *src;
    if (!src) src = "";
    size_t n = strlen(src);
    if (n < dstlen) {
        memcpy(dst, src, n + 1);
        return 0;
    }
    memcpy(dst, src, dstlen - 1);
    cut_with_ellipsis(dst, dstlen);
    return 1;
}

int lesson_vformat(char *dst, size_t len, const char *fmt, va_list ap)
{
    if (!dst || len == 0) return 1;
    int n = vsnprintf(dst, len, fmt, ap);
    if (n < 0) {
        dst[0] = '\0';
        return 1;
    }
    if ((size_t)n < len) return 0;
    cut_with_ellipsis(dst, len); /* dst holds the message's first len - 1 bytes */
    return 1;
}

int lesson_format(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int cut = lesson_vformat(dst, len, fmt, ap);
    va_end(ap);
    return cut;
}

char *lesson_utf8_valid(const char *s)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    size_t n = 0;
    for (const char *p = s; *p;) {
        uint32_t cp;
        int k = lesson_utf8_decode(p, &cp);
        n += k ? (size_t)k : sizeof replacement - 1;
        p += k ? k : 1;
    }
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = s; *p;) {
        uint32_t cp;
        int k = lesson_utf8_decode(p, &cp);
        memcpy(o, k ? p : replacement, k ? (size_t)k : sizeof replacement - 1);
        o += k ? (size_t)k : sizeof replacement - 1;
        p += k ? k : 1;
    }
    *o = '\0';
    return out;
}

size_t lesson_read_decimal(const char *s, double *out)
{
    size_t n = 0, digits = 0;
    if (s[n] == '+' || s[n] == '-') n++;
    while (isdigit((unsigned char)s[n])) n++, digits++;
    if (s[n] == '.') {
        n++;
        while (isdigit((unsigned char)s[n])) n++, digits++;
    }
    if (!digits) return 0;
    if (s[n] == 'e' || s[n] == 'E') { /* an exponent only when digits follow */
        size_t e = n + 1;
        if (s[e] == '+' || s[e] == '-') e++;
        if (isdigit((unsigned char)s[e])) {
            while (isdigit((unsigned char)s[e])) e++;
            n = e;
        }
    }
    char *end = NULL;
    *out = strtod(s, &end); /* the same span: decimal is a form strtod reads */
    return end == s + n ? n : 0;
}

/* The UTF-8 character among the first n bytes of str: its length, or 0
 * when they do not start a whole, valid one. */
static int utf8_decode_n(const char *str, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    int need;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        need = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)need > n) return 0;
    for (int i = 1; i < need; i++) { /* a NUL is no continuation byte: a cut sequence stops here */
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return need;
}

int lesson_utf8_decode(const char *s, uint32_t *cp)
{
    return utf8_decode_n(s, SIZE_MAX, cp);
}

int lesson_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

int lesson_is_bidi_control(uint32_t cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

const char *lesson_invisible_name(uint32_t cp)
{
    static const struct {
        uint32_t cp;
        const char *name;
    } names[] = {
        {0x061C, "Arabic letter mark"},
        {0x200B, "zero width space"},
        {0x200C, "zero width non-joiner"},
        {0x200D, "zero width joiner"},
        {0x200E, "left-to-right mark"},
        {0x200F, "right-to-left mark"},
        {0x2028, "line separator"},
        {0x2029, "paragraph separator"},
        {0x202A, "left-to-right embedding"},
        {0x202B, "right-to-left embedding"},
        {0x202C, "pop directional formatting"},
        {0x202D, "left-to-right override"},
        {0x202E, "right-to-left override"},
        {0x2066, "left-to-right isolate"},
        {0x2067, "right-to-left isolate"},
        {0x2068, "first strong isolate"},
        {0x2069, "pop directional isolate"},
        {0xFEFF, "zero width no-break space, a byte order mark"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cp == cp) return names[i].name;
    return NULL;
}

char *lesson_quote(char *out, size_t outlen, const char *s, size_t max)
{
    return lesson_quote_part(out, outlen, s, s ? strlen(s) : 0, max);
}

int lesson_escape_char(const char *s, size_t n, char esc[LESSON_ESCAPE_MAX])
{
    uint32_t cp;
    int k = utf8_decode_n(s, n, &cp); /* the part may not end in a NUL */
    esc[0] = '\0';
    if (k == 0) { /* not UTF-8, or a character the part ends inside */
        snprintf(esc, LESSON_ESCAPE_MAX, "\\x%02x", (unsigned char)*s);
        return 1;
    }
    if (cp == '\n' || cp == '\t' || cp == '\r')
        snprintf(esc, LESSON_ESCAPE_MAX, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
    else if (cp < 0x80 && lesson_is_control(cp))
        snprintf(esc, LESSON_ESCAPE_MAX, "\\x%02x", (unsigned)cp);
    else if (lesson_is_control(cp) || lesson_invisible_name(cp))
        snprintf(esc, LESSON_ESCAPE_MAX, "\\u%04x", (unsigned)cp);
    return k;
}

/* The first n bytes of s, each character escaped, into out (room bytes
 * and a NUL) while they fit in room and max bytes of s; 1 when something
 * was left out. */
static int quote_into(char *out, size_t room, const char *s, size_t n, size_t max)
{
    size_t at = 0, took = 0;
    int cut = 0;
    while (took < n && *s) {
        char esc[LESSON_ESCAPE_MAX];
        size_t k = (size_t)lesson_escape_char(s, n - took, esc);
        size_t w = esc[0] ? strlen(esc) : k;
        if (took + k > max || at + w > room) {
            cut = 1;
            break;
        }
        memcpy(out + at, esc[0] ? esc : s, w);
        at += w, took += k, s += k;
    }
    out[at] = '\0';
    return cut;
}

char *lesson_quote_part(char *out, size_t outlen, const char *s, size_t n, size_t max)
{
    if (!out || outlen == 0) return out;
    if (!s) s = "";
    if (!quote_into(out, outlen - 1, s, n, max)) return out;
    /* cut: again, leaving room for the mark after the last whole character or escape */
    size_t mark = sizeof ellipsis - 1;
    if (outlen - 1 < mark) {
        out[0] = '\0';
        return out;
    }
    quote_into(out, outlen - 1 - mark, s, n, max);
    strcat(out, ellipsis);
    return out;
}

const char *lesson_narration_key(const Lesson *lesson, const char *key, LessonLang lang)
{
    const LessonText *t = lesson_narration_text(lesson, key);
    return t ? lesson_text(t, lang) : NULL;
}

const LessonText *lesson_narration_text(const Lesson *lesson, const char *key)
{
    for (int i = 0; i < lesson->n_narration; i++)
        if (strcmp(lesson->narration[i].key, key) == 0) return &lesson->narration[i].text;
    return NULL;
}

const LessonText *lesson_narration_for(const Lesson *lesson, const AttnStep *step)
{
    const LessonText *t = lesson_narration_text(lesson, step->name);
    return t ? t : lesson_narration_text(lesson, attn_step_kind_name(step->kind));
}

const char *lesson_narration(const Lesson *lesson, const AttnStep *step, LessonLang lang)
{
    const LessonText *t = lesson_narration_for(lesson, step);
    return t ? lesson_text(t, lang) : NULL;
}

/* The tokens an axis counts, or NULL when it counts no tokens. */
static const char *const *axis_labels(const Lesson *L, int axis)
{
    if (axis == ATTN_AXIS_QUERIES) return (const char *const *)L->tokens;
    if (axis == ATTN_AXIS_KEYS) return (const char *const *)(L->cfg.cross ? L->source_tokens : L->tokens);
    return NULL;
}

const char *const *lesson_row_labels(const Lesson *L, const AttnStep *s)
{
    return axis_labels(L, s->row_axis);
}

const char *const *lesson_col_labels(const Lesson *L, const AttnStep *s)
{
    return axis_labels(L, s->col_axis);
}
