/*
 * Helpers shared by the libFuzzer targets of tests/fuzz/ (static functions:
 * each target is one translation unit).
 *
 *  - check_error_text: a failure is a negative MMP_E* code with a one-line
 *    reason;
 *  - fuzz_fix_container: mend the chunks' lengths (the last tile takes what
 *    follows it), the tile index and every CRC, so that mutated files get
 *    past the container checks;
 *  - fuzz_decode_checked: mmp_decode with the container check's verdict (the
 *    probe's, the chunk list's, the header parse's) and the image's
 *    consistency checked, and a window of a decoded file decoded on its own
 *    (mmp_decode_region) against the whole; run past the container only for
 *    files that announce a small enough image and dictionary;
 *  - fuzz_make_image and fuzz_settings: a tiny image and encoder settings
 *    built from the input bytes (the layout is in fuzz_roundtrip.c);
 *  - fuzz_fast_image: the fast targets' sizes and channels, bounded by the
 *    work of the search that the input may ask for (byte 1 / 32, the speed
 *    from byte 3 / 8; layout changes in fuzz_roundtrip_fast.c).
 */
#ifndef MMP_TESTS_FUZZ_UTIL_H
#define MMP_TESTS_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/container.h"
#include "common/error.h"
#include "mmp/mmp.h"

/* One thread for the library's parallel work whose thread count is not
 * set: the decoder's (which reads OMP_NUM_THREADS at each decode) and the
 * encoder's OpenMP loops (the dictionary updates of the seq engine): the
 * fuzzer runs on one core, and idle workers spinning on another took a
 * quarter of the decoder's time. Engines given a thread count (fuzz_diff's
 * omp) still get it. Call from LLVMFuzzerInitialize. */
