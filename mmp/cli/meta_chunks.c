/* An image file's metadata as .mmp ancillary chunks and back
 * (mmp/cli/meta_chunks.h). */
#include "mmp/cli/meta_chunks.h"

#include <stdlib.h>
#include <string.h>

/* Keeps buffer p (or frees it and fails when there is no room to). */
static int own(mmp_chunk_set *set, unsigned char *p)
{
    unsigned char **o = realloc(set->owned, sizeof *o * (size_t)(set->nowned + 1));
    if (!o) {
        free(p);
        return MMP_ENOMEM;
    }
    set->owned = o;
    set->owned[set->nowned++] = p;
    return 0;
}

static int add(mmp_chunk_set *set, const char *type, const unsigned char *data, size_t len)
{
    mmp_chunk *c = realloc(set->chunks, sizeof *c * (size_t)(set->n + 1));
    if (!c)
        return MMP_ENOMEM;
    set->chunks = c;
    mmp_chunk *k = &set->chunks[set->n++];
    memcpy(k->type, type, 5);
    k->data = data;
    k->len = len;
    return 0;
}

/* A copy of data that the set owns, added as a chunk. */
static int add_copy(mmp_chunk_set *set, const char *type, const void *data, size_t len)
{
    unsigned char *p = malloc(len ? len : 1);
    if (!p || own(set, p))
        return MMP_ENOMEM;
    memcpy(p, data, len);
    return add(set, type, p, len);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Latin-1 bytes as UTF-8 into out (room for 2 * n bytes); returns the length. */
static size_t latin1_to_utf8(const char *in, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)in[i];
        if (c < 0x80) {
            out[k++] = (char)c;
        } else {
            out[k++] = (char)(0xC0 | c >> 6);
            out[k++] = (char)(0x80 | (c & 0x3F));
        }
    }
    return k;
}

/* UTF-8 as Latin-1 into out (room for n bytes): its length, or -1 when a
 * character is beyond U+00FF or the bytes are not UTF-8. */
static long utf8_to_latin1(const char *in, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)in[i];
        if (c < 0x80) {
            out[k++] = (char)c;
        } else if ((c == 0xC2 || c == 0xC3) && i + 1 < n &&
                   ((unsigned char)in[i + 1] & 0xC0) == 0x80) {
            out[k++] = (char)((c & 0x03) << 6 | ((unsigned char)in[i + 1] & 0x3F));
            i++;
        } else {
            return -1;
        }
    }
    return (long)k;
}

/* A text as the data of a "text" chunk: keyword, NUL, language tag, NUL,
 * translated keyword, NUL, text, all UTF-8 (tEXt and zTXt's Latin-1
 * converted). */
static int add_text(mmp_chunk_set *set, const mmp_imageio_text *t)
{
    const int latin1 = t->kind == MMP_TEXT_TEXT || t->kind == MMP_TEXT_ZTXT;
    const char *lang = t->lang ? t->lang : "", *lkey = t->lang_key ? t->lang_key : "";
    const size_t klen = strlen(t->key), llen = strlen(lang), lklen = strlen(lkey);
    unsigned char *p = malloc(2 * klen + llen + lklen + 2 * t->text_len + 3);
    if (!p || own(set, p))
        return MMP_ENOMEM;
    size_t at = latin1 ? latin1_to_utf8(t->key, klen, (char *)p) : (memcpy(p, t->key, klen), klen);
    p[at++] = 0;
    memcpy(p + at, lang, llen);
    at += llen;
    p[at++] = 0;
    memcpy(p + at, lkey, lklen);
    at += lklen;
    p[at++] = 0;
    if (latin1) {
        at += latin1_to_utf8(t->text, t->text_len, (char *)p + at);
    } else {
        memcpy(p + at, t->text, t->text_len);
        at += t->text_len;
    }
    return add(set, MMP_CHUNK_TEXT, p, at);
}

