/*
 * mmp-enc: encode an image file (PNG, PAM, PPM, PGM, PBM) to an .mmp file.
 * The command line is parsed by enc_options.c and run by enc_run.c.
 */
#include "mmp/cli/enc_options.h"
#include "mmp/cli/enc_run.h"

int main(int argc, char **argv)
{
    mmp_enc_options o;
    const int status = mmp_enc_options_parse(&o, argc, argv);
    if (status != MMP_CLI_RUN)
        return status;
    if (o.list_devices)
        return mmp_enc_list_devices(o.st.device, o.dev_label);
    return mmp_enc_run(&o, NULL);
}
