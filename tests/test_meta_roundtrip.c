/*
 * The metadata's round trip through bin/mmp-enc and bin/mmp-dec, with real
 * ICC profiles (tests/data/icc: sRGB, a wide-gamut RGB one and a grey one,
 * as Debian's icc-profiles-free ships them) and files such as cameras and
 * editors write:
 *
 *   - a PNG with an iCCP profile, an eXIf block (orientation 6), the XMP
 *     packet and Latin-1, compressed and international texts;
 *   - JPEGs laid out as a camera writes them (no JFIF segment: APP1 EXIF
 *     with Make, Model, Orientation and an EXIF IFD with DateTimeOriginal,
 *     APP1 XMP, APP2 ICC_PROFILE), the profile in one segment, or cut into
 *     three written out of order, which the reader joins in sequence
 *     order; and a grey one with a grey profile;
 *   - TIFFs with TIFFTAG_ICCPROFILE, RGB (the wide-gamut profile) and grey;
 *   - a grey PNG with an RGB profile, which a PNG may not hold: mmp keeps
 *     it in its file, and mmp-dec says in one line that its PNG leaves it
 *     out, never silently;
 *   - parts that a reader cannot keep (a JPEG's incomplete ICC segments, a
 *     cut iCCP stream, a TIFF's EXIF IFD): mmp-enc names them in one line.
 *
 * Every input is made here, its segments and chunks written byte by byte
 * where the libraries would refuse or reorder them, and the PNG that
 * mmp-dec writes is read back by libpng itself: the decompressed profile,
 * the eXIf block and the texts must be the bytes put in. The commands run
 * without --quiet, so that any warning fails expect_ok.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>
#include <zlib.h>

#include "cli_harness.h"
#include "meta_util.h"

/* ------------------------------------------------------------ profiles */

/* The profile tests/data/icc/NAME, checked to be an ICC profile of colour
 * space `space` ("RGB " or "GRAY") whose header gives its length. The
 * tests run from the repository root (make check) or a folder below it. */
static unsigned char *profile(const char *name, const char *space, size_t *len)
{
    static const char *dirs[] = {"tests/data/icc", "../tests/data/icc", "../../tests/data/icc"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dirs[i], name);
        unsigned char *b = slurp(p, len);
        if (!b)
            continue;
        const uint32_t n = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        if (*len < 132 || n != *len || memcmp(b + 36, "acsp", 4) || memcmp(b + 16, space, 4))
            fail_msg("%s is not a %.4s ICC profile of its own length", p, space);
        return b;
    }
    fail_msg("tests/data/icc/%s not found (run from the repository root)", name);
    return NULL;
}

/* ---------------------------------------------------------------- EXIF */

/* A TIFF-structured EXIF block as a camera writes it: IFD0 with Make,
 * Model, Orientation, the resolution, DateTime and the pointer to the EXIF
 * IFD, which holds ExposureTime, ExifVersion, DateTimeOriginal and
 * FocalLength; values longer than 4 bytes after each IFD. */
enum { T_ASCII = 2, T_SHORT = 3, T_LONG = 4, T_RATIONAL = 5, T_UNDEF = 7 };
typedef struct tag {
    uint16_t id, type;
    uint32_t count;
    const char *bytes;   /* ASCII (with its NUL counted) and UNDEFINED */
    uint32_t v[2];       /* SHORT, LONG: v[0]; RATIONAL: v[0] / v[1] */
} tag;

static void tput16(unsigned char *p, uint32_t v, int le)
{
    p[le ? 0 : 1] = (unsigned char)v;
    p[le ? 1 : 0] = (unsigned char)(v >> 8);
}

static void tput32(unsigned char *p, uint32_t v, int le)
{
    for (int i = 0; i < 4; i++)
        p[le ? i : 3 - i] = (unsigned char)(v >> (8 * i));
}

static size_t tag_bytes(const tag *t)
{
    return t->type == T_SHORT ? 2 : t->type == T_LONG ? 4 : t->type == T_RATIONAL ? 8 : t->count;
}

