// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of TCP repair mode, which dumps and restores a connection without the
 * peer seeing it, and of libnl's rtnetlink, which the net namespace's links,
 * addresses and routes are read and rebuilt with.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include <crf/cleanup.h>

#include "net.h"

/* From <linux/tcp.h>: the value that leaves repair mode. */
#ifndef TCP_REPAIR_OFF
#define TCP_REPAIR_OFF 0
#endif

/*
 * Restore sets the sequence numbers of a closed socket in repair mode before
 * it connects it, so try exactly that on a fresh socket.
 */
static int tcp_repair_seq(int fd, const char **step)
{
	unsigned int seq = 0x6372660a, got = 0;
	socklen_t len = sizeof(got);
	int on = 1, queue = TCP_SEND_QUEUE;

	*step = "setsockopt(TCP_REPAIR)";
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)))
		return -errno;
	*step = "setsockopt(TCP_REPAIR_QUEUE)";
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)))
		return -errno;
	*step = "setsockopt(TCP_QUEUE_SEQ)";
	if (setsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, sizeof(seq)))
		return -errno;
	*step = "getsockopt(TCP_QUEUE_SEQ)";
	if (getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &got, &len))
		return -errno;
	return got == seq ? 0 : -EPROTO;
}

static void probe_tcp_repair(struct crf_ctx *ctx)
{
	_cleanup_close_ int fd = -1;
	int off = TCP_REPAIR_OFF, r;
	const char *step;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		crf_probe_feature(ctx, "tcp-repair", false, true, "TCP socket: %s",
				  strerror(errno));
		return;
	}
	r = tcp_repair_seq(fd, &step);
	if (r == -EPROTO)
		crf_probe_feature(ctx, "tcp-repair", false, true,
				  "TCP_QUEUE_SEQ reads back another sequence number");
	else if (r < 0)
		crf_probe_feature(ctx, "tcp-repair", false, true, "%s: %s%s", step, strerror(-r),
				  r == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
	else
		crf_probe_feature(
			ctx, "tcp-repair", true, true,
			"a fresh TCP socket entered repair mode and took a send sequence number");
	setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));
}

static void probe_libnl(struct crf_ctx *ctx)
{
	struct nl_cache *links = NULL;
	struct nl_sock *sk;
	int r;

	sk = nl_socket_alloc();
	if (!sk) {
		crf_probe_feature(ctx, "libnl-route", false, false, "nl_socket_alloc failed");
		return;
	}
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0)
		crf_probe_feature(ctx, "libnl-route", false, false, "nl_connect(NETLINK_ROUTE): %s",
				  nl_geterror(r));
	else if ((r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links)) < 0)
		crf_probe_feature(ctx, "libnl-route", false, false, "listing links: %s",
				  nl_geterror(r));
	else
		crf_probe_feature(ctx, "libnl-route", true, false,
				  "connected and listed %d links of this net namespace",
				  nl_cache_nitems(links));
	if (links)
		nl_cache_free(links);
	nl_socket_free(sk);
}

int net_probe(struct crf_ctx *ctx)
{
	probe_tcp_repair(ctx);
	net_probe_diag(ctx);
	probe_libnl(ctx);
	return 0;
}
