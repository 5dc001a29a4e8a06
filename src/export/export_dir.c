/* export_dir.c: what attnviz owns in its output folder, and the clean-up of
 * what an earlier export left there. See export_internal.h.
 *
 * attnviz deletes a file in the folder only when it is attnviz's own:
 *   - a name the previous index.json (format attnviz-export/1) listed, that
 *     has attnviz's own spelling (NNN-kind[-hH].png or NNNNNN.png), or
 *   - a PNG whose Software text chunk says "attnviz ...",
 *   - or a hidden temporary of attnviz's own naming (.NAME.attnviz-XXXXXX,
 *     NAME one of the above or index.json) last written before this export
 *     began.
 * Every one of them is a regular file (lstat): a FIFO, a device, a folder
 * or a symbolic link is never opened, written or removed.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "export_internal.h"

/* An index.json larger than this is not one attnviz wrote (a million frames
 * take about 120 bytes each in the steps list at most). */
#define PREVIOUS_INDEX_MAX_BYTES (256u * 1024u * 1024u)
/* How far into a PNG its Software chunk is looked for (text chunks come
 * before the image data). */
#define PNG_TEXT_SCAN_BYTES (1u << 20)

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return n > 0;
}

int export__is_frame_name(const char *name, int *index)
{
    size_t n = strlen(name);
    if (n != 10 || strcmp(name + 6, ".png") != 0 || !all_digits(name, 6)) return 0;
    if (index) *index = atoi(name);
    return 1;
}

int export__is_own_name(const char *name)
{
    if (export__is_frame_name(name, NULL)) return 1;
    /* NNN-kind[-hH].png: three or more digits, a kind in [a-z_], a head */
    size_t n = strlen(name), d = 0;
    while (isdigit((unsigned char)name[d])) d++;
    if (d < 3 || name[d] != '-' || n < d + 6 || strcmp(name + n - 4, ".png") != 0) return 0;
    const char *p = name + d + 1, *end = name + n - 4;
    const char *k = p;
    while (p < end && (islower((unsigned char)*p) || *p == '_')) p++;
    if (p == k) return 0;
    if (p == end) return 1;
    if (end - p < 3 || p[0] != '-' || p[1] != 'h') return 0;
    return all_digits(p + 2, (size_t)(end - p - 2));
}

char *export__path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", dir, (*dir && dir[strlen(dir) - 1] == '/') ? "" : "/", name);
    return p;
}

/* Reads a regular file, without following a symbolic link and without
 * blocking on a FIFO: all of it when it has at most max bytes, else its
 * first max bytes when prefix is set, else nothing. NULL when it is not a
 * regular file (or memory runs out); the bytes are NUL-terminated. */
static char *read_regular(const char *path, size_t max, int prefix, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (prefix || (size_t)st.st_size <= max)) {
        size_t want = (size_t)st.st_size < max ? (size_t)st.st_size : max, got = 0;
        buf = malloc(want + 1);
        while (buf && got < want) {
            ssize_t r = read(fd, buf + got, want - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (buf) {
            buf[got] = '\0';
            *len = got;
        }
    }
    close(fd);
    return buf;
}

void export__previous_read(const char *dir, ExportPrevious *prev)
{
    memset(prev, 0, sizeof *prev);
    char *path = export__path_join(dir, EXPORT_INDEX_NAME);
    size_t len = 0;
    char *text = path ? read_regular(path, PREVIOUS_INDEX_MAX_BYTES, 0, &len) : NULL;
    free(path);
    cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, EXPORT_FORMAT) != 0) {
        cJSON_Delete(doc);
        return;
    }
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(doc, "frame_count");
    if (cJSON_IsNumber(frames) && frames->valuedouble >= 0 && frames->valuedouble <= EXPORT_MAX_FRAMES)
        prev->frames = (int)frames->valuedouble;
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files");
    int n = cJSON_IsArray(files) ? cJSON_GetArraySize(files) : 0;
    prev->files = n > 0 ? calloc((size_t)n, sizeof *prev->files) : NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, files)
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "file");
        /* only attnviz's own spelling: an edited index cannot point elsewhere */
        if (!prev->files || !cJSON_IsString(f) || !export__is_own_name(f->valuestring)) continue;
        prev->files[prev->n_files] = strdup(f->valuestring);
        if (prev->files[prev->n_files]) prev->n_files++;
    }
    cJSON_Delete(doc);
}