static inline void fuzz_one_thread(void)
{
    setenv("OMP_NUM_THREADS", "1", 1);
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

static inline void check_error_text(int rc, const char *err)
{
    if (rc >= 0 || rc < MMP_EENGINE)
        abort();
    if (err[0] == '\0' || strchr(err, '\n'))
        abort();
}

static inline uint64_t fuzz_get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void fuzz_put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The .mmp layout (docs/format.md section 2; tests/util.h names the same
 * offsets MF_*): the signature, HEAD (the first chunk, so at a fixed
 * place), then the other chunks. */
#define FUZZ_HEAD_DATA (MMP_SIGNATURE_SIZE + 8)
#define FUZZ_HEAD_CRC (FUZZ_HEAD_DATA + MMP_HEAD_SIZE)
#define FUZZ_CHUNK2 (FUZZ_HEAD_CRC + 4)
/* HEAD's fields, offsets in its data. */
enum {
    FUZZ_H_PLANES = 0, FUZZ_H_LOG2_BLOCK = 1, FUZZ_H_LOG2_PMIN = 2, FUZZ_H_RESIDUAL = 3,
    FUZZ_H_WIDTH = 4, FUZZ_H_HEIGHT = 8, FUZZ_H_MAXVAL = 12, FUZZ_H_MAX_ERROR = 14,
    FUZZ_H_DICT_CAP = 16, FUZZ_H_ORDER = 18, FUZZ_H_TRANSFORM = 19, FUZZ_H_CHROMA = 20,
    FUZZ_H_ALPHA = 21, FUZZ_H_TOOLS = 22, FUZZ_H_REDUND_Q4 = 26, FUZZ_H_LAMBDA_Q8 = 30,
    FUZZ_H_TILE_W16 = 34, FUZZ_H_TILE_H16 = 36
};

/* The tiles of HEAD's grid from its raw fields (valid or not; 0 when a
 * tile side is 0 or HEAD is not there). */
static inline uint64_t fuzz_grid_tiles(const uint8_t *buf, size_t len)
{
    if (len < FUZZ_HEAD_CRC)
        return 0;
    const uint8_t *d = buf + FUZZ_HEAD_DATA;
    const uint64_t w = fuzz_get_le(d + FUZZ_H_WIDTH, 4), h = fuzz_get_le(d + FUZZ_H_HEIGHT, 4);
    const uint64_t tw = 16 * fuzz_get_le(d + FUZZ_H_TILE_W16, 2);
    const uint64_t th = 16 * fuzz_get_le(d + FUZZ_H_TILE_H16, 2);
    return tw && th ? (w + tw - 1) / tw * ((h + th - 1) / th) : 0;
}

/*
 * Make buf[0..len) a container whose chunks fit, in place: walking the
 * chunks after the signature, a chunk whose length runs past the end ends
 * at it, and so does the last tile of HEAD's grid (the bytes after it, if
 * any, become its data); the tile index (the first TIDX chunk) lists the
 * TILE chunks that follow it, as many as it has room for; every chunk's
 * CRC is recomputed. The types, HEAD's fields and the index's count are
 * left as they are. A file shorter than the signature and a chunk header
 * is left alone.
 */
static inline void fuzz_fix_container(uint8_t *buf, size_t len)
{
    if (len < MMP_SIGNATURE_SIZE + MMP_CHUNK_OVERHEAD)
        return;
    const uint64_t ntiles = fuzz_grid_tiles(buf, len);
    uint64_t tiles = 0;
    size_t tidx = 0, end = MMP_SIGNATURE_SIZE;
    for (size_t at = MMP_SIGNATURE_SIZE; len - at >= MMP_CHUNK_OVERHEAD;) {
        uint64_t clen = fuzz_get_le(buf + at, 4);
        const int is_tile = memcmp(buf + at + 4, "TILE", 4) == 0;
        if (!tidx && memcmp(buf + at + 4, "TIDX", 4) == 0)
            tidx = at;
        if (clen > len - at - MMP_CHUNK_OVERHEAD || (is_tile && tiles + 1 == ntiles)) {
            clen = len - at - MMP_CHUNK_OVERHEAD;
            if (clen > UINT32_MAX)
                break;
            fuzz_put_le(buf + at, clen, 4);
        }
        tiles += is_tile;
        at += MMP_CHUNK_OVERHEAD + (size_t)clen;
        end = at;
    }
    if (tidx) {
        const uint64_t tlen = fuzz_get_le(buf + tidx, 4);
        const uint64_t room = tlen >= 4 ? (tlen - 4) / 8 : 0;
        uint64_t k = 0;
        for (size_t at = tidx + MMP_CHUNK_OVERHEAD + (size_t)tlen; k < room && at < end;
             at += MMP_CHUNK_OVERHEAD + (size_t)fuzz_get_le(buf + at, 4))
            if (memcmp(buf + at + 4, "TILE", 4) == 0)
                fuzz_put_le(buf + tidx + 12 + 8 * (size_t)k++, at, 8);
    }
    for (size_t at = MMP_SIGNATURE_SIZE; at < end;) {
        const size_t clen = (size_t)fuzz_get_le(buf + at, 4);
        fuzz_put_le(buf + at + 8 + clen, mmp_chunk_crc(buf + at + 4, buf + at + 8, clen), 4);
        at += MMP_CHUNK_OVERHEAD + clen;
    }
}

static inline uint64_t fuzz_padded_pixels(const mmp_header *h)
{
    return (uint64_t)((h->width + 15) / 16 * 16) * ((h->height + 15) / 16 * 16);
}

/* A hash of the input (FNV-1a), for choices that must be the same on every
 * replay. */
static inline uint32_t fuzz_hash(const uint8_t *buf, size_t len)
{
    uint32_t x = 2166136261u;
    for (size_t i = 0; i < len; i++)
        x = (x ^ buf[i]) * 16777619u;
    return x;
}

/* The container check's verdict as the library's other readers give it:
 * mmp_header_parse, mmp_probe and mmp_chunks agree with mmp_container_parse
 * (code, message, fields). */
static inline void fuzz_check_readers(const uint8_t *buf, size_t len, int prc, const char *err,
                                      const mmp_container *c)
{
    mmp_header h;
    char herr[512] = "";
    const int hrc = mmp_header_parse(buf, len, &h, herr, sizeof herr);
    if (hrc != prc || (hrc && strcmp(herr, err) != 0) ||
        (!hrc && memcmp(&h, &c->h, sizeof h) != 0))
        abort();
    mmp_file_info info;
    char perr[512] = "";
    const int irc = mmp_probe(buf, len, &info, perr, sizeof perr);
    if (irc != prc || (irc && strcmp(perr, err) != 0))
        abort();
    mmp_chunk list[8];
    char cerr[512] = "";
    const int nch = mmp_chunks(buf, len, list, 8, cerr, sizeof cerr);
    if (prc ? nch != prc || strcmp(cerr, err) != 0 : nch != (int)c->nextra)
        abort();
    if (prc)
        return;
    uint64_t payload = 0;
    for (uint32_t i = 0; i < c->ntiles; i++)
        payload += c->tiles[i].len;
    if (info.width != (int)c->h.width || info.height != (int)c->h.height ||
        info.maxval != (int)c->h.maxval || info.order != (int)c->h.order ||
        info.planes != (int)c->h.planes || info.version != buf[4] ||
        info.version_minor != buf[5] || info.payload_len != payload ||
        info.crc != (uint32_t)fuzz_get_le(buf + FUZZ_HEAD_CRC, 4) ||
        info.tile_width != (int)c->h.tile_w || info.tile_height != (int)c->h.tile_h ||
        info.tiles != (int)c->ntiles || info.chunks != (int)c->nextra)
        abort();
    for (int i = 0; i < nch && i < 8; i++)
        if (memcmp(list[i].type, c->extra[i].type, 5) != 0 ||
            list[i].data != buf + c->extra[i].offset || list[i].len != c->extra[i].len)
            abort();
}

/* A window of the decoded image img (from buf[0..len)) decoded on its own:
 * it must succeed and equal that part of img. The window is drawn from
 * the input's hash. */
static inline void fuzz_check_region(const uint8_t *buf, size_t len, const mmp_image *img)
{
    uint32_t x = fuzz_hash(buf, len);
    const int W = img->width, H = img->height, ch = img->channels;
    const int rx = (int)(x % (uint32_t)W), ry = (int)((x >> 8) % (uint32_t)H);
    const int rw = 1 + (int)((x >> 16) % (uint32_t)(W - rx));
    const int rh = 1 + (int)((x * 2654435761u >> 8) % (uint32_t)(H - ry));
    mmp_image part;
    char err[512] = "";
    if (mmp_decode_region(buf, len, rx, ry, rw, rh, 0, &part, err, sizeof err) ||
        part.width != rw || part.height != rh || part.channels != ch ||
        part.maxval != img->maxval)
        abort(); /* a window of a file that decodes must decode */
    for (int y = 0; y < rh; y++)
        if (memcmp(part.pix + (size_t)y * rw * ch,
                   img->pix + ((size_t)(ry + y) * W + rx) * ch, sizeof(uint16_t) * rw * ch))
            abort(); /* the window differs from the whole decode */
    mmp_image_free(&part);
}

/*
 * Decode buf[0..len) with mmp_decode_limited and a budget of `budget`
 * pixels, and check the outcome: 0 with an image consistent with the header
 * (every sample <= maxval), or a negative MMP_E* code with a one-line
 * reason, the container check's code when the container is bad. A valid
 * file that announces more than `budget` pixels must be refused with
 * MMP_ELIMIT and no image: the budget bounds what any input can make the
 * decoder allocate (docs/format.md, section 2: at most about 16 bytes a
 * pixel for planes and output, and the dictionary, at most 69 MB at a
 * dict_cap of 16384), the library checking it before it allocates anything.
 * Files within the budget whose header announces more than `budget` padded
 * pixels (thin images: up to 16 times their pixels) or a dict_cap above
 * max_dict_cap only go through the container check, for time. A file that
 * decodes gets a window decoded on its own (every file of several tiles,
 * one in eight of one tile). Returns 1 when the decoder ran past the
 * container, else 0.
 */
static inline int fuzz_decode_checked(const uint8_t *buf, size_t len, uint64_t budget,
                                      uint32_t max_dict_cap)
{
    char err[512];
    mmp_container c;
    err[0] = '\0';
    const int prc = mmp_container_parse(buf, len, &c, err, sizeof err);
    if (prc)
        check_error_text(prc, err);
    fuzz_check_readers(buf, len, prc, err, &c);
    const mmp_header h = c.h;
    const uint32_t ntiles = c.ntiles;
    mmp_container_free(&c);
    const int over = !prc && (uint64_t)h.width * h.height > budget;
    if (!prc && !over && (fuzz_padded_pixels(&h) > budget || h.dict_cap > max_dict_cap))
        return 0;
    mmp_image img;
    err[0] = '\0';
    int rc = mmp_decode_limited(buf, len, budget, &img, err, sizeof err);
    if (over) {
        if (rc != MMP_ELIMIT || img.pix)
            abort(); /* over the budget: refused before anything is allocated */
        check_error_text(rc, err);
        return 0;
    }
    if (rc) {
        check_error_text(rc, err);
        if (prc && rc != prc)
            abort(); /* the decoder must report what the container check found */
        if (img.pix)
            abort();
        return !prc;
    }
    if (prc || (uint32_t)img.width != h.width || (uint32_t)img.height != h.height ||
        (uint32_t)img.maxval != h.maxval || (uint32_t)img.channels != h.planes || !img.pix)
        abort();
    size_t n = (size_t)img.width * (size_t)img.height * (size_t)img.channels;
    for (size_t i = 0; i < n; i++)
        if (img.pix[i] > img.maxval)
            abort();
    if (ntiles > 1 || fuzz_hash(buf, len) % 8 == 0)
        fuzz_check_region(buf, len, &img);
    mmp_image_free(&img);
    return 1;
}

/* ------------------------------------------------ images from the input */

#define FUZZ_DATA_OFF 10

static inline unsigned byte_at(const uint8_t *d, size_t n, size_t i) { return i < n ? d[i] : 0; }

/* The k-th sample byte pair as a 16-bit value, wrapping over the data. */
static inline unsigned sample_at(const uint8_t *d, size_t n, size_t k, int wide)
{
    if (n <= FUZZ_DATA_OFF)
        return 0;
    size_t m = n - FUZZ_DATA_OFF;
    if (!wide)
        return d[FUZZ_DATA_OFF + k % m];
    return d[FUZZ_DATA_OFF + (2 * k) % m] | (unsigned)d[FUZZ_DATA_OFF + (2 * k + 1) % m] << 8;
}

/* The channels of the image (byte 6 / 8 % 4: 1 grey, 2 grey + alpha, 3 RGB,
 * 4 RGBA), so that seeds of grey images stay grey. */
static inline int fuzz_channels(const uint8_t *d, size_t n)
{
    return 1 + (int)(byte_at(d, n, 6) / 8 % 4);
}

/* The image's maxval (byte 2, and bytes 8 and 9; layout: fuzz_roundtrip.c). */
static inline int fuzz_maxval(const uint8_t *d, size_t n)
{
    unsigned mb = byte_at(d, n, 2);
    switch (mb % 4) {
    case 0: return 255;
    case 1: return 65535;
    case 2: return 1 + (int)(mb / 4);
    default: return 1 + (int)((byte_at(d, n, 8) | byte_at(d, n, 9) << 8) % 65535);
    }
}

/* A w x h image of ch channels from the input (layout: fuzz_roundtrip.c;
 * the caller derives the sizes from bytes 0 and 1 and the channels from
 * fuzz_channels): the samples of all channels, interleaved, drawn as one
 * sequence. */
static inline void fuzz_make_image(const uint8_t *d, size_t n, int w, int h, int ch,
                                   mmp_image *img)
{
    const int maxval = fuzz_maxval(d, n);
    if (mmp_image_alloc_channels(img, w * ch, h, 1, maxval))
        abort();
    int wide = maxval > 255;
    unsigned mode = byte_at(d, n, 6) % 4, step = byte_at(d, n, 7);
    uint32_t run = 0, runv = 0;
    size_t src = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t k = (size_t)y * w + x;
            uint32_t v;
            switch (mode) {
            case 0:
                v = sample_at(d, n, k, wide);
                break;
            case 1: {
                int64_t base = (int64_t)(x + 2 * y) * (step + 1) * (maxval > 255 ? 257 : 1);
                int delta = (int)(sample_at(d, n, k, 0) % 9) - 4;
                int64_t t = base + delta * (maxval / 64 + 1);
                v = (uint32_t)(t < 0 ? 0 : t % (maxval + 1));
                break;
            }
            case 2:
                if (run == 0) {
                    unsigned b = sample_at(d, n, src++, 0);
                    run = 1 + b % 16;
                    runv = sample_at(d, n, src++, wide);
                }
                run--;
                v = runv;
                break;
            default:
                v = (sample_at(d, n, k / 8, 0) >> (k % 8)) & 1 ? (uint32_t)maxval : 0;
                break;
            }
            img->pix[k] = (uint16_t)(v % ((uint32_t)maxval + 1));
        }
    /* The samples were drawn as a (w * ch) x h grey image: the same memory
     * read as w x h pixels of ch channels. */
    img->width = w;
    img->channels = ch;
}

