// SPDX-License-Identifier: GPL-2.0-only
/* The mem plugin's descriptor. */
#include <crf/plugin.h>

#include "mem.h"
#include "mm.pb-c.h"
#include "restore-check.h"
#include "shmem.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "mem",
	.version = "0.1.0",
	.description = "memory mappings, anonymous and file-backed pages, shared memory, vDSO",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = mem_probe,
		[CRF_STAGE_DUMP_TASK] = mem_dump_task,
		[CRF_STAGE_DUMP_TASK_DATA] = mem_dump_task_data,
		[CRF_STAGE_DUMP_CLEANUP] = mem_dump_cleanup,
		[CRF_STAGE_DUMP_LIVE] = mem_dump_live,
		[CRF_STAGE_RESTORE_PREPARE] = mem_restore_prepare,
		[CRF_STAGE_RESTORE_TASK] = mem_restore_task,
		[CRF_STAGE_RESTORE_FINISH] = mem_shm_restore_finish,
		[CRF_STAGE_RESTORE_CLEANUP] = mem_shm_restore_cleanup,
		[CRF_STAGE_RESTORE_PREMAP] = mem_restore_premap,
	),
	/*
	 * The mappings the core dispatches before infecting a task (crf/plugin.h):
	 * claimed here so that a dump without this plugin is refused; the
	 * dump-task hook saves them, and refuses what it cannot restore.
	 */
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_VMA, .name = "anon" },
		{ .cls = CRF_OBJ_VMA, .name = "shmem" },
		{ .cls = CRF_OBJ_VMA, .name = "file" },
		{ .cls = CRF_OBJ_VMA, .name = "memfd" },
		{ .cls = CRF_OBJ_VMA, .name = "sysv" },
		{ .cls = CRF_OBJ_VMA, .name = "vdso" },
		{ .cls = CRF_OBJ_VMA, .name = "vsyscall" }
	),
	.config_keys = CRF_STRINGS("read-method", "live"),
	.schemas = CRF_SCHEMAS(&crf__mem__mm_entry__descriptor,
			       &crf__mem__shmem_entry__descriptor),
);
/* clang-format on */
