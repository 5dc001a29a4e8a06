/* export_dir.c: what attnviz owns in a folder it writes into, the records
 * that say so, and the clean-up of what an earlier export left there. See
 * export_internal.h.
 *
 * attnviz removes a file only when a record of its own lists it and the
 * file is still exactly what was recorded:
 *   - the record: index.json (format attnviz-export/1) of a finished
 *     export, the journal (.index.json.attnviz-journal) of one that did not
 *     finish, or a handout's first page (its attnviz:handout-pages chunk)
 *     and the handout's journal; each entry is a size, a SHA-256 and a name
 *     of attnviz's own spelling;
 *   - the file: a regular file (lstat: never a link, a FIFO, a device) of
 *     that size and hash, a PNG whose Software chunk says attnviz and, for
 *     a handout's page, whose attnviz:handout-page chunk gives its number.
 * Besides, hidden temporaries of attnviz's own naming (.NAME.attnviz-XXXXXX)
 * last written before this export began, which a killed export left.
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
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "export_internal.h"
#include "lesson.h" /* lesson_utf8_decode, lesson_is_control */

/* An index.json larger than this is not one attnviz wrote (a million frames
 * take about 120 bytes each in the steps list at most). */
#define PREVIOUS_INDEX_MAX_BYTES (256u * 1024u * 1024u)
/* How far into a PNG its text chunks are looked for (they come before the
 * image data). */
#define PNG_TEXT_SCAN_BYTES (1u << 20)
/* A journal larger than this is not one attnviz wrote (a million frames at
 * about 90 bytes a line, twice: the earlier export's and this one's). */
#define JOURNAL_MAX_BYTES (256u * 1024u * 1024u)
/* The first line of a journal. */
#define JOURNAL_FORMAT "attnviz-journal/1"

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

int export__accept_own_name(const char *name, void *user)
{
    (void)user;
    return export__is_own_name(name);
}

int export__accept_folder_name(const char *name, void *user)
{
    (void)user;
    return export__is_own_name(name) || strcmp(name, EXPORT_INDEX_NAME) == 0 ||
           strcmp(name, "." EXPORT_INDEX_NAME EXPORT_JOURNAL_MARKER) == 0;
}

char *export__path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", dir, (*dir && dir[strlen(dir) - 1] == '/') ? "" : "/", name);
    return p;
}

char *export__journal_path(const char *dir, const char *name)
{
    size_t n = strlen(name) + sizeof EXPORT_JOURNAL_MARKER + 1;
    char *hidden = malloc(n);
    if (!hidden) return NULL;
    snprintf(hidden, n, ".%s" EXPORT_JOURNAL_MARKER, name);
    char *path = export__path_join(dir, hidden);
    free(hidden);
    return path;
}

/* Reads a regular file, without following a symbolic link and without
 * blocking on a FIFO: all of it when it has at most max bytes, else its
 * first max bytes when prefix is set, else nothing. NULL when it is not a
 * regular file (or memory runs out); the bytes are NUL-terminated. *st
 * (when not NULL) says what was read: its size, device and inode. */
static char *read_regular(const char *path, size_t max, int prefix, size_t *len, struct stat *st_out)
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
        if (st_out) *st_out = st;
    }
    close(fd);
    return buf;
}

/* ---- records ---- */

int export__records_add(ExportRecords *r, const char *name, long long bytes, const char *sha256)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        ExportRecord *grown = realloc(r->rec, sizeof *grown * (size_t)cap);
        if (!grown) return -1;
        r->rec = grown;
        r->cap = cap;
    }
    ExportRecord *e = &r->rec[r->n];
    e->name = strdup(name);
    if (!e->name) return -1;
    e->bytes = bytes;
    snprintf(e->sha256, sizeof e->sha256, "%s", sha256);
    r->n++;
    return 0;
}

void export__records_free(ExportRecords *r)
{
    for (int i = 0; i < r->n; i++) free(r->rec[i].name);
    free(r->rec);
    memset(r, 0, sizeof *r);
}

static int is_sha256_hex(const char *s)
{
    for (int i = 0; i < EXPORT_SHA256_HEX - 1; i++)
        if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f')) return 0;
    return s[EXPORT_SHA256_HEX - 1] == '\0';
}

