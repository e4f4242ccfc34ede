/*
 * A gdk-pixbuf loader for .mmp files: GNOME's image viewers, thumbnailers
 * and every GTK program that opens images through gdk-pixbuf read them
 * with it. Built as libpixbufloader-mmp.so against libmmpdec alone, through
 * mmp/mmp.h (docs/viewers.md says how it is installed and registered).
 *
 * gdk-pixbuf holds 8-bit RGB or RGBA: grey becomes RGB, grey with alpha
 * RGBA, and deeper samples are brought to 8 bits as the PNG that `mmp-dec
 * x.mmp -o x.png` writes is read by a program that keeps 8 bits (and as
 * the Python package's Pillow plugin does): a maxval of 2^k - 1 by
 * repeating the sample's bits from the top to 8 bits (k <= 8) or 16 bits,
 * another by rounding v * full / maxval (full 255 for a maxval up to 255,
 * else 65535); a 16-bit value keeps its top 8 bits. An ICC profile in the
 * file becomes the pixbuf's "icc-profile" option (base64, as the PNG
 * loader gives it).
 *
 * The whole file is decoded at once (it has no progressive order): the
 * incremental interface collects the bytes and decodes in stop_load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GDK_PIXBUF_ENABLE_BACKEND
#include <gdk-pixbuf/gdk-pixbuf-io.h>
#undef GDK_PIXBUF_ENABLE_BACKEND

#include "mmp/mmp.h"

/* A file whose header announces more pixels is refused before anything is
 * allocated: mmp-dec's default bound (about 2.2 GB for a decode). */
#define MAX_PIXELS (MMP_MAX_PIXELS / 2)

typedef struct {
    GdkPixbufModuleSizeFunc size_func;
    GdkPixbufModulePreparedFunc prepared_func;
    GdkPixbufModuleUpdatedFunc updated_func;
    gpointer user_data;
    GByteArray *bytes;
} load_context;

static unsigned bits_of(unsigned v)
{
    unsigned k = 0;
    while (v >> k)
        k++;
    return k;
}

/* The 8-bit value of every sample 0..maxval (see the comment at the top),
 * and 255 above it: the table has 65536 entries, so that no sample reads
 * outside it whatever the decoder gave. */
static void fill_scale(guchar *lut, unsigned maxval)
{
    memset(lut, 255, 65536);
    const unsigned depth = maxval > 255 ? 16 : 8, full = (1u << depth) - 1, k = bits_of(maxval);
    for (unsigned v = 0; v <= maxval; v++) {
        unsigned s;
        if (maxval == full) {
            s = v;
        } else if (maxval == (1u << k) - 1) {
            s = 0;
            for (int shift = (int)(depth - k); shift > -(int)k; shift -= (int)k)
                s |= shift >= 0 ? v << shift : v >> -shift;
        } else {
            s = (v * full + maxval / 2) / maxval;
        }
        lut[v] = (guchar)(depth == 16 ? s >> 8 : s);
    }
}

static gboolean fail(GError **error, int code, const char *what, const char *reason)
{
    g_set_error(error, GDK_PIXBUF_ERROR, code, "%s: %s", what, reason);
    return FALSE;
}

/* The samples of img as a new pixbuf, or NULL with *error set. */
static GdkPixbuf *to_pixbuf(const mmp_image *img, GError **error)
{
    const int ch = mmp_image_channels(img), alpha = mmp_image_has_alpha(img);
    GdkPixbuf *pb = gdk_pixbuf_new(GDK_COLORSPACE_RGB, alpha, 8, img->width, img->height);
    guchar *lut = g_try_malloc(65536);
    if (!pb || !lut) {
        if (pb)
            g_object_unref(pb);
        g_free(lut);
        fail(error, GDK_PIXBUF_ERROR_INSUFFICIENT_MEMORY, "Could not load MMP image",
             "not enough memory for the image");
        return NULL;
    }
    fill_scale(lut, (unsigned)img->maxval);
    const int stride = gdk_pixbuf_get_rowstride(pb);
    guchar *pixels = gdk_pixbuf_get_pixels(pb);
    for (int y = 0; y < img->height; y++) {
        const uint16_t *src = img->pix + (size_t)y * img->width * ch;
        guchar *dst = pixels + (size_t)y * stride;
        for (int x = 0; x < img->width; x++, src += ch) {
            if (ch <= 2) {
                *dst++ = lut[src[0]];
                *dst++ = lut[src[0]];
                *dst++ = lut[src[0]];
            } else {
                *dst++ = lut[src[0]];
                *dst++ = lut[src[1]];
                *dst++ = lut[src[2]];
            }
            if (alpha)
                *dst++ = lut[src[ch - 1]];
        }
    }
    g_free(lut);
    return pb;
}

/* The file's ICC profile, if any, as the pixbuf's "icc-profile" option. */
static void attach_icc(GdkPixbuf *pb, const guchar *buf, gsize len)
{
    mmp_chunk list[64];
    int n = mmp_chunks(buf, len, list, 64, NULL, 0);
    for (int i = 0; i < n && i < 64; i++) {
        if (strcmp(list[i].type, MMP_CHUNK_ICC) == 0 && list[i].len > 0) {
            gchar *b64 = g_base64_encode(list[i].data, list[i].len);
            gdk_pixbuf_set_option(pb, "icc-profile", b64);
            g_free(b64);
            return;
        }
    }
}

/* Decode buf[0..len) into a new pixbuf. size_func, when given, learns the
 * size first and may cancel by setting either side to 0. */
