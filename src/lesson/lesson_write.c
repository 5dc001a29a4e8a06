/* lesson_write.c: a Lesson back to "attnviz-lesson/1" JSON, and saving it as
 * a new file.
 *
 * What is written is what lesson_load reads back into the same numbers: every
 * float as %.9g (float32 round-trips through 9 significant digits), the
 * matrices the seed generated left out (the loader generates them again, the
 * same bits), the mask and the scale by kind, the narration with its
 * conditions. Saving writes a temporary file in the target folder, then links
 * it under its final name, which fails rather than replace a file that is
 * already there, so nothing is ever overwritten or half-written.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lesson.h"
#include "lesson_json.h" /* json_put_string */

static void put_float(FILE *f, float x)
{
    fprintf(f, "%.9g", (double)x);
}

static void put_row(FILE *f, const float *x, int n)
{
    fputc('[', f);
    for (int j = 0; j < n; j++) {
        if (j) fputs(", ", f);
        put_float(f, x[j]);
    }
    fputc(']', f);
}

/* "NAME": [[...], ...] with one row a line, or a flat vector. */
static void put_matrix(FILE *f, const char *name, const float *m, int rows, int cols, int vector)
{
    fprintf(f, ",\n  \"%s\": ", name);
    if (vector) {
        put_row(f, m, rows * cols);
        return;
    }
    fputc('[', f);
    for (int i = 0; i < rows; i++) {
        if (i) fputs(",\n   ", f);
        put_row(f, m + (size_t)i * (size_t)cols, cols);
    }
    fputc(']', f);
}

static void put_tokens(FILE *f, const char *name, char *const *t, int n)
{
    fprintf(f, ",\n  \"%s\": [", name);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        json_put_string(f, t[i]);
    }
    fputc(']', f);
}

static void put_text(FILE *f, const LessonText *t)
{
    static const char *const langs[LESSON_LANG_COUNT] = {"en", "zh"};
    fputc('{', f);
    int first = 1;
    if (t->when) {
        fputs("\"when\": ", f);
        json_put_string(f, t->when);
        first = 0;
    }
    for (int l = 0; l < LESSON_LANG_COUNT; l++) {
        if (!t->text[l]) continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", langs[l]);
        json_put_string(f, t->text[l]);
        first = 0;
    }
    fputc('}', f);
}

