// SPDX-License-Identifier: GPL-2.0-only
/* The net plugin's descriptor. */
#include <crf/plugin.h>

#include "net.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "net",
	.version = "0.1.0",
	.description = "probes only; unix, TCP and UDP sockets and net namespaces: not yet "
		       "(a socket fd is refused)",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = net_probe,
	),
);
/* clang-format on */
