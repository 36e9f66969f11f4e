/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/cleanup.h - scope-bound cleanup for the core and plugins (ABI 1.5).
 *
 * A variable declared with one of the _cleanup_*_ attributes is freed or
 * closed when it goes out of scope, on every return path:
 *
 *	_cleanup_free_ char *path = NULL;
 *	_cleanup_close_ int fd = -1;
 *	_cleanup_fclose_ FILE *f = NULL;
 *	_cleanup_closedir_ DIR *d = NULL;
 *
 * TAKE_PTR(p) and TAKE_FD(fd) hand the value on and leave the variable empty
 * (NULL, -1), so that nothing is released: `return TAKE_FD(fd);`.  An image
 * has its own attribute, _cleanup_img_, in crf/image.h.
 *
 * Header only: nothing here is a libcrf symbol, so using it needs no newer
 * libcrf.  Initialise every such variable where it is declared.
 */
#ifndef CRF_CLEANUP_H
#define CRF_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void crf_freep(void *p)
{
	free(*(void **)p);
}

/* errno is kept: a cleanup runs after the call whose errno is reported. */
static inline void crf_closep(int *fd)
{
	int saved = errno;

	if (*fd >= 0)
		close(*fd);
	errno = saved;
}

static inline void crf_fclosep(FILE **f)
{
	int saved = errno;

	if (*f)
		fclose(*f);
	errno = saved;
}

static inline void crf_closedirp(DIR **d)
{
	int saved = errno;

	if (*d)
		closedir(*d);
	errno = saved;
}

#define _cleanup_free_	   __attribute__((cleanup(crf_freep)))
#define _cleanup_close_	   __attribute__((cleanup(crf_closep)))
#define _cleanup_fclose_   __attribute__((cleanup(crf_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(crf_closedirp)))

/* Take ownership out of a cleanup variable, leaving NULL behind. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _crf_p = (p);                                                        \
		(p) = NULL;                                                                        \
		_crf_p;                                                                            \
	})

/* The same for an fd, leaving -1 behind. */
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _crf_fd = (fd);                                                                \
		(fd) = -1;                                                                         \
		_crf_fd;                                                                           \
	})

#endif
