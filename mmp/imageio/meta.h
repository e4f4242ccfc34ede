/*
 * The metadata of an image file that the front ends carry from input to
 * output, each part kept verbatim, as the bytes of the file held it:
 *
 *   icc    the ICC profile: PNG iCCP (decompressed), JPEG APP2 "ICC_PROFILE"
 *          (its segments joined in sequence order), TIFF tag ICCProfile
 *   exif   the EXIF block, TIFF-structured ("II*\0" or "MM\0*" first), as
 *          PNG's eXIf chunk holds it: PNG eXIf, JPEG APP1 without its
 *          "Exif\0\0" prefix. Never from TIFF: a TIFF file's EXIF IFD is
 *          part of the file's own structure, its values at offsets anywhere
 *          in the file, and no verbatim block of it exists (it is named in
 *          `lost`). The EXIF orientation stays in these bytes; pixels are
 *          never turned.
 *   xmp    the XMP packet: PNG iTXt "XML:com.adobe.xmp", JPEG APP1
 *          "http://ns.adobe.com/xap/1.0/\0" (the packet after it), TIFF tag
 *          XMLPacket
 *   srgb, gama, chrm   PNG's sRGB, gAMA and cHRM chunks, their values as
 *          stored (not what libpng derives from them together)
 *   texts  PNG's tEXt, zTXt and iTXt chunks other than the XMP packet
 *
 * Readers fill it (mmp_imagefile_read_meta, mmp/imageio/imagefile.h); the
 * PNG writer writes it (mmp_png_write_meta, mmp/imageio/png.h). A zeroed
 * struct is empty; mmp_imageio_meta_free frees everything and zeroes it.
 *
 * What a file holds but its reader cannot keep is named in `lost`, so that
 * no part is dropped silently: a JPEG's ICC segments that do not make one
 * profile, a PNG's iCCP whose data do not inflate, a TIFF's EXIF IFD.
 */
#ifndef MMP_IMAGEIO_META_H
#define MMP_IMAGEIO_META_H

#include <stddef.h>
#include <stdint.h>

/* The PNG chunk a text came from, or is to be written as. */
typedef enum mmp_imageio_text_kind {
    MMP_TEXT_TEXT = 0,  /* tEXt: Latin-1 */
    MMP_TEXT_ZTXT,      /* zTXt: Latin-1, compressed in the file */
    MMP_TEXT_ITXT,      /* iTXt: UTF-8, with a language tag and a translated keyword */
    MMP_TEXT_ITXT_ZIP   /* iTXt, compressed in the file */
} mmp_imageio_text_kind;

typedef struct mmp_imageio_text {
    mmp_imageio_text_kind kind;
    char *key;        /* the keyword (PNG: 1 to 79 Latin-1 bytes), NUL-terminated */
    char *text;       /* text_len bytes, then a NUL */
    size_t text_len;
    char *lang;       /* iTXt: the language tag ("" for none); NULL otherwise */
    char *lang_key;   /* iTXt: the translated keyword ("" for none); NULL otherwise */
} mmp_imageio_text;

typedef struct mmp_imageio_meta {
    unsigned char *icc;      /* the ICC profile, icc_len bytes; NULL when none */
    size_t icc_len;
    char *icc_name;          /* PNG iCCP's profile name; NULL from JPEG and TIFF */
    unsigned char *exif;     /* the EXIF block, exif_len bytes; NULL when none */
    size_t exif_len;
    unsigned char *xmp;      /* the XMP packet (UTF-8), xmp_len bytes and a NUL; NULL when none */
    size_t xmp_len;
    int has_srgb;            /* PNG sRGB: */
    int srgb_intent;         /*   its rendering intent byte (0..3 are defined) */
    int has_gama;            /* PNG gAMA: */
    uint32_t gama;           /*   the gamma times 100000 */
    int has_chrm;            /* PNG cHRM: */
    uint32_t chrm[8];        /*   white x, y, red x, y, green x, y, blue x, y, times 100000 */
    mmp_imageio_text *texts; /* ntexts texts, in file order */
    size_t ntexts;
    char lost[200];          /* the parts the file held and the reader left out, one line
                              * ("the ICC profile (...), EXIF (...)"); "" when none */
} mmp_imageio_meta;

/* Free every part and zero the struct; safe on a zeroed struct and NULL. */
void mmp_imageio_meta_free(mmp_imageio_meta *m);
/* 1 when there is nothing in it (NULL too); `lost` does not count. */
int mmp_imageio_meta_is_empty(const mmp_imageio_meta *m);
/*
 * A one-line list of the parts present, for messages: "ICC profile, EXIF,
 * XMP, sRGB, gAMA, cHRM, 2 text chunks" (those present, in that order), or
 * "" when empty. Returns what snprintf would.
 */
int mmp_imageio_meta_describe(const mmp_imageio_meta *m, char *buf, size_t len);

/* Readers' helpers. Copy len bytes of src to a new buffer with a NUL after
 * them, into *dst and *dst_len (freeing what *dst held). Returns 0 or
 * MMP_ENOMEM. */
int mmp_imageio_meta_set(unsigned char **dst, size_t *dst_len, const void *src, size_t len);
/* Add `what` to m->lost (", " between parts; cut to its size). */
void mmp_imageio_meta_lost(mmp_imageio_meta *m, const char *what);
/* Append a text: key and, for iTXt, lang and lang_key (NULL read as "") are
 * copied, and text_len bytes of text. Returns 0 or MMP_ENOMEM. */
int mmp_imageio_meta_add_text(mmp_imageio_meta *m, mmp_imageio_text_kind kind, const char *key,
                              const char *text, size_t text_len, const char *lang,
                              const char *lang_key);

#endif
