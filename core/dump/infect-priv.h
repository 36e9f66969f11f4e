/* SPDX-License-Identifier: GPL-2.0-only */
/* infect-priv.h - what infect.c and parasite-cmd.c share about an infection. */
#ifndef CRF_INFECT_PRIV_H
#define CRF_INFECT_PRIV_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "crf-parasite-abi.h"
#include "infect.h"
#include "ptrace.h"

struct crf_parasite {
	pid_t pid;	       /* the infected thread (the leader) */
	int mem_fd;	       /* /proc/PID/mem */
	struct crf_regs saved; /* as found: put back by the cure */
	bool regs_saved;
	bool exitkill; /* PTRACE_O_EXITKILL is on */
	bool moved;    /* the thread ran since the freeze */

	uint64_t sigmask; /* the thread's own blocked mask */
	bool mask_set;	  /* the parasite's mask is in place */

	uint64_t code;	      /* where bootstrap system calls run */
	uint8_t code_orig[2]; /* the task's bytes there */

	uint64_t area; /* the parasite's mapping; 0: none */
	size_t area_len, text_len;
	uint64_t stack_top, args, scratch;
	bool ready; /* blob in place and executable */

	/* SIGTRAP was ignored: the int3 resets it, each call puts it back. */
	bool sigtrap_ign;
	struct crf_psite_sigaction sigtrap;

	/*
	 * Signals the task dequeued while running crf's code: blockable ones
	 * (as many as came, each queued again in the task), and the others
	 * (SIGSTOP, SIGTRAP from outside; each once, as the kernel keeps a
	 * standard signal pending once), sent again at the cure.
	 */
	siginfo_t *held;
	size_t n_held, cap_held;
	int resend[64];
	size_t n_resend;
};

/*
 * Run one parasite command: write the args header and @in_len bytes of
 * payload, run the blob, read @out_len bytes of payload back.  Returns the
 * command's %rax, or a negative errno (logged) when the call itself failed;
 * @ok tells which.
 */
long crf__psite_call(struct crf_parasite *p, int cmd, const void *in, size_t in_len, void *out,
		     size_t out_len, bool *ok);

/*
 * Wait until the thread reports the end of crf's code: a syscall stop
 * (@trap false) or the blob's int3 (@trap true).  Signals the task dequeues
 * meanwhile are held (see infect.c); other stops are resumed.
 */
int crf__psite_wait(struct crf_parasite *p, bool trap);

#endif
