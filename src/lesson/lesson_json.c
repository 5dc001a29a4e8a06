/* lesson_json.c: the locator behind the lesson loader: a strict scanner that
 * records where every value is and gives the positioned syntax messages, then
 * cJSON's parse of the same text, tied to the positions. See lesson_json.h. */
#include "lesson_json.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h" /* lesson_utf8_decode, lesson_is_control */

#define JSON_MAX_PATH 16
/* Longer numbers are refused by the scanner. (Debian's cJSON 1.7.15 reads any
 * length since its CVE-2023-26819 fix; an unpatched 1.7.15 stops at 63
 * characters, which the "cJSON could not parse" fallback then reports.) */
#define JSON_MAX_NUMBER_CHARS 127

/* One level of the path of the value being scanned, for messages. */
typedef enum PathKind { PATH_INDEX, PATH_KEY, PATH_KEY_READ, PATH_IN_KEY } PathKind;
typedef struct PathPart {
    uint8_t kind;          /* PathKind; PATH_IN_KEY prints "(key)" */
    uint32_t key, key_end; /* PATH_KEY: the key's JSON spelling, text[key..key_end), quotes included;
                            * PATH_KEY_READ: a key being read, from its quote at text[key] */
    uint32_t index;        /* PATH_INDEX */
} PathPart;

typedef struct Parser {
    JsonDoc *doc;
    const char *s;
    size_t len, pos;
    int depth, max_depth;
    PathPart path[JSON_MAX_PATH];
    char *msg;
    size_t msglen;
    size_t err_at;
    int failed;
} Parser;

const char *json_type_phrase(JsonType t)
{
    switch (t) {
    case JSON_NULL:
        return "null";
    case JSON_FALSE:
        return "false";
    case JSON_TRUE:
        return "true";
    case JSON_NUMBER:
        return "a number";
    case JSON_STRING:
        return "a string";
    case JSON_ARRAY:
        return "an array";
    case JSON_OBJECT:
        return "an object";
    }
    return "a value";
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    size_t need;
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
    if (n < need) return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return need;
}

void json_line_col(const char *text, size_t len, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    if (off > len) off = len;
    for (size_t i = 0; i < off;) {
        unsigned char b = (unsigned char)text[i];
        if (b == '\n') {
            l++, c = 1, i++;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_seq((const unsigned char *)text + i, len - i, &cp);
        i += k ? k : 1;                               /* a bad byte counts as one column */
        if (!(i == 3 && k == 3 && cp == 0xFEFF)) c++; /* a leading BOM takes no column */
    }
    *line = l;
    *col = c;
}

/* "X[1][2]", "narration.softmax.en"; "" at the top. Only an error formats a
 * path, so a key is decoded here, by cJSON, from its spelling (which the
 * scanner has already accepted). */
static void path_format(const Parser *p, char *out, size_t outlen)
{
    size_t at = 0;
    out[0] = 0;
    int depth = p->depth < JSON_MAX_PATH ? p->depth : JSON_MAX_PATH;
    for (int i = 0; i < depth && at < outlen; i++) {
        int w;
        const PathPart *part = &p->path[i];
        if (part->kind != PATH_INDEX) { /* a key as the user wrote it: one line, at most 48 bytes */
            char k[64];
            cJSON *decoded = NULL;
            const char *src = "(key)";
            if (part->kind == PATH_KEY) {
                decoded = cJSON_ParseWithLength(p->s + part->key, part->key_end - part->key);
                src = cJSON_IsString(decoded) ? decoded->valuestring : "(key)"; /* only out of memory fails */
            }
            if (part->kind == PATH_KEY_READ) { /* not yet read whole: as written, to its closing quote */
                size_t from = part->key + 1, to = from;
                while (to < p->len && p->s[to] != '"') to += p->s[to] == '\\' && to + 1 < p->len ? 2 : 1;
                lesson_quote_part(k, sizeof k, p->s + from, to - from, 48);
            } else {
                lesson_quote(k, sizeof k, src, 48);
            }
            w = snprintf(out + at, outlen - at, "%s%s", at ? "." : "", k);
            cJSON_Delete(decoded);
        } else
            w = snprintf(out + at, outlen - at, "[%u]", (unsigned)part->index);
        if (w < 0) break;
        at += (size_t)w;
    }
}

/* Records the first error: "PATH: text" (or "not JSON: text" when the problem
 * is plain syntax, with_path == 0). */
static int fail_at(Parser *p, size_t at, int with_path, const char *fmt, ...)
{
    if (p->failed) return -1;
    p->failed = 1;
    p->err_at = at;
    char path[256], body[384];
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(body, sizeof body, fmt, ap);
    va_end(ap);
    path_format(p, path, sizeof path);
    if (with_path && path[0])
        lesson_format(p->msg, p->msglen, "%s: %s", path, body);
    else
        lesson_format(p->msg, p->msglen, "not JSON: %s", body);
    return -1;
}

/* What is at pos, for "found ...": 'x', the end of the file, a full-width '，'. */
static void describe_at(const Parser *p, size_t pos, char *out, size_t outlen)
{
    if (pos >= p->len) {
        snprintf(out, outlen, "the end of the file");
        return;
    }
    unsigned char c = (unsigned char)p->s[pos];
    if (c >= 0x20 && c < 0x7F) {
        snprintf(out, outlen, "'%c'", c);
        return;
    }
    if (c < 0x80) {
        snprintf(out, outlen, "the control character 0x%02x", c);
        return;
    }
    uint32_t cp;
    size_t k = utf8_seq((const unsigned char *)p->s + pos, p->len - pos, &cp);
    if (!k) {
        snprintf(out, outlen, "the byte 0x%02x, which is not UTF-8", c);
        return;
    }
    const char *hint = "";
    if (cp == 0xFF0C)
        hint = " (a full-width comma; use ',')";
    else if (cp == 0xFF1A)
        hint = " (a full-width colon; use ':')";
    else if (cp == 0x201C || cp == 0x201D)
        hint = " (a curly quote; use '\"')";
    else if (cp == 0xFF3B || cp == 0xFF3D)
        hint = " (a full-width bracket; use '[' or ']')";
    snprintf(out, outlen, "'%.*s'%s", (int)k, p->s + pos, hint);
}

static void skip_ws(Parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->pos++;
        else
            break;
    }
}

