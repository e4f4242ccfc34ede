/*
 * mmp: the public API of the MMP image codec.
 *
 * Encode a grey image to an .mmp file in memory, and decode it back. This
 * header is self-contained (standard headers only). Every function that can
 * fail returns 0 or a negative MMP_E* code; when given an error buffer it
 * also writes a one-line reason there. The library never prints, and reads
 * nothing of the environment but OMP_NUM_THREADS (the threads of a decode,
 * and the OpenMP runtime's of the encoder): messages go to the log
 * callback of the settings.
 */
#ifndef MMP_MMP_H
#define MMP_MMP_H

#include <stddef.h>
#include <stdint.h>

#define MMP_VERSION_STRING "0.4.0"
/*
 * How the ABI is versioned. MMP_ABI_VERSION is the number of the sonames
 * (libmmp.so.1, libmmpdec.so.1). It changes only when a function changes
 * its signature or its meaning, or a struct changes the layout of fields it
 * has, never for a new function or a new field:
 * - mmp_settings grows at its end. Its first field is its size as the
 *   caller was built, which mmp_default_settings() writes (a macro that
 *   passes sizeof(mmp_settings) to mmp_settings_init); mmp_encode takes the
 *   fields within that size from the caller and gives the later ones their
 *   defaults, so a program built against an older, smaller struct keeps
 *   working. A program built against a newer header and run with an older
 *   library also works while the fields the library does not know are 0
 *   (what mmp_settings_init leaves there), and gets MMP_EUNSUPPORTED
 *   otherwise. A field added later has 0 as its default.
 * - mmp_file_info and mmp_enc_stats, which the library fills, end with
 *   reserved space that it zeroes: a later field takes its place, and reads
 *   0 from an older library.
 * - mmp_image, mmp_chunk and mmp_device_info keep their layout.
 * The same habits as libwebp's (WebPConfigInit passes the header's ABI
 * version to the library, which checks it at run time), with the struct's
 * size in place of a version number, as Linux's clone3 and openat2 take
 * theirs; dav1d keeps reserved space in the structs it fills.
 */
#define MMP_ABI_VERSION 1
/* The format this library writes (docs/format.md): 1.4, whose four coding
 * tools after 1.0, the deblocking filter (1.1), the residual stage's mixing
 * coder (1.2), its residual context (1.3) and the reversible colour
 * transforms (1.4), a file uses only where its header's tool bits say so
 * (mmp_settings.deblocking -1 and residual_mix -1 write files that a 1.0
 * decoder reads, residual_context -1 files that a 1.2 decoder reads, and
 * transform MMP_TRANSFORM_YCOCG_R or MMP_TRANSFORM_RGB lossless colour files
 * that a 1.3 decoder reads, with those settings an older one). It reads every
 * 1.x file that needs no coding tool it lacks, and the draft 0.9. mmp_probe
 * gives a file's version as mmp_file_info.version and version_minor
 * (tests/test_api.c checks that an encoded file's agrees with this). */
#define MMP_FORMAT_VERSION_STRING "1.4"

/* Error codes, all negative; 0 is success. (common/error.h inside the
 * library holds the same definitions.) */
#define MMP_OK            0
#define MMP_EINVAL      (-1)  /* bad argument or setting */
#define MMP_ENOMEM      (-2)  /* allocation failed */
#define MMP_EIO         (-3)  /* read or write failed */
#define MMP_EFORMAT     (-4)  /* not a valid input image file */
#define MMP_EBITSTREAM  (-5)  /* corrupt or truncated .mmp data */
#define MMP_EUNSUPPORTED (-6) /* valid but unsupported (version, feature) */
#define MMP_ELIMIT      (-7)  /* exceeds a documented limit */
#define MMP_EENGINE     (-8)  /* search engine unavailable or failed */
#define MMP_ECANCELED   (-9)  /* the progress callback stopped the encode */

/* A short English description of an error code (static string). */
const char *mmp_strerror(int err);

/* Largest width or height accepted anywhere (files, headers, API). */
#define MMP_MAX_DIM 65536
/* Largest number of pixels accepted (2^28: 256 Mpixel). */
#define MMP_MAX_PIXELS (1LL << 28)

