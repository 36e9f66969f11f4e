/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compat.h - crf as CRIU for the container runtimes (docs/criu-compat.md):
 * crf swrk FD, CRIU's RPC (swrk.c, swrk-req.c), and the criu command line
 * (criu-cli.c).  Both map CRIU's options onto crf's own command lines and
 * run crf dump / restore / check in this process, so that the options are
 * checked and applied by the very code behind crf's commands.
 */
#ifndef CRF_COMPAT_H
#define CRF_COMPAT_H

#include "commands.h"
#include "util.h"

/* The CRIU release whose interface and behaviour crf provides. */
#define CRF_CRIU_MAJOR	  3
#define CRF_CRIU_MINOR	  17
#define CRF_CRIU_SUBLEVEL 1

/*
 * Run crf @argv (argv[0] the command: "dump", "restore", "check") in this
 * process, with crf_rpc_hooks as set; the command's exit status.
 */
int compat_run(struct strv *argv);

/* The criu command line (criu-cli.c): main() of crf run as "criu". */
int criu_main(int argc, char **argv);

#endif
