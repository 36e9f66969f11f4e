// SPDX-License-Identifier: GPL-2.0-only
/*
 * The devices plugin's descriptor.  It handles tun/tap itself; GPUs and other
 * vendor devices are handled by out-of-tree plugins that use the same hook
 * points and slot into the graph with their own INI file.
 */
#include <crf/plugin.h>

#include "devices.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "devices",
	.version = "0.1.0",
	.description = "probes only; tun/tap: not yet (a device fd is refused); GPU and vendor "
		       "devices come from out-of-tree plugins",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = devices_probe,
	),
);
/* clang-format on */
