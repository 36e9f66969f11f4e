// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-unix: unix sockets, checked byte for byte after the restore.
 *
 *   pair-stream, pair-dgram, pair-seqpacket  (one process)
 *     four socketpairs of the type:
 *     q  data queued both ways (stream: 100000 PRNG bytes one way, a few
 *        writes the other; dgram/seqpacket: messages of 0, 1, 7 and 5000
 *        bytes, boundaries kept), SO_PEEK_OFF 3 on one end, O_NONBLOCK on
 *        the other;
 *     w  end 0 wrote data then shut down for writing: end 1 reads it, then
 *        EOF; end 0 gets EPIPE;
 *     r  end 0 shut down for reading (stream: end 1 gets EPIPE);
 *     c  SO_PASSCRED on end 0, whose queue is empty; end 1 has data queued
 *        that end 0 sent with SO_PASSCRED off (so without credentials:
 *        end 1 turning SO_PASSCRED on after the restore reads pid 0);
 *     x  stream only: end 1 closed after writing; end 0 reads it, then EOF.
 *     Then each pair carries new data both ways, after what was queued.
 *   pair-fork  a stream and a seqpacket pair, each with an end in the
 *     parent and one in the child, data queued both ways; the child checks
 *     its ends, the parent its own and the child's verdict.
 *   bound-path, abstract  names: a stream listener (backlog 5, its socket
 *     file mode 0640) with one connection accepted (data queued both
 *     ways) and one waiting to be accepted; a datagram socket bound to a
 *     name, with datagrams queued from an unnamed socket, from a named one
 *     and from one connected to it; one a socket connected to and left
 *     (still connected in /proc/net/unix); a socketpair whose end 0 is bound;
 *     bound-path also a listener whose socket file was deleted.  After
 *     the restore every getsockname/getpeername is as it was, the queues
 *     and senders too, the waiting connection is accepted and carries
 *     data, the backlog takes 5 more connections and no more.
 *   outside-peer  connected to a listener of a process outside the tree
 *     (a grandchild that left it): refused, naming the peer's path.
 *   in-flight  an fd sent with SCM_RIGHTS and not received: refused.
 *   chroot  a child in a chroot (a directory of the tmpdir) listens on a
 *     path of its root: refused; the listener still takes a connection.
 *   creds  a stream end with SO_PASSCRED sent to one without it, which
 *     holds the bytes with their sender's credentials: refused.
 *   waiting-data  a connection not accepted yet that sent data: refused.
 *   listener-closed  a connection accepted from a listener on a path that
 *     was closed since: refused.
 * In the refused modes the state is checked as it was after the failed dump.
 * getsockname and getpeername of every end are unnamed (socketpair).
 */
#include "wl.h"

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

#define BIG  100000
#define SEED 11

static const size_t msg_len[] = {0, 1, 7, 5000};
#define N_MSG (sizeof(msg_len) / sizeof(msg_len[0]))

static int type_of(const char *mode)
{
	if (strstr(mode, "stream"))
		return SOCK_STREAM;
	if (strstr(mode, "dgram"))
		return SOCK_DGRAM;
	return SOCK_SEQPACKET;
}

static void pair(int type, int sv[2])
{
	WL_CHECK(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
		 strerror(errno));
}

static void xsend(int fd, const void *p, size_t len, const char *what)
{
	ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

	WL_CHECK(n == (ssize_t)len, "%s: send %zu bytes: %zd (%s)", what, len, n, strerror(errno));
}

/* Message @i of the series @seed: msg_len[i] bytes of wl_fill(seed + i). */
static void *message(size_t i, uint64_t seed)
{
	void *p = malloc(msg_len[i] + 1);

	WL_CHECK(p, "out of memory");
	wl_fill(p, msg_len[i], seed + i);
	return p;
}

static void send_messages(int fd, uint64_t seed, const char *what)
{
	for (size_t i = 0; i < N_MSG; i++) {
		void *p = message(i, seed);

		xsend(fd, p, msg_len[i], what);
		free(p);
	}
}

/* The next message on @fd is @len bytes of @want. */
static void expect(int fd, const void *want, size_t len, const char *what)
{
	size_t cap = len + 64;
	char *got = malloc(cap);
	ssize_t n;

	WL_CHECK(got, "out of memory");
	n = recv(fd, got, cap, MSG_DONTWAIT);
	WL_CHECK(n == (ssize_t)len, "%s: read %zd bytes (%s), want a message of %zu", what, n,
		 n < 0 ? strerror(errno) : "", len);
	WL_CHECK(!memcmp(got, want, len), "%s: the %zu bytes differ", what, len);
	free(got);
}

static void expect_messages(int fd, uint64_t seed, const char *what)
{
	for (size_t i = 0; i < N_MSG; i++) {
		void *p = message(i, seed);
		char w[128];

		snprintf(w, sizeof(w), "%s: message %zu", what, i);
		expect(fd, p, msg_len[i], w);
		free(p);
	}
}

