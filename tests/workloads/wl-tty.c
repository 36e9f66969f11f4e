// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tty: terminals.
 *
 * "wl-tty" (a pty of the tree's own, as a terminal emulator or sshd has):
 *
 *   P  the root: holds the master, in packet mode, with O_ASYNC, itself as
 *   |  the owner (F_SETOWN_EX) and SIGRTMIN+2 as the signal (blocked)
 *   +- C  setsid, the slave as its controlling terminal, on its fds 0 and
 *      |  1 (fd 2 stays the log) and at fd 9 (another open, O_NONBLOCK);
 *      |  raw mode with VMIN 3, VTIME 7 and VINTR ^G, a 33x101 window
 *      +- G  its own group, the terminal's foreground; SIGWINCH blocked
 *
 * After the restore each checks what it can see: P the pty's termios,
 * window size, packet mode, lock, session and foreground through the
 * master; C its session, its controlling terminal and the flags of its
 * fds; G its group and that it has the foreground.  Then the two ends
 * talk: P writes "ping!" to the master, G reads it from the slave (as
 * the foreground group it can) and answers "pong", which P reads with
 * its packet header, and must have been signalled for it (SIGRTMIN+2 with
 * si_fd the master's); P then changes the window size and G must get
 * SIGWINCH and see the new size.  C waits for G, P for C: P's status is
 * the verdict.
 *
 * The slave's inode is given to uid 4321, gid 5 with mode 0600 (a login
 * session's pty): the new slave must have them too.
 *
 * "wl-tty queued": the same, but P writes "early" to the master before
 * the dump, which nobody reads: the dump must refuse the pty, naming it
 * and the 5 bytes; G then reads "early" before "ping!".
 *
 * "wl-tty shell" (a shell job, run by the harness's --pty on a terminal
 * it owns, dumped and restored with --shell-job): fds 0-2 are the
 * terminal (one description, O_APPEND added) and fd 7 another open of it
 * (O_RDONLY, close-on-exec).  Like less or vim, the job puts the terminal
 * in non-canonical mode without echo (VMIN 1) and sets a 50x132 window;
 * the harness, as a shell, puts its own settings back when the dump kills
 * the job.  After the restore the fds must still be the terminal, with the
 * job's termios and window size; the workload must be in the foreground
 * group and read, a byte at a time, the line the harness types once it
 * asked for the verification.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define LINE	"line-after-restore"
#define WAIT_MS 10000

static const struct winsize ws_before = {33, 101, 640, 480};
static const struct winsize ws_after = {40, 120, 0, 0};
static const struct winsize ws_job = {50, 132, 0, 0};

#define SLAVE_UID  4321
#define SLAVE_GID  5
#define SLAVE_MODE 0600
#define EARLY	   "early"

static bool queued;

static void same_termios(const char *who, const struct termios *a, const struct termios *b)
{
	WL_CHECK(a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag && a->c_cflag == b->c_cflag &&
			 a->c_lflag == b->c_lflag && !memcmp(a->c_cc, b->c_cc, NCCS),
		 "%s: termios changed: iflag %#x->%#x oflag %#x->%#x cflag %#x->%#x "
		 "lflag %#x->%#x",
		 who, a->c_iflag, b->c_iflag, a->c_oflag, b->c_oflag, a->c_cflag, b->c_cflag,
		 a->c_lflag, b->c_lflag);
}

/* Wait until @fd is readable, WAIT_MS at most. */
static void wait_in(int fd, const char *what)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n;

	do
		n = poll(&p, 1, WAIT_MS);
	while (n < 0 && errno == EINTR);
	WL_CHECK(n == 1, "nothing to read %s within %d ms", what, WAIT_MS);
}

/* The controlling terminal's device, from /proc/self/stat. */
static dev_t ctty_of_self(void)
{
	char buf[1024], *end;
	unsigned long nr;

	WL_CHECK(wl_read_file("/proc/self/stat", buf, sizeof(buf)) > 0, "read /proc/self/stat");
	end = strrchr(buf, ')');
	WL_CHECK(end && sscanf(end + 1, " %*c %*d %*d %*d %lu", &nr) == 1, "parse stat");
	return makedev((nr >> 8) & 0xfff, (nr & 0xff) | ((nr >> 12) & 0xfff00));
}

/* ---- the pty of the tree's own ---------------------------------------- */

static struct termios tio_before;
static pid_t c_pid, g_pid;

static _Noreturn void grandchild(int ready)
{
	struct winsize ws;
	char buf[16] = "";
	const char *want;
	size_t got = 0;
	struct timespec limit = {WAIT_MS / 1000, 0};
	sigset_t winch;
	ssize_t n;

	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	sigprocmask(SIG_BLOCK, &winch, NULL);
	WL_CHECK(setpgid(0, 0) == 0, "G: setpgid: %s", strerror(errno));
	WL_CHECK(write(ready, "g", 1) == 1, "G: ready");
	close(ready);
	wl_wait_verify();

	WL_CHECK(getpgrp() == getpid() && getsid(0) == c_pid, "G: group %d session %d",
		 (int)getpgrp(), (int)getsid(0));
	WL_CHECK(tcgetpgrp(0) == getpgrp(), "G: the foreground is %d, not G's group",
		 (int)tcgetpgrp(0));
	want = queued ? EARLY "ping!" : "ping!";
	while (got < strlen(want)) {
		wait_in(0, "on the slave");
		n = read(0, buf + got, sizeof(buf) - 1 - got);
		WL_CHECK(n > 0, "G: read the slave: %s", n < 0 ? strerror(errno) : "EOF");
		got += (size_t)n;
	}
	WL_CHECK(got == strlen(want) && !memcmp(buf, want, got), "G: read '%.*s'", (int)got, buf);
	WL_CHECK(write(1, "pong", 4) == 4, "G: write the slave: %s", strerror(errno));
	WL_CHECK(sigtimedwait(&winch, NULL, &limit) == SIGWINCH, "G: no SIGWINCH: %s",
		 strerror(errno));
	WL_CHECK(ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row == ws_after.ws_row &&
			 ws.ws_col == ws_after.ws_col,
		 "G: window %ux%u after SIGWINCH", ws.ws_row, ws.ws_col);
	exit(0);
}

static void wait_ok(pid_t pid, const char *who)
{
	int st;

	WL_CHECK(waitpid(pid, &st, 0) == pid, "waitpid %s: %s", who, strerror(errno));
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status %#x)", who, st);
}

static _Noreturn void child(const char *slave, int ready)
{
	struct termios tio, now;
	int s, g_ready[2];
	char c;

	c_pid = getpid();
	WL_CHECK(setsid() == getpid(), "C: setsid: %s", strerror(errno));
	s = open(slave, O_RDWR);
	WL_CHECK(s >= 0 && ioctl(s, TIOCSCTTY, 0) == 0, "C: %s: %s", slave, strerror(errno));
	WL_CHECK(tcgetattr(s, &tio) == 0, "C: tcgetattr");
	cfmakeraw(&tio);
	tio.c_cc[VMIN] = 3;
	tio.c_cc[VTIME] = 7;
	tio.c_cc[VINTR] = 0x07;
	WL_CHECK(tcsetattr(s, TCSANOW, &tio) == 0 && ioctl(s, TIOCSWINSZ, &ws_before) == 0,
		 "C: set the terminal: %s", strerror(errno));
	WL_CHECK(fchown(s, SLAVE_UID, SLAVE_GID) == 0 && fchmod(s, SLAVE_MODE) == 0,
		 "C: the slave's owner: %s", strerror(errno));
	WL_CHECK(dup2(s, 0) == 0 && dup2(s, 1) == 1 && close(s) == 0, "C: dup2");
	s = open(slave, O_RDWR | O_NONBLOCK | O_NOCTTY);
	WL_CHECK(s >= 0 && dup2(s, 9) == 9 && close(s) == 0, "C: fd 9");
	WL_CHECK(pipe2(g_ready, O_CLOEXEC) == 0, "C: pipe");
	g_pid = fork();
	WL_CHECK(g_pid >= 0, "C: fork");
	if (g_pid == 0) {
		close(g_ready[0]);
		close(ready);
		grandchild(g_ready[1]);
	}
	close(g_ready[1]);
	WL_CHECK(read(g_ready[0], &c, 1) == 1, "C: G is not ready");
	close(g_ready[0]);
	WL_CHECK(tcsetpgrp(0, g_pid) == 0, "C: tcsetpgrp: %s", strerror(errno));
	WL_CHECK(tcgetattr(0, &tio_before) == 0, "C: tcgetattr");
	WL_CHECK(write(ready, "c", 1) == 1, "C: ready");
	close(ready);
	wl_wait_verify();

	WL_CHECK(getsid(0) == getpid() && tcgetsid(0) == getpid(),
		 "C: session %d, the terminal's %d", (int)getsid(0), (int)tcgetsid(0));
	WL_CHECK(tcgetpgrp(0) == g_pid, "C: foreground %d, not G %d", (int)tcgetpgrp(0),
		 (int)g_pid);
	WL_CHECK(tcgetattr(0, &now) == 0, "C: tcgetattr: %s", strerror(errno));
	same_termios("C", &tio_before, &now);
	{
		struct stat st0, st9;

		WL_CHECK(fstat(0, &st0) == 0 && fstat(9, &st9) == 0 && st0.st_rdev == st9.st_rdev,
			 "C: fds 0 and 9 are not on one slave");
		WL_CHECK(ctty_of_self() == st0.st_rdev,
			 "C: its controlling terminal is not fd 0's");
	}
	WL_CHECK((fcntl(9, F_GETFL) & (O_ACCMODE | O_NONBLOCK)) == (O_RDWR | O_NONBLOCK) &&
			 (fcntl(0, F_GETFL) & (O_ACCMODE | O_NONBLOCK)) == O_RDWR,
		 "C: flags %#o (fd 9) and %#o (fd 0)", fcntl(9, F_GETFL), fcntl(0, F_GETFL));
	wait_ok(g_pid, "G");
	exit(0);
}

/* P: read "pong" from the master, skipping packet-mode status packets. */
static void read_pong(int m)
{
	char buf[64];
	ssize_t n;

	for (;;) {
		wait_in(m, "on the master");
		n = read(m, buf, sizeof(buf));
		WL_CHECK(n > 0, "P: read the master: %s", n < 0 ? strerror(errno) : "EOF");
		if (buf[0] != TIOCPKT_DATA)
			continue;
		WL_CHECK(n == 5 && !memcmp(buf + 1, "pong", 4), "P: read %zd bytes '%.*s'", n,
			 (int)n - 1, buf + 1);
		return;
	}
}

#define ASYNC_SIG (SIGRTMIN + 2)

/* Take every queued ASYNC_SIG; how many were for fd @fd. */
static int take_async(int fd)
{
	const struct timespec now = {0, 0};
	siginfo_t si;
	sigset_t set;
	int n = 0;

	sigemptyset(&set);
	sigaddset(&set, ASYNC_SIG);
	while (sigtimedwait(&set, &si, &now) == ASYNC_SIG)
		n += si.si_fd == fd;
	return n;
}

/* P: signal-driven I/O on the master, to itself. */
static void set_async(int m)
{
	struct f_owner_ex own = {F_OWNER_PID, getpid()};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, ASYNC_SIG);
	WL_CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0, "sigprocmask");
	WL_CHECK(fcntl(m, F_SETOWN_EX, &own) == 0 && fcntl(m, F_SETSIG, ASYNC_SIG) == 0 &&
			 fcntl(m, F_SETFL, O_ASYNC) == 0,
		 "P: signal-driven I/O on the master: %s", strerror(errno));
}

