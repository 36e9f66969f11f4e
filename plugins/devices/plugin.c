// SPDX-License-Identifier: GPL-2.0-only
/*
 * The devices plugin's descriptor.  It handles tun/tap itself (tun*.c: the
 * first device kind, and the way for vendors); GPUs and other vendor devices
 * are handled by out-of-tree plugins that use the same hook points and slot
 * into the graph with their own INI file.
 */
#include <crf/plugin.h>

#include "devices.h"
#include "tun.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "devices",
	.version = "0.2.0",
	.description = "tun/tap fds (the interface, its settings, addresses and sysctls); GPU "
		       "and vendor devices come from out-of-tree plugins",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = devices_probe,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_FD, .name = "tun", .match = tun_match, .dump = tun_dump,
		  .restore = tun_restore }
	),
	.checks = CRF_CHECKS(
		{ .cls = CRF_OBJ_FD, .name = "tun", .check = tun_check }
	),
	.schemas = CRF_SCHEMAS(&crf__devices__tun__descriptor),
);
/* clang-format on */
