/* Error code descriptions shared by the library and the tools. */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *mmp_strerror(int err)
{
    switch (err) {
    case MMP_OK:           return "success";
    case MMP_EINVAL:       return "invalid argument or setting";
    case MMP_ENOMEM:       return "out of memory";
    case MMP_EIO:          return "input/output error";
    case MMP_EFORMAT:      return "invalid input image file";
    case MMP_EBITSTREAM:   return "corrupt or truncated MMP data";
    case MMP_EUNSUPPORTED: return "unsupported format version or feature";
    case MMP_ELIMIT:       return "exceeds a documented limit";
    case MMP_EENGINE:      return "search engine unavailable or failed";
    case MMP_ECANCELED:    return "cancelled by the progress callback";
    default:               return "unknown error";
    }
}

int mmp_error(char *errbuf, size_t errlen, int code, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}
