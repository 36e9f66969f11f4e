// SPDX-License-Identifier: GPL-2.0-only
/*
 * Raw sockets (kind "raw": SOCK_RAW of any IP protocol, IPv4 and IPv6) and
 * ping sockets (kind "ping": SOCK_DGRAM of IPPROTO_ICMP or IPPROTO_ICMPV6,
 * the unprivileged ICMP echo sockets that net.ipv4.ping_group_range lets a
 * group open).
 *
 * Each is its family, protocol, the address it is bound to (a ping socket's
 * port is its echo identifier, which the restore binds again; a raw
 * socket's reads as its protocol and is not bound), the peer it is
 * connected to, and its options (sockopt.c: IP_HDRINCL, ICMP_FILTER,
 * ICMPV6_FILTER, IPV6_CHECKSUM among them, and a classic BPF filter).  The
 * kernel's getpeername() says ENOTCONN for one connected with port 0, the
 * usual case, so whether it is connected and to whom is read from its line
 * in /proc/PID/net/{raw,raw6,icmp,icmp6} (inet-proc.c).
 *
 * A packet waiting in the receive queue is refused, by its size: queued
 * again from a raw socket of crf's, it would also reach every other raw
 * socket of its protocol in the namespace, the tree's among them.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "inet-proc.h"
#include "inet.h"
#include "net.h"

/* The largest /proc/PID/net/raw read: about 150 bytes a socket. */
#define PROC_MAX (64u << 20)

/* The table that lists @sk, an index into net_state.proc, and its name. */
static int proc_table(const Crf__Net__InetSk *sk, const char **name)
{
	static const char *const names[] = {"raw", "raw6", "icmp", "icmp6"};
	int i = (sk->proto == CRF__NET__PROTO__PING ? 2 : 0) + (sk->family == AF_INET6);

	*name = names[i];
	return i;
}

/* The whole of @path, NUL-terminated, or NULL with errno set. */
static char *read_text(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 16384;
	char *buf, *more;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0) {
			if (n == 0) {
				buf[len] = '\0';
				return buf;
			}
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)n;
		if (cap - len > 1)
			continue;
		if (cap >= PROC_MAX) {
			errno = EFBIG;
			break;
		}
		more = realloc(buf, cap * 2);
		if (!more)
			break;
		buf = more;
		cap *= 2;
	}
	free(buf);
	return NULL;
}

/*
 * The table of @sk's kind in task @pid's namespace (the socket's: same_ns()
 * checked), read once a dump and namespace: the tree is frozen, and what
 * may change while it is, a queue's length, poll() asks the socket itself.
 */
static const char *table_text(struct crf_ctx *ctx, pid_t pid, const Crf__Net__InetSk *sk,
			      char *path, size_t len, const char *name)
{
	struct net_state *ns = net_state(ctx);
	struct net_proc_table *t;
	const char *file;
	struct stat st;
	char nspath[64];

	if (!ns) {
		crf_error_errno(ENOMEM, "%s", name);
		return NULL;
	}
	t = &ns->proc[proc_table(sk, &file)];
	snprintf(path, len, "/proc/%d/net/%s", (int)pid, file);
	snprintf(nspath, sizeof(nspath), "/proc/%d/ns/net", (int)pid);
	if (stat(nspath, &st)) {
		crf_error_errno(errno, "%s: %s", name, nspath);
		return NULL;
	}
	if (t->text && t->ns == st.st_ino)
		return t->text;
	free(t->text);
	t->ns = st.st_ino;
	t->text = read_text(path);
	if (!t->text)
		crf_error_errno(errno, "%s: reading %s", name, path);
	return t->text;
}

/* Socket @fd's line in its task's table. */
static int proc_line(struct crf_ctx *ctx, int fd, pid_t pid, const Crf__Net__InetSk *sk,
		     struct inet_proc_sk *out, const char *name)
{
	const char *text;
	char path[64];
	struct stat st;
	int r;

	if (fstat(fd, &st))
		return crf_error_errno(errno, "%s: fstat", name);
	text = table_text(ctx, pid, sk, path, sizeof(path), name);
	if (!text)
		return -EIO;
	r = inet_proc_find(text, (unsigned long)st.st_ino, out);
	if (r < 0)
		return crf_error_errno(-r, "%s: %s has a line crf does not read", name, path);
	/* A ping socket is listed once bound (connect() and send() bind it). */
	if (r == 0 && sk->proto == CRF__NET__PROTO__PING) {
		*out = (struct inet_proc_sk){.state = 7};
		return 0;
	}
	if (r == 0)
		return crf_error_errno(ENOENT, "%s: not in %s (another net namespace?)", name,
				       path);
	return 0;
}

int raw_dump(struct crf_ctx *ctx, int fd, pid_t pid, Crf__Net__InetSk *sk, const char *name)
{
	struct inet_proc_sk p;
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	int r = proc_line(ctx, fd, pid, sk, &p, name);

	if (r < 0)
		return r;
	if (p.rx_queue || (poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN)))
		return crf_error_errno(ENOTSUP,
				       "%s: packets waiting in its receive queue (%u bytes), "
				       "which crf does not restore for raw and ping sockets",
				       name, p.rx_queue);
	if (p.state != 1) { /* TCP_ESTABLISHED: connect() */
		sk->state = CRF__NET__STATE__UNCONNECTED;
		return 0;
	}
	if (p.addr_len != sk->local->addr.len)
		return crf_error_errno(EBADMSG, "%s: its peer in /proc is of another family", name);
	if (!sk->peer) {
		sk->peer = malloc(sizeof(*sk->peer));
		if (!sk->peer)
			return -ENOMEM;
		crf__net__addr__init(sk->peer);
		sk->peer->addr.data = inet_memdup(p.peer, p.addr_len);
		if (!sk->peer->addr.data)
			return -ENOMEM;
		sk->peer->addr.len = p.addr_len;
		sk->peer->port = p.peer_port;
	}
	sk->state = CRF__NET__STATE__CONNECTED;
	return 0;
}

int raw_restore(const Crf__Net__InetSk *sk, int nonblock, const char *name)
{
	bool ping = sk->proto == CRF__NET__PROTO__PING;
	int protocol =
		ping ? (sk->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP) : (int)sk->protocol;
	_cleanup_close_ int fd = socket(
		sk->family, (ping ? SOCK_DGRAM : SOCK_RAW) | SOCK_CLOEXEC | nonblock, protocol);
	Crf__Net__Addr a;
	int r;

	if (fd < 0 && ping && errno == EACCES)
		return crf_error_errno(errno,
				       "%s: socket: net.ipv4.ping_group_range does not hold "
				       "crf's group",
				       name);
	if (fd < 0)
		return crf_error_errno(errno, "%s: socket", name);
	r = sockopt_restore(fd, sk, name);
	if (r < 0)
		return r;
	/* A raw socket's port reads as its protocol: only the address is bound. */
	a = *sk->local;
	if (!ping)
		a.port = 0;
	r = inet_bind_connect(fd, sk, &a, name);
	return r < 0 ? r : TAKE_FD(fd);
}
