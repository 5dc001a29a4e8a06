/* show_recovery.c: edits not saved are kept on disk (show.h).
 *
 * While the window holds edits that Ctrl+S has not saved, the edited lesson
 * is also written to a recovery file in the save folder,
 * SAVE_DIR/.ID.attnviz-recovery.json (ID: the lesson as loaded), after each
 * change (a drag once it ends), atomically: a temporary file renamed over
 * it, with the mode every file attnviz writes has. It is an ordinary lesson
 * (the one Ctrl+S would save). Once the edits are saved or undone, the file
 * goes. So a window that was closed, killed or lost with its machine leaves
 * the edits behind, and the next window on the same lesson offers them: Y
 * restores them (one change, which Ctrl+Z undoes), D discards the file.
 *
 * attnviz removes or replaces only a recovery file it wrote itself, or one
 * it has read as a lesson saved from this very lesson; any other file of
 * that name is left alone, and the window says that edits are not kept.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <SDL.h>

#include "app.h"
#include "edit.h"
#include "editor.h"
#include "lesson.h"
#include "show.h"

/* Reads the recovery file into out: 0, or -1 with why in err. */
static int read_recovery(const Show *s, Lesson *out, char *err, size_t errlen)
{
    const ShowRecovery *r = &s->rec;
    LessonError le;
    if (lesson_load(out, r->path, &le) != 0) {
        snprintf(err, errlen, "%s", le.msg);
        return -1;
    }
    char want[LESSON_MAX_ID_BYTES + 1];
    edit_saved_id(s->cur.lesson->id, want, sizeof want);
    if (strcmp(out->id, want) != 0) {
        snprintf(err, errlen, "%s: expected a lesson saved from %s (id %s), found the id %s", r->path,
                 s->cur.lesson->id, want, out->id);
        lesson_free(out);
        return -1;
    }
    return 0;
}

void show_recovery_open(Show *s)
{
    ShowRecovery *r = &s->rec;
    memset(r, 0, sizeof *r);
    r->changes_seen = s->cur.changes;
    r->saves_seen = s->se.saves;
    s->saved_changes = s->cur.changes;
    const char *dir = s->se.save_dir;
    if ((size_t)snprintf(r->path, sizeof r->path, "%s/.%s.attnviz-recovery.json", dir, s->cur.lesson->id) >=
        sizeof r->path) {
        snprintf(r->blocked, sizeof r->blocked, "%s: the path is too long for a recovery file", dir);
        return;
    }
    struct stat st;
    if (lstat(r->path, &st) != 0) {
        r->owned = 1; /* none there: the window may make it */
        return;
    }
    View *v = &s->cur.view;
    Lesson L;
    char err[8192];
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, sizeof err, "%s: expected a lesson file, found %s", r->path, lesson_file_kind(st.st_mode));
    } else if (read_recovery(s, &L, err, sizeof err) == 0) {
        lesson_free(&L);
        r->offered = 1;
        view_set_notice(v, VS_NOTICE_RECOVERY_OFFER, r->path, 1);
        return;
    }
    /* not one of ours: left alone, and no edits are written over it */
    snprintf(r->blocked, sizeof r->blocked, "%s", err);
    view_set_notice(v, VS_NOTICE_RECOVERY_REFUSED, err, 1);
    app_fail(APP_OK, "%s", err);
}

/* Removes the recovery file, which is ours. */
static void remove_recovery(ShowRecovery *r)
{
    struct stat st;
    if (lstat(r->path, &st) == 0 && S_ISREG(st.st_mode) && unlink(r->path) != 0)
        app_fail(APP_OK, "%s: cannot remove it: %s", r->path, strerror(errno));
}

int show_recovery_key(Show *s, const SDL_KeyboardEvent *e)
{
    ShowRecovery *r = &s->rec;
    View *v = &s->cur.view;
    if (!r->offered || v->edit_mode || (e->keysym.mod & (KMOD_CTRL | KMOD_ALT | KMOD_GUI))) return 0;
    if (e->keysym.sym == SDLK_d) {
        r->offered = 0;
        r->owned = 1;
        remove_recovery(r);
        view_set_notice(v, VS_NOTICE_RECOVERY_DISCARDED, NULL, 0);
        return 1;
    }
    if (e->keysym.sym != SDLK_y) {
        if (v->notice_left <= 0) view_set_notice(v, VS_NOTICE_RECOVERY_OFFER, r->path, 1); /* still waiting */
        return 0;
    }
    r->offered = 0;
    Lesson L;
    char err[8192];
    int ok = read_recovery(s, &L, err, sizeof err) == 0;
    if (ok) {
        if (edit_restore(s->cur.edit, &L) != 0) {
            snprintf(err, sizeof err, "%s", s->cur.edit->msg);
            ok = 0;
        }
        lesson_free(&L);
    }
    if (!ok) {
        snprintf(r->blocked, sizeof r->blocked, "%s", err);
        view_set_notice(v, VS_NOTICE_RECOVERY_REFUSED, err, 1);
        app_fail(APP_OK, "%s", err);
    } else {
        r->owned = 1;
        editor_follow(v, s->cur.edit);
        view_set_notice(v, VS_NOTICE_RECOVERED, r->path, 0);
    }
    return 1;
}

void show_recovery_follow(Show *s)
{
    ShowRecovery *r = &s->rec;
    View *v = &s->cur.view;
    int saved = s->se.saves != r->saves_seen;
    if (saved) {
        r->saves_seen = s->se.saves;
        s->saved_changes = s->cur.changes;
    }
    int unsaved = s->cur.changes != s->saved_changes && edit_modified(s->cur.edit);
    view_set_unsaved(v, unsaved);
    /* a drag is written once it ends; an offer waits for its answer */
    if ((!saved && s->cur.changes == r->changes_seen) || s->se.scrubbing || r->offered) return;
    r->changes_seen = s->cur.changes;
    if (!unsaved) {
        if (r->owned) remove_recovery(r);
        return;
    }
    char err[8192];
    if (r->blocked[0]) {
        snprintf(err, sizeof err, "%s", r->blocked);
    } else {
        Lesson out;
        int dropped = 0;
        memset(&out, 0, sizeof out);
        int rc = edit_saveable(s->cur.edit, &out, &dropped, err, sizeof err);
        if (rc == 0) rc = lesson_save_replacing(&out, s->se.save_dir, r->path, err, sizeof err);
        if (out.id) lesson_free(&out);
        if (rc == 0) {
            r->failed = 0;
            return;
        }
    }
    if (r->failed) return; /* said once until it works again */
    r->failed = 1;
    view_set_notice(v, VS_NOTICE_RECOVERY_FAILED, err, 1);
    app_fail(APP_OK, "the unsaved edits could not be kept on disk: %s", err);
}
