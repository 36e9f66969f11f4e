// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freezing and infecting real child processes: one spinning, one in
 * nanosleep, one blocked in read.  Each is frozen (ptrace, and the cgroup
 * freezer in a scratch cgroup), infected, questioned through the parasite,
 * cured and resumed; the cure must leave mappings and registers exactly as
 * they were and the child must carry on (its sleep completing, its read
 * getting data).  Every child is killed and reaped in the teardown.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "freeze.h"
#include "helpers.h"
#include "infect.h"
#include "procfs.h"
#include "ptrace.h"

enum kind { SPIN, SLEEP, READ, THREADS };

#define SLEEP_MS 400
#define IGN_TRAP 0x10

/* What the child reports once set up. */
struct ready {
	int timer_id;
};

static struct child {
	pid_t pid;
	int ctl; /* parent writes */
	int out; /* parent reads */
} child = {-1, -1, -1};

static char cgroup_dir[4096], cgroup_freeze[4200];
static char altstack[1 << 16];
static int child_out = -1;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)!write(child_out, "U", 1);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The child's state the parasite must read back. */
static void child_setup(int flags, struct ready *r)
{
	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART};
	struct itimerval it = {{7, 0}, {1000, 0}};
	struct itimerspec ts = {{3, 0}, {100, 0}};
	struct sigevent sev = {.sigev_notify = SIGEV_NONE};
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	timer_t t;

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &sa, NULL);
	sigaltstack(&ss, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &r->timer_id);
	t = (timer_t)(intptr_t)r->timer_id;
	syscall(SYS_timer_settime, t, 0, &ts, NULL);
	if (flags & IGN_TRAP)
		signal(SIGTRAP, SIG_IGN);
}

/* Spins on floating point (so the XSAVE area is live); echoes ctl to out. */
static void child_spin(int ctl, int out)
{
	volatile double x = 1.0;
	char c;

	fcntl(ctl, F_SETFL, O_NONBLOCK);
	for (unsigned long i = 0;; i++) {
		x = x * 1.0000001 + 0.5;
		if (!(i & 0xffff) && read(ctl, &c, 1) == 1)
			(void)!write(out, &c, 1);
	}
}

static void child_sleep(int out)
{
	struct timespec ts = {SLEEP_MS / 1000, (SLEEP_MS % 1000) * 1000000L};
	double t0 = now_ms();
	int r = nanosleep(&ts, NULL);
	char msg[64];

	snprintf(msg, sizeof(msg), "%c%.0f", r ? 'E' : 'S', now_ms() - t0);
	(void)!write(out, msg, strlen(msg) + 1);
	pause();
}

static void child_read(int ctl, int out)
{
	char c;
	ssize_t n = read(ctl, &c, 1);

	(void)!write(out, n == 1 ? &c : "E", 1);
	pause();
}

static void *spin_thread(void *arg)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
	return NULL;
}

