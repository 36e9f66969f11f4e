// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interface behind a tun/tap fd, read at the dump and set again when
 * the restore makes the device anew (a device that is not persistent dies
 * with its last fd, and takes its settings, addresses and routes along).
 *
 * Saved: the interface index, MTU, MAC (tap), txqueuelen, the flags a user
 * sets (up, promisc, allmulti, noarp, multicast...), carrier, alias, group,
 * every address with its prefix, peer, broadcast, flags, scope and label,
 * and the per-device sysctls (tun-sysctl.c).  The kernel's own routes and
 * neighbours come back with the addresses.  Refused by name, since a device
 * made anew would not have them: a master (a bridge port), an XDP program,
 * routes other than the kernel's, permanent neighbours and NOARP ones that
 * are not multicast or broadcast, qdiscs other than the kernel's (handle
 * 0:), addresses with a lifetime (SLAAC, DHCP: their timers).
 *
 * The index comes back by a round trip: the device is moved into a scratch
 * network namespace and back with IFLA_NEW_IFINDEX, before anything else is
 * set (a move clears the addresses and resets the sysctls).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/route.h>
#include <netlink/route/tc.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "../common/rtnl.h"
#include "tun.h"

/* The flags of struct ifreq a user sets (SIOCSIFFLAGS); the rest are the driver's. */
#define USER_FLAGS                                                                                 \
	(IFF_UP | IFF_DEBUG | IFF_NOTRAILERS | IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI |            \
	 IFF_MULTICAST | IFF_PORTSEL | IFF_AUTOMEDIA | IFF_DYNAMIC)
/* The address flags RTM_NEWADDR takes. */
#define ADDR_FLAGS                                                                                 \
	(IFA_F_NODAD | IFA_F_HOMEADDRESS | IFA_F_MANAGETEMPADDR | IFA_F_NOPREFIXROUTE |            \
	 IFA_F_MCAUTOJOIN)

static void nl_closep(struct nl_sock **sk)
{
	if (*sk)
		nl_socket_free(*sk);
}

static void cache_freep(struct nl_cache **c)
{
	if (*c)
		nl_cache_free(*c);
}

static void link_putp(struct rtnl_link **l)
{
	if (*l)
		rtnl_link_put(*l);
}

#define _cleanup_nl_	 __attribute__((cleanup(nl_closep)))
#define _cleanup_cache_	 __attribute__((cleanup(cache_freep)))
#define _cleanup_rtlink_ __attribute__((cleanup(link_putp)))

/* Whether an XDP program is attached: libnl does not parse IFLA_XDP. */
static int xdp_attached(const char *what, int ifindex, bool *att)
{
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex};
	struct nlattr *tb[IFLA_MAX + 1], *x[IFLA_XDP_MAX + 1];
	_cleanup_nl_ struct nl_sock *sk = NULL;
	_cleanup_free_ unsigned char *buf = NULL;
	struct sockaddr_nl who;
	struct nlmsghdr *h;
	int n, r = common_rtnl_open(&sk, what);

	if (r < 0)
		return r;
	nl_socket_disable_auto_ack(sk);
	if (nl_send_simple(sk, RTM_GETLINK, 0, &ifi, sizeof(ifi)) < 0)
		return crf_error_errno(EIO, "%s: RTM_GETLINK", what);
	n = nl_recv(sk, &who, &buf, NULL);
	h = (struct nlmsghdr *)buf;
	if (n <= 0 || !nlmsg_ok(h, n) || h->nlmsg_type != RTM_NEWLINK ||
	    nlmsg_parse(h, sizeof(ifi), tb, IFLA_MAX, NULL) < 0)
		return crf_error_errno(EIO, "%s: RTM_GETLINK's answer", what);
	*att = tb[IFLA_XDP] && !nla_parse_nested(x, IFLA_XDP_MAX, tb[IFLA_XDP], NULL) &&
	       x[IFLA_XDP_ATTACHED] && nla_get_u8(x[IFLA_XDP_ATTACHED]) != XDP_ATTACHED_NONE;
	return 0;
}