static void check_async(int m)
{
	struct f_owner_ex own = {0, 0};
	int fl = fcntl(m, F_GETFL);

	WL_CHECK(fcntl(m, F_GETOWN_EX, &own) == 0 && own.type == F_OWNER_PID && own.pid == getpid(),
		 "P: the master's owner is %d (type %d)", own.pid, own.type);
	WL_CHECK(fcntl(m, F_GETSIG) == ASYNC_SIG, "P: the master's signal is %d",
		 fcntl(m, F_GETSIG));
	WL_CHECK(fl >= 0 && (fl & O_ASYNC), "P: the master's flags %#x lack O_ASYNC", fl);
}

static void pty_tree(void)
{
	struct termios now;
	struct winsize ws;
	int m, ready[2], one = 1, v = -1;
	char c, buf[64], name[64];

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	WL_CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0, "posix_openpt: %s",
		 strerror(errno));
	WL_CHECK(ptsname_r(m, name, sizeof(name)) == 0, "ptsname");
	WL_CHECK(pipe2(ready, O_CLOEXEC) == 0, "pipe");
	c_pid = fork();
	WL_CHECK(c_pid >= 0, "fork");
	if (c_pid == 0) {
		close(m);
		close(ready[0]);
		child(name, ready[1]);
	}
	close(ready[1]);
	WL_CHECK(read(ready[0], &c, 1) == 1, "children not ready");
	close(ready[0]);
	WL_CHECK(ioctl(m, TIOCGPGRP, &g_pid) == 0 && g_pid != c_pid, "foreground %d", (int)g_pid);
	/* Settings first: changes would queue status packets once in packet mode. */
	WL_CHECK(ioctl(m, TIOCPKT, &one) == 0, "TIOCPKT: %s", strerror(errno));
	WL_CHECK(tcgetattr(m, &tio_before) == 0, "tcgetattr");
	while (fcntl(m, F_SETFL, O_NONBLOCK) == 0 && read(m, buf, sizeof(buf)) > 0)
		;
	WL_CHECK(fcntl(m, F_SETFL, 0) == 0, "F_SETFL");
	set_async(m);
	take_async(m);
	if (queued)
		WL_CHECK(write(m, EARLY, strlen(EARLY)) == (ssize_t)strlen(EARLY), "P: write");
	wl_ready();
	wl_wait_verify();
	check_async(m);
	take_async(m);
	{
		struct stat st;

		WL_CHECK(ptsname_r(m, name, sizeof(name)) == 0 && stat(name, &st) == 0,
			 "P: stat the slave: %s", strerror(errno));
		WL_CHECK(st.st_uid == SLAVE_UID && st.st_gid == SLAVE_GID &&
				 (st.st_mode & 07777) == SLAVE_MODE,
			 "P: the slave %s is %u:%u mode %#o", name, st.st_uid, st.st_gid,
			 st.st_mode & 07777);
	}

	WL_CHECK(tcgetattr(m, &now) == 0, "tcgetattr: %s", strerror(errno));
	same_termios("P", &tio_before, &now);
	WL_CHECK(now.c_cc[VMIN] == 3 && now.c_cc[VTIME] == 7 && now.c_cc[VINTR] == 0x07 &&
			 !(now.c_lflag & (ICANON | ECHO)),
		 "P: not the raw mode C set");
	WL_CHECK(ioctl(m, TIOCGWINSZ, &ws) == 0 && !memcmp(&ws, &ws_before, sizeof(ws)),
		 "P: window %ux%u (%ux%u px)", ws.ws_row, ws.ws_col, ws.ws_xpixel, ws.ws_ypixel);
	WL_CHECK(ioctl(m, TIOCGPKT, &v) == 0 && v == 1, "P: packet mode %d", v);
	WL_CHECK(ioctl(m, TIOCGPTLCK, &v) == 0 && v == 0, "P: lock %d", v);
	WL_CHECK(ioctl(m, TIOCGSID, &v) == 0 && v == c_pid, "P: the pty's session is %d", v);
	WL_CHECK(ioctl(m, TIOCGPGRP, &v) == 0 && v == g_pid, "P: the foreground is %d", v);
	WL_CHECK(write(m, "ping!", 5) == 5, "P: write the master: %s", strerror(errno));
	read_pong(m);
	WL_CHECK(take_async(m) > 0, "P: no SIGRTMIN+2 for the master's pong");
	WL_CHECK(ioctl(m, TIOCSWINSZ, &ws_after) == 0, "P: TIOCSWINSZ: %s", strerror(errno));
	wait_ok(c_pid, "C");
	close(m);
}

