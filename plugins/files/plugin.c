// SPDX-License-Identifier: GPL-2.0-only
/* The files plugin's descriptor. */
#include <crf/plugin.h>

#include "anonfd.h"
#include "epoll.h"
#include "files.h"
#include "files.pb-c.h"
#include "tty.h"

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "files",
	.version = "0.1.0",
	.description = "the fd table and fd kinds: files, pipes, FIFOs, eventfd, epoll, memfd, ttys...",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = files_probe,
		[CRF_STAGE_DUMP_TASK_DATA] = files_dump_task,
		[CRF_STAGE_DUMP_FINISH] = files_dump_finish,
		[CRF_STAGE_DUMP_CLEANUP] = files_cleanup,
		[CRF_STAGE_RESTORE_PREPARE] = files_restore_prepare,
		[CRF_STAGE_RESTORE_PREMAP] = files_shared_restore_premap,
		[CRF_STAGE_RESTORE_TASK] = files_restore_task,
		[CRF_STAGE_RESTORE_FINISH] = files_ttys_restore_finish,
		[CRF_STAGE_RESTORE_CLEANUP] = files_cleanup,
		[CRF_STAGE_RESTORE_SESSION] = files_tty_restore_session,
	),
	/* "stdio": the walk's name for fds 0-2 that are not terminals, with --inherit-stdio. */
	.kinds = CRF_KINDS(
		/* The fd table itself, which the core dispatches: walked by dump-task. */
		{ .cls = CRF_OBJ_FDTABLE, .name = "fdtable" },
		{ .cls = CRF_OBJ_FD, .name = "tty", .match = files_is_tty,
		  .dump = files_tty_dump,
		  .restore = files_tty_restore },
		{ .cls = CRF_OBJ_FD, .name = "stdio", .dump = files_stdio_dump,
		  .restore = files_stdio_restore },
		{ .cls = CRF_OBJ_FD, .name = "file", .dump = files_regfile_dump,
		  .restore = files_regfile_restore },
		{ .cls = CRF_OBJ_FD, .name = "dir", .dump = files_regfile_dump,
		  .restore = files_regfile_restore },
		{ .cls = CRF_OBJ_FD, .name = "symlink", .dump = files_regfile_dump,
		  .restore = files_regfile_restore },
		{ .cls = CRF_OBJ_FD, .name = "opath", .dump = files_regfile_dump,
		  .restore = files_regfile_restore },
		{ .cls = CRF_OBJ_FD, .name = "chr-mem", .match = files_is_plain_chr,
		  .dump = files_regfile_dump,
		  .restore = files_regfile_restore },
		{ .cls = CRF_OBJ_FD, .name = "eventfd", .dump = files_anon_dump,
		  .restore = files_anon_restore },
		{ .cls = CRF_OBJ_FD, .name = "timerfd", .dump = files_anon_dump,
		  .restore = files_anon_restore },
		{ .cls = CRF_OBJ_FD, .name = "signalfd", .dump = files_anon_dump,
		  .restore = files_anon_restore },
		{ .cls = CRF_OBJ_FD, .name = "memfd", .dump = files_anon_dump,
		  .restore = files_anon_restore },
		{ .cls = CRF_OBJ_FD, .name = "pidfd", .dump = files_anon_dump,
		  .restore = files_anon_restore },
		{ .cls = CRF_OBJ_FD, .name = "eventpoll", .dump = files_epoll_dump,
		  .restore = files_epoll_restore },
		{ .cls = CRF_OBJ_FD, .name = "inotify", .dump = files_inotify_dump,
		  .restore = files_inotify_restore },
		{ .cls = CRF_OBJ_FD, .name = "pipe", .dump = files_pipe_dump,
		  .restore = files_pipe_restore },
		{ .cls = CRF_OBJ_FD, .name = "fifo", .dump = files_pipe_dump,
		  .restore = files_pipe_restore }
	),
	/*
	 * shell-job: dump an external terminal as such, restore it as crf
	 * restore's (tty.c); the others: what lies outside the tree
	 * (external.c) and how changed files are judged (restore.c).
	 */
	.config_keys = CRF_STRINGS("shell-job", "inherit-stdio", "external", "inherit-fd",
				   "file-validation"),
	.schemas = CRF_SCHEMAS(&crf__files__fd__descriptor, &crf__files__pipe__descriptor,
			       &crf__files__shared_fd__descriptor, &crf__files__tty__descriptor,
			       &crf__files__external__descriptor,
			       &crf__files__unlinked_file__descriptor),
);
/* clang-format on */