/* The IFD of n tags at b + at, its long values after it; returns the end
 * (even). */
static size_t put_ifd(unsigned char *b, size_t at, const tag *t, int n, int le)
{
    size_t data = at + 2 + 12 * (size_t)n + 4;
    tput16(b + at, (uint32_t)n, le);
    for (int i = 0; i < n; i++) {
        unsigned char *e = b + at + 2 + 12 * (size_t)i;
        tput16(e, t[i].id, le);
        tput16(e + 2, t[i].type, le);
        tput32(e + 4, t[i].count, le);
        unsigned char *v = e + 8;
        if (tag_bytes(&t[i]) > 4) {
            tput32(e + 8, (uint32_t)data, le);
            v = b + data;
            data += (tag_bytes(&t[i]) + 1) & ~(size_t)1;
        }
        if (t[i].type == T_SHORT)
            tput16(v, t[i].v[0], le);
        else if (t[i].type == T_LONG)
            tput32(v, t[i].v[0], le);
        else if (t[i].type == T_RATIONAL)
            tput32(v, t[i].v[0], le), tput32(v + 4, t[i].v[1], le);
        else
            memcpy(v, t[i].bytes, t[i].count);
    }
    tput32(b + at + 2 + 12 * (size_t)n, 0, le); /* no next IFD */
    return data;
}

static size_t ifd_size(const tag *t, int n)
{
    size_t k = 2 + 12 * (size_t)n + 4;
    for (int i = 0; i < n; i++)
        if (tag_bytes(&t[i]) > 4)
            k += (tag_bytes(&t[i]) + 1) & ~(size_t)1;
    return k;
}

/* The block, little-endian ("II") or big-endian ("MM"), into a new buffer. */
static unsigned char *camera_exif(int le, int orientation, size_t *len)
{
    tag ifd0[] = {
        {0x010F, T_ASCII, 8, "MMPTest", {0, 0}},              /* Make */
        {0x0110, T_ASCII, 17, "Camera-like TC-1", {0, 0}},    /* Model */
        {0x0112, T_SHORT, 1, NULL, {(uint32_t)orientation, 0}},
        {0x011A, T_RATIONAL, 1, NULL, {300, 1}},              /* XResolution */
        {0x011B, T_RATIONAL, 1, NULL, {300, 1}},              /* YResolution */
        {0x0128, T_SHORT, 1, NULL, {2, 0}},                   /* ResolutionUnit: inch */
        {0x0132, T_ASCII, 20, "2021:06:07 08:09:10", {0, 0}}, /* DateTime */
        {0x8769, T_LONG, 1, NULL, {0, 0}},                    /* the EXIF IFD, below */
    };
    static const tag exif_ifd[] = {
        {0x829A, T_RATIONAL, 1, NULL, {1, 125}},              /* ExposureTime */
        {0x9000, T_UNDEF, 4, "0232", {0, 0}},                 /* ExifVersion */
        {0x9003, T_ASCII, 20, "2021:06:07 08:09:10", {0, 0}}, /* DateTimeOriginal */
        {0x920A, T_RATIONAL, 1, NULL, {50, 1}},               /* FocalLength */
    };
    const int n0 = (int)(sizeof ifd0 / sizeof *ifd0), n1 = (int)(sizeof exif_ifd / sizeof *exif_ifd);
    const size_t at1 = 8 + ifd_size(ifd0, n0);
    ifd0[n0 - 1].v[0] = (uint32_t)at1;
    *len = at1 + ifd_size(exif_ifd, n1);
    unsigned char *b = calloc(*len, 1);
    assert_non_null(b);
    memcpy(b, le ? "II*\0" : "MM\0*", 4);
    tput32(b + 4, 8, le);
    assert_int_equal(put_ifd(b, 8, ifd0, n0, le), at1);
    assert_int_equal(put_ifd(b, at1, exif_ifd, n1, le), *len);
    return b;
}

