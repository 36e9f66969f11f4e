// SPDX-License-Identifier: GPL-2.0-only
/*
 * The routes of a network namespace, every table, IPv4 and IPv6.  The dump
 * saves each with a canonical text (route_key: every field the restore can
 * set, the device by name: ifindexes change); the restore adds those that
 * adding the addresses did not make already, deletes any the kernel made
 * that the dump did not have, and then checks that the namespace has
 * exactly the dump's keys.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>

#include <crf/log.h>

#include "netns.h"

#define KEY_MAX 512

struct route_view {
	struct rtnl_nexthop *nh; /* NULL: none */
	char dev[IF_NAMESIZE];
};

/* Refuse what the restore would not set; fill @v. */
static int route_check(struct rtnl_route *r, struct nl_cache *links, struct route_view *v,
		       const char *key, const char *what)
{
	uint32_t val;

	v->nh = NULL;
	v->dev[0] = '\0';
	if (rtnl_route_get_nnexthops(r) > 1)
		return crf_error_errno(ENOTSUP, "%s: route '%s' has %d nexthops: not restored",
				       what, key, rtnl_route_get_nnexthops(r));
	for (int m = 1; m <= RTAX_MAX; m++)
		if (rtnl_route_get_metric(r, m, &val) == 0)
			return crf_error_errno(ENOTSUP,
					       "%s: route '%s' has metric %d (%u): not restored",
					       what, key, m, val);
	if (rtnl_route_get_src(r) || rtnl_route_get_iif(r) > 0)
		return crf_error_errno(ENOTSUP,
				       "%s: route '%s' has a source prefix or input "
				       "device: not restored",
				       what, key);
	if (rtnl_route_get_nnexthops(r) == 1) {
		v->nh = rtnl_route_nexthop_n(r, 0);
		if (rtnl_route_nh_get_flags(v->nh) & ~(unsigned)(RTNH_F_LINKDOWN | RTNH_F_DEAD))
			return crf_error_errno(ENOTSUP,
					       "%s: route '%s' has nexthop flags %#x: not "
					       "restored",
					       what, key, rtnl_route_nh_get_flags(v->nh));
		if (rtnl_route_nh_get_ifindex(v->nh) > 0 &&
		    !rtnl_link_i2name(links, rtnl_route_nh_get_ifindex(v->nh), v->dev,
				      sizeof(v->dev)))
			return crf_error_errno(ENODEV, "%s: route '%s': no link %d", what, key,
					       rtnl_route_nh_get_ifindex(v->nh));
	}
	return 0;
}

static void route_key(struct rtnl_route *r, const struct route_view *v, char *buf, size_t len)
{
	struct nl_addr *gw = v->nh ? rtnl_route_nh_get_gateway(v->nh) : NULL;
	struct nl_addr *ps = rtnl_route_get_pref_src(r);
	char dst[64] = "-", g[64] = "-", src[64] = "-";

	if (rtnl_route_get_dst(r))
		nl_addr2str(rtnl_route_get_dst(r), dst, sizeof(dst));
	if (gw)
		nl_addr2str(gw, g, sizeof(g));
	if (ps)
		nl_addr2str(ps, src, sizeof(src));
	snprintf(buf, len,
		 "family %u table %u dst %s via %s dev %s metric %u scope %u proto %u type %u "
		 "tos %u src %s",
		 rtnl_route_get_family(r), rtnl_route_get_table(r), dst, g, *v->dev ? v->dev : "-",
		 rtnl_route_get_priority(r), rtnl_route_get_scope(r), rtnl_route_get_protocol(r),
		 rtnl_route_get_type(r), rtnl_route_get_tos(r), src);
}

static int copy_addr(ProtobufCBinaryData *b, protobuf_c_boolean *has, struct nl_addr *a)
{
	if (!a)
		return 0;
	b->len = nl_addr_get_len(a);
	b->data = malloc(b->len ? b->len : 1);
	if (!b->data)
		return -ENOMEM;
	memcpy(b->data, nl_addr_get_binary_addr(a), b->len);
	*has = true;
	return 0;
}