int mmp_meta_to_chunks(const mmp_imageio_meta *m, mmp_chunk_set *set)
{
    memset(set, 0, sizeof *set);
    if (!m)
        return 0;
    int err = 0;
    if (m->icc)
        err = add(set, MMP_CHUNK_ICC, m->icc, m->icc_len);
    if (!err && m->exif)
        err = add(set, MMP_CHUNK_EXIF, m->exif, m->exif_len);
    if (!err && m->xmp)
        err = add(set, MMP_CHUNK_XMP, m->xmp, m->xmp_len);
    if (!err && m->has_srgb) {
        const unsigned char intent = (unsigned char)m->srgb_intent;
        err = add_copy(set, MMP_CHUNK_SRGB, &intent, 1);
    }
    if (!err && m->has_gama) {
        unsigned char g[4];
        put_be32(g, m->gama);
        err = add_copy(set, MMP_CHUNK_GAMA, g, 4);
    }
    if (!err && m->has_chrm) {
        unsigned char c[32];
        for (int i = 0; i < 8; i++)
            put_be32(c + 4 * i, m->chrm[i]);
        err = add_copy(set, MMP_CHUNK_CHRM, c, 32);
    }
    for (size_t i = 0; i < m->ntexts && !err; i++)
        err = add_text(set, &m->texts[i]);
    if (err)
        mmp_chunk_set_free(set);
    return err;
}

void mmp_chunk_set_free(mmp_chunk_set *set)
{
    if (!set)
        return;
    for (int i = 0; i < set->nowned; i++)
        free(set->owned[i]);
    free(set->owned);
    free(set->chunks);
    memset(set, 0, sizeof *set);
}

/* A "text" chunk back into a text: tEXt when it has no language and fits
 * Latin-1, else iTXt. A chunk without its three NULs is left out. */
static int take_text(mmp_imageio_meta *m, const mmp_chunk *c)
{
    const char *d = (const char *)c->data;
    const char *end = d + c->len;
    const char *key = d, *lang = memchr(key, 0, c->len);
    if (!lang)
        return 0;
    lang++;
    const char *lkey = memchr(lang, 0, (size_t)(end - lang));
    if (!lkey)
        return 0;
    lkey++;
    const char *text = memchr(lkey, 0, (size_t)(end - lkey));
    if (!text)
        return 0;
    text++;
    const size_t text_len = (size_t)(end - text), klen = strlen(key);
    char *k1 = malloc(klen + 1), *t1 = malloc(text_len + 1);
    int err = 0;
    if (!k1 || !t1) {
        err = MMP_ENOMEM;
    } else {
        const long kl = utf8_to_latin1(key, klen, k1);
        const long tl = utf8_to_latin1(text, text_len, t1);
        if (!*lang && !*lkey && kl >= 0 && tl >= 0) {
            k1[kl] = 0;
            err = mmp_imageio_meta_add_text(m, MMP_TEXT_TEXT, k1, t1, (size_t)tl, NULL, NULL);
        } else {
            err = mmp_imageio_meta_add_text(m, MMP_TEXT_ITXT, key, text, text_len, lang, lkey);
        }
    }
    free(k1);
    free(t1);
    return err;
}

int mmp_chunks_to_meta(const mmp_chunk *chunks, int n, mmp_imageio_meta *m, int *unknown)
{
    memset(m, 0, sizeof *m);
    int err = 0, other = 0;
    for (int i = 0; i < n && !err; i++) {
        const mmp_chunk *c = &chunks[i];
        if (!strcmp(c->type, MMP_CHUNK_ICC))
            err = mmp_imageio_meta_set(&m->icc, &m->icc_len, c->data, c->len);
        else if (!strcmp(c->type, MMP_CHUNK_EXIF))
            err = mmp_imageio_meta_set(&m->exif, &m->exif_len, c->data, c->len);
        else if (!strcmp(c->type, MMP_CHUNK_XMP))
            err = mmp_imageio_meta_set(&m->xmp, &m->xmp_len, c->data, c->len);
        else if (!strcmp(c->type, MMP_CHUNK_SRGB) && c->len == 1) {
            m->has_srgb = 1;
            m->srgb_intent = c->data[0];
        } else if (!strcmp(c->type, MMP_CHUNK_GAMA) && c->len == 4) {
            m->has_gama = 1;
            m->gama = get_be32(c->data);
        } else if (!strcmp(c->type, MMP_CHUNK_CHRM) && c->len == 32) {
            m->has_chrm = 1;
            for (int k = 0; k < 8; k++)
                m->chrm[k] = get_be32(c->data + 4 * k);
        } else if (!strcmp(c->type, MMP_CHUNK_TEXT))
            err = take_text(m, c);
        else
            other++;
    }
    if (unknown)
        *unknown = other;
    if (err)
        mmp_imageio_meta_free(m);
    return err;
}
