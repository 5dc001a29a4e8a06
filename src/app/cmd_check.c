/* cmd_check.c: `attnviz check LESSON...`: validate lessons, one line each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"
#include "attn.h"
#include "lesson.h"
#include "narrate.h"
#include "view.h"

/* The single-head trace the views build beside the lesson's own: when its
 * numbers overflow float32, the lesson still opens, with single and compare
 * view disabled; check says so. */
static void check_single_view(const char *path, const Lesson *lesson)
{
    AttnConfig one;
    if (view_single_config(&lesson->cfg, &one) != 0) return; /* none to build */
    char err[512];
    AttnTrace *s = attn_trace_create(&one, err, sizeof err);
    if (!s) {
        char line[1024];
        snprintf(line, sizeof line, "%s: note: single-head and compare view disabled: %s", path, err);
        app_print_line(stderr, line);
    }
    attn_trace_destroy(s);
}

/* Checks each file; an APP_* status. */
static int check_files(char **argv, int argc)
{
    if (argc < 1) return app_cmd_fail("check", APP_USAGE, "expected at least one lesson, found none");
    int bad = 0, checked = 0;
    for (int i = 0; i < argc; i++) {
        /* `attnviz check lessons/<star>` also names lessons/FORMAT.md: an existing file
         * that is not a .json is noted and skipped, not counted as a bad lesson */
        struct stat st;
        size_t len = strlen(argv[i]);
        if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode) && (len < 5 || strcmp(argv[i] + len - 5, ".json") != 0)) {
            app_fail(APP_OK, "%s: skipped, not a lesson file (lessons end in .json)", argv[i]);
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
            app_print_line(stderr, lerr.msg);
            bad++;
            free(path);
            continue;
        }
        char err[1024];
        AttnTrace *t = attn_trace_create(&lesson.cfg, err, sizeof err);
        char line[2048];
        if (!t) {
            snprintf(line, sizeof line, "%s: %s", path, err);
            app_print_line(stderr, line);
            bad++;
        } else if (narrate_check(&lesson, t, err, sizeof err) != 0) {
            /* every narration, both languages, against every step it applies to;
             * err names the file, line and column */
            app_print_line(stderr, err);
            bad++;
        } else {
            int n_steps = t->n_steps;
            size_t bytes = t->alloc_bytes;
            attn_trace_destroy(t); /* one trace in memory at a time */
            t = NULL;
            check_single_view(path, &lesson);
            /* the trace's bytes: what `show` holds for it (tools/bench_scale.py) */
            snprintf(line, sizeof line, "ok %s (%s, %d steps, trace %zu bytes)", path, lesson.id, n_steps, bytes);
            app_print_line(stdout, line);
        }
        attn_trace_destroy(t);
        lesson_free(&lesson);
        free(path);
    }
    if (!checked)
        return app_cmd_fail("check", APP_USAGE, "expected a lesson file (.json), found none among the arguments");
    return bad ? APP_USAGE : APP_OK;
}

int cmd_check(int argc, char **argv)
{
    AppArgs args;
    app_args_init(&args, "check", argc, argv, NULL);
    char **files = calloc((size_t)argc, sizeof *files);
    if (!files) return app_fail(APP_RUNTIME, "out of memory");
    int n_files = 0;
    const char *val;
    for (int id; (id = app_args_next(&args, &val)) != APP_ARGS_END;) {
        if (id == APP_ARGS_OPERAND) {
            files[n_files++] = (char *)val;
            continue;
        }
        free(files);
        if (id != APP_ARGS_HELP) return APP_USAGE;
        printf("usage: attnviz check LESSON...\n\n"
               "Loads each lesson, validates it, runs its forward pass and fills every narration\n"
               "placeholder in both languages (lessons/FORMAT.md lists them). Prints 'ok', the\n"
               "lesson's id, its steps and its trace's size in bytes per good file, one error line\n"
               "per bad one; exits 2 if any is bad.\n");
        return APP_OK;
    }
    int st = check_files(files, n_files);
    free(files);
    return st;
}