/* The fast targets' speeds (byte 3 / 8): 4 in 13 of the 32 values, 3 in 8,
 * 2 in 6, 1 in 4 and 0, the exhaustive search, in 1 (byte 3 = 120..127);
 * the ends (0x00, 0xff), which mutations write most, give speed 4. Speed 0
 * costs five times speed 4 per block and, drawn for a quarter of the inputs,
 * took two thirds of fuzz_roundtrip_fast's time; it runs the same code as
 * the presets without their pruning, so drawing it rarely costs little
 * coverage. */
static const int fuzz_fast_speeds[32] = {4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 1, 1, 0,
                                         1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4};

/*
 * Encoder settings from bytes 3..6 of the input. full = 1 (fuzz_roundtrip):
 * lambda = b * b / 65 (0 to 1000), dict_cap 64, 65, 96, 128, 256 or 1024;
 * speed (byte 6): b % 4 = 0 speed 4, 1 speed 2, 2 speed 1, 3 speed 0 (the
 * bits of the sample mode too). full = 0 (the fast targets): lambda 0, 1,
 * 4, 10, 30, 100, 300 or 1000 (byte 3, b % 8), dict_cap 64, 65, 96 or 128
 * (byte 4, b % 4), speed fuzz_fast_speeds[byte 3 / 8] (0 to 4, apart from
 * the sample mode). Redundancy (byte 5): b < 128 derived from lambda, else
 * (b - 128) / 4; order (byte 6): b / 4 % 2 = 0 wavefront, 1 raster; colour
 * (byte 6): b / 32 % 2 = 0 YCbCr, 1 YCoCg-R (YCbCr above maxval 32767: the
 * encoder refuses YCoCg-R there), b / 64 % 2 = 0 4:2:0, 1 4:4:4;
 * restoration filter (byte 6): b / 128 = 0 on, 1 off; alpha (byte 5):
 * b % 2 = 0 exact, 1 MMP; the transform residual (byte 5): b / 2 % 2 = 0
 * allowed (the default), 1 not (the redundancy reads neither bit); lossless and near-lossless (byte 4): b / 8 % 4 =
 * 0 or 1 lossy, 2 lossless, 3 max error b / 32 % 8 (0 to 7), with the
 * residual stage after MMP when b / 4 % 2 = 1, else alone (bit 2: bits 3
 * and 4 choose the mode, bits 5 to 7 the bound). Engine seq, one thread.
 */
