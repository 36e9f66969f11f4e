// SPDX-License-Identifier: GPL-2.0-only
/* A plugin that claims a future ABI major: the core must refuse it. */
#include <crf/plugin.h>

__attribute__((visibility("default"))) const struct crf_plugin crf_plugin_descriptor = {
	.abi_major = CRF_PLUGIN_ABI_MAJOR + 1,
	.abi_minor = 0,
	.size = sizeof(struct crf_plugin),
	.n_hooks = CRF_STAGE__COUNT,
	.name = "future",
	.version = "9.0",
};
