// SPDX-License-Identifier: GPL-2.0-only
/* The files plugin's descriptor. */
#include <crf/plugin.h>

#include "files.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "files",
	.version = "0.1.0",
	.description = "the fd table and fd kinds: files, pipes, FIFOs, eventfd, epoll, memfd, ttys...",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = files_probe,
		[CRF_STAGE_DUMP_TASK] = files_dump_task,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_FD, .name = "stdio", .match = files_is_stdio,
		  .dump = files_stdio_dump }
	),
);
/* clang-format on */
