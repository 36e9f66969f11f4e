// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restore of a network namespace, in the first restored process in it
 * (the ns plugin's restore-premap, before its fds): unshare(CLONE_NEWNET),
 * then its links' MTU and queue length, the sysctls (before the addresses:
 * disable_ipv6 decides whether a link has any), the links up, the
 * addresses, the routes, the nftables ruleset.  Each step ends with a
 * check that the namespace now has what the dump saw; any difference
 * fails the restore.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include <crf/image.h>
#include <crf/log.h>

#include "netns.h"

#define KEY_MAX 256

/* One address's canonical text; IFA_F_NODAD is what the restore adds (no DAD to wait for). */
static void addr_key(uint32_t family, const void *local, size_t len, uint32_t plen,
		     const void *peer, size_t plen_peer, uint32_t scope, uint32_t flags,
		     const char *label, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?", p[INET6_ADDRSTRLEN] = "-";

	if (len == (family == AF_INET ? 4u : 16u))
		inet_ntop((int)family, local, a, sizeof(a));
	if (peer && plen_peer == len)
		inet_ntop((int)family, peer, p, sizeof(p));
	snprintf(buf, size, "%s/%u peer %s scope %u flags %#x label %s", a, plen, p, scope,
		 flags & ~(uint32_t)IFA_F_NODAD, label ? label : "-");
}

static void saved_key(const Crf__Net__NsAddr *s, char *buf, size_t size)
{
	addr_key(s->family, s->local.data, s->local.len, s->prefixlen,
		 s->has_peer ? s->peer.data : NULL, s->peer.len, s->scope, s->flags, s->label, buf,
		 size);
}

static void live_key(struct rtnl_addr *a, uint32_t ignore, char *buf, size_t size)
{
	struct nl_addr *l = rtnl_addr_get_local(a), *p = rtnl_addr_get_peer(a);
	bool peer = p && nl_addr_cmp(p, l);

	addr_key((uint32_t)rtnl_addr_get_family(a), nl_addr_get_binary_addr(l), nl_addr_get_len(l),
		 (uint32_t)rtnl_addr_get_prefixlen(a), peer ? nl_addr_get_binary_addr(p) : NULL,
		 peer ? nl_addr_get_len(p) : 0, (uint32_t)rtnl_addr_get_scope(a),
		 rtnl_addr_get_flags(a) & ~ignore,
		 rtnl_addr_get_family(a) == AF_INET ? rtnl_addr_get_label(a) : NULL, buf, size);
}

struct addr_walk {
	struct nl_sock *sk;
	const Crf__Net__NsLink *ln;
	int ifindex;
	bool *have; /* per saved address: found */
	size_t extra;
	char first_extra[KEY_MAX];
	bool delete;
	const char *what;
	int r;
};

static void addr_cb(struct nl_object *o, void *arg)
{
	struct rtnl_addr *a = (struct rtnl_addr *)o;
	struct addr_walk *w = arg;
	char key[KEY_MAX], want[KEY_MAX];
	int e;

	if (w->r < 0 || rtnl_addr_get_ifindex(a) != w->ifindex)
		return;
	/*
	 * An address the kernel made as the link went up (IPv6 link-local)
	 * may still be tentative: it is the dump's, it is not deleted, and
	 * the last walks wait for it.
	 */
	live_key(a, w->delete ? (uint32_t)(IFA_F_TENTATIVE | IFA_F_OPTIMISTIC) : 0, key,
		 sizeof(key));
	for (size_t i = 0; i < w->ln->n_addrs; i++) {
		saved_key(w->ln->addrs[i], want, sizeof(want));
		if (!strcmp(key, want)) {
			w->have[i] = true;
			return;
		}
	}
	if (!w->extra++)
		snprintf(w->first_extra, sizeof(w->first_extra), "%s", key);
	if (!w->delete)
		return;
	e = rtnl_addr_delete(w->sk, a, 0);
	if (e < 0)
		w->r = crf_error_errno(EIO, "%s: link '%s': deleting address %s: %s", w->what,
				       w->ln->name, key, nl_geterror(e));
}

static int walk_addrs(struct addr_walk *w)
{
	struct nl_cache *c = NULL;
	int e = rtnl_addr_alloc_cache(w->sk, &c);

	if (e < 0)
		return crf_error_errno(EIO, "%s: listing addresses: %s", w->what, nl_geterror(e));
	memset(w->have, 0, (w->ln->n_addrs + 1) * sizeof(*w->have));
	w->extra = 0;
	nl_cache_foreach(c, addr_cb, w);
	nl_cache_free(c);
	return w->r;
}

