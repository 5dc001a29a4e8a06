/* view.c: the step timeline, the animation clock, selection and mode. Pure
 * state over the engine's traces; no SDL. */
#include "view.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("narrate.h")
#include "narrate.h"
#define VIEW_HAVE_NARRATE 1
#endif
#endif

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    lesson_vformat(err, errlen, fmt, ap);
    va_end(ap);
}

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Marks a visible change: a revision no View in the process had before. */
static void touch(View *v)
{
    static atomic_ulong next_revision = 1;
    v->revision = atomic_fetch_add(&next_revision, 1);
}

void view_touch(View *v)
{
    touch(v);
}

/* Appends to a fixed buffer, always NUL-terminated; returns the new
 * length, or len - 1 once the buffer is full (the text then ends in "…",
 * cut at a character, and nothing more is appended). */
static size_t cat(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    if (at >= len) return at;
    va_list ap;
    va_start(ap, fmt);
    int cut = lesson_vformat(buf + at, len - at, fmt, ap);
    va_end(ap);
    return cut ? len - 1 : at + strlen(buf + at);
}

/* ---- what the view knows of each kind of step ---- */

typedef struct FormulaBuilder FormulaBuilder;
/* Writes step s's formula of dot attention, the part it computes highlighted
 * (col: in column notation). */
typedef void (*FormulaFn)(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col);
/* Appends to buf at `at` the lines that say how cell (r, c) of step s of t
 * was computed; returns the new length. */
typedef size_t (*ExplainFn)(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at);
/* Appends to buf at `at` what the narration written from step s says after
 * its first sentence; returns the new length. */
typedef size_t (*DescribeFn)(const View *v, const AttnTrace *t, const AttnStep *s, char *buf, size_t len, size_t at);

/* Which group of the timeline a kind of step joins. */
typedef enum KindPhase {
    PHASE_HEAD,        /* its head's (additive attention: weights and context) */
    PHASE_INPUTS,      /* inputs and weights */
    PHASE_PROJECTIONS, /* Q, K, V */
    PHASE_SCORING,     /* additive attention's scores (dot attention: its head's) */
    PHASE_OUTPUT,      /* concat and output */
} KindPhase;

/* The part of its formula a kind of step computes, highlighted in the bar. */
typedef enum FormulaPart {
    PART_NONE,
    PART_SCORES,  /* Q·Kᵀ; additive: e_ij */
    PART_SCALED,  /* ÷ the scale, with the divisor written out */
    PART_MASKED,  /* + M */
    PART_WEIGHTS, /* softmax(...) */
    PART_HEAD,    /* softmax(...) · V; additive: the context */
    PART_HIDDEN,  /* additive: tanh(...) */
    PART_CONCAT,  /* Concat(head₁, ...) */
    PART_OUTPUT,  /* · W_O + b_O */
} FormulaPart;

/* Whether a kind's cells show the mask (are drawn blocked where it blocks). */
typedef enum KindMask {
    MASK_NOT_SHOWN,
    MASK_SHOWN,
    MASK_SHOWN_AFTER_MASKING, /* when the lesson masks before this step (seed 003's order) */
} KindMask;

typedef struct ViewKind {
    double seconds;                             /* its animation; 0: shown at once */
    KindPhase phase;                            /* its group on the timeline */
    const char *text[LESSON_LANG_COUNT];        /* what it is, in the narration written from the step */
    const char *text_column[LESSON_LANG_COUNT]; /* the same in column notation where it differs; NULL: text */
    FormulaFn formula;                          /* its formula in dot attention; NULL: its name */
    FormulaPart part;                           /* what it computes of its formula */
    ExplainFn explain;                          /* how a cell was computed; NULL: its value alone */
    DescribeFn describe;                        /* what the narration written from it adds; NULL: nothing */
    KindMask mask;
} ViewKind;

static const ViewKind *view_kind(int kind);

/* ---- the user-interface strings ---- */

static const char *const ui_strings[VS_STRING_COUNT][LESSON_LANG_COUNT] = {
    [VS_STEP] = {"step", "步骤"},
    [VS_OF] = {"of", "/"},
    [VS_HEAD] = {"head", "头"},
    [VS_MODE_MULTI] = {"multi-head", "多头"},
    [VS_MODE_SINGLE] = {"single head", "单头"},
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
    [VS_SINGLE_TITLE] = {"single head (d_k = h·d_k)", "单头（d_k = h·d_k）"},
    [VS_MULTI_TITLE] = {"multi-head", "多头"},
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
    [VS_ABOUT_ORIGINAL] = {"About the lesson before its numbers were changed: ", "以下说的是改动数字之前的原课程："},
    [VS_TEXT_NO_LONGER] = {"(The lesson's text for this step does not hold for these numbers.)",
                           "（课程对这一步的讲解不适用于现在的数字。）"},
    [VS_NOTICE_HISTORY_FULL] = {"the undo history is full: the oldest %s change(s) can no longer be undone",
                                "撤销记录已满：最早的 %s 步改动已无法撤销"},
    [VS_NOTICE_RELOAD_FAILED] = {"reload failed, keeping the old lesson: %s", "重新载入失败，仍使用原来的课程：%s"},
    [VS_NOTICE_SAVED] = {"saved %s", "已保存：%s"},
    [VS_NOTICE_SAVE_FAILED] = {"the frame was not saved: %s", "画面未能保存：%s"},
    [VS_NOTICE_RELOADED] = {"reloaded %s", "已重新载入：%s"},
    [VS_NOTICE_SINGLE_UNAVAILABLE] = {"single-head view unavailable: %s", "单头视图不可用：%s"},
    [VS_NOTICE_COMPARE_ONE_HEAD] = {"This lesson has one head: its single-head and multi-head views are the same%s",
                                    "本课只有一个头，单头视图与多头视图完全相同，无需对比%s"},
    [VS_OP_MASK] = {"mask →", "掩码 →"},
    [VS_DEFAULT_NARRATION] = {"%s (%d × %d): %s.", "%s（%d × %d）：%s。"},
    [VS_EXPLAIN_MORE_TERMS] = {" + …  (%d terms)", " + …（共 %d 项）"},
    [VS_EXPLAIN_SPLIT_COLUMN] = {", %d]  (head %d, its column %d of 0…%d)", ", %d]（头 %d 的第 %d 列，列号 0…%d）"},
    [VS_EXPLAIN_ADDITIVE_ROW] = {"\n= hidden[%zu] · v_a  (row %d·n_k + %d)\n",
                                 "\n= hidden[%zu] · v_a（第 %d·n_k + %d 行）\n"},
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
    [VS_EXPLAIN_SPLIT_ROW] = {"  (head %d, its row %d of 0…%d)", "（头 %d 的第 %d 行，行号 0…%d）"},
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
    [VS_TOKEN_LIST_SEP] = {", ", ""},
    [VS_TOKEN_NEXT] = {" %s", "「%s」"},
    [VS_TOKENS_MORE] = {" …", "…"},
    [VS_LARGEST_WEIGHTS] = {" Each query's largest weight: ", "每个查询最大的权重："},
    /* %s: the query, the key, the weight */
    [VS_LARGEST_WEIGHT] = {"%s → %s %s", "「%s」→「%s」（%s）"},
    [VS_LIST_SEP] = {", ", "，"},
    [VS_LIST_CUT] = {", …", "……"},
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

const char *view_kind_text(AttnStepKind kind, ViewNotation notation, LessonLang lang)
{
    if ((unsigned)kind >= ATTN_STEP_KIND_COUNT) return "";
    if ((int)lang < 0 || lang >= LESSON_LANG_COUNT) lang = LESSON_EN;
    const ViewKind *k = view_kind(kind);
    return notation == VIEW_NOTATION_COLUMN && k->text_column[lang] ? k->text_column[lang] : k->text[lang];
}

/* ---- lifetime ---- */

static void update_formula(View *v);
static char **build_pair_labels(const Lesson *lesson);

/* The single-head trace of the lesson: one head of width heads·d_k. */
static AttnTrace *build_single(const Lesson *lesson, char *err, size_t errlen)
{
    char msg[400];
    AttnConfig one;
    if (view_single_config(&lesson->cfg, &one) != 0) {
        set_err(err, errlen, "grouped K/V heads (kv_heads) have no one-head form: K and V are narrower than Q");
        return NULL;
    }
    AttnTrace *s = attn_trace_create(&one, msg, sizeof msg);
    if (!s) set_err(err, errlen, "%s", msg);
    return s;
}

/* The lesson's traces (the single-head one only when single is not NULL:
 * when its numbers overflow where each head's do not, *single is NULL and
 * single_err says why) and, for additive lessons, the labels of the rows of
 * `hidden`. 0, or -1 with a message (nothing is then owned). */
static int build_traces(const Lesson *lesson, AttnTrace **trace, AttnTrace **single, char *single_err,
                        size_t single_errlen, char ***pair_labels, char *err, size_t errlen)
{
    char msg[512];
    AttnTrace *t = attn_trace_create(&lesson->cfg, msg, sizeof msg);
    if (!t) {
        set_err(err, errlen, "%s", msg);
        return -1;
    }
    if (single) *single = build_single(lesson, single_err, single_errlen);
    *trace = t;
    *pair_labels = build_pair_labels(lesson);
    return 0;
}

/* For additive lessons, the labels of the rows of `hidden`, owned (one
 * block); NULL otherwise, or when memory runs out. */
static char **build_pair_labels(const Lesson *lesson)
{
    if (lesson->cfg.attention == ATTN_ADDITIVE && lesson->tokens) {
        /* the rows of `hidden` are (query, key) pairs: label them "我 ; s1" */
        int nq = lesson->cfg.n_q, nk = lesson->cfg.n_k;
        char *const *keys = lesson->n_source_tokens ? lesson->source_tokens : lesson->tokens;
        size_t n = (size_t)nq * (size_t)nk, bytes = 0;
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) bytes += strlen(lesson->tokens[i]) + strlen(keys[j]) + 4;
        char **lab = malloc(n * sizeof *lab + bytes);
        if (lab) {
            char *p = (char *)(lab + n);
            for (int i = 0; i < nq; i++)
                for (int j = 0; j < nk; j++) {
                    size_t len = strlen(lesson->tokens[i]) + strlen(keys[j]) + 4;
                    snprintf(p, len, "%s ; %s", lesson->tokens[i], keys[j]);
                    lab[(size_t)i * (size_t)nk + (size_t)j] = p;
                    p += len;
                }
        }
        return lab;
    }
    return NULL;
}

