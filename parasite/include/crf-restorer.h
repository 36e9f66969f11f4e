/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The restorer's arguments: one block, built by crf in the forked task and
 * read by the freestanding restorer blob.  Only fixed-size integers, no
 * pointers into crf's memory: arrays are given as offsets from the start of
 * the block, which the restorer receives in %rdi.
 *
 * Memory layout crf sets up in the task before jumping to the restorer
 * (one anonymous mapping at a place free in both crf's and the saved
 * address space):
 *
 *	[ restorer blob (text) | args block | arrays | stack ]
 *
 * The restorer unmaps everything else, so nothing else of crf survives.
 * That one mapping cannot unmap itself (it runs the code that returns into
 * the program): crf has the task unmap it right after its rt_sigreturn
 * (core/restore/rst-release.c), with the help of crf_rst_status.syscall_insn.
 */
#ifndef CRF_RESTORER_H
#define CRF_RESTORER_H

#include <stdint.h>

#include <crf/layout.h>

#define CRF_RST_MAGIC	   0x43524652535431ull /* "CRFRST1" */
#define CRF_RST_NSIG	   64
#define CRF_RST_MAX_GROUPS 256

struct crf_rst_vma_arg {
	uint64_t start, end;
	uint64_t pgoff;
	uint64_t madv; /* bit mask of (1 << MADV_x) */
	int32_t prot, flags;
	int32_t fd;    /* -1: anonymous */
	int32_t fill;  /* nonzero: pages are read into it, so it is
			* mapped writable until they are in */
	int32_t shmid; /* >= 0: a System V segment to shmat() instead */
	int32_t pad;
	/* appended with ABI 1.4 of crf/restore.h (crf_rst_vma.vm) */
	int32_t map_prot; /* mmap()ed with it; prot is set in finish_vmas */
	uint32_t steps;	  /* CRF_RST_STEP_*: what else to do to it */
	uint32_t vm;	  /* crf_rst_vma.vm, which steps come from (crf's) */
	uint32_t pad2;
	uint64_t premap; /* nonzero: mremap() it from there, pages in */
};

/*
 * The steps beyond mmap, read and mprotect that make a mapping's VmFlags the
 * saved ones (crf/restore.h, CRF_RST_VM_* says why each is needed):
 * ANON_VMA	fault a page in and drop it before mprotect (an anonymous
 *		mapping that never had a page loses "ac")
 * FORCE	its pages are written through mem_fd, never through a
 *		writable mapping
 * LOCK		mlock2(), LOCK_ONFAULT with MLOCK_ONFAULT
 * SEAL		mseal(), last
 * MARK_GUARD	install and remove a guard on its first page ("gu" with no
 *		guard left)
 * GUARDS	guard regions of guards_off lie in it
 */
#define CRF_RST_STEP_ANON_VMA	  (1u << 0)
#define CRF_RST_STEP_FORCE	  (1u << 1)
#define CRF_RST_STEP_LOCK	  (1u << 2)
#define CRF_RST_STEP_LOCK_ONFAULT (1u << 3)
#define CRF_RST_STEP_SEAL	  (1u << 4)
#define CRF_RST_STEP_MARK_GUARD	  (1u << 5)
#define CRF_RST_STEP_GUARDS	  (1u << 6)

/* A range of pages: a guard region to install. */
struct crf_rst_range_arg {
	uint64_t start, end;
};

/* The name of an anonymous mapping, prctl(PR_SET_VMA_ANON_NAME). */
#define CRF_RST_ANON_NAME_MAX 80
struct crf_rst_name_arg {
	uint64_t start, end;
	char name[CRF_RST_ANON_NAME_MAX + 8]; /* NUL-terminated */
};

/* Bytes to read from a verified blob image into memory. */
struct crf_rst_pages_arg {
	uint64_t vaddr, len;
	uint64_t off;	  /* data offset in the blob */
	uint64_t hdr_len; /* where the blob's first chunk frame starts */
	uint32_t chunk;	  /* blob chunk size; each chunk has an 8-byte frame */
	int32_t fd;
};

struct crf_rst_sigaction_arg {
	uint64_t handler, flags, restorer, mask;
};

struct crf_rst_timer_arg {
	int32_t id; /* the kernel's timer id, recreated in order */
	int32_t clock;
	int32_t signo, notify; /* sigev_signo, sigev_notify */
	int32_t notify_tid, pad;
	uint64_t value;		       /* sigev_value */
	int64_t interval_ns, value_ns; /* it_interval, remaining it_value (0: disarmed) */
	int32_t overrun, pad2;
};

#define CRF_RST_MAX_LEVELS   32
#define CRF_RST_THREAD_STACK 16384

/*
 * A thread other than the leader: the restorer creates it with its TID
 * (clone3 with set_tid), the thread sets its own state, reports in
 * threads_ready and waits for threads_go, then returns into the program
 * through its own signal frame.
 */
