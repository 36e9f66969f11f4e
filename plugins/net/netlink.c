// SPDX-License-Identifier: GPL-2.0-only
/*
 * Netlink sockets as the fd kind "netlink".  What makes one, read through
 * the files walk's copy (the tree frozen): its protocol and type, its
 * address (the port id, 0 when it never bound), the address it connected
 * to, the multicast groups it is in (NETLINK_LIST_MEMBERSHIPS, every
 * group, not just the first 32 that getsockname shows) and its options
 * (SOL_SOCKET and SOL_NETLINK ones that differ from a fresh socket's,
 * sockopt.c).  Saved as a crf.net.NetlinkSk, packed, in the fd's payload;
 * the restore makes the socket in the task, binds it to the same port id,
 * joins the groups, connects it and sets the options.
 *
 * Refused, naming the socket: messages waiting in its receive queue (the
 * kernel sent them: crf cannot send them again as the kernel), an error
 * pending on it (reading SO_ERROR would clear it), a dump in progress (the
 * kernel's callback state: netlink_diag's NDIAG_FLAG_CB_RUNNING), a BPF
 * filter or program attached, and every protocol but those whose sockets hold no
 * kernel state beyond the above (route, usersock, sock_diag, xfrm,
 * selinux, kobject_uevent, crypto): generic netlink families, netfilter,
 * audit and the connector keep registrations of their own per socket that
 * crf cannot read.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/netlink_diag.h>
#include <linux/sock_diag.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <crf/cleanup.h>

#include "inet.h"
#include "net.h"
#include "netlink.h"
#include "netlink.pb-c.h"

static const struct {
	int protocol;
	const char *name;
} protocols[] = {
	{NETLINK_ROUTE, "route"},	  {NETLINK_USERSOCK, "usersock"},
	{NETLINK_SOCK_DIAG, "sock_diag"}, {NETLINK_XFRM, "xfrm"},
	{NETLINK_SELINUX, "selinux"},	  {NETLINK_KOBJECT_UEVENT, "kobject_uevent"},
	{NETLINK_CRYPTO, "crypto"},
};

static const char *protocol_name(int protocol)
{
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
		if (protocols[i].protocol == protocol)
			return protocols[i].name;
	return NULL;
}

static void sk_name(const Crf__Net__NetlinkSk *sk, char *buf, size_t len)
{
	const char *p = protocol_name((int)sk->protocol);

	if (p)
		snprintf(buf, len, "netlink %s port %u", p, sk->portid);
	else
		snprintf(buf, len, "netlink protocol %u port %u", sk->protocol, sk->portid);
}

struct diag_find {
	uint32_t ino;
	bool found;
	uint32_t flags;
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct diag_find *f = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	const struct netlink_diag_msg *m;
	struct nlattr *a;
	int left;

	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || !nlmsg_valid_hdr(h, sizeof(*m)))
		return NL_SKIP;
	m = nlmsg_data(h);
	if (m->ndiag_ino != f->ino)
		return NL_OK;
	f->found = true;
	nlmsg_for_each_attr(a, h, sizeof(*m), left) if (nla_type(a) == NETLINK_DIAG_FLAGS &&
							nla_len(a) >= (int)sizeof(uint32_t))
		f->flags = nla_get_u32(a);
	return NL_OK;
}

/* netlink_diag's flags of socket @ino (a dump of the protocol's sockets: no lookup by inode). */
static int diag_flags(int copy, uint64_t ino, int protocol, uint32_t *flags, const char *what)
{
	struct netlink_diag_req req = {
		.sdiag_family = AF_NETLINK,
		.sdiag_protocol = (uint8_t)protocol,
		.ndiag_show = NDIAG_SHOW_FLAGS,
	};
	struct diag_find f = {.ino = (uint32_t)ino};
	int r = net_diag_dump(copy, &req, sizeof(req), on_valid, &f, what);

	*flags = f.flags;
	if (r == 0 && !f.found)
		return crf_error_errno(ENOENT, "%s: netlink_diag does not list it", what);
	return r;
}

static int sockopt_u32(int fd, int level, int name, uint32_t *v)
{
	socklen_t len = sizeof(*v);

	return getsockopt(fd, level, name, v, &len) ? -errno : 0;
}

/* What crf cannot make again, or NULL. */
static const char *refusal(int fd, const Crf__Net__NetlinkSk *sk, uint32_t diag)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (!protocol_name((int)sk->protocol))
		return "a protocol whose kernel side may keep state of its own for the socket "
		       "(registrations crf cannot read)";
	if (diag & NDIAG_FLAG_CB_RUNNING)
		return "a dump the kernel is in the middle of sending";
	if (poll(&p, 1, 0) < 0)
		return "a socket poll() fails on";
	if (p.revents & POLLIN)
		return "a socket with messages waiting in its receive queue, which crf cannot "
		       "send again as the kernel sent them";
	return sockopt_refusal(fd, true);
}

