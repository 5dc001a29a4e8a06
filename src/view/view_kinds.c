/* view_kinds.c: what the view knows of each kind of step (one row per
 * AttnStepKind), and a step's title, labels and blocked cells. */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

const char *view_kind_text(AttnStepKind kind, ViewNotation notation, LessonLang lang)
{
    if ((unsigned)kind >= ATTN_STEP_KIND_COUNT) return "";
    if ((int)lang < 0 || lang >= LESSON_LANG_COUNT) lang = LESSON_EN;
    const ViewKind *k = view_kind(kind);
    return notation == VIEW_NOTATION_COLUMN && k->text_column[lang] ? k->text_column[lang] : k->text[lang];
}

/* ---- names, labels, masks ---- */

/* Appends the decimal digits of n as Unicode subscripts (₀ is U+2080). */
size_t view_cat_subscript(char *buf, size_t len, size_t at, int n)
{
    char digits[16];
    snprintf(digits, sizeof digits, "%d", n);
    for (const char *d = digits; *d; d++) at = view_cat(buf, len, at, "\xE2\x82%c", (char)(0x80 + (*d - '0')));
    return at;
}

void view_step_title(const AttnStep *step, char *buf, size_t len)
{
    if (!len) return;
    size_t at = view_cat(buf, len, 0, "%s", attn_role_name((AttnRole)step->role));
    if (step->head > 0) view_cat_subscript(buf, len, at, step->head);
}

const char *const *view_row_labels(const View *v, const AttnTrace *trace, const AttnStep *step)
{
    (void)trace;
    if (step->row_axis == ATTN_AXIS_PAIRS && v->pair_labels) return (const char *const *)v->pair_labels;
    return lesson_row_labels(v->lesson, step);
}

const char *const *view_col_labels(const View *v, const AttnTrace *trace, const AttnStep *step)
{
    (void)trace;
    return lesson_col_labels(v->lesson, step);
}

int view_cell_blocked(const View *v, const AttnStep *step, int r, int c)
{
    unsigned char b;
    view_row_blocked(v, step, r, c, 1, &b);
    return b;
}

void view_row_blocked(const View *v, const AttnStep *step, int r, int c0, int n, unsigned char *out)
{
    const AttnConfig *cfg = &v->lesson->cfg;
    KindMask mask = view_kind(step->kind)->mask;
    int known = (mask == MASK_SHOWN || (mask == MASK_SHOWN_AFTER_MASKING && cfg->mask_order == ATTN_MASK_THEN_SCALE)) &&
                r >= 0 && r < cfg->n_q;
    for (int i = 0; i < n; i++) {
        int c = c0 + i, b = 0;
        if (known && c >= 0 && c < cfg->n_k) switch (cfg->mask_kind) {
            case ATTN_MASK_CAUSAL:
                b = c > r;
                break;
            case ATTN_MASK_PADDING:
                b = cfg->mask && cfg->mask[c] == 0;
                break;
            case ATTN_MASK_MATRIX:
                b = cfg->mask && cfg->mask[(size_t)r * (size_t)cfg->n_k + (size_t)c] == 0;
                break;
            default:
                break;
            }
        out[i] = (unsigned char)b;
    }
}

/* ---- the table of kinds ---- */

