// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dump-side parasite: freestanding code that runs inside the frozen
 * target, one command per call (see crf-parasite-abi.h and docs/parasite.md).
 * It reads what only the task itself can read and runs system calls for
 * plugins.  No libc, no globals, no function pointers: nothing that would
 * need a relocation in a blob loaded at an address chosen by the kernel.
 */
#include <stddef.h>
#include <stdint.h>

#include "crf-parasite-abi.h"
#include "crf-syscall.h"

#define PR_GET_SECUREBITS 27
#define SIGTRAP		  5

long parasite_main(long cmd, struct crf_psite_args *a);

/*
 * gcc may emit calls to these for struct copies and zeroing even in
 * freestanding code.  The loops are written so that they do not turn into
 * calls to themselves (the blob is built with
 * -fno-tree-loop-distribute-patterns).
 */
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

static long get_sigactions(struct crf_psite_args *a)
{
	for (int sig = 1; sig <= CRF_PSITE_NSIG; sig++) {
		long r = sys4(__NR_rt_sigaction, sig, 0, &a->sa[sig - 1], 8);

		if (r < 0)
			return r;
	}
	return 0;
}

static long get_itimers(struct crf_psite_args *a)
{
	for (int which = 0; which < CRF_ITIMERS; which++) {
		long r = sys2(__NR_getitimer, which, a->itimer[which]);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Per timer: an id that vanished is reported in its slot, not as a failure. */
static long get_posix_timers(struct crf_psite_args *a)
{
	uint32_t n = a->timers.n;

	if (n > CRF_PSITE_MAX_TIMERS)
		return -22; /* EINVAL */
	for (uint32_t i = 0; i < n; i++) {
		struct crf_psite_timer *t = &a->timers.t[i];

		t->err = sys2(__NR_timer_gettime, t->id, &t->interval);
		t->overrun = (int32_t)sys1(__NR_timer_getoverrun, t->id);
	}
	return 0;
}

long parasite_main(long cmd, struct crf_psite_args *a)
{
	if (a->restore_sigtrap)
		sys4(__NR_rt_sigaction, SIGTRAP, &a->sigtrap, 0, 8);

	switch (cmd) {
	case CRF_PSITE_SYSCALL:
		return sys6(a->sys.nr, a->sys.args[0], a->sys.args[1], a->sys.args[2],
			    a->sys.args[3], a->sys.args[4], a->sys.args[5]);
	case CRF_PSITE_GET_SIGACTIONS:
		return get_sigactions(a);
	case CRF_PSITE_GET_SIGALTSTACK:
		return sys2(__NR_sigaltstack, 0, &a->ss);
	case CRF_PSITE_GET_ITIMERS:
		return get_itimers(a);
	case CRF_PSITE_GET_POSIX_TIMERS:
		return get_posix_timers(a);
	case CRF_PSITE_GET_SECUREBITS:
		return sys1(__NR_prctl, PR_GET_SECUREBITS);
	}
	return -38; /* ENOSYS */
}
