// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-unix's modes with names (bound-path, abstract) and the refused ones
 * (outside-peer, in-flight, chroot, creds, waiting-data, listener-closed):
 * see wl-unix.c's head comment.
 */
#include "wl.h"
#include "wl-unix.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * outside-peer: a grandchild that leaves the tree listens on a path; we
 * connect.  It exits when our end of a pipe closes.
 */
void outside(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int ready[2], fd, status;
	pid_t pid;
	char c;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/wl-unix-outside.sock", wl_tmpdir());
	unlink(a.sun_path);
	WL_CHECK(pipe2(ready, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), s;

		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			_exit(1);
		close(ready[0]);
		s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		close(ready[1]);
		/* Until the workload is gone (its end of the pipe is closed). */
		while (s >= 0 && recv(s, &c, 1, 0) > 0)
			;
		unlink(a.sun_path);
		_exit(0);
	}
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	close(ready[1]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	WL_CHECK(fd >= 0, "socket: %s", strerror(errno));
	for (int i = 0; connect(fd, (struct sockaddr *)&a, sizeof(a)); i++) {
		WL_CHECK(i < 500, "connect %s: %s", a.sun_path, strerror(errno));
		usleep(10000);
	}
	WL_CHECK(read(ready[0], &c, 1) == 0, "the listener: %s", strerror(errno));
	close(ready[0]);
	xsend(fd, "hello", 5, "outside");
	wl_ready();
	wl_wait_verify();
	xsend(fd, "again", 5, "outside");
	close(fd);
	wl_note("outside-peer: the connection still works after the refused dump");
}

/* The address @name: under the tmpdir, or abstract ("\0wl-unix-PID-name"). */
static socklen_t addr_of(bool abstract, const char *name, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (!abstract) {
		snprintf(a->sun_path, sizeof(a->sun_path), "%s/wl-unix-%s.sock", wl_tmpdir(), name);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(a->sun_path) +
				   1);
	}
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "wl-unix-%d-%s", (int)getpid(), name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a->sun_path + 1));
}

static int bound(int type, bool abstract, const char *name)
{
	struct sockaddr_un a;
	socklen_t len = addr_of(abstract, name, &a);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	WL_CHECK(fd >= 0, "socket: %s", strerror(errno));
	if (!abstract)
		unlink(a.sun_path);
	WL_CHECK(bind(fd, (struct sockaddr *)&a, len) == 0, "bind %s: %s", name, strerror(errno));
	return fd;
}

static int connected(int type, bool abstract, const char *name)
{
	struct sockaddr_un a;
	socklen_t len = addr_of(abstract, name, &a);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	WL_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, len) == 0, "connect %s: %s", name,
		 strerror(errno));
	return fd;
}

/* The next datagram on @fd is @want, from @from (@from_len 0: unnamed). */
static void expect_from(int fd, const char *want, const struct sockaddr_un *from,
			socklen_t from_len, const char *what)
{
	struct sockaddr_un got;
	socklen_t gl = sizeof(got);
	char buf[64];
	ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&got, &gl);

	WL_CHECK(n == (ssize_t)strlen(want) && !memcmp(buf, want, (size_t)n), "%s: read %zd (%s)",
		 what, n, n < 0 ? strerror(errno) : "other bytes");
	if (!from_len)
		WL_CHECK(gl <= sizeof(sa_family_t), "%s: from a named socket (length %u)", what,
			 gl);
	else
		WL_CHECK(gl == from_len && !memcmp(&got, from, gl),
			 "%s: from another address "
			 "(length %u, want %u)",
			 what, gl, from_len);
}

