/* view_input.c: the key table and the mouse's rules (view_input.h). */
#include "view_input.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQRT2 1.4142135623730951

/* The one table of keys. The help overlay lists it in this order, two rows
 * to a line. */
static const ViewBinding bindings[] = {
    {VIEW_ACT_NEXT,
     {VIEW_KEY_RIGHT, ' ', VIEW_KEY_PAGE_DOWN, VIEW_KEY_DOWN},
     {"→ / Space / PgDn", "→ / 空格 / PgDn"},
     {"next step", "下一步"}},
    {VIEW_ACT_PREV,
     {VIEW_KEY_LEFT, VIEW_KEY_PAGE_UP, VIEW_KEY_UP, VIEW_KEY_BACKSPACE},
     {"← / PgUp", "← / PgUp"},
     {"back (the step plays backwards)", "后退（本步倒放）"}},
    {VIEW_ACT_HOME, {VIEW_KEY_HOME}, {"Home", "Home"}, {"first step", "第一步"}},
    {VIEW_ACT_END, {VIEW_KEY_END}, {"End", "End"}, {"last step", "最后一步"}},
    {VIEW_ACT_SLOWER, {'['}, {"[", "["}, {"slower", "减速"}},
    {VIEW_ACT_FASTER, {']'}, {"]", "]"}, {"faster", "加速"}},
    {VIEW_ACT_PLAY, {'p'}, {"P", "P"}, {"play / pause", "自动播放 / 暂停"}},
    {VIEW_ACT_NEXT_HEAD, {VIEW_KEY_TAB}, {"Tab", "Tab"}, {"next head", "下一个头"}},
    {VIEW_ACT_HEAD, {'1', '2', '3', '4', '5', '6', '7', '8', '9'}, {"1–9", "1–9"}, {"choose a head", "选择头"}},
    {VIEW_ACT_SINGLE, {'m'}, {"M", "M"}, {"single ↔ multi-head", "单头 ↔ 多头"}},
    {VIEW_ACT_COMPARE, {'c'}, {"C", "C"}, {"compare single and multi-head", "单头与多头并排对比"}},
    {VIEW_ACT_LANG, {'l'}, {"L", "L"}, {"中文 ↔ English", "中文 ↔ English"}},
    {VIEW_ACT_THEME, {'t'}, {"T", "T"}, {"theme (light, dark, projector)", "主题（浅色、深色、投影）"}},
    {VIEW_ACT_WEIGHT_SCALE,
     {'w'},
     {"W", "W"},
     {"weight colours: 0–1, ÷ row max, log", "权重配色：0–1、÷ 行最大值、对数"}},
    {VIEW_ACT_NOTATION, {'n'}, {"N", "N"}, {"row ↔ column notation", "行向量 ↔ 列向量记法"}},
    {VIEW_ACT_FULLSCREEN,
     {'f', VIEW_KEY_F11, VIEW_KEY_F5},
     {"F / F11 / F5", "F / F11 / F5"},
     {"fullscreen (Esc leaves it)", "全屏（Esc 退出全屏）"}},
    {VIEW_ACT_TEXT_BIGGER, {'+', '='}, {"+", "+"}, {"larger text", "放大字号"}},
    {VIEW_ACT_TEXT_SMALLER, {'-'}, {"−", "−"}, {"smaller text", "缩小字号"}},
    {VIEW_ACT_BIG_TEXT,
     {'u'},
     {"U", "U"},
     {"big text: a caption, not the narration", "大字模式：只显示提要，不显示讲解"}},
    {VIEW_ACT_SAVE, {'s'}, {"S", "S"}, {"save this frame as PNG", "把当前画面存为 PNG"}},
    {VIEW_ACT_RELOAD, {'r'}, {"R", "R"}, {"reload the lesson file", "重新载入课程文件"}},
    {VIEW_ACT_HEADS, {'a'}, {"A", "A"}, {"all heads panel on / off", "显示或隐藏所有头的面板"}},
    {VIEW_ACT_BLACK, {'b', '.'}, {"B / .", "B / ."}, {"black screen (pauses), and back", "黑屏（暂停播放），再按恢复"}},
    {VIEW_ACT_INK, {'i'}, {"I", "I"}, {"ink: draw on the frame", "墨迹：在画面上书写"}},
    {VIEW_ACT_INK_CLEAR, {'x'}, {"X", "X"}, {"clear this step's ink", "清除本步的墨迹"}},
    {VIEW_ACT_SPOTLIGHT, {'g'}, {"G", "G"}, {"spotlight on the pointer", "聚光灯跟随指针"}},
    {VIEW_ACT_LASER, {'z'}, {"Z", "Z"}, {"laser pointer", "激光笔"}},
    {VIEW_ACT_CLOCK, {'0'}, {"0", "0"}, {"presenter: clock from 0:00", "演讲者视图：计时从 0:00 重新开始"}},
    {VIEW_ACT_HELP, {'?', 'h', VIEW_KEY_F1}, {"? / H / F1", "? / H / F1"}, {"this help", "本帮助"}},
#ifdef __EMSCRIPTEN__
    /* a page is closed with its tab (src/app/web/show_web.c) */
    {VIEW_ACT_QUIT, {VIEW_KEY_ESCAPE, 'q'}, {"Esc / Q", "Esc / Q"}, {"leave fullscreen", "退出全屏"}},
#else
    {VIEW_ACT_QUIT,
     {VIEW_KEY_ESCAPE, 'q'},
     {"Esc / Q", "Esc / Q"},
     {"quit (unsaved edits: asks first)", "退出（有未保存的修改时先提示）"}},
#endif
    {VIEW_ACT_EDIT, {'e'}, {"E", "E"}, {"edit: arrows, Tab, a number, Enter", "编辑：方向键、Tab、数字、回车"}},
    {VIEW_ACT_EDIT_SCALE, {'<', '>'}, {"< / >", "< / >"}, {"scale (temperature)", "缩放（温度）"}},
    {VIEW_ACT_EDIT_MASK, {'k'}, {"K", "K"}, {"mask: none, causal, padding", "掩码：无、因果、填充"}},
    {VIEW_ACT_EDIT_REVERT, {'o'}, {"O", "O"}, {"back to the lesson as loaded", "回到载入时的课程"}},
    {VIEW_ACT_EDIT_UNDO, {0}, {"Ctrl+Z / Ctrl+Y", "Ctrl+Z / Ctrl+Y"}, {"undo / redo", "撤销 / 重做"}},
    {VIEW_ACT_EDIT_SAVE, {0}, {"Ctrl+S", "Ctrl+S"}, {"save as a new lesson", "另存为新课程"}},
};
enum { N_BINDINGS = sizeof bindings / sizeof bindings[0] };

