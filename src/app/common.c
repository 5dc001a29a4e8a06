/* common.c: what the subcommands share: finding lessons, reporting failure. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"
#include "lesson.h"

int app_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("attnviz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
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

const char *app_lessons_dir(void)
{
    const char *env = getenv("ATTNVIZ_LESSONS");
    if (env && *env) return env;
    if (is_dir("lessons") && is_file("lessons/FORMAT.md")) return "lessons";
    return ATTNVIZ_SOURCE_DIR "/lessons";
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
    if (is_file(arg)) return join(arg, "", "");
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
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    free(path);
    return rc;
}

int app_option_value(int argc, char **argv, int *i, const char *command, char *name, size_t namelen, const char **val)
{
    const char *a = argv[*i];
    const char *eq = strchr(a, '=');
    if (eq && (size_t)(eq - a) < namelen) {
        memcpy(name, a, (size_t)(eq - a));
        name[eq - a] = 0;
        *val = eq + 1;
        return 0;
    }
    snprintf(name, namelen, "%s", a);
    if (*i + 1 >= argc) {
        app_fail(APP_USAGE, "%s needs a value (see attnviz %s --help)", a, command);
        return -1;
    }
    *val = argv[++*i];
    return 0;
}
