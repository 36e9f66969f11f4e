// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-anonfds: eventfd, signalfd, timerfd, memfd and pidfd fds keep their
 * objects' state across checkpoint and restore.
 *
 * State:
 *   ev     an eventfd, O_NONBLOCK, count 7; evdup a dup of it
 *   sem    a semaphore-mode eventfd, count 3
 *   sig    a signalfd for SIGUSR2, which is blocked
 *   tm     a CLOCK_MONOTONIC timerfd, 2 s interval, that expired once
 *          (10 ms first value) and was not read
 *   mem    a memfd (not mapped) with 10000 bytes, sealed against growing
 *          and shrinking, at offset 123
 *   pid    a pidfd of the workload itself
 * After restore: ev reads 7 and a write through evdup is read through ev;
 * sem reads 1 three times, then is empty; a SIGUSR2 queued by the
 * workload is read from sig; tm's next expiry is within its interval and
 * a read returns at least one tick; mem has its content, size, seals and
 * offset; pid still signals (signal 0).
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MEM_LEN	  10000
#define MEM_POS	  123
#define MEM_SEALS (F_SEAL_GROW | F_SEAL_SHRINK)
#define SIG_VALUE 42

struct fds {
	int ev, evdup, sem, sig, tm, mem, pid;
};

static void setup_events(struct fds *f)
{
	struct itimerspec its = {.it_interval = {2, 0}, .it_value = {0, 10 * 1000 * 1000}};
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		wl_fail("sigprocmask: %s", strerror(errno));
	f->ev = eventfd(7, EFD_NONBLOCK);
	f->evdup = dup(f->ev);
	f->sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	f->sig = signalfd(-1, &mask, SFD_NONBLOCK);
	f->tm = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	if (f->ev < 0 || f->evdup < 0 || f->sem < 0 || f->sig < 0 || f->tm < 0)
		wl_fail("creating the fds: %s", strerror(errno));
	if (timerfd_settime(f->tm, 0, &its, NULL) < 0)
		wl_fail("timerfd_settime: %s", strerror(errno));
	/* Let it expire once, and leave the tick unread. */
	usleep(50 * 1000);
}