static int read_settings(const char *what, struct rtnl_link *k, Crf__Devices__TunLink *l)
{
	struct nl_addr *mac = rtnl_link_get_addr(k);
	const char *alias = rtnl_link_get_ifalias(k);
	bool xdp = false;
	int r;

	if (rtnl_link_get_master(k))
		return crf_error_errno(EOPNOTSUPP,
				       "%s: a port of interface %d (a bridge or bond), which "
				       "crf does not restore",
				       what, rtnl_link_get_master(k));
	r = xdp_attached(what, l->ifindex, &xdp);
	if (r < 0)
		return r;
	if (xdp)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: an XDP program attached, which crf "
				       "does not save",
				       what);
	l->mtu = rtnl_link_get_mtu(k);
	l->txqlen = rtnl_link_get_txqlen(k);
	l->ifflags = rtnl_link_get_flags(k) & USER_FLAGS;
	l->carrier = rtnl_link_get_carrier(k);
	l->group = rtnl_link_get_group(k);
	if (rtnl_link_get_arptype(k) == ARPHRD_ETHER && mac && nl_addr_get_len(mac)) {
		if (common_rtnl_copy_addr(&l->mac, mac) < 0)
			return -ENOMEM;
		l->has_mac = true;
	}
	if (alias && alias[0] && !(l->alias = strdup(alias)))
		return -ENOMEM;
	return 0;
}

static int add_addr(Crf__Devices__TunLink *l, struct rtnl_addr *a)
{
	struct nl_addr *local = rtnl_addr_get_local(a), *peer = rtnl_addr_get_peer(a);
	struct nl_addr *brd = rtnl_addr_get_broadcast(a);
	Crf__Devices__TunAddr **v, *e;
	const char *label = rtnl_addr_get_label(a);

	v = realloc(l->addrs, (l->n_addrs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->addrs = v;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	crf__devices__tun_addr__init(e);
	v[l->n_addrs++] = e;
	e->family = (uint32_t)rtnl_addr_get_family(a);
	e->prefixlen = (uint32_t)rtnl_addr_get_prefixlen(a);
	e->flags = (uint32_t)rtnl_addr_get_flags(a) & ADDR_FLAGS;
	e->scope = (uint32_t)rtnl_addr_get_scope(a);
	if (!local || common_rtnl_copy_addr(&e->local, local) < 0)
		return -ENOMEM;
	if (peer && nl_addr_cmp(peer, local)) {
		if (common_rtnl_copy_addr(&e->peer, peer) < 0)
			return -ENOMEM;
		e->has_peer = true;
	}
	if (brd) {
		if (common_rtnl_copy_addr(&e->broadcast, brd) < 0)
			return -ENOMEM;
		e->has_broadcast = true;
	}
	if (label && label[0] && !(e->label = strdup(label)))
		return -ENOMEM;
	return 0;
}

static int read_addrs(const char *what, struct nl_sock *sk, Crf__Devices__TunLink *l)
{
	_cleanup_cache_ struct nl_cache *c = NULL;
	char s[128];

	if (rtnl_addr_alloc_cache(sk, &c) < 0)
		return crf_error_errno(EIO, "%s: addresses", what);
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;

		if (rtnl_addr_get_ifindex(a) != (int)l->ifindex)
			continue;
		if (rtnl_addr_get_valid_lifetime(a) != 0xffffffffu)
			return crf_error_errno(EOPNOTSUPP,
					       "%s: address %s has a lifetime (%u s left), which "
					       "crf does not restore",
					       what,
					       nl_addr2str(rtnl_addr_get_local(a), s, sizeof(s)),
					       rtnl_addr_get_valid_lifetime(a));
		if (add_addr(l, a) < 0)
			return crf_error_errno(ENOMEM, "%s: addresses", what);
	}
	return 0;
}

/* Routes through the device that are not the kernel's own (made with the addresses). */
static int check_routes(const char *what, struct nl_sock *sk, int ifindex)
{
	_cleanup_cache_ struct nl_cache *c = NULL;
	char s[128];

	if (rtnl_route_alloc_cache(sk, AF_UNSPEC, 0, &c) < 0)
		return crf_error_errno(EIO, "%s: routes", what);
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *rt = (struct rtnl_route *)o;
		bool via = false;

		for (int i = 0; i < rtnl_route_get_nnexthops(rt); i++)
			via |= rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(rt, i)) == ifindex;
		if (via && rtnl_route_get_protocol(rt) != RTPROT_KERNEL)
			return crf_error_errno(
				EOPNOTSUPP,
				"%s: route %s (table %u, protocol %u) through it, "
				"which crf does not restore",
				what, nl_addr2str(rtnl_route_get_dst(rt), s, sizeof(s)),
				rtnl_route_get_table(rt), rtnl_route_get_protocol(rt));
	}
	return 0;
}

