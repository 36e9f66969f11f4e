/* SPDX-License-Identifier: GPL-2.0-only */
/* What the tree workloads (wl-tree, wl-session) expect of each process. */
#ifndef CRF_TESTS_WL_TREE_H
#define CRF_TESTS_WL_TREE_H

#include <stddef.h>
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

/*
 * After the restore, in the process of @n: its PID, parent, session, group
 * and @buf_bytes of memory, then its children's session and group, then
 * their verdicts (it waits for each); fails unless all of them exited 0.
 */
void wl_node_verify(const struct node *n, size_t buf_bytes);

#endif
