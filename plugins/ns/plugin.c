// SPDX-License-Identifier: GPL-2.0-only
/* The ns plugin's descriptor. */
#include <crf/plugin.h>

#include "ns.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "ns",
	.version = "0.1.0",
	/*
	 * PID namespaces are recreated by the core (rst-tree.c); a task in a
	 * namespace of another kind not crf's own is refused at dump, through
	 * the registry, until this plugin declares that kind.
	 */
	.description = "namespaces: probes only; mount, net, uts, ipc, user, time, cgroup: not yet "
		       "(a task in one is refused; PID namespaces are the core's)",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = ns_probe,
	),
);
/* clang-format on */
