/* SPDX-License-Identifier: GPL-2.0-only */
/* Dumping a process tree: the orchestration of freeze, parasite and plugins. */
#ifndef CRF_DUMP_H
#define CRF_DUMP_H

#include <stdbool.h>
#include <sys/types.h>

#include "plugin-set.h"

struct crf_pstree;

struct crf_dump_opts {
	pid_t pid;
	const char *dir;
	const char *freeze; /* "auto", "cgroup", "ptrace" */
	bool leave_running;
	bool sync; /* make the images durable before killing the tree */
	/*
	 * --live (with leave_running): thaw the tree right after dump-finish,
	 * then run dump-live while it runs, then write the inventory.
	 */
	bool live;
	/*
	 * What the restore would refuse of the frozen tree, refused now while
	 * it runs (the cli passes rst_plan_check: dump/ does not call into
	 * restore/); NULL: no such check.  0 or -errno (logged).
	 */
	int (*check_tree)(const struct crf_pstree *t);
	/*
	 * CRIU's notify scripts (crf swrk, compat/): called with "pre-dump",
	 * "network-lock", "query-ext-files" and "post-dump" (before the images
	 * count as complete); < 0 fails the dump as any failure does.  NULL: none.
	 */
	int (*notify)(void *arg, const char *script, pid_t pid);
	void *notify_arg;
};

/*
 * Dump the tree of @o->pid into @o->dir.  On success the tree is killed, or
 * left running with --leave-running.  On failure the tree is cured, resumed
 * and left exactly as it was, and the images written so far are removed.
 */
int crf_dump(const struct crf_dump_opts *o, struct crf_plugin_set *set);

#endif
