/* SPDX-License-Identifier: GPL-2.0-only */
/* validate.h - cgroup.img checked before the tree is forked. */
#ifndef CRF_PLUGIN_CGROUP_VALIDATE_H
#define CRF_PLUGIN_CGROUP_VALIDATE_H

struct crf_imgdir;

/*
 * Every record of cgroup.img in @dir (none: 0): a live process of the dump
 * once, its hierarchies once each, its threads once each and not the
 * leader, every path absolute without "." or ".." components.  0 or
 * -EBADMSG (logged: file, record, field).  Reads @dir only.
 */
int cgroup_validate(struct crf_imgdir *dir);
/*
 * cgprops.img in @dir (none: 0): each hierarchy once, its root and dirs
 * cgroup paths, every dir below the root and after its parent, every
 * setting one of the list (props.c), once.  0 or -EBADMSG (logged).
 */
int cgprops_validate(struct crf_imgdir *dir);

#endif
