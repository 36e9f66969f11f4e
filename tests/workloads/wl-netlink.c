// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-netlink: netlink sockets keep their address, groups, connection and
 * options across checkpoint and restore (plugins/net/netlink.c).
 *
 *   A  NETLINK_ROUTE, SOCK_RAW, autobound (port id chosen by the kernel on
 *      bind with nl_pid 0), in RTMGRP_LINK and RTMGRP_IPV4_IFADDR through
 *      bind() and in group 33 (past getsockname's 32) through
 *      NETLINK_ADD_MEMBERSHIP, with NETLINK_NO_ENOBUFS, NETLINK_EXT_ACK and
 *      NETLINK_GET_STRICT_CHK set, O_NONBLOCK
 *   B  NETLINK_ROUTE, SOCK_DGRAM, bound to port id 0x7e57c0de, SO_RCVBUF set
 *   C  NETLINK_SOCK_DIAG, never bound (port id 0)
 *   D  NETLINK_USERSOCK bound to port id 0x7e57d000
 *   E  NETLINK_USERSOCK connected to D (so autobound)
 * After the restore every socket's type, protocol, getsockname, getpeername,
 * NETLINK_LIST_MEMBERSHIPS, options and O_NONBLOCK are as they were; A
 * gets the kernel's answer to an RTM_GETLINK of lo addressed to its port;
 * E's message reaches D from E's port id.
 *
 * wl-netlink queued: B has the kernel's answer to a request waiting unread
 * at the dump, which must be refused; after the failed dump the answer is
 * still there, whole.  wl-netlink generic: a NETLINK_GENERIC socket besides,
 * refused (its families may keep registrations crf cannot read).
 * wl-netlink filter: B has a classic BPF filter attached that drops every
 * message, restored: it reads back as attached, and the kernel's answer to
 * B's request does not come.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define N_SK   5
#define PORT_B 0x7e57c0deu
#define PORT_D 0x7e57d000u

struct nl_state {
	int fd, type, protocol, fl;
	struct sockaddr_nl self, peer;
	uint32_t groups[4];
	socklen_t groups_len;
	int opts[7];
	int rcvbuf;
};

static const int nl_opts[7] = {
	NETLINK_PKTINFO, NETLINK_BROADCAST_ERROR, NETLINK_NO_ENOBUFS,	  NETLINK_LISTEN_ALL_NSID,
	NETLINK_CAP_ACK, NETLINK_EXT_ACK,	  NETLINK_GET_STRICT_CHK,
};

static struct nl_state before[N_SK];

static int nl_socket(int type, int protocol)
{
	int fd = socket(AF_NETLINK, type | SOCK_CLOEXEC, protocol);

	WL_CHECK(fd >= 0, "socket(AF_NETLINK, %d, %d): %s", type, protocol, strerror(errno));
	return fd;
}

static void nl_bind(int fd, uint32_t port, uint32_t groups)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_pid = port, .nl_groups = groups};

	WL_CHECK(!bind(fd, (struct sockaddr *)&a, sizeof(a)), "bind port %u: %s", port,
		 strerror(errno));
}

static void set_int(int fd, int level, int name, int v)
{
	WL_CHECK(!setsockopt(fd, level, name, &v, sizeof(v)), "setsockopt %d:%d: %s", level, name,
		 strerror(errno));
}

static void read_state(int fd, struct nl_state *s)
{
	socklen_t len;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	len = sizeof(s->type);
	WL_CHECK(!getsockopt(fd, SOL_SOCKET, SO_TYPE, &s->type, &len), "SO_TYPE: %s",
		 strerror(errno));
	len = sizeof(s->protocol);
	WL_CHECK(!getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &len), "SO_PROTOCOL");
	s->fl = fcntl(fd, F_GETFL);
	len = sizeof(s->self);
	WL_CHECK(!getsockname(fd, (struct sockaddr *)&s->self, &len), "getsockname");
	len = sizeof(s->peer);
	WL_CHECK(!getpeername(fd, (struct sockaddr *)&s->peer, &len), "getpeername");
	s->groups_len = sizeof(s->groups);
	WL_CHECK(!getsockopt(fd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, s->groups, &s->groups_len),
		 "NETLINK_LIST_MEMBERSHIPS: %s", strerror(errno));
	for (int i = 0; i < 7; i++) {
		len = sizeof(s->opts[i]);
		if (getsockopt(fd, SOL_NETLINK, nl_opts[i], &s->opts[i], &len))
			s->opts[i] = -errno;
	}
	len = sizeof(s->rcvbuf);
	WL_CHECK(!getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &s->rcvbuf, &len), "SO_RCVBUF");
}

