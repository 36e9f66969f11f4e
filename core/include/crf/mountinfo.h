/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/mountinfo.h - finding cgroup hierarchies in /proc/PID/mountinfo text.
 * The core's cgroup freezer and the cgroup plugin both need it (ABI 1.3;
 * crf_cgroup_dir_from_mountinfo: ABI 1.4).
 */
#ifndef CRF_MOUNTINFO_H
#define CRF_MOUNTINFO_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Find a mount of filesystem type cgroup2 in @f, text in the format of
 * /proc/PID/mountinfo, and copy its mount point, with the kernel's octal
 * escapes undone, to @path.  A mount of the hierarchy's root ("/") is
 * preferred to a bind mount of a subtree; among equals the first one wins.
 *
 * Returns 0; -ENOENT when there is no cgroup2 mount; -EINVAL on a line that
 * is not a mountinfo line; -ENAMETOOLONG when the mount point does not fit in
 * @len bytes; -EIO when @f cannot be read.  @path is meaningful only on 0.
 * Logs nothing: the caller says what the failure means to it.
 */
int crf_cgroup2_mount_from_mountinfo(FILE *f, char *path, size_t len);

/*
 * The directory of the cgroup @path of one hierarchy, from @f (mountinfo
 * text): with @controllers "" the cgroup v2 hierarchy, else the v1
 * hierarchy mounted with each of the comma-separated @controllers among
 * its superblock options.  @controllers and @path are the second and third
 * fields of a /proc/PID/cgroup line ("cpu,cpuacct", "name=systemd"; "/a/b").
 * The first mount whose root holds @path is used (the part of @path below
 * the root is appended to its mount point); mount points and roots have
 * the kernel's octal escapes undone.  (ABI 1.4)
 *
 * Returns 0; -ENOENT when the hierarchy is not mounted; -EXDEV when it is,
 * but no mount's root holds @path; -EINVAL on a line that is not a
 * mountinfo line; -ENAMETOOLONG when the directory does not fit in @len
 * bytes; -EIO when @f cannot be read.  Logs nothing.
 */
int crf_cgroup_dir_from_mountinfo(FILE *f, const char *controllers, const char *path, char *dir,
				  size_t len);

#ifdef __cplusplus
}
#endif

#endif
