/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * anonfd.h - eventfd, timerfd, signalfd, memfd and pidfd fds: what their
 * fdinfo says (anonfd-parse.c, pure), their dump (anonfd.c) and their
 * re-creation at restore (anonfd-restore.c).
 */
#ifndef CRF_PLUGIN_FILES_ANONFD_H
#define CRF_PLUGIN_FILES_ANONFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <crf/plugin.h>

struct Crf__Files__Fd;

/* The kind-specific lines of an fdinfo text. */
struct files_anon_info {
	uint64_t count;		    /* eventfd-count */
	bool semaphore;		    /* eventfd-semaphore */
	int clockid;		    /* clockid */
	uint64_t ticks;		    /* ticks */
	unsigned int settime_flags; /* settime flags (octal) */
	uint64_t sigmask;	    /* sigmask (hex) */
	int pid;		    /* Pid: -1 when the process is gone */
};

/*
 * Parse the lines of @text (an fdinfo text) that kind @kind ("eventfd",
 * "timerfd", "signalfd", "pidfd") prints; other kinds read none.  0, or
 * -EBADMSG when one is missing or malformed.
 */
int files_anon_parse(const char *kind, const char *text, struct files_anon_info *out);

/*
 * The numbers of "NSpid:" in @text (a status or pidfd fdinfo text), outer
 * namespace first, into @v (at most @max); their count, or -EBADMSG.
 */
int files_anon_parse_nspid(const char *text, int *v, int max);

/* The name of a memfd from its /proc link "/memfd:NAME (deleted)", or NULL. */
const char *files_memfd_name(const char *link, char *buf, size_t size);

/* The dump of an fd of these kinds (a record of files-PID.img). */
int files_anon_dump(struct crf_ctx *ctx, const struct crf_object *obj);

/* Whether @e is a record of these kinds. */
bool files_anon_is(const struct Crf__Files__Fd *e);

/*
 * Create the object of @e; our fd (O_CLOEXEC) or -errno (logged).  A memfd
 * saved with its dev and inode is the object "memfd:DEV:INODE" of
 * crf_rst_object (shared with the mem plugin's mapping of it), and the fd a
 * description of its own on it.
 */
int files_anon_create(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);

#endif