static const char xmp_packet[] =
    "<?xpacket begin=\"\xEF\xBB\xBF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
    "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
    "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
    "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" "
    "xmp:Rating=\"4\"><dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">Caf\xC3\xA9 "
    "\xE2\x80\x94 round trip</rdf:li></rdf:Alt></dc:title></rdf:Description></rdf:RDF>"
    "</x:xmpmeta>\n<?xpacket end=\"w\"?>";

/* ------------------------------------------------------- reading back */

/* A text that a PNG must hold after the round trip: its keyword, its text,
 * and for iTXt its language tag and translated keyword (NULL: a tEXt or
 * zTXt, which must come back Latin-1). */
typedef struct want_text {
    const char *key, *text, *lang, *lang_key;
} want_text;

/* What libpng reads from `name` in the working directory: its size, its
 * channels, the iCCP profile (NULL: none may be there), the eXIf block
 * (NULL: none may be there) and, when wt is not NULL, exactly the nt texts
 * of wt in that order. */
static void libpng_expect(const char *name, int w, int h, int channels, const unsigned char *icc,
                          size_t icc_len, const unsigned char *exif, size_t exif_len,
                          const want_text *wt, int nt)
{
    char path[512];
    wpath(path, sizeof path, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("no %s", name);
    png_structp pp = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(pp);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(pp)))
        fail_msg("libpng cannot read %s", name);
    png_init_io(pp, f);
    png_read_png(pp, info, PNG_TRANSFORM_IDENTITY, NULL);
    assert_int_equal(png_get_image_width(pp, info), w);
    assert_int_equal(png_get_image_height(pp, info), h);
    assert_int_equal(png_get_channels(pp, info), channels);
    png_charp pname;
    int method;
    png_bytep prof;
    png_uint_32 plen;
    const png_uint_32 has_icc = png_get_iCCP(pp, info, &pname, &method, &prof, &plen);
    if (icc) {
        assert_int_equal(has_icc, PNG_INFO_iCCP);
        assert_bytes(prof, plen, icc, icc_len, "the ICC profile in the PNG's iCCP");
    } else if (has_icc) {
        fail_msg("%s holds an iCCP chunk of %u bytes; none expected", name, (unsigned)plen);
    }
    png_bytep ex;
    png_uint_32 exlen;
    const png_uint_32 has_exif = png_get_eXIf_1(pp, info, &exlen, &ex);
    if (exif) {
        assert_int_equal(has_exif, PNG_INFO_eXIf);
        assert_bytes(ex, exlen, exif, exif_len, "the EXIF block in the PNG's eXIf");
    } else if (has_exif) {
        fail_msg("%s holds an eXIf chunk; none expected", name);
    }
    png_textp t;
    int n = 0;
    png_get_text(pp, info, &t, &n);
    if (wt) {
        if (n != nt)
            fail_msg("%s holds %d texts, want %d", name, n, nt);
        for (int i = 0; i < nt; i++) {
            const int itxt = t[i].compression == PNG_ITXT_COMPRESSION_NONE ||
                             t[i].compression == PNG_ITXT_COMPRESSION_zTXt;
            assert_string_equal(t[i].key, wt[i].key);
            assert_bytes((const unsigned char *)t[i].text, itxt ? t[i].itxt_length : t[i].text_length,
                       (const unsigned char *)wt[i].text, strlen(wt[i].text), wt[i].key);
            assert_int_equal(itxt, wt[i].lang != NULL);
            if (itxt) {
                assert_string_equal(t[i].lang, wt[i].lang);
                assert_string_equal(t[i].lang_key, wt[i].lang_key);
            }
        }
    }
    png_destroy_read_struct(&pp, &info, NULL);
    fclose(f);
}

/* in -> mmp-enc -> m.mmp -> mmp-dec -> back.png, with no word on stderr;
 * mmp-dec --info must list `chunks` (the ancillary chunks, type:bytes). */
static void round_trip(const char *in, const char *chunks)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "$ENC -l 30 %s m.mmp", in);
    expect_ok(cmd);
    expect_ok("$DEC --info m.mmp");
    char want[512];
    snprintf(want, sizeof want, "\nchunk_list=%s\n", chunks);
    if (!strstr(cap_out, want))
        fail_msg("mmp-dec --info: want '%s' in\n%s", want + 1, cap_out);
    expect_ok("$DEC m.mmp -o back.png");
}

