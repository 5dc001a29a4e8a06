/* caption.c: a step's caption for the projector. See caption.h. */
#include "caption.h"

#include <stdlib.h>
#include <string.h>

/* ---- text: characters, widths, sentences ---- */

/* The code point at p and its length in bytes (1 for a byte that is not UTF-8). */
static int utf8_next(const char *p, unsigned long *cp)
{
    const unsigned char *s = (const unsigned char *)p;
    if (s[0] < 0x80) return *cp = s[0], 1;
    int n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 1;
    if (n == 1) return *cp = s[0], 1;
    unsigned long v = s[0] & (0x3F >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return *cp = s[0], 1;
        v = (v << 6) | (s[i] & 0x3F);
    }
    *cp = v;
    return n;
}

/* East Asian wide and full-width characters: Hangul Jamo, CJK punctuation,
 * kana, ideographs, Hangul syllables, compatibility ideographs, vertical and
 * small forms, full-width forms, the supplementary ideographic planes. */
static int is_wide(unsigned long cp)
{
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF && cp != 0x303F) ||
           (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
           (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

int caption_columns(const char *text)
{
    int cols = 0;
    unsigned long cp;
    for (const char *p = text; *p;) {
        p += utf8_next(p, &cp);
        cols += is_wide(cp) ? 2 : 1;
    }
    return cols;
}

/* Brackets and quotes a sentence does not end inside. */
static int opens(unsigned long cp)
{
    return cp == '(' || cp == '[' || cp == '{' || cp == 0xFF08 /* （ */ || cp == 0x3010 /* 【 */ ||
           cp == 0x300C /* 「 */ || cp == 0x300E /* 『 */ || cp == 0x300A /* 《 */ || cp == 0x201C /* “ */;
}
static int closes(unsigned long cp)
{
    return cp == ')' || cp == ']' || cp == '}' || cp == 0xFF09 /* ） */ || cp == 0x3011 /* 】 */ ||
           cp == 0x300D /* 」 */ || cp == 0x300F /* 』 */ || cp == 0x300B /* 》 */ || cp == 0x201D /* ” */;
}
/* 。！？ end a sentence wherever they stand. */
static int ends_always(unsigned long cp)
{
    return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F;
}

/* 1 when the '.' at text[at] ends an abbreviation such as "e.g.". */
static int abbreviation(const char *text, size_t at)
{
    static const char *const words[] = {"e.g", "i.e", "etc", "vs", "cf", "approx", "resp", "Eq", "Fig", "No"};
    size_t from = at;
    while (from > 0 && (text[from - 1] == '.' || (text[from - 1] >= 'a' && text[from - 1] <= 'z') ||
                        (text[from - 1] >= 'A' && text[from - 1] <= 'Z')))
        from--;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == at - from && memcmp(text + from, words[i], at - from) == 0) return 1;
    return 0;
}

size_t caption_sentence(const char *text)
{
    int depth = 0;
    unsigned long cp;
    for (size_t at = 0; text[at];) {
        int n = utf8_next(text + at, &cp);
        if (cp == '\n') return at;
        if (opens(cp)) {
            depth++;
        } else if (closes(cp) && depth > 0) {
            depth--;
        } else if (depth == 0) {
            int ascii_end = (cp == '.' || cp == '!' || cp == '?') &&
                            (text[at + 1] == '\0' || text[at + 1] == ' ' || text[at + 1] == '\n') &&
                            !(cp == '.' && abbreviation(text, at));
            if (ends_always(cp) || ascii_end) {
                /* the sentence's mark and any that follow it at once: "？！" */
                size_t end = at + (size_t)n;
                unsigned long next;
                int k;
                while (text[end] && (k = utf8_next(text + end, &next)) &&
                       (ends_always(next) || next == '!' || next == '?'))
                    end += (size_t)k;
                return end;
            }
        }
        at += (size_t)n;
    }
    return strlen(text);
}

/* Clause marks a caption too long for the projector is shortened at. */
static int clause_break(unsigned long cp)
{
    return cp == 0xFF0C /* ， */ || cp == 0xFF1B /* ； */ || cp == 0xFF1A /* ： */ || cp == 0x3001 /* 、 */ ||
           cp == ',' || cp == ';' || cp == ':';
}

/* text, at most CAPTION_MAX_COLUMNS, with "…" when shortened: cut before the
 * last clause mark outside brackets that leaves room for "…" and keeps at
 * least half of it, else between words: at the last space or after the last
 * wide character (Chinese breaks between any two characters). A Latin word
 * is never cut: a text that is one word too long stays whole. */
static void shorten(char *text)
{
    if (caption_columns(text) <= CAPTION_MAX_COLUMNS) return;
    const int room = CAPTION_MAX_COLUMNS - 1; /* "…" takes one column */
    size_t last_clause = 0, last_space = 0, after_wide = 0;
    int cols = 0, depth = 0, clause_cols = 0;
    unsigned long cp;
    for (size_t at = 0; text[at];) {
        int n = utf8_next(text + at, &cp);
        cols += is_wide(cp) ? 2 : 1;
        if (cols > room) break;
        if (opens(cp))
            depth++;
        else if (closes(cp) && depth > 0)
            depth--;
        /* cut before the mark ("… X，" reads as "… X…") */
        if (depth == 0 && clause_break(cp)) last_clause = at, clause_cols = cols;
        if (cp == ' ') last_space = at;
        at += (size_t)n;
        if (is_wide(cp) && !opens(cp)) after_wide = at;
    }
    size_t between = last_space > after_wide ? last_space : after_wide;
    size_t cut = last_clause && (clause_cols >= room / 2 || !between) ? last_clause : between;
    while (cut > 0 && text[cut - 1] == ' ') cut--;
    if (cut > 0) memcpy(text + cut, "…", sizeof "…");
}

size_t caption_of_text(const char *text, char *buf, size_t len)
{
    if (!len) return 0;
    char *t = malloc(strlen(text) + sizeof "…");
    if (!t) {
        buf[0] = '\0';
        return 0;
    }
    size_t n = caption_sentence(text);
    memcpy(t, text, n);
    t[n] = '\0';
    shorten(t);
    lesson_text_copy(buf, len, t);
    free(t);
    return strlen(buf);
}

/* ---- the caption of the View's step ---- */

size_t view_big_text_caption(const View *v, char *buf, size_t len)
{
    if (!len) return 0;
    buf[0] = '\0';
    char *narr = malloc(NARRATE_MAX_STEP_TEXT);
    if (!narr) return 0;
    view_narration(v, narr, NARRATE_MAX_STEP_TEXT);
    /* the narration may open with a line on how to read it (column notation)
     * and a note that it is about the lesson before an edit: the caption is
     * the first sentence of what they introduce */
    const char *text = narr;
    const char *row = view_string(VS_TEXT_IN_ROW_NOTATION, v->lang), *about = view_string(VS_ABOUT_ORIGINAL, v->lang);
    if (strncmp(text, row, strlen(row)) == 0 && text[strlen(row)] == '\n') text += strlen(row) + 1;
    if (strncmp(text, about, strlen(about)) == 0) text += strlen(about);
    size_t n = caption_of_text(text, buf, len);
    free(narr);
    return n;
}