void setup_named(bool abstract, struct named *n)
{
	struct sockaddr_un d;
	socklen_t dl = addr_of(abstract, "d", &d);
	int fds[10];

	n->l = bound(SOCK_STREAM, abstract, "l");
	WL_CHECK(listen(n->l, 5) == 0, "listen: %s", strerror(errno));
	n->c1 = connected(SOCK_STREAM, abstract, "l");
	n->s1 = accept4(n->l, NULL, NULL, SOCK_CLOEXEC);
	WL_CHECK(n->s1 >= 0, "accept: %s", strerror(errno));
	n->c2 = connected(SOCK_STREAM, abstract, "l");
	xsend(n->c1, "from-c1", 7, "c1");
	xsend(n->s1, "from-s1", 7, "s1");
	n->d = bound(SOCK_DGRAM, abstract, "d");
	n->du = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	n->dn = bound(SOCK_DGRAM, true, "dn");
	n->dc = connected(SOCK_DGRAM, abstract, "d");
	WL_CHECK(sendto(n->du, "unnamed", 7, 0, (struct sockaddr *)&d, dl) == 7 &&
			 sendto(n->dn, "named", 5, 0, (struct sockaddr *)&d, dl) == 5 &&
			 send(n->dc, "connected", 9, 0) == 9,
		 "sendto: %s", strerror(errno));
	n->dl = bound(SOCK_DGRAM, abstract, "dl");
	close(connected(SOCK_DGRAM, abstract, "dl"));
	pair(SOCK_DGRAM, n->p);
	{
		struct sockaddr_un a;
		socklen_t al = addr_of(abstract, "p", &a);

		if (!abstract)
			unlink(a.sun_path);
		WL_CHECK(bind(n->p[0], (struct sockaddr *)&a, al) == 0, "bind p: %s",
			 strerror(errno));
		xsend(n->p[1], "to-p0", 5, "p1");
	}
	n->gone = -1;
	if (!abstract) {
		struct sockaddr_un a;

		addr_of(false, "l", &a);
		WL_CHECK(chmod(a.sun_path, 0640) == 0 && stat(a.sun_path, &n->file) == 0,
			 "chmod %s: %s", a.sun_path, strerror(errno));
		n->gone = bound(SOCK_STREAM, false, "gone");
		WL_CHECK(listen(n->gone, 1) == 0, "listen: %s", strerror(errno));
		addr_of(false, "gone", &a);
		WL_CHECK(unlink(a.sun_path) == 0, "unlink %s: %s", a.sun_path, strerror(errno));
	}
	memcpy(fds, (int[]){n->l, n->c1, n->s1, n->c2, n->d, n->du, n->dn, n->dc, n->p[0], n->p[1]},
	       sizeof(fds));
	for (int i = 0; i < 10; i++)
		get_names(fds[i], &n->names[i], "before");
}

/* The St column of @fd's socket in /proc/net/unix: 1 unconnected, 3 connected. */
static unsigned proc_state(int fd, const char *what)
{
	char line[512];
	struct stat st;
	FILE *f = fopen("/proc/net/unix", "r");

	WL_CHECK(f && fstat(fd, &st) == 0, "%s: /proc/net/unix: %s", what, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long ino;
		unsigned type, state;

		if (sscanf(line, "%*s %*s %*s %*s %x %x %lu", &type, &state, &ino) == 3 &&
		    ino == st.st_ino) {
			fclose(f);
			return state;
		}
	}
	fclose(f);
	wl_fail("%s: socket %lu not in /proc/net/unix", what, (unsigned long)st.st_ino);
}

