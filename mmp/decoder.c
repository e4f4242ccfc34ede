/* The decoder driver: header validation, then the block syntax in raster order. */
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/error.h"
#include "mmp/mmp.h"
#include "mmp/syntax.h"

_Static_assert(MMP_MAX_FILE_BYTES == MMP_MAX_PAYLOAD + MMP_HEADER_SIZE,
               "mmp.h's file size limit is the container's");

int mmp_decode(const uint8_t *buf, size_t len, mmp_image *img, char *errbuf, size_t errlen)
{
    memset(img, 0, sizeof(*img));
    mmp_header hdr;
    int err = mmp_header_parse(buf, len, &hdr, errbuf, errlen);
    if (err)
        return err;
    mmp_codec c;
    err = mmp_codec_init(&c, (int)hdr.width, (int)hdr.height, (int)hdr.maxval, (int)hdr.dict_cap,
                         hdr.redund_q4);
    if (err)
        return mmp_error(errbuf, errlen, err, "cannot set up the decoder: %s", mmp_strerror(err));
    mmp_rc_dec rc;
    mmp_rc_dec_init(&rc, buf + MMP_HEADER_SIZE, (size_t)hdr.payload_len);
    const int bw = c.plane.width / MMP_B, bh = c.plane.height / MMP_B;
    for (int by = 0; by < bh && !err; by++)
        for (int bx = 0; bx < bw && !err; bx++) {
            mmp_symbols io = {.encoding = 0, .dec = &rc};
            err = mmp_code_block(&c, &io, by, bx);
            if (!err && rc.overrun)
                err = MMP_EBITSTREAM;
            if (!err)
                mmp_apply_updates(&c);
        }
    if (err) {
        mmp_codec_free(&c);
        return mmp_error(errbuf, errlen, err, "corrupt payload: more symbols than bytes");
    }
    err = mmp_image_alloc(img, (int)hdr.width, (int)hdr.height, (int)hdr.maxval);
    if (err) {
        mmp_codec_free(&c);
        return mmp_error(errbuf, errlen, err, "out of memory");
    }
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++)
            img->pix[(long)y * img->width + x] = (uint16_t)c.plane.pix[(long)y * c.plane.width + x];
    mmp_codec_free(&c);
    return 0;
}
