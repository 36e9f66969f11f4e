// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restore skeleton and the restorer blob on a real process: a target
 * sets up state and waits; the test stops it with ptrace, saves its
 * registers, memory and task state, kills it, recreates it with the same
 * PID through rst_fork() and rst_exec(), and lets it go.  The target
 * then checks everything itself and exits 0 only if all of it came back.
 * Also: a taken PID, a PID held by a zombie, and the syscall restart fix.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "rst-task.h"
#include "rst-dump.h"
#include "rst-target.h"
#include "util.h"

/* Every process a test starts, killed and reaped by the teardown. */
static pid_t kids[8];

static void track(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(kids); i++) {
		if (!kids[i]) {
			kids[i] = pid;
			return;
		}
	}
	fail_msg("too many children");
}

static void untrack(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(kids); i++)
		if (kids[i] == pid)
			kids[i] = 0;
}

static int teardown(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(kids); i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, __WALL);
		}
		kids[i] = 0;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* The state letter of /proc/PID/stat, or 0 once it is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

static bool wait_state(pid_t pid, char state, long ms)
{
	for (; ms > 0; ms -= 10) {
		if (proc_state(pid) == state)
			return true;
		sleep_ms(10);
	}
	return false;
}

static int child_ret42(void *arg)
{
	return 42;
}

/* crf_regs_fix_restart */

static void test_fix_restart(void **state)
{
	static const int64_t codes[] = {-512, -513, -514, -516};
	uint64_t regs[27];

	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		memset(regs, 0, sizeof(regs));
		regs[10] = codes[i];
		regs[15] = 34; /* pause */
		regs[16] = 0x401002;
		crf_regs_fix_restart(regs);
		assert_int_equal(regs[10], 34);
		assert_int_equal(regs[16], 0x401000);
	}
	/* A finished call, and no call at all, stay as they are. */
	regs[10] = (uint64_t)-4;
	regs[15] = 34;
	regs[16] = 0x401002;
	crf_regs_fix_restart(regs);
	assert_int_equal(regs[10], (uint64_t)-4);
	assert_int_equal(regs[16], 0x401002);
	regs[10] = (uint64_t)-512;
	regs[15] = (uint64_t)-1;
	crf_regs_fix_restart(regs);
	assert_int_equal(regs[10], (uint64_t)-512);
	assert_int_equal(regs[16], 0x401002);
}

/* rst_fork */

static void test_fork_taken(void **state)
{
	char want[128], comm[64] = "";
	const char *err;
	pid_t out = 0;
	FILE *f;
	int r;

	f = fopen("/proc/self/comm", "re");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	capture_begin();
	r = rst_fork(getpid(), 100, child_ret42, NULL, &out);
	err = capture_end();
	assert_int_equal(r, -EEXIST);
	assert_int_equal(out, 0);
	snprintf(want, sizeof(want), "PID %d is taken by '%s'", (int)getpid(), comm);
	assert_contains(err, want);
	snprintf(want, sizeof(want), "parent %d", (int)getppid());
	assert_contains(err, want);
}

/*
 * A helper H forks Z, which exits at once; H reaps it after @reap_ms.
 * Returns H, with Z's PID in *@zombie once Z is a zombie.
 */
static pid_t make_zombie(long reap_ms, pid_t *zombie)
{
	int p[2];
	pid_t h, z;

	assert_int_equal(pipe(p), 0);
	h = fork();
	assert_true(h >= 0);
	if (h == 0) {
		z = fork();
		if (z == 0)
			_exit(0);
		if (write(p[1], &z, sizeof(z)) != sizeof(z))
			_exit(1);
		sleep_ms(reap_ms);
		waitpid(z, NULL, 0);
		_exit(0);
	}
	track(h);
	close(p[1]);
	assert_int_equal(read(p[0], zombie, sizeof(*zombie)), sizeof(*zombie));
	close(p[0]);
	assert_true(wait_state(*zombie, 'Z', 2000));
	return h;
}