/*
 * An image: width x height pixels of `channels` samples each, interleaved
 * (pixel by pixel, row-major, no padding), every sample in [0, maxval].
 * Channels: 1 grey, 2 grey and alpha, 3 RGB, 4 RGB and alpha (alpha last;
 * 0 alpha is transparent, maxval opaque). A struct filled by hand with
 * channels 0 is read as grey.
 */
typedef struct mmp_image {
    int width;
    int height;
    int maxval;      /* 1..65535 */
    uint16_t *pix;   /* width * height * channels samples, owned by the image */
    int channels;    /* 1..4 (0: 1) */
} mmp_image;

/* The channels of an image, 0 read as 1. */
int mmp_image_channels(const mmp_image *img);
/* 1 when the image has an alpha channel (2 or 4 channels). */
int mmp_image_has_alpha(const mmp_image *img);

/* Allocate a zeroed grey image. Returns 0, MMP_EINVAL or MMP_ELIMIT (size),
 * MMP_ENOMEM. */
int mmp_image_alloc(mmp_image *img, int width, int height, int maxval);
/* The same with 1 to 4 channels. */
int mmp_image_alloc_channels(mmp_image *img, int width, int height, int channels, int maxval);
/* Free the samples; safe on a zeroed struct. */
void mmp_image_free(mmp_image *img);
/* PSNR in dB of b against a (same size and channels) at a's maxval, with one
 * mean squared error over all samples of the colour channels (alpha left
 * out: the grey or RGB PSNR); INFINITY when equal; NAN when either image is
 * NULL or has no samples, or they differ in size or channels. */
double mmp_psnr(const mmp_image *a, const mmp_image *b);
/* PSNR of channel ch (0-based) alone; NAN as above, or for a channel the
 * images do not have. */
double mmp_psnr_channel(const mmp_image *a, const mmp_image *b, int ch);
/* MS-SSIM of b against a (Wang, Simoncelli and Bovik's, 5 scales; colour on
 * its BT.601 luma), 1 when equal; SSIMULACRA 2 of b against a (libjxl's
 * definition, samples taken as sRGB), 100 when equal. Alpha is left out.
 * NAN as for mmp_psnr, on a failed allocation, or for an image too small:
 * MS-SSIM needs sides of at least 161, SSIMULACRA 2 of at least 8. */
double mmp_ms_ssim(const mmp_image *a, const mmp_image *b);
double mmp_ssimulacra2(const mmp_image *a, const mmp_image *b);

/* Log levels and callback: one message, one line, no newline. */
#define MMP_LOG_ERROR 0   /* a failure, also returned as an error code */
#define MMP_LOG_WARNING 1 /* the encode goes on, differently than asked */
#define MMP_LOG_INFO 2    /* detail asked for with verbose settings */
typedef void (*mmp_log_fn)(void *opaque, int level, const char *msg);

/* Coding orders of the blocks (mmp_settings.order; docs/format.md 4.3). */
#define MMP_ORDER_RASTER 0    /* one block after another, the published algorithm */
#define MMP_ORDER_WAVEFRONT 1 /* diagonal steps of blocks searched at once */

/* Colour (mmp_settings, mmp_file_info; docs/format.md section 7). The
 * transform from RGB to the coded planes: */
#define MMP_TRANSFORM_NONE 0     /* grey images */
#define MMP_TRANSFORM_YCOCG_R 1  /* reversible YCoCg-R (maxval up to 32767) */
#define MMP_TRANSFORM_YCBCR 2    /* BT.601 full-range YCbCr */
#define MMP_TRANSFORM_RGB 3      /* none: R, G and B coded as they are */
/* The reversible colour transforms (format 1.4; lossless, maxval up to
 * 32767): in the settings, the encoder picks the one of the 42 whose planes
 * it estimates the cheapest; in a file (mmp_file_info.transform),
 * MMP_TRANSFORM_RCT + 7 * permutation + type (docs/format.md 7.2). */
#define MMP_TRANSFORM_RCT 4
/* In the settings, 0 asks for the default: YCoCg-R (the better by BD-rate,
 * docs/tuning.md, "Colour transform"), or YCbCr above maxval 32767;
 * lossless files up to maxval 32767 the reversible colour transform the
 * encoder picks; near-lossless files and lossless ones above it RGB (the
 * only transform whose inverse keeps the bound). */
