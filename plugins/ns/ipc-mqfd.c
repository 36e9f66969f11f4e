// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open POSIX message queue fds: the "mqueue" fd kind, which the files
 * plugin names for an fd on an mqueue filesystem (fdtable.c) and hands to
 * this plugin, whose IPC namespaces hold the queues (ipc-mq.c).  Refused
 * at the dump, naming the fd and the queue: the files plugin makes a
 * description shared by several tasks (an fd inherited across fork) in
 * restore-prepare, before the restored IPC namespace exists, so the queue
 * could not be reopened there; and a queue of crf's own namespace, or one
 * unlinked since it was opened, is not saved at all.  The queue itself,
 * in an IPC namespace of the tree's, is restored with the namespace.
 */
#include <errno.h>

#include <crf/log.h>
#include <crf/plugin.h>

#include "ns.h"

int ns_mqfd_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	(void)ctx;
	return crf_error_errno(ENOTSUP,
			       "pid %d: fd %d: an open POSIX message queue (%s), which crf does "
			       "not restore yet",
			       (int)obj->pid, (int)obj->id, obj->desc ? obj->desc : "?");
}
