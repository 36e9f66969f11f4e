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