static void test_fork_zombie_freed(void **state)
{
	pid_t z, out = 0, h = make_zombie(300, &z);
	int status;

	assert_int_equal(rst_fork(z, 5000, child_ret42, NULL, &out), 0);
	track(out);
	assert_int_equal(out, z);
	assert_int_equal(waitpid(out, &status, 0), out);
	untrack(out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
	assert_int_equal(waitpid(h, &status, 0), h);
	untrack(h);
}

static void test_fork_zombie_timeout(void **state)
{
	pid_t z, out = 0;
	const char *err;
	char want[64];
	int r;

	make_zombie(10000, &z);
	capture_begin();
	r = rst_fork(z, 100, child_ret42, NULL, &out);
	err = capture_end();
	assert_int_equal(r, -EEXIST);
	snprintf(want, sizeof(want), "PID %d is held by the zombie", (int)z);
	assert_contains(err, want);
	assert_contains(err, "within 100 ms");
}

/* The round trip */

struct restore_arg {
	struct crf_rst_task *t;
	int status_fd, go_fd;
};

static int restore_child(void *p)
{
	struct restore_arg *a = p;

	rst_exec(a->t, a->status_fd, a->go_fd);
	return 99;
}

/* Stop @pid with PTRACE_SEIZE + PTRACE_INTERRUPT and read its registers. */
static void stop_and_read(pid_t pid, struct crf_rst_task *t)
{
	static uint8_t xsave[64 << 10];
	struct iovec iov = {t->a.regs, sizeof(t->a.regs)};
	int status;

	assert_int_equal(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
	assert_int_equal(waitpid(pid, &status, __WALL), pid);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov), 0);
	assert_int_equal(iov.iov_len, sizeof(t->a.regs));
	crf_regs_fix_restart(t->a.regs);
	iov = (struct iovec){xsave, sizeof(xsave)};
	assert_int_equal(ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov), 0);
	assert_int_equal(rst_task_set_xsave(t, xsave, iov.iov_len), 0);
}

/* The pending signals of the thread and of the process, with their siginfo. */
static void read_pending(pid_t pid, struct crf_rst_task *t)
{
	for (int shared = 0; shared < 2; shared++) {
		struct __ptrace_peeksiginfo_args args = {
			.off = 0,
			.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
			.nr = 16,
		};
		siginfo_t si[16];
		long n = ptrace(PTRACE_PEEKSIGINFO, pid, &args, si);

		assert_true(n >= 0);
		for (long i = 0; i < n; i++)
			assert_int_equal(rst_task_add_pending(t, &si[i], shared), 0);
	}
}

static void fill_state(struct crf_rst_task *t, const struct target_info *in)
{
	struct crf_rst_args *a = &t->a;
	struct crf_rst_timer_arg timer = {
		.id = in->timer_id,
		.clock = CLOCK_MONOTONIC,
		.signo = in->timer_signo,
		.notify = SIGEV_SIGNAL,
		.interval_ns = in->timer_interval_ns,
		.value_ns = in->timer_value_ns,
	};

	memcpy(a->sa, in->sa, sizeof(a->sa));
	a->blocked = in->blocked;
	a->sas_sp = in->sas_sp;
	a->sas_size = in->sas_size;
	a->sas_flags = in->sas_flags;
	memcpy(a->itimer, in->itimer, sizeof(a->itimer));
	assert_int_equal(rst_task_add_timer(t, &timer), 0);
	a->rseq_ptr = in->rseq_ptr;
	a->rseq_len = in->rseq_len;
	a->rseq_sig = in->rseq_sig;
	a->creds.uid = in->uid[0], a->creds.euid = in->uid[1];
	a->creds.suid = in->uid[2], a->creds.fsuid = in->uid[3];
	a->creds.gid = in->gid[0], a->creds.egid = in->gid[1];
	a->creds.sgid = in->gid[2], a->creds.fsgid = in->gid[3];
	a->creds.n_groups = in->n_groups;
	memcpy(a->creds.groups, in->groups, in->n_groups * sizeof(in->groups[0]));
	a->creds.cap_eff = in->cap_eff, a->creds.cap_prm = in->cap_prm;
	a->creds.cap_inh = in->cap_inh, a->creds.cap_bnd = in->cap_bnd;
	a->creds.cap_amb = in->cap_amb;
	a->creds.securebits = in->securebits;
	a->creds.no_new_privs = in->no_new_privs;
	a->restore_creds = 1;
}

/* Start the target and wait until it sleeps in pause(). */
static pid_t start_target(struct target_info *in)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		target_main(p[1]);
	}
	track(pid);
	close(p[1]);
	assert_int_equal(read(p[0], in, sizeof(*in)), sizeof(*in));
	close(p[0]);
	assert_true(wait_state(pid, 'S', 2000));
	return pid;
}

/* Recreate @pid from @t; returns once its restorer is ready. */
static void restore(pid_t pid, struct crf_rst_task *t, int *go_fd)
{
	int st[2], go[2];
	struct restore_arg ra;
	char err[256] = "";
	pid_t out = 0;

	assert_int_equal(pipe(st), 0);
	assert_int_equal(pipe(go), 0);
	ra = (struct restore_arg){t, st[1], go[0]};
	assert_int_equal(rst_fork(pid, 0, restore_child, &ra, &out), 0);
	track(out);
	close(st[1]);
	close(go[0]);
	rst_task_free(t);
	if (rst_wait_ready(st[0], out, err, sizeof(err), NULL))
		fail_msg("%s", err);
	close(st[0]);
	*go_fd = go[1];
}

