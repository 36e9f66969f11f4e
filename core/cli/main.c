// SPDX-License-Identifier: GPL-2.0-only
/* crf: command dispatch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static const struct {
	const char *name;
	int (*fn)(struct crf_opts *o, int argc, char **argv);
	const char *summary;
} commands[] = {
	{"dump", cmd_dump, "checkpoint a process tree into an image directory"},
	{"restore", cmd_restore, "restore a process tree from an image directory"},
	{"check", cmd_check, "probe the kernel features every enabled plugin needs"},
	{"plugins", cmd_plugins, "list the plugins, their state and order (--dot: graph)"},
	{"show", cmd_show, "print the images of a dump directory as JSON"},
	{"swrk", cmd_swrk, "serve CRIU's RPC on socket FD, for runc and Podman"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: crf COMMAND [OPTIONS]\n\n"
		   "crf checkpoints a running process tree into a directory of images and\n"
		   "restores it later.\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\nRun 'crf COMMAND --help' for a command's options.\n"
		"  --version              print the version\n\n%s",
		crf_common_help);
}

int parse_command(struct crf_opts *o, int argc, char **argv, const char *shortopts,
		  const struct option *longopts, const char *help,
		  int (*handle)(void *data, int c, const char *arg), void *data)
{
	static const struct option common[] = {CRF_COMMON_LONG};
	struct option all[64];
	char shorts[64];
	size_t n = 0;
	int c;

	for (size_t i = 0; i < ARRAY_SIZE(common); i++)
		all[n++] = common[i];
	for (size_t i = 0; longopts && longopts[i].name && n < ARRAY_SIZE(all) - 1; i++)
		all[n++] = longopts[i];
	all[n] = (struct option){0};
	snprintf(shorts, sizeof(shorts), ":%s%s", CRF_COMMON_SHORT, shortopts ? shortopts : "");

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, all, NULL)) != -1) {
		int r = opts_common(o, c, optarg, argv);

		if (r < 0)
			return r;
		if (r > 0)
			continue;
		r = handle ? handle(data, c, optarg) : -EINVAL;
		if (r < 0)
			return r;
	}
	if (o->help) {
		printf("%s\n%s", help, crf_common_help);
		return 1;
	}
	return opts_apply_logging(o) < 0 ? -EIO : 0;
}

int main(int argc, char **argv)
{
	struct crf_opts o = {0};
	int r;

	/* Installed as "criu" (meson -Dcriu=true): CRIU's command line. */
	if (argc > 0 && !strcmp(basename(argv[0]), "criu"))
		return criu_main(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return CRF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CRF_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("crf %s (plugin ABI %d.%d, image format %d.%d)\n", CRF_VERSION,
		       CRF_PLUGIN_ABI_MAJOR, CRF_PLUGIN_ABI_MINOR, CRF_IMG_FORMAT_MAJOR,
		       CRF_IMG_FORMAT_MINOR);
		return CRF_EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		o.cmd = commands[i].name;
		r = commands[i].fn(&o, argc - 1, argv + 1);
		opts_free(&o);
		return r;
	}
	fprintf(stderr, "crf: unknown command '%s' (see 'crf --help')\n", argv[1]);
	return CRF_EXIT_USAGE;
}