static pid_t spawn(enum kind kind, int flags)
{
	int ctl[2], out[2];
	struct ready r;
	pid_t pid;

	assert_int_equal(pipe2(ctl, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		child_out = out[1];
		memset(&r, 0, sizeof(r));
		child_setup(flags, &r);
		(void)!write(out[1], &r, sizeof(r));
		if (kind == THREADS) {
			pthread_t t;

			for (int i = 0; i < 2; i++)
				pthread_create(&t, NULL, spin_thread, NULL);
			kind = SPIN;
		}
		if (kind == SPIN)
			child_spin(ctl[0], out[1]);
		else if (kind == SLEEP)
			child_sleep(out[1]);
		else
			child_read(ctl[0], out[1]);
		_exit(0);
	}
	close(ctl[0]);
	close(out[1]);
	child = (struct child){pid, ctl[1], out[0]};
	return pid;
}

static void read_ready(struct ready *r)
{
	assert_int_equal(read(child.out, r, sizeof(*r)), sizeof(*r));
}

/* Read up to @len bytes from the child within @ms. */
static ssize_t read_out(void *buf, size_t len, int ms)
{
	struct timespec nap = {0, 1000000};

	fcntl(child.out, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < ms; i++) {
		ssize_t n = read(child.out, buf, len);

		if (n > 0)
			return n;
		nanosleep(&nap, NULL);
	}
	return -1;
}

/* The child answers a ping: it runs. */
static void assert_runs(void)
{
	char c = 0;

	assert_int_equal(write(child.ctl, "P", 1), 1);
	assert_int_equal(read_out(&c, 1, 3000), 1);
	assert_int_equal(c, 'P');
}

/*
 * The scratch cgroup goes even when a test failed with it frozen: thawed,
 * then removed once the killed child has left it (EBUSY until then).  Only
 * async-signal-safe calls: on_term() runs it too.
 */
static int remove_cgroup(void)
{
	const struct timespec step = {0, 10 * 1000 * 1000};
	int fd = open(cgroup_freeze, O_WRONLY | O_CLOEXEC), r = 0;
	ssize_t n;

	if (fd >= 0) {
		/* A thaw that failed shows as the rmdir's EBUSY. */
		n = write(fd, "0", 1);
		(void)n;
		close(fd);
	}
	for (int i = 0; rmdir(cgroup_dir) < 0; i++) {
		if (errno != EBUSY || i == 200) {
			r = -errno;
			break;
		}
		nanosleep(&step, NULL);
	}
	cgroup_dir[0] = '\0';
	return r;
}

/*
 * meson's timeout ends a test that hangs with SIGTERM: a crf that left the
 * child frozen must not leave its cgroup behind too.
 */
static void on_term(int sig)
{
	if (child.pid > 0)
		kill(child.pid, SIGKILL);
	if (cgroup_dir[0])
		remove_cgroup();
	_exit(128 + sig);
}

static int teardown(void **state)
{
	if (child.pid > 0) {
		kill(child.pid, SIGKILL);
		waitpid(child.pid, NULL, __WALL);
	}
	if (child.ctl >= 0)
		close(child.ctl);
	if (child.out >= 0)
		close(child.out);
	child = (struct child){-1, -1, -1};
	if (cgroup_dir[0]) {
		char dir[sizeof(cgroup_dir)];
		int r;

		memcpy(dir, cgroup_dir, sizeof(dir));
		r = remove_cgroup();
		if (r < 0)
			print_message("cannot remove %s: %s\n", dir, strerror(-r));
	}
	return 0;
}

static char *maps_of(pid_t pid)
{
	char path[64], *text = NULL;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	assert_int_equal(crf_read_file(path, &text), 0);
	return text;
}

/* Every thread of @f in a ptrace-stop ('t' in /proc/PID/task/TID/stat). */
static void assert_all_stopped(const struct crf_frozen *f)
{
	for (size_t i = 0; i < f->n_tids; i++) {
		char path[96], *text = NULL;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)f->pid, (int)f->tids[i]);
		assert_int_equal(crf_read_file(path, &text), 0);
		assert_int_equal(strrchr(text, ')')[2], 't');
		free(text);
	}
}

static void assert_regs_equal(const struct crf_regs *a, const struct crf_regs *b)
{
	assert_memory_equal(&a->gp, &b->gp, sizeof(a->gp));
	assert_int_equal(a->xsave_len, b->xsave_len);
	for (size_t i = 0; i < a->xsave_len; i++)
		if (((uint8_t *)a->xsave)[i] != ((uint8_t *)b->xsave)[i])
			fail_msg("XSAVE area differs at byte %zu", i);
}