static int addr_add(struct nl_sock *sk, int ifindex, const Crf__Net__NsAddr *s, bool lo)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *l = NULL, *p = NULL;
	int e = -NLE_NOMEM;

	if (!a)
		return e;
	l = nl_addr_build((int)s->family, s->local.data, s->local.len);
	if (s->has_peer)
		p = nl_addr_build((int)s->family, s->peer.data, s->peer.len);
	if (l && (!s->has_peer || p)) {
		nl_addr_set_prefixlen(l, (int)s->prefixlen);
		rtnl_addr_set_ifindex(a, ifindex);
		rtnl_addr_set_family(a, (int)s->family);
		e = rtnl_addr_set_local(a, l);
		if (e >= 0 && p)
			e = rtnl_addr_set_peer(a, p);
		rtnl_addr_set_prefixlen(a, (int)s->prefixlen);
		rtnl_addr_set_scope(a, (int)s->scope);
		/*
		 * Not tentative at the dump (refused otherwise): no duplicate
		 * address detection again, except on lo, whose is over at once
		 * (link_addrs waits) and where nodad would show.
		 */
		rtnl_addr_set_flags(a, s->flags | (s->family == AF_INET6 && !lo ? IFA_F_NODAD : 0));
		if (e >= 0 && s->label)
			e = rtnl_addr_set_label(a, s->label);
		if (e >= 0)
			e = rtnl_addr_add(sk, a, 0);
	}
	nl_addr_put(l);
	nl_addr_put(p);
	rtnl_addr_put(a);
	return e;
}

/*
 * An IPv6 link-local address of a link other than lo is the kernel's, made
 * from the MAC address (restored) once the link has a carrier: waited for,
 * not added (it would race the kernel, and show nodad).
 */
static bool kernel_made(const Crf__Net__NsLink *ln, const Crf__Net__NsAddr *s)
{
	return s->family == AF_INET6 && s->scope == RT_SCOPE_LINK && s->local.len == 16 &&
	       s->local.data[0] == 0xfe && (s->local.data[1] & 0xc0) == 0x80 &&
	       strcmp(ln->kind, "loopback");
}

/* Delete what the link has and the dump had not, add what it lacks, check. */
int netns_link_addrs(struct nl_sock *sk, const Crf__Net__NsLink *ln, int ifindex, const char *what)
{
	struct addr_walk w = {.sk = sk, .ln = ln, .ifindex = ifindex, .delete = true, .what = what};
	char key[KEY_MAX];
	int r, e;

	w.have = calloc(ln->n_addrs + 1, sizeof(*w.have));
	if (!w.have)
		return crf_error_errno(ENOMEM, "%s: addresses", what);
	r = walk_addrs(&w);
	for (size_t i = 0; r >= 0 && i < ln->n_addrs; i++) {
		if (w.have[i] || kernel_made(ln, ln->addrs[i]))
			continue;
		e = addr_add(sk, ifindex, ln->addrs[i], !strcmp(ln->kind, "loopback"));
		saved_key(ln->addrs[i], key, sizeof(key));
		if (e < 0)
			r = crf_error_errno(EIO, "%s: link '%s': adding address %s: %s", what,
					    ln->name, key, nl_geterror(e));
	}
	w.delete = false;
	/* IPv6 addresses are tentative for a moment (a second on a veth): wait, 5 s at most. */
	for (int round = 0; r >= 0 && round < 500; round++) {
		bool all = true;

		if (round)
			usleep(10000);
		r = walk_addrs(&w);
		for (size_t i = 0; i < ln->n_addrs; i++)
			all &= w.have[i];
		if (all)
			break;
	}
	for (size_t i = 0; r >= 0 && i < ln->n_addrs; i++)
		if (!w.have[i]) {
			saved_key(ln->addrs[i], key, sizeof(key));
			r = crf_error_errno(EIO,
					    "%s: link '%s': address %s is not there after "
					    "the restore (%zu others are, such as %s)",
					    what, ln->name, key, w.extra,
					    w.extra ? w.first_extra : "-");
		}
	if (r >= 0 && w.extra)
		r = crf_error_errno(EIO,
				    "%s: link '%s': %zu addresses the dump did not have, "
				    "such as %s",
				    what, ln->name, w.extra, w.first_extra);
	free(w.have);
	return r;
}

/* MTU, queue length and, with @up, the state, of the link @ln names. */
static int link_set(struct nl_sock *sk, const Crf__Net__NsLink *ln, bool up, int *ifindex,
		    const char *what)
{
	struct rtnl_link *cur = NULL, *chg = rtnl_link_alloc();
	int e = chg ? rtnl_link_get_kernel(sk, 0, ln->name, &cur) : -NLE_NOMEM;

	if (e >= 0) {
		*ifindex = rtnl_link_get_ifindex(cur);
		rtnl_link_set_mtu(chg, ln->mtu);
		rtnl_link_set_txqlen(chg, ln->txqlen);
		if (up && ln->up)
			rtnl_link_set_flags(chg, IFF_UP);
		e = rtnl_link_change(sk, cur, chg, 0);
	}
	rtnl_link_put(cur);
	rtnl_link_put(chg);
	if (e < 0)
		return crf_error_errno(EIO, "%s: link '%s': %s", what, ln->name, nl_geterror(e));
	return 0;
}

