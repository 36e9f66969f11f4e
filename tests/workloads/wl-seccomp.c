// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-seccomp: seccomp state survives a checkpoint, exactly.
 *
 * The main process M has no seccomp (it is the verifier: only a tracer
 * outside seccomp may read filters with PTRACE_SECCOMP_GET_FILTER).  Its
 * children:
 *   C1  strict mode (prctl(PR_SET_SECCOMP, 1)), serving M over a pipe with
 *       read and write only; after the restore it still echoes, and dies of
 *       SIGKILL when M asks it to make any other system call;
 *   C3  three threads with no_new_privs: the leader installs F1 (getppid,
 *       getpgrp -> ERRNO(111), SECCOMP_FILTER_FLAG_LOG) with TSYNC, so all
 *       three share it; thread 2 then adds F2 (getsid -> ERRNO(222)) of its
 *       own.  After the restore a TSYNC from thread 1 must fail on thread 2
 *       (whose chain is not an ancestor of its own), and one from thread 2
 *       must work and give everyone its chain: only if the threads share the
 *       very same F1 again;
 *   C2  forked by C3's leader, so it inherits F1, then adds H with
 *       no_new_privs: ERRNO(1234) for getppid and for what crf injects to
 *       dump and restore a task (mmap, munmap, mprotect, madvise, brk,
 *       rt_sigaction, rt_sigprocmask, rt_sigreturn, sigaltstack, *itimer,
 *       timer_get*, prctl, arch_prctl, socket, getpid, gettid,
 *       rt_tgsigqueueinfo, seccomp, capset, futex, rseq, ...);
 *   C4  installs F4 (getppid -> ERRNO(444)) without no_new_privs, with
 *       CAP_SYS_ADMIN, then drops CAP_SYS_ADMIN: it holds neither of the two
 *       things installing a filter needs.
 * M checks, before the dump and after the restore: each thread's Seccomp,
 * Seccomp_filters and NoNewPrivs lines and capabilities, each filter's code
 * and flags byte for byte (PTRACE_SECCOMP_GET_FILTER / _GET_METADATA), the
 * filtered calls' results inside each child, the TSYNC behaviour, and C1's
 * strict mode.
 *
 * "wl-seccomp partial": thread A installs a filter and then creates thread
 * B, so A and B share a filter the leader lacks; "wl-seccomp notify": a
 * filter that may hand a system call to a user-space listener.  crf must
 * refuse both; the process checks that it is as it was.
 */
#include "wl.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_INSNS 64

struct prog {
	struct sock_filter f[MAX_INSNS];
	unsigned short n;
	uint32_t flags; /* as PTRACE_GET_SECCOMP_METADATA reports them */
};

/* Return @ret for each system call of @nrs (-1 ends), allow the rest; x86_64 only. */
static void build(struct prog *p, const int *nrs, uint32_t ret, uint32_t flags)
{
	size_t n = 0, k = 0;

	while (nrs[n] >= 0)
		n++;
	if (n + 6 > MAX_INSNS)
		wl_fail("filter too long");
	p->f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	p->f[k++] =
		(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	p->f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	p->f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < n; i++)
		p->f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							 (uint32_t)nrs[i], (uint8_t)(n - i), 0);
	p->f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	p->f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
	p->n = (unsigned short)k;
	p->flags = flags;
}

static struct prog f1, f2, f3, f4, heavy;

