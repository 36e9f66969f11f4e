/* SPDX-License-Identifier: GPL-2.0-only */
/* What the tree workloads (wl-tree, wl-session) expect of each process. */
#ifndef CRF_TESTS_WL_TREE_H
#define CRF_TESTS_WL_TREE_H

#include <stdint.h>
#include <sys/types.h>

#define MAX_KIDS 3

struct expect {
	pid_t pid, ppid, sid, pgid;
};

struct node {
	const char *name;
	struct expect self;
	struct expect kids[MAX_KIDS];
	int n_kids;
	unsigned char *buf;
	uint64_t seed;
};

/* Fail unless process @pid (@who in the message) has the session and group of @e. */
void wl_check_ids(const char *who, pid_t pid, const struct expect *e);

#endif
