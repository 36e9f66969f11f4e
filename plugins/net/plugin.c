// SPDX-License-Identifier: GPL-2.0-only
/* The net plugin's descriptor. */
#include <crf/plugin.h>

#include "inet.h"
#include "net.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "net",
	.version = "0.2.0",
	.description = "TCP (unconnected, listening, established through TCP_REPAIR) and UDP "
		       "sockets; unix sockets and net namespaces: not yet",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = net_probe,
		[CRF_STAGE_DUMP_PAUSE] = inet_dump_pause,
		[CRF_STAGE_DUMP_UNDO] = inet_dump_undo,
		[CRF_STAGE_DUMP_RESUME] = inet_dump_undo,
		[CRF_STAGE_DUMP_FINISH] = inet_dump_finish,
		[CRF_STAGE_DUMP_CLEANUP] = inet_dump_cleanup,
		[CRF_STAGE_RESTORE_PREPARE] = inet_restore_prepare,
		[CRF_STAGE_RESTORE_CLEANUP] = inet_restore_cleanup,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_FD, .name = "tcp", .dump = inet_dump, .restore = inet_restore },
		{ .cls = CRF_OBJ_FD, .name = "udp", .dump = inet_dump, .restore = inet_restore }
	),
	.config_keys = CRF_STRINGS("tcp-established", "skip-in-flight"),
	.schemas = CRF_SCHEMAS(&crf__net__inet_sk__descriptor, &crf__net__net_lock__descriptor),
);
/* clang-format on */