static void build_all(void)
{
	static const int n1[] = {SYS_getppid, SYS_getpgrp, -1};
	static const int n2[] = {SYS_getsid, -1};
	static const int n3[] = {SYS_getpgid, -1};
	static const int n4[] = {SYS_getppid, -1};
	static const int nh[] = {SYS_getppid,
				 SYS_mmap,
				 SYS_munmap,
				 SYS_mprotect,
				 SYS_madvise,
				 SYS_brk,
				 SYS_rt_sigaction,
				 SYS_rt_sigprocmask,
				 SYS_rt_sigreturn,
				 SYS_sigaltstack,
				 SYS_getitimer,
				 SYS_setitimer,
				 SYS_timer_gettime,
				 SYS_timer_getoverrun,
				 SYS_prctl,
				 SYS_arch_prctl,
				 SYS_socket,
				 SYS_getpid,
				 SYS_gettid,
				 SYS_rt_tgsigqueueinfo,
				 SYS_tgkill,
				 SYS_seccomp,
				 SYS_capset,
				 SYS_futex,
				 SYS_rseq,
				 SYS_set_robust_list,
				 SYS_set_tid_address,
				 SYS_process_vm_readv,
				 SYS_pidfd_getfd,
				 -1};

	build(&f1, n1, SECCOMP_RET_ERRNO | 111, SECCOMP_FILTER_FLAG_LOG);
	build(&f2, n2, SECCOMP_RET_ERRNO | 222, 0);
	build(&f3, n3, SECCOMP_RET_ERRNO | 333, 0);
	build(&f4, n4, SECCOMP_RET_ERRNO | 444, 0);
	build(&heavy, nh, SECCOMP_RET_ERRNO | 1234, 0);
}

static long install(const struct prog *p, unsigned int flags)
{
	struct sock_fprog fp = {p->n, (struct sock_filter *)p->f};

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags | p->flags, &fp);
}

/* A system call fails with @err (the filter's ERRNO data). */
static int fails(long r, int err)
{
	return r == -1 && errno == err;
}

/* --- children: each answers M's one-byte requests with one byte, 0 = fine --- */

struct chan {
	int cmd[2], res[2]; /* M -> child, child -> M */
};

static struct chan ch1, ch2, ch3, ch4;

static void close_chan(const struct chan *c, bool child_ends, bool parent_ends)
{
	if (child_ends) {
		close(c->cmd[0]);
		close(c->res[1]);
	}
	if (parent_ends) {
		close(c->cmd[1]);
		close(c->res[0]);
	}
}

/*
 * In a child: only its own channel's ends stay open (and what @keep's
 * child needs), so that M sees EOF when a child dies.
 */
static void only(const struct chan *mine, const struct chan *keep)
{
	const struct chan *all[] = {&ch1, &ch2, &ch3, &ch4};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] != mine && all[i] != keep)
			close_chan(all[i], true, true);
	close_chan(mine, false, true);
}

static char ask(const struct chan *c, char req, const char *who)
{
	char out;

	if (write(c->cmd[1], &req, 1) != 1 || read(c->res[0], &out, 1) != 1)
		wl_fail("%s: no answer to '%c': %s", who, req, strerror(errno));
	return out;
}

typedef char (*check_fn)(char req);

/* Only read and write: fine for every filter here, and for strict mode. */
static _Noreturn void serve(const struct chan *c, check_fn check)
{
	for (;;) {
		char req, out;
		ssize_t n = read(c->cmd[0], &req, 1);

		if (n == 0)
			syscall(SYS_exit, 0);
		if (n != 1)
			continue;
		out = check(req);
		if (write(c->res[1], &out, 1) != 1)
			syscall(SYS_exit, 1);
	}
}

/* C1, strict: 'e' echoes; 'k' makes a forbidden call, which must kill it. */
static char c1_check(char req)
{
	if (req == 'k')
		syscall(SYS_getpid);
	return req == 'e' ? 'E' : '?';
}

static char c2_check(char req)
{
	struct {
		uint64_t h, f, r, m;
	} sa;

	if (req != 'v')
		return '?';
	if (!fails(syscall(SYS_getppid), 1234))
		return 1;
	if (!fails(syscall(SYS_getpgrp), 111)) /* F1, inherited from C3 */
		return 2;
	if (!fails(syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 1234))
		return 3;
	if (!fails(syscall(SYS_munmap, 0, 4096), 1234))
		return 4;
	if (!fails(syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0), 1234))
		return 5;
	if (!fails(syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0), 1234))
		return 6;
	if (!fails(syscall(SYS_getpid), 1234))
		return 7;
	if (!fails(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &sa, 8), 1234))
		return 8;
	if (!fails(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &(uint32_t){0}), 1234))
		return 9;
	if (syscall(SYS_getsid, 0) < 0) /* F2 was C3's thread 2's alone */
		return 10;
	return 0;
}

