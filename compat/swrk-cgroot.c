// SPDX-License-Identifier: GPL-2.0-only
/*
 * RESTORE's cg_root, CRIU's meaning in crf's terms.  CRIU's new root takes
 * the place of the cgroup the tree's root task was in; crf restore
 * --cgroup-root moves the dump's Hierarchy.root (the cgroup the tree's
 * cgroups branch off from crf dump's own, docs/cgroup.md), the tree's
 * cgroups keeping their place below it.  So per hierarchy, with R the
 * dump's root and T = R + S the root task's cgroup, CRIU's NEW is crf's
 * NEW less S, when NEW ends with S; otherwise the request cannot be done
 * exactly and is refused by name.  A hierarchy the dump has no cgroup in
 * takes no root (CRIU ignores one too).  What the dump holds is read with
 * crf show (its JSON), the same decoding a person sees.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compat.h"
#include "swrk-cgroot.h"

/* The JSON string after @key ("\"root\": ") at @p, into @out; NULL when absent or escaped. */
static const char *json_str(const char *p, const char *end, const char *key, char *out, size_t len)
{
	const char *k = strstr(p, key), *q;

	if (!k || k >= end)
		return NULL;
	k += strlen(key);
	q = strchr(k, '"');
	if (!q || q >= end || memchr(k, '\\', (size_t)(q - k)) || (size_t)(q - k) >= len)
		return NULL;
	memcpy(out, k, (size_t)(q - k));
	out[q - k] = '\0';
	return q + 1;
}

/* crf show DIR IMAGES... in this process, its output into a memfd; NULL-terminated text. */
static char *show(const char *dir)
{
	struct strv argv = {0};
	int mfd = memfd_create("crf-swrk-show", MFD_CLOEXEC), saved = -1, status;
	char *text = NULL;
	off_t len;

	if (mfd < 0)
		return NULL;
	if (strv_push(&argv, "show") < 0 || strv_push(&argv, "--quiet") < 0 ||
	    strv_push(&argv, dir) < 0 || strv_push(&argv, "pstree.img") < 0 ||
	    strv_push(&argv, "cgprops.img") < 0 || strv_push(&argv, "cgroup.img") < 0)
		goto out;
	fflush(stdout);
	saved = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (saved < 0 || dup2(mfd, 1) < 0)
		goto out;
	status = compat_run(&argv);
	fflush(stdout);
	dup2(saved, 1);
	if (status != CRF_EXIT_OK)
		goto out;
	len = lseek(mfd, 0, SEEK_END);
	if (len < 0 || !(text = calloc(1, (size_t)len + 1)) ||
	    pread(mfd, text, (size_t)len, 0) != len) {
		free(text);
		text = NULL;
	}
out:
	if (saved >= 0)
		close(saved);
	close(mfd);
	strv_free(&argv);
	return text;
}

/* The line of crf show's output for @file. */
static const char *image_line(const char *text, const char *file, const char **end)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "{\"file\": \"%s\"", file);
	p = strstr(text, key);
	if (!p)
		return NULL;
	*end = strchr(p, '\n');
	if (!*end)
		*end = p + strlen(p);
	return p;
}

/* The root task's cgroup in hierarchy @ctl, from cgroup.img's line. */
static bool task_cgroup(const char *line, const char *end, long root, const char *ctl, char *out,
			size_t len)
{
	char key[48], c[256];
	const char *p, *stop;

	snprintf(key, sizeof(key), "{\"pid\": %ld, \"members\": [", root);
	p = strstr(line, key);
	if (!p || p >= end)
		return false;
	stop = strstr(p, "\"threads\"");
	if (!stop || stop > end)
		stop = end;
	while ((p = json_str(p, stop, "\"controllers\": \"", c, sizeof(c)))) {
		p = json_str(p, stop, "\"path\": \"", out, len);
		if (!p)
			return false;
		if (!strcmp(c, ctl))
			return true;
	}
	return false;
}

/* @ctl (CRIU's, from /proc/PID/cgroup: "cpu,cpuacct", "name=systemd", "" for v2) names @h? */
static bool names(const char *ctl, const char *h)
{
	size_t len = strlen(ctl);

	if (!strcmp(ctl, h))
		return true;
	for (const char *p = h; *ctl && *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, ctl, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

int swrk_cg_roots(const CriuOpts *o, const char *dir, struct strv *argv, char *why, size_t len)
{
	_cleanup_free_ char *text = NULL;
	const char *pst, *pst_end, *props, *props_end, *cg, *cg_end, *p;
	char ctl[256], root[4096], task[4096];
	long root_pid;
	int r = 0;

	if (!o->n_cg_root)
		return 0;
	text = show(dir);
	if (!text) {
		snprintf(why, len, "cannot read the dump's cgroups (crf show %s failed)", dir);
		return -EIO;
	}
	pst = image_line(text, "pstree.img", &pst_end);
	props = image_line(text, "cgprops.img", &props_end);
	cg = image_line(text, "cgroup.img", &cg_end);
	if (!props || !cg)
		return 0; /* no cgroups saved: nothing to place */
	p = pst ? strstr(pst, "\"records\": [{\"pid\": ") : NULL;
	if (!p || p > pst_end || sscanf(p, "\"records\": [{\"pid\": %ld", &root_pid) != 1) {
		snprintf(why, len, "cannot read the dump's root task from pstree.img");
		return -EIO;
	}
	/* Each hierarchy of the dump: its controllers and root. */
	for (p = props;
	     r >= 0 && (p = json_str(p, props_end, "{\"controllers\": \"", ctl, sizeof(ctl)));) {
		const CgroupRoot *want = NULL;
		size_t slen;
		const char *s;

		p = json_str(p, props_end, "\"root\": \"", root, sizeof(root));
		if (!p)
			break;
		for (size_t i = 0; i < o->n_cg_root && !want; i++)
			if (o->cg_root[i]->ctrl && names(o->cg_root[i]->ctrl, ctl))
				want = o->cg_root[i];
		for (size_t i = 0; i < o->n_cg_root && !want; i++)
			if (!o->cg_root[i]->ctrl)
				want = o->cg_root[i];
		if (!want || !task_cgroup(cg, cg_end, root_pid, ctl, task, sizeof(task)))
			continue;
		/* S: the root task's cgroup below the dump's root. */
		s = !strcmp(root, "/") ? task : task + strlen(root);
		if (!strcmp(task, root))
			s = "";
		slen = strlen(s);
		if (strlen(want->path) < slen ||
		    strcmp(want->path + strlen(want->path) - slen, s)) {
			/* Another name (podman restore --name): the task's cgroup itself moves. */
			_cleanup_free_ char *to = NULL, *from = NULL;

			to = xasprintf("--cgroup-root=%s:%s", ctl[0] ? ctl : "v2", want->path);
			from = xasprintf("--cgroup-root-from=%s:%s", ctl[0] ? ctl : "v2", task);
			r = to && from ? strv_push(argv, to) : -ENOMEM;
			if (r >= 0)
				r = strv_push(argv, from);
			continue;
		}
		{
			_cleanup_free_ char *word = NULL;
			size_t keep = strlen(want->path) - slen;

			word = xasprintf("--cgroup-root=%s:%.*s", ctl[0] ? ctl : "v2",
					 keep ? (int)keep : 1, keep ? want->path : "/");
			r = word ? strv_push(argv, word) : -ENOMEM;
		}
	}
	if (r < 0)
		snprintf(why, len, "out of memory");
	return r;
}
