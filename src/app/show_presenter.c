/* show_presenter.c: `attnviz show --presenter`, the teacher's window beside
 * the one the class sees (show.h). Both show the one View: a key or the
 * mouse in either window acts on both. The presenter's window shows
 *
 *   +----------------------------------------------------------------+
 *   | step 5/15   scores₁                                   12:34     |
 *   | +----------------------------+  next: step 6/15                |
 *   | | the audience's frame,      |  +--------------------+         |
 *   | | as the class sees it       |  | the next step      |         |
 *   | +----------------------------+  +--------------------+         |
 *   | the step's whole narration,     answer: (the step's question)  |
 *   | wrapped at a size read from     on the projector: (its caption)|
 *   | a laptop's distance                                            |
 *   +----------------------------------------------------------------+
 *
 * The frame on the left is the audience's own pixels (show_presenter_capture):
 * the laser's dot, the spotlight, ink and a black screen show there as the
 * class sees them, and the mouse over it acts on the audience's frame (it
 * points, draws and clicks there). The clock counts from the moment the
 * window opened; 0 starts it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "app.h"
#include "attn.h"
#include "caption.h"
#include "show.h"

/* The presenter's own words, in the View's language. */
enum {
    PS_STEP,     /* "step %d/%d" */
    PS_NEXT,     /* above the next step */
    PS_LAST,     /* in its place at the last step */
    PS_BLACK,    /* over the frame while the screen is black */
    PS_ANSWER,   /* before the answer to the step's question */
    PS_KEYS,     /* the keys a teacher needs most, at the bottom */
    PS_CAPTION,  /* before the caption the class reads */
    PS_PREPARING /* the next step is still being computed */
};
static const char *const ps_strings[][LESSON_LANG_COUNT] = {
    [PS_STEP] = {"step %d/%d", "第 %d 步，共 %d 步"},
    [PS_NEXT] = {"next:", "下一步："},
    [PS_LAST] = {"This is the last step.", "这是最后一步。"},
    [PS_BLACK] = {"The screen is black: B brings it back.", "投影已黑屏：按 B 恢复。"},
    [PS_ANSWER] = {"answer:", "答案："},
    [PS_CAPTION] = {"the class reads:", "投影上的提要："},
    [PS_KEYS] = {"→ next   ← back   B black screen   0 clock from 0:00   ? help",
                 "→ 下一步   ← 后退   B 黑屏   0 计时归零   ? 帮助"},
    [PS_PREPARING] = {"computing…", "计算中…"},
};

static const char *ps(int id, LessonLang lang)
{
    return ps_strings[id][(unsigned)lang < LESSON_LANG_COUNT ? lang : LESSON_EN];
}

/* Dark, as a presenter's console is, so that the laptop does not light the
 * teacher's face; the text light on it. */
static const SDL_Color BG = {28, 30, 34, 255}, TEXT = {236, 238, 240, 255}, DIM = {160, 166, 176, 255},
                       CLOCK = {255, 214, 102, 255}, ANSWER = {130, 220, 150, 255}, CAPTION = {150, 200, 255, 255},
                       EDGE = {90, 96, 106, 255};

static int imax(int a, int b)
{
    return a > b ? a : b;
}

/* ---- opening and closing ---- */

int show_presenter_open(Show *s)
{
    ShowPresenter *p = &s->pres;
    int st = show_window_open(&p->w, SHOW_ROLE_PRESENTER, &s->opt, &s->cur);
    if (st != APP_OK) return st;
    p->clock0 = attn_clock_seconds();
    p->shown_second = -1;
    p->must_draw = 1;
    return APP_OK;
}

static void drop_next(ShowPresenter *p)
{
    render_destroy(p->next_rc);
    if (p->next_sdl) SDL_DestroyRenderer(p->next_sdl);
    SDL_FreeSurface(p->next);
    p->next_rc = NULL;
    p->next_sdl = NULL;
    p->next = NULL;
    p->next_key = 0;
}

void show_presenter_close(ShowPresenter *p)
{
    drop_next(p);
    SDL_FreeSurface(p->now);
    p->now = NULL;
    if (p->w.win) show_window_close(&p->w);
}

int show_presenter_window(const ShowPresenter *p, Uint32 id)
{
    return p->w.win && id == SDL_GetWindowID(p->w.win);
}

/* ---- the clock ---- */

static long clock_second(const ShowPresenter *p)
{
    double t = attn_clock_seconds() - p->clock0;
    return t > 0 ? (long)t : 0;
}

void show_presenter_clock_reset(ShowPresenter *p)
{
    if (!p->w.win) return;
    p->clock0 = attn_clock_seconds();
    p->must_draw = 1;
}