/* A thread's credentials (every thread has its own in Linux). */
struct crf_rst_creds {
	uint32_t uid, euid, suid, fsuid, gid, egid, sgid, fsgid;
	uint32_t n_groups;
	uint32_t groups[CRF_RST_MAX_GROUPS];
	uint32_t pad;
	uint64_t cap_eff, cap_prm, cap_inh, cap_bnd, cap_amb;
	uint32_t securebits, no_new_privs;
};

/*
 * seccomp (parasite/restorer-seccomp.c).  A filter: n_insns struct
 * sock_filter at code_off, installed with flags (SECCOMP_FILTER_FLAG_LOG).
 */
struct crf_rst_seccomp_filter {
	uint64_t code_off;
	uint32_t n_insns, flags;
};

/*
 * A thread's own seccomp step, after "go": its own filters (n of the
 * filter table from first), then strict mode.  Installing a filter needs
 * CAP_SYS_ADMIN or no_new_privs: a thread that installs one keeps
 * CAP_SYS_ADMIN and leaves no_new_privs off until it did (see
 * crf_rst_restore_creds).
 */
struct crf_rst_seccomp_arg {
	uint32_t mode; /* SECCOMP_MODE_*: 0 none, 1 strict, 2 filter */
	uint32_t first, n;
	uint32_t pad;
};

struct crf_rst_thread_arg {
	int32_t set_tid[CRF_RST_MAX_LEVELS]; /* innermost first (clone3's order) */
	uint32_t n_set_tid;
	int32_t sas_flags;
	uint64_t regs[27];  /* struct user_regs_struct */
	uint64_t xsave_off; /* as the leader's, own copy */
	uint32_t xsave_len, n_pending;
	uint64_t frame_off;	/* CRF_RST_FRAME_SIZE bytes */
	uint64_t pending_off;	/* n_pending private siginfo of 128 bytes */
	uint64_t stack_top_off; /* CRF_RST_THREAD_STACK below it are its own */
	uint64_t blocked, sas_sp, sas_size;
	uint64_t clear_tid, robust_head, robust_len;
	uint64_t rseq_ptr;
	uint32_t rseq_len, rseq_sig;
	int32_t sched_policy, sched_priority, nice;
	int32_t ioprio; /* ioprio_set(IOPRIO_WHO_PROCESS, 0, it); -1: leave (older images) */
	uint64_t affinity[16];
	char comm[16];
	/* own_creds: the thread had credentials of its own, else the process's */
	uint32_t own_creds, pad2;
	struct crf_rst_creds creds;

	/* Task attributes (core/dump/task-attrs-dump.c). */
	uint64_t timer_slack_ns; /* PR_SET_TIMERSLACK after its scheduling; 0: leave */
	int32_t pdeath_signal;	 /* PR_SET_PDEATHSIG after its credentials */
	uint32_t pad3;
	struct crf_rst_seccomp_arg seccomp;
};

struct crf_rst_args {
	uint64_t magic;
	uint64_t blob_start, blob_len; /* this whole mapping, kept */
	uint64_t args_len;	       /* bytes of the block with its arrays */

	uint32_t n_vmas, n_pages, n_timers, n_pending;
	uint64_t vmas_off, pages_off, timers_off, pending_off;

	/* mm */
#define CRF_RST_MM_FIELD(f) uint64_t f;
	CRF_MM_FIELDS(CRF_RST_MM_FIELD)
#undef CRF_RST_MM_FIELD
	uint64_t auxv[2 * 64];
	uint32_t auxv_len; /* 0: leave the mm fields alone */
	int32_t exe_fd;	   /* -1: none */
	/* 0: no vDSO to place; else the address given to
	 * arch_prctl(ARCH_MAP_VDSO_64): the start of the vDSO's whole span
	 * (its data pages come first on this kernel), vdso_len bytes long */
	uint64_t vdso, vdso_len;

	/* signals */
	struct crf_rst_sigaction_arg sa[CRF_RST_NSIG];
	uint64_t blocked;
	uint64_t sas_sp, sas_size; /* sigaltstack */
	int32_t sas_flags, pad0;
	int64_t itimer[CRF_ITIMERS][CRF_ITIMER_WORDS]; /* crf/layout.h */
	/* pending: n_pending siginfo of 128 bytes at pending_off, each queued
	 * to the task itself, in order: the first n_pending_shared to the
	 * process (rt_sigqueueinfo), the others to the leader (rt_tgsigqueueinfo) */
	uint64_t n_pending_shared;

	/* rseq */
	uint64_t rseq_ptr;
	uint32_t rseq_len, rseq_sig;

	/* credentials, applied last */
	struct crf_rst_creds creds;
	uint32_t restore_creds; /* 0: keep crf's (same as saved) */
	uint32_t pad1;

