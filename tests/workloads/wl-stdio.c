// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-stdio: fds 0, 1 and 2 are the program's, restored like any other fd.
 *
 *   wl-stdio pipeline  a shell's `producer | consumer`: the root forks P,
 *                      whose fd 1 is a pipe, and C, whose fd 0 is its read
 *                      end (nobody else holds the pipe).  P writes
 *                      "seq N" lines, C reads them and checks each; after
 *                      the restore P writes more, then closes, and C must
 *                      have read every line, in order, up to EOF.
 *   wl-stdio daemon    `prog <&- >log 2>&1`: fd 0 closed, fds 1 and 2 one
 *                      description of a log file (O_WRONLY, no O_APPEND)
 *                      that it writes lines to; after the restore the log
 *                      holds every line once, the offset is its size, and
 *                      a line written to fd 2 lands at its end.  fd 7 is
 *                      `tail -f` of the harness's log, which grows between
 *                      the dump and the restore: read-only, at its offset.
 *   wl-stdio closed    a child that closed its fds 0-2: they stay closed.
 *   wl-stdio outside   fd 5 is a pipe (or FIFO) the harness holds the other
 *                      end of (harness --outside-pipe 5): lines
 *                      "outside: N", then "outside: done N" after the
 *                      restore, all of which the harness must receive.
 *   wl-stdio inherit   fd 1 is a file of its own; dumped and restored with
 *                      --inherit-stdio, fds 0-2 must then be crf restore's
 *                      (the harness's /dev/null and log), not its own.
 *   wl-stdio grow      fd 6 writes to the harness's log without O_APPEND:
 *                      the log grows before the restore, which must refuse.
 *   wl-stdio extra     a pipe whose two ends the root holds (fds 15, 16) and
 *                      a process outside the tree (an orphan of a double
 *                      fork, the harness's child by then) holds a write end
 *                      of too: the dump must refuse, naming that holder.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
	const struct timespec t = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&t, NULL);
}

/* Write the line "@what N". */
static void write_line(int fd, const char *what, unsigned long n)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "%s %lu\n", what, n);

	WL_CHECK(write(fd, line, (size_t)len) == len, "write fd %d: %s", fd, strerror(errno));
}

static void wait_ok(pid_t pid, const char *who)
{
	int st;

	WL_CHECK(waitpid(pid, &st, 0) == pid, "waitpid %s: %s", who, strerror(errno));
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status %#x)", who, st);
}

