/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What crf and the parasite blob agree on: the layout of the parasite's
 * mapping in the target, the command codes, and the argument block of each
 * command.  Only fixed-size integers, so the same header compiles in crf
 * (hosted) and in the freestanding blob.
 *
 * The mapping, created by an mmap crf makes the stopped task run:
 *
 *	[ blob (R-X) | stack (RW) | args (RW) | scratch (RW) ]
 *
 * The stack sits right above the blob so that an overflow faults on the
 * read-only text instead of silently corrupting the arguments.
 *
 * One call: crf writes struct crf_psite_args into the args area, points
 * the thread at the blob's first byte with %rdi = command and %rsi = the
 * args area, and lets it run until the int3 the entry ends with.  The
 * command's result (0, a value, or a negative errno) is in %rax.
 */
#ifndef CRF_PARASITE_ABI_H
#define CRF_PARASITE_ABI_H

#include <stdint.h>

#include <crf/layout.h>

#define CRF_PSITE_PAGE	       4096u
#define CRF_PSITE_BLOB_MAX     (16u << 10) /* the size budget the build checks */
#define CRF_PSITE_STACK_SIZE   (32u << 10)
#define CRF_PSITE_ARGS_SIZE    (16u << 10)
#define CRF_PSITE_SCRATCH_SIZE (256u << 10)

#define CRF_PSITE_NSIG	     64
#define CRF_PSITE_MAX_TIMERS 256

enum crf_psite_cmd {
	CRF_PSITE_SYSCALL = 1,	  /* nr + 6 args; returns the kernel's %rax */
	CRF_PSITE_GET_SIGACTIONS, /* all 64 dispositions; 0 or -errno */
	CRF_PSITE_GET_SIGALTSTACK,
	CRF_PSITE_GET_ITIMERS,	    /* ITIMER_REAL, _VIRTUAL, _PROF */
	CRF_PSITE_GET_POSIX_TIMERS, /* values and overruns of the given ids */
	CRF_PSITE_GET_SECUREBITS,   /* returns prctl(PR_GET_SECUREBITS) */
};

/* The kernel's struct sigaction on x86-64 (not glibc's). */
struct crf_psite_sigaction {
	uint64_t handler, flags, restorer, mask;
};

/* The kernel's stack_t on x86-64. */
struct crf_psite_stack {
	uint64_t sp;
	int32_t flags, pad;
	uint64_t size;
};

struct crf_psite_timespec {
	int64_t sec, nsec;
};

struct crf_psite_timer {
	int32_t id;	 /* in */
	int32_t overrun; /* out: timer_getoverrun, or -errno */
	int64_t err;	 /* out: 0 or timer_gettime's -errno */
	struct crf_psite_timespec interval, value;
};

struct crf_psite_args {
	/*
	 * When the task ignores SIGTRAP, the int3 that ends each call makes
	 * the kernel reset SIGTRAP to SIG_DFL (a forced signal may not be
	 * ignored).  The entry then first puts @sigtrap back, so that the
	 * task's code and what a command reads see the disposition unchanged.
	 */
	uint32_t restore_sigtrap;
	uint32_t pad;
	struct crf_psite_sigaction sigtrap;

	union {
		struct {
			int64_t nr;
			int64_t args[6];
		} sys;
		struct crf_psite_sigaction sa[CRF_PSITE_NSIG]; /* sa[sig - 1] */
		struct crf_psite_stack ss;
		struct {
			int64_t sec, usec; /* interval, then value */
		} itimer[CRF_ITIMERS][2];
		struct {
			uint32_t n;
			uint32_t pad;
			struct crf_psite_timer t[CRF_PSITE_MAX_TIMERS];
		} timers;
	};
};

_Static_assert(sizeof(struct crf_psite_args) <= CRF_PSITE_ARGS_SIZE, "args overflow");

#endif
