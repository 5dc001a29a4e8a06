/* view_input.h: what the keys and the mouse do to a View, as plain data with
 * no SDL. The window (src/app) turns an SDL event into a ViewKey or a
 * ViewTarget and calls one function here; every rule of the classroom UI
 * (what P does at the last step, how far [ slows down, how the wheel zooms,
 * what a click on a token selects) lives here and is unit-tested in
 * tests/test_view.c.
 *
 * Usage (the window's key handler):
 *
 *     unsigned req = view_key(&v, VIEW_KEY_RIGHT);   // or a character: view_key(&v, 'p')
 *     if (req & VIEW_REQ_QUIT) running = 0;
 *     if (req & VIEW_REQ_SAVE) save_frame();
 *
 * The keys: view_bindings() is the one table of key → action. view_key
 * looks a key up there and runs its action; the help overlay (?) lists the
 * same table (view_help_text). To add a key, add a ViewAction, a row to the
 * table in view_input.c and a case to view_do; the help follows.
 *
 * Requests: what an action asks of the window beyond the View (quit, save
 * the frame, fullscreen, reload, a new window title) comes back as a
 * bitmask of ViewRequest; the View itself is already changed.
 */
#ifndef VIEW_INPUT_H
#define VIEW_INPUT_H

#include "view.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Keys that are not characters. A character key is its lowercase ASCII code
 * ('p', '1', '[', '?', ' '); the keypad's digits, + and - are the same
 * characters as the main keyboard's. */
typedef enum ViewKey {
    VIEW_KEY_NONE = 0,
    VIEW_KEY_RIGHT = 0x100,
    VIEW_KEY_LEFT,
    VIEW_KEY_UP,
    VIEW_KEY_DOWN,
    VIEW_KEY_PAGE_UP,
    VIEW_KEY_PAGE_DOWN,
    VIEW_KEY_HOME,
    VIEW_KEY_END,
    VIEW_KEY_BACKSPACE,
    VIEW_KEY_TAB,
    VIEW_KEY_ESCAPE,
    VIEW_KEY_F1,
    VIEW_KEY_F11,
    VIEW_KEY_F5, /* a clicker's "start the presentation" button */
} ViewKey;

typedef enum ViewAction {
    VIEW_ACT_NONE,
    VIEW_ACT_NEXT,         /* the next step (or finish the one animating) */
    VIEW_ACT_PREV,         /* back: the step plays backwards */
    VIEW_ACT_HOME,         /* the first step */
    VIEW_ACT_END,          /* the last step */
    VIEW_ACT_PLAY,         /* play / pause; at the end, play from the start */
    VIEW_ACT_SLOWER,       /* speed ÷ √2 */
    VIEW_ACT_FASTER,       /* speed × √2 */
    VIEW_ACT_HEAD,         /* head N, from the key's digit */
    VIEW_ACT_NEXT_HEAD,    /* the next head, wrapping */
    VIEW_ACT_SINGLE,       /* single ↔ multi-head */
    VIEW_ACT_COMPARE,      /* compare ↔ multi-head */
    VIEW_ACT_LANG,         /* 中文 ↔ English */
    VIEW_ACT_THEME,        /* the next theme */
    VIEW_ACT_WEIGHT_SCALE, /* weight colours: [0, 1] → ÷ row max → log → [0, 1] */
    VIEW_ACT_NOTATION,     /* row ↔ column notation */
    VIEW_ACT_TEXT_BIGGER,  /* text × 1.1 */
    VIEW_ACT_TEXT_SMALLER, /* text ÷ 1.1 */
    VIEW_ACT_HELP,         /* the help overlay on / off */
    VIEW_ACT_HEADS,        /* focus: the all-heads panel on / off */
    VIEW_ACT_BLACK,        /* a black screen, and back; a step key while black comes back first */
    VIEW_ACT_INK,          /* ink on / off: the mouse draws */
    VIEW_ACT_INK_CLEAR,    /* asks the window: VIEW_REQ_INK_CLEAR */
    VIEW_ACT_SPOTLIGHT,    /* the spotlight on / off */
    VIEW_ACT_LASER,        /* the laser pointer on / off */
    VIEW_ACT_CLOCK,        /* asks the window: VIEW_REQ_CLOCK */
    VIEW_ACT_BIG_TEXT,     /* big text for the back row on / off */
    VIEW_ACT_FULLSCREEN,   /* asks the window: VIEW_REQ_FULLSCREEN */
    VIEW_ACT_SAVE,         /* asks the window: VIEW_REQ_SAVE */
    VIEW_ACT_RELOAD,       /* asks the window: VIEW_REQ_RELOAD */
    VIEW_ACT_QUIT,         /* VIEW_REQ_QUIT; Esc over the help closes the help, in fullscreen leaves
                            * fullscreen; with unsaved edits the first press shows a notice, and Q
                            * while it shows quits */
    /* the edit keys: the window hands them to its editor (editor.h, which has
     * the Edit they need) before this table; here they are for the help */
    VIEW_ACT_EDIT,        /* E: edit mode */
    VIEW_ACT_EDIT_SCALE,  /* < >: the divisor of the scores */
    VIEW_ACT_EDIT_MASK,   /* K: the mask's kind */
    VIEW_ACT_EDIT_REVERT, /* O: the lesson as loaded */
    VIEW_ACT_EDIT_UNDO,   /* Ctrl+Z / Ctrl+Y */
    VIEW_ACT_EDIT_SAVE,   /* Ctrl+S: save as */
    VIEW_ACTION_COUNT
} ViewAction;