/* Where fd @fd leads, into @buf. */
static const char *link_of(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* ---- pipeline ------------------------------------------------------------ */

static _Noreturn void producer(void)
{
	unsigned long n = 0;

	while (!wl_verify_requested()) {
		write_line(1, "seq", ++n);
		pause_ms(20);
	}
	for (int i = 0; i < 5; i++)
		write_line(1, "seq", ++n);
	write_line(1, "last", n);
	exit(0);
}

/* Reads fd 0 a line at a time (the pipe is all it has to read). */
static _Noreturn void consumer(void)
{
	unsigned long want = 1, got, last = 0;
	char line[64];
	size_t len = 0;
	ssize_t r;

	for (;;) {
		r = read(0, line + len, 1);
		WL_CHECK(r >= 0, "C: read fd 0: %s", strerror(errno));
		if (r == 0)
			break;
		if (line[len] != '\n') {
			WL_CHECK(++len < sizeof(line) - 1, "C: a line too long");
			continue;
		}
		line[len] = '\0';
		len = 0;
		if (sscanf(line, "last %lu", &last) == 1)
			continue;
		WL_CHECK(sscanf(line, "seq %lu", &got) == 1 && got == want,
			 "C: read '%s', expected seq %lu", line, want);
		want++;
	}
	WL_CHECK(last && last == want - 1, "C: EOF after seq %lu, the producer's last was %lu",
		 want - 1, last);
	wl_note("the consumer read %lu lines from fd 0, in order, then EOF", last);
	exit(0);
}

static void pipeline(void)
{
	pid_t p, c;
	int fds[2];

	WL_CHECK(pipe(fds) == 0, "pipe");
	p = fork();
	WL_CHECK(p >= 0, "fork");
	if (p == 0) {
		WL_CHECK(dup2(fds[1], 1) == 1 && close(fds[0]) == 0 && close(fds[1]) == 0, "P");
		producer();
	}
	c = fork();
	WL_CHECK(c >= 0, "fork");
	if (c == 0) {
		WL_CHECK(dup2(fds[0], 0) == 0 && close(fds[0]) == 0 && close(fds[1]) == 0, "C");
		consumer();
	}
	close(fds[0]);
	close(fds[1]);
	pause_ms(100);
	wl_ready();
	wait_ok(p, "the producer");
	wait_ok(c, "the consumer");
}

/* ---- daemon ---------------------------------------------------------------- */

/* The log must hold "line 1" ... "line @n", each once, and nothing else: its size. */
static size_t check_log(const char *log, unsigned long n)
{
	size_t cap = 1 << 20, off = 0, size = 0;
	char *text = malloc(cap), expect[64];
	int fd = open(log, O_RDONLY);

	WL_CHECK(text && fd >= 0, "open %s", log);
	while (size < cap - 1) {
		ssize_t r = read(fd, text + size, cap - 1 - size);

		WL_CHECK(r >= 0, "read %s", log);
		if (!r)
			break;
		size += (size_t)r;
	}
	close(fd);
	for (unsigned long i = 1; i <= n; i++) {
		int len = snprintf(expect, sizeof(expect), "line %lu\n", i);

		WL_CHECK(off + (size_t)len <= size && !memcmp(text + off, expect, (size_t)len),
			 "the log at %zu is not '%.*s'", off, len - 1, expect);
		off += (size_t)len;
	}
	WL_CHECK(off == size, "the log has %zu bytes after its %lu lines", size - off, n);
	free(text);
	return size;
}

static void daemon_log(void)
{
	char log[512], buf[512], tailpath[512];
	unsigned long n = 0;
	struct stat st1, st2, st;
	bool closed0, same, flags_ok;
	off_t tail_at;
	size_t size;
	int fd;

	/* fd 1's path is the harness's log: the "tail -f" of fd 7 follows it. */
	link_of(1, tailpath, sizeof(tailpath));
	fd = open(tailpath, O_RDONLY);
	WL_CHECK(fd >= 0 && dup2(fd, 7) == 7 && close(fd) == 0, "open %s", tailpath);
	tail_at = lseek(7, 0, SEEK_END);
	/* fd 8: the harness's log again, where the verdict goes. */
	WL_CHECK(dup2(2, 8) == 8, "dup2");
	snprintf(log, sizeof(log), "%s/daemon.log", wl_tmpdir());
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	WL_CHECK(fd >= 0 && dup2(fd, 1) == 1 && dup2(1, 2) == 2 && close(fd) == 0, "%s", log);
	close(0);
	wl_ready();
	while (!wl_verify_requested()) {
		write_line(1, "line", ++n);
		pause_ms(20);
	}
	write_line(2, "line", ++n);
	closed0 = fcntl(0, F_GETFD) < 0 && errno == EBADF;
	same = fstat(1, &st1) == 0 && fstat(2, &st2) == 0 && stat(log, &st) == 0 &&
	       st1.st_ino == st.st_ino && st2.st_ino == st.st_ino;
	flags_ok = (fcntl(1, F_GETFL) & (O_ACCMODE | O_APPEND)) == O_WRONLY;
	WL_CHECK(dup2(8, 2) == 2, "dup2");

	WL_CHECK(closed0, "fd 0 is open: %s", link_of(0, buf, sizeof(buf)));
	WL_CHECK(same, "fds 1 and 2 are not the log %s", log);
	WL_CHECK(flags_ok, "fd 1's flags are %#o", fcntl(1, F_GETFL));
	size = check_log(log, n);
	WL_CHECK(lseek(1, 0, SEEK_CUR) == (off_t)size, "fd 1's offset is %lld, the log's size %zu",
		 (long long)lseek(1, 0, SEEK_CUR), size);
	WL_CHECK(lseek(7, 0, SEEK_CUR) == tail_at && (fcntl(7, F_GETFL) & O_ACCMODE) == O_RDONLY,
		 "fd 7 (tail of %s) is at %lld, not %lld", tailpath,
		 (long long)lseek(7, 0, SEEK_CUR), (long long)tail_at);
	wl_note("%lu lines in the log, each once; fd 7 still at %lld of the grown %s", n,
		(long long)tail_at, tailpath);
}

/* ---- closed ---------------------------------------------------------------- */

static void closed(void)
{
	int st, fds[2];
	pid_t c;
	char c1;

	WL_CHECK(pipe2(fds, O_CLOEXEC) == 0, "pipe");
	c = fork();
	WL_CHECK(c >= 0, "fork");
	if (c == 0) {
		close(0);
		close(1);
		close(2);
		WL_CHECK(write(fds[1], "c", 1) == 1, "ready");
		close(fds[0]);
		close(fds[1]);
		wl_wait_verify();
		/* Nothing may be opened before: it would take fd 0. */
		for (int i = 0; i < 3; i++)
			if (fcntl(i, F_GETFD) >= 0 || errno != EBADF)
				_exit(10 + i);
		_exit(0);
	}
	close(fds[1]);
	WL_CHECK(read(fds[0], &c1, 1) == 1, "the child is not ready");
	close(fds[0]);
	wl_ready();
	WL_CHECK(waitpid(c, &st, 0) == c, "waitpid");
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "the child's fd %d is open after the restore",
		 WIFEXITED(st) ? WEXITSTATUS(st) - 10 : -1);
	wl_note("the child's fds 0-2 stayed closed");
}

