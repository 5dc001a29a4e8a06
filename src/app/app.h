/* app.h: the attnviz program: one function per subcommand. Only src/app
 * prints to the user and decides exit statuses:
 *   0 success, 1 a runtime failure (I/O, memory, display), 2 bad input or usage. */
#ifndef APP_H
#define APP_H

#include <stddef.h>

enum { APP_OK = 0, APP_RUNTIME = 1, APP_USAGE = 2 };

/* Each takes the arguments after the subcommand name (argv[0] is the subcommand). */
int cmd_show(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* `attnviz bench --edits N [LESSON]` (src/app/bench_edits.c): N scripted
 * edits, each applied, recomputed and drawn at 1920×1080; prints
 * "edits: N p50: X ms p99: Y ms". Returns an APP_* status. */
int bench_edits(int n, const char *lesson, int threads);

/* The lessons folder: $ATTNVIZ_LESSONS, else ./lessons, else the source tree's. */
const char *app_lessons_dir(void);
/* A lesson argument as a path: an existing file as is, else an id or file name
 * looked up in the lessons folder. Returns a malloc'd path, or NULL with a
 * message printed. */
char *app_resolve_lesson(const char *arg);
struct Lesson;
/* Resolves a lesson argument (as app_resolve_lesson) and loads it. 0, or -1
 * after printing the one-line error; on failure *out owns nothing. */
int app_load_lesson(const char *arg, struct Lesson *out);
/* An option that takes a value, as "--opt VALUE" or "--opt=VALUE", at argv[*i]:
 * its name into name, its value into *val (borrowed from argv), *i past it.
 * 0, or -1 after printing that the value is missing. */
int app_option_value(int argc, char **argv, int *i, const char *command, char *name, size_t namelen, const char **val);

/* The edit options of trace, export and show (src/app/edit_args.c). */
#define APP_MAX_SETS 256
typedef struct AppEdits {
    const char *sets[APP_MAX_SETS]; /* "NAME[i][j]=VALUE", borrowed from argv */
    int n_sets;
    const char *tokens; /* "a b c", or NULL */
    double scale;       /* the divisor of the scores, 0: the lesson's */
} AppEdits;
/* Takes option `name` with its value when it is an edit option: returns 1,
 * 0 when it is not one, -1 after printing a usage error. scale_is_divisor:
 * `--scale` means the divisor (trace, show); `--score-scale` always does. */
int app_edit_option(AppEdits *a, const char *name, const char *val, int scale_is_divisor);
int app_edit_any(const AppEdits *a);
/* Applies --tokens, then the scale, then each --set in order, to the loaded
 * lesson, which becomes the edited one, with edited_from naming the lesson
 * when its numbers changed (so that narration about the numbers as written
 * is shown as such). 0, or -1 after printing one line naming the lesson and
 * the edit (exit status 2). */
int app_apply_edits(const AppEdits *a, struct Lesson *lesson);
/* Prints "attnviz: " and the message to stderr, returns status. */
int app_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
