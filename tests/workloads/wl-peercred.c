// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-peercred: the peer credentials of socketpairs (SO_PEERCRED: the pid,
 * euid and egid of the process that made the pair; SO_PEERGROUPS: its
 * groups) are the same after the restore, which makes each pair again in
 * the process that made it.
 *
 *   pairs (the default)
 *     s  a stream pair this process made, 3000 bytes queued one way
 *     d  a datagram pair this process made with euid 65534, egid 65533 and
 *        groups 4242, 4343 (then back to root), a message queued
 *     q  a seqpacket pair made before the fork: end 0 here, end 1 in the
 *        child, a message queued each way
 *     c  a stream pair the child made, both ends in the child
 *   Every end's SO_PEERCRED and SO_PEERGROUPS are as they were (s, d and q
 *   name this process, c the child), the queues are whole, new data passes.
 *   stray  the child makes a pair and sends end 0 to this process over q:
 *     a pair held by a process that is not its maker nor a descendant of
 *     it, refused; everything is as it was after the failed dump.
 */
#include "wl.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define NGRP 8

struct cred {
	struct ucred u;
	gid_t groups[NGRP];
	socklen_t groups_len;
};

static void read_cred(int fd, struct cred *c)
{
	socklen_t len = sizeof(c->u);

	memset(c, 0, sizeof(*c));
	WL_CHECK(!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->u, &len), "SO_PEERCRED: %s",
		 strerror(errno));
	c->groups_len = sizeof(c->groups);
	WL_CHECK(!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &c->groups_len),
		 "SO_PEERGROUPS: %s", strerror(errno));
}

static void same_cred(int fd, const struct cred *was, const char *what)
{
	struct cred now;

	read_cred(fd, &now);
	WL_CHECK(now.u.pid == was->u.pid && now.u.uid == was->u.uid && now.u.gid == was->u.gid,
		 "%s: SO_PEERCRED pid %d uid %u gid %u, was pid %d uid %u gid %u", what,
		 (int)now.u.pid, now.u.uid, now.u.gid, (int)was->u.pid, was->u.uid, was->u.gid);
	WL_CHECK(now.groups_len == was->groups_len &&
			 !memcmp(now.groups, was->groups, now.groups_len),
		 "%s: SO_PEERGROUPS %u bytes, were %u", what, (unsigned)now.groups_len,
		 (unsigned)was->groups_len);
}

static void pair(int type, int sv[2])
{
	WL_CHECK(!socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv), "socketpair: %s",
		 strerror(errno));
}

static void xsend(int fd, const char *p, size_t len)
{
	WL_CHECK(send(fd, p, len, MSG_NOSIGNAL) == (ssize_t)len, "send: %s", strerror(errno));
}

static void xrecv(int fd, const char *want, size_t len, const char *what)
{
	char buf[4096];
	size_t have = 0;

	while (have < len) {
		ssize_t n = recv(fd, buf + have, len - have, MSG_DONTWAIT);

		WL_CHECK(n > 0, "%s: %zu of %zu bytes, then %zd (%s)", what, have, len, n,
			 n < 0 ? strerror(errno) : "EOF");
		have += (size_t)n;
	}
	WL_CHECK(!memcmp(buf, want, len), "%s: the bytes differ", what);
}

static void send_fd(int via, int fd)
{
	char c = 'f', ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl)};
	struct cmsghdr *h = CMSG_FIRSTHDR(&mh);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	WL_CHECK(sendmsg(via, &mh, 0) == 1, "SCM_RIGHTS: %s", strerror(errno));
}

static int recv_fd(int via)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl)};
	int fd;

	WL_CHECK(recvmsg(via, &mh, MSG_CMSG_CLOEXEC) == 1 && CMSG_FIRSTHDR(&mh), "recvmsg: %s",
		 strerror(errno));
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	return fd;
}