/* A name in a record is UTF-8 text on one line, whatever bytes the file's
 * name has: a byte that is not UTF-8, a control character's bytes and '\\'
 * are written "\\xHH", and read back as the byte. So a record (a line of a
 * journal, a handout's PNG text chunk, which must be UTF-8) names any file
 * exactly. Writes the name at out (NULL: only counts); returns its bytes. */
static size_t name_escape(char *out, const char *name)
{
    size_t n = 0;
    for (const char *s = name; *s;) {
        uint32_t cp;
        int k = lesson_utf8_decode(s, &cp);
        if (k && !lesson_is_control(cp) && cp != '\\') {
            if (out) memcpy(out + n, s, (size_t)k);
            n += (size_t)k, s += k;
            continue;
        }
        for (int i = 0; i < (k ? k : 1); i++, s++) {
            if (out) snprintf(out + n, 5, "\\x%02x", (unsigned char)*s);
            n += 4;
        }
    }
    return n;
}

/* The name a record's escaped spelling stands for (malloc'd), or NULL when
 * it is not one name_escape writes. */
static char *name_unescape(const char *text)
{
    char *name = malloc(strlen(text) + 1), *o = name;
    if (!name) return NULL;
    for (const char *s = text; *s;) {
        unsigned v;
        if (*s != '\\') {
            *o++ = *s++;
        } else if (s[1] == 'x' && isxdigit((unsigned char)s[2]) && isxdigit((unsigned char)s[3]) &&
                   sscanf(s + 2, "%2x", &v) == 1 && v != 0) {
            *o++ = (char)v;
            s += 4;
        } else {
            free(name);
            return NULL;
        }
    }
    *o = '\0';
    return name;
}

/* "BYTES SHA256 NAME\n" at out (NULL: only counts); returns its bytes. */
static size_t record_line(char *out, long long bytes, const char *sha256, const char *name)
{
    char head[24 + EXPORT_SHA256_HEX + 2];
    size_t h = (size_t)snprintf(head, sizeof head, "%lld %s ", bytes, sha256);
    size_t n = name_escape(NULL, name);
    if (out) {
        memcpy(out, head, h);
        name_escape(out + h, name);
        out[h + n] = '\n';
    }
    return h + n + 1;
}

char *export__records_text(const ExportRecords *r, const char *first_line)
{
    size_t n = first_line ? strlen(first_line) + 1 : 0;
    for (int i = 0; i < r->n; i++) n += record_line(NULL, r->rec[i].bytes, r->rec[i].sha256, r->rec[i].name);
    char *text = malloc(n + 1), *p = text;
    if (!text) return NULL;
    p += first_line ? sprintf(p, "%s\n", first_line) : 0;
    for (int i = 0; i < r->n; i++) p += record_line(p, r->rec[i].bytes, r->rec[i].sha256, r->rec[i].name);
    *p = '\0';
    return text;
}

void export__records_parse(const char *text, ExportRecords *out, int (*accept)(const char *name, void *user),
                           void *user)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!end) break; /* a line cut short (a killed writer): not a record */
        size_t len = (size_t)(end - line);
        char *copy = strndup(line, len);
        char *sp1 = copy ? strchr(copy, ' ') : NULL, *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (sp1 && sp2 && all_digits(copy, (size_t)(sp1 - copy)) && sp1 - copy <= 18) {
            *sp1 = *sp2 = '\0';
            char *name = name_unescape(sp2 + 1);
            if (name && name[0] && is_sha256_hex(sp1 + 1) && !strchr(name, '/') && accept(name, user))
                export__records_add(out, name, atoll(copy), sp1 + 1);
            free(name);
        }
        free(copy);
        line = end + 1;
    }
}

/* ---- the earlier export's index.json ---- */

/* A run of identical frames of index.json's "frame_files" into records. */
static void previous_frames(const cJSON *run, ExportRecords *prev)
{
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(run, "first");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(run, "count");
    const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(run, "bytes");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(run, "sha256");
    if (!cJSON_IsNumber(first) || !cJSON_IsNumber(count) || !cJSON_IsNumber(bytes) || !cJSON_IsString(sha) ||
        !is_sha256_hex(sha->valuestring) || first->valuedouble < 0 || count->valuedouble < 1 ||
        first->valuedouble + count->valuedouble > EXPORT_MAX_FRAMES)
        return;
    for (int k = (int)first->valuedouble; k < (int)(first->valuedouble + count->valuedouble); k++) {
        char name[16];
        snprintf(name, sizeof name, "%06d.png", k);
        export__records_add(prev, name, (long long)bytes->valuedouble, sha->valuestring);
    }
}

