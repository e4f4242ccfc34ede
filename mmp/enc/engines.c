/* The public view of the engine registry (kernels/engine.h). */
#include "mmp/mmp.h"

#include <stddef.h>
#include <string.h>

#include "common/error.h"
#include "kernels/engine.h"

/* The public header stands alone, so it repeats the registry's device
 * record; the two must not drift apart. */
#define SAME_FIELD(f)                                                                  \
    _Static_assert(offsetof(mmp_device_info, f) == offsetof(mmp_engine_device, f) &&   \
                       sizeof(((mmp_device_info *)0)->f) == sizeof(((mmp_engine_device *)0)->f), \
                   "mmp_device_info." #f " differs from mmp_engine_device." #f)
SAME_FIELD(platform);
SAME_FIELD(device);
SAME_FIELD(is_gpu);
SAME_FIELD(type);
SAME_FIELD(name);
SAME_FIELD(platform_name);
SAME_FIELD(compute_units);
SAME_FIELD(memory_mib);
_Static_assert(sizeof(mmp_device_info) == sizeof(mmp_engine_device),
               "mmp_device_info and mmp_engine_device have the same fields");

int mmp_engine_exists(const char *name)
{
    return name && (strcmp(name, "auto") == 0 || mmp_engine_find(name) != NULL);
}

int mmp_engine_devices(const char *engine, mmp_device_info *list, int max, const char *spec,
                       int *pick, char *errbuf, size_t errlen)
{
    if (!engine || !pick || max < 0 || (max > 0 && !list))
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "mmp_engine_devices needs an engine, a pick and a list of max entries");
    *pick = -1;
    const mmp_engine_ops *e = mmp_engine_find(engine);
    if (!e)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "this build has no %s engine (engines: %s)", engine, mmp_engine_names());
    if (!e->devices)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "the %s engine has no devices",
                         engine);
    mmp_engine_device dev[64];
    const int n = e->devices(dev, max < 64 ? max : 64, spec, pick, errbuf, errlen);
    for (int i = 0; i < n && i < max && i < 64; i++) {
        mmp_device_info *o = &list[i];
        o->platform = dev[i].platform;
        o->device = dev[i].device;
        o->is_gpu = dev[i].is_gpu;
        memcpy(o->type, dev[i].type, sizeof o->type);
        memcpy(o->name, dev[i].name, sizeof o->name);
        memcpy(o->platform_name, dev[i].platform_name, sizeof o->platform_name);
        o->compute_units = dev[i].compute_units;
        o->memory_mib = dev[i].memory_mib;
    }
    return n;
}
