// SPDX-License-Identifier: GPL-2.0-only
/* crf restore -D DIR */
#include <errno.h>
#include <stdio.h>

#include "commands.h"
#include "inventory.h"

static const char help[] =
	"Usage: crf restore -D DIR [OPTIONS]\n\n"
	"Restore the process tree saved in the image directory DIR.  The inventory\n"
	"and every image are verified (checksums, plugins) before anything is done.\n\n"
	"  -D, --images-dir DIR   the dump to restore\n";

static int handle(void *data, int c, const char *arg)
{
	const char **dir = data;

	if (c != 'D')
		return -EINVAL;
	*dir = arg;
	return 0;
}

int cmd_restore(struct crf_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "images-dir", required_argument, NULL, 'D' },
		{ 0 },
	};
	struct crf_config conf = { 0 };
	struct crf_plugin_set set = { 0 };
	struct crf_imgdir *dir = NULL;
	const char *path = NULL;
	int r;

	r = crf_parse_command(o, argc, argv, "D:", longopts, help, handle, &path);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind < argc)
		return crf_usage_error(o, "unexpected argument '%s'", argv[optind]), CRF_EXIT_USAGE;
	if (!path)
		return crf_usage_error(o, "no image directory given (-D DIR)"), CRF_EXIT_USAGE;
	r = crf_setup(o, &conf, &set, 0);
	if (r >= 0)
		r = crf_imgdir_open(path, CRF_IMGDIR_READ, &dir);
	if (r >= 0)
		r = crf_inventory_check(dir, &set);
	if (r >= 0 && crf_plugin_set_probe(&set, false) != 0)
		r = -ENOTSUP;
	if (r >= 0) {
		crf_info("%s: inventory and every image verified", path);
		crf_error("restore: recreating processes is not implemented yet");
		r = -ENOSYS;
	}
	if (dir)
		crf_imgdir_close(dir);
	crf_plugin_set_free(&set);
	crf_config_free(&conf);
	return r < 0 ? CRF_EXIT_FAIL : CRF_EXIT_OK;
}