/* Syntax error at the current position: "expected WHAT, found X". Comments
 * and other common non-JSON get their own words. */
static int expected(Parser *p, const char *what)
{
    char found[96];
    if (p->pos + 1 < p->len && p->s[p->pos] == '/' && (p->s[p->pos + 1] == '/' || p->s[p->pos + 1] == '*'))
        return fail_at(p, p->pos, 0,
                       "expected %s, found a comment (JSON has no comments; a \"comment\" field is allowed)", what);
    describe_at(p, p->pos, found, sizeof found);
    return fail_at(p, p->pos, 0, "expected %s, found %s", what, found);
}

static int64_t new_node(Parser *p, JsonType t)
{
    JsonDoc *d = p->doc;
    if (d->n_nodes == d->cap_nodes) {
        size_t cap = d->cap_nodes ? d->cap_nodes * 2 : 256;
        JsonNode *grown = realloc(d->nodes, cap * sizeof *grown);
        if (!grown) return fail_at(p, p->pos, 0, "out of memory"), -1;
        d->nodes = grown;
        d->cap_nodes = cap;
    }
    JsonNode *n = &d->nodes[d->n_nodes];
    memset(n, 0, sizeof *n);
    n->type = (uint8_t)t;
    n->off = (uint32_t)p->pos;
    n->skip = 1;
    return (int64_t)d->n_nodes++;
}

static int parse_value(Parser *p);

static int hex4(const char *s, uint32_t *v)
{
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        r <<= 4;
        if (c >= '0' && c <= '9')
            r |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            r |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            r |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *v = r;
    return 0;
}

/* A string at p->pos (the opening quote), checked and skipped; cJSON decodes
 * it later. An escaped \u0000 is refused: it would cut a C string short. */
