/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cow.h - pages a task still shares copy-on-write with its parent: found at
 * dump (cow.c), kept shared at restore (premap.c).
 */
#ifndef CRF_PLUGIN_MEM_COW_H
#define CRF_PLUGIN_MEM_COW_H

#include <stddef.h>
#include <sys/types.h>

#include <crf/plugin.h>

#include "pagemap.h"
#include "smaps.h"

struct mem_cow {
	pid_t ppid;		   /* the task's parent */
	pid_t parent;		   /* ppid when some page is shared with it, else 0 */
	struct mem_ranges *shared; /* per mapping of the task's list */
	size_t n;
};

/*
 * dump-task: for every mapping @maps->v[i] of task @pid (of kind @kinds[i])
 * that the parent has too, the pages both still map (@c->shared[i]), when
 * the parent is in the tree.  0 or -errno (logged).  Free with mem_cow_free().
 */
int mem_cow_find(struct crf_ctx *ctx, pid_t pid, const struct smaps *maps, const int *kinds,
		 struct mem_cow *c);
void mem_cow_free(struct mem_cow *c);

#endif
