// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf-under-seccomp: crf, run under a seccomp filter that allows every
 * system call.  The filter changes nothing crf does, except that a task
 * under seccomp may not suspend another's (the kernel refuses
 * PTRACE_O_SUSPEND_SECCOMP with EPERM): e2e-seccomp-refused gives it to the
 * harness as its crf, and the dump of a tree under seccomp must then be
 * refused by name, the tree left as it was.
 *
 *   crf-under-seccomp ARGS...   runs CRF_EXE ARGS... (CRF_EXE: set at build time)
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {1, &allow};

	(void)argc;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		fprintf(stderr, "crf-under-seccomp: %s\n", strerror(errno));
		return 2;
	}
	argv[0] = (char *)CRF_EXE;
	execv(CRF_EXE, argv);
	fprintf(stderr, "crf-under-seccomp: %s: %s\n", CRF_EXE, strerror(errno));
	return 127;
}
