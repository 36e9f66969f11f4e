// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-taskattr: per-task attributes survive checkpoint and restore.
 *
 * State, in a tree R -> S -> M -> G:
 *   R, the root: personality ADDR_NO_RANDOMIZE | UNAME26 | READ_IMPLIES_EXEC
 *      and loginuid 4242 (which all inherit), oom_score_adj 345, THP
 *      disabled (except where madvise asks, where the kernel has that),
 *      membarrier registrations for global and private expedited barriers
 *      (and the rseq variant where offered; never sync-core), timer slack
 *      77777, not dumpable, and a second thread RT with timer slack
 *      123457.  Queued, all blocked: 300 SIGRTMIN+3 for the process
 *      (values 0..299), 100 SIGRTMIN+5 for R's leader (5000..), 300
 *      SIGRTMIN+4 for RT (1000..) and a SIGUSR1 for the process.
 *   S: a child subreaper, oom_score_adj 456.
 *   M: S's child, waits.
 *   G: M's child, uid and gid 1000 (so the restorer changes credentials,
 *      which reset the next two), dumpable, parent-death signal SIGUSR1,
 *      timer slack 66666; its thread GT: parent-death signal SIGUSR2,
 *      timer slack 234567.
 * With "pdeath-root", R also has a parent-death signal (SIGTERM): crf
 * restore -d refuses it (tested as a refusal; R then checks itself).  Two
 * more are refused at the dump: "pdeath-thread-parent", where RT forks a
 * child X with a parent-death signal (it would fire when RT, not R,
 * exits), and "thread-loginuid", where RT has a loginuid of its own.
 *
 * After restore: R and RT read every attribute back and take their queued
 * signals, in order, with their values and senders.  M exits: G gets
 * SIGUSR1 and SIGUSR2 (both threads' parent-death signals), is reparented
 * to S, the subreaper, checks its own attributes and exits; S reaps M and
 * G and checks its own.  Any difference fails.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOGINUID   4242
#define PERSONA	   (ADDR_NO_RANDOMIZE | UNAME26 | READ_IMPLIES_EXEC)
#define N_SHARED   300
#define N_THREAD   300
#define N_LEADER   100
#define SIG_SHARED (SIGRTMIN + 3)
#define SIG_THREAD (SIGRTMIN + 4)
#define SIG_LEADER (SIGRTMIN + 5)
#define G_UID	   1000

/* membarrier(2) commands; GET_REGISTRATIONS (6.3) is not in older headers. */
#define MB_QUERY		      0
#define MB_REG_GLOBAL_EXPEDITED	      (1 << 2)
#define MB_PRIVATE_EXPEDITED	      (1 << 3)
#define MB_REG_PRIVATE_EXPEDITED      (1 << 4)
#define MB_PRIVATE_EXPEDITED_SYNC     (1 << 5)
#define MB_REG_PRIVATE_EXPEDITED_RSEQ (1 << 8)
#define MB_GET_REGISTRATIONS	      (1 << 9)
#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif

static atomic_int phase;	  /* 1: threads set up; 2: verify */
static atomic_int thread_result;  /* 0 running, 1 good, -1 failed */
static atomic_ulong thread_slack; /* GT's, read by itself */
static atomic_int thread_pdeath;
static volatile sig_atomic_t usr1, usr2;
static pid_t s_pid, m_pid, x_pid;
static const char *mode = "";

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

static long long read_proc(const char *what)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/self/%s", what);
	if (wl_read_file(path, buf, sizeof(buf)) < 0)
		wl_fail("read %s: %s", path, strerror(errno));
	return strtoll(buf, NULL, 10);
}

static void write_path(const char *path, long long v)
{
	char buf[32];
	int fd, n;

	n = snprintf(buf, sizeof(buf), "%lld", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		wl_fail("write %lld to %s: %s", v, path, strerror(errno));
	close(fd);
}

static void write_proc(const char *what, long long v)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/%s", what);
	write_path(path, v);
}

static void set_slack(unsigned long ns)
{
	if (prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) < 0)
		wl_fail("PR_SET_TIMERSLACK: %s", strerror(errno));
}

static void check_slack(const char *who, unsigned long want)
{
	long got = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	WL_CHECK(got == (long)want, "%s: timer slack is %ld, was %lu", who, got, want);
}

