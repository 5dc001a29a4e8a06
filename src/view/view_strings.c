/* view_strings.c: the user-interface strings in each language and the
 * names options and saved lessons use. */
#include "view_internal.h"

#include <string.h>

/* ---- the user-interface strings ---- */

static const char *const ui_strings[VS_STRING_COUNT][LESSON_LANG_COUNT] = {
    [VS_STEP] = {"step", "步骤"},
    [VS_OF] = {"of", "/"},
    [VS_HEAD] = {"head", "头"},
    [VS_MODE_MULTI] = {"multi-head", "多头视图"},
    [VS_MODE_SINGLE] = {"single head", "单头视图"},
    [VS_MODE_COMPARE] = {"single vs multi-head", "单头与多头对比"},
    [VS_PLAYING] = {"playing", "自动播放"},
    [VS_PAUSED] = {"paused", "暂停"},
    [VS_REWINDING] = {"playing back", "倒放"},
    [VS_SPEED] = {"speed", "速度"},
    [VS_PHASE_INPUTS] = {"inputs & weights", "输入与权重"},
    [VS_PHASE_PROJ] = {"projections", "投影"},
    [VS_PHASE_HEAD] = {"head", "头"},
    [VS_PHASE_OUT] = {"concat & output", "拼接与输出"},
    [VS_PHASE_SCORE] = {"scores", "分数"},
    [VS_PHASE_ATTEND] = {"weights & context", "权重与上下文"},
    [VS_ROW_SUM] = {"row sum", "行和"},
    [VS_BLOCKED] = {"blocked", "已屏蔽"},
    [VS_ALL_HEADS] = {"all heads: attention weights", "所有头的注意力权重"},
    [VS_HELP_TITLE] = {"Keys and mouse", "按键与鼠标"},
    [VS_HELP_MOUSE] = {"Mouse: hover a cell to see how it was computed; click a token to\n"
                       "highlight it everywhere; click the timeline to jump; wheel zooms,\n"
                       "drag pans a large matrix; drop a lesson file on the window to open it.",
                       "鼠标：悬停在格子上，查看它的计算过程；点击词元，在所有矩阵中高亮它；\n"
                       "点击时间轴跳转；滚轮缩放、拖动平移大矩阵；把课程文件拖进窗口即可打开。"},
    [VS_HINT] = {"? help", "? 帮助"},
    [VS_SCALE_BY] = {"scale", "缩放"},
    [VS_SPLIT_INTO] = {"split into heads", "按头拆分"},
    [VS_CONCAT_HEADS] = {"heads side by side", "各个头并排拼接"},
    [VS_EXP_PHASE] = {"exp(x − max)", "exp(x − max)"},
    [VS_NORM_PHASE] = {"÷ row sum", "÷ 行和"},
    [VS_NO_NARRATION] = {"(no narration for this step)", "（本步骤没有讲解）"},
    [VS_WEIGHTS_UNIT] = {"linear 0–1", "线性 0–1"},
    [VS_WEIGHTS_ROW] = {"÷ row max", "÷ 行最大值"},
    [VS_WEIGHTS_LOG] = {"log₁₀", "对数 log₁₀"},
    [VS_ROW_MAX] = {"row max", "行最大值"},
    [VS_WEIGHTS_COLUMN] = {"÷ column max", "÷ 列最大值"},
    [VS_COLUMN_MAX] = {"column max", "列最大值"},
    [VS_NOTATION_ROW] = {"row notation", "行向量记法"},
    [VS_NOTATION_COLUMN] = {"column notation", "列向量记法"},
    /* %s: the tokens; %d: the single head's d_k */
    [VS_SINGLE_LESSON_TITLE] = {"One head on %s: h = 1, d_k = %d, the lesson's X and weights",
                                "单头注意力：%s，h = 1，d_k = %d，沿用本课的 X 与权重"},
    [VS_TEXT_IN_ROW_NOTATION] = {"(The text counts in row notation: its rows are the columns on screen.)",
                                 "（讲解按行向量记法书写：文中的「行」即屏幕上的列。）"},
    [VS_EDIT_NOTHING] = {"Nothing on this step can be edited: its numbers are computed. Edit X, the weights and "
                         "biases on their own steps or on Q, K, V; the mask on a masked or softmax step.",
                         "这一步的数字都是算出来的，不能直接编辑。请在 X、权重和偏置自己的步骤或 Q、K、V "
                         "步骤上编辑它们；掩码在掩码或 softmax 步骤上编辑。"},
    [VS_EDIT_TOKENS_WHERE] = {"Tokens are edited on X (or Y): put the cursor on a row of X.",
                              "词元在 X（或 Y）上编辑：把光标移到 X 的某一行。"},
    [VS_EDIT_MODE] = {"edit", "编辑"},
    [VS_EDIT_HINT] = {"type a number, Enter · arrows · Tab next matrix · Esc leaves",
                      "输入数字后回车 · 方向键 · Tab 换矩阵 · Esc 退出"},
    [VS_EDIT_HINT_MASK] = {"Enter toggles the cell · K mask kind · Esc leaves",
                           "回车切换这一格 · K 切换掩码类型 · Esc 退出"},
    [VS_EDIT_HINT_TOKENS] = {"F2 rename · Insert add · Delete remove a token",
                             "F2 改名 · Insert 添加 · Delete 删除词元"},
    [VS_SAVED_AS] = {"saved as %s", "已另存为 %s"},
    [VS_NOTICE_REFUSED] = {"%s", "未接受：%s"},
    [VS_NOTICE_MASK_NONE] = {"mask: none", "掩码：无"},
    [VS_NOTICE_MASK_CAUSAL] = {"mask: causal (each query sees itself and the keys before it)",
                               "掩码：因果（每个查询只看自己和它之前的键）"},
    [VS_NOTICE_MASK_PADDING] = {"mask: padding, every key visible (Enter on a key's cell blocks it)",
                                "掩码：填充，所有键都可见（在某个键的格子上按回车即可屏蔽它）"},
    [VS_TITLE_EDITED] = {"  (numbers changed)", "（数字已改动）"},
    [VS_SAVED_DROPPED] = {"saved as %s; texts that no longer apply were left out", "已另存为 %s；不再适用的讲解已略去"},
    [VS_ABOUT_ORIGINAL] = {"About the lesson before its numbers were changed: ", "以下讲解针对数字改动之前的课程："},
    /* after the narration written from the step */
    [VS_TEXT_NO_LONGER] = {" (The lesson's text for this step does not hold for these numbers.)",
                           "（课程对这一步的讲解不适用于现在的数字。）"},
    [VS_TEXT_NO_LONGER_BECAUSE] = {" (The lesson's text for this step does not hold for these numbers: %s.)",
                                   "（课程对这一步的讲解不适用于现在的数字：%s。）"},
    [VS_CLAIM_ROW_MAX] = {"it says %s's largest weight goes to %s; now it goes to %s",
                          "讲解说%s最大的注意力权重给了%s，现在给了%s"},
    [VS_CLAIM_TOKEN] = {"it is written for token %d being %s; it is now %s",
                        "讲解写的是第 %d 个词元为%s的情形，现在它是%s"},
    [VS_NOTICE_HISTORY_FULL] = {"the undo history is full: the oldest %s change(s) can no longer be undone",
                                "撤销记录已满：最早的 %s 步改动已无法撤销"},
    [VS_NOTICE_RELOAD_FAILED] = {"reload failed, keeping the old lesson: %s", "重新载入失败，仍使用原来的课程：%s"},
    [VS_NOTICE_SAVED] = {"saved %s", "已保存：%s"},
    [VS_NOTICE_SAVE_FAILED] = {"the frame was not saved: %s", "画面未能保存：%s"},
    [VS_NOTICE_RELOADED] = {"reloaded %s", "已重新载入：%s"},
    [VS_NOTICE_SINGLE_UNAVAILABLE] = {"single-head view unavailable: %s", "单头视图不可用：%s"},
    [VS_NOTICE_COMPARE_ONE_HEAD] = {"This lesson has one head: its single-head and multi-head views are the same%s",
                                    "本课只有一个头，单头视图与多头视图完全相同，无需对比%s"},
    [VS_COMPARE_SINGLE] = {"single head (h = 1, d_k = %d)", "单头视图（h = 1，d_k = %d）"},
    [VS_COMPARE_MULTI] = {"multi-head (h = %d, d_k = %d)", "多头视图（h = %d，d_k = %d）"},
    [VS_PANE_SEP] = {": ", "："},
    [VS_OP_MASK] = {"mask →", "掩码 →"},
    [VS_DEFAULT_NARRATION] = {"%s (%d × %d): %s.", "%s（%d × %d）：%s。"},
    [VS_EXPLAIN_MORE_TERMS] = {" + …  (%d terms)", " + …（共 %d 项）"},
    /* every ordinal counts from 1, as the drawn labels do */
    [VS_EXPLAIN_SPLIT_COLUMN] = {", %d]  (head %d's column %d of %d)", ", %d]（头 %d 的第 %d 列，共 %d 列）"},
    [VS_EXPLAIN_ADDITIVE_ROW] = {"\n= hidden[%zu] · v_a  (row (%d − 1)·n_k + %d)\n",
                                 "\n= hidden[%zu] · v_a（第 (%d − 1)·n_k + %d 行）\n"},
    [VS_EXPLAIN_MASKED_BLOCKED] = {"\n%s: the mask is 0 here, so the score becomes the fill value",
                                   "\n%s：这里的掩码是 0，分数被换成填充值"},
    [VS_EXPLAIN_MASKED_KEPT] = {"\n= the scaled score (the mask is 1 here)", "\n= 缩放后的分数（这里的掩码是 1）"},
    [VS_EXPLAIN_MASKED_KEPT_RAW] = {"\n= the score, not yet scaled (the mask is 1 here)",
                                    "\n= 尚未缩放的分数（这里的掩码是 1）"},
    [VS_EXPLAIN_ROW_BLOCKED] = {"\nevery key of this row is blocked: all weights are 0",
                                "\n这一行的键全部被屏蔽：权重全为 0"},
    [VS_EXPLAIN_WEIGHT_COLUMN] = {"\nmultiplies feature %d of each token into %s's column %d (head %d's column %d)",
                                  "\n与每个词元的第 %d 个特征相乘，计入 %s 的第 %d 列（头 %d 的第 %d 列）"},
    /* the same two in column notation, where the projection is transposed */
    [VS_EXPLAIN_SPLIT_ROW] = {"  (head %d's row %d of %d)", "（头 %d 的第 %d 行，共 %d 行）"},
    [VS_EXPLAIN_WEIGHT_ROW] = {"\nmultiplies feature %d of each token into %s's row %d (head %d's row %d)",
                               "\n与每个词元的第 %d 个特征相乘，计入 %s 的第 %d 行（头 %d 的第 %d 行）"},
    [VS_EXPLAIN_WEIGHT_KV_COLUMN] =
        {"\nmultiplies feature %d of each token into %s's column %d (K/V head %d's column %d)",
         "\n与每个词元的第 %d 个特征相乘，计入 %s 的第 %d 列（K/V 头 %d 的第 %d 列）"},
    [VS_EXPLAIN_WEIGHT_KV_ROW] = {"\nmultiplies feature %d of each token into %s's row %d (K/V head %d's row %d)",
                                  "\n与每个词元的第 %d 个特征相乘，计入 %s 的第 %d 行（K/V 头 %d 的第 %d 行）"},
    [VS_KV_SHARED] = {" K/V head %d: query heads %s read it (%d K/V heads for %d query heads).",
                      "K/V 头 %d 由查询头 %s 共用（%d 个 K/V 头供 %d 个查询头使用）。"},
    [VS_TOKEN] = {"%s", "「%s」"},
    [VS_ROW_SEES_NOTHING] = {"no token (the row is fully masked and sees nothing)",
                             "无（这一行被完全屏蔽，看不到任何词元）"},
    [VS_ROW_UNIFORM] = {"every key alike (uniform)", "每个键（均匀分布）"},
    [VS_TOKEN_LIST_SEP] = {", ", ""},
    [VS_TOKEN_NEXT] = {" %s", "「%s」"},
    [VS_TOKENS_MORE] = {" …", "…"},
    [VS_LARGEST_WEIGHTS] = {" Each query's largest weight: ", "每个查询最大的注意力权重："},
    /* %s: the query, the keys (quoted in Chinese), the weight */
    [VS_LARGEST_WEIGHT] = {"%s → %s (%s)", "「%s」→%s（%s）"},
    [VS_LARGEST_UNIFORM] = {"%s: uniform, %s each", "「%s」：均匀分布，各 %s"},
    /* between the queries of a list whose items may list tied keys */
    [VS_LIST_SEP] = {"; ", "；"},
    [VS_LIST_CUT] = {"; …", "……"},
    [VS_FULL_STOP] = {".", "。"},
    [VS_NUMBERS_HIDDEN] = {"Cells too small for their numbers: hover a cell, or zoom with the wheel",
                           "单元格太小，放不下数值：把鼠标移到单元格上，或用滚轮放大"},
    [VS_NUMBERS_HIDDEN_PAPER] = {"Cells too small for their numbers at this size",
                                 "在这个尺寸下，单元格太小，放不下数值"},
    [VS_RESULT_ALONE] = {"The result alone: press C for its operands",
                         "只画出结果，以便显示数值；按 C 看参与运算的矩阵"},
    [VS_RESULT_ALONE_PAPER] = {"The result alone, so that its numbers show", "只画出结果，以便显示数值"},
    [VS_PREPARING] = {"Computing step %d…", "正在计算第 %d 步……"},
    [VS_NOTICE_INK] = {"ink: draw with the mouse or a finger; X clears this step's ink, I ends",
                       "墨迹：用鼠标或手指书写；X 清除本步的墨迹，再按 I 结束"},
    [VS_NOTICE_SPOTLIGHT] = {"spotlight: the pointer lights its surroundings; G ends",
                             "聚光灯：只照亮指针周围；再按 G 结束"},
    [VS_NOTICE_LASER] = {"laser pointer; Z ends", "激光笔；再按 Z 结束"},
    [VS_NOTICE_TOOL_OFF] = {"pointer: hover and click", "指针：悬停与点击"},
    [VS_NOTICE_TEXT_SIZE] = {"text %s", "字号 %s"},
    [VS_NOTICE_UNSAVED] = {"unsaved changes: Ctrl+S saves, Q again quits", "修改尚未保存：按 Ctrl+S 保存，再按 Q 退出"},
    [VS_NOTICE_UNSAVED_CLOSE] = {"unsaved changes: Ctrl+S saves, closing the window again quits",
                                 "修改尚未保存：按 Ctrl+S 保存，再次关闭窗口即退出"},
    [VS_NOTICE_RECOVERY_OFFER] = {"This lesson has unsaved edits from last time (%s): Y restores them, D discards them",
                                  "这节课有上次未保存的修改（%s）：按 Y 恢复，按 D 丢弃"},
    [VS_NOTICE_RECOVERED] = {"restored the unsaved edits from %s (Ctrl+Z undoes)",
                             "已从 %s 恢复上次未保存的修改（Ctrl+Z 可撤销）"},
    [VS_NOTICE_RECOVERY_DISCARDED] = {"discarded the unsaved edits of last time", "已丢弃上次未保存的修改"},
    [VS_NOTICE_RECOVERY_FAILED] = {"the unsaved edits could not be kept on disk: %s", "未保存的修改无法写入磁盘：%s"},
    [VS_NOTICE_RECOVERY_REFUSED] = {"the unsaved edits of last time cannot be restored: %s",
                                    "无法恢复上次未保存的修改：%s"},
};