static char c4_check(char req)
{
	if (req != 'v')
		return '?';
	if (!fails(syscall(SYS_getppid), 444))
		return 1;
	if (syscall(SYS_getpgrp) < 0)
		return 2;
	return 0;
}

/* --- C3: three threads; the leader serves M and hands work to the others --- */

#define N3 3

static pid_t tids3[N3];
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int job_for = -1, job_done;
static char job_req, job_out;

/* What thread @i checks for request @req. */
static char thread_check(int i, char req)
{
	long r;

	switch (req) {
	case 'v': /* as restored: F1 everywhere, F2 in thread 2 only */
		if (!fails(syscall(SYS_getppid), 111) || !fails(syscall(SYS_getpgrp), 111))
			return 1;
		if (i == 2 ? !fails(syscall(SYS_getsid, 0), 222) : syscall(SYS_getsid, 0) < 0)
			return 2;
		return 0;
	case 't': /* thread 1 cannot sync thread 2, thread 2 can sync all */
		r = install(&f3, SECCOMP_FILTER_FLAG_TSYNC);
		if (i == 1)
			return r == tids3[2] ? 0 : 3;
		return r == 0 ? 0 : 4;
	case 'i': /* setting up: thread 2's own filter */
		return i == 2 && install(&f2, 0) == 0 ? 0 : 6;
	case 'w': /* after thread 2's TSYNC: its chain F1, F2, F3 everywhere */
		if (!fails(syscall(SYS_getsid, 0), 222) || !fails(syscall(SYS_getpgid, 0), 333))
			return 5;
		return 0;
	}
	return '?';
}

static char run_in(int i, char req)
{
	char out;

	if (i == 0)
		return thread_check(0, req);
	pthread_mutex_lock(&mtx);
	job_for = i;
	job_req = req;
	job_done = 0;
	pthread_cond_broadcast(&cond);
	while (!job_done)
		pthread_cond_wait(&cond, &mtx);
	out = job_out;
	pthread_mutex_unlock(&mtx);
	return out;
}

static char c3_check(char req)
{
	char r;

	if (req == 't') /* thread 1 first: it must fail before thread 2 syncs */
		return (r = run_in(1, 't')) ? r : run_in(2, 't');
	for (int i = 0; i < N3; i++)
		if ((r = run_in(i, req)))
			return r;
	return 0;
}

static void *c3_thread(void *arg)
{
	int i = (int)(intptr_t)arg;

	pthread_mutex_lock(&mtx);
	tids3[i] = (pid_t)syscall(SYS_gettid);
	job_done = 1; /* started */
	pthread_cond_broadcast(&cond);
	for (;;) {
		while (job_for != i)
			pthread_cond_wait(&cond, &mtx);
		job_out = thread_check(i, job_req);
		job_for = -1;
		job_done = 1;
		pthread_cond_broadcast(&cond);
	}
	return NULL;
}

static void start_thread(int i)
{
	pthread_t t;

	pthread_mutex_lock(&mtx);
	job_done = 0;
	if (pthread_create(&t, NULL, c3_thread, (void *)(intptr_t)i))
		syscall(SYS_exit_group, 21);
	while (!job_done)
		pthread_cond_wait(&cond, &mtx);
	pthread_mutex_unlock(&mtx);
}

static _Noreturn void c3_main(void)
{
	pid_t c2;

	tids3[0] = getpid();
	only(&ch3, &ch2);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		syscall(SYS_exit_group, 22);
	start_thread(1);
	start_thread(2);
	if (install(&f1, SECCOMP_FILTER_FLAG_TSYNC) != 0 || run_in(2, 'i'))
		syscall(SYS_exit_group, 23);
	c2 = fork();
	if (c2 == 0) {
		only(&ch2, NULL);
		if (install(&heavy, 0) != 0)
			syscall(SYS_exit_group, 24);
		serve(&ch2, c2_check);
	}
	close_chan(&ch2, true, true);
	if (write(ch3.res[1], tids3, sizeof(tids3)) != sizeof(tids3) ||
	    write(ch3.res[1], &c2, sizeof(c2)) != sizeof(c2))
		syscall(SYS_exit_group, 25);
	serve(&ch3, c3_check);
}