int lesson_write_json(FILE *f, const Lesson *L)
{
    const AttnConfig *g = &L->cfg;
    int additive = g->attention == ATTN_ADDITIVE;
    fputs("{\n  \"format\": \"" LESSON_FORMAT "\",\n  \"id\": ", f);
    json_put_string(f, L->id);
    if (L->edited_from) {
        fputs(",\n  \"edited_from\": ", f);
        json_put_string(f, L->edited_from);
    }
    fputs(",\n  \"title\": ", f);
    put_text(f, &L->title);
    if (L->summary.text[LESSON_EN]) {
        fputs(",\n  \"summary\": ", f);
        put_text(f, &L->summary);
    }
    if (L->order != 1000) fprintf(f, ",\n  \"order\": %d", L->order);
    put_tokens(f, "tokens", L->tokens, L->n_tokens);
    if (g->cross) put_tokens(f, "source_tokens", L->source_tokens, L->n_source_tokens);
    if (additive) fputs(",\n  \"attention\": \"additive\"", f);
    fprintf(f, ",\n  \"seed\": %llu", (unsigned long long)L->seed);
    if (additive) {
        fprintf(f, ",\n  \"d_x\": %d", g->d_x);
        if (g->cross) fprintf(f, ",\n  \"d_y\": %d", g->d_y);
        fprintf(f, ",\n  \"d_a\": %d", g->d_a);
    } else {
        fprintf(f, ",\n  \"d_model\": %d,\n  \"heads\": %d,\n  \"d_k\": %d,\n  \"d_v\": %d", g->d_model, g->heads,
                g->d_k, g->d_v);
    }
    for (int m = 0; m < LESSON_MAT_COUNT; m++) {
        int rows, cols;
        const float *p = lesson_matrix(L, m, &rows, &cols);
        if (!p) {
            if (m == LESSON_MAT_W_O && !additive) fputs(",\n  \"W_O\": null", f);
            continue;
        }
        if (L->generated & (1u << m)) continue; /* the loader generates it again from the seed */
        int vector = m >= LESSON_MAT_b_Q && m <= LESSON_MAT_b_O ? 1 : m == LESSON_MAT_b_a || m == LESSON_MAT_v_a;
        put_matrix(f, lesson_matrix_name(m), p, rows, cols, vector);
    }
    switch (g->mask_kind) {
    case ATTN_MASK_CAUSAL:
        fputs(",\n  \"mask\": \"causal\"", f);
        break;
    case ATTN_MASK_PADDING:
        fputs(",\n  \"mask\": {\"padding\": [", f);
        for (int j = 0; j < g->n_k; j++) fprintf(f, "%s%d", j ? ", " : "", L->mask[j] != 0);
        fputs("]}", f);
        break;
    case ATTN_MASK_MATRIX:
        fputs(",\n  \"mask\": [", f);
        for (int i = 0; i < g->n_q; i++) {
            fputs(i ? ",\n           [" : "[", f);
            for (int j = 0; j < g->n_k; j++) fprintf(f, "%s%d", j ? ", " : "", L->mask[(size_t)i * g->n_k + j] != 0);
            fputc(']', f);
        }
        fputc(']', f);
        break;
    default:
        break;
    }
    if (g->mask_kind != ATTN_MASK_NONE && !additive && g->mask_order != ATTN_SCALE_THEN_MASK)
        fprintf(f, ",\n  \"mask_order\": \"%s\"", attn_mask_order_name(g->mask_order));
    if (g->mask_kind != ATTN_MASK_NONE) {
        fputs(",\n  \"mask_fill\": ", f);
        if (isinf(g->mask_fill))
            fputs("\"-inf\"", f);
        else
            put_float(f, g->mask_fill);
    }
    if (!additive && g->kv_heads > 0) fprintf(f, ",\n  \"kv_heads\": %d", g->kv_heads);
    if (g->decode != ATTN_DECODE_FULL) fprintf(f, ",\n  \"decode\": \"%s\"", attn_decode_name(g->decode));
    if (!additive && g->positional != ATTN_POSITIONAL_NONE)
        fprintf(f, ",\n  \"positional\": \"%s\"", attn_positional_name(g->positional));
    if (!additive && g->tile > 0) fprintf(f, ",\n  \"tile\": %d", g->tile);
    if (!additive && g->rope_base != 0) {
        fputs(",\n  \"rope\": {\"base\": ", f);
        put_float(f, g->rope_base);
        fputc('}', f);
    }
    if (!additive) {
        fputs(",\n  \"scale\": ", f);
        if (g->scale_kind == ATTN_SCALE_VALUE)
            put_float(f, g->scale_value);
        else
            fprintf(f, "\"%s\"", attn_scale_kind_name(g->scale_kind));
    }
    if (L->n_narration) {
        fputs(",\n  \"narration\": {", f);
        for (int i = 0; i < L->n_narration; i++) {
            fputs(i ? ",\n    " : "\n    ", f);
            json_put_string(f, L->narration[i].key);
            fputs(": ", f);
            put_text(f, &L->narration[i].text);
        }
        fputs("\n  }", f);
    }
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* A save's temporary: "." ID SAVE_TEMP_MARKER and six letters or digits
 * (mkstemp's XXXXXX). */
#define SAVE_TEMP_MARKER ".json.attnviz-"
/* What every lesson lesson_write_json writes begins with. */
#define SAVE_HEAD "{\n  \"format\": \"" LESSON_FORMAT "\",\n  \"id\": \""

/* "NAME: reason" into err, the reason whole and NAME (a folder or a file
 * the user named, which may be as long as a file system allows) quoted and,
 * when it would take more than half of err, cut with "…". Returns -1. */
static int save_fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int save_fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    lesson_quote(err, errlen, name, errlen / 2);
    size_t at = strlen(err);
    if (at + 2 < errlen) {
        memcpy(err + at, ": ", 3);
        va_list ap;
        va_start(ap, fmt);
        lesson_vformat(err + at + 2, errlen - at - 2, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Writes the lesson into a new temporary file in dir, "DIR/.ID.json.attnviz-XXXXXX"
 * (the marker attnviz's temporaries carry); its path in *tmp, malloc'd. */
static int write_temp(const Lesson *L, const char *dir, char **tmp, char *err, size_t errlen)
{
    size_t len = strlen(dir) + strlen(L->id) + 32;
    *tmp = malloc(len);
    if (!*tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(*tmp, len, "%s/.%s" SAVE_TEMP_MARKER "XXXXXX", dir, L->id);
    int fd = mkstemp(*tmp);
    /* mkstemp makes 0600 files; a lesson gets the mode every file attnviz
     * writes has, what open(..., 0666) would give (umask is read by setting
     * it: the window's thread is the only one making files meanwhile) */
    mode_t mask = umask(022);
    umask(mask);
    if (fd >= 0 && fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(*tmp);
        fd = -1;
        errno = e;
    }
    if (fd < 0) {
        save_fail(err, errlen, dir, "cannot create a file there: %s", strerror(errno));
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(*tmp);
        save_fail(err, errlen, dir, "%s", strerror(e));
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    int rc = lesson_write_json(f, L);
    if (rc == 0 && fflush(f) != 0) rc = -1;
    if (rc == 0 && fsync(fileno(f)) != 0) rc = -1;
    int e = errno;
    if (fclose(f) != 0 && rc == 0) rc = -1, e = errno;
    if (rc != 0) {
        unlink(*tmp);
        save_fail(err, errlen, dir, "writing the lesson: %s", strerror(e ? e : EIO));
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    return 0;
}

/* On a filesystem without hard links (FAT, a browser page's memory): path
 * is taken with O_EXCL, failing when the name was taken meanwhile, and the
 * whole file tmp renamed over that empty one. 0, or -1 with errno. */
static int take_and_rename(const char *tmp, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    close(fd);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(path);
        errno = e;
        return -1;
    }
    return 0;
}

/* dir, made when only it is missing. 0, or -1 with err. */
static int save_folder(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
            char target[PATH_MAX], quoted[256];
            ssize_t n = readlink(dir, target, sizeof target - 1);
            target[n > 0 ? n : 0] = '\0';
            return save_fail(err, errlen, dir,
                             "expected a folder to save lessons in, found a symbolic link to a missing target ('%s')",
                             lesson_quote(quoted, sizeof quoted, target, 200));
        }
        if (e != ENOENT || mkdir(dir, 0777) != 0)
            return save_fail(err, errlen, dir, "cannot create the folder: %s", strerror(e != ENOENT ? e : errno));
    } else if (!S_ISDIR(st.st_mode)) {
        return save_fail(err, errlen, dir, "expected a folder to save lessons in, found %s",
                         lesson_file_kind(st.st_mode));
    }
    return 0;
}

int lesson_save_replacing(const Lesson *L, const char *dir, const char *path, char *err, size_t errlen)
{
    err[0] = '\0';
    if (save_folder(dir, err, errlen) != 0) return -1;
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        return save_fail(err, errlen, path, "expected a lesson file to replace, found %s",
                         lesson_file_kind(st.st_mode));
    }
    char *tmp;
    if (write_temp(L, dir, &tmp, err, errlen) != 0) return -1;
    /* rename() replaces the file whole: a reader sees the old lesson or the new */
    int rc = rename(tmp, path), e = errno;
    if (rc != 0) {
        unlink(tmp);
        save_fail(err, errlen, path, "%s", strerror(e));
    }
    free(tmp);
    return rc == 0 ? 0 : -1;
}

static int is_save_temporary(const char *name)
{
    size_t n = strlen(name), m = sizeof SAVE_TEMP_MARKER - 1;
    if (name[0] != '.' || n < 1 + 1 + m + 6 || memcmp(name + n - 6 - m, SAVE_TEMP_MARKER, m) != 0) return 0;
    for (size_t i = n - 6; i < n; i++)
        if (!isalnum((unsigned char)name[i])) return 0;
    return 1;
}

/* 1 when the regular file fd holds nothing or the beginning of a lesson as
 * lesson_write_json writes one. */
static int holds_a_save(int fd)
{
    char head[sizeof SAVE_HEAD - 1];
    ssize_t n = read(fd, head, sizeof head);
    return n >= 0 && memcmp(head, SAVE_HEAD, (size_t)n) == 0;
}

int lesson_remove_stale_saves(const char *dir, const struct timespec *before)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_save_temporary(de->d_name)) continue;
        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st, now;
        /* a regular file, older than `before`, of attnviz's bytes, and still
         * the file read when it goes */
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mtim.tv_sec < before->tv_sec ||
             (st.st_mtim.tv_sec == before->tv_sec && st.st_mtim.tv_nsec < before->tv_nsec)) &&
            holds_a_save(fd) && fstatat(dirfd(d), de->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            now.st_dev == st.st_dev && now.st_ino == st.st_ino && unlinkat(dirfd(d), de->d_name, 0) == 0)
            removed++;
        close(fd);
    }
    closedir(d);
    return removed;
}