static int parse_string(Parser *p, int is_key)
{
    int64_t idx = new_node(p, JSON_STRING);
    if (idx < 0) return -1;
    p->doc->nodes[idx].key = (uint8_t)is_key;
    p->pos++; /* the quote */
    for (;;) {
        if (p->pos >= p->len)
            return fail_at(p, p->pos, 0, "expected '\"' to close the string, found the end of the file");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            return fail_at(p, p->pos, 1, "expected text, found a %s inside a string (write \\n or \\t)",
                           c == '\n'   ? "line break"
                           : c == '\t' ? "tab"
                                       : "control character");
        }
        if (c == '\\') {
            if (p->pos + 1 >= p->len) return expected(p, "an escape after '\\'");
            char e = p->s[p->pos + 1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                p->pos += 2;
                continue;
            }
            if (e != 'u') {
                p->pos++;
                return expected(p, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
            }
            uint32_t cp;
            if (p->pos + 6 > p->len || hex4(p->s + p->pos + 2, &cp) != 0)
                return fail_at(p, p->pos, 0, "expected four hex digits after \\u");
            size_t esc_at = p->pos;
            p->pos += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
                uint32_t lo;
                if (p->pos + 6 <= p->len && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u' &&
                    hex4(p->s + p->pos + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p->pos += 6;
                } else {
                    return fail_at(p, esc_at, 1, "expected UTF-8 text, found a lone surrogate \\u%04X", (unsigned)cp);
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail_at(p, esc_at, 1, "expected UTF-8 text, found a lone surrogate \\u%04X", (unsigned)cp);
            } else if (cp == 0) {
                return fail_at(p, esc_at, 1, "expected text, found \\u0000 (a NUL character is not allowed)");
            }
            continue;
        }
        if (c < 0x80) {
            p->pos++;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_seq((const unsigned char *)p->s + p->pos, p->len - p->pos, &cp);
        if (!k)
            return fail_at(p, p->pos, 1,
                           "expected UTF-8 text, found the byte 0x%02x (invalid UTF-8; save the file as UTF-8)", c);
        p->pos += k;
    }
    return 0;
}

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A bare word where a value belongs: true/false/null, or the non-JSON NaN and
 * Infinity spellings (with an optional sign), which get a message of their own. */
static int parse_word(Parser *p)
{
    size_t start = p->pos, e = p->pos;
    if (e < p->len && (p->s[e] == '-' || p->s[e] == '+')) e++;
    size_t w = e;
    while (e < p->len && (is_alpha(p->s[e]) || is_digit(p->s[e]) || p->s[e] == '_')) e++;
    size_t n = e - start;
    const char *s = p->s + start;
    static const struct {
        const char *word;
        JsonType t;
    } lits[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
    for (int i = 0; i < 3; i++)
        if (n == strlen(lits[i].word) && memcmp(s, lits[i].word, n) == 0) {
            if (new_node(p, lits[i].t) < 0) return -1;
            p->pos = e;
            return 0;
        }
    char word[16] = {0};
    size_t wn = e - w < sizeof word - 1 ? e - w : sizeof word - 1;
    for (size_t i = 0; i < wn; i++) word[i] = (char)(p->s[w + i] | 0x20); /* lower case */
    if (e - w == wn && (strcmp(word, "nan") == 0 || strcmp(word, "inf") == 0 || strcmp(word, "infinity") == 0))
        return fail_at(
            p, start, 1,
            "expected a finite number, found %.*s (JSON has no NaN or Infinity; lessons need finite numbers)", (int)n,
            s);
    if (s[0] == '+' && start + 1 < p->len && is_digit(s[1]))
        return fail_at(p, start, 0, "expected a number, found one with a '+' sign (write 5, not +5)");
    if (n > 0 && (n != 1 || (s[0] != '-' && s[0] != '+'))) {
        if (n <= 5 && (memcmp(s, "True", n) == 0 || memcmp(s, "False", n) == 0 || memcmp(s, "None", n) == 0))
            return fail_at(p, start, 0, "expected a value, found %.*s (JSON spells it true, false or null)", (int)n, s);
        return fail_at(p, start, 0, "expected a value, found %.*s (text must be in double quotes)",
                       (int)(n < 40 ? n : 40), s);
    }
    return expected(p, "a value");
}

/* A number, strictly as JSON writes it; checked and skipped. cJSON reads its
 * value later (with strtod and the locale's decimal point, so a program that
 * called setlocale still reads "0.5"). */
static int parse_number(Parser *p)
{
    size_t start = p->pos, e = p->pos;
    const char *s = p->s;
    if (e < p->len && s[e] == '-') e++;
    if (e < p->len && (is_alpha(s[e]))) return parse_word(p); /* -Infinity, -nan */
    if (e >= p->len || !is_digit(s[e])) {
        p->pos = e;
        return expected(p, "a digit");
    }
    if (s[e] == '0' && e + 1 < p->len && is_digit(s[e + 1]))
        return fail_at(p, start, 0, "expected a number, found one with a leading zero (write 7, not 07)");
    while (e < p->len && is_digit(s[e])) e++;
    if (e < p->len && s[e] == '.') {
        e++;
        if (e >= p->len || !is_digit(s[e])) {
            p->pos = e;
            return expected(p, "a digit after the decimal point");
        }
        while (e < p->len && is_digit(s[e])) e++;
    }
    if (e < p->len && (s[e] == 'e' || s[e] == 'E')) {
        e++;
        if (e < p->len && (s[e] == '+' || s[e] == '-')) e++;
        if (e >= p->len || !is_digit(s[e])) {
            p->pos = e;
            return expected(p, "a digit in the exponent");
        }
        while (e < p->len && is_digit(s[e])) e++;
    }
    size_t n = e - start;
    if (n > JSON_MAX_NUMBER_CHARS)
        return fail_at(p, start, 1, "expected a number of at most %d characters, found %zu", JSON_MAX_NUMBER_CHARS, n);
    if (new_node(p, JSON_NUMBER) < 0) return -1;
    p->pos = e;
    return 0;
}

static int enter(Parser *p, size_t at)
{
    if (p->depth >= p->max_depth)
        return fail_at(p, at, 1, "expected at most %d levels of nesting ([ ] and { }), found more", p->max_depth);
    return 0;
}

static void set_part(Parser *p, PathKind kind, size_t key, size_t key_end, uint32_t index)
{
    if (p->depth > 0 && p->depth <= JSON_MAX_PATH)
        p->path[p->depth - 1] =
            (PathPart){.kind = (uint8_t)kind, .key = (uint32_t)key, .key_end = (uint32_t)key_end, .index = index};
}

static int parse_array(Parser *p)
{
    if (enter(p, p->pos) != 0) return -1;
    int64_t idx = new_node(p, JSON_ARRAY);
    if (idx < 0) return -1;
    p->pos++;
    p->depth++;
    uint32_t count = 0;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
    } else {
        for (;;) {
            set_part(p, PATH_INDEX, 0, 0, count);
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ']' && count > 0)
                return fail_at(p, p->pos, 0, "expected a value after ',', found ']' (JSON allows no trailing comma)");
            if (parse_value(p) != 0) return -1;
            count++;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->len && p->s[p->pos] == ']') {
                p->pos++;
                break;
            }
            return expected(p, "',' or ']' in an array");
        }
    }
    p->depth--;
    JsonNode *n = &p->doc->nodes[idx];
    n->n = count;
    n->skip = (uint32_t)(p->doc->n_nodes - (size_t)idx);
    return 0;
}

