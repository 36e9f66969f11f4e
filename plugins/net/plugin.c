// SPDX-License-Identifier: GPL-2.0-only
/* The net plugin's descriptor and its private state. */
#include <stdlib.h>

#include <crf/plugin.h>

#include "net.h"
#include "unix.h"

struct net_state *net_state(struct crf_ctx *ctx)
{
	struct net_state *st = crf_ctx_priv(ctx);

	if (!st) {
		st = calloc(1, sizeof(*st));
		crf_ctx_set_priv(ctx, st);
	}
	return st;
}

int net_cleanup(struct crf_ctx *ctx)
{
	net_unix_cleanup(ctx);
	free(crf_ctx_priv(ctx));
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "net",
	.version = "0.2.0",
	.description = "unix sockets (pairs, listeners and their connections, names, "
		       "queues, shutdown); TCP, UDP and net namespaces: not yet (such a "
		       "socket is refused)",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = net_probe,
		[CRF_STAGE_DUMP_FINISH] = net_unix_dump_finish,
		[CRF_STAGE_DUMP_CLEANUP] = net_cleanup,
		[CRF_STAGE_RESTORE_PREPARE] = net_unix_restore_prepare,
		[CRF_STAGE_RESTORE_CLEANUP] = net_cleanup,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_FD, .name = "unix", .dump = net_unix_dump,
		  .restore = net_unix_restore }
	),
	.schemas = CRF_SCHEMAS(&crf__net__unix_sk__descriptor),
);
/* clang-format on */
