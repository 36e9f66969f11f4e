// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dump of a network namespace (CRF_OBJ_NS "net"): its links, their
 * addresses, routes, a defined list of sysctls and the nftables ruleset go
 * to netns-INODE.img, once per namespace.  What crf cannot make again is
 * refused by name: a link of another kind than lo or veth (to crf's own
 * namespace), an attribute not restored, rules or iptables-legacy tables,
 * TCP connections.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>

#include <net/if_arp.h>

#include <linux/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "netns.h"

/* Flags a link may have: the ones the restore sets (UP) or the kernel does. */
#define LINK_FLAGS_KNOWN                                                                           \
	(IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP | IFF_BROADCAST | IFF_MULTICAST)

int netns_push(void ***arr, size_t *n, void *item)
{
	void **grown;

	if (!item)
		return -ENOMEM;
	grown = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!grown)
		return -ENOMEM;
	grown[(*n)++] = item;
	*arr = grown;
	return 0;
}

/* One address of link @ln; refused where it has what the restore would not give back. */
static int addr_of(struct rtnl_addr *a, Crf__Net__NsLink *ln, const char *what)
{
	struct nl_addr *local = rtnl_addr_get_local(a), *peer = rtnl_addr_get_peer(a);
	Crf__Net__NsAddr *s;
	char text[INET6_ADDRSTRLEN + 8];
	int r;

	nl_addr2str(local, text, sizeof(text));
	if (rtnl_addr_get_valid_lifetime(a) != 0xffffffffu ||
	    rtnl_addr_get_preferred_lifetime(a) != 0xffffffffu)
		return crf_error_errno(ENOTSUP,
				       "%s: link '%s': address %s has a lifetime (valid %u s, "
				       "preferred %u s): crf restores permanent addresses only",
				       what, ln->name, text, rtnl_addr_get_valid_lifetime(a),
				       rtnl_addr_get_preferred_lifetime(a));
	if (rtnl_addr_get_flags(a) & (IFA_F_TENTATIVE | IFA_F_DADFAILED))
		return crf_error_errno(EBUSY,
				       "%s: link '%s': address %s is tentative or failed duplicate "
				       "address detection",
				       what, ln->name, text);
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	crf__net__ns_addr__init(s);
	s->family = (uint32_t)rtnl_addr_get_family(a);
	s->prefixlen = (uint32_t)rtnl_addr_get_prefixlen(a);
	s->scope = (uint32_t)rtnl_addr_get_scope(a);
	s->flags = (uint32_t)rtnl_addr_get_flags(a);
	r = netns_push((void ***)&ln->addrs, &ln->n_addrs, s);
	if (r < 0) {
		free(s);
		return r;
	}
	r = common_rtnl_copy_addr(&s->local, local);
	if (r >= 0 && rtnl_addr_get_label(a) && s->family == AF_INET) {
		s->label = strdup(rtnl_addr_get_label(a));
		r = s->label ? 0 : -ENOMEM;
	}
	if (r >= 0 && peer && nl_addr_cmp(peer, local)) {
		s->has_peer = true;
		r = common_rtnl_copy_addr(&s->peer, peer);
	}
	return r;
}

struct addr_walk {
	Crf__Net__NsLink *ln;
	int ifindex;
	const char *what;
	int r;
};

static void addr_cb(struct nl_object *o, void *arg)
{
	struct addr_walk *w = arg;
	struct rtnl_addr *a = (struct rtnl_addr *)o;

	if (w->r >= 0 && rtnl_addr_get_ifindex(a) == w->ifindex)
		w->r = addr_of(a, w->ln, w->what);
}

/* The kind crf knows @l as, or NULL (refused). */
static const char *link_kind(struct rtnl_link *l)
{
	const char *type = rtnl_link_get_type(l);

	if (!type && rtnl_link_get_arptype(l) == ARPHRD_LOOPBACK &&
	    !strcmp(rtnl_link_get_name(l), "lo"))
		return "loopback";
	if (type && !strcmp(type, "veth"))
		return "veth";
	return NULL;
}

