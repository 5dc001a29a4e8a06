/* narrate.h: fills the placeholders of a lesson's narration from its trace,
 * so that a sentence such as "divide by {sqrt_expr} = {scale}" stays true when
 * someone edits the numbers of the lesson. Pure C: no SDL, no I/O.
 *
 * Usage:
 *
 *     const char *text = lesson_narration(&lesson, step, LESSON_ZH);
 *     char line[2048];
 *     if (text && narrate_fill(line, sizeof line, text, &lesson, trace, step, LESSON_ZH) != 0) {
 *         // line holds the message: "unknown placeholder {d_kk} (lessons/FORMAT.md lists the placeholders)"
 *     }
 *
 *     char err[512];
 *     int bad = narrate_check(&lesson, trace, err, sizeof err); // `attnviz check` uses this
 *     if (bad) fprintf(stderr, "%s\n", err); // "x.json:41:23: narration.softmax.zh (step weights_2): ..."
 *
 * The placeholders (documented for lesson authors in lessons/FORMAT.md):
 *   {d_model} {d_k} {d_v} {heads} {n} {n_q} {n_k} {d_x} {d_y} {d_a}
 *   {scale} the divisor of the `scaled` step;  {sqrt_expr} it as written: √2, √512, 1
 *   {sqrt_dk} {sqrt_dmodel} those two divisors as numbers;  {mask_fill}
 *   {head} {step} {rows} {cols}: the step being narrated
 *   {col_from} {col_to}: the columns [from, to) of Q, K (d_k) or V, concat (d_v) its head covers
 *   {kv_heads}; {kv_head} {kv_group}: the step's K/V head, and the query heads that read it ("3–4")
 *   {macs:incremental|full|recompute}: decoding's multiply-adds with the K/V cache, of one whole
 *     forward, and without a cache (attn_decode_macs)
 *   {tokens} {key_tokens}; {token:I} {key_token:J}
 *   {row_max_token} {row_max_token:I} {row_max_weight} {row_max_weight:I}: every key tied
 *     for the row's largest weight (narrate_row_winners), or "uniform" for an even row
 *   {max_weight} {min_weight} {max_weight_if:none|sqrt_dk|sqrt_dmodel}
 *   {value:NAME[I][J]} and {value:NAME[I][J]:P} (P significant digits, default 4); on a
 *     step of head h a per-head name without its number ({value:scores[1][0]}) is head h's;
 *     a negative value right after · or × is put in parentheses: 0.1·(-2)
 *   {value_heads:H:NAME[I][J]}: the same lesson cut into H heads
 *   {{ and }} for literal braces.
 * In Chinese (LESSON_ZH) every token placeholder quotes its token: 「喜欢」.
 * "The head's weights" are the `softmax` step of the narrated step's head, or
 * the trace's first `softmax` step when the step belongs to no head.
 * Indices I, J are 0-based, as in C and PyTorch.
 *
 * Ownership: everything is borrowed for the duration of the call; out is the
 * caller's buffer and always ends up NUL-terminated (when outlen > 0).
 */
#ifndef NARRATE_H
#define NARRATE_H

#include <stddef.h>

#include "attn.h"
#include "lesson.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest a filled text (one narration, the intro or the summary) may
 * be, in bytes. `attnviz check` refuses a text that fills to more, and the
 * views hold this much for each text, so what check accepts is never cut. */
#define NARRATE_MAX_FILLED 8192
/* A step's whole narration as a view shows it: summary, intro and the
 * step's own text, each filled, with a line break between them, and room
 * for the view's own note or description of the step. */
#define NARRATE_MAX_STEP_TEXT (4 * (NARRATE_MAX_FILLED + 1))

/* The significant digits a text prints a weight with ({row_max_weight}, the
 * narration the view writes from a step): weights equal at this precision
 * read as a tie. */
#define NARRATE_WEIGHT_DIGITS 4

/* The keys that share one row's largest weight as a student reads it, equal
 * to it at NARRATE_WEIGHT_DIGITS significant digits: their indices, in
 * order, in keys[0..max). Returns how many there are; 0 when the row's
 * largest weight is not above 0 (the row sees no key). *uniform becomes 1
 * when two or more keys share it and every key weighted above 0 is among
 * them: the row spreads its weight evenly. */
int narrate_row_winners(const float *row, int cols, int *keys, int max, int *uniform);

/* Copies text into out with every placeholder replaced. step may be NULL (the
 * lesson's intro); placeholders that need a step are then errors. Returns 0,
 * or -1 with a one-line message in out: an unknown placeholder, a bad index,
 * an unknown step name, an unclosed brace, or text longer than outlen. */
int narrate_fill(char *out, size_t outlen, const char *text, const Lesson *lesson, const AttnTrace *trace,
                 const AttnStep *step, LessonLang lang);

/* Whether a narration's condition ("when", lessons/FORMAT.md) holds for
 * these numbers: one or more comparisons "LEFT OP RIGHT" joined by "&&",
 * OP one of == != < <= > >=. The condition is parsed as written, then each
 * side is a value filled for the step: one placeholder is its value (a
 * token's is text, another's the number it prints, −1 and −∞ included),
 * plain text a number when it reads as one; numbers compare as numbers,
 * else == and != compare text. NULL and "always" always hold. Returns 1
 * (holds), 0 (does not), or -1 with a one-line message in msg. */
int narrate_when(const char *cond, const Lesson *lesson, const AttnTrace *trace, const AttnStep *step, char *msg,
                 size_t msglen);

/* When cond does not hold for these numbers and its first false comparison
 * compares a token placeholder ({row_max_token:I}, {token:I},
 * {key_token:J}) with a token, the claim it stood for and what holds now, in
 * lang: "it says 喜欢's largest weight goes to 跑步; now it goes to 我, 跑步".
 * 1 with that in out, else 0 (out ""). */
int narrate_when_claim(const char *cond, const Lesson *lesson, const AttnTrace *trace, const AttnStep *step,
                       LessonLang lang, char *out, size_t outlen);

/* Fills every narration of the lesson, in both languages, against every step
 * it applies to (a kind key: every step of that kind; a name key: that step;
 * "intro": no step), and the summary. A key that matches no step of the trace
 * is a failure too, and so are what fills but reads wrong: a kind-level text
 * quoting one head's cells on another head's step, and a zh token placeholder
 * already inside 「」; and a condition ("when") that cannot be evaluated, or
 * that is false for the lesson's own numbers (unless the lesson was saved
 * from an edited one: lesson->edited_from). Returns the number of failures;
 * the first one is described in err as one line, "PATH:LINE:COL:
 * narration.KEY.LANG (step NAME): message", LINE:COL being the placeholder's
 * place in the file. */
int narrate_check(const Lesson *lesson, const AttnTrace *trace, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
