// SPDX-License-Identifier: GPL-2.0-only
/* crf show DIR [IMAGE...]: decode images to JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "core.pb-c.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"
#include "show.h"

static const char help[] =
	"Usage: crf show [OPTIONS] DIR [IMAGE...]\n\n"
	"Print the images of dump directory DIR (or only the named IMAGEs) as JSON.\n"
	"Records are decoded with the schemas of the core and of every configured\n"
	"plugin; every checksum is verified on the way.\n";

/* The core's schemas followed by the plugins'. */
static const ProtobufCMessageDescriptor **all_schemas(const struct crf_plugin_set *set)
{
	static const ProtobufCMessageDescriptor *const core[] = {
		&crf__core__inventory__descriptor,
		&crf__core__plugin_version__descriptor,
		&crf__core__task_core__descriptor,
		&crf__core__process__descriptor,
	};
	size_t n = 0, k = 0;
	const ProtobufCMessageDescriptor **all;

	while (set->schemas && set->schemas[n])
		n++;
	all = calloc(n + ARRAY_SIZE(core) + 1, sizeof(*all));
	if (!all)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(core); i++)
		all[k++] = core[i];
	for (size_t i = 0; i < n; i++)
		all[k++] = set->schemas[i];
	return all;
}

static int show(int argc, char **argv, const ProtobufCMessageDescriptor *const *schemas)
{
	struct crf_imgdir *dir;
	int r = crf_imgdir_open(argv[optind], CRF_IMGDIR_READ, &dir);

	if (r < 0)
		return r;
	if (optind + 1 == argc) {
		r = show_dir(stdout, dir, schemas);
	} else {
		for (int i = optind + 1; i < argc && r >= 0; i++) {
			r = crf_show_image(stdout, dir, argv[i], schemas);
			fputc('\n', stdout);
		}
	}
	crf_imgdir_close(dir);
	return r;
}

int cmd_show(struct crf_opts *o, int argc, char **argv)
{
	struct crf_config conf = {0};
	struct crf_plugin_set set = {0};
	const ProtobufCMessageDescriptor **schemas = NULL;
	int r;

	r = parse_command(o, argc, argv, NULL, NULL, help, NULL, NULL);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind >= argc)
		return crf_usage_error(o, "no dump directory given"), CRF_EXIT_USAGE;
	/* Plugins only lend their schemas here; a broken one should not stop us. */
	crf_setup(o, &conf, &set, CRF_SET_TOLERANT);
	schemas = all_schemas(&set);
	r = schemas ? show(argc, argv, schemas) : crf_error_errno(ENOMEM, "show");
	free(schemas);
	plugin_set_free(&set);
	config_free(&conf);
	return r < 0 ? CRF_EXIT_FAIL : CRF_EXIT_OK;
}
