/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * userns.h - what userns.c (dump) and userns-restore.c share.
 */
#ifndef CRF_PLUGIN_NS_USERNS_H
#define CRF_PLUGIN_NS_USERNS_H

#include <stddef.h>
#include <stdint.h>

#define MAX_EXTENTS 340 /* the kernel's limit per map */

/* "userns-ID.img" into @buf. */
void userns_image_name(char *buf, size_t len, uint64_t id);
/* The inode of @fd or @path; 0 or -errno. */
int userns_fd_inode(int fd, uint64_t *ino);
int userns_path_inode(const char *path, uint64_t *ino);
/* The text of @path (a /proc file) into @buf; 0 or -errno. */
int userns_read_text(const char *path, char *buf, size_t len);
/* The setns() flag of a kind a restored user namespace may own (mnt...), or 0. */
int userns_inside_flag(const char *kind);

#endif
