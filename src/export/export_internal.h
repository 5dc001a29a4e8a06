/* export_internal.h: what the export module's own files share. Not included
 * outside src/export. */
#ifndef EXPORT_INTERNAL_H
#define EXPORT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* Formats a one-line message into err (which may be NULL or of length 0). */
void export__set_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- temporaries (png_write.c) ---- */

/* What every temporary attnviz makes carries in its name, which no user
 * would choose: "DIR/.NAME.attnviz-XXXXXX" for the final DIR/NAME. */
#define EXPORT_TEMP_MARKER ".attnviz-"
/* The temporary's template for the final path: "DIR/.NAME.attnviz-XXXXXX",
 * malloc'd; NULL when memory runs out. */
char *export__temporary_path(const char *path);
/* Creates a new temporary from that template (its XXXXXX filled in): a new
 * regular file, mode 0600, registered for export_remove_temporaries under
 * *slot. The descriptor, or -1 with errno. */
int export__open_temporary(char *tmp, int *slot);
/* The temporary of *slot is gone (renamed or removed): unregisters it. */
void export__temporary_done(int slot);

/* ---- SHA-256 (sha256.c) ---- */

#define EXPORT_SHA256_HEX 65 /* 64 hexadecimal digits and a NUL */
/* The SHA-256 of len bytes at data, as lower-case hexadecimal. */
void export__sha256(const void *data, size_t len, char hex[EXPORT_SHA256_HEX]);

/* ---- the output folder (export_dir.c) ---- */

/* A file attnviz wrote, as its records (index.json, a journal, a
 * handout's first page) list it. */
typedef struct ExportRecord {
    char *name;      /* in its folder, no '/': attnviz's own spelling or a handout page's; owned */
    long long bytes; /* -1: listed without a size and hash (an older attnviz's), never removed */
    char sha256[EXPORT_SHA256_HEX];
} ExportRecord;
typedef struct ExportRecords {
    ExportRecord *rec; /* (n) owned */
    int n, cap;
} ExportRecords;
/* Appends a copy of the record. 0, or -1 when memory runs out. */
int export__records_add(ExportRecords *r, const char *name, long long bytes, const char *sha256);
void export__records_free(ExportRecords *r);
/* The records as text, a line "BYTES SHA256 NAME" each, after first_line
 * (when not NULL). malloc'd. */
char *export__records_text(const ExportRecords *r, const char *first_line);
/* The lines of such a text into out: each whole line (ending in '\n') with
 * a size, a SHA-256 and a name without '/' that accept takes. */
void export__records_parse(const char *text, ExportRecords *out, int (*accept)(const char *name, void *user),
                           void *user);

/* What the previous export into dir recorded in its index.json: its files
 * with their sizes and hashes (bytes -1 and no hash for those an older
 * attnviz listed without them). 1 when dir holds an index.json of format
 * attnviz-export/1, 0 when it holds none, -1 when index.json is something
 * else (not replaced: not attnviz's). prev is filled (or left empty). */
int export__previous_read(const char *dir, ExportRecords *prev);

/* "dir/name" (one '/' between them), malloc'd; NULL when memory runs out. */
char *export__path_join(const char *dir, const char *name);
/* attnviz's own spelling of a file name: NNN-kind[-hH].png or NNNNNN.png. */
int export__is_own_name(const char *name);
/* The same as an accept function for records. */
int export__accept_own_name(const char *name, void *user);
/* Every name attnviz writes into an export's folder: its own names,
 * index.json and the journal; an accept function for temporaries. */
int export__accept_folder_name(const char *name, void *user);
/* NNNNNN.png, with its number in *index (index may be NULL). */
int export__is_frame_name(const char *name, int *index);
/* A regular PNG file whose Software text chunk says "attnviz ..." and,
 * when not_key is not NULL, which has no text chunk of that key. */
int export__png_is_ours(const char *path, const char *not_key);
/* The text chunk key of an attnviz PNG (as above), malloc'd, or NULL. */
char *export__png_text_of(const char *path, const char *key);
/* Removes dir/rec->name when it is exactly what rec recorded: a regular
 * file of rec->bytes bytes whose SHA-256 is rec->sha256, a PNG whose
 * Software chunk says attnviz and, when marker_key is not NULL, whose text
 * chunk marker_key is marker_value. 1 when removed, else 0. */
int export__remove_recorded(const char *dir, const ExportRecord *rec, const char *marker_key, const char *marker_value);

/* The journal of what an export is writing into a folder: the earlier
 * export's files and each file of this one, recorded before it appears,
 * so that an export killed part-way leaves a record of every file it
 * wrote; the next export into the folder removes them. Lines as
 * export__records_text after "attnviz-journal/1". Its name beside the file
 * it stands for: ".NAME.attnviz-journal". */
#define EXPORT_JOURNAL_MARKER ".attnviz-journal"
typedef struct ExportJournal {
    int fd; /* appending; -1 when closed */
    char *path;
    pthread_mutex_t mu; /* one line at a time */
} ExportJournal;
/* "dir/.NAME.attnviz-journal", malloc'd. */
char *export__journal_path(const char *dir, const char *name);
/* The records of the journal at path (when it is a regular file of that
 * format) into out. 1 when there was one, else 0. */
int export__journal_read(const char *path, ExportRecords *out, int (*accept)(const char *name, void *user), void *user);
/* -1 with err when path exists and is not a journal of attnviz's (not a
 * regular file, or not of that format): it is never replaced. 0 when it
 * is free or a journal. */
int export__check_journal(const char *path, char *err, size_t errlen);
/* Writes the journal at path, whole, listing records, and opens it to
 * append to. 0, or -1 with err. */
int export__journal_begin(ExportJournal *j, const char *path, const ExportRecords *records, char *err, size_t errlen);
/* Appends a file about to be written (thread-safe). 0, or -1 with err. */
int export__journal_add(ExportJournal *j, const char *name, size_t bytes, const char *sha256, char *err, size_t errlen);
/* Closes the journal; with remove, it is removed (the export finished). */
void export__journal_end(ExportJournal *j, int remove);

/* Takes the folder for this process alone (flock on the folder): a
 * descriptor to close when done, or -1 with err (another export holds it). */
int export__lock_folder(const char *dir, char *err, size_t errlen);

/* The name the folder probe's temporary stands for (never a final file). */
#define EXPORT_PROBE_NAME "attnviz-probe"
/* Removes attnviz's own hidden temporaries (.NAME.attnviz-XXXXXX, NAME one
 * accept takes) last modified before `before`, which a killed export
 * left. Returns how many. */
int export__remove_stale_temporaries(const char *dir, const struct timespec *before,
                                     int (*accept)(const char *name, void *user), void *user);
/* -1 with err when dir/name exists and is not a regular file (it will not
 * be replaced); 0 when it is free or a regular file. */
int export__check_entry(const char *dir, const char *name, char *err, size_t errlen);
/* -1 with err when dir/name exists and is not a PNG of attnviz's (or has
 * a text chunk not_key, when that is not NULL), named `what` in the
 * message: it will not be replaced. 0 when it is free or attnviz's. */
int export__check_replaceable(const char *dir, const char *name, const char *not_key, const char *what, char *err,
                              size_t errlen);
/* -1 with err when path, or the temporary it is written through, is
 * longer than the file system takes (NAME_MAX bytes a name, PATH_MAX a
 * path): such a file is refused, never written under a shorter name. */
int export__check_length(const char *path, char *err, size_t errlen);

#endif