static atomic_ulong next_view_id = 1;

static void view_start(View *v, const Lesson *lesson);

int view_init(View *v, const Lesson *lesson, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (!lesson) {
        set_err(err, errlen, "no lesson");
        return -1;
    }
    char msg[600];
    /* without the single-head trace the lesson still opens; single and
     * compare mode are then refused with single_error */
    if (build_traces(lesson, &v->trace, &v->single, v->single_error, sizeof v->single_error, &v->pair_labels, msg,
                     sizeof msg) != 0) {
        set_err(err, errlen, "%s: %s", lesson->path ? lesson->path : "lesson", msg);
        memset(v, 0, sizeof *v);
        return -1;
    }
    view_start(v, lesson);
    return 0;
}

/* The state every new View starts in, its traces set. */
static void view_start(View *v, const Lesson *lesson)
{
    v->lesson = lesson;
    v->id = atomic_fetch_add(&next_view_id, 1);
    v->layout_id = v->id;
    v->head = 1;
    v->lang = LESSON_EN;
    v->mode = VIEW_MULTI;
    v->theme = VIEW_THEME_LIGHT;
    v->text_scale = 1.0f;
    v->speed = 1.0;
    v->hover_step = -1;
    v->hover_row = v->hover_col = -1;
    v->sel_query = v->sel_key = -1;
    v->zoom = 1.0f;
    view_goto(v, 0);
}

/* ---- the trace computed on a worker thread ---- */

/* Below this many bytes of numbers a trace is computed before the window
 * opens: a few milliseconds, which a worker would not save. */
#define VIEW_BACKGROUND_MIN_BYTES ((size_t)4 << 20)

struct ViewWorker {
    pthread_t thread;
    AttnTrace *trace; /* the View's, being computed */
    Lesson lesson;    /* a copy of the View's lesson, which edits may change meanwhile */
    atomic_int done;  /* attn_trace_compute has returned: rc and err are set */
    int joined;       /* the thread has been joined */
    int rc;
    char err[512];
};

static void *worker_main(void *arg)
{
    ViewWorker *w = arg;
    w->rc = attn_trace_compute(w->trace, &w->lesson.cfg, w->err, sizeof w->err);
    atomic_store_explicit(&w->done, 1, memory_order_release);
    return NULL;
}

/* Waits for the worker (asked to stop first when cancel: attn_trace_cancel);
 * what attn_trace_compute returned (its message in the worker). The worker
 * stays, for view_poll to report. */
static int worker_join(View *v, int cancel)
{
    ViewWorker *w = v->worker;
    if (!w) return 0;
    if (!w->joined) {
        if (cancel) attn_trace_cancel(w->trace);
        pthread_join(w->thread, NULL);
        w->joined = 1;
    }
    return w->rc;
}

/* Stops and joins the worker, and frees it. */
static void worker_free(View *v)
{
    if (!v->worker) return;
    worker_join(v, 1);
    lesson_free(&v->worker->lesson);
    free(v->worker);
    v->worker = NULL;
}

/* A lesson's texts may quote any step: then a step waits for all. */
static int lesson_has_texts(const Lesson *l)
{
    if (l->n_narration > 0) return 1;
    for (int i = 0; i < LESSON_LANG_COUNT; i++)
        if (l->summary.text[i] && l->summary.text[i][0]) return 1;
    return 0;
}

int view_step_ready(const View *v, const AttnTrace *trace, int step)
{
    if (!trace || step < 0 || step >= trace->n_steps) return 0;
    int ready = attn_trace_ready(trace);
    if (ready == trace->n_steps) return 1;
    return step < ready && !lesson_has_texts(v->lesson);
}

int view_preparing(const View *v)
{
    return v->worker && !atomic_load_explicit(&v->worker->done, memory_order_acquire);
}

int view_poll(View *v, char *err, size_t errlen)
{
    if (!v->worker) return 0;
    int ready = attn_trace_ready(v->trace);
    if (ready != v->ready_seen) {
        v->ready_seen = ready;
        touch(v);
    }
    if (!atomic_load_explicit(&v->worker->done, memory_order_acquire)) return 0;
    int rc = worker_join(v, 0);
    if (rc != 0) set_err(err, errlen, "%s: %s", v->lesson->path ? v->lesson->path : "lesson", v->worker->err);
    worker_free(v);
    touch(v);
    return rc;
}