/* --- M: setting up, and checking from outside --- */

static pid_t c1, c2, c3, c4;

static void make_chan(struct chan *c)
{
	if (pipe(c->cmd) || pipe(c->res))
		wl_fail("pipe: %s", strerror(errno));
}

static _Noreturn void c1_main(void)
{
	char ok = 'S';

	only(&ch1, NULL);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0))
		syscall(SYS_exit_group, 30);
	if (write(ch1.res[1], &ok, 1) != 1)
		syscall(SYS_exit, 31);
	serve(&ch1, c1_check);
}

static _Noreturn void c4_main(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	char ok = 'S';

	only(&ch4, NULL);
	if (install(&f4, 0) != 0)
		syscall(SYS_exit_group, 40);
	if (syscall(SYS_capget, &h, d))
		syscall(SYS_exit_group, 41);
	d[0].effective &= ~(1u << CAP_SYS_ADMIN);
	d[0].permitted &= ~(1u << CAP_SYS_ADMIN);
	d[0].inheritable &= ~(1u << CAP_SYS_ADMIN);
	if (syscall(SYS_capset, &h, d))
		syscall(SYS_exit_group, 42);
	if (write(ch4.res[1], &ok, 1) != 1)
		syscall(SYS_exit_group, 43);
	serve(&ch4, c4_check);
}

static pid_t spawn(void (*fn)(void))
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0)
		fn();
	return pid;
}

static void wait_started(const struct chan *c, const char *who)
{
	char ok;

	if (read(c->res[0], &ok, 1) != 1 || ok != 'S')
		wl_fail("%s did not start", who);
}

static void setup(void)
{
	make_chan(&ch1);
	make_chan(&ch2);
	make_chan(&ch3);
	make_chan(&ch4);
	c1 = spawn(c1_main);
	wait_started(&ch1, "C1 (strict)");
	c4 = spawn(c4_main);
	wait_started(&ch4, "C4 (no no_new_privs)");
	c3 = spawn(c3_main);
	if (read(ch3.res[0], tids3, sizeof(tids3)) != sizeof(tids3) ||
	    read(ch3.res[0], &c2, sizeof(c2)) != sizeof(c2))
		wl_fail("C3 did not start");
	/* C2 is forked by now: M keeps only its own ends. */
	close_chan(&ch1, true, false);
	close_chan(&ch2, true, false);
	close_chan(&ch3, true, false);
	close_chan(&ch4, true, false);
}

/* The value of @key in /proc/@pid/task/@tid/status. */
static void status_of(pid_t pid, pid_t tid, const char *key, char *out, size_t size)
{
	char path[96], text[8192], *line;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (wl_read_file(path, text, sizeof(text)) < 0)
		wl_fail("%s: %s", path, strerror(errno));
	for (line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			line += klen + 1 + strspn(line + klen + 1, " \t");
			snprintf(out, size, "%.*s", (int)strcspn(line, "\n"), line);
			return;
		}
	}
	wl_fail("%s: no %s line", path, key);
}

struct want {
	const char *who;
	pid_t pid, tid;
	int mode, n_filters, nnp;
	int sys_admin; /* -1: not checked */
};

static void check_status(const struct want *w)
{
	char mode[16], n[16], nnp[16], eff[32], prm[32];
	uint64_t bit = 1ull << CAP_SYS_ADMIN;

	status_of(w->pid, w->tid, "Seccomp", mode, sizeof(mode));
	status_of(w->pid, w->tid, "Seccomp_filters", n, sizeof(n));
	status_of(w->pid, w->tid, "NoNewPrivs", nnp, sizeof(nnp));
	status_of(w->pid, w->tid, "CapEff", eff, sizeof(eff));
	status_of(w->pid, w->tid, "CapPrm", prm, sizeof(prm));
	if (atoi(mode) != w->mode || atoi(n) != w->n_filters)
		wl_fail("%s (thread %d): Seccomp %s with %s filters, expected %d with %d", w->who,
			(int)w->tid, mode, n, w->mode, w->n_filters);
	if (atoi(nnp) != w->nnp)
		wl_fail("%s (thread %d): NoNewPrivs %s, expected %d", w->who, (int)w->tid, nnp,
			w->nnp);
	if (w->sys_admin >= 0 && (!!(strtoull(eff, NULL, 16) & bit) != w->sys_admin ||
				  !!(strtoull(prm, NULL, 16) & bit) != w->sys_admin))
		wl_fail("%s (thread %d): CapEff %s CapPrm %s, CAP_SYS_ADMIN expected %s", w->who,
			(int)w->tid, eff, prm, w->sys_admin ? "in both" : "in neither");
}

