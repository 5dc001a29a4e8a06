/* lesson_json.h: JSON for the lesson loader: cJSON parses, a locator says
 * where. Internal to src/lesson, not a public API.
 *
 * cJSON (libcjson-dev) is the parser of record: every key, string and number
 * the loader uses is the one cJSON decoded (item->string, item->valuestring,
 * item->valuedouble). What cJSON does not do is done here, in a scanner that
 * runs first over the same text and builds no values:
 *   - positions: the byte offset of every value and key, so that a lesson
 *     error names its line and column;
 *   - strictness, with a positioned, friendly message: RFC 8259 only (cJSON
 *     also takes 07, 1., control characters in strings and as white space),
 *     and words for the non-JSON spellings people try (NaN, Infinity, nan,
 *     inf, 'single quotes', trailing commas, comments, full-width
 *     punctuation); the path of the value in the message;
 *   - UTF-8 validation with the position of the first bad byte (cJSON copies
 *     bytes as they are), lone surrogates and \u0000 refused;
 *   - a nesting limit of the format's depth, not cJSON's 1000.
 * Duplicate keys are the loader's to find (lesson.c, check_keys): cJSON keeps
 * both members, in order, and the locator points at each.
 *
 * Once the scanner accepts the text, cJSON_ParseWithLengthOpts parses it (its
 * grammar is a superset of the scanner's, so it succeeds; if it does not, that
 * is reported as "not JSON" at the position cJSON stopped), and the two trees
 * are walked in pre-order in lockstep to give each position node the cJSON
 * item it stands for. The shapes agree one to one (a mismatch is a bug here,
 * asserted).
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
 *     for (const JsonNode *k = json_first(root); k; ...)   // k: a key, json_str(k)
 *         ... k[1].item->valuedouble ...                    // the member's value, as cJSON read it
 *     json_free(&doc);
 *
 * Layout: the position nodes sit in one array in pre-order. A container
 * records its child count and the size of its subtree, so the next sibling of
 * a node is node + subtree size; an object's children alternate key (a string
 * node whose item is the member, so json_str gives item->string) and value.
 *
 * Cost: the scanner plus cJSON take about 1.6 times the CPU time of the
 * single hand-written pass this replaced, and about 100 bytes per value (a
 * 24-byte position node, a cJSON item and its malloc header) instead of 16:
 * a 1024×512 X (7 MB) loads in about 105 ms of CPU with a 69 MB peak.
 *
 * Ownership: json_parse allocates the nodes and the cJSON tree; json_free
 * releases both (a zeroed doc is fine). Items are borrowed from the doc.
 */
#ifndef LESSON_JSON_H
#define LESSON_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum JsonType { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

typedef struct JsonNode {
    const cJSON *item; /* cJSON's node for this value; for a key node, the member (key in item->string) */
    uint32_t off;      /* byte offset of the value's (or key's) first character in the text */
    uint32_t n;        /* containers: children (an object: members); 0 otherwise */
    uint32_t skip;     /* nodes in the subtree, itself included (1 for a scalar or a key) */
    uint8_t type;      /* JsonType, equal to the item's cJSON type */
    uint8_t key;       /* 1 for a key node */
} JsonNode;

typedef struct JsonDoc {
    JsonNode *nodes; /* (n_nodes) pre-order */
    size_t n_nodes, cap_nodes;
    cJSON *tree; /* the parse of record; owned */
} JsonDoc;

/* Parses text[0..len). Containers may nest at most max_depth deep. Returns 0,
 * or -1 with a one-line message in msg and the byte offset of the problem in
 * *at; the doc is then empty. */
int json_parse(JsonDoc *doc, const char *text, size_t len, int max_depth, char *msg, size_t msglen, size_t *at);
void json_free(JsonDoc *doc);

static inline const JsonNode *json_root(const JsonDoc *doc)
{
    return doc->n_nodes ? &doc->nodes[0] : NULL;
}
/* The first child of a container (for an object: its first key), or NULL. */
static inline const JsonNode *json_first(const JsonNode *n)
{
    return n->n ? n + 1 : NULL;
}
/* The node after n's subtree: n's next sibling when there is one. Callers
 * count children themselves (n->n of the parent). */
static inline const JsonNode *json_skip(const JsonNode *n)
{
    return n + n->skip;
}
/* The text of a string value or of a key, as cJSON decoded it (UTF-8, no NUL
 * inside: the scanner refuses \u0000). Borrowed from the doc. */
static inline const char *json_str(const JsonNode *n)
{
    return n->key ? n->item->string : n->item->valuestring;
}

/* 1-based line and column of a byte offset; the column counts characters
 * (UTF-8 code points), as editors show them. */
void json_line_col(const char *text, size_t len, size_t off, int *line, int *col);
/* "a string", "an array", "true", ... for messages. */
const char *json_type_phrase(JsonType t);

/* Writes s as a JSON string literal, for the writers (the trace, a saved
 * lesson): '"' and '\\' escaped, a line break, tab or return as \n, \t,
 * \r, every other control character (C0, DEL, C1) as \u00XX, so that the
 * output is one line of printable text whatever s holds; a byte that is not
 * UTF-8 is written as \uFFFD, so that the output is always JSON. */
void json_put_string(FILE *f, const char *s);

#endif
