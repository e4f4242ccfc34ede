/*
 * The conformance streams of formats 1.0 to 1.4 (tests/conformance/, its
 * README.md, docs/format.md section 10): every stream of
 * tests/conformance/MANIFEST decodes, through the public API alone
 * (mmp/mmp.h), to the MD5 its line gives, at its sizes, channels and
 * maxval, with its ancillary chunks; the same bytes with the signature of
 * the draft 0.9 or of a later minor version 1.x decode to the same samples
 * (docs/format.md section 2); the region decode of each multi-tile stream
 * gives windows of the whole decode; every stream in the folder is listed;
 * every coding tool of HEAD (the transform residual, the deblocking
 * filter, the residual stage's mixing coder and its residual context, the
 * reversible colour transforms) is used by some stream. The MD5 is RFC
 * 1321's, written here (checked against the RFC's test suite), of the
 * samples in the MANIFEST's canonical form: each sample as two bytes,
 * big-endian.
 *
 * make check runs it from the repository root; MMP_CONFORMANCE names
 * another folder of streams.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "mmp/mmp.h"

/* ------------------------------------------------------------------ MD5 */

/* RFC 1321's MD5. */
typedef struct md5_ctx {
    uint32_t s[4];
    uint64_t len;     /* bytes so far */
    uint8_t buf[64];  /* the block being filled: len % 64 bytes */
} md5_ctx;

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391};
static const uint8_t md5_r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                  5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

static void md5_init(md5_ctx *c)
{
    c->s[0] = 0x67452301;
    c->s[1] = 0xefcdab89;
    c->s[2] = 0x98badcfe;
    c->s[3] = 0x10325476;
    c->len = 0;
}

static void md5_block(md5_ctx *c, const uint8_t *p)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    uint32_t a = c->s[0], b = c->s[1], cc = c->s[2], d = c->s[3];
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g;
        if (i < 16) {
            f = (b & cc) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (d & b) | (~d & cc);
            g = (5 * i + 1) % 16;
        } else if (i < 48) {
            f = b ^ cc ^ d;
            g = (3 * i + 5) % 16;
        } else {
            f = cc ^ (b | ~d);
            g = (7 * i) % 16;
        }
        const uint32_t t = d;
        d = cc;
        cc = b;
        const uint32_t x = a + f + md5_k[i] + m[g];
        b = b + (x << md5_r[i] | x >> (32 - md5_r[i]));
        a = t;
    }
    c->s[0] += a;
    c->s[1] += b;
    c->s[2] += cc;
    c->s[3] += d;
}

static void md5_update(md5_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0) {
        const size_t at = (size_t)(c->len % 64), take = n < 64 - at ? n : 64 - at;
        memcpy(c->buf + at, p, take);
        c->len += take;
        p += take;
        n -= take;
        if (c->len % 64 == 0)
            md5_block(c, c->buf);
    }
}

/* The digest as 32 lower-case hexadecimal digits and a NUL. */
static void md5_final(md5_ctx *c, char hex[33])
{
    const uint64_t bits = c->len * 8;
    static const uint8_t pad[64] = {0x80};
    md5_update(c, pad, c->len % 64 < 56 ? 56 - c->len % 64 : 120 - c->len % 64);
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(bits >> (8 * i));
    md5_update(c, b, 8);
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned)(c->s[i / 4] >> (8 * (i % 4))) & 0xff);
}

/* The MD5 of an image's samples in the MANIFEST's form. */
static void samples_md5(const mmp_image *img, char hex[33])
{
    md5_ctx c;
    md5_init(&c);
    const size_t n = (size_t)img->width * img->height * (size_t)mmp_image_channels(img);
    uint8_t buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        buf[k++] = (uint8_t)(img->pix[i] >> 8);
        buf[k++] = (uint8_t)img->pix[i];
        if (k == sizeof buf) {
            md5_update(&c, buf, k);
            k = 0;
        }
    }
    md5_update(&c, buf, k);
    md5_final(&c, hex);
}

/* RFC 1321's test suite (appendix A.5), and a message of several blocks
 * fed in uneven pieces. */
static void test_md5(void **state)
{
    (void)state;
    static const char *const v[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"1234567890123456789012345678901234567890"
         "1234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        md5_ctx c;
        char hex[33];
        md5_init(&c);
        md5_update(&c, v[i][0], strlen(v[i][0]));
        md5_final(&c, hex);
        assert_string_equal(hex, v[i][1]);
        /* Byte by byte. */
        md5_init(&c);
        for (size_t j = 0; v[i][0][j]; j++)
            md5_update(&c, v[i][0] + j, 1);
        md5_final(&c, hex);
        assert_string_equal(hex, v[i][1]);
    }
    /* 1000 bytes 'a' in pieces of 1 to 97: md5sum's answer. */
    md5_ctx c;
    char hex[33], a[100];
    memset(a, 'a', sizeof a);
    md5_init(&c);
    for (size_t done = 0, step = 1; done < 1000; step = step % 97 + 1) {
        const size_t n = step < 1000 - done ? step : 1000 - done;
        md5_update(&c, a, n);
        done += n;
    }
    md5_final(&c, hex);
    assert_string_equal(hex, "cabe45dcc9ae5b66ba86600cca6b8ba8");
}

