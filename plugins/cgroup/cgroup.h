/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup.h - what the files of the cgroup plugin share.
 *
 * The plugin saves where each task of the tree is in every cgroup
 * hierarchy (cgroup v2 and the v1 ones the host mounts) and puts it back
 * there at restore, or refuses, naming the cgroup; the tree's cgroups and
 * their settings, made again as --manage-cgroups says (docs/cgroup.md).
 */
#ifndef CRF_PLUGIN_CGROUP_H
#define CRF_PLUGIN_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <crf/plugin.h>

#define CG_IMG "cgroup.img"

/* One line of /proc/PID/cgroup: "" for v2, or a v1 hierarchy's controllers or name. */
struct cg_member {
	char *controllers;
	char *path;
	pid_t pid; /* dump-finish's list of cgroups: a task seen in it (0 elsewhere) */
};

struct cg_members {
	struct cg_member *v;
	size_t n;
};

/*
 * Parse the text of /proc/PID/cgroup ("ID:CONTROLLERS:PATH" lines) into
 * @out (emptied first).  0, -EINVAL for a line not of that form, -ENOMEM.
 */
int cg_parse(const char *text, struct cg_members *out);
void cg_members_free(struct cg_members *m);
/* The member of the hierarchy @controllers, or NULL. */
const struct cg_member *cg_find(const struct cg_members *m, const char *controllers);
/* Do @a and @b put a task in the same cgroups of the same hierarchies? */
bool cg_same(const struct cg_members *a, const struct cg_members *b);
/* The whole of a small /proc file, NUL-terminated (dump.c); 0 or -errno. */
int cg_read_text(const char *path, char **text);
/* cg_read_text() less its trailing newlines: a cgroup file's value. */
int cg_read_value(const char *path, char **text);
/* "v2:/a/b", "cpu,cpuacct:/a": how messages name a cgroup; returns @buf. */
const char *cg_name(const char *controllers, const char *path, char *buf, size_t len);

/* The stage hooks. */
int cgroup_probe(struct crf_ctx *ctx);
int cgroup_dump_prepare(struct crf_ctx *ctx);
int cgroup_dump_task(struct crf_ctx *ctx);
int cgroup_dump_finish(struct crf_ctx *ctx);
int cgroup_dump_cleanup(struct crf_ctx *ctx);
int cgroup_restore_prepare(struct crf_ctx *ctx);
int cgroup_restore_task(struct crf_ctx *ctx);
int cgroup_restore_finish(struct crf_ctx *ctx);
int cgroup_restore_cleanup(struct crf_ctx *ctx);

#endif