static const ViewKind kinds[] = {
    [ATTN_STEP_INPUT] = {.phase = PHASE_INPUTS,
                         .text = {"the input, one row per token", "输入，每个词元占一行"},
                         .text_column = {"the input, one column per token", "输入，每个词元占一列"},
                         .formula = view_formula_operand},
    [ATTN_STEP_WEIGHT] = {.phase = PHASE_INPUTS,
                          .text = {"a learned weight matrix", "可学习的权重矩阵"},
                          .formula = view_formula_operand,
                          .explain = view_explain_weight},
    [ATTN_STEP_BIAS] = {.phase = PHASE_INPUTS,
                        .text = {"a learned bias, added to every row", "可学习的偏置，加到每一行上"},
                        .text_column = {"a learned bias, added to every column", "可学习的偏置，加到每一列上"},
                        .formula = view_formula_operand},
    [ATTN_STEP_PROJECTION] = {.seconds = 1.2,
                              .phase = PHASE_PROJECTIONS,
                              .text = {"a projection, the input times a weight matrix", "投影，即输入乘以权重矩阵"},
                              .formula = view_formula_projection,
                              .explain = view_explain_product},
    [ATTN_STEP_SPLIT] = {.seconds = 1.0,
                         .text = {"one head's columns of the projection", "投影中属于这个头的那几列"},
                         .formula = view_formula_split,
                         .explain = view_explain_split,
                         .describe = view_describe_kv_shared},
    [ATTN_STEP_SCORES] = {.seconds = 1.2,
                          .phase = PHASE_SCORING,
                          .text = {"the scores, how well each query matches each key",
                                   "注意力分数，即每个查询与每个键的匹配程度"},
                          .formula = view_formula_head,
                          .part = PART_SCORES,
                          .explain = view_explain_scores},
    [ATTN_STEP_SCALED] = {.seconds = 0.8,
                          .text = {"the scores divided by the scale", "除以缩放因子之后的分数"},
                          .formula = view_formula_head,
                          .part = PART_SCALED,
                          .explain = view_explain_scaled,
                          .mask = MASK_SHOWN_AFTER_MASKING},
    [ATTN_STEP_MASKED] = {.seconds = 0.8,
                          .text = {"the blocked positions set to the fill value", "被屏蔽的位置换成填充值"},
                          .formula = view_formula_head,
                          .part = PART_MASKED,
                          .explain = view_explain_masked,
                          .mask = MASK_SHOWN},
    [ATTN_STEP_SOFTMAX] = {.seconds = 1.2,
                           .text = {"softmax, each row becomes weights that sum to 1",
                                    "softmax，把每一行变成和为 1 的权重"},
                           .text_column = {"softmax, each column becomes weights that sum to 1",
                                           "softmax，把每一列变成和为 1 的权重"},
                           .formula = view_formula_head,
                           .part = PART_WEIGHTS,
                           .explain = view_explain_softmax,
                           .describe = view_describe_largest_weights,
                           .mask = MASK_SHOWN},
    [ATTN_STEP_WEIGHTED_SUM] = {.seconds = 1.2,
                                .text = {"the weighted sum of the values", "值向量的加权和"},
                                .formula = view_formula_head,
                                .part = PART_HEAD,
                                .explain = view_explain_weighted_sum},
    [ATTN_STEP_CONCAT] = {.seconds = 1.0,
                          .phase = PHASE_OUTPUT,
                          .text = {"the heads' outputs side by side", "各个头的输出并排拼接"},
                          .formula = view_formula_multihead,
                          .part = PART_CONCAT,
                          .explain = view_explain_concat},
    [ATTN_STEP_OUTPUT] = {.seconds = 1.2,
                          .phase = PHASE_OUTPUT,
                          .text = {"the output projection", "输出投影"},
                          .formula = view_formula_multihead,
                          .part = PART_OUTPUT,
                          .explain = view_explain_product},
    [ATTN_STEP_ADDITIVE_HIDDEN] = {.seconds = 1.2,
                                   .phase = PHASE_SCORING,
                                   .text = {"tanh of the joined query and key, times W_a",
                                            "查询与键拼接后乘以 W_a，再取 tanh"},
                                   .part = PART_HIDDEN,
                                   .explain = view_explain_additive_hidden},
    [ATTN_STEP_KV_APPEND] = {.seconds = 1.0,
                             .text = {"the cache: the keys or values so far, with this token's row added",
                                      "缓存：此前各词元的键或值，末尾添上当前词元的一行"},
                             .describe = view_describe_kv_shared},
    [ATTN_STEP_DECODE_CHECK] = {.seconds = 1.0,
                                .phase = PHASE_OUTPUT,
                                .text = {"the rows decoded one token at a time, stacked: the same as the whole output",
                                         "逐个词元解码得到的各行叠在一起，与一次算出的输出相同"}},
    [ATTN_STEP_ROPE_ANGLES] = {.seconds = 0.8,
                               .phase = PHASE_PROJECTIONS,
                               .text = {"RoPE's angles: position p turns pair i by p·θ_i",
                                        "RoPE 的旋转角：位置 p 把第 i 对特征转过 p·θ_i"},
                               .formula = view_formula_position,
                               .explain = view_explain_position},
    [ATTN_STEP_ROPE] = {.seconds = 1.0,
                        .text = {"RoPE: each pair of features turned by its position's angle",
                                 "RoPE：每对特征按所在位置的角度旋转"},
                        .formula = view_formula_position,
                        .explain = view_explain_position,
                        .describe = view_describe_kv_shared},
    [ATTN_STEP_POSITIONAL] = {.seconds = 0.8,
                              .phase = PHASE_INPUTS,
                              .text = {"the sinusoidal positional encoding, one row per position",
                                       "正弦位置编码，每个位置占一行"},
                              .text_column = {"the sinusoidal positional encoding, one column per position",
                                              "正弦位置编码，每个位置占一列"},
                              .formula = view_formula_position,
                              .explain = view_explain_position},
    [ATTN_STEP_ADD_POSITIONAL] = {.seconds = 1.0,
                                  .phase = PHASE_PROJECTIONS,
                                  .text = {"the input with its positions added, X + PE", "加上位置编码的输入，X + PE"},
                                  .formula = view_formula_position,
                                  .explain = view_explain_position},
    [ATTN_STEP_TILE_SCORES] = {.seconds = 0.8,
                               .text = {"one block of keys: its columns of the scores before softmax",
                                        "一块键：softmax 之前的分数中属于这一块的几列"},
                               .formula = view_formula_tile,
                               .explain = view_explain_tile,
                               .mask = MASK_NOT_SHOWN},
    [ATTN_STEP_TILE_MAX] = {.seconds = 0.8,
                            .text = {"the running maximum m of each row, over the blocks so far",
                                     "每一行到目前为止各块的最大值 m"},
                            .formula = view_formula_tile,
                            .explain = view_explain_tile},
    [ATTN_STEP_TILE_RESCALE] = {.seconds = 0.8,
                                .text = {"the rescale factor e^(m_old − m_new) for the sums so far",
                                         "重新缩放因子 e^(m_old − m_new)，乘到此前的累加和上"},
                                .formula = view_formula_tile,
                                .explain = view_explain_tile},
    [ATTN_STEP_TILE_SUM] = {.seconds = 0.8,
                            .text = {"the running sum l of e^(s − m)", "e^(s − m) 的累加和 l"},
                            .formula = view_formula_tile,
                            .explain = view_explain_tile},
    [ATTN_STEP_TILE_ACCUMULATE] = {.seconds = 1.0,
                                   .text = {"the running weighted sum of the values, not yet divided by l",
                                            "值向量的累加加权和，尚未除以 l"},
                                   .formula = view_formula_tile,
                                   .explain = view_explain_tile},
    [ATTN_STEP_TILE_OUTPUT] = {.seconds = 1.0,
                               .text = {"the tiled result acc / l: the head's output again",
                                        "分块计算的结果 acc / l，与这个头的输出相同"},
                               .formula = view_formula_tile,
                               .explain = view_explain_tile},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == ATTN_STEP_KIND_COUNT,
               "kinds[] must have a row for every AttnStepKind");

const ViewKind *view_kind(int kind)
{
    return &kinds[(unsigned)kind < ATTN_STEP_KIND_COUNT ? kind : 0];
}