static bool multicast_or_broadcast(struct nl_addr *a)
{
	const unsigned char *b = nl_addr_get_binary_addr(a);

	if (nl_addr_get_family(a) == AF_INET6)
		return nl_addr_get_len(a) == 16 && b[0] == 0xff;
	return nl_addr_get_len(a) == 4 && (b[0] >= 224 || (b[0] & b[1] & b[2] & b[3]) == 0xff);
}

static int check_neighbours(const char *what, struct nl_sock *sk, int ifindex)
{
	_cleanup_cache_ struct nl_cache *c = NULL;
	char s[128];

	if (rtnl_neigh_alloc_cache(sk, &c) < 0)
		return crf_error_errno(EIO, "%s: neighbours", what);
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_neigh *n = (struct rtnl_neigh *)o;
		int state = rtnl_neigh_get_state(n);
		struct nl_addr *dst = rtnl_neigh_get_dst(n);

		if (rtnl_neigh_get_ifindex(n) != ifindex || !dst)
			continue;
		if ((state & NUD_PERMANENT) ||
		    ((state & NUD_NOARP) && !multicast_or_broadcast(dst)))
			return crf_error_errno(
				EOPNOTSUPP,
				"%s: neighbour %s added by hand (%s), which crf does "
				"not restore",
				what, nl_addr2str(dst, s, sizeof(s)),
				state & NUD_PERMANENT ? "permanent" : "noarp");
	}
	return 0;
}

/* A qdisc of the kernel's has handle 0:; one added with tc gets another. */
static int check_qdiscs(const char *what, struct nl_sock *sk, int ifindex)
{
	_cleanup_cache_ struct nl_cache *c = NULL;

	if (rtnl_qdisc_alloc_cache(sk, &c) < 0)
		return crf_error_errno(EIO, "%s: qdiscs", what);
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_tc *tc = (struct rtnl_tc *)o;

		if (rtnl_tc_get_ifindex(tc) == ifindex && rtnl_tc_get_handle(tc))
			return crf_error_errno(EOPNOTSUPP,
					       "%s: qdisc %s %x: added with tc, which crf does not "
					       "restore",
					       what,
					       rtnl_tc_get_kind(tc) ? rtnl_tc_get_kind(tc) : "?",
					       rtnl_tc_get_handle(tc) >> 16);
	}
	return 0;
}

int tun_link_read(const char *what, const char *name, int ifindex, Crf__Devices__TunLink *l)
{
	_cleanup_nl_ struct nl_sock *sk = NULL;
	_cleanup_rtlink_ struct rtnl_link *k = NULL;
	int r = common_rtnl_open(&sk, what);

	if (r < 0)
		return r;
	if (rtnl_link_get_kernel(sk, ifindex, NULL, &k) < 0)
		return crf_error_errno(ENODEV, "%s: interface %d", what, ifindex);
	l->ifindex = (uint32_t)ifindex;
	r = read_settings(what, k, l);
	if (r >= 0)
		r = read_addrs(what, sk, l);
	if (r >= 0)
		r = check_routes(what, sk, ifindex);
	if (r >= 0)
		r = check_neighbours(what, sk, ifindex);
	if (r >= 0)
		r = check_qdiscs(what, sk, ifindex);
	if (r >= 0)
		r = tun_sysctl_read(what, name, l);
	return r == -ENOMEM ? crf_error_errno(ENOMEM, "%s", what) : r;
}

void tun_link_free(Crf__Devices__TunLink *l)
{
	for (size_t i = 0; i < l->n_addrs; i++) {
		free(l->addrs[i]->local.data);
		free(l->addrs[i]->peer.data);
		free(l->addrs[i]->broadcast.data);
		free(l->addrs[i]->label);
		free(l->addrs[i]);
	}
	free(l->addrs);
	free(l->mac.data);
	free(l->alias);
	tun_sysctl_free(l);
}