static inline void fuzz_settings(const uint8_t *d, size_t n, int full, mmp_settings *s)
{
    mmp_default_settings(s);
    unsigned lb = byte_at(d, n, 3), cb = byte_at(d, n, 4);
    if (full) {
        static const int caps[6] = {64, 65, 96, 128, 256, 1024};
        s->lambda = (double)(lb * lb) / 65.0;
        s->dict_cap = caps[cb % 6];
    } else {
        static const double lambdas[8] = {0, 1, 4, 10, 30, 100, 300, 1000};
        static const int caps[4] = {64, 65, 96, 128};
        s->lambda = lambdas[lb % 8];
        s->dict_cap = caps[cb % 4];
    }
    unsigned rb = byte_at(d, n, 5);
    s->redundancy = rb < 128 ? -1.0 : (double)(rb - 128) / 4.0;
    s->engine = "seq";
    s->threads = 1;
    s->order = byte_at(d, n, 6) / 4 % 2 ? MMP_ORDER_RASTER : MMP_ORDER_WAVEFRONT;
    s->transform = byte_at(d, n, 6) / 32 % 2 ? MMP_TRANSFORM_YCOCG_R : MMP_TRANSFORM_YCBCR;
    s->chroma = byte_at(d, n, 6) / 64 % 2 ? MMP_CHROMA_444 : MMP_CHROMA_420;
    s->alpha = rb % 2 ? MMP_ALPHA_MMP : MMP_ALPHA_EXACT;
    s->dct = rb / 2 % 2 ? 0 : 1;
    s->restoration = byte_at(d, n, 6) / 128 ? 0 : 1;
    if (full) {
        static const int speeds[4] = {4, 2, 1, 0};
        s->speed = speeds[byte_at(d, n, 6) % 4];
    } else {
        s->speed = fuzz_fast_speeds[lb / 8];
    }
    s->max_error = cb / 8 % 4 < 2 ? -1 : cb / 8 % 4 == 2 ? 0 : (int)(cb / 32 % 8);
    s->residual = cb / 4 % 2 ? MMP_RESIDUAL_AFTER_MMP : MMP_RESIDUAL_ALONE;
}

