// SPDX-License-Identifier: GPL-2.0-only
/*
 * External namespaces: `crf dump --external net[INODE]:KEY` (also uts,
 * ipc, cgroup; the key "external-ns", words "KIND:INODE:KEY") names a
 * namespace of the tree that something outside it made and keeps (runc's
 * network namespace): it is not saved.  This plugin's handler "external"
 * claims it by @match, before the kind's own handler; claims.c records it
 * in ns-PID.img with its key (NsClaim.external_key).  Every one named must
 * be met in the tree, owned by crf's user namespace.
 *
 * `crf restore --inherit-fd fd[N]:KEY`, fd N a namespace (the CLI gives
 * those to this plugin, the key "inherit-fd"): restore-prepare checks,
 * before anything is forked, that every external namespace of the dump has
 * its fd, of its kind, and that no fd is given for a key the dump lacks;
 * each restored process that was in it joins it (setns on fd N, which it
 * inherited from crf restore) where a handler would have made one.  The
 * processes forked into it inherit it; one that joined it with setns joins
 * the same fd (share.c, like any).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include <crf/log.h>
#include <crf/plugin.h>

#include "ns.h"

#define MAX_EXT 32

static const struct {
	const char *kind;
	int nstype;
} kinds[] = {
	{"net", CLONE_NEWNET},
	{"uts", CLONE_NEWUTS},
	{"ipc", CLONE_NEWIPC},
	{"cgroup", CLONE_NEWCGROUP},
};

static int nstype_of(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].kind, kind))
			return kinds[i].nstype;
	return 0;
}

/* dump: the --external ones; restore: the dump's, each with its fd. */
static struct ext {
	char kind[16];
	uint64_t id;
	char key[128];
	bool met; /* dump: in the tree; restore: given an fd */
	int fd;	  /* restore: crf restore's */
} ext[MAX_EXT];
static size_t n_ext;

static struct ext *find(const char *kind, uint64_t id)
{
	for (size_t i = 0; i < n_ext; i++)
		if (!strcmp(ext[i].kind, kind) && ext[i].id == id)
			return &ext[i];
	return NULL;
}

bool ns_external_id(const char *kind, uint64_t id)
{
	return find(kind, id) != NULL;
}

const char *ns_external_key(const char *kind, uint64_t id)
{
	struct ext *e = find(kind, id);

	return e ? e->key : NULL;
}

/* Dump-prepare: the words "KIND:INODE:KEY" of external-ns. */
int ns_external_load(struct crf_ctx *ctx)
{
	const char *v = crf_ctx_config(ctx, "external-ns");
	char *copy = v ? strdup(v) : NULL, *save = NULL;
	int r = 0;

	n_ext = 0;
	if (v && !copy)
		return crf_error_errno(ENOMEM, "external-ns");
	for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w && r >= 0;
	     w = strtok_r(NULL, " \t", &save)) {
		char kind[16];
		unsigned long long id;
		int n = 0;

		if (sscanf(w, "%15[a-z]:%llu:%n", kind, &id, &n) != 2 || !n || !w[n] ||
		    !nstype_of(kind) || strlen(w + n) >= sizeof(ext[0].key))
			r = crf_error_errno(EINVAL, "ns: external-ns '%s': not KIND:INODE:KEY", w);
		else if (find(kind, id))
			r = crf_error_errno(EINVAL, "--external %s[%llu]: given twice", kind, id);
		else if (n_ext == MAX_EXT)
			r = crf_error_errno(ENOSPC, "--external: more than %d namespaces", MAX_EXT);
		else
			ext[n_ext++] = (struct ext){.id = id, .fd = -1};
		if (r >= 0) {
			snprintf(ext[n_ext - 1].kind, sizeof(ext[0].kind), "%s", kind);
			snprintf(ext[n_ext - 1].key, sizeof(ext[0].key), "%s", w + n);
		}
	}
	free(copy);
	return r;
}

bool ns_external_match(const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;

	return ni && find(ni->kind, ni->id);
}

int ns_external_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct ext *e = find(ni->kind, ni->id);
	int fd, r;

	(void)ctx;
	if (!e)
		return crf_error_errno(EINVAL, "pid %d: %s is not external", (int)obj->pid,
				       obj->desc);
	if (ni->tid != obj->pid)
		return crf_error_errno(ENOTSUP,
				       "pid %d: thread %d is in external namespace %s, which its "
				       "process is not in",
				       (int)obj->pid, (int)ni->tid, obj->desc);
	fd = ns_open_of(obj, ni->kind);
	if (fd < 0)
		return fd;
	/* Joined as it is: a user namespace of the tree, made again, could not own it. */
	r = ns_check_owner(obj, fd);
	close(fd);
	if (r < 0)
		return r;
	if (!e->met)
		crf_info("namespace %s is external (key %s): not saved", obj->desc, e->key);
	e->met = true;
	return 0;
}

