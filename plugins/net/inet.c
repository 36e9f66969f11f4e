// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP, UDP, raw and ping sockets as fd kinds "tcp", "udp", "raw" and "ping".  The files plugin's
 * walk finds them and keeps the fd table; the dump handler here reads the socket through the walk's
 * copy of it (crf_fd_info.copy: the tree is frozen, the parasite out), describes it as a
 * crf.net.InetSk and saves that, packed, as the fd's payload.  The restore handler makes a socket
 * of it in the restored task and returns it.  A socket whose state cannot be made again exactly is
 * refused, named by its addresses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sockios.h>

#include <crf/cleanup.h>

#include "inet.h"
#include "net.h"

void *inet_memdup(const void *p, size_t len)
{
	void *q = malloc(len ? len : 1);

	if (q && len)
		memcpy(q, p, len);
	return q;
}

void *inet_push(void *v, size_t *n, size_t size)
{
	void **arr, ***field = v;
	void *m;

	arr = realloc(*field, (*n + 1) * sizeof(*arr));
	if (!arr)
		return NULL;
	*field = arr;
	m = calloc(1, size);
	if (m)
		arr[(*n)++] = m;
	return m;
}

void inet_sk_free(Crf__Net__InetSk *sk)
{
	if (sk)
		protobuf_c_message_free_unpacked(&sk->base, NULL);
}

Crf__Net__Addr *inet_addr_new(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in = (const void *)ss;
	const struct sockaddr_in6 *in6 = (const void *)ss;
	Crf__Net__Addr *a = malloc(sizeof(*a));

	if (!a)
		return NULL;
	crf__net__addr__init(a);
	if (ss->ss_family == AF_INET6) {
		a->addr.data = inet_memdup(&in6->sin6_addr, 16);
		a->addr.len = 16;
		a->port = ntohs(in6->sin6_port);
	} else {
		a->addr.data = inet_memdup(&in->sin_addr, 4);
		a->addr.len = 4;
		a->port = ntohs(in->sin_port);
	}
	if (!a->addr.data) {
		free(a);
		return NULL;
	}
	return a;
}

void inet_addr_to_sa(int family, const Crf__Net__Addr *a, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct sockaddr_in *in = (void *)ss;
	struct sockaddr_in6 *in6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)a->port);
		if (a->addr.len == 16)
			memcpy(&in6->sin6_addr, a->addr.data, 16);
		*len = sizeof(*in6);
	} else {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)a->port);
		if (a->addr.len == 4)
			memcpy(&in->sin_addr, a->addr.data, 4);
		*len = sizeof(*in);
	}
}

bool inet_addr_is_any(const Crf__Net__Addr *a)
{
	for (size_t i = 0; i < a->addr.len; i++)
		if (a->addr.data[i])
			return false;
	return true;
}

int inet_bind_connect(int fd, const Crf__Net__InetSk *sk, const Crf__Net__Addr *local,
		      const char *name)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (local->port || !inet_addr_is_any(local)) {
		inet_addr_to_sa(sk->family, local, &ss, &len);
		if (bind(fd, (struct sockaddr *)&ss, len))
			return crf_error_errno(errno, "%s: bind", name);
	}
	if (sk->state == CRF__NET__STATE__CONNECTED && sk->peer) {
		inet_addr_to_sa(sk->family, sk->peer, &ss, &len);
		if (connect(fd, (struct sockaddr *)&ss, len))
			return crf_error_errno(errno, "%s: connect", name);
	}
	return 0;
}

bool inet_addr_is_mapped(const Crf__Net__Addr *a)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return a->addr.len == 16 && !memcmp(a->addr.data, pfx, sizeof(pfx));
}

const char *inet_addr_str(const Crf__Net__Addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->addr.len == 16) {
		inet_ntop(AF_INET6, a->addr.data, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, a->port);
	} else {
		if (a->addr.len == 4)
			inet_ntop(AF_INET, a->addr.data, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, a->port);
	}
	return buf;
}

/* "tcp", "udp", "ping", "raw(17)": the socket's kind, a raw one's protocol with it. */
static const char *proto_label(const Crf__Net__InetSk *sk, char *buf, size_t len)
{
	switch (sk->proto) {
	case CRF__NET__PROTO__TCP:
		return "tcp";
	case CRF__NET__PROTO__UDP:
		return "udp";
	case CRF__NET__PROTO__PING:
		return "ping";
	default:
		snprintf(buf, len, "raw(%u)", sk->protocol);
		return buf;
	}
}

