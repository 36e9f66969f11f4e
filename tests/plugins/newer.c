// SPDX-License-Identifier: GPL-2.0-only
/*
 * A plugin that calls a function of a newer libcrf than crf's (linked with
 * newer-libcrf.c): crf must refuse to load it, naming the version it lacks.
 */
#include <crf/plugin.h>

int crf_newer_service(void);

static int newer_probe(struct crf_ctx *ctx)
{
	return crf_newer_service();
}

CRF_PLUGIN(.name = "newer", .version = "1.0.0", .description = "needs libcrf version CRF_1.99",
	   .hooks = CRF_HOOKS([CRF_STAGE_PROBE] = newer_probe));
