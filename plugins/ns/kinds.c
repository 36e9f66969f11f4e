// SPDX-License-Identifier: GPL-2.0-only
/*
 * The namespace kinds the ns plugin records claims of, in restore order
 * (the user namespace owns the others; the mount namespace's
 * filesystems are made in the others), and their index: apart from
 * claims.c so that validate.c, and the fuzzer with it, need nothing else.
 */
#include <string.h>

#include "ns.h"

const char *const ns_kinds[NS_N_KINDS] = {
	"user",
	"net",
	"uts",
	"ipc",
	"cgroup",
	/* After net, ipc, cgroup: its sysfs, mqueue, cgroup mounts are theirs (mnt-fs.c). */
	"mnt",
	"time",
	"time_for_children",
	"pid_for_children",
};

int ns_kind_index(const char *kind)
{
	for (int i = 0; i < NS_N_KINDS; i++)
		if (!strcmp(ns_kinds[i], kind))
			return i;
	return -1;
}