void verify_named(bool abstract, struct named *n)
{
	static const char *const what[10] = {"l",  "c1", "s1", "c2", "d",
					     "du", "dn", "dc", "p0", "p1"};
	int fds[10] = {n->l, n->c1, n->s1, n->c2, n->d, n->du, n->dn, n->dc, n->p[0], n->p[1]};
	int types[10] = {SOCK_STREAM, SOCK_STREAM, SOCK_STREAM, SOCK_STREAM, SOCK_DGRAM,
			 SOCK_DGRAM,  SOCK_DGRAM,  SOCK_DGRAM,	SOCK_DGRAM,  SOCK_DGRAM};
	struct sockaddr_un dn;
	socklen_t dnl = addr_of(true, "dn", &dn);
	int more = 0, s2;

	for (int i = 0; i < 10; i++)
		check_names(fds[i], types[i], &n->names[i], what[i]);
	WL_CHECK(sockopt(n->l, SO_ACCEPTCONN) == 1, "l: not listening");
	if (!abstract) {
		struct sockaddr_un a;
		struct stat st;
		struct names g;

		addr_of(false, "l", &a);
		WL_CHECK(stat(a.sun_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
				 (st.st_mode & 07777) == 0640 && st.st_uid == n->file.st_uid,
			 "%s: mode %o (%s)", a.sun_path, st.st_mode, strerror(errno));
		addr_of(false, "gone", &a);
		WL_CHECK(stat(a.sun_path, &st) < 0 && errno == ENOENT, "%s is back", a.sun_path);
		get_names(n->gone, &g, "gone");
		WL_CHECK(!strcmp(g.self.sun_path, a.sun_path), "gone: bound to %s",
			 g.self.sun_path);
	}
	expect_bytes(n->c1, "from-s1", 7, "c1");
	expect_bytes(n->s1, "from-c1", 7, "s1");
	expect_from(n->d, "unnamed", NULL, 0, "d: datagram 1");
	expect_from(n->d, "named", &dn, dnl, "d: datagram 2");
	expect_from(n->d, "connected", NULL, 0, "d: datagram 3");
	expect_empty(n->d, "d");
	WL_CHECK(proc_state(n->dl, "dl") == 3 && proc_state(n->d, "d") == 3 &&
			 proc_state(n->dn, "dn") == 1,
		 "/proc/net/unix: dl %u, d %u, dn %u, want 3 3 1 (connected, connected, not)",
		 proc_state(n->dl, "dl"), proc_state(n->d, "d"), proc_state(n->dn, "dn"));
	expect(n->p[0], "to-p0", 5, "p0");
	ping(n->p[0], n->p[1], SOCK_DGRAM, "p");
	ping(n->c1, n->s1, SOCK_STREAM, "c1-s1");
	xsend(n->dc, "again", 5, "dc");
	expect_from(n->d, "again", NULL, 0, "d: datagram after the restore");
	/* The connection waiting: accepted now, its peer c2. */
	s2 = accept4(n->l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	WL_CHECK(s2 >= 0, "accept the waiting connection: %s", strerror(errno));
	ping(n->c2, s2, SOCK_STREAM, "c2");
	close(s2);
	WL_CHECK(fcntl(n->l, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK: %s", strerror(errno));
	WL_CHECK(accept4(n->l, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EAGAIN,
		 "more connections were waiting");
	/* Backlog 5: a listener takes one more than its backlog. */
	for (;;) {
		struct sockaddr_un a;
		socklen_t al = addr_of(abstract, "l", &a);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		WL_CHECK(fd >= 0, "socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&a, al)) {
			WL_CHECK(errno == EAGAIN, "connect: %s", strerror(errno));
			close(fd);
			break;
		}
		WL_CHECK(++more <= 10, "the backlog takes more than 10 connections");
	}
	WL_CHECK(more == 6, "the backlog took %d connections, want 6 (backlog 5)", more);
	if (!abstract) {
		const char *names[] = {"l", "d", "p", "dl"};

		for (size_t i = 0; i < 4; i++) {
			struct sockaddr_un a;

			addr_of(false, names[i], &a);
			unlink(a.sun_path);
		}
	}
}

/* waiting-data, listener-closed: refused; the connection still works after. */
void refused_listener(bool closed)
{
	int l = bound(SOCK_STREAM, false, "r"), c, s = -1;
	struct sockaddr_un a;
	char buf[8];

	addr_of(false, "r", &a);
	WL_CHECK(listen(l, 2) == 0, "listen: %s", strerror(errno));
	c = connected(SOCK_STREAM, false, "r");
	if (closed) {
		s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		WL_CHECK(s >= 0, "accept: %s", strerror(errno));
		close(l);
		l = -1;
	}
	/*
	 * Before the accept the data carries c's credentials (the kernel adds
	 * them for a receiver with no socket yet), which is refused by itself.
	 */
	xsend(c, "early", 5, "c");
	wl_ready();
	wl_wait_verify();
	if (!closed) {
		s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		WL_CHECK(s >= 0, "accept: %s", strerror(errno));
	}
	WL_CHECK(recv(s, buf, sizeof(buf), MSG_DONTWAIT) == 5 && !memcmp(buf, "early", 5),
		 "the data sent before the dump is gone");
	unlink(a.sun_path);
	wl_note("the connection and its data as they were after the refused dump");
}

/* in-flight: fd 0's description sent with SCM_RIGHTS, not received. */
void in_flight(void)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = "F", .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int sv[2], fd = 0, got = -1;
	char byte;

	pair(SOCK_STREAM, sv);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	WL_CHECK(sendmsg(sv[0], &mh, 0) == 1, "sendmsg: %s", strerror(errno));
	wl_ready();
	wl_wait_verify();
	iov.iov_base = &byte;
	mh.msg_controllen = sizeof(ctl.buf);
	WL_CHECK(recvmsg(sv[1], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) == 1 && byte == 'F',
		 "recvmsg: %s", strerror(errno));
	c = CMSG_FIRSTHDR(&mh);
	WL_CHECK(c && c->cmsg_type == SCM_RIGHTS, "the fd in flight is gone");
	memcpy(&got, CMSG_DATA(c), sizeof(got));
	WL_CHECK(got >= 0 && fcntl(got, F_GETFD) >= 0, "the fd received is not open");
	close(got);
	expect_empty(sv[1], "in-flight");
	wl_note("in-flight: the fd and its message still queued after the refused dump");
}

/* chroot: a listener on a path under a task's own root. */
void chrooted(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX}, outer = {.sun_family = AF_UNIX};
	char jail[80], byte;
	int ready[2], fd, status;
	pid_t pid;

	snprintf(jail, sizeof(jail), "%s/wl-unix-jail", wl_tmpdir());
	WL_CHECK(mkdir(jail, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", jail, strerror(errno));
	snprintf(outer.sun_path, sizeof(outer.sun_path), "%s/jail.sock", jail);
	unlink(outer.sun_path);
	strcpy(a.sun_path, "/jail.sock");
	WL_CHECK(pipe(ready) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		WL_CHECK(chroot(jail) == 0 && chdir("/") == 0, "chroot %s: %s", jail,
			 strerror(errno));
		WL_CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 &&
				 listen(l, 1) == 0,
			 "bind %s in the chroot: %s", a.sun_path, strerror(errno));
		WL_CHECK(write(ready[1], "r", 1) == 1, "write: %s", strerror(errno));
		for (;;)
			pause();
	}
	close(ready[1]);
	WL_CHECK(read(ready[0], &byte, 1) == 1, "the child did not listen");
	wl_ready();
	wl_wait_verify();
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	WL_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&outer, sizeof(outer)) == 0,
		 "connect %s: %s", outer.sun_path, strerror(errno));
	close(fd);
	kill(pid, SIGKILL);
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	unlink(outer.sun_path);
	rmdir(jail);
	wl_note("chroot: the listener as it was after the refused dump");
}

/* creds: bytes queued with their sender's credentials. */
void creds(void)
{
	int sv[2], on = 1;

	pair(SOCK_STREAM, sv);
	WL_CHECK(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0,
		 "SO_PASSCRED: %s", strerror(errno));
	xsend(sv[0], "cred", 4, "sv0");
	wl_ready();
	wl_wait_verify();
	WL_CHECK(sockopt(sv[1], SO_PASSCRED) == 0, "sv1: the dump left SO_PASSCRED on");
	expect_creds(sv[1], "cred", 4, getpid(), "sv1");
	expect_empty(sv[1], "sv1");
	wl_note("creds: the bytes and their credentials as they were after the refused dump");
}