/* ---------------------------------------------------------------- PNG */

/* An 8-bit image of w x h and ch channels, its samples a pattern. */
static void pattern_rows(unsigned char *row, int w, int ch, int y)
{
    for (int i = 0; i < w * ch; i++)
        row[i] = (unsigned char)((i * 7 + y * 13 + (i * y) % 11) & 255);
}

/* A PNG (8-bit, grey or RGB) written by libpng with these parts. */
static void libpng_write(const char *name, int w, int h, int ch, const unsigned char *icc,
                         size_t icc_len, const unsigned char *exif, size_t exif_len,
                         const png_text *texts, int nt)
{
    char path[512];
    wpath(path, sizeof path, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    unsigned char *row = malloc((size_t)w * (size_t)ch);
    assert_non_null(row);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing %s", name);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
                 ch == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (icc)
        png_set_iCCP(png, info, "embedded profile", PNG_COMPRESSION_TYPE_BASE, icc,
                     (png_uint_32)icc_len);
    if (exif)
        png_set_eXIf_1(png, info, (png_uint_32)exif_len, (png_bytep)exif);
    if (nt)
        png_set_text(png, info, texts, nt);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        pattern_rows(row, w, ch, y);
        png_write_row(png, row);
    }
    /* Not png_write_end(png, info): libpng would write the eXIf chunk a
     * second time after the image data. */
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    assert_int_equal(fclose(f), 0);
}

/* An RGB PNG with the sRGB profile, EXIF of orientation 6 (turn right:
 * kept, never applied), the XMP packet and three texts: every byte back. */
static void test_png_profile_exif_text(void **state)
{
    (void)state;
    need_bin();
    size_t icc_len, exif_len;
    unsigned char *icc = profile("sRGB.icc", "RGB ", &icc_len);
    unsigned char *exif = camera_exif(0, 6, &exif_len);
    static const char comment[] = "A zTXt chunk holds this text compressed, "
                                  "as editors write long comments: zzzzzzzzzzzzzzzzzzzzzzzzzz.";
    const png_text texts[4] = {
        text_of(PNG_TEXT_COMPRESSION_NONE, "Title", "Caf\xE9 au lait", NULL, NULL),
        text_of(PNG_TEXT_COMPRESSION_zTXt, "Comment", comment, NULL, NULL),
        text_of(PNG_ITXT_COMPRESSION_NONE, "Description", "Une tasse \xC3\xA0 l'\xC3\xA9t\xC3\xA9",
                "fr", "L\xC3\xA9gende"),
        text_of(PNG_ITXT_COMPRESSION_NONE, "XML:com.adobe.xmp", xmp_packet, "", ""),
    };
    libpng_write("in.png", 48, 32, 3, icc, icc_len, exif, exif_len, texts, 4);
    /* A "text" chunk: keyword, NUL, language, NUL, translated keyword, NUL,
     * the text, all UTF-8 (docs/format.md). */
    char chunks[200];
    snprintf(chunks, sizeof chunks, "iccp:%zu exif:%zu xmpd:%zu text:%zu text:%zu text:%zu",
             icc_len, exif_len, strlen(xmp_packet), strlen("Title") + 3 + strlen("Caf\xC3\xA9 au lait"),
             strlen("Comment") + 3 + strlen(comment),
             strlen("Description") + strlen("fr") + strlen(texts[2].lang_key) + 3 +
                 strlen(texts[2].text));
    round_trip("in.png", chunks);
    /* The XMP packet first (mmp-dec writes it so), then the texts in file
     * order: tEXt and zTXt as tEXt, Latin-1; the iTXt with its language. */
    const want_text want[4] = {
        {"XML:com.adobe.xmp", xmp_packet, "", ""},
        {"Title", "Caf\xE9 au lait", NULL, NULL},
        {"Comment", comment, NULL, NULL},
        {"Description", "Une tasse \xC3\xA0 l'\xC3\xA9t\xC3\xA9", "fr", "L\xC3\xA9gende"},
    };
    libpng_expect("back.png", 48, 32, 3, icc, icc_len, exif, exif_len, want, 4);
    free(icc);
    free(exif);
}

