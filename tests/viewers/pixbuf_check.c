/*
 * Opens images through gdk-pixbuf, as a GTK program does, for
 * tests/viewers/gdk-pixbuf.sh (which says what it checks). It links
 * gdk-pixbuf alone: an .mmp file opens only through the installed loader.
 *
 *   pixbuf_check same X.mmp REF   X.mmp, read whole (gdk_pixbuf_new_from_file)
 *                                 and through a GdkPixbufLoader fed a few
 *                                 bytes at a time, has REF's size, alpha and
 *                                 every pixel, and REF's ICC profile where REF
 *                                 has one (REF: mmp-dec's PNG, read by
 *                                 gdk-pixbuf's PNG loader, which drops a
 *                                 profile that libpng finds invalid)
 *   pixbuf_check row X            prints "W H ALPHA" and the samples of the
 *                                 first row, one pixel's a line
 *   pixbuf_check error X          X fails to open with a GdkPixbufError whose
 *                                 message names MMP; prints the message
 *   pixbuf_check icc X            prints the length of the image's ICC profile
 *                                 (its "icc-profile" option; 0: none)
 *   pixbuf_check info X           prints the format's name and MIME type
 *                                 (gdk_pixbuf_get_file_info)
 *
 * Exit status 0 when the check holds, 1 with a line on stderr otherwise.
 */
#include <stdio.h>
#include <string.h>

#include <gdk-pixbuf/gdk-pixbuf.h>

static int complain(const char *what, const char *file, const char *why)
{
    fprintf(stderr, "pixbuf_check: %s %s: %s\n", what, file, why);
    return 1;
}

static GdkPixbuf *open_whole(const char *file)
{
    GError *err = NULL;
    GdkPixbuf *pb = gdk_pixbuf_new_from_file(file, &err);
    if (!pb) {
        complain("cannot open", file, err->message);
        g_error_free(err);
    }
    return pb;
}

/* The file through a GdkPixbufLoader, `piece` bytes a write. */
static GdkPixbuf *open_pieces(const char *file, gsize piece)
{
    gchar *data;
    gsize len;
    GError *err = NULL;
    if (!g_file_get_contents(file, &data, &len, &err)) {
        complain("cannot read", file, err->message);
        g_error_free(err);
        return NULL;
    }
    GdkPixbufLoader *ld = gdk_pixbuf_loader_new();
    gboolean ok = TRUE;
    for (gsize at = 0; ok && at < len; at += piece)
        ok = gdk_pixbuf_loader_write(ld, (const guchar *)data + at, MIN(piece, len - at), &err);
    if (ok)
        ok = gdk_pixbuf_loader_close(ld, &err);
    else
        gdk_pixbuf_loader_close(ld, NULL);
    GdkPixbuf *pb = NULL;
    if (ok) {
        pb = gdk_pixbuf_loader_get_pixbuf(ld);
        if (pb)
            g_object_ref(pb);
        else
            complain("loader gave no image for", file, "");
    } else {
        complain("loader cannot open", file, err->message);
        g_error_free(err);
    }
    g_object_unref(ld);
    g_free(data);
    return pb;
}

/* 0 when a and b hold the same image; else a line on stderr and 1. */
static int compare(GdkPixbuf *a, GdkPixbuf *b, const char *what)
{
    const int w = gdk_pixbuf_get_width(a), h = gdk_pixbuf_get_height(a);
    const int na = gdk_pixbuf_get_n_channels(a), nb = gdk_pixbuf_get_n_channels(b);
    if (w != gdk_pixbuf_get_width(b) || h != gdk_pixbuf_get_height(b) ||
        gdk_pixbuf_get_has_alpha(a) != gdk_pixbuf_get_has_alpha(b) || na != nb ||
        gdk_pixbuf_get_bits_per_sample(a) != 8 || gdk_pixbuf_get_bits_per_sample(b) != 8) {
        fprintf(stderr, "pixbuf_check: %s: %dx%d, %d channels against %dx%d, %d channels\n", what, w,
                h, na, gdk_pixbuf_get_width(b), gdk_pixbuf_get_height(b), nb);
        return 1;
    }
    const gchar *icc_a = gdk_pixbuf_get_option(a, "icc-profile");
    const gchar *icc_b = gdk_pixbuf_get_option(b, "icc-profile");
    if (icc_b && g_strcmp0(icc_a, icc_b) != 0) {
        fprintf(stderr, "pixbuf_check: %s: icc-profile %s against %s\n", what,
                icc_a ? "present" : "absent", icc_b ? "present" : "absent");
        return 1;
    }
    const guchar *pa = gdk_pixbuf_read_pixels(a), *pb = gdk_pixbuf_read_pixels(b);
    const int sa = gdk_pixbuf_get_rowstride(a), sb = gdk_pixbuf_get_rowstride(b);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w * na; x++)
            if (pa[(size_t)y * sa + x] != pb[(size_t)y * sb + x]) {
                fprintf(stderr, "pixbuf_check: %s: pixel %d,%d sample %d is %d, not %d\n", what,
                        x / na, y, x % na, pa[(size_t)y * sa + x], pb[(size_t)y * sb + x]);
                return 1;
            }
    return 0;
}

