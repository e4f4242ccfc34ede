/* Error codes shared by the library and the command-line tools. */
#ifndef MMP_COMMON_ERROR_H
#define MMP_COMMON_ERROR_H

#include <stddef.h>

/* All are negative; 0 means success. */
#define MMP_OK            0
#define MMP_EINVAL      (-1)  /* bad argument or setting */
#define MMP_ENOMEM      (-2)  /* allocation failed */
#define MMP_EIO         (-3)  /* read or write failed */
#define MMP_EFORMAT     (-4)  /* not a valid input image file */
#define MMP_EBITSTREAM  (-5)  /* corrupt or truncated .mmp data */
#define MMP_EUNSUPPORTED (-6) /* valid but unsupported (version, feature) */
#define MMP_ELIMIT      (-7)  /* exceeds a documented limit */
#define MMP_EENGINE     (-8)  /* search engine unavailable or failed */
#define MMP_ECANCELED   (-9)  /* the progress callback stopped the encode */

/* A short English description of an error code (static string). */
const char *mmp_strerror(int err);

/* Format a one-line reason into errbuf[errlen] (when errbuf is not NULL) and
 * return `code`, so that callers can write `return mmp_error(...)`. */
int mmp_error(char *errbuf, size_t errlen, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