/* ---------------------------------------------------------------- JPEG */

static const char exif_id[6] = {'E', 'x', 'i', 'f', 0, 0};
static const char xmp_id[] = "http://ns.adobe.com/xap/1.0/"; /* and its NUL */
static const char icc_id[12] = "ICC_PROFILE";                /* and its NUL */

/* A JPEG of w x h (ch = 1: grey, 3: YCbCr from RGB) laid out as a camera
 * writes it: SOI, APP1 "Exif\0\0" and the block, APP1 XMP (when xmp is not
 * NULL), the profile in APP2 "ICC_PROFILE\0" segments (cut into nseg
 * parts, written in the order `order` gives their sequence numbers), then the
 * tables and the scan; no JFIF APP0. order ends with a 0, and may leave
 * parts out. */
static void camera_jpeg(const char *name, int w, int h, int ch, const unsigned char *exif,
                        size_t exif_len, const char *xmp, const unsigned char *icc,
                        size_t icc_len, int nseg, const int *order)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long out_len = 0;
    jpeg_mem_dest(&c, &out, &out_len);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = ch;
    c.in_color_space = ch == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 92, TRUE);
    c.write_JFIF_header = FALSE;
    jpeg_start_compress(&c, TRUE);
    unsigned char *seg = malloc(65533);
    assert_non_null(seg);
    assert_true(exif_len <= 65533 - sizeof exif_id);
    memcpy(seg, exif_id, sizeof exif_id);
    memcpy(seg + sizeof exif_id, exif, exif_len);
    jpeg_write_marker(&c, JPEG_APP0 + 1, seg, (unsigned)(sizeof exif_id + exif_len));
    if (xmp) {
        memcpy(seg, xmp_id, sizeof xmp_id);
        memcpy(seg + sizeof xmp_id, xmp, strlen(xmp));
        jpeg_write_marker(&c, JPEG_APP0 + 1, seg, (unsigned)(sizeof xmp_id + strlen(xmp)));
    }
    const size_t per = (icc_len + (size_t)nseg - 1) / (size_t)nseg;
    assert_true(per <= 65533 - 14);
    for (int i = 0; order[i]; i++) {
        const int s = order[i] - 1;
        const size_t from = (size_t)s * per, n = icc_len - from < per ? icc_len - from : per;
        memcpy(seg, icc_id, sizeof icc_id);
        seg[12] = (unsigned char)(s + 1);
        seg[13] = (unsigned char)nseg;
        memcpy(seg + 14, icc + from, n);
        jpeg_write_marker(&c, JPEG_APP0 + 2, seg, (unsigned)(14 + n));
    }
    free(seg);
    unsigned char *row = malloc((size_t)w * (size_t)ch);
    assert_non_null(row);
    while (c.next_scanline < c.image_height) {
        pattern_rows(row, w, ch, (int)c.next_scanline);
        JSAMPROW r[1] = {row};
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    /* The layout asked for: SOI, then the EXIF APP1 segment. */
    assert_true(out_len > 12);
    assert_memory_equal(out, "\xFF\xD8\xFF\xE1", 4);
    assert_memory_equal(out + 6, exif_id, sizeof exif_id);
    put_file(name, out, out_len);
    free(out);
}

/* A camera's JPEG: the profile and the EXIF block (II, orientation 8) come
 * back byte for byte, the EXIF without JPEG's "Exif\0\0" prefix (PNG's
 * eXIf holds the TIFF structure alone); the profile in one APP2 segment,
 * and cut into three written as 3, 1, 2. */
