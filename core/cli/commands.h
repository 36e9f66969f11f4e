/* SPDX-License-Identifier: GPL-2.0-only */
/* The crf subcommands.  Each returns the process exit status. */
#ifndef CRF_COMMANDS_H
#define CRF_COMMANDS_H

#include "options.h"

int cmd_plugins(struct crf_opts *o, int argc, char **argv);
int cmd_check(struct crf_opts *o, int argc, char **argv);
int cmd_show(struct crf_opts *o, int argc, char **argv);
int cmd_dump(struct crf_opts *o, int argc, char **argv);
int cmd_restore(struct crf_opts *o, int argc, char **argv);
/* crf swrk FD: CRIU's RPC on an inherited socket (compat/swrk.c). */
int cmd_swrk(struct crf_opts *o, int argc, char **argv);
/* crf run under the name "criu": CRIU's command line (compat/criu-cli.c). */
int criu_main(int argc, char **argv);

/*
 * What crf swrk and the criu command line (compat/) give the dump and
 * restore they run in this process: CRIU's notify scripts, rst_sibling;
 * and what cmd_dump/cmd_restore leave for them (the error, the restored
 * root).  All zero for crf's own commands.
 */
struct crf_rpc_hooks {
	int (*notify)(void *arg, const char *script, pid_t pid);
	void *arg;
	bool sibling;
	int err;    /* set by cmd_dump/cmd_restore: their -errno, 0 */
	pid_t root; /* set by cmd_restore: the restored root */
};
extern struct crf_rpc_hooks crf_rpc_hooks;

/*
 * Parse a command's options: the common ones plus @longopts (terminated by
 * a zeroed entry, may be NULL) and @shortopts.  For each option that is not
 * common, @handle is called; it returns 0, or < 0 for a usage error.
 * Returns 0, 1 when --help was given (help already printed), or -EINVAL.
 */
int parse_command(struct crf_opts *o, int argc, char **argv, const char *shortopts,
		  const struct option *longopts, const char *help,
		  int (*handle)(void *data, int c, const char *arg), void *data);

#endif
