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
 * The directory of an unlinked file's link ("/d/f (deleted)" -> "/d"),
 * malloc'd; NULL on ENOMEM.  @path must pass files_unlinked_path().
 */
char *files_unlinked_dir(const char *path);

/*
 * Dump: save the unlinked regular file behind fd @fd of the task of @d,
 * once per file of the tree (by device and inode): its data extents in
 * the blob image "unlinked-DEV-INODE.img", the rest in unlinked.img at
 * dump-finish.  Point @e at it (@e->unlinked, freed with
 * files_unlinked_release()); @e's flags and path must be filled in.
 * Refuses a file that still has a name elsewhere (st_nlink > 0).  0 or
 * -errno (logged).
 */
int files_unlinked_save(struct crf_ctx *ctx, struct files_dump *d, int fd,
			struct Crf__Files__Fd *e);
void files_unlinked_release(struct Crf__Files__Fd *e);
/* dump-finish: write unlinked.img; 0 or -errno (logged). */
int files_unlinked_dump_finish(struct crf_ctx *ctx);
void files_unlinked_free(struct files_unlinked *u);

struct Crf__Files__UnlinkedFile;
struct Crf__Files__Xattr;

/*
 * Extended attributes and inode flags of an unlinked file (unlinked-attr.c),
 * named @what in messages.  The dump reads those of @fd into @m (xattrs,
 * inode_flags), refusing an immutable or append-only file; the restore
 * sets @rec's xattrs (after the mode) and inode flags (last).  0 or
 * -errno (logged).
 */
int files_unlinked_attrs_read(int fd, const char *what, struct Crf__Files__UnlinkedFile *m);
void files_unlinked_attrs_free(struct Crf__Files__Xattr **v, size_t n);
int files_unlinked_xattrs_set(int fd, const char *what, const struct Crf__Files__UnlinkedFile *rec);
int files_unlinked_iflags_set(int fd, const char *what, const struct Crf__Files__UnlinkedFile *rec);

/*
 * restore-prepare: make every file of unlinked.img once, in crf's top
 * process, for the tasks to inherit (unlinked-restore.c); 0 or -errno
 * (logged).
 */
int files_unlinked_restore_prepare(struct crf_ctx *ctx);

/*
 * restore-task (and restore-prepare, for a description shared between
 * tasks): the description of @e on its file, opened with @e's flags and at
 * its offset.  Our fd (O_CLOEXEC) or -errno (logged).
 */
int files_unlinked_create(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);

#endif
