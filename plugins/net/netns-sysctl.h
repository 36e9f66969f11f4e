/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netns-sysctl.h - the sysctl tree of a network namespace (netns-sysctl*.c):
 * every readable file under /proc/sys/net, read in one pass.
 */
#ifndef CRF_PLUGIN_NET_NETNS_SYSCTL_H
#define CRF_PLUGIN_NET_NETNS_SYSCTL_H

#include <stdbool.h>
#include <stddef.h>

#define SYSCTL_TREE_MAX	 (4u << 20)
#define SYSCTL_VALUE_MAX 4096
#define SYSCTL_PATH_MAX	 256

/* An entry's kind. */
#define SYSCTL_WRITABLE	  'w'
#define SYSCTL_READONLY	  'r'
#define SYSCTL_UNREADABLE 'e' /* value: why (stable_secret is EIO while unset) */

struct sysctl_ent {
	char kind;
	const char *path; /* under /proc/sys/net */
	const char *value;
};

struct sysctl_tree {
	char *buf; /* kind, path, NUL, value, NUL; ... */
	size_t len, cap;
	int err;
	struct sysctl_ent *ents;
	size_t n;
};

/*
 * The calling thread's net namespace's tree (in walk order, which is the
 * order to write in) in *@here, and a fresh namespace's (sorted by path,
 * for sysctl_tree_find) in *@fresh, each read by a child in the user
 * namespace that owns the thread's net namespace (the second unshares a
 * net namespace there).  0 or the error, logged.
 */
int sysctl_trees(struct sysctl_tree *here, struct sysctl_tree *fresh, const char *what);
const struct sysctl_ent *sysctl_tree_find(const struct sysctl_tree *t, const char *path);
void sysctl_tree_free(struct sysctl_tree *t);

#endif
