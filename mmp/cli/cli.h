/* Helpers shared by the command-line front ends. */
#ifndef MMP_MMP_CLI_H
#define MMP_MMP_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Exit statuses: runtime failures and usage errors. */
#define MMP_EXIT_FAILURE 1
#define MMP_EXIT_USAGE 2

/* Print "PROG: message" and a newline to stderr. */
void mmp_cli_error(const char *prog, const char *fmt, ...);

/* Read a whole file ("-": stdin) into a malloc'd buffer; limit in bytes.
 * Returns 0 or a negative code with a reason in errbuf. */
int mmp_cli_read_file(const char *path, size_t limit, uint8_t **buf, size_t *len, char *errbuf,
                      size_t errlen);

/*
 * Write atomically: the data goes to a temporary file beside `path` that is
 * renamed over it only when complete, so no partial output is ever left.
 * "-" writes to stdout. `write_fn` writes the content to the FILE and
 * returns 0 or a negative code.
 */
typedef int (*mmp_cli_writer)(void *opaque, void *file);
int mmp_cli_write_atomic(const char *path, mmp_cli_writer write_fn, void *opaque, char *errbuf,
                         size_t errlen);

/* Progress bar on stderr (only when stderr is a terminal). */
void mmp_cli_progress(void *opaque, int done, int total);

#endif