static int describe(int fd, Crf__Net__NetlinkSk *sk, const char *what)
{
	struct sockaddr_nl a;
	socklen_t len = sizeof(a);
	uint32_t protocol, type;
	uint32_t words[32];

	if (sockopt_u32(fd, SOL_SOCKET, SO_PROTOCOL, &protocol) ||
	    sockopt_u32(fd, SOL_SOCKET, SO_TYPE, &type))
		return crf_error_errno(errno, "%s: SO_PROTOCOL", what);
	sk->protocol = protocol;
	sk->type = type;
	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return crf_error_errno(errno, "%s: getsockname", what);
	sk->portid = a.nl_pid;
	len = sizeof(a);
	if (getpeername(fd, (struct sockaddr *)&a, &len))
		return crf_error_errno(errno, "%s: getpeername", what);
	sk->dst_portid = a.nl_pid;
	sk->dst_group = a.nl_groups ? (uint32_t)__builtin_ffs((int)a.nl_groups) : 0;
	/* A socket in no group reads a length of 0, not an error. */
	len = sizeof(words);
	if (getsockopt(fd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, words, &len))
		return crf_error_errno(errno, "%s: NETLINK_LIST_MEMBERSHIPS", what);
	if (len > sizeof(words))
		return crf_error_errno(E2BIG, "%s: member of groups past %zu", what,
				       8 * sizeof(words));
	while (len >= sizeof(uint32_t) && !words[len / sizeof(uint32_t) - 1])
		len -= sizeof(uint32_t);
	sk->n_groups = len / sizeof(uint32_t);
	sk->groups = inet_memdup(words, len);
	return sk->groups ? 0 : -ENOMEM;
}

int netlink_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Net__NetlinkSk sk = CRF__NET__NETLINK_SK__INIT;
	_cleanup_free_ uint8_t *buf = NULL;
	char what[160], name[96];
	const char *why;
	struct stat st;
	uint32_t diag = 0;
	size_t len;
	int fd, r;

	if (!info)
		return crf_error_errno(EINVAL, "fd %d: no fd information", obj->id);
	fd = info->copy; /* the files plugin's, which closes it */
	snprintf(what, sizeof(what), "pid %d: fd %d (%s)", (int)obj->pid, obj->id, obj->desc);
	r = describe(fd, &sk, what);
	if (r == 0 && fstat(fd, &st))
		r = crf_error_errno(errno, "%s: fstat", what);
	/* netlink_diag lists bound sockets; one never bound cannot be in a dump either. */
	if (r == 0 && sk.portid && protocol_name((int)sk.protocol))
		r = diag_flags(fd, st.st_ino, (int)sk.protocol, &diag, what);
	if (r == 0) {
		sk_name(&sk, name, sizeof(name));
		snprintf(what, sizeof(what), "pid %d: fd %d (%s)", (int)obj->pid, obj->id, name);
		why = refusal(fd, &sk, diag);
		if (why)
			r = crf_error_errno(ENOTSUP, "%s: %s", what, why);
	}
	if (r == 0)
		r = sockopt_dump_list(fd, AF_NETLINK, (int)sk.type, (int)sk.protocol, 0, &sk.opts,
				      &sk.n_opts, what);
	if (r == 0) {
		len = crf__net__netlink_sk__get_packed_size(&sk);
		buf = malloc(len ? len : 1);
		if (!buf)
			r = -ENOMEM;
	}
	if (r == 0) {
		crf__net__netlink_sk__pack(&sk, buf);
		r = crf_fd_save_payload(ctx, obj, buf, len);
	}
	free(sk.groups);
	for (size_t i = 0; i < sk.n_opts; i++)
		protobuf_c_message_free_unpacked(&sk.opts[i]->base, NULL);
	free(sk.opts);
	return r;
}

/* Bind to the saved port id, join every group, connect: in that order (connect binds). */
static int make(int fd, const Crf__Net__NetlinkSk *sk, const char *what)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_pid = sk->portid};

	if (sk->portid && bind(fd, (struct sockaddr *)&a, sizeof(a)))
		return crf_error_errno(errno, "%s: bind to port %u", what, sk->portid);
	for (size_t w = 0; w < sk->n_groups; w++)
		for (unsigned int b = 0; b < 32; b++) {
			unsigned int group = (unsigned int)w * 32 + b + 1;

			if (!(sk->groups[w] & (1u << b)))
				continue;
			if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group,
				       sizeof(group)))
				return crf_error_errno(errno, "%s: joining group %u", what, group);
		}
	if (!sk->dst_portid && !sk->dst_group)
		return 0;
	if (sk->dst_group > 32)
		return crf_error_errno(EBADMSG, "%s: connected to group %u", what, sk->dst_group);
	a.nl_pid = sk->dst_portid;
	a.nl_groups = sk->dst_group ? 1u << (sk->dst_group - 1) : 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return crf_error_errno(errno, "%s: connect to port %u group %u", what,
				       sk->dst_portid, sk->dst_group);
	return 0;
}

int netlink_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Net__NetlinkSk *sk;
	char what[160], name[96];
	int fd, r;

	(void)ctx;
	if (!info || !info->payload_len)
		return crf_error_errno(EBADMSG, "fd %d: no netlink socket saved", obj->id);
	sk = crf__net__netlink_sk__unpack(NULL, info->payload_len, info->payload);
	if (!sk || !protocol_name((int)sk->protocol) ||
	    (sk->type != SOCK_RAW && sk->type != SOCK_DGRAM)) {
		if (sk)
			crf__net__netlink_sk__free_unpacked(sk, NULL);
		return crf_error_errno(EBADMSG,
				       "fd %d: the netlink socket's record does not "
				       "decode, or names a protocol crf does not restore",
				       obj->id);
	}
	sk_name(sk, name, sizeof(name));
	snprintf(what, sizeof(what), "fd %d (%s)", obj->id, name);
	fd = socket(AF_NETLINK,
		    (int)sk->type | SOCK_CLOEXEC | (info->flags & O_NONBLOCK ? SOCK_NONBLOCK : 0),
		    (int)sk->protocol);
	if (fd < 0)
		r = crf_error_errno(errno, "%s: socket", what);
	else
		r = sockopt_restore_list(fd, sk->opts, sk->n_opts, what);
	if (r == 0)
		r = make(fd, sk, what);
	if (r == 0)
		r = sockopt_restore_buf_lock(fd, sk->opts, sk->n_opts, what);
	crf__net__netlink_sk__free_unpacked(sk, NULL);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	crf_debug("%s restored", what);
	return fd;
}