int lesson_save_new(Lesson *L, const char *dir, char *path, size_t pathlen, char *err, size_t errlen)
{
    err[0] = '\0';
    struct stat st;
    if (save_folder(dir, err, errlen) != 0) return -1;
    char base[LESSON_MAX_ID_BYTES + 1];
    snprintf(base, sizeof base, "%s", L->id);
    char *id = L->id;
    for (int k = 1; k <= 999; k++) {
        char next[LESSON_MAX_ID_BYTES + 16];
        if (k == 1)
            snprintf(next, sizeof next, "%s", base);
        else
            snprintf(next, sizeof next, "%.*s-%d", LESSON_MAX_ID_BYTES - 4, base, k);
        char *nid = strdup(next);
        if (!nid) {
            snprintf(err, errlen, "out of memory");
            L->id = id;
            return -1;
        }
        if (L->id != id) free(L->id);
        L->id = nid;
        /* refused rather than saved under a name the caller cannot be told */
        if ((size_t)snprintf(path, pathlen, "%s/%s.json", dir, nid) >= pathlen) {
            save_fail(err, errlen, dir, "the path is too long to save a lesson in (at most %zu bytes)", pathlen - 1);
            break;
        }
        if (lstat(path, &st) == 0) continue; /* taken: never replaced */
        char *tmp;
        if (write_temp(L, dir, &tmp, err, errlen) != 0) break;
        /* link() makes the file appear whole under its name, and fails when
         * the name was taken meanwhile */
        int rc = link(tmp, path), e = errno;
        if (rc != 0 && (e == EMLINK || e == EPERM || e == ENOSYS || e == EOPNOTSUPP)) {
            rc = take_and_rename(tmp, path);
            e = errno;
        }
        unlink(tmp);
        free(tmp);
        if (rc == 0) {
            free(id);
            return 0;
        }
        if (e != EEXIST) {
            save_fail(err, errlen, path, "%s", strerror(e));
            break;
        }
    }
    if (err[0] == '\0') save_fail(err, errlen, dir, "no free name for %s", base);
    if (L->id != id) free(L->id);
    L->id = id;
    return -1;
}