/* Settings that the image allows: YCoCg-R only up to maxval 32767; a
 * bound needs 4:4:4 and a transform that keeps it (the default's). */
static inline void fuzz_fit_settings_maxval(mmp_settings *s, int maxval)
{
    if (maxval > 32767)
        s->transform = MMP_TRANSFORM_YCBCR;
    if (s->max_error >= 0) {
        s->transform = MMP_TRANSFORM_AUTO;
        s->chroma = MMP_CHROMA_444;
    }
}

static inline void fuzz_fit_settings(mmp_settings *s, const mmp_image *img)
{
    fuzz_fit_settings_maxval(s, img->maxval);
}

/* ------------------------------------------------ the fast targets' sizes */

/*
 * The blocks that the search of a w x h image with ch channels visits under
 * settings s (fitted), as mmp/enc/encoder.c counts them (make_planes): 16 x 16
 * blocks of every plane coded by MMP, that is every plane but an exact
 * alpha plane, none when the residual stage codes the planes alone; chroma
 * planes at 4:2:0 are (w + 1) / 2 x (h + 1) / 2. An image smaller than a
 * block still costs a whole block: the search runs over the padded block.
 */
static inline int fuzz_search_blocks(int w, int h, int ch, const mmp_settings *s)
{
    if (s->max_error >= 0 && s->residual == MMP_RESIDUAL_ALONE)
        return 0;
    const int luma = ((w + 15) / 16) * ((h + 15) / 16);
    int blocks = luma;
    if (ch == 2 || ch == 4)
        blocks += s->alpha == MMP_ALPHA_MMP ? luma : 0;
    if (ch >= 3) {
        const int sub = s->chroma == MMP_CHROMA_420;
        const int cw = sub ? (w + 1) / 2 : w, chh = sub ? (h + 1) / 2 : h;
        blocks += 2 * (((cw + 15) / 16) * ((chh + 15) / 16));
    }
    return blocks;
}

