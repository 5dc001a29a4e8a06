/* export_internal.h: what the export module's own files share. Not included
 * outside src/export. */
#ifndef EXPORT_INTERNAL_H
#define EXPORT_INTERNAL_H

#include <stddef.h>

/* Formats a one-line message into err (which may be NULL or of length 0). */
void export__set_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
