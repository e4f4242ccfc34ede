/*
 * mmp_probe: the header fields of an .mmp file for a reader that does not
 * decode it (mmp-dec --info). It validates exactly as the decoder does
 * before decoding, through the same mmp_header_parse, so an invalid file
 * gets the same error from both.
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
    mmp_header h;
    const int err = mmp_header_parse(buf, len, &h, errbuf, errlen);
    if (err)
        return err;
    /* The parse accepts this version alone. */
    info->version = MMP_FORMAT_VERSION;
    info->planes = (int)h.planes;
    info->log2_block = (int)h.log2_block;
    info->log2_pmin = (int)h.log2_pmin;
    info->width = (int)h.width;
    info->height = (int)h.height;
    info->maxval = (int)h.maxval;
    info->dict_cap = (int)h.dict_cap;
    info->redund_q4 = h.redund_q4;
    info->lambda_q8 = h.lambda_q8;
    info->payload_len = h.payload_len;
    info->order = (int)h.order;
    info->transform = (int)h.transform;
    info->chroma = (int)h.chroma;
    info->alpha = (int)h.alpha;
    info->residual = (int)h.residual;
    info->max_error = h.residual == MMP_RESIDUAL_NONE ? -1 : (int)h.max_error;
    info->crc = h.payload_crc;
    info->dct = (h.tools & MMP_TOOL_TRANSFORM) != 0;
    return MMP_OK;
}
