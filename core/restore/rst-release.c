// SPDX-License-Identifier: GPL-2.0-only
/*
 * Letting a restored task go without leaving the restorer behind.
 *
 * The restorer cannot unmap itself: it is the code that returns into the
 * program.  So crf traces the task from "go" to the exit of its final
 * rt_sigreturn, where the registers are the program's, points it at a lone
 * `syscall` instruction in the restorer to munmap the restorer's mapping,
 * stops it at the exit of that munmap (before it can execute anything in
 * the unmapped page), puts the program's registers back and detaches.  A
 * task that was stopped at the dump (SIGSTOP) is put back in its group
 * stop on the way, every thread of it, and stays stopped.
 *
 * A task that gets seccomp state installs it after "go" (restorer-seccomp.c):
 * crf then traces its threads with PTRACE_O_SUSPEND_SECCOMP, so neither the
 * restorer's last system calls nor the munmap meet the program's filters,
 * and such a task never goes without it.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "procfs.h"
#include "ptrace.h"
#include "rst-task.h"
#include "util.h"

#define STOP_TIMEOUT_MS 5000
#define MAX_STOPS	64

/* PTRACE_GET_SYSCALL_INFO (uapi 5.3), the part used here. */
#define CRF_PTRACE_GET_SYSCALL_INFO 0x420e
#define CRF_SYSCALL_INFO_ENTRY	    1
struct syscall_info {
	uint8_t op;
	uint8_t pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	uint64_t nr; /* entry: the system call number */
	uint64_t args[6];
};

/*
 * A restorer that fails after go can no longer report on its status fd:
 * it names the message and the error in exit_group's unused arguments.
 */
static int restorer_failed(pid_t pid, const struct syscall_info *si)
{
	char msg[sizeof(((struct crf_rst_status *)0)->error)] = "";
	struct iovec local = {msg, sizeof(msg) - 1},
		     remote = {(void *)si->args[1], sizeof(msg) - 1};
	int err = (int)-(int64_t)si->args[2];

	if (!si->args[1] || process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0)
		snprintf(msg, sizeof(msg), "exit_group(%d)", (int)si->args[0]);
	return crf_error_errno(err > 0 && err < 4096 ? err : EIO,
			       "pid %d: the restorer failed after go: %s", (int)pid, msg);
}

/* Resume @pid to its next syscall stop; its op and (entry) number. */
static int next_syscall(pid_t pid, uint8_t *op, uint64_t *nr)
{
	struct syscall_info si;
	struct crf_stop st;
	int sig = 0, r;

	for (int i = 0; i < MAX_STOPS; i++) {
		r = ptrace_resume(pid, true, sig);
		if (r >= 0)
			r = ptrace_wait(pid, STOP_TIMEOUT_MS, &st);
		if (r < 0)
			return r;
		sig = st.kind == CRF_STOP_SIGNAL ? st.sig : 0;
		if (st.kind == CRF_STOP_EXITED)
			return crf_error_errno(ESRCH, "pid %d ended while being released",
					       (int)pid);
		if (st.kind != CRF_STOP_SYSCALL)
			continue;
		memset(&si, 0, sizeof(si));
		if (ptrace(CRF_PTRACE_GET_SYSCALL_INFO, pid, sizeof(si), &si) < 0)
			return crf_error_errno(errno, "pid %d: PTRACE_GET_SYSCALL_INFO", (int)pid);
		if (si.op == CRF_SYSCALL_INFO_ENTRY && si.nr == SYS_exit_group)
			return restorer_failed(pid, &si);
		*op = si.op;
		*nr = si.nr;
		return 0;
	}
	return crf_error_errno(EPROTO, "pid %d: no rt_sigreturn after %d stops", (int)pid,
			       MAX_STOPS);
}

/* Run the task up to the exit of its rt_sigreturn. */
static int to_program(pid_t pid)
{
	bool in_sigreturn = false;
	uint64_t nr;
	uint8_t op;
	int r;

	for (;;) {
		r = next_syscall(pid, &op, &nr);
		if (r < 0)
			return r;
		if (op == CRF_SYSCALL_INFO_ENTRY)
			in_sigreturn = nr == SYS_rt_sigreturn;
		else if (in_sigreturn)
			return 0;
	}
}

