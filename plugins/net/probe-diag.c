// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of NETLINK_SOCK_DIAG, which the dump lists sockets with (inode, peer,
 * queue lengths).  A socket of our own is created first, and the probe passes
 * only if the kernel's answer contains it, so an empty reply cannot pass.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include <crf/cleanup.h>

#include "net.h"

/* What a reply callback is looking for. */
struct diag_match {
	uint32_t ino;	   /* the inode of our socket */
	uint32_t peer;	   /* unix: the peer inode the kernel reports */
	unsigned int seen; /* sockets in the reply */
	bool found;
};

typedef void (*diag_cb)(const struct nlmsghdr *h, struct diag_match *m);

/* 32 KiB: the kernel sizes dump batches to the reader's buffer. */
#define DIAG_BUF_SIZE 32768

/*
 * Read one reply datagram into @buf and hand each message to @cb.  Returns 1
 * when the dump is over, 0 when more is to come, or -errno.
 */
static int diag_recv(int fd, long *buf, diag_cb cb, struct diag_match *m)
{
	const struct nlmsghdr *h;
	ssize_t n;
	int left;

	n = recv(fd, buf, DIAG_BUF_SIZE, MSG_TRUNC);
	if (n < 0)
		return -errno;
	if (n > DIAG_BUF_SIZE)
		return -EMSGSIZE;
	left = n;
	for (h = (const void *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		/* A dump that failed half-way says why in its DONE message. */
		if (h->nlmsg_type == NLMSG_DONE) {
			const int *err = NLMSG_DATA(h);

			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*err)) && *err < 0)
				return *err;
			return 1;
		}
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			return e->error ? e->error : 1;
		}
		cb(h, m);
	}
	return 0;
}

/* Send @req as a dump request of sock_diag and pass the replies to @cb; 0 or -errno. */
static int diag_dump(void *req, size_t len, diag_cb cb, struct diag_match *m)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	/* The kernel always answers, but never let a probe hang. */
	struct timeval tv = {.tv_sec = 1};
	long buf[DIAG_BUF_SIZE / sizeof(long)];
	struct nlmsghdr *h = req;
	_cleanup_close_ int fd = -1;
	int r;

	h->nlmsg_len = len;
	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	h->nlmsg_seq = 1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, req, len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		r = -errno;
	else
		while (!(r = diag_recv(fd, buf, cb, m)))
			;
	return r < 0 ? r : 0;
}

static uint32_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint32_t)st.st_ino;
}

static void unix_cb(const struct nlmsghdr *h, struct diag_match *m)
{
	const struct unix_diag_msg *msg = NLMSG_DATA(h);
	const struct rtattr *a;
	int left;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*msg)))
		return;
	m->seen++;
	if (msg->udiag_ino != m->ino)
		return;
	m->found = true;
	left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*msg));
	for (a = (const void *)(msg + 1); RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t))
			memcpy(&m->peer, RTA_DATA(a), sizeof(m->peer));
}

/* Our end of a socketpair must be listed, with the other end as its peer. */
static void probe_unix_diag(struct crf_ctx *ctx)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.r =
			{
				.sdiag_family = AF_UNIX,
				.udiag_states = 1 << TCP_ESTABLISHED,
				.udiag_show = UDIAG_SHOW_PEER,
			},
	};
	struct diag_match m = {0};
	uint32_t peer;
	int sv[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		crf_probe_feature(ctx, "unix-diag", false, true, "socketpair: %s", strerror(errno));
		return;
	}
	_cleanup_close_ int ours = sv[0], other = sv[1];

	m.ino = inode_of(ours);
	peer = inode_of(other);
	r = diag_dump(&req, sizeof(req), unix_cb, &m);
	if (r < 0)
		crf_probe_feature(ctx, "unix-diag", false, true, "unix_diag dump: %s%s",
				  strerror(-r), r == -ENOENT ? " (no unix_diag module?)" : "");
	else if (!m.found || m.peer != peer)
		crf_probe_feature(ctx, "unix-diag", false, true,
				  "our socketpair was %s among %u unix sockets",
				  m.found ? "listed without its peer" : "not listed", m.seen);
	else
		crf_probe_feature(ctx, "unix-diag", true, true,
				  "our socketpair was listed with its peer among %u unix sockets",
				  m.seen);
}

static void inet_cb(const struct nlmsghdr *h, struct diag_match *m)
{
	const struct inet_diag_msg *msg = NLMSG_DATA(h);

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*msg)))
		return;
	m->seen++;
	if (msg->idiag_inode == m->ino)
		m->found = true;
}

/*
 * A listening TCP socket is what inet_diag can see without traffic.  It is
 * bound to loopback so that nothing outside can reach it; with loopback down
 * it listens on the wildcard address for the few microseconds of the probe.
 */
static int listen_socket(bool *wildcard)
{
	struct sockaddr_in lo = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	_cleanup_close_ int fd = -1;

	*wildcard = false;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&lo, sizeof(lo))) {
		if (errno != EADDRNOTAVAIL)
			return -errno;
		*wildcard = true;
	}
	if (listen(fd, 0))
		return -errno;
	return TAKE_FD(fd);
}

static void probe_inet_diag(struct crf_ctx *ctx)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
		.r =
			{
				.sdiag_family = AF_INET,
				.sdiag_protocol = IPPROTO_TCP,
				.idiag_states = 1 << TCP_LISTEN,
			},
	};
	struct diag_match m = {0};
	bool wildcard;
	_cleanup_close_ int fd = -1;
	int r;

	fd = listen_socket(&wildcard);
	if (fd < 0) {
		crf_probe_feature(ctx, "inet-diag", false, true, "listening TCP socket: %s",
				  strerror(-fd));
		return;
	}
	m.ino = inode_of(fd);
	r = diag_dump(&req, sizeof(req), inet_cb, &m);
	if (r < 0)
		crf_probe_feature(ctx, "inet-diag", false, true, "inet_diag dump: %s%s",
				  strerror(-r), r == -ENOENT ? " (no inet_diag module?)" : "");
	else
		crf_probe_feature(ctx, "inet-diag", m.found, true,
				  "our listening socket%s was %s among %u listening TCP sockets",
				  wildcard ? " (on the wildcard address: loopback is down)" : "",
				  m.found ? "listed" : "not listed", m.seen);
}

void net_probe_diag(struct crf_ctx *ctx)
{
	probe_unix_diag(ctx);
	probe_inet_diag(ctx);
}
