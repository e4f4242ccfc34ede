/* Helpers of the metadata tests (tests/test_metadata.c, the library's
 * readers and writers; tests/test_meta_roundtrip.c, the programs): byte
 * blocks compared, and PNG texts made for libpng. */
#ifndef MMP_TESTS_META_UTIL_H
#define MMP_TESTS_META_UTIL_H

#include <png.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

/* got (NULL: missing) holds exactly the want_len bytes of want; a failure
 * names the first byte that differs. */
static inline void assert_bytes(const unsigned char *got, size_t got_len, const void *want,
                                size_t want_len, const char *what)
{
    const unsigned char *w = want;
    if (!got)
        fail_msg("%s: missing", what);
    if (got_len != want_len)
        fail_msg("%s: %zu bytes, want %zu", what, got_len, want_len);
    for (size_t i = 0; i < want_len; i++)
        if (got[i] != w[i])
            fail_msg("%s: byte %zu is %u, want %u", what, i, got[i], w[i]);
}

/* A text for png_set_text: compression PNG_TEXT_COMPRESSION_NONE or _zTXt
 * (tEXt, zTXt) or PNG_ITXT_COMPRESSION_*, with lang and lang_key for iTXt. */
static inline png_text text_of(int compression, const char *key, const char *text,
                               const char *lang, const char *lang_key)
{
    png_text t;
    memset(&t, 0, sizeof t);
    t.compression = compression;
    t.key = (png_charp)key;
    t.text = (png_charp)text;
    t.text_length = strlen(text);
    t.lang = (png_charp)lang;
    t.lang_key = (png_charp)lang_key;
    return t;
}

#endif
