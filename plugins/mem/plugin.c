// SPDX-License-Identifier: GPL-2.0-only
/* The mem plugin's descriptor. */
#include <crf/plugin.h>

#include "mem.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "mem",
	.version = "0.1.0",
	.description = "memory mappings, anonymous and file-backed pages, shared memory, vDSO",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = mem_probe,
	),
);
/* clang-format on */