int show_presenter_wait_ms(const ShowPresenter *p)
{
    if (!p->w.win) return -1;
    double t = attn_clock_seconds() - p->clock0;
    double left = (double)(clock_second(p) + 1) - t;
    int ms = (int)(left * 1000.0) + 1;
    return ms < 1 ? 1 : ms;
}

/* "4:07", "1:02:03". */
static void clock_text(long sec, char *buf, size_t len)
{
    if (sec >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", sec / 3600, sec / 60 % 60, sec % 60);
    else
        snprintf(buf, len, "%ld:%02ld", sec / 60, sec % 60);
}

/* ---- the audience's frame ---- */

int show_presenter_capture(ShowPresenter *p, ShowScreen *aud)
{
    if (!p->w.win) return 0;
    if (!p->now || p->now->w != aud->w || p->now->h != aud->h) {
        SDL_FreeSurface(p->now);
        p->now = SDL_CreateRGBSurfaceWithFormat(0, aud->w, aud->h, 32, SDL_PIXELFORMAT_ARGB8888);
        if (!p->now) return -1;
    }
    p->must_draw = 1;
    if (aud->frame) { /* the software path: the frame is a surface */
        SDL_SetSurfaceBlendMode(aud->frame, SDL_BLENDMODE_NONE);
        return SDL_BlitSurface(aud->frame, NULL, p->now, NULL);
    }
    return SDL_RenderReadPixels(aud->sdl, NULL, SDL_PIXELFORMAT_ARGB8888, p->now->pixels, p->now->pitch);
}

int show_presenter_due(const Show *s)
{
    const ShowPresenter *p = &s->pres;
    if (!p->w.win) return 0;
    if (p->must_draw || s->cur.view.revision != p->drawn_revision || clock_second(p) != p->shown_second) return 1;
    int w, h;
    SDL_GetWindowSizeInPixels(p->w.win, &w, &h);
    return w != p->drawn_w || h != p->drawn_h;
}

int show_presenter_point(const ShowPresenter *p, const ShowScreen *scr, int *x, int *y)
{
    int ww, wh;
    SDL_GetWindowSize(p->w.win, &ww, &wh);
    if (ww <= 0 || wh <= 0 || p->now_box.w <= 0 || p->now_box.h <= 0) return 0;
    long px = (long)*x * p->w.scr.w / ww - p->now_box.x, py = (long)*y * p->w.scr.h / wh - p->now_box.y;
    if (px < 0 || py < 0 || px >= p->now_box.w || py >= p->now_box.h) return 0;
    *x = (int)(px * scr->w / p->now_box.w);
    *y = (int)(py * scr->h / p->now_box.h);
    return 1;
}

/* ---- the next step ---- */

/* A View showing the step after v's, in its final state, with nothing of
 * the moment on it (no notice, help, hover, tool or black screen): a copy
 * that shares v's traces and lesson, valid while v is unchanged. */
static void next_view(const View *v, View *out)
{
    view_for_saving(v, out);
    out->edit_before = NULL; /* v's: the copy never frees it, and another step shows no edit */
    out->show_help = 0;
    out->black = 0;
    out->tool = VIEW_TOOL_NONE;
    view_goto(out, v->step + 1);
    view_finish(out);
}

/* What the next step's picture depends on. */
static unsigned long long next_key(const View *v, int w, int h)
{
    struct {
        unsigned long id;
        int step, head, w, h, mode, lang, theme, weights, notation, big, heads, sel_q, sel_k, edited;
        float scale;
    } k;
    memset(&k, 0, sizeof k); /* the padding too */
    k.id = v->id, k.step = v->step, k.head = v->head, k.w = w, k.h = h;
    k.mode = v->mode, k.lang = v->lang, k.theme = v->theme, k.weights = v->weight_scale;
    k.notation = v->notation, k.big = v->big_text, k.heads = v->hide_heads, k.sel_q = v->sel_query;
    k.sel_k = v->sel_key, k.edited = v->edited, k.scale = v->text_scale;
    unsigned long long key = attn_fnv1a64_bytes(ATTN_FNV1A64_BASIS, &k, sizeof k);
    return key ? key : 1;
}

/* Draws the step after v's into p->next at the audience's size, when that
 * changed. 1 when there is one to show, 0 when v is at the last step or the
 * next step is still being computed, -1 on an error (SDL_GetError()). */
static int draw_next(ShowPresenter *p, const View *v, int w, int h)
{
    if (v->step + 1 >= view_step_count(v) || !view_step_ready(v, view_trace(v), v->step + 1)) return 0;
    unsigned long long key = next_key(v, w, h);
    if (p->next && key == p->next_key) return 1;
    if (!p->next || p->next->w != w || p->next->h != h) {
        drop_next(p);
        char err[512];
        p->next = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
        p->next_sdl = p->next ? SDL_CreateSoftwareRenderer(p->next) : NULL;
        p->next_rc = p->next_sdl ? render_create(p->next_sdl, NULL, err, sizeof err) : NULL;
        if (!p->next_rc) {
            if (p->next_sdl) SDL_SetError("%s", err);
            drop_next(p);
            return -1;
        }
    }
    View nv;
    next_view(v, &nv);
    if (render_frame(p->next_rc, &nv, w, h) != 0) return -1;
    p->next_key = key;
    return 1;
}

/* ---- the step's question ---- */

/* The answer to the current step's question, for the teacher's eyes: ""
 * when the step asks none. The lesson format has no questions yet, so no
 * step asks one; the presenter's window draws an answer when this gives one. */
static void step_answer(const View *v, char *buf, size_t len)
{
    (void)v;
    if (len) buf[0] = '\0';
}

/* ---- drawing ---- */

/* Draws surface src scaled into box (its aspect kept by the caller), with
 * an edge around it. 0, or -1. */
static int draw_picture(SDL_Renderer *r, SDL_Surface *src, SDL_Rect box)
{
    SDL_SetRenderDrawColor(r, EDGE.r, EDGE.g, EDGE.b, 255);
    SDL_Rect edge = {box.x - 1, box.y - 1, box.w + 2, box.h + 2};
    SDL_RenderFillRect(r, &edge);
    if (!src) return 0;
    SDL_Texture *t = SDL_CreateTextureFromSurface(r, src);
    if (!t) return -1;
    SDL_SetTextureScaleMode(t, SDL_ScaleModeLinear);
    int rc = SDL_RenderCopy(r, t, NULL, &box);
    SDL_DestroyTexture(t);
    return rc;
}

/* Text wrapped to width at the largest size from `size` down to `least`
 * whose lines fit in height (at `least`, the lines that fit, the last
 * ending "…"), drawn from (x, y); a paragraph ('\n') starts half a line
 * lower. Returns the height drawn. */
static int draw_wrapped(RenderCtx *rc, const char *text, int size, int least, SDL_Color col, int x, int y, int width,
                        int height)
{
    enum { MAX_LINES = 64 };
    size_t starts[MAX_LINES], lens[MAX_LINES];
    int tops[MAX_LINES + 1];
    int n = 0, lh = 0;
    for (;; size--) {
        n = render_wrap(rc, text, size, width, starts, lens, MAX_LINES);
        lh = render_line_height(rc, size);
        tops[0] = 0;
        for (int i = 1; i <= n; i++) /* tops[i]: where line i starts; tops[n]: the height of all */
            tops[i] = tops[i - 1] + lh + (i < n && starts[i] > 0 && text[starts[i] - 1] == '\n' ? lh / 2 : 0);
        if (tops[n] <= height || size <= least) break;
    }
    int fit = 0;
    while (fit < n && tops[fit] + lh <= height) fit++;
    if (fit == 0) fit = 1;
    char lines[MAX_LINES][1024];
    int ascent[MAX_LINES], most = 0;
    for (int i = 0; i < fit; i++) {
        char *line = lines[i];
        size_t len = lens[i] < sizeof lines[i] - 4 ? lens[i] : sizeof lines[i] - 4;
        memcpy(line, text + starts[i], len);
        line[len] = '\0';
        if (i == fit - 1 && fit < n) {
            while (len > 0 && ((unsigned char)line[len - 1] & 0xC0) == 0x80) len--; /* not inside a character */
            if (len > 0) len--;
            memcpy(line + len, "…", sizeof "…");
        }
        RenderTextRun runs[32];
        render_text_runs(rc, line, size, runs, 32, &ascent[i]);
        if (ascent[i] > most) most = ascent[i];
    }
    /* every line's baseline the same distance below its top, whatever fonts it mixes */
    for (int i = 0; i < fit; i++) render_text(rc, lines[i], size, col, x, y + tops[i] + most - ascent[i], 0);
    return tops[fit - 1] + lh;
}

int show_presenter_draw(Show *s)
{
    ShowPresenter *p = &s->pres;
    const View *v = &s->cur.view;
    LessonLang lang = v->lang;
    RenderCtx *rc = p->w.rc;
    int W, H;
    if (show_screen_begin(&p->w.scr, rc, &W, &H) != 0)
        return app_fail(APP_RUNTIME, "drawing the presenter's window failed: %s", SDL_GetError());
    SDL_Renderer *r = p->w.scr.sdl;
    SDL_SetRenderDrawColor(r, BG.r, BG.g, BG.b, 255);
    SDL_RenderClear(r);

    /* sizes from the window's height: a laptop's screen read from arm's length */
    int m = imax(8, H / 54);
    int big = imax(18, H / 24), body = imax(15, H / 32), small = imax(12, H / 48), least = imax(12, H / 64);

    /* the top line: the step and the clock */
    char head[128], clock[32];
    snprintf(head, sizeof head, ps(PS_STEP, lang), view_step_ordinal(v->step), view_step_count(v));
    long sec = clock_second(p);
    clock_text(sec, clock, sizeof clock);
    render_text(rc, head, big, TEXT, m, m, 0);
    render_text(rc, clock, big, CLOCK, W - m, m, 2);
    int top = m + render_line_height(rc, big) + m / 2, bottom = H - m - render_line_height(rc, small) - m;

    /* left: the frame the class sees, the next step under it */
    int left_w = (W - 3 * m) * 45 / 100, right_x = 2 * m + left_w, right_w = W - m - right_x;
    int aw = imax(1, s->w.scr.w), ah = imax(1, s->w.scr.h);
    int box_w = left_w, box_h = (int)((long)left_w * ah / aw), most_h = (bottom - top) * 62 / 100;
    if (box_h > most_h) box_h = most_h, box_w = (int)((long)most_h * aw / ah);
    p->now_box = (SDL_Rect){m, top, box_w, box_h};
    if (draw_picture(r, p->now, p->now_box) != 0)
        return app_fail(APP_RUNTIME, "drawing the presenter's window failed: %s", SDL_GetError());
    if (v->black) draw_wrapped(rc, ps(PS_BLACK, lang), body, least, CLOCK, m * 2, top + m, box_w - 2 * m, box_h);
    int y = top + box_h + m;
    int at_end = v->step + 1 >= view_step_count(v);
    char label[160];
    if (at_end) {
        snprintf(label, sizeof label, "%s", ps(PS_LAST, lang));
    } else {
        char step[96];
        snprintf(step, sizeof step, ps(PS_STEP, lang), view_step_ordinal(v->step + 1), view_step_count(v));
        snprintf(label, sizeof label, "%s %s", ps(PS_NEXT, lang), step);
    }
    render_text(rc, label, small, DIM, m, y, 0);
    y += render_line_height(rc, small) + m / 4;
    int nb_h = bottom - y, nb_w = (int)((long)nb_h * aw / ah);
    if (nb_w > left_w * 3 / 4) nb_w = left_w * 3 / 4, nb_h = (int)((long)nb_w * ah / aw);
    if (!at_end && nb_h > 0) {
        SDL_Rect nb = {m, y, nb_w, nb_h};
        int got = draw_next(p, v, aw, ah);
        if (got < 0) return app_fail(APP_RUNTIME, "drawing the next step failed: %s", SDL_GetError());
        if (draw_picture(r, got ? p->next : NULL, nb) != 0)
            return app_fail(APP_RUNTIME, "drawing the presenter's window failed: %s", SDL_GetError());
        if (!got) render_text(rc, ps(PS_PREPARING, lang), small, DIM, nb.x + m, nb.y + m, 0);
    }

    /* right: the whole narration; under it the answer to the step's
     * question and the caption the class reads instead of the narration */
    int lh = render_line_height(rc, small), low = bottom;
    char *text = malloc(NARRATE_MAX_STEP_TEXT);
    if (!text) return app_fail(APP_RUNTIME, "out of memory");
    if (v->big_text && view_big_text_caption(v, text, NARRATE_MAX_STEP_TEXT) > 0) { /* two lines at most */
        int h = lh + 2 * render_line_height(rc, small + 2);
        low -= h + m;
        render_text(rc, ps(PS_CAPTION, lang), small, DIM, right_x, low + m, 0);
        draw_wrapped(rc, text, small + 2, least, CAPTION, right_x, low + m + lh, right_w, h - lh);
    }
    step_answer(v, text, NARRATE_MAX_STEP_TEXT);
    if (text[0]) { /* at most a third of the column */
        int h = (low - top) / 3;
        low -= h + m;
        render_text(rc, ps(PS_ANSWER, lang), small, DIM, right_x, low + m, 0);
        draw_wrapped(rc, text, body, least, ANSWER, right_x, low + m + lh, right_w, h - lh);
    }
    view_narration(v, text, NARRATE_MAX_STEP_TEXT);
    draw_wrapped(rc, text, body, least, TEXT, right_x, top, right_w, low - top);
    free(text);

    /* the keys, along the bottom */
    render_text(rc, ps(PS_KEYS, lang), small, DIM, m, H - m - render_line_height(rc, small), 0);

    if (show_screen_present(&p->w.scr) != 0)
        return app_fail(APP_RUNTIME, "showing the presenter's window failed: %s", SDL_GetError());
    p->must_draw = 0;
    p->shown_second = sec;
    p->drawn_revision = v->revision;
    SDL_GetWindowSizeInPixels(p->w.win, &p->drawn_w, &p->drawn_h);
    return APP_OK;
}