/* What the parasite reads must be what the child set up. */
static void check_state(struct crf_parasite *p, pid_t pid, const struct ready *r, int flags)
{
	struct crf_sigaction_info sa[64];
	struct crf_sigaltstack_info ss;
	struct crf_itimer_info it[3];
	struct crf_posix_timer_info pt = {.id = r->timer_id};

	assert_int_equal(parasite_syscall_raw(p, SYS_getpid, NULL), pid);
	assert_int_equal(parasite_get_sigactions(p, sa), 0);
	assert_int_equal(sa[SIGUSR1 - 1].handler, (uint64_t)(uintptr_t)on_usr1);
	assert_true(sa[SIGUSR1 - 1].flags & SA_SIGINFO);
	assert_true(sa[SIGUSR1 - 1].flags & SA_RESTART);
	assert_int_equal(sa[SIGUSR1 - 1].mask, 1ull << (SIGUSR2 - 1));
	assert_int_equal(sa[SIGTRAP - 1].handler, (flags & IGN_TRAP) ? 1 : 0);
	assert_int_equal(parasite_get_sigaltstack(p, &ss), 0);
	assert_int_equal(ss.sp, (uint64_t)(uintptr_t)altstack);
	assert_int_equal(ss.size, sizeof(altstack));
	assert_int_equal(ss.flags, 0);
	assert_int_equal(parasite_get_itimers(p, it), 0);
	assert_int_equal(it[ITIMER_REAL].interval_sec, 7);
	assert_in_range(it[ITIMER_REAL].value_sec, 980, 1000);
	assert_int_equal(it[ITIMER_PROF].value_sec, 0);
	assert_int_equal(parasite_get_posix_timers(p, &pt, 1), 0);
	assert_int_equal(pt.err, 0);
	assert_int_equal(pt.interval_sec, 3);
	assert_in_range(pt.value_sec, 80, 100);
	assert_int_equal(parasite_get_securebits(p), 0);
}

/*
 * The range the dump-task host table gives plugins is exactly the lines the
 * infection added to @maps1 (@maps0 before it): nothing of the task inside
 * it, nothing of the parasite outside it, and no line straddling its ends.
 */
static void check_parasite_mapping(struct crf_parasite *p, const char *maps0, const char *maps1)
{
	uint64_t start, len, covered, area;
	size_t used = 0, n, area_len;
	char *rest = malloc(strlen(maps1) + 1);
	const char *line;

	assert_non_null(rest);
	assert_non_null(crf_dump_host_ops.parasite_mapping);
	assert_int_equal(crf_dump_host_ops.parasite_mapping(p, &start, &len), 0);
	parasite_area(p, &area, &area_len);
	assert_true(start == area && len == area_len);
	assert_true(len && !(start % 4096) && !(len % 4096));
	covered = start;
	for (line = maps1; *line; line += n) {
		unsigned long long s, e;

		n = strcspn(line, "\n");
		n += line[n] == '\n';
		assert_int_equal(sscanf(line, "%llx-%llx", &s, &e), 2);
		if (e <= start || s >= start + len) {
			memcpy(rest + used, line, n);
			used += n;
			continue;
		}
		assert_true(s >= start && e <= start + len);
		assert_int_equal(s, covered);
		covered = e;
	}
	rest[used] = '\0';
	assert_int_equal(covered, start + len);
	assert_string_equal(rest, maps0);
	free(rest);
}

/*
 * Freeze, infect, check, cure (maps and registers as before), unfreeze.
 * Prints the cost of a parasite call and of infect + cure.
 */
