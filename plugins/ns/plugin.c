// SPDX-License-Identifier: GPL-2.0-only
/* The ns plugin's descriptor. */
#include <crf/plugin.h>

#include "ns.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "ns",
	.version = "0.1.0",
	.description = "pid, mount, net, uts, ipc, user, time and cgroup namespaces",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = ns_probe,
	),
);
/* clang-format on */