static void compare(int i)
{
	struct nl_state now;
	const struct nl_state *b = &before[i];

	read_state(b->fd, &now);
	WL_CHECK(now.type == b->type && now.protocol == b->protocol, "socket %d: type %d/%d", i,
		 now.type, now.protocol);
	WL_CHECK(now.fl == b->fl, "socket %d: flags %#x, were %#x", i, now.fl, b->fl);
	WL_CHECK(now.self.nl_pid == b->self.nl_pid && now.self.nl_groups == b->self.nl_groups,
		 "socket %d: getsockname port %u groups %#x, was port %u groups %#x", i,
		 now.self.nl_pid, now.self.nl_groups, b->self.nl_pid, b->self.nl_groups);
	WL_CHECK(now.peer.nl_pid == b->peer.nl_pid && now.peer.nl_groups == b->peer.nl_groups,
		 "socket %d: getpeername port %u groups %#x, was %u %#x", i, now.peer.nl_pid,
		 now.peer.nl_groups, b->peer.nl_pid, b->peer.nl_groups);
	WL_CHECK(now.groups_len == b->groups_len &&
			 !memcmp(now.groups, b->groups, sizeof(now.groups)),
		 "socket %d: groups %#x %#x, were %#x %#x", i, now.groups[0], now.groups[1],
		 b->groups[0], b->groups[1]);
	for (int k = 0; k < 7; k++)
		WL_CHECK(now.opts[k] == b->opts[k], "socket %d: option %d is %d, was %d", i,
			 nl_opts[k], now.opts[k], b->opts[k]);
	WL_CHECK(now.rcvbuf == b->rcvbuf, "socket %d: SO_RCVBUF %d, was %d", i, now.rcvbuf,
		 b->rcvbuf);
}

/* Ask the kernel for lo's link (no dump: one answer) from @fd to its port. */
static void ask_link(int fd, uint32_t seq)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = RTM_GETLINK,
		      .nlmsg_flags = NLM_F_REQUEST,
		      .nlmsg_seq = seq},
		.i = {.ifi_family = AF_UNSPEC, .ifi_index = (int)if_nametoindex("lo")},
	};
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};

	WL_CHECK(req.i.ifi_index > 0, "lo: %s", strerror(errno));
	WL_CHECK(sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k)) ==
			 (ssize_t)sizeof(req),
		 "RTM_GETLINK: %s", strerror(errno));
}

/* The answer to ask_link(@seq), addressed to @port; its length. */
static ssize_t link_answer(int fd, uint32_t seq, uint32_t port, bool wait)
{
	char buf[16384];
	struct nlmsghdr *h = (void *)buf;
	ssize_t n;

	for (int tries = 0; tries < 500; tries++) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN && wait) {
			usleep(2000);
			continue;
		}
		WL_CHECK(n > (ssize_t)sizeof(*h), "RTM_GETLINK answer: %s",
			 n < 0 ? strerror(errno) : "short");
		if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_seq != seq)
			continue; /* a multicast notification of a group */
		WL_CHECK(h->nlmsg_pid == port, "answer addressed to port %u, not %u", h->nlmsg_pid,
			 port);
		return n;
	}
	wl_fail("no answer to RTM_GETLINK %u", seq);
}

