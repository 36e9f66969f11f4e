// SPDX-License-Identifier: GPL-2.0-only
/* wl: helpers shared by the test workloads (see wl.h). */
#include "wl.h"
#include "wl-tree.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *wl_name = "workload";
static const char *ready_path;
static const char *verify_path;
static const char *tmp_dir;
static uint64_t give_up_ns; /* 0: wait for ever */
static char published[4096];
static size_t published_len;

void wl_init(const char *name)
{
	const char *t;

	wl_name = name;
	ready_path = getenv("CRF_TEST_READY");
	verify_path = getenv("CRF_TEST_VERIFY");
	tmp_dir = getenv("CRF_TEST_TMPDIR");
	if (!tmp_dir || !*tmp_dir)
		tmp_dir = "/tmp";
	t = getenv("CRF_TEST_TIMEOUT");
	if (t && atoi(t) > 0)
		give_up_ns = wl_now_ns() + (uint64_t)atoi(t) * 1000000000ULL;
}

const char *wl_tmpdir(void)
{
	return tmp_dir;
}

static void vmsg(const char *what, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "wl-%s: %s%s\n", wl_name, what, line);
	fflush(stderr);
}

_Noreturn void wl_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("FAIL: ", fmt, ap);
	va_end(ap);
	exit(1);
}

_Noreturn void wl_fail_at(const char *file, int line, const char *cond, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wl_fail("%s (%s:%d: %s)", msg, file, line, cond);
}

void wl_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void wl_downgrade(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("NOTE: ", fmt, ap);
	va_end(ap);
}

uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void wl_publish(const char *key, const char *fmt, ...)
{
	size_t room = sizeof(published) - published_len;
	va_list ap;
	int n;

	n = snprintf(published + published_len, room, "%s=", key);
	if (n < 0 || (size_t)n >= room)
		wl_fail("too much published in the ready file");
	published_len += (size_t)n;
	room -= (size_t)n;
	va_start(ap, fmt);
	n = vsnprintf(published + published_len, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n + 1 >= room)
		wl_fail("too much published in the ready file");
	published_len += (size_t)n;
	published[published_len++] = '\n';
	published[published_len] = '\0';
}

void wl_ready(void)
{
	char tmp[4096], text[sizeof(published) + 32];
	int fd, n;

	n = snprintf(text, sizeof(text), "pid=%d\n%s", (int)getpid(), published);
	if (!ready_path) {
		wl_note("ready (pid %d); no CRF_TEST_READY, so no ready file", (int)getpid());
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		wl_fail("create %s: %s", tmp, strerror(errno));
	if (write(fd, text, (size_t)n) != n)
		wl_fail("write %s: %s", tmp, strerror(errno));
	if (close(fd) < 0)
		wl_fail("close %s: %s", tmp, strerror(errno));
	if (rename(tmp, ready_path) < 0)
		wl_fail("rename %s to %s: %s", tmp, ready_path, strerror(errno));
}

bool wl_verify_requested(void)
{
	if (verify_path && access(verify_path, F_OK) == 0)
		return true;
	if (give_up_ns && wl_now_ns() > give_up_ns)
		wl_fail("no verify request within CRF_TEST_TIMEOUT; giving up");
	return false;
}

void wl_wait_verify(void)
{
	const struct timespec step = {0, 10 * 1000 * 1000};

	while (!wl_verify_requested())
		nanosleep(&step, NULL);
}

uint64_t wl_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t wl_rng_next(struct wl_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void wl_fill(void *p, size_t n, uint64_t seed)
{
	struct wl_rng r = {seed};
	unsigned char *b = p;
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		w = wl_rng_next(&r);
		memcpy(b + i, &w, 8);
	}
	if (i < n) {
		w = wl_rng_next(&r);
		memcpy(b + i, &w, n - i);
	}
}

/*
 * Each word is compared with the word drawn for that same offset (a run
 * shifted by one word must not match the sequence one word on), in one
 * 64-bit comparison: the 1 GiB test checks its region through here.  The
 * first differing byte of a word is its lowest differing byte on x86 (little
 * endian).
 */
ssize_t wl_cmp_fill(const void *p, size_t n, uint64_t seed)
{
	struct wl_rng r = {seed};
	const unsigned char *b = p;
	uint64_t want, got;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		want = wl_rng_next(&r);
		memcpy(&got, b + i, 8);
		if (got != want)
			return (ssize_t)(i + (size_t)__builtin_ctzll(got ^ want) / 8);
	}
	if (i == n)
		return -1;
	want = wl_rng_next(&r);
	for (size_t j = 0; i + j < n; j++)
		if (b[i + j] != (unsigned char)(want >> (8 * j)))
			return (ssize_t)(i + j);
	return -1;
}

ssize_t wl_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			err = errno;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

void wl_status_field(const char *key, char *out, size_t size)
{
	static char status[8192];
	size_t klen = strlen(key);
	char *line, *end;

	if (wl_read_file("/proc/self/status", status, sizeof(status)) < 0)
		wl_fail("read /proc/self/status: %s", strerror(errno));
	for (line = status; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		line += klen + 1;
		line += strspn(line, " \t");
		end = strchrnul(line, '\n');
		snprintf(out, size, "%.*s", (int)(end - line), line);
		return;
	}
	wl_fail("no %s in /proc/self/status", key);
}

void wl_check_untraced(void)
{
	char tracer[32];

	wl_status_field("TracerPid", tracer, sizeof(tracer));
	if (strcmp(tracer, "0"))
		wl_fail("still traced by PID %s", tracer);
}

void wl_check_ids(const char *who, pid_t pid, const struct expect *e)
{
	pid_t sid = getsid(pid), pgid = getpgid(pid);

	if (sid != e->sid || pgid != e->pgid)
		wl_fail("%s (pid %d): session %d group %d, expected session %d group %d", who,
			(int)pid, (int)sid, (int)pgid, (int)e->sid, (int)e->pgid);
}

void wl_node_verify(const struct node *n, size_t buf_bytes)
{
	bool failed = false;
	ssize_t bad;

	if (getpid() != n->self.pid || getppid() != n->self.ppid)
		wl_fail("%s: pid %d parent %d, expected pid %d parent %d", n->name, (int)getpid(),
			(int)getppid(), (int)n->self.pid, (int)n->self.ppid);
	wl_check_ids(n->name, 0, &n->self);
	bad = wl_cmp_fill(n->buf, buf_bytes, n->seed);
	if (bad >= 0)
		wl_fail("%s: its memory differs at offset %zd", n->name, bad);
	for (int k = 0; k < n->n_kids; k++)
		wl_check_ids("a child", n->kids[k].pid, &n->kids[k]);
	for (int k = 0; k < n->n_kids; k++) {
		int st;

		if (waitpid(n->kids[k].pid, &st, 0) != n->kids[k].pid)
			wl_fail("%s: waitpid(%d): %s", n->name, (int)n->kids[k].pid,
				strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			wl_note("%s: child %d failed (status %#x)", n->name, (int)n->kids[k].pid,
				st);
			failed = true;
		}
	}
	if (failed)
		wl_fail("%s: a descendant failed", n->name);
}

void wl_own_netns(void)
{
	struct ifreq ifr = {0};
	int fd;

	if (unshare(CLONE_NEWNET))
		wl_fail("unshare(CLONE_NEWNET): %s", strerror(errno));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		wl_fail("lo: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr))
		wl_fail("lo up: %s", strerror(errno));
	close(fd);
}