static void test_round_trip(void **state)
{
	char dir_path[] = "/tmp/crf-test-restorer-XXXXXX";
	struct crf_imgdir *dir = NULL;
	struct target_info in;
	struct crf_rst_task t;
	int status = 0, go_fd;
	bool exited = false;
	pid_t pid;

	rst_task_init(&t);
	assert_non_null(mkdtemp(dir_path));
	assert_int_equal(crf_imgdir_open(dir_path, CRF_IMGDIR_WRITE, &dir), 0);
	pid = start_target(&in);
	stop_and_read(pid, &t);
	read_pending(pid, &t);
	assert_int_equal(dump_target(pid, dir, &t), 0);
	fill_state(&t, &in);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, __WALL), pid);
	untrack(pid);

	restore(pid, &t, &go_fd);
	assert_int_equal(rst_go(go_fd), 0);
	close(go_fd);
	/* Its pause() is restarted; signal until the handler has run and it exits. */
	for (int ms = 0; ms < 5000; ms += 20) {
		kill(pid, SIGUSR1);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			untrack(pid);
			exited = true;
			break;
		}
		sleep_ms(20);
	}
	crf_imgdir_close(dir);
	tmpdir_remove(dir_path);
	if (!exited)
		fail_msg("the restored target did not finish within 5 s");
	if (WIFSIGNALED(status))
		fail_msg("the restored target was killed by signal %d", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A function given to crf_rst_at_fds_placed() runs with the program fds at
 * their numbers; its failure stops the task before the restorer, and the
 * caller can still report on its status fd, which rst_exec() moved.
 */
#define HOOK_FD 7

static int hook_fn(void *p)
{
	struct stat st;

	*(int *)p += 1;
	if (fstat(HOOK_FD, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		return -EBADF;
	return -EIO;
}

static void hook_release(void *p)
{
	*(int *)p += 100;
}

/* A PID nobody holds now, to create the task with. */
/* A free PID some way above ours, below pid_max (wrapping past it to 300, as the kernel does). */
static pid_t free_pid(void)
{
	long max = 32768;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	pid_t pid;

	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 32768;
		fclose(f);
	}
	pid = (pid_t)((getpid() + 1000L) % max);
	if (pid < 300)
		pid = 300;
	while (kill(pid, 0) == 0 || errno != ESRCH)
		pid = pid + 1 < max ? pid + 1 : 300;
	return pid;
}

static int hook_child(void *p)
{
	struct restore_arg *a = p;
	struct crf_rst_status st = {0};
	int *calls = a->t->hooks[0].arg;

	st.result = rst_exec(a->t, a->status_fd, a->go_fd);
	rst_task_free(a->t);
	snprintf(st.error, sizeof(st.error), "hook ran %d, released %d", *calls % 100,
		 *calls / 100);
	return write(a->status_fd, &st, sizeof(st)) == sizeof(st) ? 0 : 1;
}

static void test_fds_placed_hook(void **state)
{
	struct crf_rst_task t;
	struct restore_arg ra;
	char err[256] = "";
	int st[2], go[2], calls = 0, null_fd;
	const struct crf_rst_vma vma = {
		.start = UINT64_C(1) << 40,
		.end = (UINT64_C(1) << 40) + 4096,
		.prot = PROT_READ,
		.flags = MAP_PRIVATE | MAP_ANONYMOUS,
		.fd = -1,
	};
	pid_t out = 0;

	rst_task_init(&t);
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(null_fd >= 0);
	/* One mapping, as every task has (the restorer never gets to it). */
	assert_int_equal(rst_task_add_vma(&t, &vma), 0);
	assert_int_equal(rst_task_keep_fd(&t, null_fd, HOOK_FD, false), 0);
	assert_int_equal(rst_task_at_fds_placed(&t, hook_fn, &calls, hook_release), 0);
	assert_int_equal(pipe(st), 0);
	assert_int_equal(pipe(go), 0);
	ra = (struct restore_arg){&t, st[1], go[0]};
	assert_int_equal(rst_fork(free_pid(), 0, hook_child, &ra, &out), 0);
	track(out);
	close(st[1]);
	close(go[0]);
	assert_true(rst_wait_ready(st[0], out, err, sizeof(err), NULL) == -EIO);
	assert_contains(err, "hook ran 1, released 1");
	close(st[0]);
	close(go[1]);
	assert_int_equal(waitpid(out, NULL, 0), out);
	untrack(out);
	/* Here, in crf, the task was never given over: it is released here too. */
	rst_task_free(&t);
	assert_int_equal(calls, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fix_restart),
		cmocka_unit_test_teardown(test_fork_taken, teardown),
		cmocka_unit_test_teardown(test_fork_zombie_freed, teardown),
		cmocka_unit_test_teardown(test_fork_zombie_timeout, teardown),
		cmocka_unit_test_teardown(test_round_trip, teardown),
		cmocka_unit_test_teardown(test_fds_placed_hook, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