/* @peer: a veth's other end, in crf's namespace, which may be a bridge port. */
static int check_link(struct rtnl_link *l, bool peer, const char *what)
{
	const char *name = rtnl_link_get_name(l), *type = rtnl_link_get_type(l);
	unsigned int flags = rtnl_link_get_flags(l);

	if (!link_kind(l))
		return crf_error_errno(ENOTSUP,
				       "%s: link '%s' (kind %s) cannot be restored: crf restores "
				       "lo and veth links only",
				       what, name, type ? type : "none, a device");
	if (flags & ~LINK_FLAGS_KNOWN)
		return crf_error_errno(ENOTSUP, "%s: link '%s': flags %#x are not restored", what,
				       name, flags & ~LINK_FLAGS_KNOWN);
	if (rtnl_link_get_ifalias(l) && *rtnl_link_get_ifalias(l))
		return crf_error_errno(ENOTSUP, "%s: link '%s': its alias '%s' is not restored",
				       what, name, rtnl_link_get_ifalias(l));
	if (rtnl_link_get_group(l))
		return crf_error_errno(ENOTSUP, "%s: link '%s': group %u is not restored", what,
				       name, rtnl_link_get_group(l));
	if (!peer && rtnl_link_get_master(l))
		return crf_error_errno(ENOTSUP, "%s: link '%s' is a port of another link", what,
				       name);
	return 0;
}

int netns_link_fill(struct rtnl_link *l, struct nl_cache *addrs, Crf__Net__NsLink *ln, bool peer,
		    const char *what)
{
	struct addr_walk aw = {.ifindex = rtnl_link_get_ifindex(l), .ln = ln, .what = what};
	int r = check_link(l, peer, what);

	if (r < 0)
		return r;
	ln->name = strdup(rtnl_link_get_name(l));
	ln->kind = strdup(link_kind(l));
	if (!ln->name || !ln->kind)
		return -ENOMEM;
	ln->ifindex = (uint32_t)rtnl_link_get_ifindex(l);
	if (!strcmp(ln->kind, "veth")) {
		ln->has_tx_queues = ln->has_rx_queues = true;
		ln->tx_queues = rtnl_link_get_num_tx_queues(l);
		ln->rx_queues = rtnl_link_get_num_rx_queues(l);
	}
	ln->mtu = rtnl_link_get_mtu(l);
	ln->up = rtnl_link_get_flags(l) & IFF_UP;
	ln->txqlen = rtnl_link_get_txqlen(l);
	if (rtnl_link_get_addr(l)) {
		ln->has_mac = true;
		r = common_rtnl_copy_addr(&ln->mac, rtnl_link_get_addr(l));
	}
	aw.r = r;
	nl_cache_foreach(addrs, addr_cb, &aw);
	return aw.r;
}

struct link_walk {
	Crf__Net__NetNs *ns;
	struct nl_cache *addrs;
	int own; /* crf's own namespace */
	const char *what;
	int r;
};

static int link_of(struct rtnl_link *l, struct link_walk *w)
{
	Crf__Net__NsLink *ln = malloc(sizeof(*ln));
	int r;

	if (!ln)
		return -ENOMEM;
	crf__net__ns_link__init(ln);
	r = netns_push((void ***)&w->ns->links, &w->ns->n_links, ln);
	if (r < 0) {
		free(ln);
		return r;
	}
	r = netns_link_fill(l, w->addrs, ln, false, w->what);
	if (r >= 0 && !strcmp(ln->kind, "veth"))
		r = netns_veth_dump(l, ln, w->own, w->what);
	return r;
}

static void link_cb(struct nl_object *o, void *arg)
{
	struct link_walk *w = arg;

	if (w->r >= 0)
		w->r = link_of((struct rtnl_link *)o, w);
}

