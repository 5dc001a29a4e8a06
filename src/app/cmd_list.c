/* cmd_list.c: `attnviz list [DIR]`: the lessons in teaching order. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "lesson.h"

typedef struct Entry {
    int order;
    char *file, *id, *title_en, *title_zh;
} Entry;

static int by_order(const void *a, const void *b)
{
    const Entry *x = a, *y = b;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return strcmp(x->file, y->file);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

int cmd_list(int argc, char **argv)
{
    AppArgs args;
    app_args_init(&args, "list", argc, argv, NULL);
    const char *dir = NULL, *val;
    for (int id; (id = app_args_next(&args, &val)) != APP_ARGS_END;) {
        if (id == APP_ARGS_HELP) {
            printf("usage: attnviz list [DIR]\n\nLists the lessons in DIR (default: %s) in teaching order:\n"
                   "order, id, English title, Chinese title. Files that do not load are reported on stderr.\n",
                   app_lessons_dir());
            return APP_OK;
        }
        if (id != APP_ARGS_OPERAND) return APP_USAGE;
        if (dir) return app_arg_extra(&args, "at most one folder", dir, val);
        dir = val;
    }
    if (!dir) dir = app_lessons_dir();
    DIR *d = opendir(dir);
    if (!d) return app_cmd_fail("list", APP_USAGE, "%s: cannot open the lessons folder", dir);
    Entry *list = NULL;
    int n = 0, cap = 0, bad = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        size_t plen = strlen(dir) + len + 2;
        char *path = malloc(plen);
        if (!path) break;
        snprintf(path, plen, "%s/%s", dir, de->d_name);
        Lesson lesson;
        LessonError err;
        if (lesson_load(&lesson, path, &err) != 0) {
            app_print_line(stderr, err.msg);
            bad++;
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            Entry *grown = realloc(list, sizeof *list * (size_t)cap);
            if (!grown) {
                lesson_free(&lesson);
                free(path);
                break;
            }
            list = grown;
        }
        list[n++] =
            (Entry){lesson.order, strdup(de->d_name), dup_or_empty(lesson.id),
                    dup_or_empty(lesson_text(&lesson.title, LESSON_EN)), dup_or_empty(lesson.title.text[LESSON_ZH])};
        lesson_free(&lesson);
        free(path);
    }
    closedir(d);
    if (n > 1) qsort(list, (size_t)n, sizeof *list, by_order);
    for (int i = 0; i < n; i++) {
        /* titles and ids come from the files: escaped, so each lesson stays one line */
        printf("%2d  ", i + 1);
        for (size_t w = app_escape(stdout, list[i].id); w < 28; w++) putchar(' ');
        putchar(' ');
        app_escape(stdout, list[i].title_en);
        if (list[i].title_zh[0]) {
            fputs("  /  ", stdout);
            app_escape(stdout, list[i].title_zh);
        }
        putchar('\n');
        free(list[i].file);
        free(list[i].id);
        free(list[i].title_en);
        free(list[i].title_zh);
    }
    free(list);
    if (n == 0 && !bad) app_fail(APP_OK, "no lessons (*.json) in %s", dir);
    return bad ? APP_USAGE : APP_OK;
}
