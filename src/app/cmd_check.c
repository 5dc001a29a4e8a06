/* cmd_check.c: `attnviz check LESSON...`: validate lessons, one line each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"
#include "attn.h"
#include "lesson.h"
#include "narrate.h"

int cmd_check(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: attnviz check LESSON...\n\n"
               "Loads each lesson, validates it, runs its forward pass and fills every narration\n"
               "placeholder in both languages (lessons/FORMAT.md lists them). Prints 'ok' and the\n"
               "lesson's id per good file, one error line per bad one; exits 2 if any is bad.\n");
        return APP_OK;
    }
    if (argc < 2) return app_fail(APP_USAGE, "check needs at least one lesson (usage: attnviz check LESSON...)");
    int bad = 0, checked = 0;
    for (int i = 1; i < argc; i++) {
        /* `attnviz check lessons/<star>` also names lessons/FORMAT.md: an existing file
         * that is not a .json is noted and skipped, not counted as a bad lesson */
        struct stat st;
        size_t len = strlen(argv[i]);
        if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode) && (len < 5 || strcmp(argv[i] + len - 5, ".json") != 0)) {
            fprintf(stderr, "attnviz: %s: skipped, not a lesson file (lessons end in .json)\n", argv[i]);
            continue;
        }
        checked++;
        char *path = app_resolve_lesson(argv[i]);
        if (!path) {
            bad++;
            continue;
        }
        Lesson lesson;
        LessonError lerr;
        if (lesson_load(&lesson, path, &lerr) != 0) {
            fprintf(stderr, "%s\n", lerr.msg);
            bad++;
            free(path);
            continue;
        }
        char err[1024];
        AttnTrace *t = attn_trace_create(&lesson.cfg, err, sizeof err);
        if (!t) {
            fprintf(stderr, "%s: %s\n", path, err);
            bad++;
        } else if (narrate_check(&lesson, t, err, sizeof err) != 0) {
            /* every narration, both languages, against every step it applies to;
             * err names the file, line and column */
            fprintf(stderr, "%s\n", err);
            bad++;
        } else {
            printf("ok %s (%s, %d steps)\n", path, lesson.id, t->n_steps);
        }
        attn_trace_destroy(t);
        lesson_free(&lesson);
        free(path);
    }
    if (!checked) return app_fail(APP_USAGE, "check: none of the arguments is a lesson file (.json)");
    return bad ? APP_USAGE : APP_OK;
}
