// SPDX-License-Identifier: GPL-2.0-only
/*
 * hello: a template crf plugin, built out of tree against the installed
 * headers and pkg-config file:
 *
 *	cc -shared -fPIC -Wl,-z,defs -o crf-hello.so hello.c \
 *		$(pkg-config --cflags --libs crf-plugin)
 *
 * Copy it, rename it, and fill in the hooks your kind of state needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <crf/plugin.h>

/* Probe: check, for real, every kernel feature the plugin will use. */
static int hello_probe(struct crf_ctx *ctx)
{
	const char *greeting = crf_ctx_config(ctx, "greeting");
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	crf_probe_feature(ctx, "proc-status", fd >= 0, true, "%s",
			  fd >= 0 ? "/proc/self/status readable" : strerror(errno));
	if (fd >= 0)
		close(fd);
	crf_info("%s", greeting ? greeting : "hello from an out-of-tree plugin");
	return 0;
}

/* Per task, with the tree frozen: save what this plugin owns. */
static int hello_dump_task(struct crf_ctx *ctx)
{
	crf_debug("would dump pid %d", (int)crf_ctx_pid(ctx));
	return 0;
}

CRF_PLUGIN(
	.name = "hello",
	.version = "1.0.0",
	.description = "template plugin built out of tree",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = hello_probe,
		[CRF_STAGE_DUMP_TASK] = hello_dump_task,
	),
	.config_keys = CRF_STRINGS("greeting"),
);