static void test_camera_jpeg(void **state)
{
    (void)state;
    need_bin();
    size_t icc_len, exif_len;
    unsigned char *icc = profile("sRGB.icc", "RGB ", &icc_len);
    unsigned char *exif = camera_exif(1, 8, &exif_len);
    static const int one[2] = {1, 0}, shuffled[4] = {3, 1, 2, 0};
    char chunks[200];
    snprintf(chunks, sizeof chunks, "iccp:%zu exif:%zu xmpd:%zu", icc_len, exif_len,
             strlen(xmp_packet));
    const want_text want[1] = {{"XML:com.adobe.xmp", xmp_packet, "", ""}};
    for (int k = 0; k < 2; k++) {
        camera_jpeg("cam.jpg", 64, 48, 3, exif, exif_len, xmp_packet, icc, icc_len, k ? 3 : 1,
                    k ? shuffled : one);
        round_trip("cam.jpg", chunks);
        libpng_expect("back.png", 64, 48, 3, icc, icc_len, exif, exif_len, want, 1);
    }

    /* A grey camera JPEG with the grey profile: a grey PNG that keeps it. */
    free(icc);
    icc = profile("Gray.icc", "GRAY", &icc_len);
    camera_jpeg("grey.jpg", 40, 24, 1, exif, exif_len, NULL, icc, icc_len, 1, one);
    snprintf(chunks, sizeof chunks, "iccp:%zu exif:%zu", icc_len, exif_len);
    round_trip("grey.jpg", chunks);
    libpng_expect("back.png", 40, 24, 1, icc, icc_len, exif, exif_len, want, 0);
    free(icc);
    free(exif);
}

/* ---------------------------------------------------------------- TIFF */

/* A TIFF of w x h (grey or RGB, 8 bits) with the profile, the XMP packet
 * (NULL: none) and, when `exif`, an EXIF IFD holding DateTimeOriginal,
 * written as libtiff does: IFD0, then the EXIF IFD, then IFD0 again with
 * the offset of the EXIF IFD. */
static void tiff_write(const char *name, int w, int h, int ch, const unsigned char *icc,
                       size_t icc_len, const char *xmp, int exif)
{
    char path[512];
    wpath(path, sizeof path, name);
    TIFF *tif = TIFFOpen(path, "w");
    assert_non_null(tif);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)h);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, ch);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, ch == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)h);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
    TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)icc_len, icc);
    if (exif)
        TIFFSetField(tif, TIFFTAG_MAKE, "MMPTest");
    if (xmp)
        TIFFSetField(tif, TIFFTAG_XMLPACKET, (uint32_t)strlen(xmp), xmp);
    unsigned char *row = malloc((size_t)w * (size_t)ch);
    assert_non_null(row);
    for (int y = 0; y < h; y++) {
        pattern_rows(row, w, ch, y);
        assert_int_equal(TIFFWriteScanline(tif, row, (uint32_t)y, 0), 1);
    }
    if (exif) {
        uint64_t at = 0;
        assert_int_equal(TIFFWriteDirectory(tif), 1);
        assert_int_equal(TIFFCreateEXIFDirectory(tif), 0);
        TIFFSetField(tif, EXIFTAG_DATETIMEORIGINAL, "2021:06:07 08:09:10");
        assert_int_equal(TIFFWriteCustomDirectory(tif, &at), 1);
        assert_int_equal(TIFFSetDirectory(tif, 0), 1);
        TIFFSetField(tif, TIFFTAG_EXIFIFD, at);
        assert_int_equal(TIFFRewriteDirectory(tif), 1);
    }
    TIFFClose(tif);
    free(row);
}

/* TIFFs with the wide-gamut RGB profile (and XMP), and a grey one with the
 * grey profile: the PNGs keep them. */
