// SPDX-License-Identifier: GPL-2.0-only
/*
 * A packet socket as packet_diag (NETLINK_SOCK_DIAG, family AF_PACKET)
 * lists it: what getsockopt cannot read, the memberships
 * (PACKET_ADD_MEMBERSHIP), the rings' configuration, PACKET_COPY_THRESH.
 * The query is a dump of every packet socket of the namespace the socket
 * is in (packet_diag looks none up by inode), asked there (skns.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/sock_diag.h>
#include <netlink/msg.h>

#include "net.h"
#include "packet.h"

struct find {
	uint32_t ino;
	bool found;
	int err;
	struct packet_diag *d;
};

/* The attribute's payload into @dst, which it must fill. */
static bool take(const struct nlattr *a, void *dst, size_t len)
{
	if (nla_len(a) < (int)len)
		return false;
	memcpy(dst, nla_data(a), len);
	return true;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct find *f = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	const struct packet_diag_msg *m;
	struct packet_diag *d = f->d;
	struct nlattr *a;
	int left;

	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || !nlmsg_valid_hdr(h, sizeof(*m)))
		return NL_SKIP;
	m = nlmsg_data(h);
	if (m->pdiag_ino != f->ino)
		return NL_OK;
	f->found = true;
	d->type = m->pdiag_type;
	d->protocol = m->pdiag_num;
	nlmsg_for_each_attr(a, h, sizeof(*m), left)
	{
		switch (nla_type(a)) {
		case PACKET_DIAG_INFO:
			if (!take(a, &d->info, sizeof(d->info)))
				f->err = -EBADMSG;
			break;
		case PACKET_DIAG_RX_RING:
			d->has_rx = take(a, &d->rx, sizeof(d->rx));
			break;
		case PACKET_DIAG_TX_RING:
			d->has_tx = take(a, &d->tx, sizeof(d->tx));
			break;
		case PACKET_DIAG_FANOUT:
			d->has_fanout = take(a, &d->fanout, sizeof(d->fanout));
			break;
		case PACKET_DIAG_MCLIST:
			d->n_mc = (unsigned)(nla_len(a) / (int)sizeof(d->mc[0]));
			if (d->n_mc > PACKET_MC_MAX)
				f->err = -E2BIG;
			else
				memcpy(d->mc, nla_data(a), d->n_mc * sizeof(d->mc[0]));
			break;
		}
	}
	return NL_OK;
}

int packet_diag_get(int copy, uint32_t ino, struct packet_diag *d, const char *what)
{
	struct packet_diag_req req = {
		.sdiag_family = AF_PACKET,
		.pdiag_show = PACKET_SHOW_INFO | PACKET_SHOW_MCLIST | PACKET_SHOW_RING_CFG |
			      PACKET_SHOW_FANOUT,
	};
	struct find f = {.ino = ino, .d = d};
	int r;

	memset(d, 0, sizeof(*d));
	r = net_diag_dump(copy, &req, sizeof(req), on_valid, &f, what);
	if (r == 0 && f.err)
		return crf_error_errno(-f.err, "%s: packet_diag's answer", what);
	if (r == 0 && !f.found)
		return crf_error_errno(ENOENT, "%s: packet_diag does not list it", what);
	return r;
}