static int parse_object(Parser *p)
{
    if (enter(p, p->pos) != 0) return -1;
    int64_t idx = new_node(p, JSON_OBJECT);
    if (idx < 0) return -1;
    p->pos++;
    p->depth++;
    uint32_t count = 0;
    set_part(p, PATH_IN_KEY, 0, 0, 0);
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
    } else {
        for (;;) {
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == '}' && count > 0)
                return fail_at(p, p->pos, 0, "expected a key after ',', found '}' (JSON allows no trailing comma)");
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                if (p->pos < p->len && p->s[p->pos] == '\'')
                    return fail_at(p, p->pos, 0, "expected a key in double quotes, found ' (JSON strings use \")");
                return expected(p, "a key in double quotes");
            }
            size_t key = p->pos;
            set_part(p, PATH_KEY_READ, key, 0, 0); /* an error inside the key names it, not the one before */
            if (parse_string(p, 1) != 0) return -1;
            size_t key_end = p->pos;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') return expected(p, "':' after the key");
            p->pos++;
            set_part(p, PATH_KEY, key, key_end, 0);
            skip_ws(p);
            if (parse_value(p) != 0) return -1;
            count++;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->len && p->s[p->pos] == '}') {
                p->pos++;
                break;
            }
            return expected(p, "',' or '}' after a member");
        }
    }
    p->depth--;
    JsonNode *n = &p->doc->nodes[idx];
    n->n = count;
    n->skip = (uint32_t)(p->doc->n_nodes - (size_t)idx);
    return 0;
}

static int parse_value(Parser *p)
{
    if (p->pos >= p->len) return expected(p, "a value");
    char c = p->s[p->pos];
    switch (c) {
    case '{':
        return parse_object(p);
    case '[':
        return parse_array(p);
    case '"':
        return parse_string(p, 0);
    case '\'':
        return fail_at(p, p->pos, 0, "expected a value, found ' (JSON strings use double quotes \")");
    case '.':
        return fail_at(p, p->pos, 0, "expected a value, found '.' (write 0.5, not .5)");
    case '+':
        return parse_word(p);
    default:
        break;
    }
    if (c == '-' || is_digit(c)) return parse_number(p);
    if (is_alpha(c)) return parse_word(p);
    return expected(p, "a value");
}

/* The JsonType of a cJSON item, or -1 for one cJSON has but JSON has not. */
static int cjson_type(const cJSON *item)
{
    if (cJSON_IsNull(item)) return JSON_NULL;
    if (cJSON_IsFalse(item)) return JSON_FALSE;
    if (cJSON_IsTrue(item)) return JSON_TRUE;
    if (cJSON_IsNumber(item)) return JSON_NUMBER;
    if (cJSON_IsString(item)) return JSON_STRING;
    if (cJSON_IsArray(item)) return JSON_ARRAY;
    if (cJSON_IsObject(item)) return JSON_OBJECT;
    return -1;
}

