/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unlinked.h - regular files opened and then unlinked (unlinked.c).
 */
#ifndef CRF_PLUGIN_FILES_UNLINKED_H
#define CRF_PLUGIN_FILES_UNLINKED_H

#include <stdbool.h>

#include <crf/plugin.h>

#include "files.h"

struct Crf__Files__Fd;

/* Whether a regular file's /proc link names an unlinked file ("... (deleted)"). */
bool files_unlinked_path(const char *path);

/*
 * Dump: save the content of the unlinked regular file behind fd @fd of the
 * task of @d into the blob image "unlinked-DEV-INODE.img" and point @e at
 * it (@e->unlinked, freed with files_unlinked_release()).  @e's dev, inode,
 * size and mode must be filled in.  Refuses a file that still has a name
 * elsewhere (st_nlink > 0).  0 or -errno (logged).
 */
int files_unlinked_save(struct crf_ctx *ctx, struct files_dump *d, int fd,
			struct Crf__Files__Fd *e);
void files_unlinked_release(struct Crf__Files__Fd *e);

/*
 * restore-task: a new unlinked file (O_TMPFILE) in the directory of the
 * dump's path, holding the saved content and mode, opened with @e's flags
 * and at its offset.  Our fd (O_CLOEXEC) or -errno (logged).
 */
int files_unlinked_create(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);

#endif
