/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * epoll.h - epoll (epoll.c) and inotify (inotify.c) fds: the registrations
 * and watches their fdinfo lists, saved in the fd's record and made again
 * at restore.
 */
#ifndef CRF_PLUGIN_FILES_EPOLL_H
#define CRF_PLUGIN_FILES_EPOLL_H

#include <stddef.h>
#include <stdint.h>

#include <crf/plugin.h>

struct Crf__Files__Fd;

/* A number of the restored task and our fd (O_CLOEXEC) on its description. */
struct files_opened_fd {
	int number, fd;
};

/* The "eventpoll" and "inotify" kinds' dump handlers. */
int files_epoll_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int files_inotify_dump(struct crf_ctx *ctx, const struct crf_object *obj);

/* A new epoll (inotify) instance for @e, empty (with its watches); our fd or -errno (logged). */
int files_epoll_create(const struct Crf__Files__Fd *e);
int files_inotify_create(const struct Crf__Files__Fd *e);

/*
 * Register the targets of the epoll records @eps (@n_eps of them), once
 * every fd of the task is open: @fds maps each saved number to our fd on
 * its description.  0 or -errno (logged).
 */
int files_epoll_register(const struct Crf__Files__Fd *const *eps, size_t n_eps,
			 const struct files_opened_fd *fds, size_t n_fds);

#endif