int export__previous_read(const char *dir, ExportRecords *prev)
{
    memset(prev, 0, sizeof *prev);
    char *path = export__path_join(dir, EXPORT_INDEX_NAME);
    struct stat st;
    if (!path || lstat(path, &st) != 0) {
        free(path);
        return 0;
    }
    size_t len = 0;
    char *text = read_regular(path, PREVIOUS_INDEX_MAX_BYTES, 0, &len, NULL);
    free(path);
    cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, EXPORT_FORMAT) != 0) {
        cJSON_Delete(doc);
        return -1;
    }
    const cJSON *e, *files = cJSON_GetObjectItemCaseSensitive(doc, "files");
    cJSON_ArrayForEach(e, files)
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "file");
        const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(e, "bytes");
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(e, "sha256");
        /* only attnviz's own spelling: an edited index cannot point elsewhere */
        if (!cJSON_IsString(f) || !export__is_own_name(f->valuestring)) continue;
        if (cJSON_IsNumber(bytes) && cJSON_IsString(sha) && is_sha256_hex(sha->valuestring))
            export__records_add(prev, f->valuestring, (long long)bytes->valuedouble, sha->valuestring);
        else /* an older attnviz recorded no size and hash */
            export__records_add(prev, f->valuestring, -1, "");
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "frame_files")) previous_frames(e, prev);
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(doc, "frame_count");
    if (cJSON_IsNumber(frames) && frames->valuedouble > 0 && frames->valuedouble <= EXPORT_MAX_FRAMES &&
        !cJSON_GetObjectItemCaseSensitive(doc, "frame_files"))
        for (int k = 0; k < (int)frames->valuedouble; k++) {
            char name[16];
            snprintf(name, sizeof name, "%06d.png", k);
            export__records_add(prev, name, -1, "");
        }
    cJSON_Delete(doc);
    return 1;
}

/* ---- what a PNG says about itself ---- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The value of the first text chunk (tEXt, or an uncompressed iTXt) named
 * key among a PNG's first len bytes, malloc'd; NULL when there is none (or
 * the bytes are not a PNG). */
static char *png_text(const unsigned char *buf, size_t len, const char *key)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (!buf || len < 8 || memcmp(buf, sig, 8) != 0) return NULL;
    size_t klen = strlen(key) + 1; /* with its NUL */
    /* chunks: length, type, data, CRC; text chunks come before IDAT */
    for (size_t at = 8; at + 12 <= len;) {
        uint32_t n = be32(buf + at);
        const unsigned char *type = buf + at + 4, *data = buf + at + 8;
        if (n > len - at - 12 || memcmp(type, "IDAT", 4) == 0 || memcmp(type, "IEND", 4) == 0) break;
        int text = memcmp(type, "tEXt", 4) == 0, itxt = memcmp(type, "iTXt", 4) == 0;
        if ((text || itxt) && n >= klen && memcmp(data, key, klen) == 0) {
            const unsigned char *v = data + klen, *end = data + n;
            if (itxt) { /* compression flag 0, method, language\0, translated key\0 */
                if (end - v < 2 || v[0] != 0) return NULL;
                v += 2;
                for (int skip = 0; skip < 2 && v < end; v++)
                    if (*v == 0) skip++;
            }
            return strndup((const char *)v, (size_t)(end - v));
        }
        at += 12 + (size_t)n;
    }
    return NULL;
}

/* Whether the PNG bytes carry Software "attnviz ...". */
static int png_says_attnviz(const unsigned char *buf, size_t len)
{
    char *sw = png_text(buf, len, "Software");
    int ours = sw && strncmp(sw, "attnviz ", 8) == 0;
    free(sw);
    return ours;
}