const ViewBinding *view_bindings(int *count)
{
    if (count) *count = N_BINDINGS;
    return bindings;
}

ViewAction view_key_action(int key)
{
    if (key >= 'A' && key <= 'Z') key += 'a' - 'A';
    for (int i = 0; key && i < N_BINDINGS; i++)
        for (int k = 0; k < VIEW_BINDING_MAX_KEYS && bindings[i].keys[k]; k++)
            if (bindings[i].keys[k] == key) return bindings[i].action;
    return VIEW_ACT_NONE;
}

/* A step of the text size, bigger or smaller, and the size as it now is,
 * briefly: the one feedback at the limits too. */
static void text_size_step(View *v, int bigger)
{
    view_set_text_scale(v, bigger ? v->text_scale * 1.1f : v->text_scale / 1.1f);
    char size[16];
    snprintf(size, sizeof size, "%d%%", (int)lrintf(v->text_scale * 100.0f));
    view_set_notice(v, VS_NOTICE_TEXT_SIZE, size, 0);
}

/* Q or Esc: what they ask of the window, or VIEW_REQ_NONE when the View
 * answers them itself. */
static unsigned quit_request(View *v, int key)
{
    if (key == VIEW_KEY_ESCAPE && v->show_help) {
        view_set_help(v, 0); /* Esc over the help closes the help */
        return VIEW_REQ_NONE;
    }
    /* Esc, pressed by reflex or sent by a clicker's presentation button,
     * leaves fullscreen (F5 or F goes back) and never quits from it */
    if (key == VIEW_KEY_ESCAPE && v->fullscreen) return VIEW_REQ_FULLSCREEN;
    /* unsaved edits: the first press says so; Q while it says so quits */
    if (v->unsaved && !(key != VIEW_KEY_ESCAPE && view_quit_confirmed(v))) {
        view_set_notice(v, VS_NOTICE_UNSAVED, NULL, 1);
        return VIEW_REQ_NONE;
    }
    return VIEW_REQ_QUIT;
}