/*
 * Put the task back in the group stop of @sig it was in at the dump.  It
 * sits at the exit of rt_sigreturn with the gadget's registers and every
 * other signal blocked: the signal is sent as it leaves that stop,
 * reported at its delivery and delivered, and the kernel starts the group
 * stop as it did for the program.  A job-control stop in a process group
 * that is orphaned now is discarded by the kernel: that shows as the entry
 * of the gadget's munmap, before any of the program's code ran.
 */
static int enter_group_stop(pid_t pid, int sig)
{
	struct crf_stop st;
	int r;

	r = ptrace_resume(pid, true, sig);
	if (r >= 0)
		r = ptrace_wait(pid, STOP_TIMEOUT_MS, &st);
	if (r >= 0 && (st.kind != CRF_STOP_SIGNAL || st.sig != sig))
		r = crf_error_errno(EPROTO, "pid %d: signal %d (%s) was not delivered to it",
				    (int)pid, sig, strsignal(sig));
	if (r >= 0)
		r = ptrace_resume(pid, true, sig);
	if (r >= 0)
		r = ptrace_wait(pid, STOP_TIMEOUT_MS, &st);
	if (r >= 0 && st.kind == CRF_STOP_SYSCALL)
		return crf_error_errno(
			EPERM,
			"pid %d: %s no longer stops it: its process group is "
			"orphaned now, and the kernel discards a job-control stop there",
			(int)pid, strsignal(sig));
	if (r >= 0 && (st.kind != CRF_STOP_EVENT || st.sig != sig))
		r = crf_error_errno(EPROTO, "pid %d: no group stop for %s", (int)pid,
				    strsignal(sig));
	return r == -ETIMEDOUT ? crf_error_errno(ETIMEDOUT, "pid %d did not stop", (int)pid) : r;
}

/*
 * At a syscall-exit stop: munmap [start, start+len) through the gadget,
 * after entering the saved group stop if there is one.  Every signal is
 * blocked meanwhile (but the stop's): one delivered now would get a frame
 * over the gadget's registers and run the program's handler with the
 * restorer still mapped.  The program's registers and mask come back at
 * the exit of the munmap; pending signals are delivered after the detach.
 */
static int unmap_restorer(pid_t pid, const struct crf_rst_status *st)
{
	struct user_regs_struct prog, call;
	uint64_t mask, hold = ~0ull;
	uint64_t nr;
	uint8_t op;
	int r;

	r = ptrace_get_gp(pid, &prog);
	if (r >= 0)
		r = ptrace_get_sigmask(pid, &mask);
	if (r < 0)
		return r;
	if (st->stop_signal > 0 && st->stop_signal <= 64)
		hold &= ~(1ull << (st->stop_signal - 1));
	call = prog;
	call.rip = st->syscall_insn;
	call.rax = SYS_munmap;
	call.rdi = st->area_start;
	call.rsi = st->area_len;
	r = ptrace_set_gp(pid, &call);
	if (r >= 0)
		r = ptrace_set_sigmask(pid, hold);
	if (r >= 0 && st->stop_signal)
		r = enter_group_stop(pid, st->stop_signal);
	if (r >= 0)
		r = next_syscall(pid, &op, &nr); /* munmap's entry */
	if (r >= 0 && (op != CRF_SYSCALL_INFO_ENTRY || nr != SYS_munmap))
		r = crf_error_errno(EPROTO, "pid %d: expected munmap, got system call %llu",
				    (int)pid, (unsigned long long)nr);
	if (r >= 0)
		r = next_syscall(pid, &op, &nr); /* its exit */
	if (r >= 0 && (r = ptrace_get_gp(pid, &call)) >= 0 && (long)call.rax < 0)
		r = crf_error_errno((int)-(long)call.rax, "pid %d: munmap of the restorer",
				    (int)pid);
	/* Whatever happened, the program's registers and mask go back. */
	if (ptrace_set_gp(pid, &prog) < 0 && r >= 0)
		r = -EIO;
	if (ptrace_set_sigmask(pid, mask) < 0 && r >= 0)
		r = -EIO;
	return r;
}

/*
 * The leader is in the group stop (enter_group_stop); every other thread,
 * held at the exit of its rt_sigreturn, joins it before it can run any of
 * the program's code (the kernel looks at a pending group stop before it
 * dequeues a signal).  Once the last has joined, the kernel tells the
 * parent as it did at the dump; after the detach the threads stay stopped.
 */
