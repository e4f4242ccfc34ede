/* The metadata of image files: freeing, describing, filling. */
#include "mmp/imageio/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

void mmp_imageio_meta_free(mmp_imageio_meta *m)
{
    if (!m)
        return;
    free(m->icc);
    free(m->icc_name);
    free(m->exif);
    free(m->xmp);
    for (size_t i = 0; i < m->ntexts; i++) {
        free(m->texts[i].key);
        free(m->texts[i].text);
        free(m->texts[i].lang);
        free(m->texts[i].lang_key);
    }
    free(m->texts);
    memset(m, 0, sizeof *m);
}

int mmp_imageio_meta_is_empty(const mmp_imageio_meta *m)
{
    return !m || (!m->icc && !m->exif && !m->xmp && !m->has_srgb && !m->has_gama &&
                  !m->has_chrm && m->ntexts == 0);
}

int mmp_imageio_meta_describe(const mmp_imageio_meta *m, char *buf, size_t len)
{
    char text[40] = "";
    if (m && m->ntexts)
        snprintf(text, sizeof text, "%zu text chunk%s", m->ntexts, m->ntexts == 1 ? "" : "s");
    const char *parts[7] = {
        m && m->icc ? "ICC profile" : NULL, m && m->exif ? "EXIF" : NULL,
        m && m->xmp ? "XMP" : NULL,         m && m->has_srgb ? "sRGB" : NULL,
        m && m->has_gama ? "gAMA" : NULL,   m && m->has_chrm ? "cHRM" : NULL,
        text[0] ? text : NULL};
    char out[160] = "";
    size_t n = 0;
    for (int i = 0; i < 7; i++) {
        if (!parts[i])
            continue;
        const int k = snprintf(out + n, sizeof out - n, "%s%s", n ? ", " : "", parts[i]);
        if (k > 0 && (size_t)k < sizeof out - n)
            n += (size_t)k;
    }
    return snprintf(buf, len, "%s", out);
}

int mmp_imageio_meta_set(unsigned char **dst, size_t *dst_len, const void *src, size_t len)
{
    unsigned char *p = malloc(len + 1);
    if (!p)
        return MMP_ENOMEM;
    if (len)
        memcpy(p, src, len);
    p[len] = '\0';
    free(*dst);
    *dst = p;
    *dst_len = len;
    return MMP_OK;
}

void mmp_imageio_meta_lost(mmp_imageio_meta *m, const char *what)
{
    const size_t n = strlen(m->lost);
    snprintf(m->lost + n, sizeof m->lost - n, "%s%s", n ? ", " : "", what);
}

static char *dup_str(const char *s)
{
    const size_t n = strlen(s ? s : "");
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s ? s : "", n + 1);
    return p;
}

int mmp_imageio_meta_add_text(mmp_imageio_meta *m, mmp_imageio_text_kind kind, const char *key,
                              const char *text, size_t text_len, const char *lang,
                              const char *lang_key)
{
    mmp_imageio_text *t = realloc(m->texts, (m->ntexts + 1) * sizeof *t);
    if (!t)
        return MMP_ENOMEM;
    m->texts = t;
    t += m->ntexts;
    memset(t, 0, sizeof *t);
    const int itxt = kind == MMP_TEXT_ITXT || kind == MMP_TEXT_ITXT_ZIP;
    unsigned char *copy = NULL;
    size_t len = 0;
    t->kind = kind;
    t->key = dup_str(key);
    t->lang = itxt ? dup_str(lang) : NULL;
    t->lang_key = itxt ? dup_str(lang_key) : NULL;
    const int ok = t->key && (!itxt || (t->lang && t->lang_key)) &&
                   mmp_imageio_meta_set(&copy, &len, text, text_len) == 0;
    t->text = (char *)copy;
    t->text_len = len;
    if (!ok) {
        free(t->key);
        free(t->lang);
        free(t->lang_key);
        free(t->text);
        return MMP_ENOMEM;
    }
    m->ntexts++;
    return MMP_OK;
}