unsigned view_do(View *v, ViewAction action, int key)
{
    switch (action) {
    case VIEW_ACT_NONE:
    case VIEW_ACT_EDIT: /* the window's editor (editor.h) has the Edit these need */
    case VIEW_ACT_EDIT_SCALE:
    case VIEW_ACT_EDIT_MASK:
    case VIEW_ACT_EDIT_REVERT:
    case VIEW_ACT_EDIT_UNDO:
    case VIEW_ACT_EDIT_SAVE:
    case VIEW_ACTION_COUNT:
        break;
    case VIEW_ACT_NEXT:
        view_next(v);
        break;
    case VIEW_ACT_PREV:
        view_prev(v);
        break;
    case VIEW_ACT_HOME:
        view_home(v);
        break;
    case VIEW_ACT_END:
        view_end(v);
        break;
    case VIEW_ACT_PLAY:
        view_toggle_play(v);
        break;
    case VIEW_ACT_SLOWER:
        view_set_speed(v, v->speed / SQRT2);
        break;
    case VIEW_ACT_FASTER:
        view_set_speed(v, v->speed * SQRT2);
        break;
    case VIEW_ACT_HEAD:
        if (key >= '1' && key <= '9') view_set_head(v, key - '0');
        break;
    case VIEW_ACT_NEXT_HEAD:
        view_next_head(v);
        break;
    case VIEW_ACT_SINGLE: /* the single-head view of several heads has its own title */
        view_toggle_single(v);
        return VIEW_REQ_TITLE;
    case VIEW_ACT_COMPARE:
        view_toggle_compare(v);
        return VIEW_REQ_TITLE;
    case VIEW_ACT_LANG:
        view_toggle_lang(v);
        return VIEW_REQ_TITLE;
    case VIEW_ACT_THEME:
        view_next_theme(v);
        break;
    case VIEW_ACT_WEIGHT_SCALE:
        view_next_weight_scale(v);
        break;
    case VIEW_ACT_NOTATION:
        view_toggle_notation(v);
        break;
    case VIEW_ACT_TEXT_BIGGER:
    case VIEW_ACT_TEXT_SMALLER:
        text_size_step(v, action == VIEW_ACT_TEXT_BIGGER);
        break;
    case VIEW_ACT_HELP:
        view_set_help(v, !v->show_help);
        break;
    case VIEW_ACT_HEADS:
        view_toggle_heads(v);
        break;
    case VIEW_ACT_BLACK:
        view_set_black(v, !v->black);
        break;
    case VIEW_ACT_INK:
        view_toggle_tool(v, VIEW_TOOL_INK);
        break;
    case VIEW_ACT_SPOTLIGHT:
        view_toggle_tool(v, VIEW_TOOL_SPOTLIGHT);
        break;
    case VIEW_ACT_LASER:
        view_toggle_tool(v, VIEW_TOOL_LASER);
        break;
    case VIEW_ACT_BIG_TEXT:
        view_set_big_text(v, !v->big_text);
        break;
    case VIEW_ACT_INK_CLEAR:
        return VIEW_REQ_INK_CLEAR;
    case VIEW_ACT_CLOCK:
        return VIEW_REQ_CLOCK;
    case VIEW_ACT_FULLSCREEN:
        return VIEW_REQ_FULLSCREEN;
    case VIEW_ACT_SAVE:
        return VIEW_REQ_SAVE;
    case VIEW_ACT_RELOAD:
        return VIEW_REQ_RELOAD;
    case VIEW_ACT_QUIT:
        return quit_request(v, key);
    }
    return VIEW_REQ_NONE;
}

unsigned view_key(View *v, int key)
{
    ViewAction a = view_key_action(key);
    /* black: a clicker's next or back brings the screen back where it was */
    if (v->black && (a == VIEW_ACT_NEXT || a == VIEW_ACT_PREV)) a = VIEW_ACT_BLACK;
    return view_do(v, a, key);
}