/* RTM_NEWLINK of device @index: into namespace @nsfd, as index @to (0: any). */
static int move_link(struct nl_sock *sk, int index, int nsfd, int to)
{
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC, .ifi_index = index};
	struct nl_msg *m = nlmsg_alloc_simple(RTM_NEWLINK, NLM_F_REQUEST);
	int r;

	if (!m)
		return -NLE_NOMEM;
	r = nlmsg_append(m, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
	if (r >= 0)
		r = nla_put_u32(m, IFLA_NET_NS_FD, (uint32_t)nsfd);
	if (r >= 0 && to)
		r = nla_put_s32(m, IFLA_NEW_IFINDEX, to);
	if (r >= 0)
		r = nl_send_sync(sk, m); /* frees m */
	else
		nlmsg_free(m);
	return r;
}

/* Give device @name, now index @cur, the index @want it had. */
static int set_index(const char *what, struct nl_sock *sk, int cur, int want)
{
	_cleanup_close_ int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int scratch = -1;
	_cleanup_nl_ struct nl_sock *inside = NULL;
	char owner[IF_NAMESIZE] = "";
	int r;

	if (self < 0)
		return crf_error_errno(errno, "%s: /proc/self/ns/net", what);
	/* A socket of the scratch namespace, and back to ours at once. */
	if (unshare(CLONE_NEWNET) < 0)
		return crf_error_errno(errno, "%s: a scratch network namespace", what);
	scratch = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	r = scratch < 0 ? -errno : common_rtnl_open(&inside, what);
	if (setns(self, CLONE_NEWNET) < 0)
		return crf_error_errno(errno, "%s: back to crf's network namespace", what);
	if (r < 0)
		return r;
	r = move_link(sk, cur, scratch, 0);
	if (r < 0)
		return crf_error_errno(EIO, "%s: into a scratch network namespace: %s", what,
				       nl_geterror(r));
	/* Out of the scratch namespace it can only go home: it dies with it. */
	r = move_link(inside, cur, self, want);
	if (r < 0 && move_link(inside, cur, self, 0) < 0)
		crf_error("%s: lost in a scratch network namespace", what);
	if (r < 0)
		return crf_error_errno(EBUSY, "%s: index %d%s%s: %s", what, want,
				       if_indextoname((unsigned)want, owner) ? " is taken by " : "",
				       owner, nl_geterror(r));
	return 0;
}

static int set_settings(const char *what, struct nl_sock *sk, struct rtnl_link *k,
			const Crf__Devices__TunLink *l, bool up)
{
	_cleanup_rtlink_ struct rtnl_link *ch = rtnl_link_alloc();
	struct nl_addr *mac = NULL;
	unsigned int want = l->ifflags & (up ? USER_FLAGS : USER_FLAGS & ~IFF_UP);
	int r;

	if (!ch)
		return crf_error_errno(ENOMEM, "%s", what);
	if (!up) {
		rtnl_link_set_mtu(ch, l->mtu);
		rtnl_link_set_txqlen(ch, l->txqlen);
		rtnl_link_set_group(ch, l->group);
		if (l->alias)
			rtnl_link_set_ifalias(ch, l->alias);
		if (l->has_mac) {
			mac = nl_addr_build(AF_LLC, l->mac.data, l->mac.len);
			if (!mac)
				return crf_error_errno(ENOMEM, "%s", what);
			rtnl_link_set_addr(ch, mac);
			nl_addr_put(mac);
		}
	}
	rtnl_link_set_flags(ch, want);
	rtnl_link_unset_flags(ch, USER_FLAGS & ~want);
	r = rtnl_link_change(sk, k, ch, 0);
	if (r < 0)
		return crf_error_errno(EIO, "%s: set mtu %u, txqueuelen %u, flags %#x: %s", what,
				       l->mtu, l->txqlen, want, nl_geterror(r));
	return 0;
}

static struct nl_addr *build(int family, const ProtobufCBinaryData *b)
{
	return nl_addr_build(family, b->data, b->len);
}

