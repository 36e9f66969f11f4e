// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel objects plugins share by a key during a restore
 * (crf_rst_object): a memfd that the files plugin restores as an fd and the
 * mem plugin as a mapping must be one memfd, or a write through the fd is
 * not seen in the mapping.  Whichever plugin comes first makes it; the
 * table keeps one fd on it and gives the others dups.
 *
 * The table lives in crf's memory: filled in the top process during
 * restore-prepare, it is copied into every task forked after, with its
 * fds; what a task adds in restore-task stays in that task.  Kept sorted
 * by key, so that a tree with thousands of objects finds each in log n.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crf-private.h"

/* The index of @key in @o, or of where it would go; *@found says which. */
static size_t find(const struct crf_objects *o, const char *key, bool *found)
{
	size_t lo = 0, hi = o->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(o->v[mid].key, key);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Keep @fd as object @key at index @at; 0 or -errno (logged), @fd kept by the caller. */
static int insert(struct crf_objects *o, size_t at, const char *key, int fd)
{
	char *k = strdup(key);

	if (k && o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 16;
		struct crf_object_ent *v = reallocarray(o->v, cap, sizeof(*v));

		if (!v) {
			free(k);
			k = NULL;
		} else {
			o->v = v;
			o->cap = cap;
		}
	}
	if (!k)
		return crf_error_errno(ENOMEM, "object %s", key);
	memmove(o->v + at + 1, o->v + at, (o->n - at) * sizeof(*o->v));
	o->v[at] = (struct crf_object_ent){.key = k, .fd = fd};
	o->n++;
	return 0;
}

int crf__objects_get(struct crf_objects *o, const char *key, int (*create)(void *arg), void *arg,
		     bool *created)
{
	bool found;
	size_t at;
	int fd, copy, r;

	if (!key || !create)
		return crf_error_errno(EINVAL, "a shared object: no key or no way to create it");
	at = find(o, key, &found);
	if (found) {
		copy = fcntl(o->v[at].fd, F_DUPFD_CLOEXEC, 3);
		if (copy < 0)
			return crf_error_errno(errno, "object %s: dup", key);
		if (created)
			*created = false;
		return copy;
	}
	fd = create(arg);
	if (fd < 0)
		return fd;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (copy < 0) {
		r = crf_error_errno(errno, "object %s: dup", key);
		close(fd);
		return r;
	}
	r = insert(o, at, key, fd);
	if (r < 0) {
		close(fd);
		close(copy);
		return r;
	}
	if (created)
		*created = true;
	return copy;
}

void crf__objects_free(struct crf_objects *o)
{
	for (size_t i = 0; i < o->n; i++) {
		close(o->v[i].fd);
		free(o->v[i].key);
	}
	free(o->v);
	*o = (struct crf_objects){0};
}
