/* show_edit.h: the window's edit keys and mouse (src/app/show_edit.c).
 *
 * Usage, in the event loop:
 *
 *     ShowEdit se = {.edit = edit, .save_dir = "attnviz-lessons"};
 *     case SDL_KEYDOWN:   if (show_edit_key(&se, view, &ev.key)) break; ...
 *     case SDL_TEXTINPUT: show_edit_text(&se, view, ev.text.text); ...
 *     case SDL_MOUSEBUTTONDOWN: if (show_edit_mouse_down(&se, view, &hit, ev.button.clicks, y)) break; ...
 *
 * Keys: E edit mode (on the hovered cell when it is editable), and in it
 * arrows, Tab, typed numbers, Enter, Esc, Backspace, F2 / Insert / Delete
 * (tokens, on X); anywhere: < and > the scale, K the mask kind, O back to
 * the lesson as loaded, Ctrl+Z / Ctrl+Y (Ctrl+Shift+Z) undo / redo, Ctrl+S
 * save as. Mouse: double-click a lesson matrix's cell to edit it; in edit
 * mode click a cell to move there (a mask cell toggles) and drag it up or
 * down to change it (Shift: finer).
 */
#ifndef SHOW_EDIT_H
#define SHOW_EDIT_H

#include <SDL.h>
#include <time.h>

#include "edit.h"
#include "render.h"
#include "view.h"

typedef struct ShowEdit {
    Edit *edit;           /* borrowed */
    const char *save_dir; /* where Ctrl+S writes */
    int swallow_text;     /* the text event of a key that was a command (E, K, O, <, >) */
    int scrubbing, scrub_y;
    int pending_dy, pending_fine; /* drag motion not yet applied: one recompute a frame */
    unsigned long saves;          /* lessons Ctrl+S has saved */
    struct timespec started;      /* when the window opened: a save's temporary older than this is stale */
} ShowEdit;

/* 1 when the key was an edit key (the window then does nothing else with it). */
int show_edit_key(ShowEdit *se, View *v, const SDL_KeyboardEvent *ev);
/* Text typed (SDL_TEXTINPUT); 1 when used. */
int show_edit_text(ShowEdit *se, View *v, const char *text);
/* A left click on hit (clicks: 2 for a double-click), at window y; 1 when used. */
int show_edit_mouse_down(ShowEdit *se, View *v, const RenderHit *hit, int clicks, int y);
/* The mouse moved to y while a cell is being dragged (fine: Shift); 1 when
 * used. The change waits for show_edit_flush, once a frame, so that a fast
 * drag over a large lesson is one recompute per frame, not one per event. */
int show_edit_mouse_motion(ShowEdit *se, View *v, int y, int fine);
/* Applies the drag's motion since the last call; 1 when there was some. */
int show_edit_flush(ShowEdit *se, View *v);
/* After a frame's events: a notice when the history of changes, full, let
 * go of its oldest ones (Edit.forgotten). */
void show_edit_tell(ShowEdit *se, View *v);
int show_edit_mouse_up(ShowEdit *se, View *v);
/* Ctrl+S: the edited lesson as a new file in save_dir; the notice says where. */
void show_edit_save(ShowEdit *se, View *v);

#endif