int export__png_is_ours(const char *path, const char *not_key)
{
    size_t len = 0;
    unsigned char *buf = (unsigned char *)read_regular(path, PNG_TEXT_SCAN_BYTES, 1, &len, NULL);
    char *other = not_key ? png_text(buf, len, not_key) : NULL;
    int ours = png_says_attnviz(buf, len) && !other;
    free(other);
    free(buf);
    return ours;
}

char *export__png_text_of(const char *path, const char *key)
{
    size_t len = 0;
    unsigned char *buf = (unsigned char *)read_regular(path, PNG_TEXT_SCAN_BYTES, 1, &len, NULL);
    char *value = png_says_attnviz(buf, len) ? png_text(buf, len, key) : NULL;
    free(buf);
    return value;
}

/* ---- removing what a record lists ---- */

int export__remove_recorded(const char *dir, const ExportRecord *rec, const char *marker_key, const char *marker_value)
{
    char *path = export__path_join(dir, rec->name);
    if (!path) return 0;
    size_t len = 0;
    struct stat st, now;
    int gone = 0;
    /* the whole file, read without following a link: what it is now */
    unsigned char *buf = rec->bytes >= 0 && (unsigned long long)rec->bytes <= SIZE_MAX / 2
                             ? (unsigned char *)read_regular(path, (size_t)rec->bytes, 0, &len, &st)
                             : NULL;
    if (buf && (long long)len == rec->bytes && png_says_attnviz(buf, len)) {
        char hex[EXPORT_SHA256_HEX];
        export__sha256(buf, len, hex);
        char *marker = marker_key ? png_text(buf, len, marker_key) : NULL;
        int same = strcmp(hex, rec->sha256) == 0 && (!marker_key || (marker && strcmp(marker, marker_value) == 0));
        free(marker);
        /* still the file just read (not replaced meanwhile), then gone */
        if (same && lstat(path, &now) == 0 && S_ISREG(now.st_mode) && now.st_dev == st.st_dev &&
            now.st_ino == st.st_ino)
            gone = unlink(path) == 0;
    }
    free(buf);
    free(path);
    return gone;
}

/* ---- the journal ---- */

int export__journal_read(const char *path, ExportRecords *out, int (*accept)(const char *name, void *user), void *user)
{
    size_t len = 0;
    char *text = read_regular(path, JOURNAL_MAX_BYTES, 0, &len, NULL);
    if (!text) return 0;
    size_t head = sizeof JOURNAL_FORMAT - 1;
    int ok = len > head && strncmp(text, JOURNAL_FORMAT, head) == 0 && text[head] == '\n';
    if (ok) export__records_parse(text + head + 1, out, accept, user);
    free(text);
    return ok;
}

int export__check_journal(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    size_t len = 0, head = sizeof JOURNAL_FORMAT - 1;
    char *text = S_ISREG(st.st_mode) ? read_regular(path, head + 1, 1, &len, NULL) : NULL;
    int ours = text && len == head + 1 && strncmp(text, JOURNAL_FORMAT, head) == 0 && text[head] == '\n';
    free(text);
    if (ours) return 0;
    if (!S_ISREG(st.st_mode))
        export__set_err(err, errlen, "%s: exists and is %s, not a regular file; attnviz replaces only its own files",
                        path, lesson_file_kind(st.st_mode));
    else
        export__set_err(err, errlen,
                        "%s: exists and is not a journal of attnviz's; attnviz replaces only its own files", path);
    return -1;
}

