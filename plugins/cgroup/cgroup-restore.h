/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroup-restore.h - the restore side's state, shared by prepare.c and restore.c. */
#ifndef CRF_PLUGIN_CGROUP_RESTORE_H
#define CRF_PLUGIN_CGROUP_RESTORE_H

#include "cgroup.h"
#include "cgroup.pb-c.h"

#define CG_PATH_MAX 4096

/* One task (tid 0: a whole process) to be put in one cgroup. */
struct cg_move {
	pid_t pid, tid;
	char *controllers, *path; /* as saved: the hierarchy and the cgroup */
	char *dir;		  /* found through a mount of the hierarchy */
};

/*
 * The plugin's private state from restore-prepare on; every restored task
 * inherits its copy with the rest of crf's memory.
 */
struct cg_restore {
	Crf__Cgroup__TaskCgroups **tasks; /* the records of cgroup.img */
	size_t n_tasks;
	struct cg_members self; /* crf restore's own cgroups */
	char *mountinfo;	/* crf restore's /proc/self/mountinfo */
	struct cg_move *moves;
	size_t n_moves, cap_moves;
};

/* The file a task is written to: cgroup.procs, or a thread's cgroup.threads (v2) or tasks (v1). */
static inline const char *cg_move_file(const struct cg_move *m)
{
	if (!m->tid)
		return "cgroup.procs";
	return *m->controllers ? "tasks" : "cgroup.threads";
}

#endif