static void nap_ms(long ms)
{
	const struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* R's membarrier registrations: what it asks for, and what the kernel offers. */
static long mb_registrations(void)
{
	long q = membarrier(MB_QUERY), want = MB_REG_GLOBAL_EXPEDITED | MB_REG_PRIVATE_EXPEDITED;

	WL_CHECK(q >= 0, "membarrier query: %s", strerror(errno));
	if (q & MB_REG_PRIVATE_EXPEDITED_RSEQ)
		want |= MB_REG_PRIVATE_EXPEDITED_RSEQ;
	else
		wl_downgrade("the kernel offers no rseq membarrier: that registration is not "
			     "checked");
	if ((want & q) != want)
		wl_downgrade("the kernel lacks membarrier registrations %#lx: not checked",
			     want & ~q);
	return want & q;
}

static void register_membarrier(long regs)
{
	for (int bit = 0; bit < 16; bit++)
		if ((regs & (1L << bit)) && membarrier(1 << bit) < 0)
			wl_fail("membarrier register %#x: %s", 1 << bit, strerror(errno));
}

static void check_membarrier(long regs)
{
	long q = membarrier(MB_QUERY);

	if (q & MB_GET_REGISTRATIONS)
		WL_CHECK(membarrier(MB_GET_REGISTRATIONS) == regs,
			 "membarrier registrations are %#lx, were %#lx",
			 membarrier(MB_GET_REGISTRATIONS), regs);
	WL_CHECK(membarrier(MB_PRIVATE_EXPEDITED) == 0, "private expedited membarrier: %s",
		 strerror(errno));
	if (q & MB_PRIVATE_EXPEDITED_SYNC)
		WL_CHECK(membarrier(MB_PRIVATE_EXPEDITED_SYNC) < 0 && errno == EPERM,
			 "sync-core membarrier works, but it was never registered");
}

/* Queue @sig with @value to the process, or (@to_thread) to thread @t alone. */
static void queue(bool to_thread, pthread_t t, int sig, int value)
{
	union sigval v = {.sival_int = value};
	int e = to_thread ? pthread_sigqueue(t, sig, v) : (sigqueue(getpid(), sig, v) ? errno : 0);

	if (e)
		wl_fail("queue signal %d value %d: %s", sig, value, strerror(e));
}

/* Take every queued @sig (blocked): @n of them, values @base.., from R (@sender), in order. */
static void take(int sig, int n, int base, pid_t sender, const char *who)
{
	const struct timespec zero = {0, 0};
	sigset_t set;
	siginfo_t si;
	int got = 0;

	sigemptyset(&set);
	sigaddset(&set, sig);
	while (sigtimedwait(&set, &si, &zero) == sig) {
		WL_CHECK(got < n, "%s: more than %d of signal %d queued", who, n, sig);
		WL_CHECK(si.si_value.sival_int == base + got && si.si_code == SI_QUEUE &&
				 si.si_pid == sender,
			 "%s: signal %d #%d has value %d, code %d, sender %d; expected %d from %d",
			 who, sig, got, si.si_value.sival_int, si.si_code, (int)si.si_pid,
			 base + got, (int)sender);
		got++;
	}
	WL_CHECK(got == n, "%s: %d of signal %d queued, not %d", who, got, sig, n);
}

static void ready_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		wl_fail("write to the setup pipe: %s", strerror(errno));
	close(fd);
}

/* "pdeath-thread-parent": X, forked by RT, with a parent-death signal; exits at verify. */
static void fork_x(void)
{
	int p[2];
	char c;

	if (pipe(p) < 0 || (x_pid = fork()) < 0)
		wl_fail("pipe or fork: %s", strerror(errno));
	if (x_pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0)
			wl_fail("X: PR_SET_PDEATHSIG: %s", strerror(errno));
		ready_byte(p[1]);
		wl_wait_verify();
		_exit(0);
	}
	close(p[1]);
	WL_CHECK(read(p[0], &c, 1) == 1, "X did not set up");
	close(p[0]);
}

/* RT: its timer slack and its own queue, checked by itself. */
static void *rt_main(void *arg)
{
	pid_t r = getpid();

	if (!strcmp(mode, "pdeath-thread-parent"))
		fork_x();
	if (!strcmp(mode, "thread-loginuid"))
		write_path("/proc/thread-self/loginuid", LOGINUID + 101);
	set_slack(123457);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) < 2)
		nap_ms(2);
	check_slack("RT", 123457);
	take(SIG_THREAD, N_THREAD, 1000, r, "RT");
	atomic_store(&thread_result, 1);
	return arg;
}

