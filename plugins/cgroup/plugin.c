// SPDX-License-Identifier: GPL-2.0-only
/* The cgroup plugin's descriptor. */
#include <crf/plugin.h>

#include "cgroup.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "cgroup",
	.version = "0.1.0",
	.description = "cgroup v2 membership and limits; the cgroup v2 freezer",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = cgroup_probe,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_CGROUP, .name = "v2" },
		{ .cls = CRF_OBJ_CGROUP, .name = "v1" }
	),
);
/* clang-format on */