/* ------------------------------------------------------------------ the manifest */

typedef struct stream {
    char name[64];
    char md5[33];
    int width, height, channels, maxval;
    char chunks[256];
} stream;

static char dir[1024];

/* The folder of the streams: $MMP_CONFORMANCE, else tests/conformance
 * (make check runs from the repository root), ../tests/conformance or
 * ../../tests/conformance, the first that holds a MANIFEST. */
static const char *conformance_dir(void)
{
    const char *env = getenv("MMP_CONFORMANCE");
    const char *cands[] = {env, "tests/conformance", "../tests/conformance",
                           "../../tests/conformance"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        struct stat sb;
        char path[1100];
        if (!cands[i] || !*cands[i])
            continue;
        snprintf(path, sizeof path, "%s/MANIFEST", cands[i]);
        if (stat(path, &sb) == 0) {
            snprintf(dir, sizeof dir, "%s", cands[i]);
            return dir;
        }
    }
    fail_msg("tests/conformance/MANIFEST not found: set MMP_CONFORMANCE or run from the "
             "repository root");
    return NULL;
}

/* The MANIFEST's streams into *list (free() it); returns how many. */
static int read_manifest(stream **list)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/MANIFEST", conformance_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0, cap = 0;
    *list = NULL;
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            *list = realloc(*list, sizeof **list * (size_t)cap);
            assert_non_null(*list);
        }
        stream *s = &(*list)[n];
        if (sscanf(line, "%63s %32s %d %d %d %d %255s", s->name, s->md5, &s->width, &s->height,
                   &s->channels, &s->maxval, s->chunks) != 7 ||
            strlen(s->md5) != 32)
            fail_msg("MANIFEST line %d is not NAME MD5 WIDTH HEIGHT CHANNELS MAXVAL CHUNKS "
                     "COVERS: %s",
                     lineno, line);
        for (int i = 0; i < n; i++)
            if (!strcmp((*list)[i].name, s->name))
                fail_msg("MANIFEST line %d: %s listed twice", lineno, s->name);
        n++;
    }
    fclose(f);
    return n;
}

