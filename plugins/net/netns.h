/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netns.h - what the net plugin's network namespace files (netns*.c) share.
 *
 * A namespace is read from inside: the dumping thread enters it (setns on
 * /proc/PID/ns/net, only that thread moves), reads it through rtnetlink
 * (libnl), /proc/sys/net and nft, and goes back to crf's own.  The restore
 * runs in the first restored process that has it (the ns plugin's
 * restore-premap): unshare(CLONE_NEWNET), then links, sysctls, addresses,
 * routes and nftables rules, in that order, and a check that what it built
 * is what the dump saw.
 */
#ifndef CRF_PLUGIN_NET_NETNS_H
#define CRF_PLUGIN_NET_NETNS_H

#include "../common/rtnl.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/plugin.h>

#include "netns.pb-c.h"

struct nl_sock;
struct nl_cache;

/* The CRF_OBJ_NS "net" handler (netns.c, netns-restore.c). */
int netns_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int netns_restore(struct crf_ctx *ctx, const struct crf_object *obj);

/*
 * netns.c: @ln from link @l and its addresses in @addrs; refused where it has
 * what the restore would not give back (@peer: a veth's other end, in
 * crf's namespace, may be a bridge's port).  0, -ENOMEM (not logged) or
 * the refusal (logged).
 */
struct rtnl_link;
int netns_link_fill(struct rtnl_link *l, struct nl_cache *addrs, Crf__Net__NsLink *ln, bool peer,
		    const char *what);

/* netns-restore.c: give the link @ln (ifindex @ifindex, on @sk) exactly @ln's addresses. */
int netns_link_addrs(struct nl_sock *sk, const Crf__Net__NsLink *ln, int ifindex, const char *what);

/*
 * netns-veth.c.  Dump, inside: check that veth @l's peer is in crf's
 * namespace (@own), note its ifindex; then, back in crf's: read the peers.
 * Restore: make the pair from @hsk, in crf's namespace, @ln's end in @nsfd's;
 * then the peer's bridge, state and addresses.
 */
int netns_veth_dump(struct rtnl_link *l, Crf__Net__NsLink *ln, int own, const char *what);
int netns_veth_peers(Crf__Net__NetNs *ns, const char *what);
int netns_veth_make(struct nl_sock *hsk, const Crf__Net__NsLink *ln, int nsfd, const char *what);
int netns_veth_peer_set(struct nl_sock *hsk, const Crf__Net__NsLink *ln, const char *what);

/* netns-INODE.img, for the namespace of inode @id. */
void netns_image(char *buf, size_t len, uint64_t id);

/* A connected NETLINK_ROUTE socket of the caller's namespace, in *@sk. */

/* Append @item to the repeated field (@arr, @n); 0 or -ENOMEM. */
int netns_push(void ***arr, size_t *n, void *item);

/*
 * netns-route.c.  @key gets the canonical text of a route (every field the
 * restore sets, the device by name); a route this cannot restore (more than
 * one nexthop, metrics) is refused, naming it.
 */
int netns_routes_dump(struct nl_sock *sk, struct nl_cache *links, Crf__Net__NetNs *ns,
		      const char *what);
int netns_routes_restore(struct nl_sock *sk, const Crf__Net__NetNs *ns, const char *what);

/* netns-sysctl.c: every sysctl of /proc/sys/net, compared with a fresh namespace's. */
int netns_sysctl_dump(Crf__Net__NetNs *ns, const char *what);
int netns_sysctl_restore(const Crf__Net__NetNs *ns, const char *what);
/* After the whole build: every saved sysctl reads as it was (a later step may change one). */
int netns_sysctl_check(const Crf__Net__NetNs *ns, const char *what);

/*
 * netns-check.c: what the dump refuses (rules that are not a fresh
 * namespace's, permanent neighbour entries, iptables-legacy tables, TCP
 * connections) and the nftables
 * ruleset, saved as nft lists it and replayed at restore.
 */
int netns_check_rules(struct nl_sock *sk, const char *what);
int netns_check_neigh(struct nl_sock *sk, struct nl_cache *links, const char *what);
/* netns-neigh.c: entries a fresh namespace with the same links would not have. */
int netns_check_neigh_entries(struct nl_sock *sk, struct nl_cache *links, const char *what);
int netns_check_qdisc(struct nl_sock *sk, struct nl_cache *links, const char *what);
int netns_check_legacy(pid_t pid, const char *what);
int netns_check_tcp(const char *what);
/* netns-link.c: every attribute of a link the restore does not set is a new link's. */
int netns_check_link_attrs(const char *what);
/* The same, for the veths' peers in @ns, from crf's namespace. */
int netns_check_peer_attrs(const Crf__Net__NetNs *ns, const char *what);
/* netns-xfrm.c: IPsec states, policies, default policies, hash thresholds (refused). */
int netns_check_xfrm(const char *what);
int netns_nft_dump(Crf__Net__NetNs *ns, const char *what);
int netns_nft_restore(const Crf__Net__NetNs *ns, const char *what);

#endif
