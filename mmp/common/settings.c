/* The encoder's settings: their defaults, and a caller's struct of any
 * version read into this library's (mmp/common/settings.h). */
#include "mmp/common/settings.h"

#include <stddef.h>
#include <string.h>

#include "common/error.h"

/* The struct ends with its last field, no padding: a field added later
 * starts at or past the size of every earlier version (mmp.h,
 * MMP_ABI_VERSION). */
_Static_assert(sizeof(mmp_settings) == offsetof(mmp_settings, spare) + sizeof(int),
               "mmp_settings has tail padding");
/* The first versioned struct's size: a smaller one was not set by
 * mmp_settings_init. The second ends with residual_mix, which took the
 * place of the spare int that followed the deblocking filter's field, so
 * that a caller of that version's 0 there is the default. */
#define SETTINGS_V1_SIZE (offsetof(mmp_settings, progress_opaque) + sizeof(void *))
#define SETTINGS_V2_SIZE (offsetof(mmp_settings, residual_mix) + sizeof(int))

/* A size that some version of the struct has had: the first's, the
 * second's, this one's (up to the spare int after residual_context), or a
 * newer one's, larger. */
static int known_size(size_t size)
{
    return size == SETTINGS_V1_SIZE || size == SETTINGS_V2_SIZE || size >= sizeof(mmp_settings);
}

int mmp_settings_init(mmp_settings *s, size_t size)
{
    if (!s || !known_size(size))
        return MMP_EINVAL;
    mmp_settings d;
    memset(&d, 0, sizeof d);
    d.lambda = 10.0;
    d.engine = "auto";
    d.threads = 0;
    d.dict_cap = 0;
    d.redundancy = -1.0;
    d.order = MMP_ORDER_WAVEFRONT;
    d.speed = 1;
    d.transform = MMP_TRANSFORM_AUTO;
    d.chroma = MMP_CHROMA_444;
    d.alpha = MMP_ALPHA_EXACT;
    d.chroma_lambda = 1.0;
    d.restoration = 1;
    d.dct = 1;
    d.max_error = -1;
    d.residual = MMP_RESIDUAL_AUTO;
    d.head_start = -1;
    d.size = size;
    /* A caller's struct may be smaller (built against an older header) or
     * larger (a newer one): its own fields, and zeros past ours. */
    if (size <= sizeof d) {
        memcpy(s, &d, size);
    } else {
        memcpy(s, &d, sizeof d);
        memset((char *)s + sizeof d, 0, size - sizeof d);
    }
    return MMP_OK;
}

int mmp_settings_full(const mmp_settings *s, mmp_settings *full)
{
    if (!s || !known_size(s->size))
        return MMP_EINVAL;
    if (s->size > sizeof *full) {
        const unsigned char *tail = (const unsigned char *)s + sizeof *full;
        for (size_t i = 0; i < s->size - sizeof *full; i++)
            if (tail[i])
                return MMP_EUNSUPPORTED;
    }
    mmp_settings_init(full, sizeof *full);
    memcpy(full, s, s->size < sizeof *full ? s->size : sizeof *full);
    full->size = sizeof *full;
    return MMP_OK;
}