/* GT: its own parent-death signal and timer slack. */
static void *gt_main(void *arg)
{
	if (prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0) < 0)
		wl_fail("GT: PR_SET_PDEATHSIG: %s", strerror(errno));
	set_slack(234567);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) < 2)
		nap_ms(2);
	{
		int sig = 0;

		prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0);
		atomic_store(&thread_pdeath, sig);
		atomic_store(&thread_slack, (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	}
	atomic_store(&thread_result, 1);
	return arg;
}

static void on_usr(int sig)
{
	if (sig == SIGUSR1)
		usr1++;
	else
		usr2++;
}

static void start_thread(pthread_t *t, void *(*fn)(void *))
{
	int e = pthread_create(t, NULL, fn, NULL);

	if (e)
		wl_fail("pthread_create: %s", strerror(e));
	while (atomic_load(&phase) < 1)
		nap_ms(1);
}

/*
 * G: an unprivileged process whose parent-death signals (its own and its
 * thread's) fire when M exits, after which it must be S's child.
 */
static int g_main(int setup)
{
	struct sigaction sa = {.sa_handler = on_usr};
	int sig = 0, dumpable;
	pthread_t gt;

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	if (setresgid(G_UID, G_UID, G_UID) < 0 || setresuid(G_UID, G_UID, G_UID) < 0)
		wl_fail("G: set uid and gid %d: %s", G_UID, strerror(errno));
	/* Both were reset by the change of credentials; set them after it. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) < 0)
		wl_fail("G: prctl: %s", strerror(errno));
	set_slack(66666);
	start_thread(&gt, gt_main);
	ready_byte(setup);
	while (getppid() == m_pid)
		nap_ms(2);
	/* The signals were sent as M exited; let them be delivered. */
	for (int i = 0; i < 500 && (!usr1 || !usr2); i++)
		nap_ms(2);
	WL_CHECK(getppid() == s_pid, "G: reparented to %d, not to the subreaper S (%d)",
		 (int)getppid(), (int)s_pid);
	WL_CHECK(usr1 == 1 && usr2 == 1, "G: parent-death signals: SIGUSR1 %d, SIGUSR2 %d times",
		 (int)usr1, (int)usr2);
	atomic_store(&phase, 2);
	pthread_join(gt, NULL);
	prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0);
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	WL_CHECK(sig == SIGUSR1 && thread_pdeath == SIGUSR2,
		 "G: parent-death signals are %d and %d (thread), were %d and %d", sig,
		 (int)thread_pdeath, SIGUSR1, SIGUSR2);
	WL_CHECK(dumpable == 1, "G: dumpable is %d, was 1", dumpable);
	check_slack("G", 66666);
	WL_CHECK(thread_slack == 234567, "GT: timer slack is %lu, was 234567",
		 (unsigned long)thread_slack);
	WL_CHECK(read_proc("loginuid") == LOGINUID, "G: loginuid is %lld", read_proc("loginuid"));
	WL_CHECK(getuid() == G_UID && geteuid() == G_UID, "G: uid %d", (int)getuid());
	return 0;
}

static pid_t spawn(int (*fn)(int), int setup)
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(fn(setup));
	return pid;
}

/* M: waits for the verification, then exits, which fires G's signals. */
static int m_main(int setup)
{
	m_pid = getpid();
	spawn(g_main, setup);
	ready_byte(setup);
	wl_wait_verify();
	return 0;
}

/* S: the subreaper, which must get G once M is gone. */
static int s_main(int setup)
{
	int64_t until;
	pid_t m, pid;
	int st;

	s_pid = getpid();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		wl_fail("S: PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	write_proc("oom_score_adj", 456);
	m = spawn(m_main, setup);
	ready_byte(setup);
	WL_CHECK(waitpid(m, &st, 0) == m && WIFEXITED(st) && !WEXITSTATUS(st),
		 "S: M ended with %#x", st);
	until = (int64_t)(wl_now_ns() / 1000000) + 10000;
	while ((pid = waitpid(-1, &st, WNOHANG)) == 0 && (int64_t)(wl_now_ns() / 1000000) < until)
		nap_ms(2);
	WL_CHECK(pid > 0, "S: G is not S's child once M is gone (%s)",
		 pid < 0 ? strerror(errno) : "timeout");
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "S: G ended with %#x", st);
	{
		int sub = 0;

		prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0);
		WL_CHECK(sub == 1, "S: not a child subreaper any more");
	}
	WL_CHECK(read_proc("oom_score_adj") == 456, "S: oom_score_adj is %lld, was 456",
		 read_proc("oom_score_adj"));
	return 0;
}