static void round_trip(pid_t pid, enum crf_freeze_mode mode, const struct ready *r, int flags)
{
	struct crf_regs before, after;
	struct crf_parasite *p = NULL;
	struct crf_frozen *f = NULL;
	char *maps0, *maps1, *maps2;
	uint64_t start;
	size_t len;
	double t0, t1, t2, infect_ms;
	const int calls = 2000;

	assert_int_equal(crf_freeze(pid, mode, &f), 0);
	assert_int_equal(f->pid, pid);
	assert_int_equal(f->n_tids, 1);
	assert_int_equal(f->tids[0], pid);
	assert_int_equal(f->mode, mode == CRF_FREEZE_AUTO ? CRF_FREEZE_PTRACE : mode);
	assert_all_stopped(f);
	assert_int_equal(crf_regs_get(pid, &before), 0);
	maps0 = maps_of(pid);

	t0 = now_ms();
	assert_int_equal(crf_infect(pid, &p), 0);
	infect_ms = now_ms() - t0;
	maps1 = maps_of(pid);
	parasite_area(p, &start, &len);
	assert_true(strcmp(maps0, maps1) != 0);
	check_parasite_mapping(p, maps0, maps1);
	check_state(p, pid, r, flags);
	t1 = now_ms();
	for (int i = 0; i < calls; i++)
		parasite_syscall_raw(p, SYS_getppid, NULL);
	t2 = now_ms();
	assert_int_equal(crf_cure(p), 0);
	print_message("%s: infect %.3f ms, cure %.3f ms, one parasite call %.2f us, "
		      "XSAVE %zu bytes\n",
		      freeze_mode_name(f->mode), infect_ms, now_ms() - t2, (t2 - t1) * 1e3 / calls,
		      before.xsave_len);

	maps2 = maps_of(pid);
	assert_string_equal(maps0, maps2);
	assert_int_equal(crf_regs_get(pid, &after), 0);
	assert_regs_equal(&before, &after);
	assert_all_stopped(f);
	assert_int_equal(crf_unfreeze(f), 0);
	free(maps0);
	free(maps1);
	free(maps2);
	crf_regs_free(&before);
	crf_regs_free(&after);
}

static void test_freeze_no_such_pid(void **state)
{
	struct crf_frozen *f = (void *)1;
	const char *err;

	capture_begin();
	assert_int_equal(crf_freeze(999999999, CRF_FREEZE_AUTO, &f), -ESRCH);
	err = capture_end();
	assert_null(f);
	assert_contains(err, "pid 999999999");
	assert_int_equal(freeze_mode_parse("bogus"), CRF_FREEZE_INVALID);
	assert_int_equal(freeze_mode_parse("cgroup"), CRF_FREEZE_CGROUP);
}

static void test_spin_ptrace(void **state)
{
	struct ready r;
	pid_t pid = spawn(SPIN, 0);

	read_ready(&r);
	round_trip(pid, CRF_FREEZE_PTRACE, &r, 0);
	assert_runs();
	/* Twice: a cured task can be infected again. */
	round_trip(pid, CRF_FREEZE_AUTO, &r, 0);
	assert_runs();
}

static void test_sleep(void **state)
{
	char msg[64] = "";
	struct ready r;
	pid_t pid = spawn(SLEEP, 0);

	read_ready(&r);
	usleep(50000);
	round_trip(pid, CRF_FREEZE_PTRACE, &r, 0);
	/* The restarted nanosleep ends on time, not early and not with EINTR. */
	assert_true(read_out(msg, sizeof(msg) - 1, 3000) > 0);
	assert_int_equal(msg[0], 'S');
	assert_in_range(atoi(msg + 1), SLEEP_MS - 1, SLEEP_MS + 1500);
}

static void test_read(void **state)
{
	struct ready r;
	pid_t pid = spawn(READ, 0);

	read_ready(&r);
	usleep(20000);
	round_trip(pid, CRF_FREEZE_PTRACE, &r, 0);
	assert_runs();
}

/* SIGTRAP ignored: the int3 must not leave it reset to SIG_DFL. */
static void test_sigtrap_ignored(void **state)
{
	char path[64], *text = NULL;
	struct ready r;
	pid_t pid = spawn(SPIN, IGN_TRAP);
	const char *ign;

	read_ready(&r);
	round_trip(pid, CRF_FREEZE_PTRACE, &r, IGN_TRAP);
	assert_runs();
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	assert_int_equal(crf_read_file(path, &text), 0);
	ign = strstr(text, "SigIgn:");
	assert_non_null(ign);
	assert_true(strtoull(ign + 7, NULL, 16) & (1ull << (SIGTRAP - 1)));
	free(text);
}

