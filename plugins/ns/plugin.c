// SPDX-License-Identifier: GPL-2.0-only
/* The ns plugin's descriptor. */
#include <crf/plugin.h>

#include "ns.h"
#include "ns.pb-c.h"
#include "mnt.h"
#include "mnt.pb-c.h"
#include "userns.pb-c.h"
#include "uts.pb-c.h"
#include "time.pb-c.h"
#include "ipc.pb-c.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "ns",
	.version = "0.1.0",
	/*
	 * PID namespaces are recreated by the core (rst-tree.c); a task in a
	 * namespace of another kind not crf's own is refused at dump, through
	 * the registry, unless a plugin declares that kind: this one records
	 * which plugin claimed it and has that plugin's handler restore it
	 * (claims.c).  Its own handlers: user (userns.c, userns-restore.c),
	 * pid_for_children (userns-pid.c), mnt (mnt*.c), uts (uts.c), ipc
	 * (ipc*.c), time and time_for_children (time.c).
	 */
	.description = "namespaces: probes; user, mount, UTS, time and IPC namespaces and "
		       "pid_for_children (its own handlers); the namespaces other plugins' handlers "
		       "claim (net, cgroup); PID namespaces are the core's",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = ns_probe,
		[CRF_STAGE_DUMP_TASK_DATA] = ns_dump_task_data,
		[CRF_STAGE_RESTORE_PREPARE] = ns_restore_prepare,
		[CRF_STAGE_RESTORE_PREMAP] = ns_restore_premap,
		[CRF_STAGE_RESTORE_TASK] = ns_userns_restore_task,
		[CRF_STAGE_RESTORE_CLEANUP] = ns_restore_cleanup,
	),
	.kinds = CRF_KINDS(
		{.cls = CRF_OBJ_NS, .name = "user", .dump = ns_userns_dump,
		 .restore = ns_userns_restore},
		{.cls = CRF_OBJ_NS, .name = "pid_for_children", .dump = ns_pidfc_dump,
		 .restore = ns_pidfc_restore},
		{.cls = CRF_OBJ_NS, .name = "mnt", .dump = mnt_dump, .restore = mnt_restore},
		{ .cls = CRF_OBJ_NS, .name = "uts", .dump = ns_uts_dump, .restore = ns_uts_restore },
		{ .cls = CRF_OBJ_NS, .name = "ipc", .dump = ns_ipc_dump, .restore = ns_ipc_restore },
		{ .cls = CRF_OBJ_FD, .name = "mqueue", .dump = ns_mqfd_dump,
		  .restore = ns_mqfd_restore },
		{ .cls = CRF_OBJ_NS, .name = "time", .dump = ns_time_dump,
		  .restore = ns_time_restore },
		{ .cls = CRF_OBJ_NS, .name = "time_for_children", .dump = ns_time_dump,
		  .restore = ns_timefc_restore }),
	/* crf dump/restore --external mnt[A]:B ("A:B" words), crf restore --root DIR. */
	.config_keys = CRF_STRINGS("external-mnt", "root"),
	.schemas = CRF_SCHEMAS(&crf__ns__ns_claim__descriptor, &crf__ns__user_ns__descriptor,
			       &crf__ns__pid_for_children__descriptor, &crf__ns__mnt_entry__descriptor,
			       &crf__ns__mnt_node__descriptor, &crf__ns__uts_ns__descriptor,
			       &crf__ns__time_ns__descriptor, &crf__ns__ipc_ns__descriptor,
			       &crf__ns__ipc_shm_data__descriptor),
);
/* clang-format on */
