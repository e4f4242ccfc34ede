/*
 * The opencl engine's platforms and devices: every device of every
 * platform, the choice of one by the engine config's device spec ("P:D", or
 * part of a device name; by default the first GPU, else the first device),
 * device names, and the ops devices and probe.
 *
 * Kept apart from the rest of the engine because -e auto and the front
 * ends' device listing call it without creating an engine: nothing here
 * keeps state, every call asks the OpenCL platforms afresh.
 *
 * Discovery is serialised within the process: the ICD loader and PoCL set
 * their platforms and devices up on the first call, and threads that race
 * there (encodes started at once from several threads) see no device or
 * crash. The lock is held for the whole enumeration; it is taken nowhere
 * else, so it cannot be part of a cycle.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "kernels/opencl/opencl.h"

static pthread_mutex_t discovery = PTHREAD_MUTEX_INITIALIZER;

static int enumerate(dev_entry *list, int *count, char *why, size_t whylen)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    *count = 0;
    cl_int e = clGetPlatformIDs(16, plats, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(why, whylen, "no OpenCL platform found (install an ICD, e.g. pocl-opencl-icd)");
        return MMP_EENGINE;
    }
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id devs[MAX_DEVICES];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < MAX_DEVICES && *count < MAX_DEVICES; d++) {
            dev_entry *de = &list[(*count)++];
            de->plat = plats[p];
            de->dev = devs[d];
            de->p = (int)p;
            de->d = (int)d;
            de->type = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof de->type, &de->type, NULL);
        }
    }
    if (*count == 0) {
        snprintf(why, whylen, "no OpenCL device found (%u platform%s)", np, np == 1 ? "" : "s");
        return MMP_EENGINE;
    }
    return 0;
}

int ocl_enumerate(dev_entry *list, int *count, char *why, size_t whylen)
{
    pthread_mutex_lock(&discovery);
    const int err = enumerate(list, count, why, whylen);
    pthread_mutex_unlock(&discovery);
    return err;
}

void ocl_device_name(cl_device_id dev, char *buf, size_t len)
{
    buf[0] = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_NAME, len, buf, NULL) != CL_SUCCESS)
        snprintf(buf, len, "unknown device");
    buf[len - 1] = 0;
}

static int contains_nocase(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

int ocl_choose(const dev_entry *list, int count, const char *spec, char *why, size_t whylen)
{
    if (!spec || !*spec) {
        for (int i = 0; i < count; i++)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                return i;
        return 0;
    }
    int p, d;
    char extra;
    if (sscanf(spec, "%d:%d%c", &p, &d, &extra) == 2) {
        for (int i = 0; i < count; i++)
            if (list[i].p == p && list[i].d == d)
                return i;
    } else {
        for (int i = 0; i < count; i++) {
            char name[256];
            ocl_device_name(list[i].dev, name, sizeof name);
            if (contains_nocase(name, spec))
                return i;
        }
    }
    snprintf(why, whylen, "no OpenCL device matches '%s' (%d found)", spec, count);
    return MMP_EENGINE;
}

int ocl_devices(mmp_engine_device *out, int max, const char *spec, int *pick, char *errbuf,
                size_t errlen)
{
    dev_entry list[MAX_DEVICES];
    int count;
    *pick = -1;
    if (ocl_enumerate(list, &count, errbuf, errlen))
        return MMP_EENGINE;
    *pick = ocl_choose(list, count, spec, errbuf, errlen);
    if (*pick < 0)
        *pick = -1;
    for (int i = 0; i < count && i < max; i++) {
        mmp_engine_device *o = &out[i];
        memset(o, 0, sizeof *o);
        o->platform = list[i].p;
        o->device = list[i].d;
        o->is_gpu = (list[i].type & CL_DEVICE_TYPE_GPU) != 0;
        ocl_device_name(list[i].dev, o->name, sizeof o->name);
        clGetPlatformInfo(list[i].plat, CL_PLATFORM_NAME, sizeof o->platform_name,
                          o->platform_name, NULL);
        o->platform_name[sizeof o->platform_name - 1] = 0;
        cl_uint cus = 0;
        cl_ulong mem = 0;
        clGetDeviceInfo(list[i].dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
        clGetDeviceInfo(list[i].dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
        o->compute_units = cus;
        o->memory_mib = (unsigned long long)(mem >> 20);
        const cl_device_type t = list[i].type;
        snprintf(o->type, sizeof o->type, "%s",
                 t & CL_DEVICE_TYPE_GPU           ? "GPU"
                 : t & CL_DEVICE_TYPE_CPU         ? "CPU"
                 : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
                                                  : "other");
    }
    return count;
}

/* For -e auto: first choice when the device it would use is a GPU, not a
 * candidate otherwise (the CPU engines are faster on the CPU). */
int ocl_probe(const mmp_engine_config *cfg)
{
    dev_entry list[MAX_DEVICES];
    int count;
    char why[200];
    if (ocl_enumerate(list, &count, why, sizeof why))
        return -1;
    const int pick = ocl_choose(list, count, cfg->device, why, sizeof why);
    if (pick < 0)
        return -1;
    return (list[pick].type & CL_DEVICE_TYPE_GPU) ? 2 : -1;
}