/* wl-netlink filter: B's filter. */
static struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	struct sockaddr_nl d = {.nl_family = AF_NETLINK, .nl_pid = PORT_D}, from;
	socklen_t fl = sizeof(from);
	char msg[64];
	ssize_t n, answer = 0;
	int fds[N_SK];

	wl_init("netlink");
	fds[0] = nl_socket(SOCK_RAW, NETLINK_ROUTE);
	nl_bind(fds[0], 0, RTMGRP_LINK | RTMGRP_IPV4_IFADDR);
	set_int(fds[0], SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 33);
	set_int(fds[0], SOL_NETLINK, NETLINK_NO_ENOBUFS, 1);
	set_int(fds[0], SOL_NETLINK, NETLINK_EXT_ACK, 1);
	set_int(fds[0], SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1);
	WL_CHECK(!fcntl(fds[0], F_SETFL, O_NONBLOCK), "O_NONBLOCK");
	fds[1] = nl_socket(SOCK_DGRAM, NETLINK_ROUTE);
	nl_bind(fds[1], PORT_B, 0);
	set_int(fds[1], SOL_SOCKET, SO_RCVBUF, 300000);
	fds[2] = nl_socket(SOCK_RAW, NETLINK_SOCK_DIAG);
	fds[3] = nl_socket(SOCK_RAW, NETLINK_USERSOCK);
	nl_bind(fds[3], PORT_D, 0);
	fds[4] = nl_socket(SOCK_RAW, NETLINK_USERSOCK);
	WL_CHECK(!connect(fds[4], (struct sockaddr *)&d, sizeof(d)), "connect to D: %s",
		 strerror(errno));
	if (!strcmp(mode, "generic"))
		nl_bind(nl_socket(SOCK_RAW, NETLINK_GENERIC), 0, 0);
	if (!strcmp(mode, "filter")) {
		struct sock_fprog prog = {.len = 1, .filter = &drop};

		WL_CHECK(!setsockopt(fds[1], SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)),
			 "SO_ATTACH_FILTER: %s", strerror(errno));
	}
	for (int i = 0; i < N_SK; i++)
		read_state(fds[i], &before[i]);
	WL_CHECK(before[0].groups_len >= 8 && before[0].groups[1] == 1,
		 "A: group 33 not joined (%u bytes of groups)", (unsigned)before[0].groups_len);
	if (!strcmp(mode, "queued")) {
		ask_link(fds[1], 7);
		usleep(20000);
	}
	wl_ready();
	wl_wait_verify();

	for (int i = 0; i < N_SK; i++)
		compare(i);
	if (!strcmp(mode, "generic")) {
		wl_note("the sockets are as they were after the refused dump");
		return 0;
	}
	if (!strcmp(mode, "filter")) {
		struct sock_filter got[2];
		socklen_t len = 2;

		WL_CHECK(!getsockopt(fds[1], SOL_SOCKET, SO_GET_FILTER, got, &len) && len == 1 &&
				 !memcmp(got, &drop, sizeof(drop)),
			 "B: its filter is not the one attached (%u instructions)", len);
		ask_link(fds[1], 8);
		usleep(100000);
		WL_CHECK(recv(fds[1], msg, sizeof(msg), MSG_DONTWAIT) < 0 && errno == EAGAIN,
			 "B: the kernel's answer passed its filter");
	}
	if (!strcmp(mode, "queued")) {
		answer = link_answer(fds[1], 7, PORT_B, false);
		wl_note("the kernel's answer waiting at the dump is still there (%zd bytes)",
			answer);
		return 0;
	}
	ask_link(fds[0], 42);
	link_answer(fds[0], 42, before[0].self.nl_pid, true);
	snprintf(msg, sizeof(msg), "netlink from E");
	WL_CHECK(send(fds[4], msg, strlen(msg), 0) == (ssize_t)strlen(msg), "E send: %s",
		 strerror(errno));
	n = recvfrom(fds[3], msg, sizeof(msg), 0, (struct sockaddr *)&from, &fl);
	WL_CHECK(n == (ssize_t)strlen("netlink from E") && from.nl_pid == before[4].self.nl_pid,
		 "D got %zd bytes from port %u, expected E's %u", n, from.nl_pid,
		 before[4].self.nl_pid);
	wl_note("5 netlink sockets: ports, groups, connection, options as they were; the kernel "
		"answers A, E reaches D");
	return 0;
}
