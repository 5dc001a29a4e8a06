/* lesson_json.h: a small JSON parser that remembers where every value is.
 * Internal to src/lesson (the lesson loader), not a public API.
 *
 * Why not cJSON alone: a lesson error must name the line and column of the
 * offending value, and cJSON keeps no positions and silently keeps the last of
 * two duplicate keys. This parser is strict RFC 8259 JSON plus what a lesson
 * needs: byte offsets of every value and key, UTF-8 validation with the
 * position of the first bad byte, a nesting limit, and a clear message for the
 * non-JSON spellings people try (NaN, Infinity, nan, inf, 'single quotes',
 * trailing commas, comments).
 *
 * Usage:
 *
 *     JsonDoc doc;
 *     char msg[512];
 *     size_t at;
 *     if (json_parse(&doc, text, len, 3, msg, sizeof msg, &at) != 0) {
 *         // msg: "not JSON: expected ',' or '}' after a member, found 'x'"; at: byte offset
 *     }
 *     const JsonNode *root = json_root(&doc);
 *     for (const JsonNode *k = json_first(root); k; k = json_next(&doc, json_next(&doc, k))) ...
 *     json_free(&doc);
 *
 * Layout: the nodes of the document sit in one array in pre-order. A
 * container records its child count and the size of its subtree, so the next
 * sibling of a node is node + subtree size; an object's children alternate key
 * (a string node), value. Strings are decoded into one pool, NUL-terminated.
 * A number node keeps the double strtod gave; its text is at its offset.
 *
 * Ownership: json_parse allocates; json_free releases (a zeroed doc is fine).
 */
#ifndef LESSON_JSON_H
#define LESSON_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum JsonType { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

typedef struct JsonNode {
    uint8_t type;  /* JsonType */
    uint32_t off;  /* byte offset of the value's first character in the text */
    union {
        double num; /* JSON_NUMBER */
        struct {
            uint32_t n;    /* containers: children (an object: members); strings: bytes */
            uint32_t skip; /* containers: nodes in the subtree, itself included; strings: pool offset */
        } c;
    } u;
} JsonNode;

typedef struct JsonDoc {
    JsonNode *nodes; /* (n_nodes) pre-order */
    size_t n_nodes, cap_nodes;
    char *pool;      /* (len + 1) decoded strings, each NUL-terminated */
    size_t pool_len;
} JsonDoc;

/* Parses text[0..len). Containers may nest at most max_depth deep. Returns 0,
 * or -1 with a one-line message in msg and the byte offset of the problem in
 * *at; the doc is then empty. */
int json_parse(JsonDoc *doc, const char *text, size_t len, int max_depth, char *msg, size_t msglen, size_t *at);
void json_free(JsonDoc *doc);

static inline const JsonNode *json_root(const JsonDoc *doc) { return doc->n_nodes ? &doc->nodes[0] : NULL; }
/* The first child of a container (for an object: its first key), or NULL. */
static inline const JsonNode *json_first(const JsonNode *n)
{
    return (n->type == JSON_ARRAY || n->type == JSON_OBJECT) && n->u.c.n ? n + 1 : NULL;
}
/* The node after n's subtree: n's next sibling when there is one. Callers
 * count children themselves (n->u.c.n of the parent). */
static inline const JsonNode *json_skip(const JsonNode *n)
{
    return (n->type == JSON_ARRAY || n->type == JSON_OBJECT) ? n + n->u.c.skip : n + 1;
}
static inline const char *json_str(const JsonDoc *doc, const JsonNode *n) { return doc->pool + n->u.c.skip; }

/* 1-based line and column of a byte offset; the column counts characters
 * (UTF-8 code points), as editors show them. */
void json_line_col(const char *text, size_t len, size_t off, int *line, int *col);
/* "a string", "an array", "true", ... for messages. */
const char *json_type_phrase(JsonType t);

#endif
