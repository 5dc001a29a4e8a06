/* test_caption.c: a step's caption for the projector (src/view/caption.h):
 * the first sentence, cut at a sentence boundary in English and Chinese and
 * never inside a number, an abbreviation or brackets; a long first sentence
 * shortened with "…" at a clause mark or between words, never inside one;
 * and the caption of every step of a shipped lesson in both languages and
 * both notations (view_big_text_caption). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "caption.h"
#include "test_util.h"
#include "view.h"

/* caption_of_text(text) equals want. */
static void expect_caption(const char *text, const char *want)
{
    char buf[CAPTION_MAX_BYTES];
    size_t n = caption_of_text(text, buf, sizeof buf);
    if (strcmp(buf, want) != 0) fail_msg("caption of \"%s\":\n  got  \"%s\"\n  want \"%s\"", text, buf, want);
    assert_int_equal(n, strlen(buf));
}

static void test_sentence_english(void **state)
{
    (void)state;
    expect_caption("Scores compare queries with keys. Each row is one query.", "Scores compare queries with keys.");
    expect_caption("Is it large? It is.", "Is it large?");
    expect_caption("Look!  Then divide.", "Look!");
    expect_caption("One sentence without a stop", "One sentence without a stop");
    /* not at a decimal point, an abbreviation, or a stop inside brackets */
    expect_caption("喜欢 puts 0.8943 on 跑步. Then softmax.", "喜欢 puts 0.8943 on 跑步.");
    expect_caption("Divide, e.g. by √d_k, to keep it small. Then softmax.", "Divide, e.g. by √d_k, to keep it small.");
    expect_caption("The mask (see step 3. above) blocks keys. Next.", "The mask (see step 3. above) blocks keys.");
    expect_caption("It ends here.\nA new paragraph.", "It ends here.");
    expect_caption("Up to the line break\nand not beyond.", "Up to the line break");
    expect_caption("Really?! Yes.", "Really?!");
}

static void test_sentence_chinese(void **state)
{
    (void)state;
    expect_caption("「喜欢」最关注「跑步」。权重之和为 1。", "「喜欢」最关注「跑步」。");
    expect_caption("为什么要除以 √d_k？因为点积会变大。", "为什么要除以 √d_k？");
    expect_caption("真的吗？！是的。", "真的吗？！");
    expect_caption("看！然后相除。", "看！");
    /* not inside 「」 or （）, not at 0.5 */
    expect_caption("头 1 的权重是 0.5（见上一步。）所以平均。之后拼接。", "头 1 的权重是 0.5（见上一步。）所以平均。");
    expect_caption("引号里「停。」不算句末，这里才算。后面。", "引号里「停。」不算句末，这里才算。");
    assert_int_equal(caption_sentence("没有句号"), strlen("没有句号"));
}

/* A long first sentence: at most CAPTION_MAX_COLUMNS, a prefix of the
 * sentence ending "…", and cut where a reader can stop. */
static void check_long(const char *text, const char *cut_before)
{
    char buf[CAPTION_MAX_BYTES];
    caption_of_text(text, buf, sizeof buf);
    size_t n = strlen(buf), e = strlen("…");
    if (caption_columns(buf) > CAPTION_MAX_COLUMNS)
        fail_msg("\"%s\" is %d columns, more than %d", buf, caption_columns(buf), CAPTION_MAX_COLUMNS);
    if (n < e || strcmp(buf + n - e, "…") != 0) fail_msg("\"%s\" does not end with …", buf);
    size_t kept = n - e;
    assert_true(kept > 0);
    if (memcmp(buf, text, kept) != 0) fail_msg("\"%s\" is not the start of the sentence", buf);
    if (cut_before && strncmp(text + kept, cut_before, strlen(cut_before)) != 0)
        fail_msg("\"%s\" was cut before \"%.12s\", expected before \"%s\"", buf, text + kept, cut_before);
    /* never inside a word: the text goes on with a space, a clause mark or a wide character */
    unsigned char next = (unsigned char)text[kept], last = (unsigned char)text[kept - 1];
    int word_goes_on = ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9')) &&
                       ((last >= 'a' && last <= 'z') || (last >= 'A' && last <= 'Z') || (last >= '0' && last <= '9'));
    if (word_goes_on) fail_msg("\"%s\" cuts a word: the text goes on \"%.12s\"", buf, text + kept);
}

