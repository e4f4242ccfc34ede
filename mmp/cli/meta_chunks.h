/*
 * An image file's metadata (mmp/imageio/meta.h) as the ancillary chunks of
 * an .mmp file (mmp/mmp.h's MMP_CHUNK_*, docs/format.md section 2), and
 * back: mmp-enc stores what it read, mmp-dec writes back what it finds.
 * Each part travels verbatim; a text is stored as PNG's uncompressed iTXt
 * is (keyword, language tag, translated keyword, UTF-8 text), and written
 * back as tEXt when it has no language and fits Latin-1, else as iTXt.
 */
#ifndef MMP_CLI_META_CHUNKS_H
#define MMP_CLI_META_CHUNKS_H

#include "mmp/imageio/meta.h"
#include "mmp/mmp.h"

/* The chunks of m, in a fixed order (iccp, exif, xmpd, srgb, gama, chrm,
 * then the texts); their data lives in the set. */
typedef struct mmp_chunk_set {
    mmp_chunk *chunks;
    int n;
    unsigned char **owned; /* the buffers made here */
    int nowned;
} mmp_chunk_set;

/* Fill *set from m (NULL or empty: no chunks). Returns 0 or MMP_ENOMEM. */
int mmp_meta_to_chunks(const mmp_imageio_meta *m, mmp_chunk_set *set);
void mmp_chunk_set_free(mmp_chunk_set *set);

/* Fill *m (zeroed first) from chunks[0..n): the known types; others are
 * counted in *unknown when it is not NULL. Returns 0 or MMP_ENOMEM. */
int mmp_chunks_to_meta(const mmp_chunk *chunks, int n, mmp_imageio_meta *m, int *unknown);

#endif