static int route_save(struct rtnl_route *r, const struct route_view *v, const char *key,
		      Crf__Net__NetNs *ns)
{
	Crf__Net__NsRoute *s = malloc(sizeof(*s));
	struct nl_addr *dst = rtnl_route_get_dst(r);
	int e;

	if (!s)
		return -ENOMEM;
	crf__net__ns_route__init(s);
	e = netns_push((void ***)&ns->routes, &ns->n_routes, s);
	if (e < 0) {
		free(s);
		return e;
	}
	s->family = rtnl_route_get_family(r);
	s->table = rtnl_route_get_table(r);
	s->dst_len = dst ? nl_addr_get_prefixlen(dst) : 0;
	s->priority = rtnl_route_get_priority(r);
	s->scope = rtnl_route_get_scope(r);
	s->protocol = rtnl_route_get_protocol(r);
	s->type = rtnl_route_get_type(r);
	s->tos = rtnl_route_get_tos(r);
	s->key = strdup(key);
	s->dev = *v->dev ? strdup(v->dev) : NULL;
	if (!s->key || (*v->dev && !s->dev))
		return -ENOMEM;
	e = dst && nl_addr_get_len(dst) ? copy_addr(&s->dst, &s->has_dst, dst) : 0;
	if (e >= 0 && v->nh)
		e = copy_addr(&s->gateway, &s->has_gateway, rtnl_route_nh_get_gateway(v->nh));
	if (e >= 0)
		e = copy_addr(&s->pref_src, &s->has_pref_src, rtnl_route_get_pref_src(r));
	return e;
}

struct walk {
	struct nl_cache *links;
	Crf__Net__NetNs *ns;	     /* dump: save into */
	const Crf__Net__NetNs *want; /* restore: compare with */
	struct nl_sock *sk;
	const char *what;
	size_t n;    /* restore: routes seen that the dump has */
	bool *found; /* restore: per saved route, seen */
	bool delete; /* restore: delete the routes the dump did not have */
	int r;
};

static bool wanted(const Crf__Net__NetNs *ns, const char *key, bool *found)
{
	for (size_t i = 0; i < ns->n_routes; i++)
		if (!strcmp(ns->routes[i]->key, key)) {
			found[i] = true;
			return true;
		}
	return false;
}

/* Dump: save; restore: count the wanted, delete the others. */
static void route_cb(struct nl_object *o, void *arg)
{
	struct rtnl_route *r = (struct rtnl_route *)o;
	struct walk *w = arg;
	struct route_view v;
	char key[KEY_MAX];
	int e;

	if (w->r < 0 || (rtnl_route_get_flags(r) & RTM_F_CLONED))
		return;
	route_key(r, &(struct route_view){0}, key, sizeof(key));
	w->r = route_check(r, w->links, &v, key, w->what);
	if (w->r < 0)
		return;
	route_key(r, &v, key, sizeof(key));
	if (w->ns) {
		w->r = route_save(r, &v, key, w->ns);
		return;
	}
	if (wanted(w->want, key, w->found)) {
		w->n++;
		return;
	}
	if (!w->delete)
		return;
	e = rtnl_route_delete(w->sk, r, 0);
	if (e < 0 && e != -NLE_OBJ_NOTFOUND)
		w->r = crf_error_errno(EIO,
				       "%s: deleting route '%s', which the dump did not "
				       "have: %s",
				       w->what, key, nl_geterror(e));
	else
		crf_debug("%s: deleted route '%s', which the dump did not have", w->what, key);
}

static int walk_routes(struct nl_sock *sk, struct walk *w)
{
	struct nl_cache *routes = NULL;
	int e = rtnl_route_alloc_cache(sk, AF_UNSPEC, 0, &routes);

	if (e < 0)
		return crf_error_errno(EIO, "%s: listing routes: %s", w->what, nl_geterror(e));
	nl_cache_foreach(routes, route_cb, w);
	nl_cache_free(routes);
	return w->r == -ENOMEM ? crf_error_errno(ENOMEM, "%s: routes", w->what) : w->r;
}

int netns_routes_dump(struct nl_sock *sk, struct nl_cache *links, Crf__Net__NetNs *ns,
		      const char *what)
{
	struct walk w = {.links = links, .ns = ns, .what = what};

	return walk_routes(sk, &w);
}

static struct nl_addr *build(uint32_t family, const ProtobufCBinaryData *b, uint32_t plen)
{
	struct nl_addr *a = nl_addr_build((int)family, b->data, b->len);

	if (a)
		nl_addr_set_prefixlen(a, (int)plen);
	return a;
}