/* The child: pair c (both ends), end 1 of q; or, for stray, a pair whose end 0 it sends. */
static int child(int q1, bool stray)
{
	struct cred cq, cc0, cc1;
	int c[2];

	pair(SOCK_STREAM, c);
	if (stray) {
		send_fd(q1, c[0]);
		close(c[0]);
		c[0] = -1;
	}
	read_cred(q1, &cq);
	read_cred(c[1], &cc1);
	if (!stray)
		read_cred(c[0], &cc0);
	xsend(c[1], "child pair", 10);
	xsend(q1, "to parent", 9);
	wl_wait_verify();
	same_cred(q1, &cq, "q end 1 (child)");
	same_cred(c[1], &cc1, "c end 1");
	WL_CHECK(cc1.u.pid == getpid(), "c: SO_PEERCRED names %d, not the child", (int)cc1.u.pid);
	if (!stray) {
		same_cred(c[0], &cc0, "c end 0");
		xrecv(c[0], "child pair", 10, "c end 0");
	}
	xrecv(q1, "to child", 8, "q end 1");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pairs";
	bool stray = !strcmp(mode, "stray");
	static const gid_t groups[2] = {4242, 4343};
	static char big[3000];
	struct cred cs0, cs1, cd0, cd1, cq0;
	int s[2], d[2], q[2], status, stray_fd = -1;
	pid_t kid;

	wl_init("peercred");
	wl_fill(big, sizeof(big), 3);
	pair(SOCK_STREAM, s);
	xsend(s[0], big, sizeof(big));
	WL_CHECK(!setgroups(2, groups) && !setresgid(-1, 65533, -1) && !setresuid(-1, 65534, -1),
		 "taking uid 65534: %s", strerror(errno));
	pair(SOCK_DGRAM, d);
	WL_CHECK(!setresuid(-1, 0, -1) && !setresgid(-1, 0, -1) && !setgroups(0, NULL),
		 "back to root: %s", strerror(errno));
	xsend(d[1], "dgram", 5);
	pair(SOCK_SEQPACKET, q);
	kid = fork();
	WL_CHECK(kid >= 0, "fork: %s", strerror(errno));
	if (kid == 0) {
		close(q[0]);
		_exit(child(q[1], stray));
	}
	close(q[1]);
	if (stray)
		stray_fd = recv_fd(q[0]);
	read_cred(s[0], &cs0);
	read_cred(s[1], &cs1);
	read_cred(d[0], &cd0);
	read_cred(d[1], &cd1);
	read_cred(q[0], &cq0);
	WL_CHECK(cs0.u.pid == getpid() && cd0.u.uid == 65534 && cd0.u.gid == 65533 &&
			 cd0.groups_len == 2 * sizeof(gid_t),
		 "before the dump: s names %d, d uid %u gid %u", (int)cs0.u.pid, cd0.u.uid,
		 cd0.u.gid);
	xsend(q[0], "to child", 8);
	wl_ready();
	wl_wait_verify();

	same_cred(s[0], &cs0, "s end 0");
	same_cred(s[1], &cs1, "s end 1");
	same_cred(d[0], &cd0, "d end 0");
	same_cred(d[1], &cd1, "d end 1");
	same_cred(q[0], &cq0, "q end 0");
	xrecv(s[1], big, sizeof(big), "s end 1");
	xrecv(d[0], "dgram", 5, "d end 0");
	xrecv(q[0], "to parent", 9, "q end 0");
	if (stray_fd >= 0) {
		struct cred c;

		read_cred(stray_fd, &c);
		WL_CHECK(c.u.pid == kid, "stray: SO_PEERCRED names %d, not the child %d",
			 (int)c.u.pid, (int)kid);
	}
	WL_CHECK(waitpid(kid, &status, 0) == kid && WIFEXITED(status) && !WEXITSTATUS(status),
		 "the child failed (status %#x)", status);
	wl_note("%s: SO_PEERCRED and SO_PEERGROUPS of every pair as they were", mode);
	return 0;
}
