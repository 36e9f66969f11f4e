// SPDX-License-Identifier: GPL-2.0-only
/*
 * veth links of a network namespace whose peer is in crf's own namespace,
 * as a container runtime makes them (the peer a port of a bridge, maybe
 * with addresses).  The dump finds the peer by the veth's IFLA_LINK and
 * IFLA_LINK_NETNSID, checks with RTM_GETNSID that the id is crf's
 * namespace's, and reads the peer from there; the restore makes the pair
 * again from crf's namespace, the veth end in the new namespace (the old
 * pair died with the old namespace: its names and ifindexes, which the
 * restore gives again, may take a moment to free).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns.h"

/* The id the calling thread's namespace gives the namespace of @fd, or -1 for none. */
static int nsid_of(int fd, int *nsid, const char *what)
{
	_cleanup_close_ int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
		char pad[3];
		struct rtattr a;
		int fd;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = RTM_GETNSID,
		      .nlmsg_flags = NLM_F_REQUEST},
		.g = {.rtgen_family = AF_UNSPEC},
		.a = {.rta_len = RTA_LENGTH(sizeof(int)), .rta_type = NETNSA_FD},
		.fd = fd,
	};
	long buf[256];
	ssize_t n;

	*nsid = -1;
	if (s < 0 || send(s, &req, sizeof(req), 0) < 0 || (n = recv(s, buf, sizeof(buf), 0)) < 0)
		return crf_error_errno(errno, "%s: RTM_GETNSID", what);
	for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		struct rtattr *a =
			(void *)((char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct rtgenmsg)));
		int len = (int)h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct rtgenmsg)));

		if (h->nlmsg_type == NLMSG_ERROR)
			return crf_error_errno(EIO, "%s: RTM_GETNSID refused", what);
		for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (a->rta_type == NETNSA_NSID)
				memcpy(nsid, RTA_DATA(a), sizeof(*nsid));
	}
	return 0;
}

int netns_veth_dump(struct rtnl_link *l, Crf__Net__NsLink *ln, int own, const char *what)
{
	int32_t link_nsid = -1;
	int nsid, r;

	if (rtnl_link_get_link_netnsid(l, &link_nsid) < 0)
		return crf_error_errno(ENOTSUP,
				       "%s: veth '%s' has its peer in the namespace too: "
				       "not restored",
				       what, ln->name);
	r = nsid_of(own, &nsid, what);
	if (r < 0)
		return r;
	if (nsid < 0 || nsid != link_nsid)
		return crf_error_errno(ENOTSUP,
				       "%s: veth '%s' has its peer in another namespace "
				       "than crf's own (id %d): not restored",
				       what, ln->name, (int)link_nsid);
	ln->has_peer_ifindex = true;
	ln->peer_ifindex = (uint32_t)rtnl_link_get_link(l);
	return 0;
}

/* In crf's own namespace, after the dump's: the peers of the veths. */
int netns_veth_peers(Crf__Net__NetNs *ns, const char *what)
{
	struct nl_cache *links = NULL, *addrs = NULL;
	struct nl_sock *sk = NULL;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ns->n_links; i++) {
		Crf__Net__NsLink *ln = ns->links[i];
		struct rtnl_link *p, *m;

		if (!ln->has_peer_ifindex)
			continue;
		if (!sk) {
			r = common_rtnl_open(&sk, what);
			if (r >= 0 && (rtnl_link_alloc_cache(sk, AF_UNSPEC, &links) < 0 ||
				       rtnl_addr_alloc_cache(sk, &addrs) < 0))
				r = crf_error_errno(EIO, "%s: listing crf's own links", what);
			if (r < 0)
				break;
		}
		p = rtnl_link_get(links, (int)ln->peer_ifindex);
		if (!p || !rtnl_link_get_type(p) || strcmp(rtnl_link_get_type(p), "veth")) {
			rtnl_link_put(p);
			r = crf_error_errno(ENODEV, "%s: veth '%s': no veth %u in crf's namespace",
					    what, ln->name, ln->peer_ifindex);
			break;
		}
		ln->peer = calloc(1, sizeof(*ln->peer));
		if (ln->peer)
			crf__net__ns_link__init(ln->peer);
		r = ln->peer ? netns_link_fill(p, addrs, ln->peer, true, what) : -ENOMEM;
		m = r >= 0 && rtnl_link_get_master(p)
			    ? rtnl_link_get(links, rtnl_link_get_master(p))
			    : NULL;
		if (m && (!rtnl_link_get_type(m) || strcmp(rtnl_link_get_type(m), "bridge")))
			r = crf_error_errno(ENOTSUP,
					    "%s: veth '%s': its peer '%s' is a port of "
					    "'%s', not of a bridge",
					    what, ln->name, rtnl_link_get_name(p),
					    rtnl_link_get_name(m));
		else if (m && !(ln->peer->master = strdup(rtnl_link_get_name(m))))
			r = -ENOMEM;
		rtnl_link_put(m);
		rtnl_link_put(p);
	}
	nl_cache_free(addrs);
	nl_cache_free(links);
	if (sk)
		nl_socket_free(sk);
	return r == -ENOMEM ? crf_error_errno(ENOMEM, "%s", what) : r;
}

