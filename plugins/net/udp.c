// SPDX-License-Identifier: GPL-2.0-only
/*
 * UDP sockets: bound, connected, and the datagrams waiting in the receive
 * queue, which CRIU drops.
 *
 * The dump takes the datagrams from the queue, with their source addresses,
 * and queues them again at once, as the restore does.  Peeking in place
 * (SO_PEEK_OFF, each MSG_PEEK moving past the datagram it returned) would
 * leave the queue alone, but the kernel steps over an empty datagram that
 * was peeked at before (by the program, or an earlier dump) without
 * returning it, so it would be lost.  While the queue is taken and put back
 * (and at the restore, from the bind until it is whole), the datagrams that
 * come from outside are dropped (netlock_udp_hold), as if lost on the way,
 * so that none lands before those put back.  The peek serves to check each
 * source first, so that a refusal takes nothing.
 *
 * The restore queues each datagram again by sending it to the new socket
 * from its original source address and port.  A UDP socket bound to that
 * address would collide with the sender's own socket (often in the same
 * tree, or still alive outside it), so the datagram goes out of a raw
 * socket (IPPROTO_UDP) bound to the source address, which carries the UDP
 * header we write, ports included, and binds no port.  The source must be
 * a local address for that: a datagram from another host is refused at the
 * dump, naming it, since it could not be queued again with its source.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>

#include <crf/cleanup.h>

#include "inet.h"

/* The largest UDP payload over IPv6 (IPv4's is smaller). */
#define UDP_MAX 65527
/* Datagrams one socket may have queued: the dump stops with an error past it. */
#define UDP_QUEUE_MAX 4096

/* The address @a as a sockaddr of its wire family (a mapped one as IPv4), port @port. */
static int wire_sa(const Crf__Net__Addr *a, uint32_t port, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	Crf__Net__Addr v4 = *a;

	if (inet_addr_is_mapped(a)) {
		v4.addr.data = a->addr.data + 12;
		v4.addr.len = 4;
	}
	v4.port = port;
	inet_addr_to_sa(v4.addr.len == 16 ? AF_INET6 : AF_INET, &v4, ss, len);
	return ss->ss_family;
}

/*
 * A raw UDP socket bound to the address of @src (not its port), its
 * datagrams marked to pass the hold (netlock_udp_hold): -EADDRNOTAVAIL if
 * the address is not local.
 */
static int raw_from(const Crf__Net__Addr *src)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int family = wire_sa(src, 0, &ss, &len), off = 6, mark = NETLOCK_MARK;
	_cleanup_close_ int fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)))
		return -errno;
	/* IPv6 requires the UDP checksum: the kernel computes it at offset 6. */
	if (family == AF_INET6 && setsockopt(fd, SOL_IPV6, IPV6_CHECKSUM, &off, sizeof(off)))
		return -errno;
	if (bind(fd, (struct sockaddr *)&ss, len))
		return -errno;
	return TAKE_FD(fd);
}

static int add_datagram(Crf__Net__InetSk *sk, const struct sockaddr_storage *from, const void *data,
			size_t n)
{
	Crf__Net__Datagram *d = inet_push(&sk->rcvq, &sk->n_rcvq, sizeof(*d));

	if (!d)
		return -ENOMEM;
	crf__net__datagram__init(d);
	d->src = inet_addr_new(from);
	d->data.data = inet_memdup(data, n);
	d->data.len = n;
	return d->src && d->data.data ? 0 : -ENOMEM;
}

/* Whether a datagram from @src could be queued again with its source: its address is local. */
static int check_source(const Crf__Net__Addr *src, const char *name)
{
	char a[64];
	int fd = raw_from(src);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -EADDRNOTAVAIL)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: a datagram from %s is waiting in the receive queue: "
				       "not a local address, so crf cannot queue it again with "
				       "its source",
				       name, inet_addr_str(src, a, sizeof(a)));
	return crf_error_errno(-fd, "%s: a raw socket from %s", name,
			       inet_addr_str(src, a, sizeof(a)));
}

