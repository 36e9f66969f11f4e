/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The restorer test's target: a forked process that sets up state, reports
 * what only it can read (no parasite here), waits to be dumped, and after
 * being restored checks that all of it is back.  Its verdict is its exit
 * status: 0, or one of enum target_fail.
 */
#ifndef CRF_TEST_RST_TARGET_H
#define CRF_TEST_RST_TARGET_H

#include <stdint.h>
#include <sys/types.h>

/* What the target tells the test before it waits in pause(). */
struct target_info {
	uint64_t sa[64][4]; /* kernel sigactions: handler, flags, restorer, mask */
	uint64_t blocked;
	uint64_t sas_sp, sas_size;
	int32_t sas_flags;
	int32_t timer_id; /* the live POSIX timer (id 0 was deleted) */
	int32_t timer_signo, pad;
	int64_t timer_interval_ns, timer_value_ns;
	int64_t itimer[3][4];
	uint64_t rseq_ptr;
	uint32_t rseq_len, rseq_sig;
	uint32_t uid[4], gid[4]; /* real, effective, saved, fs */
	uint32_t n_groups;
	uint32_t groups[64];
	uint64_t cap_eff, cap_prm, cap_inh, cap_bnd, cap_amb;
	uint32_t securebits, no_new_privs;
};

enum target_fail {
	TF_SETUP = 2,
	TF_MEMORY = 10, /* + region number */
	TF_MAPS = 30,	/* protections of the hole / read-only region */
	TF_MASK = 40,
	TF_HANDLER = 41,
	TF_PENDING = 42,
	TF_ITIMER = 43,
	TF_TIMER = 44,
	TF_ALTSTACK = 45,
	TF_FPU = 46,
	TF_RSEQ = 47,
	TF_CREDS = 48,
	TF_PID = 49,
};

/* Run the target in a freshly forked child; writes its info to @info_fd. */
int target_main(int info_fd) __attribute__((noreturn));

#endif
