/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unlinked.h - regular files opened and then unlinked, and O_TMPFILE files
 * never linked (unlinked.c).
 */
#ifndef CRF_PLUGIN_FILES_UNLINKED_H
#define CRF_PLUGIN_FILES_UNLINKED_H

#include <stdbool.h>

#include <crf/plugin.h>

#include "files.h"

struct Crf__Files__Fd;

/*
 * The bit of O_TMPFILE besides O_DIRECTORY (the kernel's __O_TMPFILE;
 * glibc's __O_TMPFILE includes O_DIRECTORY), which stays in the flags of a
 * description opened with O_TMPFILE.
 */
#define FILES_O_TMPFILE_BIT 020000000

/*
 * Whether a regular file's /proc link names an unlinked file ("... (deleted)",
 * "/dir/#INODE (deleted)" for an O_TMPFILE file).
 */
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
 * restore-task (and restore-prepare, for a description shared between
 * tasks): a new file without a name (O_TMPFILE) in the directory of the
 * dump's path, holding the saved content and mode, opened with @e's flags
 * and at its offset.  One made with O_TMPFILE comes back as such (it can
 * be linked), one unlinked after it had a name comes back unlinkable.
 * Our fd (O_CLOEXEC) or -errno (logged).
 */
int files_unlinked_create(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);

#endif
