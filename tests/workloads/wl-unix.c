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

void pair(int type, int sv[2])
{
	WL_CHECK(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
		 strerror(errno));
}

void xsend(int fd, const void *p, size_t len, const char *what)
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
void expect(int fd, const void *want, size_t len, const char *what)
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
void expect_bytes(int fd, const void *want, size_t len, const char *what)
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

void expect_empty(int fd, const char *what)
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

/*
 * With SO_PASSCRED on @fd, the next @len bytes are @want and carry the
 * credentials of pid @pid (0: none were attached).
 */
void expect_creds(int fd, const char *want, size_t len, pid_t pid, const char *what)
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

int sockopt(int fd, int opt)
{
	socklen_t sl = sizeof(int);
	int v = -7;

	WL_CHECK(getsockopt(fd, SOL_SOCKET, opt, &v, &sl) == 0, "getsockopt %d: %s", opt,
		 strerror(errno));
	return v;
}

void get_names(int fd, struct names *n, const char *what)
{
	memset(n, 0, sizeof(*n));
	n->self_len = n->peer_len = sizeof(n->self);
	WL_CHECK(getsockname(fd, (struct sockaddr *)&n->self, &n->self_len) == 0,
		 "%s: getsockname: %s", what, strerror(errno));
	if (getpeername(fd, (struct sockaddr *)&n->peer, &n->peer_len))
		n->peer_len = 0;
}

/* Type, and both names as @was says (NULL: unnamed, as a socketpair's). */
void check_names(int fd, int type, const struct names *was, const char *what)
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
void ping(int a, int b, int type, const char *what)
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
