/*
 * Tests of the image files' metadata (mmp/imageio/meta.h): what the readers
 * keep from JPEG, PNG and TIFF files, and what the PNG writer writes back.
 *
 * Every file is made here by the format's own library (libjpeg with
 * jpeg_write_marker, libpng's png_set_* calls, libtiff's tags), and every
 * part read must equal, byte for byte, the bytes given to that library;
 * what our PNG writer writes is read again by our reader, and by libpng
 * directly, which checks the profile and the chunks as any reader would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>

#include "common/error.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/meta.h"
#include "mmp/imageio/png.h"
#include "meta_util.h"
#include "util.h"

static char tmpdir[64];

static int group_setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/mmp_test_metadata_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

static const char *tpath(const char *name)
{
    static char buf[4][128];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
    return buf[i];
}

/* ------------------------------------------------------------ the parts */

static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* An ICC profile of len bytes (a multiple of 4, at least 144) that libpng
 * accepts: a display profile of colour space `space` ("RGB " or "GRAY"),
 * PCS XYZ with the D50 illuminant, one tag holding bytes of `seed`. */
static unsigned char *make_icc(size_t len, const char *space, unsigned seed)
{
    unsigned char *p = calloc(len, 1);
    assert_non_null(p);
    be32(p, (uint32_t)len);
    be32(p + 8, 0x02100000u);
    memcpy(p + 12, "mntr", 4);
    memcpy(p + 16, space, 4);
    memcpy(p + 20, "XYZ ", 4);
    memcpy(p + 36, "acsp", 4);
    be32(p + 68, 0x0000F6D6u);
    be32(p + 72, 0x00010000u);
    be32(p + 76, 0x0000D32Du);
    be32(p + 128, 1);
    memcpy(p + 132, "desc", 4);
    be32(p + 136, 144);
    be32(p + 140, (uint32_t)(len - 144));
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t i = 144; i < len; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (unsigned char)(x >> 24);
    }
    return p;
}

/* An EXIF block: a big-endian TIFF header, IFD0 with Orientation 6 (turn
 * right: never applied) and bytes of `seed` after it. */
static unsigned char *make_exif(size_t len, unsigned seed)
{
    unsigned char *p = calloc(len, 1);
    assert_non_null(p);
    memcpy(p, "MM\0*", 4);
    be32(p + 4, 8);
    p[8] = 0, p[9] = 1;                          /* one entry */
    p[10] = 0x01, p[11] = 0x12;                  /* Orientation */
    p[12] = 0, p[13] = 3;                        /* SHORT */
    be32(p + 14, 1);
    p[18] = 0, p[19] = 6;
    for (size_t i = 26; i < len; i++)
        p[i] = (unsigned char)(i * 31 + seed);
    return p;
}

static const char xmp_packet[] =
    "<?xpacket begin=\"\xEF\xBB\xBF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
    "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
    "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
    "xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>Caf\xC3\xA9 "
    "\xE2\x80\x94 test</dc:title></rdf:Description></rdf:RDF></x:xmpmeta>\n"
    "<?xpacket end=\"w\"?>";

static void assert_same_meta(const mmp_imageio_meta *a, const mmp_imageio_meta *b)
{
    assert_int_equal(a->icc_len, b->icc_len);
    if (a->icc_len)
        assert_memory_equal(a->icc, b->icc, a->icc_len);
    assert_int_equal(a->exif_len, b->exif_len);
    if (a->exif_len)
        assert_memory_equal(a->exif, b->exif, a->exif_len);
    assert_int_equal(a->xmp_len, b->xmp_len);
    if (a->xmp_len)
        assert_memory_equal(a->xmp, b->xmp, a->xmp_len);
    assert_int_equal(a->has_srgb, b->has_srgb);
    assert_int_equal(a->srgb_intent, b->srgb_intent);
    assert_int_equal(a->has_gama, b->has_gama);
    assert_int_equal(a->gama, b->gama);
    assert_int_equal(a->has_chrm, b->has_chrm);
    assert_memory_equal(a->chrm, b->chrm, sizeof a->chrm);
    assert_int_equal(a->ntexts, b->ntexts);
    for (size_t i = 0; i < a->ntexts; i++) {
        const mmp_imageio_text *s = &a->texts[i], *t = &b->texts[i];
        assert_int_equal(s->kind, t->kind);
        assert_string_equal(s->key, t->key);
        assert_int_equal(s->text_len, t->text_len);
        assert_memory_equal(s->text, t->text, s->text_len);
        assert_int_equal(s->lang == NULL, t->lang == NULL);
        if (s->lang) {
            assert_string_equal(s->lang, t->lang);
            assert_string_equal(s->lang_key, t->lang_key);
        }
    }
}

