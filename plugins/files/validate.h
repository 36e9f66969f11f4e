/* SPDX-License-Identifier: GPL-2.0-only */
/* validate.h - the files plugin's images checked before the tree is forked. */
#ifndef CRF_PLUGIN_FILES_VALIDATE_H
#define CRF_PLUGIN_FILES_VALIDATE_H

struct crf_imgdir;

/*
 * Every record of pipes.img, ttys.img, unlinked.img and shared-fds.img (in
 * index order; shared descriptions of live processes, once each) and of
 * every files-PID.img of @dir (a live process of the dump; fd numbers in
 * increasing order below fs.nr_open; a dup of an earlier fd, a shared one
 * listed in shared-fds.img; pipe, pipe description, terminal and unlinked
 * file indexes in range; every fd an epoll registration watches one of
 * the table).  Reads @dir only.  0 or -errno (logged: file, record, field).
 */
int files_validate(struct crf_imgdir *dir);

#endif
