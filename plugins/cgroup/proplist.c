// SPDX-License-Identifier: GPL-2.0-only
/*
 * The list of the cgroup settings crf saves and writes back, in the order
 * they are written: pure, for the validator (and the fuzzer) too.
 */
#include <string.h>

#include "props.h"

/*
 * cgroup v2, in the order they are written: the type before the
 * controllers a parent enables (threaded controllers need it), cpusets
 * before a task may join, memory's protections below its limits.
 */
static const char *const v2_props[] = {
	"cgroup.type",
	"cgroup.max.descendants",
	"cgroup.max.depth",
	"cgroup.subtree_control",
	"cpuset.cpus",
	"cpuset.mems",
	"cpuset.cpus.partition",
	"cpu.max",
	"cpu.weight", /* cpu.weight.nice is the same setting */
	"memory.min",
	"memory.low",
	"memory.high",
	"memory.max",
	"memory.swap.max",
	"memory.oom.group",
	"pids.max",
	"io.weight",
	"io.max",
	NULL,
};

/* cgroup v1: the controller each belongs to is the part before the first dot. */
static const char *const v1_props[] = {
	"cpuset.cpus",
	"cpuset.mems",
	"memory.limit_in_bytes",
	"memory.memsw.limit_in_bytes", /* not below memory.limit_in_bytes */
	"memory.soft_limit_in_bytes",
	"cpu.shares",
	"cpu.cfs_period_us",
	"cpu.cfs_quota_us",
	"pids.max",
	"blkio.weight",
	"blkio.bfq.weight",
	"devices.list", /* written through devices.deny and devices.allow (manage.c) */
	NULL,
};

bool cg_v1_has(const char *controllers, const char *prop)
{
	size_t len = strcspn(prop, ".");

	for (const char *c = controllers; *c;) {
		size_t n = strcspn(c, ",");

		if (n == len && !strncmp(c, prop, len))
			return true;
		c += n + (c[n] == ',');
	}
	return false;
}

const char *cg_prop_name(const char *controllers, int i)
{
	const char *const *v = *controllers ? v1_props : v2_props;
	int k = 0;

	for (size_t j = 0; v[j]; j++) {
		if (*controllers && !cg_v1_has(controllers, v[j]))
			continue;
		if (k++ == i)
			return v[j];
	}
	return NULL;
}

int cg_prop_index(const char *controllers, const char *name)
{
	const char *p;

	for (int i = 0; (p = cg_prop_name(controllers, i)); i++)
		if (!strcmp(p, name))
			return i;
	return -1;
}

bool cg_below(const char *p, const char *root)
{
	size_t len = strlen(root);

	if (!strcmp(root, "/"))
		return strcmp(p, "/") != 0;
	return !strncmp(p, root, len) && p[len] == '/';
}