/* Read exactly @len stream bytes from @fd. */
static void expect_bytes(int fd, const void *want, size_t len, const char *what)
{
	char *got = malloc(len + 1);
	size_t have = 0;

	WL_CHECK(got, "out of memory");
	while (have < len) {
		ssize_t n = recv(fd, got + have, len - have, MSG_DONTWAIT);

		WL_CHECK(n > 0, "%s: %zu of %zu bytes read, then %zd (%s)", what, have, len, n,
			 n < 0 ? strerror(errno) : "EOF");
		have += (size_t)n;
	}
	WL_CHECK(!memcmp(got, want, len), "%s: the %zu bytes differ", what, len);
	free(got);
}

static void expect_empty(int fd, const char *what)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	WL_CHECK(n < 0 && errno == EAGAIN, "%s: more queued than sent: %zd (%s)", what, n,
		 n < 0 ? strerror(errno) : "");
}

static void expect_eof(int fd, const char *what)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	WL_CHECK(n == 0, "%s: want end of file, got %zd (%s)", what, n,
		 n < 0 ? strerror(errno) : "data");
}

static int sockopt(int fd, int opt);

/*
 * With SO_PASSCRED on @fd, the next @len bytes are @want and carry the
 * credentials of pid @pid (0: none were attached).
 */
static void expect_creds(int fd, const char *want, size_t len, pid_t pid, const char *what)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	char got[64];
	struct iovec iov = {.iov_base = got, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	int on = 1;
	struct cmsghdr *c;
	struct ucred u;

	WL_CHECK(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0,
		 "%s: SO_PASSCRED: %s", what, strerror(errno));
	WL_CHECK(recvmsg(fd, &mh, MSG_DONTWAIT) == (ssize_t)len && !memcmp(got, want, len),
		 "%s: recvmsg: %s", what, strerror(errno));
	c = CMSG_FIRSTHDR(&mh);
	WL_CHECK(c && c->cmsg_type == SCM_CREDENTIALS, "%s: no SCM_CREDENTIALS", what);
	memcpy(&u, CMSG_DATA(c), sizeof(u));
	WL_CHECK(u.pid == pid, "%s: the message carries the credentials of pid %d, want %d", what,
		 (int)u.pid, (int)pid);
}

static void expect_epipe(int fd, const char *what)
{
	ssize_t n = send(fd, "z", 1, MSG_NOSIGNAL | MSG_DONTWAIT);

	WL_CHECK(n < 0 && errno == EPIPE, "%s: send gave %zd (%s), want EPIPE", what, n,
		 n < 0 ? strerror(errno) : "sent");
}

static int sockopt(int fd, int opt)
{
	socklen_t sl = sizeof(int);
	int v = -7;

	WL_CHECK(getsockopt(fd, SOL_SOCKET, opt, &v, &sl) == 0, "getsockopt %d: %s", opt,
		 strerror(errno));
	return v;
}

/* The names of a socket: getsockname, getpeername. */
struct names {
	struct sockaddr_un self, peer;
	socklen_t self_len, peer_len;
};

static void get_names(int fd, struct names *n, const char *what)
{
	memset(n, 0, sizeof(*n));
	n->self_len = n->peer_len = sizeof(n->self);
	WL_CHECK(getsockname(fd, (struct sockaddr *)&n->self, &n->self_len) == 0,
		 "%s: getsockname: %s", what, strerror(errno));
	if (getpeername(fd, (struct sockaddr *)&n->peer, &n->peer_len))
		n->peer_len = 0;
}

/* Type, and both names as @was says (NULL: unnamed, as a socketpair's). */
static void check_names(int fd, int type, const struct names *was, const char *what)
{
	struct names now,
		unnamed = {.self_len = sizeof(sa_family_t), .peer_len = sizeof(sa_family_t)};

	if (!was) {
		unnamed.self.sun_family = unnamed.peer.sun_family = AF_UNIX;
		was = &unnamed;
	}
	WL_CHECK(sockopt(fd, SO_TYPE) == type, "%s: type %d, want %d", what, sockopt(fd, SO_TYPE),
		 type);
	get_names(fd, &now, what);
	WL_CHECK(now.self_len == was->self_len && !memcmp(&now.self, &was->self, now.self_len),
		 "%s: getsockname: length %u, was %u (%s)", what, now.self_len, was->self_len,
		 now.self.sun_path[0] ? now.self.sun_path : now.self.sun_path + 1);
	WL_CHECK(now.peer_len == was->peer_len && !memcmp(&now.peer, &was->peer, now.peer_len),
		 "%s: getpeername: length %u, was %u (%s)", what, now.peer_len, was->peer_len,
		 now.peer.sun_path[0] ? now.peer.sun_path : now.peer.sun_path + 1);
}