static uint8_t *read_stream(const char *name, size_t *len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open it", path);
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

/* Whether img is what the stream's line says; the reason in why. */
static int check_image(const stream *s, const mmp_image *img, char *why, size_t whylen)
{
    if (img->width != s->width || img->height != s->height ||
        mmp_image_channels(img) != s->channels || img->maxval != s->maxval) {
        snprintf(why, whylen, "%d x %d, %d channels, maxval %d (MANIFEST: %d x %d, %d, %d)",
                 img->width, img->height, mmp_image_channels(img), img->maxval, s->width,
                 s->height, s->channels, s->maxval);
        return 0;
    }
    char hex[33];
    samples_md5(img, hex);
    if (strcmp(hex, s->md5) != 0) {
        snprintf(why, whylen, "MD5 %s (MANIFEST: %s)", hex, s->md5);
        return 0;
    }
    return 1;
}

/* OMP_NUM_THREADS as the test found it. */
static char saved_threads[64];
static int had_threads;

static void save_threads(void)
{
    const char *v = getenv("OMP_NUM_THREADS");
    had_threads = v != NULL;
    snprintf(saved_threads, sizeof saved_threads, "%s", v ? v : "");
}

static void restore_threads(void)
{
    if (had_threads)
        setenv("OMP_NUM_THREADS", saved_threads, 1);
    else
        unsetenv("OMP_NUM_THREADS");
}

/* Every stream to its MD5, with its header's version and its chunks. All
 * streams are decoded; those that fail are listed before the test fails. */
static void test_streams(void **state)
{
    (void)state;
    stream *list;
    const int n = read_manifest(&list);
    assert_true(n >= 1);
    int bad = 0;
    size_t total = 0;
    save_threads();
    for (int i = 0; i < n; i++) {
        const stream *s = &list[i];
        size_t len;
        uint8_t *buf = read_stream(s->name, &len);
        total += len;
        mmp_file_info fi;
        char err[256] = "", why[256] = "";
        int ok = mmp_probe(buf, len, &fi, err, sizeof err) == MMP_OK;
        if (!ok)
            snprintf(why, sizeof why, "mmp_probe: %.200s", err);
        else if (fi.version != 1 || fi.version_minor > 4) {
            snprintf(why, sizeof why, "format version %d.%d, not 1.0 to 1.4", fi.version,
                     fi.version_minor);
            ok = 0;
        }
        /* The ancillary chunks, by type and in order. */
        if (ok) {
            mmp_chunk ch[32];
            const int k = mmp_chunks(buf, len, ch, 32, err, sizeof err);
            char types[32 * 5 + 2] = "-";
            for (int j = 0; j < k && j < 32; j++) {
                memcpy(types + 5 * j, ch[j].type, 4);
                types[5 * j + 4] = j + 1 < k && j + 1 < 32 ? ',' : '\0';
            }
            if (strcmp(types, s->chunks) != 0) {
                snprintf(why, sizeof why, "chunks %.100s (MANIFEST: %.100s)", types, s->chunks);
                ok = 0;
            }
        }
        /* On one thread (a tile at a time, each scale of the dictionary
         * updated when a leaf reads it) and on three (tiles at once, or
         * crews updating every scale at each step). */
        for (int t = 0; t < 2 && ok; t++) {
            assert_int_equal(setenv("OMP_NUM_THREADS", t ? "3" : "1", 1), 0);
            mmp_image img;
            memset(&img, 0, sizeof img);
            if (mmp_decode(buf, len, &img, err, sizeof err) != MMP_OK) {
                snprintf(why, sizeof why, "mmp_decode: %.200s", err);
                ok = 0;
            }
            if (ok && !check_image(s, &img, why, sizeof why)) {
                ok = 0;
                snprintf(why + strlen(why), sizeof why - strlen(why), " on %d thread%s",
                         t ? 3 : 1, t ? "s" : "");
            }
            mmp_image_free(&img);
        }
        if (!ok) {
            print_error("%s: %s\n", s->name, why);
            bad++;
        }
        free(buf);
    }
    restore_threads();
    print_message("%d streams, %zu bytes: %d decoded to their MD5\n", n, total, n - bad);
    free(list);
    if (bad)
        fail_msg("%d of %d conformance streams do not decode to their MD5", bad, n);
    /* The set stays small: CI decodes it in every build. */
    assert_true(total < 1024 * 1024);
}

/* Every coding tool of HEAD is used by some stream, as mmp_probe reports it. */
static void test_every_tool(void **state)
{
    (void)state;
    stream *list;
    const int n = read_manifest(&list);
    int used[5] = {0};
    for (int i = 0; i < n; i++) {
        size_t len;
        uint8_t *buf = read_stream(list[i].name, &len);
        mmp_file_info fi;
        char err[256] = "";
        if (mmp_probe(buf, len, &fi, err, sizeof err) == MMP_OK) {
            used[0] += fi.dct;
            used[1] += fi.deblock;
            used[2] += fi.residual_mix;
            used[3] += fi.residual_context;
            /* A file's transform from MMP_TRANSFORM_RCT on is one of the
             * reversible colour transforms (HEAD tools bit 4). */
            used[4] += fi.transform >= MMP_TRANSFORM_RCT;
        }
        free(buf);
    }
    free(list);
    static const char *const name[5] = {"the transform residual (dct)", "the deblocking filter",
                                        "the residual stage's mixing coder",
                                        "the residual context",
                                        "the reversible colour transforms"};
    int missing = 0;
    for (int t = 0; t < 5; t++) {
        print_message("%s: %d streams\n", name[t], used[t]);
        if (!used[t]) {
            print_error("no stream uses %s\n", name[t]);
            missing++;
        }
    }
    if (missing)
        fail_msg("%d coding tools without a stream", missing);
}

/* The same bytes as a file of the draft 0.9 and of later minor versions
 * (which add nothing these streams use) decode to the same samples. */
static void test_other_versions(void **state)
{
    (void)state;
    stream *list;
    const int n = read_manifest(&list);
    static const uint8_t versions[][2] = {{0, 9}, {1, 1}, {1, 255}};
    int bad = 0;
    for (int i = 0; i < n; i++) {
        size_t len;
        uint8_t *buf = read_stream(list[i].name, &len);
        assert_true(len > 6);
        for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
            buf[4] = versions[v][0];
            buf[5] = versions[v][1];
            mmp_image img;
            memset(&img, 0, sizeof img);
            char err[256] = "", why[256] = "";
            int ok = mmp_decode(buf, len, &img, err, sizeof err) == MMP_OK;
            if (!ok)
                snprintf(why, sizeof why, "mmp_decode: %.200s", err);
            if (ok && !check_image(&list[i], &img, why, sizeof why))
                ok = 0;
            if (!ok) {
                print_error("%s as version %d.%d: %s\n", list[i].name, versions[v][0],
                            versions[v][1], why);
                bad++;
            }
            mmp_image_free(&img);
        }
        /* Another major version is refused. */
        buf[4] = 2;
        buf[5] = 0;
        mmp_image img;
        char err[256] = "";
        assert_int_equal(mmp_decode(buf, len, &img, err, sizeof err), MMP_EUNSUPPORTED);
        free(buf);
    }
    free(list);
    if (bad)
        fail_msg("%d decodes differ from the MANIFEST", bad);
}