/* The cost of a block's search at each speed (index), in quarters of a
 * block at speed 4, measured on 16 x 16 blocks of random, smooth and short
 * samples under ASan and UBSan: speed 0 costs about five times speed 4,
 * besides a fixed cost per input for the set-up and the decoding. The
 * weights only bound an input's work, they need not be exact. */
static const int fuzz_speed_weight[5] = {20, 10, 6, 5, 4};

/* The work that the fast targets' inputs may ask for, in quarters of a
 * block at speed 4 (byte 1 / 32: the bits that the height leaves free). The values that
 * mutations write most (0x00, 0xff) get the least; class 5 is the largest
 * and the only one that takes colour images whose planes' first blocks alone
 * exceed it (colour at speeds 0 and 1). */
static const int fuzz_fast_work[8] = {4, 4, 8, 12, 16, 24, 8, 4};
#define FUZZ_FAST_TOP_CLASS 5

/*
 * The image of the fast targets (fuzz_roundtrip_fast, fuzz_diff) for
 * settings s (fitted): w x h with ch channels.
 *
 * Channels: fuzz_channels (1 + byte 6 / 8 % 4); but a colour image (3 or 4
 * channels, so three planes or more) whose planes' first blocks alone
 * (fuzz_search_blocks of one pixel, times the speed's weight) exceed the
 * work of its class is made grey, 3 -> 1 and 4 -> 2 (alpha kept), except in
 * the largest class.
 * Sizes: width 1 + byte 0 % 48, height 1 + byte 1 % 32, the height lowered
 * to 1024 / width if needed (at most 48 x 21: six blocks, two of them in one
 * wavefront step); then, while the search's blocks (fuzz_search_blocks)
 * times the speed's weight exceed the class's work, the height is lowered
 * by 16 (a row of blocks) while it exceeds 16, then the width likewise.
 * Lowering by whole blocks keeps the partial blocks at the image's edges.
 * With the transform residual on, the weight is half again as large, but
 * in the largest class. An image whose first blocks alone exceed the work
 * (a grey block at speeds
 * 0 to 3 in the classes of work 4, colour at speeds 0 and 1 in the largest
 * class) keeps one block per plane. Every setting stays reachable, the slow
 * ones on the smallest images only: at most one searched block per plane
 * at speed 0, two at speed 1, four at speeds 2 and 3, six (48 x 21 grey,
 * two blocks in one wavefront step) at speed 4 in class 5; colour at
 * speeds 0 to 2 in class 5 only.
 */
