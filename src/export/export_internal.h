/* export_internal.h: what the export module's own files share. Not included
 * outside src/export. */
#ifndef EXPORT_INTERNAL_H
#define EXPORT_INTERNAL_H

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

/* ---- the output folder (export_dir.c) ---- */

/* What the previous export into a folder listed in its index.json: the
 * step files (attnviz's own names only) and, for a frames export, how many
 * frames. Nothing when there is no index.json of format attnviz-export/1. */
typedef struct ExportPrevious {
    char **files; /* (n_files) owned */
    int n_files;
    int frames; /* NNNNNN.png from 000000 up to frames - 1 */
} ExportPrevious;
void export__previous_read(const char *dir, ExportPrevious *prev);
void export__previous_free(ExportPrevious *prev);

/* "dir/name" (one '/' between them), malloc'd; NULL when memory runs out. */
char *export__path_join(const char *dir, const char *name);
/* attnviz's own spelling of a file name: NNN-kind[-hH].png or NNNNNN.png. */
int export__is_own_name(const char *name);
/* NNNNNN.png, with its number in *index (index may be NULL). */
int export__is_frame_name(const char *name, int *index);
/* A regular PNG file whose Software text chunk says "attnviz ...". */
int export__png_is_ours(const char *path);
/* Removes dir/name when it is a regular file and either listed (the
 * previous index named it) or a PNG attnviz wrote. 1 when removed. */
int export__remove_owned(const char *dir, const char *name, int listed);
/* The name the folder probe's temporary stands for (never a final file). */
#define EXPORT_PROBE_NAME "attnviz-probe"
/* Removes attnviz's own hidden temporaries (.NAME.attnviz-XXXXXX) last modified
 * before `before`, which a killed export left. Returns how many. */
int export__remove_stale_temporaries(const char *dir, const struct timespec *before);
/* -1 with err when path, or the temporary it is written through, is
 * longer than the file system takes (NAME_MAX bytes a name, PATH_MAX a
 * path): such a file is refused, never written under a shorter name. */
int export__check_length(const char *path, char *err, size_t errlen);
/* -1 with err when dir/name exists and is not a regular file (it will not
 * be replaced); 0 when it is free or a regular file. */
int export__check_entry(const char *dir, const char *name, char *err, size_t errlen);

#endif