void export__previous_free(ExportPrevious *prev)
{
    for (int i = 0; i < prev->n_files; i++) free(prev->files[i]);
    free(prev->files);
    memset(prev, 0, sizeof *prev);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int export__png_is_ours(const char *path)
{
    size_t len = 0;
    unsigned char *buf = (unsigned char *)read_regular(path, PNG_TEXT_SCAN_BYTES, 1, &len);
    int ours = 0;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (buf && len >= 8 && memcmp(buf, sig, 8) == 0) {
        /* chunks: length, type, data, CRC; text chunks come before IDAT */
        static const char key[] = "Software", value[] = "attnviz ";
        size_t at = 8;
        while (!ours && at + 12 <= len) {
            uint32_t n = be32(buf + at);
            const unsigned char *type = buf + at + 4, *data = buf + at + 8;
            if (n > len - at - 12 || memcmp(type, "IDAT", 4) == 0 || memcmp(type, "IEND", 4) == 0) break;
            if (memcmp(type, "tEXt", 4) == 0 && n >= sizeof key + sizeof value - 1 &&
                memcmp(data, key, sizeof key) == 0 && memcmp(data + sizeof key, value, sizeof value - 1) == 0)
                ours = 1;
            at += 12 + (size_t)n;
        }
    }
    free(buf);
    return ours;
}

int export__remove_owned(const char *dir, const char *name, int listed)
{
    char *path = export__path_join(dir, name);
    if (!path) return 0;
    struct stat st;
    int gone = 0;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (listed || export__png_is_ours(path))) gone = unlink(path) == 0;
    free(path);
    return gone;
}

/* ".NAME.attnviz-XXXXXX" with NAME attnviz's own (or index.json, or the
 * folder probe's "attnviz-probe"): a temporary export_write_* or the probe
 * made (export__temporary_path). */
static int is_own_temporary(const char *name)
{
    size_t n = strlen(name), m = sizeof EXPORT_TEMP_MARKER - 1;
    if (n < 1 + 1 + m + 6 || name[0] != '.') return 0;
    const char *marker = name + n - 6 - m;
    if (memcmp(marker, EXPORT_TEMP_MARKER, m) != 0) return 0;
    for (size_t i = n - 6; i < n; i++)
        if (!isalnum((unsigned char)name[i])) return 0;
    char *base = strndup(name + 1, (size_t)(marker - name - 1));
    int own = base && (export__is_own_name(base) || strcmp(base, EXPORT_INDEX_NAME) == 0 ||
                       strcmp(base, EXPORT_PROBE_NAME) == 0);
    free(base);
    return own;
}

int export__remove_stale_temporaries(const char *dir, const struct timespec *before)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_own_temporary(de->d_name)) continue;
        char *path = export__path_join(dir, de->d_name);
        struct stat st;
        /* older than this run: a temporary of a run that was killed, not
         * one another export into this folder is writing right now */
        if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mtim.tv_sec < before->tv_sec ||
             (st.st_mtim.tv_sec == before->tv_sec && st.st_mtim.tv_nsec < before->tv_nsec)) &&
            unlink(path) == 0)
            removed++;
        free(path);
    }
    closedir(d);
    return removed;
}

int export__check_entry(const char *dir, const char *name, char *err, size_t errlen)
{
    char *path = export__path_join(dir, name);
    if (!path) {
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        export__set_err(err, errlen, "%s: exists and is %s, not a regular file; attnviz replaces only its own files",
                        path, lesson_file_kind(st.st_mode));
        rc = -1;
    }
    free(path);
    return rc;
}

/* path for a message: whole when it has at most 1024 bytes, else its first
 * and last 480 bytes (cut between characters) around "…". malloc'd. */
static char *shortened(const char *path)
{
    size_t n = strlen(path), keep = 480;
    if (n <= 1024) return strdup(path);
    size_t head = keep, tail = n - keep;
    while (head > 0 && ((unsigned char)path[head] & 0xC0) == 0x80) head--;
    while (tail < n && ((unsigned char)path[tail] & 0xC0) == 0x80) tail++;
    size_t len = head + 3 + (n - tail) + 1;
    char *s = malloc(len);
    if (s) snprintf(s, len, "%.*s…%s", (int)head, path, path + tail);
    return s;
}

int export__check_length(const char *path, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    /* the temporary a file is written through: ".NAME.attnviz-XXXXXX" */
    size_t extra = 1 + sizeof EXPORT_TEMP_MARKER - 1 + 6;
    size_t name_len = strlen(name) + extra, path_len = strlen(path) + extra;
    long name_max = -1;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (dir && strlen(dir) < PATH_MAX) name_max = pathconf(dir, _PC_NAME_MAX);
    free(dir);
    if (name_max <= 0) name_max = NAME_MAX;
    int rc = 0;
    if (name_len > (size_t)name_max || path_len >= PATH_MAX) {
        char *shown = shortened(path);
        if (name_len > (size_t)name_max)
            export__set_err(err, errlen,
                            "%s: the file name is too long: writing it takes a temporary name of %zu bytes "
                            "(.NAME" EXPORT_TEMP_MARKER "XXXXXX), and the folder takes at most %ld",
                            shown ? shown : "", name_len, name_max);
        else
            export__set_err(err, errlen,
                            "%s: the path is too long: with its temporary name it has %zu bytes, at most %d are taken",
                            shown ? shown : "", path_len, PATH_MAX - 1);
        free(shown);
        rc = -1;
    }
    return rc;
}
