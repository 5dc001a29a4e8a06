/* app.h: the attnviz program: one function per subcommand. Only src/app
 * prints to the user and decides exit statuses:
 *   0 success, 1 a runtime failure (I/O, memory, display), 2 bad input or usage. */
#ifndef APP_H
#define APP_H

enum { APP_OK = 0, APP_RUNTIME = 1, APP_USAGE = 2 };

/* Each takes the arguments after the subcommand name (argv[0] is the subcommand). */
int cmd_show(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Where the lessons and fonts are. An installed attnviz reads them from
 * PREFIX/share/attnviz (lessons/, fonts/) beside its PREFIX/bin, or from the
 * folder $ATTNVIZ_DATA_DIR names, laid out the same; a build tree from the
 * checkout it runs in (./lessons), else from the source tree it was built
 * from. $ATTNVIZ_LESSONS and $ATTNVIZ_ASSETS name either folder alone.
 * app_data_init looks once, at start-up (it may set $ATTNVIZ_ASSETS for the
 * render layer); app_data_free forgets. */
void app_data_init(const char *argv0);
void app_data_free(void);
/* The lessons folder. */
const char *app_lessons_dir(void);
/* The folder holding fonts/ (RenderOptions.assets_dir's meaning). */
const char *app_assets_dir(void);
/* A lesson argument as a path: an existing file as is, else an id or file name
 * looked up in the lessons folder. Returns a malloc'd path, or NULL with a
 * message printed. */
char *app_resolve_lesson(const char *arg);
struct Lesson;
/* Resolves a lesson argument (as app_resolve_lesson) and loads it. 0, or -1
 * after printing the one-line error; on failure *out owns nothing. */
int app_load_lesson(const char *arg, struct Lesson *out);
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define APP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define APP_PRINTF(f, a)
#endif

/* Prints "attnviz: " and the message to stderr as one line (control
 * characters escaped, see app_escape), returns status. */
int app_fail(int status, const char *fmt, ...) APP_PRINTF(2, 3);
/* Names the subcommand that runs, so that app_fail's lines read "attnviz CMD: ..." as the option errors do. */
void app_set_command(const char *name);
/* The same as "attnviz CMD: message". */
int app_cmd_fail(const char *cmd, int status, const char *fmt, ...) APP_PRINTF(3, 4);
/* Writes s to f with each character escaped as lesson_escape_char says
 * (control characters, characters not seen or that reorder the line, bytes
 * that are not UTF-8), so that nothing a lesson or a file name holds can
 * break a line or reach the terminal as a command; other UTF-8 text as it
 * is. Returns the bytes written. */
size_t app_escape(FILE *f, const char *s);
/* app_escape(f, line) and a newline: a message from a library (a lesson's
 * error) as one line. */
void app_print_line(FILE *f, const char *line);
/* Flushes standard output, keeping the reason of its first failed write
 * for app_finish. 0, or -1 with errno. */
int app_flush_stdout(void);
/* A subcommand's end: status, or, when the command succeeded but standard
 * output could not be written (a full disk, /dev/full, a closed pipe),
 * APP_RUNTIME after saying so, with the reason of the first failed write
 * (app_flush_stdout) or of the last flush. */
int app_finish(int status);

/* An output path given as OPT: -1 after "attnviz CMD: OPT: expected
 * EXPECTED, found 'PATH', a symbolic link to a missing target ('T')" when
 * it is one, else 0 (whatever else is wrong is the writer's to say). */
int app_check_output_path(const char *cmd, const char *opt, const char *expected, const char *path);

/* ---- the command line: one convention for every subcommand ----
 *
 * Options are GNU long options read with getopt_long: `--opt VALUE` and
 * `--opt=VALUE` both work, a command may give an option a one-letter form
 * (-o DIR), options and operands mix in any order, `--` ends the options,
 * and --help / -h is always there. Every complaint is one line on stderr,
 *     attnviz CMD: --opt: expected X, found 'Y'
 * and exit status 2.
 *
 *     enum { OPT_SIZE = 1, OPT_QUIET };
 *     static const AppOption opts[] = {{"size", 0, 1, OPT_SIZE}, {"quiet", 'q', 0, OPT_QUIET}, {0}};
 *     AppArgs a;
 *     app_args_init(&a, "export", argc, argv, opts);
 *     const char *val;
 *     for (int id; (id = app_args_next(&a, &val)) != APP_ARGS_END;) {
 *         switch (id) {
 *         case APP_ARGS_ERROR: return APP_USAGE;       // already printed
 *         case APP_ARGS_HELP: usage(stdout); return APP_OK;
 *         case APP_ARGS_OPERAND: ...val is a lesson...
 *         case OPT_SIZE: if (app_arg_size(&a, val, &w, &h) != 0) return APP_USAGE; break;
 *         }
 *     }
 */
typedef struct AppOption {
    const char *name; /* "size" for --size; NULL ends a table */
    char letter;      /* 'o' for -o, or 0 */
    int has_value;    /* 1: takes a value */
    int id;           /* what app_args_next returns for it, > 0 */
} AppOption;

enum { APP_ARGS_END = 0, APP_ARGS_ERROR = -1, APP_ARGS_HELP = -2, APP_ARGS_OPERAND = -3, APP_ARGS_MAX_OPTIONS = 32 };

typedef struct AppArgs {
    const char *cmd; /* "export": the name messages give */
    int argc;
    char **argv;
    const AppOption *opts;
    int n_opts;
    char option[64]; /* "--size": the option app_args_next returned last */
    int done;        /* getopt_long has finished; operands after `--` remain */
} AppArgs;

/* argv[0] is the subcommand's name; argv is reordered as getopt_long does. */
void app_args_init(AppArgs *a, const char *cmd, int argc, char **argv, const AppOption *opts);
/* The next option's id with its value in *val (NULL for options without),
 * APP_ARGS_OPERAND with the operand in *val, APP_ARGS_HELP, APP_ARGS_END,
 * or APP_ARGS_ERROR after printing the message. */
int app_args_next(AppArgs *a, const char **val);
/* "attnviz CMD: --opt: expected EXPECTED, found 'FOUND'" for the option
 * returned last; returns APP_USAGE. */
int app_arg_bad(const AppArgs *a, const char *expected, const char *found);
/* Values of the option returned last: 0, or -1 after app_arg_bad. */
int app_arg_number(const AppArgs *a, const char *val, double lo, double hi, double *out);
int app_arg_int(const AppArgs *a, const char *val, int lo, int hi, int *out); /* hi INT_MAX: no upper bound */
/* val one of names[0..count): *out its index ("expected light, dark or projector"). */
int app_arg_choice(const AppArgs *a, const char *val, const char *const *names, int count, int *out);
/* "1280x720" (export_parse_size). */
int app_arg_size(const AppArgs *a, const char *val, int *width, int *height);
/* A number the lesson decides the range of (--head, --step), once it is
 * loaded: "attnviz CMD: OPT: expected WHAT from LO to HI, found 'VALUE'";
 * returns APP_USAGE. */
int app_refuse_range(const char *cmd, const char *opt, const char *what, int lo, int hi, int value);
/* An operand more than the command takes: "expected WHAT, found 'A' and 'B'". */
int app_arg_extra(const AppArgs *a, const char *what, const char *first, const char *extra);

/* ---- the edit options of trace, export and show (src/app/edit_args.c) ----
 *
 * Each of those commands puts APP_EDIT_OPTIONS in its option table (export
 * without "scale", which is its pixel scale there) and hands every id it does
 * not know to app_edit_arg. */
enum { APP_OPT_SET = 100, APP_OPT_SCORE_SCALE, APP_OPT_TOKENS };
#define APP_EDIT_OPTIONS                                                                                               \
    {"set", 0, 1, APP_OPT_SET}, {"score-scale", 0, 1, APP_OPT_SCORE_SCALE},                                            \
    {                                                                                                                  \
        "tokens", 0, 1, APP_OPT_TOKENS                                                                                 \
    }
#define APP_EDIT_SCALE_OPTION                                                                                          \
    {                                                                                                                  \
        "scale", 0, 1, APP_OPT_SCORE_SCALE                                                                             \
    }
#define APP_MAX_SETS 256
typedef struct AppEdits {
    const char *sets[APP_MAX_SETS]; /* "NAME[i][j]=VALUE", borrowed from argv */
    int n_sets;
    const char *tokens; /* "a b c", or NULL */
    double scale;       /* the divisor of the scores, 0: the lesson's */
} AppEdits;
/* Takes option id with its value when it is an edit option: 1, 0 when it is
 * not one, -1 after printing a usage error. */
int app_edit_arg(AppEdits *e, const AppArgs *a, int id, const char *val);
int app_edit_any(const AppEdits *e);
/* Applies --tokens, then the scale, then each --set in order, to the loaded
 * lesson, which becomes the edited one, with edited_from naming the lesson
 * when its numbers changed (so that narration about the numbers as written
 * is shown as such). 0, or -1 after printing one line naming the lesson and
 * the edit (exit status 2). */
int app_apply_edits(const AppEdits *e, struct Lesson *lesson);
/* `attnviz bench --edits N [LESSON]` (src/app/bench_edits.c): N scripted
 * edits, each applied, recomputed and drawn at 1920×1080; prints
 * "edits: N p50: X ms p99: Y ms", then the CPU time per edit. Returns an
 * APP_* status. */
int bench_edits(int n, const char *lesson, int threads);

#endif