const char *inet_sk_name(const Crf__Net__InetSk *sk, char *buf)
{
	char l[64], p[64], k[16];

	inet_addr_str(sk->local, l, sizeof(l));
	if (sk->peer)
		snprintf(buf, INET_NAME_MAX, "%s %s -> %s", proto_label(sk, k, sizeof(k)), l,
			 inet_addr_str(sk->peer, p, sizeof(p)));
	else
		snprintf(buf, INET_NAME_MAX, "%s %s", proto_label(sk, k, sizeof(k)), l);
	return buf;
}

static int sockopt_int(int fd, int level, int name, int *v)
{
	socklen_t len = sizeof(*v);

	return getsockopt(fd, level, name, v, &len) ? -errno : 0;
}

/* " NAME" of an IP protocol crf does not restore, for "a NAME socket". */
static const char *proto_name(int proto)
{
	static char buf[32];

	switch (proto) {
	case IPPROTO_UDPLITE:
		return " UDP-Lite";
	case IPPROTO_MPTCP:
		return "n MPTCP";
	case IPPROTO_SCTP:
		return "n SCTP";
	}
	snprintf(buf, sizeof(buf), " protocol %d", proto);
	return buf;
}

/* The Crf__Net__Proto of a socket of @family, @type and @proto, or 0: not one crf restores. */
static int proto_of(int family, int type, int proto)
{
	if (type == SOCK_RAW)
		return CRF__NET__PROTO__RAW;
	if (type == SOCK_STREAM)
		return proto == IPPROTO_TCP ? CRF__NET__PROTO__TCP : 0;
	if (proto == IPPROTO_UDP)
		return CRF__NET__PROTO__UDP;
	if (proto == (family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP))
		return CRF__NET__PROTO__PING;
	return 0;
}

/* Family, protocol and both addresses of @fd into @sk. */
static int describe(const struct crf_object *obj, int fd, Crf__Net__InetSk *sk)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int family, type, proto;

	if (sockopt_int(fd, SOL_SOCKET, SO_DOMAIN, &family) ||
	    sockopt_int(fd, SOL_SOCKET, SO_TYPE, &type))
		return crf_error_errno(errno, "pid %d: fd %d: SO_DOMAIN", (int)obj->pid, obj->id);
	if ((family != AF_INET && family != AF_INET6) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_RAW))
		return crf_error_errno(EOPNOTSUPP,
				       "pid %d: fd %d (%s): socket of family %d, type %d: "
				       "not TCP, UDP, ping or raw",
				       (int)obj->pid, obj->id, obj->desc, family, type);
	/* The protocol too: UDP-Lite, ping and MPTCP sockets have the types of others. */
	if (sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL, &proto))
		return crf_error_errno(errno, "pid %d: fd %d: SO_PROTOCOL", (int)obj->pid, obj->id);
	sk->proto = proto_of(family, type, proto);
	if (!sk->proto)
		return crf_error_errno(EOPNOTSUPP,
				       "pid %d: fd %d (%s): a%s socket, which crf does not restore",
				       (int)obj->pid, obj->id, obj->desc, proto_name(proto));
	sk->family = family;
	if (sk->proto == CRF__NET__PROTO__RAW) {
		sk->has_protocol = true;
		sk->protocol = (uint32_t)proto;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return crf_error_errno(errno, "pid %d: fd %d: getsockname", (int)obj->pid, obj->id);
	sk->local = inet_addr_new(&ss);
	len = sizeof(ss);
	if (!getpeername(fd, (struct sockaddr *)&ss, &len)) {
		sk->peer = inet_addr_new(&ss);
		if (!sk->peer)
			return -ENOMEM;
	} else if (errno != ENOTCONN) {
		return crf_error_errno(errno, "pid %d: fd %d: getpeername", (int)obj->pid, obj->id);
	}
	return sk->local ? 0 : -ENOMEM;
}

/*
 * The restore makes a socket in its task's net namespace: one of another
 * namespace (made before a setns(), or received from a process there) is
 * refused.
 */
static int same_ns(const struct crf_object *obj, int fd, const char *name)
{
	_cleanup_close_ int nsfd = ioctl(fd, SIOCGSKNS);
	struct stat sk_st, task_st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)obj->pid);
	if (nsfd < 0 || fstat(nsfd, &sk_st) < 0 || stat(path, &task_st) < 0)
		return crf_error_errno(errno, "%s: its net namespace", name);
	if (sk_st.st_ino == task_st.st_ino)
		return 0;
	return crf_error_errno(ENOTSUP,
			       "%s: in net namespace net:[%lu], not its task's "
			       "(net:[%lu]): crf makes a socket in its task's namespace",
			       name, (unsigned long)sk_st.st_ino, (unsigned long)task_st.st_ino);
}