static void set_common(struct rtnl_link *l, const Crf__Net__NsLink *ln)
{
	struct nl_addr *mac;

	rtnl_link_set_name(l, ln->name);
	rtnl_link_set_ifindex(l, (int)ln->ifindex);
	rtnl_link_set_mtu(l, ln->mtu);
	rtnl_link_set_txqlen(l, ln->txqlen);
	if (ln->has_tx_queues)
		rtnl_link_set_num_tx_queues(l, ln->tx_queues);
	if (ln->has_rx_queues)
		rtnl_link_set_num_rx_queues(l, ln->rx_queues);
	if (ln->has_mac && (mac = nl_addr_build(AF_LLC, ln->mac.data, ln->mac.len))) {
		rtnl_link_set_addr(l, mac);
		nl_addr_put(mac);
	}
}

/*
 * Make the pair from @hsk (crf's namespace), @ln's end in the namespace of
 * @nsfd; a name still held by the dying old pair is waited for (3 s).
 */
int netns_veth_make(struct nl_sock *hsk, const Crf__Net__NsLink *ln, int nsfd, const char *what)
{
	struct rtnl_link *l = rtnl_link_veth_alloc(), *inside;
	int e = l ? 0 : -NLE_NOMEM;

	if (!ln->peer)
		e = -NLE_INVAL;
	if (e >= 0) {
		set_common(l, ln->peer);
		inside = rtnl_link_veth_get_peer(l);
		set_common(inside, ln);
		rtnl_link_set_ns_fd(inside, nsfd);
		rtnl_link_put(inside);
		for (int round = 0; round < 300; round++) {
			e = rtnl_link_add(hsk, l, NLM_F_CREATE | NLM_F_EXCL);
			if (e != -NLE_EXIST && e != -NLE_BUSY)
				break;
			usleep(10000);
		}
	}
	rtnl_link_veth_release(l);
	if (e < 0)
		return crf_error_errno(EIO,
				       "%s: making veth '%s' with its peer '%s' in crf's "
				       "namespace: %s",
				       what, ln->name, ln->peer ? ln->peer->name : "(none saved)",
				       nl_geterror(e));
	return 0;
}

/* The peer's master, state and addresses, from @hsk. */
int netns_veth_peer_set(struct nl_sock *hsk, const Crf__Net__NsLink *ln, const char *what)
{
	const Crf__Net__NsLink *p = ln->peer;
	struct rtnl_link *cur = NULL, *br = NULL, *chg = rtnl_link_alloc();
	int e = chg ? rtnl_link_get_kernel(hsk, 0, p->name, &cur) : -NLE_NOMEM;

	if (e >= 0 && p->master)
		e = rtnl_link_get_kernel(hsk, 0, p->master, &br);
	if (e >= 0) {
		if (br)
			rtnl_link_set_master(chg, rtnl_link_get_ifindex(br));
		if (p->up)
			rtnl_link_set_flags(chg, IFF_UP);
		e = rtnl_link_change(hsk, cur, chg, 0);
	}
	if (e < 0)
		e = crf_error_errno(EIO, "%s: veth '%s': its peer '%s'%s%s: %s", what, ln->name,
				    p->name, p->master ? " in bridge " : "",
				    p->master ? p->master : "", nl_geterror(e));
	else
		e = netns_link_addrs(hsk, p, rtnl_link_get_ifindex(cur), what);
	rtnl_link_put(cur);
	rtnl_link_put(br);
	rtnl_link_put(chg);
	return e;
}