#define MMP_TRANSFORM_AUTO 0
/* The chroma planes' sampling: */
#define MMP_CHROMA_444 0         /* full resolution */
#define MMP_CHROMA_420 1         /* half width and half height */
/* How an alpha channel is coded: */
#define MMP_ALPHA_NONE 0         /* no alpha channel */
#define MMP_ALPHA_EXACT 1        /* exactly (lossless), whatever lambda */
#define MMP_ALPHA_MMP 2          /* as an MMP plane at the settings' lambda (lossy) */

/* "auto" leaves opencl out of an encode that searches at most this many
 * blocks of 16 x 16 per core (every plane's; per thread where the settings
 * give threads), none included (lossless and near-lossless with the
 * residual stage alone): its start, a few tenths of a second, would take
 * longer than omp's whole search. */
#define MMP_AUTO_CPU_BLOCKS_PER_CORE 20

/* An ancillary chunk of a file: metadata that the decoder carries, not
 * decodes. `type` is four letters, the first lower-case (NUL-terminated
 * here). The known types: */
#define MMP_CHUNK_ICC "iccp"   /* an ICC colour profile, as it is */
#define MMP_CHUNK_EXIF "exif"  /* EXIF: the TIFF-structured block (as PNG's eXIf) */
#define MMP_CHUNK_XMP "xmpd"   /* an XMP packet (UTF-8) */
#define MMP_CHUNK_TEXT "text"  /* keyword, NUL, language tag, NUL, translated keyword,
                                * NUL, text: all UTF-8, as PNG's uncompressed iTXt */
#define MMP_CHUNK_SRGB "srgb"  /* PNG's sRGB data: the rendering intent (1 byte) */
#define MMP_CHUNK_GAMA "gama"  /* PNG's gAMA data (4 bytes) */
#define MMP_CHUNK_CHRM "chrm"  /* PNG's cHRM data (32 bytes) */
typedef struct mmp_chunk {
    char type[5];
    const uint8_t *data;
    size_t len;
} mmp_chunk;

/* The largest side of a tile that mmp_settings' automatic tiling makes:
 * an image up to 1024 a side is one tile, a larger one is cut into equal
 * tiles of at most 1024 a side. Tiles of 1024 cost about 0.3 % of the
 * rate on large images, and every tile is a unit of parallel work for the
 * encoder and the decoder (docs/results.md, "Tiles and the container"). */
#define MMP_AUTO_TILE 1024

/* Encoder settings; fill with mmp_default_settings() then change fields
 * (a struct not filled so is refused: its size field is wrong). The
 * strings are the caller's and must live until mmp_encode returns. */