int view_init_background(View *v, const Lesson *lesson, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (!lesson) {
        set_err(err, errlen, "no lesson");
        return -1;
    }
    const char *path = lesson->path ? lesson->path : "lesson";
    char msg[512];
    AttnTrace *t = attn_trace_plan(&lesson->cfg, msg, sizeof msg);
    if (!t) {
        set_err(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    ViewWorker *w = t->data_bytes >= VIEW_BACKGROUND_MIN_BYTES ? calloc(1, sizeof *w) : NULL;
    if (w && lesson_copy(&w->lesson, lesson) != 0) {
        free(w);
        w = NULL;
    }
    if (w) {
        w->trace = t;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            lesson_free(&w->lesson);
            free(w);
            w = NULL;
        }
    }
    /* small, or no thread to be had: computed here */
    if (!w && attn_trace_compute(t, &lesson->cfg, msg, sizeof msg) != 0) {
        attn_trace_destroy(t);
        set_err(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    v->worker = w;
    v->trace = t;
    v->single_stale = 1; /* built when a mode shows it */
    v->pair_labels = build_pair_labels(lesson);
    v->ready_seen = attn_trace_ready(t);
    view_start(v, lesson);
    return 0;
}

void view_free(View *v)
{
    if (!v) return;
    worker_free(v);
    attn_trace_destroy(v->trace);
    attn_trace_destroy(v->single);
    free(v->pair_labels);
    free(v->edit_before);
    memset(v, 0, sizeof *v);
}

/* After a recompute in multi-head mode the single-head trace is built when
 * a mode that shows it is chosen. 0, or -1 with a notice. */
static int ensure_single(View *v)
{
    if (!v->single_stale) return 0;
    /* NULL when its numbers overflow: view_set_mode then says so (single_error) */
    AttnTrace *s = build_single(v->lesson, v->single_error, sizeof v->single_error);
    if (v->hover_trace == v->single) v->hover_trace = NULL, v->hover_step = -1;
    attn_trace_destroy(v->single);
    v->single = s;
    v->single_stale = 0;
    v->id = atomic_fetch_add(&next_view_id, 1); /* what pointed into the old trace (hit boxes, caches) goes */
    return 0;
}

int view_recompute(View *v, char *err, size_t errlen)
{
    AttnTrace *t, *single = NULL;
    char **labels;
    /* the worker finishes the trace this one replaces, so that a refused
     * change leaves the View as it was (a failure of the worker stays for
     * view_poll to report, and refuses the change) */
    if (worker_join(v, 0) != 0) {
        set_err(err, errlen, "%s", v->worker->err);
        return -1;
    }
    worker_free(v);
    /* in multi-head mode the single-head trace waits until it is shown */
    int lazy = v->mode == VIEW_MULTI;
    char single_err[sizeof v->single_error];
    if (build_traces(v->lesson, &t, lazy ? NULL : &single, single_err, sizeof single_err, &labels, err, errlen) != 0)
        return -1;
    if (!lazy && !single) { /* shown now, so it must compute */
        attn_trace_destroy(t);
        free(labels);
        set_err(err, errlen, "the single-head trace: %s", single_err);
        return -1;
    }
    if (lazy) single = v->single;
    const AttnStep *cur = view_current(v);
    size_t n = (size_t)cur->rows * (size_t)cur->cols;
    float *before = malloc(sizeof(float) * (n ? n : 1)); /* (rows, cols) of the current step, before the change */
    if (before) memcpy(before, cur->data, sizeof(float) * n);
    int rows = cur->rows, cols = cur->cols, step = v->step, head = v->head;
    const AttnStep *same = attn_trace_find_role(v->mode == VIEW_SINGLE ? single : t, (AttnRole)cur->role, cur->head);
    if (!same) same = attn_trace_find(v->mode == VIEW_SINGLE ? single : t, cur->kind, cur->head);
    /* the hovered cell is in one of the old traces: the same cell of the new one */
    const AttnTrace *hov = v->hover_trace == v->trace ? t : v->hover_trace == v->single ? single : NULL;
    if (!hov || v->hover_step >= hov->n_steps || v->hover_row >= hov->steps[v->hover_step].rows ||
        v->hover_col >= hov->steps[v->hover_step].cols) {
        hov = NULL;
        v->hover_step = -1;
    }
    v->hover_trace = hov;
    v->hover_label = NULL; /* it pointed into the lesson's tokens or the pair labels, which the change replaced */
    if (v->sel_query >= t->cfg.n_q) v->sel_query = -1; /* a removed token */
    if (v->sel_key >= t->cfg.n_k) v->sel_key = -1;
    int same_shape = t->n_steps == v->trace->n_steps;
    for (int s = 0; same_shape && s < t->n_steps; s++)
        same_shape = t->steps[s].rows == v->trace->steps[s].rows && t->steps[s].cols == v->trace->steps[s].cols;
    /* the single-head trace goes first, so that the engine keeps the larger
     * block as its spare for the next recompute */
    if (!lazy) attn_trace_destroy(v->single);
    v->single_stale = lazy;
    attn_trace_destroy(v->trace);
    free(v->pair_labels);
    v->trace = t;
    v->single = single;
    v->pair_labels = labels;
    v->id = atomic_fetch_add(&next_view_id, 1);
    if (!same_shape) v->layout_id = v->id;
    const AttnTrace *now = view_trace(v);
    int to = same ? attn_trace_index(now, same) : clampi(step, 0, now->n_steps - 1);
    if (to != step) view_goto(v, to);
    v->step = to;
    v->t = view_step_duration(v, to);
    v->rewinding = 0;
    if (v->mode != VIEW_SINGLE) v->head = clampi(head, 1, view_head_count(v));
    update_formula(v);
    free(v->edit_before);
    v->edit_before = NULL;
    const AttnStep *s = view_current(v);
    if (before && s->rows == rows && s->cols == cols) {
        v->edit_before = before;
        v->edit_step = to;
        v->edit_t = 0.0;
    } else {
        free(before);
    }
    touch(v);
    return 0;
}

double view_edit_progress(const View *v)
{
    if (!v->edit_before || v->edit_step != v->step) return 1.0;
    double p = v->edit_t / VIEW_EDIT_SECONDS;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

int view_single_config(const AttnConfig *cfg, AttnConfig *one)
{
    if (cfg->attention == ATTN_DOT && attn_kv_heads(cfg) != cfg->heads) return -1;
    *one = *cfg;
    if (one->attention == ATTN_DOT) {
        one->d_k = one->heads * one->d_k;
        one->d_v = one->heads * one->d_v;
        one->heads = 1;
        one->kv_heads = 0;
    }
    return 0;
}

/* ---- the timeline ---- */

const AttnTrace *view_trace(const View *v)
{
    return v->mode == VIEW_SINGLE ? v->single : v->trace;
}

const AttnStep *view_current(const View *v)
{
    const AttnTrace *t = view_trace(v);
    return &t->steps[clampi(v->step, 0, t->n_steps - 1)];
}

int view_step_count(const View *v)
{
    return view_trace(v)->n_steps;
}

double view_step_duration(const View *v, int step)
{
    const AttnTrace *t = view_trace(v);
    if (step < 0 || step >= t->n_steps) return 0.0;
    return view_kind(t->steps[step].kind)->seconds;
}

double view_progress(const View *v)
{
    double d = view_step_duration(v, v->step);
    if (d <= 0.0) return 1.0;
    double p = v->t / d;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

int view_at_end(const View *v)
{
    if (v->step < view_step_count(v) - 1) return 0;
    if (v->t < view_step_duration(v, v->step)) return 0;
    return !v->playing || v->dwell >= VIEW_DWELL_SECONDS;
}

int view_is_busy(const View *v)
{
    /* a step still being computed holds its animation and autoplay */
    if (!view_step_ready(v, view_trace(v), v->step)) return v->notice_left > 0 || view_edit_progress(v) < 1.0;
    if (v->rewinding) return 1;
    if (view_edit_progress(v) < 1.0) return 1;
    if (v->t < view_step_duration(v, v->step)) return 1;
    if (v->playing && !view_at_end(v)) return 1;
    return v->notice_left > 0;
}

/* A step numbered by K/V head rather than query head: the keys and values
 * of grouped K/V heads (kv_heads), which several query heads read. */
static int is_kv_step(const AttnConfig *c, const AttnStep *s)
{
    AttnRole r = (AttnRole)s->role;
    return c->attention == ATTN_DOT && c->kv_heads > 0 && s->head > 0 &&
           (r == ATTN_ROLE_K || r == ATTN_ROLE_V || r == ATTN_ROLE_K_CACHE || r == ATTN_ROLE_V_CACHE);
}

void view_goto(View *v, int step)
{
    const AttnTrace *t = view_trace(v);
    int from = v->step;
    v->step = clampi(step, 0, t->n_steps - 1);
    if (v->step != from) {
        free(v->edit_before); /* changed cells are marked until the next step */
        v->edit_before = NULL;
    }
    v->t = 0.0;
    v->dwell = 0.0;
    v->rewinding = 0;
    const AttnStep *s = &t->steps[v->step];
    /* a grouped K/V head's step keeps the selected query head when it reads it, else selects its first */
    if (s->head > 0 && t == v->trace)
        v->head = !is_kv_step(&t->cfg, s) ? s->head
                  : attn_kv_head(&t->cfg, v->head) == s->head
                      ? v->head
                      : (s->head - 1) * (t->cfg.heads / attn_kv_heads(&t->cfg)) + 1;
    v->zoom = 1.0f;
    v->pan_x = v->pan_y = 0.0f;
    v->dragging = 0;
    v->hover_step = -1;
    update_formula(v);
    touch(v);
}

void view_finish(View *v)
{
    v->t = view_step_duration(v, v->step);
    v->dwell = 0.0;
    v->rewinding = 0;
    touch(v);
}

void view_next(View *v)
{
    if (v->t < view_step_duration(v, v->step)) {
        view_finish(v);
        return;
    }
    if (v->step + 1 < view_step_count(v)) view_goto(v, v->step + 1);
}

/* The previous step in its final state (the first step stays, at t = 0). */
static void land_on_previous(View *v)
{
    if (v->step > 0) {
        view_goto(v, v->step - 1);
        view_finish(v);
    } else {
        view_goto(v, 0);
    }
}

void view_prev(View *v)
{
    v->playing = 0; /* going back: autoplay would turn round at the end of the rewind */
    touch(v);
    if (!v->rewinding && v->t > 0 && view_step_duration(v, v->step) > 0) {
        v->rewinding = 1; /* view_advance runs the animation backwards */
        return;
    }
    land_on_previous(v); /* at the step's start, or ← again while rewinding */
}

void view_home(View *v)
{
    view_goto(v, 0);
}

void view_end(View *v)
{
    view_goto(v, view_step_count(v) - 1);
    view_finish(v);
}

void view_advance(View *v, double dt)
{
    if (dt < 0) dt = 0;
    if (v->edit_before && v->edit_t < VIEW_EDIT_SECONDS) {
        v->edit_t += dt;
        touch(v);
    }
    if (v->notice_left > 0) {
        v->notice_left -= dt;
        if (v->notice_left <= 0) {
            v->notice_left = 0;
            v->notice_detail[0] = '\0';
            v->notice_is_error = 0;
            touch(v);
        }
    }
    if (!view_step_ready(v, view_trace(v), v->step)) return; /* held until it is computed */
    if (v->rewinding) {
        v->t -= dt * v->speed;
        touch(v);
        if (v->t <= 0) land_on_previous(v);
        return;
    }
    double d = view_step_duration(v, v->step);
    if (v->t < d) {
        v->t += dt * v->speed;
        if (v->t > d) v->t = d;
        touch(v);
        return;
    }
    if (!v->playing) return;
    if (v->dwell < VIEW_DWELL_SECONDS) v->dwell += dt * v->speed;
    if (v->dwell >= VIEW_DWELL_SECONDS) {
        if (v->step + 1 < view_step_count(v))
            view_goto(v, v->step + 1);
        else
            v->dwell = VIEW_DWELL_SECONDS;
    }
}

/* ---- heads and modes ---- */

int view_head_count(const View *v)
{
    return view_lesson_head_count(v->lesson);
}

int view_lesson_head_count(const Lesson *lesson)
{
    return lesson->cfg.attention == ATTN_DOT ? lesson->cfg.heads : 1;
}

void view_set_head(View *v, int head)
{
    v->head = clampi(head, 1, view_head_count(v));
    touch(v);
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    int mine = is_kv_step(&t->cfg, s) ? attn_kv_head(&t->cfg, v->head) : v->head; /* the head's own step */
    if (t == v->trace && s->head > 0 && s->head != mine) {
        int to = view_map_step(t, v->step, t, v->head);
        if (to >= 0) {
            view_goto(v, to);
            view_finish(v);
        }
    }
}

void view_next_head(View *v)
{
    int n = view_head_count(v);
    view_set_head(v, v->head % n + 1);
}

int view_map_step(const AttnTrace *from, int step, const AttnTrace *to, int head)
{
    if (!from || !to || step < 0 || step >= from->n_steps) return -1;
    const AttnStep *s = &from->steps[step];
    /* the step of the same role, of that head when it is a head's (of the K/V head it reads when
     * the step is a grouped K/V head's) */
    int h = s->head == 0 ? 0 : clampi(head, 1, to->cfg.heads > 0 ? to->cfg.heads : 1);
    if (h > 0 && is_kv_step(&to->cfg, s)) h = attn_kv_head(&to->cfg, h);
    const AttnStep *m = attn_trace_find_role(to, (AttnRole)s->role, h);
    return m ? attn_trace_index(to, m) : -1;
}

int view_compare_step(const View *v, int step)
{
    if (!v->single) return -1;
    int m = view_map_step(v->trace, step, v->single, 1);
    if (m < 0) m = clampi(step, 0, v->single->n_steps - 1);
    return m;
}

int view_can_compare(const View *v)
{
    return v->trace->cfg.heads > 1;
}

int view_compare_refused(const View *v, const char *path, char *msg, size_t len)
{
    if (view_can_compare(v)) return 0;
    snprintf(msg, len,
             "--view compare: %s has one head (heads = 1), so its single-head and multi-head views are the same; "
             "compare needs a lesson of two heads or more",
             path ? path : "the lesson");
    return 1;
}

void view_set_mode(View *v, ViewMode mode)
{
    if ((int)mode < 0 || mode >= VIEW_MODE_COUNT || mode == v->mode) return;
    if (mode == VIEW_COMPARE && !view_can_compare(v)) {
        view_set_notice(v, VS_NOTICE_COMPARE_ONE_HEAD, "", 1);
        return;
    }
    if (mode != VIEW_MULTI && ensure_single(v) != 0) return;
    if (mode != VIEW_MULTI && !v->single) {
        view_set_notice(v, VS_NOTICE_SINGLE_UNAVAILABLE, v->single_error, 1);
        return;
    }
    const AttnTrace *from = view_trace(v);
    int step = v->step;
    v->mode = mode;
    const AttnTrace *to = view_trace(v);
    int m = from == to ? step : view_map_step(from, step, to, v->head);
    if (m < 0) m = clampi(step, 0, to->n_steps - 1);
    int keep_head = v->head;
    view_goto(v, m);
    if (to == v->single) v->head = keep_head; /* the selected head survives a visit to single */
    view_finish(v);
}

void view_toggle_single(View *v)
{
    view_set_mode(v, v->mode == VIEW_SINGLE ? VIEW_MULTI : VIEW_SINGLE);
}
void view_toggle_compare(View *v)
{
    view_set_mode(v, v->mode == VIEW_COMPARE ? VIEW_MULTI : VIEW_COMPARE);
}

void view_set_speed(View *v, double speed)
{
    if (!(speed >= VIEW_SPEED_MIN)) speed = VIEW_SPEED_MIN;
    if (speed > VIEW_SPEED_MAX) speed = VIEW_SPEED_MAX;
    v->speed = speed;
    touch(v);
}

void view_set_text_scale(View *v, float scale)
{
    if (!(scale >= VIEW_TEXT_SCALE_MIN)) scale = VIEW_TEXT_SCALE_MIN;
    if (scale > VIEW_TEXT_SCALE_MAX) scale = VIEW_TEXT_SCALE_MAX;
    v->text_scale = scale;
    touch(v);
}

void view_set_lang(View *v, LessonLang lang)
{
    v->lang = (int)lang >= 0 && lang < LESSON_LANG_COUNT ? lang : LESSON_EN;
    update_formula(v);
    touch(v);
}

void view_toggle_heads(View *v)
{
    v->hide_heads = !v->hide_heads;
    touch(v);
}

void view_toggle_lang(View *v)
{
    view_set_lang(v, v->lang == LESSON_EN ? LESSON_ZH : LESSON_EN);
}

void view_set_theme(View *v, ViewTheme theme)
{
    v->theme = (int)theme >= 0 && theme < VIEW_THEME_COUNT ? theme : VIEW_THEME_LIGHT;
    touch(v);
}

void view_next_theme(View *v)
{
    view_set_theme(v, (ViewTheme)((v->theme + 1) % VIEW_THEME_COUNT));
}

void view_set_playing(View *v, int playing)
{
    if (playing && !v->playing && view_at_end(v)) view_home(v);
    v->playing = playing != 0;
    if (v->playing && v->rewinding) view_finish(v); /* play runs forwards */
    v->dwell = 0;
    touch(v);
}

void view_toggle_play(View *v)
{
    view_set_playing(v, !v->playing);
}

void view_set_help(View *v, int shown)
{
    v->show_help = shown != 0;
    touch(v);
}

void view_set_black(View *v, int black)
{
    black = black != 0;
    if (black == v->black) return;
    if (black) {
        v->black_was_playing = v->playing;
        if (v->playing) view_set_playing(v, 0);
    } else if (v->black_was_playing) {
        view_set_playing(v, 1);
    }
    v->black = black;
    touch(v);
}

void view_set_big_text(View *v, int on)
{
    v->big_text = on != 0;
    touch(v);
}

int view_big_text_min(int height)
{
    return (height + 29) / 30;
}

/* The byte after the first sentence of text: after a full stop, an
 * exclamation or a question mark that ends the text or is followed by a
 * space (so "0.5" and "e.g" do not end one), or after "。", "！", "？". */
static size_t first_sentence(const char *text)
{
    for (size_t i = 0; text[i]; i++) {
        char c = text[i];
        if ((c == '.' || c == '!' || c == '?') && (text[i + 1] == '\0' || text[i + 1] == ' ' || text[i + 1] == '\n'))
            return i + 1;
        if (strncmp(text + i, "。", 3) == 0 || strncmp(text + i, "！", 3) == 0 || strncmp(text + i, "？", 3) == 0)
            return i + 3;
    }
    return strlen(text);
}

size_t view_big_text_caption(const View *v, char *buf, size_t len)
{
    if (!len) return 0;
    char *narr = malloc(NARRATE_MAX_STEP_TEXT);
    if (!narr) {
        buf[0] = '\0';
        return 0;
    }
    view_narration(v, narr, NARRATE_MAX_STEP_TEXT);
    /* the narration of an edited lesson may begin with a line about it: the
     * caption is the first sentence of what follows */
    const char *text = narr;
    const char *about = view_string(VS_ABOUT_ORIGINAL, v->lang);
    if (v->edited && strncmp(text, about, strlen(about)) == 0) text += strlen(about);
    size_t n = first_sentence(text);
    narr[(size_t)(text - narr) + n] = '\0';
    lesson_text_copy(buf, len, text);
    free(narr);
    return strlen(buf);
}

void view_toggle_tool(View *v, ViewTool tool)
{
    static const int said[] = {[VIEW_TOOL_NONE] = VS_NOTICE_TOOL_OFF,
                               [VIEW_TOOL_INK] = VS_NOTICE_INK,
                               [VIEW_TOOL_SPOTLIGHT] = VS_NOTICE_SPOTLIGHT,
                               [VIEW_TOOL_LASER] = VS_NOTICE_LASER};
    v->tool = v->tool == tool ? VIEW_TOOL_NONE : tool;
    view_set_notice(v, said[v->tool], NULL, 0);
}

void view_set_unsaved(View *v, int unsaved)
{
    v->unsaved = unsaved != 0; /* nothing on screen changes */
}

void view_set_fullscreen(View *v, int fullscreen)
{
    v->fullscreen = fullscreen != 0;
}

int view_quit_confirmed(const View *v)
{
    return v->notice_left > 0 && (v->notice_what == VS_NOTICE_UNSAVED || v->notice_what == VS_NOTICE_UNSAVED_CLOSE);
}

void view_set_hover_label(View *v, const char *label)
{
    if (label == v->hover_label) return;
    v->hover_label = label;
    touch(v);
}

void view_set_hover(View *v, const AttnTrace *trace, int step, int row, int col)
{
    if (!trace || step < 0) trace = NULL, step = row = col = -1;
    if (trace == v->hover_trace && step == v->hover_step && row == v->hover_row && col == v->hover_col) return;
    v->hover_trace = trace;
    v->hover_step = step;
    v->hover_row = row;
    v->hover_col = col;
    touch(v);
}

void view_set_zoom(View *v, float zoom, float pan_x, float pan_y)
{
    if (!(zoom >= 1.0f)) zoom = 1.0f;
    if (zoom > VIEW_ZOOM_MAX) zoom = VIEW_ZOOM_MAX;
    v->zoom = zoom;
    v->pan_x = zoom > 1.0f && pan_x > 0 ? pan_x : 0.0f;
    v->pan_y = zoom > 1.0f && pan_y > 0 ? pan_y : 0.0f;
    touch(v);
}

void view_set_weight_scale(View *v, ViewWeightScale scale)
{
    v->weight_scale = (unsigned)scale < VIEW_WEIGHTS_COUNT ? scale : VIEW_WEIGHTS_UNIT;
    touch(v);
}

void view_next_weight_scale(View *v)
{
    view_set_weight_scale(v, (ViewWeightScale)((v->weight_scale + 1) % VIEW_WEIGHTS_COUNT));
}

void view_set_notation(View *v, ViewNotation notation)
{
    v->notation = (unsigned)notation < VIEW_NOTATION_COUNT ? notation : VIEW_NOTATION_ROW;
    update_formula(v);
    touch(v);
}

void view_toggle_notation(View *v)
{
    view_set_notation(v, v->notation == VIEW_NOTATION_ROW ? VIEW_NOTATION_COLUMN : VIEW_NOTATION_ROW);
}

float view_weight_position(ViewWeightScale scale, float w, float row_max)
{
    if (!(w > 0.0f)) return 0.0f; /* 0, a blocked −∞ row's weight, NaN */
    float t;
    switch (scale) {
    case VIEW_WEIGHTS_ROW:
        t = row_max > 0.0f ? w / row_max : 0.0f;
        break;
    case VIEW_WEIGHTS_LOG:
        t = (log10f(w > VIEW_WEIGHTS_LOG_MIN ? w : VIEW_WEIGHTS_LOG_MIN) + VIEW_WEIGHTS_LOG_DECADES) /
            VIEW_WEIGHTS_LOG_DECADES;
        break;
    default:
        t = w;
        break;
    }
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
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

void view_select_token(View *v, int q, int k)
{
    if (q == v->sel_query && k == v->sel_key) q = k = -1;
    v->sel_query = q;
    v->sel_key = k;
    touch(v);
}

void view_set_notice(View *v, int what, const char *detail, int is_error)
{
    v->notice_what = what;
    lesson_text_copy(v->notice_detail, sizeof v->notice_detail, detail);
    v->notice_is_error = is_error;
    v->notice_left = is_error ? 15.0 : 3.0;
    touch(v);
}

size_t view_notice_text(const View *v, char *buf, size_t len)
{
    if (!len) return 0;
    buf[0] = '\0';
    if (v->notice_left <= 0) return 0;
    return cat(buf, len, 0, view_string((ViewString)v->notice_what, v->lang), v->notice_detail);
}

void view_for_saving(const View *v, View *out)
{
    *out = *v;
    out->notice_detail[0] = '\0';
    out->notice_left = 0;
    out->notice_is_error = 0;
}

/* ---- names, labels, masks ---- */

/* Appends the decimal digits of n as Unicode subscripts (₀ is U+2080). */
static size_t cat_subscript(char *buf, size_t len, size_t at, int n)
{
    char digits[16];
    snprintf(digits, sizeof digits, "%d", n);
    for (const char *d = digits; *d; d++) at = cat(buf, len, at, "\xE2\x82%c", (char)(0x80 + (*d - '0')));
    return at;
}

void view_step_title(const AttnStep *step, char *buf, size_t len)
{
    if (!len) return;
    size_t at = cat(buf, len, 0, "%s", attn_role_name((AttnRole)step->role));
    if (step->head > 0) cat_subscript(buf, len, at, step->head);
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

int view_phase(const AttnTrace *trace, int step)
{
    if (step < 0 || step >= trace->n_steps) return -1;
    const AttnStep *s = &trace->steps[step];
    int additive = trace->cfg.attention == ATTN_ADDITIVE;
    switch (view_kind(s->kind)->phase) {
    case PHASE_INPUTS:
        return 0;
    case PHASE_PROJECTIONS:
        return 1;
    case PHASE_OUTPUT:
        return 2;
    case PHASE_SCORING:
        if (additive) return 3;
        break;
    case PHASE_HEAD:
        break;
    }
    /* additive attention has no heads: its scores, then its weights and context */
    return additive ? 4 : 10 + s->head;
}

void view_phase_label(const View *v, const AttnTrace *trace, int step, char *buf, size_t len)
{
    int p = view_phase(trace, step);
    LessonLang L = v->lang;
    switch (p) {
    case 0:
        snprintf(buf, len, "%s", view_string(VS_PHASE_INPUTS, L));
        break;
    case 1:
        snprintf(buf, len, "%s", view_string(VS_PHASE_PROJ, L));
        break;
    case 2:
        snprintf(buf, len, "%s", view_string(VS_PHASE_OUT, L));
        break;
    case 3:
        snprintf(buf, len, "%s", view_string(VS_PHASE_SCORE, L));
        break;
    case 4:
        snprintf(buf, len, "%s", view_string(VS_PHASE_ATTEND, L));
        break;
    default:
        snprintf(buf, len, "%s %d", view_string(VS_PHASE_HEAD, L), p - 10);
        break;
    }
}

/* ---- formulas ---- */

struct FormulaBuilder {
    char *buf;
    size_t len, at;
    int hl_start, hl_end;
};

static void fb_add(FormulaBuilder *b, int highlight, const char *fmt, ...)
{
    if (b->at >= b->len) return;
    size_t start = b->at;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->buf + b->at, b->len - b->at, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    b->at += (size_t)n;
    if (b->at >= b->len) b->at = b->len - 1;
    if (highlight) {
        if (b->hl_start < 0) b->hl_start = (int)start;
        b->hl_end = (int)b->at;
    }
}

static void fb_sub(FormulaBuilder *b, int highlight, int n)
{
    char s[24] = "";
    cat_subscript(s, sizeof s, 0, n);
    fb_add(b, highlight, "%s", s);
}

/* Additive attention: one formula for every step past the inputs, with the
 * part the step computes highlighted. */
static void formula_additive(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    const char *y = t->cfg.cross ? "y" : "x";
    const char *ba = attn_trace_find_role(t, ATTN_ROLE_B_A, 0) ? " + b_a" : "";
    if (attn_step_kind_flags((AttnStepKind)s->kind) & ATTN_KIND_GIVEN) {
        fb_add(b, 1, "%s   (%d × %d)", s->name, col ? s->cols : s->rows, col ? s->rows : s->cols);
        return;
    }
    FormulaPart part = view_kind(s->kind)->part;
    int sc = part == PART_SCORES, hid = part == PART_HIDDEN;
    fb_add(b, sc, "e_ij = v_aᵀ · ");
    if (col)
        fb_add(b, sc || hid, "tanh(W_a · [x_i ; %s_j]%s)", y, ba);
    else
        fb_add(b, sc || hid, "tanh([x_i ; %s_j] · W_a%s)", y, ba);
    if (part == PART_MASKED) fb_add(b, 1, ",  e_ij = −∞ where blocked");
    fb_add(b, 0, "     ");
    fb_add(b, part == PART_WEIGHTS, "α_i = softmax(e_i)");
    fb_add(b, 0, "     ");
    fb_add(b, part == PART_HEAD, "c_i = Σ_j α_ij · %s_j", y);
}

/* What an axis counts, as the formulas write it; n for the tokens of
 * self-attention, whose queries are its keys. */
static const char *axis_symbol(const AttnTrace *t, int axis)
{
    static const char *const symbols[] = {
        [ATTN_AXIS_ONE] = "1",         [ATTN_AXIS_QUERIES] = "n_q",    [ATTN_AXIS_KEYS] = "n_k",
        [ATTN_AXIS_PAIRS] = "n_q·n_k", [ATTN_AXIS_MODEL] = "d_model",  [ATTN_AXIS_DK] = "d_k",
        [ATTN_AXIS_DV] = "d_v",        [ATTN_AXIS_HEADS_DK] = "h·d_k", [ATTN_AXIS_HEADS_DV] = "h·d_v",
        [ATTN_AXIS_DX] = "d_x",        [ATTN_AXIS_DY] = "d_y",         [ATTN_AXIS_DXY] = "d_x + d_y",
        [ATTN_AXIS_DA] = "d_a",        [ATTN_AXIS_TOKEN] = "1",        [ATTN_AXIS_PREFIX] = "t",
        [ATTN_AXIS_KV_DK] = "g·d_k",   [ATTN_AXIS_KV_DV] = "g·d_v",
    };
    _Static_assert(sizeof symbols / sizeof symbols[0] == ATTN_AXIS_COUNT, "symbols[] must name every AttnAxis");
    if (!t->cfg.cross && (axis == ATTN_AXIS_QUERIES || axis == ATTN_AXIS_KEYS)) return "n";
    return symbols[axis];
}

/* An input, a weight or a bias: its name and shape, with what the sides are. */
static void formula_operand(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    int R = col ? s->cols : s->rows, C = col ? s->rows : s->cols;
    if (s->kind == ATTN_STEP_BIAS && col)
        fb_add(b, 1, "%s   (%d × 1, added to every column)", s->name, R);
    else if (s->kind == ATTN_STEP_BIAS)
        fb_add(b, 1, "%s   (1 × %d, added to every row)", s->name, C);
    else
        fb_add(b, 1, "%s   (%s × %s = %d × %d)", s->name, axis_symbol(t, col ? s->col_axis : s->row_axis),
               axis_symbol(t, col ? s->row_axis : s->col_axis), R, C);
}

/* The three projections, the step's own highlighted. */
static void formula_projection(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    static const AttnRole roles[3] = {ATTN_ROLE_Q, ATTN_ROLE_K, ATTN_ROLE_V};
    static const AttnRole biases[3] = {ATTN_ROLE_B_Q, ATTN_ROLE_B_K, ATTN_ROLE_B_V};
    for (int i = 0; i < 3; i++) {
        const char *name = attn_role_name(roles[i]);
        int on = s->role == roles[i];
        const char *src = (i > 0 && t->cfg.cross) ? "Y" : "X";
        int bias = attn_trace_find_role(t, biases[i], 0) != NULL;
        if (i) fb_add(b, 0, "     ");
        if (col)
            fb_add(b, on, "%s = W_%s·%s%s%s", name, name, src, bias ? " + b_" : "", bias ? name : "");
        else
            fb_add(b, on, "%s = %s·W_%s%s%s", name, src, name, bias ? " + b_" : "", bias ? name : "");
    }
}

/* A head's slice of a projection. */
static void formula_split(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    int w = s->cols, h = s->head;
    const char *name = attn_role_name((AttnRole)s->role);
    fb_add(b, 1, "%s", name);
    fb_sub(b, 1, h);
    if (col)
        fb_add(b, 1, " = %s[%d:%d, :]", name, (h - 1) * w, h * w);
    else
        fb_add(b, 1, " = %s[:, %d:%d]", name, (h - 1) * w, h * w);
    if (is_kv_step(&t->cfg, s))
        fb_add(b, 0, "   (kv_heads = %d, %s = %d)", attn_kv_heads(&t->cfg), axis_symbol(t, s->col_axis), w);
    else
        fb_add(b, 0, "   (h = %d, %s = %d)", t->cfg.heads, axis_symbol(t, s->col_axis), w);
}

/* One head: head = softmax(Q·Kᵀ / scale + M) · V, the step's part highlighted;
 * the scaled step adds what the divisor is. */
static void formula_head(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    const AttnConfig *c = &t->cfg;
    FormulaPart part = view_kind(s->kind)->part;
    int h = s->head, g = attn_kv_head(c, h); /* g: the K/V head it reads, h itself unless grouped */
    /* a part holds the parts inside it: the weighted sum all of them, softmax its argument */
    int ws = part == PART_HEAD, sm = ws || part == PART_WEIGHTS, qk = sm || part == PART_SCORES;
    int mk = sm || part == PART_MASKED;
    fb_add(b, ws, "head");
    fb_sub(b, ws, h);
    fb_add(b, ws, " = ");
    if (col) {
        fb_add(b, ws, "V");
        fb_sub(b, ws, g);
        fb_add(b, ws, " · ");
    }
    /* seed 003's order masks the raw scores: softmax((Q·Kᵀ + M) / √d) */
    int mask_first = c->mask_kind != ATTN_MASK_NONE && c->mask_order == ATTN_MASK_THEN_SCALE;
    fb_add(b, sm, "softmax(");
    if (mask_first) fb_add(b, mk, "(");
    /* Q·Kᵀ in rows; Kᵀ·Q in columns, one column per query */
    fb_add(b, qk, col ? "K" : "Q");
    fb_sub(b, qk, col ? g : h);
    fb_add(b, qk, col ? "ᵀ·Q" : "·K");
    fb_sub(b, qk, col ? h : g);
    if (!col) fb_add(b, qk, "ᵀ");
    if (mask_first) fb_add(b, mk, " + M)");
    int sc = sm || part == PART_SCALED;
    switch (c->scale_kind) {
    case ATTN_SCALE_SQRT_DK:
        fb_add(b, sc, " / √d_k");
        break;
    case ATTN_SCALE_SQRT_DMODEL:
        fb_add(b, sc, " / √d_model");
        break;
    case ATTN_SCALE_NONE:
        fb_add(b, sc, " / 1");
        break;
    case ATTN_SCALE_VALUE:
        fb_add(b, sc, " / %g", (double)c->scale_value);
        break;
    }
    if (c->mask_kind != ATTN_MASK_NONE && !mask_first) fb_add(b, mk, " + M");
    fb_add(b, sm, ")");
    if (!col) {
        fb_add(b, ws, " · V");
        fb_sub(b, ws, g);
    }
    if (part != PART_SCALED) return;
    /* the divisor the step really uses */
    double d = (double)t->divisor;
    if (c->scale_kind == ATTN_SCALE_NONE || c->scale_kind == ATTN_SCALE_VALUE)
        fb_add(b, 0, "      ÷%.4g", d);
    else
        fb_add(b, 0, "      %s = √%.0f = %.4g", c->scale_kind == ATTN_SCALE_SQRT_DMODEL ? "√d_model" : "√d_k", d * d,
               d);
}

/* MultiHead = Concat(head₁, …) · W_O + b_O, concat or the output highlighted. */
static void formula_multihead(FormulaBuilder *b, const AttnTrace *t, const AttnStep *s, int col)
{
    int heads = t->cfg.heads;
    int out = view_kind(s->kind)->part == PART_OUTPUT, wo = attn_trace_find_role(t, ATTN_ROLE_W_O, 0) != NULL;
    fb_add(b, 0, "MultiHead = ");
    if (col && wo) fb_add(b, out, "W_O · ");
    /* every head up to three (Concat(head₁, head₂)), else the first and the last */
    fb_add(b, !out, "Concat(head");
    fb_sub(b, !out, 1);
    for (int i = 2; i <= heads; i++) {
        if (heads > 3 && i < heads) continue;
        fb_add(b, !out, heads > 3 ? ", …, head" : ", head");
        fb_sub(b, !out, i);
    }
    fb_add(b, !out, ")");
    if (!col && wo) fb_add(b, out, " · W_O");
    if (attn_trace_find_role(t, ATTN_ROLE_B_O, 0)) fb_add(b, out, " + b_O");
}

static void update_formula(View *v)
{
    const AttnTrace *t = view_trace(v);
    const AttnStep *s = view_current(v);
    FormulaBuilder b = {v->formula, sizeof v->formula, 0, -1, -1};
    v->formula[0] = '\0';
    /* column notation: every matrix is the transpose of row notation's, so
     * shapes swap and products turn round (Q = W_Q·X, head = V·softmax(Kᵀ·Q)) */
    int col = v->notation == VIEW_NOTATION_COLUMN;
    FormulaFn f = view_kind(s->kind)->formula;
    if (t->cfg.attention == ATTN_ADDITIVE)
        formula_additive(&b, t, s, col);
    else if (f)
        f(&b, t, s, col);
    else
        fb_add(&b, 1, "%s", s->name);
    v->formula_hl_start = b.hl_start < 0 ? 0 : b.hl_start;
    v->formula_hl_end = b.hl_end < 0 ? 0 : b.hl_end;
}

const char *view_formula(const View *v)
{
    return v->formula;
}

void view_formula_highlight(const View *v, int *start, int *end)
{
    *start = v->formula_hl_start;
    *end = v->formula_hl_end;
}

/* ---- narration ---- */

/* Whether a narration text may be shown as true of the numbers on screen:
 * 1 plain, 2 under "about the lesson as loaded" (no condition, and the
 * numbers are not the ones it was written for), 0 not at all (its condition
 * does not hold). */
static int narration_truth(const View *v, const LessonText *t, const AttnTrace *trace, const AttnStep *s)
{
#ifdef VIEW_HAVE_NARRATE
    if (t->when) {
        char msg[256];
        return narrate_when(t->when, v->lesson, trace, s, msg, sizeof msg) == 1;
    }
#endif
    return v->edited || v->lesson->edited_from ? 2 : 1;
}

/* Appends text's filled form to all[*at..], which has room for any text
 * `attnviz check` accepts. Returns 0 when filled, -1 when it cannot be. */
static int put_filled(const View *v, const AttnTrace *trace, const AttnStep *s, const char *text, char *all, size_t *at)
{
#ifdef VIEW_HAVE_NARRATE
    int rc = narrate_fill(all + *at, NARRATE_MAX_FILLED + 1, text, v->lesson, trace, s, v->lang);
    if (rc != 0) all[*at] = '\0';
#else
    int rc = 0;
    lesson_text_copy(all + *at, NARRATE_MAX_FILLED + 1, text);
#endif
    *at += strlen(all + *at);
    return rc;
}

int view_lesson_texts_apply(const View *v, const AttnTrace *trace)
{
    if (trace != v->single) return 1;
    return v->trace->cfg.attention == ATTN_ADDITIVE || v->trace->cfg.heads == 1;
}

/* The tokens for running text: 我 喜欢 跑步 in English, 「我」「喜欢」「跑步」 in
 * Chinese; the first six, then "…". */
static size_t cat_token_list(const View *v, char *buf, size_t len, size_t at)
{
    const Lesson *l = v->lesson;
    int n = l->n_tokens < 6 ? l->n_tokens : 6;
    for (int i = 0; i < n; i++)
        at = cat(buf, len, at, view_string(i ? VS_TOKEN_NEXT : VS_TOKEN, v->lang), l->tokens[i]);
    if (l->n_tokens > n) at = cat(buf, len, at, "%s", view_string(VS_TOKENS_MORE, v->lang));
    return at;
}

void view_title(const View *v, char *buf, size_t len)
{
    if (!len) return;
    if (view_lesson_texts_apply(v, view_trace(v))) {
        lesson_text_copy(buf, len, lesson_text(&v->lesson->title, v->lang)); /* a cut ends in "…" */
        return;
    }
    /* six tokens of at most LESSON_MAX_TOKEN_BYTES, quoted, fit whole */
    char tokens[8 * (LESSON_MAX_TOKEN_BYTES + 8)] = "", whole[sizeof tokens + 256];
    cat_token_list(v, tokens, sizeof tokens, 0);
    snprintf(whole, sizeof whole, view_string(VS_SINGLE_LESSON_TITLE, v->lang), tokens, v->single->cfg.d_k);
    lesson_text_copy(buf, len, whole);
}

static size_t cat_num(char *buf, size_t len, size_t at, float x, int paren);

/* The narration written from the step itself, as it is on screen: its name,
 * its shape as drawn, what its kind is, and what its kind adds (for
 * weights, each query's largest weight). */
static void describe_step(const View *v, const AttnTrace *trace, const AttnStep *s, char *buf, size_t len)
{
    LessonLang L = v->lang;
    int col = v->notation == VIEW_NOTATION_COLUMN;
    char title[64];
    view_step_title(s, title, sizeof title);
    size_t at = cat(buf, len, 0, view_string(VS_DEFAULT_NARRATION, L), title, col ? s->cols : s->rows,
                    col ? s->rows : s->cols, view_kind_text(s->kind, v->notation, L));
    DescribeFn more = view_kind(s->kind)->describe;
    if (more) more(v, trace, s, buf, len, at);
}

/* Grouped K/V heads: which query heads read this K/V head's keys or values. */
static size_t describe_kv_shared(const View *v, const AttnTrace *trace, const AttnStep *s, char *buf, size_t len,
                                 size_t at)
{
    const AttnConfig *c = &trace->cfg;
    if (!is_kv_step(c, s)) return at;
    int G = attn_kv_heads(c), per = c->heads / G, g = s->head;
    char group[32];
    if (per == 1)
        snprintf(group, sizeof group, "%d", g);
    else
        snprintf(group, sizeof group, "%d–%d", (g - 1) * per + 1, g * per);
    return cat(buf, len, at, view_string(VS_KV_SHARED, v->lang), g, group, G, c->heads);
}

/* Softmax: each query's largest weight, for the first six queries that see a key. */
static size_t describe_largest_weights(const View *v, const AttnTrace *trace, const AttnStep *s, char *buf, size_t len,
                                       size_t at)
{
    LessonLang L = v->lang;
    const char *const *rl = view_row_labels(v, trace, s), *const *cl = view_col_labels(v, trace, s);
    if (!rl || !cl) return at;
    at = cat(buf, len, at, "%s", view_string(VS_LARGEST_WEIGHTS, L));
    int shown = 0;
    for (int r = 0; r < s->rows && shown < 6; r++) {
        const float *row = s->data + (size_t)r * (size_t)s->cols;
        int best = 0;
        for (int c = 1; c < s->cols; c++)
            if (row[c] > row[best]) best = c;
        if (!(row[best] > 0.0f)) continue; /* a row that sees no key */
        if (shown++) at = cat(buf, len, at, "%s", view_string(VS_LIST_SEP, L));
        char num[32];
        cat_num(num, sizeof num, 0, row[best], 0);
        at = cat(buf, len, at, view_string(VS_LARGEST_WEIGHT, L), rl[r], cl[best], num);
    }
    return cat(buf, len, at, "%s", view_string(s->rows > shown && shown == 6 ? VS_LIST_CUT : VS_FULL_STOP, L));
}

/* Appends a text of no step (the summary, the intro) with its placeholders
 * filled, as its own paragraph, to all[at..] (NARRATE_MAX_STEP_TEXT bytes);
 * returns the new length. A text that cannot be filled is left out, never
 * shown raw (`attnviz check` refuses it). */
static size_t cat_paragraph(const View *v, const AttnTrace *trace, char *all, size_t at, const char *text)
{
    if (text && put_filled(v, trace, NULL, text, all, &at) == 0) at = cat(all, NARRATE_MAX_STEP_TEXT, at, "\n");
    return at;
}

/* A text of no step (the summary, the intro) as its own paragraph, when it
 * may be shown, under its marker; returns the new length. */
static size_t cat_text_paragraph(const View *v, const AttnTrace *trace, char *all, size_t at, const LessonText *t)
{
    int truth = t && t->text[LESSON_EN] ? narration_truth(v, t, trace, NULL) : 0;
    if (!truth) return at;
    if (truth == 2) at = cat(all, NARRATE_MAX_STEP_TEXT, at, "%s", view_string(VS_ABOUT_ORIGINAL, v->lang));
    return cat_paragraph(v, trace, all, at, lesson_text(t, v->lang));
}

int view_step_narration(const View *v, const AttnTrace *trace, int step, char *buf, size_t len)
{
    if (!len) return -1;
    buf[0] = '\0';
    if (!trace || step < 0 || step >= trace->n_steps) return -1;
    const AttnStep *s = &trace->steps[step];
    /* the lesson's texts are about its own trace: in the single-head mode of
     * a lesson with several heads, the step is described from what is drawn */
    if (!view_lesson_texts_apply(v, trace)) {
        describe_step(v, trace, s, buf, len);
        return -1;
    }
    const LessonText *lt = lesson_narration_for(v->lesson, s);
    int truth = lt ? narration_truth(v, lt, trace, s) : 0;
    const char *text = truth ? lesson_text(lt, v->lang) : NULL;
    /* built whole, then copied into buf, cut at a character with "…" when
     * buf is smaller: nothing is ever dropped silently */
    char *all = malloc(NARRATE_MAX_STEP_TEXT);
    if (!all) return -1;
    size_t at = 0;
    all[0] = '\0';
    if (text && v->notation == VIEW_NOTATION_COLUMN) /* lesson texts count rows and columns as in row notation */
        at = cat(all, NARRATE_MAX_STEP_TEXT, at, "%s\n", view_string(VS_TEXT_IN_ROW_NOTATION, v->lang));
    if (step == 0) {
        /* the lesson's summary, then its introduction, open its first step,
         * each as its own paragraph */
        at = cat_text_paragraph(v, trace, all, at, &v->lesson->summary);
        at = cat_text_paragraph(v, trace, all, at, lesson_narration_text(v->lesson, "intro"));
    }
    int rc = 0;
    if (text && truth == 2) at = cat(all, NARRATE_MAX_STEP_TEXT, at, "%s", view_string(VS_ABOUT_ORIGINAL, v->lang));
    size_t before_text = at;
    if (!text || put_filled(v, trace, s, text, all, &at) != 0) {
        at = before_text;
        all[at] = '\0';
        describe_step(v, trace, s, all + at, NARRATE_MAX_STEP_TEXT - at);
        if (lt) cat(all, NARRATE_MAX_STEP_TEXT, strlen(all), " %s", view_string(VS_TEXT_NO_LONGER, v->lang));
        rc = -1;
    }
    lesson_text_copy(buf, len, all);
    free(all);
    return rc;
}

int view_narration(const View *v, char *buf, size_t len)
{
    if (!view_step_ready(v, view_trace(v), v->step)) {
        if (len) snprintf(buf, len, view_string(VS_PREPARING, v->lang), view_step_ordinal(v->step));
        return -1;
    }
    return view_step_narration(v, view_trace(v), v->step, buf, len);
}

/* ---- how a cell was computed ---- */

/* A number as a teacher writes it: 4 significant digits, a true minus sign,
 * negative terms in parentheses when asked. */
static size_t cat_num(char *buf, size_t len, size_t at, float x, int paren)
{
    if (isinf(x)) return cat(buf, len, at, x < 0 ? "−∞" : "∞");
    if (isnan(x)) return cat(buf, len, at, "NaN");
    double d = (double)x;
    if (d == 0.0) d = 0.0; /* no −0 */
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.4g", fabs(d));
    if (d < 0) return cat(buf, len, at, paren ? "(−%s)" : "−%s", tmp);
    return cat(buf, len, at, "%s", tmp);
}

static size_t cat_cellref(const View *v, const AttnTrace *t, char *buf, size_t len, size_t at, const AttnStep *s, int r,
                          int c)
{
    char title[64];
    view_step_title(s, title, sizeof title);
    const char *const *rl = view_row_labels(v, t, s);
    const char *const *cl = view_col_labels(v, t, s);
    at = cat(buf, len, at, "%s[", title);
    /* column notation writes the transpose: the step's row r is column r */
    int col = v->notation == VIEW_NOTATION_COLUMN;
    if (col && c < 0) at = cat(buf, len, at, ":, ");
    for (int k = 0; k < 2; k++) {
        int row_part = k == col; /* which index comes first */
        if (row_part && r >= 0) at = rl ? cat(buf, len, at, "%s", rl[r]) : cat(buf, len, at, "%d", r);
        if (!row_part && c >= 0) at = cl ? cat(buf, len, at, "%s", cl[c]) : cat(buf, len, at, "%d", c);
        if (k == 0 && r >= 0 && c >= 0) at = cat(buf, len, at, ", ");
    }
    if (col && r < 0) at = cat(buf, len, at, ", :");
    return cat(buf, len, at, "]");
}

#define EXPLAIN_TERMS 6

/* " = a0·b0 + a1·b1 + … (n terms)": a(i) = A[ra + i·sa], b(i) = B[rb + i·sb]. */
static size_t cat_dot(char *buf, size_t len, size_t at, const float *A, size_t ia, size_t sa, const float *B, size_t ib,
                      size_t sb, int n, LessonLang lang)
{
    at = cat(buf, len, at, " = ");
    for (int i = 0; i < n && i < EXPLAIN_TERMS; i++) {
        if (i) at = cat(buf, len, at, " + ");
        at = cat_num(buf, len, at, A[ia + (size_t)i * sa], i > 0);
        at = cat(buf, len, at, "·");
        at = cat_num(buf, len, at, B[ib + (size_t)i * sb], 1);
    }
    if (n > EXPLAIN_TERMS) at = cat(buf, len, at, view_string(VS_EXPLAIN_MORE_TERMS, lang), n);
    return at;
}

static const AttnStep *from_kind(const AttnTrace *t, const AttnStep *s, AttnStepKind kind, int nth)
{
    for (int i = 0; i < s->n_from; i++) {
        const AttnStep *f = &t->steps[s->from[i]];
        if (f->kind == kind && nth-- == 0) return f;
    }
    return NULL;
}

static const AttnStep *from_not_kind(const AttnTrace *t, const AttnStep *s, AttnStepKind not_kind, int nth)
{
    for (int i = 0; i < s->n_from; i++) {
        const AttnStep *f = &t->steps[s->from[i]];
        if (f->kind != not_kind && nth-- == 0) return f;
    }
    return NULL;
}

/* Each explain_* appends to buf at `at` the lines that say how cell (r, c)
 * of step s of t was computed, and returns the new length. */

/* A projection or the output: a row of the input times a column of the weight, plus the bias. */
static size_t explain_product(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                              size_t at)
{
    const AttnStep *A = from_not_kind(t, s, ATTN_STEP_BIAS, 0), *W = from_not_kind(t, s, ATTN_STEP_BIAS, 1);
    const AttnStep *bias = from_kind(t, s, ATTN_STEP_BIAS, 0);
    if (!A || !W) return at;
    at = cat(buf, len, at, "\n= ");
    at = cat_cellref(v, t, buf, len, at, A, r, -1);
    at = cat(buf, len, at, " · ");
    char wt[64];
    view_step_title(W, wt, sizeof wt);
    at = cat(buf, len, at, v->notation == VIEW_NOTATION_COLUMN ? "%s[%d, :]" : "%s[:, %d]", wt, c);
    if (bias) at = cat(buf, len, at, " + %s[%d]", bias->name, c);
    at = cat(buf, len, at, "\n");
    at = cat_dot(buf, len, at, A->data, (size_t)r * (size_t)A->cols, 1, W->data, (size_t)c, (size_t)W->cols, A->cols,
                 v->lang);
    if (bias) {
        at = cat(buf, len, at, " + ");
        at = cat_num(buf, len, at, bias->data[c], 1);
    }
    return at;
}

/* A head's columns: which column of the projection the cell is. */
static size_t explain_split(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                            size_t at)
{
    const AttnStep *P = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
    if (!P) return at;
    if (v->notation == VIEW_NOTATION_COLUMN) {
        /* Q[2, 我]: the transposed projection's row */
        at = cat(buf, len, at, "\n= ");
        at = cat_cellref(v, t, buf, len, at, P, r, (s->head - 1) * s->cols + c);
        return cat(buf, len, at, view_string(VS_EXPLAIN_SPLIT_ROW, v->lang), s->head, c, s->cols - 1);
    }
    at = cat(buf, len, at, "\n= %s[", P->name);
    const char *const *rl = view_row_labels(v, t, P);
    at = rl ? cat(buf, len, at, "%s", rl[r]) : cat(buf, len, at, "%d", r);
    at = cat(buf, len, at, view_string(VS_EXPLAIN_SPLIT_COLUMN, v->lang), (s->head - 1) * s->cols + c, s->head, c,
             s->cols - 1);
    return at;
}

/* Scores: the dot product of a query and a key (dot), or hidden · v_a (additive). */
static size_t explain_scores(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at)
{
    if (t->cfg.attention == ATTN_DOT) {
        const AttnStep *Q = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0),
                       *K = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 1);
        if (!Q || !K) return at;
        at = cat(buf, len, at, "\n= ");
        at = cat_cellref(v, t, buf, len, at, Q, r, -1);
        at = cat(buf, len, at, " · ");
        at = cat_cellref(v, t, buf, len, at, K, c, -1);
        at = cat(buf, len, at, "\n");
        at = cat_dot(buf, len, at, Q->data, (size_t)r * (size_t)Q->cols, 1, K->data, (size_t)c * (size_t)K->cols, 1,
                     Q->cols, v->lang);
    } else {
        const AttnStep *Hd = from_kind(t, s, ATTN_STEP_ADDITIVE_HIDDEN, 0), *va = from_kind(t, s, ATTN_STEP_WEIGHT, 0);
        if (!Hd || !va) return at;
        size_t hr = (size_t)r * (size_t)s->cols + (size_t)c;
        at = cat(buf, len, at, view_string(VS_EXPLAIN_ADDITIVE_ROW, v->lang), hr, r, c);
        at = cat_dot(buf, len, at, Hd->data, hr * (size_t)Hd->cols, 1, va->data, 0, 1, Hd->cols, v->lang);
    }
    return at;
}

/* Scaled: the score over the divisor. */
static size_t explain_scaled(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at)
{
    (void)v;
    const AttnStep *S = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
    if (!S) return at;
    at = cat(buf, len, at, "\n= ");
    at = cat_num(buf, len, at, S->data[(size_t)r * (size_t)S->cols + (size_t)c], 0);
    at = cat(buf, len, at, " ÷ %.4g", (double)t->divisor);
    return at;
}

/* Masked: the scaled score, or the fill value where the mask blocks. */
static size_t explain_masked(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at)
{
    if (view_cell_blocked(v, s, r, c))
        at = cat(buf, len, at, view_string(VS_EXPLAIN_MASKED_BLOCKED, v->lang), view_string(VS_BLOCKED, v->lang));
    else
        at = cat(
            buf, len, at, "%s",
            view_string(t->cfg.mask_order == ATTN_MASK_THEN_SCALE ? VS_EXPLAIN_MASKED_KEPT_RAW : VS_EXPLAIN_MASKED_KEPT,
                        v->lang));
    return at;
}

/* Softmax: the cell's exp(x − max) over its row's sum. */
static size_t explain_softmax(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                              size_t at)
{
    const AttnStep *X = from_not_kind(t, s, ATTN_STEP_KIND_COUNT, 0);
    if (!X) return at;
    const float *row = X->data + (size_t)r * (size_t)X->cols;
    float mx = -INFINITY;
    for (int j = 0; j < X->cols; j++)
        if (row[j] > mx) mx = row[j];
    if (isinf(mx) && mx < 0) {
        at = cat(buf, len, at, view_string(VS_EXPLAIN_ROW_BLOCKED, v->lang));
        return at;
    }
    double sum = 0;
    for (int j = 0; j < X->cols; j++) sum += exp((double)row[j] - (double)mx);
    at = cat(buf, len, at, "\n= exp(x − max) / Σ exp(x − max)\n= exp(");
    at = cat_num(buf, len, at, row[c], 0);
    at = cat(buf, len, at, " − ");
    at = cat_num(buf, len, at, mx, 1);
    at = cat(buf, len, at, ") / %.4g = %.4g / %.4g", sum, exp((double)row[c] - (double)mx), sum);
    return at;
}

/* Weighted sum: the row's weights times a column of the values. */
static size_t explain_weighted_sum(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf,
                                   size_t len, size_t at)
{
    const AttnStep *W = from_kind(t, s, ATTN_STEP_SOFTMAX, 0);
    const AttnStep *V = from_not_kind(t, s, ATTN_STEP_SOFTMAX, 0);
    if (!W || !V) return at;
    at = cat(buf, len, at, "\n= Σ_j ");
    at = cat_cellref(v, t, buf, len, at, W, r, -1);
    at = cat(buf, len, at, v->notation == VIEW_NOTATION_COLUMN ? "_j · %s[%d, j]\n" : "_j · %s[j, %d]\n", V->name, c);
    at = cat_dot(buf, len, at, W->data, (size_t)r * (size_t)W->cols, 1, V->data, (size_t)c, (size_t)V->cols, W->cols,
                 v->lang);
    return at;
}

/* Concat: the head's cell it was copied from. */
static size_t explain_concat(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at)
{
    int col = c;
    for (int i = 0; i < s->n_from; i++) {
        const AttnStep *Hd = &t->steps[s->from[i]];
        if (col < Hd->cols) {
            at = cat(buf, len, at, "\n= ");
            at = cat_cellref(v, t, buf, len, at, Hd, r, col);
            return at;
        }
        col -= Hd->cols;
    }
    return at;
}

/* The projection computed from weight w: Q from W_Q. */
static const AttnStep *product_of(const AttnTrace *t, const AttnStep *w)
{
    int wi = attn_trace_index(t, w);
    for (int i = wi + 1; i < t->n_steps; i++)
        for (int k = 0; t->steps[i].kind == ATTN_STEP_PROJECTION && k < t->steps[i].n_from; k++)
            if (t->steps[i].from[k] == wi) return &t->steps[i];
    return NULL;
}

/* A projection weight of dot attention: which feature goes to which head's column. */
static size_t explain_weight(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf, size_t len,
                             size_t at)
{
    /* W_Q, W_K and W_V: their columns are every head's, side by side */
    int a = s->col_axis, kv = a == ATTN_AXIS_KV_DK || a == ATTN_AXIS_KV_DV; /* kv: grouped K/V heads' columns */
    int dk = a == ATTN_AXIS_HEADS_DK || a == ATTN_AXIS_KV_DK   ? t->cfg.d_k
             : a == ATTN_AXIS_HEADS_DV || a == ATTN_AXIS_KV_DV ? t->cfg.d_v
                                                               : 0;
    const AttnStep *P = product_of(t, s);
    /* in column notation Q's features are its rows */
    int col = v->notation == VIEW_NOTATION_COLUMN;
    ViewString how = kv ? (col ? VS_EXPLAIN_WEIGHT_KV_ROW : VS_EXPLAIN_WEIGHT_KV_COLUMN)
                        : (col ? VS_EXPLAIN_WEIGHT_ROW : VS_EXPLAIN_WEIGHT_COLUMN);
    if (dk > 0 && P) at = cat(buf, len, at, view_string(how, v->lang), r, P->name, c, c / dk + 1, c % dk);
    return at;
}

/* Additive attention's hidden layer: tanh of the joined query and key times W_a. */
static size_t explain_additive_hidden(const View *v, const AttnTrace *t, const AttnStep *s, int r, int c, char *buf,
                                      size_t len, size_t at)
{
    int nk = t->cfg.n_k;
    const char *y = t->cfg.cross ? "y" : "x", *ba = from_kind(t, s, ATTN_STEP_BIAS, 0) ? " + b_a" : "";
    if (v->notation == VIEW_NOTATION_COLUMN)
        return cat(buf, len, at, "\n= tanh(W_a[%d, :] · [x_%d ; %s_%d]%s)", c, r / nk, y, r % nk, ba);
    return cat(buf, len, at, "\n= tanh([x_%d ; %s_%d] · W_a[:, %d]%s)", r / nk, y, r % nk, c, ba);
}

int view_explain_cell(const View *v, const AttnTrace *t, int step, int r, int c, char *buf, size_t len)
{
    if (!len) return -1;
    buf[0] = '\0';
    if (!t || step < 0 || step >= t->n_steps) return -1;
    const AttnStep *s = &t->steps[step];
    if (r < 0 || c < 0 || r >= s->rows || c >= s->cols) return -1;
    size_t at = cat_cellref(v, t, buf, len, 0, s, r, c);
    float val = s->data[(size_t)r * (size_t)s->cols + (size_t)c];
    at = cat(buf, len, at, " = ");
    at = cat_num(buf, len, at, val, 0);
    ExplainFn explain = view_kind(s->kind)->explain;
    if (explain) explain(v, t, s, r, c, buf, len, at);
    return 0;
}

/* ---- the table of kinds ---- */

static const ViewKind kinds[] = {
    [ATTN_STEP_INPUT] = {.phase = PHASE_INPUTS,
                         .text = {"the input, one row per token", "输入，每个词元占一行"},
                         .text_column = {"the input, one column per token", "输入，每个词元占一列"},
                         .formula = formula_operand},
    [ATTN_STEP_WEIGHT] = {.phase = PHASE_INPUTS,
                          .text = {"a learned weight matrix", "可学习的权重矩阵"},
                          .formula = formula_operand,
                          .explain = explain_weight},
    [ATTN_STEP_BIAS] = {.phase = PHASE_INPUTS,
                        .text = {"a learned bias, added to every row", "可学习的偏置，加到每一行上"},
                        .text_column = {"a learned bias, added to every column", "可学习的偏置，加到每一列上"},
                        .formula = formula_operand},
    [ATTN_STEP_PROJECTION] = {.seconds = 1.2,
                              .phase = PHASE_PROJECTIONS,
                              .text = {"a projection, the input times a weight matrix", "投影，即输入乘以权重矩阵"},
                              .formula = formula_projection,
                              .explain = explain_product},
    [ATTN_STEP_SPLIT] = {.seconds = 1.0,
                         .text = {"one head's columns of the projection", "投影中属于这个头的那几列"},
                         .formula = formula_split,
                         .explain = explain_split,
                         .describe = describe_kv_shared},
    [ATTN_STEP_SCORES] = {.seconds = 1.2,
                          .phase = PHASE_SCORING,
                          .text = {"the scores, how well each query matches each key",
                                   "注意力分数，即每个查询与每个键的匹配程度"},
                          .formula = formula_head,
                          .part = PART_SCORES,
                          .explain = explain_scores},
    [ATTN_STEP_SCALED] = {.seconds = 0.8,
                          .text = {"the scores divided by the scale", "除以缩放因子之后的分数"},
                          .formula = formula_head,
                          .part = PART_SCALED,
                          .explain = explain_scaled,
                          .mask = MASK_SHOWN_AFTER_MASKING},
    [ATTN_STEP_MASKED] = {.seconds = 0.8,
                          .text = {"the blocked positions set to the fill value", "被屏蔽的位置换成填充值"},
                          .formula = formula_head,
                          .part = PART_MASKED,
                          .explain = explain_masked,
                          .mask = MASK_SHOWN},
    [ATTN_STEP_SOFTMAX] = {.seconds = 1.2,
                           .text = {"softmax, each row becomes weights that sum to 1",
                                    "softmax，把每一行变成和为 1 的权重"},
                           .text_column = {"softmax, each column becomes weights that sum to 1",
                                           "softmax，把每一列变成和为 1 的权重"},
                           .formula = formula_head,
                           .part = PART_WEIGHTS,
                           .explain = explain_softmax,
                           .describe = describe_largest_weights,
                           .mask = MASK_SHOWN},
    [ATTN_STEP_WEIGHTED_SUM] = {.seconds = 1.2,
                                .text = {"the weighted sum of the values", "值向量的加权和"},
                                .formula = formula_head,
                                .part = PART_HEAD,
                                .explain = explain_weighted_sum},
    [ATTN_STEP_CONCAT] = {.seconds = 1.0,
                          .phase = PHASE_OUTPUT,
                          .text = {"the heads' outputs side by side", "各个头的输出并排拼接"},
                          .formula = formula_multihead,
                          .part = PART_CONCAT,
                          .explain = explain_concat},
    [ATTN_STEP_OUTPUT] = {.seconds = 1.2,
                          .phase = PHASE_OUTPUT,
                          .text = {"the output projection", "输出投影"},
                          .formula = formula_multihead,
                          .part = PART_OUTPUT,
                          .explain = explain_product},
    [ATTN_STEP_ADDITIVE_HIDDEN] = {.seconds = 1.2,
                                   .phase = PHASE_SCORING,
                                   .text = {"tanh of the joined query and key, times W_a",
                                            "查询与键拼接后乘以 W_a，再取 tanh"},
                                   .part = PART_HIDDEN,
                                   .explain = explain_additive_hidden},
    [ATTN_STEP_KV_APPEND] = {.seconds = 1.0,
                             .text = {"the cache: the keys or values so far, with this token's row added",
                                      "缓存：此前各词元的键或值，末尾添上当前词元的一行"},
                             .describe = describe_kv_shared},
    [ATTN_STEP_DECODE_CHECK] = {.seconds = 1.0,
                                .phase = PHASE_OUTPUT,
                                .text = {"the rows decoded one token at a time, stacked: the same as the whole output",
                                         "逐个词元解码得到的各行叠在一起，与一次算出的输出相同"}},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == ATTN_STEP_KIND_COUNT,
               "kinds[] must have a row for every AttnStepKind");

static const ViewKind *view_kind(int kind)
{
    return &kinds[(unsigned)kind < ATTN_STEP_KIND_COUNT ? kind : 0];
}