static void read_meta_ok(const char *path, mmp_image *img, mmp_imageio_meta *meta)
{
    char err[256] = "";
    const int rc = mmp_imagefile_read_path_meta(path, img, meta, err, sizeof err);
    if (rc)
        fail_msg("%s: %s", path, err);
}

/* img and meta written as PNG by us; the warning must be "". */
static void write_png_meta(const char *path, const mmp_image *img, const mmp_imageio_meta *meta)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char warn[256] = "x";
    assert_int_equal(mmp_imagefile_write_meta(f, img, MMP_FILE_PNG, meta, warn, sizeof warn),
                     MMP_OK);
    assert_int_equal(fclose(f), 0);
    if (warn[0])
        fail_msg("left out: %s", warn);
}

/* The chunk names of a PNG file, each followed by a space. */
static void png_chunks(const char *path, char *out, size_t size)
{
    size_t len;
    uint8_t *b = slurp(path, &len);
    assert_non_null(b);
    out[0] = '\0';
    for (size_t at = 8; at + 12 <= len;) {
        const uint32_t n = (uint32_t)b[at] << 24 | (uint32_t)b[at + 1] << 16 |
                           (uint32_t)b[at + 2] << 8 | b[at + 3];
        strncat(out, (const char *)b + at + 4, 4);
        strncat(out, " ", size - strlen(out) - 1);
        at += 12 + (size_t)n;
    }
    free(b);
}

/* The PNG at `path` read by libpng itself, which checks the profile (its
 * header, tags and colour space) and the chunks as any reader would: its
 * iCCP (name and profile) and eXIf must be these (NULL: none), gAMA
 * `gamma` (0: none), and it must have `ntexts` texts. */
static void libpng_check(const char *path, const char *icc_name, const unsigned char *icc,
                         size_t icc_len, const unsigned char *exif, size_t exif_len, int gamma,
                         int ntexts)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    png_structp pp = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(pp);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(pp)))
        fail_msg("libpng cannot read %s", path);
    png_init_io(pp, f);
    png_read_png(pp, info, PNG_TRANSFORM_IDENTITY, NULL);
    png_charp name;
    int method;
    png_bytep prof;
    png_uint_32 plen;
    if (icc) {
        assert_int_equal(png_get_iCCP(pp, info, &name, &method, &prof, &plen), PNG_INFO_iCCP);
        assert_string_equal(name, icc_name);
        assert_bytes(prof, plen, icc, icc_len, "libpng's iCCP");
    } else {
        assert_int_equal(png_get_iCCP(pp, info, &name, &method, &prof, &plen), 0);
    }
    png_bytep ex;
    png_uint_32 exlen;
    if (exif) {
        assert_int_equal(png_get_eXIf_1(pp, info, &exlen, &ex), PNG_INFO_eXIf);
        assert_bytes(ex, exlen, exif, exif_len, "libpng's eXIf");
    }
    png_fixed_point g;
    if (gamma) {
        assert_int_equal(png_get_gAMA_fixed(pp, info, &g), PNG_INFO_gAMA);
        assert_int_equal(g, gamma);
    }
    png_textp t;
    int nt = 0;
    png_get_text(pp, info, &t, &nt);
    assert_int_equal(nt, ntexts);
    png_destroy_read_struct(&pp, &info, NULL);
    fclose(f);
}

/* --------------------------------------------------------------- JPEG */

static const char icc_id[12] = "ICC_PROFILE"; /* and its NUL */

/* An RGB JPEG of 24 x 16 with the markers given: the ICC profile cut into
 * `nseg` APP2 segments, of which those whose 1-based sequence numbers
 * `order` lists (up to a 0) are written, in that order; the EXIF and the
 * XMP APP1 segments (NULL: none). */
