// SPDX-License-Identifier: GPL-2.0-only
/*
 * Socket options of TCP, UDP, raw, ping, packet and netlink sockets.  The dump compares each option
 * of the table below with its value on a fresh socket of the same family, type and protocol, and
 * saves only those that differ, as getsockopt() gave them; the restore sets them on the new socket
 * before it is bound (some, SO_REUSEADDR, IPV6_V6ONLY, SO_BINDTODEVICE, decide whether the bind
 * succeeds and how).  An option the kernel does not know for this socket
 * (getsockopt fails on either) is left out.
 *
 * SO_RCVBUF and SO_SNDBUF read back twice the value set (the kernel doubles
 * it for its bookkeeping overhead), so half the saved value is set, with
 * the *FORCE variant so that net.core.[rw]mem_max does not cap it.  Setting
 * them locks the size (SOCK_RCVBUF_LOCK, SOCK_SNDBUF_LOCK: TCP no longer
 * tunes it), which SO_BUF_LOCK (Linux 5.14) reads and sets: the locks are
 * saved like any option and set last (sockopt_restore_buf_lock), so that a
 * TCP connection whose buffers the kernel tuned comes back with the tuned
 * sizes, still tuned, and one whose sizes the program set, locked.
 *
 * A classic BPF filter (SO_ATTACH_FILTER) is saved as one more option,
 * SO_ATTACH_FILTER, whose value is its instructions as SO_GET_FILTER reads
 * them (the kernel keeps a classic program's original instructions); the
 * restore attaches it after the other options, then locks it if it was
 * (SO_LOCK_FILTER, which reads back like any flag).  An eBPF program
 * (SO_ATTACH_BPF) cannot be read back as it was given: refused.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>

#include <crf/cleanup.h>

#include "inet.h"
#include "net.h"

#ifndef IPV6_HDRINCL
#define IPV6_HDRINCL 36 /* Linux 4.5 */
#endif
#ifndef SOL_ICMPV6
#define SOL_ICMPV6 58
#endif

struct sockopt_def {
	int level, name;
	const char *label;
	unsigned char proto; /* 0 any, else the Crf__Net__Proto it applies to */
	bool v6;	     /* AF_INET6 only */
};

#define SO(n)                                                                                      \
	{                                                                                          \
		SOL_SOCKET, n, #n, 0, false                                                        \
	}
#define IP(n)                                                                                      \
	{                                                                                          \
		SOL_IP, n, #n, 0, false                                                            \
	}
#define IP6(n)                                                                                     \
	{                                                                                          \
		SOL_IPV6, n, #n, 0, true                                                           \
	}
#define TCP(n)                                                                                     \
	{                                                                                          \
		SOL_TCP, n, #n, CRF__NET__PROTO__TCP, false                                        \
	}
#define IPUDP(n)                                                                                   \
	{                                                                                          \
		SOL_IP, n, #n, CRF__NET__PROTO__UDP, false                                         \
	}
#define RAW(l, n, v6)                                                                              \
	{                                                                                          \
		l, n, #n, CRF__NET__PROTO__RAW, v6                                                 \
	}
#define PK(n)                                                                                      \
	{                                                                                          \
		SOL_PACKET, n, #n, 0, false                                                        \
	}
#define NL(n)                                                                                      \
	{                                                                                          \
		SOL_NETLINK, n, #n, 0, false                                                       \
	}