static void check_all_status(void)
{
	const struct want w[] = {
		{"M", getpid(), getpid(), 0, 0, 0, 1},
		{"C1 (strict)", c1, c1, 1, 0, 0, 1},
		{"C2 (inherited + heavy)", c2, c2, 2, 2, 1, 1},
		{"C3 leader", c3, tids3[0], 2, 1, 1, 1},
		{"C3 thread 1", c3, tids3[1], 2, 1, 1, 1},
		{"C3 thread 2", c3, tids3[2], 2, 2, 1, 1},
		{"C4 (no no_new_privs, no CAP_SYS_ADMIN)", c4, c4, 2, 1, 0, 0},
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check_status(&w[i]);
}

static void stop_traced(pid_t tid, const char *who)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		wl_fail("%s: cannot trace thread %d: %s", who, (int)tid, strerror(errno));
	if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
		wl_fail("%s: thread %d did not stop", who, (int)tid);
}

/* Thread @tid's chain is @chain (@n, the oldest first), code and flags. */
static void check_chain(const char *who, pid_t tid, const struct prog *const *chain, size_t n)
{
	struct sock_filter buf[MAX_INSNS];

	stop_traced(tid, who);
	for (size_t i = 0; i < n; i++) {
		const struct prog *p = chain[i];
		/* Counted from the oldest, whatever ptrace(2) says. */
		struct __ptrace_seccomp_metadata md = {.filter_off = i};
		long got = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, i, buf);

		if (got != p->n || memcmp(buf, p->f, p->n * sizeof(buf[0])))
			wl_fail("%s (thread %d): filter %zu (from the oldest) differs (%ld insns)",
				who, (int)tid, i + 1, got);
		if (ptrace(PTRACE_SECCOMP_GET_METADATA, tid, sizeof(md), &md) < 0 ||
		    md.flags != p->flags)
			wl_fail("%s (thread %d): filter %zu flags %#llx, expected %#x", who,
				(int)tid, i + 1, (unsigned long long)md.flags, p->flags);
	}
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, n, NULL) != -1 || errno != (n ? ENOENT : EINVAL))
		wl_fail("%s (thread %d): more than %zu filters", who, (int)tid, n);
	if (ptrace(PTRACE_DETACH, tid, 0, 0))
		wl_fail("%s: detach from thread %d: %s", who, (int)tid, strerror(errno));
}

static void check_all_chains(void)
{
	const struct prog *c2c[] = {&f1, &heavy}, *c3c[] = {&f1}, *t2c[] = {&f1, &f2};
	const struct prog *c4c[] = {&f4};

	check_chain("C1 (strict)", c1, NULL, 0);
	check_chain("C2", c2, c2c, 2);
	check_chain("C3 leader", tids3[0], c3c, 1);
	check_chain("C3 thread 1", tids3[1], c3c, 1);
	check_chain("C3 thread 2", tids3[2], t2c, 2);
	check_chain("C4", c4, c4c, 1);
}

static void expect_answer(const struct chan *c, char req, const char *who)
{
	char r = ask(c, req, who);

	if (r)
		wl_fail("%s: check '%c' failed: %d", who, req, r);
}

static void check_strict_killed(void)
{
	int st;

	if (waitpid(c1, &st, 0) != c1)
		wl_fail("C1 (strict): waitpid: %s", strerror(errno));
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		wl_fail("C1 (strict): a forbidden system call did not kill it (status %#x)", st);
}