static void test_tiff_profile(void **state)
{
    (void)state;
    need_bin();
    size_t icc_len;
    unsigned char *icc = profile("compatibleWithAdobeRGB1998.icc", "RGB ", &icc_len);
    tiff_write("rgb.tif", 50, 30, 3, icc, icc_len, xmp_packet, 0);
    char chunks[200];
    snprintf(chunks, sizeof chunks, "iccp:%zu xmpd:%zu", icc_len, strlen(xmp_packet));
    round_trip("rgb.tif", chunks);
    const want_text want[1] = {{"XML:com.adobe.xmp", xmp_packet, "", ""}};
    libpng_expect("back.png", 50, 30, 3, icc, icc_len, NULL, 0, want, 1);
    free(icc);

    icc = profile("Gray.icc", "GRAY", &icc_len);
    tiff_write("grey.tif", 50, 30, 1, icc, icc_len, NULL, 0);
    snprintf(chunks, sizeof chunks, "iccp:%zu", icc_len);
    round_trip("grey.tif", chunks);
    libpng_expect("back.png", 50, 30, 1, icc, icc_len, NULL, 0, want, 0);
    free(icc);
}

/* ---------------------------------------------------------- grey PNGs */

/* Appends a PNG chunk (length, type, data, CRC) at *at of b. */
static void png_chunk(unsigned char *b, size_t *at, const char *type, const void *data, size_t n)
{
    unsigned char *p = b + *at;
    tput32(p, (uint32_t)n, 0);
    memcpy(p + 4, type, 4);
    if (n)
        memcpy(p + 8, data, n);
    tput32(p + 8 + n, (uint32_t)crc32(crc32(0L, Z_NULL, 0), p + 4, (uInt)(n + 4)), 0);
    *at += 12 + n;
}

/* A grey 8-bit PNG of w x h whose iCCP chunk holds `icc`, its chunks
 * written here: libpng would refuse an RGB profile on a grey image. With
 * `cut`, the iCCP chunk's zlib stream lacks its last `cut` bytes (its CRC
 * right). */
static void grey_png_iccp(const char *name, int w, int h, const unsigned char *icc,
                          size_t icc_len, size_t cut)
{
    unsigned char *raw = malloc((size_t)(w + 1) * (size_t)h);
    uLongf zlen = compressBound((uLong)((w + 1) * h)), plen = compressBound((uLong)icc_len);
    unsigned char *z = malloc(zlen), *iccp = malloc(20 + plen);
    unsigned char *png = malloc(200 + zlen + plen);
    assert_true(raw && z && iccp && png);
    for (int y = 0; y < h; y++) {
        raw[(size_t)y * (size_t)(w + 1)] = 0;
        pattern_rows(raw + (size_t)y * (size_t)(w + 1) + 1, w, 1, y);
    }
    assert_int_equal(compress(z, &zlen, raw, (uLong)((w + 1) * h)), Z_OK);
    memcpy(iccp, "ICC profile\0\0", 13); /* the name, its NUL, method 0 */
    assert_int_equal(compress(iccp + 13, &plen, icc, (uLong)icc_len), Z_OK);
    size_t at = 8;
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    const unsigned char ihdr[13] = {0, 0, (unsigned char)(w >> 8), (unsigned char)w,
                                    0, 0, (unsigned char)(h >> 8), (unsigned char)h,
                                    8, 0, 0, 0, 0};
    png_chunk(png, &at, "IHDR", ihdr, 13);
    png_chunk(png, &at, "iCCP", iccp, 13 + plen - cut);
    png_chunk(png, &at, "IDAT", z, zlen);
    png_chunk(png, &at, "IEND", "", 0);
    put_file(name, png, at);
    free(raw);
    free(z);
    free(iccp);
    free(png);
}

/* A grey PNG with the grey profile keeps it. With the sRGB profile, which
 * a grey PNG may not hold (libpng drops it, or refuses to write it): the
 * .mmp file keeps it, and mmp-dec writes the PNG without it and says so in
 * one line (--quiet silences that, as every warning). */