static unsigned char *jpeg_with_markers(const unsigned char *icc, size_t icc_len, int nseg,
                                        const int *order, const unsigned char *exif,
                                        size_t exif_len, const char *xmp, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long out_len = 0;
    jpeg_mem_dest(&c, &out, &out_len);
    c.image_width = 24;
    c.image_height = 16;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_start_compress(&c, TRUE);
    unsigned char *seg = malloc(65533);
    assert_non_null(seg);
    if (exif) {
        memcpy(seg, "Exif\0\0", 6);
        memcpy(seg + 6, exif, exif_len);
        jpeg_write_marker(&c, JPEG_APP0 + 1, seg, (unsigned)(6 + exif_len));
    }
    if (xmp) {
        static const char id[] = "http://ns.adobe.com/xap/1.0/";
        memcpy(seg, id, sizeof id);
        memcpy(seg + sizeof id, xmp, strlen(xmp));
        jpeg_write_marker(&c, JPEG_APP0 + 1, seg, (unsigned)(sizeof id + strlen(xmp)));
    }
    const size_t per = icc ? (icc_len + (size_t)nseg - 1) / (size_t)nseg : 0;
    for (int i = 0; icc && order[i]; i++) {
        const int s = order[i] - 1;
        const size_t from = (size_t)s * per;
        const size_t n = icc_len - from < per ? icc_len - from : per;
        memcpy(seg, icc_id, sizeof icc_id);
        seg[12] = (unsigned char)(s + 1);
        seg[13] = (unsigned char)nseg;
        memcpy(seg + 14, icc + from, n);
        jpeg_write_marker(&c, JPEG_APP0 + 2, seg, (unsigned)(14 + n));
    }
    free(seg);
    unsigned char row[24 * 3];
    while (c.next_scanline < c.image_height) {
        for (int i = 0; i < 24 * 3; i++)
            row[i] = (unsigned char)(i * 3 + c.next_scanline * 5);
        JSAMPROW r[1] = {row};
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *len = out_len;
    return out;
}

static void test_jpeg_meta(void **state)
{
    (void)state;
    const size_t icc_len = 6000, exif_len = 300;
    unsigned char *icc = make_icc(icc_len, "RGB ", 1), *exif = make_exif(exif_len, 2);
    const char *p = tpath("meta.jpg"), *png = tpath("meta.png");
    static const int in_order[3] = {1, 2, 0}, reversed[3] = {2, 1, 0}, three[4] = {3, 1, 2, 0};
    const int *orders[3] = {in_order, reversed, three};
    for (int k = 0; k < 3; k++) {
        size_t len;
        unsigned char *b = jpeg_with_markers(icc, icc_len, k == 2 ? 3 : 2, orders[k], exif,
                                             exif_len, xmp_packet, &len);
        write_file(p, b, len);
        mmp_image img, back;
        mmp_imageio_meta m, m2;
        memset(&m, 0, sizeof m);
        memset(&m2, 0, sizeof m2);
        read_meta_ok(p, &img, &m);
        assert_bytes(m.icc, m.icc_len, icc, icc_len, "ICC profile");
        assert_bytes(m.exif, m.exif_len, exif, exif_len, "EXIF");
        assert_bytes(m.xmp, m.xmp_len, xmp_packet, strlen(xmp_packet), "XMP");
        assert_null(m.icc_name);
        assert_string_equal(m.lost, "");
        assert_int_equal(m.has_srgb + m.has_gama + m.has_chrm, 0);
        assert_int_equal(m.ntexts, 0);
        /* The EXIF orientation (6: turn right) is not applied. */
        assert_int_equal(img.width, 24);
        assert_int_equal(img.height, 16);

        /* Into a PNG and back: the same bytes; libpng finds the chunks
         * valid. */
        write_png_meta(png, &img, &m);
        read_meta_ok(png, &back, &m2);
        assert_string_equal(m2.icc_name, "ICC profile");
        free(m2.icc_name);
        m2.icc_name = NULL;
        assert_same_meta(&m, &m2);
        libpng_check(png, "ICC profile", icc, icc_len, exif, exif_len, 0, 1);

        /* The same file without the metadata asked for; a second read into
         * a filled struct frees what it held (the leak checker watches). */
        mmp_image_free(&back);
        char err[256];
        assert_int_equal(mmp_imagefile_read_path(p, &back, err, sizeof err), MMP_OK);
        mmp_image_free(&back);
        read_meta_ok(p, &back, &m2);
        assert_same_meta(&m, &m2);
        mmp_image_free(&back);
        mmp_image_free(&img);
        mmp_imageio_meta_free(&m);
        mmp_imageio_meta_free(&m2);
        free(b);
    }

    /* No markers: nothing. A truncated file: an error, and meta empty. */
    size_t len;
    unsigned char *b = jpeg_with_markers(NULL, 0, 0, NULL, NULL, 0, NULL, &len);
    write_file(p, b, len);
    mmp_image img;
    mmp_imageio_meta m;
    memset(&m, 0, sizeof m);
    read_meta_ok(p, &img, &m);
    assert_true(mmp_imageio_meta_is_empty(&m));
    mmp_image_free(&img);
    free(b);
    b = jpeg_with_markers(icc, icc_len, 2, in_order, exif, exif_len, xmp_packet, &len);
    write_file(p, b, len - 10);
    char err[256];
    assert_int_equal(mmp_imagefile_read_path_meta(p, &img, &m, err, sizeof err), MMP_EFORMAT);
    assert_non_null(strstr(err, "truncated JPEG"));
    assert_true(mmp_imageio_meta_is_empty(&m));
    assert_null(img.pix);
    /* An ICC segment missing (the first of 2), or given twice: the profile
     * is left out, and named in `lost`; the rest kept. */
    static const int only_second[2] = {2, 0}, twice[4] = {1, 1, 2, 0};
    const int *bad[2] = {only_second, twice};
    for (int k = 0; k < 2; k++) {
        free(b);
        b = jpeg_with_markers(icc, icc_len, 2, bad[k], exif, exif_len, NULL, &len);
        write_file(p, b, len);
        read_meta_ok(p, &img, &m);
        assert_null(m.icc);
        assert_string_equal(m.lost,
                            "the ICC profile (its APP2 segments do not make one profile)");
        assert_bytes(m.exif, m.exif_len, exif, exif_len, "EXIF");
        mmp_image_free(&img);
        mmp_imageio_meta_free(&m);
    }
    free(b);
    unlink(p);
    unlink(png);
    free(icc);
    free(exif);
}

/* ---------------------------------------------------------------- PNG */

typedef struct png_meta_opts {
    const unsigned char *icc;
    size_t icc_len;
    const char *icc_name;
    int srgb;              /* -1: none */
    int gama;              /* 0: none */
    const png_fixed_point *chrm; /* 8 values, NULL: none */
    const unsigned char *exif;
    size_t exif_len;
    const png_text *before; /* texts before the image data */
    int nbefore;
    const png_text *after;  /* and after it */
    int nafter;
} png_meta_opts;

/* A PNG of img (8-bit grey or RGB) with these chunks, written by libpng's
 * own calls. */
static void raw_png_meta(const char *path, const mmp_image *img, const png_meta_opts *o)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    const int ch = mmp_image_channels(img);
    png_bytep row = malloc((size_t)img->width * (size_t)ch);
    assert_non_null(row);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8,
                 ch == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (o->icc)
        png_set_iCCP(png, info, o->icc_name, PNG_COMPRESSION_TYPE_BASE, o->icc,
                     (png_uint_32)o->icc_len);
    if (o->srgb >= 0)
        png_set_sRGB(png, info, o->srgb);
    if (o->gama)
        png_set_gAMA_fixed(png, info, o->gama);
    if (o->chrm)
        png_set_cHRM_fixed(png, info, o->chrm[0], o->chrm[1], o->chrm[2], o->chrm[3], o->chrm[4],
                           o->chrm[5], o->chrm[6], o->chrm[7]);
    if (o->exif)
        png_set_eXIf_1(png, info, (png_uint_32)o->exif_len, (png_bytep)o->exif);
    if (o->nbefore)
        png_set_text(png, info, o->before, o->nbefore);
    png_write_info(png, info);
    const size_t n = (size_t)img->width * (size_t)ch;
    for (int y = 0; y < img->height; y++) {
        for (size_t i = 0; i < n; i++)
            row[i] = (png_byte)img->pix[(size_t)y * n + i];
        png_write_row(png, row);
    }
    if (o->nafter)
        png_set_text(png, info, o->after, o->nafter);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    assert_int_equal(fclose(f), 0);
}