/* ---- outside --------------------------------------------------------------- */

static void outside(void)
{
	unsigned long n = 0;
	struct stat st;

	WL_CHECK(fstat(5, &st) == 0 && S_ISFIFO(st.st_mode),
		 "fd 5 is not a pipe: run me with harness --outside-pipe 5");
	write_line(5, "outside:", ++n);
	wl_ready();
	while (!wl_verify_requested()) {
		write_line(5, "outside:", ++n);
		pause_ms(20);
	}
	for (int i = 0; i < 3; i++)
		write_line(5, "outside:", ++n);
	write_line(5, "outside: done", n);
	close(5);
}

/* ---- inherit --------------------------------------------------------------- */

static void inherit(void)
{
	char mine[512], at[512], was0[512], was1[512];
	int fd;

	link_of(0, was0, sizeof(was0));
	link_of(1, was1, sizeof(was1));
	snprintf(mine, sizeof(mine), "%s/mine.log", wl_tmpdir());
	fd = open(mine, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	WL_CHECK(fd >= 0 && dup2(fd, 1) == 1 && close(fd) == 0, "%s", mine);
	wl_ready();
	wl_wait_verify();
	/* crf restore's fd 0 and 1 are the harness's, as the workload's were when it started. */
	WL_CHECK(!strcmp(link_of(0, at, sizeof(at)), was0), "fd 0 is %s, not crf restore's %s", at,
		 was0);
	WL_CHECK(!strcmp(link_of(1, at, sizeof(at)), was1), "fd 1 is %s, not crf restore's %s", at,
		 was1);
	wl_note("fds 0 and 1 are crf restore's (%s, %s)", was0, was1);
}

/* ---- grow ------------------------------------------------------------------ */

static void grow(void)
{
	char path[512];
	int fd;

	link_of(1, path, sizeof(path));
	fd = open(path, O_WRONLY);
	WL_CHECK(fd >= 0 && dup2(fd, 6) == 6 && close(fd) == 0, "open %s", path);
	WL_CHECK(lseek(6, 0, SEEK_END) >= 0, "lseek");
	wl_ready();
	wl_wait_verify();
}

/* ---- extra ----------------------------------------------------------------- */

static void extra(void)
{
	int p[2], sync[2];
	pid_t mid, orphan = 0;

	WL_CHECK(pipe(p) == 0 && dup2(p[0], 15) == 15 && dup2(p[1], 16) == 16, "pipe: %s",
		 strerror(errno));
	close(p[0]);
	close(p[1]);
	WL_CHECK(pipe(sync) == 0, "pipe: %s", strerror(errno));
	mid = fork();
	WL_CHECK(mid >= 0, "fork: %s", strerror(errno));
	if (mid == 0) {
		/* The grandchild is reparented out of the tree when its parent exits. */
		pid_t g = fork();

		if (g == 0) {
			pid_t self = getpid();

			close(sync[0]);
			close(15);
			WL_CHECK(write(sync[1], &self, sizeof(self)) == sizeof(self), "sync");
			close(sync[1]);
			for (;;)
				pause();
		}
		_exit(g > 0 ? 0 : 1);
	}
	close(sync[1]);
	WL_CHECK(waitpid(mid, NULL, 0) == mid, "waitpid");
	WL_CHECK(read(sync[0], &orphan, sizeof(orphan)) == sizeof(orphan), "sync");
	close(sync[0]);
	WL_CHECK(orphan > 0, "no outside holder");
	wl_ready();
	wl_wait_verify();
	kill(orphan, SIGKILL);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} modes[] = {{"pipeline", pipeline}, {"daemon", daemon_log}, {"closed", closed},
		     {"outside", outside},   {"inherit", inherit},   {"grow", grow},
		     {"extra", extra}};
	const char *mode = argc > 1 ? argv[1] : "";

	wl_init("stdio");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].name)) {
			modes[i].fn();
			return 0;
		}
	wl_fail("usage: wl-stdio pipeline|daemon|closed|outside|inherit|grow|extra");
}
