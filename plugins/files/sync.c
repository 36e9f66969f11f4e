// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the program wrote through its fds must be on disk when the dump is
 * (the image keeps only offsets, not the bytes).  An fsync of every
 * writable description costs one journal commit each while the tree is
 * frozen; instead the dump keeps one fd per filesystem the tree writes to
 * (a copy of the first writable regular fd met there) and dump-finish,
 * the tree still frozen, issues one syncfs(2) on each: everything dirty on
 * that filesystem, the tree's writes among it, reaches the disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/log.h>

#include "files.h"

struct files_syncs {
	size_t n, cap;
	struct {
		dev_t dev;
		int fd;
		char *path; /* for messages: the file whose fd it is */
	} * fs;
};

int files_sync_note(struct files_dump *d, int copy, dev_t dev, const char *path)
{
	struct files_syncs *s = d->tree->syncs;
	int fd;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return crf_error_errno(ENOMEM, "files");
		d->tree->syncs = s;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->fs[i].dev == dev)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		void *p = reallocarray(s->fs, cap, sizeof(*s->fs));

		if (!p)
			return crf_error_errno(ENOMEM, "files");
		s->fs = p;
		s->cap = cap;
	}
	fd = fcntl(copy, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return crf_error_errno(errno, "pid %d: dup of fd %d (%s)", d->pid, d->cur_fd, path);
	s->fs[s->n].path = strdup(path);
	if (!s->fs[s->n].path) {
		close(fd);
		return crf_error_errno(ENOMEM, "files");
	}
	s->fs[s->n].dev = dev;
	s->fs[s->n++].fd = fd;
	return 0;
}

int files_syncs_dump_finish(struct crf_ctx *ctx)
{
	struct files_tree *tree = files_tree_get(ctx);
	struct files_syncs *s = tree ? tree->syncs : NULL;

	if (!tree)
		return -ENOMEM;
	for (size_t i = 0; s && i < s->n; i++) {
		if (syncfs(s->fs[i].fd) < 0)
			return crf_error_errno(errno, "syncfs of the filesystem of %s",
					       s->fs[i].path);
		crf_debug("synced the filesystem of %s", s->fs[i].path);
	}
	return 0;
}

void files_syncs_free(struct files_syncs *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		close(s->fs[i].fd);
		free(s->fs[i].path);
	}
	free(s->fs);
	free(s);
}