static void test_png_meta(void **state)
{
    (void)state;
    mmp_image img;
    assert_int_equal(mmp_image_alloc_channels(&img, 7, 5, 3, 255), MMP_OK);
    for (size_t i = 0; i < 7 * 5 * 3; i++)
        img.pix[i] = (uint16_t)(i * 7 % 256);
    const size_t icc_len = 3000, exif_len = 200;
    unsigned char *icc = make_icc(icc_len, "RGB ", 3), *exif = make_exif(exif_len, 4);
    static const png_fixed_point chrm[8] = {31270, 32900, 64000, 33000,
                                            21000, 71000, 15000, 6000};
    static const char long_text[] = "A zTXt chunk holds this text compressed: "
                                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.";
    const png_text before[4] = {
        text_of(PNG_TEXT_COMPRESSION_NONE, "Title", "A test image", NULL, NULL),
        text_of(PNG_TEXT_COMPRESSION_zTXt, "Comment", long_text, NULL, NULL),
        text_of(PNG_ITXT_COMPRESSION_NONE, "Title", "Une image d'essai \xC3\xA0 l'\xC3\xA9t\xC3\xA9",
                "fr", "Titre"),
        text_of(PNG_ITXT_COMPRESSION_NONE, "XML:com.adobe.xmp", xmp_packet, "", ""),
    };
    const png_text after[2] = {
        text_of(PNG_TEXT_COMPRESSION_NONE, "Author", "Someone \xE9l\xE8ve", NULL, NULL),
        text_of(PNG_ITXT_COMPRESSION_zTXt, "Description", long_text, "en-GB", ""),
    };
    const png_meta_opts o = {.icc = icc, .icc_len = icc_len, .icc_name = "Test profile",
                             .srgb = -1, .gama = 100000, .chrm = chrm, .exif = exif,
                             .exif_len = exif_len, .before = before, .nbefore = 4,
                             .after = after, .nafter = 2};
    const char *p = tpath("in.png"), *p2 = tpath("out.png");
    raw_png_meta(p, &img, &o);
    mmp_image a, b;
    mmp_imageio_meta m, m2;
    memset(&m, 0, sizeof m);
    memset(&m2, 0, sizeof m2);
    read_meta_ok(p, &a, &m);
    assert_bytes(m.icc, m.icc_len, icc, icc_len, "ICC profile");
    assert_string_equal(m.icc_name, "Test profile");
    assert_bytes(m.exif, m.exif_len, exif, exif_len, "EXIF");
    assert_bytes(m.xmp, m.xmp_len, xmp_packet, strlen(xmp_packet), "XMP");
    assert_int_equal(m.has_srgb, 0);
    assert_int_equal(m.has_gama, 1);
    assert_int_equal(m.gama, 100000);
    assert_int_equal(m.has_chrm, 1);
    for (int i = 0; i < 8; i++)
        assert_int_equal(m.chrm[i], chrm[i]);
    /* The texts, in file order, the XMP packet apart; those after the
     * image data too. */
    static const mmp_imageio_text_kind kinds[5] = {MMP_TEXT_TEXT, MMP_TEXT_ZTXT, MMP_TEXT_ITXT,
                                                   MMP_TEXT_TEXT, MMP_TEXT_ITXT_ZIP};
    const png_text *want[5] = {&before[0], &before[1], &before[2], &after[0], &after[1]};
    assert_int_equal(m.ntexts, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(m.texts[i].kind, kinds[i]);
        assert_string_equal(m.texts[i].key, want[i]->key);
        assert_bytes((const unsigned char *)m.texts[i].text, m.texts[i].text_len, want[i]->text,
                     strlen(want[i]->text), "text");
        if (kinds[i] == MMP_TEXT_ITXT || kinds[i] == MMP_TEXT_ITXT_ZIP) {
            assert_string_equal(m.texts[i].lang, want[i]->lang);
            assert_string_equal(m.texts[i].lang_key, want[i]->lang_key);
        } else {
            assert_null(m.texts[i].lang);
        }
    }
    char parts[200];
    mmp_imageio_meta_describe(&m, parts, sizeof parts);
    assert_string_equal(parts, "ICC profile, EXIF, XMP, gAMA, cHRM, 5 text chunks");

    /* Written by us and read again: every byte the same; the pixels too. */
    write_png_meta(p2, &a, &m);
    read_meta_ok(p2, &b, &m2);
    assert_string_equal(m2.icc_name, "Test profile");
    assert_same_meta(&m, &m2);
    assert_memory_equal(a.pix, b.pix, 7 * 5 * 3 * sizeof *a.pix);
    char chunks[400];
    png_chunks(p2, chunks, sizeof chunks);
    if (!strstr(chunks, "iCCP ") || !strstr(chunks, "gAMA ") || !strstr(chunks, "cHRM ") ||
        !strstr(chunks, "eXIf ") || strstr(chunks, "sRGB "))
        fail_msg("chunks: %s", chunks);
    /* libpng finds them valid, with the values written (and the XMP
     * packet among its texts). */
    libpng_check(p2, "Test profile", icc, icc_len, exif, exif_len, 100000, 6);
    mmp_image_free(&b);
    mmp_imageio_meta_free(&m2);

    /* sRGB alone reads as sRGB alone (libpng would report gAMA and cHRM
     * from it too), and is written back so. */
    const png_meta_opts s = {.srgb = PNG_sRGB_INTENT_SATURATION};
    raw_png_meta(p, &img, &s);
    mmp_imageio_meta_free(&m);
    read_meta_ok(p, &b, &m);
    assert_int_equal(m.has_srgb, 1);
    assert_int_equal(m.srgb_intent, PNG_sRGB_INTENT_SATURATION);
    assert_int_equal(m.has_gama + m.has_chrm, 0);
    assert_null(m.icc);
    mmp_image_free(&b);
    write_png_meta(p2, &a, &m);
    png_chunks(p2, chunks, sizeof chunks);
    if (!strstr(chunks, "sRGB ") || strstr(chunks, "gAMA ") || strstr(chunks, "cHRM "))
        fail_msg("chunks: %s", chunks);
    read_meta_ok(p2, &b, &m2);
    assert_same_meta(&m, &m2);
    mmp_image_free(&b);
    mmp_imageio_meta_free(&m2);
    /* A profile and sRGB: the profile is written, sRGB not (PNG wants one). */
    m.icc = icc;
    m.icc_len = icc_len;
    write_png_meta(p2, &a, &m);
    m.icc = NULL;
    m.icc_len = 0;
    png_chunks(p2, chunks, sizeof chunks);
    if (!strstr(chunks, "iCCP ") || strstr(chunks, "sRGB "))
        fail_msg("chunks: %s", chunks);

    mmp_imageio_meta_free(&m);
    mmp_image_free(&a);
    mmp_image_free(&img);
    free(icc);
    free(exif);
    unlink(p);
    unlink(p2);
}

