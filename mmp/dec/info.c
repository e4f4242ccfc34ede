/*
 * mmp_probe: the header fields of an .mmp file for a reader that does not
 * decode it (mmp-dec --info), and mmp_chunks, its ancillary chunks. Both
 * validate exactly as the decoder does before decoding, through the same
 * mmp_container_parse, so an invalid file gets the same error from all.
 */
#include "mmp/mmp.h"

#include <string.h>

#include "common/container.h"
#include "common/error.h"

int mmp_probe(const uint8_t *buf, size_t len, mmp_file_info *info, char *errbuf, size_t errlen)
{
    if (!info)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no info record");
    memset(info, 0, sizeof *info);
    mmp_container c;
    const int err = mmp_container_parse(buf, len, &c, errbuf, errlen);
    if (err)
        return err;
    const mmp_header h = c.h;
    info->version = (int)c.major;
    info->version_minor = (int)c.minor;
    info->planes = (int)h.planes;
    info->log2_block = (int)h.log2_block;
    info->log2_pmin = (int)h.log2_pmin;
    info->width = (int)h.width;
    info->height = (int)h.height;
    info->maxval = (int)h.maxval;
    info->dict_cap = (int)h.dict_cap;
    info->redund_q4 = h.redund_q4;
    info->lambda_q8 = h.lambda_q8;
    for (uint32_t i = 0; i < c.ntiles; i++)
        info->payload_len += c.tiles[i].len;
    info->order = (int)h.order;
    info->transform = (int)h.transform;
    info->chroma = (int)h.chroma;
    info->alpha = (int)h.alpha;
    info->residual = (int)h.residual;
    info->max_error = h.residual == MMP_RESIDUAL_NONE ? -1 : (int)h.max_error;
    /* HEAD is the first chunk, right after the signature. */
    info->crc = mmp_chunk_crc(buf + MMP_SIGNATURE_SIZE + 4, buf + MMP_SIGNATURE_SIZE + 8,
                              MMP_HEAD_SIZE);
    info->dct = (h.tools & MMP_TOOL_TRANSFORM) != 0;
    info->deblock = (h.tools & MMP_TOOL_DEBLOCK) != 0;
    info->residual_mix = (h.tools & MMP_TOOL_RESIDUAL_MIX) != 0;
    info->residual_context = info->residual_mix && (h.tools & MMP_TOOL_RESIDUAL_CONTEXT);
    info->tile_width = (int)h.tile_w;
    info->tile_height = (int)h.tile_h;
    info->tiles = (int)c.ntiles;
    info->chunks = (int)c.nextra;
    mmp_container_free(&c);
    return MMP_OK;
}

int mmp_chunks(const uint8_t *buf, size_t len, mmp_chunk *list, int max, char *errbuf,
               size_t errlen)
{
    if (max < 0 || (max > 0 && !list))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no list for the chunks");
    mmp_container c;
    const int err = mmp_container_parse(buf, len, &c, errbuf, errlen);
    if (err)
        return err;
    for (uint32_t i = 0; i < c.nextra && (int)i < max; i++) {
        memcpy(list[i].type, c.extra[i].type, 5);
        list[i].data = buf + c.extra[i].offset;
        list[i].len = (size_t)c.extra[i].len;
    }
    const int n = (int)c.nextra;
    mmp_container_free(&c);
    return n;
}
