/* common.c: what the subcommands share: finding lessons, reporting
 * failure, printing what came from outside safely. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "lesson.h"

size_t app_escape(FILE *f, const char *text)
{
    size_t out = 0;
    const char *s = text ? text : "";
    size_t left = strlen(s);
    while (*s) {
        char esc[LESSON_ESCAPE_MAX];
        size_t n = (size_t)lesson_escape_char(s, left, esc);
        size_t w = esc[0] ? strlen(esc) : n;
        fwrite(esc[0] ? esc : s, 1, w, f);
        out += w;
        s += n, left -= n;
    }
    return out;
}

void app_print_line(FILE *f, const char *line)
{
    app_escape(f, line);
    fputc('\n', f);
}

/* The subcommand running, for the prefix of every message: "attnviz show: ...". */
static const char *current_command;

void app_set_command(const char *name)
{
    current_command = name;
}

static int vfail(const char *cmd, int status, const char *fmt, va_list ap)
{
    if (!cmd) cmd = current_command;
    /* the whole message, however long its paths: sized first, then written */
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg) vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    fprintf(stderr, "attnviz%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    app_print_line(stderr, msg ? msg : fmt);
    free(msg);
    return status;
}

int app_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(NULL, status, fmt, ap);
    va_end(ap);
    return status;
}

int app_cmd_fail(const char *cmd, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(cmd, status, fmt, ap);
    va_end(ap);
    return status;
}

/* The errno of the first failed write to standard output: a stream that
 * failed once keeps its error flag, and a later flush has nothing to
 * write and no reason to give. */
static int stdout_errno;

int app_flush_stdout(void)
{
    /* output longer than the stream's buffer was written, and failed, inside
     * the printf that filled it: its errno is still the one that call left */
    int earlier = ferror(stdout) ? errno : 0;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    if (!stdout_errno) stdout_errno = errno ? errno : earlier ? earlier : EIO;
    errno = stdout_errno;
    return -1;
}

int app_finish(int status)
{
    if (app_flush_stdout() == 0) return status;
    if (status != APP_OK) return status; /* the command has failed and said why */
    return app_fail(APP_RUNTIME, "writing to standard output: %s", strerror(stdout_errno));
}

int app_check_output_path(const char *cmd, const char *opt, const char *expected, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode) || stat(path, &st) == 0 || errno != ENOENT) return 0;
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    app_cmd_fail(cmd, APP_USAGE, "%s: expected %s, found '%s', a symbolic link to a missing target ('%s')", opt,
                 expected, path, target);
    return -1;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Something other than a folder is there (a FIFO, a device, a file): the
 * loader says what is wrong with it, without opening it for reading. */
static int exists_not_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

static char *join(const char *a, const char *b, const char *c);

/* The folder this program's file is in (malloc'd), or NULL when the system
 * does not say: Linux's /proc/self/exe, else argv[0] when it holds a path. */
static char *program_dir(const char *argv0)
{
    char *exe = realpath("/proc/self/exe", NULL);
    if (!exe && argv0 && strchr(argv0, '/')) exe = realpath(argv0, NULL);
    if (!exe) return NULL;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    return exe;
}

/* What app_data_init found; each a malloc'd path kept for the process's life. */
static struct {
    char *data;    /* an installed data folder (lessons/, fonts/), or NULL */
    char *lessons; /* the lessons folder */
    char *assets;  /* the folder holding fonts/ */
} data_dirs;

void app_data_init(const char *argv0)
{
    const char *env = getenv("ATTNVIZ_DATA_DIR");
    if (env && *env) {
        data_dirs.data = strdup(env);
    } else {
        char *bin = program_dir(argv0);
        char *share = bin ? join(bin, "/../share/attnviz", "") : NULL;
        char *probe = share ? join(share, "/lessons", "") : NULL;
        if (probe && is_dir(probe)) data_dirs.data = realpath(share, NULL);
        free(probe);
        free(share);
        free(bin);
    }
    const char *lessons = getenv("ATTNVIZ_LESSONS");
    if (lessons && *lessons)
        data_dirs.lessons = strdup(lessons);
    else if (data_dirs.data)
        data_dirs.lessons = join(data_dirs.data, "/lessons", "");
    else if (is_dir("lessons") && is_file("lessons/FORMAT.md"))
        data_dirs.lessons = strdup("lessons"); /* a checkout, from its top folder */
    const char *assets = getenv("ATTNVIZ_ASSETS");
    if (assets && *assets)
        data_dirs.assets = strdup(assets);
    else if (data_dirs.data)
        data_dirs.assets = strdup(data_dirs.data);
    /* render and export read the fonts' folder from $ATTNVIZ_ASSETS
     * (render.h); without one found here they fall back to ./assets and the
     * source tree's, as a build tree needs */
    if (data_dirs.assets && !(assets && *assets)) setenv("ATTNVIZ_ASSETS", data_dirs.assets, 1);
}

const char *app_lessons_dir(void)
{
    return data_dirs.lessons ? data_dirs.lessons : ATTNVIZ_SOURCE_DIR "/lessons";
}

const char *app_assets_dir(void)
{
    return data_dirs.assets ? data_dirs.assets : ATTNVIZ_SOURCE_DIR "/assets";
}

void app_data_free(void)
{
    free(data_dirs.data);
    free(data_dirs.lessons);
    free(data_dirs.assets);
    memset(&data_dirs, 0, sizeof data_dirs);
}

static char *join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

char *app_resolve_lesson(const char *arg)
{
    if (exists_not_dir(arg)) return join(arg, "", "");
    if (is_dir(arg)) {
        app_fail(APP_USAGE, "%s: is a folder; give a lesson file (.json)", arg);
        return NULL;
    }
    if (!strchr(arg, '/')) {
        const char *dir = app_lessons_dir();
        char *base = join(dir, "/", arg);
        if (base && is_file(base)) return base;
        char *withext = base ? join(base, ".json", "") : NULL;
        free(base);
        if (withext && is_file(withext)) return withext;
        free(withext);
    }
    app_fail(APP_USAGE, "%s: no such lesson file (and no lesson of that name in %s; 'attnviz list' shows them)", arg,
             app_lessons_dir());
    return NULL;
}

int app_load_lesson(const char *arg, Lesson *out)
{
    memset(out, 0, sizeof *out);
    char *path = app_resolve_lesson(arg);
    if (!path) return -1;
    LessonError err;
    int rc = lesson_load(out, path, &err);
    if (rc != 0) app_print_line(stderr, err.msg);
    free(path);
    return rc;
}