typedef struct mmp_settings {
    size_t size;            /* sizeof(mmp_settings) where the caller was built (see
                             * MMP_ABI_VERSION); mmp_default_settings sets it */
    double lambda;          /* Lagrangian multiplier, 0..1e6 (default 10) */
    const char *engine;     /* search engine name (mmp_engine_names()) or "auto" (the
                             * default; NULL means it too): opencl when its device is a
                             * GPU that starts and the encode searches more than
                             * MMP_AUTO_CPU_BLOCKS_PER_CORE blocks per core, else omp
                             * (with `threads` 0: the cores other work leaves), else
                             * seq, the reference, in builds without either. Every
                             * engine writes the same bytes; mmp_enc_stats.engine names
                             * the one that ran */
    int threads;            /* engine threads, 0..MMP_MAX_THREADS: 0 = the engine's default
                             * (default 0): for omp every core the process may use that
                             * other processes do not keep busy when the encode starts
                             * (on a machine busy with other encodes, fewer, down to one
                             * thread, which never waits); for opencl host threads. A
                             * program that runs several encodes at once on threads of
                             * its own gives each its share */
    int dict_cap;           /* dictionary elements per scale, 64 to 16384; 0 (default): the
                             * speed's: MMP_DEFAULT_DICT_CAP, MMP_FAST_DICT_CAP at speeds
                             * 3 and 4, MMP_FASTEST_DICT_CAP above (docs/results.md,
                             * "Speed presets") */
    double redundancy;      /* redundancy threshold: a new pattern joins a scale only if its
                             * mean squared distance per pixel to every element there exceeds
                             * this; < 0 (default) derives it from lambda */
    int order;              /* MMP_ORDER_WAVEFRONT (default): the blocks of a diagonal step
                             * are searched at once, at a small cost in rate against
                             * raster's; or MMP_ORDER_RASTER, the published algorithm */
    int speed;              /* search effort, 0..MMP_MAX_SPEED: 0 searches exhaustively,
                             * 1 (default) ranks the modes and matches the best few;
                             * 6 and above match no dictionary, the transform residual
                             * alone; each higher preset prunes more of the
                             * encoder's search (docs/results.md, "Speed presets"). The format and
                             * the decoder are the same at every speed, and every engine
                             * writes the same bytes at a given speed */
    int transform;          /* colour images: MMP_TRANSFORM_AUTO (default), MMP_TRANSFORM_YCOCG_R,
                             * MMP_TRANSFORM_YCBCR, MMP_TRANSFORM_RGB or (lossless)
                             * MMP_TRANSFORM_RCT */
    int chroma;             /* colour images: MMP_CHROMA_444 (default) or MMP_CHROMA_420 */
    int alpha;              /* images with alpha: MMP_ALPHA_EXACT (default) or MMP_ALPHA_MMP */
    double chroma_lambda;   /* the chroma planes' lambda is lambda times this, divided by
                             * how much a chroma sample's error weighs in the RGB error
                             * (default 1) */
    int max_error;          /* -1 (default): lossy, lambda decides; 0: lossless, the decoder
                             * gives back every sample exactly; N > 0 (at most
                             * MMP_MAX_ERROR): near-lossless, every sample within N.
                             * Needs 4:4:4, and for N > 0 in colour MMP_TRANSFORM_RGB
                             * (what AUTO picks); docs/format.md section 7.6 */
    int residual;           /* with max_error >= 0, how planes reach the bound:
                             * MMP_RESIDUAL_AUTO (default), MMP_RESIDUAL_AFTER_MMP (MMP at
                             * lambda, then the residual stage) or MMP_RESIDUAL_ALONE
                             * (the residual stage's own prediction, no MMP) */
    int restoration;        /* 1 (default): each plane gets the restoration filter that
                             * lowers its cost (docs/format.md section 7.5), or none where
                             * none does; 0: no plane gets one */
    int dct;                /* 1 (default): prediction leaves may code their residual as
                             * quantised DCT coefficients (docs/format.md 4.4), chosen
                             * against the dictionary's residual tree by rate-distortion;
                             * 0: never. Lossless and near-lossless files: ignored */
    const char *device;     /* for engines with devices (opencl): "P:D" indices or part of
                             * the device's name, any case; NULL (default): the first GPU,
                             * else the first device */
    const char *engine_tune;/* engine-specific overrides for benchmarks (opencl:
                             * "wg=N,vec=N,kt=N,batches=N,spin=US,poll=0|1",
                             * any of them; the same bytes whatever they are);
                             * NULL (default): none */
    int head_start;         /* an engine slow to start (opencl) starts on a thread of its
                             * own while a CPU engine (omp, else seq) searches the first
                             * steps: -1 (default) it takes over at the first step
                             * boundary after it is ready; N > 0 after exactly N steps
                             * (it is waited for there); 0: no head start, the engine
                             * searches every step. The same bytes in every case */
    /* Tiles, each coded on its own (docs/format.md 2): sides that are multiples
     * of 16 from 128 to 65536; 0 (default): tiles of equal size, at most
     * MMP_AUTO_TILE a side (one tile up to 1024 a side). Several tiles are
     * coded at once where the engine runs threads (omp; with "auto" even
     * where a GPU is found), each on its own engine with a share of them. */
    int tile_width, tile_height;
    /* Ancillary chunks written into the file as they are (colour profile,
     * EXIF, XMP, text: MMP_CHUNK_*), at most 1024; the data is the caller's
     * until mmp_encode returns. */
    const mmp_chunk *chunks;
    int nchunks;
    int verbose;            /* 1: figures of the engines at MMP_LOG_INFO (default 0) */
    mmp_log_fn log;         /* messages (default NULL: dropped); from several threads at
                             * once where tiles are coded at once */
    void *log_opaque;
    /* Called after each step of blocks when set (progress bars): done of
     * total blocks, every tile's; one call at a time, done never going back,
     * from the threads that code tiles at once. It returns 0 to go on; any
     * other value stops the encode at the end of the step that every worker
     * is coding (with every engine, and tiles coded at once), with no
     * further call, and mmp_encode frees what it made and returns
     * MMP_ECANCELED. Encodes of lossless planes with the residual stage
     * alone and exact alpha planes have no steps of blocks and no call. */
    int (*progress)(void *opaque, int done, int total);
    void *progress_opaque;
    int deblocking;         /* 0 (default): each plane of a lossy file gets the deblocking
                             * filter that lowers its cost (docs/format.md section 7.7),
                             * or none where none does; -1: no plane gets one, and the
                             * file needs no decoder newer than format 1.0 */
    int residual_mix;       /* 0 (default): lossless and near-lossless planes code their
                             * residual stage's differences with the mixing coder
                             * (docs/format.md section 7.6, format 1.2); -1: with the
                             * count models of format 1.0 (and without the residual
                             * context): a file that a 1.0 decoder reads, where a
                             * colour image's transform is not a reversible one of
                             * format 1.4 */
    int residual_context;   /* 0 (default): with the mixing coder, the residual stage
                             * also predicts from its candidates' errors at the nearest
                             * samples and mixes contexts on the candidates' deviations
                             * and on the plane coded before (docs/format.md section
                             * 7.6, format 1.3); -1: not, a file that a 1.2 decoder
                             * reads (in colour, with transform YCoCg-R or RGB) */
    int spare;              /* 0: room for the next field, which will take its place
                             * (the struct ends with no padding) */
    /* Fields added later go here, each with 0 as its default, and the
     * struct ends with no padding (mmp/common/api.c asserts it). */
} mmp_settings;