/* Appends "LABEL  description" to buf at *at; 0, or -1 when it does not fit. */
static int help_entry(const ViewBinding *b, LessonLang lang, const char *before, char *buf, size_t len, size_t *at)
{
    int n = snprintf(buf + *at, len - *at, "%s%s  %s", before, b->label[lang], b->description[lang]);
    if (n < 0 || (size_t)n >= len - *at) return -1;
    *at += (size_t)n;
    return 0;
}

size_t view_help_text(LessonLang lang, char *buf, size_t len)
{
    if (!buf || !len) return 0;
    if ((int)lang < 0 || lang >= LESSON_LANG_COUNT) lang = LESSON_EN;
    buf[0] = '\0';
    size_t at = 0;
    for (int i = 0; i < N_BINDINGS; i += 2) {
        size_t line = at;
        if (help_entry(&bindings[i], lang, i ? "\n" : "", buf, len, &at) != 0 ||
            (i + 1 < N_BINDINGS && help_entry(&bindings[i + 1], lang, "   ", buf, len, &at) != 0)) {
            buf[line] = '\0';
            return line;
        }
    }
    int n = snprintf(buf + at, len - at, "\n%s", view_string(VS_HELP_MOUSE, lang));
    if (n < 0 || (size_t)n >= len - at) {
        buf[at] = '\0';
        return at;
    }
    return at + (size_t)n;
}

/* ---- the mouse ---- */

void view_pointer_move(View *v, const ViewTarget *target, int x, int y, float cell_px)
{
    if (v->dragging && v->zoom > 1.0f) {
        int cell = (int)cell_px;
        if (cell < 1) cell = 1;
        int dx = x - v->drag_x, dy = y - v->drag_y;
        if (abs(dx) < cell && abs(dy) < cell) return; /* less than a cell: nothing moves yet */
        /* dragging right shows the cells to the left: the top-left cell decreases */
        view_set_zoom(v, v->zoom, v->pan_x - (float)(dx / cell), v->pan_y - (float)(dy / cell));
        v->drag_x = x;
        v->drag_y = y;
        return;
    }
    view_set_hover_label(v, target ? target->label : NULL);
    if (target && target->kind == VIEW_TARGET_CELL)
        view_set_hover(v, target->trace, target->step, target->row, target->col);
    else
        view_set_hover(v, NULL, -1, -1, -1);
}

void view_pointer_press(View *v, const ViewTarget *target, int x, int y)
{
    if (v->show_help) {
        view_set_help(v, 0); /* a click anywhere closes the help */
        return;
    }
    switch (target ? target->kind : VIEW_TARGET_NONE) {
    case VIEW_TARGET_TIMELINE:
        view_goto(v, target->step);
        view_finish(v);
        break;
    case VIEW_TARGET_HEAD:
        view_set_head(v, target->head);
        break;
    case VIEW_TARGET_TOKEN:
        if (v->lesson->n_source_tokens == 0) {
            /* self-attention: a token is both a query and a key, whichever label was clicked */
            int i = target->row >= 0 ? target->row : target->col;
            view_select_token(v, i, i);
        } else {
            view_select_token(v, target->row, target->col);
        }
        break;
    case VIEW_TARGET_CELL:
        if (target->zoomable && v->zoom > 1.0f) {
            v->dragging = 1;
            v->drag_x = x;
            v->drag_y = y;
        }
        break;
    case VIEW_TARGET_NONE:
        break;
    }
}

void view_pointer_release(View *v)
{
    v->dragging = 0;
}

void view_wheel(View *v, const ViewTarget *target, int steps)
{
    if (!steps || !target || target->kind != VIEW_TARGET_CELL || !target->zoomable || !target->trace) return;
    if (target->step < 0 || target->step >= target->trace->n_steps) return;
    float z = v->zoom * (steps > 0 ? 1.25f : 0.8f);
    if (z < 1.0f) z = 1.0f;
    if (z > VIEW_ZOOM_MAX) z = VIEW_ZOOM_MAX;
    const AttnStep *s = &target->trace->steps[target->step];
    /* keep the cell under the pointer in the middle of the window of cells */
    float rows_shown = (float)s->rows / z, cols_shown = (float)s->cols / z;
    view_set_zoom(v, z, (float)target->col - cols_shown / 2.0f, (float)target->row - rows_shown / 2.0f);
}
