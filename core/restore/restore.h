/* SPDX-License-Identifier: GPL-2.0-only */
/* Restoring a process tree: the orchestration of fork, plugins and restorer. */
#ifndef CRF_CORE_RESTORE_H
#define CRF_CORE_RESTORE_H

#include <stdbool.h>

#include "plugin-set.h"

struct crf_restore_opts {
	const char *dir;
	bool detach;		  /* -d: return once the tree runs */
	unsigned int pid_wait_ms; /* how long a zombie holding a PID is waited for */
	/*
	 * crf swrk (compat/): CRIU's rst_sibling, the root forked with
	 * CLONE_PARENT (a child of crf's parent); and its notify scripts,
	 * called with "pre-restore", "setup-namespaces" and
	 * "post-setup-namespaces" (the tree created), "post-restore" (restored,
	 * not running), "network-unlock", "pre-resume", "post-resume" (running);
	 * < 0 fails the restore, which kills the tree.  NULL: none.
	 */
	bool sibling;
	int (*notify)(void *arg, const char *script, pid_t pid);
	void *notify_arg;
};

/*
 * Restore the tree saved in @dir (already verified with
 * inventory_check).  Returns, when detached, 0 once the tree runs;
 * otherwise the exit status crf should exit with (the root's, or 128+signal);
 * -errno on failure, after killing whatever was created.
 */
int crf_restore(const struct crf_restore_opts *o, struct crf_plugin_set *set,
		struct crf_imgdir *dir, pid_t root);

#endif