/* Add one saved route; 0, or a negative libnl error. */
static int route_add(struct nl_sock *sk, struct nl_cache *links, const Crf__Net__NsRoute *s)
{
	struct rtnl_route *r = rtnl_route_alloc();
	struct rtnl_nexthop *nh = NULL;
	struct nl_addr *a;
	int e = r ? 0 : -NLE_NOMEM;

	if (e < 0)
		return e;
	rtnl_route_set_family(r, (uint8_t)s->family);
	rtnl_route_set_table(r, s->table);
	rtnl_route_set_priority(r, s->priority);
	rtnl_route_set_scope(r, (uint8_t)s->scope);
	rtnl_route_set_protocol(r, (uint8_t)s->protocol);
	rtnl_route_set_type(r, (uint8_t)s->type);
	rtnl_route_set_tos(r, (uint8_t)s->tos);
	/* libnl wants a destination: the default route's is all zeros, /0. */
	a = s->has_dst ? build(s->family, &s->dst, s->dst_len)
		       : build(s->family,
			       &(ProtobufCBinaryData){.len = s->family == AF_INET ? 4 : 16,
						      .data = (uint8_t[16]){0}},
			       0);
	e = a ? rtnl_route_set_dst(r, a) : -NLE_NOMEM;
	nl_addr_put(a);
	if (e >= 0 && s->has_pref_src) {
		a = build(s->family, &s->pref_src, s->family == AF_INET ? 32 : 128);
		e = a ? rtnl_route_set_pref_src(r, a) : -NLE_NOMEM;
		nl_addr_put(a);
	}
	if (e >= 0 && (s->dev || s->has_gateway)) {
		nh = rtnl_route_nh_alloc();
		e = nh ? 0 : -NLE_NOMEM;
		if (nh && s->dev)
			rtnl_route_nh_set_ifindex(nh, rtnl_link_name2i(links, s->dev));
		if (nh && s->has_gateway) {
			a = build(s->family, &s->gateway, s->family == AF_INET ? 32 : 128);
			if (a)
				rtnl_route_nh_set_gateway(nh, a);
			e = a ? 0 : -NLE_NOMEM;
			nl_addr_put(a);
		}
		if (nh)
			rtnl_route_add_nexthop(r, nh);
	}
	if (e >= 0)
		e = rtnl_route_add(sk, r, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_route_put(r);
	return e == -NLE_EXIST ? 0 : e;
}

/*
 * A route through a gateway needs the route to that gateway first: add in
 * rounds, each retrying what failed, until a round adds nothing.
 */
static int add_all(struct nl_sock *sk, struct nl_cache *links, const Crf__Net__NetNs *ns,
		   const bool *found, const char *what)
{
	bool *done = calloc(ns->n_routes + 1, sizeof(*done));
	size_t left = ns->n_routes, before;
	int last = 0;
	const char *key = "";

	if (!done)
		return crf_error_errno(ENOMEM, "%s: routes", what);
	for (size_t i = 0; i < ns->n_routes; i++)
		left -= found[i];
	do {
		before = left;
		for (size_t i = 0; i < ns->n_routes; i++) {
			if (done[i] || found[i])
				continue;
			last = route_add(sk, links, ns->routes[i]);
			if (last < 0) {
				key = ns->routes[i]->key;
				continue;
			}
			done[i] = true;
			left--;
		}
	} while (left && left < before);
	free(done);
	if (left)
		return crf_error_errno(EIO, "%s: adding route '%s': %s", what, key,
				       nl_geterror(last));
	return 0;
}

/*
 * The routes the kernel makes for addresses (proto kernel) come in part
 * from a work queue: IPv6's prefix and anycast routes once the address's
 * duplicate address detection is over (with IFA_F_NODAD too).  Wait for
 * them (at most 3 s), not to add them first and race the kernel.
 */
static int wait_kernel(struct nl_sock *sk, struct walk *w)
{
	const Crf__Net__NetNs *ns = w->want;
	bool all = false;
	int e = 0;

	for (int round = 0; e >= 0 && !all && round < 300; round++) {
		if (round)
			usleep(10000);
		memset(w->found, 0, ns->n_routes * sizeof(*w->found));
		e = walk_routes(sk, w);
		all = true;
		for (size_t i = 0; i < ns->n_routes; i++)
			if (ns->routes[i]->protocol == RTPROT_KERNEL && !w->found[i])
				all = false;
	}
	return e;
}

int netns_routes_restore(struct nl_sock *sk, const Crf__Net__NetNs *ns, const char *what)
{
	struct nl_cache *links = NULL;
	struct walk w = {.want = ns, .sk = sk, .what = what};
	int e = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links);

	if (e < 0)
		return crf_error_errno(EIO, "%s: listing links: %s", what, nl_geterror(e));
	w.links = links;
	w.found = calloc(ns->n_routes + 1, sizeof(*w.found));
	e = w.found ? wait_kernel(sk, &w) : crf_error_errno(ENOMEM, "%s", what);
	if (e >= 0)
		e = add_all(sk, links, ns, w.found, what);
	w.delete = true;
	if (e >= 0)
		e = walk_routes(sk, &w);
	w.delete = false;
	/* Deleted routes went; count again, on what is left. */
	if (e >= 0) {
		w.n = 0;
		memset(w.found, 0, ns->n_routes * sizeof(*w.found));
		e = walk_routes(sk, &w);
	}
	for (size_t i = 0; e >= 0 && i < ns->n_routes; i++)
		if (!w.found[i])
			e = crf_error_errno(EIO, "%s: route '%s' is not there after the restore",
					    what, ns->routes[i]->key);
	free(w.found);
	nl_cache_free(links);
	return e;
}
