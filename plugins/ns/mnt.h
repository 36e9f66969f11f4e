/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mnt.h - what the files of the mount namespace handler share (mnt.c the
 * dump, mnt-restore.c the restore, mnt-tmpfs.c a tmpfs's contents,
 * mnt-info.c the mountinfo parser).  docs/ns-mnt.md says what is restored.
 */
#ifndef CRF_PLUGIN_NS_MNT_H
#define CRF_PLUGIN_NS_MNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/plugin.h>

/* One line of /proc/PID/mountinfo, its strings unescaped. */
struct mnt_line {
	unsigned int id, parent, major, minor;
	char *root, *mount_point, *opts, *fstype, *source, *super_opts;
	unsigned int shared, master; /* peer group and master group, 0 for none */
	bool unbindable;
};

struct mnt_table {
	struct mnt_line *v;
	size_t n;
	char *text; /* the lines point into it */
};

/* Parse @text (mountinfo, taken over: freed by mnt_table_free), parents first. 0 or -errno. */
int mnt_table_parse(char *text, struct mnt_table *t);
/* Read and parse the file @path. */
int mnt_table_read(const char *path, struct mnt_table *t);
/* The same, @path relative to directory @dirfd. */
int mnt_table_read_at(int dirfd, const char *path, struct mnt_table *t);
void mnt_table_free(struct mnt_table *t);
/* The line of mount @id, or NULL. */
const struct mnt_line *mnt_table_find(const struct mnt_table *t, unsigned int id);
/* The per-mount options of @opts as MOUNT_ATTR_* bits; -EINVAL on one not known. */
int mnt_opts_attr(const char *opts, uint64_t *attr);

/* mnt-tmpfs.c: the contents of the detached tmpfs mount @fd to @img; of @img to @fd. */
struct crf_img;
int mnt_tmpfs_save(int fd, const char *where, struct crf_img *img);
int mnt_tmpfs_fill(int fd, const char *where, struct crf_img *img);

/*
 * mnt-fs.c: 1 when the filesystem of @m (sysfs, mqueue) is the one of task
 * @pid's namespace of @kind ("net", "ipc"), 0 when not, or -errno.
 */
int mnt_fs_of_ns(pid_t pid, const char *kind, const struct mnt_line *m);
/* The same for the namespace file @path, relative to directory @dirfd. */
int mnt_fs_of_ns_at(int dirfd, const char *path, const struct mnt_line *m);
/* 1 when task @pid's namespace of @kind is crf's, 0 when not (or unknown). */
int mnt_ns_is_crf(pid_t pid, const char *kind);
/*
 * 0 when the directory of mount @fd (an O_PATH fd, kept) holds nothing but
 * @keep (NULL: nothing), else the refusal naming the @what found there.
 */
int mnt_fs_empty(int fd, const char *where, const char *keep, const char *what);
/* A mount root a bind of it can be made from again: "/" or "/a/b", no "." or ".." in it. */
bool mnt_root_ok(const char *root);

/* The handler of kind "mnt" (mnt.c, mnt-restore.c). */
int mnt_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int mnt_restore(struct crf_ctx *ctx, const struct crf_object *obj);

/*
 * The word "A:B" of the ns plugin's key external-mnt whose A is @a: B,
 * malloc'd, or NULL (none, or no memory: *@err says -ENOMEM).
 */
char *mnt_external(struct crf_ctx *ctx, const char *a, int *err);

/* The images: mnt-ID.img, and mnt-ID-MOUNT.img for tmpfs MOUNT's contents. */
void mnt_image(char *buf, size_t len, uint64_t ns, unsigned int mount);

#endif
