/*
 * Messages from inside the library. The library never prints: whatever a
 * user may want to read (warnings, -v profiles) goes to a callback that the
 * caller sets (mmp_settings.log in mmp/mmp.h, which publishes the same
 * level numbers and callback type), or nowhere.
 */
#ifndef MMP_COMMON_LOG_H
#define MMP_COMMON_LOG_H

/* Levels; mmp/mmp.h repeats these definitions (the compiler checks that they
 * agree wherever both are included). */
#define MMP_LOG_ERROR 0   /* a failure, also returned as an error code */
#define MMP_LOG_WARNING 1 /* the encode goes on, differently than asked */
#define MMP_LOG_INFO 2    /* detail asked for with verbose settings */

/* One message, one line, no newline. */
typedef void (*mmp_log_fn)(void *opaque, int level, const char *msg);

typedef struct mmp_logger {
    mmp_log_fn fn; /* NULL: messages are dropped */
    void *opaque;
} mmp_logger;

/* Format and pass one message to lg (nothing when lg or lg->fn is NULL).
 * Messages longer than 1023 bytes are cut. */
void mmp_log(const mmp_logger *lg, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