	/* resource limits (cur, max) by RLIMIT_*, set once the restorer's fds
	 * are closed: a lowered RLIMIT_NOFILE could not hold them */
	uint32_t n_rlimits, pad3;
	uint64_t rlimits[16][2];

	/* the registers to return with: struct user_regs_struct layout */
	uint64_t regs[27];
	/* the xsave area (64-byte aligned in the block), as PTRACE_GETREGSET
	 * NT_X86_XSTATE gave it, with 4 spare bytes after it for the signal
	 * frame's end marker; xsave_len 0: no FPU state (the kernel's init state) */
	uint64_t xsave_off;
	uint32_t xsave_len, pad2;
	/* CRF_RST_FRAME_SIZE bytes, 16-byte aligned, for the signal frame the
	 * restorer returns through */
	uint64_t frame_off;

	/* threads: n_threads others than the leader, at threads_off */
	uint32_t n_threads;
	uint32_t threads_ready;	    /* futex: threads that set their state */
	uint32_t threads_go;	    /* futex: 1 once crf said go */
	uint32_t have_thread_state; /* the leader's clear_tid and robust list are known */
	uint64_t threads_off;
	uint64_t clear_tid, robust_head, robust_len; /* the leader's */

	/* handshake with crf: the restorer writes its result (0 or -errno) and
	 * a message to status_fd, then waits for one byte on go_fd (closing
	 * both) before returning into the program */
	int32_t status_fd, go_fd;
	char error[160]; /* the restorer's scratch for its message */

	/* Task attributes (core/dump/task-attrs-dump.c). */
	uint32_t set_personality; /* personality() once the mappings are built
				   * (READ_IMPLIES_EXEC would add PROT_EXEC to them) */
	uint32_t personality;
	/* after the credentials, which reset both: PR_SET_DUMPABLE (-1: leave)
	 * and the leader's PR_SET_PDEATHSIG */
	int32_t dumpable, pdeath_signal;
	/* the group stop to return into (crf_rst_status.stop_signal), 0: none */
	int32_t stop_signal;
	/* After "go", once crf has put the stopped children back in their group
	 * stop: take the stop report of each of the n_stop_waits children at
	 * stop_waits_off (int32 PIDs, as this task names them), which the
	 * program had taken; with drop_sigchld, the SIGCHLD their stops sent,
	 * when the program had none pending. */
	uint32_t n_stop_waits, drop_sigchld;
	uint32_t pad4;
	uint64_t stop_waits_off;
	/* seccomp, installed after go while crf traces every thread with
	 * PTRACE_O_SUSPEND_SECCOMP (core/restore/rst-release.c): the table's first
	 * n_seccomp_shared filters, which every thread holds, by the leader
	 * with SECCOMP_FILTER_FLAG_TSYNC before the threads go; then each
	 * thread its own step (the leader's here, the others' in their args) */
	uint32_t n_seccomp_filters, n_seccomp_shared;
	uint64_t seccomp_filters_off;
	struct crf_rst_seccomp_arg seccomp;

	/* mappings' VmFlags (ABI 1.4 of crf/restore.h) */
	uint32_t n_guards, n_names; /* at guards_off, names_off */
	uint64_t guards_off, names_off;
	/* /proc/self/mem opened by the task before the restorer (-1: none),
	 * for the pages of CRF_RST_STEP_FORCE and _MARK_GUARD mappings,
	 * read through the bounce_len bytes at bounce_off */
	int32_t mem_fd;
	uint32_t mlockall; /* mlockall() flags, set last; 0: none */
	uint64_t bounce_off, bounce_len;
	/* the span of the mappings made before the fork (crf_rst_vma.premap),
	 * which unmapping crf leaves until they are moved; 0, 0: none */
	uint64_t premap_start, premap_end;
};

#define CRF_RST_FRAME_SIZE 1024

/* What the restorer writes to status_fd, once. */
struct crf_rst_status {
	int32_t result; /* 0: ready, waiting for go; or -errno */
	uint32_t pad;
	char error[160]; /* NUL-terminated; what failed, when result < 0 */
	/* When ready: the restorer's own mapping, and the address of a
	 * `syscall` instruction in it, with which crf makes the task unmap
	 * that mapping once it is back in its program (rst-release.c). */
	uint64_t area_start, area_len;
	uint64_t syscall_insn;
	/* the group stop's signal crf puts the task back in (SIGSTOP), 0: none */
	int32_t stop_signal;
	/* Nonzero: the task installs seccomp state after go, which only works
	 * while crf traces it with PTRACE_O_SUSPEND_SECCOMP; a restorer that
	 * fails after go passes its message's address and its -errno as the
	 * second and third arguments of exit_group, for crf to read. */
	uint32_t seccomp;
};

#endif