/*
 * Peek at every queued datagram's source: one crf could not queue again is
 * refused before anything is taken from the queue.  How many there are.
 */
static int check_queue(int fd, const char *name)
{
	struct sockaddr_storage from;
	struct msghdr mh = {0};
	Crf__Net__Addr *a;
	int r;

	for (int n = 0; n < UDP_QUEUE_MAX; n++) {
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		memset(&from, 0, sizeof(from));
		if (recvmsg(fd, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC) < 0)
			return errno == EAGAIN ? n : crf_error_errno(errno, "%s: peeking", name);
		a = inet_addr_new(&from);
		if (!a)
			return -ENOMEM;
		r = check_source(a, name);
		protobuf_c_message_free_unpacked(&a->base, NULL);
		if (r < 0)
			return r;
	}
	return crf_error_errno(E2BIG, "%s: more than %d datagrams queued", name, UDP_QUEUE_MAX);
}

/* Take every queued datagram, in order, into @sk->rcvq. */
static int take_queue(int fd, Crf__Net__InetSk *sk, const char *name)
{
	_cleanup_free_ uint8_t *buf = malloc(UDP_MAX);
	struct sockaddr_storage from;
	struct iovec iov = {.iov_base = buf, .iov_len = UDP_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;
	int r;

	if (!buf)
		return -ENOMEM;
	while (sk->n_rcvq < UDP_QUEUE_MAX) {
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		memset(&from, 0, sizeof(from));
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return crf_error_errno(errno, "%s: reading the receive queue", name);
		r = add_datagram(sk, &from, buf, (size_t)n);
		if (r < 0)
			return r;
	}
	return 0;
}

static int requeue(int fd, const Crf__Net__InetSk *sk, const char *name);

static bool has_filter(const Crf__Net__InetSk *sk)
{
	for (size_t i = 0; i < sk->n_opts; i++)
		if (sk->opts[i]->level == SOL_SOCKET && sk->opts[i]->name == SO_ATTACH_FILTER)
			return true;
	return false;
}

int udp_dump(int fd, Crf__Net__InetSk *sk, const char *name)
{
	int off = -1, zero = 0, cork = 0, outq = 0, r;
	socklen_t len;

	sk->state = sk->peer ? CRF__NET__STATE__CONNECTED : CRF__NET__STATE__UNCONNECTED;
	len = sizeof(cork);
	if (!getsockopt(fd, SOL_UDP, UDP_CORK, &cork, &len) && cork &&
	    !ioctl(fd, SIOCOUTQ, &outq) && outq)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: corked (UDP_CORK) with %d bytes pending: "
				       "not restored",
				       name, outq);
	r = udp_mcast_dump(fd, sk, name);
	if (r < 0)
		return r;
	len = sizeof(off);
	if (getsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, &len))
		return crf_error_errno(errno, "%s: SO_PEEK_OFF", name);
	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero)))
		return crf_error_errno(errno, "%s: SO_PEEK_OFF (reading the queue in place)", name);
	r = check_queue(fd, name);
	if (r > 0 && has_filter(sk))
		r = crf_error_errno(ENOTSUP,
				    "%s: datagrams waiting behind a BPF filter (SO_ATTACH_FILTER): "
				    "queued again, they would go through the filter a second time",
				    name);
	if (r > 0) {
		/* From here until the queue is whole again, others are held off. */
		r = netlock_udp_hold(sk, name);
		if (r >= 0) {
			int e;

			r = take_queue(fd, sk, name);
			/* Put back, even after a failure: what was taken must not be lost. */
			e = requeue(fd, sk, name);
			if (e < 0 && r >= 0)
				r = e;
			netlock_udp_release();
		}
	}
	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)) && r >= 0)
		r = crf_error_errno(errno, "%s: SO_PEEK_OFF back to %d", name, off);
	return r;
}

