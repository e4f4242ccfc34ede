/* Library messages to the caller's callback. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>

void mmp_log(const mmp_logger *lg, int level, const char *fmt, ...)
{
    if (!lg || !lg->fn)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lg->fn(lg->opaque, level, msg);
}