static int join_group_stop(pid_t pid, const pid_t *tids, size_t n, int sig)
{
	struct crf_stop st;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (tids[i] == pid)
			continue;
		r = ptrace_resume(tids[i], false, 0);
		if (r >= 0)
			r = ptrace_wait(tids[i], STOP_TIMEOUT_MS, &st);
		if (r >= 0 && (st.kind != CRF_STOP_EVENT || st.sig != sig))
			r = crf_error_errno(EPROTO,
					    "thread %d of pid %d did not join its group stop",
					    (int)tids[i], (int)pid);
	}
	return r == -ETIMEDOUT
		       ? crf_error_errno(ETIMEDOUT, "thread of pid %d did not stop", (int)pid)
		       : r;
}

/*
 * The stop was reported to crf, the parent of the tree's root: take the
 * report, so that whoever inherits the root does not see a stop it did not
 * see happen.  Another task's parent is in the tree and deals with it
 * itself (crf_rst_args.stop_waits).
 */
static void take_stop_report(pid_t pid)
{
	siginfo_t si;

	if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG) < 0 && errno != ECHILD)
		crf_warn("pid %d: waitid: %s", (int)pid, strerror(errno));
}

/* Stop every thread (@tids, n) in its read of go_fd or its wait for the leader. */
static int stop_all(const pid_t *tids, size_t n, size_t *seized, bool seccomp)
{
	struct crf_stop stop;
	int r = 0;

	for (*seized = 0; r >= 0 && *seized < n; (*seized)++) {
		r = ptrace_seize(tids[*seized]);
		if (r < 0)
			break;
		r = ptrace_interrupt(tids[*seized]);
		if (r >= 0)
			r = ptrace_wait(tids[*seized], STOP_TIMEOUT_MS, &stop);
		if (r >= 0 && seccomp && (r = ptrace_suspend_seccomp(tids[*seized])) < 0)
			r = crf_error_errno(r, "thread %d: PTRACE_O_SUSPEND_SECCOMP",
					    (int)tids[*seized]);
	}
	return r;
}

/*
 * Every thread to the exit of its rt_sigreturn, then the leader unmaps the
 * restorer: no thread runs the restorer's code any more, and none runs the
 * program's yet (all are held at their syscall-exit stop until the detach).
 */
static int run_out(pid_t pid, const pid_t *tids, size_t n, int go_fd,
		   const struct crf_rst_status *st)
{
	int r = rst_go(go_fd);

	if (r >= 0)
		r = to_program(pid);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (tids[i] != pid)
			r = to_program(tids[i]);
	if (r >= 0)
		r = unmap_restorer(pid, st);
	if (r >= 0 && st->stop_signal)
		r = join_group_stop(pid, tids, n, st->stop_signal);
	return r;
}

int rst_release(pid_t pid, int go_fd, const struct crf_rst_status *st)
{
	_cleanup_free_ pid_t *tids = NULL;
	size_t n = 0, seized = 0;
	int r, d;

	r = st->syscall_insn ? list_tids(pid, &tids, &n) : -ENOTSUP;
	if (r >= 0)
		r = stop_all(tids, n, &seized, st->seccomp);
	if (r < 0) {
		for (size_t i = 0; i < seized; i++)
			ptrace_detach(tids[i], 0);
		/* Untraced, it would return into its program running. */
		if (st->stop_signal)
			return crf_error_errno(-r, "pid %d: cannot be put back in its group stop",
					       (int)pid);
		if (st->seccomp)
			return crf_error_errno(r, "pid %d: cannot release its seccomp state",
					       (int)pid);
		/* Let go untraced, it would keep the restorer's mapping: a changed address space.
		 */
		return crf_error_errno(
			-r, "pid %d: cannot trace it to take the restorer's mapping out", (int)pid);
	}
	r = run_out(pid, tids, n, go_fd, st);
	if (r < 0)
		crf_warn("pid %d: the restorer's mapping may stay in the task", (int)pid);
	for (size_t i = 0; i < n; i++) {
		d = ptrace_detach(tids[i], 0);
		if (d < 0 && r >= 0)
			r = d;
	}
	if (r >= 0 && st->stop_signal)
		take_stop_report(pid);
	return r == -ESRCH ? crf_error_errno(ESRCH, "pid %d ended as it was released", (int)pid)
			   : r;
}