/* Send datagram @d to @sk's port at the right local address, from its source. */
static int inject(const Crf__Net__InetSk *sk, const Crf__Net__Datagram *d, const char *name)
{
	const Crf__Net__Addr *dst = inet_addr_is_any(sk->local) ? d->src : sk->local;
	_cleanup_free_ uint8_t *pkt = malloc(sizeof(struct udphdr) + d->data.len);
	_cleanup_close_ int raw = raw_from(d->src);
	struct udphdr *h = (void *)pkt;
	struct sockaddr_storage ss;
	socklen_t len;
	char a[64];

	if (raw < 0)
		return crf_error_errno(-raw, "%s: a raw socket from %s", name,
				       inet_addr_str(d->src, a, sizeof(a)));
	if (!pkt)
		return -ENOMEM;
	/* An IPv4 checksum of 0 means none; IPv6's the kernel fills in (IPV6_CHECKSUM). */
	*h = (struct udphdr){.source = htons((uint16_t)d->src->port),
			     .dest = htons((uint16_t)sk->local->port),
			     .len = htons((uint16_t)(sizeof(*h) + d->data.len))};
	if (d->data.len)
		memcpy(pkt + sizeof(*h), d->data.data, d->data.len);
	wire_sa(dst, 0, &ss, &len);
	if (sendto(raw, pkt, sizeof(*h) + d->data.len, 0, (struct sockaddr *)&ss, len) < 0)
		return crf_error_errno(errno, "%s: queueing a datagram from %s again", name,
				       inet_addr_str(d->src, a, sizeof(a)));
	return 0;
}

/* How many datagrams @fd has queued (peeked in place). */
static int count_queue(int fd, size_t *n)
{
	int zero = 0, off = -1;
	char c;

	*n = 0;
	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero)))
		return -errno;
	while (recv(fd, &c, sizeof(c), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC) >= 0)
		(*n)++;
	return setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)) ? -errno : 0;
}

/*
 * Loopback delivers in the softirq that follows the send, nearly always
 * before sendto() returns; wait (a second at most) until every datagram
 * is there, so that the program finds its queue as it was.
 */
static int wait_queued(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	struct timespec ms = {.tv_nsec = 1000000};
	size_t n = 0;
	int r;

	for (int i = 0; i < 1000; i++) {
		r = count_queue(fd, &n);
		if (r < 0)
			return crf_error_errno(-r, "%s: counting the queued datagrams", name);
		if (n >= sk->n_rcvq)
			return 0;
		nanosleep(&ms, NULL);
	}
	return crf_error_errno(EIO, "%s: %zu of %zu datagrams queued again", name, n, sk->n_rcvq);
}

/*
 * Queue @sk's datagrams on @fd, every one even after a failure, and wait
 * until they are there.
 */
static int requeue(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	int r = 0;

	for (size_t i = 0; i < sk->n_rcvq; i++) {
		int e = inject(sk, sk->rcvq[i], name);

		if (e < 0 && r >= 0)
			r = e;
	}
	return r < 0 || !sk->n_rcvq ? r : wait_queued(fd, sk, name);
}

/* Bind, connect and queue the datagrams. */
static int make(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	int r = inet_bind_connect(fd, sk, sk->local, name);

	if (r == 0)
		r = udp_mcast_restore(fd, sk, name);
	return r < 0 ? r : requeue(fd, sk, name);
}

int udp_restore(const Crf__Net__InetSk *sk, int nonblock, const char *name)
{
	_cleanup_close_ int fd =
		socket(sk->family, SOCK_DGRAM | SOCK_CLOEXEC | nonblock, IPPROTO_UDP);
	int r;

	if (fd < 0)
		return crf_error_errno(errno, "%s: socket", name);
	r = sockopt_restore(fd, sk, name);
	if (r < 0)
		return r;
	/* From the bind until the queue is whole, datagrams from outside are held off. */
	if (sk->n_rcvq && (r = netlock_udp_hold(sk, name)) < 0)
		return r;
	r = make(fd, sk, name);
	if (sk->n_rcvq)
		netlock_udp_release();
	return r < 0 ? r : TAKE_FD(fd);
}
