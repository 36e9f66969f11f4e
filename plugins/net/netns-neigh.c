// SPDX-License-Identifier: GPL-2.0-only
/*
 * Neighbour entries of a network namespace (ip neigh), which crf does not
 * restore: those the kernel makes come back with the traffic (a learned
 * entry, reachable or stale, is a cache; a noarp one is made for a
 * device without ARP, lo, or a multicast or broadcast address), so the
 * dump only refuses, by name, one a fresh namespace with the same links
 * and addresses would not have: permanent, noarp on a device with ARP to
 * a unicast address, managed (NTF_EXT_MANAGED), or put there by a
 * controller (extern_learn).  Read with RTM_GETNEIGH (libnl-3's cache has
 * no NDA_FLAGS_EXT), in the namespace.  Proxy entries: netns-check.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns.h"

struct neigh {
	int family, ifindex;
	uint8_t dst[16];
	size_t len;
	uint16_t state;
	uint8_t flags;
	uint32_t flags_ext;
};

struct bcast_walk {
	const struct neigh *n;
	bool found;
};

/* An IPv4 address of the entry's link whose broadcast is the entry's address. */
static void bcast_cb(struct nl_object *o, void *arg)
{
	struct rtnl_addr *a = (struct rtnl_addr *)o;
	struct bcast_walk *w = arg;
	struct nl_addr *l = rtnl_addr_get_local(a), *b = rtnl_addr_get_broadcast(a);
	int plen = rtnl_addr_get_prefixlen(a);
	uint32_t dst, local, mask;

	if (rtnl_addr_get_ifindex(a) != w->n->ifindex || rtnl_addr_get_family(a) != AF_INET || !l ||
	    nl_addr_get_len(l) != 4)
		return;
	memcpy(&dst, w->n->dst, 4);
	if (b && nl_addr_get_len(b) == 4 && !memcmp(nl_addr_get_binary_addr(b), &dst, 4))
		w->found = true;
	memcpy(&local, nl_addr_get_binary_addr(l), 4);
	mask = plen ? htonl(~0u << (32 - plen)) : 0;
	if (plen < 31 && (local | ~mask) == dst)
		w->found = true;
}

/* A noarp entry the kernel makes: a device without ARP, a multicast or broadcast address. */
static bool kernel_noarp(const struct neigh *n, struct nl_cache *links, struct nl_cache *addrs)
{
	struct rtnl_link *l = rtnl_link_get(links, n->ifindex);
	struct bcast_walk w = {.n = n};
	unsigned int flags = l ? rtnl_link_get_flags(l) : 0;

	rtnl_link_put(l);
	if (flags & (IFF_NOARP | IFF_LOOPBACK))
		return true;
	if (n->family == AF_INET6)
		return n->len == 16 && n->dst[0] == 0xff;
	if (n->family != AF_INET || n->len != 4)
		return false;
	if ((n->dst[0] & 0xf0) == 0xe0 || !memcmp(n->dst, "\xff\xff\xff\xff", 4))
		return true;
	nl_cache_foreach(addrs, bcast_cb, &w);
	return w.found;
}

static const char *why(const struct neigh *n, struct nl_cache *links, struct nl_cache *addrs)
{
	if (n->state & NUD_PERMANENT)
		return "is permanent (added by hand)";
	if (n->flags_ext & NTF_EXT_MANAGED)
		return "is managed (added by hand)";
	if (n->flags & NTF_EXT_LEARNED)
		return "was put there by a controller (extern_learn)";
	if ((n->state & NUD_NOARP) && !kernel_noarp(n, links, addrs))
		return "is noarp on a link with ARP, to a unicast address (added by hand)";
	return NULL;
}

static void parse(struct nlmsghdr *h, struct neigh *n)
{
	struct ndmsg *m = NLMSG_DATA(h);
	struct rtattr *a = (struct rtattr *)((char *)m + NLMSG_ALIGN(sizeof(*m)));
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));

	*n = (struct neigh){.family = m->ndm_family,
			    .ifindex = m->ndm_ifindex,
			    .state = m->ndm_state,
			    .flags = m->ndm_flags};
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t l = RTA_PAYLOAD(a);

		if (a->rta_type == NDA_DST && l <= sizeof(n->dst)) {
			memcpy(n->dst, RTA_DATA(a), l);
			n->len = l;
		} else if (a->rta_type == NDA_FLAGS_EXT && l >= sizeof(uint32_t)) {
			memcpy(&n->flags_ext, RTA_DATA(a), sizeof(uint32_t));
		}
	}
}

static int refuse(const struct neigh *n, const char *reason, struct nl_cache *links,
		  const char *what)
{
	char dst[INET6_ADDRSTRLEN] = "?", dev[IF_NAMESIZE] = "?";

	if (n->len == 4 || n->len == 16)
		inet_ntop(n->len == 4 ? AF_INET : AF_INET6, n->dst, dst, sizeof(dst));
	rtnl_link_i2name(links, n->ifindex, dev, sizeof(dev));
	return crf_error_errno(ENOTSUP, "%s: neighbour entry %s dev %s %s: not restored", what, dst,
			       dev, reason);
}

static int walk(int fd, struct nl_cache *links, struct nl_cache *addrs, const char *what)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg n;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = RTM_GETNEIGH,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.n = {.ndm_family = AF_UNSPEC},
	};
	long b[4096];
	ssize_t n;

	if (send(fd, &req, sizeof(req), 0) < 0)
		return crf_error_errno(errno, "%s: listing neighbour entries", what);
	while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
		for (struct nlmsghdr *h = (void *)b; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct neigh e;
			const char *reason;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return crf_error_errno(EIO, "%s: listing neighbour entries", what);
			if (h->nlmsg_type != RTM_NEWNEIGH ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg)))
				continue;
			parse(h, &e);
			reason = why(&e, links, addrs);
			if (reason)
				return refuse(&e, reason, links, what);
		}
	}
	return n < 0 ? crf_error_errno(errno, "%s: listing neighbour entries", what) : 0;
}

int netns_check_neigh_entries(struct nl_sock *sk, struct nl_cache *links, const char *what)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct nl_cache *addrs = NULL;
	int r, e;

	if (fd < 0)
		return crf_error_errno(errno, "%s: listing neighbour entries", what);
	e = rtnl_addr_alloc_cache(sk, &addrs);
	if (e < 0)
		return crf_error_errno(EIO, "%s: listing addresses: %s", what, nl_geterror(e));
	r = walk(fd, links, addrs, what);
	nl_cache_free(addrs);
	return r;
}