static bool config_yes(struct crf_ctx *ctx, const char *key)
{
	const char *v = crf_ctx_config(ctx, key);

	return v && (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"));
}

static int save(struct crf_ctx *ctx, const struct crf_object *obj, const Crf__Net__InetSk *sk)
{
	size_t len = crf__net__inet_sk__get_packed_size(sk);
	_cleanup_free_ uint8_t *buf = NULL;
	char name[INET_NAME_MAX];

	if (len > CRF_FD_PAYLOAD_MAX)
		return crf_error_errno(E2BIG,
				       "%s: %zu bytes of state, more than the %u a socket "
				       "may have in its fd record",
				       inet_sk_name(sk, name), len, CRF_FD_PAYLOAD_MAX);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	crf__net__inet_sk__pack(sk, buf);
	return crf_fd_save_payload(ctx, obj, buf, len);
}

int inet_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	struct inet_opts o = {
		.tcp_established = config_yes(ctx, "tcp-established"),
		.skip_in_flight = config_yes(ctx, "skip-in-flight"),
		.tcp_close = config_yes(ctx, "tcp-close"),
	};
	const struct crf_fd_info *info = obj->data;
	Crf__Net__InetSk *sk;
	char name[INET_NAME_MAX];
	int fd, r;

	if (!info)
		return crf_error_errno(EINVAL, "fd %d: no fd information", obj->id);
	/* The files plugin's copy of the socket: it closes it. */
	fd = info->copy;
	sk = malloc(sizeof(*sk));
	if (!sk)
		return -ENOMEM;
	crf__net__inet_sk__init(sk);
	r = describe(obj, fd, sk);
	if (r >= 0) {
		const char *why = sockopt_refusal(fd, true);

		/* "pid 42: fd 3: tcp 1.2.3.4:5 -> ...": every message names the task and fd. */
		char sk_name[INET_NAME_MAX];

		snprintf(name, sizeof(name), "pid %d: fd %d: %s", (int)obj->pid, obj->id,
			 inet_sk_name(sk, sk_name));
		r = why ? crf_error_errno(ENOTSUP, "%s: %s", name, why) : same_ns(obj, fd, name);
		if (r >= 0)
			r = sockopt_dump(fd, sk, name);
	}
	if (r >= 0 && sk->proto == CRF__NET__PROTO__UDP)
		r = udp_dump(fd, sk, name);
	else if (r >= 0 && sk->proto == CRF__NET__PROTO__TCP)
		r = tcp_dump(fd, sk, &o, name);
	else if (r >= 0)
		r = raw_dump(ctx, fd, obj->pid, sk, name);
	if (r >= 0)
		r = save(ctx, obj, sk);
	if (r >= 0)
		crf_debug("%s saved", name);
	inet_sk_free(sk);
	return r;
}

int inet_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Net__InetSk *sk;
	char name[INET_NAME_MAX];
	int nonblock, fd;

	(void)ctx;
	if (!info || !info->payload_len)
		return crf_error_errno(EBADMSG, "fd %d: no socket state saved", obj->id);
	sk = crf__net__inet_sk__unpack(NULL, info->payload_len, info->payload);
	if (!sk || !sk->local || (sk->family != AF_INET && sk->family != AF_INET6)) {
		inet_sk_free(sk);
		return crf_error_errno(EBADMSG, "fd %d: the socket's record does not decode",
				       obj->id);
	}
	nonblock = info->flags & O_NONBLOCK ? SOCK_NONBLOCK : 0;
	inet_sk_name(sk, name);
	if (sk->proto == CRF__NET__PROTO__UDP)
		fd = udp_restore(sk, nonblock, name);
	else if (sk->proto == CRF__NET__PROTO__TCP)
		fd = tcp_restore(sk, nonblock, name);
	else
		fd = raw_restore(sk, nonblock, name);
	if (fd >= 0)
		crf_debug("fd %d: %s restored", obj->id, name);
	inet_sk_free(sk);
	return fd;
}

/*
 * The dump's hooks.  DUMP_PAUSE holds nothing, but makes the core call
 * DUMP_UNDO or DUMP_RESUME, which give the sockets put in repair mode back
 * to the tree and drop the network lock before it is thawed.  A dump that
 * kills the tree calls neither: its sockets die in repair mode, silently
 * (no FIN, no RST), and the lock stays until the restore is done with it
 * (plugin.c: DUMP_CLEANUP, RESTORE_PREPARE, RESTORE_CLEANUP).
 */
int inet_dump_pause(struct crf_ctx *ctx)
{
	(void)ctx;
	return 0;
}

int inet_dump_undo(struct crf_ctx *ctx)
{
	(void)ctx;
	tcp_repair_release();
	netlock_dump_release();
	return 0;
}