/* Whether win holds the samples of full's window at (x, y) of win's size. */
static int same_window(const mmp_image *full, const mmp_image *win, int x, int y)
{
    const int ch = mmp_image_channels(full);
    if (mmp_image_channels(win) != ch || win->maxval != full->maxval)
        return 0;
    for (int r = 0; r < win->height; r++)
        if (memcmp(win->pix + (size_t)r * win->width * ch,
                   full->pix + ((size_t)(y + r) * full->width + x) * ch,
                   sizeof(uint16_t) * (size_t)win->width * ch) != 0)
            return 0;
    return 1;
}

/* mmp_decode_region of every multi-tile stream: each tile, windows across
 * the tiles' edges, in the edge tiles, single pixels at the corners, the
 * whole image: each the window of the whole decode. */
static void test_region_decode(void **state)
{
    (void)state;
    stream *list;
    const int n = read_manifest(&list);
    int tiled = 0;
    for (int i = 0; i < n; i++) {
        size_t len;
        uint8_t *buf = read_stream(list[i].name, &len);
        mmp_file_info fi;
        char err[256] = "";
        assert_int_equal(mmp_probe(buf, len, &fi, err, sizeof err), MMP_OK);
        if (fi.tiles < 2) {
            free(buf);
            continue;
        }
        tiled++;
        mmp_image full;
        assert_int_equal(mmp_decode(buf, len, &full, err, sizeof err), MMP_OK);
        const int W = fi.width, H = fi.height, tw = fi.tile_width, th = fi.tile_height;
        int win[64][4], k = 0;
        for (int y = 0; y < H; y += th)
            for (int x = 0; x < W; x += tw) {
                win[k][0] = x;
                win[k][1] = y;
                win[k][2] = x + tw <= W ? tw : W - x;
                win[k][3] = y + th <= H ? th : H - y;
                k++;
            }
        const int more[][4] = {
            {tw - 5, th - 7, 13, 17},                 /* across a corner of four tiles */
            {tw - 1, 0, 2, H},                        /* a column across a vertical edge */
            {0, th - 1, W, 2},                        /* a row across a horizontal edge */
            {W - 3, H - 2, 3, 2},                     /* in the last tile */
            {0, 0, 1, 1},         {W - 1, H - 1, 1, 1}, {W - 1, 0, 1, 1}, {0, H - 1, 1, 1},
            {1, 1, W - 2, H - 2}, {0, 0, W, H},
        };
        for (size_t j = 0; j < sizeof more / sizeof more[0] && k < 64; j++)
            if (more[j][0] + more[j][2] <= W && more[j][1] + more[j][3] <= H)
                memcpy(win[k++], more[j], sizeof more[j]);
        for (int j = 0; j < k; j++) {
            mmp_image r;
            if (mmp_decode_region(buf, len, win[j][0], win[j][1], win[j][2], win[j][3], 0, &r,
                                  err, sizeof err) != MMP_OK)
                fail_msg("%s: region %d,%d %dx%d: %s", list[i].name, win[j][0], win[j][1],
                         win[j][2], win[j][3], err);
            assert_int_equal(r.width, win[j][2]);
            assert_int_equal(r.height, win[j][3]);
            if (!same_window(&full, &r, win[j][0], win[j][1]))
                fail_msg("%s: region %d,%d %dx%d differs from the whole decode's window",
                         list[i].name, win[j][0], win[j][1], win[j][2], win[j][3]);
            mmp_image_free(&r);
        }
        mmp_image_free(&full);
        free(buf);
    }
    free(list);
    print_message("%d multi-tile streams decoded by regions\n", tiled);
    assert_true(tiled >= 2);
}

/* Every .mmp file of the folder is a listed stream (and every listed one
 * is there: test_streams opens each). */
static void test_all_listed(void **state)
{
    (void)state;
    stream *list;
    const int n = read_manifest(&list);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        const size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 4, ".mmp") != 0)
            continue;
        files++;
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = !strcmp(list[i].name, e->d_name);
        if (!found)
            fail_msg("%s/%s is not in the MANIFEST", dir, e->d_name);
    }
    closedir(d);
    assert_int_equal(files, n);
    free(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md5),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_every_tool),
        cmocka_unit_test(test_other_versions),
        cmocka_unit_test(test_region_decode),
        cmocka_unit_test(test_all_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