/* What a file cannot hold is named, and the image written all the same. */
static void test_left_out(void **state)
{
    (void)state;
    mmp_image grey;
    assert_int_equal(mmp_image_alloc_channels(&grey, 4, 3, 1, 255), MMP_OK);
    unsigned char *rgb_icc = make_icc(400, "RGB ", 5), *exif = make_exif(64, 6);
    mmp_imageio_meta m;
    memset(&m, 0, sizeof m);
    assert_true(mmp_imageio_meta_is_empty(&m));
    assert_true(mmp_imageio_meta_is_empty(NULL));
    m.icc = rgb_icc;
    m.icc_len = 400;
    m.exif = exif;
    m.exif_len = 64;
    assert_int_equal(mmp_imageio_meta_add_text(&m, MMP_TEXT_TEXT, " bad key", "x", 1, NULL, NULL),
                     MMP_OK);
    assert_int_equal(mmp_imageio_meta_add_text(&m, MMP_TEXT_TEXT, "Good", "y", 1, NULL, NULL),
                     MMP_OK);
    assert_int_equal(mmp_imageio_meta_add_text(&m, MMP_TEXT_ITXT, "Nul", "a\0b", 3, NULL, NULL),
                     MMP_OK);
    assert_int_equal(mmp_imageio_meta_set(&m.xmp, &m.xmp_len, "<x/>\0<y/>", 9), MMP_OK);
    const char *p = tpath("left.png");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    char warn[300] = "";
    assert_int_equal(mmp_imagefile_write_meta(f, &grey, MMP_FILE_PNG, &m, warn, sizeof warn),
                     MMP_OK);
    assert_int_equal(fclose(f), 0);
    if (!strstr(warn, "left out of the PNG file") || !strstr(warn, "not a grey profile") ||
        !strstr(warn, "XMP") || !strstr(warn, "keyword") || !strstr(warn, "NUL") ||
        strstr(warn, "EXIF") || strchr(warn, '\n'))
        fail_msg("warning: %s", warn);
    mmp_image back;
    mmp_imageio_meta m2;
    memset(&m2, 0, sizeof m2);
    read_meta_ok(p, &back, &m2);
    assert_null(m2.icc);
    assert_null(m2.xmp);
    assert_bytes(m2.exif, m2.exif_len, exif, 64, "EXIF");
    assert_int_equal(m2.ntexts, 1);
    assert_string_equal(m2.texts[0].key, "Good");
    mmp_image_free(&back);
    mmp_imageio_meta_free(&m2);
    /* An EXIF block without its TIFF header. */
    memcpy(exif, "Exif", 4);
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_png_write_meta(f, &grey, &m, warn, sizeof warn), MMP_OK);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(warn, "EXIF (no TIFF header)"));

    /* Netpbm files hold none. */
    assert_int_equal(mmp_imagefile_holds_meta(MMP_FILE_PNG), 1);
    assert_int_equal(mmp_imagefile_holds_meta(MMP_FILE_PGM), 0);
    assert_int_equal(mmp_imagefile_holds_meta(MMP_FILE_PPM), 0);
    assert_int_equal(mmp_imagefile_holds_meta(MMP_FILE_PAM), 0);
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write_meta(f, &grey, MMP_FILE_PAM, &m, warn, sizeof warn),
                     MMP_OK);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(warn, "left out of the PAM file (it holds no metadata): ICC profile, EXIF, "
                              "XMP, 3 text chunks");
    /* Through the writer the front ends call. */
    mmp_image_out out = {.img = &grey, .fmt = MMP_FILE_PGM, .meta = &m};
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write_out(&out, f), MMP_OK);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(out.meta_warn, "left out of the PGM file"));
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write_meta(f, &grey, MMP_FILE_PGM, NULL, warn, sizeof warn),
                     MMP_OK);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(warn, "");
    read_meta_ok(p, &back, &m2);
    assert_true(mmp_imageio_meta_is_empty(&m2));
    mmp_image_free(&back);

    mmp_imageio_meta_free(&m);
    assert_true(mmp_imageio_meta_is_empty(&m));
    mmp_imageio_meta_free(&m);
    mmp_imageio_meta_free(NULL);
    mmp_image_free(&grey);
    unlink(p);
}