static void test_long_first_sentence(void **state)
{
    (void)state;
    /* English without a clause mark: at the last space that fits */
    check_long("The scaled scores of every query against every key are turned into weights that are all positive "
               "and add up to exactly one in every single row of the matrix. Next.",
               " and add up");
    /* at a clause mark when it keeps at least half */
    check_long("Each query is compared with every key by a dot product of their vectors, which grows with d_k, so "
               "the scores are divided by its square root before softmax. Next.",
               ", so the scores");
    /* a clause mark too early is passed over for the last space */
    check_long("First, each query is compared with every key by a dot product of their vectors which grows with the "
               "dimension and so the scores are divided by its square root. Next.",
               " the dimension");
    /* Chinese: at the last clause mark, else between two characters */
    check_long("每个查询向量都要与所有的键向量逐一做点积运算得到一个分数矩阵，矩阵的每一行对应一个查询而每一列对应一个"
               "键所以这一步的结果是三行三列的方阵并且数值会随维度增大。后面。",
               "，矩阵");
    check_long("每个查询向量都要与所有的键向量逐一做点积运算得到一个分数矩阵矩阵的每一行对应一个查询而每一列对应一个键"
               "所以这一步的结果是三行三列的方阵并且数值会随维度增大。后面。",
               NULL);
    /* tokens quoted with 「」: at the last clause mark that fits */
    check_long(
        "「喜欢」对「跑步」的注意力权重最大，「我」这一行的查询向量在这个头里全是零，所以它对三个词的注意力完全均匀，"
        "每个都是三分之一，这说明一个头可以对某个词无话可说。后面。",
        "，所以");
    /* one word longer than a caption stays whole: never cut inside it */
    char word[160];
    memset(word, 'x', 150);
    word[150] = '\0';
    expect_caption(word, word);
    /* short enough: unchanged */
    expect_caption("A short one.", "A short one.");
}

/* Every step of a shipped lesson, in both languages and both notations:
 * the caption is the start of the narration (after its notes), at most
 * CAPTION_MAX_COLUMNS, and ends a sentence or with "…". */
static void test_every_step(void **state)
{
    (void)state;
    Lesson lesson;
    LessonError le;
    if (lesson_load(&lesson, ATTNVIZ_SOURCE_DIR "/lessons/mhsa-wo-xihuan-paobu.json", &le) != 0) fail_msg("%s", le.msg);
    View v;
    char err[512];
    if (view_init(&v, &lesson, err, sizeof err) != 0) fail_msg("%s", err);
    char narr[NARRATE_MAX_STEP_TEXT], cap[CAPTION_MAX_BYTES];
    for (int notation = 0; notation < VIEW_NOTATION_COUNT; notation++) {
        view_set_notation(&v, (ViewNotation)notation);
        for (int l = 0; l < LESSON_LANG_COUNT; l++) {
            view_set_lang(&v, (LessonLang)l);
            for (int s = 0; s < view_step_count(&v); s++) {
                view_goto(&v, s);
                size_t got = view_big_text_caption(&v, cap, sizeof cap);
                assert_int_equal(got, strlen(cap));
                view_narration(&v, narr, sizeof narr);
                size_t n = strlen(cap), e = strlen("…");
                if (n == 0) fail_msg("step %d (lang %d, notation %d): no caption", s, l, notation);
                if (caption_columns(cap) > CAPTION_MAX_COLUMNS)
                    fail_msg("step %d (lang %d): \"%s\" is longer than %d columns", s, l, cap, CAPTION_MAX_COLUMNS);
                int shortened = n >= e && strcmp(cap + n - e, "…") == 0;
                size_t kept = shortened ? n - e : n;
                const char *from = strstr(narr, "\n") && notation ? strchr(narr, '\n') + 1 : narr;
                if (strncmp(from, cap, kept) != 0)
                    fail_msg("step %d (lang %d, notation %d): \"%s\" is not the start of the narration \"%s\"", s, l,
                             notation, cap, narr);
                if (!shortened && kept < strlen(from) && from[kept] != '\n' && caption_sentence(from) != kept)
                    fail_msg("step %d (lang %d): \"%s\" is not the first sentence", s, l, cap);
            }
        }
    }
    view_free(&v);
    lesson_free(&lesson);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sentence_english),
        cmocka_unit_test(test_sentence_chinese),
        cmocka_unit_test(test_long_first_sentence),
        cmocka_unit_test(test_every_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