const char *const view_mode_names[VIEW_MODE_COUNT] = {"multi", "single", "compare"};
const char *const view_theme_names[VIEW_THEME_COUNT] = {"light", "dark", "projector"};
const char *const view_weight_scale_names[VIEW_WEIGHTS_COUNT] = {"unit", "row", "log"};
const char *const view_notation_names[VIEW_NOTATION_COUNT] = {"row", "column"};

int view_name_index(const char *const *names, int count, const char *name)
{
    for (int i = 0; name && i < count; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

const char *view_string(ViewString id, LessonLang lang)
{
    if ((int)id < 0 || id >= VS_STRING_COUNT) return "";
    if ((int)lang < 0 || lang >= LESSON_LANG_COUNT) lang = LESSON_EN;
    return ui_strings[id][lang];
}

const char *view_weight_scale_text(const View *v)
{
    int col = v->notation == VIEW_NOTATION_COLUMN;
    switch (v->weight_scale) {
    case VIEW_WEIGHTS_ROW:
        return view_string(col ? VS_WEIGHTS_COLUMN : VS_WEIGHTS_ROW, v->lang);
    case VIEW_WEIGHTS_LOG:
        return view_string(VS_WEIGHTS_LOG, v->lang);
    default:
        return view_string(VS_WEIGHTS_UNIT, v->lang);
    }
}

const char *view_weight_scale_top(const View *v)
{
    return view_string(v->notation == VIEW_NOTATION_COLUMN ? VS_COLUMN_MAX : VS_ROW_MAX, v->lang);
}

const char *view_weight_scale_name(ViewWeightScale scale)
{
    return view_weight_scale_names[(unsigned)scale < VIEW_WEIGHTS_COUNT ? scale : 0];
}

int view_weight_scale_from_name(const char *name)
{
    return view_name_index(view_weight_scale_names, VIEW_WEIGHTS_COUNT, name);
}

const char *view_notation_name(ViewNotation notation)
{
    return view_notation_names[(unsigned)notation < VIEW_NOTATION_COUNT ? notation : 0];
}

int view_notation_from_name(const char *name)
{
    return view_name_index(view_notation_names, VIEW_NOTATION_COUNT, name);
}
