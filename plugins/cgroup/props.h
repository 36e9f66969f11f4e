/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * props.h - the cgroup settings the plugin saves and writes back
 * (cgprops.img), and the dump of them.
 */
#ifndef CRF_PLUGIN_CGROUP_PROPS_H
#define CRF_PLUGIN_CGROUP_PROPS_H

#include <stdbool.h>

#include "cgprops.pb-c.h"
#include "cgroup.h"

#define CG_PROPS_IMG "cgprops.img"

/*
 * Is @name a setting saved for the hierarchy @controllers ("" cgroup v2,
 * else v1 controllers)?  Its index in the list (the order of writing), or
 * -1.
 */
int cg_prop_index(const char *controllers, const char *name);
/* The name of setting @i of the hierarchy @controllers, NULL past the end. */
const char *cg_prop_name(const char *controllers, int i);

/*
 * Does the v1 hierarchy @controllers ("cpu,cpuacct") hold the controller of
 * @prop (the part before its first dot: "cpu.shares", or "cpu" itself)?
 */
bool cg_v1_has(const char *controllers, const char *prop);
/* Is @p strictly below @root ("/" holds everything but itself)? */
bool cg_below(const char *p, const char *root);
/* An absolute cgroup path without empty, "." or ".." components (validate.c). */
bool cg_path_ok(const char *p);

/* Append the setting @name reading @value (taken, also on failure) to @v; 0 or -ENOMEM. */
int cg_add_prop(Crf__Cgroup__Prop ***v, size_t *n, const char *name, char *value);
/*
 * Every setting of the cgroup @d (directory @dir, of the hierarchy @hier,
 * @name in messages; @pid a task in it) that crf does not write back, into
 * @d->checked (unsaved.c): one that does not read as in a new cgroup beside
 * it refuses (-EOPNOTSUPP, logged naming @pid, the cgroup, the file, its
 * value and the new cgroup's) unless @keep.  The scratch cgroup made for it
 * is removed on every path.
 */
int cg_check_unsaved(Crf__Cgroup__Dir *d, const char *dir, const char *hier, const char *name,
		     pid_t pid, bool keep);

/*
 * dump-finish: cgprops.img from the cgroups the dump's tasks were seen in
 * (@seen), crf dump's own (/proc/self/cgroup) and its mounts.  0 or
 * -errno (logged, naming the cgroup and file).
 */
int cg_props_dump(struct crf_ctx *ctx, const struct cg_members *seen);

#endif
