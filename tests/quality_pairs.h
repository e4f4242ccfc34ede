/*
 * The table of mmp_set_quality as a text states it: mmp.h's "(Q, L)"
 * pairs, or the "Q:L" pairs of a front end's help and manual page, for the
 * tests that hold each to the library. Static inline, as tests/util.h; it
 * includes cmocka for fail_msg.
 */
#ifndef MMP_TESTS_QUALITY_PAIRS_H
#define MMP_TESTS_QUALITY_PAIRS_H

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mmp/mmp.h"

#define QUALITY_MAX_PAIRS 32

typedef struct quality_pairs {
    int n;
    double q[QUALITY_MAX_PAIRS], lambda[QUALITY_MAX_PAIRS];
} quality_pairs;

/* The pairs of text[0..len) into *t, in order: "Q:L" with digits on both
 * sides of the colon, or "(Q, L)". */
static inline void quality_pairs_read(const char *text, size_t len, quality_pairs *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < len; i++) {
        const int paren = text[i] == '(';
        const char *at = text + i + paren;
        if (!isdigit((unsigned char)*at) ||
            (!paren && i > 0 && (isdigit((unsigned char)text[i - 1]) || strchr(".:", text[i - 1]))))
            continue;
        char *sep, *end;
        const double q = strtod(at, &sep);
        const char *lp = paren ? (sep[0] == ',' && sep[1] == ' ' ? sep + 2 : NULL)
                               : (sep[0] == ':' ? sep + 1 : NULL);
        if (!lp || !isdigit((unsigned char)*lp))
            continue;
        const double l = strtod(lp, &end);
        if (paren && *end != ')')
            continue;
        if ((size_t)(end - text) > len)
            break;
        if (t->n == QUALITY_MAX_PAIRS)
            fail_msg("more than %d quality:lambda pairs", QUALITY_MAX_PAIRS);
        t->q[t->n] = q;
        t->lambda[t->n++] = l;
        i = (size_t)(end - text) - 1;
    }
}

/* The pairs of s from `from` up to `to` (or the end); at least three, or
 * the test fails naming `what`. */
static inline void quality_pairs_between(const char *s, const char *from, const char *to,
                                         quality_pairs *t, const char *what)
{
    const char *a = strstr(s, from);
    if (!a)
        fail_msg("%s has no '%s'", what, from);
    const char *b = to ? strstr(a + strlen(from), to) : NULL;
    quality_pairs_read(a, b ? (size_t)(b - a) : strlen(a), t);
    if (t->n < 3)
        fail_msg("%s states %d quality:lambda pairs after '%s'", what, t->n, from);
}

/* mmp.h's table (the tests run from the repository's root). */
static inline void quality_pairs_of_header(quality_pairs *t)
{
    FILE *f = fopen("mmp/mmp.h", "rb");
    static char text[65536];
    const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    if (n == 0)
        fail_msg("cannot read mmp/mmp.h (the tests run from the repository's root)");
    text[n] = 0;
    quality_pairs_between(text, "Lambda is interpolated in a table", "For q between", t, "mmp.h");
}

/* mmp_set_quality's lambda for q; it sets max_error -1 too. */
static inline double quality_lambda_of(double q)
{
    mmp_settings st;
    mmp_default_settings(&st);
    st.max_error = 7;
    assert_int_equal(mmp_set_quality(&st, q), MMP_OK);
    assert_int_equal(st.max_error, -1);
    return st.lambda;
}

#endif