int ns_external_dump_finish(void)
{
	for (size_t i = 0; i < n_ext; i++)
		if (!ext[i].met)
			return crf_error_errno(ENOENT,
					       "--external %s[%" PRIu64 "]:%s: no process of the "
					       "tree is in %s:[%" PRIu64 "]",
					       ext[i].kind, ext[i].id, ext[i].key, ext[i].kind,
					       ext[i].id);
	return 0;
}

/* ---- restore ------------------------------------------------------------ */

int ns_external_need(const char *kind, uint64_t id, const char *key)
{
	struct ext *e = find(kind, id);

	if (e)
		return strcmp(e->key, key) ? crf_error_errno(EBADMSG,
							     "%s:[%" PRIu64 "] is external "
							     "with two keys, %s and %s",
							     kind, id, e->key, key)
					   : 0;
	if (!nstype_of(kind))
		return crf_error_errno(EBADMSG,
				       "%s:[%" PRIu64 "]: a %s namespace cannot be external", kind,
				       id, kind);
	if (n_ext == MAX_EXT)
		return crf_error_errno(ENOSPC, "more than %d external namespaces", MAX_EXT);
	ext[n_ext] = (struct ext){.id = id, .fd = -1};
	snprintf(ext[n_ext].kind, sizeof(ext[0].kind), "%s", kind);
	snprintf(ext[n_ext].key, sizeof(ext[0].key), "%s", key);
	n_ext++;
	return 0;
}

/* Restore-prepare, once ns_external_need() has seen every claim: each has its fd. */
int ns_external_check(struct crf_ctx *ctx)
{
	const char *v = crf_ctx_config(ctx, "inherit-fd");
	char *copy = v ? strdup(v) : NULL, *save = NULL;
	int r = 0;

	if (v && !copy)
		return crf_error_errno(ENOMEM, "inherit-fd");
	for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w && r >= 0;
	     w = strtok_r(NULL, " \t", &save)) {
		struct ext *e = NULL;
		int fd = -1, n = 0, type;

		if (sscanf(w, "fd[%d]:%n", &fd, &n) != 1 || !n || fd < 0 || !w[n]) {
			r = crf_error_errno(EINVAL, "--inherit-fd %s: not fd[N]:KEY", w);
			break;
		}
		for (size_t i = 0; i < n_ext && !e; i++)
			if (!strcmp(ext[i].key, w + n))
				e = &ext[i];
		type = ioctl(fd, NS_GET_NSTYPE);
		if (!e)
			r = crf_error_errno(ENOENT,
					    "--inherit-fd %s: the dump has no external namespace "
					    "of key %s",
					    w, w + n);
		else if (e->met)
			r = crf_error_errno(EINVAL, "--inherit-fd: key %s is given twice", w + n);
		else if (type < 0 || type != nstype_of(e->kind))
			r = crf_error_errno(EINVAL,
					    "--inherit-fd %s: fd %d is not a %s namespace, which "
					    "the dump's %s:[%" PRIu64 "] is",
					    w, fd, e->kind, e->kind, e->id);
		if (r < 0)
			break;
		e->met = true;
		e->fd = fd;
	}
	free(copy);
	for (size_t i = 0; r >= 0 && i < n_ext; i++)
		if (!ext[i].met)
			r = crf_error_errno(
				ENOENT,
				"%s namespace %s:[%" PRIu64 "] is external (crf dump "
				"--external %s[%" PRIu64 "]:%s): give crf restore "
				"--inherit-fd fd[N]:%s, N an fd of the namespace to join",
				ext[i].kind, ext[i].kind, ext[i].id, ext[i].kind, ext[i].id,
				ext[i].key, ext[i].key);
	return r;
}

/* In the restored process, right after its fork (claims.c): join the given one. */
int ns_external_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct ext *e = find(ni->kind, ni->id);

	(void)ctx;
	if (ni->inherited)
		return 0;
	if (!e || e->fd < 0)
		return crf_error_errno(EBADMSG, "pid %d: external namespace %s has no fd",
				       (int)obj->pid, obj->desc);
	if (setns(e->fd, nstype_of(ni->kind)) < 0)
		return crf_error_errno(errno,
				       "pid %d: cannot join the namespace of fd %d (key %s) for "
				       "external namespace %s",
				       (int)obj->pid, e->fd, e->key, obj->desc);
	return 0;
}