static GdkPixbuf *decode(const guchar *buf, gsize len, load_context *ctx, GError **error)
{
    char why[256];
    mmp_file_info info;
    int rc = mmp_probe(buf, len, &info, why, sizeof why);
    if (rc < 0) {
        fail(error, GDK_PIXBUF_ERROR_CORRUPT_IMAGE, "Not a valid MMP image", why);
        return NULL;
    }
    if (ctx && ctx->size_func) {
        int w = info.width, h = info.height;
        ctx->size_func(&w, &h, ctx->user_data);
        if (w == 0 || h == 0) {
            fail(error, GDK_PIXBUF_ERROR_FAILED, "MMP image not loaded", "no size was asked for");
            return NULL;
        }
    }
    mmp_image img = {0};
    rc = mmp_decode_limited(buf, len, MAX_PIXELS, &img, why, sizeof why);
    if (rc < 0) {
        int code = rc == MMP_ENOMEM || rc == MMP_ELIMIT ? GDK_PIXBUF_ERROR_INSUFFICIENT_MEMORY
                   : rc == MMP_EUNSUPPORTED            ? GDK_PIXBUF_ERROR_UNKNOWN_TYPE
                                                       : GDK_PIXBUF_ERROR_CORRUPT_IMAGE;
        fail(error, code, "Could not decode MMP image", why);
        return NULL;
    }
    GdkPixbuf *pb = to_pixbuf(&img, error);
    mmp_image_free(&img);
    if (pb)
        attach_icc(pb, buf, len);
    return pb;
}

static GdkPixbuf *gdk_pixbuf__mmp_image_load(FILE *f, GError **error)
{
    GByteArray *bytes = g_byte_array_new();
    guchar chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (bytes->len + (guint64)n > MMP_MAX_FILE_BYTES || bytes->len + (guint64)n > G_MAXUINT) {
            g_byte_array_unref(bytes);
            fail(error, GDK_PIXBUF_ERROR_CORRUPT_IMAGE, "Not a valid MMP image",
                 "longer than any MMP file");
            return NULL;
        }
        g_byte_array_append(bytes, chunk, (guint)n);
    }
    GdkPixbuf *pb = NULL;
    if (ferror(f))
        fail(error, GDK_PIXBUF_ERROR_FAILED, "Could not read MMP image", g_strerror(errno));
    else
        pb = decode(bytes->data, bytes->len, NULL, error);
    g_byte_array_unref(bytes);
    return pb;
}

static gpointer gdk_pixbuf__mmp_image_begin_load(GdkPixbufModuleSizeFunc size_func,
                                                 GdkPixbufModulePreparedFunc prepared_func,
                                                 GdkPixbufModuleUpdatedFunc updated_func,
                                                 gpointer user_data, GError **error)
{
    load_context *ctx = g_new0(load_context, 1);
    ctx->size_func = size_func;
    ctx->prepared_func = prepared_func;
    ctx->updated_func = updated_func;
    ctx->user_data = user_data;
    ctx->bytes = g_byte_array_new();
    return ctx;
}

static gboolean gdk_pixbuf__mmp_image_load_increment(gpointer context, const guchar *buf,
                                                     guint size, GError **error)
{
    load_context *ctx = context;
    if (ctx->bytes->len + (guint64)size > MMP_MAX_FILE_BYTES ||
        ctx->bytes->len + (guint64)size > G_MAXUINT)
        return fail(error, GDK_PIXBUF_ERROR_CORRUPT_IMAGE, "Not a valid MMP image",
                    "longer than any MMP file");
    g_byte_array_append(ctx->bytes, buf, size);
    return TRUE;
}

static gboolean gdk_pixbuf__mmp_image_stop_load(gpointer context, GError **error)
{
    load_context *ctx = context;
    GdkPixbuf *pb = decode(ctx->bytes->data, ctx->bytes->len, ctx, error);
    if (pb) {
        if (ctx->prepared_func)
            ctx->prepared_func(pb, NULL, ctx->user_data);
        if (ctx->updated_func)
            ctx->updated_func(pb, 0, 0, gdk_pixbuf_get_width(pb), gdk_pixbuf_get_height(pb),
                              ctx->user_data);
        g_object_unref(pb);
    }
    g_byte_array_unref(ctx->bytes);
    g_free(ctx);
    return pb != NULL;
}

G_MODULE_EXPORT void fill_vtable(GdkPixbufModule *module);
G_MODULE_EXPORT void fill_info(GdkPixbufFormat *info);

G_MODULE_EXPORT void fill_vtable(GdkPixbufModule *module)
{
    module->load = gdk_pixbuf__mmp_image_load;
    module->begin_load = gdk_pixbuf__mmp_image_begin_load;
    module->stop_load = gdk_pixbuf__mmp_image_stop_load;
    module->load_increment = gdk_pixbuf__mmp_image_load_increment;
}

G_MODULE_EXPORT void fill_info(GdkPixbufFormat *info)
{
    /* docs/format.md section 2: every file begins with "MMPi". */
    static GdkPixbufModulePattern signature[] = {
        {"MMPi", NULL, 100},
        {NULL, NULL, 0},
    };
    static gchar *mime_types[] = {"image/x-mmp", NULL};
    static gchar *extensions[] = {"mmp", NULL};

    info->name = "mmp";
    info->signature = signature;
    info->description = "MMP image (Multidimensional Multiscale Parser)";
    info->mime_types = mime_types;
    info->extensions = extensions;
    info->flags = GDK_PIXBUF_FORMAT_THREADSAFE;
    info->license = "MIT";
}
