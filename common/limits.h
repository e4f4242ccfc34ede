/*
 * Limits on image size, checked by the container parser and the encoder.
 * mmp/mmp.h publishes the same definitions: a translation unit that includes
 * both (mmp/common/api.c) fails to compile if they ever differ.
 */
#ifndef MMP_COMMON_LIMITS_H
#define MMP_COMMON_LIMITS_H

/* Largest width or height accepted anywhere (files, headers, API). */
#define MMP_MAX_DIM 65536
/* Largest number of pixels accepted (2^28: 256 Mpixel). */
#define MMP_MAX_PIXELS (1LL << 28)

#endif