static long thp_setting(void)
{
	if (prctl(PR_SET_THP_DISABLE, 1, PR_THP_DISABLE_EXCEPT_ADVISED, 0, 0) == 0)
		return 1 | PR_THP_DISABLE_EXCEPT_ADVISED;
	wl_downgrade("the kernel lacks PR_THP_DISABLE_EXCEPT_ADVISED: THP is disabled outright");
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0)
		wl_fail("PR_SET_THP_DISABLE: %s", strerror(errno));
	return 1;
}

static void check_root(long thp, long mb, bool pdeath_root)
{
	struct utsname u;
	int sig = -1;

	WL_CHECK(personality(0xffffffff) == PERSONA, "personality is %#x, was %#x",
		 personality(0xffffffff), PERSONA);
	WL_CHECK(uname(&u) == 0 && !strncmp(u.release, "2.6.", 4), "uname says %s: UNAME26 is gone",
		 u.release);
	WL_CHECK(read_proc("loginuid") == LOGINUID, "loginuid is %lld, was %d",
		 read_proc("loginuid"), LOGINUID);
	WL_CHECK(read_proc("oom_score_adj") == 345, "oom_score_adj is %lld, was 345",
		 read_proc("oom_score_adj"));
	WL_CHECK(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == thp, "THP disable is %d, was %ld",
		 prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), thp);
	check_membarrier(mb);
	check_slack("R", 77777);
	WL_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0, "R is dumpable again");
	prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0);
	WL_CHECK(sig == (pdeath_root ? SIGTERM : 0), "R's parent-death signal is %d", sig);
}

static void queue_all(pthread_t rt)
{
	for (int i = 0; i < N_SHARED; i++)
		queue(false, rt, SIG_SHARED, i);
	for (int i = 0; i < N_THREAD; i++)
		queue(true, rt, SIG_THREAD, 1000 + i);
	for (int i = 0; i < N_LEADER; i++)
		queue(true, pthread_self(), SIG_LEADER, 5000 + i);
	kill(getpid(), SIGUSR1);
}

static void check_pending(void)
{
	const struct timespec zero = {0, 0};
	sigset_t set;
	siginfo_t si;

	take(SIG_SHARED, N_SHARED, 0, getpid(), "R");
	take(SIG_LEADER, N_LEADER, 5000, getpid(), "R");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	WL_CHECK(sigtimedwait(&set, &si, &zero) == SIGUSR1 && si.si_code == SI_USER,
		 "R: the pending SIGUSR1 is gone");
}

int main(int argc, char **argv)
{
	bool pdeath_root;
	int setup[2], st;
	pthread_t rt;
	sigset_t set;
	long thp, mb;
	char buf[3];
	pid_t s;

	wl_init("taskattr");
	mode = argc > 1 ? argv[1] : "";
	pdeath_root = !strcmp(mode, "pdeath-root");
	WL_CHECK(personality(PERSONA) >= 0, "personality: %s", strerror(errno));
	write_proc("loginuid", LOGINUID);
	write_proc("oom_score_adj", 345);
	thp = thp_setting();
	set_slack(77777);
	if (pipe(setup) < 0)
		wl_fail("pipe: %s", strerror(errno));
	s = spawn(s_main, setup[1]);
	close(setup[1]);
	for (size_t got = 0; got < sizeof(buf);) {
		ssize_t n = read(setup[0], buf + got, sizeof(buf) - got);

		WL_CHECK(n > 0, "the children did not set up");
		got += (size_t)n;
	}
	close(setup[0]);
	mb = mb_registrations();
	register_membarrier(mb);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    (pdeath_root && prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0))
		wl_fail("prctl: %s", strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, SIG_SHARED);
	sigaddset(&set, SIG_THREAD);
	sigaddset(&set, SIG_LEADER);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	start_thread(&rt, rt_main);
	queue_all(rt);
	wl_ready();
	wl_wait_verify();
	check_root(thp, mb, pdeath_root);
	check_pending();
	WL_CHECK(!x_pid || (waitpid(x_pid, &st, 0) == x_pid && WIFEXITED(st) && !WEXITSTATUS(st)),
		 "X ended with %#x", st);
	atomic_store(&phase, 2);
	pthread_join(rt, NULL);
	WL_CHECK(thread_result == 1, "RT did not finish");
	WL_CHECK(waitpid(s, &st, 0) == s && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "S ended with %#x", st);
	wl_note("personality, loginuid, oom_score_adj, THP %ld, membarrier %#lx, timer slack, "
		"dumpable, %d queued signals, subreaper, parent-death signals: intact",
		thp, mb, N_SHARED + N_THREAD + N_LEADER + 1);
	return 0;
}
