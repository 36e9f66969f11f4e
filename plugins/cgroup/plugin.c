// SPDX-License-Identifier: GPL-2.0-only
/* The cgroup plugin's descriptor. */
#include <crf/plugin.h>

#include "cgns.h"
#include "cgroup.h"
#include "cgprops.pb-c.h"
#include "cgroup.pb-c.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "cgroup",
	/* 0.2.0: cgroup.img (0.1.0 saved nothing, so its dumps are not restored);
	 * 0.3.0: cgprops.img (0.2.0's dumps restore, nothing managed);
	 * 0.4.0: Dir.checked, every other setting, read again at restore (0.3.0's
	 * dumps restore, nothing of it checked). */
	.version = "0.4.0",
	.description = "every task's cgroups, v2 and v1, their settings, made again if gone "
		       "(--manage-cgroups, --cgroup-root), the cgroup namespace",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = cgroup_probe,
		[CRF_STAGE_DUMP_PREPARE] = cgroup_dump_prepare,
		[CRF_STAGE_DUMP_TASK] = cgroup_dump_task,
		[CRF_STAGE_DUMP_FINISH] = cgroup_dump_finish,
		[CRF_STAGE_DUMP_CLEANUP] = cgroup_dump_cleanup,
		[CRF_STAGE_RESTORE_PREPARE] = cgroup_restore_prepare,
		[CRF_STAGE_RESTORE_TASK] = cgroup_restore_task,
		[CRF_STAGE_RESTORE_FINISH] = cgroup_restore_finish,
		[CRF_STAGE_RESTORE_CLEANUP] = cgroup_restore_cleanup,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_CGROUP, .name = "v2" },
		{ .cls = CRF_OBJ_CGROUP, .name = "v1" },
		{ .cls = CRF_OBJ_NS, .name = "cgroup", .dump = cg_ns_dump,
		  .restore = cg_ns_restore }
	),
	.config_keys = CRF_STRINGS("manage-cgroups", "cgroup-root", "cgroup-root-from"),
	.schemas = CRF_SCHEMAS(&crf__cgroup__task_cgroups__descriptor,
			       &crf__cgroup__hierarchy__descriptor,
			       &crf__cgroup__cgroup_ns__descriptor),
);
/* clang-format on */
