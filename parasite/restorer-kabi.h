/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's user ABI as the restorer needs it, spelled out here because
 * the libc headers that usually carry it cannot be used in a freestanding
 * blob: constants, and the layouts of the structures the restorer hands to
 * timer_create(), timer_settime() and rt_sigreturn().
 */
#ifndef CRF_RESTORER_KABI_H
#define CRF_RESTORER_KABI_H

#include <stddef.h>
#include <stdint.h>

#include "crf-restorer.h"

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_OFF 0
#define PR_TIMER_CREATE_RESTORE_IDS_ON	1
#endif

#define SIGKILL		9
#define SIGSTOP		19
#define SIG_SETMASK	2
#define SIGEV_THREAD_ID 4
#define SS_DISABLE	2
#define SS_AUTODISARM	(1u << 31)
/* uc_flags (asm/ucontext.h, which needs libc's types) */
#define UC_FP_XSTATE	     0x1
#define UC_SIGCONTEXT_SS     0x2
#define UC_STRICT_RESTORE_SS 0x4
#define EINVAL		     22
#define EIO		     5
#define EPERM		     1
#define EBUSY		     16

/* Newer than the uapi headers of older systems. */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux 6.13 */
#define MADV_GUARD_REMOVE  103
#endif
#ifndef __NR_mseal
#define __NR_mseal 462 /* Linux 6.10 */
#endif

/* shmat() flags (linux/shm.h, which needs libc's types) */
#define SHM_RDONLY 010000
#define SHM_REMAP  040000

#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define PRIO_PROCESS	   0
#define THREAD_CLONE_FLAGS                                                                         \
	(0x100ul /* CLONE_VM */ | 0x200ul /* CLONE_FS */ | 0x400ul /* CLONE_FILES */ |             \
	 0x800ul /* CLONE_SIGHAND */ | 0x10000ul /* CLONE_THREAD */ |                              \
	 0x40000ul /* CLONE_SYSVSEM */)

/* struct clone_args of clone3(), up to set_tid_size (CLONE_ARGS_SIZE_VER1). */
struct kclone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size;
};

/* The task size with 4- and with 5-level page tables. */
#define TASK_SIZE_47 0x7ffffffff000ul
#define TASK_SIZE_56 0xfffffffffff000ul

/* The kernel's struct sigevent, as timer_create() reads it. */
struct ksigevent {
	uint64_t value;
	int32_t signo, notify;
	int32_t tid;
	int32_t pad[11];
};

struct kitimerspec {
	int64_t interval_s, interval_ns, value_s, value_ns;
};

/* The kernel's x86-64 struct ucontext with its struct sigcontext inlined. */
struct kucontext {
	uint64_t flags, link;
	uint64_t ss_sp;
	int32_t ss_flags, ss_pad;
	uint64_t ss_size;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved[8];
	uint64_t sigmask;
};

_Static_assert(offsetof(struct kucontext, r8) == 40, "uc_mcontext offset");
_Static_assert(offsetof(struct kucontext, fpstate) == 40 + 184, "fpstate offset");
_Static_assert(offsetof(struct kucontext, sigmask) == 40 + 256, "uc_sigmask offset");
_Static_assert(8 + sizeof(struct kucontext) + 128 <= CRF_RST_FRAME_SIZE, "frame size");

/* Indices of struct user_regs_struct, the order of crf_rst_args.regs[]. */
enum {
	R15,
	R14,
	R13,
	R12,
	RBP,
	RBX,
	R11,
	R10,
	R9,
	R8,
	RAX,
	RCX,
	RDX,
	RSI,
	RDI,
	ORIG_RAX,
	RIP,
	CS,
	EFLAGS,
	RSP,
	SS,
	FS_BASE,
	GS_BASE,
	DS,
	ES,
	FS,
	GS
};

#endif