static void test_grey_profiles(void **state)
{
    (void)state;
    need_bin();
    size_t grey_len, rgb_len;
    unsigned char *grey = profile("Gray.icc", "GRAY", &grey_len);
    unsigned char *rgb = profile("sRGB.icc", "RGB ", &rgb_len);
    char chunks[64];
    grey_png_iccp("grey.png", 40, 24, grey, grey_len, 0);
    snprintf(chunks, sizeof chunks, "iccp:%zu", grey_len);
    round_trip("grey.png", chunks);
    libpng_expect("back.png", 40, 24, 1, grey, grey_len, NULL, 0, NULL, 0);

    grey_png_iccp("mixed.png", 40, 24, rgb, rgb_len, 0);
    expect_ok("$ENC -l 30 mixed.png m.mmp");
    expect_ok("$DEC --info m.mmp");
    snprintf(chunks, sizeof chunks, "\nchunk_list=iccp:%zu\n", rgb_len);
    assert_non_null(strstr(cap_out, chunks));
    assert_int_equal(run("$DEC m.mmp -o back.png"), 0);
    one_line("mmp-dec m.mmp -o back.png", "mmp-dec", "left out of the PNG file",
             "the ICC profile (not a grey profile)");
    assert_string_equal(cap_out, "");
    libpng_expect("back.png", 40, 24, 1, NULL, 0, NULL, 0, NULL, 0);
    expect_ok("$DEC --quiet m.mmp -o quiet.png");
    free(grey);
    free(rgb);
}

/* ---------------------------------------------------- parts left out */

/* `in` encodes with one warning line naming what was not stored (its
 * needle) and the chunks `chunks` (type:bytes, "" for none) stored;
 * --quiet silences the warning. */
static void encode_warns(const char *in, const char *needle, const char *chunks)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "$ENC -l 30 %s m.mmp", in);
    assert_int_equal(run("%s", cmd), 0);
    one_line(cmd, "mmp-enc", "not stored: ", needle);
    assert_string_equal(cap_out, "");
    expect_ok("$DEC --info m.mmp");
    char want[300];
    snprintf(want, sizeof want, chunks[0] ? "\nchunk_list=%s\n" : "\nchunks=0\n%s", chunks);
    if (!strstr(cap_out, want))
        fail_msg("mmp-dec --info: want '%s' in\n%s", want + 1, cap_out);
    snprintf(cmd, sizeof cmd, "$ENC --quiet -l 30 %s m.mmp", in);
    expect_ok(cmd);
}

/* What a reader cannot keep is named when mmp-enc reads it, never dropped
 * silently; the rest is stored: a JPEG whose ICC segments do not make one
 * profile (the second of two alone), a PNG whose iCCP stream is cut, a
 * TIFF with an EXIF IFD. */
static void test_lost_on_reading(void **state)
{
    (void)state;
    need_bin();
    size_t icc_len, exif_len;
    unsigned char *icc = profile("sRGB.icc", "RGB ", &icc_len);
    unsigned char *exif = camera_exif(1, 8, &exif_len);
    static const int only_second[2] = {2, 0};
    camera_jpeg("cam.jpg", 64, 48, 3, exif, exif_len, NULL, icc, icc_len, 2, only_second);
    char chunks[100];
    snprintf(chunks, sizeof chunks, "exif:%zu", exif_len);
    encode_warns("cam.jpg", "the ICC profile (its APP2 segments do not make one profile)",
                 chunks);
    free(icc);

    icc = profile("Gray.icc", "GRAY", &icc_len);
    grey_png_iccp("cut.png", 40, 24, icc, icc_len, 4);
    encode_warns("cut.png", "the ICC profile (an iCCP chunk damaged or over 8 MiB)", "");

    tiff_write("exif.tif", 50, 30, 1, icc, icc_len, NULL, 1);
    snprintf(chunks, sizeof chunks, "iccp:%zu", icc_len);
    encode_warns("exif.tif", "EXIF (a TIFF file's EXIF IFDs are part of its structure", chunks);
    /* Without its EXIF IFD, not a word. */
    tiff_write("plain.tif", 50, 30, 1, icc, icc_len, NULL, 0);
    expect_ok("$ENC -l 30 plain.tif m.mmp");
    free(icc);
    free(exif);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, cli_test_setup)
    const struct CMUnitTest tests[] = {
        T(test_png_profile_exif_text),
        T(test_camera_jpeg),
        T(test_tiff_profile),
        T(test_grey_profiles),
        T(test_lost_on_reading),
    };
#undef T
    return cmocka_run_group_tests(tests, cli_group_setup, cli_group_teardown);
}