static void setup_memfd_pidfd(struct fds *f)
{
	unsigned char *buf = malloc(MEM_LEN);

	f->mem = memfd_create("wl-anonfds", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (!buf || f->mem < 0)
		wl_fail("memfd_create: %s", strerror(errno));
	wl_fill(buf, MEM_LEN, 11);
	if (write(f->mem, buf, MEM_LEN) != MEM_LEN || fcntl(f->mem, F_ADD_SEALS, MEM_SEALS) < 0 ||
	    lseek(f->mem, MEM_POS, SEEK_SET) != MEM_POS)
		wl_fail("filling the memfd: %s", strerror(errno));
	free(buf);
	f->pid = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (f->pid < 0)
		wl_fail("pidfd_open: %s", strerror(errno));
}

static uint64_t read_count(int fd, const char *what)
{
	uint64_t v = 0;

	WL_CHECK(read(fd, &v, sizeof(v)) == sizeof(v), "read %s (fd %d): %s", what, fd,
		 strerror(errno));
	return v;
}

static void check_eventfds(const struct fds *f)
{
	uint64_t one = 1, v;
	int fl = fcntl(f->ev, F_GETFL);

	WL_CHECK(fl >= 0 && (fl & O_NONBLOCK), "eventfd %d lost O_NONBLOCK", f->ev);
	v = read_count(f->ev, "eventfd");
	WL_CHECK(v == 7, "eventfd count %llu, was 7", (unsigned long long)v);
	WL_CHECK(write(f->evdup, &one, sizeof(one)) == sizeof(one), "write: %s", strerror(errno));
	WL_CHECK(read_count(f->ev, "eventfd") == 1, "a write through fd %d was not read through %d",
		 f->evdup, f->ev);
	for (int i = 0; i < 3; i++) {
		v = read_count(f->sem, "semaphore eventfd");
		WL_CHECK(v == 1, "semaphore eventfd read %d gave %llu", i, (unsigned long long)v);
	}
	WL_CHECK(read(f->sem, &v, sizeof(v)) < 0 && errno == EAGAIN,
		 "the semaphore eventfd had more than 3");
}

static void check_signalfd(const struct fds *f)
{
	union sigval val = {.sival_int = SIG_VALUE};
	struct signalfd_siginfo si;

	WL_CHECK(sigqueue(getpid(), SIGUSR2, val) == 0, "sigqueue: %s", strerror(errno));
	WL_CHECK(read(f->sig, &si, sizeof(si)) == sizeof(si), "read signalfd: %s", strerror(errno));
	WL_CHECK(si.ssi_signo == SIGUSR2 && si.ssi_int == SIG_VALUE,
		 "signalfd read signal %u value %d", si.ssi_signo, si.ssi_int);
}

static void check_timerfd(const struct fds *f)
{
	struct itimerspec its;
	uint64_t ticks;

	WL_CHECK(timerfd_gettime(f->tm, &its) == 0, "timerfd_gettime: %s", strerror(errno));
	WL_CHECK(its.it_interval.tv_sec == 2 && its.it_interval.tv_nsec == 0,
		 "timerfd interval %lld.%09ld", (long long)its.it_interval.tv_sec,
		 its.it_interval.tv_nsec);
	WL_CHECK((its.it_value.tv_sec || its.it_value.tv_nsec) && its.it_value.tv_sec < 2,
		 "timerfd next expiry in %lld.%09ld s", (long long)its.it_value.tv_sec,
		 its.it_value.tv_nsec);
	ticks = read_count(f->tm, "timerfd");
	WL_CHECK(ticks >= 1, "timerfd ticks %llu", (unsigned long long)ticks);
}

static void check_memfd_pidfd(const struct fds *f)
{
	unsigned char *buf = malloc(MEM_LEN);
	struct stat st;
	char path[64], link[256];
	ssize_t n;

	WL_CHECK(buf && fstat(f->mem, &st) == 0 && st.st_size == MEM_LEN, "memfd size %lld",
		 (long long)st.st_size);
	WL_CHECK(pread(f->mem, buf, MEM_LEN, 0) == MEM_LEN && wl_cmp_fill(buf, MEM_LEN, 11) < 0,
		 "the memfd content differs");
	WL_CHECK(fcntl(f->mem, F_GET_SEALS) == MEM_SEALS, "memfd seals %#x",
		 fcntl(f->mem, F_GET_SEALS));
	WL_CHECK(ftruncate(f->mem, 10) < 0 && errno == EPERM, "a sealed memfd shrank");
	WL_CHECK(lseek(f->mem, 0, SEEK_CUR) == MEM_POS, "memfd offset moved");
	WL_CHECK(fcntl(f->mem, F_GETFD) == FD_CLOEXEC, "memfd lost close-on-exec");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->mem);
	n = readlink(path, link, sizeof(link) - 1);
	WL_CHECK(n > 0 && !strncmp(link, "/memfd:wl-anonfds ", 18), "memfd named %.*s", (int)n,
		 link);
	WL_CHECK(syscall(SYS_pidfd_send_signal, f->pid, 0, NULL, 0) == 0, "pidfd_send_signal: %s",
		 strerror(errno));
	free(buf);
}

int main(void)
{
	struct fds f;

	wl_init("anonfds");
	setup_events(&f);
	setup_memfd_pidfd(&f);
	wl_ready();
	wl_wait_verify();
	check_eventfds(&f);
	check_signalfd(&f);
	check_timerfd(&f);
	check_memfd_pidfd(&f);
	wl_note("eventfds, signalfd, timerfd, memfd and pidfd all as before");
	return 0;
}