/* Both ways still carry data, after anything queued. */
static void ping(int a, int b, int type, const char *what)
{
	xsend(a, "ping", 4, what);
	xsend(b, "pong!", 5, what);
	if (type == SOCK_STREAM) {
		expect_bytes(b, "ping", 4, what);
		expect_bytes(a, "pong!", 5, what);
	} else {
		expect(b, "ping", 4, what);
		expect(a, "pong!", 5, what);
	}
	expect_empty(a, what);
	expect_empty(b, what);
}

struct pairs {
	int q[2], w[2], r[2], c[2], x;
	struct names names[4][2];
	char *big;
};

static void setup_pairs(int type, struct pairs *p)
{
	int on = 1, off = 3, x[2];

	pair(type, p->q);
	pair(type, p->w);
	pair(type, p->r);
	pair(type, p->c);
	p->big = malloc(BIG);
	WL_CHECK(p->big, "out of memory");
	wl_fill(p->big, BIG, SEED);
	if (type == SOCK_STREAM) {
		xsend(p->q[0], p->big, BIG, "q0");
		xsend(p->q[1], "one,", 4, "q1");
		xsend(p->q[1], "two", 3, "q1");
	} else {
		send_messages(p->q[0], 100, "q0");
		send_messages(p->q[1], 200, "q1");
	}
	WL_CHECK(setsockopt(p->q[0], SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)) == 0,
		 "SO_PEEK_OFF: %s", strerror(errno));
	WL_CHECK(fcntl(p->q[1], F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK: %s", strerror(errno));
	xsend(p->w[0], "before-shutdown", 15, "w0");
	WL_CHECK(shutdown(p->w[0], SHUT_WR) == 0, "shutdown: %s", strerror(errno));
	WL_CHECK(shutdown(p->r[0], SHUT_RD) == 0, "shutdown: %s", strerror(errno));
	/*
	 * c0 sends once with SO_PASSCRED on (a datagram or seqpacket socket is
	 * autobound then), then "to-c1" with it off: no credentials, then on.
	 */
	WL_CHECK(setsockopt(p->c[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0,
		 "SO_PASSCRED: %s", strerror(errno));
	xsend(p->c[0], "warm", 4, "c0");
	expect_bytes(p->c[1], "warm", 4, "c1");
	on = 0;
	WL_CHECK(setsockopt(p->c[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0,
		 "SO_PASSCRED: %s", strerror(errno));
	xsend(p->c[0], "to-c1", 5, "c0");
	on = 1;
	WL_CHECK(setsockopt(p->c[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0,
		 "SO_PASSCRED: %s", strerror(errno));
	p->x = -1;
	if (type == SOCK_STREAM) {
		pair(type, x);
		xsend(x[1], "last-words", 10, "x1");
		close(x[1]);
		p->x = x[0];
	}
	/* c0 may be autobound now (SO_PASSCRED on a datagram or seqpacket socket that sent). */
	for (size_t i = 0; i < 4; i++)
		for (int e = 0; e < 2; e++) {
			int *all[] = {p->q, p->w, p->r, p->c};

			get_names(all[i][e], &p->names[i][e], "before");
		}
}

static void verify_pairs(int type, struct pairs *p)
{
	int *all[] = {p->q, p->w, p->r, p->c};

	for (size_t i = 0; i < 4; i++)
		for (int e = 0; e < 2; e++) {
			char w[32];

			snprintf(w, sizeof(w), "%c%d", "qwrc"[i], e);
			check_names(all[i][e], type, &p->names[i][e], w);
		}
	WL_CHECK(sockopt(p->q[0], SO_PEEK_OFF) == 3, "q0: SO_PEEK_OFF %d, want 3",
		 sockopt(p->q[0], SO_PEEK_OFF));
	WL_CHECK(sockopt(p->q[1], SO_PEEK_OFF) == -1, "q1: SO_PEEK_OFF %d, want -1",
		 sockopt(p->q[1], SO_PEEK_OFF));
	WL_CHECK(fcntl(p->q[1], F_GETFL) & O_NONBLOCK, "q1: O_NONBLOCK lost");
	WL_CHECK(!(fcntl(p->q[0], F_GETFL) & O_NONBLOCK), "q0: O_NONBLOCK set");
	WL_CHECK(sockopt(p->c[0], SO_PASSCRED) == 1 && sockopt(p->c[1], SO_PASSCRED) == 0,
		 "c: SO_PASSCRED %d %d, want 1 0", sockopt(p->c[0], SO_PASSCRED),
		 sockopt(p->c[1], SO_PASSCRED));
	if (type == SOCK_STREAM) {
		expect_bytes(p->q[1], p->big, BIG, "q1 (queued from q0)");
		expect_bytes(p->q[0], "one,two", 7, "q0 (queued from q1)");
	} else {
		expect_messages(p->q[1], 100, "q1 (queued from q0)");
		expect_messages(p->q[0], 200, "q0 (queued from q1)");
	}
	expect_empty(p->q[0], "q0");
	expect_empty(p->q[1], "q1");
	ping(p->q[0], p->q[1], type, "q");
	expect_creds(p->c[1], "to-c1", 5, 0, "c1");
	ping(p->c[0], p->c[1], type, "c");
	if (type == SOCK_STREAM)
		expect_bytes(p->w[1], "before-shutdown", 15, "w1");
	else
		expect(p->w[1], "before-shutdown", 15, "w1");
	/* A datagram socket's shutdown is its own: the peer reads on, nothing is queued. */
	if (type == SOCK_DGRAM)
		expect_empty(p->w[1], "w1");
	else
		expect_eof(p->w[1], "w1");
	expect_epipe(p->w[0], "w0 (shut down for writing)");
	/* A datagram socket shut down for reading says EAGAIN, not end of file. */
	if (type == SOCK_DGRAM)
		expect_empty(p->r[0], "r0 (shut down for reading)");
	else
		expect_eof(p->r[0], "r0 (shut down for reading)");
	expect_epipe(p->r[1], "r1 (peer shut down for reading)");
	if (p->x >= 0) {
		expect_bytes(p->x, "last-words", 10, "x0");
		expect_eof(p->x, "x0 (peer closed)");
		expect_epipe(p->x, "x0 (peer closed)");
	}
}

/* pair-fork: a stream and a seqpacket pair between parent and child. */
static void forked(void)
{
	int s[2], q[2], status;
	pid_t pid;

	pair(SOCK_STREAM, s);
	pair(SOCK_SEQPACKET, q);
	xsend(s[0], "parent-to-child", 15, "s0");
	xsend(s[1], "child-to-parent", 15, "s1");
	send_messages(q[0], 300, "q0");
	send_messages(q[1], 400, "q1");
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(s[0]);
		close(q[0]);
		wl_wait_verify();
		check_names(s[1], SOCK_STREAM, NULL, "child s1");
		expect_bytes(s[1], "parent-to-child", 15, "child s1");
		expect_messages(q[1], 300, "child q1");
		xsend(s[1], "after", 5, "child s1");
		_exit(0);
	}
	close(s[1]);
	close(q[1]);
	wl_publish("child", "%d", (int)pid);
	wl_ready();
	wl_wait_verify();
	check_names(q[0], SOCK_SEQPACKET, NULL, "parent q0");
	expect_bytes(s[0], "child-to-parent", 15, "parent s0");
	expect_messages(q[0], 400, "parent q0");
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	expect_bytes(s[0], "after", 5, "parent s0 (sent by the child after the restore)");
	wl_note("pair-fork: both pairs intact between parent and child");
}

/*
 * outside-peer: a grandchild that leaves the tree listens on a path; we
 * connect.  It exits when our end of a pipe closes.
 */
static void outside(void)
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

struct named {
	int l, c1, s1, c2, d, du, dn, dc, p[2], gone, dl;
	struct names names[10];
	struct stat file;
};

static void setup_named(bool abstract, struct named *n)
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

static void verify_named(bool abstract, struct named *n)
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
static void refused_listener(bool closed)
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
static void in_flight(void)
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
static void chrooted(void)
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
static void creds(void)
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pair-stream";
	struct pairs p;
	int type;

	wl_init("unix");
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(mode, "pair-fork")) {
		forked();
		return 0;
	}
	if (!strcmp(mode, "outside-peer")) {
		outside();
		return 0;
	}
	if (!strcmp(mode, "in-flight")) {
		in_flight();
		return 0;
	}
	if (!strcmp(mode, "chroot")) {
		chrooted();
		return 0;
	}
	if (!strcmp(mode, "creds")) {
		creds();
		return 0;
	}
	if (!strcmp(mode, "waiting-data") || !strcmp(mode, "listener-closed")) {
		refused_listener(!strcmp(mode, "listener-closed"));
		return 0;
	}
	if (!strcmp(mode, "bound-path") || !strcmp(mode, "abstract")) {
		struct named n;
		bool abstract = !strcmp(mode, "abstract");

		setup_named(abstract, &n);
		wl_ready();
		wl_wait_verify();
		verify_named(abstract, &n);
		wl_note("%s: names, connections, backlog and senders as they were", mode);
		return 0;
	}
	if (strncmp(mode, "pair-", 5))
		wl_fail("unknown mode %s", mode);
	type = type_of(mode);
	setup_pairs(type, &p);
	wl_ready();
	wl_wait_verify();
	verify_pairs(type, &p);
	wl_note("%s: queues, boundaries, shutdown, SO_PASSCRED and names as they were", mode);
	return 0;
}
