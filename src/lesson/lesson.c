/* lesson.c: placeholder until the loader lands. */
#include <string.h>

#include "lesson.h"

int lesson_load(Lesson *out, const char *path, LessonError *err)
{
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    (void)path;
    strcpy(err->msg, "lesson loading is not built yet");
    return -1;
}
int lesson_parse(Lesson *out, const char *text, size_t len, const char *name, LessonError *err)
{
    (void)text; (void)len;
    return lesson_load(out, name, err);
}
void lesson_free(Lesson *lesson) { memset(lesson, 0, sizeof *lesson); }
const char *lesson_text(const LessonText *text, LessonLang lang) { return text->text[lang] ? text->text[lang] : text->text[LESSON_EN]; }