static void verify(void)
{
	char r;

	check_all_status();
	check_all_chains();
	expect_answer(&ch2, 'v', "C2");
	expect_answer(&ch4, 'v', "C4");
	expect_answer(&ch3, 'v', "C3");
	expect_answer(&ch3, 't', "C3 (TSYNC after the restore)");
	for (int i = 0; i < N3; i++) {
		struct want w = {"C3 after thread 2's TSYNC", c3, tids3[i], 2, 3, 1, 1};

		check_status(&w);
	}
	expect_answer(&ch3, 'w', "C3 after thread 2's TSYNC");
	if (ask(&ch1, 'e', "C1 (strict)") != 'E')
		wl_fail("C1 (strict): no echo");
	/* The forbidden call kills it: no answer comes, the pipe ends. */
	r = 'k';
	if (write(ch1.cmd[1], &r, 1) != 1)
		wl_fail("C1 (strict): %s", strerror(errno));
	if (read(ch1.res[0], &r, 1) != 0)
		wl_fail("C1 (strict): it made a forbidden system call and lived on");
	check_strict_killed();
}

/* --- refused shapes: the dump must refuse, and the process stay as it was --- */

static struct prog g;
static pid_t tid_a, tid_b;
static atomic_int partial_up;

static void *partial_b(void *arg)
{
	(void)arg;
	tid_b = (pid_t)syscall(SYS_gettid);
	atomic_fetch_add(&partial_up, 1);
	for (;;)
		pause();
	return NULL;
}

/* Thread A installs G, then creates B: A and B share G, the leader lacks it. */
static void *partial_a(void *arg)
{
	pthread_t t;

	(void)arg;
	tid_a = (pid_t)syscall(SYS_gettid);
	if (install(&g, 0) || pthread_create(&t, NULL, partial_b, NULL))
		syscall(SYS_exit_group, 50);
	for (;;)
		pause();
	return NULL;
}

static void check_partial(void)
{
	const struct want w[] = {
		{"leader", getpid(), getpid(), 0, 0, 1, 1},
		{"thread A", getpid(), tid_a, 2, 1, 1, 1},
		{"thread B (created by A)", getpid(), tid_b, 2, 1, 1, 1},
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check_status(&w[i]);
	WL_CHECK(syscall(SYS_getppid) > 0, "the leader's getppid failed: %s", strerror(errno));
}

static void partial(void)
{
	static const int nrs[] = {SYS_getppid, -1};
	pthread_t t;

	build(&g, nrs, SECCOMP_RET_ERRNO | 55, 0);
	WL_CHECK(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs: %s", strerror(errno));
	WL_CHECK(!pthread_create(&t, NULL, partial_a, NULL), "thread A");
	while (atomic_load(&partial_up) < 1)
		usleep(1000);
	check_partial();
	wl_ready();
	wl_wait_verify();
	check_partial();
}

/* A filter that hands getppid to a user-space listener (none here: ENOSYS). */
static void notify(void)
{
	static const int nrs[] = {SYS_getppid, -1};
	const struct want w = {"the process", getpid(), getpid(), 2, 1, 1, 1};

	build(&g, nrs, SECCOMP_RET_USER_NOTIF, 0);
	WL_CHECK(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs: %s", strerror(errno));
	WL_CHECK(!install(&g, 0), "install: %s", strerror(errno));
	check_status(&w);
	wl_ready();
	wl_wait_verify();
	check_status(&w);
	WL_CHECK(fails(syscall(SYS_getppid), ENOSYS), "getppid did not fail with ENOSYS");
}

int main(int argc, char **argv)
{
	wl_init("seccomp");
	if (argc > 1 && !strcmp(argv[1], "partial")) {
		partial();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "notify")) {
		notify();
		return 0;
	}
	build_all();
	setup();
	/* C3 names C2 before C2 has installed its own filter: its answer says it has. */
	expect_answer(&ch2, 'v', "C2");
	check_all_status();
	check_all_chains();
	wl_ready();
	wl_wait_verify();
	verify();
	kill(c2, SIGKILL);
	kill(c3, SIGKILL);
	kill(c4, SIGKILL);
	waitpid(c3, NULL, 0);
	waitpid(c4, NULL, 0);
	return 0;
}