/* --------------------------------------------------------------- TIFF */

static void test_tiff_meta(void **state)
{
    (void)state;
    const size_t icc_len = 2048;
    unsigned char *icc = make_icc(icc_len, "RGB ", 7);
    const char *p = tpath("meta.tif");
    for (int tags = 0; tags < 2; tags++) {
        TIFF *tif = TIFFOpen(p, "w");
        assert_non_null(tif);
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, 5u);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, 3u);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 3);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 3u);
        if (tags) {
            TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)icc_len, icc);
            TIFFSetField(tif, TIFFTAG_XMLPACKET, (uint32_t)strlen(xmp_packet), xmp_packet);
            /* An EXIF IFD's offset (the IFD itself is not read). */
            TIFFSetField(tif, TIFFTAG_EXIFIFD, (uint64_t)8);
        }
        unsigned char row[15];
        for (uint32_t y = 0; y < 3; y++) {
            for (int i = 0; i < 15; i++)
                row[i] = (unsigned char)(i * 17 + y);
            assert_int_equal(TIFFWriteScanline(tif, row, y, 0), 1);
        }
        TIFFClose(tif);
        mmp_image img;
        mmp_imageio_meta m;
        memset(&m, 0, sizeof m);
        read_meta_ok(p, &img, &m);
        if (tags) {
            assert_bytes(m.icc, m.icc_len, icc, icc_len, "ICC profile");
            assert_bytes(m.xmp, m.xmp_len, xmp_packet, strlen(xmp_packet), "XMP");
        } else {
            assert_true(mmp_imageio_meta_is_empty(&m));
        }
        /* A TIFF's EXIF is part of its own structure: never kept, and
         * named. */
        assert_null(m.exif);
        if (tags)
            assert_non_null(strstr(m.lost, "EXIF (a TIFF file's EXIF IFDs"));
        else
            assert_string_equal(m.lost, "");
        assert_int_equal(img.pix[14], 14 * 17);
        mmp_image_free(&img);
        mmp_imageio_meta_free(&m);
    }
    unlink(p);
    free(icc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jpeg_meta),
        cmocka_unit_test(test_png_meta),
        cmocka_unit_test(test_left_out),
        cmocka_unit_test(test_tiff_meta),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