static int check_links(struct nl_sock *sk, const Crf__Net__NetNs *ns, const char *what)
{
	struct nl_cache *c = NULL;
	int e = rtnl_link_alloc_cache(sk, AF_UNSPEC, &c), n;

	if (e < 0)
		return crf_error_errno(EIO, "%s: listing links: %s", what, nl_geterror(e));
	n = nl_cache_nitems(c);
	for (size_t i = 0; e >= 0 && i < ns->n_links; i++) {
		const Crf__Net__NsLink *ln = ns->links[i];
		struct rtnl_link *l = rtnl_link_get_by_name(c, ln->name);

		if (!l || rtnl_link_get_mtu(l) != ln->mtu ||
		    rtnl_link_get_txqlen(l) != ln->txqlen ||
		    !(rtnl_link_get_flags(l) & IFF_UP) != !ln->up)
			e = crf_error_errno(EIO, "%s: link '%s' is not as it was after the restore",
					    what, ln->name);
		rtnl_link_put(l);
	}
	nl_cache_free(c);
	if (e >= 0 && (size_t)n != ns->n_links)
		e = crf_error_errno(EIO, "%s: %d links after the restore, not %zu", what, n,
				    ns->n_links);
	return e;
}

/* The links first: lo is there, a veth is made with its peer from crf's namespace (@hsk). */
static int make_link(struct nl_sock *hsk, const Crf__Net__NsLink *ln, int nsfd, const char *what)
{
	if (!strcmp(ln->kind, "loopback"))
		return 0;
	if (!strcmp(ln->kind, "veth") && hsk)
		return netns_veth_make(hsk, ln, nsfd, what);
	return crf_error_errno(EBADMSG, "%s: link '%s' of kind '%s'", what, ln->name, ln->kind);
}

static int build(struct nl_sock *sk, struct nl_sock *hsk, int nsfd, const Crf__Net__NetNs *ns,
		 const char *what)
{
	int *ifindex = calloc(ns->n_links + 1, sizeof(*ifindex));
	int r = ifindex ? 0 : crf_error_errno(ENOMEM, "%s", what);

	for (size_t i = 0; r >= 0 && i < ns->n_links; i++)
		r = make_link(hsk, ns->links[i], nsfd, what);
	for (size_t i = 0; r >= 0 && i < ns->n_links; i++)
		r = link_set(sk, ns->links[i], false, &ifindex[i], what);
	if (r >= 0)
		r = netns_sysctl_restore(ns, what);
	for (size_t i = 0; r >= 0 && i < ns->n_links; i++)
		r = link_set(sk, ns->links[i], true, &ifindex[i], what);
	/* The peers up first: a veth's carrier, and its link-local address, wait for them. */
	for (size_t i = 0; r >= 0 && i < ns->n_links; i++)
		if (ns->links[i]->peer)
			r = netns_veth_peer_set(hsk, ns->links[i], what);
	for (size_t i = 0; r >= 0 && i < ns->n_links; i++)
		r = netns_link_addrs(sk, ns->links[i], ifindex[i], what);
	if (r >= 0)
		r = netns_routes_restore(sk, ns, what);
	if (r >= 0)
		r = netns_nft_restore(ns, what);
	if (r >= 0)
		r = check_links(sk, ns, what);
	if (r >= 0)
		r = netns_sysctl_check(ns, what);
	free(ifindex);
	return r;
}

static int read_image(struct crf_ctx *ctx, uint64_t id, Crf__Net__NetNs **ns)
{
	struct crf_img *img = NULL;
	char name[64];
	int r;

	netns_image(name, sizeof(name), id);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__net__net_ns__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, (ProtobufCMessage **)ns);
	crf_img_close(img);
	if (r == 0)
		return crf_error_errno(EBADMSG, "%s: no record", name);
	return r < 0 ? r : 0;
}

int netns_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct nl_sock *sk = NULL, *hsk = NULL;
	Crf__Net__NetNs *ns = NULL;
	int nsfd = -1;
	char what[128];
	int r;

	if (ni->inherited)
		return 0;
	snprintf(what, sizeof(what), "pid %d: net namespace %s", (int)obj->pid, obj->desc);
	r = read_image(ctx, ni->id, &ns);
	/* A socket of crf's namespace, for the veths' peers: it stays there. */
	for (size_t i = 0; r >= 0 && !hsk && i < ns->n_links; i++)
		if (ns->links[i]->peer)
			r = common_rtnl_open(&hsk, what);
	if (r >= 0 && unshare(CLONE_NEWNET) < 0)
		r = crf_error_errno(errno, "%s: unshare(CLONE_NEWNET)", what);
	if (r >= 0 && (nsfd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		r = crf_error_errno(errno, "%s: /proc/thread-self/ns/net", what);
	if (r >= 0)
		r = common_rtnl_open(&sk, what);
	if (r >= 0)
		r = build(sk, hsk, nsfd, ns, what);
	if (r >= 0)
		crf_debug("restored %s", what);
	if (nsfd >= 0)
		close(nsfd);
	if (hsk)
		nl_socket_free(hsk);
	if (sk)
		nl_socket_free(sk);
	if (ns)
		protobuf_c_message_free_unpacked(&ns->base, NULL);
	return r;
}