int export__journal_begin(ExportJournal *j, const char *path, const ExportRecords *records, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    char *text = export__records_text(records, JOURNAL_FORMAT);
    j->path = strdup(path);
    if (!text || !j->path) {
        free(text);
        free(j->path);
        j->path = NULL;
        export__set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = export_write_owned_file(path, text, strlen(text), err, errlen);
    free(text);
    if (rc == 0) {
        j->fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (j->fd < 0 || fstat(j->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            export__set_err(err, errlen, "%s: %s", path, j->fd < 0 ? strerror(errno) : "not a regular file");
            rc = -1;
        }
    }
    if (rc != 0)
        export__journal_end(j, 0);
    else
        pthread_mutex_init(&j->mu, NULL);
    return rc;
}

int export__journal_add(ExportJournal *j, const char *name, size_t bytes, const char *sha256, char *err, size_t errlen)
{
    size_t len = record_line(NULL, (long long)bytes, sha256, name);
    char *line = malloc(len);
    if (!line) {
        export__set_err(err, errlen, "%s: out of memory", j->path);
        return -1;
    }
    record_line(line, (long long)bytes, sha256, name);
    /* one write of the whole line, appended: lines of threads never mix */
    pthread_mutex_lock(&j->mu);
    ssize_t w;
    do w = write(j->fd, line, (size_t)len);
    while (w < 0 && errno == EINTR);
    pthread_mutex_unlock(&j->mu);
    int e = errno;
    free(line);
    if (w != (ssize_t)len) {
        export__set_err(err, errlen, "%s: %s", j->path, w < 0 ? strerror(e) : strerror(ENOSPC));
        return -1;
    }
    return 0;
}

void export__journal_end(ExportJournal *j, int remove)
{
    if (j->fd >= 0) {
        close(j->fd);
        pthread_mutex_destroy(&j->mu);
    }
    if (remove && j->path) unlink(j->path);
    free(j->path);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}

/* ---- the folder ---- */

int export__lock_folder(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        export__set_err(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            export__set_err(err, errlen, "%s: another attnviz export is writing into this folder", dir);
        else
            export__set_err(err, errlen, "%s: cannot lock the folder: %s", dir, strerror(e));
        return -1;
    }
    return fd;
}

/* ".NAME.attnviz-XXXXXX" with NAME one accept takes (or the folder probe's
 * "attnviz-probe"): a temporary export_write_* or the probe made
 * (export__temporary_path). */
static int is_own_temporary(const char *name, int (*accept)(const char *name, void *user), void *user)
{
    size_t n = strlen(name), m = sizeof EXPORT_TEMP_MARKER - 1;
    if (n < 1 + 1 + m + 6 || name[0] != '.') return 0;
    const char *marker = name + n - 6 - m;
    if (memcmp(marker, EXPORT_TEMP_MARKER, m) != 0) return 0;
    for (size_t i = n - 6; i < n; i++)
        if (!isalnum((unsigned char)name[i])) return 0;
    char *base = strndup(name + 1, (size_t)(marker - name - 1));
    int own = base && (accept(base, user) || strcmp(base, EXPORT_PROBE_NAME) == 0);
    free(base);
    return own;
}

/* Whether a temporary's bytes are attnviz's: nothing yet (killed before it
 * wrote), a PNG whose Software is attnviz, a journal, or an index. A file
 * of the user's that only carries the name is kept. */
static int temporary_holds_ours(const char *path)
{
    size_t len = 0;
    char *buf = read_regular(path, PNG_TEXT_SCAN_BYTES, 1, &len, NULL);
    if (!buf) return 0;
    size_t head = sizeof JOURNAL_FORMAT - 1;
    const char *format = strstr(buf, "\"" EXPORT_FORMAT "\""); /* an index names its format first */
    int ours = len == 0 || png_says_attnviz((const unsigned char *)buf, len) ||
               (len >= head && strncmp(buf, JOURNAL_FORMAT, head) == 0) ||
               (format && format - buf < 64 && strstr(buf, "\"format\""));
    free(buf);
    return ours;
}

int export__remove_stale_temporaries(const char *dir, const struct timespec *before,
                                     int (*accept)(const char *name, void *user), void *user)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_own_temporary(de->d_name, accept, user)) continue;
        char *path = export__path_join(dir, de->d_name);
        struct stat st;
        /* older than this run: a temporary of a run that was killed, not
         * one another export into this folder is writing right now */
        if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mtim.tv_sec < before->tv_sec ||
             (st.st_mtim.tv_sec == before->tv_sec && st.st_mtim.tv_nsec < before->tv_nsec)) &&
            temporary_holds_ours(path) && unlink(path) == 0)
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

int export__check_replaceable(const char *dir, const char *name, const char *not_key, const char *what, char *err,
                              size_t errlen)
{
    if (export__check_entry(dir, name, err, errlen) != 0) return -1;
    char *path = export__path_join(dir, name);
    if (!path) {
        export__set_err(err, errlen, "out of memory");
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (lstat(path, &st) == 0 && !export__png_is_ours(path, not_key)) {
        export__set_err(err, errlen, "%s: exists and is not %s; attnviz replaces only its own files", path, what);
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