/* Everything, read in the namespace (the calling thread is in it). */
static int read_inside(pid_t pid, int own, Crf__Net__NetNs *ns, const char *what)
{
	struct nl_cache *links = NULL, *addrs = NULL;
	struct link_walk w = {.ns = ns, .own = own, .what = what};
	struct nl_sock *sk;
	int r = common_rtnl_open(&sk, what);

	if (r < 0)
		return r;
	r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links);
	if (r >= 0)
		r = rtnl_addr_alloc_cache(sk, &addrs);
	if (r < 0) {
		r = crf_error_errno(EIO, "%s: listing links and addresses: %s", what,
				    nl_geterror(r));
		goto out;
	}
	w.addrs = addrs;
	nl_cache_foreach(links, link_cb, &w);
	r = w.r == -ENOMEM ? crf_error_errno(ENOMEM, "%s", what) : w.r;
	if (r >= 0)
		r = netns_check_link_attrs(what);
	if (r >= 0)
		r = netns_routes_dump(sk, links, ns, what);
	if (r >= 0)
		r = netns_check_rules(sk, what);
	if (r >= 0)
		r = netns_check_neigh(sk, links, what);
	if (r >= 0)
		r = netns_check_qdisc(sk, links, what);
	if (r >= 0)
		r = netns_check_legacy(pid, what);
	if (r >= 0)
		r = netns_check_tcp(what);
	if (r >= 0)
		r = netns_check_xfrm(what);
	if (r >= 0)
		r = netns_sysctl_dump(ns, what);
	if (r >= 0)
		r = netns_nft_dump(ns, what);
out:
	nl_cache_free(addrs);
	nl_cache_free(links);
	nl_socket_free(sk);
	return r;
}

/* Enter @pid's namespace for read_inside(), and come back whatever it returns. */
static int read_ns(pid_t pid, Crf__Net__NetNs *ns, const char *what)
{
	_cleanup_close_ int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int target = -1;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (own < 0)
		return crf_error_errno(errno, "/proc/thread-self/ns/net");
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0 || setns(target, CLONE_NEWNET) < 0)
		return crf_error_errno(errno, "%s: entering it", what);
	r = read_inside(pid, own, ns, what);
	if (setns(own, CLONE_NEWNET) < 0)
		return crf_error_errno(errno, "%s: going back to crf's own net namespace", what);
	if (r >= 0)
		r = netns_veth_peers(ns, what);
	return r < 0 ? r : netns_check_peer_attrs(ns, what);
}

void netns_image(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "netns-%" PRIu64 ".img", id);
}

int netns_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	Crf__Net__NetNs *ns = malloc(sizeof(*ns));
	struct crf_img *img = NULL;
	char name[64], what[128];
	int r;

	netns_image(name, sizeof(name), ni->id);
	/* Once per namespace: the tasks in it are dispatched one by one. */
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0) {
		free(ns);
		return 0;
	}
	if (!ns)
		return crf_error_errno(ENOMEM, "net namespace");
	crf__net__net_ns__init(ns);
	snprintf(what, sizeof(what), "pid %d: net namespace %s", (int)obj->pid, obj->desc);
	r = read_ns(obj->pid, ns, what);
	if (r >= 0)
		r = crf_img_create(crf_ctx_images(ctx), name, &crf__net__net_ns__descriptor, &img);
	if (r >= 0)
		r = crf_img_write(img, &ns->base);
	if (img)
		r = r < 0 ? (crf_img_abort(img), r) : crf_img_close(img);
	if (r >= 0)
		crf_info("saved %s: %zu links, %zu routes, %zu sysctls%s", what, ns->n_links,
			 ns->n_routes, ns->n_sysctls, ns->nft_ruleset ? ", nftables rules" : "");
	protobuf_c_message_free_unpacked(&ns->base, NULL);
	return r;
}