/* What the window must do after an action, as bits. */
typedef enum ViewRequest {
    VIEW_REQ_NONE = 0,
    VIEW_REQ_QUIT = 1 << 0,
    VIEW_REQ_SAVE = 1 << 1,       /* save the frame as a PNG (see view_for_saving) */
    VIEW_REQ_FULLSCREEN = 1 << 2, /* toggle fullscreen */
    VIEW_REQ_RELOAD = 1 << 3,     /* load the lesson file again */
    VIEW_REQ_TITLE = 1 << 4,      /* the language or the mode changed: the window title with it (view_title) */
    VIEW_REQ_INK_CLEAR = 1 << 5,  /* clear the ink of the step on screen */
    VIEW_REQ_CLOCK = 1 << 6,      /* the presenter's clock starts again from 0:00 */
} ViewRequest;

enum { VIEW_BINDING_MAX_KEYS = 9 };

/* One row of the key table: the keys that run an action, and its line in
 * the help overlay. */
typedef struct ViewBinding {
    ViewAction action;
    int keys[VIEW_BINDING_MAX_KEYS];            /* ViewKey or characters; unused slots are 0 */
    const char *label[LESSON_LANG_COUNT];       /* the keys as the help names them */
    const char *description[LESSON_LANG_COUNT]; /* what they do */
} ViewBinding;

/* The key table, in the order the help lists it; *count gets its length. */
const ViewBinding *view_bindings(int *count);
/* The action a key runs, VIEW_ACT_NONE for a key that does nothing. */
ViewAction view_key_action(int key);
/* Runs an action (key: the key that asked for it, for VIEW_ACT_HEAD's digit,
 * else 0). Returns the ViewRequest bits for the window. */
unsigned view_do(View *v, ViewAction action, int key);
/* view_do(v, view_key_action(key), key). */
unsigned view_key(View *v, int key);

/* The help overlay's key lines in lang: two bindings per line, "LABEL  what",
 * the two separated by three spaces (render splits a line there into two
 * columns), then the mouse's lines. Returns the length written (always
 * NUL-terminated, cut at a line when buf is too small). */
size_t view_help_text(LessonLang lang, char *buf, size_t len);

/* ---- the mouse ---- */

/* What a point of a frame falls on (render_hit_test finds it). */
typedef enum ViewTargetKind {
    VIEW_TARGET_NONE,
    VIEW_TARGET_CELL,     /* a heatmap cell: trace, step, row, col (of step->data) */
    VIEW_TARGET_TOKEN,    /* a token label: row = query token or -1, col = key token or -1 */
    VIEW_TARGET_TIMELINE, /* a step on the timeline: step */
    VIEW_TARGET_HEAD      /* a small multiple of the heads' weights: head */
} ViewTargetKind;

typedef struct ViewTarget {
    ViewTargetKind kind;
    const AttnTrace *trace;
    int step, row, col, head;
    int zoomable;      /* the cell belongs to the zoomable (result) matrix */
    const char *label; /* the whole text of a label drawn shortened ("…") under the point, or NULL */
} ViewTarget;

/* The pointer moved to pixel (x, y) over target. While dragging a zoomed
 * matrix this pans it by whole cells of cell_px pixels; otherwise it sets
 * the hovered cell (whose explanation render shows). */
void view_pointer_move(View *v, const ViewTarget *target, int x, int y, float cell_px);
/* The left button went down at (x, y) over target: closes the help if it is
 * open; else jumps on the timeline, selects a head or a token, or starts a
 * drag on a zoomed result matrix. */
void view_pointer_press(View *v, const ViewTarget *target, int x, int y);
void view_pointer_release(View *v);
/* The wheel over target: up (steps > 0) zooms in on a zoomable cell by 1.25
 * per notch, down zooms out, keeping that cell in view; 1 to 64 times. */
void view_wheel(View *v, const ViewTarget *target, int steps);

#ifdef __cplusplus
}
#endif
#endif