/* Most threads an engine may be given (mmp_settings.threads): past the
 * cores of any machine, each thread costs memory and start-up time. */
#define MMP_MAX_THREADS 1024
#define MMP_DEFAULT_DICT_CAP 1024
/* Speeds 3 and 4's, where mmp_settings.dict_cap is 0: with one or two modes
 * given to the dictionary and most leaves coded by the transform, the
 * elements beyond it win little rate back (docs/tuning.md, "Speed
 * presets": most on large images) and cost search time. */
#define MMP_FAST_DICT_CAP 512
/* Speed 5's, which gives the dictionary one mode and 128 elements (0.2 %
 * more rate than 512 in nearly two thirds of the time), and the faster
 * presets', which search no dictionary (docs/results.md, "Speed presets"). */
#define MMP_FASTEST_DICT_CAP 128
/* Largest max_error (mmp_settings). */
#define MMP_MAX_ERROR 32767
/* How lossless and near-lossless planes are coded (mmp_settings.residual,
 * mmp_file_info.residual; docs/format.md 7.6). */
#define MMP_RESIDUAL_AUTO 0       /* settings: the encoder's choice */
#define MMP_RESIDUAL_NONE 0       /* files: lossy, no residual stage */
#define MMP_RESIDUAL_AFTER_MMP 1
#define MMP_RESIDUAL_ALONE 2
/* The fastest speed preset (mmp_settings.speed). */
#define MMP_MAX_SPEED 10

/* The defaults into the first `size` bytes of *s, size into s->size, and
 * zeros past the fields this library knows. Returns 0, or MMP_EINVAL for
 * a NULL s or a size below the first versioned struct's. Call it through
 * mmp_default_settings; language bindings call it with their struct's
 * size. */
int mmp_settings_init(mmp_settings *s, size_t size);
/* Settings with their defaults: mmp_default_settings(&s); (NULL is ignored). */
#define mmp_default_settings(s) mmp_settings_init((s), sizeof(mmp_settings))