static int add_one(const char *what, struct nl_sock *sk, int ifindex,
		   const Crf__Devices__TunAddr *e)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = build((int)e->family, &e->local), *peer = NULL, *brd = NULL;
	char s[128];
	int r = a && local ? 0 : -NLE_NOMEM;

	if (!r && e->has_peer && !(peer = build((int)e->family, &e->peer)))
		r = -NLE_NOMEM;
	if (!r && e->has_broadcast && !(brd = build((int)e->family, &e->broadcast)))
		r = -NLE_NOMEM;
	if (!r) {
		nl_addr_set_prefixlen(local, (int)e->prefixlen);
		rtnl_addr_set_ifindex(a, ifindex);
		rtnl_addr_set_family(a, (int)e->family);
		r = rtnl_addr_set_local(a, local);
	}
	if (!r && peer)
		r = rtnl_addr_set_peer(a, peer);
	if (!r && brd)
		r = rtnl_addr_set_broadcast(a, brd);
	if (!r && e->label)
		r = rtnl_addr_set_label(a, e->label);
	if (!r) {
		rtnl_addr_set_prefixlen(a, (int)e->prefixlen);
		rtnl_addr_set_flags(a, e->flags);
		rtnl_addr_set_scope(a, (int)e->scope);
		r = rtnl_addr_add(sk, a, 0);
	}
	if (r == -NLE_EXIST) /* the kernel's own link-local one, made again */
		r = 0;
	if (r < 0)
		crf_error_errno(EIO, "%s: address %s: %s", what,
				local ? nl_addr2str(local, s, sizeof(s)) : "?", nl_geterror(r));
	nl_addr_put(local);
	nl_addr_put(peer);
	nl_addr_put(brd);
	rtnl_addr_put(a);
	return r < 0 ? -EIO : 0;
}

/* Read the device back: what was set is what the dump saw. */
static int verify(const char *what, struct nl_sock *sk, const Crf__Devices__TunLink *l)
{
	_cleanup_rtlink_ struct rtnl_link *k = NULL;
	Crf__Devices__TunLink now = CRF__DEVICES__TUN_LINK__INIT;
	int r;

	if (rtnl_link_get_kernel(sk, (int)l->ifindex, NULL, &k) < 0)
		return crf_error_errno(ENODEV, "%s: interface %u after the restore", what,
				       l->ifindex);
	now.ifindex = l->ifindex;
	r = read_settings(what, k, &now);
	if (r >= 0)
		r = read_addrs(what, sk, &now);
	if (r >= 0 && (now.mtu != l->mtu || now.txqlen != l->txqlen || now.ifflags != l->ifflags ||
		       now.group != l->group || now.has_mac != l->has_mac ||
		       (l->has_mac && memcmp(now.mac.data, l->mac.data, l->mac.len))))
		r = crf_error_errno(
			EIO,
			"%s: after the restore mtu %u, txqueuelen %u, flags %#x, group %u; "
			"at the dump %u, %u, %#x, %u (or another MAC)",
			what, now.mtu, now.txqlen, now.ifflags, now.group, l->mtu, l->txqlen,
			l->ifflags, l->group);
	if (r >= 0 && now.n_addrs != l->n_addrs)
		r = crf_error_errno(EIO, "%s: %zu addresses after the restore, %zu at the dump",
				    what, now.n_addrs, l->n_addrs);
	tun_link_free(&now);
	return r;
}

int tun_link_apply(const char *what, const char *name, const Crf__Devices__TunLink *l)
{
	_cleanup_nl_ struct nl_sock *sk = NULL;
	_cleanup_rtlink_ struct rtnl_link *k = NULL;
	int cur = (int)if_nametoindex(name), r = common_rtnl_open(&sk, what);

	if (r < 0)
		return r;
	if (!cur)
		return crf_error_errno(errno, "%s: interface %s", what, name);
	if (cur != (int)l->ifindex && (r = set_index(what, sk, cur, (int)l->ifindex)) < 0)
		return r;
	if (rtnl_link_get_kernel(sk, (int)l->ifindex, NULL, &k) < 0)
		return crf_error_errno(ENODEV, "%s: interface %u", what, l->ifindex);
	r = set_settings(what, sk, k, l, false);
	if (r >= 0)
		r = tun_sysctl_apply(what, name, l);
	for (size_t i = 0; r >= 0 && i < l->n_addrs; i++)
		r = add_one(what, sk, (int)l->ifindex, l->addrs[i]);
	if (r >= 0 && (l->ifflags & IFF_UP))
		r = set_settings(what, sk, k, l, true);
	return r < 0 ? r : verify(what, sk, l);
}
