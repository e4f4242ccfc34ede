/*
 * mmp-enc's run of a parsed command line (enc_run.c), which mmp-enc's main
 * (enc_main.c) calls, and so does every front end that takes mmp-enc's
 * options and writes its files by its rules (mmp-enc-mpi's rank 0, which
 * brings an encoder of its own).
 */
#ifndef MMP_CLI_ENC_RUN_H
#define MMP_CLI_ENC_RUN_H

#include "mmp/cli/enc_options.h"
#include "mmp/cli/ratectl.h"

/*
 * Check the outputs (their temporary files made before anything is read)
 * and the device, read the image, encode it with `enc` (NULL: mmp_encode)
 * at the settings' lambda or at the rate target's, write the outputs (or
 * remove the temporary files) and report, as the options say. Messages
 * name mmp_enc_prog. Returns the exit status.
 */
int mmp_enc_run(mmp_enc_options *o, const mmp_cli_encoder *enc);

/* --list-devices: the opencl engine's devices, the one it would use
 * marked; `label` names where spec came from (--cl-device or
 * MMP_CL_DEVICE). Returns the exit status. */
int mmp_enc_list_devices(const char *spec, const char *label);

#endif