/*
 * Quality, the scale of other encoders' -q: 0, the fewest bits,
 * to 100, lossless. Below 100 it sets s->lambda and s->max_error = -1
 * (lossy); 100 sets s->max_error = 0 (lossless, as avifenc and cjxl read
 * -q 100; lambda is left as it is). Nothing else is changed. Returns 0, or
 * MMP_EINVAL (s NULL, quality NaN or outside [0, 100]; s unchanged).
 *
 * Lambda is interpolated in a table of (quality, lambda) points:
 * (0, 8192), (10, 3500), (20, 1700), (30, 700), (40, 330), (50, 140),
 * (60, 50), (70, 17), (75, 10), (80, 5.25), (90, 1.25), (99, 0.25).
 * For q between points (q0, l0) and (q1, l1), lambda = l0 * pow(l1 / l0,
 * (q - q0) / (q1 - q0)) in IEEE double, rounded to the nearest multiple of
 * 1/256 (what the file's header keeps); from 99 to 100 it is 0.25. A
 * quality of the table gives its lambda exactly: MMP_DEFAULT_QUALITY gives
 * the default lambda, 10, and the default's bytes. The points were
 * measured on photographs so that each step of quality changes the bits
 * by about the same ratio, 5 % (docs/tuning.md, "Quality scale").
 */
int mmp_set_quality(mmp_settings *s, double quality);
/* The quality whose lambda is mmp_default_settings' (10). */
#define MMP_DEFAULT_QUALITY 75

/* Figures from one encode. */
typedef struct mmp_enc_stats {
    double seconds;          /* wall time of the encode */
    double search_seconds;   /* of which in the search */
    double code_seconds;     /* of which coding and dictionary updates */
    uint64_t blocks;
    uint64_t dict_elements;  /* summed over scales at the end */
    const char *engine;      /* the engine that ran (static string), last if several */
    long head_steps;         /* steps searched by a CPU engine before `engine`
                              * took over (mmp_settings.head_start), or 0 */
    int planes;              /* coded planes: grey or Y, Cb/Co, Cr/Cg, then alpha */
    int tiles;               /* tiles of the file */
    int tile_workers;        /* tiles coded at once, each on its own engine with a
                              * share of the threads (search_seconds and
                              * code_seconds add up all of theirs) */
    double plane_psnr[4];    /* PSNR of each coded plane against the encoder's own
                              * planes of the input, at the plane's sample range */
    int reserved[16];        /* zeros: room for later fields (MMP_ABI_VERSION) */
} mmp_enc_stats;

/*
 * Encode `img` with the settings `s` (both required; every setting is
 * checked: MMP_EINVAL names the first out of its range). On success *out
 * (owned by the caller: mmp_free, or free()) holds the whole .mmp file of
 * *outlen bytes (out and outlen required); if `recon` is not NULL it
 * receives the encoder's reconstruction (the caller frees it with
 * mmp_image_free), which the decoder reproduces exactly. `stats` may be
 * NULL. MMP_ECANCELED: s->progress asked to stop; nothing is kept.
 *
 * Threads: mmp_encode may be called from several threads at once, each
 * with its own image and outputs (settings may be shared: the library only
 * reads them), and each gives the bytes it gives alone
 * (tests/test_threads.c checks it). What encodes share: the list of
 * engines (built once), the OpenCL platform's device list (read under a
 * lock; each encode has its own context, queues and kernels), the OpenMP
 * runtime of the omp engine (a program running encodes side by side gives
 * each a share of the cores through s->threads), an atomic counter of the
 * search's tables, and nothing else. The
 * log and progress callbacks of one encode are called from its own threads
 * (several at once where tiles are coded at once for log; one at a time
 * for progress); callbacks shared by several encodes must be thread-safe.
 * Every other function of this header is thread-safe for distinct
 * arguments too.
 */
int mmp_encode(const mmp_settings *s, const mmp_image *img, uint8_t **out, size_t *outlen,
               mmp_image *recon, mmp_enc_stats *stats, char *errbuf, size_t errlen);

/*
 * Decode a whole .mmp file held in buf[0..len). On success `img` holds the
 * image (free with mmp_image_free), with the channels the file has. Hostile input yields an error, never a
 * crash, a hang or an unbounded allocation. Thread-safe for different
 * buffers and images; it may run threads of its own (pthreads) until it
 * returns: up to OMP_NUM_THREADS's first value where it is set, else the
 * cores of the process's affinity mask; mmp-dec(1) says which images use
 * how many. It gives the same image whatever their number. A program that
 * decodes several files at once on threads of its own may set
 * OMP_NUM_THREADS to 1 to keep each decode on its caller's thread.
 */
