/* caption.h: the caption of a step: one or two lines the back row of a
 * lecture hall reads on the projector, while the whole narration stays on
 * the presenter's screen (attnviz show --presenter). Pure C: no SDL, no I/O.
 *
 * A caption is the first sentence of the step's narration, cut at a
 * sentence boundary (caption_sentence), and when that sentence is longer
 * than CAPTION_MAX_COLUMNS, shortened with "…" at a clause mark or else
 * between words, never inside one (caption_of_text).
 *
 * The caption of the View's step is view_big_text_caption (view.h): what
 * big text (U) shows in the narration's place, and the class's window of
 * `attnviz show --presenter`.
 *
 * Usage:
 *
 *     char cap[CAPTION_MAX_BYTES];
 *     view_big_text_caption(&view, cap, sizeof cap);
 *     ... draw cap large ...
 *     caption_of_text("Scores compare queries with keys. Each row ...", cap, sizeof cap);
 *     // "Scores compare queries with keys."
 *
 * Ownership: everything is borrowed for the call; buf is the caller's and
 * always ends up NUL-terminated (when len > 0).
 */
#ifndef CAPTION_H
#define CAPTION_H

#include <stddef.h>

#include "attn.h"
#include "view.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The widest caption, in columns (a Chinese character or a full-width sign
 * is 2, anything else 1): two lines of about 50 Latin or 25 Chinese
 * characters, what a projector shows at a size the back row reads. */
#define CAPTION_MAX_COLUMNS 100
/* A buffer that holds any caption. */
#define CAPTION_MAX_BYTES NARRATE_MAX_STEP_TEXT

/* The caption of a narration text into buf: its first sentence, shortened
 * to CAPTION_MAX_COLUMNS as above. Returns its length in bytes. */
size_t caption_of_text(const char *text, char *buf, size_t len);
/* The length in bytes of text's first sentence: up to and including the
 * first 。！？ or a . ! ? followed by a space, a line break or the end (and
 * any ！？!? right after it), or up to a line break, whichever comes first;
 * never inside brackets or quotes ( ) [ ] （ ） 【 】 「 」 『 』 《 》 “ ”,
 * never at a decimal point (0.4683) or after e.g., i.e., etc., vs., cf.
 * The whole text when it has no boundary. */
size_t caption_sentence(const char *text);
/* Display columns of UTF-8 text: 2 for each East Asian wide character, 1 for
 * any other character. */
int caption_columns(const char *text);

#ifdef __cplusplus
}
#endif
#endif