static const struct sockopt_def defs[] = {
	SO(SO_REUSEADDR),
	SO(SO_REUSEPORT),
	SO(SO_KEEPALIVE),
	SO(SO_RCVBUF),
	SO(SO_SNDBUF),
	SO(SO_BUF_LOCK),
	SO(SO_PRIORITY),
	SO(SO_MARK),
	SO(SO_LINGER),
	SO(SO_BINDTODEVICE),
	SO(SO_BROADCAST),
	SO(SO_OOBINLINE),
	SO(SO_RCVLOWAT),
	SO(SO_RCVTIMEO),
	SO(SO_SNDTIMEO),
	SO(SO_TIMESTAMP),
	SO(SO_PASSCRED),
	SO(SO_ATTACH_FILTER), /* read with SO_GET_FILTER (filter_dump) */
	SO(SO_LOCK_FILTER),
	IP(IP_TOS),
	IP(IP_TTL),
	IP(IP_FREEBIND),
	IP(IP_TRANSPARENT),
	IP(IP_RECVERR),
	IP(IP_PKTINFO),
	IP(IP_MTU_DISCOVER),
	IPUDP(IP_MULTICAST_TTL),
	IPUDP(IP_MULTICAST_LOOP),
	IP6(IPV6_V6ONLY),
	IP6(IPV6_TCLASS),
	IP6(IPV6_UNICAST_HOPS),
	IP6(IPV6_RECVPKTINFO),
	IP6(IPV6_MTU_DISCOVER),
	IP6(IPV6_TRANSPARENT),
	IP6(IPV6_FREEBIND),
	TCP(TCP_NODELAY),
	TCP(TCP_CORK),
	TCP(TCP_KEEPIDLE),
	TCP(TCP_KEEPINTVL),
	TCP(TCP_KEEPCNT),
	TCP(TCP_USER_TIMEOUT),
	TCP(TCP_DEFER_ACCEPT),
	TCP(TCP_CONGESTION),
	TCP(TCP_NOTSENT_LOWAT),
	TCP(TCP_LINGER2),
	TCP(TCP_SYNCNT),
	RAW(SOL_IP, IP_HDRINCL, false),
	RAW(SOL_RAW, ICMP_FILTER, false),
	RAW(SOL_IPV6, IPV6_HDRINCL, true),
	RAW(SOL_IPV6, IPV6_CHECKSUM, true),
	RAW(SOL_ICMPV6, ICMPV6_FILTER, true),
	PK(PACKET_VERSION), /* before the rings, which it shapes */
	PK(PACKET_RESERVE),
	PK(PACKET_AUXDATA),
	PK(PACKET_ORIGDEV),
	PK(PACKET_VNET_HDR),
	PK(PACKET_LOSS),
	PK(PACKET_TIMESTAMP),
	PK(PACKET_TX_HAS_OFF),
	PK(PACKET_QDISC_BYPASS),
	PK(PACKET_IGNORE_OUTGOING),
	NL(NETLINK_PKTINFO),
	NL(NETLINK_BROADCAST_ERROR),
	NL(NETLINK_NO_ENOBUFS),
	NL(NETLINK_LISTEN_ALL_NSID),
	NL(NETLINK_CAP_ACK),
	NL(NETLINK_EXT_ACK),
	NL(NETLINK_GET_STRICT_CHK),
};

/* The largest value in the table: TCP_CONGESTION's name, SO_BINDTODEVICE's. */
#define OPT_MAX 64

static bool is_filter(int level, int name)
{
	return level == SOL_SOCKET && name == SO_ATTACH_FILTER;
}

static bool is_filter_lock(int level, int name)
{
	return level == SOL_SOCKET && name == SO_LOCK_FILTER;
}

/* Whether option @d is one of a socket of @family and @proto (a Crf__Net__Proto, 0 for netlink). */
static bool applies(const struct sockopt_def *d, int family, unsigned char proto)
{
	if (family == AF_NETLINK)
		return d->level == SOL_SOCKET || d->level == SOL_NETLINK;
	if (family == AF_PACKET)
		return d->level == SOL_SOCKET || d->level == SOL_PACKET;
	if (d->level == SOL_NETLINK || d->level == SOL_PACKET)
		return false;
	return (!d->proto || d->proto == proto) && (!d->v6 || family == AF_INET6);
}

static int add_opt(Crf__Net__SockOpt ***opts, size_t *n, const struct sockopt_def *d, const void *v,
		   socklen_t len)
{
	Crf__Net__SockOpt *o = inet_push(opts, n, sizeof(*o));

	if (!o)
		return -ENOMEM;
	crf__net__sock_opt__init(o);
	o->level = d->level;
	o->name = d->name;
	o->value.data = inet_memdup(v, len);
	o->value.len = len;
	return o->value.data ? 0 : -ENOMEM;
}

/* The most instructions a classic filter may have (BPF_MAXINSNS). */
#define FILTER_MAX 4096