int mmp_decode(const uint8_t *buf, size_t len, mmp_image *img, char *errbuf, size_t errlen);
/*
 * mmp_decode for files from untrusted sources: a file whose header announces
 * more than max_pixels pixels (width x height; 0: no limit below
 * MMP_MAX_PIXELS) is refused with MMP_ELIMIT before anything is allocated.
 * A service bounds its memory by it: the decoder's memory grows with the
 * pixels, and docs/format.md (section 2) bounds it.
 */
int mmp_decode_limited(const uint8_t *buf, size_t len, uint64_t max_pixels, mmp_image *img,
                       char *errbuf, size_t errlen);

/* Largest .mmp file the decoder accepts: 4 GiB and 48 bytes, more than an
 * image within MMP_MAX_PIXELS codes to. */
#define MMP_MAX_FILE_BYTES ((1ULL << 32) + 48)

/* The header fields of an .mmp file (docs/format.md section 2). */
typedef struct mmp_file_info {
    int version;             /* the file's format version, major: 1 (0: the draft 0.9) */
    int version_minor;       /* and minor */
    int planes;              /* 1 grey, 2 grey + alpha, 3 colour, 4 colour + alpha */
    int log2_block;          /* 4: blocks of 16x16 */
    int log2_pmin;           /* 2: smallest prediction block side 4 */
    int width, height;
    int maxval;
    int dict_cap;            /* dictionary elements per scale */
    uint32_t redund_q4;      /* redundancy threshold in 1/16: redund_q4 / 16.0 */
    uint32_t lambda_q8;      /* the encoder's lambda in 1/256: lambda_q8 / 256.0 */
    uint64_t payload_len;    /* coded bytes: the tiles' data, summed */
    int order;               /* MMP_ORDER_RASTER or MMP_ORDER_WAVEFRONT */
    int transform;           /* MMP_TRANSFORM_*; a reversible colour transform as
                              * MMP_TRANSFORM_RCT + 7 * permutation + type */
    int chroma;              /* MMP_CHROMA_* */
    int alpha;               /* MMP_ALPHA_* */
    int residual;            /* MMP_RESIDUAL_NONE (lossy), _AFTER_MMP or _ALONE */
    int max_error;           /* with a residual stage, the bound on every sample's error
                              * (0: lossless); -1 for lossy files */
    uint32_t crc;            /* the CRC-32 of the HEAD chunk (each chunk's is checked) */
    int dct;                 /* 1: the planes may have the transform residual
                              * (docs/format.md 4.4) */
    int tile_width, tile_height; /* the tiles' sides */
    int tiles;               /* how many: columns x rows */
    int chunks;              /* ancillary chunks (mmp_chunks lists them) */
    int deblock;             /* 1: the planes may have the deblocking filter (docs/format.md
                              * 7.7, format 1.1) */
    int residual_mix;        /* 1: the residual stage codes with the mixing coder
                              * (docs/format.md 7.6, format 1.2) */
    int residual_context;    /* 1: and with its residual context (docs/format.md 7.6,
                              * format 1.3) */
    int reserved[13];        /* zeros: room for later fields (MMP_ABI_VERSION) */
} mmp_file_info;

/*
 * The header of a whole .mmp file held in buf[0..len), without decoding the
 * payload. The file is checked as mmp_decode checks it before decoding
 * (the signature, every chunk's length, type, place and CRC, every HEAD
 * field, the tile index), with the same error code and reason. *info holds the fields on success,
 * zeros on failure.
 */
int mmp_probe(const uint8_t *buf, size_t len, mmp_file_info *info, char *errbuf, size_t errlen);

/*
 * The ancillary chunks of a whole .mmp file held in buf[0..len) (colour
 * profile, EXIF, XMP, text, and types this library does not know), in file
 * order: up to max of them into list, each pointing into buf. The file is
 * checked as mmp_probe checks it. Returns how many there are, or a negative
 * code with a one-line reason in errbuf.
 */
int mmp_chunks(const uint8_t *buf, size_t len, mmp_chunk *list, int max, char *errbuf,
               size_t errlen);