/* Gives the position nodes from *i on the items of item's subtree, walking
 * both in pre-order; an object's key node gets its member. Returns 0, or -1
 * with *i at the node where the shapes disagree. Recursion is as deep as the
 * nesting, which the scanner has limited. */
static int link_items(JsonDoc *doc, size_t *i, const cJSON *item)
{
    if (*i >= doc->n_nodes) return -1;
    JsonNode *n = &doc->nodes[*i];
    if (n->key || cjson_type(item) != n->type) return -1;
    n->item = item;
    ++*i;
    const cJSON *child = item->child; /* NULL for a scalar, whose n is 0 */
    for (uint32_t k = 0; k < n->n; k++, child = child->next) {
        if (!child) return -1;
        if (n->type == JSON_OBJECT) {
            if (*i >= doc->n_nodes || !doc->nodes[*i].key || !child->string) return -1;
            doc->nodes[(*i)++].item = child;
        }
        if (link_items(doc, i, child) != 0) return -1;
    }
    return child ? -1 : 0; /* cJSON has no more children than the scanner counted */
}

int json_parse(JsonDoc *doc, const char *text, size_t len, int max_depth, char *msg, size_t msglen, size_t *at)
{
    memset(doc, 0, sizeof *doc);
    Parser p = {.doc = doc, .s = text, .len = len, .max_depth = max_depth, .msg = msg, .msglen = msglen};
    if (msglen) msg[0] = 0;
    if (len > UINT32_MAX / 2) {
        snprintf(msg, msglen, "not JSON: the text is too long");
        *at = 0;
        return -1;
    }
    /* 1. the scanner: strict syntax, UTF-8, nesting, and every position */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) p.pos = 3; /* a UTF-8 byte order mark */
    size_t start = p.pos;
    skip_ws(&p);
    if (p.pos >= len) {
        fail_at(&p, start, 0, "expected a JSON object, found %s",
                start == len ? "an empty file" : "a file of only white space");
    } else if (parse_value(&p) == 0) {
        skip_ws(&p);
        if (p.pos < len) expected(&p, "the end of the file after the top-level value");
    }
    if (p.failed) {
        *at = p.err_at;
        json_free(doc);
        return -1;
    }
    /* The array grew by doubling: give back what it does not use before
     * cJSON allocates its tree, so the two are not at their peak together. */
    if (doc->n_nodes < doc->cap_nodes) {
        JsonNode *fit = realloc(doc->nodes, doc->n_nodes * sizeof *fit);
        if (fit) {
            doc->nodes = fit;
            doc->cap_nodes = doc->n_nodes;
        }
    }
    /* 2. cJSON parses the same text: the values of record */
    const char *end = NULL;
    doc->tree = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!doc->tree) {
        size_t stop = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        json_free(doc);
        *at = stop;
        snprintf(msg, msglen, "not JSON: cJSON could not parse the text from here (out of memory?)");
        return -1;
    }
    /* 3. each position node gets its item; the shapes must agree */
    size_t i = 0;
    if (link_items(doc, &i, doc->tree) != 0 || i != doc->n_nodes) {
        assert(!"the scanner and cJSON disagree on the shape of the text");
        *at = i < doc->n_nodes ? doc->nodes[i].off : len;
        json_free(doc);
        snprintf(msg, msglen, "not JSON: the scanner and cJSON read this differently (a bug in attnviz)");
        return -1;
    }
    return 0;
}

void json_free(JsonDoc *doc)
{
    free(doc->nodes);
    cJSON_Delete(doc->tree);
    memset(doc, 0, sizeof *doc);
}

void json_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    while (*s) {
        uint32_t cp;
        int k = lesson_utf8_decode(s, &cp);
        if (!k) {
            fputs("\\ufffd", f);
            s++;
            continue;
        }
        if (cp == '"' || cp == '\\')
            fprintf(f, "\\%c", (int)cp);
        else if (cp == '\n')
            fputs("\\n", f);
        else if (cp == '\t')
            fputs("\\t", f);
        else if (cp == '\r')
            fputs("\\r", f);
        else if (lesson_is_control(cp))
            fprintf(f, "\\u%04x", (unsigned)cp);
        else
            fwrite(s, 1, (size_t)k, f);
        s += k;
    }
    fputc('"', f);
}