#define FUZZ_FAST_MAX_WIDTH 48
#define FUZZ_FAST_MAX_HEIGHT 32
#define FUZZ_FAST_MAX_PIXELS 1024
static inline void fuzz_fast_image(const uint8_t *d, size_t n, const mmp_settings *s, int *w,
                                   int *h, int *ch)
{
    const int cls = (int)(byte_at(d, n, 1) / 32), work = fuzz_fast_work[cls];
    /* The transform residual (s->dct) measures its candidates for every
     * leaf and mode the engine matches, which adds most where matching is
     * cheap: the kept corpus replays in a third more time with the tool
     * drawn from byte 5 than with it always off. So it weighs half again, but in
     * the largest class, which keeps the largest images with the tool. */
    const int wt = fuzz_speed_weight[s->speed] * (s->dct && cls != FUZZ_FAST_TOP_CLASS ? 3 : 2) / 2;
    *ch = fuzz_channels(d, n);
    if (*ch >= 3 && cls != FUZZ_FAST_TOP_CLASS && fuzz_search_blocks(1, 1, *ch, s) * wt > work)
        *ch -= 2;
    *w = 1 + (int)(byte_at(d, n, 0) % FUZZ_FAST_MAX_WIDTH);
    *h = 1 + (int)(byte_at(d, n, 1) % FUZZ_FAST_MAX_HEIGHT);
    if (*w * *h > FUZZ_FAST_MAX_PIXELS)
        *h = FUZZ_FAST_MAX_PIXELS / *w;
    while (*h > 16 && fuzz_search_blocks(*w, *h, *ch, s) * wt > work)
        *h -= 16;
    while (*w > 16 && fuzz_search_blocks(*w, *h, *ch, s) * wt > work)
        *w -= 16;
}

/* ------------------------------------------------ encode, then decode */

/* Encode img with s (it must succeed) and check the file's header; *buf
 * (free()) gets the file, *rec the encoder's reconstruction. */
static inline void fuzz_encode_checked(const mmp_settings *s, const mmp_image *img, uint8_t **buf,
                                size_t *len, mmp_image *rec)
{
    char err[512] = "";
    *buf = NULL;
    *len = 0;
    memset(rec, 0, sizeof *rec);
    if (mmp_encode(s, img, buf, len, rec, NULL, err, sizeof err))
        abort(); /* every valid image with valid settings must encode */
    mmp_header h;
    if (mmp_header_parse(*buf, *len, &h, err, sizeof err) || h.width != (uint32_t)img->width ||
        h.height != (uint32_t)img->height || h.maxval != (uint32_t)img->maxval ||
        h.dict_cap != (uint32_t)s->dict_cap || h.order != (uint32_t)s->order ||
        rec->width != img->width || rec->height != img->height || rec->maxval != img->maxval ||
        h.planes != (uint32_t)mmp_image_channels(img) || rec->channels != mmp_image_channels(img))
        abort();
    const int ch = mmp_image_channels(img);
    size_t n = (size_t)img->width * img->height * ch;
    for (size_t i = 0; i < n; i++)
        if (rec->pix[i] > rec->maxval)
            abort();
    /* A bound holds on every sample (lossless: every sample back). */
    if (s->max_error >= 0)
        for (size_t i = 0; i < n; i++)
            if (abs((int)rec->pix[i] - (int)img->pix[i]) > s->max_error)
                abort();
    /* Alpha coded exactly comes back exactly. */
    if (mmp_image_has_alpha(img) && s->alpha == MMP_ALPHA_EXACT)
        for (size_t i = ch - 1; i < n; i += ch)
            if (rec->pix[i] != img->pix[i])
                abort();
}

/* Decode buf[0..len): it must succeed and equal rec sample for sample. */
static inline void fuzz_decode_equal(const uint8_t *buf, size_t len, const mmp_image *rec)
{
    char err[512] = "";
    mmp_image dec = {0};
    if (mmp_decode(buf, len, &dec, err, sizeof err) || dec.width != rec->width ||
        dec.height != rec->height || dec.maxval != rec->maxval || dec.channels != rec->channels ||
        memcmp(dec.pix, rec->pix,
               sizeof(uint16_t) * (size_t)dec.width * dec.height * dec.channels) != 0)
        abort(); /* decoder output differs from the encoder's reconstruction */
    mmp_image_free(&dec);
}

#endif