/* ---- a shell job -------------------------------------------------------- */

/* Read a line a byte at a time: the terminal is not in canonical mode. */
static size_t read_line(char *line, size_t len)
{
	size_t got = 0;

	while (got < len - 1) {
		ssize_t n;

		wait_in(0, "on the terminal");
		n = read(0, line + got, 1);
		WL_CHECK(n == 1, "read the terminal: %s", n < 0 ? strerror(errno) : "EOF");
		if (line[got++] == '\n')
			break;
	}
	return got;
}

static void shell_job(void)
{
	struct termios now;
	struct winsize ws;
	int fl0, fd, i;
	char name[64], line[64];
	size_t n;

	for (i = 0; i < 3; i++)
		WL_CHECK(isatty(i), "fd %d is not a terminal: run me with harness --pty", i);
	WL_CHECK(tcgetpgrp(0) == getpgrp() && getsid(0) != getpid(),
		 "not the foreground job of a shell");
	WL_CHECK(ttyname_r(0, name, sizeof(name)) == 0 && tcgetattr(0, &tio_before) == 0,
		 "ttyname");
	/* As less or vim: keys not echoed, each one read at once. */
	tio_before.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tio_before.c_cc[VMIN] = 1;
	tio_before.c_cc[VTIME] = 0;
	WL_CHECK(tcsetattr(0, TCSANOW, &tio_before) == 0 && tcgetattr(0, &tio_before) == 0 &&
			 ioctl(0, TIOCSWINSZ, &ws_job) == 0,
		 "set the terminal: %s", strerror(errno));
	fl0 = fcntl(0, F_GETFL);
	WL_CHECK(fl0 >= 0 && fcntl(1, F_SETFL, fl0 | O_APPEND) == 0, "F_SETFL");
	fd = open(name, O_RDONLY | O_NOCTTY);
	WL_CHECK(fd >= 0 && dup3(fd, 7, O_CLOEXEC) == 7 && close(fd) == 0, "fd 7: %s", name);
	wl_ready();
	wl_wait_verify();

	for (i = 0; i < 3; i++)
		WL_CHECK(isatty(i) && fcntl(i, F_GETFL) == (fl0 | O_APPEND) &&
				 fcntl(i, F_GETFD) == 0,
			 "fd %d: flags %#o, fd flags %#o", i, fcntl(i, F_GETFL), fcntl(i, F_GETFD));
	WL_CHECK(isatty(7) && (fcntl(7, F_GETFL) & O_ACCMODE) == O_RDONLY &&
			 fcntl(7, F_GETFD) == FD_CLOEXEC,
		 "fd 7: flags %#o, fd flags %#o", fcntl(7, F_GETFL), fcntl(7, F_GETFD));
	WL_CHECK(tcgetsid(0) == getsid(0), "the terminal is not the controlling terminal");
	WL_CHECK(tcgetpgrp(0) == getpgrp(), "the foreground is %d, not our group %d",
		 (int)tcgetpgrp(0), (int)getpgrp());
	WL_CHECK(tcgetattr(0, &now) == 0, "tcgetattr: %s", strerror(errno));
	same_termios("shell job", &tio_before, &now);
	WL_CHECK(ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row == ws_job.ws_row &&
			 ws.ws_col == ws_job.ws_col,
		 "the window is %ux%u, not the job's %ux%u", ws.ws_row, ws.ws_col, ws_job.ws_row,
		 ws_job.ws_col);
	n = read_line(line, sizeof(line));
	WL_CHECK(n == strlen(LINE) + 1 && !memcmp(line, LINE "\n", n),
		 "read %zu bytes from the terminal: '%.*s'", n, (int)n, line);
	close(7);
}

int main(int argc, char **argv)
{
	bool shell = argc > 1 && !strcmp(argv[1], "shell");

	queued = argc > 1 && !strcmp(argv[1], "queued");
	wl_init(shell ? "tty-shell" : "tty");
	if (shell)
		shell_job();
	else
		pty_tree();
	return 0;
}
