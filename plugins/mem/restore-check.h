/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * restore-check.h - whether this host can give every saved mapping its
 * VmFlags back (advice, locks, seals, guards, names), asked before the tree
 * is forked.
 */
#ifndef CRF_PLUGIN_MEM_RESTORE_CHECK_H
#define CRF_PLUGIN_MEM_RESTORE_CHECK_H

#include <crf/plugin.h>

/*
 * 0, or -errno after logging the first task and mapping (address, name)
 * whose flags this host cannot set again, and why.
 */
int mem_restore_check(struct crf_ctx *ctx);

/*
 * restore-prepare: mem_validate() (validate.h), mem_restore_check(), then
 * the shared memory objects,
 * then the plan of the mappings made before forks (premap.h).
 */
int mem_restore_prepare(struct crf_ctx *ctx);

/* restore-premap: this task's mappings of that plan. */
int mem_restore_premap(struct crf_ctx *ctx);

#endif
