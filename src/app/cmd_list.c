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
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: attnviz list [DIR]\n\nLists the lessons in DIR (default: %s) in teaching order:\n"
               "order, id, English title, Chinese title. Files that do not load are reported on stderr.\n",
               app_lessons_dir());
        return APP_OK;
    }
    if (argc > 2) return app_fail(APP_USAGE, "list takes at most one folder");
    const char *dir = argc == 2 ? argv[1] : app_lessons_dir();
    DIR *d = opendir(dir);
    if (!d) return app_fail(APP_USAGE, "%s: cannot open the lessons folder", dir);
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
            fprintf(stderr, "%s\n", err.msg);
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
    qsort(list, (size_t)n, sizeof *list, by_order);
    for (int i = 0; i < n; i++) {
        printf("%2d  %-28s %s", i + 1, list[i].id, list[i].title_en);
        if (list[i].title_zh[0]) printf("  /  %s", list[i].title_zh);
        putchar('\n');
        free(list[i].file);
        free(list[i].id);
        free(list[i].title_en);
        free(list[i].title_zh);
    }
    free(list);
    if (n == 0 && !bad) fprintf(stderr, "attnviz: no lessons (*.json) in %s\n", dir);
    return bad ? APP_USAGE : APP_OK;
}