/*
 * Decode the window [x, x + width) x [y, y + height) of a whole .mmp file:
 * only the tiles it touches are decoded, and img receives exactly those
 * samples of the whole image's decode. max_pixels as in mmp_decode_limited
 * (it bounds the window). MMP_EINVAL for a window outside the image.
 */
int mmp_decode_region(const uint8_t *buf, size_t len, int x, int y, int width, int height,
                      uint64_t max_pixels, mmp_image *img, char *errbuf, size_t errlen);

/* Free a buffer the library returned (mmp_encode's file, the 8-bit
 * helpers' files and pixels); NULL is ignored. */
void mmp_free(void *p);

/*
 * One-call helpers for 8-bit interleaved pixels, as libwebp's WebPEncodeRGB
 * and WebPDecodeRGBA: grey (1 byte a pixel), RGB (3) and RGBA (4, alpha
 * last, 255 opaque).
 *
 * Encoding: width x height pixels from px, rows `stride` bytes apart
 * (at least width times the bytes of a pixel), coded with maxval 255 and
 * the settings s (NULL: the defaults of mmp_default_settings). On success
 * *out holds the file of *out_size bytes, to free with mmp_free. Returns 0
 * or a code of mmp_encode.
 */
int mmp_encode_grey8(const uint8_t *px, int width, int height, int stride, const mmp_settings *s,
                     uint8_t **out, size_t *out_size);
int mmp_encode_rgb8(const uint8_t *px, int width, int height, int stride, const mmp_settings *s,
                    uint8_t **out, size_t *out_size);
int mmp_encode_rgba8(const uint8_t *px, int width, int height, int stride, const mmp_settings *s,
                     uint8_t **out, size_t *out_size);
/*
 * Decoding: the whole .mmp file buf[0..len) into *px, width x height
 * pixels of 1, 3 or 4 bytes, rows width times that apart, to free with
 * mmp_free; *width and *height (either may be NULL) get the size. Files of
 * other channels are converted: grey to RGB repeats the grey sample; RGB
 * to grey takes the BT.601 luma Y = (19595 R + 38470 G + 7471 B + 32768)
 * >> 16 of the 8-bit samples (as Pillow's convert("L")); alpha is dropped
 * where the output has none (not composited), and 255 where the file has
 * none. Samples of a maxval other than 255 are brought to 8 bits as
 * mmp-dec's PNG output brings them to 8 or 16 bits: a maxval 2^k - 1 by
 * repeating the sample's bits from the top (PNG's scaling for sBIT),
 * another maxval M by rounding v * 255 / M (v * 65535 / M above 255),
 * and above 255 the top 8 bits of the 16-bit sample. Returns 0 or a code
 * of mmp_decode (hostile input included).
 */
int mmp_decode_grey8(const uint8_t *buf, size_t len, int *width, int *height, uint8_t **px);
int mmp_decode_rgb8(const uint8_t *buf, size_t len, int *width, int *height, uint8_t **px);
int mmp_decode_rgba8(const uint8_t *buf, size_t len, int *width, int *height, uint8_t **px);

/* The engines built into this library: "seq, omp, opencl, auto" or fewer. */
const char *mmp_engine_names(void);
/* 1 when `name` is one of them ("auto" included), else 0. */
int mmp_engine_exists(const char *name);

/* A device an engine can run on. */
typedef struct mmp_device_info {
    int platform, device;     /* indices, written "P:D" */
    int is_gpu;
    char type[16];            /* "GPU", "CPU", "accelerator" or "other" */
    char name[128];
    char platform_name[128];
    unsigned compute_units;
    unsigned long long memory_mib;
} mmp_device_info;

/*
 * The devices of `engine` (only "opencl" has any), up to max of them into
 * list. Returns how many there are, or a negative code with a one-line reason
 * in errbuf (MMP_EUNSUPPORTED: the engine is not built in or has no devices;
 * MMP_EENGINE: no platform or no device). *pick gets the index of the device
 * that `spec` (the syntax of mmp_settings.device; NULL: the default) selects,
 * or -1 with the reason in errbuf.
 */
int mmp_engine_devices(const char *engine, mmp_device_info *list, int max, const char *spec,
                       int *pick, char *errbuf, size_t errlen);

#endif
