/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wl-inet.h: what wl-udp and wl-tcp share: a socket's addresses, options
 * and status flags recorded before the checkpoint and compared after it.
 * Header only (static functions): each workload is one file plus wl.c.
 */
#ifndef CRF_TESTS_WL_INET_H
#define CRF_TESTS_WL_INET_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

/* Options compared: level, name, label. */
static const struct {
	int level, name;
	const char *label;
} wl_opts[] = {
	{SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR"},
	{SOL_SOCKET, SO_REUSEPORT, "SO_REUSEPORT"},
	{SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE"},
	{SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF"},
	{SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF"},
	{SOL_SOCKET, SO_BUF_LOCK, "SO_BUF_LOCK"},
	{SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY"},
	{SOL_SOCKET, SO_MARK, "SO_MARK"},
	{SOL_SOCKET, SO_LINGER, "SO_LINGER"},
	{SOL_SOCKET, SO_BINDTODEVICE, "SO_BINDTODEVICE"},
	{SOL_IP, IP_TOS, "IP_TOS"},
	{SOL_IP, IP_TTL, "IP_TTL"},
	{SOL_IPV6, IPV6_V6ONLY, "IPV6_V6ONLY"},
	{SOL_IPV6, IPV6_TCLASS, "IPV6_TCLASS"},
	{SOL_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS"},
	{SOL_TCP, TCP_NODELAY, "TCP_NODELAY"},
	{SOL_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE"},
	{SOL_TCP, TCP_KEEPCNT, "TCP_KEEPCNT"},
};
#define WL_N_OPTS (sizeof(wl_opts) / sizeof(wl_opts[0]))

struct wl_sk {
	int fd;
	struct sockaddr_storage local, peer;
	socklen_t local_len, peer_len;
	/* Where to reach it: the local address, a wildcard's as loopback. */
	struct sockaddr_storage at;
	socklen_t at_len;
	int fl;
	unsigned char opt[WL_N_OPTS][32];
	socklen_t opt_len[WL_N_OPTS];
	int opt_ok[WL_N_OPTS];
};

static inline void wl_setint(int fd, int level, int name, int v)
{
	if (setsockopt(fd, level, name, &v, sizeof(v)))
		wl_fail("setsockopt(%d, %d, %d): %s", fd, level, name, strerror(errno));
}

static inline void wl_bind(int fd, int family, const char *addr, int port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (void *)&ss;
	struct sockaddr_in6 *in6 = (void *)&ss;
	socklen_t len;

	if (family == AF_INET6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		len = sizeof(*in6);
	} else {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		len = sizeof(*in);
	}
	if (bind(fd, (struct sockaddr *)&ss, len))
		wl_fail("bind %s: %s", addr, strerror(errno));
}

/* A socket of @type bound to @addr, port 0; an IPv6 one v6only. */
static inline int wl_inet_socket(int family, int type, const char *addr)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		wl_fail("socket: %s", strerror(errno));
	if (family == AF_INET6)
		wl_setint(fd, SOL_IPV6, IPV6_V6ONLY, 1);
	wl_bind(fd, family, addr, 0);
	return fd;
}

/*
 * Fork a process outside the tree: a grandchild in a session of its own,
 * reparented away once its parent, waited for here, has exited.  True in
 * that process (which must end with _exit), false in the workload.
 */
static inline bool wl_fork_outside(void)
{
	int st;
	pid_t child = fork();

	if (child < 0)
		wl_fail("fork: %s", strerror(errno));
	if (child == 0) {
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		return true;
	}
	if (waitpid(child, &st, 0) != child)
		wl_fail("waitpid: %s", strerror(errno));
	return false;
}

/* The local address: getsockname, with a wildcard's as loopback to reach it. */
static inline void wl_sk_names(struct wl_sk *s)
{
	struct sockaddr_in *in = (void *)&s->at;
	struct sockaddr_in6 *in6 = (void *)&s->at;

	s->at_len = sizeof(s->at);
	if (getsockname(s->fd, (struct sockaddr *)&s->at, &s->at_len))
		wl_fail("getsockname: %s", strerror(errno));
	if (in->sin_family == AF_INET && in->sin_addr.s_addr == 0)
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (in6->sin6_family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
		in6->sin6_addr = in6addr_loopback;
}

static inline void wl_connect(int fd, const struct wl_sk *to)
{
	if (connect(fd, (const struct sockaddr *)&to->at, to->at_len))
		wl_fail("connect: %s", strerror(errno));
}

/* Record what wl_sk_check() compares. */
static inline void wl_sk_record(struct wl_sk *s)
{
	s->local_len = sizeof(s->local);
	if (getsockname(s->fd, (struct sockaddr *)&s->local, &s->local_len))
		wl_fail("getsockname: %s", strerror(errno));
	s->peer_len = sizeof(s->peer);
	if (getpeername(s->fd, (struct sockaddr *)&s->peer, &s->peer_len))
		s->peer_len = 0;
	s->fl = fcntl(s->fd, F_GETFL);
	for (size_t i = 0; i < WL_N_OPTS; i++) {
		s->opt_len[i] = sizeof(s->opt[i]);
		memset(s->opt[i], 0, sizeof(s->opt[i]));
		s->opt_ok[i] = !getsockopt(s->fd, wl_opts[i].level, wl_opts[i].name, s->opt[i],
					   &s->opt_len[i]);
	}
}

static inline void wl_sk_check(const struct wl_sk *s, int id)
{
	struct wl_sk now = {.fd = s->fd};

	wl_sk_record(&now);
	if (now.local_len != s->local_len || memcmp(&now.local, &s->local, s->local_len))
		wl_fail("socket %d: getsockname differs", id);
	if (now.peer_len != s->peer_len || memcmp(&now.peer, &s->peer, s->peer_len))
		wl_fail("socket %d: getpeername differs", id);
	if (now.fl != s->fl)
		wl_fail("socket %d: status flags %#x, were %#x", id, now.fl, s->fl);
	for (size_t i = 0; i < WL_N_OPTS; i++)
		if (now.opt_ok[i] != s->opt_ok[i] || now.opt_len[i] != s->opt_len[i] ||
		    memcmp(now.opt[i], s->opt[i], s->opt_len[i]))
			wl_fail("socket %d: %s differs (%d, was %d)", id, wl_opts[i].label,
				*(int *)now.opt[i], *(int *)s->opt[i]);
}

#endif