/* A classic BPF filter attached to @fd, as an SO_ATTACH_FILTER option. */
static int filter_dump(int fd, Crf__Net__SockOpt ***opts, size_t *n, const char *name)
{
	static const struct sockopt_def def = SO(SO_ATTACH_FILTER);
	_cleanup_free_ struct sock_filter *insns = NULL;
	socklen_t count = 0, got;

	/* With no room, the number of instructions (0: none attached). */
	if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, NULL, &count))
		return errno == EACCES ? crf_error_errno(ENOTSUP,
							 "%s: a socket with an eBPF program "
							 "attached (SO_ATTACH_BPF), which crf "
							 "cannot read back as it was given",
							 name)
				       : crf_error_errno(errno, "%s: SO_GET_FILTER", name);
	if (!count)
		return 0;
	if (count > FILTER_MAX)
		return crf_error_errno(E2BIG, "%s: a filter of %u instructions", name, count);
	insns = calloc(count, sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	got = count;
	if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, insns, &got))
		return crf_error_errno(errno, "%s: SO_GET_FILTER", name);
	if (got != count)
		return crf_error_errno(EAGAIN, "%s: its filter changed while read", name);
	return add_opt(opts, n, &def, insns, (socklen_t)(count * sizeof(*insns)));
}

/* Attach the filter of option @o. */
static int filter_restore(int fd, const Crf__Net__SockOpt *o)
{
	struct sock_fprog prog = {
		.len = (unsigned short)(o->value.len / sizeof(struct sock_filter)),
		.filter = (struct sock_filter *)o->value.data,
	};

	if (!o->value.len || o->value.len % sizeof(struct sock_filter) ||
	    o->value.len > FILTER_MAX * sizeof(struct sock_filter))
		return -EBADMSG;
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ? -errno : 0;
}

struct fresh_sk {
	int family, type, protocol, err;
};

/*
 * A fresh socket of the kind, made in the socket's namespace: a ping
 * socket's is allowed by the namespace's net.ipv4.ping_group_range.
 */
static int fresh_here(void *arg)
{
	struct fresh_sk *w = arg;
	int fd = socket(w->family, w->type | SOCK_CLOEXEC, w->protocol);

	if (fd < 0)
		w->err = errno;
	return fd < 0 ? -EIO : fd;
}

int sockopt_dump_list(int fd, int family, int type, int protocol, unsigned char proto,
		      Crf__Net__SockOpt ***opts, size_t *n, const char *name)
{
	struct fresh_sk want = {family, type, protocol, 0};
	_cleanup_close_ int fresh = net_in_sk_ns(fd, fresh_here, &want, name);
	unsigned char v[OPT_MAX], f[OPT_MAX];
	bool bufs = false, lock_known = false;
	socklen_t vl, fl;
	int r;

	if (fresh < 0 && want.err)
		return crf_error_errno(want.err, "%s: a fresh socket to compare options with",
				       name);
	if (fresh < 0)
		return fresh;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		const struct sockopt_def *d = &defs[i];

		if (!applies(d, family, proto) || is_filter(d->level, d->name))
			continue;
		vl = fl = OPT_MAX;
		memset(v, 0, sizeof(v));
		memset(f, 0, sizeof(f));
		if (getsockopt(fd, d->level, d->name, v, &vl) ||
		    getsockopt(fresh, d->level, d->name, f, &fl))
			continue;
		lock_known |= d->level == SOL_SOCKET && d->name == SO_BUF_LOCK;
		if (vl == fl && !memcmp(v, f, vl))
			continue;
		bufs |= d->level == SOL_SOCKET && (d->name == SO_RCVBUF || d->name == SO_SNDBUF);
		r = add_opt(opts, n, d, v, vl);
		if (r < 0)
			return r;
	}
	if (bufs && !lock_known)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: its buffer sizes differ from a fresh "
				       "socket's, and this kernel does not tell whether they are "
				       "locked (SO_BUF_LOCK, Linux 5.14)",
				       name);
	return filter_dump(fd, opts, n, name);
}

int sockopt_dump(int fd, Crf__Net__InetSk *sk, const char *name)
{
	int type = SOCK_DGRAM, protocol = 0;

	if (sk->proto == CRF__NET__PROTO__TCP)
		type = SOCK_STREAM;
	else if (sk->proto == CRF__NET__PROTO__RAW)
		type = SOCK_RAW, protocol = (int)sk->protocol;
	else if (sk->proto == CRF__NET__PROTO__PING)
		protocol = sk->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	return sockopt_dump_list(fd, sk->family, type, protocol, (unsigned char)sk->proto,
				 &sk->opts, &sk->n_opts, name);
}

static const char *label_of(int level, int name)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (defs[i].level == level && defs[i].name == name)
			return defs[i].label;
	return NULL;
}