static int check_same(const char *file, const char *ref)
{
    GdkPixbuf *whole = open_whole(file), *pieces = open_pieces(file, 7), *want = open_whole(ref);
    int bad = !whole || !pieces || !want;
    if (!bad) {
        char what[512];
        snprintf(what, sizeof what, "%s read whole, against %s", file, ref);
        bad |= compare(whole, want, what);
        snprintf(what, sizeof what, "%s read 7 bytes a write, against %s", file, ref);
        bad |= compare(pieces, want, what);
    }
    if (whole)
        g_object_unref(whole);
    if (pieces)
        g_object_unref(pieces);
    if (want)
        g_object_unref(want);
    return bad;
}

static int print_row(const char *file)
{
    GdkPixbuf *pb = open_whole(file);
    if (!pb)
        return 1;
    const int n = gdk_pixbuf_get_n_channels(pb);
    const guchar *p = gdk_pixbuf_read_pixels(pb);
    printf("%d %d %d\n", gdk_pixbuf_get_width(pb), gdk_pixbuf_get_height(pb),
           gdk_pixbuf_get_has_alpha(pb));
    for (int x = 0; x < gdk_pixbuf_get_width(pb); x++) {
        for (int c = 0; c < n; c++)
            printf(c ? " %d" : "%d", p[x * n + c]);
        printf("\n");
    }
    g_object_unref(pb);
    return 0;
}

static int check_error(const char *file)
{
    GError *err = NULL;
    GdkPixbuf *pb = gdk_pixbuf_new_from_file(file, &err);
    if (pb) {
        g_object_unref(pb);
        return complain("opened", file, "it should have failed");
    }
    int bad = err->domain != GDK_PIXBUF_ERROR || !strstr(err->message, "MMP");
    if (bad)
        complain("failed to open", file, err->message);
    else
        printf("%s\n", err->message);
    g_error_free(err);
    return bad;
}

static int print_icc(const char *file)
{
    GdkPixbuf *pb = open_whole(file);
    if (!pb)
        return 1;
    const gchar *b64 = gdk_pixbuf_get_option(pb, "icc-profile");
    gsize len = 0;
    if (b64)
        g_free(g_base64_decode(b64, &len));
    printf("%lu\n", (unsigned long)len);
    g_object_unref(pb);
    return 0;
}

static int print_info(const char *file)
{
    GdkPixbufFormat *f = gdk_pixbuf_get_file_info(file, NULL, NULL);
    if (!f)
        return complain("no format for", file, "gdk_pixbuf_get_file_info");
    gchar *name = gdk_pixbuf_format_get_name(f);
    gchar **mime = gdk_pixbuf_format_get_mime_types(f);
    printf("%s %s\n", name, mime[0] ? mime[0] : "");
    g_free(name);
    g_strfreev(mime);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "same") == 0)
        return check_same(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "row") == 0)
        return print_row(argv[2]);
    if (argc == 3 && strcmp(argv[1], "error") == 0)
        return check_error(argv[2]);
    if (argc == 3 && strcmp(argv[1], "icc") == 0)
        return print_icc(argv[2]);
    if (argc == 3 && strcmp(argv[1], "info") == 0)
        return print_info(argv[2]);
    fprintf(stderr, "usage: pixbuf_check same X.mmp REF | row X | error X | icc X | info X\n");
    return 2;
}