/* A signal sent while infected waits, then reaches the task's handler. */
static void test_signal_while_infected(void **state)
{
	struct crf_parasite *p = NULL;
	struct crf_frozen *f = NULL;
	struct crf_proc_status st;
	char c = 0, path[64], *text = NULL;
	struct ready r;
	pid_t pid = spawn(SPIN, 0);

	read_ready(&r);
	assert_int_equal(crf_freeze(pid, CRF_FREEZE_PTRACE, &f), 0);
	assert_int_equal(crf_infect(pid, &p), 0);
	assert_int_equal(kill(pid, SIGUSR1), 0);
	assert_int_equal(parasite_syscall_raw(p, SYS_getpid, NULL), pid);
	/* Blocked in the parasite: pending for the task, not run on crf's stack. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	assert_int_equal(crf_read_file(path, &text), 0);
	assert_int_equal(parse_status(text, &st), 0);
	free(text);
	assert_true(st.shd_pnd & (1ull << (SIGUSR1 - 1)));
	assert_int_equal(st.sig_blk, ~(1ull << (SIGTRAP - 1)) & ~(1ull << (SIGKILL - 1)) &
					     ~(1ull << (SIGSTOP - 1)));
	assert_int_equal(crf_cure(p), 0);
	assert_int_equal(crf_unfreeze(f), 0);
	assert_int_equal(read_out(&c, 1, 3000), 1);
	assert_int_equal(c, 'U');
	assert_runs();
}

/* An mmap that fails (RLIMIT_AS) fails the infection and changes nothing. */
static void test_failed_infection(void **state)
{
	struct rlimit tight = {0, RLIM_INFINITY}, old;
	struct crf_regs before, after;
	struct crf_parasite *p = (void *)1;
	struct crf_frozen *f = NULL;
	char *maps0, *maps1;
	struct ready r;
	pid_t pid = spawn(SPIN, 0);

	read_ready(&r);
	assert_int_equal(crf_freeze(pid, CRF_FREEZE_PTRACE, &f), 0);
	assert_int_equal(crf_regs_get(pid, &before), 0);
	maps0 = maps_of(pid);
	assert_int_equal(prlimit(pid, RLIMIT_AS, NULL, &old), 0);
	tight.rlim_max = old.rlim_max;
	assert_int_equal(prlimit(pid, RLIMIT_AS, &tight, NULL), 0);
	capture_begin();
	assert_int_equal(crf_infect(pid, &p), -ENOMEM);
	assert_contains(capture_end(), "mmap of the parasite");
	assert_null(p);
	assert_int_equal(prlimit(pid, RLIMIT_AS, &old, NULL), 0);
	maps1 = maps_of(pid);
	assert_string_equal(maps0, maps1);
	assert_int_equal(crf_regs_get(pid, &after), 0);
	assert_regs_equal(&before, &after);
	assert_all_stopped(f);
	assert_int_equal(crf_unfreeze(f), 0);
	assert_runs();
	free(maps0);
	free(maps1);
	crf_regs_free(&before);
	crf_regs_free(&after);
}

/*
 * A scratch cgroup under our own, holding only the child.  NULL, or why
 * not (what the machine lacks, for the skip message).
 */
static const char *make_cgroup(pid_t pid)
{
	static char why[4400];
	char *self = NULL, *line, mnt[4096] = "", buf[32];
	FILE *mi = fopen("/proc/self/mountinfo", "re");
	char path[4200];
	int fd;

	if (!mi || crf_read_file("/proc/self/cgroup", &self) < 0) {
		if (mi)
			fclose(mi);
		return "cannot read /proc/self/mountinfo or /proc/self/cgroup";
	}
	while ((line = fgets(path, sizeof(path), mi)))
		if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
			break;
	fclose(mi);
	line = strstr(self, "0::");
	if (!mnt[0] || !line) {
		free(self);
		return "no cgroup v2 hierarchy is mounted (the cgroup v2 freezer needs one)";
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(cgroup_dir, sizeof(cgroup_dir), "%s%s%scrf-test-infect-%d", mnt, line + 3,
		 line[4] ? "/" : "", (int)getpid());
	free(self);
	snprintf(cgroup_freeze, sizeof(cgroup_freeze), "%s/cgroup.freeze", cgroup_dir);
	if (mkdir(cgroup_dir, 0755) < 0) {
		snprintf(why, sizeof(why),
			 "cannot create a cgroup v2 group (mkdir %s: %s): the cgroup v2 freezer "
			 "test needs a writable cgroup v2 hierarchy (root, or a delegated subtree)",
			 cgroup_dir, strerror(errno));
		cgroup_dir[0] = '\0';
		return why;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup_dir);
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, strlen(buf)) < 0) {
		snprintf(why, sizeof(why),
			 "cannot move a process into the cgroup v2 group %s: %s (the cgroup v2 "
			 "freezer test needs a writable cgroup v2 hierarchy)",
			 cgroup_dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return why;
	}
	close(fd);
	return NULL;
}

static void test_spin_cgroup(void **state)
{
	struct crf_frozen *f = NULL;
	struct ready r;
	const char *why;
	pid_t pid = spawn(SPIN, 0);

	read_ready(&r);
	why = make_cgroup(pid);
	if (why)
		test_skip("%s", why);
	round_trip(pid, CRF_FREEZE_CGROUP, &r, 0);
	assert_runs();
	/* Alone in a non-root cgroup: auto picks the freezer too. */
	assert_int_equal(crf_freeze(pid, CRF_FREEZE_AUTO, &f), 0);
	assert_int_equal(f->mode, CRF_FREEZE_CGROUP);
	assert_all_stopped(f);
	assert_int_equal(crf_unfreeze(f), 0);
	assert_runs();
	/* The cgroup is thawed again. */
	{
		char path[4200], *text = NULL;

		snprintf(path, sizeof(path), "%s/cgroup.events", cgroup_dir);
		assert_int_equal(crf_read_file(path, &text), 0);
		assert_non_null(strstr(text, "frozen 0"));
		free(text);
	}
}

/* Every thread is found and stopped (the caller refuses more than one for now). */
static void test_threads(void **state)
{
	struct crf_frozen *f = NULL;
	struct ready r;
	pid_t pid = spawn(THREADS, 0);

	read_ready(&r);
	usleep(20000);
	assert_int_equal(crf_freeze(pid, CRF_FREEZE_PTRACE, &f), 0);
	assert_int_equal(f->n_tids, 3);
	assert_int_equal(f->tids[0], pid);
	assert_all_stopped(f);
	assert_true(crf_frozen_ms(f) >= 0);
	assert_int_equal(crf_unfreeze(f), 0);
	assert_runs();
}

/* Killing a frozen child: it dies without running again. */
static void test_kill(void **state)
{
	struct crf_frozen *f = NULL;
	struct ready r;
	int status;
	pid_t pid = spawn(SPIN, 0);

	read_ready(&r);
	assert_int_equal(crf_freeze(pid, CRF_FREEZE_PTRACE, &f), 0);
	assert_int_equal(crf_frozen_kill(f), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	child.pid = -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freeze_no_such_pid),
		cmocka_unit_test_teardown(test_spin_ptrace, teardown),
		cmocka_unit_test_teardown(test_sleep, teardown),
		cmocka_unit_test_teardown(test_read, teardown),
		cmocka_unit_test_teardown(test_sigtrap_ignored, teardown),
		cmocka_unit_test_teardown(test_signal_while_infected, teardown),
		cmocka_unit_test_teardown(test_failed_infection, teardown),
		cmocka_unit_test_teardown(test_spin_cgroup, teardown),
		cmocka_unit_test_teardown(test_threads, teardown),
		cmocka_unit_test_teardown(test_kill, teardown),
	};

	signal(SIGTERM, on_term);
	return tests_result(cmocka_run_group_tests(tests, NULL, NULL));
}
