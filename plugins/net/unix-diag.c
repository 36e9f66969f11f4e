// SPDX-License-Identifier: GPL-2.0-only
/*
 * unix_diag through libnl-3: what the kernel says of one unix socket, by
 * inode (its name, the bound file's inode, its peer, the connections
 * waiting on a listener, its queue lengths and, always sent, its shutdown
 * state: there is no UDIAG_SHOW_ bit for it).
 *
 * libnl-3 is the project's netlink library, and it checks what a
 * hand-written loop must: the reply's sequence number, NLMSG_ERROR with
 * its errno, truncation.  One exact request per socket (udiag_ino with no
 * cookie) rather than one dump of every socket of the host: a dump of a
 * tree with a few sockets does not walk the thousands of a busy machine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netinet/tcp.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <crf/log.h>

#include "unix.h"

struct diag_reply {
	struct unix_diag_info *info;
	int err; /* the kernel's NLMSG_ERROR, as -errno */
	bool got;
	/* A dump: each socket is handed to @each (the info is freed after). */
	int (*each)(const struct unix_diag_info *d, void *arg);
	void *arg;
	int each_err;
};

static void parse_attr(struct unix_diag_info *d, const struct nlattr *a)
{
	size_t len = (size_t)nla_len(a);
	const void *p = nla_data(a);

	switch (nla_type(a)) {
	case UNIX_DIAG_NAME:
		d->name_len = len < sizeof(d->name) ? len : sizeof(d->name);
		memcpy(d->name, p, d->name_len);
		break;
	case UNIX_DIAG_VFS:
		if (len >= sizeof(struct unix_diag_vfs)) {
			const struct unix_diag_vfs *v = p;

			d->has_vfs = true;
			d->vfs_ino = v->udiag_vfs_ino;
			d->vfs_dev = v->udiag_vfs_dev;
		}
		break;
	case UNIX_DIAG_PEER:
		if (len >= sizeof(uint32_t))
			d->peer = nla_get_u32((struct nlattr *)a);
		break;
	case UNIX_DIAG_ICONS:
		free(d->icons);
		d->n_icons = 0;
		d->icons = malloc(len ? len : 1);
		if (!d->icons) {
			d->icons_lost = true;
			break;
		}
		d->n_icons = (uint32_t)(len / sizeof(uint32_t));
		memcpy(d->icons, p, d->n_icons * sizeof(uint32_t));
		break;
	case UNIX_DIAG_RQLEN:
		if (len >= sizeof(struct unix_diag_rqlen)) {
			const struct unix_diag_rqlen *q = p;

			d->rqlen = q->udiag_rqueue;
			d->wqlen = q->udiag_wqueue;
		}
		break;
	case UNIX_DIAG_SHUTDOWN:
		if (len >= 1)
			d->shutdown = *(const uint8_t *)p;
		break;
	}
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct diag_reply *r = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	const struct unix_diag_msg *m;
	struct nlattr *a;
	int left;

	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || !nlmsg_valid_hdr(h, sizeof(*m)))
		return NL_SKIP;
	m = nlmsg_data(h);
	if (r->each) {
		struct unix_diag_info d = {
			.ino = m->udiag_ino, .type = m->udiag_type, .state = m->udiag_state};

		nlmsg_for_each_attr(a, h, sizeof(*m), left) parse_attr(&d, a);
		if (!r->each_err)
			r->each_err = d.icons_lost ? -ENOMEM : r->each(&d, r->arg);
		unix_diag_info_free(&d);
		return NL_OK;
	}
	if (m->udiag_ino != r->info->ino)
		return NL_SKIP;
	r->info->type = m->udiag_type;
	r->info->state = m->udiag_state;
	nlmsg_for_each_attr(a, h, sizeof(*m), left) parse_attr(r->info, a);
	r->got = true;
	return NL_STOP;
}

void unix_diag_info_free(struct unix_diag_info *d)
{
	free(d->icons);
	d->icons = NULL;
	d->n_icons = 0;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct diag_reply *r = arg;

	(void)nla;
	r->err = e->error;
	return NL_STOP;
}

/* Send @req (@flags: 0 or NLM_F_DUMP) and read the reply into @reply; 0 or -errno (logged). */
static int request(struct unix_diag_req *req, int flags, struct diag_reply *reply, const char *what)
{
	struct nl_sock *sk;
	int r;

	sk = nl_socket_alloc();
	if (!sk)
		return crf_error_errno(ENOMEM, "unix_diag: nl_socket_alloc");
	nl_socket_disable_auto_ack(sk);
	r = nl_connect(sk, NETLINK_SOCK_DIAG);
	if (r < 0) {
		crf_error("unix_diag: nl_connect(NETLINK_SOCK_DIAG): %s", nl_geterror(r));
		nl_socket_free(sk);
		return -EPROTO;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, reply);
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, reply);
	r = nl_send_simple(sk, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | flags, req, sizeof(*req));
	if (r >= 0)
		r = nl_recvmsgs_default(sk);
	nl_socket_free(sk);
	if (reply->err == -ENOENT && !flags)
		return -ENOENT;
	if (reply->err)
		return crf_error_errno(-reply->err, "unix_diag: %s", what);
	if (r < 0) {
		crf_error("unix_diag: %s: %s", what, nl_geterror(r));
		return -EPROTO;
	}
	return reply->each_err;
}

int unix_diag_get(uint64_t ino, struct unix_diag_info *out)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_ino = (uint32_t)ino,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER |
			      UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,
		/* No cookie: the socket is found by its inode alone. */
		.udiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE},
	};
	struct diag_reply reply = {.info = out};
	char what[64];
	int r;

	*out = (struct unix_diag_info){.ino = ino};
	snprintf(what, sizeof(what), "socket %llu", (unsigned long long)ino);
	r = request(&req, 0, &reply, what);
	if (r == 0 && out->icons_lost)
		r = crf_error_errno(ENOMEM, "unix_diag: %s", what);
	if (r == 0 && !reply.got)
		r = -ENOENT;
	if (r < 0)
		unix_diag_info_free(out);
	return r;
}

int unix_diag_listeners(int (*each)(const struct unix_diag_info *d, void *arg), void *arg)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = 1 << TCP_LISTEN,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_ICONS,
	};
	struct diag_reply reply = {.each = each, .arg = arg};

	return request(&req, NLM_F_DUMP, &reply, "listening sockets");
}

const char *unix_name_str(const char *name, size_t len, char *buf, size_t size)
{
	size_t n;

	if (!len)
		return "unnamed";
	/* An abstract name starts with a NUL byte and may hold more: show them as '@'. */
	n = snprintf(buf, size, "%s", name[0] ? "" : "@");
	for (size_t i = name[0] ? 0 : 1; i < len && n + 1 < size; i++) {
		if (!name[i] && i == len - 1 && name[0])
			break;
		buf[n++] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '@';
	}
	buf[n < size ? n : size - 1] = '\0';
	return buf;
}

const char *unix_type_str(int type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_SEQPACKET:
		return "seqpacket";
	}
	return "type?";
}
