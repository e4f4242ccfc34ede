/* Settings shared by the front ends. */
#include "mmp/mmp.h"

#include <string.h>

void mmp_default_settings(mmp_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->lambda = 10.0;
    s->engine = "seq";
    s->threads = 0;
    s->dict_cap = MMP_DEFAULT_DICT_CAP;
    s->redundancy = -1.0;
}
