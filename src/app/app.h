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
/* Prints "attnviz: " and the message to stderr, returns status. */
int app_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
