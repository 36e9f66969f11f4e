/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * files.h - what the files of the files plugin share.
 */
#ifndef CRF_PLUGIN_FILES_H
#define CRF_PLUGIN_FILES_H

#include <crf/image.h>
#include <crf/plugin.h>

/* The fd table of one task being dumped (the plugin's private pointer meanwhile). */
struct files_dump {
	struct crf_img *img; /* files-PID.img */
	int pid, pidfd;
	int *seen; /* fds saved with a description of their own, for kcmp */
	size_t n_seen;
};

/* The probe hook: taking fds from a task, comparing them, reading their state. */
int files_probe(struct crf_ctx *ctx);

/* dump-task: walk the fd table, handing each fd to its kind's handler. */
int files_dump_task(struct crf_ctx *ctx);

/* The "stdio" kind: fds 0-2, connected to crf restore's own at restore. */
bool files_is_stdio(const struct crf_object *obj);
int files_stdio_dump(struct crf_ctx *ctx, const struct crf_object *obj);

/*
 * Regular files, directories and /dev/{null,zero,random,urandom}: saved by
 * path, flags and offset in files-PID.img (regfile.c), reopened at restore
 * (restore.c).
 */
bool files_is_plain_chr(const struct crf_object *obj);
int files_regfile_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int files_restore_task(struct crf_ctx *ctx);

#endif
