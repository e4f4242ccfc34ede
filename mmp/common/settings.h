/*
 * The encoder's settings across versions of mmp_settings (mmp/mmp.h,
 * MMP_ABI_VERSION): the struct grows at its end, and its first field says
 * how much of it the caller has.
 */
#ifndef MMP_COMMON_SETTINGS_H
#define MMP_COMMON_SETTINGS_H

#include "mmp/mmp.h"

/*
 * The caller's settings s as a whole struct of this library's version in
 * *full: its fields within s->size, the defaults past them. MMP_EINVAL for
 * a size below the first version's (a struct not set by
 * mmp_settings_init), MMP_EUNSUPPORTED for a larger struct with a field
 * this library does not know set to anything but 0.
 */
int mmp_settings_full(const mmp_settings *s, mmp_settings *full);

#endif