/* Half of what SO_RCVBUF/SO_SNDBUF read, forced past the sysctl caps. */
static int set_buf(int fd, int name, const Crf__Net__SockOpt *o)
{
	int v;

	if (o->value.len != sizeof(v))
		return -EINVAL;
	memcpy(&v, o->value.data, sizeof(v));
	v /= 2;
	if (!setsockopt(fd, SOL_SOCKET, name == SO_RCVBUF ? SO_RCVBUFFORCE : SO_SNDBUFFORCE, &v,
			sizeof(v)))
		return 0;
	return setsockopt(fd, SOL_SOCKET, name, &v, sizeof(v)) ? -errno : 0;
}

static bool is_buf(const Crf__Net__SockOpt *o)
{
	return o->level == SOL_SOCKET && (o->name == SO_RCVBUF || o->name == SO_SNDBUF);
}

static bool is_buf_lock(const Crf__Net__SockOpt *o)
{
	return o->level == SOL_SOCKET && o->name == SO_BUF_LOCK;
}

/* Option @o set on @fd: 0 or -errno. */
static int restore_one(int fd, const Crf__Net__SockOpt *o)
{
	if (is_buf(o))
		return set_buf(fd, o->name, o);
	if (is_filter(o->level, o->name))
		return filter_restore(fd, o);
	return setsockopt(fd, o->level, o->name, o->value.data, (socklen_t)o->value.len) ? -errno
											 : 0;
}

/*
 * Every option but the buffer locks (set last, by their own call), in two
 * passes: the filter lock after the rest, the filter included.
 */
int sockopt_restore_list(int fd, Crf__Net__SockOpt *const *opts, size_t n, const char *name)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			const Crf__Net__SockOpt *o = opts[i];
			const char *label = label_of(o->level, o->name);
			int r;

			if (!label)
				return crf_error_errno(EBADMSG,
						       "%s: option %d:%d is not one crf knows",
						       name, o->level, o->name);
			if (is_buf_lock(o) || is_filter_lock(o->level, o->name) != (pass == 1))
				continue;
			r = restore_one(fd, o);
			if (r < 0)
				return crf_error_errno(-r, "%s: setsockopt(%s)", name, label);
		}
	}
	return 0;
}

int sockopt_restore(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	int r = sockopt_restore_list(fd, sk->opts, sk->n_opts, name);

	/* An established connection's, once it is connected (tcp-repair.c). */
	if (r < 0 || sk->state == CRF__NET__STATE__ESTABLISHED)
		return r;
	return sockopt_restore_buf_lock(fd, sk->opts, sk->n_opts, name);
}

int sockopt_restore_buf_lock(int fd, Crf__Net__SockOpt *const *opts, size_t n, const char *name)
{
	bool bufs = false;
	int lock = 0;

	for (size_t i = 0; i < n; i++) {
		const Crf__Net__SockOpt *o = opts[i];

		bufs |= is_buf(o);
		if (is_buf_lock(o) && o->value.len == sizeof(lock))
			memcpy(&lock, o->value.data, sizeof(lock));
	}
	/* Neither saved: a fresh socket's sizes, unlocked. */
	if (!bufs && !lock)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &lock, sizeof(lock)))
		return crf_error_errno(errno, "%s: setsockopt(SO_BUF_LOCK, %d)", name, lock);
	return 0;
}

int sockopt_restore_reuse(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	for (size_t i = 0; i < sk->n_opts; i++) {
		const Crf__Net__SockOpt *o = sk->opts[i];

		if (o->level == SOL_SOCKET && o->name == SO_REUSEADDR &&
		    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, o->value.data,
			       (socklen_t)o->value.len))
			return crf_error_errno(errno, "%s: setsockopt(SO_REUSEADDR)", name);
	}
	return 0;
}

const char *sockopt_refusal(int fd, bool saves_filter)
{
	struct pollfd p = {.fd = fd};
	socklen_t len = 0;

	/* POLLERR: sk_err set or the error queue not empty; SO_ERROR would clear the first. */
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		return "a socket with an error pending (reading SO_ERROR would clear it) or "
		       "errors queued (MSG_ERRQUEUE), which crf does not restore";
	/* Classic BPF: the number of instructions; an eBPF program: EACCES. */
	if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, NULL, &len))
		return errno == EACCES ? "a socket with an eBPF program attached (SO_ATTACH_BPF), "
					 "which crf cannot read back as it was given"
				       : NULL;
	return len && !saves_filter ? "a socket with a BPF filter attached (SO_ATTACH_FILTER), "
				      "which crf does not save for this kind"
				    : NULL;
}
